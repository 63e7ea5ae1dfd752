//! `OpenAiProvider` against the mock's chat-completions dialect: the same scripts and faults
//! as the Anthropic provider, retried the same way.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use futures::StreamExt;
use serde_json::json;
use skiff_llm::{
    CancellationToken, Credential, LlmError, OpenAiConfig, OpenAiProvider, Provider, ProviderEvent,
    RetryPolicy,
};
use skiff_protocol::script::{Fault, ScriptBlock, ScriptTurn};
use skiff_protocol::{ContentBlock, Delta, Message, MessagesRequest, StreamEvent};
use skiff_testkit::MockServer;
use skiff_testkit::openai::ModelMetadata;

const KEY: &str = "sk-openai-test-SUPERSECRET-42";

fn provider(server: &MockServer, key: bool) -> OpenAiProvider {
    let mut cfg = OpenAiConfig::new(
        server.url(),
        key.then(|| Credential::bearer_from(KEY, "OPENAI_API_KEY")),
    );
    cfg.retry = RetryPolicy {
        max_retries: 3,
        base_delay: Duration::from_millis(5),
        rate_limit_base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
        ..RetryPolicy::default()
    };
    OpenAiProvider::new(cfg).unwrap()
}

async fn collect(p: &OpenAiProvider) -> (Vec<ProviderEvent>, Option<LlmError>) {
    let req = MessagesRequest::new("qwen", 256, vec![Message::user_text("hi")]);
    let mut s = p.stream(&req.view(), CancellationToken::new());
    let mut events = Vec::new();
    while let Some(item) = s.next().await {
        match item {
            Ok(e) => events.push(e),
            Err(e) => return (events, Some(e)),
        }
    }
    (events, None)
}

fn tool_turn() -> ScriptTurn {
    ScriptTurn {
        content: vec![
            ScriptBlock::Text {
                text: "Running it now.".into(),
            },
            ScriptBlock::ToolUse {
                id: Some("call_7".into()),
                name: "Bash".into(),
                input: json!({"command": "ls -la"}),
            },
        ],
        chunk_chars: Some(4),
        ..ScriptTurn::default()
    }
}

#[tokio::test]
async fn text_streams_and_the_call_comes_whole_with_the_key_as_bearer() {
    let server = MockServer::builder()
        .turn(tool_turn())
        .start()
        .await
        .unwrap();
    let (events, err) = collect(&provider(&server, true)).await;
    assert!(err.is_none(), "{err:?}");
    let deltas: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::Stream(StreamEvent::ContentBlockDelta {
                delta: Delta::TextDelta { text },
                ..
            }) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(deltas.len() > 2, "{deltas:?}");
    assert_eq!(deltas.concat(), "Running it now.");
    let Some(ProviderEvent::Done(m)) = events.last() else {
        panic!("no message")
    };
    let ContentBlock::ToolUse(t) = &m.content[1] else {
        panic!("{m:?}")
    };
    assert_eq!((t.id.as_str(), t.name.as_str()), ("call_7", "Bash"));
    assert_eq!(t.input, json!({"command": "ls -la"}));
    let req = &server.chat_requests()[0];
    let auth = req
        .headers
        .iter()
        .find(|(k, _)| k == "authorization")
        .map(|(_, v)| v.clone());
    assert_eq!(auth, Some(format!("Bearer {KEY}")));
    assert_eq!(req.body["stream"], true);
    // A local server without a key: no authorization header at all.
    let server = MockServer::builder()
        .turn(tool_turn())
        .start()
        .await
        .unwrap();
    let _ = collect(&provider(&server, false)).await;
    assert!(
        server.chat_requests()[0]
            .headers
            .iter()
            .all(|(k, _)| k != "authorization")
    );
}

#[tokio::test]
async fn faults_are_retried_like_the_anthropic_provider_and_the_key_never_shows() {
    let mut turn = tool_turn();
    turn.faults = vec![
        Fault::Status {
            status: 529,
            retry_after: None,
            retry_after_ms: None,
            message: None,
        },
        Fault::Disconnect { after_events: 3 },
        Fault::ErrorEvent {
            after_events: 2,
            error_type: "overloaded_error".into(),
            message: "busy".into(),
        },
    ];
    let server = MockServer::builder().turn(turn).start().await.unwrap();
    let (events, err) = collect(&provider(&server, true)).await;
    assert!(err.is_none(), "{err:?}");
    let notices: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::Retry(n) => Some(n),
            _ => None,
        })
        .collect();
    assert_eq!(notices.len(), 3);
    assert!(notices[1].discard_partial);
    assert!(matches!(events.last(), Some(ProviderEvent::Done(_))));
    assert_eq!(server.chat_requests().len(), 4);

    // A malformed chunk is an error, not a panic; the key is in no message.
    let mut turn = tool_turn();
    turn.faults = vec![Fault::Malformed { after_events: 2 }];
    let server = MockServer::builder().turn(turn).start().await.unwrap();
    let (_, err) = collect(&provider(&server, true)).await;
    let err = err.unwrap();
    assert!(err.to_string().contains("chunk"), "{err}");
    assert!(!format!("{err} {err:?}").contains("SUPERSECRET"));
}

