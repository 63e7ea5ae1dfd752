//! `ScriptedProvider`: streaming, tool input assembly, faults and retries, exhaustion,
//! cancellation, script files, equivalence with the mock server behind `AnthropicProvider`, and
//! the bundled `examples/fix-bug.json`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::time::Instant;

use futures::StreamExt;
use serde_json::json;
use skiff_llm::{
    AnthropicConfig, AnthropicProvider, CancellationToken, Credential, LlmError, Provider,
    ProviderEvent, RetryPolicy, ScriptError, ScriptedProvider, StreamError, complete,
};
use skiff_protocol::script::{Fault, Script, ScriptBlock, ScriptTurn};
use skiff_protocol::{ContentBlock, Delta, Message, MessagesRequest, StopReason, StreamEvent};
use skiff_testkit::MockServer;

fn request() -> MessagesRequest {
    let mut r = MessagesRequest::new("claude-sonnet-4-5", 1024, vec![Message::user_text("hi")]);
    r.stream = true;
    r
}

fn script(turns: Vec<ScriptTurn>) -> Script {
    Script {
        turns,
        ..Script::default()
    }
}

async fn collect(p: &dyn Provider) -> (Vec<ProviderEvent>, Option<LlmError>) {
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

fn done(events: &[ProviderEvent]) -> &skiff_protocol::MessageResponse {
    match events.last() {
        Some(ProviderEvent::Done(m)) => m,
        other => panic!("last event is not Done: {other:?}"),
    }
}

fn status(status: u16) -> Fault {
    Fault::Status {
        status,
        retry_after: None,
        retry_after_ms: None,
        message: None,
    }
}

/// A fresh directory under the system temp dir (no `tempfile` in this crate's dev-dependencies).
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "skiff-llm-scripted-{}-{name}-{}",
        std::process::id(),
        fastrand_suffix()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn fastrand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

#[tokio::test]
async fn a_text_turn_streams_deltas_then_done() {
    let p = ScriptedProvider::new(script(vec![ScriptTurn {
        chunk_chars: Some(4),
        ..ScriptTurn::text("Hello there, streaming world")
    }]));
    assert_eq!(p.name(), "script");
    let (events, err) = collect(&p).await;
    assert!(err.is_none(), "{err:?}");
    assert!(matches!(
        events.first(),
        Some(ProviderEvent::Stream(StreamEvent::MessageStart { .. }))
    ));
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
    assert_eq!(deltas.len(), 7, "{deltas:?}");
    assert_eq!(deltas.concat(), "Hello there, streaming world");
    // BlockComplete right after the content_block_stop, Done last after message_stop.
    let stop = events
        .iter()
        .position(|e| {
            matches!(
                e,
                ProviderEvent::Stream(StreamEvent::ContentBlockStop { .. })
            )
        })
        .unwrap();
    assert!(matches!(
        &events[stop + 1],
        ProviderEvent::BlockComplete { index: 0, block: ContentBlock::Text(t) }
            if t.text == "Hello there, streaming world"
    ));
    assert!(matches!(
        &events[events.len() - 2],
        ProviderEvent::Stream(StreamEvent::MessageStop)
    ));
    let msg = done(&events);
    assert_eq!(msg.text(), "Hello there, streaming world");
    assert_eq!(msg.stop_reason, Some(StopReason::EndTurn));
    assert_eq!(msg.model, "claude-sonnet-4-5", "the requested model");
    assert!(msg.usage.input_tokens > 0, "estimated from the request");
    assert_eq!(p.requests(), vec![request()]);
}

#[tokio::test]
async fn a_tool_use_turn_assembles_its_input_and_the_script_model_wins() {
    let input = json!({"command": "ls -la", "description": "List files", "timeout": 5000});
    let p = ScriptedProvider::new(Script {
        model: Some("claude-opus-4-5".into()),
        turns: vec![ScriptTurn {
            content: vec![
                ScriptBlock::Text {
                    text: "Let me look.".into(),
                },
                ScriptBlock::ToolUse {
                    id: None,
                    name: "Bash".into(),
                    input: input.clone(),
                },
            ],
            chunk_chars: Some(3),
            ..ScriptTurn::default()
        }],
        ..Script::default()
    });
    let (events, err) = collect(&p).await;
    assert!(err.is_none(), "{err:?}");
    let fragments = events
        .iter()
        .filter(|e| {
            matches!(
                e,
                ProviderEvent::Stream(StreamEvent::ContentBlockDelta {
                    delta: Delta::InputJsonDelta { .. },
                    ..
                })
            )
        })
        .count();
    assert!(
        fragments > 5,
        "input JSON streams in fragments: {fragments}"
    );
    let completed: Vec<&ContentBlock> = events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::BlockComplete { block, .. } => Some(block),
            _ => None,
        })
        .collect();
    assert_eq!(completed.len(), 2);
    let ContentBlock::ToolUse(tu) = completed[1] else {
        panic!("{:?}", completed[1])
    };
    assert_eq!(tu.input, input);
    assert_eq!(tu.name, "Bash");
    assert_eq!(tu.id, "toolu_0000_01");
    let msg = done(&events);
    assert_eq!(msg.stop_reason, Some(StopReason::ToolUse));
    assert_eq!(msg.model, "claude-opus-4-5");
    assert_eq!(msg.content.len(), 2);
}

