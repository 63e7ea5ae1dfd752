//! Context management against the scripted mock server: token accounting, compaction by
//! summarisation (automatic and `/compact`), trimming, and prompt caching. Scripted usage
//! numbers fake large contexts (a turn reporting 170,000 input tokens in a 200k window makes
//! the next call pass the 80% threshold). Every request the mock recorded must carry a valid
//! history with at most 4 cache breakpoints.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use skiff_core::frames::EventSink;
use skiff_core::hooks::{HookCall, HookEvent, HookResult, HookRunner};
use skiff_core::{
    Agent, AgentConfig, CompactError, CompactTrigger, CompactionStrategy, CompactionThreshold,
    Session,
};
use skiff_llm::{AnthropicConfig, AnthropicProvider, Credential, RetryPolicy};
use skiff_protocol::script::{Fault, ScriptBlock, ScriptTurn};
use skiff_protocol::sdk::{ResultMessage, SdkMessage, SystemMessage};
use skiff_protocol::{
    ContentBlock, Message, MessagesRequest, Role, SystemPrompt, Usage, validate_history,
};
use skiff_testkit::MockServer;
use skiff_tools::{ToolContext, ToolRegistry};

const MEMORY: &str = "<system-reminder>\nCodebase and user instructions are shown below. Be sure \
to adhere to these instructions.\n\nContents of /w/CLAUDE.md (project instructions, checked into \
the codebase):\n\nAlways run the tests.\n</system-reminder>";

#[derive(Default)]
struct RecordingHooks {
    calls: Mutex<Vec<(CompactTrigger, Option<String>)>>,
    block: bool,
}

#[async_trait::async_trait]
impl HookRunner for RecordingHooks {
    fn wants(&self, event: HookEvent) -> bool {
        event == HookEvent::PreCompact
    }

    async fn run(&self, call: HookCall<'_>, _sink: &EventSink) -> HookResult {
        assert_eq!(call.input["hook_event_name"], "PreCompact");
        let trigger = match call.input["trigger"].as_str() {
            Some("manual") => CompactTrigger::Manual,
            _ => CompactTrigger::Auto,
        };
        let custom = call.input["custom_instructions"]
            .as_str()
            .map(str::to_owned);
        self.calls.lock().unwrap().push((trigger, custom));
        HookResult {
            block: self.block.then(|| "not now".to_owned()),
            ..HookResult::default()
        }
    }
}

struct Harness {
    server: MockServer,
    session: Session,
    hooks: Arc<RecordingHooks>,
    _dir: tempfile::TempDir,
}

async fn harness(turns: Vec<ScriptTurn>, tweak: impl FnOnce(&mut AgentConfig)) -> Harness {
    harness_with(turns, tweak, RecordingHooks::default(), Vec::new()).await
}

async fn harness_with(
    turns: Vec<ScriptTurn>,
    tweak: impl FnOnce(&mut AgentConfig),
    hooks: RecordingHooks,
    history: Vec<Message>,
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
        memory: Some(MEMORY.into()),
        cwd: dir.path().to_path_buf(),
        progress_interval: Duration::from_millis(200),
        ..AgentConfig::default()
    };
    tweak(&mut config);
    let hooks = Arc::new(hooks);
    let mut agent = Agent::new(
        config,
        Arc::new(provider),
        ToolRegistry::with_builtins(),
        ctx,
    )
    .with_hooks(hooks.clone());
    if !history.is_empty() {
        agent = agent.with_history(history);
    }
    Harness {
        server,
        session: agent.spawn(),
        hooks,
        _dir: dir,
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

    fn requests(&self) -> Vec<MessagesRequest> {
        self.server
            .messages_requests()
            .iter()
            .map(|r| serde_json::from_value(r.body.clone()).unwrap())
            .collect()
    }

    fn bodies(&self) -> Vec<Value> {
        self.server
            .messages_requests()
            .iter()
            .map(|r| r.body.clone())
            .collect()
    }
}

