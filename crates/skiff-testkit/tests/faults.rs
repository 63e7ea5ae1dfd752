//! Fault injection: statuses with retry headers, mid-stream faults, exhaustion and repeat.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::time::{Duration, Instant};

use common::{parse_events, post_messages, split_sse};
use futures::StreamExt;
use skiff_protocol::{ErrorResponse, StreamEvent};
use skiff_testkit::{Fault, MockServer, ScriptTurn};

/// Read a body chunk by chunk until it ends or fails; returns the bytes and whether it failed.
async fn read_until_error(resp: reqwest::Response) -> (String, bool) {
    let mut body = resp.bytes_stream();
    let mut text = Vec::new();
    while let Some(chunk) = body.next().await {
        match chunk {
            Ok(bytes) => text.extend_from_slice(&bytes),
            Err(_) => return (String::from_utf8(text).unwrap(), true),
        }
    }
    (String::from_utf8(text).unwrap(), false)
}

fn status(status: u16) -> Fault {
    Fault::Status {
        status,
        retry_after: None,
        retry_after_ms: None,
        message: None,
    }
}

#[tokio::test]
async fn status_faults_come_in_order_then_the_answer() {
    let turn = ScriptTurn::text("finally")
        .with_fault(Fault::Status {
            status: 529,
            retry_after: Some("1".into()),
            retry_after_ms: Some(250),
            message: None,
        })
        .with_fault(Fault::Status {
            status: 429,
            retry_after: None,
            retry_after_ms: None,
            message: Some("slow down".into()),
        });
    let server = MockServer::builder().turn(turn).start().await.unwrap();

    let resp = post_messages(&server.url(), true).await;
    assert_eq!(resp.status(), 529);
    assert_eq!(resp.headers()["retry-after"], "1");
    assert_eq!(resp.headers()["retry-after-ms"], "250");
    assert_eq!(resp.headers()["content-type"], "application/json");
    assert_eq!(resp.headers()["request-id"], "req_mock_1");
    let err: ErrorResponse = resp.json().await.unwrap();
    assert_eq!(err.kind, "error");
    assert_eq!(err.error.kind, "overloaded_error");
    assert_eq!(err.error.message, "Overloaded");
    assert_eq!(err.request_id.as_deref(), Some("req_mock_1"));

    let resp = post_messages(&server.url(), true).await;
    assert_eq!(resp.status(), 429);
    assert!(resp.headers().get("retry-after").is_none());
    let err: ErrorResponse = resp.json().await.unwrap();
    assert_eq!(err.error.kind, "rate_limit_error");
    assert_eq!(err.error.message, "slow down");

    let resp = post_messages(&server.url(), true).await;
    assert_eq!(resp.status(), 200);
    let events = parse_events(&resp.text().await.unwrap());
    assert_eq!(events.last(), Some(&StreamEvent::MessageStop));
    assert_eq!(server.messages_requests().len(), 3);
}

#[tokio::test]
async fn status_codes_map_to_error_types() {
    let cases = [
        (400, "invalid_request_error"),
        (401, "authentication_error"),
        (403, "permission_error"),
        (413, "request_too_large"),
        (500, "api_error"),
        (503, "api_error"),
        (504, "timeout_error"),
    ];
    let mut turn = ScriptTurn::text("ok");
    for (code, _) in cases {
        turn = turn.with_fault(status(code));
    }
    let server = MockServer::builder().turn(turn).start().await.unwrap();
    for (code, kind) in cases {
        let resp = post_messages(&server.url(), false).await;
        assert_eq!(resp.status(), code);
        let err: ErrorResponse = resp.json().await.unwrap();
        assert_eq!(err.error.kind, kind, "status {code}");
        assert!(!err.error.message.is_empty());
    }
    assert_eq!(post_messages(&server.url(), false).await.status(), 200);
}

#[tokio::test]
async fn disconnect_sends_some_events_then_breaks_the_body() {
    let server = MockServer::builder()
        .turn(ScriptTurn::text("after the drop").with_fault(Fault::Disconnect { after_events: 2 }))
        .start()
        .await
        .unwrap();
    let resp = post_messages(&server.url(), true).await;
    assert_eq!(resp.status(), 200);
    let (text, failed) = read_until_error(resp).await;
    assert!(
        failed,
        "the client must see a transport error, got a clean end"
    );
    let names: Vec<String> = split_sse(&text).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["message_start", "ping", "content_block_start"]);

    // The retry gets the answer.
    let resp = post_messages(&server.url(), true).await;
    let (text, failed) = read_until_error(resp).await;
    assert!(!failed);
    assert_eq!(parse_events(&text).last(), Some(&StreamEvent::MessageStop));
}

