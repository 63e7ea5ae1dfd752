#![allow(clippy::unwrap_used)]

use super::*;
use serde_json::json;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A plugin with one of each component, in the default folders and through the manifest.
fn full_plugin(root: &Path) {
    write(
        root,
        ".claude-plugin/plugin.json",
        &json!({
            "name": "demo", "version": "1.0.0", "description": "Demo plugin",
            "commands": "./extra/ship.md",
            "agents": ["./more-agents"],
            "hooks": {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo stop"}]}]}},
            "mcpServers": "./servers.json"
        })
        .to_string(),
    );
    write(
        root,
        "commands/hello.md",
        "---\ndescription: Say hello\n---\nHello $ARGUMENTS",
    );
    write(root, "extra/ship.md", "Ship it");
    write(
        root,
        "skills/pdf/SKILL.md",
        "---\ndescription: PDFs\n---\nUse pypdf.",
    );
    write(
        root,
        "agents/reviewer.md",
        "---\ndescription: Reviews\n---\nReview with ${CLAUDE_PLUGIN_ROOT}/rules.md",
    );
    write(
        root,
        "more-agents/helper.md",
        "---\ndescription: Helps\n---\nHelp.",
    );
    write(root, "more-agents/broken.md", "no frontmatter");
    write(
        root,
        "hooks/hooks.json",
        &json!({"description": "d", "hooks": {"PostToolUse": [{"matcher": "Write",
            "hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/fmt.sh"}]}]}})
        .to_string(),
    );
    write(
        root,
        ".mcp.json",
        &json!({"mcpServers": {"tools": {"command": "${CLAUDE_PLUGIN_ROOT}/server"}}}).to_string(),
    );
    write(
        root,
        "servers.json",
        &json!({"other": {"type": "http", "url": "http://127.0.0.1:1/mcp"}}).to_string(),
    );
}

#[test]
fn every_component_loads_from_defaults_and_the_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("demo");
    full_plugin(&root);
    let p = load_plugin(&root, "unused", "demo@m").unwrap();
    let real = std::fs::canonicalize(&root).unwrap();
    assert_eq!(p.name(), "demo");
    assert_eq!(
        p.commands,
        [real.join("commands"), real.join("extra/ship.md")]
    );
    assert_eq!(p.skills, [real.join("skills")]);
    let agents: Vec<&str> = p.agents.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(agents, ["demo:reviewer", "demo:helper"]);
    assert!(
        p.agents[0]
            .prompt
            .contains(&format!("{}/rules.md", real.display()))
    );
    assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings);
    assert!(p.warnings[0].contains("broken.md"));
    let events: Vec<&str> = p.hooks.iter().map(|(e, _)| e.as_str()).collect();
    assert_eq!(events, ["PostToolUse", "Stop"]);
    assert_eq!(
        p.hooks[0].1["hooks"][0]["command"],
        json!(format!("{}/fmt.sh", real.display()))
    );
    // Sorted: the map's order depends on serde_json's features in the build.
    let mut servers: Vec<&String> = p.mcp_servers.keys().collect();
    servers.sort();
    assert_eq!(servers, ["other", "tools"]);
    assert_eq!(
        p.env(None),
        [(ROOT_VAR.to_owned(), real.display().to_string())]
    );
}

#[test]
fn a_plugin_without_a_manifest_uses_the_default_folders() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "commands/a.md", "A");
    let p = load_plugin(dir.path(), "bare", "bare@m").unwrap();
    assert_eq!(p.name(), "bare");
    assert_eq!(p.commands.len(), 1);
    assert!(p.agents.is_empty() && p.hooks.is_empty() && p.mcp_servers.is_empty());
}

#[test]
fn hostile_manifests_are_refused_whole() {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    write(&outside, "secret.md", "secret");
    write(&outside, "hooks.json", "{\"hooks\": {}}");
    let root = dir.path().join("p");
    let case = |manifest: Value| {
        let _ = std::fs::remove_dir_all(&root);
        write(&root, "commands/ok.md", "ok");
        write(&root, ".claude-plugin/plugin.json", &manifest.to_string());
        load_plugin(&root, "p", "p@m").unwrap_err().to_string()
    };
    let e = case(json!({"name": "p", "commands": "../outside/secret.md"}));
    assert!(e.contains("leaves the plugin's directory"), "{e}");
    let e = case(json!({"name": "p", "commands": outside.join("secret.md")}));
    assert!(e.contains("is not relative"), "{e}");
    let e = case(json!({"name": "p", "hooks": "./missing.json"}));
    assert!(e.contains("does not exist"), "{e}");
    let e = case(json!({"name": "p", "hooks": "/etc/passwd"}));
    assert!(e.contains("is not relative"), "{e}");
    let e = case(json!({"name": "p", "agents": "~/.ssh"}));
    assert!(e.contains("is not relative"), "{e}");

    // Through a symlink.
    let _ = std::fs::remove_dir_all(&root);
    write(
        &root,
        ".claude-plugin/plugin.json",
        r#"{"name": "p", "hooks": "./h.json"}"#,
    );
    std::os::unix::fs::symlink(outside.join("hooks.json"), root.join("h.json")).unwrap();
    let e = load_plugin(&root, "p", "p@m").unwrap_err().to_string();
    assert!(e.contains("through a symlink"), "{e}");
    let _ = std::fs::remove_dir_all(&root);
    write(&root, ".claude-plugin/plugin.json", r#"{"name": "p"}"#);
    std::os::unix::fs::symlink(&outside, root.join("commands")).unwrap();
    let e = load_plugin(&root, "p", "p@m").unwrap_err().to_string();
    assert!(e.contains("outside the plugin's directory"), "{e}");

    // Invalid JSON anywhere.
    let _ = std::fs::remove_dir_all(&root);
    write(&root, ".claude-plugin/plugin.json", r#"{"name": "p"}"#);
    write(&root, "hooks/hooks.json", "{\"hooks\": [}");
    let e = load_plugin(&root, "p", "p@m").unwrap_err().to_string();
    assert!(e.contains("hooks.json: invalid JSON at line 1"), "{e}");
    write(&root, "hooks/hooks.json", "{\"hooks\": {\"Stop\": {}}}");
    let e = load_plugin(&root, "p", "p@m").unwrap_err().to_string();
    assert!(e.contains("hooks.Stop must be an array"), "{e}");
    std::fs::remove_file(root.join("hooks/hooks.json")).unwrap();
    write(&root, ".mcp.json", "{\"mcpServers\": {\"s\": 3}}");
    let e = load_plugin(&root, "p", "p@m").unwrap_err().to_string();
    assert!(e.contains("MCP server \"s\" must be an object"), "{e}");
    let e = load_plugin(&dir.path().join("nope"), "p", "p@m")
        .unwrap_err()
        .to_string();
    assert!(e.contains("cannot be read"), "{e}");
}
