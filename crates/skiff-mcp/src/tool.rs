//! A server's tool as a skiff [`Tool`]: `mcp__<server>__<tool>`, the server's schema and
//! description, results mapped to tool-result content.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use skiff_protocol::{ContentBlock, ToolResultContent};
use skiff_tools::{Tool, ToolContext, ToolOutput};

use crate::client::{CallError, Server};
use crate::naming::tool_name;
use crate::offer::ListedTool;

/// Longest description sent to the model (Claude Code cuts MCP descriptions at 2,048).
const MAX_DESCRIPTION: usize = 2048;

/// One MCP tool.
pub struct McpTool {
    server: Arc<Server>,
    /// The server's name for the tool.
    remote: String,
    name: String,
    description: String,
    schema: Value,
    read_only_hint: bool,
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl McpTool {
    /// The tool `listed` of `server`.
    pub fn new(server: Arc<Server>, listed: ListedTool) -> Self {
        let name = tool_name(server.name(), &listed.name);
        let mut description = listed.description.unwrap_or_default();
        if description.chars().count() > MAX_DESCRIPTION {
            description = description.chars().take(MAX_DESCRIPTION).collect();
            description.push('…');
        }
        // The API wants an object schema; servers sometimes leave `type` out.
        let mut schema = listed.input_schema;
        match &mut schema {
            Value::Object(map) => {
                map.entry("type").or_insert_with(|| json!("object"));
            }
            _ => schema = json!({"type": "object", "properties": {}}),
        }
        Self {
            server,
            remote: listed.name,
            name,
            description,
            schema,
            read_only_hint: listed.read_only_hint,
        }
    }

    /// All the tools of the connected servers.
    pub fn all(connected: &crate::client::Connected) -> Vec<Arc<dyn Tool>> {
        connected
            .servers
            .iter()
            .flat_map(|(server, tools)| {
                tools
                    .iter()
                    .map(|t| Arc::new(McpTool::new(Arc::clone(server), t.clone())) as Arc<dyn Tool>)
            })
            .collect()
    }
}

#[async_trait]
impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> &Value {
        &self.schema
    }

    /// Never: a server's read-only hint is not trusted for permissions.
    fn is_read_only(&self) -> bool {
        false
    }

    /// Calls the server marks read-only may run beside other safe calls.
    fn is_concurrency_safe(&self, _input: &Value) -> bool {
        self.read_only_hint
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let arguments = match input {
            Value::Object(map) => map,
            Value::Null => serde_json::Map::new(),
            other => {
                return ToolOutput::tool_use_error(format!(
                    "InputValidationError: {} expects an object of arguments, got {}",
                    self.name,
                    kind(&other)
                ));
            }
        };
        match self.server.call(&self.remote, arguments, &ctx.cancel).await {
            Ok(result) => match serde_json::to_value(&result) {
                Ok(v) => map_result(&v),
                Err(e) => ToolOutput::error(format!(
                    "MCP server \"{}\" returned a result skiff cannot read: {e}",
                    self.server.name()
                )),
            },
            Err(CallError::Cancelled) => ToolOutput::error("Interrupted by user"),
            Err(e) => ToolOutput::error(e.to_string()),
        }
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A `tools/call` result (wire JSON) as a tool output: text and images as blocks, embedded
/// resources and links as text, `structuredContent` as JSON text when there is no content;
/// `isError` → `is_error`. The structured result clients see is the content array, as
/// Claude Code reports it.
pub fn map_result(result: &Value) -> ToolOutput {
    let empty = Vec::new();
    let items = result
        .get("content")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let mut blocks: Vec<ContentBlock> = items.iter().map(crate::content::item).collect();
    if blocks.is_empty() {
        let text = match result.get("structuredContent") {
            Some(v) if !v.is_null() => v.to_string(),
            _ => "(no content)".to_owned(),
        };
        blocks.push(ContentBlock::text(text));
    }
    let is_error = result
        .get("isError")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let structured = Value::Array(
        blocks
            .iter()
            .filter_map(|b| serde_json::to_value(b).ok())
            .collect(),
    );
    ToolOutput {
        content: ToolResultContent::Blocks(blocks),
        is_error,
        structured: Some(structured),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn text_images_resources_and_errors_map_to_blocks() {
        let out = map_result(&json!({
            "content": [
                {"type": "text", "text": "5"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                {"type": "image", "data": "AAAA", "mimeType": "image/tiff"},
                {"type": "resource", "resource": {"uri": "file:///a", "text": "hello"}},
                {"type": "resource", "resource": {"uri": "file:///b", "blob": "AA", "mimeType": "application/pdf"}},
                {"type": "resource_link", "uri": "file:///c", "name": "c"},
            ],
            "isError": true
        }));
        assert!(out.is_error);
        let ToolResultContent::Blocks(b) = &out.content else {
            panic!("blocks expected")
        };
        assert_eq!(b.len(), 6);
        assert!(matches!(&b[1], ContentBlock::Image(_)));
        let text = out.text_content();
        assert!(text.contains("image/tiff"), "{text}");
        assert!(text.contains("[Resource from file:///a]\nhello"), "{text}");
        assert!(text.contains("file:///b (application/pdf)"), "{text}");
        assert!(text.contains("[Resource link: c] file:///c"), "{text}");
        assert_eq!(
            out.structured.unwrap()[0],
            json!({"type": "text", "text": "5"})
        );
    }

    #[test]
    fn structured_content_is_used_when_there_is_no_content() {
        let out = map_result(&json!({"content": [], "structuredContent": {"sum": 5}}));
        assert_eq!(out.text_content(), r#"{"sum":5}"#);
        assert!(!out.is_error);
        assert_eq!(map_result(&json!({})).text_content(), "(no content)");
    }
}
