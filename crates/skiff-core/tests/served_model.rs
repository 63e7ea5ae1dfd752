//! What an OpenAI-compatible server says about its model (context window, max output tokens,
//! prices) drives compaction and cost, unless the settings say otherwise; a server that is slow
//! or fails to say anything changes nothing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use skiff_core::{Agent, AgentConfig, DeltaMode, Event};
use skiff_llm::{OpenAiConfig, OpenAiProvider, Provider};
use skiff_protocol::Usage;
use skiff_protocol::script::{ScriptBlock, ScriptTurn};
use skiff_protocol::sdk::{ResultMessage, SdkMessage, SystemMessage};
use skiff_testkit::MockServer;
use skiff_testkit::openai::ModelMetadata;
use skiff_tools::{ToolContext, ToolRegistry};

const MODEL: &str = "qwen2.5-coder:7b";

fn read(input_tokens: u64) -> ScriptTurn {
    ScriptTurn {
        content: vec![ScriptBlock::ToolUse {
            id: None,
            name: "Read".into(),
            input: json!({"file_path": "a.txt"}),
        }],
        usage: Some(Usage {
            input_tokens,
            output_tokens: 1_000_000,
            ..Usage::default()
        }),
        ..ScriptTurn::default()
    }
}

/// Two Reads of a.txt, the second reporting `input_tokens`, then (for a summary, if any) "S",
/// then "done".
fn turns(input_tokens: u64) -> Vec<ScriptTurn> {
    vec![
        read(1_000),
        read(input_tokens),
        ScriptTurn::text("S"),
        ScriptTurn::text("done"),
    ]
}

fn metadata() -> ModelMetadata {
    ModelMetadata {
        context_window: Some(100_000),
        max_output_tokens: Some(4_096),
        // $0.50 and $2 per million tokens.
        price_per_token: Some(("0.0000005".into(), "0.000002".into())),
        ..ModelMetadata::default()
    }
}

async fn server(meta: ModelMetadata) -> MockServer {
    MockServer::builder()
        .turns(turns(85_000))
        .model(MODEL)
        .model_metadata(meta)
        .start()
        .await
        .unwrap()
}

fn provider(server: &MockServer) -> OpenAiProvider {
    OpenAiProvider::new(OpenAiConfig::new(server.url(), None)).unwrap()
}

/// Run one prompt; every frame and the result.
async fn run(
    provider: Arc<dyn Provider>,
    configure: impl FnOnce(&mut AgentConfig),
) -> (Vec<SdkMessage>, ResultMessage) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
    let mut config = AgentConfig {
        model: MODEL.into(),
        cwd: dir.path().to_path_buf(),
        max_tokens: 8_192,
        deltas: DeltaMode::Off,
        ..AgentConfig::default()
    };
    config.compaction.keep_recent = 2;
    configure(&mut config);
    let mut session = Agent::new(
        config,
        provider,
        ToolRegistry::with_builtins(),
        ToolContext::new(dir.path()).unwrap(),
    )
    .spawn();
    session.send_message("read a.txt").unwrap();
    let mut frames = Vec::new();
    while let Some(event) = session.next_event().await {
        if let Event::Frame(frame) = event {
            if let SdkMessage::Result(r) = &frame {
                let r = r.clone();
                session.shutdown().await;
                return (frames, r);
            }
            frames.push(frame);
        }
    }
    panic!("no result");
}

fn compactions(frames: &[SdkMessage]) -> usize {
    frames
        .iter()
        .filter(|f| matches!(f, SdkMessage::System(SystemMessage::CompactBoundary(_))))
        .count()
}

fn notices(frames: &[SdkMessage], kind: &str) -> usize {
    frames
        .iter()
        .filter(|f| serde_json::to_value(f).is_ok_and(|v| v.to_string().contains(kind)))
        .count()
}

#[tokio::test]
async fn the_servers_window_prices_and_output_cap_are_used() {
    let server = server(metadata()).await;
    let provider = provider(&server);
    // The lookup runs in the background with the first call; here it is done beforehand so
    // that the first call's cost is known for sure.
    assert!(provider.fetch_served_model(MODEL).await.is_some());
    let (frames, result) = run(Arc::new(provider), |_| {}).await;
    assert!(!result.is_error, "{result:?}");
    // 85k input tokens pass 80% of the server's 100k window (not of the default 200k).
    assert_eq!(compactions(&frames), 1);
    // Priced at the server's prices: the Reads alone are 86k × $0.5 + 2M × $2 per million.
    assert!(result.total_cost_usd >= 4.04, "{}", result.total_cost_usd);
    assert_eq!(notices(&frames, "no price known"), 0);
    assert_eq!(result.model_usage[MODEL].context_window, 100_000);
    // max_tokens 8192 is more than the server allows.
    for r in server.chat_requests() {
        assert!(
            r.body["max_tokens"].as_u64().unwrap() <= 4_096,
            "{}",
            r.body
        );
    }
}

#[tokio::test]
async fn settings_go_over_what_the_server_says() {
    let server = server(metadata()).await;
    let provider = provider(&server);
    provider.fetch_served_model(MODEL).await;
    let (frames, result) = run(Arc::new(provider), |c| {
        c.context_window = Some(1_000_000);
        c.price = Some(skiff_llm::custom_price(0.0, 0.0, None));
    })
    .await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(compactions(&frames), 0);
    assert_eq!(result.total_cost_usd, 0.0);
    assert_eq!(notices(&frames, "no price known"), 0);
}

#[tokio::test]
async fn a_slow_or_failing_metadata_endpoint_changes_nothing() {
    for meta in [
        // Never answers within the run.
        ModelMetadata {
            delay_ms: 600_000,
            ..metadata()
        },
        ModelMetadata {
            status: Some(500),
            ..metadata()
        },
    ] {
        let server = server(meta).await;
        let provider = Arc::new(provider(&server));
        let run = run(provider.clone(), |_| {});
        let (frames, result) = tokio::time::timeout(Duration::from_secs(60), run)
            .await
            .expect("the run waited for the model metadata");
        assert!(!result.is_error, "{result:?}");
        // Nothing known: the table's 200k window, no compaction; $0, and no notice: a server
        // on this machine costs nothing (issue 37).
        assert_eq!(compactions(&frames), 0);
        assert_eq!(result.total_cost_usd, 0.0);
        assert_eq!(notices(&frames, "no price known"), 0);
        assert!(provider.served_model(MODEL).is_none());
        assert_eq!(
            server.chat_requests()[0].body["max_tokens"],
            8_192,
            "the configured max_tokens"
        );
        // The lookup was asked for, beside the calls (a moment after the first went out).
        let mut asked = false;
        for _ in 0..200 {
            asked = server.requests().iter().any(|r| r.path == "/v1/models");
            if asked {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(asked, "the metadata lookup never went out");
    }
}
