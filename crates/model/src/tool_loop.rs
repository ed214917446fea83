//! Tool-use conversations: the types and the driver loop the Contract Assistant and workflows build on. Tools are
//! offered per request from an allowlist; a tool the model asks for that was not offered in this request is refused
//! by the driver (the executor never sees it) and the refusal goes back to the model as an error result. The loop
//! has an iteration cap; reaching it is an error, never a partial answer.

use crate::client::{CallContext, ModelClient, non_empty};
use crate::error::ModelError;
use crate::prompt::{PromptDocument, first_user_message, system_blocks};
use crate::retry::BoxFuture;
use crate::schema::{SchemaCheck, object_schema};
use crate::wire::{CacheControl, ContentBlock, Message, MessagesRequest, Role, StopReason, ToolChoice, ToolSpec};
use pactwise_domain::usage::{TokenUsage, UsageOutcome};
use schemars::JsonSchema;
use serde_json::Value;

/// A tool the model may be offered: its name, what it does and the JSON Schema of its input.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

impl ToolDefinition {
    /// A tool whose input is `I` (a struct deriving `JsonSchema`).
    pub fn for_input<I: JsonSchema>(
        name: impl Into<String>,
        description: impl Into<String>,
    ) -> Result<Self, ModelError> {
        Ok(Self { name: name.into(), description: description.into(), input_schema: object_schema::<I>()? })
    }
}

/// The tools offered in one request. Only these can run.
#[derive(Debug, Clone, Default)]
pub struct ToolAllowlist {
    tools: Vec<ToolDefinition>,
}

impl ToolAllowlist {
    pub fn new(tools: Vec<ToolDefinition>) -> Self {
        Self { tools }
    }

    pub fn offers(&self, name: &str) -> bool {
        self.tools.iter().any(|t| t.name == name)
    }

    pub fn names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name.as_str()).collect()
    }

    fn specs(&self) -> Vec<ToolSpec> {
        self.tools
            .iter()
            .map(|t| ToolSpec {
                name: t.name.clone(),
                description: t.description.clone(),
                input_schema: t.input_schema.clone(),
            })
            .collect()
    }

    fn get(&self, name: &str) -> Option<&ToolDefinition> {
        self.tools.iter().find(|t| t.name == name)
    }
}

/// A tool failed; the message goes back to the model as an error result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolFailure(pub String);

/// Runs tools. It is only ever called with a tool that was offered in the request and input that matches the tool's
/// schema.
pub trait ToolExecutor: Send + Sync {
    fn execute<'a>(&'a self, name: &'a str, input: &'a Value) -> BoxFuture<'a, Result<String, ToolFailure>>;
}

/// How one requested tool call ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolCallResult {
    /// The tool ran; its output went back to the model.
    Ran(String),
    /// The tool ran and failed.
    Failed(String),
    /// The input did not match the tool's schema; the tool did not run.
    InvalidInput(Vec<String>),
    /// The model asked for a tool that was not offered in this request; nothing ran.
    NotOffered,
    /// The turn had already asked for the most tool calls a turn may run; this one did not run.
    OverTurnCap { cap: usize },
}

#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallRecord {
    pub id: String,
    pub name: String,
    pub input: Value,
    pub result: ToolCallResult,
}

/// The bounds of a tool conversation. Code sets them; nothing the model sends can raise them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolLoopLimits {
    /// Model turns at most; reaching it is an error, never a partial answer.
    pub max_iterations: u32,
    /// Tool calls run per model turn. Calls past it do not run: each is answered with an error result that says
    /// the cap, so the model can ask again in its next turn.
    pub max_calls_per_turn: usize,
    /// Characters of one tool result sent back to the model; a longer result is cut on a character boundary and
    /// ends with a marker that says so.
    pub max_result_chars: usize,
}

impl ToolLoopLimits {
    /// Calls per turn when not set otherwise.
    pub const DEFAULT_CALLS_PER_TURN: usize = 8;
    /// Characters of one tool result when not set otherwise.
    pub const DEFAULT_RESULT_CHARS: usize = 16_000;

    pub const fn new(max_iterations: u32) -> Self {
        Self {
            max_iterations,
            max_calls_per_turn: Self::DEFAULT_CALLS_PER_TURN,
            max_result_chars: Self::DEFAULT_RESULT_CHARS,
        }
    }
}

impl From<u32> for ToolLoopLimits {
    /// `max_iterations` model turns with the default per-turn bounds.
    fn from(max_iterations: u32) -> Self {
        Self::new(max_iterations)
    }
}

/// Cuts `text` to at most `max_chars` characters (never inside a character), with a marker saying how much was
/// left out.
pub fn truncate_result(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => text.to_string(),
        Some((cut, _)) => {
            let total = text.chars().count();
            format!(
                "{}\n[result cut: {max_chars} of {total} characters shown; ask for less, e.g. a narrower search]",
                &text[..cut]
            )
        }
    }
}

