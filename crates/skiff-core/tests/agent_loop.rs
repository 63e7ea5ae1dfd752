//! The agent loop against the scripted mock server: the fourteen loop cases of the Go seed's
//! plan, plus parallelism, retries and history validity. The mock itself rejects (and fails the
//! test on) any request the API would reject.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use skiff_core::permissions::{PermissionChecker, PermissionDecision, PermissionQuery};
use skiff_core::{Agent, AgentConfig, Session};
use skiff_llm::{AnthropicConfig, AnthropicProvider, Credential, RetryPolicy};
use skiff_protocol::script::{Fault, ScriptBlock, ScriptTurn};
use skiff_protocol::sdk::{ResultMessage, ResultSubtype, SdkMessage, SystemMessage};
use skiff_protocol::{
    ContentBlock, MessagesRequest, StopReason, StreamEvent, ToolResultContent, Usage,
    validate_history,
};
use skiff_testkit::MockServer;
use skiff_tools::{ToolContext, ToolRegistry};

struct Harness {
    server: MockServer,
    session: Session,
    dir: tempfile::TempDir,
}

async fn harness(turns: Vec<ScriptTurn>) -> Harness {
    harness_with(turns, |_| {}).await
}

async fn harness_with(turns: Vec<ScriptTurn>, tweak: impl FnOnce(&mut AgentConfig)) -> Harness {
    harness_full(turns, tweak, |a| a).await
}

async fn harness_full(
    turns: Vec<ScriptTurn>,
    tweak: impl FnOnce(&mut AgentConfig),
    wrap: impl FnOnce(Agent) -> Agent,
) -> Harness {
    let server = MockServer::builder().turns(turns).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\nbeta\n").unwrap();
    std::fs::write(dir.path().join("b.txt"), "bravo\n").unwrap();
    let mut cfg = AnthropicConfig::new(Credential::api_key("sk-test"));
    cfg.base_url = server.url();
    cfg.retry = RetryPolicy {
        base_delay: Duration::from_millis(5),
        rate_limit_base_delay: Duration::from_millis(5),
        ..RetryPolicy::default()
    };
    let provider = AnthropicProvider::new(cfg).unwrap();
    let ctx = ToolContext::new(dir.path()).unwrap();
    let mut config = AgentConfig {
        system_prompt: vec!["You are a test agent.".into()],
        cwd: dir.path().to_path_buf(),
        progress_interval: Duration::from_millis(200),
        ..AgentConfig::default()
    };
    tweak(&mut config);
    let agent = wrap(Agent::new(
        config,
        Arc::new(provider),
        ToolRegistry::with_builtins(),
        ctx,
    ));
    Harness {
        server,
        session: agent.spawn(),
        dir,
    }
}

impl Harness {
    async fn history(&self) -> Vec<skiff_protocol::Message> {
        self.session.history().await.unwrap()
    }

    async fn run(&mut self, prompt: &str) -> (Vec<SdkMessage>, ResultMessage) {
        let mut run = self.session.run(prompt);
        let mut events = Vec::new();
        while let Some(e) = run.next().await {
            events.push(e);
        }
        let result = run.result().cloned().unwrap();
        drop(run);
        assert!(self.server.violations().is_empty());
        validate_history(&self.session.history().await.unwrap()).unwrap();
        (events, result)
    }

    fn request(&self, i: usize) -> MessagesRequest {
        serde_json::from_value(self.server.messages_requests()[i].body.clone()).unwrap()
    }
}

fn tool(name: &str, input: Value) -> ScriptBlock {
    ScriptBlock::ToolUse {
        id: None,
        name: name.into(),
        input,
    }
}

fn turn(blocks: Vec<ScriptBlock>) -> ScriptTurn {
    ScriptTurn {
        content: blocks,
        ..ScriptTurn::default()
    }
}

fn tool_results(events: &[SdkMessage]) -> Vec<(String, bool, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            SdkMessage::User(u) => match &u.message.content {
                skiff_protocol::MessageContent::Blocks(b) => match b.first() {
                    Some(ContentBlock::ToolResult(r)) => Some((
                        r.tool_use_id.clone(),
                        r.is_error.unwrap_or(false),
                        match &r.content {
                            Some(ToolResultContent::Text(t)) => t.clone(),
                            _ => String::new(),
                        },
                    )),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        })
        .collect()
}

fn kinds(events: &[SdkMessage]) -> Vec<String> {
    events
        .iter()
        .map(|e| match e {
            SdkMessage::System(SystemMessage::Init(_)) => "init".to_owned(),
            SdkMessage::System(SystemMessage::ApiRetry(_)) => "retry".to_owned(),
            SdkMessage::System(_) => "system".to_owned(),
            SdkMessage::Assistant(_) => "assistant".to_owned(),
            SdkMessage::User(_) => "user".to_owned(),
            SdkMessage::StreamEvent(_) => "stream".to_owned(),
            SdkMessage::ToolProgress(_) => "progress".to_owned(),
            SdkMessage::Result(_) => "result".to_owned(),
            SdkMessage::Unknown(_) => "unknown".to_owned(),
        })
        .collect()
}

