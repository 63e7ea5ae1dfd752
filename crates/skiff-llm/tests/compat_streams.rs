//! Both providers against streams of compatible servers (llama.cpp, Ollama, OpenAI), served
//! byte for byte: what the official clients accept, skiff accepts.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use serde_json::json;
use skiff_llm::{
    AnthropicConfig, AnthropicProvider, CancellationToken, Credential, LlmError, OpenAiConfig,
    OpenAiProvider, Provider, ProviderEvent, RetryPolicy, complete,
};
use skiff_protocol::{
    ContentBlock, Message, MessageResponse, MessagesRequest, StopReason, StreamEvent,
    ToolDefinition,
};
use skiff_testkit::{Canned, CannedServer};

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn request() -> MessagesRequest {
    let mut r = MessagesRequest::new("local", 1024, vec![Message::user_text("hi")]);
    r.tools = ["Bash", "Read"]
        .iter()
        .map(|n| ToolDefinition {
            name: (*n).into(),
            description: None,
            input_schema: json!({"type": "object"}).into(),
            cache_control: None,
            extra: Default::default(),
        })
        .collect();
    r
}

fn no_retries() -> RetryPolicy {
    RetryPolicy {
        base_delay: Duration::from_millis(1),
        ..RetryPolicy::none()
    }
}

fn anthropic(url: String) -> AnthropicProvider {
    let mut cfg = AnthropicConfig::new(Credential::api_key("sk-local"));
    cfg.base_url = url;
    cfg.retry = no_retries();
    AnthropicProvider::new(cfg).unwrap()
}

fn openai(url: String) -> OpenAiProvider {
    let mut cfg = OpenAiConfig::new(url, None);
    cfg.retry = no_retries();
    // The canned answers go in order: no model metadata request may take one.
    cfg.server_metadata = false;
    OpenAiProvider::new(cfg).unwrap()
}

/// Every event of a call, then its message (or error).
async fn run(p: &dyn Provider) -> (Vec<ProviderEvent>, Result<MessageResponse, LlmError>) {
    use futures::StreamExt;
    let req = request();
    let mut s = p.stream(&req.view(), CancellationToken::new());
    let mut events = Vec::new();
    while let Some(item) = s.next().await {
        match item {
            Ok(ProviderEvent::Done(m)) => return (events, Ok(m)),
            Ok(e) => events.push(e),
            Err(e) => return (events, Err(e)),
        }
    }
    panic!("no end");
}

