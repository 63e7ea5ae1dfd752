//! What a session sees of its MCP servers beyond one tool call: the tools they offer now (their
//! lists change while the session runs), their `instructions`, their prompts (offered as slash
//! commands) and their resources (`@server:uri` mentions). The MCP client implements
//! [`McpCatalog`]; the session and the front ends know only this seam.

use std::sync::Arc;

use async_trait::async_trait;
use skiff_protocol::ContentBlock;
use tokio_util::sync::CancellationToken;

use crate::tool::Tool;

/// One argument of a server's prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpPromptArgument {
    /// Its name.
    pub name: String,
    /// What it is, when the server says.
    pub description: Option<String>,
    /// Whether the prompt needs it.
    pub required: bool,
}

/// A server's prompt, offered as the slash command `/mcp__<server>__<prompt>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpPrompt {
    /// The command name, without the slash: `mcp__<server>__<prompt>`.
    pub command: String,
    /// The server's name.
    pub server: String,
    /// The server's name for the prompt.
    pub name: String,
    /// What it does (empty when the server says nothing).
    pub description: String,
    /// Its arguments, in order (they are given positionally).
    pub arguments: Vec<McpPromptArgument>,
}

impl McpPrompt {
    /// The arguments as `/help` shows them: `<required> [optional]`.
    pub fn usage(&self) -> String {
        self.arguments
            .iter()
            .map(|a| {
                if a.required {
                    format!("<{}>", a.name)
                } else {
                    format!("[{}]", a.name)
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A server's `instructions`, as it gave them at initialization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpInstructions {
    /// The server's name.
    pub server: String,
    /// The text.
    pub text: String,
}

/// The session's MCP servers as the session uses them.
#[async_trait]
pub trait McpCatalog: Send + Sync {
    /// A number that changes whenever what the servers offer (tools, prompts, resources,
    /// instructions) changed.
    fn generation(&self) -> u64;

    /// Fetch again the lists the servers said changed (`notifications/*/list_changed`), so
    /// that what follows sees them. Cheap when nothing changed.
    async fn refresh(&self);

    /// The tools offered now: each server's, and the resource tools when a server has
    /// resources.
    fn tools(&self) -> Vec<Arc<dyn Tool>>;

    /// The connected servers' instructions, in the servers' order.
    fn instructions(&self) -> Vec<McpInstructions>;

    /// The prompts offered now.
    fn prompts(&self) -> Vec<McpPrompt>;

    /// `prompts/get` for `prompt` with these arguments: the prompt's messages as content for
    /// the model, or why not.
    async fn get_prompt(
        &self,
        prompt: &McpPrompt,
        arguments: Vec<(String, String)>,
        cancel: &CancellationToken,
    ) -> Result<Vec<ContentBlock>, String>;

    /// Whether `server` is connected and offers resources (`@server:uri` names one of them).
    fn has_resources(&self, server: &str) -> bool;

    /// The resource `uri` of `server` as content for the model (text cut at `max_chars`), or
    /// why it could not be read.
    async fn read_resource(
        &self,
        server: &str,
        uri: &str,
        max_chars: usize,
        cancel: &CancellationToken,
    ) -> Result<Vec<ContentBlock>, String>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_marks_required_and_optional_arguments() {
        let arg = |name: &str, required| McpPromptArgument {
            name: name.into(),
            description: None,
            required,
        };
        let p = McpPrompt {
            command: "mcp__rich__review".into(),
            server: "rich".into(),
            name: "review".into(),
            description: String::new(),
            arguments: vec![arg("name", true), arg("focus", false)],
        };
        assert_eq!(p.usage(), "<name> [focus]");
    }
}