fn read(path: &str) -> ScriptTurn {
    ScriptTurn::tool_use("Read", json!({"file_path": path}))
}

fn big_usage(input_tokens: u64) -> Option<Usage> {
    Some(Usage {
        input_tokens,
        output_tokens: 50,
        ..Usage::default()
    })
}

/// Four Read turns, the last reporting 170k input tokens; then `after`.
fn growing_session(after: Vec<ScriptTurn>) -> Vec<ScriptTurn> {
    let mut turns = vec![
        read("a.txt"),
        read("b.txt"),
        read("a.txt"),
        ScriptTurn {
            usage: big_usage(170_000),
            ..read("b.txt")
        },
    ];
    turns.extend(after);
    turns
}

fn strip_cache_control(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| k.as_str() != "cache_control")
                .map(|(k, v)| (k.clone(), strip_cache_control(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip_cache_control).collect()),
        other => other.clone(),
    }
}

fn boundaries(events: &[SdkMessage]) -> Vec<(String, u64)> {
    events
        .iter()
        .filter_map(|e| match e {
            SdkMessage::System(SystemMessage::CompactBoundary(b)) => Some((
                b.compact_metadata.trigger.clone(),
                b.compact_metadata.pre_tokens,
            )),
            _ => None,
        })
        .collect()
}

fn notices(events: &[SdkMessage], kind: &str) -> Vec<(String, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            SdkMessage::System(SystemMessage::Informational(i)) if i.kind == kind => {
                Some((i.level.clone(), i.message.clone()))
            }
            _ => None,
        })
        .collect()
}

fn system_text(req: &MessagesRequest) -> String {
    match &req.system {
        Some(SystemPrompt::Text(t)) => t.clone(),
        Some(SystemPrompt::Blocks(b)) => b.iter().map(|b| b.text.as_str()).collect(),
        None => String::new(),
    }
}

fn first_blocks(req: &MessagesRequest) -> Vec<String> {
    req.messages[0]
        .content
        .to_blocks()
        .iter()
        .map(|b| match b {
            ContentBlock::Text(t) => t.text.clone(),
            other => format!("[{}]", other.type_name()),
        })
        .collect()
}

