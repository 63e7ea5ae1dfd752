//! The model options Claude Code takes, from skiff's command line to the requests the mock
//! server receives: `--max-thinking-tokens`, `--thinking`, `--thinking-display`, `--effort`,
//! `--betas` and `--fallback-model`, on models that take them and models that do not, and
//! `--effort` on OpenAI-compatible servers (`reasoning_effort`, left out once the server
//! refuses it).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};
use skiff_protocol::script::{Fault, Script, ScriptTurn};
use skiff_testkit::{MockServer, RecordedRequest};

/// `skiff -p PROMPT` against the mock server, stream-json out.
fn skiff(home: &Path, url: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_skiff"));
    c.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("SKIFF_HOME", home.join(".skiff"))
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .env("ANTHROPIC_BASE_URL", url)
        .current_dir(home)
        .args(["--output-format", "stream-json", "--verbose"]);
    c
}

async fn run(mut cmd: Command) -> (Output, Vec<Value>) {
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let frames = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (out, frames)
}

fn result(frames: &[Value], out: &Output) -> Value {
    frames
        .iter()
        .find(|f| f["type"] == "result")
        .cloned()
        .unwrap_or_else(|| {
            panic!(
                "no result: {frames:?}\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        })
}

fn messages(server: &MockServer) -> Vec<RecordedRequest> {
    server.messages_requests()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thinking_budget_effort_and_betas_reach_the_request() {
    let server = MockServer::start(Script {
        turns: vec![ScriptTurn::text("thought about it")],
        ..Script::default()
    })
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut cmd = skiff(home.path(), &server.url());
    // The prompt first, the flags after it: each takes its value, never the prompt.
    cmd.args(["-p", "think hard", "--max-thinking-tokens", "10000"])
        .args(["--effort", "high", "--betas", "beta-one,beta-two"])
        .args(["--model", "claude-opus-4-5"]);
    let (out, frames) = run(cmd).await;
    assert_eq!(result(&frames, &out)["subtype"], "success");
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("ignores"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reqs = messages(&server);
    assert_eq!(reqs.len(), 1);
    let body = &reqs[0].body;
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 10000})
    );
    // The answer keeps its room on top of the budget.
    assert_eq!(body["max_tokens"], 18192);
    assert_eq!(body["output_config"], json!({"effort": "high"}));
    assert!(body.get("temperature").is_none());
    let betas = reqs[0].header("anthropic-beta").unwrap_or_default();
    assert!(
        betas.contains("beta-one") && betas.contains("beta-two"),
        "{betas}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adaptive_thinking_where_the_model_takes_it_a_budget_where_it_does_not() {
    let server = MockServer::start(Script {
        turns: vec![ScriptTurn::text("a"), ScriptTurn::text("b")],
        ..Script::default()
    })
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut cmd = skiff(home.path(), &server.url());
    cmd.args(["-p", "x", "--thinking", "adaptive", "--thinking-display"])
        .args([
            "summarized",
            "--effort",
            "low",
            "--model",
            "claude-opus-4-6",
        ]);
    let (out, frames) = run(cmd).await;
    assert_eq!(result(&frames, &out)["subtype"], "success");
    let mut cmd = skiff(home.path(), &server.url());
    cmd.args(["-p", "y", "--thinking=adaptive", "--effort=low"])
        .args(["--model", "claude-sonnet-4-5"]);
    let (out, frames) = run(cmd).await;
    assert_eq!(result(&frames, &out)["subtype"], "success");
    let reqs = messages(&server);
    assert_eq!(
        reqs[0].body["thinking"],
        json!({"type": "adaptive", "display": "summarized"})
    );
    assert_eq!(reqs[0].body["output_config"], json!({"effort": "low"}));
    // Sonnet 4.5: thinking with a budget, no effort (and the user hears why).
    assert_eq!(reqs[1].body["thinking"]["type"], "enabled");
    assert!(
        reqs[1].body.get("output_config").is_none(),
        "{}",
        reqs[1].body
    );
    let notices: Vec<&Value> = frames
        .iter()
        .filter(|f| f["subtype"] == "informational")
        .collect();
    assert!(
        notices
            .iter()
            .any(|n| n["message"].as_str().unwrap().contains("effort")),
        "{notices:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_thinking_unless_asked_and_none_when_disabled() {
    let server = MockServer::start(Script {
        turns: vec![ScriptTurn::text("a"), ScriptTurn::text("b")],
        ..Script::default()
    })
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut cmd = skiff(home.path(), &server.url());
    cmd.args(["-p", "x"]);
    run(cmd).await;
    let mut cmd = skiff(home.path(), &server.url());
    cmd.env("MAX_THINKING_TOKENS", "5000")
        .args(["-p", "x", "--thinking", "disabled"]);
    run(cmd).await;
    for r in messages(&server) {
        assert!(r.body.get("thinking").is_none(), "{}", r.body);
        assert!(r.body.get("output_config").is_none(), "{}", r.body);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fallback_model_answers_after_three_overloads() {
    let overloaded = || Fault::Status {
        status: 529,
        retry_after: None,
        retry_after_ms: Some(1),
        message: None,
    };
    let server = MockServer::start(Script {
        turns: vec![
            ScriptTurn::text("from the fallback")
                .with_fault(overloaded())
                .with_fault(overloaded())
                .with_fault(overloaded()),
            ScriptTurn::text("still the fallback"),
        ],
        ..Script::default()
    })
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut cmd = skiff(home.path(), &server.url());
    cmd.args(["-p", "x", "--model", "opus", "--fallback-model", "sonnet"]);
    let (out, frames) = run(cmd).await;
    let r = result(&frames, &out);
    assert_eq!(r["subtype"], "success", "{r}");
    assert_eq!(r["result"], "from the fallback");
    let models: Vec<Value> = messages(&server)
        .iter()
        .map(|r| r.body["model"].clone())
        .collect();
    assert_eq!(
        models,
        [
            "claude-opus-4-5",
            "claude-opus-4-5",
            "claude-opus-4-5",
            "claude-sonnet-4-5"
        ]
    );
    let switched = frames
        .iter()
        .find(|f| f["subtype"] == "model_fallback")
        .unwrap_or_else(|| panic!("{frames:?}"));
    assert_eq!(switched["trigger"], "overloaded");
    assert_eq!(switched["original_model"], "claude-opus-4-5");
    assert_eq!(switched["fallback_model"], "claude-sonnet-4-5");
    // The same model twice is a usage error, as with Claude Code.
    let mut cmd = skiff(home.path(), &server.url());
    cmd.args(["-p", "x", "--model", "sonnet", "--fallback-model", "sonnet"]);
    let (out, _) = run(cmd).await;
    assert_eq!(out.status.code(), Some(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_fallback_overloads_are_retried_as_before() {
    let overloaded = || Fault::Status {
        status: 529,
        retry_after: None,
        retry_after_ms: Some(1),
        message: None,
    };
    let server = MockServer::start(Script {
        turns: vec![
            ScriptTurn::text("main model")
                .with_fault(overloaded())
                .with_fault(overloaded())
                .with_fault(overloaded()),
        ],
        ..Script::default()
    })
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut cmd = skiff(home.path(), &server.url());
    cmd.args(["-p", "x", "--model", "opus"]);
    let (out, frames) = run(cmd).await;
    assert_eq!(result(&frames, &out)["result"], "main model");
    assert!(
        messages(&server)
            .iter()
            .all(|r| r.body["model"] == "claude-opus-4-5")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn effort_on_an_openai_compatible_server_and_one_that_refuses_it() {
    let server = MockServer::start(Script {
        turns: vec![
            ScriptTurn::text("one"),
            ScriptTurn::tool_use("Glob", json!({"pattern": "*.none"})).with_fault(Fault::Status {
                status: 400,
                retry_after: None,
                retry_after_ms: None,
                message: Some("Unrecognized request argument supplied: reasoning_effort".into()),
            }),
            ScriptTurn::text("two"),
        ],
        ..Script::default()
    })
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let openai = |prompt: &str| {
        let mut cmd = skiff(home.path(), &server.url());
        cmd.args(["-p", prompt, "--provider", "openai", "--model", "gpt-test"])
            .args(["--base-url", &server.url(), "--effort", "max"])
            .env("OPENAI_API_KEY", "sk-test");
        cmd
    };
    let (out, frames) = run(openai("first")).await;
    assert_eq!(result(&frames, &out)["result"], "one");
    // This server takes it: `max` is its `high`.
    let (out, frames) = run(openai("second")).await;
    let r = result(&frames, &out);
    assert_eq!(r["subtype"], "success", "{r}");
    assert_eq!(r["result"], "two");
    let warned: Vec<&Value> = frames
        .iter()
        .filter(|f| {
            f["subtype"] == "informational"
                && f["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("reasoning_effort"))
        })
        .collect();
    assert_eq!(warned.len(), 1, "{frames:?}");
    let chats = server.chat_requests();
    assert_eq!(chats.len(), 4, "{chats:?}");
    assert_eq!(chats[0].body["reasoning_effort"], "high");
    assert_eq!(chats[1].body["reasoning_effort"], "high");
    // Sent again without it at once, and left out of the calls after.
    assert!(chats[2].body.get("reasoning_effort").is_none());
    assert!(chats[3].body.get("reasoning_effort").is_none());
    assert!(chats.iter().all(|c| c.body.get("thinking").is_none()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn structured_output_through_an_openai_compatible_server() {
    let server = MockServer::start(Script {
        turns: vec![
            ScriptTurn::tool_use("StructuredOutput", json!({"n": "two"})),
            ScriptTurn::tool_use("StructuredOutput", json!({"n": 2})),
        ],
        ..Script::default()
    })
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_skiff"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("SKIFF_HOME", home.path().join(".skiff"))
        .env("OPENAI_API_KEY", "sk-test")
        .current_dir(home.path())
        .args(["-p", "how many?", "--output-format", "json"])
        .args(["--provider", "openai", "--model", "gpt-test"])
        .args(["--base-url", &server.url()])
        .args([
            "--json-schema",
            r#"{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}"#,
        ]);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let result: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(result["subtype"], "success", "{result}");
    assert_eq!(result["structured_output"], json!({"n": 2}));
    let chats = server.chat_requests();
    assert_eq!(chats.len(), 2);
    let tool = chats[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "StructuredOutput")
        .unwrap()
        .clone();
    assert_eq!(tool["function"]["parameters"]["required"], json!(["n"]));
    // The second request carried the validation error back.
    assert!(
        chats[1].body["messages"]
            .to_string()
            .contains("Output does not match required schema"),
        "{}",
        chats[1].body
    );
    // A schema that is not an object schema is a usage error.
    let mut cmd = skiff(home.path(), &server.url());
    cmd.args(["-p", "x", "--json-schema", r#"{"type":"array"}"#]);
    let (out, _) = run(cmd).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--json-schema"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_structured_output_ends_the_run_after_the_attempts_allowed() {
    let bad = || ScriptTurn::tool_use("StructuredOutput", json!({"n": "x"}));
    let server = MockServer::start(Script {
        turns: vec![bad(), bad(), bad()],
        ..Script::default()
    })
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut cmd = skiff(home.path(), &server.url());
    cmd.env("MAX_STRUCTURED_OUTPUT_RETRIES", "2")
        .args(["-p", "x", "--json-schema"])
        .arg(r#"{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}"#);
    let (out, frames) = run(cmd).await;
    let r = result(&frames, &out);
    assert_eq!(r["subtype"], "error_max_structured_output_retries", "{r}");
    assert_eq!(r["terminal_reason"], "structured_output_retry_exhausted");
    assert!(
        r["errors"][0]
            .as_str()
            .unwrap()
            .starts_with("Failed to provide valid structured output after 2 attempts"),
        "{r}"
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(messages(&server).len(), 2);
}
