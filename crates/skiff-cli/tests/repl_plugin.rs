//! `/plugin` in the REPL, through a pseudo-terminal: a marketplace added, a plugin installed
//! after the question is answered, listed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;
use std::time::Duration;

use expectrl::{ControlCode, Session};
use skiff_protocol::script::ScriptTurn;
use skiff_testkit::MockServer;

use crate::pty;

/// Wait for a prompt of the line REPL.
fn prompt(s: &mut Session, text: &str) {
    pty::expect(s, text).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plugins_are_managed_from_the_repl() {
    let server = MockServer::builder()
        .turn(ScriptTurn::text("unused"))
        .start()
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let (home, ws, mkt) = (root.join("home"), root.join("ws"), root.join("mkt"));
    for d in [&home, &ws] {
        std::fs::create_dir_all(d).unwrap();
    }
    let w = |rel: &str, text: &str| {
        let p = mkt.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    w(
        ".claude-plugin/marketplace.json",
        r#"{"name": "m", "owner": {"name": "t"}, "plugins": [{"name": "demo", "source": "./demo"}]}"#,
    );
    w(
        "demo/.claude-plugin/plugin.json",
        r#"{"name": "demo", "version": "0.1.0"}"#,
    );
    w("demo/commands/hello.md", "Hello");
    let url = server.url();
    let (home_p, ws_p, mkt_p) = (home.clone(), ws.clone(), mkt.clone());
    let status = tokio::task::spawn_blocking(move || {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_skiff"));
        cmd.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &home_p)
            .env("SKIFF_HOME", home_p.join(".skiff"))
            .env("TERM", "xterm")
            // The line REPL (the terminal UI has its own tests, in tmux: tui_tmux.rs).
            .env("SKIFF_TUI", "off")
            .env("NO_COLOR", "1")
            .env("ANTHROPIC_API_KEY", "sk-test")
            .env("ANTHROPIC_BASE_URL", url)
            .current_dir(&ws_p);
        let mut s = Session::spawn(cmd).unwrap();
        s.set_expect_timeout(Some(Duration::from_secs(20)));
        prompt(&mut s, "you> ");
        s.send_line("/plugin").unwrap();
        pty::expect(&mut s, "No plugins installed.").unwrap();
        prompt(&mut s, "you> ");
        s.send_line(format!("/plugin marketplace add {}", mkt_p.display()))
            .unwrap();
        pty::expect(&mut s, "Added marketplace \"m\" (1 plugin)").unwrap();
        prompt(&mut s, "you> ");
        s.send_line("/plugin install demo@m").unwrap();
        pty::expect(&mut s, "commands     /demo:hello").unwrap();
        prompt(&mut s, "[y/N] ");
        s.send_line("y").unwrap();
        pty::expect(&mut s, "Installed demo@m 0.1.0").unwrap();
        prompt(&mut s, "you> ");
        s.send_line("/plugin list").unwrap();
        pty::expect(&mut s, "demo@m  0.1.0  local copy  enabled").unwrap();
        prompt(&mut s, "you> ");
        s.send_line("/plugin frobnicate").unwrap();
        pty::expect(&mut s, "unrecognized subcommand").unwrap();
        prompt(&mut s, "you> ");
        s.send(ControlCode::EndOfTransmission).unwrap();
        s.get_process_mut().wait().unwrap()
    })
    .await
    .unwrap();
    assert!(
        matches!(status, expectrl::WaitStatus::Exited(_, 0)),
        "{status:?}"
    );
    let settings = std::fs::read_to_string(home.join(".skiff/settings.json")).unwrap();
    assert!(settings.contains("\"demo@m\": true"), "{settings}");
}
