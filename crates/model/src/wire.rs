//! The Messages API wire format (non-streaming): what we send and what comes back. Sampling parameters
//! (temperature, top_p, top_k) have no field here at all, and extended thinking is either `disabled` or left out
//! (the model's default), never `enabled` with a budget of ours.

use crate::policy::MODEL_ID;
use pactwise_domain::usage::TokenUsage;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A request body for `POST /v1/messages`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessagesRequest {
    /// Ignored in effect: the client overwrites it with the one allowed model right before sending.
    pub model: String,
    pub max_tokens: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub system: Vec<SystemBlock>,
    pub messages: Vec<Message>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// The client sends `disabled` unless this says [`Thinking::ModelDefault`] on a request that forces no tool.
    #[serde(default = "Thinking::model_default", skip_serializing_if = "Thinking::is_model_default")]
    pub thinking: Thinking,
}

impl MessagesRequest {
    pub fn new(max_tokens: u32, messages: Vec<Message>) -> Self {
        Self {
            model: MODEL_ID.to_string(),
            max_tokens,
            system: Vec::new(),
            messages,
            tools: Vec::new(),
            tool_choice: None,
            thinking: Thinking::Disabled,
        }
    }
}

/// Extended thinking. Backend calls send it switched off; Prep Studio leaves it at the model's default (the field
/// is not sent: adaptive thinking on Haiku 5.5). There is deliberately no `enabled` variant with a budget.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Thinking {
    #[default]
    Disabled,
    /// No `thinking` field on the wire: whatever the model does by default.
    #[serde(skip)]
    ModelDefault,
}

impl Thinking {
    fn model_default() -> Self {
        Thinking::ModelDefault
    }

    pub fn is_model_default(&self) -> bool {
        matches!(self, Thinking::ModelDefault)
    }
}

/// A prompt-cache breakpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheControl {
    #[serde(rename = "type")]
    pub kind: CacheKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<CacheTtl>,
}

impl CacheControl {
    pub fn ephemeral(ttl: CacheTtl) -> Self {
        Self { kind: CacheKind::Ephemeral, ttl: Some(ttl) }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheKind {
    Ephemeral,
}

/// How long a cache entry lives (refreshed on every hit).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum CacheTtl {
    #[default]
    #[serde(rename = "5m")]
    FiveMinutes,
    #[serde(rename = "1h")]
    OneHour,
}

/// A system prompt block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemBlock {
    #[serde(rename = "type")]
    pub kind: TextKind,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

impl SystemBlock {
    pub fn text(text: impl Into<String>) -> Self {
        Self { kind: TextKind::Text, text: text.into(), cache_control: None }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TextKind {
    Text,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: Vec<ContentBlock>,
}

impl Message {
    pub fn user(content: Vec<ContentBlock>) -> Self {
        Self { role: Role::User, content }
    }

    pub fn user_text(text: impl Into<String>) -> Self {
        Self::user(vec![ContentBlock::text(text)])
    }

    pub fn assistant(content: Vec<ContentBlock>) -> Self {
        Self { role: Role::Assistant, content }
    }
}

/// A content block we send (and echo back in tool conversations).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    Text {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    ToolResult {
        tool_use_id: String,
        content: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    /// A thinking block of an earlier reply, passed back unmodified (the API checks its signature).
    Thinking {
        thinking: String,
        signature: String,
    },
    RedactedThinking {
        data: String,
    },
}

impl ContentBlock {
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text { text: text.into(), cache_control: None }
    }

    /// Put a cache breakpoint on this block (tool_use blocks take none here).
    pub fn set_cache_control(&mut self, marker: Option<CacheControl>) {
        match self {
            ContentBlock::Text { cache_control, .. } | ContentBlock::ToolResult { cache_control, .. } => {
                *cache_control = marker
            }
            ContentBlock::ToolUse { .. } | ContentBlock::Thinking { .. } | ContentBlock::RedactedThinking { .. } => {}
        }
    }

    pub fn cache_control(&self) -> Option<CacheControl> {
        match self {
            ContentBlock::Text { cache_control, .. } | ContentBlock::ToolResult { cache_control, .. } => *cache_control,
            ContentBlock::ToolUse { .. } | ContentBlock::Thinking { .. } | ContentBlock::RedactedThinking { .. } => {
                None
            }
        }
    }
}

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    pub input_schema: Value,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolChoice {
    Auto {
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        disable_parallel_tool_use: bool,
    },
    Any {
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        disable_parallel_tool_use: bool,
    },
    Tool {
        name: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        disable_parallel_tool_use: bool,
    },
    None,
}

/// A successful reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessagesResponse {
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub model: String,
    pub content: Vec<ResponseBlock>,
    #[serde(default)]
    pub stop_reason: Option<StopReason>,
    #[serde(default)]
    pub usage: WireUsage,
}

