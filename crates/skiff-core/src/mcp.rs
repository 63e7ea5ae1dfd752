//! The session's side of its MCP servers ([`McpCatalog`]s): the tools offered follow the
//! servers' lists (a request offers what the servers offered when it was built; the cached
//! prefix changes only when the tools really changed), the servers' `instructions` are a
//! system-prompt section of their own after skiff's prompt (a stable place: the bytes before
//! it never change), and `@server:uri` mentions in a prompt attach the resource.

use std::sync::Arc;

use skiff_protocol::ContentBlock;
use skiff_tools::{McpCatalog, McpInstructions, ToolRegistry};
use tokio_util::sync::CancellationToken;

use crate::core::Core;
use crate::frames::EventSink;

/// Longest instructions kept of one server, in characters.
pub const MAX_SERVER_INSTRUCTIONS: usize = 4_096;
/// Longest instructions section, in characters (servers past it are named, not included).
pub const MAX_INSTRUCTIONS: usize = 16_384;
/// Most resources one prompt's mentions attach.
pub const MAX_MENTIONS: usize = 10;

/// Heading of the instructions section (Claude Code's).
const HEADING: &str = "# MCP Server Instructions\n\nThe following MCP servers have provided \
instructions for how to use their tools and resources:";

/// The system-prompt section of the servers' instructions, `None` when none gave any. Each
/// server's text is cut at [`MAX_SERVER_INSTRUCTIONS`]; the section stops growing at
/// [`MAX_INSTRUCTIONS`].
pub fn instructions_section(servers: &[McpInstructions]) -> Option<String> {
    if servers.is_empty() {
        return None;
    }
    let mut out = String::from(HEADING);
    let mut left_out = Vec::new();
    for s in servers {
        let mut text: String = s.text.chars().take(MAX_SERVER_INSTRUCTIONS).collect();
        if text.len() < s.text.len() {
            text.push_str("\n… (cut: the server's instructions are longer)");
        }
        let part = format!("\n\n## {}\n{}", s.server, text.trim_end());
        if out.chars().count() + part.chars().count() > MAX_INSTRUCTIONS {
            left_out.push(s.server.as_str());
            continue;
        }
        out.push_str(&part);
    }
    if !left_out.is_empty() {
        out.push_str(&format!(
            "\n\n(Instructions of {} left out: too long.)",
            left_out.join(", ")
        ));
    }
    Some(out)
}

/// The `@server:uri` mentions in `text` whose server `known` says has resources, in order,
/// each once. A mention ends at whitespace; punctuation that ends a sentence is not part of it.
pub fn mentions(text: &str, known: impl Fn(&str) -> bool) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = Vec::new();
    for word in text.split_whitespace() {
        let Some(rest) = word.strip_prefix('@') else {
            continue;
        };
        let Some((server, uri)) = rest.split_once(':') else {
            continue;
        };
        let uri = uri.trim_end_matches(['.', ',', ';', '!', '?', ')', ']', '"', '\'']);
        if server.is_empty() || uri.is_empty() || !known(server) {
            continue;
        }
        let pair = (server.to_owned(), uri.to_owned());
        if !found.contains(&pair) {
            found.push(pair);
        }
    }
    found
}

impl Core {
    /// Take on a catalog of MCP servers (its prompts become commands).
    pub(crate) fn add_catalog(&mut self, catalog: Arc<dyn McpCatalog>) {
        self.config.commands.mcp().attach(Arc::clone(&catalog));
        self.mcp.push(catalog);
    }

    /// Bring the tools and instructions up to date with the servers (before each request):
    /// lists the servers said changed are fetched again; the request template changes only
    /// when what it holds really changed.
    pub(crate) async fn refresh_mcp(&mut self) {
        if self.mcp.is_empty() {
            if self.mcp_generation.is_none() {
                self.mcp_generation = Some(0);
                self.apply_mcp();
            }
            return;
        }
        for c in &self.mcp {
            c.refresh().await;
        }
        let generation = self
            .mcp
            .iter()
            .map(|c| c.generation())
            .fold(0, u64::wrapping_add);
        if self.mcp_generation == Some(generation) {
            return;
        }
        self.mcp_generation = Some(generation);
        self.apply_mcp();
    }

