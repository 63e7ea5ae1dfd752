//! The settings' `env` end to end, as Claude Code applies it: the commands skiff runs — Bash,
//! hooks, MCP stdio servers — get the variables of every trusted settings file; an untrusted
//! workspace's add nothing; the secrets skiff keeps out of tools never get through.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

fn skiff(home: &Path) -> Command {
    let mut c = skiff_testkit::skiff_command!(home);
    c.env("IS_SANDBOX", "1");
    c
}

/// The test MCP server with prompts, resources and changing tools (node).
fn rich_server() -> Option<String> {
    let ok = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        if std::env::var_os("SKIFF_REQUIRE_MCP_SERVERS").is_some() {
            panic!("node is needed for the MCP tests (.ci/run installs it)");
        }
        eprintln!("skipped: node is not installed");
        return None;
    }
    Some(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../skiff-mcp/tests/fixtures/rich-server.js")
            .canonicalize()
            .unwrap()
            .display()
            .to_string(),
    )
}

fn frames(out: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(out)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The text of each tool result, in order.
fn results(frames: &[Value]) -> Vec<String> {
    frames
        .iter()
        .filter(|f| f["type"] == "user")
        .flat_map(|f| {
            f["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter(|b| b["type"] == "tool_result")
        .map(|b| match &b["content"] {
            Value::String(s) => s.clone(),
            Value::Array(items) => items
                .iter()
                .filter_map(|i| i["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            other => other.to_string(),
        })
        .collect()
}

struct Setup {
    home: tempfile::TempDir,
    ws: tempfile::TempDir,
    server: String,
}

fn setup() -> Option<Setup> {
    let server = rich_server()?;
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".skiff")).unwrap();
    // The user's settings: variables, one of them a key skiff keeps out of tools, and a hook
    // that writes what it sees.
    std::fs::write(
        home.path().join(".skiff/settings.json"),
        json!({
            "env": {"SKIFF_T_USER": "from user", "ANTHROPIC_API_KEY": "sk-ant-settings-secret"},
            "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
                "command": "echo \"$SKIFF_T_USER|${SKIFF_T_PROJECT-unset}|${ANTHROPIC_API_KEY-unset}\" >> \"$CLAUDE_PROJECT_DIR/hook-env.txt\""}]}]}
        })
        .to_string(),
    )
    .unwrap();
    std::fs::create_dir_all(ws.path().join(".claude")).unwrap();
    std::fs::write(
        ws.path().join(".claude/settings.json"),
        json!({"env": {"SKIFF_T_PROJECT": "from project"}}).to_string(),
    )
    .unwrap();
    let turns = json!({"turns": [
        {"content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command":
            "echo \"[$SKIFF_T_USER] [${SKIFF_T_PROJECT-unset}] [${ANTHROPIC_API_KEY-unset}]\""}}]},
        {"content": [{"type": "tool_use", "id": "toolu_2", "name": "mcp__rich__env", "input": {"name": "SKIFF_T_USER"}}]},
        {"content": [{"type": "tool_use", "id": "toolu_3", "name": "mcp__rich__env", "input": {"name": "SKIFF_T_PROJECT"}}]},
        {"content": [{"type": "tool_use", "id": "toolu_4", "name": "mcp__rich__env", "input": {"name": "ANTHROPIC_API_KEY"}}]},
        {"content": [{"type": "text", "text": "done"}]}
    ]});
    std::fs::write(ws.path().join("script.json"), turns.to_string()).unwrap();
    Some(Setup { home, ws, server })
}

fn run(s: &Setup, trusted: bool) -> (Vec<String>, String) {
    let mut cmd = skiff(s.home.path());
    if trusted {
        cmd.env("SKIFF_TRUST_WORKSPACE", "1");
    }
    let config = json!({"mcpServers": {"rich": {"command": "node", "args": [s.server]}}});
    let out = cmd
        .current_dir(s.ws.path())
        .args([
            "-p",
            "go",
            "--provider",
            "script",
            "--script",
            "script.json",
        ])
        .args(["--dangerously-skip-permissions", "--mcp-config"])
        .arg(config.to_string())
        .args(["--output-format", "stream-json", "--verbose"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    let hook = std::fs::read_to_string(s.ws.path().join("hook-env.txt")).unwrap_or_default();
    std::fs::remove_file(s.ws.path().join("hook-env.txt")).ok();
    let mut seen = results(&frames(&out.stdout));
    seen.push(hook.trim().to_owned());
    (seen, stderr)
}

#[test]
fn bash_hooks_and_mcp_servers_get_the_trusted_settings_env_and_never_a_secret() {
    let Some(s) = setup() else { return };

    // Untrusted workspace: the user's variables only.
    let (seen, stderr) = run(&s, false);
    assert_eq!(
        seen,
        [
            "[from user] [unset] [unset]",
            "SKIFF_T_USER=from user",
            "SKIFF_T_PROJECT is unset",
            "ANTHROPIC_API_KEY is unset",
            "from user|unset|unset",
        ],
        "{stderr}"
    );
    assert!(
        stderr.contains("env.SKIFF_T_PROJECT"),
        "the ignored variable is named: {stderr}"
    );
    assert!(!stderr.contains("sk-ant-settings-secret"), "{stderr}");

    // Trusted: the workspace's variables too.
    let (seen, stderr) = run(&s, true);
    assert_eq!(
        seen,
        [
            "[from user] [from project] [unset]",
            "SKIFF_T_USER=from user",
            "SKIFF_T_PROJECT=from project",
            "ANTHROPIC_API_KEY is unset",
            "from user|from project|unset",
        ],
        "{stderr}"
    );
}
