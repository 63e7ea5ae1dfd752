//! Command hooks in the loop: every event fires with the stdin fields of Claude Code's
//! captures, and exit codes, JSON decisions, context, timeouts and broken hooks have the
//! effects PROTOCOL.md §6 records.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::{Value, json};
use skiff_core::hooks::CommandHooks;
use skiff_core::{Agent, AgentConfig, Session};
use skiff_llm::{AnthropicConfig, AnthropicProvider, Credential};
use skiff_protocol::script::{ScriptBlock, ScriptTurn};
use skiff_protocol::sdk::{ResultMessage, SdkMessage, SystemMessage};
use skiff_protocol::{ContentBlock, MessageContent, ToolResultContent};
use skiff_testkit::MockServer;
use skiff_tools::{ToolContext, ToolRegistry};

fn fixture_keys(name: &str) -> BTreeSet<String> {
    let path = format!(
        "{}/tests/fixtures/hook-stdin/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v.as_object().unwrap().keys().cloned().collect()
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

struct Setup {
    server: MockServer,
    dir: tempfile::TempDir,
    log: PathBuf,
}

/// A workspace with `hook.sh`, which appends its stdin (one line) to `log` and then runs the
/// per-event script `on-<Event>.sh` if present (its stdout/stderr/exit code are the hook's).
async fn setup(turns: Vec<ScriptTurn>) -> Setup {
    let server = MockServer::builder().turns(turns).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("hook-log.jsonl");
    std::fs::write(
        dir.path().join("hook.sh"),
        format!(
            "#!/bin/bash\ninput=$(cat)\nprintf '%s\\n' \"$input\" >> {log}\nevent=$(printf '%s' \"$input\" | sed -E 's/.*\"hook_event_name\":\"([A-Za-z]+)\".*/\\1/')\nif [ -f \"$CLAUDE_PROJECT_DIR/on-$event.sh\" ]; then exec bash \"$CLAUDE_PROJECT_DIR/on-$event.sh\" <<< \"$input\"; fi\n",
            log = log.display()
        ),
    )
    .unwrap();
    Setup { server, dir, log }
}

impl Setup {
    fn on(&self, event: &str, script: &str) {
        std::fs::write(self.dir.path().join(format!("on-{event}.sh")), script).unwrap();
    }

    fn hooks_for(&self, events: &[&str], timeout: Option<u64>) -> CommandHooks {
        let mut handler = json!({"type": "command", "command": format!("bash {}/hook.sh", self.dir.path().display())});
        if let Some(t) = timeout {
            handler["timeout"] = t.into();
        }
        let groups = events.iter().map(|e| {
            (
                (*e).to_owned(),
                json!({"matcher": "*", "hooks": [handler.clone()]}),
            )
        });
        let (hooks, errors) = CommandHooks::new(groups, self.dir.path());
        assert!(errors.is_empty(), "{errors:?}");
        hooks
    }

    fn session(&self, hooks: CommandHooks) -> Session {
        let mut cfg = AnthropicConfig::new(Credential::api_key("sk-test"));
        cfg.base_url = self.server.url();
        let provider = AnthropicProvider::new(cfg).unwrap();
        let config = AgentConfig {
            cwd: self.dir.path().to_path_buf(),
            ..AgentConfig::default()
        };
        Agent::new(
            config,
            Arc::new(provider),
            ToolRegistry::with_builtins(),
            ToolContext::new(self.dir.path()).unwrap(),
        )
        .with_hooks(Arc::new(hooks))
        .spawn()
    }

    fn inputs(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn input_of(&self, event: &str) -> Value {
        self.inputs()
            .into_iter()
            .find(|v| v["hook_event_name"] == event)
            .unwrap_or_else(|| panic!("{event} never fired: {:?}", self.inputs()))
    }
}

async fn run(session: &mut Session, prompt: &str) -> (Vec<SdkMessage>, ResultMessage) {
    let mut run = session.run(prompt);
    let mut events = Vec::new();
    while let Some(e) = run.next().await {
        events.push(e);
    }
    let result = run.result().cloned().unwrap();
    (events, result)
}

fn results(events: &[SdkMessage]) -> Vec<(bool, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            SdkMessage::User(u) => match &u.message.content {
                MessageContent::Blocks(b) => match b.first() {
                    Some(ContentBlock::ToolResult(r)) => Some((
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

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

#[tokio::test]
async fn every_event_fires_with_the_fields_of_claude_codes_captures() {
    let s = setup(vec![
        turn(vec![tool(
            "Bash",
            json!({"command": "echo hooked", "description": "Echo"}),
        )]),
        turn(vec![tool(
            "Bash",
            json!({"command": "false", "description": "Fail"}),
        )]),
        ScriptTurn::text("hooks done"),
    ])
    .await;
    let all = [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "Stop",
        "SessionEnd",
    ];
    let mut session = s.session(s.hooks_for(&all, None));
    let (events, result) = run(&mut session, "hook test").await;
    assert!(!result.is_error, "{result:?}");
    session.shutdown().await;

    for (event, fixture) in [
        ("SessionStart", "SessionStart"),
        ("UserPromptSubmit", "UserPromptSubmit"),
        ("PreToolUse", "PreToolUse_Bash"),
        ("PostToolUse", "PostToolUse"),
        ("PostToolUseFailure", "PostToolUseFailure"),
        ("Stop", "Stop"),
        ("SessionEnd", "SessionEnd"),
    ] {
        let input = s.input_of(event);
        assert_eq!(keys(&input), fixture_keys(fixture), "{event}: {input}");
    }
    assert_eq!(s.input_of("SessionStart")["source"], "startup");
    assert_eq!(s.input_of("UserPromptSubmit")["prompt"], "hook test");
    let pre = s.input_of("PreToolUse");
    assert_eq!(pre["tool_input"]["command"], "echo hooked");
    assert_eq!(pre["permission_mode"], "default");
    let post = s.input_of("PostToolUse");
    assert_eq!(post["tool_response"]["stdout"], "hooked");
    assert_eq!(s.input_of("PostToolUseFailure")["error"], "Exit code 1");
    assert_eq!(s.input_of("Stop")["last_assistant_message"], "hooks done");
    assert_eq!(s.input_of("SessionEnd")["reason"], "other");
    // One prompt id for the whole run.
    assert_eq!(pre["prompt_id"], s.input_of("Stop")["prompt_id"]);
    // Each run shows as a hook_started / hook_response pair, named as Claude Code names them.
    let names: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            SdkMessage::System(SystemMessage::HookResponse(r)) => {
                assert_eq!(r.outcome, "success");
                Some(r.hook_name.clone())
            }
            _ => None,
        })
        .collect();
    assert!(
        names.contains(&"SessionStart:startup".to_owned()),
        "{names:?}"
    );
    assert!(names.contains(&"PreToolUse:Bash".to_owned()));
    assert!(names.contains(&"PostToolUseFailure:Bash".to_owned()));
    let started = events
        .iter()
        .filter(|e| matches!(e, SdkMessage::System(SystemMessage::HookStarted(_))))
        .count();
    assert_eq!(started, names.len());
    // SessionStart and UserPromptSubmit hooks run before init, as in the capture.
    let init_at = events
        .iter()
        .position(|e| matches!(e, SdkMessage::System(SystemMessage::Init(_))))
        .unwrap();
    assert!(init_at >= 4, "{init_at}");
}

#[tokio::test]
async fn pre_tool_use_blocks_denies_rewrites_and_adds_context() {
    let s = setup(vec![
        turn(vec![tool("Bash", json!({"command": "rm -rf nonexist"}))]),
        turn(vec![tool(
            "Write",
            json!({"file_path": "h.txt", "content": "x"}),
        )]),
        turn(vec![tool("Bash", json!({"command": "echo original"}))]),
        turn(vec![tool("Bash", json!({"command": "echo ask me"}))]),
        ScriptTurn::text("done"),
    ])
    .await;
    s.on(
        "PreToolUse",
        r#"input=$(cat)
case "$input" in
  *rm\ -rf*) echo "blocked by hook: no rm -rf" >&2; exit 2 ;;
  *Write*) echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"json deny reason"}}' ;;
  *original*) echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"echo rewritten"},"additionalContext":"checked by policy"}}' ;;
  *ask\ me*) echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"a human should look"}}' ;;
