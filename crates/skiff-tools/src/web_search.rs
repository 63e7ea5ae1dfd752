//! The WebSearch tool, as Claude Code has it: the search runs through the model provider's
//! server-side web search (Anthropic's `web_search_20250305`) in a call of its own, made by the
//! session's [`SideModel`](crate::SideModel); the result lists the sources found (titles and
//! URLs) and the model's notes between searches, in Claude Code's text, and the structured
//! result (`{query, results, durationSeconds}`) keeps them in the transcript. Offered only
//! where the provider runs the search.

use std::time::Instant;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use skiff_protocol::ContentBlock;

use crate::context::ToolContext;
use crate::side_model::{SideModelError, WebSearchQuery};
use crate::tool::{ToolOutput, TypedTool};

/// The tool's name.
pub const NAME: &str = "WebSearch";

/// What ends every result (Claude Code's reminder).
const REMINDER: &str = "REMINDER: You MUST include the sources above in your response to the user using markdown hyperlinks.";

/// Input of the WebSearch tool (Claude Code's schema).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebSearchInput {
    /// The search query to use
    #[schemars(length(min = 2))]
    pub query: String,
    /// Only include search results from these domains
    pub allowed_domains: Option<Vec<String>>,
    /// Never include search results from these domains
    pub blocked_domains: Option<Vec<String>>,
}

/// The WebSearch tool.
#[derive(Debug, Default)]
pub struct WebSearchTool;

#[async_trait]
impl TypedTool for WebSearchTool {
    type Input = WebSearchInput;
    const NAME: &'static str = NAME;
    const SCHEMA: Option<&'static str> = Some(skiff_protocol::compact_json!(include_str!(
        "schemas/WebSearch.json"
    )));

    fn description(&self) -> &str {
        "Search the web for current information (events, releases, anything past your \
         training); returns titles and URLs with short notes. Use the date from the \
         environment for recent things. Give allowed_domains or blocked_domains, not both. \
         After answering from the results, end with a \"Sources:\" list of markdown links \
         [Title](URL)."
    }

    fn is_read_only(&self) -> bool {
        true
    }

    fn is_concurrency_safe(&self, _: &WebSearchInput) -> bool {
        true
    }

    async fn run(&self, input: WebSearchInput, ctx: &ToolContext) -> ToolOutput {
        let allowed = input.allowed_domains.unwrap_or_default();
        let blocked = input.blocked_domains.unwrap_or_default();
        if !allowed.is_empty() && !blocked.is_empty() {
            return ToolOutput::tool_use_error(
                "Error: Cannot specify both allowed_domains and blocked_domains in the same request",
            );
        }
        let Some(side) = ctx.side_model.as_ref().filter(|s| s.has_web_search()) else {
            return ToolOutput::error("Web search is not available with this model provider.");
        };
        let started = Instant::now();
        let query = WebSearchQuery {
            query: input.query,
            allowed_domains: allowed,
            blocked_domains: blocked,
        };
        let blocks = match side.web_search(&query, ctx.cancel.clone()).await {
            Ok(b) => b,
            Err(SideModelError::Cancelled) => return ToolOutput::error("Interrupted by user"),
            Err(SideModelError::Failed(e)) => {
                return ToolOutput::error(format!("Web search failed: {e}"));
            }
        };
        let results = results(&blocks);
        let text = result_text(&query.query, &results);
        let structured = json!({
            "query": query.query,
            "results": results,
            "durationSeconds": started.elapsed().as_secs_f64(),
        });
        ToolOutput::text(text).with_structured(structured)
    }
}

