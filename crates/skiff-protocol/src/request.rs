//! The body of `POST /v1/messages` (and `/v1/messages/count_tokens`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{CacheControl, InputSchema, JsonMap, Message};

/// A Messages API request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessagesRequest {
    /// Model id, e.g. `claude-sonnet-4-5`.
    pub model: String,
    /// Maximum output tokens.
    pub max_tokens: u32,
    /// The conversation.
    pub messages: Vec<Message>,
    /// System prompt as a string or text blocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<SystemPrompt>,
    /// Tool definitions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolDefinition>,
    /// How the model may choose tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Custom stop sequences.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop_sequences: Vec<String>,
    /// Whether to stream the response as SSE.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stream: bool,
    /// Request metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Extended thinking configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<ThinkingConfig>,
    /// Fields this version does not model (`output_config`, `context_management`, ...).
    #[serde(flatten)]
    pub extra: JsonMap,
}

impl MessagesRequest {
    /// A minimal request: model, max_tokens and messages.
    pub fn new(model: impl Into<String>, max_tokens: u32, messages: Vec<Message>) -> Self {
        Self {
            model: model.into(),
            max_tokens,
            messages,
            system: None,
            tools: Vec::new(),
            tool_choice: None,
            temperature: None,
            stop_sequences: Vec::new(),
            stream: false,
            metadata: None,
            thinking: None,
            extra: JsonMap::new(),
        }
    }
}

/// The system prompt: the API accepts a string or a list of text blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SystemPrompt {
    /// A single string.
    Text(String),
    /// Text blocks (needed for cache_control breakpoints).
    Blocks(Vec<SystemBlock>),
}

/// A `{"type":"text"}` block of the system prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "text")]
pub struct SystemBlock {
    /// The text.
    pub text: String,
    /// Prompt-caching breakpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// Tool name (`Bash`, `Read`, `mcp__srv__tool`).
    pub name: String,
    /// What the tool does, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the input object.
    #[serde(default, skip_serializing_if = "InputSchema::is_null")]
    pub input_schema: InputSchema,
    /// Prompt-caching breakpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
    /// Fields of server tools (`type`, ...) and newer options.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// How the model may use tools.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolChoice {
    /// The model decides.
    Auto {
        /// Ask for at most one tool call per turn.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        disable_parallel_tool_use: Option<bool>,
    },
    /// The model must call some tool.
    Any {
        /// Ask for at most one tool call per turn.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        disable_parallel_tool_use: Option<bool>,
    },
    /// The model must call the named tool.
    Tool {
        /// The tool to call.
        name: String,
        /// Ask for at most one tool call per turn.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        disable_parallel_tool_use: Option<bool>,
    },
    /// The model may not call tools.
    None,
}

/// Request metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metadata {
    /// Opaque end-user id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
}

/// Extended thinking configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ThinkingConfig {
    /// Fixed budget.
    Enabled {
        /// Tokens the model may think for (≥ 1024).
        budget_tokens: u32,
    },
    /// No thinking.
    Disabled,
    /// The model decides how much to think.
    Adaptive {
        /// `summarized` or `omitted`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        display: Option<String>,
    },
    /// A mode this version does not model.
    #[serde(untagged)]
    Unknown(Value),
}
