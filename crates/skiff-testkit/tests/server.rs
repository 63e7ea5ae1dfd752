//! Routes other than the script, request recording, and the server's lifecycle.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::time::Duration;

use common::{client, eventually, post_messages, request_body};
use serde_json::{Value, json};
use skiff_protocol::ErrorResponse;
use skiff_testkit::{MockServer, ScriptTurn};

#[tokio::test]
async fn count_tokens_is_body_bytes_over_four() {
    let server = MockServer::builder().start().await.unwrap();
    let body = json!({"model": "m", "messages": [{"role": "user", "content": "count me please"}]});
    let len = serde_json::to_vec(&body).unwrap().len();
    let resp = client()
        .post(format!(
            "{}/v1/messages/count_tokens?beta=true",
            server.url()
        ))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v, json!({"input_tokens": len / 4}));
    assert!(
        server.messages_requests().is_empty(),
        "count_tokens does not consume the script"
    );
}

#[tokio::test]
async fn unknown_routes_are_404_with_an_api_error_body() {
    let server = MockServer::builder()
        .turn(ScriptTurn::text("untouched"))
        .start()
        .await
        .unwrap();
    for (method, path) in [
        (reqwest::Method::GET, "/v1/files"),
        (reqwest::Method::GET, "/v1/messages"),
        (reqwest::Method::POST, "/v2/messages"),
    ] {
        let resp = client()
            .request(method.clone(), format!("{}{path}", server.url()))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 404, "{method} {path}");
        let err: ErrorResponse = resp.json().await.unwrap();
        assert_eq!(err.kind, "error");
        assert_eq!(err.error.kind, "not_found_error");
    }
    assert_eq!(server.request_count(), 3, "404s are recorded too");
    // The script was not consumed.
    assert_eq!(post_messages(&server.url(), false).await.status(), 200);
}

#[tokio::test]
async fn requests_are_recorded_with_headers_and_body() {
    let server = MockServer::builder()
        .turn(ScriptTurn::text("a"))
        .start()
        .await
        .unwrap();
    client()
        .post(format!("{}/v1/messages?beta=true", server.url()))
        .header("X-Api-Key", "sk-test")
        .header("anthropic-version", "2023-06-01")
        .json(&request_body(true))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    client()
        .post(format!("{}/other", server.url()))
        .body("not json")
        .send()
        .await
        .unwrap();

    assert_eq!(server.request_count(), 2);
    let all = server.requests();
    let first = &all[0];
    assert_eq!(first.method, "POST");
    assert_eq!(first.path, "/v1/messages?beta=true");
    assert_eq!(first.header("x-api-key"), Some("sk-test"));
    assert_eq!(first.header("Anthropic-Version"), Some("2023-06-01"));
    assert!(first.headers.iter().all(|(n, _)| *n == n.to_lowercase()));
    assert_eq!(first.body, request_body(true));
    assert_eq!(
        serde_json::from_slice::<Value>(&first.raw_body).unwrap(),
        request_body(true)
    );
    assert_eq!(all[1].path, "/other");
    assert_eq!(all[1].body, Value::Null);
    assert_eq!(&all[1].raw_body[..], b"not json");
    assert_eq!(server.messages_requests().len(), 1);
}

#[tokio::test]
async fn request_ids_count_up() {
    let server = MockServer::builder()
        .turn(ScriptTurn::text("a"))
        .turn(ScriptTurn::text("b"))
        .start()
        .await
        .unwrap();
    for n in 1..=2 {
        let resp = post_messages(&server.url(), false).await;
        assert_eq!(
            resp.headers()["request-id"],
            format!("req_mock_{n}").as_str()
        );
    }
}

#[tokio::test]
async fn dropping_the_server_stops_it() {
    let server = MockServer::builder()
        .turn(ScriptTurn::text("a"))
        .start()
        .await
        .unwrap();
    let addr = server.addr();
    assert!(server.url().starts_with("http://127.0.0.1:"));
    tokio::net::TcpStream::connect(addr).await.unwrap();
    drop(server);
    let closed = eventually(Duration::from_secs(5), || {
        std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err()
    })
    .await;
    assert!(closed, "connecting after drop must fail");
}

#[tokio::test]
async fn shutdown_closes_the_listener_at_once() {
    let server = MockServer::builder().start().await.unwrap();
    let addr = server.addr();
    server.shutdown().await;
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
}

#[tokio::test]
async fn dropping_the_server_aborts_streams_in_flight() {
    let turn = ScriptTurn {
        delay_first_byte_ms: Some(30_000),
        ..ScriptTurn::text("never")
    };
    let server = MockServer::builder().turn(turn).start().await.unwrap();
    let resp = post_messages(&server.url(), true).await;
    assert_eq!(resp.status(), 200);
    drop(server);
    let body = tokio::time::timeout(Duration::from_secs(5), resp.text())
        .await
        .expect("the body must end soon after the server is dropped");
    assert!(body.is_err(), "an aborted stream is a transport error");
}

#[tokio::test]
async fn a_request_the_real_api_would_reject_is_a_400_and_fails_the_test() {
    let server = MockServer::builder()
        .turn(ScriptTurn::text("never sent"))
        .start()
        .await
        .unwrap();
    let body = json!({"model": "m", "max_tokens": 10, "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]},
        {"role": "user", "content": "no result for t1"}
    ]});
    let resp = client()
        .post(format!("{}/v1/messages", server.url()))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    let err: ErrorResponse = resp.json().await.unwrap();
    assert_eq!(err.error.kind, "invalid_request_error");
    assert!(err.error.message.contains("t1"), "{}", err.error.message);
    assert_eq!(server.violations().len(), 1);
    // Dropping the server fails the test that made the request.
    let dropped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(server)));
    let why = dropped.unwrap_err();
    let text = why.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(text.contains("request 1") && text.contains("t1"), "{text}");

    // Tests of arbitrary requests opt out.
    let lenient = MockServer::builder()
        .turn(ScriptTurn::text("answered"))
        .allow_invalid_requests()
        .start()
        .await
        .unwrap();
    let resp = client()
        .post(format!("{}/v1/messages", lenient.url()))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
}
