//! WebFetch end to end: a scripted model fetches a page from a server on 127.0.0.1 that a
//! `WebFetch(domain:…)` rule allows; the small-model side call goes to the mock, carries the
//! page, and its answer is the tool result; its cost is in the session's. Without the rule the
//! call is not granted and the page server is never reached.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Output;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use skiff_protocol::script::ScriptTurn;
use skiff_testkit::MockServer;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const PAGE: &str = "<html><head><title>Answers</title></head><body><h1>Hello</h1>\
    <p>The answer is <b>42</b>.</p><script>ignore()</script></body></html>";

/// A server answering every request with PAGE; returns its port and a request counter.
async fn page_server() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&hits);
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let reply = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\
                     Connection: close\r\n\r\n{PAGE}",
                    PAGE.len()
                );
                let _ = sock.write_all(reply.as_bytes()).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    (port, hits)
}

async fn run(mock: &MockServer, flags: &[&str]) -> (Output, Vec<Value>) {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_skiff"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("SKIFF_HOME", home.path().join(".skiff"))
        .env("ANTHROPIC_API_KEY", "sk-ant-web-fetch-test")
        .env("ANTHROPIC_BASE_URL", mock.url())
        .current_dir(ws.path())
        .args([
            "-p",
            "What does the page say?",
            "--output-format",
            "stream-json",
        ])
        .args(["--verbose"])
        .args(flags);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let frames = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (out, frames)
}

fn tool_results(frames: &[Value]) -> Vec<Value> {
    frames
        .iter()
        .filter(|f| f["type"] == "user")
        .flat_map(|f| {
            f["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter(|b| b["type"] == "tool_result")
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_allowed_by_a_domain_rule_is_answered_by_the_small_model() {
    let (port, hits) = page_server().await;
    let url = format!("http://127.0.0.1:{port}/docs");
    let mock = MockServer::builder()
        .turn(ScriptTurn::tool_use(
            "WebFetch",
            json!({"url": url, "prompt": "What is the answer?"}),
        ))
        .turn(ScriptTurn::text("The page says the answer is 42."))
        .turn(ScriptTurn::text("It says 42."))
        .start()
        .await
        .unwrap();
    let (out, frames) = run(&mock, &["--allowedTools", "WebFetch(domain:127.0.0.1)"]).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let init = frames
        .iter()
        .find(|f| f["subtype"] == "init")
        .expect("an init frame");
    let tools: Vec<&str> = init["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        tools.contains(&"WebFetch") && tools.contains(&"NotebookEdit"),
        "{tools:?}"
    );

    let results = tool_results(&frames);
    assert_eq!(results.len(), 1, "{results:?}");
    assert_ne!(results[0]["is_error"], true, "{}", results[0]);
    assert_eq!(results[0]["content"], "The page says the answer is 42.");
    assert_eq!(hits.load(Ordering::SeqCst), 1);

    // The side call: the small model, no tools, the page's Markdown and the prompt.
    let requests = mock.messages_requests();
    assert_eq!(requests.len(), 3);
    let side = &requests[1].body;
    assert_eq!(side["model"], "claude-haiku-4-5");
    assert!(
        side.get("tools")
            .is_none_or(|t| t.as_array().is_none_or(Vec::is_empty))
    );
    let asked = side["messages"][0]["content"].to_string();
    assert!(asked.contains("The answer is **42**."), "{asked}");
    assert!(asked.contains("What is the answer?"), "{asked}");
    assert!(!asked.contains("ignore()"), "{asked}");
    // The main conversation goes on with the main model.
    assert_eq!(requests[2].body["model"], "claude-sonnet-4-5");

    // Its cost is the session's.
    let result = frames.iter().find(|f| f["type"] == "result").unwrap();
    assert_eq!(result["subtype"], "success", "{result}");
    let usage = &result["modelUsage"];
    assert!(
        usage["claude-haiku-4-5"]["outputTokens"].as_u64().unwrap() > 0,
        "{usage}"
    );
    let sum: f64 = usage
        .as_object()
        .unwrap()
        .values()
        .map(|m| m["costUSD"].as_f64().unwrap())
        .sum();
    assert!(usage["claude-haiku-4-5"]["costUSD"].as_f64().unwrap() > 0.0);
    assert!(
        (result["total_cost_usd"].as_f64().unwrap() - sum).abs() < 1e-9,
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_rule_a_fetch_is_not_granted_in_print_mode() {
    let (port, hits) = page_server().await;
    let url = format!("http://127.0.0.1:{port}/docs");
    let mock = MockServer::builder()
        .turn(ScriptTurn::tool_use(
            "WebFetch",
            json!({"url": url, "prompt": "What is the answer?"}),
        ))
        .turn(ScriptTurn::text("I could not fetch it."))
        .start()
        .await
        .unwrap();
    let (out, frames) = run(&mock, &[]).await;
    assert!(out.status.success());
    let results = tool_results(&frames);
    assert_eq!(results[0]["is_error"], true);
    assert!(
        results[0]["content"]
            .to_string()
            .contains("haven't granted it yet"),
        "{}",
        results[0]
    );
    assert_eq!(hits.load(Ordering::SeqCst), 0);
    assert_eq!(mock.messages_requests().len(), 2, "no side call");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wildcard_rule_allows_the_call_but_not_a_loopback_address() {
    let (port, hits) = page_server().await;
    let url = format!("http://127.0.0.1:{port}/docs");
    let mock = MockServer::builder()
        .turn(ScriptTurn::tool_use(
            "WebFetch",
            json!({"url": url, "prompt": "What is the answer?"}),
        ))
        .turn(ScriptTurn::text("Refused."))
        .start()
        .await
        .unwrap();
    let (out, frames) = run(&mock, &["--allowedTools", "WebFetch(domain:*)"]).await;
    assert!(out.status.success());
    let results = tool_results(&frames);
    assert_eq!(results[0]["is_error"], true);
    let text = results[0]["content"].to_string();
    assert!(text.contains("non-public addresses are refused"), "{text}");
    assert_eq!(hits.load(Ordering::SeqCst), 0);
}