// Paused clock: the waits are the provider's own tokio sleeps, measured exactly.
#[tokio::test(start_paused = true)]
async fn status_faults_are_retried_quickly_then_succeed() {
    let p = ScriptedProvider::new(script(vec![
        ScriptTurn::text("finally")
            .with_fault(status(529))
            .with_fault(Fault::Status {
                status: 429,
                retry_after: Some("30".into()),
                retry_after_ms: None,
                message: Some("slow down".into()),
            }),
    ]));
    let t = Instant::now();
    let (events, err) = collect(&p).await;
    assert!(err.is_none(), "{err:?}");
    assert!(
        t.elapsed() < Duration::from_secs(1),
        "offline retries do not sleep: {:?}",
        t.elapsed()
    );
    let r = retries(&events);
    assert_eq!(r.len(), 2);
    assert_eq!(
        (r[0].attempt, r[0].status, r[0].max_retries),
        (1, Some(529), 5)
    );
    assert!(r[0].cause.contains("overloaded_error"), "{}", r[0].cause);
    assert!(!r[0].discard_partial);
    assert_eq!((r[1].attempt, r[1].status), (2, Some(429)));
    assert!(
        r[1].wait <= Duration::from_millis(50),
        "capped: {:?}",
        r[1].wait
    );
    assert!(r[1].cause.contains("slow down"), "{}", r[1].cause);
    assert_eq!(done(&events).text(), "finally");
    assert_eq!(p.requests().len(), 3, "one request per attempt");
}

#[tokio::test]
async fn retries_run_out_into_the_anthropic_providers_final_errors() {
    let mut turn = ScriptTurn::text("never");
    for _ in 0..3 {
        turn = turn.with_fault(status(529));
    }
    let p = ScriptedProvider::new(script(vec![turn])).with_max_retries(2);
    assert_eq!(p.max_retries(), 2);
    let (events, err) = collect(&p).await;
    assert_eq!(retries(&events).len(), 2);
    match err {
        Some(LlmError::Overloaded {
            retries: 2,
            message,
        }) => assert_eq!(message, "Overloaded"),
        other => panic!("{other:?}"),
    }

    let p = ScriptedProvider::new(script(vec![ScriptTurn::text("x").with_fault(status(503))]))
        .with_max_retries(0);
    let (_, err) = collect(&p).await;
    assert!(
        matches!(
            err,
            Some(LlmError::Server {
                status: 503,
                retries: 0,
                ..
            })
        ),
        "{err:?}"
    );

    // Client errors fail at once, without a retry.
    for (code, check) in [
        (
            400,
            (|e: &LlmError| matches!(e, LlmError::InvalidRequest { status: 400, .. }))
                as fn(&LlmError) -> bool,
        ),
        (401, |e| {
            matches!(e, LlmError::Authentication { status: 401, .. })
        }),
    ] {
        let p = ScriptedProvider::new(script(vec![ScriptTurn::text("x").with_fault(status(code))]));
        let (events, err) = collect(&p).await;
        assert!(events.is_empty(), "{events:?}");
        let err = err.unwrap();
        assert!(check(&err), "{code}: {err:?}");
        assert_eq!(p.requests().len(), 1);
    }
}