#[tokio::test]
async fn compaction_triggers_at_the_threshold_and_keeps_first_message_summary_and_recent() {
    let summary_turn = ScriptTurn {
        usage: Some(Usage {
            input_tokens: 1_234_567,
            output_tokens: 100,
            ..Usage::default()
        }),
        ..ScriptTurn::text("## Goals\nSUMMARY-TEXT: read a.txt and b.txt")
    };
    let mut h = harness(
        growing_session(vec![summary_turn, ScriptTurn::text("done")]),
        |_| {},
    )
    .await;
    let (events, r) = h.run("the task").await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(r.result.as_deref(), Some("done"));

    let reqs = h.requests();
    assert_eq!(reqs.len(), 6, "4 turns, the summary, the last turn");

    // The summary request: our prompt, no tools, the older messages as text.
    let s = &reqs[4];
    assert!(system_text(s).contains("You are summarising the earlier part of a coding session"));
    assert!(system_text(s).contains("Open work and next steps"));
    assert!(s.tools.is_empty());
    assert_eq!(s.messages.len(), 1);
    let transcript = s.messages[0].content.text();
    assert!(transcript.contains("the task"), "{transcript}");
    assert!(
        transcript.contains(r#"Read({"file_path":"a.txt"})"#),
        "{transcript}"
    );
    assert!(
        transcript.contains("alpha"),
        "the first result is summarised"
    );
    assert!(
        !transcript.contains("Always run the tests"),
        "memory is not summarised"
    );
    // Only the first tool round is summarised; the other three are kept.
    assert_eq!(transcript.matches("Read(").count(), 1, "{transcript}");

    // The next request: first message (memory, prompt, summary) + the last 6 messages verbatim.
    let before = &h.bodies()[3]["messages"];
    let after_req = &reqs[5];
    assert_eq!(after_req.messages.len(), 7);
    let first = first_blocks(after_req);
    assert_eq!(first.len(), 3, "{first:?}");
    assert_eq!(first[0], MEMORY, "memory re-injected first");
    assert_eq!(first[1], "the task");
    assert!(first[2].contains("This session is being continued from a previous conversation"));
    assert!(first[2].contains("SUMMARY-TEXT"));
    let after = &h.bodies()[5]["messages"];
    for k in 0..4 {
        assert_eq!(
            strip_cache_control(&after[1 + k]),
            strip_cache_control(&before[3 + k]),
            "kept message {k} is verbatim"
        );
    }
    assert_eq!(after_req.messages[1].role, Role::Assistant);

    // The tools and the system prompt are byte-identical across the compaction (cache prefix).
    assert_eq!(h.bodies()[3]["tools"], h.bodies()[5]["tools"]);
    assert_eq!(h.bodies()[3]["system"], h.bodies()[5]["system"]);

    // compact_boundary, the hook, and the summary's cost.
    let b = boundaries(&events);
    assert_eq!(b.len(), 1);
    assert_eq!(b[0].0, "auto");
    assert!(b[0].1 > 170_000, "{}", b[0].1);
    assert_eq!(
        *h.hooks.calls.lock().unwrap(),
        vec![(CompactTrigger::Auto, None)]
    );
    assert!(
        h.session
            .status()
            .await
            .unwrap()
            .costs
            .total_usage
            .input_tokens
            > 1_234_567
    );
    // The agent's history is the compacted one (+ the final answer).
    assert_eq!(h.history().await.len(), 8);
}

#[tokio::test]
async fn below_the_threshold_nothing_happens() {
    let turns = vec![
        read("a.txt"),
        ScriptTurn {
            usage: big_usage(150_000),
            ..read("b.txt")
        },
        ScriptTurn::text("done"),
    ];
    let mut h = harness(turns, |_| {}).await;
    let (events, r) = h.run("go").await;
    assert!(!r.is_error);
    assert_eq!(h.requests().len(), 3);
    assert!(boundaries(&events).is_empty());
    assert!(notices(&events, "trim").is_empty());
    assert!(h.hooks.calls.lock().unwrap().is_empty());
}

#[tokio::test]
async fn the_kept_part_never_splits_a_tool_pair() {
    for keep in 1..=7 {
        let mut h = harness(
            growing_session(vec![ScriptTurn::text("S"), ScriptTurn::text("done")]),
            |c| c.compaction.keep_recent = keep,
        )
        .await;
        let (events, r) = h.run("go").await;
        assert!(!r.is_error, "keep {keep}: {r:?}");
        assert_eq!(boundaries(&events).len(), 1, "keep {keep}");
        let last = h.requests().pop().unwrap();
        assert_eq!(last.messages[1].role, Role::Assistant, "keep {keep}");
        let kept = last.messages.len() - 1;
        // 9 messages: at least `keep` kept while a message is left to summarise.
        assert!(kept >= keep.min(6), "keep {keep}: kept {kept}");
        assert!(kept <= keep + 1, "keep {keep}: kept {kept}");
    }
}

#[tokio::test]
async fn a_failed_summary_keeps_the_history_and_trims_with_a_warning() {
    let fail = ScriptTurn::text("done").with_fault(Fault::Status {
        status: 400,
        retry_after: None,
        retry_after_ms: None,
        message: Some("prompt is too long".into()),
    });
    let mut h = harness(growing_session(vec![fail]), |_| {}).await;
    let (events, r) = h.run("go").await;
    assert!(!r.is_error, "{r:?}");
    assert!(boundaries(&events).is_empty());
    let warn = notices(&events, "compaction");
    assert!(
        warn.iter()
            .any(|(l, m)| l == "warning" && m.contains("prompt is too long")),
        "{warn:?}"
    );
    let trims = notices(&events, "trim");
    assert_eq!(trims.len(), 1, "{events:?}");
    assert_eq!(trims[0].0, "warning");
    assert!(
        trims[0].1.contains("earlier messages") && trims[0].1.contains("first prompt is kept"),
        "{}",
        trims[0].1
    );
    let reqs = h.requests();
    assert_eq!(reqs.len(), 6);
    // The summary attempt saw the old history; the next request is trimmed, not summarised.
    let last = &reqs[5];
    assert!(last.messages.len() < 9);
    let first = first_blocks(last);
    assert_eq!(first[0], MEMORY, "memory stays in the first message");
    // The task (the first prompt) is kept, then the note.
    assert_eq!(first[1], "go", "{first:?}");
    assert!(first[2].contains("Earlier conversation trimmed"));
    assert!(!first.iter().any(|b| b.contains("being continued")));
}

#[tokio::test]
async fn an_empty_summary_keeps_the_history_and_trims_with_a_warning() {
    let mut h = harness(
        growing_session(vec![ScriptTurn::text("   "), ScriptTurn::text("done")]),
        |_| {},
    )
    .await;
    let (events, r) = h.run("go").await;
    assert!(!r.is_error, "{r:?}");
    assert!(boundaries(&events).is_empty());
    assert!(
        notices(&events, "compaction")
            .iter()
            .any(|(l, m)| l == "warning" && m.contains("empty summary"))
    );
    assert_eq!(notices(&events, "trim").len(), 1);
    assert_eq!(h.requests().len(), 6);
}

#[tokio::test]
async fn trim_only_strategy_drops_instead_of_summarising() {
    let mut h = harness(growing_session(vec![ScriptTurn::text("done")]), |c| {
        c.compaction.strategy = CompactionStrategy::TrimOnly;
    })
    .await;
    let (events, r) = h.run("go").await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(h.requests().len(), 5, "no summary request");
    assert!(boundaries(&events).is_empty());
    assert_eq!(notices(&events, "trim").len(), 1);
    assert!(h.hooks.calls.lock().unwrap().is_empty());
}

#[tokio::test]
async fn compaction_off_leaves_a_context_below_the_window_alone() {
    let mut h = harness(growing_session(vec![ScriptTurn::text("done")]), |c| {
        c.compaction.strategy = CompactionStrategy::Off;
    })
    .await;
    let (events, _) = h.run("go").await;
    assert!(boundaries(&events).is_empty());
    assert!(notices(&events, "trim").is_empty());
    assert_eq!(h.requests()[4].messages.len(), 9);
}

#[tokio::test]
async fn over_the_window_trims_even_with_compaction_off() {
    let mut turns = growing_session(vec![ScriptTurn::text("done")]);
    turns[3].usage = big_usage(195_000);
    let mut h = harness(turns, |c| {
        c.compaction.strategy = CompactionStrategy::Off;
    })
    .await;
    let (events, _) = h.run("go").await;
    assert_eq!(notices(&events, "trim").len(), 1);
    assert!(h.requests()[4].messages.len() < 9);
}

#[tokio::test]
async fn max_messages_trims_the_oldest_keeping_the_history_valid() {
    let mut turns: Vec<ScriptTurn> = (0..6)
        .map(|i| read(if i % 2 == 0 { "a.txt" } else { "b.txt" }))
        .collect();
    turns.push(ScriptTurn::text("done"));
    let mut h = harness(turns, |c| c.max_messages = Some(5)).await;
    let (events, r) = h.run("go").await;
    assert!(!r.is_error, "{r:?}");
    let reqs = h.requests();
    assert_eq!(reqs.len(), 7);
    for (i, req) in reqs.iter().enumerate() {
        assert!(
            req.messages.len() <= 5,
            "request {i}: {}",
            req.messages.len()
        );
    }
    let trims = notices(&events, "trim");
    assert!(!trims.is_empty());
    assert!(
        trims
            .iter()
            .all(|(l, m)| l == "warning" && m.contains("at most 5 messages"))
    );
    // The memory stays in front.
    assert_eq!(first_blocks(reqs.last().unwrap())[0], MEMORY);
}

#[tokio::test]
async fn manual_compact_uses_the_focus_and_returns_its_events() {
    let mut h = harness(
        vec![
            read("a.txt"),
            read("b.txt"),
            read("a.txt"),
            ScriptTurn::text("first answer"),
            ScriptTurn::text("MANUAL SUMMARY"),
            ScriptTurn::text("second answer"),
        ],
        |_| {},
    )
    .await;
    h.run("first").await;
    let before = h.history().await.len();
    assert_eq!(before, 8);
    let report = h.session.compact(Some("focus on X")).await.unwrap();
    assert_eq!(report.trigger, CompactTrigger::Manual);
    assert_eq!(report.summary, "MANUAL SUMMARY");
    assert_eq!(report.messages_before, 8);
    assert_eq!(report.messages_after, h.history().await.len());
    assert!(report.messages_after < 8);
    assert_eq!(
        boundaries(&report.events),
        vec![("manual".to_owned(), report.pre_tokens)]
    );
    assert_eq!(
        *h.hooks.calls.lock().unwrap(),
        vec![(CompactTrigger::Manual, Some("focus on X".to_owned()))]
    );
    let summary_req = h.requests().pop().unwrap();
    assert!(system_text(&summary_req).ends_with("focus on X"));
    assert!(summary_req.tools.is_empty());
    validate_history(&h.history().await).unwrap();

    // The conversation goes on from the compacted history.
    let (_, r) = h.run("second").await;
    assert_eq!(r.result.as_deref(), Some("second answer"));
    let last = h.requests().pop().unwrap();
    let first = first_blocks(&last);
    assert_eq!(first[0], MEMORY);
    assert_eq!(first[1], "first");
    assert!(first[2].contains("MANUAL SUMMARY"));
    assert_eq!(last.messages.last().unwrap().content.text(), "second");
}

#[tokio::test]
async fn manual_compact_blocked_by_a_hook_or_on_a_short_history_changes_nothing() {
    let hooks = RecordingHooks {
        block: true,
        ..RecordingHooks::default()
    };
    let mut h = harness_with(
        vec![read("a.txt"), read("b.txt"), ScriptTurn::text("answer")],
        |_| {},
        hooks,
        Vec::new(),
    )
    .await;
    assert_eq!(
        h.session.compact(None).await.unwrap_err(),
        CompactError::NothingToCompact
    );
    h.run("first").await;
    let history = h.history().await.to_vec();
    let err = h.session.compact(None).await.unwrap_err();
    assert_eq!(err, CompactError::Blocked("not now".into()));
    assert_eq!(h.history().await, history.as_slice());
    assert_eq!(h.requests().len(), 3, "no summary request");
}

#[tokio::test]
async fn a_failed_manual_compact_leaves_the_history_unchanged() {
    let fail = ScriptTurn::text("x").with_fault(Fault::Status {
        status: 400,
        retry_after: None,
        retry_after_ms: None,
        message: Some("nope".into()),
    });
    let mut h = harness(
        vec![
            read("a.txt"),
            read("b.txt"),
            ScriptTurn::text("answer"),
            fail,
        ],
        |_| {},
    )
    .await;
    h.run("first").await;
    let history = h.history().await.to_vec();
    let err = h.session.compact(None).await.unwrap_err();
    assert!(
        matches!(&err, CompactError::Failed(m) if m.contains("nope")),
        "{err:?}"
    );
    assert_eq!(h.history().await, history.as_slice());
}

#[tokio::test]
async fn interrupting_during_the_summary_keeps_everything() {
    let slow_summary = ScriptTurn {
        delay_first_byte_ms: Some(5_000),
        ..ScriptTurn::text("late summary")
    };
    let mut h = harness(growing_session(vec![slow_summary]), |_| {}).await;
    let mut run = h.session.run("go");
    let mut events = Vec::new();
    while let Some(e) = run.next().await {
        if let SdkMessage::System(SystemMessage::Informational(i)) = &e
            && i.kind == "compaction"
        {
            run.interrupt();
        }
        events.push(e);
    }
    let r = run.result().cloned().unwrap();
    drop(run);
    assert!(r.is_error);
    assert_eq!(r.terminal_reason.as_deref(), Some("aborted_streaming"));
    assert!(boundaries(&events).is_empty());
    assert!(notices(&events, "trim").is_empty());
    assert_eq!(h.history().await.len(), 9, "nothing dropped");
    validate_history(&h.history().await).unwrap();
}

#[tokio::test]
async fn a_resumed_history_is_estimated_before_the_first_call() {
    // No reported count yet: the whole history is estimated (≈ 3 × 35 KB / 3.5 ≈ 30k tokens),
    // which passes 80% of a 30k window.
    let big = "x".repeat(35_000);
    let history = vec![
        Message::user_text(format!("old task {big}")),
        Message::blocks(Role::Assistant, vec![ContentBlock::text(big.clone())]),
        Message::user_text(format!("more {big}")),
        Message::blocks(Role::Assistant, vec![ContentBlock::text("ok")]),
    ];
    let mut h = harness_with(
        vec![
            ScriptTurn::text("RESUMED SUMMARY"),
            ScriptTurn::text("done"),
        ],
        |c| {
            c.context_window = Some(30_000);
            c.compaction.keep_recent = 1;
        },
        RecordingHooks::default(),
        history,
    )
    .await;
    let (events, r) = h.run("continue").await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(boundaries(&events).len(), 1);
    let last = h.requests().pop().unwrap();
    assert_eq!(last.messages.len(), 3);
    let first = first_blocks(&last);
    assert_eq!(first[0], MEMORY, "the configured memory is injected");
    assert!(first[1].starts_with("old task"));
    assert!(first[2].contains("RESUMED SUMMARY"));
    assert_eq!(last.messages[2].content.text(), "continue");
}

#[tokio::test]
async fn the_threshold_can_be_tokens_and_the_window_overridden() {
    let turns = |n| {
        vec![
            read("a.txt"),
            ScriptTurn {
                usage: big_usage(n),
                ..read("b.txt")
            },
            ScriptTurn::text("S"),
            ScriptTurn::text("done"),
        ]
    };
    // 60k tokens passes a 50k-token threshold.
    let mut h = harness(turns(60_000), |c| {
        c.compaction.threshold = CompactionThreshold::Tokens(50_000);
        c.compaction.keep_recent = 2;
    })
    .await;
    let (events, _) = h.run("go").await;
    assert_eq!(boundaries(&events).len(), 1);
    // 85k passes 80% of a 100k window.
    let mut h = harness(turns(85_000), |c| {
        c.context_window = Some(100_000);
        c.compaction.keep_recent = 2;
    })
    .await;
    let (events, _) = h.run("go").await;
    assert_eq!(boundaries(&events).len(), 1);
}

#[tokio::test]
async fn caching_off_sends_no_breakpoints_and_on_sends_three() {
    let turns = || {
        vec![
            ScriptTurn {
                content: vec![ScriptBlock::ToolUse {
                    id: None,
                    name: "Read".into(),
                    input: json!({"file_path": "a.txt"}),
                }],
                ..ScriptTurn::default()
            },
            ScriptTurn::text("ok"),
        ]
    };
    let mut h = harness(turns(), |c| c.prompt_caching = false).await;
    h.run("hi").await;
    for body in h.bodies() {
        assert!(!body.to_string().contains("cache_control"), "{body}");
    }
    let mut h = harness(turns(), |_| {}).await;
    h.run("hi").await;
    for body in h.bodies() {
        let s = body.to_string();
        assert_eq!(s.matches("\"cache_control\"").count(), 3, "{s}");
        let msgs = body["messages"].as_array().unwrap();
        let last = msgs.last().unwrap()["content"].as_array().unwrap();
        assert!(last.last().unwrap().get("cache_control").is_some());
    }
}
