//! The fixed prefix of every request (system prompt and tool definitions) as the CLI sends it:
//! within its token budget, the rare tools deferred behind ToolSearch (and loaded when the
//! model asks), everything sent in full when the user picks the tools or turns deferral off.
//! (`--compact-prompt`'s 1,400-token budget is checked in `lean.rs`.)

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};
use skiff_protocol::script::{ScriptBlock, ScriptTurn};
use skiff_testkit::MockServer;

/// The tools the default prompt defers.
const RARE: [&str; 5] = [
    "ExitPlanMode",
    "NotebookEdit",
    "TaskOutput",
    "TaskStop",
    "WebFetch",
];

fn skiff(home: &Path, ws: &Path, url: &str) -> Command {
    let mut c = skiff_testkit::skiff_command!(home);
    c.env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", url)
        .env("SKIFF_MAX_RETRIES", "0")
        .current_dir(ws);
    c
}

/// Run `skiff -p go ARGS… --output-format stream-json --verbose` against `turns`; the request
/// bodies and the frames.
async fn run(
    turns: Vec<ScriptTurn>,
    args: &[&str],
    env: &[(&str, &str)],
) -> (Vec<Value>, Vec<Value>) {
    let server = MockServer::builder().turns(turns).start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let mut cmd = skiff(home.path(), ws.path(), &server.url());
    cmd.args(["-p", "go", "--output-format", "stream-json", "--verbose"])
        .args(["--permission-mode", "bypassPermissions"])
        .args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out: Output = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let frames = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let bodies = server
        .messages_requests()
        .into_iter()
        .map(|r| r.body)
        .collect();
    (bodies, frames)
}

/// System prompt + tools as sent, in tokens (JSON characters / 4, as bench/lean.py counts).
fn prefix_tokens(body: &Value) -> usize {
    let chars = |v: &Value| serde_json::to_string(v).unwrap().chars().count();
    (chars(&body["system"]) + chars(&body["tools"])) / 4
}

fn names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

fn init_tools(frames: &[Value]) -> Vec<String> {
    let init = frames.iter().find(|f| f["subtype"] == "init").unwrap();
    serde_json::from_value(init["tools"].clone()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_prefix_fits_3500_tokens_and_defers_the_rare_tools() {
    let (bodies, frames) = run(vec![ScriptTurn::text("ok")], &[], &[]).await;
    let first = &bodies[0];
    let tokens = prefix_tokens(first);
    assert!(tokens <= 3500, "default prefix: {tokens} tokens");
    let sent = names(first);
    let search = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "ToolSearch")
        .unwrap_or_else(|| panic!("no ToolSearch: {sent:?}"));
    for rare in RARE {
        assert!(!sent.contains(&rare.to_owned()), "{rare} sent in full");
        assert!(search["description"].as_str().unwrap().contains(rare));
    }
    // The init frame lists every tool.
    let init = init_tools(&frames);
    for name in RARE.iter().chain(&["Bash", "Read", "ToolSearch", "Task"]) {
        assert!(init.contains(&(*name).to_owned()), "{name}: {init:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_the_model_loads_follows_the_tools_sent_before() {
    let turns = vec![
        ScriptTurn {
            content: vec![ScriptBlock::ToolUse {
                id: None,
                name: "ToolSearch".into(),
                input: json!({"query": "select:WebFetch"}),
            }],
            ..ScriptTurn::default()
        },
        ScriptTurn::text("loaded"),
    ];
    let (bodies, _) = run(turns, &[], &[]).await;
    let (first, second) = (&bodies[0], &bodies[1]);
    let before = first["tools"].as_array().unwrap();
    let after = second["tools"].as_array().unwrap();
    assert_eq!(after.len(), before.len() + 1);
    assert_eq!(
        after[..before.len()],
        before[..],
        "the earlier tools changed"
    );
    assert_eq!(first["system"], second["system"]);
    assert_eq!(after[before.len()]["name"], "WebFetch");
    assert_eq!(
        after[before.len()]["input_schema"]["required"],
        json!(["url", "prompt"])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chosen_tools_or_enable_tool_search_false_send_every_tool_in_full() {
    let (bodies, frames) = run(
        vec![ScriptTurn::text("ok")],
        &["--tools", "Read,WebFetch,NotebookEdit"],
        &[],
    )
    .await;
    assert_eq!(names(&bodies[0]), ["NotebookEdit", "Read", "WebFetch"]);
    assert!(!init_tools(&frames).contains(&"ToolSearch".to_owned()));

    let (bodies, _) = run(
        vec![ScriptTurn::text("ok")],
        &[],
        &[("ENABLE_TOOL_SEARCH", "false")],
    )
    .await;
    let sent = names(&bodies[0]);
    for rare in RARE {
        assert!(sent.contains(&rare.to_owned()), "{rare}: {sent:?}");
    }
    assert!(!sent.contains(&"ToolSearch".to_owned()));

    let (bodies, _) = run(
        vec![ScriptTurn::text("ok")],
        &["--disallowedTools", "ToolSearch"],
        &[],
    )
    .await;
    assert!(names(&bodies[0]).contains(&"WebFetch".to_owned()));
}
