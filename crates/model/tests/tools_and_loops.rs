//! Tool-use conversations: the allowlist, schema checks, the iteration cap and cache breakpoints.

mod support;

use pactwise_model::fake::FakeReply;
use pactwise_model::retry::BoxFuture;
use pactwise_model::{
    ModelError, ToolAllowlist, ToolCallResult, ToolDefinition, ToolExecutor, ToolFailure, ToolLoopLimits,
    ToolLoopRequest, truncate_result,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Mutex;
use support::harness;

#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
struct SearchInput {
    query: String,
}

/// Records every call it receives; `search_contracts` answers, anything else fails.
#[derive(Default)]
struct RecordingExecutor {
    calls: Mutex<Vec<(String, Value)>>,
}

impl RecordingExecutor {
    fn calls(&self) -> Vec<(String, Value)> {
        self.calls.lock().unwrap().clone()
    }
}

impl ToolExecutor for RecordingExecutor {
    fn execute<'a>(&'a self, name: &'a str, input: &'a Value) -> BoxFuture<'a, Result<String, ToolFailure>> {
        self.calls.lock().unwrap().push((name.to_string(), input.clone()));
        Box::pin(async move {
            match name {
                "search_contracts" => Ok("1 result: NDA with Acme, page 2".to_string()),
                _ => Err(ToolFailure("the index is offline".to_string())),
            }
        })
    }
}

fn allowlist() -> ToolAllowlist {
    ToolAllowlist::new(vec![
        ToolDefinition::for_input::<SearchInput>("search_contracts", "Search this organization's contracts").unwrap(),
    ])
}

#[tokio::test]
async fn a_tool_that_was_not_offered_is_refused_and_the_refusal_goes_back_to_the_model() {
    let h = harness(vec![
        FakeReply::tool_use(vec![
            ("delete_contract", json!({"id": "c-1"})),
            ("search_contracts", json!({"query": "NDA"})),
        ]),
        FakeReply::text("There is one NDA, with Acme."),
    ])
    .await;
    let executor = RecordingExecutor::default();
    let outcome = h
        .client
        .run_tool_loop(
            &h.ctx,
            ToolLoopRequest::new("Answer from tools only.", "Which NDAs?"),
            &executor,
            &allowlist(),
            5,
        )
        .await
        .unwrap();

    assert_eq!(executor.calls(), vec![("search_contracts".to_string(), json!({"query": "NDA"}))]);
    assert_eq!(outcome.answer, "There is one NDA, with Acme.");
    assert_eq!(outcome.iterations, 2);
    assert_eq!(outcome.calls[0].name, "delete_contract");
    assert_eq!(outcome.calls[0].result, ToolCallResult::NotOffered);
    assert_eq!(outcome.calls[1].result, ToolCallResult::Ran("1 result: NDA with Acme, page 2".into()));

    let sent = h.server.message_requests();
    assert_eq!(sent.len(), 2);
    let offered: Vec<&str> =
        sent[0].body["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(offered, vec!["search_contracts"]);
    let results = sent[1].body["messages"].as_array().unwrap().last().unwrap()["content"].as_array().unwrap().clone();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["is_error"], true);
    assert!(results[0]["content"].as_str().unwrap().contains("not available"), "{results:?}");
    assert!(results[1].get("is_error").is_none());
    assert_eq!(results[1]["content"], "1 result: NDA with Acme, page 2");
}