#[tokio::test]
async fn simple_text() {
    let mut h = harness(vec![ScriptTurn::text("Hello there!")]).await;
    let (events, r) = h.run("hi").await;
    assert_eq!(r.subtype, ResultSubtype::Success);
    assert!(!r.is_error);
    assert_eq!(r.result.as_deref(), Some("Hello there!"));
    assert_eq!(r.num_turns, 1);
    assert_eq!(r.stop_reason.as_deref(), Some("end_turn"));
    assert_eq!(r.terminal_reason.as_deref(), Some("completed"));
    assert_eq!(kinds(&events).first().map(String::as_str), Some("init"));
    assert_eq!(kinds(&events).last().map(String::as_str), Some("result"));
    let req = h.request(0);
    assert_eq!(req.messages.len(), 1);
    assert!(req.stream);
    assert_eq!(
        req.tools.len(),
        h.session.status().await.unwrap().tools.len()
    );
    assert_eq!(h.history().await.len(), 2);
}

#[tokio::test]
async fn single_tool() {
    let mut h = harness(vec![
        turn(vec![
            ScriptBlock::Text {
                text: "Reading.".into(),
            },
            tool("Read", json!({"file_path": "a.txt"})),
        ]),
        ScriptTurn::text("The file has two lines."),
    ])
    .await;
    let (events, r) = h.run("what is in a.txt?").await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(r.num_turns, 2);
    let results = tool_results(&events);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].2, "1\talpha\n2\tbeta\n3\t");
    // The second request carries the tool result in ONE user message after the assistant turn.
    let req = h.request(1);
    assert_eq!(req.messages.len(), 3);
    let skiff_protocol::MessageContent::Blocks(b) = &req.messages[2].content else {
        panic!()
    };
    assert!(matches!(&b[0], ContentBlock::ToolResult(t) if t.tool_use_id == "toolu_0000_01"));
    let user_frame = events.iter().find_map(|e| match e {
        SdkMessage::User(u) => Some(u),
        _ => None,
    });
    assert_eq!(
        user_frame.unwrap().tool_use_result.as_ref().unwrap()["type"],
        "text"
    );
}

#[tokio::test]
async fn multiple_tools_results_in_request_order_in_one_message() {
    let mut h = harness(vec![
        turn(vec![
            tool("Read", json!({"file_path": "b.txt"})),
            tool("Bash", json!({"command": "sleep 0.3; echo slow"})),
            tool("Read", json!({"file_path": "a.txt"})),
            tool("Glob", json!({"pattern": "*.txt"})),
        ]),
        ScriptTurn::text("done"),
    ])
    .await;
    let (events, r) = h.run("go").await;
    assert!(!r.is_error);
    let ids: Vec<String> = tool_results(&events).into_iter().map(|t| t.0).collect();
    assert_eq!(
        ids,
        vec![
            "toolu_0000_00",
            "toolu_0000_01",
            "toolu_0000_02",
            "toolu_0000_03"
        ]
    );
    let req = h.request(1);
    let skiff_protocol::MessageContent::Blocks(b) = &req.messages[2].content else {
        panic!()
    };
    let sent: Vec<&str> = b
        .iter()
        .map(|c| match c {
            ContentBlock::ToolResult(t) => t.tool_use_id.as_str(),
            _ => panic!("non-result block"),
        })
        .collect();
    assert_eq!(sent, ids.iter().map(String::as_str).collect::<Vec<_>>());
}

#[tokio::test]
async fn tool_error_goes_back_to_the_model() {
    let mut h = harness(vec![
        turn(vec![tool("Read", json!({"file_path": "missing.txt"}))]),
        ScriptTurn::text("It does not exist."),
    ])
    .await;
    let (events, r) = h.run("read it").await;
    assert!(!r.is_error);
    let res = tool_results(&events);
    assert!(res[0].1, "is_error set");
    assert!(res[0].2.starts_with("File does not exist."));
    assert_eq!(r.result.as_deref(), Some("It does not exist."));
}

#[tokio::test]
async fn max_turns() {
    let mut h = harness_with(
        vec![
            turn(vec![tool("Bash", json!({"command": "echo hi"}))]),
            ScriptTurn::text("never"),
        ],
        |c| c.max_turns = Some(1),
    )
    .await;
    let (_, r) = h.run("loop").await;
    assert_eq!(r.subtype, ResultSubtype::ErrorMaxTurns);
    assert!(r.is_error);
    // Never more than --max-turns (issue 37; Claude Code reports max + 1 here).
    assert_eq!(r.num_turns, 1);
    assert_eq!(
        r.errors,
        vec!["Reached maximum number of turns (1)".to_owned()]
    );
    assert_eq!(r.stop_reason.as_deref(), Some("tool_use"));
    assert!(r.result.is_none());
    assert_eq!(h.server.messages_requests().len(), 1);
}

