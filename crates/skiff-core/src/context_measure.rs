//! Measuring what fills the context window now ([`Core::context_usage`], the answer to
//! `get_context_usage`).

use crate::context::ContextLimits;
use crate::context_usage::{AgentUsage, ApiUsage, Category, ContextUsage, McpToolUsage};
use crate::core::Core;
use crate::tokens;

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
        // Measured when the tools were set: nothing is serialized again per turn.
        let (mcp, builtin): (Vec<_>, Vec<_>) = self
            .template
            .tools
            .iter()
            .zip(self.template.tool_bytes().iter().copied())
            .partition(|(t, _)| t.name.starts_with("mcp__"));
        let mcp_tools: Vec<McpToolUsage> = mcp
            .iter()
            .map(|(t, bytes)| McpToolUsage {
                name: t.name.clone(),
                server_name: t
                    .name
                    .strip_prefix("mcp__")
                    .and_then(|r| r.split("__").next())
                    .unwrap_or_default()
                    .to_owned(),
                tokens: tokens::estimate_bytes(*bytes),
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
        let messages = self.conversation.estimate_messages();
        let agent_tokens: u64 = agents.iter().map(|a| a.tokens).sum();
        let mcp_tokens: u64 = mcp_tools.iter().map(|t| t.tokens).sum();
        let builtin_bytes: usize = builtin.iter().map(|(_, bytes)| bytes).sum();
        let builtin_tokens =
            tokens::estimate_bytes(builtin_bytes).saturating_sub(agent_tokens + skills);
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
