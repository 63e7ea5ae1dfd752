//! Session transcripts with the real loop against the mock server: what the file holds, and a
//! resumed agent replaying the whole history to the model.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use skiff_core::transcript::{
    JsonlTranscript, TranscriptMeta, list_sessions, load_session, session_path,
};
use skiff_core::{Agent, AgentConfig};
use skiff_llm::{AnthropicConfig, AnthropicProvider, Credential};
use skiff_protocol::script::{ScriptBlock, ScriptTurn};
use skiff_protocol::{Message, MessagesRequest, validate_history};
use skiff_testkit::MockServer;
use skiff_tools::{ToolContext, ToolRegistry};

async fn agent(server: &MockServer, ws: &Path, session_id: &str) -> Agent {
    let mut cfg = AnthropicConfig::new(Credential::api_key("sk-test"));
    cfg.base_url = server.url();
    let config = AgentConfig {
        system_prompt: vec!["You are a test agent.".into()],
        cwd: ws.to_path_buf(),
        session_id: session_id.to_owned(),
        prompt_caching: false,
        memory: Some("<system-reminder>\nmemory\n</system-reminder>".into()),
        progress_interval: Duration::from_millis(200),
        ..AgentConfig::default()
    };
    Agent::new(
        config,
        Arc::new(AnthropicProvider::new(cfg).unwrap()),
        ToolRegistry::with_builtins(),
        ToolContext::new(ws).unwrap(),
    )
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn requests(server: &MockServer) -> Vec<MessagesRequest> {
    server
        .messages_requests()
        .iter()
        .map(|r| serde_json::from_value(r.body.clone()).unwrap())
        .collect()
}

#[tokio::test]
async fn a_session_is_written_and_a_resumed_agent_replays_it() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "alpha\n").unwrap();
    let server = MockServer::builder()
        .turn(ScriptTurn {
            content: vec![
                ScriptBlock::Text {
                    text: "Reading.".into(),
                },
                ScriptBlock::ToolUse {
                    id: Some("toolu_read".into()),
                    name: "Read".into(),
                    input: json!({"file_path": "a.txt"}),
                },
            ],
            ..ScriptTurn::default()
        })
        .turn(ScriptTurn::text("It says alpha."))
        .start()
        .await
        .unwrap();
    let sid = "0b6f4bd2-5f1d-4a51-9d8e-4f1e2a3b4c5d";
    let path = session_path(home.path(), ws.path(), sid);
    let store = Arc::new(JsonlTranscript::new(
        &path,
        TranscriptMeta::new(sid, ws.path()),
    ));
    let mut first = agent(&server, ws.path(), sid)
        .await
        .with_session(store)
        .spawn();
    let r = first.run("what is in a.txt?").finish().await;
    assert!(!r.is_error, "{r:?}");
    let first_history = first.history().await.unwrap();
    // The transcript is written by a writer thread; ending the session flushes it.
    first.shutdown().await;

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    let written = lines(&path);
    let kinds: Vec<&str> = written
        .iter()
        .map(|l| l["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["user", "assistant", "user", "assistant"],
        "one line per message"
    );
    assert_eq!(written[1]["message"]["stop_reason"], "tool_use");
    assert_eq!(written[3]["message"]["stop_reason"], "end_turn");
    assert!(written[3]["message"]["usage"]["output_tokens"].is_u64());
    assert_eq!(written[2]["toolUseResult"]["type"], "text");
    for (i, l) in written.iter().enumerate() {
        assert_eq!(l["sessionId"], sid);
        if i > 0 {
            assert_eq!(l["parentUuid"], written[i - 1]["uuid"]);
        }
    }

    // Resume: the loaded history is exactly the first agent's.
    let loaded = load_session(&path).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(loaded.messages, first_history);
    assert_eq!(loaded.first_prompt.as_deref(), Some("what is in a.txt?"));
    let listed = list_sessions(home.path(), ws.path());
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, sid);

    let server2 = MockServer::builder()
        .turn(ScriptTurn::text("Still alpha."))
        .start()
        .await
        .unwrap();
    let store = Arc::new(
        JsonlTranscript::new(&path, TranscriptMeta::new(sid, ws.path()))
            .continue_from(loaded.leaf_uuid.clone()),
    );
    let mut resumed = agent(&server2, ws.path(), sid)
        .await
        .with_history(loaded.messages.clone())
        .with_session(store)
        .spawn();
    let r = resumed.run("and now?").finish().await;
    assert!(!r.is_error, "{r:?}");
    let resumed_history = resumed.history().await.unwrap();
    resumed.shutdown().await;
    let reqs = requests(&server2);
    assert_eq!(reqs.len(), 1);
    let mut expected: Vec<Message> = first_history.clone();
    expected.push(Message::user_text("and now?"));
    assert_eq!(
        reqs[0].messages, expected,
        "full history, then the new prompt"
    );
    validate_history(&reqs[0].messages).unwrap();
    // No memory reminder the second time.
    assert!(
        !serde_json::to_string(&reqs[0].messages[4])
            .unwrap()
            .contains("memory")
    );

    // Same file, chain continued.
    let written = lines(&path);
    assert_eq!(written.len(), 6);
    assert_eq!(written[4]["parentUuid"], written[3]["uuid"]);
    let reloaded = load_session(&path).unwrap();
    assert_eq!(reloaded.messages, resumed_history);
}

