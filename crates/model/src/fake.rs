//! A fake Messages API server on loopback that speaks the same wire format, for tests, demos and end-to-end runs.
//! It answers from a script (text, tool calls, forced-tool replies, refusals, `max_tokens` truncations, errors with
//! `retry-after`, latency, usage with cache reads and writes), checks requests the way the real API would for this
//! model (key and version headers, model id, no sampling parameters, no enabled thinking, no forced tool choice while
//! thinking is on — on by default for this model when the field is left out —, thinking blocks passed back unmodified
//! before the tool calls they led to, tool results that match the tool calls before them), and logs every request
//! for assertions. While thinking is on, every reply starts with a signed thinking block. The key itself is never logged.
//!
//! Routes: `POST /v1/messages`; `GET /_fake/requests` (the log as JSON); `POST /_fake/replies` (append replies).

use crate::policy::MODEL_ID;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::{HashSet, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::oneshot;

/// Token figures a scripted reply reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct FakeUsage {
    pub input_tokens: u32,
    pub output_tokens: u32,
    pub cache_write_5m_tokens: u32,
    pub cache_write_1h_tokens: u32,
    pub cache_read_tokens: u32,
}

impl Default for FakeUsage {
    fn default() -> Self {
        Self {
            input_tokens: 100,
            output_tokens: 20,
            cache_write_5m_tokens: 0,
            cache_write_1h_tokens: 0,
            cache_read_tokens: 0,
        }
    }
}

/// A tool call in a scripted reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FakeToolCall {
    pub name: String,
    #[serde(default)]
    pub input: Value,
}

/// One scripted answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FakeReply {
    /// A text answer (`end_turn`).
    Text {
        text: String,
        #[serde(default)]
        usage: FakeUsage,
        #[serde(default)]
        delay_ms: u64,
    },
    /// Tool calls (`tool_use`), optionally after some text.
    ToolUse {
        #[serde(default)]
        text: Option<String>,
        calls: Vec<FakeToolCall>,
        #[serde(default)]
        usage: FakeUsage,
        #[serde(default)]
        delay_ms: u64,
    },
    /// A call of the tool the request forces with `tool_choice` (or its first tool), with this input.
    ForcedTool {
        input: Value,
        #[serde(default)]
        usage: FakeUsage,
        #[serde(default)]
        delay_ms: u64,
    },
    /// A refusal (`stop_reason: refusal`).
    Refusal {
        #[serde(default)]
        text: String,
        #[serde(default)]
        usage: FakeUsage,
        #[serde(default)]
        delay_ms: u64,
    },
    /// A reply cut off at the token limit (`stop_reason: max_tokens`).
    MaxTokens {
        #[serde(default)]
        text: String,
        #[serde(default)]
        usage: FakeUsage,
        #[serde(default)]
        delay_ms: u64,
    },
    /// An error status with the API's error body; `retry_after` (seconds) becomes the `retry-after` header.
    Error {
        status: u16,
        #[serde(default)]
        retry_after: Option<String>,
        #[serde(default)]
        message: Option<String>,
        #[serde(default)]
        delay_ms: u64,
    },
}

impl FakeReply {
    pub fn text(text: impl Into<String>) -> Self {
        FakeReply::Text { text: text.into(), usage: FakeUsage::default(), delay_ms: 0 }
    }

    pub fn forced_tool(input: Value) -> Self {
        FakeReply::ForcedTool { input, usage: FakeUsage::default(), delay_ms: 0 }
    }

    pub fn tool_use(calls: Vec<(&str, Value)>) -> Self {
        FakeReply::ToolUse {
            text: None,
            calls: calls.into_iter().map(|(name, input)| FakeToolCall { name: name.to_string(), input }).collect(),
            usage: FakeUsage::default(),
            delay_ms: 0,
        }
    }

    pub fn refusal(text: impl Into<String>) -> Self {
        FakeReply::Refusal { text: text.into(), usage: FakeUsage::default(), delay_ms: 0 }
    }

