//! The options a host sets on a run, against the scripted mock server: the budget checked after
//! every model call (pending calls answered as not run), structured output (the
//! `StructuredOutput` tool, validated, bounded attempts), thinking and effort in the requests,
//! and an interrupt that keeps the partial answer.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use skiff_core::structured::OutputSchema;
use skiff_core::{Agent, AgentConfig, Reasoning, Session, ThinkingMode};
use skiff_llm::{AnthropicConfig, AnthropicProvider, Credential, RetryPolicy};
use skiff_protocol::script::{ScriptBlock, ScriptTurn};
use skiff_protocol::sdk::{ResultMessage, ResultSubtype, SdkMessage};
use skiff_protocol::{
    ContentBlock, MessageContent, Role, ToolResultContent, Usage, validate_history,
};
use skiff_testkit::MockServer;
use skiff_tools::{ToolContext, ToolRegistry};

struct Harness {
    server: MockServer,
    session: Session,
    dir: tempfile::TempDir,
}

async fn harness(turns: Vec<ScriptTurn>, tweak: impl FnOnce(&mut AgentConfig)) -> Harness {
    let server = MockServer::builder().turns(turns).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = AnthropicConfig::new(Credential::api_key("sk-test"));
    cfg.base_url = server.url();
    cfg.retry = RetryPolicy {
        base_delay: Duration::from_millis(5),
        ..RetryPolicy::default()
    };
    let provider = AnthropicProvider::new(cfg).unwrap();
    let ctx = ToolContext::new(dir.path()).unwrap();
    let mut config = AgentConfig {
        system_prompt: vec!["You are a test agent.".into()],
        cwd: dir.path().to_path_buf(),
        ..AgentConfig::default()
    };
    tweak(&mut config);
    let agent = Agent::new(
        config,
        Arc::new(provider),
        ToolRegistry::with_builtins(),
        ctx,
    );
    Harness {
        server,
        session: agent.spawn(),
        dir,
    }
}

impl Harness {
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
}