fn expensive_usage() -> Usage {
    Usage {
        input_tokens: 100_000,
        output_tokens: 10_000,
        ..Usage::default()
    }
}

#[tokio::test]
async fn max_budget() {
    let t1 = ScriptTurn {
        usage: Some(expensive_usage()),
        ..turn(vec![tool("Bash", json!({"command": "true"}))])
    };
    let mut h = harness_with(vec![t1, ScriptTurn::text("never")], |c| {
        c.max_budget_usd = Some(0.10)
    })
    .await;
    let (_, r) = h.run("spend").await;
    // sonnet: 100k in × $3/M + 10k out × $15/M = $0.45 ≥ $0.10
    assert_eq!(r.subtype, ResultSubtype::ErrorMaxBudgetUsd);
    assert!(r.is_error);
    assert!(
        (r.total_cost_usd - 0.45).abs() < 1e-9,
        "{}",
        r.total_cost_usd
    );
    assert_eq!(h.server.messages_requests().len(), 1);
}

#[tokio::test]
async fn interrupt_during_a_tool_keeps_history_valid_and_the_next_prompt_works() {
    let mut h = harness(vec![
        turn(vec![
            tool("Bash", json!({"command": "sleep 30"})),
            tool("Read", json!({"file_path": "a.txt"})),
        ]),
        ScriptTurn::text("after the interrupt"),
    ])
    .await;
    let started = std::time::Instant::now();
    let (events, r) = {
        let mut run = h.session.run("sleep");
        let stop = run.interrupt_handle();
        let mut events = Vec::new();
        while let Some(e) = run.next().await {
            if matches!(e, SdkMessage::ToolProgress(_)) {
                stop.interrupt();
            }
            events.push(e);
        }
        (events, run.result().cloned().unwrap())
    };
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the sleep was not killed"
    );
    assert_eq!(r.subtype, ResultSubtype::ErrorDuringExecution);
    assert!(r.is_error);
    assert_eq!(r.terminal_reason.as_deref(), Some("aborted_tools"));
    let results = tool_results(&events);
    assert_eq!(results.len(), 2, "every pending tool_use answered");
    assert!(
        results[0].1 && results[0].2.contains("interrupted"),
        "{results:?}"
    );
    assert!(
        !results[1].1,
        "the parallel Read finished normally: {results:?}"
    );
    validate_history(&h.history().await).unwrap();
    let (_, r2) = h.run("go on").await;
    assert!(!r2.is_error, "{r2:?}");
    assert_eq!(r2.result.as_deref(), Some("after the interrupt"));
}

#[tokio::test]
async fn parent_cancellation_while_streaming() {
    let slow = ScriptTurn {
        chunk_chars: Some(2),
        delay_between_deltas_ms: Some(100),
        ..ScriptTurn::text("a slow answer that would take several seconds to arrive")
    };
    let mut h = harness(vec![slow, ScriptTurn::text("second prompt answer")]).await;
    let r = {
        let mut run = h.session.run("hi");
        let stop = run.interrupt_handle();
        while let Some(e) = run.next().await {
            if matches!(&e, SdkMessage::StreamEvent(s) if matches!(s.event, StreamEvent::ContentBlockDelta { .. }))
            {
                stop.interrupt();
            }
        }
        run.result().cloned().unwrap()
    };
    assert_eq!(r.terminal_reason.as_deref(), Some("aborted_streaming"));
    assert!(r.is_error);
    validate_history(&h.history().await).unwrap();
    let (_, r2) = h.run("again").await;
    assert_eq!(r2.result.as_deref(), Some("second prompt answer"));
    // As with Claude Code, what arrived of the answer stays, with the interruption noted
    // after it, before the new prompt.
    let req = h.request(1);
    assert_eq!(req.messages.len(), 3, "{:?}", req.messages);
    assert!(req.messages[1].content.text().starts_with("a "));
    assert!(
        req.messages[2]
            .content
            .text()
            .starts_with("[Request interrupted by user]")
    );
}

struct DenyBash;

#[async_trait::async_trait]
impl PermissionChecker for DenyBash {
    async fn check(&self, q: &PermissionQuery<'_>) -> PermissionDecision {
        if q.tool == "Bash" {
            PermissionDecision::Deny {
                message: "Bash is not allowed here".into(),
            }
        } else {
            PermissionDecision::Allow
        }
    }
}

