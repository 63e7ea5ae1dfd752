//! The session actor from a client's side: ops sent while a turn runs (queued messages, model
//! and mode switches, interrupts), approvals as request/response pairs, what survives a client
//! that goes away, and the dispatch limits. Every request goes to the mock, which rejects any
//! the real API would reject.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use skiff_core::permissions::{
    AskClient, PermissionChecker, PermissionDecision, PermissionMode, PermissionQuery,
};
use skiff_core::store::{SessionEntry, SessionStore};
use skiff_core::{
    Agent, AgentConfig, Answer, ApprovalAnswer, DeltaMode, Event, Op, RequestKind, Session,
};
use skiff_llm::{AnthropicConfig, AnthropicProvider, Credential, RetryPolicy};
use skiff_protocol::script::{ScriptBlock, ScriptTurn};
use skiff_protocol::sdk::{ResultMessage, SdkMessage};
use skiff_protocol::{
    ContentBlock, Message, MessageContent, MessagesRequest, Role, ToolResultContent,
    validate_history,
};
use skiff_testkit::MockServer;
use skiff_tools::{Tool, ToolContext, ToolOutput, ToolRegistry};

struct Setup {
    server: MockServer,
    dir: tempfile::TempDir,
}

async fn setup(turns: Vec<ScriptTurn>) -> Setup {
    let server = MockServer::builder().turns(turns).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    Setup { server, dir }
}

impl Setup {
    fn agent(&self, tools: ToolRegistry) -> Agent {
        let mut cfg = AnthropicConfig::new(Credential::api_key("sk-test"));
        cfg.base_url = self.server.url();
        cfg.retry = RetryPolicy {
            base_delay: Duration::from_millis(5),
            ..RetryPolicy::default()
        };
        let config = AgentConfig {
            system_prompt: vec!["You are a test agent.".into()],
            cwd: self.dir.path().to_path_buf(),
            progress_interval: Duration::from_millis(100),
            deltas: DeltaMode::Off,
            ..AgentConfig::default()
        };
        Agent::new(
            config,
            Arc::new(AnthropicProvider::new(cfg).unwrap()),
            tools,
            ToolContext::new(self.dir.path()).unwrap(),
        )
    }