esac
"#,
    );
    let mut session = s.session(s.hooks_for(&["PreToolUse", "Notification"], None));
    let (events, result) = run(&mut session, "go").await;
    let r = results(&events);
    let hook_cmd = format!("bash {}/hook.sh", s.dir.path().display());
    assert_eq!(
        r[0],
        (
            true,
            format!("PreToolUse:Bash hook error: [{hook_cmd}]: blocked by hook: no rm -rf\n")
        )
    );
    assert_eq!(
        r[1],
        (
            true,
            "PreToolUse:Write hook error: json deny reason".to_owned()
        )
    );
    assert!(!s.dir.path().join("h.txt").exists());
    // The JSON deny and the unanswered ask count as denials; the exit-2 block does not.
    assert_eq!(result.permission_denials.len(), 2);
    assert_eq!(result.permission_denials[0].tool_name, "Write");
    assert!(!r[2].0);
    assert!(r[2].1.starts_with("rewritten"), "{:?}", r[2]);
    assert!(
        r[2].1
            .contains("PreToolUse hook additional context: checked by policy")
    );
    // "ask" although the rules allow: the user is asked (here nobody answers: denied), and
    // Notification hooks hear about the prompt.
    assert_eq!(r[3], (true, "a human should look".to_owned()));
    let note = s.input_of("Notification");
    assert_eq!(note["notification_type"], "permission_prompt");
    assert!(note["message"].as_str().unwrap().contains("Bash"));
}