    /// Offer the servers' tools now (beside the session's own) and their instructions.
    fn apply_mcp(&mut self) {
        let mut registry: ToolRegistry = (*self.base_tools).clone();
        for c in &self.mcp {
            for tool in c.tools() {
                if let Err(e) = registry.register(tool) {
                    tracing::warn!(error = %e, "an MCP tool was left out");
                }
            }
        }
        let definitions = self.deferred.offer(
            &mut registry,
            self.config.defer_tools,
            self.started_in_plan,
            crate::core::shape_definitions(self.config.compact_tools),
        );
        if self.template.set_tools(definitions) {
            tracing::info!(tools = registry.len(), "the MCP servers' tools changed");
        }
        if let Some(env) = &self.subagents {
            env.set_tools(&registry);
        }
        self.tools = Arc::new(registry);
        self.sync_deferred();
        let instructions: Vec<McpInstructions> =
            self.mcp.iter().flat_map(|c| c.instructions()).collect();
        self.template
            .set_extra_system(instructions_section(&instructions));
    }

    /// The resources `@server:uri` mentions in the prompt name, as blocks to send after it. A
    /// resource that cannot be read is said so (to the model, and as a notice).
    pub(crate) async fn mentioned_resources(
        &self,
        text: &str,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Vec<ContentBlock> {
        if self.mcp.is_empty() || !text.contains('@') {
            return Vec::new();
        }
        let mut found = mentions(text, |s| self.mcp.iter().any(|c| c.has_resources(s)));
        if found.len() > MAX_MENTIONS {
            sink.notice(
                "mcp",
                "warning",
                format!(
                    "only the first {MAX_MENTIONS} of {} mentioned resources are attached",
                    found.len()
                ),
            );
            found.truncate(MAX_MENTIONS);
        }
        let mut blocks = Vec::new();
        for (server, uri) in found {
            let Some(catalog) = self.mcp.iter().find(|c| c.has_resources(&server)) else {
                continue;
            };
            let max = self.config.max_tool_result_chars;
            match catalog.read_resource(&server, &uri, max, cancel).await {
                Ok(read) => blocks.extend(read),
                Err(e) => {
                    sink.notice(
                        "mcp",
                        "warning",
                        format!("@{server}:{uri} could not be read: {e}"),
                    );
                    blocks.push(ContentBlock::text(format!(
                        "<mcp-resource server=\"{server}\" uri=\"{uri}\">(could not be read: {e})</mcp-resource>"
                    )));
                }
            }
        }
        blocks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(name: &str, text: &str) -> McpInstructions {
        McpInstructions {
            server: name.into(),
            text: text.into(),
        }
    }

    #[test]
    fn instructions_are_one_bounded_section_naming_each_server() {
        assert_eq!(instructions_section(&[]), None);
        let s = instructions_section(&[server("rich", "Greet Ada."), server("b", "Be brief.")])
            .unwrap();
        assert_eq!(
            s,
            "# MCP Server Instructions\n\nThe following MCP servers have provided instructions \
             for how to use their tools and resources:\n\n## rich\nGreet Ada.\n\n## b\nBe brief."
        );
        let long = "x".repeat(MAX_SERVER_INSTRUCTIONS + 10);
        let s = instructions_section(&[server("a", &long)]).unwrap();
        assert!(s.ends_with("… (cut: the server's instructions are longer)"));
        let many: Vec<McpInstructions> = (0..6).map(|i| server(&format!("s{i}"), &long)).collect();
        let s = instructions_section(&many).unwrap();
        assert!(s.chars().count() <= MAX_INSTRUCTIONS + 100, "{}", s.len());
        assert!(
            s.ends_with("(Instructions of s3, s4, s5 left out: too long.)"),
            "{s}"
        );
    }

    #[test]
    fn mentions_name_a_known_server_and_a_uri() {
        let known = |s: &str| s == "rich";
        assert_eq!(
            mentions(
                "see @rich:memo://notes, and @rich:memo://notes. @other:x @rich: a@rich:y @rich:file:///a/b.txt",
                known
            ),
            vec![
                ("rich".to_owned(), "memo://notes".to_owned()),
                ("rich".to_owned(), "file:///a/b.txt".to_owned()),
            ]
        );
        assert!(mentions("@src/main.rs and email@rich:x", known).is_empty());
    }
}
