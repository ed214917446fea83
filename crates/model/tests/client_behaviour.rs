//! The client against the loopback fake server: the model policy, cache markers, structured output with corrective
//! re-asks, refusals and truncation.

mod support;

use pactwise_domain::usage::UsageOutcome;
use pactwise_model::fake::FakeReply;
use pactwise_model::wire::{Message, MessagesRequest};
use pactwise_model::{ModelConfig, ModelError, PromptDocument, StructuredRequest, ToolAllowlist, ToolLoopRequest};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use support::{harness, harness_with};

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum ContractKind {
    Nda,
    MasterServices,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
struct Classification {
    kind: ContractKind,
    confidence_percent: u8,
}

fn classify_request() -> StructuredRequest {
    StructuredRequest::new("You classify contracts.", "Classify the contract.", "record_classification")
        .with_documents(vec![PromptDocument::new("contract.pdf", "This Mutual Non-Disclosure Agreement ...")])
}

fn valid() -> Value {
    json!({"kind": "nda", "confidence_percent": 90})
}

fn invalid() -> Value {
    json!({"kind": "lease", "confidence_percent": 300})
}

struct NoTools;

impl pactwise_model::ToolExecutor for NoTools {
    fn execute<'a>(
        &'a self,
        name: &'a str,
        _input: &'a Value,
    ) -> pactwise_model::retry::BoxFuture<'a, Result<String, pactwise_model::ToolFailure>> {
        Box::pin(async move { Err(pactwise_model::ToolFailure(format!("{name} does not exist"))) })
    }
}

#[tokio::test]
async fn no_code_path_sends_another_model_id_whatever_the_override() {
    let h = harness_with(
        vec![FakeReply::forced_tool(valid()), FakeReply::text("hello"), FakeReply::text("answer")],
        |config| {
            // A configured model and one from the environment: both must be mapped back.
            let config = ModelConfig { model: Some("claude-opus-5-5".into()), ..config };
            config.with_env(|name| (name == "PACTWISE_MODEL").then(|| "claude-sonnet-5-5".to_string()))
        },
    )
    .await;
    assert_eq!(h.client.config().model.as_deref(), Some("claude-sonnet-5-5"));

    // A request field on a structured call.
    let request = StructuredRequest { model: Some("claude-fable-5-1".into()), ..classify_request() };
    h.client.call_structured::<Classification>(&h.ctx, request).await.unwrap();
    // A raw request built by hand with another model.
    let mut raw = MessagesRequest::new(64, vec![Message::user_text("hi")]);
    raw.model = "claude-opus-4-8".into();
    h.client.send(&h.ctx, raw).await.unwrap();
    // A tool loop with a model field from "the database".
    let request = ToolLoopRequest { model: Some("claude-mythos-5".into()), ..ToolLoopRequest::new("sys", "q") };
    h.client.run_tool_loop(&h.ctx, request, &NoTools, &ToolAllowlist::default(), 3).await.unwrap();

    let sent = h.server.message_requests();
    assert_eq!(sent.len(), 3);
    for request in &sent {
        assert_eq!(request.status, 200, "the fake accepted {:?}", request.body);
        assert_eq!(request.body["model"], "claude-haiku-5-5");
        assert_eq!(request.body["thinking"], json!({"type": "disabled"}));
        for field in ["temperature", "top_p", "top_k"] {
            assert!(request.body.get(field).is_none(), "{field} was sent");
        }
    }
    h.client.flush_ledger().unwrap();
    assert!(h.usage.records().iter().all(|r| r.model == "claude-haiku-5-5"));
}

#[tokio::test]
async fn the_system_prompt_and_document_prefix_carry_cache_markers_and_re_asks_reuse_them() {
    let h = harness(vec![FakeReply::forced_tool(invalid()), FakeReply::forced_tool(valid())]).await;
    h.client.call_structured::<Classification>(&h.ctx, classify_request()).await.unwrap();
    let sent = h.server.message_requests();
    assert_eq!(sent.len(), 2);
    let marker = json!({"type": "ephemeral", "ttl": "5m"});
    for request in &sent {
        assert_eq!(request.body["system"][0]["cache_control"], marker);
        assert_eq!(request.body["system"][0]["text"], "You classify contracts.");
        let first_turn = &request.body["messages"][0]["content"];
        assert_eq!(first_turn[0]["cache_control"], marker, "the document block is a cached prefix");
        assert!(first_turn[0]["text"].as_str().unwrap().contains("trust=\"untrusted\""));
        assert!(first_turn[1].get("cache_control").is_none(), "the question itself is not a breakpoint");
    }
    // The re-ask sends the same tools, system and first turn byte for byte, so the cache is hit.
    for field in ["tools", "system"] {
        assert_eq!(sent[0].body[field], sent[1].body[field]);
    }
    assert_eq!(sent[0].body["messages"][0], sent[1].body["messages"][0]);
}

