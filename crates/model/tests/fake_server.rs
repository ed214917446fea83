//! The fake server itself: it checks requests the way the real API does for this model, answers in the same wire
//! format, logs requests without keys, and its binary serves a script from a file.

use pactwise_model::fake::{FakeModelServer, FakeReply, FakeRule, FakeScript, FakeUsage, WhenExhausted};
use serde_json::{Value, json};

/// A request as our client sends it: thinking off (left out, this model thinks by default).
fn body() -> Value {
    json!({"model": "claude-haiku-5-5", "max_tokens": 16, "thinking": {"type": "disabled"},
        "messages": [{"role": "user", "content": "hi"}]})
}

/// The same with thinking at the model's default (no field).
fn thinking_body() -> Value {
    let mut b = body();
    b.as_object_mut().unwrap().remove("thinking");
    b
}

async fn post(server: &FakeModelServer, key: Option<&str>, body: &Value) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut request = reqwest::Client::new()
        .post(format!("{}/v1/messages", server.endpoint()))
        .header("anthropic-version", "2023-06-01")
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(key) = key {
        request = request.header("x-api-key", key);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    (status, headers, response.json().await.unwrap())
}

#[tokio::test]
async fn the_fake_rejects_what_the_real_api_rejects_for_this_model() {
    let server = FakeModelServer::start(FakeScript::new(vec![])).await.unwrap();
    let cases: Vec<(Option<&str>, Value, u16, &str)> = vec![
        (None, body(), 401, "authentication_error"),
        (
            Some("k"),
            json!({"max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]}),
            400,
            "invalid_request_error",
        ),
        (
            Some("k"),
            {
                let mut b = body();
                b["model"] = json!("claude-opus-5-5");
                b
            },
            404,
            "not_found_error",
        ),
        (
            Some("k"),
            {
                let mut b = body();
                b["temperature"] = json!(0.2);
                b
            },
            400,
            "invalid_request_error",
        ),
        (
            Some("k"),
            {
                let mut b = body();
                b["thinking"] = json!({"type": "enabled", "budget_tokens": 2048});
                b
            },
            400,
            "invalid_request_error",
        ),
        (
            Some("k"),
            {
                let mut b = body();
                b["messages"] = json!([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]);
                b
            },
            400,
            "invalid_request_error",
        ),
        (
            Some("k"),
            {
                let mut b = body();
                b["messages"] = json!([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_x", "content": "r"}]}]);
                b
            },
            400,
            "invalid_request_error",
        ),
        // Thinking is on by default for this model: a forced tool choice without `thinking: disabled` is refused,
        // and so is one with adaptive thinking.
        (
            Some("k"),
            {
                let mut b = thinking_body();
                b["tools"] = json!([{"name": "t", "input_schema": {"type": "object"}}]);
                b["tool_choice"] = json!({"type": "tool", "name": "t"});
                b
            },
            400,
            "invalid_request_error",
        ),
        (
            Some("k"),
            {
                let mut b = body();
                b["tools"] = json!([{"name": "t", "input_schema": {"type": "object"}}]);
                b["tool_choice"] = json!({"type": "any"});
                b["thinking"] = json!({"type": "adaptive"});
                b
            },
            400,
            "invalid_request_error",
        ),
        // With thinking on, a tool call passed back without its thinking block is refused.
        (
            Some("k"),
            {
                let mut b = thinking_body();
                b["messages"] = json!([
                    {"role": "user", "content": "a"},
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "t", "input": {}}]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "r"}]}
                ]);
                b
            },
            400,
            "invalid_request_error",
        ),
    ];
    // Thinking at the default with the one tool offered under automatic choice is fine, and the reply starts with a
    // signed thinking block.
    let server_ok =
        FakeModelServer::start(FakeScript::new(vec![FakeReply::forced_tool(json!({"ok": true}))])).await.unwrap();
    let mut auto = thinking_body();
    auto["tools"] = json!([{"name": "t", "input_schema": {"type": "object"}}]);
    auto["tool_choice"] = json!({"type": "auto"});
    let (got, _, reply) = post(&server_ok, Some("k"), &auto).await;
    assert_eq!(got, 200, "{reply}");
    assert_eq!(reply["content"][0]["type"], "thinking");
    assert!(reply["content"][0]["signature"].is_string());
    assert_eq!(reply["content"][1]["name"], "t");
    for (key, request, status, kind) in cases {
        let (got, headers, reply) = post(&server, key, &request).await;
        assert_eq!(got, status, "{request}");
        assert_eq!(reply["type"], "error");
        assert_eq!(reply["error"]["type"], kind, "{request}");
        assert!(headers.get("request-id").is_some());
    }
}