#[tokio::test]
async fn permission_denied() {
    let mut h = harness_full(
        vec![
            turn(vec![
                tool("Bash", json!({"command": "touch pwned"})),
                tool("Read", json!({"file_path": "a.txt"})),
            ]),
            ScriptTurn::text("ok"),
        ],
        |_| {},
        |a| a.with_permissions(Arc::new(DenyBash)),
    )
    .await;
    let (events, r) = h.run("try").await;
    assert!(!h.dir.path().join("pwned").exists());
    let res = tool_results(&events);
    assert!(
        res[0].1 && res[0].2 == "Bash is not allowed here",
        "{res:?}"
    );
    assert!(!res[1].1);
    assert_eq!(r.permission_denials.len(), 1);
    assert_eq!(r.permission_denials[0].tool_name, "Bash");
    assert_eq!(
        r.permission_denials[0].tool_input,
        json!({"command": "touch pwned"})
    );
}

#[tokio::test]
async fn stream_events_come_before_their_assistant_frame() {
    let mut h = harness(vec![ScriptTurn {
        chunk_chars: Some(3),
        ..ScriptTurn::text("streamed text")
    }])
    .await;
    let (events, _) = h.run("hi").await;
    let k = kinds(&events);
    let first_stream = k.iter().position(|x| x == "stream").unwrap();
    let assistant = k.iter().position(|x| x == "assistant").unwrap();
    assert!(first_stream < assistant);
    let deltas: String = events
        .iter()
        .filter_map(|e| match e {
            SdkMessage::StreamEvent(s) => match &s.event {
                StreamEvent::ContentBlockDelta {
                    delta: skiff_protocol::Delta::TextDelta { text },
                    ..
                } => Some(text.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(deltas, "streamed text");
    assert!(
        events
            .iter()
            .all(|e| !matches!(e, SdkMessage::StreamEvent(s) if s.event == StreamEvent::Ping))
    );
}

#[tokio::test]
async fn a_tool_stop_without_a_call_ends_the_run_as_an_error() {
    let mut h = harness(vec![ScriptTurn {
        stop_reason: Some(StopReason::ToolUse),
        ..ScriptTurn::text("I wanted a tool but named none.")
    }])
    .await;
    let (_, r) = h.run("hi").await;
    assert!(r.is_error, "{r:?}");
    assert_eq!(r.num_turns, 1);
}

#[tokio::test]
async fn unknown_tool_is_an_error_result_and_the_loop_goes_on() {
    let mut h = harness(vec![
        turn(vec![tool("NoSuchTool", json!({"x": 1}))]),
        ScriptTurn::text("Sorry."),
    ])
    .await;
    let (events, r) = h.run("hi").await;
    assert!(!r.is_error);
    let res = tool_results(&events);
    assert_eq!(
        res[0].2,
        "<tool_use_error>Error: No such tool available: NoSuchTool</tool_use_error>"
    );
    assert!(res[0].1);
}

#[tokio::test]
async fn invalid_tool_input_json_is_an_error_result_and_the_loop_goes_on() {
    let mut h = harness(vec![
        turn(vec![
            tool("Bash", json!("{\"command\": \"echo hi")),
            tool("Bash", json!({"command": "echo still-runs"})),
        ]),
        ScriptTurn::text("Fixed it."),
    ])
    .await;
    let (events, r) = h.run("hi").await;
    assert!(!r.is_error, "{r:?}");
    let res = tool_results(&events);
    assert!(res[0].1, "{res:?}");
    assert!(res[0].2.contains("not valid JSON"), "{}", res[0].2);
    assert!(!res[1].1 && res[1].2.contains("still-runs"), "{res:?}");
    // The next request carried a valid history (the mock checks every request): the broken
    // call's input went back as an object.
    let second = &h.server.messages_requests()[1];
    assert_eq!(second.body["messages"][1]["content"][0]["input"], json!({}));
}

#[tokio::test]
async fn message_ordering() {
    let mut h = harness(vec![
        turn(vec![
            ScriptBlock::Text {
                text: "Running.".into(),
            },
            tool("Bash", json!({"command": "sleep 0.5; echo done"})),
        ]),
        ScriptTurn::text("All done."),
    ])
    .await;
    let (events, _) = h.run("go").await;
    let k: Vec<String> = kinds(&events)
        .into_iter()
        .filter(|k| k != "stream")
        .collect();
    let mut dedup = k.clone();
    dedup.dedup();
    assert_eq!(
        dedup,
        vec![
            "init",
            "assistant",
            "progress",
            "user",
            "assistant",
            "result"
        ],
        "{k:?}"
    );
    // Stream events of the first reply come after init and before its first assistant frame.
    let all = kinds(&events);
    assert_eq!(all[1], "stream");
}

#[tokio::test]
async fn cost_tracking_across_turns_and_runs() {
    let u = |i, o| Usage {
        input_tokens: i,
        output_tokens: o,
        cache_read_input_tokens: Some(1000),
        cache_creation_input_tokens: Some(2000),
        ..Usage::default()
    };
    let mut h = harness(vec![
        ScriptTurn {
            usage: Some(u(1000, 100)),
            ..turn(vec![tool("Read", json!({"file_path": "a.txt"}))])
        },
        ScriptTurn {
            usage: Some(u(2000, 200)),
            ..ScriptTurn::text("one")
        },
        ScriptTurn {
            usage: Some(u(3000, 300)),
            ..ScriptTurn::text("two")
        },
    ])
    .await;
    let (_, r1) = h.run("first").await;
    assert_eq!(r1.usage.input_tokens, 3000);
    assert_eq!(r1.usage.output_tokens, 300);
    assert_eq!(r1.usage.cache_read_input_tokens, Some(2000));
    // sonnet 4.5: in 3, out 15, cache write 3.75, cache read 0.30 per Mtok
    let per_call = |i: f64, o: f64| (i * 3.0 + o * 15.0 + 2000.0 * 3.75 + 1000.0 * 0.30) / 1e6;
    let c1 = per_call(1000.0, 100.0) + per_call(2000.0, 200.0);
    assert!(
        (r1.total_cost_usd - c1).abs() < 1e-9,
        "{} vs {c1}",
        r1.total_cost_usd
    );
    let (_, r2) = h.run("second").await;
    assert_eq!(r2.usage.input_tokens, 3000, "usage is per run");
    let c2 = c1 + per_call(3000.0, 300.0);
    assert!(
        (r2.total_cost_usd - c2).abs() < 1e-9,
        "total cost is cumulative"
    );
    let m = &r2.model_usage["claude-sonnet-4-5"];
    assert_eq!(m.input_tokens, 6000);
}

#[tokio::test]
async fn two_read_only_sleeps_overlap() {
    let cmd = "date +%s.%N; sleep 1; date +%s.%N";
    let mut h = harness(vec![
        turn(vec![
            tool("Bash", json!({"command": cmd})),
            tool("Bash", json!({"command": cmd})),
        ]),
        ScriptTurn::text("slept"),
    ])
    .await;
    let (events, _) = h.run("sleep twice").await;
    let spans: Vec<(f64, f64)> = tool_results(&events)
        .iter()
        .map(|(_, err, text)| {
            assert!(!err, "{text}");
            let v: Vec<f64> = text.lines().map(|l| l.trim().parse().unwrap()).collect();
            (v[0], v[1])
        })
        .collect();
    assert_eq!(spans.len(), 2);
    assert!(
        spans[0].0 < spans[1].1 && spans[1].0 < spans[0].1,
        "the two calls did not overlap: {spans:?}"
    );
}

#[tokio::test]
async fn writes_run_in_order_after_the_reads_before_them() {
    let mut h = harness(vec![
        turn(vec![
            tool(
                "Bash",
                json!({"command": "sleep 0.3; echo first >> log.txt"}),
            ),
            tool("Bash", json!({"command": "echo second >> log.txt"})),
            tool("Write", json!({"file_path": "new.txt", "content": "x"})),
            tool("Bash", json!({"command": "cat log.txt new.txt"})),
        ]),
        ScriptTurn::text("ok"),
    ])
    .await;
    let (events, _) = h.run("go").await;
    let res = tool_results(&events);
    assert_eq!(res[3].2, "first\nsecond\nx");
}

#[tokio::test]
async fn a_429_mid_session_is_retried_and_no_history_is_lost() {
    let mut h = harness(vec![
        turn(vec![tool("Read", json!({"file_path": "a.txt"}))]),
        ScriptTurn::text("after retry").with_fault(Fault::Status {
            status: 429,
            retry_after: None,
            retry_after_ms: Some(20),
            message: Some("slow down".into()),
        }),
    ])
    .await;
    let (events, r) = h.run("go").await;
    assert!(!r.is_error, "{r:?}");
    assert!(kinds(&events).contains(&"retry".to_owned()));
    let reqs = h.server.messages_requests();
    assert_eq!(reqs.len(), 3);
    assert_eq!(
        reqs[1].body["messages"], reqs[2].body["messages"],
        "the retry resent the same history"
    );
    assert_eq!(h.history().await.len(), 4);
}

#[tokio::test]
async fn api_error_ends_with_an_error_result_and_the_next_prompt_works() {
    let mut h = harness(vec![ScriptTurn::text("never").with_fault(Fault::Status {
        status: 400,
        retry_after: None,
        retry_after_ms: None,
        message: Some("bad request body".into()),
    })])
    .await;
    let (events, r) = h.run("hi").await;
    // A run that ends on an error is never `success` (issue 37; Claude Code says `success`).
    assert_eq!(r.subtype, ResultSubtype::ErrorDuringExecution);
    assert!(r.is_error);
    assert_eq!(r.api_error_status, Some(400));
    assert_eq!(r.terminal_reason.as_deref(), Some("api_error"));
    assert!(r.result.as_deref().unwrap().contains("bad request body"));
    let synthetic = events.iter().find_map(|e| match e {
        SdkMessage::Assistant(a) if a.message.model == "<synthetic>" => Some(a),
        _ => None,
    });
    assert!(synthetic.is_some());
}

#[tokio::test]
async fn max_tokens_text_is_continued() {
    let mut h = harness(vec![
        ScriptTurn {
            stop_reason: Some(StopReason::MaxTokens),
            ..ScriptTurn::text("The first half, ")
        },
        ScriptTurn::text("and the second half."),
    ])
    .await;
    let (_, r) = h.run("long answer").await;
    assert_eq!(
        r.result.as_deref(),
        Some("The first half, and the second half.")
    );
    assert_eq!(r.num_turns, 2);
}

#[tokio::test]
async fn max_tokens_inside_a_tool_call_retries_with_more_room() {
    let cut = ScriptTurn {
        stop_reason: Some(StopReason::MaxTokens),
        ..turn(vec![tool("Bash", json!({"command": "echo this is long"}))])
    };
    let mut h = harness(vec![
        cut.clone(),
        turn(vec![tool("Bash", json!({"command": "echo ok"}))]),
        ScriptTurn::text("done"),
    ])
    .await;
    let (events, r) = h.run("go").await;
    // The mock sends the full input with stop_reason max_tokens; a truly cut input is a
    // string. Either way the tool call of a max_tokens reply is only run when complete.
    assert!(!r.is_error, "{r:?}");
    assert!(!tool_results(&events).is_empty());
}

#[tokio::test]
async fn changes_are_listed_in_the_result() {
    let mut h = harness(vec![
        turn(vec![tool("Read", json!({"file_path": "a.txt"}))]),
        turn(vec![tool(
            "Edit",
            json!({"file_path": "a.txt", "old_string": "beta", "new_string": "BETA"}),
        )]),
        ScriptTurn::text("edited"),
    ])
    .await;
    let (_, r) = h.run("edit").await;
    assert_eq!(r.changes.len(), 1, "{:?}", r.changes);
    assert_eq!(r.changes[0]["path"], "a.txt");
    assert_eq!(r.changes[0]["kind"], "modified");
    assert!(
        r.changes[0]["diff"]
            .as_str()
            .unwrap()
            .contains("-beta\n+BETA")
    );
}

#[tokio::test]
async fn prompt_caching_breakpoints_and_stable_prefix() {
    let mut h = harness(vec![
        turn(vec![tool("Read", json!({"file_path": "a.txt"}))]),
        ScriptTurn::text("ok"),
    ])
    .await;
    h.run("hi").await;
    let reqs = h.server.messages_requests();
    assert_eq!(reqs[0].body["tools"], reqs[1].body["tools"]);
    assert_eq!(reqs[0].body["system"], reqs[1].body["system"]);
    for r in &reqs {
        let s = r.body.to_string();
        let n = s.matches("\"cache_control\"").count();
        assert!((1..=4).contains(&n), "{n} breakpoints");
        let tools = r.body["tools"].as_array().unwrap();
        assert!(tools.last().unwrap().get("cache_control").is_some());
    }
}

struct Panicker;

#[async_trait::async_trait]
impl skiff_tools::Tool for Panicker {
    fn name(&self) -> &str {
        "Panicker"
    }
    fn description(&self) -> &str {
        "panics"
    }
    fn input_schema(&self) -> &Value {
        static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
        SCHEMA.get_or_init(|| json!({"type": "object"}))
    }
    fn is_read_only(&self) -> bool {
        true
    }
    async fn call(&self, _: Value, _: &ToolContext) -> skiff_tools::ToolOutput {
        panic!("boom in the tool")
    }
}

#[tokio::test]
async fn a_panicking_tool_becomes_an_error_result() {
    let server = MockServer::builder()
        .turn(turn(vec![
            tool("Panicker", json!({})),
            tool("Read", json!({"file_path": "a.txt"})),
        ]))
        .turn(ScriptTurn::text("recovered"))
        .start()
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let mut cfg = AnthropicConfig::new(Credential::api_key("sk-test"));
    cfg.base_url = server.url();
    let mut tools = ToolRegistry::with_builtins();
    tools.register(Arc::new(Panicker)).unwrap();
    let mut agent = Agent::new(
        AgentConfig::default(),
        Arc::new(AnthropicProvider::new(cfg).unwrap()),
        tools,
        ToolContext::new(dir.path()).unwrap(),
    )
    .spawn();
    let mut run = agent.run("go");
    let mut events = Vec::new();
    while let Some(e) = run.next().await {
        events.push(e);
    }
    let r = run.result().cloned().unwrap();
    drop(run);
    assert!(!r.is_error, "{r:?}");
    let res = tool_results(&events);
    assert!(res[0].1 && res[0].2.contains("boom in the tool"), "{res:?}");
    assert!(!res[1].1);
    validate_history(&agent.history().await.unwrap()).unwrap();
}

#[tokio::test]
async fn oversized_results_are_truncated_with_a_notice_and_saved_whole() {
    let spill = tempfile::tempdir().unwrap();
    let spill_dir = spill.path().join("tool-results");
    let dir_for_cfg = spill_dir.clone();
    let mut h = harness_with(
        vec![
            turn(vec![tool("Bash", json!({"command": "seq 1 5000"}))]),
            ScriptTurn::text("ok"),
        ],
        move |c| {
            c.max_tool_result_chars = 1000;
            c.tool_results_dir = Some(dir_for_cfg);
        },
    )
    .await;
    let (events, _) = h.run("count").await;
    let res = tool_results(&events);
    let text = &res[0].2;
    assert!(text.starts_with("1\n2\n3\n"));
    assert!(
        text.contains("[OUTPUT TRUNCATED: Showing 1,000 of 23,892 characters from Bash]"),
        "{text}"
    );
    let saved = spill_dir.join("toolu_0000_00.txt");
    assert!(text.contains(&saved.display().to_string()));
    let whole = std::fs::read_to_string(&saved).unwrap();
    assert!(whole.ends_with("4999\n5000"));
    assert!(events.iter().any(|e| matches!(e,
        SdkMessage::System(SystemMessage::Informational(i)) if i.kind == "truncation")));
    // What the model saw is bounded.
    let req = h.request(1);
    assert!(serde_json::to_string(&req.messages[2]).unwrap().len() < 2000);
}

/// A provider returning canned messages and recording the max_tokens it was asked for.
struct Canned {
    replies: std::sync::Mutex<Vec<skiff_protocol::MessageResponse>>,
    asked: std::sync::Mutex<Vec<u32>>,
}

impl skiff_llm::Provider for Canned {
    fn name(&self) -> &str {
        "canned"
    }
    fn stream(
        &self,
        request: &skiff_protocol::RequestView<'_>,
        _cancel: skiff_llm::CancellationToken,
    ) -> skiff_llm::EventStream {
        self.asked.lock().unwrap().push(request.max_tokens);
        validate_history(request.messages).unwrap();
        let mut replies = self.replies.lock().unwrap();
        let msg = replies.remove(0);
        Box::pin(futures::stream::iter(vec![Ok(
            skiff_llm::ProviderEvent::Done(msg),
        )]))
    }
}

fn canned(blocks: Vec<ContentBlock>, stop: StopReason) -> skiff_protocol::MessageResponse {
    let mut m = skiff_protocol::MessageResponse::new("msg", "claude-sonnet-4-5");
    m.content = blocks;
    m.stop_reason = Some(stop);
    m
}

fn tool_block(input: Value) -> ContentBlock {
    ContentBlock::ToolUse(skiff_protocol::ToolUseBlock {
        id: "toolu_x".into(),
        name: "Bash".into(),
        input,
        cache_control: None,
    })
}

#[tokio::test]
async fn a_tool_call_cut_by_max_tokens_is_asked_again_with_more_room_or_fails_clearly() {
    let dir = tempfile::tempdir().unwrap();
    // The accumulator keeps a cut tool input as the raw JSON text (a string).
    let cut = canned(
        vec![tool_block(json!("{\"command\": \"ec"))],
        StopReason::MaxTokens,
    );
    let whole = canned(
        vec![tool_block(json!({"command": "echo hi"}))],
        StopReason::ToolUse,
    );
    let done = canned(vec![ContentBlock::text("done")], StopReason::EndTurn);
    let provider = Arc::new(Canned {
        replies: std::sync::Mutex::new(vec![cut.clone(), whole, done]),
        asked: std::sync::Mutex::new(Vec::new()),
    });
    let mut agent = Agent::new(
        AgentConfig {
            max_tokens: 4096,
            ..AgentConfig::default()
        },
        provider.clone(),
        ToolRegistry::with_builtins(),
        ToolContext::new(dir.path()).unwrap(),
    )
    .spawn();
    let r = agent.run("go").finish().await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(*provider.asked.lock().unwrap(), vec![4096, 8192, 8192]);
    // The cut call never entered the history; the whole one ran once.
    let history = serde_json::to_string(&agent.history().await.unwrap()).unwrap();
    assert!(!history.contains("\\\"command\\\": \\\"ec"), "{history}");
    assert_eq!(history.matches("tool_result").count(), 1);
    validate_history(&agent.history().await.unwrap()).unwrap();

    // At the model's output cap there is no more room: a clear error, history still valid.
    let provider = Arc::new(Canned {
        replies: std::sync::Mutex::new(vec![cut]),
        asked: std::sync::Mutex::new(Vec::new()),
    });
    let mut agent = Agent::new(
        AgentConfig {
            max_tokens: 64_000,
            ..AgentConfig::default()
        },
        provider,
        ToolRegistry::with_builtins(),
        ToolContext::new(dir.path()).unwrap(),
    )
    .spawn();
    let r = agent.run("go").finish().await;
    assert!(r.is_error);
    assert!(
        r.errors[0].contains("cut off at max_tokens (64000) in the middle of a tool call"),
        "{:?}",
        r.errors
    );
    validate_history(&agent.history().await.unwrap()).unwrap();
}

fn tool_use_frames(events: &[SdkMessage]) -> usize {
    events
        .iter()
        .filter(|e| {
            matches!(e, SdkMessage::Assistant(a)
                if a.message.content.iter().any(|b| matches!(b, ContentBlock::ToolUse(_))))
        })
        .count()
}

#[tokio::test]
async fn calls_of_a_reply_cut_by_max_tokens_never_reach_clients() {
    let cut = ScriptTurn {
        content: vec![
            tool("Bash", json!({"command": "echo 1"})),
            // Streamed verbatim: invalid JSON, as a reply cut mid-call is.
            tool("Bash", json!("{\"command\": \"ec")),
        ],
        stop_reason: Some(StopReason::MaxTokens),
        ..ScriptTurn::default()
    };
    let mut h = harness(vec![
        cut,
        turn(vec![tool("Bash", json!({"command": "echo whole"}))]),
        ScriptTurn::text("done"),
    ])
    .await;
    let (events, result) = h.run("go").await;
    assert!(!result.is_error, "{result:?}");
    // Only the call of the retried reply is shown, and it has its result.
    assert_eq!(tool_use_frames(&events), 1);
    assert_eq!(tool_results(&events).len(), 1);
}

#[tokio::test]
async fn calls_run_whatever_the_stop_reason_and_a_tool_stop_without_calls_is_an_error() {
    // A server that ends a reply with calls as end_turn: the calls still run.
    let end_turn_calls = ScriptTurn {
        content: vec![tool("Bash", json!({"command": "echo ran"}))],
        stop_reason: Some(StopReason::EndTurn),
        ..ScriptTurn::default()
    };
    let mut h = harness(vec![end_turn_calls, ScriptTurn::text("done")]).await;
    let (events, result) = h.run("go").await;
    assert!(!result.is_error, "{result:?}");
    let results = tool_results(&events);
    assert_eq!(results.len(), 1);
    assert!(results[0].2.contains("ran"), "{results:?}");

    // stop_reason tool_use and no call: an error the user sees, never a success.
    let lost = ScriptTurn {
        content: vec![ScriptBlock::Text {
            text: "I will run it".into(),
        }],
        stop_reason: Some(StopReason::ToolUse),
        ..ScriptTurn::default()
    };
    let mut h = harness(vec![lost]).await;
    let (_, result) = h.run("go").await;
    assert!(result.is_error, "{result:?}");
    assert!(
        result.errors.iter().any(|e| e.contains("no tool call")),
        "{:?}",
        result.errors
    );
}

#[tokio::test]
async fn a_paused_server_tool_turn_goes_back_unchanged_and_the_answer_goes_on() {
    let results = json!([{"type": "web_search_result", "title": "Rust", "url": "https://www.rust-lang.org",
        "encrypted_content": "EqkCCioIBhgC", "page_age": null}]);
    let mut paused = turn(vec![
        ScriptBlock::Text {
            text: "Searching.".into(),
        },
        ScriptBlock::ServerToolUse {
            id: Some("srvtoolu_1".into()),
            name: "web_search".into(),
            input: json!({"query": "rust"}),
        },
        ScriptBlock::WebSearchToolResult {
            tool_use_id: "srvtoolu_1".into(),
            content: results.clone(),
        },
    ]);
    paused.stop_reason = Some(StopReason::PauseTurn);
    let mut h = harness(vec![paused, ScriptTurn::text(" Found it.")]).await;
    let (events, r) = h.run("search rust").await;
    assert_eq!(r.subtype, ResultSubtype::Success, "{r:?}");
    // The assistant frame streamed the server blocks as they came.
    let streamed = events.iter().any(|e| match e {
        SdkMessage::Assistant(a) => a
            .message
            .content
            .iter()
            .any(|b| b.type_name() == "web_search_tool_result"),
        _ => false,
    });
    assert!(streamed, "{events:?}");
    // The second request continues the paused turn: the same blocks, input and results intact.
    let body = &h.server.messages_requests()[1].body;
    let mut last = body["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["role"], "assistant");
    // (The prompt cache's breakpoint may sit on its text block.)
    for b in last["content"].as_array_mut().unwrap() {
        b.as_object_mut().unwrap().remove("cache_control");
    }
    assert_eq!(
        last["content"],
        json!([
            {"type": "text", "text": "Searching."},
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "rust"}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": results},
        ])
    );
    // The history keeps them in the one assistant message, before the continued answer.
    let history = h.history().await;
    let answer = serde_json::to_value(&history[1]).unwrap();
    assert_eq!(answer["content"][1]["input"], json!({"query": "rust"}));
    assert_eq!(answer["content"][3]["text"], " Found it.");
    assert_eq!(history.len(), 2);
}