/// A conversation to run with tools.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolLoopRequest {
    pub system: String,
    /// Cached prefix documents, fenced as untrusted data, placed before the first prompt.
    pub documents: Vec<PromptDocument>,
    /// The conversation so far; it must end with a user turn. Built from `prompt` by [`ToolLoopRequest::new`].
    pub messages: Vec<Message>,
    pub max_tokens: Option<u32>,
    /// Ignored like every other model identifier: the one allowed model is used.
    pub model: Option<String>,
}

impl ToolLoopRequest {
    pub fn new(system: impl Into<String>, prompt: impl Into<String>) -> Self {
        Self {
            system: system.into(),
            documents: Vec::new(),
            messages: vec![Message::user_text(prompt)],
            max_tokens: None,
            model: None,
        }
    }

    pub fn with_documents(mut self, documents: Vec<PromptDocument>) -> Self {
        self.documents = documents;
        self
    }
}

/// A finished conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolLoopOutcome {
    /// The final answer's text.
    pub answer: String,
    /// Every tool call the model asked for, in order, with what happened.
    pub calls: Vec<ToolCallRecord>,
    /// Model turns taken.
    pub iterations: u32,
    pub tokens: TokenUsage,
    pub cost_micros: i64,
    /// The whole conversation, the final answer included.
    pub transcript: Vec<Message>,
}

impl ModelClient {
    /// Run a conversation in which the model may call the allowlisted tools, until it answers or the limits'
    /// `max_iterations` model turns have been taken. Each turn runs at most `max_calls_per_turn` tool calls and
    /// sends back at most `max_result_chars` characters of each result (a plain number is the iteration cap with
    /// the default per-turn bounds).
    pub async fn run_tool_loop(
        &self,
        ctx: &CallContext,
        request: ToolLoopRequest,
        executor: &dyn ToolExecutor,
        allowlist: &ToolAllowlist,
        limits: impl Into<ToolLoopLimits>,
    ) -> Result<ToolLoopOutcome, ModelError> {
        let limits: ToolLoopLimits = limits.into();
        let max_iterations = limits.max_iterations;
        let ttl = self.cache_ttl();
        let checks = allowlist
            .tools
            .iter()
            .map(|t| SchemaCheck::new(&t.input_schema).map(|c| (t.name.clone(), c)))
            .collect::<Result<Vec<_>, _>>()?;
        let key = self.api_key().await?;

        let mut transcript = request.messages.clone();
        if !request.documents.is_empty() {
            // Put the documents in front of the first user turn, as a cached prefix.
            let prefix = first_user_message(&request.documents, "", ttl);
            let documents: Vec<ContentBlock> = prefix.content.into_iter().filter(|b| !is_empty_text(b)).collect();
            match transcript.first_mut() {
                Some(first) if first.role == Role::User => {
                    let rest = std::mem::take(&mut first.content);
                    first.content = documents.into_iter().chain(rest).collect();
                }
                _ => transcript.insert(0, Message::user(documents)),
            }
        }
        if transcript.last().map(|m| m.role) != Some(Role::User) {
            return Err(ModelError::Internal("a tool conversation must end with a user turn".into()));
        }

        let mut wire = MessagesRequest::new(self.max_tokens(request.max_tokens), Vec::new());
        if let Some(model) = &request.model {
            wire.model = model.clone();
        }
        wire.system = system_blocks(&request.system, ttl);
        wire.tools = allowlist.specs();
        if !wire.tools.is_empty() {
            wire.tool_choice = Some(ToolChoice::Auto { disable_parallel_tool_use: false });
        }

        let mut calls = Vec::new();
        let mut tokens = TokenUsage::default();
        let mut cost_micros = 0i64;
        for iteration in 1..=max_iterations {
            wire.messages = with_moving_breakpoint(&transcript, CacheControl::ephemeral(ttl));
            let exchange = self.exchange(ctx, &key, &wire).await?;
            tokens.add(&exchange.tokens);
            cost_micros += exchange.cost_micros;
            let response = &exchange.response;
            match response.stop_reason {
                Some(StopReason::Refusal) => {
                    self.record(ctx, &exchange, UsageOutcome::Refused);
                    return Err(ModelError::Refused { explanation: non_empty(response.text()) });
                }
                Some(StopReason::MaxTokens) | Some(StopReason::ModelContextWindowExceeded) => {
                    self.record(ctx, &exchange, UsageOutcome::Truncated);
                    return Err(ModelError::Truncated { max_tokens: wire.max_tokens });
                }
                Some(StopReason::ToolUse) => {
                    self.record(ctx, &exchange, UsageOutcome::Ok);
                    transcript.push(response.as_assistant_message());
                    let mut results = Vec::new();
                    let uses: Vec<_> = response.tool_uses().collect();
                    if uses.len() > limits.max_calls_per_turn {
                        tracing::warn!(
                            purpose = %ctx.purpose,
                            asked = uses.len(),
                            cap = limits.max_calls_per_turn,
                            "the model asked for more tool calls in one turn than the cap; the rest are refused"
                        );
                    }
                    for (n, (id, name, input)) in uses.into_iter().enumerate() {
                        let result = if n < limits.max_calls_per_turn {
                            match run_one(executor, allowlist, &checks, name, input).await {
                                ToolCallResult::Ran(output) => {
                                    ToolCallResult::Ran(truncate_result(&output, limits.max_result_chars))
                                }
                                other => other,
                            }
                        } else {
                            ToolCallResult::OverTurnCap { cap: limits.max_calls_per_turn }
                        };
                        results.push(result_block(id, name, &result));
                        calls.push(ToolCallRecord { id: id.into(), name: name.into(), input: input.clone(), result });
                    }
                    if results.is_empty() {
                        results.push(ContentBlock::text("No tool call was found in your reply; answer the question."));
                    }
                    transcript.push(Message::user(results));
                }
                Some(StopReason::PauseTurn) => {
                    self.record(ctx, &exchange, UsageOutcome::Ok);
                    transcript.push(response.as_assistant_message());
                    transcript.push(Message::user_text("Continue."));
                }
                _ => {
                    self.record(ctx, &exchange, UsageOutcome::Ok);
                    let answer = response.text();
                    transcript.push(response.as_assistant_message());
                    return Ok(ToolLoopOutcome {
                        answer,
                        calls,
                        iterations: iteration,
                        tokens,
                        cost_micros,
                        transcript,
                    });
                }
            }
        }
        tracing::warn!(purpose = %ctx.purpose, max_iterations, "tool conversation reached its cap");
        Err(ModelError::ToolLoopCapReached { iterations: max_iterations })
    }
}

