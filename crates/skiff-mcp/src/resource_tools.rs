//! Claude Code's two tools over MCP resources: `ListMcpResourcesTool` (every server's
//! resources, each with a `server` field) and `ReadMcpResourceTool` (one resource's contents:
//! text as it is, images shown to the model, other binary contents described). Offered when a
//! connected server has resources.

use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use skiff_protocol::ContentBlock;
use skiff_tools::{ToolContext, ToolOutput, TypedTool};

use crate::client::{CallError, Server};
use crate::content::{Read, read_entry};

/// Claude Code's name of the listing tool.
pub const LIST_TOOL: &str = "ListMcpResourcesTool";
/// Claude Code's name of the reading tool.
pub const READ_TOOL: &str = "ReadMcpResourceTool";

/// What the listing tool says when there is nothing to list (Claude Code's text).
pub const NO_RESOURCES: &str =
    "No resources found. MCP servers may still provide tools even if they have no resources.";

/// Input of `ListMcpResourcesTool`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListInput {
    /// Optional server name to filter resources by
    pub server: Option<String>,
}

/// Input of `ReadMcpResourceTool`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadInput {
    /// The MCP server name
    pub server: String,
    /// The resource URI to read
    pub uri: String,
}

/// `ListMcpResourcesTool`.
pub struct ListResources {
    servers: Arc<[Arc<Server>]>,
}

/// `ReadMcpResourceTool`.
pub struct ReadResource {
    servers: Arc<[Arc<Server>]>,
}

impl ListResources {
    /// Over these servers.
    pub fn new(servers: Arc<[Arc<Server>]>) -> Self {
        Self { servers }
    }
}

impl ReadResource {
    /// Over these servers.
    pub fn new(servers: Arc<[Arc<Server>]>) -> Self {
        Self { servers }
    }
}

fn not_found(name: &str, servers: &[Arc<Server>]) -> ToolOutput {
    let names: Vec<&str> = servers.iter().map(|s| s.name()).collect();
    ToolOutput::tool_use_error(format!(
        "Server \"{name}\" not found. Available servers: {}",
        names.join(", ")
    ))
}

#[async_trait]
impl TypedTool for ListResources {
    type Input = ListInput;
    const NAME: &'static str = LIST_TOOL;

    fn description(&self) -> &str {
        "List available resources from configured MCP servers.\nEach returned resource will \
         include all standard MCP resource fields plus a 'server' field indicating which \
         server the resource belongs to.\n\nParameters:\n- server (optional): The name of a \
         specific MCP server to get resources from. If not provided, resources from all \
         servers will be returned."
    }

    fn is_read_only(&self) -> bool {
        true
    }

    async fn run(&self, input: ListInput, _ctx: &ToolContext) -> ToolOutput {
        let chosen: Vec<&Arc<Server>> = self
            .servers
            .iter()
            .filter(|s| input.server.as_deref().is_none_or(|n| s.name() == n))
            .collect();
        if let Some(name) = &input.server
            && chosen.is_empty()
        {
            return not_found(name, &self.servers);
        }
        let mut listed = Vec::new();
        for server in chosen {
            server.refresh().await;
            for r in server.offer().resources {
                let mut entry = r.entry;
                if let Value::Object(map) = &mut entry {
                    map.insert("server".into(), json!(server.name()));
                }
                listed.push(entry);
            }
        }
        let output = Value::Array(listed);
        let text = if output.as_array().is_some_and(Vec::is_empty) {
            NO_RESOURCES.to_owned()
        } else {
            output.to_string()
        };
        ToolOutput::text(text).with_structured(output)
    }
}

#[async_trait]
impl TypedTool for ReadResource {
    type Input = ReadInput;
    const NAME: &'static str = READ_TOOL;

    fn description(&self) -> &str {
        "Reads a specific resource from an MCP server, identified by server name and resource \
         URI.\n\nParameters:\n- server (required): The name of the MCP server from which to \
         read the resource\n- uri (required): The URI of the resource to read"
    }

    fn is_read_only(&self) -> bool {
        true
    }

    async fn run(&self, input: ReadInput, ctx: &ToolContext) -> ToolOutput {
        let Some(server) = self.servers.iter().find(|s| s.name() == input.server) else {
            return not_found(&input.server, &self.servers);
        };
        if !server.offer().has_resources {
            return ToolOutput::tool_use_error(format!(
                "Server \"{}\" does not support resources",
                input.server
            ));
        }
        let result = match server.read_resource(&input.uri, &ctx.cancel).await {
            Ok(r) => r,
            Err(CallError::Cancelled) => return ToolOutput::error("Interrupted by user"),
            Err(e) => return ToolOutput::error(e.to_string()),
        };
        let value = match serde_json::to_value(&result) {
            Ok(v) => v,
            Err(e) => {
                return ToolOutput::error(format!(
                    "MCP server \"{}\" returned a resource skiff cannot read: {e}",
                    input.server
                ));
            }
        };
        read_output(&input.uri, &value)
    }
}

/// A `resources/read` result as the tool's output: `{"contents": [...]}` as JSON text (binary
/// entries say what became of them), followed by the images it holds.
fn read_output(uri: &str, result: &Value) -> ToolOutput {
    let empty = Vec::new();
    let entries = result
        .get("contents")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let mut contents = Vec::new();
    let mut images = Vec::new();
    for entry in entries {
        let mut shown = serde_json::Map::new();
        shown.insert(
            "uri".into(),
            entry.get("uri").cloned().unwrap_or_else(|| json!(uri)),
        );
        if let Some(mime) = entry.get("mimeType") {
            shown.insert("mimeType".into(), mime.clone());
        }
        match read_entry(entry) {
            Read::Text(text) => {
                shown.insert("text".into(), json!(text));
            }
            Read::Image(block) => {
                shown.insert("blob".into(), json!("[image, shown below]"));
                images.push(block);
            }
            Read::Binary(n) => {
                shown.insert(
                    "blob".into(),
                    json!(format!("[binary content, {n} bytes, not shown]")),
                );
            }
        }
        contents.push(Value::Object(shown));
    }
    let output = json!({ "contents": contents });
    let mut blocks = vec![ContentBlock::text(output.to_string())];
    blocks.extend(images);
    ToolOutput::blocks(blocks).with_structured(output)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_results_keep_text_show_images_and_describe_binaries() {
        let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
        let out = read_output(
            "memo://x",
            &json!({"contents": [
                {"uri": "memo://x", "mimeType": "text/plain", "text": "hello"},
                {"uri": "memo://p", "mimeType": "image/png", "blob": png},
                {"uri": "memo://b", "blob": "AAEC/w=="},
            ]}),
        );
        assert!(!out.is_error);
        assert_eq!(
            out.structured.unwrap(),
            json!({"contents": [
                {"uri": "memo://x", "mimeType": "text/plain", "text": "hello"},
                {"uri": "memo://p", "mimeType": "image/png", "blob": "[image, shown below]"},
                {"uri": "memo://b", "blob": "[binary content, 4 bytes, not shown]"},
            ]})
        );
        let skiff_protocol::ToolResultContent::Blocks(blocks) = &out.content else {
            panic!("blocks expected")
        };
        assert_eq!(blocks.len(), 2);
        assert!(matches!(blocks[1], ContentBlock::Image(_)));
    }
}
