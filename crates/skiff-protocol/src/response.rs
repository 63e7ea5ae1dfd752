//! The assistant message the API returns (`message_start` payload / non-streaming body), usage and stop reasons.

use serde::{Deserialize, Serialize};

use serde_json::Value;

use crate::{ContentBlock, JsonMap, Role};

/// Why the model stopped. Unknown reasons are preserved in [`StopReason::Other`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// Natural end of the answer.
    EndTurn,
    /// The model wants tool results.
    ToolUse,
    /// Output was cut at max_tokens.
    MaxTokens,
    /// A custom stop sequence matched.
    StopSequence,
    /// A server-tool loop paused; send the conversation again.
    PauseTurn,
    /// The model declined.
    Refusal,
    /// The context window is full.
    ModelContextWindowExceeded,
    /// A reason this version does not know.
    #[serde(untagged)]
    Other(String),
}

impl StopReason {
    /// The wire string.
    pub fn as_str(&self) -> &str {
        match self {
            Self::EndTurn => "end_turn",
            Self::ToolUse => "tool_use",
            Self::MaxTokens => "max_tokens",
            Self::StopSequence => "stop_sequence",
            Self::PauseTurn => "pause_turn",
            Self::Refusal => "refusal",
            Self::ModelContextWindowExceeded => "model_context_window_exceeded",
            Self::Other(s) => s,
        }
    }
}

/// Token usage of one API call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Input tokens after the last cache breakpoint.
    #[serde(default, deserialize_with = "null_as_default")]
    pub input_tokens: u64,
    /// Output tokens (cumulative within a stream).
    #[serde(default, deserialize_with = "null_as_default")]
    pub output_tokens: u64,
    /// Tokens written to the prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation_input_tokens: Option<u64>,
    /// Tokens read from the prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_input_tokens: Option<u64>,
    /// Fields this version does not model (`server_tool_use`, `service_tier`, `cache_creation`, ...).
    #[serde(flatten)]
    pub extra: JsonMap,
}

impl Usage {
    /// Cache writes, zero when absent.
    pub fn cache_creation(&self) -> u64 {
        self.cache_creation_input_tokens.unwrap_or(0)
    }

    /// Cache reads, zero when absent.
    pub fn cache_read(&self) -> u64 {
        self.cache_read_input_tokens.unwrap_or(0)
    }

    /// Total prompt size: uncached input plus cache reads and writes.
    pub fn total_input(&self) -> u64 {
        self.input_tokens + self.cache_creation() + self.cache_read()
    }

    /// Server-side web searches the call made (`server_tool_use.web_search_requests`).
    pub fn web_search_requests(&self) -> u64 {
        self.server_tool_count("web_search_requests")
    }

    fn server_tool_count(&self, key: &str) -> u64 {
        self.extra
            .get("server_tool_use")
            .and_then(|s| s.get(key))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    }

    /// Add another call's counts to these (for per-run totals), server tool uses included.
    pub fn accumulate(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_creation_input_tokens = Some(self.cache_creation() + other.cache_creation());
        self.cache_read_input_tokens = Some(self.cache_read() + other.cache_read());
        if let Some(Value::Object(theirs)) = other.extra.get("server_tool_use") {
            let mut sum = match self.extra.get("server_tool_use") {
                Some(Value::Object(ours)) => ours.clone(),
                _ => JsonMap::new(),
            };
            for (k, v) in theirs {
                if let Some(n) = v.as_u64() {
                    let total = sum.get(k).and_then(Value::as_u64).unwrap_or(0) + n;
                    sum.insert(k.clone(), Value::from(total));
                }
            }
            self.extra
                .insert("server_tool_use".into(), Value::Object(sum));
        }
    }
}

/// An assistant message as returned by the API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageResponse {
    /// `msg_…` id (compatible servers may send other formats, or none).
    #[serde(default, deserialize_with = "null_as_default")]
    pub id: String,
    /// Always `message`.
    #[serde(rename = "type", default = "message_tag")]
    pub kind: String,
    /// Always assistant.
    #[serde(default = "assistant", deserialize_with = "role_or_assistant")]
    pub role: Role,
    /// Model that answered.
    #[serde(default, deserialize_with = "null_as_default")]
    pub model: String,
    /// Content blocks.
    #[serde(default, deserialize_with = "null_as_default")]
    pub content: Vec<ContentBlock>,
    /// Why generation stopped (null in `message_start`).
    #[serde(default)]
    pub stop_reason: Option<StopReason>,
    /// Which stop sequence matched.
    #[serde(default)]
    pub stop_sequence: Option<String>,
    /// Token usage.
    #[serde(default, deserialize_with = "null_as_default")]
    pub usage: Usage,
    /// Fields this version does not model.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// A field that compatible servers send as `null`: its default instead.
pub(crate) fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Option::unwrap_or_default)
}

fn assistant() -> Role {
    Role::Assistant
}

fn role_or_assistant<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Role, D::Error> {
    Option::<Role>::deserialize(d).map(|r| r.unwrap_or(Role::Assistant))
}

fn message_tag() -> String {
    "message".to_owned()
}

impl MessageResponse {
    /// An empty assistant message with the given id and model.
    pub fn new(id: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            kind: message_tag(),
            role: Role::Assistant,
            model: model.into(),
            content: Vec::new(),
            stop_reason: None,
            stop_sequence: None,
            usage: Usage::default(),
            extra: JsonMap::new(),
        }
    }

    /// Concatenated text of all text blocks.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect()
    }
}
