//! What a plugin adds, as text for the user: shown before it is installed (its hooks and MCP
//! servers run programs, so they are spelled out) and by `skiff plugin validate` and `/plugin`.

use std::fmt::Write as _;

use serde_json::Value;
use skiff_core::commands::{CommandKind, DiscoverOptions, discover};

use super::components::LoadedPlugin;

/// The plugin's commands and skills as `/name`s (commands, skills), and what was wrong with
/// their files.
pub fn command_names(plugin: &LoadedPlugin) -> (Vec<String>, Vec<String>, Vec<String>) {
    let found = discover(&DiscoverOptions {
        cwd: plugin.root.clone(),
        trusted: false,
        project: false,
        user_dirs: Vec::new(),
        builtins: Vec::new(),
        plugins: vec![skiff_core::commands::PluginCommands {
            name: plugin.name().to_owned(),
            root: plugin.root.clone(),
            commands: plugin.commands.clone(),
            skills: plugin.skills.clone(),
        }],
    });
    let names = |kind: CommandKind| {
        found
            .set
            .commands()
            .iter()
            .filter(|c| c.kind == kind)
            .map(|c| format!("/{}", c.name))
            .collect()
    };
    (
        names(CommandKind::Command),
        names(CommandKind::Skill),
        found.warnings,
    )
}

/// A few lines saying what the plugin is and adds; paths inside it are shown as
/// `${CLAUDE_PLUGIN_ROOT}/…`.
pub fn describe(plugin: &LoadedPlugin) -> String {
    let m = &plugin.manifest;
    let mut out = m.name.clone();
    if let Some(v) = &m.version {
        let _ = write!(out, " {v}");
    }
    if let Some(d) = m.description.as_deref().filter(|d| !d.trim().is_empty()) {
        let _ = write!(out, " — {}", d.trim());
    }
    if let Some(a) = &m.author {
        let _ = write!(out, " (by {a})");
    }
    out.push('\n');
    let root = plugin.root.display().to_string();
    let shown = |s: &str| s.replace(&root, "${CLAUDE_PLUGIN_ROOT}");
    let (commands, skills, _) = command_names(plugin);
    let agents: Vec<String> = plugin.agents.iter().map(|a| a.name.clone()).collect();
    for (label, list) in [
        ("commands", commands),
        ("skills", skills),
        ("agents", agents),
    ] {
        if !list.is_empty() {
            let _ = writeln!(out, "  {label:<12} {}", list.join(", "));
        }
    }
    for (event, group) in &plugin.hooks {
        let matcher = group
            .get("matcher")
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty() && *m != "*")
            .map(|m| format!(" ({m})"))
            .unwrap_or_default();
        let handlers = group
            .get("hooks")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for h in handlers {
            let command = h
                .get("command")
                .and_then(Value::as_str)
                .unwrap_or("(no command)");
            let _ = writeln!(
                out,
                "  {:<12} {event}{matcher}: runs {}",
                "hook",
                shown(command)
            );
        }
    }
    for (name, entry) in &plugin.mcp_servers {
        let what = match (
            entry.get("command").and_then(Value::as_str),
            entry.get("url").and_then(Value::as_str),
        ) {
            (Some(cmd), _) => {
                let args: Vec<String> = entry
                    .get("args")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_str).map(shown).collect())
                    .unwrap_or_default();
                let mut line = format!("runs {}", shown(cmd));
                for a in args {
                    line.push(' ');
                    line.push_str(&a);
                }
                line
            }
            (None, Some(url)) => format!("connects to {url}"),
            (None, None) => "(no command or url)".to_owned(),
        };
        let _ = writeln!(
            out,
            "  {:<12} plugin:{}:{name}: {what}",
            "MCP server", m.name
        );
    }
    if plugin.hooks.is_empty()
        && plugin.mcp_servers.is_empty()
        && plugin.agents.is_empty()
        && plugin.commands.is_empty()
        && plugin.skills.is_empty()
    {
        out.push_str("  (no commands, skills, agents, hooks or MCP servers)\n");
    }
    out
}

/// Whether the plugin runs programs of its own (hooks, stdio MCP servers).
pub fn runs_programs(plugin: &LoadedPlugin) -> bool {
    !plugin.hooks.is_empty()
        || plugin
            .mcp_servers
            .values()
            .any(|e| e.get("command").is_some())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_summary_spells_out_what_runs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let w = |rel: &str, text: &str| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        w(
            ".claude-plugin/plugin.json",
            r#"{"name": "demo", "version": "1.0.0", "description": "Demo", "author": "A"}"#,
        );
        w("commands/hello.md", "Hello");
        w("skills/pdf/SKILL.md", "---\ndescription: PDFs\n---\nx");
        w("agents/rev.md", "---\ndescription: R\n---\nx");
        w(
            "hooks/hooks.json",
            r#"{"hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/fmt.sh"}]}]}}"#,
        );
        w(
            ".mcp.json",
            r#"{"mcpServers": {"tools": {"command": "${CLAUDE_PLUGIN_ROOT}/srv", "args": ["--x"]}}}"#,
        );
        let p = super::super::load_plugin(root, "demo", "demo@m").unwrap();
        let text = describe(&p);
        assert!(text.starts_with("demo 1.0.0 — Demo (by A)\n"), "{text}");
        assert!(text.contains("commands     /demo:hello"), "{text}");
        assert!(text.contains("skills       /demo:pdf"), "{text}");
        assert!(text.contains("agents       demo:rev"), "{text}");
        assert!(
            text.contains("hook         PostToolUse (Write): runs ${CLAUDE_PLUGIN_ROOT}/fmt.sh"),
            "{text}"
        );
        assert!(
            text.contains("MCP server   plugin:demo:tools: runs ${CLAUDE_PLUGIN_ROOT}/srv --x"),
            "{text}"
        );
        assert!(runs_programs(&p));
    }
}
