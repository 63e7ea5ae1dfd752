//! Conversation messages and their content blocks (text, image, tool_use, tool_result, thinking).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The human or the tool results sent on their behalf.
    User,
    /// The model.
    Assistant,
}

/// A prompt-caching breakpoint marker (`{"type":"ephemeral","ttl":"1h"}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheControl {
    /// Always `ephemeral` today.
    #[serde(rename = "type")]
    pub kind: String,
    /// Optional time to live (`5m` default, `1h`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<String>,
}

impl CacheControl {
    /// The default five-minute ephemeral breakpoint.
    pub fn ephemeral() -> Self {
        Self {
            kind: "ephemeral".to_owned(),
            ttl: None,
        }
    }
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Author of the message.
    pub role: Role,
    /// A plain string or a list of content blocks.
    pub content: MessageContent,
}

impl Message {
    /// A user message with plain text content.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: MessageContent::Text(text.into()),
        }
    }

    /// A message made of blocks.
    pub fn blocks(role: Role, blocks: Vec<ContentBlock>) -> Self {
        Self {
            role,
            content: MessageContent::Blocks(blocks),
        }
    }
}

/// Message content: the API accepts a bare string as shorthand for one text block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MessageContent {
    /// Shorthand for a single text block.
    Text(String),
    /// A list of content blocks.
    Blocks(Vec<ContentBlock>),
}

impl MessageContent {
    /// The content as blocks (a bare string becomes one text block).
    pub fn to_blocks(&self) -> Vec<ContentBlock> {
        match self {
            Self::Text(t) => vec![ContentBlock::text(t.clone())],
            Self::Blocks(b) => b.clone(),
        }
    }

    /// Concatenated text of all text blocks.
    pub fn text(&self) -> String {
        match self {
            Self::Text(t) => t.clone(),
            Self::Blocks(b) => b
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::Text(t) => Some(t.text.as_str()),
                    _ => None,
                })
                .collect(),
        }
    }
}

/// A content block. Unknown block types are kept verbatim in [`ContentBlock::Unknown`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Plain text.
    Text(TextBlock),
    /// An image (user content or tool result content).
    Image(ImageBlock),
    /// A tool call requested by the model.
    ToolUse(ToolUseBlock),
    /// The answer to a tool call.
    ToolResult(ToolResultBlock),
    /// Extended thinking.
    Thinking(ThinkingBlock),
    /// Encrypted thinking.
    RedactedThinking(RedactedThinkingBlock),
    /// Any block type this version does not model (server tools, documents, ...), preserved.
    #[serde(untagged)]
    Unknown(Value),
}

impl ContentBlock {
    /// A text block without cache control.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(TextBlock {
            text: text.into(),
            citations: None,
            cache_control: None,
        })
    }

    /// The block's `type` string.
    pub fn type_name(&self) -> &str {
        match self {
            Self::Text(_) => "text",
            Self::Image(_) => "image",
            Self::ToolUse(_) => "tool_use",
            Self::ToolResult(_) => "tool_result",
            Self::Thinking(_) => "thinking",
            Self::RedactedThinking(_) => "redacted_thinking",
            Self::Unknown(v) => v.get("type").and_then(Value::as_str).unwrap_or("unknown"),
        }
    }

    /// Mutable access to the block's cache_control slot, when the block type has one.
    pub fn cache_control_mut(&mut self) -> Option<&mut Option<CacheControl>> {
        match self {
            Self::Text(b) => Some(&mut b.cache_control),
            Self::Image(b) => Some(&mut b.cache_control),
            Self::ToolUse(b) => Some(&mut b.cache_control),
            Self::ToolResult(b) => Some(&mut b.cache_control),
            _ => None,
        }
    }
}

/// `{"type":"text"}` block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextBlock {
    /// The text.
    #[serde(default)]
    pub text: String,
    /// Citations attached by the API, kept verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub citations: Option<Vec<Value>>,
    /// Prompt-caching breakpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

/// `{"type":"image"}` block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImageBlock {
    /// Where the image bytes come from.
    pub source: ImageSource,
    /// Prompt-caching breakpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

/// Image source: inline base64 or a URL; other kinds preserved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ImageSource {
    /// Inline data.
    Base64 {
        /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
        media_type: String,
        /// Base64 of the bytes.
        data: String,
    },
    /// A URL the API fetches.
    Url {
        /// The image URL.
        url: String,
    },
    /// A source kind this version does not model.
    #[serde(untagged)]
    Unknown(Value),
}

/// `{"type":"tool_use"}` block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolUseBlock {
    /// Id the matching tool_result must quote.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Tool input (a JSON object when well formed). Some compatible servers (llama.cpp) omit it
    /// at the start of a streamed block; it is then null until the deltas fill it.
    #[serde(default)]
    pub input: Value,
    /// Prompt-caching breakpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

/// `{"type":"tool_result"}` block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResultBlock {
    /// The tool_use block this answers.
    pub tool_use_id: String,
    /// Result content: a string or blocks (text and images).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<ToolResultContent>,
    /// Whether the tool failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Prompt-caching breakpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

impl ToolResultBlock {
    /// A text result.
    pub fn text(tool_use_id: impl Into<String>, text: impl Into<String>, is_error: bool) -> Self {
        Self {
            tool_use_id: tool_use_id.into(),
            content: Some(ToolResultContent::Text(text.into())),
            is_error: Some(is_error),
            cache_control: None,
        }
    }
}

/// Tool result content: a string or a list of blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ToolResultContent {
    /// Plain text.
    Text(String),
    /// Text and image blocks.
    Blocks(Vec<ContentBlock>),
}

/// `{"type":"thinking"}` block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThinkingBlock {
    /// The model's reasoning text (may be a summary).
    pub thinking: String,
    /// Signature that must be sent back unmodified.
    #[serde(default)]
    pub signature: String,
}

/// `{"type":"redacted_thinking"}` block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RedactedThinkingBlock {
    /// Encrypted payload, sent back unmodified.
    pub data: String,
}
