//! What fills the context window, by category — the answer to the Agent SDKs'
//! `get_context_usage` (Claude Code's `/context`): the system prompt, the built-in tools, the
//! MCP tools, the memory files, the custom agents, the skills, the messages, the compaction
//! buffer and the free space, in estimated tokens, with the shape of the TypeScript SDK's
//! `SDKControlGetContextUsageResponse` (camelCase keys).

use serde::Serialize;

pub use crate::config::MemoryUsage;

/// One row of the breakdown.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Category {
    /// Stable id (`system_prompt`, `system_tools`, `mcp_tools`, `memory_files`,
    /// `custom_agents`, `skills`, `messages`, `autocompact_buffer`, `free_space`).
    pub id: &'static str,
    /// The row's name as `/context` shows it.
    pub name: &'static str,
    /// Estimated tokens.
    pub tokens: u64,
    /// A colour name for renderers.
    pub color: &'static str,
    /// `used`, `free` or `buffer`.
    pub kind: &'static str,
}

/// An MCP tool's share.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpToolUsage {
    /// Its wire name (`mcp__server__tool`).
    pub name: String,
    /// Its server.
    pub server_name: String,
    /// Estimated tokens of its definition.
    pub tokens: u64,
    /// Always offered (skiff does not defer tools).
    pub is_loaded: bool,
}

/// A custom agent's share (its line in the Task tool's description).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentUsage {
    /// Its name.
    pub agent_type: String,
    /// `userSettings`, `projectSettings` or `flagSettings` (`--agents`, the SDK's).
    pub source: String,
    /// Estimated tokens.
    pub tokens: u64,
}

/// Usage the API reported for the last request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApiUsage {
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Tokens written to the cache.
    pub cache_creation_input_tokens: u64,
    /// Tokens read from the cache.
    pub cache_read_input_tokens: u64,
}

/// The breakdown.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextUsage {
    /// The rows, in `/context`'s order.
    pub categories: Vec<Category>,
    /// Tokens in use.
    pub total_tokens: u64,
    /// The window less the compaction buffer (compaction starts there).
    pub max_tokens: u64,
    /// The model's context window.
    pub raw_max_tokens: u64,
    /// `total_tokens` as a percentage of the window.
    pub percentage: f64,
    /// No grid: renderers draw their own.
    pub grid_rows: Vec<Vec<serde_json::Value>>,
    /// The model it was computed for.
    pub model: String,
    /// The memory files.
    pub memory_files: Vec<MemoryUsage>,
    /// The MCP tools.
    pub mcp_tools: Vec<McpToolUsage>,
    /// The custom agents (the built-in ones are left out, as Claude Code does).
    pub agents: Vec<AgentUsage>,
    /// Where compaction starts, in tokens.
    pub auto_compact_threshold: u64,
    /// Whether the conversation is compacted (summarised or trimmed) at the threshold.
    pub is_auto_compact_enabled: bool,
    /// The last request's usage as the API reported it (none before the first).
    pub api_usage: Option<ApiUsage>,
}
