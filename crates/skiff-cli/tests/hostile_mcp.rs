//! A hostile MCP server, from the command line: answers over the message limit fail their call
//! (the session goes on), tool names the API would refuse are shortened or left out, and
//! `skiff mcp list` / `skiff mcp get` never print what a `${VAR}` expands to.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::{Value, json};
use skiff_protocol::script::ScriptTurn;
use skiff_testkit::MockServer;

const KEY: &str = "sk-ant-api03-users-own-key-0123456789abcdef";

/// The hostile server's script, or `None` (skipped) without node, unless CI requires it.
fn hostile_server() -> Option<String> {
    let ok = std::process::Command::new("node")
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
            .join("tests/fixtures/hostile-mcp-server.js")
            .display()
            .to_string(),
    )
}

fn skiff(home: &Path, ws: &Path) -> Command {
    let mut c = Command::cargo_bin("skiff").unwrap();
    c.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("SKIFF_HOME", home.join(".skiff"))
        .env("SKIFF_SANDBOX", "off")
        .env("ANTHROPIC_API_KEY", KEY)
        .current_dir(ws);
    c
}

fn config(server: &str, huge: usize) -> String {
    json!({"mcpServers": {"hostile": {
        "command": "node", "args": [server], "env": {"HUGE_BYTES": huge.to_string()}
    }}})
    .to_string()
}

fn call(name: &str) -> ScriptTurn {
    ScriptTurn::tool_use(name, json!({}))
}

