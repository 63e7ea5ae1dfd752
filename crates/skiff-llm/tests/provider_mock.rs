//! `AnthropicProvider` against the scripted mock server: headers, streaming, every fault kind,
//! retries and their limits, cancellation, and that the API key never shows.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::json;
use skiff_llm::{
    AnthropicConfig, AnthropicProvider, CancellationToken, Credential, LlmError, Provider,
    ProviderEvent, RetryPolicy, StreamError, complete,
};
use skiff_protocol::script::{Fault, ScriptBlock, ScriptTurn};
use skiff_protocol::{ContentBlock, Delta, Message, MessagesRequest, StreamEvent};
use skiff_testkit::MockServer;

const KEY: &str = "sk-ant-test-SUPERSECRET-0123456789";

fn fast_retries(max: u32) -> RetryPolicy {
    RetryPolicy {
        max_retries: max,
        base_delay: Duration::from_millis(5),
        rate_limit_base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
        ..RetryPolicy::default()
    }
}

fn provider_for(server: &MockServer, retry: RetryPolicy) -> AnthropicProvider {
    let mut cfg = AnthropicConfig::new(Credential::api_key(KEY));
    cfg.base_url = server.url();
    cfg.retry = retry;
    AnthropicProvider::new(cfg).unwrap()
}

fn request() -> MessagesRequest {
    let mut r = MessagesRequest::new("claude-sonnet-4-5", 1024, vec![Message::user_text("hi")]);
    r.stream = true;
    r
}

async fn collect(p: &AnthropicProvider) -> (Vec<ProviderEvent>, Option<LlmError>) {
    let mut s = p.stream(&request().view(), CancellationToken::new());
    let mut events = Vec::new();
    while let Some(item) = s.next().await {
        match item {
            Ok(e) => events.push(e),
            Err(e) => return (events, Some(e)),
        }
    }
    (events, None)
}

fn retries(events: &[ProviderEvent]) -> Vec<&skiff_llm::RetryNotice> {
    events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::Retry(n) => Some(n),
            _ => None,
        })
        .collect()
}

fn done_text(events: &[ProviderEvent]) -> String {
    match events.last() {
        Some(ProviderEvent::Done(m)) => m.text(),
        other => panic!("last event is not Done: {other:?}"),
    }
}

#[tokio::test]
async fn streams_deltas_in_order_and_sends_the_documented_headers() {
    let server = MockServer::builder()
        .turn(ScriptTurn {
            content: vec![
                ScriptBlock::Text {
                    text: "Hello there, streaming world".into(),
                },
                ScriptBlock::ToolUse {
                    id: Some("toolu_1".into()),
                    name: "Bash".into(),
                    input: json!({"command": "ls -la"}),
                },
            ],
            chunk_chars: Some(4),
            ..ScriptTurn::default()
        })
        .start()
        .await
        .unwrap();
    let mut cfg = AnthropicConfig::new(Credential::api_key(KEY));
    cfg.base_url = format!("{}/", server.url());
    cfg.betas = vec!["a-1".into(), "b-2".into()];
    let p = AnthropicProvider::new(cfg).unwrap();
    let (events, err) = collect(&p).await;
    assert!(err.is_none(), "{err:?}");

    let deltas: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::Stream(StreamEvent::ContentBlockDelta {
                delta: Delta::TextDelta { text },
                ..
            }) => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert!(
        deltas.len() >= 5,
        "text arrives in several deltas: {deltas:?}"
    );
    assert_eq!(deltas.concat(), "Hello there, streaming world");
    assert!(matches!(
        events.first(),
        Some(ProviderEvent::Stream(StreamEvent::MessageStart { .. }))
    ));
    let completed: Vec<&ContentBlock> = events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::BlockComplete { block, .. } => Some(block),
            _ => None,
        })
        .collect();
    assert_eq!(completed.len(), 2);
    let ContentBlock::ToolUse(tu) = completed[1] else {
        panic!()
    };
    assert_eq!(tu.input, json!({"command": "ls -la"}));
    let Some(ProviderEvent::Done(msg)) = events.last() else {
        panic!()
    };
    assert_eq!(msg.content.len(), 2);
    assert_eq!(
        msg.stop_reason.as_ref().map(|s| s.as_str()),
        Some("tool_use")
    );

    let reqs = server.messages_requests();
    assert_eq!(reqs.len(), 1);
    let r = &reqs[0];
    assert!(r.path.starts_with("/v1/messages"), "{}", r.path);
    assert_eq!(r.header("x-api-key"), Some(KEY));
    assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.header("anthropic-beta"), Some("a-1,b-2"));
    assert_eq!(r.header("authorization"), None);
    assert_eq!(r.body["stream"], json!(true));
    assert_eq!(r.body["model"], json!("claude-sonnet-4-5"));
    assert_eq!(r.body["messages"][0]["content"], json!("hi"));
}