    pub fn max_tokens(text: impl Into<String>) -> Self {
        FakeReply::MaxTokens { text: text.into(), usage: FakeUsage::default(), delay_ms: 0 }
    }

    pub fn error(status: u16) -> Self {
        FakeReply::Error { status, retry_after: None, message: None, delay_ms: 0 }
    }

    pub fn error_with_retry_after(status: u16, seconds: &str) -> Self {
        FakeReply::Error { status, retry_after: Some(seconds.to_string()), message: None, delay_ms: 0 }
    }

    /// The same reply with these usage figures (errors have none).
    pub fn with_usage(mut self, figures: FakeUsage) -> Self {
        match &mut self {
            FakeReply::Text { usage, .. }
            | FakeReply::ToolUse { usage, .. }
            | FakeReply::ForcedTool { usage, .. }
            | FakeReply::Refusal { usage, .. }
            | FakeReply::MaxTokens { usage, .. } => *usage = figures,
            FakeReply::Error { .. } => {}
        }
        self
    }

    /// The same reply after a pause of `ms` milliseconds (a fixed latency per call).
    pub fn with_delay(mut self, ms: u64) -> Self {
        match &mut self {
            FakeReply::Text { delay_ms, .. }
            | FakeReply::ToolUse { delay_ms, .. }
            | FakeReply::ForcedTool { delay_ms, .. }
            | FakeReply::Refusal { delay_ms, .. }
            | FakeReply::MaxTokens { delay_ms, .. }
            | FakeReply::Error { delay_ms, .. } => *delay_ms = ms,
        }
        self
    }

    fn usage(&self) -> Option<FakeUsage> {
        match self {
            FakeReply::Text { usage, .. }
            | FakeReply::ToolUse { usage, .. }
            | FakeReply::ForcedTool { usage, .. }
            | FakeReply::Refusal { usage, .. }
            | FakeReply::MaxTokens { usage, .. } => Some(*usage),
            FakeReply::Error { .. } => None,
        }
    }

    fn delay_ms(&self) -> u64 {
        match self {
            FakeReply::Text { delay_ms, .. }
            | FakeReply::ToolUse { delay_ms, .. }
            | FakeReply::ForcedTool { delay_ms, .. }
            | FakeReply::Refusal { delay_ms, .. }
            | FakeReply::MaxTokens { delay_ms, .. }
            | FakeReply::Error { delay_ms, .. } => *delay_ms,
        }
    }
}

/// What to answer once the scripted replies are used up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WhenExhausted {
    /// HTTP 500 with an `api_error` body saying the script ran out.
    #[default]
    Error,
    /// Answer with the last scripted reply again.
    RepeatLast,
}

/// A reply chosen by what the request says: the first rule whose `when_contains` occurs in the text of the
/// request's messages answers it (at most `times` times when set), before the replies in order are used. This is how
/// concurrent calls (checklist sections) get their own answers whatever order they arrive in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FakeRule {
    pub when_contains: String,
    pub reply: FakeReply,
    #[serde(default)]
    pub times: Option<u32>,
}

impl FakeRule {
    /// Answer every request whose messages contain `needle` with `reply`.
    pub fn new(needle: impl Into<String>, reply: FakeReply) -> Self {
        FakeRule { when_contains: needle.into(), reply, times: None }
    }
}

/// A script: replies in order, what to do after, and optionally the one key to accept.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FakeScript {
    #[serde(default)]
    pub rules: Vec<FakeRule>,
    /// Report usage as the real API's prompt cache would: tokens (about 4 characters each) up to the last
    /// `cache_control` marker (tools, then system, then messages) are written to the cache the first time that exact
    /// prefix is answered and read from it afterwards; the rest is uncached input. Output tokens come from the reply.
    #[serde(default)]
    pub simulate_cache: bool,
    pub replies: Vec<FakeReply>,
    #[serde(default)]
    pub when_exhausted: WhenExhausted,
    /// When set, any other `x-api-key` gets 401; when unset, any non-empty key is accepted.
    #[serde(default)]
    pub api_key: Option<String>,
}

