//! One web search through the provider's server-side tool (Anthropic's `web_search_20250305`),
//! as Claude Code's WebSearch makes it: a model call of its own that must use the search tool
//! (domain filters passed on, at most eight searches), sent again with the paused turn
//! unchanged while the server pauses it (`pause_turn`). The answer's blocks — text,
//! `server_tool_use`, `web_search_tool_result` — go back to the tool as they came.

use serde_json::{Value, json};
use skiff_llm::{LlmError, Provider};
use skiff_protocol::{
    ContentBlock, JsonMap, Message, MessagesRequest, Role, StopReason, SystemPrompt, ToolChoice,
    ToolDefinition, Usage,
};
use skiff_tools::{SideModelError, WebSearchQuery};
use tokio_util::sync::CancellationToken;

/// The server tool's type.
pub const TOOL_TYPE: &str = "web_search_20250305";
/// The server tool's name.
pub const TOOL_NAME: &str = "web_search";
/// Searches one WebSearch call may make (Claude Code's).
pub const MAX_USES: u64 = 8;
/// Times a paused turn is sent again before the answer so far is taken.
const MAX_CONTINUATIONS: usize = 5;
/// Output budget of the search call.
const MAX_TOKENS: u32 = 4_096;
/// The search call's system prompt (Claude Code's).
const SYSTEM: &str = "You are an assistant for performing a web search tool use";

/// The server tool's definition for `query`'s filters.
pub fn tool_definition(query: &WebSearchQuery) -> ToolDefinition {
    let mut extra = JsonMap::new();
    extra.insert("type".into(), json!(TOOL_TYPE));
    extra.insert("max_uses".into(), json!(MAX_USES));
    if !query.allowed_domains.is_empty() {
        extra.insert("allowed_domains".into(), json!(query.allowed_domains));
    }
    if !query.blocked_domains.is_empty() {
        extra.insert("blocked_domains".into(), json!(query.blocked_domains));
    }
    ToolDefinition {
        name: TOOL_NAME.to_owned(),
        description: None,
        input_schema: Value::Null.into(),
        cache_control: None,
        extra,
    }
}

/// Search with `model` through `provider`; each call's usage goes to `record`.
pub(crate) async fn search(
    provider: &dyn Provider,
    model: &str,
    query: &WebSearchQuery,
    cancel: CancellationToken,
    mut record: impl FnMut(Usage),
) -> Result<Vec<ContentBlock>, SideModelError> {
    let tool = tool_definition(query);
    let mut messages = vec![Message::user_text(format!(
        "Perform a web search for the query: {}",
        query.query
    ))];
    let mut content = Vec::new();
    for round in 0..=MAX_CONTINUATIONS {
        let mut request = MessagesRequest::new(model, MAX_TOKENS, messages.clone());
        request.system = Some(SystemPrompt::Text(SYSTEM.to_owned()));
        request.tools = vec![tool.clone()];
        if round == 0 {
            request.tool_choice = Some(ToolChoice::Tool {
                name: TOOL_NAME.to_owned(),
                disable_parallel_tool_use: None,
            });
        }
        request.stream = true;
        let reply =
            match skiff_llm::complete(provider.stream(&request.view(), cancel.clone())).await {
                Ok(r) => r,
                Err(LlmError::Cancelled) => return Err(SideModelError::Cancelled),
                Err(_) if cancel.is_cancelled() => return Err(SideModelError::Cancelled),
                Err(e) => {
                    tracing::warn!(%model, error = %e, "a web search call failed");
                    return Err(SideModelError::Failed(e.to_string()));
                }
            };
        record(reply.usage.clone());
        content.extend(reply.content.iter().cloned());
        if reply.stop_reason != Some(StopReason::PauseTurn) {
            return Ok(content);
        }
        // The server paused a long turn: the turn goes back unchanged for it to go on.
        messages.push(Message::blocks(Role::Assistant, reply.content));
    }
    tracing::warn!(%model, "a web search was still paused after {MAX_CONTINUATIONS} continuations");
    Ok(content)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_tool_carries_the_domain_filters() {
        let q = WebSearchQuery {
            query: "rust".into(),
            allowed_domains: vec!["rust-lang.org".into()],
            blocked_domains: vec![],
        };
        assert_eq!(
            serde_json::to_value(tool_definition(&q)).unwrap_or_default(),
            json!({"name": "web_search", "type": "web_search_20250305", "max_uses": 8,
                "allowed_domains": ["rust-lang.org"]})
        );
    }
}