#[tokio::test]
async fn a_reply_that_fails_the_schema_is_re_asked_with_the_exact_errors_and_then_succeeds() {
    let h = harness(vec![FakeReply::forced_tool(invalid()), FakeReply::forced_tool(valid())]).await;
    let result = h.client.call_structured::<Classification>(&h.ctx, classify_request()).await.unwrap();
    assert_eq!(result.value, Classification { kind: ContractKind::Nda, confidence_percent: 90 });
    assert_eq!(result.re_asks, 1);

    let sent = h.server.message_requests();
    assert_eq!(sent.len(), 2);
    assert_eq!(
        sent[0].body["tool_choice"],
        json!({"type": "tool", "name": "record_classification", "disable_parallel_tool_use": true})
    );
    assert_eq!(sent[0].body["tools"][0]["input_schema"]["type"], "object");
    let messages = sent[1].body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "question, the failed call, the correction");
    assert_eq!(messages[1]["role"], "assistant");
    assert_eq!(messages[1]["content"][0]["input"], invalid());
    let correction = &messages[2]["content"][0];
    assert_eq!(correction["type"], "tool_result");
    assert_eq!(correction["tool_use_id"], messages[1]["content"][0]["id"]);
    assert_eq!(correction["is_error"], true);
    let text = correction["content"].as_str().unwrap();
    assert!(text.contains("at /kind:") && text.contains("\"lease\""), "{text}");
    assert!(text.contains("at /confidence_percent:") && text.contains("300"), "{text}");

    h.client.flush_ledger().unwrap();
    let outcomes: Vec<UsageOutcome> = h.usage.records().iter().map(|r| r.outcome).collect();
    assert_eq!(outcomes, vec![UsageOutcome::InvalidOutput, UsageOutcome::Ok]);
}

#[tokio::test]
async fn two_failed_re_asks_end_in_a_typed_error_listing_the_validation_errors() {
    let h = harness(vec![
        FakeReply::forced_tool(invalid()),
        FakeReply::forced_tool(json!({"kind": "nda"})),
        FakeReply::forced_tool(json!({"kind": "nda", "confidence_percent": -1})),
        FakeReply::forced_tool(valid()),
    ])
    .await;
    let error = h.client.call_structured::<Classification>(&h.ctx, classify_request()).await.unwrap_err();
    match &error {
        ModelError::SchemaInvalid { errors, attempts } => {
            assert_eq!(*attempts, 3);
            assert_eq!(errors.len(), 1, "{errors:?}");
            assert!(errors[0].starts_with("at /confidence_percent:"), "{errors:?}");
        }
        other => panic!("expected SchemaInvalid, got {other:?}"),
    }
    assert_eq!(error.code().as_str(), "model_invalid_output");
    assert_eq!(h.server.message_requests().len(), 3, "the first ask and exactly two re-asks");
    assert_eq!(h.server.remaining_replies(), 1);
}

#[tokio::test]
async fn a_reply_without_the_tool_call_is_re_asked_in_plain_text() {
    let h = harness(vec![FakeReply::text("I think it is an NDA."), FakeReply::forced_tool(valid())]).await;
    let result = h.client.call_structured::<Classification>(&h.ctx, classify_request()).await.unwrap();
    assert_eq!(result.re_asks, 1);
    let sent = h.server.message_requests();
    let correction = &sent[1].body["messages"][2]["content"][0];
    assert_eq!(correction["type"], "text");
    assert!(correction["text"].as_str().unwrap().contains("record_classification"));
}

#[tokio::test]
async fn a_refusal_is_a_typed_error_and_is_not_re_asked() {
    let h = harness(vec![FakeReply::refusal("I can't help with that."), FakeReply::forced_tool(valid())]).await;
    let error = h.client.call_structured::<Classification>(&h.ctx, classify_request()).await.unwrap_err();
    assert!(matches!(&error, ModelError::Refused { explanation: Some(e) } if e.contains("can't help")), "{error:?}");
    assert_eq!(error.code().as_str(), "model_refused");
    assert_eq!(h.server.message_requests().len(), 1);
    h.client.flush_ledger().unwrap();
    assert_eq!(h.usage.records()[0].outcome, UsageOutcome::Refused);
}

