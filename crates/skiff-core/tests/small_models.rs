//! Small and local models get work done (issue 37), against the test kit's mock on both
//! paths (the Anthropic-style `/v1/messages` and OpenAI-compatible chat completions): the task
//! survives reads that overflow a 16k window; a server's context-size error compacts and
//! retries once; the same failing call is noted and then stopped; a tool call written as JSON
//! text is a call on both paths; the window is learned from the server on both paths; a
//! change of a test in a task about failing tests gets a note and does not end the calls.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use skiff_core::{Agent, AgentConfig, CompactionStrategy, Session};
use skiff_llm::{
    AnthropicConfig, AnthropicProvider, Credential, OpenAiConfig, OpenAiProvider, Provider,
    RetryPolicy,
};
use skiff_protocol::script::{Fault, ScriptTurn};
use skiff_protocol::sdk::{ResultMessage, ResultSubtype, SdkMessage, SystemMessage};
use skiff_testkit::MockServer;
use skiff_testkit::openai::ModelMetadata;
use skiff_tools::{ToolContext, ToolRegistry};

const TASK: &str = "The tests fail. Find the bug in calc.sh and fix it.";

/// Which endpoint the provider speaks.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Path {
    Anthropic,
    OpenAi,
}

fn provider(path: Path, server: &MockServer) -> Arc<dyn Provider> {
    let retry = RetryPolicy {
        base_delay: Duration::from_millis(5),
        rate_limit_base_delay: Duration::from_millis(5),
        ..RetryPolicy::default()
    };
    match path {
        Path::Anthropic => {
            let mut cfg = AnthropicConfig::new(Credential::api_key("none"));
            cfg.base_url = server.url();
            cfg.retry = retry;
            Arc::new(AnthropicProvider::new(cfg).unwrap())
        }
        Path::OpenAi => {
            let mut cfg = OpenAiConfig::new(server.url(), None);
            cfg.retry = retry;
            Arc::new(OpenAiProvider::new(cfg).unwrap())
        }
    }
}

struct Run {
    server: MockServer,
    session: Session,
    dir: tempfile::TempDir,
}

async fn start(
    path: Path,
    turns: Vec<ScriptTurn>,
    metadata: Option<ModelMetadata>,
    tweak: impl FnOnce(&mut AgentConfig),
) -> Run {
    let mut builder = MockServer::builder().turns(turns).model("local");
    if let Some(m) = metadata {
        builder = builder.model_metadata(m);
    }
    let server = builder.start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("calc.sh"),
        "add() { echo $(( $1 - $2 )); }\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("test.sh"), "source ./calc.sh\n").unwrap();
    // About 18 KB, as the file whose Read dropped the task in the issue's runs.
    let big: String = (0..600)
        .map(|i| format!("line {i:04} of a long file nobody needs\n"))
        .collect();
    std::fs::write(dir.path().join("big.txt"), big).unwrap();
    let mut config = AgentConfig {
        model: "local".into(),
        system_prompt: vec!["You are a test agent.".into()],
        cwd: dir.path().to_path_buf(),
        max_tokens: 8_192,
        ..AgentConfig::default()
    };
    tweak(&mut config);
    let session = Agent::new(
        config,
        provider(path, &server),
        ToolRegistry::with_builtins(),
        ToolContext::new(dir.path()).unwrap(),
    )
    .spawn();
    Run {
        server,
        session,
        dir,
    }
}

impl Run {
    async fn run(&mut self) -> (Vec<SdkMessage>, ResultMessage) {
        self.run_prompt(TASK).await
    }

    async fn run_prompt(&mut self, prompt: &str) -> (Vec<SdkMessage>, ResultMessage) {
        let mut run = self.session.run(prompt);
        let mut events = Vec::new();
        while let Some(e) = run.next().await {
            events.push(e);
        }
        let result = run.result().cloned().unwrap();
        drop(run);
        assert!(
            self.server.violations().is_empty(),
            "{:?}",
            self.server.violations()
        );
        (events, result)
    }

    /// The model requests' bodies, in order, either path.
    fn bodies(&self) -> Vec<Value> {
        self.server
            .requests()
            .iter()
            .filter(|r| r.is_chat() || r.path_only() == "/v1/messages")
            .map(|r| r.body.clone())
            .collect()
    }
}

/// The text of a request's first user message (either wire format).
fn first_user_text(body: &Value) -> String {
    let messages = body["messages"].as_array().unwrap();
    text_of(
        messages
            .iter()
            .find(|m| m["role"] == "user")
            .expect("a user message"),
    )
}

