//! Structured output: the JSON Schema of `T` is offered as one tool and the model is forced to call it, with
//! thinking off. A caller that leaves thinking at the model's default (Prep Studio) gets the same tool under automatic
//! tool choice instead, because the API refuses a forced tool choice with thinking on; a reply without the call is
//! then a schema failure like any other. The tool input is validated against the schema before it is parsed; a reply that fails gets at most two corrective
//! re-asks listing the exact validation errors, then a typed error. Refusals and truncated replies are errors at
//! once, never partial results.

use crate::client::{CallContext, ModelClient, non_empty};
use crate::error::ModelError;
use crate::prompt::{PromptDocument, first_user_message, system_blocks};
use crate::schema::{SchemaCheck, object_schema};
use crate::wire::{ContentBlock, Message, MessagesRequest, StopReason, Thinking, ToolChoice, ToolSpec};
use pactwise_domain::usage::{TokenUsage, UsageOutcome};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Corrective re-asks after the first reply, at most.
pub const MAX_RE_ASKS: u32 = 2;

/// A request for a value of a known shape.
#[derive(Debug, Clone, PartialEq)]
pub struct StructuredRequest {
    /// Instructions; sent as a cached system block.
    pub system: String,
    /// Large inputs (a contract's text) placed before the prompt as a cached prefix, fenced as untrusted data.
    pub documents: Vec<PromptDocument>,
    /// The question.
    pub prompt: String,
    /// The name of the forced tool (letters, digits, `_`, `-`), e.g. `record_classification`.
    pub tool_name: String,
    pub tool_description: String,
    /// Output token limit; the configured default when `None`.
    pub max_tokens: Option<u32>,
    /// A model identifier from wherever the caller got one. Ignored: the one allowed model is always used.
    pub model: Option<String>,
    /// [`Thinking::Disabled`] (the backend's rule, with the tool forced) or [`Thinking::ModelDefault`] (Prep Studio:
    /// the tool offered under automatic choice).
    pub thinking: Thinking,
}

impl StructuredRequest {
    pub fn new(system: impl Into<String>, prompt: impl Into<String>, tool_name: impl Into<String>) -> Self {
        Self {
            system: system.into(),
            documents: Vec::new(),
            prompt: prompt.into(),
            tool_name: tool_name.into(),
            tool_description: String::new(),
            max_tokens: None,
            model: None,
            thinking: Thinking::Disabled,
        }
    }

    /// Leave thinking at the model's default; the tool is then offered, not forced.
    pub fn with_model_default_thinking(mut self) -> Self {
        self.thinking = Thinking::ModelDefault;
        self
    }

    /// The tool choice and thinking that go with this request's thinking rule.
    fn choice(&self) -> (ToolChoice, Thinking) {
        match self.thinking {
            Thinking::ModelDefault => (ToolChoice::Auto { disable_parallel_tool_use: true }, Thinking::ModelDefault),
            Thinking::Disabled => {
                (ToolChoice::Tool { name: self.tool_name.clone(), disable_parallel_tool_use: true }, Thinking::Disabled)
            }
        }
    }

    pub fn with_documents(mut self, documents: Vec<PromptDocument>) -> Self {
        self.documents = documents;
        self
    }
}

/// A validated, parsed value and what it took to get it.
#[derive(Debug, Clone, PartialEq)]
pub struct Structured<T> {
    pub value: T,
    /// Corrective re-asks that were needed (0 when the first reply was valid).
    pub re_asks: u32,
    /// Tokens of all requests of this call.
    pub tokens: TokenUsage,
    pub cost_micros: i64,
}

impl ModelClient {
    /// Ask for a value of type `T`: its schema is sent as a forced tool call and the reply is validated before it is
    /// parsed.
    pub async fn call_structured<T: JsonSchema + DeserializeOwned>(
        &self,
        ctx: &CallContext,
        request: StructuredRequest,
    ) -> Result<Structured<T>, ModelError> {
        let schema = object_schema::<T>()?;
        let check = SchemaCheck::new(&schema)?;
        let key = self.api_key().await?;
        let ttl = self.cache_ttl();
        let mut wire = MessagesRequest::new(
            self.max_tokens(request.max_tokens),
            vec![first_user_message(&request.documents, &request.prompt, ttl)],
        );
        if let Some(model) = &request.model {
            wire.model = model.clone();
        }
        wire.system = system_blocks(&request.system, ttl);
        wire.tools = vec![ToolSpec {
            name: request.tool_name.clone(),
            description: request.tool_description.clone(),
            input_schema: schema,
        }];
        let (choice, thinking) = request.choice();
        wire.tool_choice = Some(choice);
        wire.thinking = thinking;

        let mut tokens = TokenUsage::default();
        let mut cost_micros = 0i64;
        let mut re_asks = 0u32;
        loop {
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
                _ => {}
            }
            let call = response.tool_uses().find(|(_, name, _)| *name == request.tool_name);
            let errors = match call {
                None => vec![format!("the reply did not call the tool `{}`", request.tool_name)],
                Some((_, _, input)) => {
                    let errors = check.errors(input);
                    if errors.is_empty() {
                        match serde_json::from_value::<T>(input.clone()) {
                            Ok(value) => {
                                self.record(ctx, &exchange, UsageOutcome::Ok);
                                return Ok(Structured { value, re_asks, tokens, cost_micros });
                            }
                            Err(error) => vec![format!("at /: {error}")],
                        }
                    } else {
                        errors
                    }
                }
            };
            self.record(ctx, &exchange, UsageOutcome::InvalidOutput);
            tracing::warn!(purpose = %ctx.purpose, errors = errors.len(), re_asks, "structured reply failed validation");
            if re_asks >= MAX_RE_ASKS {
                return Err(ModelError::SchemaInvalid { errors, attempts: re_asks + 1 });
            }
            re_asks += 1;
            wire.messages.push(response.as_assistant_message());
            wire.messages.push(corrective_turn(response.tool_uses(), &request.tool_name, &errors));
        }
    }
}

