//! Helpers shared by the integration tests: an HTTP client and an SSE splitter.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skiff_protocol::StreamEvent;

/// A client that never goes through a proxy.
pub fn client() -> reqwest::Client {
    // reqwest is built without a crypto provider of its own (the workspace's rustls set-up).
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// A minimal Messages request body.
pub fn request_body(stream: bool) -> Value {
    json!({
        "model": "claude-test",
        "max_tokens": 100,
        "stream": stream,
        "messages": [{"role": "user", "content": "hi"}]
    })
}

/// POST a Messages request to the server.
pub async fn post_messages(base: &str, stream: bool) -> reqwest::Response {
    client()
        .post(format!("{base}/v1/messages"))
        .header("x-api-key", "test-key")
        .header("anthropic-version", "2023-06-01")
        .json(&request_body(stream))
        .send()
        .await
        .unwrap()
}

/// Split an SSE body into `(event name, data)` pairs.
pub fn split_sse(text: &str) -> Vec<(String, String)> {
    text.split_terminator("\n\n")
        .map(|block| {
            let (event, data) = block.split_once('\n').expect("event and data lines");
            (
                event
                    .strip_prefix("event: ")
                    .expect("event line")
                    .to_owned(),
                data.strip_prefix("data: ").expect("data line").to_owned(),
            )
        })
        .collect()
}

/// Parse every SSE event of a body, checking the event name matches the data's `type`.
pub fn parse_events(text: &str) -> Vec<StreamEvent> {
    split_sse(text)
        .into_iter()
        .map(|(name, data)| {
            let value: Value = serde_json::from_str(&data).unwrap();
            assert_eq!(value["type"], name, "event name must equal the data type");
            serde_json::from_value(value).unwrap()
        })
        .collect()
}

/// Wait until `f` holds, polling every 10 ms, for at most `limit`.
pub async fn eventually(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if f() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    f()
}
