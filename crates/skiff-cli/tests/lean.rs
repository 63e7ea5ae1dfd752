//! What every request carries before the conversation (system prompt and tool definitions),
//! kept small: terse schemas, and `--compact-prompt` with the six core tools on one line each.
//! Also the first-hour fixes: flags offered only where they work, a man page that names no
//! missing pages.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use predicates::prelude::*;
use serde_json::Value;
use skiff_protocol::script::ScriptTurn;
use skiff_testkit::MockServer;

fn skiff(url: &str, home: &std::path::Path) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::new(env!("CARGO_BIN_EXE_skiff"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("SKIFF_HOME", home.join(".skiff"))
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", url)
        .env("SKIFF_MAX_RETRIES", "0");
    cmd
}

/// The first Messages request of `skiff -p hi EXTRA…` in an empty workspace.
async fn first_request(extra: &[&str]) -> Value {
    first_request_in(&[], extra).await
}

/// The same in a workspace holding `files` (a name ending `/` is a directory).
async fn first_request_in(files: &[&str], extra: &[&str]) -> Value {
    let server = MockServer::builder()
        .turn(ScriptTurn::text("ok"))
        .start()
        .await
        .unwrap();
    let url = server.url();
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    for f in files {
        match f.strip_suffix('/') {
            Some(dir) => std::fs::create_dir(ws.path().join(dir)).unwrap(),
            None => std::fs::write(ws.path().join(f), "x").unwrap(),
        }
    }
    let extra: Vec<String> = extra.iter().map(|s| (*s).to_owned()).collect();
    let (home_path, ws_path) = (home.path().to_owned(), ws.path().to_owned());
    let out = tokio::task::spawn_blocking(move || {
        skiff(&url, &home_path)
            .current_dir(&ws_path)
            .args(["-p", "hi"])
            .args(&extra)
            .output()
    })
    .await
    .unwrap()
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    server.messages_requests()[0].body.clone()
}

/// System prompt + tools as sent, in tokens (JSON characters / 4).
fn prefix_tokens(body: &Value) -> usize {
    let chars = serde_json::to_string(&body["system"])
        .unwrap()
        .chars()
        .count()
        + serde_json::to_string(&body["tools"])
            .unwrap()
            .chars()
            .count();
    chars / 4
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// Every schema node, depth first.
fn nodes(v: &Value, out: &mut Vec<Value>) {
    match v {
        Value::Object(m) => {
            out.push(v.clone());
            m.values().for_each(|c| nodes(c, out));
        }
        Value::Array(a) => a.iter().for_each(|c| nodes(c, out)),
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_schemas_are_terse() {
    let body = first_request(&[]).await;
    for tool in body["tools"].as_array().unwrap() {
        let name = &tool["name"];
        let schema = &tool["input_schema"];
        assert!(schema.get("$schema").is_none(), "{name}: $schema");
        assert!(
            schema.get("description").is_none(),
            "{name}: root description"
        );
        let mut all = Vec::new();
        nodes(schema, &mut all);
        for node in all {
            assert!(node.get("oneOf").is_none(), "{name}: oneOf in {node}");
            assert!(node.get("const").is_none(), "{name}: const in {node}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_prompt_sends_six_tools_with_one_line_each_in_1400_tokens() {
    let body = first_request(&["--compact-prompt"]).await;
    assert_eq!(
        tool_names(&body),
        ["Bash", "Edit", "Glob", "Grep", "Read", "Write"]
    );
    for tool in body["tools"].as_array().unwrap() {
        let d = tool["description"].as_str().unwrap();
        assert!(!d.contains('\n') && d.chars().count() <= 161, "{d}");
    }
    // The forms offer what each tool needs (its required parameters among them) and name no
    // language: a small model copies a description's examples.
    let full = first_request(&["--tools", "Bash,Edit,Glob,Grep,Read,Write"]).await;
    for (tool, whole) in body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .zip(full["tools"].as_array().unwrap())
    {
        assert_eq!(tool["name"], whole["name"]);
        let offered = tool["input_schema"]["properties"].as_object().unwrap();
        let all = whole["input_schema"]["properties"].as_object().unwrap();
        assert!(
            offered.keys().all(|k| all.contains_key(k)),
            "{}",
            tool["name"]
        );
        for required in whole["input_schema"]["required"].as_array().unwrap() {
            assert!(offered.contains_key(required.as_str().unwrap()), "{tool}");
        }
        let text = tool.to_string();
        for example in [".rs", ".ts", "fn\\s", "rust"] {
            assert!(!text.contains(example), "{example} in {text}");
        }
    }
    let tokens = prefix_tokens(&body);
    assert!(tokens <= 1400, "compact prefix: {tokens} tokens");
    // The full prompt stays well above it (the compact one is not the default).
    let full = first_request(&[]).await;
    assert!(prefix_tokens(&full) > tokens);
    assert!(tool_names(&full).len() > 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_prompt_shows_the_small_model_the_working_directory() {
    let files = ["test.sh", "calc.sh", "src/", ".env", "README.md"];
    let system = |body: &Value| serde_json::to_string(&body["system"]).unwrap();
    let body = first_request_in(&files, &["--compact-prompt"]).await;
    assert!(
        system(&body).contains("Files here: README.md, calc.sh, src/, test.sh\\n"),
        "{}",
        system(&body)
    );
    // And the command that runs the tests, when the files name one.
    assert!(
        system(&body).contains("Tests run with: bash test.sh\\n"),
        "{}",
        system(&body)
    );
    // Hidden files are not named; the full prompt names none (Claude Code's does not).
    assert!(!system(&body).contains(".env"));
    let full = first_request_in(&files, &[]).await;
    assert!(!system(&full).contains("Files here"));
    assert!(!system(&full).contains("Tests run with"));
    let untested = first_request_in(&["calc.sh"], &["--compact-prompt"]).await;
    assert!(!system(&untested).contains("Tests run with"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_explicit_tools_list_wins_over_the_compact_set() {
    let body = first_request(&["--compact-prompt", "--tools", "Read,LS"]).await;
    assert_eq!(tool_names(&body), ["LS", "Read"]);
}

#[test]
fn output_format_is_offered_only_where_it_is_used() {
    let home = tempfile::tempdir().unwrap();
    for cmd in [
        &["models"][..],
        &["man"],
        &["completions", "bash"],
        &["mcp", "list"],
        &["replay", "x"],
    ] {
        skiff("http://127.0.0.1:9", home.path())
            .args(cmd)
            .args(["--output-format", "json"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("--output-format"));
    }
    // `skiff sessions` prints a table or JSON: it has the flag, before or after the command.
    for args in [
        &["sessions", "--output-format", "json"][..],
        &["--output-format", "json", "sessions"],
    ] {
        skiff("http://127.0.0.1:9", home.path())
            .args(args)
            .assert()
            .success()
            .stdout(predicate::str::starts_with("["));
    }
}

#[test]
fn the_man_page_names_no_missing_pages() {
    let home = tempfile::tempdir().unwrap();
    let out = skiff("http://127.0.0.1:9", home.path())
        .arg("man")
        .output()
        .unwrap();
    assert!(out.status.success());
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.contains(".SH COMMANDS"), "{page}");
    assert!(page.contains("skiff sessions"), "{page}");
    for name in [
        "config", "sessions", "replay", "batch", "models", "mcp", "acp", "man",
    ] {
        assert!(!page.contains(&format!("\\-{name}(1)")), "{page}");
    }
}
