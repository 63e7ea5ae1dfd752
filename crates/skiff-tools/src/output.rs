//! What a tool call produced, for the model and for clients.

use serde_json::Value;
use skiff_protocol::{ContentBlock, ToolResultContent};

/// What a tool call produced: the content sent back to the model and, separately, the
/// structured result clients see as `tool_use_result`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// Content of the `tool_result` block.
    pub content: ToolResultContent,
    /// Whether the call failed (sent as `is_error`).
    pub is_error: bool,
    /// Structured result (`tool_use_result` in stream-json), when the tool has one.
    pub structured: Option<Value>,
}

impl ToolOutput {
    /// A successful text result.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: ToolResultContent::Text(text.into()),
            is_error: false,
            structured: None,
        }
    }

    /// A failed text result (no `<tool_use_error>` wrapper).
    pub fn error(text: impl Into<String>) -> Self {
        let text = text.into();
        Self {
            structured: Some(Value::String(format!("Error: {text}"))),
            content: ToolResultContent::Text(text),
            is_error: true,
        }
    }

    /// A validation or precondition failure, wrapped in `<tool_use_error>` as Claude Code does.
    pub fn tool_use_error(message: impl AsRef<str>) -> Self {
        let message = message.as_ref();
        Self {
            content: ToolResultContent::Text(format!("<tool_use_error>{message}</tool_use_error>")),
            is_error: true,
            structured: Some(Value::String(format!("Error: {message}"))),
        }
    }

    /// Content made of blocks (text and images).
    pub fn blocks(blocks: Vec<ContentBlock>) -> Self {
        Self {
            content: ToolResultContent::Blocks(blocks),
            is_error: false,
            structured: None,
        }
    }

    /// Attach the structured result.
    pub fn with_structured(mut self, value: Value) -> Self {
        self.structured = Some(value);
        self
    }

    /// The concatenated text of the content.
    pub fn text_content(&self) -> String {
        match &self.content {
            ToolResultContent::Text(t) => t.clone(),
            ToolResultContent::Blocks(b) => b
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::Text(t) => Some(t.text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}