// Paused clock: the waits are the provider's own tokio sleeps, measured exactly.
#[tokio::test(start_paused = true)]
async fn mid_stream_faults_behave_like_the_real_provider() {
    // Disconnect after 3 events: those events went out, so the retry says discard them.
    let p = ScriptedProvider::new(script(vec![
        ScriptTurn::text("whole answer").with_fault(Fault::Disconnect { after_events: 3 }),
    ]));
    let (events, err) = collect(&p).await;
    assert!(err.is_none(), "{err:?}");
    let retry_at = events
        .iter()
        .position(|e| matches!(e, ProviderEvent::Retry(_)))
        .unwrap();
    assert_eq!(retry_at, 3);
    let r = retries(&events);
    assert!(r[0].discard_partial && r[0].status.is_none());
    assert!(matches!(
        events[retry_at + 1],
        ProviderEvent::Stream(StreamEvent::MessageStart { .. })
    ));
    assert_eq!(done(&events).text(), "whole answer");

    // A stall is a dropped connection too; nothing was sent, so nothing to discard.
    let p = ScriptedProvider::new(script(vec![ScriptTurn::text("ok").with_fault(
        Fault::Stall {
            after_events: 0,
            ms: 60_000,
        },
    )]));
    let t = Instant::now();
    let (events, err) = collect(&p).await;
    assert!(err.is_none(), "{err:?}");
    assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    assert!(!retries(&events)[0].discard_partial);

    // Overloaded error event: retried. Any other error event: final.
    let p = ScriptedProvider::new(script(vec![ScriptTurn::text("ok").with_fault(
        Fault::ErrorEvent {
            after_events: 2,
            error_type: "overloaded_error".into(),
            message: "Overloaded".into(),
        },
    )]));
    let (events, err) = collect(&p).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(retries(&events).len(), 1);
    let p = ScriptedProvider::new(script(vec![ScriptTurn::text("ok").with_fault(
        Fault::ErrorEvent {
            after_events: 1,
            error_type: "invalid_request_error".into(),
            message: "bad".into(),
        },
    )]));
    let (_, err) = collect(&p).await;
    assert!(
        matches!(&err, Some(LlmError::StreamErrorEvent { kind, retries: 0, .. }) if kind == "invalid_request_error"),
        "{err:?}"
    );

    // Malformed data is a typed stream error, not retried.
    let p = ScriptedProvider::new(script(vec![
        ScriptTurn::text("ok").with_fault(Fault::Malformed { after_events: 2 }),
    ]));
    let (events, err) = collect(&p).await;
    assert_eq!(events.len(), 2);
    assert!(
        matches!(&err, Some(LlmError::Stream(StreamError::Malformed(m))) if m.contains("content_block_delta")),
        "{err:?}"
    );
}

#[tokio::test]
async fn an_exhausted_script_is_a_clear_error_and_repeat_wraps() {
    let p = ScriptedProvider::new(script(vec![
        ScriptTurn::text("one"),
        ScriptTurn::text("two"),
    ]));
    for want in ["one", "two"] {
        let msg = complete(p.stream(&request().view(), CancellationToken::new()))
            .await
            .unwrap();
        assert_eq!(msg.text(), want);
    }
    let err = complete(p.stream(&request().view(), CancellationToken::new()))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("the model script is exhausted after 2 turns"),
        "{err}"
    );
    // Still exhausted, still not a panic.
    assert!(
        complete(p.stream(&request().view(), CancellationToken::new()))
            .await
            .is_err()
    );

    let p = ScriptedProvider::new(Script {
        repeat: true,
        turns: vec![ScriptTurn::text("again")],
        ..Script::default()
    });
    let mut ids = Vec::new();
    for _ in 0..3 {
        let msg = complete(p.stream(&request().view(), CancellationToken::new()))
            .await
            .unwrap();
        assert_eq!(msg.text(), "again");
        ids.push(msg.id);
    }
    assert_eq!(ids, ["msg_mock_0000", "msg_mock_0001", "msg_mock_0002"]);
}