#[tokio::test]
async fn an_exhausted_script_is_a_client_error_asked_once() {
    let server = MockServer::builder()
        .turn(ScriptTurn::text("one"))
        .start()
        .await
        .unwrap();
    let p = provider(&server, false);
    let _ = collect(&p).await;
    let (_, err) = collect(&p).await;
    let err = err.unwrap();
    assert!(
        matches!(err, LlmError::InvalidRequest { status: 400, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("exhausted"));
    assert_eq!(server.chat_requests().len(), 2);
}

#[tokio::test]
async fn models_are_listed() {
    let server = MockServer::builder()
        .model("llama-3.2-3b")
        .turn(ScriptTurn::text("x"))
        .start()
        .await
        .unwrap();
    let models = provider(&server, false).list_models().await.unwrap();
    assert_eq!(models.len(), 1);
    assert_eq!(models[0].id, "llama-3.2-3b");
}

fn metadata() -> ModelMetadata {
    ModelMetadata {
        context_window: Some(32_768),
        max_output_tokens: Some(200),
        price_per_token: Some(("0.00000007".into(), "0.00000016".into())),
        ..ModelMetadata::default()
    }
}

#[tokio::test]
async fn the_servers_figures_arrive_in_the_background_and_cap_max_tokens() {
    let server = MockServer::builder()
        .model("qwen")
        .model_metadata(metadata())
        .turns([ScriptTurn::text("one"), ScriptTurn::text("two")])
        .start()
        .await
        .unwrap();
    let p = provider(&server, false);
    assert!(p.served_model("qwen").is_none());
    let (_, err) = collect(&p).await;
    assert!(err.is_none(), "{err:?}");
    // The first call went out with the requested max_tokens, the lookup beside it.
    assert_eq!(server.chat_requests()[0].body["max_tokens"], 256);
    let mut served = None;
    for _ in 0..500 {
        served = p.served_model("qwen");
        if served.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let served = served.expect("the server's figures never arrived");
    assert_eq!(served.context_window, Some(32_768));
    assert_eq!(served.max_output_tokens, Some(200));
    assert!((served.input_per_mtok.unwrap() - 0.07).abs() < 1e-9);
    assert!((served.output_per_mtok.unwrap() - 0.16).abs() < 1e-9);
    // Asked once, however many calls.
    let (_, err) = collect(&p).await;
    assert!(err.is_none(), "{err:?}");
    let listed = server
        .requests()
        .iter()
        .filter(|r| r.path == "/v1/models")
        .count();
    assert_eq!(listed, 1);
    // 256 is more than the server allows.
    assert_eq!(server.chat_requests()[1].body["max_tokens"], 200);
}

#[tokio::test]
async fn each_local_server_is_asked_where_it_says_its_context_window() {
    for (preset, path) in [
        ("llamacpp", "/props"),
        ("ollama", "/api/show"),
        ("lmstudio", "/api/v0/models"),
    ] {
        let server = MockServer::builder()
            .model("qwen")
            .model_metadata(ModelMetadata {
                context_window: Some(8_192),
                ..ModelMetadata::default()
            })
            .start()
            .await
            .unwrap();
        let mut cfg = OpenAiConfig::new(server.url(), None);
        cfg.preset = Some(preset);
        let p = OpenAiProvider::new(cfg).unwrap();
        let served = p.fetch_served_model("qwen").await.unwrap();
        assert_eq!(served.context_window, Some(8_192), "{preset}");
        assert_eq!(p.served_model("qwen"), Some(served));
        let paths: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
        assert!(paths.iter().any(|p| p == path), "{preset}: {paths:?}");
        if preset == "ollama" {
            let show = server
                .requests()
                .into_iter()
                .find(|r| r.path == "/api/show")
                .unwrap();
            assert_eq!(show.body["model"], "qwen");
        }
    }
}

#[tokio::test]
async fn a_failing_or_silent_server_leaves_the_figures_unknown() {
    let server = MockServer::builder()
        .model("qwen")
        .model_metadata(ModelMetadata {
            status: Some(503),
            ..metadata()
        })
        .turn(ScriptTurn::text("one"))
        .start()
        .await
        .unwrap();
    let p = provider(&server, false);
    assert_eq!(p.fetch_served_model("qwen").await, None);
    let (_, err) = collect(&p).await;
    assert!(err.is_none(), "{err:?}");
    // A plain model list says nothing either.
    let server = MockServer::builder().model("qwen").start().await.unwrap();
    assert_eq!(
        provider(&server, false).fetch_served_model("qwen").await,
        None
    );
    // Switched off: nothing is asked.
    let server = MockServer::builder()
        .model("qwen")
        .model_metadata(metadata())
        .turn(ScriptTurn::text("one"))
        .start()
        .await
        .unwrap();
    let mut cfg = OpenAiConfig::new(server.url(), None);
    cfg.server_metadata = false;
    let p = OpenAiProvider::new(cfg).unwrap();
    let (_, err) = collect(&p).await;
    assert!(err.is_none(), "{err:?}");
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(server.requests().len(), 1);
    assert!(p.served_model("qwen").is_none());
}