fn tool(id: &str, name: &str, input: Value) -> ScriptBlock {
    ScriptBlock::ToolUse {
        id: Some(id.into()),
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

/// The tool results shown to the client: (id, is_error, text).
fn tool_results(events: &[SdkMessage]) -> Vec<(String, bool, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            SdkMessage::User(u) => match &u.message.content {
                MessageContent::Blocks(b) => match b.first() {
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

fn expensive() -> Usage {
    Usage {
        input_tokens: 100_000,
        output_tokens: 10_000,
        ..Usage::default()
    }
}

#[tokio::test]
async fn past_the_budget_the_pending_calls_do_not_run() {
    let t1 = ScriptTurn {
        usage: Some(expensive()),
        ..turn(vec![
            ScriptBlock::Text {
                text: "Creating it.".into(),
            },
            tool(
                "toolu_b1",
                "Write",
                json!({"file_path": "made.txt", "content": "x"}),
            ),
            tool("toolu_b2", "Bash", json!({"command": "touch ran.txt"})),
        ])
    };
    let mut h = harness(vec![t1, ScriptTurn::text("never")], |c| {
        c.max_budget_usd = Some(0.10);
        c.permission_mode = skiff_core::PermissionMode::BypassPermissions;
    })
    .await;
    let (events, r) = h.run("spend").await;
    assert_eq!(r.subtype, ResultSubtype::ErrorMaxBudgetUsd);
    assert_eq!(r.errors, ["Reached maximum budget ($0.1)"]);
    assert_eq!(r.terminal_reason.as_deref(), Some("budget_exhausted"));
    assert!(!h.dir.path().join("made.txt").exists(), "Write ran");
    assert!(!h.dir.path().join("ran.txt").exists(), "Bash ran");
    let results = tool_results(&events);
    assert_eq!(results.len(), 2, "{results:?}");
    for (id, (got, is_error, text)) in ["toolu_b1", "toolu_b2"].iter().zip(&results) {
        assert_eq!(got, id);
        assert!(is_error);
        assert!(
            text.contains("not run") && text.contains("budget"),
            "{text}"
        );
    }
    assert_eq!(h.server.messages_requests().len(), 1);
}

#[tokio::test]
async fn a_single_answer_over_the_budget_is_not_a_success() {
    let t1 = ScriptTurn {
        usage: Some(expensive()),
        ..ScriptTurn::text("an expensive answer")
    };
    let mut h = harness(vec![t1], |c| c.max_budget_usd = Some(0.01)).await;
    let (_, r) = h.run("spend").await;
    assert_eq!(r.subtype, ResultSubtype::ErrorMaxBudgetUsd);
    assert!(r.is_error);
    assert!(r.result.is_none());
}

fn schema() -> OutputSchema {
    OutputSchema::new(json!({
        "type": "object",
        "properties": {"answer": {"type": "integer"}},
        "required": ["answer"],
        "additionalProperties": false
    }))
    .unwrap()
}

#[tokio::test]
async fn structured_output_is_validated_then_returned() {
    let mut h = harness(
        vec![
            turn(vec![tool(
                "toolu_s1",
                "StructuredOutput",
                json!({"answer": "six"}),
            )]),
            turn(vec![
                ScriptBlock::Text {
                    text: "Here it is.".into(),
                },
                tool("toolu_s2", "StructuredOutput", json!({"answer": 6})),
            ]),
            ScriptTurn::text("never asked"),
        ],
        |c| c.json_schema = Some(schema()),
    )
    .await;
    let (events, r) = h.run("how many?").await;
    assert_eq!(r.subtype, ResultSubtype::Success, "{r:?}");
    assert_eq!(r.extra["structured_output"], json!({"answer": 6}));
    assert_eq!(r.result.as_deref(), Some("Here it is."));
    let results = tool_results(&events);
    assert!(results[0].1);
    assert!(
        results[0]
            .2
            .contains("Output does not match required schema: /answer: "),
        "{results:?}"
    );
    assert_eq!(
        results[1],
        (
            "toolu_s2".to_owned(),
            false,
            "Structured output provided successfully".to_owned()
        )
    );
    // The tool was offered with the caller's schema as its input schema.
    let req = &h.server.messages_requests()[0].body;
    let offered = req["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "StructuredOutput")
        .unwrap();
    assert_eq!(offered["input_schema"], *schema().schema());
    // The run ended with the valid call: no third request.
    assert_eq!(h.server.messages_requests().len(), 2);
}

#[tokio::test]
async fn invalid_structured_output_ends_after_the_attempts_allowed() {
    let bad = |i: usize| {
        turn(vec![tool(
            &format!("toolu_x{i}"),
            "StructuredOutput",
            json!({}),
        )])
    };
    let mut h = harness((0..6).map(bad).collect(), |c| {
        c.json_schema = Some(schema())
    })
    .await;
    let (_, r) = h.run("how many?").await;
    assert_eq!(r.subtype, ResultSubtype::ErrorMaxStructuredOutputRetries);
    assert!(r.is_error);
    assert_eq!(
        r.terminal_reason.as_deref(),
        Some("structured_output_retry_exhausted")
    );
    assert!(
        r.errors[0].starts_with("Failed to provide valid structured output after 5 attempts"),
        "{:?}",
        r.errors
    );
    assert!(r.extra.get("structured_output").is_none());
    assert_eq!(h.server.messages_requests().len(), 5);
}

#[tokio::test]
async fn an_answer_without_the_tool_is_told_to_call_it() {
    let mut h = harness(
        vec![
            ScriptTurn::text("It is six."),
            turn(vec![tool(
                "toolu_e",
                "StructuredOutput",
                json!({"answer": 6}),
            )]),
        ],
        |c| c.json_schema = Some(schema()),
    )
    .await;
    let (_, r) = h.run("how many?").await;
    assert_eq!(r.subtype, ResultSubtype::Success);
    assert_eq!(r.extra["structured_output"], json!({"answer": 6}));
    let second = &h.server.messages_requests()[1].body;
    let last = second["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last["role"], "user");
    assert!(
        last.to_string()
            .contains("You MUST call the StructuredOutput tool"),
        "{last}"
    );
}

#[tokio::test]
async fn thinking_blocks_go_back_with_the_tool_round() {
    let t1 = turn(vec![
        ScriptBlock::Thinking {
            thinking: "look first".into(),
            signature: "sig-1".into(),
        },
        tool("toolu_t", "Glob", json!({"pattern": "*.none"})),
    ]);
    let mut h = harness(vec![t1, ScriptTurn::text("done")], |c| {
        c.model = "claude-sonnet-4-5".into();
        c.reasoning = Reasoning {
            thinking: Some(ThinkingMode::Budget(2_048)),
            display: None,
            effort: None,
        };
        c.temperature = Some(0.2);
    })
    .await;
    let (_, r) = h.run("look").await;
    assert_eq!(r.subtype, ResultSubtype::Success);
    let reqs = h.server.messages_requests();
    for req in &reqs {
        assert_eq!(
            req.body["thinking"],
            json!({"type": "enabled", "budget_tokens": 2048})
        );
        assert!(req.body.get("temperature").is_none());
    }
    let assistant = reqs[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .unwrap()
        .clone();
    assert_eq!(assistant["content"][0]["type"], "thinking");
    assert_eq!(assistant["content"][0]["signature"], "sig-1");
}

#[tokio::test]
async fn an_interrupted_answer_is_kept_with_the_interruption_noted() {
    let slow = ScriptTurn {
        delay_between_deltas_ms: Some(200),
        chunk_chars: Some(4),
        ..ScriptTurn::text("The first words of a long answer that never ends in time.")
    };
    let mut h = harness(vec![slow, ScriptTurn::text("next")], |_| {}).await;
    let handle = h.session.handle();
    let mut run = h.session.run("write a lot");
    let mut partial_seen = false;
    while let Some(e) = run.next().await {
        if let SdkMessage::StreamEvent(s) = &e
            && matches!(
                s.event,
                skiff_protocol::StreamEvent::ContentBlockDelta {
                    delta: skiff_protocol::Delta::TextDelta { .. },
                    ..
                }
            )
            && !partial_seen
        {
            partial_seen = true;
            handle.interrupt();
        }
    }
    let r = run.result().cloned().unwrap();
    drop(run);
    assert_eq!(r.subtype, ResultSubtype::ErrorDuringExecution);
    let history = h.session.history().await.unwrap();
    validate_history(&history).unwrap();
    let kept = history
        .iter()
        .find(|m| m.role == Role::Assistant)
        .expect("the partial answer is in the conversation");
    let text = kept.content.text();
    assert!(text.starts_with("The "), "{text}");
    let last = history.last().unwrap();
    assert_eq!(last.role, Role::User);
    assert!(
        last.content
            .text()
            .contains("[Request interrupted by user]"),
        "{:?}",
        last
    );
    // The next prompt goes on from there, with a valid history.
    let (_, r) = h.run("go on").await;
    assert_eq!(r.result.as_deref(), Some("next"));
}
