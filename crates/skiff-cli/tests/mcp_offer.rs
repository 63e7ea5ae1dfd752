//! What MCP servers offer besides tool calls, through the binary against the Anthropic mock
//! and skiff's test server (`rich-server.js`): the servers' instructions in the system prompt
//! (byte-stable), tools that change while the session runs (offered from the next request,
//! removed ones unknown, the cached prefix unchanged when nothing really changed), prompts as
//! slash commands, resources read by the model and attached by `@server:uri` mentions.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::{Value, json};
use skiff_protocol::script::ScriptTurn;
use skiff_testkit::{MockServer, RecordedRequest};

use crate::pty;

/// The test MCP server (node), or `None` (test skipped) where node is missing.
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

fn config(server: &str) -> String {
    json!({"mcpServers": {"rich": {"command": "node", "args": [server]}}}).to_string()
}

async fn mock(turns: Vec<ScriptTurn>) -> MockServer {
    MockServer::builder().turns(turns).start().await.unwrap()
}

/// Run `skiff -p PROMPT` against `mock` with the rich server; stream-json frames out.
async fn run(
    mock: &MockServer,
    server: &str,
    prompt: &str,
    flags: &[&str],
) -> (Output, Vec<Value>) {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_skiff"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("SKIFF_HOME", home.path().join(".skiff"))
        .env("ANTHROPIC_API_KEY", "sk-ant-mcp-offer-test")
        .env("ANTHROPIC_BASE_URL", mock.url())
        .current_dir(ws.path())
        .args(["-p", prompt, "--output-format", "stream-json", "--verbose"])
        .args(["--mcp-config", &config(server)])
        .args(flags);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let frames = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (out, frames)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn tool_names(req: &RecordedRequest) -> Vec<String> {
    req.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// The text of the tool results the last user message of `req` carries.
fn last_results(req: &RecordedRequest) -> Vec<Value> {
    let messages = req.body["messages"].as_array().unwrap();
    messages.last().unwrap()["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "tool_result")
        .cloned()
        .collect()
}

fn result_text(block: &Value) -> String {
    match &block["content"] {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .filter_map(|i| i["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instructions_are_in_the_system_prompt_and_tools_follow_the_servers_changes() {
    let Some(server) = rich_server() else { return };
    let mock = mock(vec![
        ScriptTurn::tool_use("mcp__rich__touch", json!({})),
        ScriptTurn::tool_use("mcp__rich__unlock", json!({})),
        ScriptTurn::tool_use("mcp__rich__secret", json!({})),
        ScriptTurn::tool_use("mcp__rich__lock", json!({})),
        ScriptTurn::tool_use("mcp__rich__secret", json!({})),
        ScriptTurn::text("done"),
    ])
    .await;
    let (out, frames) = run(&mock, &server, "go", &["--allowedTools", "mcp__rich"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let reqs = mock.messages_requests();
    assert_eq!(reqs.len(), 6, "{}", stderr(&out));

    // The instructions: the system prompt's last block, with the server's name; the same
    // bytes in every request.
    let system = reqs[0].body["system"].as_array().unwrap();
    let last = system.last().unwrap();
    let text = last["text"].as_str().unwrap();
    assert!(text.starts_with("# MCP Server Instructions"), "{text}");
    assert!(
        text.contains("## rich\nGreet Ada by name.\nCall `unlock` before"),
        "{text}"
    );
    assert_eq!(last["cache_control"], json!({"type": "ephemeral"}));
    for r in &reqs[1..] {
        assert_eq!(r.body["system"], reqs[0].body["system"]);
    }

    // Tools: the server's and the resource tools; `secret` only between unlock and lock.
    let first = tool_names(&reqs[0]);
    for name in [
        "mcp__rich__env",
        "ListMcpResourcesTool",
        "ReadMcpResourceTool",
    ] {
        assert!(first.contains(&name.to_owned()), "{first:?}");
    }
    assert!(!first.contains(&"mcp__rich__secret".to_owned()));
    // `touch` announced a change that changed nothing: the same bytes.
    assert_eq!(reqs[1].body["tools"], reqs[0].body["tools"]);
    assert!(tool_names(&reqs[2]).contains(&"mcp__rich__secret".to_owned()));
    assert_eq!(result_text(&last_results(&reqs[3])[0]), "the secret is 42");
    assert!(!tool_names(&reqs[4]).contains(&"mcp__rich__secret".to_owned()));
    assert_eq!(reqs[4].body["tools"], reqs[0].body["tools"]);
    let gone = &last_results(&reqs[5])[0];
    assert_eq!(gone["is_error"], true);
    assert_eq!(
        result_text(gone),
        "<tool_use_error>Error: No such tool available: mcp__rich__secret</tool_use_error>"
    );

    // system/init: the server's tools and its prompts as slash commands.
    let init = frames.iter().find(|f| f["subtype"] == "init").unwrap();
    let tools = init["tools"].as_array().unwrap();
    assert!(tools.contains(&json!("mcp__rich__env")), "{init}");
    let commands = init["slash_commands"].as_array().unwrap();
    assert!(commands.contains(&json!("mcp__rich__review")), "{init}");
    assert_eq!(init["mcp_servers"][0]["status"], "connected");
    assert!(mock.violations().is_empty(), "{:?}", mock.violations());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_prompt_is_a_slash_command_whose_messages_reach_the_model() {
    let Some(server) = rich_server() else { return };
    let mock = mock(vec![ScriptTurn::text("reviewed")]).await;
    let (out, frames) = run(
        &mock,
        &server,
        "/mcp__rich__review \"Ada Lovelace\" tests",
        &[],
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let reqs = mock.messages_requests();
    assert_eq!(reqs.len(), 1);
    let content = reqs[0].body["messages"][0]["content"].as_array().unwrap();
    let texts: Vec<&str> = content.iter().filter_map(|b| b["text"].as_str()).collect();
    assert!(
        texts.iter().any(
            |t| t.contains("<command-name>/mcp__rich__review</command-name>")
                && t.contains("<command-args>\"Ada Lovelace\" tests</command-args>")
        ),
        "{texts:?}"
    );
    assert!(
        texts.contains(&"Review the work of Ada Lovelace with a focus on tests."),
        "{texts:?}"
    );
    assert!(
        !texts.iter().any(|t| t.starts_with("/mcp__rich__review")),
        "not sent as plain text: {texts:?}"
    );
    let result = frames.last().unwrap();
    assert_eq!(result["result"], "reviewed");

    // A prompt with an image and a resource: the model gets both.
    let mock = mock_one().await;
    let (out, _) = run(&mock, &server, "/mcp__rich__attached", &[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let content = mock.messages_requests()[0].body["messages"][0]["content"].clone();
    let types: Vec<&str> = content
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["text", "text", "image", "text"], "{content}");

    // A required argument left out, and a prompt the server fails: errors, no model call.
    for (prompt, error) in [
        (
            "/mcp__rich__review",
            "/mcp__rich__review needs the argument \"name\" (usage: /mcp__rich__review <name> [focus])",
        ),
        ("/mcp__rich__broken", "the prompt broke"),
        (
            "/mcp__rich__nope x",
            "Unknown MCP prompt /mcp__rich__nope; the server offers /mcp__rich__review, /mcp__rich__attached, /mcp__rich__broken",
        ),
    ] {
        let mock = mock_one().await;
        let (out, frames) = run(&mock, &server, prompt, &[]).await;
        assert!(!out.status.success(), "{prompt}");
        assert_eq!(mock.messages_requests().len(), 0, "{prompt}");
        let result = frames.last().unwrap();
        assert_eq!(result["is_error"], true);
        assert!(
            result["errors"][0].as_str().unwrap().contains(error),
            "{prompt}: {result}"
        );
    }
}

async fn mock_one() -> MockServer {
    mock(vec![ScriptTurn::text("ok")]).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mentions_attach_resources_and_the_model_lists_and_reads_them() {
    let Some(server) = rich_server() else { return };
    let mock = mock(vec![
        ScriptTurn::tool_use("ListMcpResourcesTool", json!({})),
        ScriptTurn::tool_use(
            "ReadMcpResourceTool",
            json!({"server": "rich", "uri": "memo://logo.png"}),
        ),
        ScriptTurn::tool_use(
            "ReadMcpResourceTool",
            json!({"server": "nope", "uri": "memo://notes"}),
        ),
        ScriptTurn::text("read"),
    ])
    .await;
    // No allow rule: the resource tools read only, they need none.
    let (out, frames) = run(
        &mock,
        &server,
        "Summarize @rich:memo://notes, and @rich:memo://missing.",
        &[],
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let reqs = mock.messages_requests();
    assert_eq!(reqs.len(), 4);
    let first = reqs[0].body["messages"][0]["content"].as_array().unwrap();
    let texts: Vec<&str> = first.iter().filter_map(|b| b["text"].as_str()).collect();
    assert_eq!(
        texts[texts.len() - 2..],
        [
            "<mcp-resource server=\"rich\" uri=\"memo://notes\">\nAda: ship the parser on Friday.\n</mcp-resource>",
            "<mcp-resource server=\"rich\" uri=\"memo://missing\">(could not be read: MCP server \"rich\" returned an error: Resource not found: memo://missing)</mcp-resource>",
        ],
        "{texts:?}"
    );
    assert!(
        texts[0].contains("Summarize @rich:memo://notes"),
        "the prompt as typed: {texts:?}"
    );

    let listed = result_text(&last_results(&reqs[1])[0]);
    let listed: Value = serde_json::from_str(&listed).unwrap();
    assert_eq!(listed[0]["server"], "rich");
    assert_eq!(listed[0]["uri"], "memo://notes");
    let read = &last_results(&reqs[2])[0];
    let blocks = read["content"].as_array().unwrap();
    assert_eq!(blocks[1]["type"], "image", "{read}");
    let missing = &last_results(&reqs[3])[0];
    assert_eq!(missing["is_error"], true);
    assert!(
        result_text(missing).contains("Server \"nope\" not found. Available servers: rich"),
        "{missing}"
    );
    // The structured results clients see: Claude Code's shapes.
    let structured: Vec<&Value> = frames
        .iter()
        .filter(|f| f["type"] == "user" && !f["tool_use_result"].is_null())
        .map(|f| &f["tool_use_result"])
        .collect();
    assert!(structured[0].is_array(), "{:?}", structured[0]);
    assert_eq!(
        structured[1]["contents"][0],
        json!({"uri": "memo://logo.png", "mimeType": "image/png", "blob": "[image, shown below]"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deny_rule_removes_the_resource_tools() {
    let Some(server) = rich_server() else { return };
    let mock = mock_one().await;
    let (out, _) = run(
        &mock,
        &server,
        "hi",
        &["--disallowedTools", "ReadMcpResourceTool"],
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let names = tool_names(&mock.messages_requests()[0]);
    assert!(names.contains(&"ListMcpResourcesTool".to_owned()));
    assert!(
        !names.contains(&"ReadMcpResourceTool".to_owned()),
        "{names:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_repl_lists_the_prompts_and_resources_and_runs_a_prompt() {
    let Some(server) = rich_server() else { return };
    let mock = mock(vec![ScriptTurn::text("Reviewed Ada.")]).await;
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_skiff"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("SKIFF_HOME", home.path().join(".skiff"))
        .env("ANTHROPIC_API_KEY", "sk-ant-mcp-offer-test")
        .env("ANTHROPIC_BASE_URL", mock.url())
        .env("TERM", "xterm")
        // The line REPL (the terminal UI has its own tests, in tmux: tui_tmux.rs).
        .env("SKIFF_TUI", "off")
        .env("NO_COLOR", "1")
        .current_dir(ws.path())
        .args(["--mcp-config", &config(&server)]);
    let status = tokio::task::spawn_blocking(move || {
        let mut s = expectrl::Session::spawn(cmd).unwrap();
        s.set_expect_timeout(Some(std::time::Duration::from_secs(20)));
        let prompt = |s: &mut expectrl::Session| {
            pty::expect(s, "you> ").unwrap();
        };
        prompt(&mut s);
        s.send_line("/help").unwrap();
        pty::expect(&mut s, "MCP prompts:").unwrap();
        pty::expect(&mut s, "/mcp__rich__review <name> [focus]").unwrap();
        pty::expect(&mut s, "Review someone's work (MCP)").unwrap();
        prompt(&mut s);
        s.send_line("/mcp").unwrap();
        pty::expect(
            &mut s,
            "6 tool(s), 3 prompt(s), 4 resource(s), instructions",
        )
        .unwrap();
        pty::expect(&mut s, "/mcp__rich__review").unwrap();
        pty::expect(&mut s, "@rich:memo://notes").unwrap();
        prompt(&mut s);
        s.send_line("/mcp__rich__review Ada").unwrap();
        pty::expect(&mut s, "Reviewed Ada.").unwrap();
        prompt(&mut s);
        s.send(expectrl::ControlCode::EndOfTransmission).unwrap();
        s.get_process_mut().wait().unwrap()
    })
    .await
    .unwrap();
    assert!(
        matches!(status, expectrl::WaitStatus::Exited(_, 0)),
        "{status:?}"
    );
    let sent = mock.messages_requests()[0].body["messages"][0].to_string();
    assert!(sent.contains("Review the work of Ada."), "{sent}");
}