#[tokio::test]
async fn auth_token_is_sent_as_bearer() {
    let server = MockServer::builder()
        .turn(ScriptTurn::text("ok"))
        .start()
        .await
        .unwrap();
    let cfg = AnthropicConfig::from_lookup(|k| match k {
        "ANTHROPIC_AUTH_TOKEN" => Some("tok-SECRET".into()),
        "ANTHROPIC_API_KEY" => Some("key-SECRET".into()),
        "ANTHROPIC_BASE_URL" => Some(server.url()),
        _ => None,
    })
    .unwrap();
    let p = AnthropicProvider::new(cfg).unwrap();
    complete(p.stream(&request().view(), CancellationToken::new()))
        .await
        .unwrap();
    let r = &server.messages_requests()[0];
    assert_eq!(r.header("authorization"), Some("Bearer tok-SECRET"));
    assert_eq!(r.header("x-api-key"), None);
}

#[tokio::test]
async fn retry_after_ms_and_seconds_are_honoured() {
    let server = MockServer::builder()
        .turn(
            ScriptTurn::text("after the wait").with_fault(Fault::Status {
                status: 429,
                retry_after: Some("1".into()),
                retry_after_ms: None,
                message: Some("slow down".into()),
            }),
        )
        .turn(ScriptTurn::text("second").with_fault(Fault::Status {
            status: 529,
            retry_after: None,
            retry_after_ms: Some(150),
            message: None,
        }))
        .start()
        .await
        .unwrap();
    // A long computed backoff proves the server's value is what we waited for.
    let p = provider_for(
        &server,
        RetryPolicy {
            base_delay: Duration::from_secs(30),
            rate_limit_base_delay: Duration::from_secs(30),
            ..RetryPolicy::default()
        },
    );
    let t = Instant::now();
    let (events, err) = collect(&p).await;
    assert!(err.is_none(), "{err:?}");
    let elapsed = t.elapsed();
    let r = retries(&events);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].wait, Duration::from_secs(1));
    assert_eq!((r[0].attempt, r[0].status), (1, Some(429)));
    assert!(r[0].cause.contains("slow down"), "{}", r[0].cause);
    assert!(!r[0].discard_partial);
    assert!(elapsed >= Duration::from_secs(1), "waited {elapsed:?}");
    assert_eq!(done_text(&events), "after the wait");

    let (events, err) = collect(&p).await;
    assert!(err.is_none());
    assert_eq!(retries(&events)[0].wait, Duration::from_millis(150));
    assert_eq!(server.messages_requests().len(), 4);
}

#[tokio::test]
async fn server_faults_are_retried_then_succeed() {
    let status = |s| Fault::Status {
        status: s,
        retry_after: None,
        retry_after_ms: None,
        message: None,
    };
    let mut turn = ScriptTurn::text("finally");
    for s in [500, 502, 503, 504, 529] {
        turn = turn.with_fault(status(s));
    }
    let server = MockServer::builder().turn(turn).start().await.unwrap();
    let p = provider_for(&server, fast_retries(5));
    let (events, err) = collect(&p).await;
    assert!(err.is_none(), "{err:?}");
    let statuses: Vec<_> = retries(&events).iter().map(|n| n.status).collect();
    assert_eq!(
        statuses,
        vec![Some(500), Some(502), Some(503), Some(504), Some(529)]
    );
    let attempts: Vec<_> = retries(&events).iter().map(|n| n.attempt).collect();
    assert_eq!(attempts, vec![1, 2, 3, 4, 5]);
    assert_eq!(done_text(&events), "finally");
}