#[tokio::test]
async fn malformed_event_then_clean_end() {
    let server = MockServer::builder()
        .turn(ScriptTurn::text("x").with_fault(Fault::Malformed { after_events: 1 }))
        .start()
        .await
        .unwrap();
    let resp = post_messages(&server.url(), true).await;
    let (text, failed) = read_until_error(resp).await;
    assert!(!failed);
    let blocks = split_sse(&text);
    assert_eq!(blocks.len(), 3);
    assert_eq!(blocks[0].0, "message_start");
    assert_eq!(blocks[1].0, "ping");
    assert_eq!(blocks[2].0, "content_block_delta");
    assert!(serde_json::from_str::<serde_json::Value>(&blocks[2].1).is_err());
}

#[tokio::test]
async fn error_event_then_clean_end() {
    let server = MockServer::builder()
        .turn(ScriptTurn::text("x").with_fault(Fault::ErrorEvent {
            after_events: 3,
            error_type: "overloaded_error".into(),
            message: "Overloaded".into(),
        }))
        .start()
        .await
        .unwrap();
    let resp = post_messages(&server.url(), true).await;
    assert_eq!(resp.status(), 200);
    let (text, failed) = read_until_error(resp).await;
    assert!(!failed);
    let events = parse_events(&text);
    // message_start, ping, content_block_start, content_block_delta, error
    assert_eq!(events.len(), 5);
    let StreamEvent::Error { error } = &events[4] else {
        panic!("last event must be an error: {:?}", events[4]);
    };
    assert_eq!(error.kind, "overloaded_error");
    assert_eq!(error.message, "Overloaded");
    assert!(text.ends_with(
        "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
    ));
}

#[tokio::test]
async fn stall_goes_silent_then_aborts() {
    let server = MockServer::builder()
        .turn(ScriptTurn::text("x").with_fault(Fault::Stall {
            after_events: 1,
            ms: 300,
        }))
        .start()
        .await
        .unwrap();
    let start = Instant::now();
    let resp = post_messages(&server.url(), true).await;
    let (text, failed) = read_until_error(resp).await;
    assert!(failed, "a stall ends with a broken connection");
    assert!(start.elapsed() >= Duration::from_millis(300));
    let names: Vec<String> = split_sse(&text).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["message_start", "ping"]);
}

#[tokio::test]
async fn stream_faults_on_non_streaming_requests_are_500() {
    let server = MockServer::builder()
        .turn(ScriptTurn::text("x").with_fault(Fault::Disconnect { after_events: 1 }))
        .start()
        .await
        .unwrap();
    let resp = post_messages(&server.url(), false).await;
    assert_eq!(resp.status(), 500);
    let err: ErrorResponse = resp.json().await.unwrap();
    assert_eq!(err.error.kind, "api_error");
    assert_eq!(post_messages(&server.url(), false).await.status(), 200);
}

#[tokio::test]
async fn exhausted_script_answers_400_script_exhausted_like_the_scripted_provider() {
    let server = MockServer::builder()
        .turn(ScriptTurn::text("one"))
        .turn(ScriptTurn::text("two"))
        .start()
        .await
        .unwrap();
    assert_eq!(post_messages(&server.url(), true).await.status(), 200);
    assert_eq!(post_messages(&server.url(), false).await.status(), 200);
    for _ in 0..2 {
        let resp = post_messages(&server.url(), true).await;
        assert_eq!(resp.status(), 400);
        let err: ErrorResponse = resp.json().await.unwrap();
        assert_eq!(err.error.kind, "script_exhausted");
        assert!(
            err.error
                .message
                .starts_with("the model script is exhausted after 2 turns"),
            "{}",
            err.error.message
        );
    }
}

#[tokio::test]
async fn repeat_wraps_around_with_faults_again() {
    let server = MockServer::builder()
        .turn(ScriptTurn::text("first").with_fault(status(529)))
        .turn(ScriptTurn::text("second"))
        .repeat(true)
        .start()
        .await
        .unwrap();
    let mut statuses = Vec::new();
    let mut ids = Vec::new();
    for _ in 0..6 {
        let resp = post_messages(&server.url(), false).await;
        statuses.push(resp.status().as_u16());
        if resp.status() == 200 {
            let msg: skiff_protocol::MessageResponse = resp.json().await.unwrap();
            ids.push(msg.id);
        }
    }
    assert_eq!(statuses, [529, 200, 200, 529, 200, 200]);
    let unique: std::collections::HashSet<_> = ids.iter().collect();
    assert_eq!(
        unique.len(),
        4,
        "message ids stay unique across wraps: {ids:?}"
    );
}