// Paused clock: the waits are the provider's own tokio sleeps, measured exactly.
#[tokio::test(start_paused = true)]
async fn cancellation_during_a_delayed_turn_returns_promptly() {
    let p = ScriptedProvider::new(script(vec![ScriptTurn {
        delay_first_byte_ms: Some(30_000),
        ..ScriptTurn::text("too late")
    }]));
    let cancel = CancellationToken::new();
    let mut s = p.stream(&request().view(), cancel.clone());
    let canceller = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            cancel.cancel();
        })
    };
    let t = Instant::now();
    let first = s.next().await;
    assert!(matches!(first, Some(Err(LlmError::Cancelled))), "{first:?}");
    assert!(s.next().await.is_none(), "nothing after the cancellation");
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    canceller.await.unwrap();

    // Mid-stream, between slow deltas.
    let p = ScriptedProvider::new(script(vec![ScriptTurn {
        chunk_chars: Some(1),
        delay_between_deltas_ms: Some(300),
        ..ScriptTurn::text("a long slow answer")
    }]));
    let cancel = CancellationToken::new();
    let mut s = p.stream(&request().view(), cancel.clone());
    loop {
        match s.next().await {
            Some(Ok(ProviderEvent::Stream(StreamEvent::ContentBlockDelta { .. }))) => break,
            Some(Ok(_)) => {}
            other => panic!("stream ended early: {other:?}"),
        }
    }
    let t = Instant::now();
    cancel.cancel();
    assert!(matches!(s.next().await, Some(Err(LlmError::Cancelled))));
    assert!(
        t.elapsed() < Duration::from_millis(250),
        "{:?}",
        t.elapsed()
    );

    // Already cancelled: no script turn is consumed.
    let cancel = CancellationToken::new();
    cancel.cancel();
    let p = ScriptedProvider::new(script(vec![ScriptTurn::text("kept")]));
    let err = complete(p.stream(&request().view(), cancel))
        .await
        .unwrap_err();
    assert_eq!(err, LlmError::Cancelled);
    let msg = complete(p.stream(&request().view(), CancellationToken::new()))
        .await
        .unwrap();
    assert_eq!(msg.text(), "kept");
}