/// The raw input of a forced tool call made with exactly one HTTP request: no retries, no corrective re-asks.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInput {
    /// The tool input as the model sent it, NOT validated: the caller validates it at its own edge.
    pub input: Value,
    pub tokens: TokenUsage,
    pub cost_micros: i64,
}

impl ModelClient {
    /// One forced call of a tool whose input schema is `schema`, in exactly one HTTP request: no retries by the
    /// client and no corrective re-asks, so a caller that counts its calls against a budget of its own counts
    /// requests. The input is returned as sent (the caller validates it item by item and drops what is malformed;
    /// nothing is repaired by the model). A refusal, a truncated reply or a reply without the tool call is an error.
    /// The tool is always forced and thinking off, whatever `request.thinking` says.
    pub async fn call_tool_once(
        &self,
        ctx: &CallContext,
        request: StructuredRequest,
        schema: Value,
    ) -> Result<ToolInput, ModelError> {
        SchemaCheck::new(&schema)?;
        let key = self.api_key().await?;
        let ttl = self.cache_ttl();
        let mut wire = MessagesRequest::new(
            self.max_tokens(request.max_tokens),
            vec![first_user_message(&request.documents, &request.prompt, ttl)],
        );
        if let Some(model) = &request.model {
            wire.model = model.clone();
        }
        wire.system = system_blocks(&request.system, ttl);
        wire.tools = vec![ToolSpec {
            name: request.tool_name.clone(),
            description: request.tool_description.clone(),
            input_schema: schema,
        }];
        wire.tool_choice = Some(ToolChoice::Tool { name: request.tool_name.clone(), disable_parallel_tool_use: true });
        let once = crate::retry::RetryPolicy { max_attempts: 1, ..self.config().retry };
        let exchange = self.exchange_with(ctx, &key, &wire, once).await?;
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
            _ => {}
        }
        match response.tool_uses().find(|(_, name, _)| *name == request.tool_name) {
            Some((_, _, input)) => {
                self.record(ctx, &exchange, UsageOutcome::Ok);
                Ok(ToolInput { input: input.clone(), tokens: exchange.tokens, cost_micros: exchange.cost_micros })
            }
            None => {
                self.record(ctx, &exchange, UsageOutcome::InvalidOutput);
                Err(ModelError::SchemaInvalid {
                    errors: vec![format!("the reply did not call the tool `{}`", request.tool_name)],
                    attempts: 1,
                })
            }
        }
    }
}

/// The user turn that asks again: a tool result (marked as an error) for every tool call of the failed reply, the
/// one for our tool listing every validation error; a plain text turn when the reply called no tool.
fn corrective_turn<'a>(
    calls: impl Iterator<Item = (&'a str, &'a str, &'a Value)>,
    tool: &str,
    errors: &[String],
) -> Message {
    let listing = errors.iter().map(|e| format!("- {e}")).collect::<Vec<_>>().join("\n");
    let instruction = format!(
        "The input did not match the required schema. Errors:\n{listing}\nCall `{tool}` again with input that fixes \
         every error listed and keeps everything else."
    );
    let mut content: Vec<ContentBlock> = calls
        .map(|(id, name, _)| ContentBlock::ToolResult {
            tool_use_id: id.to_string(),
            content: if name == tool {
                instruction.clone()
            } else {
                format!("`{name}` is not available; call `{tool}`.")
            },
            is_error: true,
            cache_control: None,
        })
        .collect();
    if content.is_empty() {
        content.push(ContentBlock::text(format!(
            "Your reply did not call `{tool}`. Reply only by calling `{tool}` with input that matches its schema."
        )));
    }
    Message::user(content)
}