#[tokio::test]
async fn overloaded_after_all_retries_is_an_actionable_error() {
    let f = Fault::Status {
        status: 529,
        retry_after: None,
        retry_after_ms: None,
        message: Some("Overloaded".into()),
    };
    let server = MockServer::builder()
        .turn(
            ScriptTurn::text("never")
                .with_fault(f.clone())
                .with_fault(f.clone())
                .with_fault(f),
        )
        .start()
        .await
        .unwrap();
    let p = provider_for(&server, fast_retries(2));
    let (events, err) = collect(&p).await;
    assert_eq!(retries(&events).len(), 2);
    let err = err.unwrap();
    assert!(
        matches!(err, LlmError::Overloaded { retries: 2, .. }),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("overloaded (529) after 2 retries"),
        "{err}"
    );
    assert_eq!(server.messages_requests().len(), 3);
}

#[tokio::test]
async fn client_errors_are_never_retried() {
    for status in [400u16, 401, 403, 404, 413] {
        let server = MockServer::builder()
            .turn(ScriptTurn::text("never").with_fault(Fault::Status {
                status,
                retry_after: Some("0".into()),
                retry_after_ms: None,
                message: Some(format!("the API says no ({status})")),
            }))
            .start()
            .await
            .unwrap();
        let p = provider_for(&server, fast_retries(5));
        let (events, err) = collect(&p).await;
        assert!(retries(&events).is_empty(), "{status} was retried");
        assert_eq!(server.messages_requests().len(), 1, "{status}");
        let err = err.unwrap();
        let text = err.to_string();
        assert_eq!(err.status(), Some(status));
        assert!(
            text.contains(&format!("the API says no ({status})")),
            "{text}"
        );
        if status == 401 {
            assert!(matches!(err, LlmError::Authentication { .. }));
            assert!(text.contains("ANTHROPIC_API_KEY"), "{text}");
        }
        assert!(!text.contains("SUPERSECRET"));
    }
}

#[tokio::test]
async fn a_disconnect_mid_stream_restarts_and_tells_the_caller_to_discard() {
    let server = MockServer::builder()
        .turn(
            ScriptTurn {
                chunk_chars: Some(3),
                ..ScriptTurn::text("a reply that is cut the first time")
            }
            .with_fault(Fault::Disconnect { after_events: 5 }),
        )
        .start()
        .await
        .unwrap();
    let p = provider_for(&server, fast_retries(3));
    let (events, err) = collect(&p).await;
    assert!(err.is_none(), "{err:?}");
    let r = retries(&events);
    assert_eq!(r.len(), 1);
    assert!(
        r[0].discard_partial,
        "partial output was delivered before the drop"
    );
    // Text after the retry notice alone forms the full answer.
    let idx = events
        .iter()
        .position(|e| matches!(e, ProviderEvent::Retry(_)))
        .unwrap();
    let after: String = events[idx..]
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::Stream(StreamEvent::ContentBlockDelta {
                delta: Delta::TextDelta { text },
                ..
            }) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(after, "a reply that is cut the first time");
    assert_eq!(done_text(&events), after);
}

#[tokio::test]
async fn error_events_overloaded_is_retried_others_are_not() {
    let server = MockServer::builder()
        .turn(ScriptTurn::text("recovered").with_fault(Fault::ErrorEvent {
            after_events: 2,
            error_type: "overloaded_error".into(),
            message: "Overloaded".into(),
        }))
        .turn(ScriptTurn::text("never").with_fault(Fault::ErrorEvent {
            after_events: 1,
            error_type: "invalid_request_error".into(),
            message: "bad thing".into(),
        }))
        .start()
        .await
        .unwrap();
    let p = provider_for(&server, fast_retries(3));
    let (events, err) = collect(&p).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(retries(&events).len(), 1);
    assert!(retries(&events)[0].cause.contains("overloaded_error"));
    assert_eq!(done_text(&events), "recovered");

    let (events, err) = collect(&p).await;
    assert!(retries(&events).is_empty());
    let err = err.unwrap();
    assert!(
        matches!(&err, LlmError::StreamErrorEvent { kind, .. } if kind == "invalid_request_error"),
        "{err:?}"
    );
    assert!(err.to_string().contains("bad thing"));
}