#[tokio::test]
async fn prompt_hooks_add_context_or_reject_and_stop_hooks_make_the_model_go_on() {
    let s = setup(vec![
        ScriptTurn::text("first answer"),
        ScriptTurn::text("after the feedback"),
    ])
    .await;
    s.on(
        "UserPromptSubmit",
        "echo extra context from UserPromptSubmit hook\n",
    );
    s.on(
        "SessionStart",
        r#"echo '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"session start ctx"}}'"#,
    );
    s.on(
        "Stop",
        r#"input=$(cat)
case "$input" in
  *'"stop_hook_active":false'*) echo '{"decision":"block","reason":"run the tests first"}' ;;
esac
"#,
    );
    let mut session = s.session(s.hooks_for(&["SessionStart", "UserPromptSubmit", "Stop"], None));
    let (_, result) = run(&mut session, "hello").await;
    assert_eq!(result.result.as_deref(), Some("after the feedback"));
    let reqs = s.server.messages_requests();
    let first = reqs[0].body["messages"][0].to_string();
    assert!(
        first.contains("SessionStart hook additional context: session start ctx"),
        "{first}"
    );
    assert!(
        first.contains("UserPromptSubmit hook success: extra context from UserPromptSubmit hook")
    );
    let second = reqs[1].body["messages"].to_string();
    assert!(
        second.contains("Stop hook feedback:\\nrun the tests first"),
        "{second}"
    );
    let stops: Vec<Value> = s
        .inputs()
        .into_iter()
        .filter(|v| v["hook_event_name"] == "Stop")
        .collect();
    assert_eq!(stops.len(), 2);
    assert_eq!(stops[1]["stop_hook_active"], true);

    // Exit 2 from UserPromptSubmit rejects the prompt; the model is never asked.
    s.on("UserPromptSubmit", "echo 'no secrets please' >&2; exit 2\n");
    let before = s.server.messages_requests().len();
    let (_, result) = run(&mut session, "my password is hunter2").await;
    assert!(result.is_error);
    assert!(
        result
            .errors
            .iter()
            .any(|e| e.contains("no secrets please")),
        "{:?}",
        result.errors
    );
    assert_eq!(s.server.messages_requests().len(), before);
}

#[tokio::test]
async fn hung_crashing_and_garbage_hooks_never_break_the_loop() {
    let s = setup(vec![
        turn(vec![tool("Bash", json!({"command": "echo ran"}))]),
        ScriptTurn::text("done"),
    ])
    .await;
    // Hangs past its 1 s timeout, with a child that would outlive a plain kill.
    s.on("PreToolUse", "sleep 33 & sleep 33\n");
    // Crashes with garbage.
    s.on("PostToolUse", "printf '{garbage'; echo boom >&2; exit 1\n");
    let mut session = s.session(s.hooks_for(&["PreToolUse", "PostToolUse"], Some(1)));
    let started = Instant::now();
    let (events, result) = run(&mut session, "go").await;
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    assert!(!result.is_error, "{result:?}");
    let r = results(&events);
    assert_eq!(r[0], (false, "ran".to_owned()));
    let notices: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            SdkMessage::System(SystemMessage::Informational(i)) if i.kind == "hook" => {
                Some(i.message.clone())
            }
            _ => None,
        })
        .collect();
    assert!(
        notices.iter().any(|n| n.contains("timed out after 1s")),
        "{notices:?}"
    );
    assert!(
        notices
            .iter()
            .any(|n| n.contains("non-blocking status code 1: boom")),
        "{notices:?}"
    );
    let cancelled = events.iter().any(|e| {
        matches!(e, SdkMessage::System(SystemMessage::HookResponse(r)) if r.outcome == "cancelled")
    });
    assert!(cancelled);
    // The hung hook's process group is gone.
    let left = std::process::Command::new("pgrep")
        .args(["-f", "sleep 33"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    assert!(
        left.is_empty() || !Path::new("/proc").exists(),
        "left behind: {left}"
    );
}

#[tokio::test]
async fn compaction_fires_session_start_with_source_compact_and_keeps_its_context() {
    let s = setup(vec![
        ScriptTurn::text("first answer"),
        ScriptTurn::text("second answer"),
        ScriptTurn::text("third answer"),
        ScriptTurn::text("SUMMARY OF THE WORK"),
        ScriptTurn::text("after compaction"),
    ])
    .await;
    s.on(
        "SessionStart",
        "#!/bin/bash\ninput=$(cat)\ncase \"$input\" in *'\"source\":\"compact\"'*) echo 'remember the build flags';; esac\n",
    );
    let mut session = s.session(s.hooks_for(&["SessionStart"], None));
    for prompt in ["one", "two", "three"] {
        run(&mut session, prompt).await;
    }
    let report = session.compact(None).await.unwrap();
    assert!(report.summary.contains("SUMMARY OF THE WORK"));
    let sources: Vec<Value> = s
        .inputs()
        .into_iter()
        .filter(|v| v["hook_event_name"] == "SessionStart")
        .map(|v| v["source"].clone())
        .collect();
    assert_eq!(sources, [json!("startup"), json!("compact")]);
    run(&mut session, "four").await;
    let last = s.server.messages_requests().pop().unwrap().body;
    let first_message = last["messages"][0].to_string();
    assert!(
        first_message.contains("SUMMARY OF THE WORK"),
        "{first_message}"
    );
    assert!(
        first_message.contains("remember the build flags"),
        "{first_message}"
    );
    session.shutdown().await;
}