    fn requests(&self) -> Vec<MessagesRequest> {
        self.server
            .messages_requests()
            .iter()
            .map(|r| serde_json::from_value(r.body.clone()).unwrap())
            .collect()
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

/// Read events until `n` result frames arrived; answer requests with `answer`.
async fn results(
    session: &mut Session,
    n: usize,
    mut answer: impl FnMut(&RequestKind) -> Answer,
) -> (Vec<Event>, Vec<ResultMessage>) {
    let mut events = Vec::new();
    let mut results = Vec::new();
    while results.len() < n {
        let ev = tokio::time::timeout(Duration::from_secs(20), session.next_event())
            .await
            .expect("no event for 20 s")
            .expect("the session ended early");
        match &ev {
            Event::Frame(SdkMessage::Result(r)) => results.push(r.clone()),
            Event::Request(r) => session.reply(r.id.clone(), answer(&r.kind)).unwrap(),
            _ => {}
        }
        events.push(ev);
    }
    (events, results)
}

fn tool_results(events: &[Event]) -> Vec<(String, bool)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Frame(SdkMessage::User(u)) => match &u.message.content {
                MessageContent::Blocks(b) => match b.first() {
                    Some(ContentBlock::ToolResult(r)) => Some((
                        match &r.content {
                            Some(ToolResultContent::Text(t)) => t.clone(),
                            _ => String::new(),
                        },
                        r.is_error == Some(true),
                    )),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn messages_sent_during_a_turn_are_queued_and_run_next_in_order() {
    let s = setup(vec![
        ScriptTurn {
            delay_first_byte_ms: Some(300),
            ..ScriptTurn::text("first answer")
        },
        ScriptTurn::text("second answer"),
        ScriptTurn::text("third answer"),
    ])
    .await;
    let mut session = s.agent(ToolRegistry::with_builtins()).spawn();
    session.send_message("one").unwrap();
    session.send_message("two").unwrap();
    session
        .send_message(vec![ContentBlock::text("three as blocks")])
        .unwrap();
    let (events, rs) = results(&mut session, 3, |_| unreachable!()).await;
    let texts: Vec<_> = rs.iter().map(|r| r.result.clone().unwrap()).collect();
    assert_eq!(texts, ["first answer", "second answer", "third answer"]);
    // Running / Idle: the session only goes idle once the queue is empty.
    let idle_before_last = events
        .iter()
        .take_while(|e| !matches!(e, Event::Frame(SdkMessage::Result(r)) if r.result.as_deref() == Some("third answer")))
        .filter(|e| matches!(e, Event::Idle))
        .count();
    assert_eq!(idle_before_last, 0);
    let reqs = s.requests();
    assert_eq!(reqs.len(), 3);
    // The third request carries the whole conversation before it.
    let last = &reqs[2].messages;
    assert_eq!(last.len(), 5);
    assert_eq!(last[2], Message::user_text("two"));
    session.shutdown().await;
}

#[tokio::test]
async fn a_model_switch_mid_turn_applies_to_the_next_request() {
    let s = setup(vec![
        ScriptTurn {
            delay_first_byte_ms: Some(300),
            ..ScriptTurn::tool_use("Read", json!({"file_path": "a.txt"}))
        },
        ScriptTurn::text("done"),
    ])
    .await;
    let mut session = s.agent(ToolRegistry::with_builtins()).spawn();
    session.send_message("read").unwrap();
    while s.server.request_count() == 0 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    session.handle().set_model("claude-haiku-4-5").unwrap();
    let (_, rs) = results(&mut session, 1, |_| unreachable!()).await;
    assert!(!rs[0].is_error);
    let models: Vec<String> = s.requests().iter().map(|r| r.model.clone()).collect();
    // The switch arrived while the first request was in flight.
    assert_eq!(models, ["claude-sonnet-4-5", "claude-haiku-4-5"]);
    // Costs are tracked per model.
    assert_eq!(rs[0].model_usage.len(), 2);
    assert_eq!(session.status().await.unwrap().model, "claude-haiku-4-5");
    session.shutdown().await;
}

/// Asks for every Bash call; records the mode each call was decided in.
#[derive(Default)]
struct AskForBash {
    modes: Mutex<Vec<PermissionMode>>,
}

#[async_trait::async_trait]
impl PermissionChecker for AskForBash {
    async fn check(&self, q: &PermissionQuery<'_>) -> PermissionDecision {
        self.modes.lock().unwrap().push(q.mode);
        if q.tool == "Bash" {
            PermissionDecision::Ask {
                message: "Bash needs approval".into(),
            }
        } else {
            PermissionDecision::Allow
        }
    }
}

#[tokio::test]
async fn approvals_are_asked_one_at_a_time_in_request_order_and_answered_by_id() {
    let s = setup(vec![
        turn(vec![
            tool("Bash", json!({"command": "touch first"})),
            tool("Read", json!({"file_path": "a.txt"})),
            tool("Bash", json!({"command": "touch second"})),
        ]),
        ScriptTurn::text("done"),
    ])
    .await;
    let checker = Arc::new(AskForBash::default());
    let mut session = s
        .agent(ToolRegistry::with_builtins())
        .with_permissions(checker.clone())
        .with_approver(Arc::new(AskClient))
        .spawn();
    session
        .handle()
        .set_permission_mode(PermissionMode::AcceptEdits)
        .unwrap();
    session.send_message("touch two files").unwrap();
    let mut asked = Vec::new();
    let (events, rs) = results(&mut session, 1, |kind| {
        let RequestKind::Approval(a) = kind else {
            panic!("unexpected request {kind:?}");
        };
        asked.push(a.input["command"].as_str().unwrap().to_owned());
        if asked.len() == 1 {
            Answer::Approval(ApprovalAnswer::allow())
        } else {
            Answer::Approval(ApprovalAnswer::deny("not that one"))
        }
    })
    .await;
    assert_eq!(asked, ["touch first", "touch second"]);
    // The second request came only after the first was answered.
    let requests: Vec<usize> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e, Event::Request(_)))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(requests.len(), 2);
    assert!(s.dir.path().join("first").exists());
    assert!(!s.dir.path().join("second").exists());
    let res = tool_results(&events);
    assert_eq!(res.len(), 3);
    assert!(!res[0].1 && !res[1].1);
    assert_eq!(res[2], ("not that one".to_owned(), true));
    assert_eq!(rs[0].permission_denials.len(), 1);
    assert_eq!(
        rs[0].permission_denials[0].tool_input["command"],
        "touch second"
    );
    assert!(
        checker
            .modes
            .lock()
            .unwrap()
            .iter()
            .all(|m| *m == PermissionMode::AcceptEdits)
    );
    session.shutdown().await;
}

#[tokio::test]
async fn an_interrupt_withdraws_the_pending_approval_and_keeps_the_history_valid() {
    let s = setup(vec![
        ScriptTurn::tool_use("Bash", json!({"command": "touch never"})),
        ScriptTurn::text("after the interrupt"),
    ])
    .await;
    let mut session = s
        .agent(ToolRegistry::with_builtins())
        .with_permissions(Arc::new(AskForBash::default()))
        .with_approver(Arc::new(AskClient))
        .spawn();
    session.send_message("go").unwrap();
    let pending = loop {
        match session.next_event().await.unwrap() {
            Event::Request(r) => break r,
            _ => continue,
        }
    };
    session.interrupt();
    let mut withdrawn = None;
    let result = loop {
        match session.next_event().await.unwrap() {
            Event::RequestCancelled(id) => withdrawn = Some(id),
            Event::Frame(SdkMessage::Result(r)) => break r,
            _ => {}
        }
    };
    assert_eq!(withdrawn, Some(pending.id.clone()));
    assert!(result.is_error);
    assert_eq!(result.terminal_reason.as_deref(), Some("aborted_tools"));
    // A late answer to the withdrawn request is ignored.
    session
        .reply(pending.id, Answer::Approval(ApprovalAnswer::allow()))
        .unwrap();
    assert!(!s.dir.path().join("never").exists());
    let history = session.history().await.unwrap();
    validate_history(&history).unwrap();
    // The next message works on that history (the mock rejects invalid ones).
    session.send_message("again").unwrap();
    let (_, rs) = results(&mut session, 1, |_| unreachable!()).await;
    assert_eq!(rs[0].result.as_deref(), Some("after the interrupt"));
    session.shutdown().await;
}

#[tokio::test]
async fn a_denial_that_interrupts_ends_the_turn() {
    let s = setup(vec![
        turn(vec![
            tool("Bash", json!({"command": "touch one"})),
            tool("Bash", json!({"command": "touch two"})),
        ]),
        ScriptTurn::text("never asked"),
    ])
    .await;
    let mut session = s
        .agent(ToolRegistry::with_builtins())
        .with_permissions(Arc::new(AskForBash::default()))
        .with_approver(Arc::new(AskClient))
        .spawn();
    session.send_message("go").unwrap();
    let mut asked = 0;
    let (events, rs) = results(&mut session, 1, |_| {
        asked += 1;
        Answer::Approval(ApprovalAnswer::Deny {
            message: "stop everything".into(),
            interrupt: true,
        })
    })
    .await;
    assert_eq!(asked, 1, "the second call is not asked after an interrupt");
    assert!(rs[0].is_error);
    let res = tool_results(&events);
    assert_eq!(res[0], ("stop everything".to_owned(), true));
    assert!(res[1].1);
    assert_eq!(s.requests().len(), 1);
    session.shutdown().await;
}

/// Whether `pid` is alive (zombies count as dead).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_none_or(|(_, rest)| !rest.starts_with('Z')),
        Err(_) => false,
    }
}