#[tokio::test]
async fn a_malformed_event_is_a_typed_error_not_a_panic() {
    let server = MockServer::builder()
        .turn(ScriptTurn::text("x").with_fault(Fault::Malformed { after_events: 2 }))
        .start()
        .await
        .unwrap();
    let p = provider_for(&server, fast_retries(3));
    let (_, err) = collect(&p).await;
    let err = err.unwrap();
    assert!(
        matches!(err, LlmError::Stream(StreamError::Malformed(_))),
        "{err:?}"
    );
    assert!(err.to_string().contains("malformed"), "{err}");
    assert_eq!(server.messages_requests().len(), 1);
}

#[tokio::test]
async fn a_stalled_stream_counts_as_dropped_and_is_retried() {
    let server = MockServer::builder()
        .turn(ScriptTurn::text("after stall").with_fault(Fault::Stall {
            after_events: 2,
            ms: 5_000,
        }))
        .turns((0..2).map(|_| ScriptTurn {
            delay_first_byte_ms: Some(3_000),
            ..ScriptTurn::text("slow start")
        }))
        .start()
        .await
        .unwrap();
    let mut cfg = AnthropicConfig::new(Credential::api_key(KEY));
    cfg.base_url = server.url();
    cfg.retry = fast_retries(1);
    cfg.idle_timeout = Duration::from_millis(200);
    let p = AnthropicProvider::new(cfg).unwrap();
    let (events, err) = collect(&p).await;
    assert!(err.is_none(), "{err:?}");
    let r = retries(&events);
    assert_eq!(r.len(), 1);
    assert!(r[0].cause.contains("stalled"), "{}", r[0].cause);
    assert_eq!(done_text(&events), "after stall");

    // No first byte within the idle timeout either: retried, then the error names the wait.
    let (events, err) = collect(&p).await;
    assert_eq!(retries(&events).len(), 1);
    let err = err.unwrap();
    assert!(matches!(err, LlmError::Transport { .. }), "{err:?}");
}

#[tokio::test]
async fn connection_refused_names_the_url() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let mut cfg = AnthropicConfig::new(Credential::api_key(KEY));
    cfg.base_url = url.clone();
    cfg.retry = fast_retries(2);
    let p = AnthropicProvider::new(cfg).unwrap();
    let (events, err) = collect(&p).await;
    assert_eq!(retries(&events).len(), 2);
    let err = err.unwrap();
    assert!(
        matches!(err, LlmError::Connect { retries: 2, .. }),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(text.contains(&format!("{url}/v1/messages")), "{text}");
    assert!(text.contains("ANTHROPIC_BASE_URL"), "{text}");
}