/// The results of a search answer, as Claude Code keeps them: the model's text between searches
/// (strings), and each search's sources (`{tool_use_id, content: [{title, url}]}`), or its error
/// (a string).
pub fn results(blocks: &[ContentBlock]) -> Vec<Value> {
    let mut out = Vec::new();
    let mut text = String::new();
    let flush = |text: &mut String, out: &mut Vec<Value>| {
        let t = text.trim();
        if !t.is_empty() {
            out.push(Value::String(t.to_owned()));
        }
        text.clear();
    };
    for block in blocks {
        match block {
            ContentBlock::Text(t) => text.push_str(&t.text),
            ContentBlock::Unknown(v) => match v.get("type").and_then(Value::as_str) {
                Some("server_tool_use") => flush(&mut text, &mut out),
                Some("web_search_tool_result") => {
                    flush(&mut text, &mut out);
                    let id = v.get("tool_use_id").cloned().unwrap_or(Value::Null);
                    match v.get("content") {
                        Some(Value::Array(found)) => {
                            let links: Vec<Value> = found
                                .iter()
                                .filter_map(|r| {
                                    let url = r.get("url")?.as_str()?;
                                    let title =
                                        r.get("title").and_then(Value::as_str).unwrap_or(url);
                                    Some(json!({"title": title, "url": url}))
                                })
                                .collect();
                            out.push(json!({"tool_use_id": id, "content": links}));
                        }
                        Some(error) => {
                            let code = error
                                .get("error_code")
                                .and_then(Value::as_str)
                                .unwrap_or("unknown");
                            out.push(Value::String(format!("Web search error: {code}")));
                        }
                        None => {}
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }
    flush(&mut text, &mut out);
    out
}

/// The tool result's text (Claude Code's): the query, then each result in order.
pub fn result_text(query: &str, results: &[Value]) -> String {
    let mut out = format!("Web search results for query: \"{query}\"\n\n");
    for r in results {
        match r {
            Value::String(s) => {
                out.push_str(s);
                out.push_str("\n\n");
            }
            other => match other.get("content").and_then(Value::as_array) {
                Some(links) if !links.is_empty() => {
                    out.push_str(&format!("Links: {}\n\n", Value::Array(links.clone())));
                }
                _ => out.push_str("No links found.\n\n"),
            },
        }
    }
    if results.is_empty() {
        out.push_str("No results found.\n\n");
    }
    out.push('\n');
    out.push_str(REMINDER);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(v: Value) -> ContentBlock {
        serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn an_answer_becomes_claude_codes_results_and_text() {
        let blocks = vec![
            block(json!({"type": "text", "text": "I'll search."})),
            block(
                json!({"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {"query": "rust"}}),
            ),
            block(
                json!({"type": "web_search_tool_result", "tool_use_id": "srv_1", "content": [
                    {"type": "web_search_result", "title": "Rust", "url": "https://www.rust-lang.org", "encrypted_content": "x"},
                    {"type": "web_search_result", "url": "https://blog.rust-lang.org"},
                ]}),
            ),
            block(json!({"type": "text", "text": "Rust 1.90 is out."})),
            block(
                json!({"type": "server_tool_use", "id": "srv_2", "name": "web_search", "input": {"query": "x"}}),
            ),
            block(
                json!({"type": "web_search_tool_result", "tool_use_id": "srv_2", "content":
                {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}}),
            ),
            block(
                json!({"type": "server_tool_use", "id": "srv_3", "name": "web_search", "input": {"query": "y"}}),
            ),
            block(json!({"type": "web_search_tool_result", "tool_use_id": "srv_3", "content": []})),
        ];
        let r = results(&blocks);
        assert_eq!(
            r,
            vec![
                json!("I'll search."),
                json!({"tool_use_id": "srv_1", "content": [
                    {"title": "Rust", "url": "https://www.rust-lang.org"},
                    {"title": "https://blog.rust-lang.org", "url": "https://blog.rust-lang.org"}]}),
                json!("Rust 1.90 is out."),
                json!("Web search error: max_uses_exceeded"),
                json!({"tool_use_id": "srv_3", "content": []}),
            ]
        );
        assert_eq!(
            result_text("rust", &r),
            "Web search results for query: \"rust\"\n\nI'll search.\n\nLinks: \
             [{\"title\":\"Rust\",\"url\":\"https://www.rust-lang.org\"},{\"title\":\
             \"https://blog.rust-lang.org\",\"url\":\"https://blog.rust-lang.org\"}]\n\n\
             Rust 1.90 is out.\n\nWeb search error: max_uses_exceeded\n\nNo links found.\n\n\n\
             REMINDER: You MUST include the sources above in your response to the user using \
             markdown hyperlinks."
        );
    }
}