#[tokio::test]
async fn tool_input_that_breaks_the_tool_schema_is_not_executed() {
    let h =
        harness(vec![FakeReply::tool_use(vec![("search_contracts", json!({"query": 5}))]), FakeReply::text("Sorry.")])
            .await;
    let executor = RecordingExecutor::default();
    let outcome =
        h.client.run_tool_loop(&h.ctx, ToolLoopRequest::new("s", "q"), &executor, &allowlist(), 5).await.unwrap();
    assert!(executor.calls().is_empty());
    assert!(
        matches!(&outcome.calls[0].result, ToolCallResult::InvalidInput(errors) if errors[0].starts_with("at /query:"))
    );
    let last = h.server.message_requests()[1].body["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["content"][0]["is_error"], true);
}

#[tokio::test]
async fn a_failing_tool_reports_its_error_to_the_model() {
    let h =
        harness(vec![FakeReply::tool_use(vec![("lookup_vendor", json!({"query": "x"}))]), FakeReply::text("ok")]).await;
    let allow =
        ToolAllowlist::new(vec![ToolDefinition::for_input::<SearchInput>("lookup_vendor", "Find a vendor").unwrap()]);
    let executor = RecordingExecutor::default();
    let outcome = h.client.run_tool_loop(&h.ctx, ToolLoopRequest::new("s", "q"), &executor, &allow, 5).await.unwrap();
    assert_eq!(outcome.calls[0].result, ToolCallResult::Failed("the index is offline".into()));
    let last = h.server.message_requests()[1].body["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["content"][0]["is_error"], true);
    assert!(last["content"][0]["content"].as_str().unwrap().contains("the index is offline"));
}

#[tokio::test]
async fn reaching_the_iteration_cap_is_a_typed_error_never_a_partial_answer() {
    let again = || FakeReply::tool_use(vec![("search_contracts", json!({"query": "more"}))]);
    let h = harness(vec![again(), again(), again(), FakeReply::text("too late")]).await;
    let executor = RecordingExecutor::default();
    let error =
        h.client.run_tool_loop(&h.ctx, ToolLoopRequest::new("s", "q"), &executor, &allowlist(), 3).await.unwrap_err();
    assert!(matches!(error, ModelError::ToolLoopCapReached { iterations: 3 }), "{error:?}");
    assert_eq!(error.code().as_str(), "model_tool_loop_cap");
    assert_eq!(h.server.message_requests().len(), 3);
}

#[tokio::test]
async fn tool_conversations_keep_the_system_marker_and_move_a_breakpoint_to_the_latest_turn() {
    let h =
        harness(vec![FakeReply::tool_use(vec![("search_contracts", json!({"query": "a"}))]), FakeReply::text("done")])
            .await;
    let executor = RecordingExecutor::default();
    let request = ToolLoopRequest::new("system rules", "q")
        .with_documents(vec![pactwise_model::PromptDocument::new("contract", "text of the contract")]);
    h.client.run_tool_loop(&h.ctx, request, &executor, &allowlist(), 5).await.unwrap();
    let sent = h.server.message_requests();
    let marker = json!({"type": "ephemeral", "ttl": "5m"});
    for request in &sent {
        assert_eq!(request.body["system"][0]["cache_control"], marker);
        assert_eq!(request.body["messages"][0]["content"][0]["cache_control"], marker, "the document prefix");
    }
    let last_turn = sent[1].body["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last_turn["content"].as_array().unwrap().last().unwrap()["cache_control"], marker);
}

/// Answers every call with a long text of two-byte characters.
struct VerboseExecutor {
    runs: Mutex<u32>,
}

impl ToolExecutor for VerboseExecutor {
    fn execute<'a>(&'a self, _name: &'a str, _input: &'a Value) -> BoxFuture<'a, Result<String, ToolFailure>> {
        *self.runs.lock().unwrap() += 1;
        Box::pin(async move { Ok("é".repeat(50_000)) })
    }
}

#[tokio::test]
async fn a_turn_runs_at_most_the_capped_tool_calls_and_sends_back_cut_results() {
    let many: Vec<(&str, Value)> =
        (0..300).map(|i| ("search_contracts", json!({ "query": format!("q{i}") }))).collect();
    let h = harness(vec![FakeReply::tool_use(many), FakeReply::text("Done.")]).await;
    let executor = VerboseExecutor { runs: Mutex::new(0) };
    let limits = ToolLoopLimits { max_iterations: 5, max_calls_per_turn: 8, max_result_chars: 1_000 };
    let outcome =
        h.client.run_tool_loop(&h.ctx, ToolLoopRequest::new("s", "q"), &executor, &allowlist(), limits).await.unwrap();

    assert_eq!(*executor.runs.lock().unwrap(), 8, "only the first 8 calls of the turn ran");
    assert_eq!(outcome.calls.len(), 300, "every call the model asked for is accounted for");
    assert!(outcome.calls[8..].iter().all(|c| c.result == ToolCallResult::OverTurnCap { cap: 8 }));

    let sent = h.server.message_requests();
    assert_eq!(sent.len(), 2);
    let results = sent[1].body["messages"].as_array().unwrap().last().unwrap()["content"].as_array().unwrap().clone();
    assert_eq!(results.len(), 300, "each tool use gets its result, as the API requires");
    for ran in &results[..8] {
        let text = ran["content"].as_str().unwrap();
        assert!(text.starts_with(&"é".repeat(1_000)), "cut on a character boundary");
        assert!(!text.starts_with(&"é".repeat(1_001)), "not more than the cap");
        assert!(text.contains("result cut: 1000 of 50000 characters shown"), "{}", &text[text.len() - 120..]);
    }
    for refused in &results[8..] {
        assert_eq!(refused["is_error"], true);
        assert!(refused["content"].as_str().unwrap().contains("at most 8 tool calls run per turn"), "{refused}");
    }
    // What goes back stays small: the uncapped turn sent 300 results of 50,000 characters (~30 MB).
    let size = serde_json::to_vec(&sent[1].body).unwrap().len();
    assert!(size < 150_000, "the follow-up request is {size} bytes");
}

#[test]
fn results_are_cut_on_character_boundaries_with_a_marker() {
    assert_eq!(truncate_result("short", 10), "short");
    assert_eq!(truncate_result("exactly10!", 10), "exactly10!");
    let cut = truncate_result("añb€c😀d", 5);
    assert!(cut.starts_with("añb€c\n[result cut: 5 of 7 characters shown"), "{cut}");
}