#[tokio::test]
async fn cancellation_mid_stream_returns_promptly_and_hangs_up() {
    let server = MockServer::builder()
        .turn(ScriptTurn {
            chunk_chars: Some(1),
            delay_between_deltas_ms: Some(100),
            ..ScriptTurn::text("a long slow answer that takes many seconds to stream")
        })
        .start()
        .await
        .unwrap();
    let p = provider_for(&server, fast_retries(3));
    let cancel = CancellationToken::new();
    let mut s = p.stream(&request().view(), cancel.clone());
    // Wait for the first text delta, then cancel.
    loop {
        match s.next().await {
            Some(Ok(ProviderEvent::Stream(StreamEvent::ContentBlockDelta { .. }))) => break,
            Some(Ok(_)) => {}
            other => panic!("stream ended early: {other:?}"),
        }
    }
    assert_eq!(server.open_streams(), 1);
    let t = Instant::now();
    cancel.cancel();
    let next = s.next().await;
    assert!(matches!(next, Some(Err(LlmError::Cancelled))), "{next:?}");
    assert!(s.next().await.is_none(), "nothing after the cancellation");
    // The whole answer would take over 5 s; cancellation must not wait for it.
    assert!(
        t.elapsed() < Duration::from_secs(2),
        "took {:?}",
        t.elapsed()
    );
    drop(s);
    // The client hung up: the server sees its stream end.
    for _ in 0..100 {
        if server.open_streams() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(server.open_streams(), 0, "the connection stayed open");
    assert_eq!(server.messages_requests().len(), 1, "no retry after cancel");
}

#[tokio::test]
async fn cancellation_during_a_retry_wait_returns_promptly() {
    let server = MockServer::builder()
        .turn(ScriptTurn::text("x").with_fault(Fault::Status {
            status: 529,
            retry_after: Some("30".into()),
            retry_after_ms: None,
            message: None,
        }))
        .start()
        .await
        .unwrap();
    let p = provider_for(&server, RetryPolicy::default());
    let cancel = CancellationToken::new();
    let mut s = p.stream(&request().view(), cancel.clone());
    let first = s.next().await;
    assert!(
        matches!(first, Some(Ok(ProviderEvent::Retry(_)))),
        "{first:?}"
    );
    cancel.cancel();
    let t = Instant::now();
    assert!(matches!(s.next().await, Some(Err(LlmError::Cancelled))));
    assert!(t.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn count_tokens_endpoint() {
    let server = MockServer::builder().start().await.unwrap();
    let p = provider_for(&server, RetryPolicy::none());
    let n = p.count_tokens(&request()).await.unwrap();
    assert!(n > 0);
    let r = &server.requests()[0];
    assert_eq!(r.path, "/v1/messages/count_tokens");
    assert!(r.body.get("max_tokens").is_none() && r.body.get("stream").is_none());
}

#[tokio::test]
async fn the_api_key_never_appears_in_debug_errors_or_logs() {
    use std::sync::{Arc, Mutex};
    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let buf = Buf::default();
    let writer = buf.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    // tracing caches whether anyone listens at each log statement, process-wide: another test
    // thread registering the retry's statement at the moment this subscriber arrives can
    // leave it cached as unheard (a race in tracing's registry, seen once in CI). Each try
    // recomputes the cache; every try's output is checked for the key.
    let mut shown = String::new();
    for _ in 0..3 {
        tracing::callsite::rebuild_interest_cache();
        let server = MockServer::builder()
            .turn(ScriptTurn::text("x").with_fault(Fault::Status {
                status: 529,
                retry_after_ms: Some(1),
                retry_after: None,
                message: None,
            }))
            .turn(ScriptTurn::text("y").with_fault(Fault::Status {
                status: 401,
                retry_after: None,
                retry_after_ms: None,
                message: Some("invalid x-api-key".into()),
            }))
            .start()
            .await
            .unwrap();
        let p = provider_for(&server, fast_retries(2));
        let (events, err) = collect(&p).await;
        assert!(err.is_none());
        let (_, err) = collect(&p).await;
        let err = err.unwrap();
        shown.push_str(&format!(
            "{p:?}\n{:?}\n{err}\n{err:?}\n{events:?}\n",
            p.config()
        ));
        shown.push_str(&String::from_utf8_lossy(&std::mem::take(
            &mut *buf.0.lock().unwrap(),
        )));
        if shown.contains("retrying model call") {
            break;
        }
    }
    assert!(shown.contains("retrying model call"), "logs were captured");
    assert!(!shown.contains("SUPERSECRET"), "the key leaked:\n{shown}");
    assert!(shown.contains("[redacted]"));
}

/// A server that answers every request with a 307 to `location`.
async fn redirector(location: String) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let location = location.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 65536];
                let _ = sock.read(&mut buf).await;
                let resp = format!(
                    "HTTP/1.1 307 Temporary Redirect\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                );
                let _ = sock.write_all(resp.as_bytes()).await;
            });
        }
    });
    format!("http://{addr}")
}

#[tokio::test]
async fn a_redirect_to_another_host_is_not_followed_with_the_key() {
    let other = MockServer::builder()
        .turn(ScriptTurn::text("you should never see this"))
        .start()
        .await
        .unwrap();
    let url = redirector(format!(
        "{}/v1/messages",
        other.url().replace("127.0.0.1", "localhost")
    ))
    .await;
    let mut cfg = AnthropicConfig::new(Credential::api_key(KEY));
    cfg.base_url = url;
    cfg.retry = fast_retries(2);
    let p = AnthropicProvider::new(cfg).unwrap();
    let (_, err) = collect(&p).await;
    let err = err.expect("the redirect is an error").to_string();
    assert!(err.contains("redirected"), "{err}");
    assert_eq!(other.request_count(), 0, "the other host got the request");
}
