//! The example program against the mock: it reads the user's settings (the model), refuses
//! the call that needs approval, and prints the final answer.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

use serde_json::json;
use skiff_protocol::script::ScriptTurn;
use skiff_testkit::MockServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_uses_the_users_settings_and_refuses_what_needs_approval() {
    let server = MockServer::builder()
        .turn(ScriptTurn::tool_use(
            "Write",
            json!({"file_path": "planted.txt", "content": "x"}),
        ))
        .turn(ScriptTurn::text("The write was refused."))
        .start()
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".claude")).unwrap();
    std::fs::write(
        home.path().join(".claude/settings.json"),
        r#"{"model": "claude-from-user-settings"}"#,
    )
    .unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_skiff-embed-example"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", server.url())
        .current_dir(ws.path())
        .arg("Write planted.txt");
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .unwrap()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(stdout.trim(), "The write was refused.");
    assert!(!ws.path().join("planted.txt").exists());
    let requests = server.messages_requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].body["model"], "claude-from-user-settings");
    let result = &requests[1].body["messages"][2]["content"][0];
    assert_eq!(result["is_error"], true, "{result}");
    assert!(server.violations().is_empty(), "{:?}", server.violations());
}