#[tokio::test]
async fn a_truncated_reply_is_a_typed_error_never_a_partial_result() {
    let h = harness(vec![FakeReply::max_tokens("{\"kind\": \"nd")]).await;
    let request = StructuredRequest { max_tokens: Some(16), ..classify_request() };
    let error = h.client.call_structured::<Classification>(&h.ctx, request).await.unwrap_err();
    assert!(matches!(error, ModelError::Truncated { max_tokens: 16 }), "{error:?}");
    assert_eq!(error.code().as_str(), "model_truncated");
    assert_eq!(h.server.message_requests().len(), 1);

    // The same holds for plain sends and tool loops.
    h.server.push_replies([FakeReply::max_tokens("cut"), FakeReply::max_tokens("cut")]);
    let raw = MessagesRequest::new(8, vec![Message::user_text("hi")]);
    assert!(matches!(h.client.send(&h.ctx, raw).await, Err(ModelError::Truncated { .. })));
    let looped =
        h.client.run_tool_loop(&h.ctx, ToolLoopRequest::new("s", "q"), &NoTools, &ToolAllowlist::default(), 3).await;
    assert!(matches!(looped, Err(ModelError::Truncated { .. })), "{looped:?}");
}

#[tokio::test]
async fn without_an_api_key_calls_fail_as_model_unavailable_and_nothing_is_sent() {
    let h = harness(vec![FakeReply::forced_tool(valid())]).await;
    pactwise_model::ApiKeySource::clear(h.keys.as_ref()).unwrap();
    let error = h.client.call_structured::<Classification>(&h.ctx, classify_request()).await.unwrap_err();
    assert!(matches!(error, ModelError::ModelUnavailable(pactwise_model::Unavailable::NoApiKey)), "{error:?}");
    assert_eq!(error.code().as_str(), "model_unavailable");
    assert!(error.should_fall_back());
    assert!(h.server.requests().is_empty());
    assert_eq!(h.client.status().await, pactwise_model::ModelStatus::NoApiKey);
}

#[tokio::test]
async fn the_client_can_be_shared_and_its_calls_spawned_on_other_threads() {
    fn shareable<T: Send + Sync>(_: &T) {}
    fn spawnable<T: Send>(_: &T) {}
    let h = harness(vec![FakeReply::forced_tool(valid())]).await;
    shareable(&h.client);
    let structured = h.client.call_structured::<Classification>(&h.ctx, classify_request());
    spawnable(&structured);
    let no_tools = ToolAllowlist::default();
    let looped = h.client.run_tool_loop(&h.ctx, ToolLoopRequest::new("s", "q"), &NoTools, &no_tools, 2);
    spawnable(&looped);
    drop(looped);
    // And the structured call really completes when awaited.
    assert_eq!(structured.await.unwrap().value.kind, ContractKind::Nda);
}

#[tokio::test]
async fn a_single_tool_call_makes_exactly_one_request_and_returns_the_input_unrepaired() {
    let schema = pactwise_model::schema::object_schema::<Classification>().unwrap();
    // A reply that breaks the schema comes back as sent: no corrective re-ask, the caller validates it.
    let h = harness(vec![FakeReply::forced_tool(invalid())]).await;
    let reply = h.client.call_tool_once(&h.ctx, classify_request(), schema.clone()).await.unwrap();
    assert_eq!(reply.input, invalid());
    assert_eq!(h.server.message_requests().len(), 1);

    // A server error is not retried by the client: one request, one error.
    let h = harness(vec![FakeReply::error(500), FakeReply::forced_tool(valid())]).await;
    let error = h.client.call_tool_once(&h.ctx, classify_request(), schema.clone()).await.unwrap_err();
    assert_eq!(error.code().as_str(), "model_unavailable");
    assert_eq!(h.server.message_requests().len(), 1);
    assert!(h.sleeper.waits().is_empty(), "no backoff either");

    // A reply without the tool call is an error, not a re-ask.
    let h = harness(vec![FakeReply::text("I would rather chat."), FakeReply::forced_tool(valid())]).await;
    let error = h.client.call_tool_once(&h.ctx, classify_request(), schema).await.unwrap_err();
    assert!(matches!(error, ModelError::SchemaInvalid { attempts: 1, .. }), "{error:?}");
    assert_eq!(h.server.message_requests().len(), 1);
}

