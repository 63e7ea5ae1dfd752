//! What fills the context window, by category — the answer to the Agent SDKs'
//! `get_context_usage` (Claude Code's `/context`): the system prompt, the built-in tools, the
//! MCP tools, the memory files, the custom agents, the skills, the messages, the compaction
//! buffer and the free space, in estimated tokens, with the shape of the TypeScript SDK's
//! `SDKControlGetContextUsageResponse` (camelCase keys).

use serde::Serialize;
use skiff_protocol::ToolDefinition;

use crate::context::ContextLimits;
use crate::core::Core;
use crate::tokens;

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

fn definition_tokens(defs: &[&ToolDefinition]) -> u64 {
    tokens::estimate_bytes(
        defs.iter()
            .map(|t| serde_json::to_string(t).map_or(0, |s| s.len()))
            .sum(),
    )
}

impl Core {
    /// What fills the context window now.
    pub(crate) fn context_usage(&self) -> ContextUsage {
        let served = self.provider.served_model(&self.config.model);
        let limits = ContextLimits::of(
            &self.config,
            served.as_ref(),
            self.conversation.window_cap(),
        );
        let system = tokens::estimate_fixed(self.template.system_blocks(), &[]);
        let (mcp, builtin): (Vec<&ToolDefinition>, Vec<&ToolDefinition>) = self
            .template
            .tools
            .iter()
            .partition(|t| t.name.starts_with("mcp__"));
        let mcp_tools: Vec<McpToolUsage> = mcp
            .iter()
            .map(|t| McpToolUsage {
                name: t.name.clone(),
                server_name: t
                    .name
                    .strip_prefix("mcp__")
                    .and_then(|r| r.split("__").next())
                    .unwrap_or_default()
                    .to_owned(),
                tokens: definition_tokens(&[t]),
                is_loaded: true,
            })
            .collect();
        let agents: Vec<AgentUsage> = self
            .config
            .agents
            .iter()
            .filter(|a| a.source != crate::subagent::AgentSource::BuiltIn)
            .map(|a| AgentUsage {
                agent_type: a.name.clone(),
                source: match &a.source {
                    crate::subagent::AgentSource::File(p) if p.starts_with(&self.config.cwd) => {
                        "projectSettings".to_owned()
                    }
                    crate::subagent::AgentSource::File(_) => "userSettings".to_owned(),
                    _ => "flagSettings".to_owned(),
                },
                tokens: tokens::estimate_bytes(a.name.len() + a.description.len() + 4),
            })
            .collect();
        let skills = tokens::estimate_bytes(
            self.config
                .commands
                .model_invocable()
                .map(|c| c.name.len() + c.description.len() + 4)
                .sum(),
        );
        let memory: u64 = self.config.memory_files.iter().map(|m| m.tokens).sum();
        let messages = tokens::estimate_messages(self.conversation.messages());
        let agent_tokens: u64 = agents.iter().map(|a| a.tokens).sum();
        let mcp_tokens: u64 = mcp_tools.iter().map(|t| t.tokens).sum();
        let builtin_tokens = definition_tokens(&builtin).saturating_sub(agent_tokens + skills);
        let used = system + builtin_tokens + mcp_tokens + memory + agent_tokens + skills + messages;
        let compacting = self.config.compaction.strategy != crate::config::CompactionStrategy::Off;
        let buffer = if compacting {
            limits.window.saturating_sub(limits.threshold)
        } else {
            0
        };
        let free = limits.window.saturating_sub(used + buffer);
        let row = |id, name, tokens, color, kind| Category {
            id,
            name,
            tokens,
            color,
            kind,
        };
        let mut categories = vec![
            row(
                "system_prompt",
                "System prompt",
                system,
                "promptBorder",
                "used",
            ),
            row(
                "system_tools",
                "System tools",
                builtin_tokens,
                "inactive",
                "used",
            ),
            row(
                "mcp_tools",
                "MCP tools",
                mcp_tokens,
                "cyan_FOR_SUBAGENTS_ONLY",
                "used",
            ),
            row(
                "custom_agents",
                "Custom agents",
                agent_tokens,
                "permission",
                "used",
            ),
            row("memory_files", "Memory files", memory, "claude", "used"),
            row("skills", "Skills", skills, "warning", "used"),
            row(
                "messages",
                "Messages",
                messages,
                "purple_FOR_SUBAGENTS_ONLY",
                "used",
            ),
        ];
        if compacting {
            categories.push(row(
                "autocompact_buffer",
                "Autocompact buffer",
                buffer,
                "inactive",
                "buffer",
            ));
        }
        categories.push(row(
            "free_space",
            "Free space",
            free,
            "promptBorder",
            "free",
        ));
        let api_usage = self.last_usage.as_ref().map(|u| ApiUsage {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cache_creation_input_tokens: u.cache_creation(),
            cache_read_input_tokens: u.cache_read(),
        });
        ContextUsage {
            categories,
            total_tokens: used,
            max_tokens: limits.threshold,
            raw_max_tokens: limits.window,
            percentage: if limits.window == 0 {
                0.0
            } else {
                ((used as f64 / limits.window as f64) * 1000.0).round() / 10.0
            },
            grid_rows: Vec::new(),
            model: self.config.model.clone(),
            memory_files: self.config.memory_files.clone(),
            mcp_tools,
            agents,
            auto_compact_threshold: limits.threshold,
            is_auto_compact_enabled: compacting,
            api_usage,
        }
    }
}