#[test]
fn from_file_names_the_file_and_the_line_of_a_json_error() {
    let dir = temp_dir("bad-json");
    let path = dir.join("broken.json");
    std::fs::write(
        &path,
        "{\n  \"turns\": [\n    {\"content\": [{\"type\": \"text\" \"text\": \"hi\"}]}\n  ]\n}\n",
    )
    .unwrap();
    let err = ScriptedProvider::from_file(&path).unwrap_err();
    let text = err.to_string();
    assert!(text.contains(&path.display().to_string()), "{text}");
    assert!(text.contains("line 3"), "{text}");
    assert!(
        matches!(err, ScriptError::Parse { line: 3, column, .. } if column > 0),
        "{err:?}"
    );

    // Valid JSON but not a script: still a located error.
    let path = dir.join("not-a-script.json");
    std::fs::write(&path, "{\n  \"turns\": [\n    {\"content\": 5}\n  ]\n}\n").unwrap();
    let err = ScriptedProvider::from_file(&path).unwrap_err();
    assert!(matches!(err, ScriptError::Parse { line: 3, .. }), "{err:?}");

    let path = dir.join("empty.json");
    std::fs::write(&path, r#"{"turns": []}"#).unwrap();
    let err = ScriptedProvider::from_file(&path).unwrap_err();
    assert!(matches!(err, ScriptError::Empty { .. }), "{err:?}");
    assert!(err.to_string().contains("empty.json"), "{err}");

    let missing = dir.join("missing.json");
    let err = ScriptedProvider::from_file(&missing).unwrap_err();
    assert!(matches!(err, ScriptError::Read { .. }), "{err:?}");
    assert!(err.to_string().contains("missing.json"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// Events with the mock's pings dropped and retry notices reduced to what both sides agree on.
fn normalise(events: Vec<ProviderEvent>) -> Vec<ProviderEvent> {
    events
        .into_iter()
        .filter(|e| !matches!(e, ProviderEvent::Stream(StreamEvent::Ping)))
        .map(|e| match e {
            ProviderEvent::Retry(mut n) => {
                n.wait = Duration::ZERO;
                n.cause = String::new();
                ProviderEvent::Retry(n)
            }
            other => other,
        })
        .collect()
}

#[tokio::test]
async fn the_same_script_gives_the_same_events_as_the_mock_server() {
    let turns = vec![
        ScriptTurn {
            content: vec![
                ScriptBlock::Thinking {
                    thinking: "the user wants a listing".into(),
                    signature: "sig-123".into(),
                },
                ScriptBlock::Text {
                    text: "Listing the files — ünïcödé included.".into(),
                },
                ScriptBlock::ToolUse {
                    id: Some("toolu_fixed".into()),
                    name: "Bash".into(),
                    input: json!({"command": "ls -la", "description": "List"}),
                },
            ],
            chunk_chars: Some(5),
            ..ScriptTurn::default()
        },
        ScriptTurn::text("plain, with default usage")
            .with_fault(status(529))
            .with_fault(Fault::ErrorEvent {
                after_events: 2,
                error_type: "overloaded_error".into(),
                message: "Overloaded".into(),
            }),
        ScriptTurn {
            usage: Some(
                serde_json::from_value(json!({
                    "input_tokens": 1200, "output_tokens": 80,
                    "cache_creation_input_tokens": 300, "cache_read_input_tokens": 9000
                }))
                .unwrap(),
            ),
            stop_reason: Some(StopReason::MaxTokens),
            ..ScriptTurn::text("cut short")
        }
        .with_fault(Fault::Disconnect { after_events: 3 }),
    ];
    let server = MockServer::start(script(turns.clone())).await.unwrap();
    let mut cfg = AnthropicConfig::new(Credential::api_key("sk-ant-test"));
    cfg.base_url = server.url();
    cfg.retry = RetryPolicy {
        base_delay: Duration::from_millis(1),
        rate_limit_base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(5),
        ..RetryPolicy::default()
    };
    let real = AnthropicProvider::new(cfg).unwrap();
    let scripted = ScriptedProvider::new(script(turns));
    for call in 0..3 {
        let (want, want_err) = collect(&real).await;
        let (got, got_err) = collect(&scripted).await;
        assert!(
            want_err.is_none() && got_err.is_none(),
            "{want_err:?} {got_err:?}"
        );
        let (want, got) = (normalise(want), normalise(got));
        assert_eq!(done(&got), done(&want), "call {call}: Done messages differ");
        let streams = |v: &[ProviderEvent]| -> Vec<StreamEvent> {
            v.iter()
                .filter_map(|e| match e {
                    ProviderEvent::Stream(s) => Some(s.clone()),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(
            streams(&got),
            streams(&want),
            "call {call}: stream events differ"
        );
        assert_eq!(got, want, "call {call}: provider events differ");
    }
    assert_eq!(
        scripted.requests().len(),
        server.messages_requests().len(),
        "one recorded request per attempt on both sides"
    );
}

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

fn run_tests_in(dir: &Path) -> std::process::Output {
    std::process::Command::new("bash")
        .arg("test.sh")
        .current_dir(dir)
        .output()
        .unwrap()
}

#[tokio::test]
async fn the_bundled_fix_bug_script_fixes_the_buggy_project() {
    let examples = examples_dir();
    let p = ScriptedProvider::from_file(examples.join("fix-bug.json")).unwrap();
    let mut calls = Vec::new();
    for _ in 0..5 {
        let msg = complete(p.stream(&request().view(), CancellationToken::new()))
            .await
            .unwrap();
        assert!(msg.usage.input_tokens >= 1000 && msg.usage.output_tokens > 0);
        assert!(skiff_llm::cost_usd(&msg.model, &msg.usage).unwrap() > 0.0);
        calls.push(msg);
    }
    assert!(
        complete(p.stream(&request().view(), CancellationToken::new()))
            .await
            .is_err()
    );
    let tools: Vec<(String, serde_json::Value)> = calls
        .iter()
        .flat_map(|m| m.content.iter())
        .filter_map(|b| match b {
            ContentBlock::ToolUse(t) => Some((t.name.clone(), t.input.clone())),
            _ => None,
        })
        .collect();
    let names: Vec<&str> = tools.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["Read", "Bash", "Edit", "Bash"]);
    assert_eq!(tools[0].1, json!({"file_path": "calc.sh"}));
    assert_eq!(tools[1].1["command"], "bash test.sh");
    assert_eq!(calls[4].stop_reason, Some(StopReason::EndTurn));
    assert!(calls[0].text().contains("look at the code"));

    // Apply the Edit to a copy: the old string matches once, the tests fail before and pass after.
    let dir = temp_dir("buggy-project");
    for f in ["calc.sh", "test.sh"] {
        std::fs::copy(examples.join("buggy-project").join(f), dir.join(f)).unwrap();
    }
    assert!(
        !run_tests_in(&dir).status.success(),
        "the project starts broken"
    );
    let edit = &tools[2].1;
    assert_eq!(edit["file_path"], "calc.sh");
    let old = edit["old_string"].as_str().unwrap();
    let new = edit["new_string"].as_str().unwrap();
    let source = std::fs::read_to_string(dir.join("calc.sh")).unwrap();
    assert_eq!(
        source.matches(old).count(),
        1,
        "old_string must match exactly once"
    );
    std::fs::write(dir.join("calc.sh"), source.replacen(old, new, 1)).unwrap();
    let out = run_tests_in(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("all checks passed"), "{stdout}");
    assert!(!stdout.contains("FAIL"), "{stdout}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_provider_is_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<ScriptedProvider>();
}