impl FakeScript {
    pub fn new(replies: Vec<FakeReply>) -> Self {
        Self { replies, ..Self::default() }
    }
}

/// One request as the fake received it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoggedRequest {
    pub path: String,
    /// The parsed JSON body (`null` when it was not JSON).
    pub body: Value,
    pub anthropic_version: Option<String>,
    /// Whether an `x-api-key` header came with it (the key itself is not kept).
    pub had_api_key: bool,
    /// The status the fake answered with.
    pub status: u16,
    /// The usage the fake reported (successful replies).
    #[serde(default)]
    pub usage: Option<FakeUsage>,
}

#[derive(Default)]
struct FakeState {
    rules: Mutex<Vec<FakeRule>>,
    simulate_cache: bool,
    cached_prefixes: Mutex<HashSet<String>>,
    replies: Mutex<VecDeque<FakeReply>>,
    last: Mutex<Option<FakeReply>>,
    when_exhausted: WhenExhausted,
    api_key: Option<String>,
    log: Mutex<Vec<LoggedRequest>>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// A running fake server. Dropping it stops it.
pub struct FakeModelServer {
    addr: SocketAddr,
    state: Arc<FakeState>,
    shutdown: Option<oneshot::Sender<()>>,
}

impl FakeModelServer {
    /// Start on a free loopback port.
    pub async fn start(script: FakeScript) -> std::io::Result<Self> {
        Self::start_on_port(script, 0).await
    }

    /// Start on `127.0.0.1:port` (0 for any free port).
    pub async fn start_on_port(script: FakeScript, port: u16) -> std::io::Result<Self> {
        let state = Arc::new(FakeState {
            rules: Mutex::new(script.rules),
            simulate_cache: script.simulate_cache,
            cached_prefixes: Mutex::new(HashSet::new()),
            replies: Mutex::new(script.replies.into()),
            last: Mutex::new(None),
            when_exhausted: script.when_exhausted,
            api_key: script.api_key,
            log: Mutex::new(Vec::new()),
        });
        let app = Router::new()
            .route("/v1/messages", post(messages))
            .route("/_fake/requests", get(requests))
            .route("/_fake/replies", post(append_replies))
            .with_state(state.clone());
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
        let addr = listener.local_addr()?;
        let (shutdown, stopped) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(async {
                stopped.await.ok();
            });
            if let Err(error) = serve.await {
                tracing::error!(%error, "fake model server stopped");
            }
        });
        Ok(Self { addr, state, shutdown: Some(shutdown) })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL to configure the client with (`ModelConfig::endpoint`, `PACTWISE_MODEL_ENDPOINT`).
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<LoggedRequest> {
        lock(&self.state.log).clone()
    }

    /// Requests to `/v1/messages` received so far.
    pub fn message_requests(&self) -> Vec<LoggedRequest> {
        self.requests().into_iter().filter(|r| r.path == "/v1/messages").collect()
    }

    /// Add replies to the end of the script.
    pub fn push_replies(&self, replies: impl IntoIterator<Item = FakeReply>) {
        lock(&self.state.replies).extend(replies);
    }

    /// Scripted replies not yet used.
    pub fn remaining_replies(&self) -> usize {
        lock(&self.state.replies).len()
    }

    /// Stop serving.
    pub fn stop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            shutdown.send(()).ok();
        }
    }
}

impl Drop for FakeModelServer {
    fn drop(&mut self) {
        self.stop();
    }
}

async fn requests(State(state): State<Arc<FakeState>>) -> Response {
    axum::Json(lock(&state.log).clone()).into_response()
}

