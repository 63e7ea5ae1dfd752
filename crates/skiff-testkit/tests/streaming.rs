//! Successful responses: SSE streams, non-streaming JSON, delays and client hang-ups.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::time::{Duration, Instant};

use common::{client, eventually, parse_events, post_messages, request_body, split_sse};
use futures::StreamExt;
use serde_json::json;
use skiff_protocol::{ContentBlock, Delta, MessageResponse, StopReason, StreamEvent};
use skiff_testkit::{MockServer, Script, ScriptTurn};

#[tokio::test]
async fn streaming_text_turn_is_well_formed_sse() {
    let server = MockServer::builder()
        .turn(ScriptTurn::text("Hello from the mock server!"))
        .start()
        .await
        .unwrap();
    let resp = post_messages(&server.url(), true).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    assert_eq!(resp.headers()["request-id"], "req_mock_1");
    let text = resp.text().await.unwrap();
    let names: Vec<String> = split_sse(&text).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names[0], "message_start");
    assert_eq!(names[1], "ping");
    assert_eq!(names[2], "content_block_start");
    assert_eq!(names[names.len() - 2], "message_delta");
    assert_eq!(names[names.len() - 1], "message_stop");
    assert_eq!(
        split_sse(&text)[1].1,
        r#"{"type": "ping"}"#,
        "ping is written like the real API"
    );

    let events = parse_events(&text);
    let StreamEvent::MessageStart { message } = &events[0] else {
        panic!("first event must be message_start: {:?}", events[0]);
    };
    assert_eq!(message.model, "claude-test", "model echoes the request");
    assert!(message.usage.input_tokens > 0);
    let mut streamed = String::new();
    for e in &events {
        if let StreamEvent::ContentBlockDelta {
            delta: Delta::TextDelta { text },
            ..
        } = e
        {
            streamed.push_str(text);
        }
    }
    assert_eq!(streamed, "Hello from the mock server!");
    assert!(events.iter().any(|e| matches!(
        e,
        StreamEvent::MessageDelta { delta, .. } if delta.stop_reason == Some(StopReason::EndTurn)
    )));
    assert_eq!(events.last(), Some(&StreamEvent::MessageStop));
}

#[tokio::test]
async fn tool_use_turn_streams_input_json() {
    let server = MockServer::builder()
        .turn(ScriptTurn::tool_use("Bash", json!({"command": "ls -la"})))
        .start()
        .await
        .unwrap();
    let text = post_messages(&server.url(), true)
        .await
        .text()
        .await
        .unwrap();
    let events = parse_events(&text);
    let mut input = String::new();
    for e in &events {
        if let StreamEvent::ContentBlockDelta {
            delta: Delta::InputJsonDelta { partial_json },
            ..
        } = e
        {
            input.push_str(partial_json);
        }
    }
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&input).unwrap(),
        json!({"command": "ls -la"})
    );
    assert!(events.iter().any(|e| matches!(
        e,
        StreamEvent::MessageDelta { delta, .. } if delta.stop_reason == Some(StopReason::ToolUse)
    )));
}

#[tokio::test]
async fn non_streaming_returns_the_message_json() {
    let server = MockServer::builder()
        .turn(ScriptTurn::text("plain answer"))
        .model("scripted-model")
        .start()
        .await
        .unwrap();
    let resp = post_messages(&server.url(), false).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "application/json");
    let msg: MessageResponse = resp.json().await.unwrap();
    assert_eq!(
        msg.model, "scripted-model",
        "script model wins over the request"
    );
    assert_eq!(msg.stop_reason, Some(StopReason::EndTurn));
    let [ContentBlock::Text(t)] = msg.content.as_slice() else {
        panic!("one text block expected: {:?}", msg.content);
    };
    assert_eq!(t.text, "plain answer");
    let body_len = serde_json::to_vec(&request_body(false)).unwrap().len() as u64;
    assert_eq!(msg.usage.input_tokens, body_len / 4);
}

#[tokio::test]
async fn query_string_is_ignored() {
    let server = MockServer::start(Script {
        turns: vec![ScriptTurn::text("ok")],
        ..Script::default()
    })
    .await
    .unwrap();
    let resp = client()
        .post(format!("{}/v1/messages?beta=true", server.url()))
        .json(&request_body(false))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(server.requests()[0].path, "/v1/messages?beta=true");
    assert_eq!(server.messages_requests().len(), 1);
}

#[tokio::test]
async fn delays_space_out_the_events() {
    let turn = ScriptTurn {
        delay_first_byte_ms: Some(150),
        delay_between_deltas_ms: Some(20),
        chunk_chars: Some(4),
        ..ScriptTurn::text("0123456789")
    };
    let server = MockServer::builder().turn(turn).start().await.unwrap();
    let start = Instant::now();
    let resp = post_messages(&server.url(), true).await;
    let mut body = resp.bytes_stream();
    let first = body.next().await.unwrap().unwrap();
    let first_at = start.elapsed();
    assert!(first_at >= Duration::from_millis(150), "{first_at:?}");
    assert!(first.starts_with(b"event: message_start"));
    let mut chunks = 1;
    while let Some(chunk) = body.next().await {
        chunk.unwrap();
        chunks += 1;
    }
    // message_start, ping, block start, 3 deltas, block stop, message_delta, message_stop
    assert!(
        chunks >= 6,
        "one chunk per event when delayed, got {chunks}"
    );
    assert!(start.elapsed() >= first_at + Duration::from_millis(20 * 7));
}

#[tokio::test]
async fn open_streams_drops_to_zero_when_the_client_hangs_up() {
    let turn = ScriptTurn {
        delay_between_deltas_ms: Some(50),
        chunk_chars: Some(1),
        ..ScriptTurn::text("a long answer that takes a while to stream")
    };
    let server = MockServer::builder().turn(turn).start().await.unwrap();
    assert_eq!(server.open_streams(), 0);
    let resp = post_messages(&server.url(), true).await;
    let mut body = resp.bytes_stream();
    body.next().await.unwrap().unwrap();
    assert_eq!(server.open_streams(), 1);
    drop(body);
    assert!(
        eventually(Duration::from_secs(5), || server.open_streams() == 0).await,
        "the server must notice the hang-up"
    );
}

#[tokio::test]
async fn hang_up_during_first_byte_delay_is_noticed() {
    let turn = ScriptTurn {
        delay_first_byte_ms: Some(30_000),
        ..ScriptTurn::text("never sent")
    };
    let server = MockServer::builder().turn(turn).start().await.unwrap();
    let resp = tokio::time::timeout(Duration::from_secs(5), post_messages(&server.url(), true))
        .await
        .expect("headers come before the first-byte delay");
    assert_eq!(server.request_count(), 1, "recorded before the delay");
    assert_eq!(server.open_streams(), 1);
    drop(resp);
    assert!(eventually(Duration::from_secs(5), || server.open_streams() == 0).await);
}

#[tokio::test]
async fn completed_stream_is_no_longer_open() {
    let server = MockServer::builder()
        .turn(ScriptTurn::text("hi"))
        .start()
        .await
        .unwrap();
    post_messages(&server.url(), true)
        .await
        .text()
        .await
        .unwrap();
    assert!(eventually(Duration::from_secs(2), || server.open_streams() == 0).await);
}
