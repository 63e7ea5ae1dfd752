//! Snapshot (insta) of `skiff -p --output-format stream-json --verbose` for one tool round, as
//! an SDK reads it. Ids, times, paths and the version are redacted; any other change in the
//! frames shows up as a snapshot diff.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

use serde_json::{Value, json};
use skiff_protocol::Usage;
use skiff_protocol::script::{ScriptBlock, ScriptTurn};
use skiff_testkit::MockServer;

fn usage() -> Option<Usage> {
    Some(Usage {
        input_tokens: 200,
        output_tokens: 25,
        cache_creation_input_tokens: Some(0),
        cache_read_input_tokens: Some(0),
        ..Usage::default()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_json_of_a_bash_round() {
    let server = MockServer::builder()
        .turn(ScriptTurn {
            content: vec![
                ScriptBlock::Text {
                    text: "I'll run it.".into(),
                },
                ScriptBlock::ToolUse {
                    id: Some("toolu_01".into()),
                    name: "Bash".into(),
                    input: json!({"command": "echo hi", "description": "Print hi"}),
                },
            ],
            usage: usage(),
            ..ScriptTurn::default()
        })
        .turn(ScriptTurn {
            usage: usage(),
            ..ScriptTurn::text("It printed hi.")
        })
        .start()
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let (url, home_p, ws_p) = (
        server.url(),
        home.path().to_path_buf(),
        ws.path().to_path_buf(),
    );
    let out = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_skiff"))
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &home_p)
            .env("SKIFF_HOME", home_p.join(".skiff"))
            .env("ANTHROPIC_API_KEY", "sk-test")
            .env("ANTHROPIC_BASE_URL", &url)
            .current_dir(&ws_p)
            .args([
                "-p",
                "Say hi with Bash",
                "--output-format",
                "stream-json",
                "--verbose",
            ])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(out.status.success(), "{out:?}");
    let frames: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Keys sorted: serde_json keeps insertion order when a dependency turns on
    // `preserve_order`, and only the content matters here.
    insta::with_settings!({sort_maps => true}, {
        insta::assert_json_snapshot!("bash_round_stream_json", frames, {
            "[].uuid" => "[uuid]",
            "[].session_id" => "[session]",
            "[].timestamp" => "[timestamp]",
            "[].cwd" => "[cwd]",
            "[].duration_ms" => "[ms]",
            "[].duration_api_ms" => "[ms]",
            "[].skiff_version" => "[version]",
            // What this machine's kernel can enforce.
            "[].sandbox" => "[sandbox]",
        });
    });
}