async fn append_replies(State(state): State<Arc<FakeState>>, body: Bytes) -> Response {
    match serde_json::from_slice::<Vec<FakeReply>>(&body) {
        Ok(replies) => {
            let count = replies.len();
            lock(&state.replies).extend(replies);
            axum::Json(json!({"appended": count})).into_response()
        }
        Err(error) => error_response(400, "invalid_request_error", &format!("replies: {error}"), None, 0),
    }
}

async fn messages(State(state): State<Arc<FakeState>>, headers: HeaderMap, body: Bytes) -> Response {
    let parsed: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let number = lock(&state.log).len() + 1;
    let had_api_key = headers.get("x-api-key").is_some();
    let anthropic_version = headers.get("anthropic-version").and_then(|v| v.to_str().ok()).map(str::to_string);
    let checked = check_request(&state, &headers, &parsed);
    let mut reported = None;
    let (response, status) = match checked {
        Err((status, kind, message)) => (error_response(status, kind, &message, None, number), status),
        Ok(()) => {
            let reply = rule_reply(&state, &parsed).or_else(|| next_reply(&state));
            match reply {
                None => (error_response(500, "api_error", "the fake server's script is used up", None, number), 500),
                Some(mut reply) => {
                    let delay = reply.delay_ms();
                    if delay > 0 {
                        tokio::time::sleep(Duration::from_millis(delay)).await;
                    }
                    if state.simulate_cache {
                        let output = reply.usage().map_or(20, |u| u.output_tokens);
                        reply = reply.with_usage(cache_usage(&state, &parsed, output));
                    }
                    reported = reply.usage();
                    render(&reply, &parsed, number)
                }
            }
        }
    };
    lock(&state.log).push(LoggedRequest {
        path: "/v1/messages".into(),
        body: parsed,
        anthropic_version,
        had_api_key,
        status,
        usage: reported.filter(|_| status == 200),
    });
    response
}

/// The text of every block of the request's messages, joined.
fn request_text(body: &Value) -> String {
    fn collect(value: &Value, out: &mut String) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(text)) = map.get("text") {
                    out.push_str(text);
                    out.push('\n');
                }
                for (key, v) in map {
                    if key != "text" {
                        collect(v, out);
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| collect(v, out)),
            _ => {}
        }
    }
    let mut out = String::new();
    if let Some(messages) = body.get("messages") {
        collect(messages, &mut out);
    }
    out
}

fn rule_reply(state: &FakeState, body: &Value) -> Option<FakeReply> {
    let mut rules = lock(&state.rules);
    if rules.is_empty() {
        return None;
    }
    let text = request_text(body);
    let index = rules.iter().position(|r| r.times != Some(0) && text.contains(&r.when_contains))?;
    let rule = &mut rules[index];
    if let Some(times) = rule.times.as_mut() {
        *times -= 1;
    }
    Some(rule.reply.clone())
}

/// Usage as the prompt cache would report it (see [`FakeScript::simulate_cache`]).
fn cache_usage(state: &FakeState, body: &Value, output_tokens: u32) -> FakeUsage {
    // The prompt in cache order: tools, system, messages; each block rendered as JSON text without its marker.
    let mut blocks: Vec<(String, bool)> = Vec::new();
    let mut push = |v: &Value| {
        let marked = v.get("cache_control").is_some();
        let mut v = v.clone();
        if let Some(map) = v.as_object_mut() {
            map.remove("cache_control");
        }
        blocks.push((v.to_string(), marked));
    };
    for tool in body.get("tools").and_then(Value::as_array).into_iter().flatten() {
        push(tool);
    }
    match body.get("system") {
        Some(Value::Array(items)) => items.iter().for_each(&mut push),
        Some(Value::String(text)) => push(&json!({"type": "text", "text": text})),
        _ => {}
    }
    for message in body.get("messages").and_then(Value::as_array).into_iter().flatten() {
        match message.get("content") {
            Some(Value::Array(items)) => items.iter().for_each(&mut push),
            Some(other) => push(other),
            None => {}
        }
    }
    let tokens = |chars: usize| (chars / 4) as u32;
    let total: usize = blocks.iter().map(|(b, _)| b.len()).sum();
    let Some(last_marker) = blocks.iter().rposition(|(_, marked)| *marked) else {
        return FakeUsage { input_tokens: tokens(total), output_tokens, ..FakeUsage::default() };
    };
    let prefix: String = blocks[..=last_marker].iter().map(|(b, _)| b.as_str()).collect();
    let prefix_len = prefix.len();
    let seen = !lock(&state.cached_prefixes).insert(prefix);
    let rest = tokens(total - prefix_len);
    if seen {
        FakeUsage { input_tokens: rest, output_tokens, cache_read_tokens: tokens(prefix_len), ..FakeUsage::default() }
    } else {
        FakeUsage {
            input_tokens: rest,
            output_tokens,
            cache_write_5m_tokens: tokens(prefix_len),
            ..FakeUsage::default()
        }
    }
}

