//! The terminal UI's ops on the session: `!cmd` (Op::Shell) runs through the permission checks
//! and approvals and lands in the conversation without a model call; a rewind (Op::Rewind)
//! cuts the conversation before a message, and with file checkpoints the files go back too.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use skiff_core::permissions::{AskClient, PermissionChecker, PermissionDecision, PermissionQuery};
use skiff_core::{Agent, AgentConfig, Answer, ApprovalAnswer, DeltaMode, Event, Op, Session};
use skiff_llm::{AnthropicConfig, AnthropicProvider, Credential};
use skiff_protocol::script::ScriptTurn;
use skiff_protocol::sdk::SdkMessage;
use skiff_protocol::{MessagesRequest, Role};
use skiff_testkit::MockServer;
use skiff_tools::{ToolContext, ToolRegistry};

/// Bash asks; everything else is allowed.
struct AskForBash;

#[async_trait::async_trait]
impl PermissionChecker for AskForBash {
    async fn check(&self, q: &PermissionQuery<'_>) -> PermissionDecision {
        if q.tool == "Bash" {
            PermissionDecision::Ask {
                message: "Bash needs approval".into(),
            }
        } else {
            PermissionDecision::Allow
        }
    }
}

fn agent(server: &MockServer, dir: &std::path::Path, checkpoints: bool) -> Agent {
    let mut cfg = AnthropicConfig::new(Credential::api_key("sk-test"));
    cfg.base_url = server.url();
    let config = AgentConfig {
        system_prompt: vec!["You are a test agent.".into()],
        cwd: dir.to_path_buf(),
        deltas: DeltaMode::Off,
        ..AgentConfig::default()
    };
    let ctx = ToolContext::new(dir).unwrap();
    if checkpoints {
        ctx.changes.enable_checkpoints();
    }
    Agent::new(
        config,
        Arc::new(AnthropicProvider::new(cfg).unwrap()),
        ToolRegistry::with_builtins(),
        ctx,
    )
    .with_permissions(Arc::new(AskForBash))
    .with_approver(Arc::new(AskClient))
}

/// Events until the session is idle; approvals answered with `allow`.
async fn until_idle(session: &mut Session, allow: bool) -> Vec<Event> {
    let mut out = Vec::new();
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(20), session.next_event())
            .await
            .expect("no event for 20 s")
            .expect("the session ended");
        if let Event::Request(r) = &ev {
            let answer = if allow {
                ApprovalAnswer::allow()
            } else {
                ApprovalAnswer::deny("no")
            };
            session
                .reply(r.id.clone(), Answer::Approval(answer))
                .unwrap();
        }
        let idle = matches!(ev, Event::Idle);
        out.push(ev);
        if idle {
            return out;
        }
    }
}

fn requests(server: &MockServer) -> Vec<MessagesRequest> {
    server
        .messages_requests()
        .iter()
        .map(|r| serde_json::from_value(r.body.clone()).unwrap())
        .collect()
}

#[tokio::test]
async fn a_users_shell_command_is_approved_run_and_joins_the_next_prompt() {
    let server = MockServer::builder()
        .turn(ScriptTurn::text("I see the output"))
        .start()
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut session = agent(&server, dir.path(), false).spawn();
    session
        .submit(Op::Shell(
            "echo hello-from-shell > out.txt && cat out.txt".into(),
        ))
        .unwrap();
    let events = until_idle(&mut session, true).await;
    assert!(
        events.iter().any(|e| matches!(e, Event::Request(_))),
        "the command went through the permission check"
    );
    let frame = events
        .iter()
        .find_map(|e| match e {
            Event::Frame(SdkMessage::User(u)) => Some(u.message.content.text()),
            _ => None,
        })
        .expect("a user frame with the output");
    assert!(
        frame.contains("<bash-input>echo hello-from-shell"),
        "{frame}"
    );
    assert!(frame.contains("<bash-stdout>hello-from-shell"), "{frame}");
    assert!(server.messages_requests().is_empty(), "no model call");
    assert!(dir.path().join("out.txt").exists());

    // Denied: not run, and the conversation says so.
    session
        .submit(Op::Shell("touch denied.txt".into()))
        .unwrap();
    until_idle(&mut session, false).await;
    assert!(!dir.path().join("denied.txt").exists());

    session.run("what happened?").finish().await;
    let reqs = requests(&server);
    skiff_protocol::validate_history(&reqs[0].messages).unwrap();
    let first = reqs[0].messages[0].content.text();
    assert!(first.contains("<bash-stdout>hello-from-shell"), "{first}");
    assert!(first.contains("what happened?"), "{first}");
    session.shutdown().await;
}

#[tokio::test]
async fn a_rewind_cuts_the_conversation_and_puts_the_files_back() {
    let server = MockServer::builder()
        .turn(ScriptTurn::tool_use(
            "Write",
            json!({"file_path": "a.txt", "content": "one\n"}),
        ))
        .turn(ScriptTurn::text("wrote one"))
        .turn(ScriptTurn::tool_use(
            "Edit",
            json!({"file_path": "a.txt", "old_string": "one", "new_string": "two"}),
        ))
        .turn(ScriptTurn::text("made it two"))
        .turn(ScriptTurn::text("fresh"))
        .start()
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut session = agent(&server, dir.path(), true).spawn();
    session.submit(Op::Checkpoint("c1".into())).unwrap();
    session.run("first").finish().await;
    session.submit(Op::Checkpoint("c2".into())).unwrap();
    session.run("second").finish().await;
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "two\n"
    );
    let history = session.history().await.unwrap();
    let second = history
        .iter()
        .position(|m| m.role == Role::User && m.content.text().contains("second"))
        .unwrap();
    let report = session
        .handle()
        .rewind_files("c2", false)
        .unwrap()
        .await
        .unwrap()
        .unwrap();
    assert_eq!(report.files_changed.len(), 1);
    session.submit(Op::Rewind(second)).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "one\n"
    );
    assert_eq!(session.history().await.unwrap().len(), second);
    session.run("instead").finish().await;
    let last = requests(&server).pop().unwrap();
    skiff_protocol::validate_history(&last.messages).unwrap();
    let all: String = last.messages.iter().map(|m| m.content.text()).collect();
    assert!(all.contains("first") && all.contains("instead"), "{all}");
    assert!(!all.contains("second"), "{all}");
    session.shutdown().await;
}
