//! MCP servers through the `skiff` binary with the scripted model: the stream-json of an MCP
//! tool call against Claude Code's capture, truncation, a server that crashes mid-call, one
//! that never answers, deny rules, and a workspace's `.mcp.json` under trust.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

fn skiff(home: &Path) -> Command {
    skiff_testkit::skiff_command!(home)
}

/// The test MCP server (node), or `None` (test skipped) where node is missing.
fn demo_server() -> Option<String> {
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
            .join("../skiff-mcp/tests/fixtures/demo-server.js")
            .canonicalize()
            .unwrap()
            .display()
            .to_string(),
    )
}

fn config(server: &str, env: Value) -> String {
    json!({"mcpServers": {"demo": {"command": "node", "args": [server], "env": env}}}).to_string()
}

fn script(dir: &Path, calls: &[(&str, Value)]) -> PathBuf {
    let mut turns: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, input))| {
            json!({"content": [{"type": "tool_use", "id": format!("toolu_{i}"), "name": name, "input": input}]})
        })
        .collect();
    turns.push(json!({"content": [{"type": "text", "text": "mcp done"}]}));
    let path = dir.join("script.json");
    std::fs::write(&path, json!({ "turns": turns }).to_string()).unwrap();
    path
}

fn frames(out: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(out)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn tool_results(frames: &[Value]) -> Vec<&Value> {
    frames
        .iter()
        .filter(|f| f["type"] == "user")
        .flat_map(|f| f["message"]["content"].as_array().unwrap().iter())
        .filter(|b| b["type"] == "tool_result")
        .collect()
}

fn run(home: &Path, ws: &Path, args: &[&str]) -> (Vec<Value>, String, Option<i32>) {
    let out = skiff(home)
        .current_dir(ws)
        .args([
            "-p",
            "go",
            "--provider",
            "script",
            "--output-format",
            "stream-json",
            "--verbose",
        ])
        .args(args)
        .output()
        .unwrap();
    (
        frames(&out.stdout),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code(),
    )
}

#[test]
fn an_mcp_tool_call_streams_like_claude_code() {
    let Some(server) = demo_server() else { return };
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let script = script(ws.path(), &[("mcp__demo__add", json!({"a": 2, "b": 3}))]);
    let (frames, stderr, code) = run(
        home.path(),
        ws.path(),
        &[
            "--script",
            script.to_str().unwrap(),
            "--mcp-config",
            &config(&server, json!({})),
            "--allowedTools",
            "mcp__demo",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");

    let capture = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/print_stream_json_mcp_stdio_tool.jsonl"),
    )
    .unwrap();
    let expected: Vec<Value> = capture
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();

    // init: the server's tools beside the built-ins, the server connected, source dynamic.
    let init = &frames[0];
    assert_eq!(init["subtype"], "init");
    assert!(
        init["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("mcp__demo__add"))
    );
    assert_eq!(init["mcp_servers"], expected[0]["mcp_servers"]);

    // The call and its result: content blocks, and tool_use_result the same array.
    let call = frames
        .iter()
        .find(|f| f["type"] == "assistant" && f["message"]["content"][0]["type"] == "tool_use")
        .unwrap();
    assert_eq!(
        call["message"]["content"][0]["name"],
        expected[2]["message"]["content"][0]["name"]
    );
    assert_eq!(
        call["message"]["content"][0]["input"],
        expected[2]["message"]["content"][0]["input"]
    );
    let user = frames.iter().find(|f| f["type"] == "user").unwrap();
    let want = &expected[3];
    assert_eq!(
        user["message"]["content"][0]["content"],
        want["message"]["content"][0]["content"]
    );
    assert_eq!(user["tool_use_result"], want["tool_use_result"]);
    assert_eq!(user["message"]["content"][0]["is_error"], json!(false));
    let result = frames.last().unwrap();
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["result"], "mcp done");
}

#[test]
fn big_results_are_truncated_and_a_crash_is_an_error_result_then_the_server_restarts() {
    let Some(server) = demo_server() else { return };
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let script = script(
        ws.path(),
        &[
            ("mcp__demo__big", json!({})),
            ("mcp__demo__boom", json!({})),
            ("mcp__demo__add", json!({"a": 1, "b": 1})),
            ("mcp__demo__add", json!({"a": "one"})),
            ("mcp__demo__nope", json!({})),
        ],
    );
    let (frames, stderr, code) = run(
        home.path(),
        ws.path(),
        &[
            "--script",
            script.to_str().unwrap(),
            "--mcp-config",
            &config(&server, json!({"BIG_CHARS": "200000"})),
            "--allowedTools",
            "mcp__demo",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let results = tool_results(&frames);
    assert_eq!(results.len(), 5, "{frames:#?}");
    let big = results[0]["content"][0]["text"].as_str().unwrap();
    assert!(big.len() < 100_000, "{}", big.len());
    assert!(
        big.contains("OUTPUT TRUNCATED"),
        "{}",
        &big[big.len() - 400..]
    );
    assert_eq!(results[1]["is_error"], json!(true));
    let crash = results[1]["content"].to_string();
    assert!(crash.contains("MCP server \\\"demo\\\""), "{crash}");
    assert_eq!(results[2]["content"][0]["text"], "2", "{:?}", results[2]);
    assert_eq!(results[3]["is_error"], json!(true));
    assert!(
        results[3]["content"]
            .to_string()
            .contains("must be numbers")
    );
    assert_eq!(results[4]["is_error"], json!(true));
    assert!(results[4]["content"].to_string().contains("No such tool"));
    assert_eq!(frames.last().unwrap()["subtype"], "success");
}

#[test]
fn a_server_that_never_answers_delays_the_run_only_until_mcp_timeout() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let script = script(ws.path(), &[]);
    let config = json!({"mcpServers": {
        "silent": {"command": "sleep", "args": ["600"]},
        "missing": {"command": "/nonexistent/server"},
    }})
    .to_string();
    let started = Instant::now();
    let out = skiff(home.path())
        .current_dir(ws.path())
        .env("MCP_TIMEOUT", "800")
        .args([
            "-p",
            "go",
            "--provider",
            "script",
            "--output-format",
            "stream-json",
            "--verbose",
            "--script",
            script.to_str().unwrap(),
            "--mcp-config",
            &config,
        ])
        .output()
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(out.status.success());
    let frames = frames(&out.stdout);
    let servers = frames[0]["mcp_servers"].as_array().unwrap();
    let status = |n: &str| {
        servers
            .iter()
            .find(|s| s["name"] == n)
            .unwrap_or_else(|| panic!("{servers:?}"))
            .clone()
    };
    assert_eq!(status("silent")["status"], "failed");
    assert!(
        status("silent")["error"]
            .as_str()
            .unwrap()
            .contains("MCP_TIMEOUT")
    );
    assert_eq!(status("missing")["status"], "failed");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("MCP server \"missing\""), "{stderr}");
    assert_eq!(frames.last().unwrap()["result"], "mcp done");
}

#[test]
fn deny_rules_take_a_servers_tools_away_and_unapproved_calls_are_denied() {
    let Some(server) = demo_server() else { return };
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let script = script(ws.path(), &[("mcp__demo__add", json!({"a": 2, "b": 3}))]);
    let config = config(&server, json!({}));
    let (frames, _, _) = run(
        home.path(),
        ws.path(),
        &[
            "--script",
            script.to_str().unwrap(),
            "--mcp-config",
            &config,
            "--disallowedTools",
            "mcp__demo",
        ],
    );
    let tools = frames[0]["tools"].as_array().unwrap();
    assert!(
        !tools
            .iter()
            .any(|t| t.as_str().unwrap().starts_with("mcp__demo")),
        "{tools:?}"
    );
    // Allowed to exist but not approved: print mode denies the call.
    let (frames, _, _) = run(
        home.path(),
        ws.path(),
        &[
            "--script",
            script.to_str().unwrap(),
            "--mcp-config",
            &config,
        ],
    );
    let result = frames.last().unwrap();
    assert_eq!(
        result["permission_denials"][0]["tool_name"], "mcp__demo__add",
        "{result}"
    );
}

#[test]
fn a_workspaces_mcp_json_starts_only_when_the_workspace_is_trusted() {
    let Some(server) = demo_server() else { return };
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join(".mcp.json"), config(&server, json!({}))).unwrap();
    let script = script(ws.path(), &[]);
    let (frames, stderr, _) = run(
        home.path(),
        ws.path(),
        &["--script", script.to_str().unwrap()],
    );
    assert_eq!(frames[0]["mcp_servers"], json!([]), "{stderr}");
    assert!(stderr.contains("demo"), "{stderr}");

    let out = skiff(home.path())
        .current_dir(ws.path())
        .env("SKIFF_TRUST_WORKSPACE", "1")
        .args([
            "-p",
            "go",
            "--provider",
            "script",
            "--output-format",
            "stream-json",
            "--verbose",
            "--script",
            script.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let trusted = self::frames(&out.stdout);
    assert_eq!(
        trusted[0]["mcp_servers"],
        json!([{"name": "demo", "status": "connected", "source": "project"}])
    );
}