fn next_reply(state: &FakeState) -> Option<FakeReply> {
    let next = lock(&state.replies).pop_front();
    match next {
        Some(reply) => {
            *lock(&state.last) = Some(reply.clone());
            Some(reply)
        }
        None => match state.when_exhausted {
            WhenExhausted::RepeatLast => lock(&state.last).clone(),
            WhenExhausted::Error => None,
        },
    }
}

type Rejection = (u16, &'static str, String);

/// The checks the real API makes (for this model) that matter to us.
fn check_request(state: &FakeState, headers: &HeaderMap, body: &Value) -> Result<(), Rejection> {
    let key = headers.get("x-api-key").and_then(|v| v.to_str().ok()).unwrap_or("");
    if key.is_empty() || state.api_key.as_deref().is_some_and(|expected| expected != key) {
        return Err((401, "authentication_error", "invalid x-api-key".into()));
    }
    if headers.get("anthropic-version").is_none() {
        return Err((400, "invalid_request_error", "anthropic-version: header is required".into()));
    }
    let Some(object) = body.as_object() else {
        return Err((400, "invalid_request_error", "the body is not a JSON object".into()));
    };
    match object.get("model").and_then(Value::as_str) {
        None => return Err((400, "invalid_request_error", "model: field required".into())),
        Some(model) if model != MODEL_ID => return Err((404, "not_found_error", format!("model: {model}"))),
        Some(_) => {}
    }
    if object.get("max_tokens").and_then(Value::as_u64).is_none_or(|n| n < 1) {
        return Err((400, "invalid_request_error", "max_tokens: a positive integer is required".into()));
    }
    for field in ["temperature", "top_p", "top_k"] {
        if object.contains_key(field) {
            return Err((400, "invalid_request_error", format!("{field}: not supported by this model")));
        }
    }
    if object.get("thinking").and_then(|t| t.get("type")).and_then(Value::as_str) == Some("enabled") {
        return Err((400, "invalid_request_error", "thinking.type: use adaptive or disabled".into()));
    }
    let thinking_on = thinking_on(body);
    if thinking_on
        && let Some(kind) = object.get("tool_choice").and_then(|c| c.get("type")).and_then(Value::as_str)
        && matches!(kind, "any" | "tool")
    {
        return Err((
            400,
            "invalid_request_error",
            "Thinking may not be enabled when tool_choice forces tool use.".into(),
        ));
    }
    let messages = object
        .get("messages")
        .and_then(Value::as_array)
        .filter(|m| !m.is_empty())
        .ok_or_else(|| (400, "invalid_request_error", "messages: at least one message is required".to_string()))?;
    if messages.last().and_then(|m| m.get("role")).and_then(Value::as_str) != Some("user") {
        return Err((400, "invalid_request_error", "the last message must be a user turn (no prefill)".into()));
    }
    check_tool_pairs(messages)?;
    if thinking_on {
        check_thinking_passed_back(messages)?;
    }
    let tool_names: HashSet<&str> = object
        .get("tools")
        .and_then(Value::as_array)
        .map(|tools| tools.iter().filter_map(|t| t.get("name").and_then(Value::as_str)).collect())
        .unwrap_or_default();
    if let Some(choice) = object.get("tool_choice")
        && choice.get("type").and_then(Value::as_str) == Some("tool")
    {
        let name = choice.get("name").and_then(Value::as_str).unwrap_or("");
        if !tool_names.contains(name) {
            return Err((400, "invalid_request_error", format!("tool_choice: no tool named {name}")));
        }
    }
    if count_cache_markers(body) > 4 {
        return Err((400, "invalid_request_error", "a maximum of 4 blocks with cache_control may be provided".into()));
    }
    Ok(())
}

/// Thinking is on unless the request says `disabled` (this model's default is adaptive thinking).
fn thinking_on(body: &Value) -> bool {
    body.get("thinking").and_then(|t| t.get("type")).and_then(Value::as_str) != Some("disabled")
}

/// The signature the fake puts on a thinking block: any change to the thinking text breaks it.
fn signature_of(thinking: &str) -> String {
    format!("fake-signature:{}", thinking.len())
}

/// With thinking on, an assistant turn that called a tool starts with its thinking block, unmodified.
fn check_thinking_passed_back(messages: &[Value]) -> Result<(), Rejection> {
    for message in messages.iter().filter(|m| m.get("role").and_then(Value::as_str) == Some("assistant")) {
        let content = message.get("content").and_then(Value::as_array).cloned().unwrap_or_default();
        let calls_a_tool = content.iter().any(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"));
        if !calls_a_tool {
            continue;
        }
        let first = content.first().cloned().unwrap_or(Value::Null);
        let intact = match first.get("type").and_then(Value::as_str) {
            Some("thinking") => {
                let text = first.get("thinking").and_then(Value::as_str).unwrap_or("");
                first.get("signature").and_then(Value::as_str) == Some(signature_of(text).as_str())
            }
            Some("redacted_thinking") => true,
            _ => false,
        };
        if !intact {
            return Err((
                400,
                "invalid_request_error",
                "an assistant turn with tool_use must start with its thinking block, passed back unmodified".into(),
            ));
        }
    }
    Ok(())
}

/// Every assistant tool_use must be answered by a tool_result in the next user turn, and every tool_result must
/// answer a tool_use of the turn before.
fn check_tool_pairs(messages: &[Value]) -> Result<(), Rejection> {
    let blocks = |message: &Value, kind: &str, field: &str| -> Vec<String> {
        message
            .get("content")
            .and_then(Value::as_array)
            .map(|content| {
                content
                    .iter()
                    .filter(|b| b.get("type").and_then(Value::as_str) == Some(kind))
                    .filter_map(|b| b.get(field).and_then(Value::as_str).map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    for (index, message) in messages.iter().enumerate() {
        let results = blocks(message, "tool_result", "tool_use_id");
        let previous_calls = if index > 0 { blocks(&messages[index - 1], "tool_use", "id") } else { Vec::new() };
        if let Some(orphan) = results.iter().find(|id| !previous_calls.contains(id)) {
            return Err((400, "invalid_request_error", format!("tool_result {orphan} answers no tool_use")));
        }
        let calls = blocks(message, "tool_use", "id");
        if !calls.is_empty() {
            let answers = messages.get(index + 1).map(|m| blocks(m, "tool_result", "tool_use_id")).unwrap_or_default();
            if let Some(unanswered) = calls.iter().find(|id| !answers.contains(id)) {
                return Err((400, "invalid_request_error", format!("tool_use {unanswered} has no tool_result")));
            }
        }
    }
    Ok(())
}

fn count_cache_markers(value: &Value) -> usize {
    match value {
        Value::Object(map) => {
            usize::from(map.contains_key("cache_control")) + map.values().map(count_cache_markers).sum::<usize>()
        }
        Value::Array(items) => items.iter().map(count_cache_markers).sum(),
        _ => 0,
    }
}

fn render(reply: &FakeReply, request: &Value, number: usize) -> (Response, u16) {
    let (content, stop_reason, usage) = match reply {
        FakeReply::Text { text, usage, .. } => (vec![json!({"type": "text", "text": text})], "end_turn", *usage),
        FakeReply::ToolUse { text, calls, usage, .. } => {
            let mut content: Vec<Value> = text.iter().map(|t| json!({"type": "text", "text": t})).collect();
            for (i, call) in calls.iter().enumerate() {
                content.push(json!({"type": "tool_use", "id": format!("toolu_fake_{number}_{i}"), "name": call.name, "input": call.input}));
            }
            (content, "tool_use", *usage)
        }
        FakeReply::ForcedTool { input, usage, .. } => {
            let name = request
                .get("tool_choice")
                .and_then(|c| c.get("name"))
                .or_else(|| request.get("tools").and_then(|t| t.get(0)).and_then(|t| t.get("name")))
                .and_then(Value::as_str)
                .unwrap_or("tool");
            (
                vec![json!({"type": "tool_use", "id": format!("toolu_fake_{number}_0"), "name": name, "input": input})],
                "tool_use",
                *usage,
            )
        }
        FakeReply::Refusal { text, usage, .. } => {
            let content = if text.is_empty() { vec![] } else { vec![json!({"type": "text", "text": text})] };
            (content, "refusal", *usage)
        }
        FakeReply::MaxTokens { text, usage, .. } => (vec![json!({"type": "text", "text": text})], "max_tokens", *usage),
        FakeReply::Error { status, retry_after, message, .. } => {
            let kind = error_kind(*status);
            let message = message.clone().unwrap_or_else(|| format!("scripted {kind}"));
            return (error_response(*status, kind, &message, retry_after.as_deref(), number), *status);
        }
    };
    let mut content = content;
    if thinking_on(request) && stop_reason != "refusal" {
        let thinking = format!("Fake reasoning for request {number}.");
        content.insert(0, json!({"type": "thinking", "thinking": thinking, "signature": signature_of(&thinking)}));
    }
    let body = json!({
        "id": format!("msg_fake_{number}"),
        "type": "message",
        "role": "assistant",
        "model": request.get("model").cloned().unwrap_or(Value::Null),
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": null,
        "usage": {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cache_creation_input_tokens": usage.cache_write_5m_tokens + usage.cache_write_1h_tokens,
            "cache_read_input_tokens": usage.cache_read_tokens,
            "cache_creation": {
                "ephemeral_5m_input_tokens": usage.cache_write_5m_tokens,
                "ephemeral_1h_input_tokens": usage.cache_write_1h_tokens,
            },
        },
    });
    let mut response = axum::Json(body).into_response();
    set_request_id(&mut response, number);
    (response, 200)
}

fn error_kind(status: u16) -> &'static str {
    match status {
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        504 => "timeout_error",
        529 => "overloaded_error",
        s if s >= 500 => "api_error",
        _ => "invalid_request_error",
    }
}

fn error_response(status: u16, kind: &str, message: &str, retry_after: Option<&str>, number: usize) -> Response {
    let body = json!({
        "type": "error",
        "error": {"type": kind, "message": message},
        "request_id": format!("req_fake_{number}"),
    });
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = (status, axum::Json(body)).into_response();
    if let Some(retry_after) = retry_after.and_then(|v| HeaderValue::from_str(v).ok()) {
        response.headers_mut().insert("retry-after", retry_after);
    }
    set_request_id(&mut response, number);
    response
}

fn set_request_id(response: &mut Response, number: usize) {
    if let Ok(value) = HeaderValue::from_str(&format!("req_fake_{number}")) {
        response.headers_mut().insert("request-id", value);
    }
}
