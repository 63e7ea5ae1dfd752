//! Slash commands in an editor: the list it offers (`available_commands_update`: skiff's own
//! commands that make sense outside the REPL, then the workspace's custom commands and skills,
//! then the MCP servers' prompts) and `/help`. The session runs them (`session.rs`).

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, SessionUpdate,
    UnstructuredCommandInput,
};
use skiff_core::commands::CommandSet;

use crate::front::commands;

/// The slash commands an editor offers: the built-in ones that make sense outside the REPL,
/// then the workspace's custom commands and skills.
pub fn available_commands(custom: &CommandSet) -> SessionUpdate {
    let input = |hint: &str| {
        (!hint.is_empty())
            .then(|| AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(hint)))
    };
    let mut list: Vec<AvailableCommand> = commands::COMMANDS
        .iter()
        .filter(|c| !matches!(c.name, "exit" | "resume"))
        .map(|c| {
            let hint = c.args.trim_start_matches('[').trim_end_matches(']');
            AvailableCommand::new(c.name, c.help).input(input(hint))
        })
        .collect();
    for c in custom.commands().iter().filter(|c| c.user_invocable) {
        if list.iter().any(|a| a.name == c.name) {
            continue;
        }
        list.push(
            AvailableCommand::new(
                c.name.clone(),
                format!("{} ({})", c.description, c.origin()),
            )
            .input(input(c.argument_hint.as_deref().unwrap_or_default())),
        );
    }
    for p in custom.mcp().list() {
        if list.iter().any(|a| a.name == p.command) {
            continue;
        }
        let description = match p.description.trim() {
            "" => format!("a prompt of MCP server {} (MCP)", p.server),
            d => format!("{d} (MCP)"),
        };
        list.push(AvailableCommand::new(p.command.clone(), description).input(input(&p.usage())));
    }
    SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(list))
}

/// `/help` in an editor: the commands it offers.
pub fn help(custom: &CommandSet) -> String {
    let (builtins, mine) = commands::help_entries(custom, |n| !matches!(n, "exit" | "resume"));
    let mut s = String::from("Commands:\n");
    for (usage, help) in &builtins {
        s.push_str(&format!("- `{usage}`: {help}\n"));
    }
    if !mine.is_empty() {
        s.push_str("\nCustom commands and skills:\n");
        for (usage, help) in &mine {
            s.push_str(&format!("- `{usage}`: {help}\n"));
        }
    }
    let prompts = commands::mcp_help_entries(custom);
    if !prompts.is_empty() {
        s.push_str("\nMCP prompts:\n");
        for (usage, help) in &prompts {
            s.push_str(&format!("- `{usage}`: {help}\n"));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use serde_json::json;

    use super::*;

    #[test]
    fn commands_offered_to_the_editor() {
        let v = serde_json::to_value(available_commands(&CommandSet::default())).unwrap();
        assert_eq!(v["sessionUpdate"], "available_commands_update");
        let names: Vec<&str> = v["availableCommands"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert!(
            names.contains(&"compact") && !names.contains(&"exit"),
            "{names:?}"
        );
        let compact = v["availableCommands"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "compact")
            .unwrap();
        assert_eq!(compact["input"], json!({"hint": "focus"}));
        assert!(help(&CommandSet::default()).contains("/compact [focus]"));
    }
}