fn is_empty_text(block: &ContentBlock) -> bool {
    matches!(block, ContentBlock::Text { text, .. } if text.is_empty())
}

/// The allowlist gate, then the schema check, then the executor.
async fn run_one(
    executor: &dyn ToolExecutor,
    allowlist: &ToolAllowlist,
    checks: &[(String, SchemaCheck)],
    name: &str,
    input: &Value,
) -> ToolCallResult {
    let span = tracing::info_span!("tool_call", tool = name);
    let gate = span.in_scope(|| {
        if allowlist.get(name).is_none() {
            tracing::warn!(tool = name, "the model asked for a tool that was not offered; refused");
            return Some(ToolCallResult::NotOffered);
        }
        let errors = checks.iter().find(|(n, _)| n == name).map(|(_, check)| check.errors(input)).unwrap_or_default();
        (!errors.is_empty()).then_some(ToolCallResult::InvalidInput(errors))
    });
    if let Some(refused) = gate {
        return refused;
    }
    let result = tracing::Instrument::instrument(executor.execute(name, input), span.clone()).await;
    match result {
        Ok(output) => ToolCallResult::Ran(output),
        Err(ToolFailure(message)) => ToolCallResult::Failed(message),
    }
}

fn result_block(id: &str, name: &str, result: &ToolCallResult) -> ContentBlock {
    let (content, is_error) = match result {
        ToolCallResult::Ran(output) => (output.clone(), false),
        ToolCallResult::Failed(message) => (format!("The tool `{name}` failed: {message}"), true),
        ToolCallResult::InvalidInput(errors) => {
            (format!("The input to `{name}` did not match its schema:\n- {}", errors.join("\n- ")), true)
        }
        ToolCallResult::NotOffered => (
            format!("Refused: the tool `{name}` is not available in this conversation. Use only the tools offered."),
            true,
        ),
        ToolCallResult::OverTurnCap { cap } => (
            format!(
                "Not run: at most {cap} tool calls run per turn and this turn asked for more. Ask again for what you \
                 still need, at most {cap} calls at a time."
            ),
            true,
        ),
    };
    ContentBlock::ToolResult { tool_use_id: id.to_string(), content, is_error, cache_control: None }
}

/// The transcript with one extra cache breakpoint on the last block of the last turn, so each turn of a long tool
/// conversation reads the previous turns from the cache. (System and document markers stay where they are: at most
/// three breakpoints in all.)
fn with_moving_breakpoint(transcript: &[Message], marker: CacheControl) -> Vec<Message> {
    let mut messages = transcript.to_vec();
    if messages.len() > 1
        && let Some(last) = messages.last_mut().and_then(|m| m.content.last_mut())
        && last.cache_control().is_none()
    {
        last.set_cache_control(Some(marker));
    }
    messages
}