/// The tool results of a stream-json run, in order: (is_error, text).
fn results(stdout: &[u8]) -> Vec<(bool, String)> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|f| f["type"] == "user")
        .flat_map(|f| {
            f["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter(|b| b["type"] == "tool_result")
        .map(|b| {
            let text = match &b["content"] {
                Value::String(s) => s.clone(),
                Value::Array(blocks) => blocks
                    .iter()
                    .filter_map(|b| b["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
                other => other.to_string(),
            };
            (b["is_error"] == true, text)
        })
        .collect()
}

async fn run_calls(
    server: &str,
    huge: usize,
    limit: Option<&str>,
    calls: &[&str],
) -> (Vec<(bool, String)>, String, MockServer) {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let mut turns: Vec<ScriptTurn> = calls.iter().map(|c| call(c)).collect();
    turns.push(ScriptTurn::text("done"));
    let mock = MockServer::builder().turns(turns).start().await.unwrap();
    let mut c = skiff(home.path(), ws.path());
    c.env("ANTHROPIC_BASE_URL", mock.url())
        .args(["-p", "go", "--output-format", "stream-json", "--verbose"])
        .args(["--mcp-config", &config(server, huge)])
        .args(["--allowedTools", "mcp__hostile"])
        .timeout(std::time::Duration::from_secs(300));
    if let Some(l) = limit {
        c.env("SKIFF_MCP_MAX_MESSAGE_BYTES", l);
    }
    let out = c.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    (results(&out.stdout), stderr, mock)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_over_the_message_limit_fails_its_call_and_the_session_goes_on() {
    let Some(server) = hostile_server() else {
        return;
    };
    // The case: 16 MB and more, with the default limit; the id after the result and
    // before it.
    let (r, stderr, _) = run_calls(
        &server,
        17_000_000,
        None,
        &[
            "mcp__hostile__huge",
            "mcp__hostile__huge_head",
            "mcp__hostile__small",
        ],
    )
    .await;
    assert_eq!(r.len(), 3, "{r:?}\n{stderr}");
    for (is_error, text) in &r[..2] {
        assert!(is_error, "{text}");
        assert!(
            text.contains("more than the 16777216 bytes skiff accepts for one message"),
            "{text}"
        );
    }
    assert_eq!(r[2], (false, "fine small".to_owned()));

    // 8 MB is fine.
    let (r, stderr, _) = run_calls(&server, 8_000_000, None, &["mcp__hostile__huge"]).await;
    assert_eq!(r.len(), 1, "{stderr}");
    assert!(!r[0].0, "{}", &r[0].1[..200.min(r[0].1.len())]);
    assert!(r[0].1.contains("yyyy"));

    // The limit is configurable.
    let (r, _, _) = run_calls(
        &server,
        200_000,
        Some("100000"),
        &["mcp__hostile__huge", "mcp__hostile__small"],
    )
    .await;
    assert!(
        r[0].0 && r[0].1.contains("more than the 100000 bytes"),
        "{r:?}"
    );
    assert_eq!(r[1], (false, "fine small".to_owned()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_names_the_api_would_refuse_are_shortened_or_left_out() {
    let Some(server) = hostile_server() else {
        return;
    };
    let long = format!("a_tool_with_a_name_that_goes_on_{}end", "and_on_".repeat(8));
    let short = skiff_mcp::tool_name("hostile", &long);
    assert_eq!(short.len(), 64);
    let (r, stderr, mock) = run_calls(&server, 10, None, &[&short]).await;
    assert_eq!(r, vec![(false, format!("fine {long}"))], "{stderr}");
    let valid = regex_lite(&mock);
    assert!(valid.iter().all(|(_, ok)| *ok), "{valid:?}");
    let names: Vec<&str> = valid.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names
            .iter()
            .filter(|n| **n == "mcp__hostile__get_x")
            .count(),
        1,
        "{names:?}"
    );
    assert!(names.contains(&short.as_str()), "{names:?}");
    assert!(
        stderr.contains("is left out") && stderr.contains("get_x"),
        "{stderr}"
    );
    assert!(stderr.contains(&short), "{stderr}");
}

/// Every tool name of every request, and whether the API would accept it.
fn regex_lite(mock: &MockServer) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    for req in mock.messages_requests() {
        for t in req.body["tools"].as_array().cloned().unwrap_or_default() {
            let name = t["name"].as_str().unwrap_or_default().to_owned();
            let ok = (1..=64).contains(&name.len())
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
            if !out.iter().any(|(n, _)| *n == name) {
                out.push((name, ok));
            }
        }
    }
    out
}

#[test]
fn mcp_list_and_get_mask_what_variables_expand_to() {
    let Some(server) = hostile_server() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let literal = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    std::fs::write(
        home.path().join(".claude.json"),
        json!({"mcpServers": {
            "hostile": {
                "command": "node",
                "args": [server, "--api-key", "${ANTHROPIC_API_KEY}", "--token", literal],
                "env": {"UPSTREAM": "${ANTHROPIC_API_KEY}", "PLAIN": "prefix-${OTHER_VALUE}"}
            },
            "remote": {
                "type": "http",
                "url": "http://127.0.0.1:9/mcp?k=${ANTHROPIC_API_KEY}",
                "headers": {"X-Custom": "${ANTHROPIC_API_KEY}", "Authorization": "Bearer ${OTHER_VALUE}"}
            }
        }})
        .to_string(),
    )
    .unwrap();
    let secrets = [KEY, "other-secret-value-42", literal];
    let run = |args: &[&str]| {
        let out = skiff(home.path(), ws.path())
            .env("OTHER_VALUE", "other-secret-value-42")
            .env("MCP_TIMEOUT", "20000")
            .args(args)
            .output()
            .unwrap();
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        for s in secrets {
            assert!(!all.contains(s), "{s} printed by {args:?}:\n{all}");
        }
        assert!(out.status.success(), "{all}");
        all
    };
    let list = run(&["mcp", "list"]);
    assert!(list.contains("--api-key *** --token ***"), "{list}");
    assert!(
        list.contains("hostile:") && list.contains("Connected"),
        "{list}"
    );
    let get = run(&["mcp", "get", "hostile"]);
    assert!(get.contains("UPSTREAM=***"), "{get}");
    assert!(get.contains("PLAIN=prefix-***"), "{get}");
    let remote = run(&["mcp", "get", "remote"]);
    assert!(remote.contains("X-Custom: ***"), "{remote}");
    assert!(remote.contains("Authorization: Bearer ***"), "{remote}");
    assert!(remote.contains("k=***"), "{remote}");
}
