//! Hooks from the settings files, end to end: a trusted workspace's PreToolUse hook blocks a
//! command and its runs show in stream-json as Claude Code's hook frames; an untrusted
//! workspace's hooks never run.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn skiff(home: &Path) -> Command {
    skiff_testkit::skiff_command!(home)
}

fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join(".claude/hooks")).unwrap();
    std::fs::write(
        ws.path().join(".claude/hooks/guard.sh"),
        "#!/bin/bash\ninput=$(cat)\necho \"$input\" >> \"$CLAUDE_PROJECT_DIR/ran.jsonl\"\ncase \"$input\" in *rm\\ -rf*) echo 'blocked by hook: no rm -rf' >&2; exit 2;; esac\n",
    )
    .unwrap();
    std::fs::write(
        ws.path().join(".claude/settings.json"),
        r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "bash \"$CLAUDE_PROJECT_DIR/.claude/hooks/guard.sh\""}]}]}}"#,
    )
    .unwrap();
    std::fs::write(
        ws.path().join("script.json"),
        r#"{"turns": [
            {"content": [{"type": "tool_use", "name": "Bash", "input": {"command": "rm -rf build"}}]},
            {"content": [{"type": "text", "text": "done"}]}]}"#,
    )
    .unwrap();
    ws
}

fn frames(out: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(out)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

#[test]
fn a_trusted_workspaces_hook_blocks_and_shows_in_stream_json() {
    let home = tempfile::tempdir().unwrap();
    let ws = workspace();
    let out = skiff(home.path())
        .current_dir(ws.path())
        .env("SKIFF_TRUST_WORKSPACE", "1")
        .args([
            "-p",
            "clean up",
            "--script",
            "script.json",
            "--dangerously-skip-permissions",
            "--include-hook-events",
        ])
        .args(["--output-format", "stream-json", "--verbose"])
        .env("IS_SANDBOX", "1")
        .output()
        .unwrap();
    let all = frames(&out.stdout);
    let response = all
        .iter()
        .find(|f| f["subtype"] == "hook_response")
        .unwrap_or_else(|| panic!("{all:?}\n{}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(response["hook_name"], "PreToolUse:Bash");
    assert_eq!(response["exit_code"], 2);
    assert_eq!(response["outcome"], "error");
    let result = all
        .iter()
        .find(|f| f["type"] == "user")
        .map(|f| f["message"]["content"][0].clone())
        .unwrap();
    assert_eq!(result["is_error"], true);
    let text = result["content"].as_str().unwrap();
    assert!(
        text.starts_with("PreToolUse:Bash hook error: [bash ")
            && text.contains("blocked by hook: no rm -rf"),
        "{text}"
    );
    let input: Value = serde_json::from_str(
        std::fs::read_to_string(ws.path().join("ran.jsonl"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(input["tool_input"]["command"], "rm -rf build");
    assert_eq!(input["hook_event_name"], "PreToolUse");
}

#[test]
fn hook_frames_need_include_hook_events_as_with_claude_code() {
    let home = tempfile::tempdir().unwrap();
    let ws = workspace();
    let out = skiff(home.path())
        .current_dir(ws.path())
        .env("SKIFF_TRUST_WORKSPACE", "1")
        .args(["-p", "clean up", "--script", "script.json"])
        .args(["--dangerously-skip-permissions"])
        .args(["--output-format", "stream-json", "--verbose"])
        .env("IS_SANDBOX", "1")
        .output()
        .unwrap();
    let all = frames(&out.stdout);
    assert!(
        !all.iter()
            .any(|f| f["subtype"] == "hook_started" || f["subtype"] == "hook_response"),
        "{all:?}"
    );
    // The hook ran all the same.
    assert!(ws.path().join("ran.jsonl").exists());
    let result = all.iter().find(|f| f["type"] == "user").unwrap();
    assert_eq!(result["message"]["content"][0]["is_error"], true);
}

#[test]
fn an_untrusted_workspaces_hooks_never_run() {
    let home = tempfile::tempdir().unwrap();
    let ws = workspace();
    let out = skiff(home.path())
        .current_dir(ws.path())
        .args(["-p", "clean up", "--script", "script.json"])
        .args(["--output-format", "stream-json", "--verbose"])
        .output()
        .unwrap();
    assert!(
        !frames(&out.stdout)
            .iter()
            .any(|f| f["subtype"] == "hook_started")
    );
    assert!(!ws.path().join("ran.jsonl").exists());
    assert!(String::from_utf8_lossy(&out.stderr).contains("hooks"));
}