#[tokio::test]
async fn backend_structured_calls_force_their_one_tool_with_thinking_off() {
    let h = harness(vec![FakeReply::forced_tool(valid()), FakeReply::forced_tool(valid())]).await;
    h.client.call_structured::<Classification>(&h.ctx, classify_request()).await.unwrap();
    let schema = serde_json::to_value(schemars::schema_for!(Classification)).unwrap();
    h.client.call_tool_once(&h.ctx, classify_request().with_model_default_thinking(), schema).await.unwrap();
    let requests = h.server.message_requests();
    assert_eq!(requests.len(), 2);
    for request in requests {
        assert_eq!(request.status, 200);
        assert_eq!(request.body["thinking"], json!({"type": "disabled"}));
        assert_eq!(
            request.body["tool_choice"],
            json!({"type": "tool", "name": "record_classification", "disable_parallel_tool_use": true})
        );
        assert_eq!(request.body["tools"].as_array().unwrap().len(), 1);
    }
}

#[tokio::test]
async fn model_default_thinking_offers_the_one_tool_under_automatic_choice_and_re_asks_a_reply_without_it() {
    let h = harness(vec![FakeReply::text("It looks like an NDA."), FakeReply::forced_tool(valid())]).await;
    let request = classify_request().with_model_default_thinking();
    let result = h.client.call_structured::<Classification>(&h.ctx, request).await.unwrap();
    assert_eq!(result.value, Classification { kind: ContractKind::Nda, confidence_percent: 90 });
    assert_eq!(result.re_asks, 1);
    let requests = h.server.message_requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(request.status, 200, "{}", request.body);
        assert!(request.body.get("thinking").is_none(), "the model's default: no field");
        assert_eq!(request.body["tool_choice"], json!({"type": "auto", "disable_parallel_tool_use": true}));
        assert_eq!(request.body["tools"].as_array().unwrap().len(), 1);
    }
    // The first reply goes back with its thinking block first, then a plain re-ask naming the tool.
    let messages = requests[1].body["messages"].as_array().unwrap();
    assert_eq!(messages[1]["role"], "assistant");
    assert_eq!(messages[1]["content"][0]["type"], "thinking");
    assert!(messages[2]["content"][0]["text"].as_str().unwrap().contains("did not call `record_classification`"));
}

#[tokio::test]
async fn a_tool_call_made_while_thinking_goes_back_with_its_thinking_block_on_a_re_ask() {
    let h = harness(vec![FakeReply::forced_tool(invalid()), FakeReply::forced_tool(valid())]).await;
    let request = classify_request().with_model_default_thinking();
    let result = h.client.call_structured::<Classification>(&h.ctx, request).await.unwrap();
    assert_eq!(result.re_asks, 1);
    // The fake refuses a tool call passed back without its signed thinking block; both requests were answered.
    let requests = h.server.message_requests();
    assert_eq!(requests.iter().map(|r| r.status).collect::<Vec<_>>(), [200, 200]);
    let messages = requests[1].body["messages"].as_array().unwrap();
    let kinds: Vec<&str> =
        messages[1]["content"].as_array().unwrap().iter().map(|b| b["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["thinking", "tool_use"]);
}

#[tokio::test]
async fn a_forced_tool_choice_never_goes_out_with_thinking_on_whatever_the_request_says() {
    let h = harness(vec![FakeReply::forced_tool(valid())]).await;
    let mut request = MessagesRequest::new(64, vec![Message::user_text("Classify.")]);
    request.tools = vec![pactwise_model::wire::ToolSpec {
        name: "record_classification".into(),
        description: String::new(),
        input_schema: json!({"type": "object"}),
    }];
    request.tool_choice = Some(pactwise_model::wire::ToolChoice::Tool {
        name: "record_classification".into(),
        disable_parallel_tool_use: false,
    });
    request.thinking = pactwise_model::wire::Thinking::ModelDefault;
    h.client.send(&h.ctx, request).await.unwrap();
    let sent = &h.server.message_requests()[0];
    assert_eq!(sent.status, 200);
    assert_eq!(sent.body["thinking"], json!({"type": "disabled"}));
}
