//! The REPL driven through a pseudo-terminal against the mock server: streamed answers, slash
//! commands, Ctrl-C during a long tool, Ctrl-D.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::{Duration, Instant};

use expectrl::{ControlCode, Session};
use serde_json::json;
use skiff_protocol::script::ScriptTurn;
use skiff_testkit::MockServer;

use crate::pty;

fn spawn_repl(url: &str, home: &std::path::Path, ws: &std::path::Path) -> Session {
    let mut cmd = repl_command(url, home, ws);
    cmd.env("TERM", "xterm")
        // The line REPL (the terminal UI has its own tests, in tmux: tui_tmux.rs).
        .env("SKIFF_TUI", "off")
        .env("NO_COLOR", "1")
        // The approval prompts are under test; sandboxed Bash would need none (the sandbox has
        // its own tests).
        .env("SKIFF_SANDBOX", "off");
    spawn(cmd)
}

/// skiff in `ws` against the mock at `url`, before the terminal's settings.
fn repl_command(url: &str, home: &std::path::Path, ws: &std::path::Path) -> std::process::Command {
    let mut cmd = skiff_testkit::skiff_command!(home);
    cmd.env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", url)
        .current_dir(ws);
    cmd
}

fn spawn(cmd: std::process::Command) -> Session {
    let mut s = Session::spawn(cmd).unwrap();
    s.set_expect_timeout(Some(Duration::from_secs(20)));
    s
}

