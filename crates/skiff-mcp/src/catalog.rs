//! The session's MCP servers as one [`McpCatalog`]: the tools they offer now (with the
//! resource tools when a server has resources), their instructions, their prompts as slash
//! commands, and their resources for `@server:uri` mentions. Lists follow the servers'
//! `list_changed` notifications.

use std::sync::Arc;

use async_trait::async_trait;
use futures::future::join_all;
use serde_json::{Map, Value};
use skiff_protocol::ContentBlock;
use skiff_tools::{McpCatalog, McpInstructions, McpPrompt, Tool, Typed};
use tokio_util::sync::CancellationToken;

use crate::client::{CallError, Connected, Server};
use crate::naming::tool_name;
use crate::resource_tools::{ListResources, ReadResource};
use crate::tool::McpTool;

/// Decides which tools are left out (deny rules): true for a name that must not be offered.
pub type ToolFilter = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// The connected servers of a session.
pub struct Catalog {
    servers: Arc<[Arc<Server>]>,
    removed: ToolFilter,
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.servers.iter().map(|s| s.name()))
            .finish()
    }
}

impl Catalog {
    /// The servers `connected`, leaving out the tools `removed` names.
    pub fn new(connected: &Connected, removed: ToolFilter) -> Self {
        Self {
            servers: connected
                .servers
                .iter()
                .map(|(s, _)| Arc::clone(s))
                .collect(),
            removed,
        }
    }

    /// The connected servers, in the configuration's order.
    pub fn servers(&self) -> &[Arc<Server>] {
        &self.servers
    }

    fn server(&self, name: &str) -> Option<&Arc<Server>> {
        self.servers.iter().find(|s| s.name() == name)
    }

    /// Warnings about the tools' names as the model sees them: names cut to the API's 64
    /// characters, and tools left out because another tool has the same name.
    pub fn name_warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut seen: std::collections::HashMap<String, (String, String)> =
            std::collections::HashMap::new();
        for server in self.servers.iter() {
            for listed in server.offer().tools {
                let name = tool_name(server.name(), &listed.name);
                let full_len = crate::naming::uncut_len(server.name(), &listed.name);
                if let Some((s, t)) = seen.get(&name) {
                    out.push(format!(
                        "Warning: MCP tool \"{}\" of server \"{}\" is left out: its name for the \
                         model, {name}, is already that of tool \"{t}\" of server \"{s}\"",
                        listed.name,
                        server.name()
                    ));
                    continue;
                }
                if full_len > crate::naming::MAX_TOOL_NAME {
                    out.push(format!(
                        "Warning: MCP tool \"{}\" of server \"{}\" is offered as {name}: \
                         mcp__<server>__<tool> is longer than the {} characters the API accepts",
                        listed.name,
                        server.name(),
                        crate::naming::MAX_TOOL_NAME
                    ));
                }
                seen.insert(name, (server.name().to_owned(), listed.name.clone()));
            }
        }
        out
    }
}

/// Text of a failed request, for the user or the model.
fn failure(e: CallError) -> String {
    match e {
        CallError::Cancelled => "Interrupted by user".to_owned(),
        other => other.to_string(),
    }
}

#[async_trait]
impl McpCatalog for Catalog {
    fn generation(&self) -> u64 {
        self.servers
            .iter()
            .map(|s| s.version())
            .fold(0, u64::wrapping_add)
    }

    async fn refresh(&self) {
        join_all(self.servers.iter().map(|s| s.refresh())).await;
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
        let mut resources = false;
        for server in self.servers.iter() {
            let offer = server.offer();
            resources |= offer.has_resources;
            for listed in offer.tools {
                tools.push(Arc::new(McpTool::new(Arc::clone(server), listed)));
            }
        }
        if resources {
            tools.push(Arc::new(Typed::new(ListResources::new(Arc::clone(
                &self.servers,
            )))));
            tools.push(Arc::new(Typed::new(ReadResource::new(Arc::clone(
                &self.servers,
            )))));
        }
        tools.retain(|t| !(self.removed)(t.name()));
        // Two tools under one name would make every request fail: the first one stays.
        let mut seen = std::collections::HashSet::new();
        tools.retain(|t| {
            let first = seen.insert(t.name().to_owned());
            if !first {
                tracing::warn!(
                    tool = t.name(),
                    "MCP tool left out: another tool has its name"
                );
            }
            first
        });
        tools
    }

    fn instructions(&self) -> Vec<McpInstructions> {
        self.servers
            .iter()
            .filter_map(|s| {
                let text = s.offer().instructions?;
                let text = text.trim();
                (!text.is_empty()).then(|| McpInstructions {
                    server: s.name().to_owned(),
                    text: text.to_owned(),
                })
            })
            .collect()
    }

    fn prompts(&self) -> Vec<McpPrompt> {
        self.servers
            .iter()
            .flat_map(|s| {
                s.offer().prompts.into_iter().map(|p| McpPrompt {
                    command: tool_name(s.name(), &p.name),
                    server: s.name().to_owned(),
                    description: p.description.unwrap_or_default(),
                    name: p.name,
                    arguments: p.arguments,
                })
            })
            .collect()
    }

    async fn get_prompt(
        &self,
        prompt: &McpPrompt,
        arguments: Vec<(String, String)>,
        cancel: &CancellationToken,
    ) -> Result<Vec<ContentBlock>, String> {
        let server = self
            .server(&prompt.server)
            .ok_or_else(|| format!("MCP server \"{}\" is not connected", prompt.server))?;
        let arguments: Map<String, Value> = arguments
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        let result = server
            .get_prompt(&prompt.name, arguments, cancel)
            .await
            .map_err(failure)?;
        let value = serde_json::to_value(&result).map_err(|e| {
            format!(
                "MCP server \"{}\" returned a prompt skiff cannot read: {e}",
                prompt.server
            )
        })?;
        let blocks = crate::content::prompt_blocks(&value);
        if blocks.is_empty() {
            return Err(format!(
                "the prompt {} of MCP server \"{}\" has no messages",
                prompt.name, prompt.server
            ));
        }
        Ok(blocks)
    }

    fn has_resources(&self, server: &str) -> bool {
        self.server(server).is_some_and(|s| s.offer().has_resources)
    }

    async fn read_resource(
        &self,
        server: &str,
        uri: &str,
        max_chars: usize,
        cancel: &CancellationToken,
    ) -> Result<Vec<ContentBlock>, String> {
        let found = self
            .server(server)
            .ok_or_else(|| format!("MCP server \"{server}\" is not connected"))?;
        let result = found.read_resource(uri, cancel).await.map_err(failure)?;
        let value = serde_json::to_value(&result).map_err(|e| {
            format!("MCP server \"{server}\" returned a resource skiff cannot read: {e}")
        })?;
        Ok(crate::content::mention_blocks(
            server, uri, &value, max_chars,
        ))
    }
}