/// The text of a message (either wire format).
fn text_of(message: &Value) -> String {
    match &message["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}

fn read(path: &str) -> ScriptTurn {
    ScriptTurn::tool_use("Read", json!({"file_path": path}))
}

fn notices(events: &[SdkMessage], kind: &str) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            SdkMessage::System(SystemMessage::Informational(i)) if i.kind == kind => {
                Some(i.message.clone())
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn the_task_is_in_every_request_after_reads_that_overflow_a_16k_window() {
    for path in [Path::Anthropic, Path::OpenAi] {
        let mut turns: Vec<ScriptTurn> = (0..5).map(|_| read("big.txt")).collect();
        turns.push(ScriptTurn::text("done"));
        // The OpenAI-compatible server says its window (llama.cpp's /props); the
        // Anthropic-style one is told by the settings.
        let (meta, window) = match path {
            Path::OpenAi => (
                Some(ModelMetadata {
                    context_window: Some(16_384),
                    ..ModelMetadata::default()
                }),
                None,
            ),
            Path::Anthropic => (None, Some(16_384)),
        };
        let mut run = start(path, turns, meta, |c| {
            c.context_window = window;
            c.compaction.strategy = CompactionStrategy::TrimOnly;
        })
        .await;
        if path == Path::OpenAi {
            // What the provider learns beside its first call, made certain before it.
            let p = OpenAiProvider::new(OpenAiConfig::new(run.server.url(), None)).unwrap();
            assert_eq!(
                p.fetch_served_model("local").await.unwrap().context_window,
                Some(16_384)
            );
        }
        let (events, r) = run.run().await;
        assert!(!r.is_error, "{path:?}: {r:?}");
        let bodies = run.bodies();
        assert_eq!(bodies.len(), 6, "{path:?}");
        for (i, body) in bodies.iter().enumerate() {
            let first = first_user_text(body);
            assert!(first.contains(TASK), "{path:?} request {i}: {first}");
            // A 16k window keeps 4,096 output tokens at least, not the configured 8,192
            // halving it.
            let max = body["max_tokens"]
                .as_u64()
                .or(body["max_completion_tokens"].as_u64())
                .unwrap();
            assert!(
                (4_096..=8_192).contains(&max),
                "{path:?} request {i}: {max}"
            );
        }
        let trims = notices(&events, "trim");
        assert!(
            !trims.is_empty(),
            "{path:?}: the reads must overflow the window"
        );
        assert!(
            trims.iter().all(|t| t.contains("first prompt is kept")),
            "{trims:?}"
        );
        // Never "even the shortest valid history exceeds that limit" for the task's sake.
        assert!(
            trims.iter().all(|t| !t.contains("even the shortest")),
            "{trims:?}"
        );
    }
}

#[tokio::test]
async fn a_context_size_error_compacts_and_retries_once() {
    for path in [Path::Anthropic, Path::OpenAi] {
        // llama.cpp's refusal (its figures as skiff reads them from the error body).
        let overflow = || Fault::Status {
            status: 400,
            retry_after: None,
            retry_after_ms: None,
            message: Some(
                "the request exceeds the available context size, try increasing it \
                 (n_prompt_tokens 17321, n_ctx 16384)"
                    .into(),
            ),
        };
        // The fourth request is refused once, then answered.
        let turns = vec![
            read("calc.sh"),
            read("big.txt"),
            read("big.txt"),
            read("big.txt").with_fault(overflow()),
            ScriptTurn::text("done"),
        ];
        let mut run = start(path, turns, None, |c| {
            c.compaction.strategy = CompactionStrategy::TrimOnly;
        })
        .await;
        let (events, r) = run.run().await;
        assert!(!r.is_error, "{path:?}: {r:?}");
        assert_eq!(r.subtype, ResultSubtype::Success);
        assert_eq!(r.result.as_deref(), Some("done"));
        // The refused request is not a turn.
        assert_eq!(r.num_turns, 5, "{path:?}");
        let bodies = run.bodies();
        assert_eq!(bodies.len(), 6);
        let refused = bodies[3]["messages"].as_array().unwrap().len();
        let retried = bodies[4]["messages"].as_array().unwrap().len();
        assert!(retried < refused, "{path:?}: {retried} < {refused}");
        assert!(first_user_text(&bodies[4]).contains(TASK));
        let context = notices(&events, "context");
        assert!(
            context.iter().any(|n| n.contains("16384 tokens")),
            "{context:?}"
        );

        // Refused again right after the retry: the run ends, and not as a success.
        let turns = vec![
            read("calc.sh"),
            read("big.txt"),
            read("big.txt")
                .with_fault(overflow())
                .with_fault(overflow()),
        ];
        let mut run = start(path, turns, None, |c| {
            c.compaction.strategy = CompactionStrategy::TrimOnly;
        })
        .await;
        let (_, r) = run.run().await;
        assert!(r.is_error);
        assert_eq!(r.subtype, ResultSubtype::ErrorDuringExecution, "{path:?}");
        assert_eq!(r.terminal_reason.as_deref(), Some("prompt_too_long"));
        assert_eq!(run.bodies().len(), 4);
    }
}

#[tokio::test]
async fn the_same_failing_call_is_noted_then_stopped() {
    for path in [Path::Anthropic, Path::OpenAi] {
        let glob = || ScriptTurn::tool_use("Glob", json!({"pattern": "fail", "path": "tests"}));
        let mut turns: Vec<ScriptTurn> = (0..5).map(|_| glob()).collect();
        turns.push(ScriptTurn::text("never asked"));
        let mut run = start(path, turns, None, |_| {}).await;
        let (events, r) = run.run().await;
        assert!(r.is_error, "{path:?}: {r:?}");
        assert_eq!(
            r.subtype,
            ResultSubtype::ErrorLoopDetected,
            "{path:?}: {r:?}"
        );
        assert_eq!(
            serde_json::to_value(&r.subtype).unwrap(),
            "error_loop_detected"
        );
        assert_eq!(r.terminal_reason.as_deref(), Some("loop_detected"));
        assert!(
            r.errors[0].contains("same Glob call 5 times"),
            "{:?}",
            r.errors
        );
        assert_eq!(
            run.bodies().len(),
            5,
            "{path:?}: the run stopped at the fifth"
        );
        // The results the model got: the plain error twice, then the note with what exists.
        let results: Vec<String> = events
            .iter()
            .filter_map(|e| match e {
                SdkMessage::User(u) => Some(serde_json::to_string(&u.message).unwrap()),
                _ => None,
            })
            .collect();
        assert_eq!(results.len(), 5);
        for (i, text) in results.iter().enumerate() {
            assert!(text.contains("Directory does not exist: tests"), "{text}");
            assert!(
                text.contains("holds: big.txt, calc.sh, test.sh"),
                "{i}: {text}"
            );
            assert_eq!(
                text.contains("time this exact call failed"),
                (2..4).contains(&i),
                "{i}: {text}"
            );
        }
        assert!(results[2].contains("third time"));
    }
}

#[tokio::test]
async fn a_call_written_as_json_text_is_a_call_on_both_paths() {
    for path in [Path::Anthropic, Path::OpenAi] {
        let turns = vec![
            ScriptTurn::text(
                "```json\n{\"name\": \"Read\", \"arguments\": {\"file_path\": \"calc.sh\"}}\n```",
            ),
            ScriptTurn::text("The bug: add subtracts."),
        ];
        let mut run = start(path, turns, None, |_| {}).await;
        let (_, r) = run.run().await;
        assert!(!r.is_error, "{path:?}: {r:?}");
        assert_eq!(r.result.as_deref(), Some("The bug: add subtracts."));
        assert_eq!(r.num_turns, 2, "{path:?}");
        // The second request answers the call with calc.sh's text.
        let second = serde_json::to_string(&run.bodies()[1]).unwrap();
        assert!(second.contains("echo $(( $1 - $2 ))"), "{path:?}: {second}");
        drop(run.dir);
    }
}

#[tokio::test]
async fn calls_after_prose_in_any_wrapper_are_calls_on_both_paths() {
    for wrapped in [
        "I will read it.\n<tools>\n{\"name\": \"Read\", \"arguments\": {\"file_path\": \"calc.sh\"}}\n</tools>",
        "I found it. Here is the call:\n\n```json\n{\"name\": \"Read\", \"arguments\": {\"file_path\": \"calc.sh\"}}\n```",
        "{{\"name\": \"Read\", \"arguments\": {\"file_path\": \"calc.sh\"}}}",
        "```bash\n<tools/Read file_path=\"calc.sh\" />\n```",
    ] {
        for path in [Path::Anthropic, Path::OpenAi] {
            let turns = vec![
                ScriptTurn::text(wrapped),
                ScriptTurn::text("The bug: add subtracts."),
            ];
            let mut run = start(path, turns, None, |_| {}).await;
            let (_, r) = run.run().await;
            assert!(!r.is_error, "{path:?}: {r:?}");
            assert_eq!(r.num_turns, 2, "{path:?}: {wrapped}");
            let second = serde_json::to_string(&run.bodies()[1]).unwrap();
            assert!(second.contains("echo $(( $1 - $2 ))"), "{path:?}: {second}");
        }
    }
}

/// The last user message's text of a request (either wire format).
fn last_user_text(body: &Value) -> String {
    let messages = body["messages"].as_array().unwrap();
    text_of(
        messages
            .iter()
            .rev()
            .find(|m| m["role"] == "user")
            .expect("a user message"),
    )
}

#[tokio::test]
async fn a_plan_instead_of_the_work_is_told_to_act_with_compact_prompt() {
    let plan = "To fix it:\n1. Run the tests.\n2. Fix add in calc.sh.";
    for path in [Path::Anthropic, Path::OpenAi] {
        // Compact: the plan is answered; the model then works and the run ends on its answer.
        let turns = vec![
            ScriptTurn::text(plan),
            read("calc.sh"),
            ScriptTurn::text("The bug: add subtracts."),
        ];
        let mut run = start(path, turns, None, |c| c.compact_tools = true).await;
        let (_, r) = run.run().await;
        assert_eq!(
            r.result.as_deref(),
            Some("The bug: add subtracts."),
            "{path:?}"
        );
        let bodies = run.bodies();
        assert_eq!(bodies.len(), 3, "{path:?}");
        assert!(
            last_user_text(&bodies[1]).contains("use the tools now"),
            "{path:?}: {}",
            last_user_text(&bodies[1])
        );
        // The task is still the first message.
        assert_eq!(first_user_text(&bodies[1]), TASK);

        // A short answer ends the run; without compact a plan does too.
        for (answer, compact) in [("Hello! How can I help?", true), (plan, false)] {
            let mut run = start(path, vec![ScriptTurn::text(answer)], None, |c| {
                c.compact_tools = compact
            })
            .await;
            let (_, r) = run.run().await;
            assert_eq!(r.result.as_deref(), Some(answer), "{path:?}");
            assert_eq!(run.bodies().len(), 1, "{path:?} {answer}");
        }

        // At most two replies a prompt: three plans end the run on the third.
        let turns = vec![
            ScriptTurn::text(plan),
            ScriptTurn::text(plan),
            ScriptTurn::text(plan),
        ];
        let mut run = start(path, turns, None, |c| c.compact_tools = true).await;
        let (_, r) = run.run().await;
        assert_eq!(r.result.as_deref(), Some(plan), "{path:?}");
        assert_eq!(run.bodies().len(), 3, "{path:?}");
    }
}

/// Whether a request (of `path`'s wire format) makes the model call a tool.
fn forces_a_call(path: Path, body: &Value) -> bool {
    match path {
        Path::Anthropic => body["tool_choice"] == json!({"type": "any"}),
        Path::OpenAi => body["tool_choice"] == "required",
    }
}

/// The request bodies of a compact run (OpenAI-compatible path) whose model sends `calls`,
/// then reads calc.sh and sends `edit`.
async fn fixed_after(mut turns: Vec<ScriptTurn>, edit: &ScriptTurn) -> Vec<Value> {
    turns.extend([read("calc.sh"), edit.clone(), ScriptTurn::text("Fixed.")]);
    let mut run = start(Path::OpenAi, turns, None, |c| c.compact_tools = true).await;
    let (_, r) = run.run().await;
    assert_eq!(r.result.as_deref(), Some("Fixed."));
    run.bodies()
}

#[tokio::test]
async fn a_task_that_wants_a_change_gets_calls_until_a_file_changed() {
    let edit = ScriptTurn::tool_use(
        "Edit",
        json!({"file_path": "calc.sh", "old_string": "$1 - $2", "new_string": "$1 + $2"}),
    );
    for path in [Path::Anthropic, Path::OpenAi] {
        let turns = vec![
            read("calc.sh"),
            edit.clone(),
            ScriptTurn::text("Fixed: add adds."),
        ];
        let mut run = start(path, turns, None, |c| c.compact_tools = true).await;
        let (_, r) = run.run().await;
        assert_eq!(r.result.as_deref(), Some("Fixed: add adds."), "{path:?}");
        let calc = std::fs::read_to_string(run.dir.path().join("calc.sh")).unwrap();
        assert!(calc.contains("$1 + $2"), "{path:?}: {calc}");
        let bodies = run.bodies();
        assert_eq!(bodies.len(), 3, "{path:?}");
        // Before the edit, a call; after it, the model may answer.
        assert!(forces_a_call(path, &bodies[0]), "{path:?}: {}", bodies[0]);
        assert!(forces_a_call(path, &bodies[1]), "{path:?}");
        assert!(bodies[2].get("tool_choice").is_none(), "{path:?}");
        match path {
            // A local server (the mock listens on 127.0.0.1) also gets the call's grammar: one
            // call of an offered tool, its arguments held to the tool's schema.
            Path::OpenAi => {
                let calls = bodies[0]["response_format"]["json_schema"]["schema"]["anyOf"]
                    .as_array()
                    .unwrap();
                let tools = bodies[0]["tools"].as_array().unwrap();
                assert_eq!(calls.len(), tools.len());
                for (call, tool) in calls.iter().zip(tools) {
                    assert_eq!(
                        call["properties"]["name"]["const"],
                        tool["function"]["name"]
                    );
                    assert_eq!(
                        call["properties"]["arguments"],
                        tool["function"]["parameters"]
                    );
                }
                assert!(bodies[2].get("response_format").is_none());
            }
            Path::Anthropic => assert!(bodies.iter().all(|b| b.get("response_format").is_none())),
        }

        // A question wants no change: never forced; nor without --compact-prompt.
        for (prompt, compact) in [("What does calc.sh do?", true), (TASK, false)] {
            let turns = vec![read("calc.sh"), ScriptTurn::text("It adds, wrongly.")];
            let mut run = start(path, turns, None, |c| c.compact_tools = compact).await;
            let (_, r) = run.run_prompt(prompt).await;
            assert_eq!(r.result.as_deref(), Some("It adds, wrongly."), "{path:?}");
            assert!(
                run.bodies().iter().all(|b| b.get("tool_choice").is_none()),
                "{path:?} {prompt} {compact}"
            );
        }
    }

    // The same Grep answered the same twice: the next forced call is one of another tool
    // (the tools offered stay the same, for the prompt cache), then any again.
    let nothing = || ScriptTurn::tool_use("Grep", json!({"pattern": "no such name"}));
    let bodies = fixed_after(vec![nothing(), nothing()], &edit).await;
    assert!(callable(&bodies[1]).contains(&"Grep".to_owned()));
    let third = callable(&bodies[2]);
    assert!(
        !third.contains(&"Grep".to_owned()) && third.contains(&"Read".to_owned()),
        "{third:?}"
    );
    assert_eq!(bodies[2]["tools"], bodies[1]["tools"]);
    assert!(callable(&bodies[3]).contains(&"Grep".to_owned()));

    // Grep and Glob that find nothing, alternating: each stays left out while it keeps finding
    // nothing, until something else runs.
    let glob = || ScriptTurn::tool_use("Glob", json!({"pattern": "**/*.js"}));
    let bodies = fixed_after(vec![nothing(), nothing(), glob(), glob()], &edit).await;
    let has = |b: &Value, tool: &str| callable(b).contains(&tool.to_owned());
    assert!(!has(&bodies[2], "Grep") && has(&bodies[2], "Glob"));
    assert!(!has(&bodies[3], "Grep") && has(&bodies[3], "Glob"));
    assert!(!has(&bodies[4], "Grep") && !has(&bodies[4], "Glob") && has(&bodies[4], "Read"));
    assert!(has(&bodies[5], "Grep") && has(&bodies[5], "Glob"));

    // A look that fails the same twice (a Glob given a file as its directory) is left out
    // too, until something else runs.
    let glob_file = ScriptTurn::tool_use("Glob", json!({"pattern": "*", "path": "calc.sh"}));
    let bodies = fixed_after(vec![glob_file.clone(), glob_file], &edit).await;
    assert!(has(&bodies[1], "Glob"));
    assert!(!has(&bodies[2], "Glob") && has(&bodies[2], "Grep"));
    assert!(has(&bodies[3], "Glob"));

    // At most MAX_FORCED_CALLS (16) forced requests a prompt: then the model may answer.
    let turns: Vec<ScriptTurn> = (0..17)
        .map(|_| read("calc.sh"))
        .chain([ScriptTurn::text("Nothing to change.")])
        .collect();
    let mut run = start(Path::OpenAi, turns, None, |c| c.compact_tools = true).await;
    let (_, r) = run.run().await;
    assert_eq!(r.result.as_deref(), Some("Nothing to change."));
    let forced: Vec<bool> = run
        .bodies()
        .iter()
        .map(|b| forces_a_call(Path::OpenAi, b))
        .collect();
    assert_eq!(forced, [[true; 16].as_slice(), &[false; 2]].concat());
}

/// The tools a forced call's grammar admits (OpenAI-compatible path).
fn callable(body: &Value) -> Vec<String> {
    body["response_format"]["json_schema"]["schema"]["anyOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            c["properties"]["name"]["const"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

#[tokio::test]
async fn a_task_about_failing_tests_starts_by_running_them() {
    let tests = || ScriptTurn::tool_use("Bash", json!({"command": "bash test.sh"}));
    let fix = ScriptTurn::tool_use(
        "Edit",
        json!({"file_path": "calc.sh", "old_string": "$1 - $2", "new_string": "$1 + $2"}),
    );
    let known = |c: &mut AgentConfig| {
        c.compact_tools = true;
        c.test_command = Some("bash test.sh".into());
    };
    // The tests' command is known: the first call is held to Bash, then any tool.
    let turns = vec![
        tests(),
        read("calc.sh"),
        fix.clone(),
        ScriptTurn::text("Fixed."),
    ];
    let mut run = start(Path::OpenAi, turns, None, known).await;
    std::fs::write(
        run.dir.path().join("test.sh"),
        "source ./calc.sh\n[ \"$(add 2 3)\" = 5 ] || { echo \"FAIL add 2 3: got $(add 2 3)\"; exit 1; }\n",
    )
    .unwrap();
    let (_, r) = run.run().await;
    assert_eq!(r.result.as_deref(), Some("Fixed."));
    let bodies = run.bodies();
    assert_eq!(callable(&bodies[0]), ["Bash"]);
    // Where the server can be held to it, to the command itself.
    let arguments = &bodies[0]["response_format"]["json_schema"]["schema"]["anyOf"][0]["properties"]
        ["arguments"];
    assert_eq!(
        arguments["properties"],
        json!({"command": {"const": "bash test.sh"}})
    );
    assert_eq!(arguments["additionalProperties"], false);
    assert!(callable(&bodies[1]).len() > 1, "{:?}", callable(&bodies[1]));
    // The tests ran, and their output is the model's to read.
    let ran = last_tool_result(Path::OpenAi, &bodies[1]);
    assert!(ran.contains("FAIL add 2 3: got -1"), "{ran}");
    // With where the code the failure names is defined (not the test's own lines).
    assert!(
        ran.contains(
            "Note: the failing tests name code defined here:\ncalc.sh:1: add() { echo $(( $1 - $2 )); }\n"
        ),
        "{ran}"
    );
    assert!(!ran.contains("test.sh:"), "{ran}");
    // The tools offered stay the same (the prompt cache).
    assert_eq!(bodies[0]["tools"], bodies[1]["tools"]);

    // A model that looks instead is held to Bash once more, then left free.
    let turns = vec![
        read("test.sh"),
        read("calc.sh"),
        read("calc.sh"),
        fix.clone(),
        ScriptTurn::text("Fixed."),
    ];
    let mut run = start(Path::OpenAi, turns, None, known).await;
    run.run().await;
    let bodies = run.bodies();
    assert_eq!(callable(&bodies[0]), ["Bash"]);
    assert_eq!(callable(&bodies[1]), ["Bash"]);
    assert!(callable(&bodies[2]).len() > 1);

    // Not held: no known command, a task not about failing tests, no --compact-prompt.
    for (prompt, known_command) in [(TASK, false), ("Add a mul function to calc.sh.", true)] {
        let turns = vec![read("calc.sh"), fix.clone(), ScriptTurn::text("Fixed.")];
        let mut run = start(Path::OpenAi, turns, None, |c| {
            c.compact_tools = true;
            c.test_command = known_command.then(|| "bash test.sh".into());
        })
        .await;
        run.run_prompt(prompt).await;
        assert!(callable(&run.bodies()[0]).len() > 1, "{prompt}");
    }
    let turns = vec![tests(), ScriptTurn::text("They fail.")];
    let mut run = start(Path::OpenAi, turns, None, |c| {
        c.test_command = Some("bash test.sh".into());
    })
    .await;
    run.run().await;
    assert!(run.bodies()[0].get("response_format").is_none());
}

/// The text of the last tool result of a request (either wire format).
fn last_tool_result(path: Path, body: &Value) -> String {
    let messages = body["messages"].as_array().unwrap();
    let content = match path {
        Path::OpenAi => &messages.iter().rev().find(|m| m["role"] == "tool").unwrap()["content"],
        Path::Anthropic => messages
            .iter()
            .rev()
            .filter_map(|m| m["content"].as_array())
            .flatten()
            .find(|b| b["type"] == "tool_result")
            .map(|b| &b["content"])
            .unwrap(),
    };
    text_of(&json!({ "content": content }))
}

#[tokio::test]
async fn a_change_of_a_test_gets_a_note_and_the_calls_go_on() {
    let test_edit = ScriptTurn::tool_use(
        "Edit",
        json!({"file_path": "test.sh", "old_string": "source", "new_string": "."}),
    );
    let fix = ScriptTurn::tool_use(
        "Edit",
        json!({"file_path": "calc.sh", "old_string": "$1 - $2", "new_string": "$1 + $2"}),
    );
    for path in [Path::Anthropic, Path::OpenAi] {
        let turns = vec![
            read("test.sh"),
            test_edit.clone(),
            read("calc.sh"),
            fix.clone(),
            ScriptTurn::text("Fixed."),
        ];
        let mut run = start(path, turns, None, |c| c.compact_tools = true).await;
        let (_, r) = run.run().await;
        assert_eq!(r.result.as_deref(), Some("Fixed."), "{path:?}");
        // The test's change stands (a test can be wrong)...
        let test = std::fs::read_to_string(run.dir.path().join("test.sh")).unwrap();
        assert_eq!(test, ". ./calc.sh\n", "{path:?}");
        let bodies = run.bodies();
        assert_eq!(bodies.len(), 5, "{path:?}");
        // ...with a note that offers the call that undoes it and the way to the fix...
        let result = last_tool_result(path, &bodies[2]);
        // In the order the note writes it (keys are sorted, or kept in order where a test
        // build turns on serde_json's preserve_order: the same either way).
        let undo = json!({"file_path": "test.sh", "old_string": ".", "new_string": "source"});
        assert!(
            result.contains("Note: test.sh is a test."),
            "{path:?}: {result}"
        );
        assert!(
            result.contains(&format!("To undo this change: Edit {undo}.")),
            "{path:?}: {result}"
        );
        assert!(!last_tool_result(path, &bodies[1]).contains("Note:"));
        // ...and it is not the change the task asked for: the calls go on until the code
        // changed.
        assert!(forces_a_call(path, &bodies[2]), "{path:?}");
        assert!(forces_a_call(path, &bodies[3]), "{path:?}");
        assert!(bodies[4].get("tool_choice").is_none(), "{path:?}");
        assert!(!last_tool_result(path, &bodies[4]).contains("Note:"));
    }

    // Without --compact-prompt, the result is Edit's own and the model may answer.
    let turns = vec![read("test.sh"), test_edit, ScriptTurn::text("Done.")];
    let mut run = start(Path::OpenAi, turns, None, |_| {}).await;
    let (_, r) = run.run().await;
    assert_eq!(r.result.as_deref(), Some("Done."));
    let bodies = run.bodies();
    assert!(!last_tool_result(Path::OpenAi, &bodies[2]).contains("Note:"));
}

#[tokio::test]
async fn a_small_model_samples_low_and_more_freely_once_it_repeats_itself() {
    let nothing = || ScriptTurn::tool_use("Grep", json!({"pattern": "no such name"}));
    for path in [Path::Anthropic, Path::OpenAi] {
        let turns = vec![
            nothing(),
            nothing(),
            read("calc.sh"),
            ScriptTurn::text("It subtracts."),
        ];
        let mut run = start(path, turns, None, |c| c.compact_tools = true).await;
        let (_, r) = run.run_prompt("What does add in calc.sh do?").await;
        assert_eq!(r.result.as_deref(), Some("It subtracts."), "{path:?}");
        let temperatures: Vec<Value> = run
            .bodies()
            .iter()
            .map(|b| b["temperature"].clone())
            .collect();
        // 0.2 (as an f32 widened: compare as f32), then 1.0 after the Grep came back the same
        // twice, then 0.2 again after another call.
        let t = |v: &Value| v.as_f64().map(|f| f as f32);
        assert_eq!(
            temperatures.iter().map(t).collect::<Vec<_>>(),
            [Some(0.2), Some(0.2), Some(1.0), Some(0.2)],
            "{path:?}: {temperatures:?}"
        );

        // A configured temperature is the base; without --compact-prompt, only it is sent.
        for compact in [true, false] {
            let turns = vec![nothing(), nothing(), ScriptTurn::text("Done.")];
            let mut run = start(path, turns, None, |c| {
                c.compact_tools = compact;
                c.temperature = Some(0.5);
            })
            .await;
            run.run_prompt("Where is add defined?").await;
            let sent: Vec<Option<f32>> =
                run.bodies().iter().map(|b| t(&b["temperature"])).collect();
            let want = if compact {
                [Some(0.5), Some(0.5), Some(1.0)]
            } else {
                [Some(0.5); 3]
            };
            assert_eq!(sent, want, "{path:?} compact={compact}");
        }
    }
}

#[tokio::test]
async fn a_server_that_refuses_the_calls_grammar_gets_tool_choice_alone() {
    let refused = Fault::Status {
        status: 400,
        retry_after: None,
        retry_after_ms: None,
        message: Some("failed to parse grammar".into()),
    };
    let turns = vec![
        read("calc.sh").with_fault(refused),
        read("test.sh"),
        ScriptTurn::text("Read both."),
    ];
    let mut run = start(Path::OpenAi, turns, None, |c| c.compact_tools = true).await;
    let (events, r) = run.run().await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(r.result.as_deref(), Some("Read both."));
    let bodies = run.bodies();
    assert_eq!(bodies.len(), 4, "{bodies:?}");
    assert!(bodies[0].get("response_format").is_some());
    // Sent again at once without it, and left out of the requests after; still forced.
    for body in &bodies[1..] {
        assert!(body.get("response_format").is_none(), "{body}");
    }
    assert!(forces_a_call(Path::OpenAi, &bodies[1]));
    assert!(forces_a_call(Path::OpenAi, &bodies[2]));
    let told = notices(&events, "provider");
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(told[0].contains("response_format"), "{told:?}");
}

#[tokio::test]
async fn fixed_code_shown_instead_of_edited_is_told_to_act_with_the_task() {
    let shown =
        "The bug is in add. Here is the fixed code:\n```bash\nadd() { echo $(( $1 + $2 )); }\n```";
    for path in [Path::Anthropic, Path::OpenAi] {
        // The tests ran, an Edit was refused (not read yet): nothing changed, so code shown
        // for the user to apply is answered; the reply carries the task again.
        let turns = vec![
            ScriptTurn::tool_use("Bash", json!({"command": "bash test.sh"})),
            ScriptTurn::tool_use(
                "Edit",
                json!({"file_path": "calc.sh", "old_string": "$1 - $2", "new_string": "$1 + $2"}),
            ),
            ScriptTurn::text(shown),
            ScriptTurn::text("Done."),
        ];
        let mut run = start(path, turns, None, |c| c.compact_tools = true).await;
        let (_, r) = run.run().await;
        assert_eq!(r.result.as_deref(), Some("Done."), "{path:?}: {r:?}");
        let bodies = run.bodies();
        assert_eq!(bodies.len(), 4, "{path:?}");
        let reply = last_user_text(&bodies[3]);
        assert!(reply.contains("use the tools now"), "{path:?}: {reply}");
        assert!(
            reply.ends_with(&format!("The task: {TASK}")),
            "{path:?}: {reply}"
        );
        // Once a file changed, code in the answer is the answer.
        let turns = vec![
            read("calc.sh"),
            ScriptTurn::tool_use(
                "Edit",
                json!({"file_path": "calc.sh", "old_string": "$1 - $2", "new_string": "$1 + $2"}),
            ),
            ScriptTurn::text(shown),
        ];
        let mut run = start(path, turns, None, |c| c.compact_tools = true).await;
        let (_, r) = run.run().await;
        assert_eq!(r.result.as_deref(), Some(shown), "{path:?}: {r:?}");
        assert_eq!(run.bodies().len(), 3, "{path:?}");
    }
}

#[tokio::test]
async fn an_answer_that_repeats_itself_without_end_is_stopped() {
    let unit = "Please note that I cannot run tests or edit files in this repository. ";
    // Prose streams; text that starts like a call written as text ("```", "{") is held back
    // by the providers until the message ends, and must be stopped all the same.
    for (intro, path) in [
        ("I cannot see the tests. ", Path::Anthropic),
        ("I cannot see the tests. ", Path::OpenAi),
        ("```\nbash test.sh\n", Path::Anthropic),
        ("```\nbash test.sh\n", Path::OpenAi),
    ] {
        let turns = vec![ScriptTurn::text(format!("{intro}{}", unit.repeat(300)))];
        let mut run = start(path, turns, None, |_| {}).await;
        let (events, r) = run.run().await;
        assert!(!r.is_error, "{path:?}: {r:?}");
        let text = r.result.clone().unwrap();
        assert!(text.starts_with(intro), "{path:?}: {text}");
        assert!(
            text.len() < intro.len() + 3 * unit.len(),
            "{path:?}: {}",
            text.len()
        );
        let notes = notices(&events, "runaway");
        assert_eq!(notes.len(), 1, "{path:?}: {notes:?}");
        // The kept answer is shown as an assistant frame, as any answer.
        let quoted = serde_json::to_string(intro).unwrap();
        let escaped = quoted.trim_matches('"');
        assert!(events.iter().any(|e| matches!(e, SdkMessage::Assistant(a)
            if serde_json::to_string(a).unwrap().contains(escaped))));
    }
}

#[tokio::test]
async fn calls_in_an_answer_that_repeats_them_without_end_are_run_once() {
    let call =
        "<tools>\n{\"name\": \"Read\", \"arguments\": {\"file_path\": \"calc.sh\"}}\n</tools>\n";
    for path in [Path::Anthropic, Path::OpenAi] {
        let turns = vec![
            ScriptTurn::text(call.repeat(60)),
            ScriptTurn::text("The bug: add subtracts."),
        ];
        let mut run = start(path, turns, None, |_| {}).await;
        let (events, r) = run.run().await;
        assert!(!r.is_error, "{path:?}: {r:?}");
        assert_eq!(r.num_turns, 2, "{path:?}: {r:?}");
        assert_eq!(notices(&events, "runaway").len(), 1, "{path:?}");
        let second = serde_json::to_string(&run.bodies()[1]).unwrap();
        assert_eq!(
            second.matches("echo $(( $1 - $2 ))").count(),
            1,
            "{path:?}: the Read ran once: {second}"
        );
    }
}

#[tokio::test]
async fn the_anthropic_style_endpoint_learns_the_window_from_the_server() {
    let server = MockServer::builder()
        .model("local")
        .model_metadata(ModelMetadata {
            context_window: Some(16_384),
            ..ModelMetadata::default()
        })
        .start()
        .await
        .unwrap();
    let mut cfg = AnthropicConfig::new(Credential::api_key("none"));
    cfg.base_url = server.url();
    let p = AnthropicProvider::new(cfg).unwrap();
    assert!(p.served_model("local").is_none());
    let served = p.fetch_served_model("local").await.unwrap();
    assert_eq!(served.context_window, Some(16_384));
    assert_eq!(
        p.served_model("local").unwrap().context_window,
        Some(16_384)
    );
    assert!(
        server.requests().iter().any(|r| r.path_only() == "/props"),
        "llama.cpp's /props is asked behind its Anthropic-style endpoint too"
    );
    assert!(p.is_local());
}