/// Wait for the prompt.
fn prompt(s: &mut Session) {
    pty::expect(s, "you> ").unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repl_streams_answers_and_runs_slash_commands() {
    let server = MockServer::builder()
        .turn(ScriptTurn::text("Hello from the REPL mock"))
        .turn(ScriptTurn::text("Second answer"))
        .start()
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let url = server.url();
    let (home_p, ws_p) = (home.path().to_path_buf(), ws.path().to_path_buf());
    let status = tokio::task::spawn_blocking(move || {
        let mut s = spawn_repl(&url, &home_p, &ws_p);
        prompt(&mut s);
        s.send_line("hi").unwrap();
        pty::expect(&mut s, "Hello from the REPL mock").unwrap();
        pty::expect(&mut s, "session").unwrap();
        prompt(&mut s);
        s.send_line("/cost").unwrap();
        pty::expect(&mut s, "Session cost: $").unwrap();
        prompt(&mut s);
        s.send_line("/nosuch").unwrap();
        pty::expect(&mut s, "Unknown command /nosuch").unwrap();
        prompt(&mut s);
        s.send_line("/clear").unwrap();
        pty::expect(&mut s, "Started a new conversation.").unwrap();
        prompt(&mut s);
        s.send_line("again").unwrap();
        pty::expect(&mut s, "Second answer").unwrap();
        prompt(&mut s);
        s.send(ControlCode::EndOfTransmission).unwrap();
        s.get_process_mut().wait().unwrap()
    })
    .await
    .unwrap();
    assert!(
        matches!(status, expectrl::WaitStatus::Exited(_, 0)),
        "{status:?}"
    );
    let reqs = server.messages_requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(
        reqs[1].body["messages"].as_array().unwrap().len(),
        1,
        "/clear started over"
    );
    assert!(
        home.path().join(".skiff/history").exists(),
        "history file written"
    );
}

/// On a dumb terminal (an editor's shell buffer) the REPL writes no escape sequences and asks
/// nothing (`pty::expect` fails on a query); the terminal edits the line, Ctrl-C drops what was
/// typed, a trailing `\` continues the entry on the next line, and the history keeps it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dumb_terminal_gets_plain_lines_with_continuations() {
    let server = MockServer::builder()
        .turn(ScriptTurn::text("Answer to two lines"))
        .start()
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let url = server.url();
    let (home_p, ws_p) = (home.path().to_path_buf(), ws.path().to_path_buf());
    let (status, seen) = tokio::task::spawn_blocking(move || {
        // Colours left on (no NO_COLOR): the dumb terminal alone turns them off.
        let mut cmd = repl_command(&url, &home_p, &ws_p);
        cmd.env("TERM", "dumb");
        let mut s = spawn(cmd);
        prompt(&mut s);
        // Typed, then dropped by Ctrl-C: the terminal discards the line.
        s.send("never sent").unwrap();
        std::thread::sleep(Duration::from_millis(200));
        s.send(ControlCode::EndOfText).unwrap();
        pty::expect(&mut s, "Ctrl-C again").unwrap();
        prompt(&mut s);
        s.send_line("two \\").unwrap();
        pty::expect(&mut s, "... ").unwrap();
        s.send_line("lines").unwrap();
        pty::expect(&mut s, "Answer to two lines").unwrap();
        prompt(&mut s);
        s.send(ControlCode::EndOfTransmission).unwrap();
        let mut rest = Vec::new();
        let _ = std::io::Read::read_to_end(&mut s, &mut rest);
        (s.get_process_mut().wait().unwrap(), rest)
    })
    .await
    .unwrap();
    assert!(
        matches!(status, expectrl::WaitStatus::Exited(_, 0)),
        "{status:?}"
    );
    assert!(
        !seen.contains(&0x1b),
        "escape sequences on a dumb terminal: {:?}",
        String::from_utf8_lossy(&seen)
    );
    let reqs = server.messages_requests();
    assert_eq!(reqs.len(), 1, "the dropped line was not sent");
    let texts = crate::slash_commands::user_texts(&server, 0);
    assert_eq!(texts.last().map(String::as_str), Some("two \nlines"));
    let history = std::fs::read_to_string(home.path().join(".skiff/history")).unwrap();
    assert_eq!(history, "two <\\n>lines\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_interrupts_a_long_tool_and_the_next_prompt_works() {
    let server = MockServer::builder()
        .turn(ScriptTurn::tool_use("Bash", json!({"command": "sleep 30"})))
        .turn(ScriptTurn::text("answer after the interrupt"))
        .start()
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let url = server.url();
    let (home_p, ws_p) = (home.path().to_path_buf(), ws.path().to_path_buf());
    let (status, interrupted_after) = tokio::task::spawn_blocking(move || {
        let mut s = spawn_repl(&url, &home_p, &ws_p);
        prompt(&mut s);
        s.send_line("sleep a while").unwrap();
        pty::expect(&mut s, "Bash(sleep 30)").unwrap();
        std::thread::sleep(Duration::from_millis(500));
        let t = Instant::now();
        s.send(ControlCode::EndOfText).unwrap();
        pty::expect(&mut s, "Interrupted").unwrap();
        let interrupted_after = t.elapsed();
        prompt(&mut s);
        s.send_line("go on").unwrap();
        pty::expect(&mut s, "answer after the interrupt").unwrap();
        prompt(&mut s);
        // Ctrl-C twice at an empty prompt exits.
        s.send(ControlCode::EndOfText).unwrap();
        pty::expect(&mut s, "Ctrl-C again").unwrap();
        prompt(&mut s);
        s.send(ControlCode::EndOfText).unwrap();
        (s.get_process_mut().wait().unwrap(), interrupted_after)
    })
    .await
    .unwrap();
    assert!(
        interrupted_after < Duration::from_secs(10),
        "{interrupted_after:?}"
    );
    assert!(
        matches!(status, expectrl::WaitStatus::Exited(_, 0)),
        "{status:?}"
    );
    let reqs = server.messages_requests();
    assert_eq!(reqs.len(), 2);
    // The interrupted tool call was answered, so the second request's history is valid.
    let req: skiff_protocol::MessagesRequest =
        serde_json::from_value(reqs[1].body.clone()).unwrap();
    skiff_protocol::validate_history(&req.messages).unwrap();
}

/// Wait for an approval question (after the call is shown).
fn question(s: &mut Session, text: &str) {
    pty::expect(s, "needs your approval.").unwrap();
    pty::expect(s, text).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_yes_always_and_no_with_feedback() {
    let server = MockServer::builder()
        .turn(ScriptTurn::tool_use(
            "Bash",
            json!({"command": "touch one"}),
        ))
        .turn(ScriptTurn::tool_use(
            "Bash",
            json!({"command": "touch two"}),
        ))
        .turn(ScriptTurn::tool_use(
            "Bash",
            json!({"command": "cd . && touch two"}),
        ))
        .turn(ScriptTurn::tool_use(
            "Write",
            json!({"file_path": "w.txt", "content": "new line\n"}),
        ))
        .turn(ScriptTurn::text("all done"))
        .start()
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let url = server.url();
    let (home_p, ws_p) = (home.path().to_path_buf(), ws.path().to_path_buf());
    let status = tokio::task::spawn_blocking(move || {
        let mut s = spawn_repl(&url, &home_p, &ws_p);
        prompt(&mut s);
        s.send_line("make files").unwrap();
        question(&mut s, "Allow it?");
        s.send_line("y").unwrap();
        question(&mut s, "[a]lways: allow Bash(touch two:*)");
        s.send_line("a").unwrap();
        pty::expect(&mut s, "Added Bash(touch two:*)").unwrap();
        // The third call runs the same command after a `cd`: the rule covers it, it is not
        // asked again. The Write shows its diff.
        pty::expect(&mut s, "Write(w.txt) needs your approval.").unwrap();
        pty::expect(&mut s, "+new line").unwrap();
        pty::expect(&mut s, "Allow it?").unwrap();
        s.send_line("put it in other.txt instead").unwrap();
        pty::expect(&mut s, "all done").unwrap();
        prompt(&mut s);
        s.send_line("/permissions").unwrap();
        pty::expect(&mut s, "Bash(touch two:*)").unwrap();
        prompt(&mut s);
        s.send_line("/mode plan").unwrap();
        pty::expect(&mut s, "Permission mode set to plan").unwrap();
        prompt(&mut s);
        s.send(ControlCode::EndOfTransmission).unwrap();
        s.get_process_mut().wait().unwrap()
    })
    .await
    .unwrap();
    assert!(
        matches!(status, expectrl::WaitStatus::Exited(_, 0)),
        "{status:?}"
    );
    assert!(ws.path().join("one").exists() && ws.path().join("two").exists());
    assert!(!ws.path().join("w.txt").exists());
    let local = std::fs::read_to_string(ws.path().join(".skiff/settings.local.json")).unwrap();
    assert!(local.contains("\"Bash(touch two:*)\""), "{local}");
    let reqs = server.messages_requests();
    assert_eq!(reqs.len(), 5);
    let last = reqs[4].body["messages"].to_string();
    assert!(
        last.contains("To tell you how to proceed, the user said:\\nput it in other.txt instead"),
        "{last}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repl_shows_todos_and_lists_and_stops_background_commands() {
    let todos = json!({"todos": [
        {"content": "Start the server", "activeForm": "Starting the server", "status": "in_progress"},
        {"content": "Check it", "activeForm": "Checking it", "status": "pending"}
    ]});
    let server = MockServer::start(
        serde_json::from_value(json!({"turns": [
            {"content": [{"type": "tool_use", "name": "TodoWrite", "input": todos}]},
            {"content": [{"type": "tool_use", "name": "Bash",
                "input": {"command": "sleep 300", "run_in_background": true}}]},
            {"content": [{"type": "text", "text": "Server started."}]}
        ]}))
        .unwrap(),
    )
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let url = server.url();
    let (home_p, ws_p) = (home.path().to_path_buf(), ws.path().to_path_buf());
    let status = tokio::task::spawn_blocking(move || {
        let mut s = spawn_repl(&url, &home_p, &ws_p);
        prompt(&mut s);
        s.send_line("start the server").unwrap();
        pty::expect(&mut s, "◐ Starting the server").unwrap();
        pty::expect(&mut s, "☐ Check it").unwrap();
        pty::expect(&mut s, "Server started.").unwrap();
        prompt(&mut s);
        s.send_line("/bashes").unwrap();
        let found = s
            .expect(expectrl::Regex(r"(b[0-9a-z]{8})  running"))
            .unwrap();
        let id = String::from_utf8_lossy(found.get(1).unwrap()).into_owned();
        prompt(&mut s);
        s.send_line(format!("/bashes stop {id}")).unwrap();
        pty::expect(&mut s, format!("Stopped {id} (sleep 300).").as_str()).unwrap();
        prompt(&mut s);
        s.send(ControlCode::EndOfTransmission).unwrap();
        s.get_process_mut().wait().unwrap()
    })
    .await
    .unwrap();
    assert!(
        matches!(status, expectrl::WaitStatus::Exited(_, 0)),
        "{status:?}"
    );
}