#[tokio::test]
async fn the_fake_answers_in_the_wire_format_with_cache_usage_and_logs_without_keys() {
    let usage = FakeUsage {
        input_tokens: 5,
        output_tokens: 6,
        cache_write_5m_tokens: 7,
        cache_write_1h_tokens: 8,
        cache_read_tokens: 9,
    };
    let server = FakeModelServer::start(FakeScript {
        replies: vec![FakeReply::text("hello").with_usage(usage), FakeReply::error_with_retry_after(429, "3")],
        when_exhausted: WhenExhausted::RepeatLast,
        api_key: None,
        ..FakeScript::default()
    })
    .await
    .unwrap();
    let (status, headers, reply) = post(&server, Some("sk-ant-fake-key-9999"), &body()).await;
    assert_eq!(status, 200);
    assert!(headers.get("request-id").is_some());
    assert_eq!(reply["type"], "message");
    assert_eq!(reply["content"][0], json!({"type": "text", "text": "hello"}));
    assert_eq!(reply["stop_reason"], "end_turn");
    assert_eq!(reply["usage"]["cache_creation_input_tokens"], 15);
    assert_eq!(reply["usage"]["cache_read_input_tokens"], 9);
    assert_eq!(reply["usage"]["cache_creation"]["ephemeral_1h_input_tokens"], 8);

    let (status, headers, reply) = post(&server, Some("sk-ant-fake-key-9999"), &body()).await;
    assert_eq!(status, 429);
    assert_eq!(headers.get("retry-after").unwrap(), "3");
    assert_eq!(reply["error"]["type"], "rate_limit_error");
    let (status, _, _) = post(&server, Some("sk-ant-fake-key-9999"), &body()).await;
    assert_eq!(status, 429, "the last reply repeats once the script is used up");

    let log: Value = reqwest::get(format!("{}/_fake/requests", server.endpoint())).await.unwrap().json().await.unwrap();
    assert_eq!(log.as_array().unwrap().len(), 3);
    assert_eq!(log[0]["had_api_key"], true);
    assert_eq!(log[0]["body"]["model"], "claude-haiku-5-5");
    assert!(!log.to_string().contains("sk-ant-fake-key-9999"));
}

#[tokio::test]
async fn replies_can_be_appended_over_http_and_an_exhausted_script_answers_500() {
    let server = FakeModelServer::start(FakeScript::new(vec![])).await.unwrap();
    let (status, _, _) = post(&server, Some("k"), &body()).await;
    assert_eq!(status, 500);
    let appended: Value = reqwest::Client::new()
        .post(format!("{}/_fake/replies", server.endpoint()))
        .body(json!([{"kind": "refusal", "text": "no"}]).to_string())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(appended["appended"], 1);
    let (status, _, reply) = post(&server, Some("k"), &body()).await;
    assert_eq!(status, 200);
    assert_eq!(reply["stop_reason"], "refusal");
}

#[test]
fn the_binary_serves_a_script_from_a_file_and_writes_its_log_on_exit() {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.json");
    let log = dir.path().join("log.json");
    std::fs::write(&script, r#"{"replies": [{"kind": "forced_tool", "input": {"ok": true}}]}"#).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_pactwise-fake-model"))
        .args(["--script", script.to_str().unwrap(), "--log", log.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let endpoint = serde_json::from_str::<Value>(&line).unwrap()["endpoint"].as_str().unwrap().to_string();
    assert!(endpoint.starts_with("http://127.0.0.1:"), "{endpoint}");

    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let reply: Value = runtime.block_on(async {
        let mut request = body();
        request["tools"] = json!([{"name": "record", "input_schema": {"type": "object"}}]);
        request["tool_choice"] = json!({"type": "tool", "name": "record"});
        reqwest::Client::new()
            .post(format!("{endpoint}/v1/messages"))
            .header("x-api-key", "k")
            .header("anthropic-version", "2023-06-01")
            .body(request.to_string())
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    });
    assert_eq!(reply["content"][0]["name"], "record");
    assert_eq!(reply["content"][0]["input"], json!({"ok": true}));

    // SIGTERM (the process we started, by its id), then the log is on disk.
    let status = std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    assert!(child.wait().unwrap().success());
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&log).unwrap()).unwrap();
    assert_eq!(written.as_array().unwrap().len(), 1);
}

#[test]
fn the_demo_script_shipped_with_the_crate_parses() {
    let script: FakeScript = serde_json::from_str(include_str!("../fake-scripts/demo.json")).unwrap();
    assert_eq!(script.replies.len(), 6);
    assert_eq!(script.when_exhausted, WhenExhausted::RepeatLast);
    assert!(matches!(script.replies[1], FakeReply::Error { status: 429, .. }));
}

fn with_prefix(prefix: &str, question: &str) -> Value {
    json!({"model": "claude-haiku-5-5", "max_tokens": 16, "thinking": {"type": "disabled"}, "messages": [{"role": "user", "content": [
        {"type": "text", "text": prefix, "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": question}
    ]}]})
}

#[tokio::test]
async fn rules_answer_by_what_the_request_says_and_the_cache_is_simulated_per_prefix() {
    let script = FakeScript {
        rules: vec![
            FakeRule { times: Some(1), ..FakeRule::new("section A", FakeReply::text("answer A")) },
            FakeRule::new("section B", FakeReply::text("answer B")),
        ],
        simulate_cache: true,
        ..FakeScript::new(vec![FakeReply::text("in order")])
    };
    let server = FakeModelServer::start(script).await.unwrap();
    let key = Some("sk-ant-fake-key-1");
    let prefix = "x".repeat(4_000);
    let (_, _, b) = post(&server, key, &with_prefix(&prefix, "section B please")).await;
    assert_eq!(b["content"][0]["text"], "answer B");
    assert_eq!(b["usage"]["cache_creation_input_tokens"], 1_000 + 6, "the first time, the prefix is written");
    let (_, _, a) = post(&server, key, &with_prefix(&prefix, "section A please")).await;
    assert_eq!(a["content"][0]["text"], "answer A");
    assert!(a["usage"]["cache_read_input_tokens"].as_u64().unwrap() >= 1_000, "then read: {a}");
    assert_eq!(a["usage"]["cache_creation_input_tokens"], 0);
    // The A rule was for one answer only; the in-order replies come next.
    let (_, _, again) = post(&server, key, &with_prefix(&prefix, "section A please")).await;
    assert_eq!(again["content"][0]["text"], "in order");
    let logged = server.message_requests();
    assert_eq!(logged.len(), 3);
    assert!(logged.iter().all(|r| r.usage.is_some()));
}
