//! Custom slash commands and skills end to end: `skiff -p "/fix 42"` sends the expanded
//! command to the model, `system/init` lists it, an untrusted workspace's commands are not
//! used, `!` commands nobody granted do not run in print mode, the model loads a skill with
//! the Skill tool, and the Agent SDK protocol's `initialize` lists the commands and expands a
//! `/name` user message.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};
use skiff_protocol::script::{Script, ScriptTurn};
use skiff_testkit::MockServer;

use crate::pty;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// skiff in `ws` with a clean environment (temp HOME) against the mock server.
fn skiff(home: &Path, ws: &Path, url: &str) -> Command {
    let mut c = skiff_testkit::skiff_command!(home);
    c.env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", url)
        // These tests are about which `!` commands the rules let run; with the sandbox on,
        // sandboxed Bash needs no approval (the sandbox has its own tests).
        .env("SKIFF_SANDBOX", "off")
        .current_dir(ws);
    c
}

async fn output(mut cmd: Command) -> Output {
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

fn frames(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect()
}

/// The text blocks of the last user message of the `n`th request (repl.rs uses it too).
pub(crate) fn user_texts(server: &MockServer, n: usize) -> Vec<String> {
    let reqs = server.messages_requests();
    let msgs = reqs[n].body["messages"].as_array().unwrap();
    let last = msgs.last().unwrap();
    match &last["content"] {
        Value::String(s) => vec![s.clone()],
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .map(|b| b["text"].as_str().unwrap().to_owned())
            .collect(),
        other => panic!("content {other}"),
    }
}

async fn server(turns: Vec<ScriptTurn>) -> MockServer {
    MockServer::start(Script {
        turns,
        ..Script::default()
    })
    .await
    .unwrap()
}

const FIX: &str = "---\ndescription: Fix a numbered issue\nargument-hint: [issue-number]\n---\nFix issue #$ARGUMENTS, then run the tests.";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn print_mode_sends_the_expanded_command_and_init_lists_it() {
    let server = server(vec![ScriptTurn::text("Fixed it.")]).await;
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), ".claude/commands/fix.md", FIX);
    write(
        ws.path(),
        ".claude/skills/pdf/SKILL.md",
        "---\ndescription: PDFs\n---\nUse pypdf.",
    );
    let mut cmd = skiff(home.path(), ws.path(), &server.url());
    cmd.args([
        "--trust",
        "-p",
        "/fix 42",
        "--output-format",
        "stream-json",
        "--verbose",
    ]);
    let out = output(cmd).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let f = frames(&out.stdout);
    assert_eq!(f[0]["subtype"], "init");
    let slash = f[0]["slash_commands"].as_array().unwrap();
    assert!(
        slash.contains(&json!("fix")) && slash.contains(&json!("pdf")),
        "{slash:?}"
    );
    assert!(
        slash.contains(&json!("compact")),
        "built-ins are listed too: {slash:?}"
    );
    assert_eq!(f[0]["skills"], json!(["pdf"]));
    assert!(f[0]["tools"].as_array().unwrap().contains(&json!("Skill")));
    assert_eq!(f.last().unwrap()["result"], "Fixed it.");
    assert_eq!(
        user_texts(&server, 0),
        [
            "<command-message>fix is running…</command-message>\n<command-name>/fix</command-name>\n<command-args>42</command-args>",
            "Fix issue #42, then run the tests.",
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_workspaces_commands_are_not_used() {
    let server = server(vec![ScriptTurn::text("ok")]).await;
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), ".claude/commands/fix.md", FIX);
    let mut cmd = skiff(home.path(), ws.path(), &server.url());
    cmd.args(["-p", "/fix 42"]);
    let out = output(cmd).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "ignoring the commands and skills in .claude/commands: this workspace is not trusted"
        ),
        "{stderr}"
    );
    assert_eq!(user_texts(&server, 0), ["/fix 42"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bang_commands_run_only_when_the_rules_allow_them() {
    let server = server(vec![ScriptTurn::text("a"), ScriptTurn::text("b")]).await;
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    write(
        ws.path(),
        ".claude/commands/status.md",
        "Branch: !`echo main`\nMade: !`touch made.txt && echo made`",
    );
    let mut cmd = skiff(home.path(), ws.path(), &server.url());
    cmd.args(["--trust", "-p", "/status"]);
    let out = output(cmd).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !ws.path().join("made.txt").exists(),
        "an ungranted command ran"
    );
    let texts = user_texts(&server, 0);
    assert!(texts[1].starts_with("Branch: main\nMade: (not run: Bash command permission check failed for pattern \"!`touch made.txt && echo made`\""), "{texts:?}");

    let mut cmd = skiff(home.path(), ws.path(), &server.url());
    cmd.args([
        "--trust",
        "-p",
        "/status",
        "--allowedTools",
        "Bash(touch made.txt)",
    ]);
    let out = output(cmd).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(ws.path().join("made.txt").exists());
    assert_eq!(user_texts(&server, 1)[1], "Branch: main\nMade: made");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_loads_a_skill_with_the_skill_tool() {
    let server = server(vec![
        ScriptTurn::tool_use("Skill", json!({"skill": "review", "args": "src/lib.rs"})),
        ScriptTurn::text("Reviewed."),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    write(
        home.path(),
        ".skiff/skills/review/SKILL.md",
        "---\nname: review\ndescription: Review code for bugs\n---\nReview $ARGUMENTS against ${CLAUDE_SKILL_DIR}/checklist.md.",
    );
    let mut cmd = skiff(home.path(), ws.path(), &server.url());
    cmd.args(["-p", "review my code", "--output-format", "json"]);
    let out = output(cmd).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reqs = server.messages_requests();
    let skill = reqs[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "Skill")
        .unwrap()
        .clone();
    assert!(
        skill["description"]
            .as_str()
            .unwrap()
            .contains("- review: Review code for bugs")
    );
    let last = reqs[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    let result = &last["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_ne!(result["is_error"], json!(true), "{result}");
    let dir = std::fs::canonicalize(home.path())
        .unwrap()
        .join(".skiff/skills/review");
    assert_eq!(result["content"][0]["text"], "Launching skill: review");
    assert_eq!(
        result["content"][1]["text"],
        format!(
            "Base directory for this skill: {d}\n\nReview src/lib.rs against {d}/checklist.md.",
            d = dir.display()
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sdk_protocol_lists_commands_and_expands_slash_messages() {
    let server = server(vec![ScriptTurn::text("done")]).await;
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), ".claude/commands/fix.md", FIX);
    let mut cmd = skiff(home.path(), ws.path(), &server.url());
    cmd.args([
        "--trust",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
    ])
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let out = tokio::task::spawn_blocking(move || {
        let mut child = cmd.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        writeln!(
            stdin,
            "{}",
            json!({"type": "control_request", "request_id": "req_1", "request": {"subtype": "initialize", "hooks": null}})
        )
        .unwrap();
        writeln!(
            stdin,
            "{}",
            json!({"type": "user", "session_id": "", "message": {"role": "user", "content": "/fix 7"}, "parent_tool_use_id": null})
        )
        .unwrap();
        drop(stdin);
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let f = frames(&out.stdout);
    let init = f.iter().find(|v| v["type"] == "control_response").unwrap();
    assert_eq!(
        init["response"]["response"]["commands"],
        // The built-ins Claude Code lists there (issue 36), then the workspace's own.
        json!([
            {"name": "compact", "description": "Clear conversation history but keep a summary in context. Optional: /compact [instructions for summarization]", "argumentHint": "<optional custom summarization instructions>"},
            {"name": "clear", "description": "Clear conversation history and free up context", "argumentHint": ""},
            {"name": "fix", "description": "Fix a numbered issue", "argumentHint": "[issue-number]"}
        ])
    );
    assert!(
        f.iter()
            .any(|v| v["type"] == "result" && v["result"] == "done")
    );
    assert_eq!(
        user_texts(&server, 0)[1],
        "Fix issue #7, then run the tests."
    );
}

/// Wait for the REPL's prompt (or question).
fn repl_prompt(s: &mut expectrl::Session, text: &str) {
    pty::expect(s, text).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_repl_lists_custom_commands_and_asks_before_their_commands_run() {
    let server = server(vec![ScriptTurn::text("Hello, Bob!")]).await;
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    write(
        home.path(),
        ".claude/commands/hello.md",
        "---\ndescription: Greet someone\nargument-hint: [name]\n---\nGreet $ARGUMENTS. Marker: !`touch marker.txt && echo touched`",
    );
    let mut cmd = skiff(home.path(), ws.path(), &server.url());
    // The line REPL (the terminal UI has its own tests, in tmux: tui_tmux.rs).
    cmd.env("TERM", "xterm")
        .env("SKIFF_TUI", "off")
        .env("NO_COLOR", "1");
    let ws_p = ws.path().to_path_buf();
    let status = tokio::task::spawn_blocking(move || {
        let mut s = expectrl::Session::spawn(cmd).unwrap();
        s.set_expect_timeout(Some(std::time::Duration::from_secs(20)));
        repl_prompt(&mut s, "you> ");
        s.send_line("/help").unwrap();
        pty::expect(&mut s, "Custom commands and skills:").unwrap();
        pty::expect(&mut s, "/hello [name]").unwrap();
        pty::expect(&mut s, "Greet someone (user)").unwrap();
        repl_prompt(&mut s, "you> ");
        s.send_line("/hello Bob").unwrap();
        pty::expect(&mut s, "needs your approval").unwrap();
        repl_prompt(&mut s, "Allow it?");
        s.send_line("y").unwrap();
        pty::expect(&mut s, "Hello, Bob!").unwrap();
        assert!(ws_p.join("marker.txt").exists());
        repl_prompt(&mut s, "you> ");
        s.send(expectrl::ControlCode::EndOfTransmission).unwrap();
        s.get_process_mut().wait().unwrap()
    })
    .await
    .unwrap();
    assert!(
        matches!(status, expectrl::WaitStatus::Exited(_, 0)),
        "{status:?}"
    );
    assert_eq!(user_texts(&server, 0)[1], "Greet Bob. Marker: touched");
}