impl MessagesResponse {
    /// The text blocks, joined.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for block in &self.content {
            if let ResponseBlock::Text { text } = block {
                out.push_str(text);
            }
        }
        out
    }

    /// The tool calls in this reply, in order.
    pub fn tool_uses(&self) -> impl Iterator<Item = (&str, &str, &Value)> {
        self.content.iter().filter_map(|block| match block {
            ResponseBlock::ToolUse { id, name, input } => Some((id.as_str(), name.as_str(), input)),
            _ => None,
        })
    }

    /// This reply as an assistant turn to send back: text, tool calls and thinking blocks as they came (the API wants
    /// thinking back unmodified); unknown block kinds are dropped.
    pub fn as_assistant_message(&self) -> Message {
        let content = self
            .content
            .iter()
            .filter_map(|block| match block {
                ResponseBlock::Text { text } if !text.is_empty() => Some(ContentBlock::text(text.clone())),
                ResponseBlock::ToolUse { id, name, input } => {
                    Some(ContentBlock::ToolUse { id: id.clone(), name: name.clone(), input: input.clone() })
                }
                ResponseBlock::Thinking { thinking, signature } => {
                    Some(ContentBlock::Thinking { thinking: thinking.clone(), signature: signature.clone() })
                }
                ResponseBlock::RedactedThinking { data } => Some(ContentBlock::RedactedThinking { data: data.clone() }),
                _ => None,
            })
            .collect();
        Message::assistant(content)
    }
}

/// A content block in a reply. Kinds we do not use are kept as `Other` so new kinds never break parsing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResponseBlock {
    Text {
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: String,
    },
    RedactedThinking {
        #[serde(default)]
        data: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    EndTurn,
    MaxTokens,
    StopSequence,
    ToolUse,
    PauseTurn,
    Refusal,
    ModelContextWindowExceeded,
    #[serde(other)]
    Other,
}

/// Token usage as the API reports it; the cache fields may be missing or null.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireUsage {
    #[serde(default)]
    pub input_tokens: u32,
    #[serde(default)]
    pub output_tokens: u32,
    #[serde(default)]
    pub cache_creation_input_tokens: Option<u32>,
    #[serde(default)]
    pub cache_read_input_tokens: Option<u32>,
    #[serde(default)]
    pub cache_creation: Option<CacheCreation>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheCreation {
    #[serde(default)]
    pub ephemeral_5m_input_tokens: u32,
    #[serde(default)]
    pub ephemeral_1h_input_tokens: u32,
}

impl WireUsage {
    /// Our token record. Cache writes without the 5m/1h split are counted as 5-minute writes (our default TTL).
    pub fn tokens(&self) -> TokenUsage {
        let written = self.cache_creation_input_tokens.unwrap_or(0);
        let (cache_write_5m, cache_write_1h) = match self.cache_creation {
            Some(split) => (split.ephemeral_5m_input_tokens, split.ephemeral_1h_input_tokens),
            None => (written, 0),
        };
        TokenUsage {
            input: self.input_tokens,
            output: self.output_tokens,
            cache_write_5m,
            cache_write_1h,
            cache_read: self.cache_read_input_tokens.unwrap_or(0),
        }
    }
}

/// The body of an error reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorDetail {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_always_says_thinking_is_disabled_and_has_no_sampling_fields() {
        let request = MessagesRequest::new(100, vec![Message::user_text("hi")]);
        let json = serde_json::to_value(&request).unwrap();
        assert_eq!(json["thinking"], serde_json::json!({"type": "disabled"}));
        let default = MessagesRequest { thinking: Thinking::ModelDefault, ..request };
        assert!(serde_json::to_value(&default).unwrap().get("thinking").is_none(), "the model's default: no field");
        for field in ["temperature", "top_p", "top_k"] {
            assert!(json.get(field).is_none(), "{field} must never be sent");
        }
    }

    #[test]
    fn replies_with_unknown_blocks_and_missing_cache_fields_parse() {
        let body = r#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-haiku-5-5",
            "content":[{"type":"thinking","thinking":"x","signature":"s"},{"type":"text","text":"hello"}],
            "stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":4,"cache_read_input_tokens":null}}"#;
        let reply: MessagesResponse = serde_json::from_str(body).unwrap();
        assert_eq!(reply.text(), "hello");
        assert_eq!(reply.stop_reason, Some(StopReason::EndTurn));
        assert_eq!(reply.usage.tokens(), TokenUsage { input: 3, output: 4, ..TokenUsage::default() });
    }

    #[test]
    fn cache_writes_without_a_split_count_as_five_minute_writes() {
        let usage = WireUsage { cache_creation_input_tokens: Some(7), ..WireUsage::default() };
        assert_eq!(usage.tokens().cache_write_5m, 7);
        assert_eq!(usage.tokens().cache_write_1h, 0);
    }
}
