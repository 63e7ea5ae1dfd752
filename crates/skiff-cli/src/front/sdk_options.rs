//! The session options the Agent SDKs send inside `initialize` rather than as flags, applied
//! before the session starts: `agents` (subagent types for the Task tool, like `--agents`),
//! `jsonSchema` (structured output, like `--json-schema`), `systemPrompt` and
//! `appendSystemPrompt` (the TypeScript SDK's); and what the `initialize` answer lists: the
//! commands a host can send and the agents.

use skiff_core::Agent;
use skiff_core::commands::CommandSet;
use skiff_core::subagent::{AgentDefinition, merge_agents, parse_agents_json};
use skiff_protocol::control::{AgentInfo, CommandInfo, Initialize};

/// The commands skiff runs itself when a host sends them as a user message.
const BUILTIN_COMMANDS: &[(&str, &str, &str)] = &[
    (
        "compact",
        "Clear conversation history but keep a summary in context. Optional: /compact [instructions for summarization]",
        "<optional custom summarization instructions>",
    ),
    (
        "clear",
        "Clear conversation history and free up context",
        "",
    ),
];

/// Apply `initialize`'s options to the agent before it starts. An unusable option is an error
/// (the `initialize` request fails with it, as the SDKs expect).
pub fn apply(agent: &mut Agent, request: &Initialize) -> Result<(), String> {
    // Everything is checked before anything changes.
    let added = match &request.agents {
        Some(defs) => parse_agents_json(defs).map_err(|e| format!("agents: {e}"))?,
        None => Vec::new(),
    };
    let schema = match &request.json_schema {
        Some(schema) => Some(
            skiff_core::structured::OutputSchema::new(schema.clone())
                .map_err(|e| format!("jsonSchema: {e}"))?
                .with_max_attempts(max_attempts()),
        ),
        None => None,
    };
    let config = agent.config_mut();
    if config.agents.is_empty() {
        // No Task tool in this session (`--tools` or a deny rule left it out).
        if !added.is_empty() {
            tracing::warn!("initialize.agents: the session offers no Task tool; ignored");
        }
    } else if !added.is_empty() {
        let all = std::mem::take(&mut config.agents);
        config.agents = merge_agents(all.into_iter().chain(added));
    }
    if schema.is_some() {
        config.json_schema = schema;
    }
    let replaced = request.system_prompt.as_ref().and_then(|p| p.text());
    let appended = request
        .append_system_prompt
        .as_deref()
        .filter(|a| !a.trim().is_empty());
    if let Some(text) = replaced {
        // The host's prompt in place of skiff's; the environment block stays.
        let env: Vec<String> = config
            .system_prompt
            .iter()
            .filter(|p| p.starts_with("<env>"))
            .cloned()
            .collect();
        config.system_prompt = std::iter::once(text).chain(env).collect();
    }
    if let Some(text) = appended {
        config.system_prompt.push(text.to_owned());
    }
    Ok(())
}

/// MAX_STRUCTURED_OUTPUT_RETRIES from skiff's environment, else Claude Code's 5.
fn max_attempts() -> u32 {
    crate::session::environment()
        .get("MAX_STRUCTURED_OUTPUT_RETRIES")
        .and_then(|v| v.trim().parse::<u32>().ok())
        .filter(|n| *n > 0)
        .unwrap_or(skiff_core::structured::DEFAULT_MAX_RETRIES)
}

/// `initialize`'s `commands`: the built-in ones a host can send, the custom commands and
/// skills the user may run, the MCP servers' prompts.
pub fn commands(set: &CommandSet) -> Vec<CommandInfo> {
    let info = |name: &str, description: &str, hint: &str| CommandInfo {
        name: name.to_owned(),
        description: description.to_owned(),
        argument_hint: hint.to_owned(),
        extra: Default::default(),
    };
    BUILTIN_COMMANDS
        .iter()
        .map(|(name, description, hint)| info(name, description, hint))
        .chain(set.commands().iter().filter(|c| c.user_invocable).map(|c| {
            info(
                &c.name,
                &c.description,
                c.argument_hint.as_deref().unwrap_or(""),
            )
        }))
        .chain(set.mcp().list().into_iter().map(|p| {
            info(
                &p.command,
                format!("{} (MCP)", p.description).trim_start(),
                &p.usage(),
            )
        }))
        .collect()
}

/// `initialize`'s `agents`: every subagent type, with its model when it has one.
pub fn agents(list: &[AgentDefinition]) -> Vec<AgentInfo> {
    list.iter()
        .map(|a| AgentInfo {
            name: a.name.clone(),
            description: a.description.clone(),
            model: a.model.clone(),
            extra: Default::default(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_builtin_commands_come_first() {
        let list = commands(&CommandSet::default());
        let names: Vec<&str> = list.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["compact", "clear"]);
    }
}