#[tokio::test]
async fn an_interrupted_tool_round_is_recorded_with_its_interrupted_results() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let server = MockServer::builder()
        .turn(ScriptTurn::tool_use("Bash", json!({"command": "sleep 30"})))
        .turn(ScriptTurn::text("never"))
        .start()
        .await
        .unwrap();
    let sid = "interrupted";
    let path = session_path(home.path(), ws.path(), sid);
    let store = Arc::new(JsonlTranscript::new(
        &path,
        TranscriptMeta::new(sid, ws.path()),
    ));
    let mut a = agent(&server, ws.path(), sid)
        .await
        .with_session(store)
        .spawn();
    let run = a.run("sleep");
    let cancel = run.interrupt_handle();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        cancel.interrupt();
    });
    let r = run.finish().await;
    assert!(r.is_error);
    let history = a.history().await.unwrap();
    a.shutdown().await;
    let loaded = load_session(&path).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(loaded.messages, history);
    validate_history(&loaded.messages).unwrap();
}

#[tokio::test]
async fn trims_are_rare_and_recorded_as_small_markers_that_reload_to_the_same_history() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "alpha\n").unwrap();
    let mut turns: Vec<ScriptTurn> = (0..10)
        .map(|_| ScriptTurn::tool_use("Read", json!({"file_path": "a.txt"})))
        .collect();
    turns.push(ScriptTurn::text("done"));
    let server = MockServer::builder().turns(turns).start().await.unwrap();
    let sid = "trimmed";
    let path = session_path(home.path(), ws.path(), sid);
    let store = Arc::new(JsonlTranscript::new(
        &path,
        TranscriptMeta::new(sid, ws.path()),
    ));
    let mut a = agent(&server, ws.path(), sid).await;
    a.config_mut().max_messages = Some(6);
    let mut session = a.with_session(store).spawn();
    let mut run = session.run("read it ten times");
    let mut trims = 0;
    while let Some(f) = futures::StreamExt::next(&mut run).await {
        if let skiff_protocol::sdk::SdkMessage::System(
            skiff_protocol::sdk::SystemMessage::Informational(i),
        ) = &f
            && i.kind == "trim"
        {
            trims += 1;
        }
    }
    drop(run);
    let history = session.history().await.unwrap();
    session.shutdown().await;

    let reqs = requests(&server);
    assert_eq!(reqs.len(), 11);
    for req in &reqs {
        assert!(req.messages.len() <= 6, "{}", req.messages.len());
    }
    // Trimmed to about half the limit, so not before every call once the limit is reached.
    assert!((1..=4).contains(&trims), "{trims} trims in 11 calls");
    let written = lines(&path);
    let markers = written
        .iter()
        .filter(|l| l["subtype"] == "skiff_trim")
        .count();
    assert_eq!(markers, trims);
    let messages = written
        .iter()
        .filter(|l| l["type"] == "user" || l["type"] == "assistant")
        .count();
    // 1 prompt + 10 × (call, result) + the answer, each written once.
    assert_eq!(messages, 22);
    assert_eq!(written.len(), messages + markers);
    let loaded = load_session(&path).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(loaded.messages, history);
    validate_history(&loaded.messages).unwrap();
}
