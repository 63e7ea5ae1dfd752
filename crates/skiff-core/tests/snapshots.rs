//! Snapshots (insta) of what skiff sends and emits for one tool round: the two request bodies
//! and the stream-json frames. Ids, times and paths are redacted; any other change in shape
//! shows up as a snapshot diff (`cargo insta review`, or `INSTA_UPDATE=always` to accept).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use futures::StreamExt;
use serde_json::{Value, json};
use skiff_core::{Agent, AgentConfig, DeltaMode};
use skiff_llm::{AnthropicConfig, AnthropicProvider, Credential};
use skiff_protocol::Usage;
use skiff_protocol::script::{ScriptBlock, ScriptTurn};
use skiff_testkit::MockServer;
use skiff_tools::{ToolContext, ToolRegistry};

fn usage() -> Option<Usage> {
    Some(Usage {
        input_tokens: 120,
        output_tokens: 30,
        cache_creation_input_tokens: Some(0),
        cache_read_input_tokens: Some(0),
        ..Usage::default()
    })
}

#[tokio::test]
async fn a_tool_round_requests_and_frames() {
    let server = MockServer::builder()
        .turn(ScriptTurn {
            content: vec![
                ScriptBlock::Text {
                    text: "Let me read it.".into(),
                },
                ScriptBlock::ToolUse {
                    id: Some("toolu_01".into()),
                    name: "Read".into(),
                    input: json!({"file_path": "a.txt"}),
                },
            ],
            usage: usage(),
            ..ScriptTurn::default()
        })
        .turn(ScriptTurn {
            usage: usage(),
            ..ScriptTurn::text("It says alpha.")
        })
        .start()
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let mut cfg = AnthropicConfig::new(Credential::api_key("sk-test"));
    cfg.base_url = server.url();
    let config = AgentConfig {
        system_prompt: vec!["You are a test agent.".into()],
        memory: Some("<system-reminder>\nmemory\n</system-reminder>".into()),
        cwd: dir.path().to_path_buf(),
        session_id: "00000000-0000-4000-8000-000000000000".into(),
        deltas: DeltaMode::Off,
        ..AgentConfig::default()
    };
    let mut session = Agent::new(
        config,
        Arc::new(AnthropicProvider::new(cfg).unwrap()),
        ToolRegistry::with_builtins(),
        ToolContext::new(dir.path()).unwrap(),
    )
    .spawn();
    let frames: Vec<Value> = session
        .run("What is in a.txt?")
        .map(|f| serde_json::to_value(f).unwrap())
        .collect()
        .await;
    session.shutdown().await;

    let bodies: Vec<Value> = server
        .messages_requests()
        .iter()
        .map(|r| r.body.clone())
        .collect();
    // Keys sorted: serde_json keeps insertion order when a dependency turns on
    // `preserve_order`, and only the content matters here.
    insta::with_settings!({sort_maps => true}, {
        insta::assert_json_snapshot!("tool_round_requests", bodies, {
            "[].tools[].description" => "[description]",
            "[].tools[].input_schema" => "[schema]",
        });
        insta::assert_json_snapshot!("tool_round_frames", frames, {
            "[].uuid" => "[uuid]",
            "[].timestamp" => "[timestamp]",
            "[].cwd" => "[cwd]",
            "[].tool_use_result.file.filePath" => "[path]",
            "[].duration_ms" => "[ms]",
            "[].duration_api_ms" => "[ms]",
            "[].skiff_version" => "[version]",
        });
    });
}