async fn gone(pid: i32) -> bool {
    for _ in 0..100 {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

async fn wait_for_pid(path: &std::path::Path) -> i32 {
    for _ in 0..200 {
        if let Ok(text) = std::fs::read_to_string(path)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{} never appeared", path.display());
}

#[tokio::test]
async fn dropping_a_run_while_bash_runs_kills_it_and_the_next_run_works() {
    let s = setup(vec![
        ScriptTurn::tool_use("Bash", json!({"command": "echo $$ > bash.pid; sleep 30"})),
        ScriptTurn::text("fine"),
    ])
    .await;
    let mut session = s.agent(ToolRegistry::with_builtins()).spawn();
    let pid_file = s.dir.path().join("bash.pid");
    {
        let mut run = session.run("sleep");
        // Read until the command runs, then drop the run mid-call.
        loop {
            tokio::select! {
                f = run.next() => assert!(f.is_some(), "the run ended early"),
                () = tokio::time::sleep(Duration::from_millis(50)) => {
                    if std::fs::read_to_string(&pid_file).is_ok_and(|t| t.ends_with('\n')) {
                        break;
                    }
                }
            }
        }
    }
    let pid = wait_for_pid(&pid_file).await;
    assert!(gone(pid).await, "bash outlived the dropped run");
    let r = session.run("next").finish().await;
    assert_eq!(r.result.as_deref(), Some("fine"), "{r:?}");
    let history = session.history().await.unwrap();
    validate_history(&history).unwrap();
    // The interrupted call got its result, then the new prompt followed.
    let second = &s.requests()[1].messages;
    assert_eq!(second.len(), 3);
    session.shutdown().await;
}

/// Records what the store is told, as the loader would see it.
#[derive(Default)]
struct Recorded(Mutex<Vec<(Role, Vec<ContentBlock>)>>);

impl SessionStore for Recorded {
    fn append(&self, entry: SessionEntry<'_>) {
        let e = match entry {
            SessionEntry::User { blocks, .. } => (Role::User, blocks.to_vec()),
            SessionEntry::Assistant { message } => (Role::Assistant, message.content.clone()),
        };
        self.0.lock().unwrap().push(e);
    }
}

#[tokio::test]
async fn a_client_that_goes_away_mid_turn_leaves_a_valid_recorded_history() {
    let s = setup(vec![
        ScriptTurn::tool_use("Bash", json!({"command": "echo $$ > bash.pid; sleep 30"})),
        ScriptTurn::text("unused"),
    ])
    .await;
    let store = Arc::new(Recorded::default());
    let mut session = s
        .agent(ToolRegistry::with_builtins())
        .with_session(store.clone())
        .spawn();
    session.send_message("sleep").unwrap();
    let pid = wait_for_pid(&s.dir.path().join("bash.pid")).await;
    drop(session);
    assert!(gone(pid).await, "bash outlived the session");
    // The store saw the call answered (as interrupted), so a resume is valid.
    for _ in 0..100 {
        if store.0.lock().unwrap().len() >= 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let entries = store.0.lock().unwrap().clone();
    let mut warnings = Vec::new();
    let history = skiff_core::transcript::repair_history(entries, &mut warnings);
    assert!(warnings.is_empty(), "{warnings:?}");
    validate_history(&history).unwrap();
    assert_eq!(history.len(), 3);
}

#[tokio::test]
async fn shutdown_finishes_what_was_submitted() {
    let s = setup(vec![ScriptTurn::text("a"), ScriptTurn::text("b")]).await;
    let mut session = s.agent(ToolRegistry::with_builtins()).spawn();
    session.send_message("1").unwrap();
    session.send_message("2").unwrap();
    session.submit(Op::Shutdown).unwrap();
    let mut results = Vec::new();
    while let Some(ev) = session.next_event().await {
        if let Event::Frame(SdkMessage::Result(r)) = ev {
            results.push(r.result.unwrap());
        }
    }
    assert_eq!(results, ["a", "b"]);
    assert!(session.send_message("too late").is_err());
}

#[tokio::test]
async fn clear_starts_a_new_conversation() {
    let s = setup(vec![ScriptTurn::text("one"), ScriptTurn::text("two")]).await;
    let mut session = s.agent(ToolRegistry::with_builtins()).spawn();
    session.run("first").finish().await;
    session.submit(Op::Clear).unwrap();
    session.run("second").finish().await;
    let second = &s.requests()[1].messages;
    assert_eq!(second.len(), 1);
    assert_eq!(second[0].content.text(), "second");
    session.shutdown().await;
}

/// A read-only tool that records how many of its calls run at once.
struct Counting {
    running: Arc<AtomicUsize>,
    peak: Arc<AtomicUsize>,
}

#[async_trait::async_trait]
impl Tool for Counting {
    fn name(&self) -> &str {
        "Count"
    }
    fn description(&self) -> &str {
        "counts"
    }
    fn input_schema(&self) -> &Value {
        static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
        SCHEMA.get_or_init(|| json!({"type": "object", "properties": {"n": {"type": "integer"}}}))
    }
    fn is_read_only(&self) -> bool {
        true
    }
    fn is_concurrency_safe(&self, _: &Value) -> bool {
        true
    }
    async fn call(&self, input: Value, _: &ToolContext) -> ToolOutput {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(20)).await;
        self.running.fetch_sub(1, Ordering::SeqCst);
        ToolOutput::text(format!("n={}", input["n"]))
    }
}

#[tokio::test]
async fn parallel_calls_are_capped_and_results_keep_request_order() {
    let calls: Vec<ScriptBlock> = (0..40).map(|n| tool("Count", json!({"n": n}))).collect();
    let s = setup(vec![turn(calls), ScriptTurn::text("counted")]).await;
    let running = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let mut tools = ToolRegistry::with_builtins();
    tools
        .register(Arc::new(Counting {
            running: running.clone(),
            peak: peak.clone(),
        }))
        .unwrap();
    let mut agent = s.agent(tools);
    agent.config_mut().max_parallel_tools = 4;
    let mut session = agent.spawn();
    session.send_message("count").unwrap();
    let (events, _) = results(&mut session, 1, |_| unreachable!()).await;
    assert_eq!(peak.load(Ordering::SeqCst), 4);
    let res = tool_results(&events);
    let expected: Vec<(String, bool)> = (0..40).map(|n| (format!("n={n}"), false)).collect();
    assert_eq!(res, expected);
    session.shutdown().await;
}

#[tokio::test]
async fn a_turn_of_1500_reads_completes_within_the_cap() {
    let calls: Vec<ScriptBlock> = (0..1500)
        .map(|_| tool("Read", json!({"file_path": "a.txt"})))
        .collect();
    let s = setup(vec![turn(calls), ScriptTurn::text("read them all")]).await;
    let mut session = s.agent(ToolRegistry::with_builtins()).spawn();
    session.send_message("read").unwrap();
    let (events, rs) = results(&mut session, 1, |_| unreachable!()).await;
    assert_eq!(rs[0].result.as_deref(), Some("read them all"));
    let res = tool_results(&events);
    assert_eq!(res.len(), 1500);
    assert!(res.iter().all(|(t, err)| !err && t.contains("alpha")));
    session.shutdown().await;
}

#[tokio::test]
async fn a_run_answers_requests_it_meets_with_the_default() {
    let s = setup(vec![
        ScriptTurn::tool_use("Bash", json!({"command": "touch nope"})),
        ScriptTurn::text("ok"),
    ])
    .await;
    let mut session = s
        .agent(ToolRegistry::with_builtins())
        .with_permissions(Arc::new(AskForBash::default()))
        .with_approver(Arc::new(AskClient))
        .spawn();
    let r = session.run("go").finish().await;
    assert_eq!(r.result.as_deref(), Some("ok"));
    assert_eq!(r.permission_denials.len(), 1);
    assert!(!s.dir.path().join("nope").exists());
    session.shutdown().await;
}

/// A PreToolUse hook that asks the client (as an SDK's hook callback does) and blocks the call
/// when the client says so.
struct AskingHook {
    client: skiff_core::requests::Requester,
}

#[async_trait::async_trait]
impl skiff_core::hooks::HookRunner for AskingHook {
    fn wants(&self, event: skiff_core::hooks::HookEvent) -> bool {
        event == skiff_core::hooks::HookEvent::PreToolUse
    }

    async fn run(
        &self,
        call: skiff_core::hooks::HookCall<'_>,
        _sink: &skiff_core::frames::EventSink,
    ) -> skiff_core::hooks::HookResult {
        let tool_use_id = call.input["tool_use_id"].as_str().map(str::to_owned);
        let asked = self
            .client
            .ask(RequestKind::Callback {
                callback_id: "hook_0".into(),
                input: call.input.clone(),
                tool_use_id,
            })
            .await;
        match asked {
            Ok(Answer::Json(v)) if v["decision"] == "block" => skiff_core::hooks::HookResult {
                block: Some(v["reason"].as_str().unwrap_or_default().to_owned()),
                ..Default::default()
            },
            _ => skiff_core::hooks::HookResult::default(),
        }
    }
}

#[tokio::test]
async fn hook_callbacks_are_requests_the_client_answers_by_id() {
    let s = setup(vec![
        turn(vec![
            tool("Bash", json!({"command": "touch allowed"})),
            tool("Bash", json!({"command": "touch blocked"})),
        ]),
        ScriptTurn::text("done"),
    ])
    .await;
    let agent = s.agent(ToolRegistry::with_builtins());
    let hook = AskingHook {
        client: agent.requester(),
    };
    let mut session = agent.with_hooks(Arc::new(hook)).spawn();
    session.send_message("go").unwrap();
    let mut seen = Vec::new();
    let (events, _) = results(&mut session, 1, |kind| {
        let RequestKind::Callback {
            callback_id, input, ..
        } = kind
        else {
            panic!("unexpected {kind:?}");
        };
        assert_eq!(callback_id, "hook_0");
        let command = input["tool_input"]["command"].as_str().unwrap().to_owned();
        seen.push(command.clone());
        if command.contains("blocked") {
            Answer::Json(json!({"decision": "block", "reason": "not this one"}))
        } else {
            Answer::Json(json!({}))
        }
    })
    .await;
    assert_eq!(seen, ["touch allowed", "touch blocked"]);
    assert!(s.dir.path().join("allowed").exists());
    assert!(!s.dir.path().join("blocked").exists());
    let res = tool_results(&events);
    assert!(res[1].1 && res[1].0.contains("not this one"), "{res:?}");
    session.shutdown().await;
}

#[tokio::test]
async fn plan_mode_blocks_edits_until_the_user_approves_the_plan() {
    let s = setup(vec![
        ScriptTurn::tool_use("Write", json!({"file_path": "plan.txt", "content": "x"})),
        ScriptTurn::tool_use("ExitPlanMode", json!({"plan": "1. write plan.txt"})),
        ScriptTurn::tool_use("Write", json!({"file_path": "plan.txt", "content": "x"})),
        ScriptTurn::text("written"),
    ])
    .await;
    let root = s.dir.path().to_path_buf();
    let engine = Arc::new(skiff_core::permissions::PermissionEngine::new(
        skiff_core::permissions::RuleSet::default(),
        skiff_core::permissions::Workspace::new(&root, &[]),
    ));
    let mut session = s
        .agent(ToolRegistry::with_builtins())
        .with_permissions(engine)
        .with_approver(Arc::new(AskClient))
        .spawn();
    session
        .handle()
        .set_permission_mode(PermissionMode::Plan)
        .unwrap();
    session.send_message("plan, then write").unwrap();
    let mut plans = Vec::new();
    let handle = session.handle();
    let (events, _) = results(&mut session, 1, |kind| {
        let RequestKind::Approval(a) = kind else {
            panic!("unexpected request {kind:?}");
        };
        assert_eq!(a.tool_name, "ExitPlanMode", "only the plan is asked about");
        plans.push(a.input["plan"].as_str().unwrap().to_owned());
        // The client picks the next mode through the session, then approves.
        handle
            .update_permissions(vec![skiff_core::permissions::PermissionUpdate::mode(
                PermissionMode::AcceptEdits,
            )])
            .unwrap();
        Answer::Approval(ApprovalAnswer::allow())
    })
    .await;
    assert_eq!(plans, ["1. write plan.txt"]);
    let res = tool_results(&events);
    assert!(res[0].1 && res[0].0.contains("plan mode"), "{:?}", res[0]);
    assert_eq!(
        res[1],
        (skiff_tools::exit_plan::PLAN_APPROVED.to_owned(), false)
    );
    assert!(!res[2].1, "{:?}", res[2]);
    assert!(root.join("plan.txt").exists());
    let status = session.status().await.unwrap();
    assert_eq!(status.permission_mode, PermissionMode::AcceptEdits);
    // The model was told it is in plan mode.
    let first = &s.server.messages_requests()[0];
    assert!(first.body.to_string().contains("Plan mode is active"));
    session.shutdown().await;
}