fn tool_uses(m: &MessageResponse) -> Vec<(String, serde_json::Value)> {
    m.content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolUse(t) => Some((t.name.clone(), t.input.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn llamacpp_tool_start_without_input_and_a_reused_index() {
    let server = CannedServer::start(vec![Canned::sse(fixture(
        "llamacpp_anthropic_tool_then_text.sse",
    ))])
    .await
    .unwrap();
    let (events, msg) = run(&anthropic(server.url())).await;
    let msg = msg.unwrap();
    assert_eq!(
        tool_uses(&msg),
        vec![("Bash".into(), json!({"command": "ls -la"}))]
    );
    assert_eq!(msg.text(), "Listing the files.");
    assert_eq!(msg.stop_reason, Some(StopReason::ToolUse));
    assert_eq!(msg.usage.input_tokens, 1834);
    assert_eq!(msg.usage.output_tokens, 31);
    // Downstream sees one consistent numbering: the text is block 1.
    let completed: Vec<usize> = events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::BlockComplete { index, .. } => Some(*index),
            _ => None,
        })
        .collect();
    assert_eq!(completed, vec![0, 1]);
    assert!(events.iter().any(|e| matches!(
        e,
        ProviderEvent::Stream(StreamEvent::ContentBlockDelta { index: 1, .. })
    )));
}

#[tokio::test]
async fn ollama_nulls_unknown_fields_and_a_block_never_stopped() {
    let server = CannedServer::start(vec![Canned::sse(fixture(
        "ollama_anthropic_no_block_stop.sse",
    ))])
    .await
    .unwrap();
    let (events, msg) = run(&anthropic(server.url())).await;
    let msg = msg.unwrap();
    assert_eq!(msg.text(), "Hello there");
    assert_eq!(msg.stop_reason, Some(StopReason::EndTurn));
    assert!(
        events
            .iter()
            .any(|e| matches!(e, ProviderEvent::BlockComplete { index: 0, .. }))
    );
}

#[tokio::test]
async fn openai_parallel_calls_and_usage() {
    let server = CannedServer::start(vec![Canned::sse(fixture("openai_parallel_tools.sse"))])
        .await
        .unwrap();
    let (_, msg) = run(&openai(server.url())).await;
    let msg = msg.unwrap();
    assert_eq!(
        tool_uses(&msg),
        vec![
            ("Bash".into(), json!({"command": "echo one"})),
            ("Read".into(), json!({"file_path": "a.txt"})),
        ]
    );
    assert_eq!(msg.stop_reason, Some(StopReason::ToolUse));
    assert_eq!(msg.usage.input_tokens, 300);
    assert_eq!(msg.usage.cache_read_input_tokens, Some(512));
    assert_eq!(msg.usage.output_tokens, 40);
    assert_eq!(server.paths(), vec!["/v1/chat/completions"]);
}

#[tokio::test]
async fn a_small_model_writing_its_call_as_text() {
    let server = CannedServer::start(vec![Canned::sse(fixture("llamacpp_openai_text_call.sse"))])
        .await
        .unwrap();
    let (_, msg) = run(&openai(server.url())).await;
    let msg = msg.unwrap();
    assert_eq!(
        tool_uses(&msg),
        vec![("Bash".into(), json!({"command": "pwd"}))]
    );
    assert_eq!(msg.stop_reason, Some(StopReason::ToolUse));
    assert_eq!(msg.text(), "");

    // Switched off: the text stays text.
    let mut cfg = OpenAiConfig::new(server.url(), None);
    cfg.retry = no_retries();
    cfg.server_metadata = false;
    cfg.text_tool_calls = false;
    let (_, msg) = run(&OpenAiProvider::new(cfg).unwrap()).await;
    let msg = msg.unwrap();
    assert!(tool_uses(&msg).is_empty());
    assert!(msg.text().contains("<tool_call>"));
}

#[tokio::test]
async fn a_cut_stream_and_error_bodies_are_clear_errors() {
    let server = CannedServer::start(vec![Canned::sse(fixture("openai_cut_stream.sse"))])
        .await
        .unwrap();
    let (_, msg) = run(&openai(server.url())).await;
    let err = msg.unwrap_err().to_string();
    assert!(
        err.contains("connection closed") || err.contains("ended"),
        "{err}"
    );

    // Ollama's error body, and OpenAI's.
    let server = CannedServer::start(vec![Canned::json(
        404,
        r#"{"error":"model \"qwen9\" not found, try pulling it first"}"#,
    )])
    .await
    .unwrap();
    let err = complete(openai(server.url()).stream(&request().view(), CancellationToken::new()))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("qwen9") && err.contains("pulling"), "{err}");
    let server = CannedServer::start(vec![Canned::json(
        401,
        r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}"#,
    )])
    .await
    .unwrap();
    let err = complete(openai(server.url()).stream(&request().view(), CancellationToken::new()))
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::Authentication { .. }), "{err:?}");
    assert!(err.to_string().contains("Incorrect API key"));
}

#[tokio::test]
async fn a_mid_stream_error_chunk_is_an_error() {
    let body = "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n\
                data: {\"error\":{\"message\":\"the request exceeds the available context size\",\"type\":\"exceed_context_size_error\"}}\n\n";
    let server = CannedServer::start(vec![Canned::sse(body)]).await.unwrap();
    let (_, msg) = run(&openai(server.url())).await;
    let err = msg.unwrap_err().to_string();
    assert!(err.contains("context size"), "{err}");
}
