//! WebSearch end to end against the Anthropic mock: the model calls Claude Code's `WebSearch`;
//! skiff makes the search call with the server-side tool (`web_search_20250305`) and the small
//! model, sends a paused turn back unchanged, and answers with the sources found, which stay in
//! the transcript's structured result; searches are priced. Not granted without a rule in
//! print mode; not offered where the provider has no server-side search.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Output;

use serde_json::{Value, json};
use skiff_protocol::StopReason;
use skiff_protocol::script::{ScriptBlock, ScriptTurn};
use skiff_testkit::MockServer;

async fn run(base_url: Option<&str>, flags: &[&str]) -> (Output, Vec<Value>, tempfile::TempDir) {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_skiff"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("SKIFF_HOME", home.path().join(".skiff"))
        .env("ANTHROPIC_API_KEY", "sk-ant-web-search-test")
        .current_dir(ws.path())
        .args([
            "-p",
            "What is new in Rust?",
            "--output-format",
            "stream-json",
        ])
        .args(["--verbose"])
        .args(flags);
    if let Some(url) = base_url {
        cmd.env("ANTHROPIC_BASE_URL", url);
    }
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let frames = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (out, frames, home)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn search_result() -> Value {
    json!([
        {"type": "web_search_result", "title": "Rust 2024 is stable", "url": "https://blog.rust-lang.org/2025/02/20/Rust-1.85.0.html",
         "encrypted_content": "EqkCCioIBhgC...", "page_age": "February 20, 2025"},
        {"type": "web_search_result", "title": "The Rust Edition Guide", "url": "https://doc.rust-lang.org/edition-guide/",
         "encrypted_content": "Eq0BCioIBhgC...", "page_age": null}
    ])
}

/// The main call asks for a search; the search call pauses after its first search, then ends;
/// the main call answers.
fn turns() -> Vec<ScriptTurn> {
    vec![
        ScriptTurn::tool_use(
            "WebSearch",
            json!({"query": "rust 2024 edition", "allowed_domains": ["rust-lang.org"]}),
        ),
        ScriptTurn {
            content: vec![
                ScriptBlock::Text {
                    text: "I'll search for that.".into(),
                },
                ScriptBlock::ServerToolUse {
                    id: Some("srvtoolu_01".into()),
                    name: "web_search".into(),
                    input: json!({"query": "rust 2024 edition"}),
                },
                ScriptBlock::WebSearchToolResult {
                    tool_use_id: "srvtoolu_01".into(),
                    content: search_result(),
                },
            ],
            stop_reason: Some(StopReason::PauseTurn),
            ..ScriptTurn::default()
        },
        ScriptTurn::text("Rust 2024 shipped with Rust 1.85."),
        ScriptTurn::text(
            "Rust 2024 is out ([Rust 2024 is stable](https://blog.rust-lang.org/2025/02/20/Rust-1.85.0.html)).",
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_runs_on_the_server_and_its_sources_come_back_and_stay() {
    let mock = MockServer::builder().turns(turns()).start().await.unwrap();
    let (out, frames, _home) = run(Some(&mock.url()), &["--allowedTools", "WebSearch"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let reqs = mock.messages_requests();
    assert_eq!(reqs.len(), 4, "{}", stderr(&out));

    // The main call offers Claude Code's WebSearch (never the server tool itself).
    let tools = reqs[0].body["tools"].as_array().unwrap();
    let search = tools.iter().find(|t| t["name"] == "WebSearch").unwrap();
    assert_eq!(search["input_schema"]["required"], json!(["query"]));
    assert!(tools.iter().all(|t| t.get("type").is_none()), "{tools:?}");

    // The search call: the small model, the server tool required, the filter passed on.
    let call = &reqs[1].body;
    assert_eq!(call["model"], "claude-haiku-4-5");
    assert_eq!(
        call["tools"],
        json!([{"type": "web_search_20250305", "name": "web_search", "max_uses": 8,
            "allowed_domains": ["rust-lang.org"]}])
    );
    assert_eq!(
        call["tool_choice"],
        json!({"type": "tool", "name": "web_search"})
    );
    assert_eq!(
        call["messages"],
        json!([{"role": "user", "content": "Perform a web search for the query: rust 2024 edition"}])
    );
    // Paused: the turn goes back unchanged, server blocks and all.
    let again = &reqs[2].body["messages"];
    assert_eq!(again[1]["role"], "assistant");
    assert_eq!(
        again[1]["content"],
        json!([
            {"type": "text", "text": "I'll search for that."},
            {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {"query": "rust 2024 edition"}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01", "content": search_result()},
        ])
    );

    // The tool result: Claude Code's text with the sources.
    let messages = reqs[3].body["messages"].as_array().unwrap();
    let result = &messages.last().unwrap()["content"][0];
    assert_eq!(result["type"], "tool_result");
    let text = result["content"]
        .as_str()
        .unwrap_or_else(|| panic!("{result}"));
    assert_eq!(
        text,
        "Web search results for query: \"rust 2024 edition\"\n\nI'll search for that.\n\nLinks: \
         [{\"title\":\"Rust 2024 is stable\",\"url\":\"https://blog.rust-lang.org/2025/02/20/Rust-1.85.0.html\"},\
         {\"title\":\"The Rust Edition Guide\",\"url\":\"https://doc.rust-lang.org/edition-guide/\"}]\n\n\
         Rust 2024 shipped with Rust 1.85.\n\n\nREMINDER: You MUST include the sources above in \
         your response to the user using markdown hyperlinks."
    );

    // stream-json and the transcript keep the structured result with the sources.
    let user = frames
        .iter()
        .find(|f| f["type"] == "user" && !f["tool_use_result"].is_null())
        .unwrap();
    let structured = &user["tool_use_result"];
    assert_eq!(structured["query"], "rust 2024 edition");
    assert_eq!(
        structured["results"][1]["content"][0],
        json!({"title": "Rust 2024 is stable", "url": "https://blog.rust-lang.org/2025/02/20/Rust-1.85.0.html"})
    );
    assert!(structured["durationSeconds"].is_number());

    // The search is priced: a cent on top of the small model's tokens.
    let done = frames.iter().find(|f| f["type"] == "result").unwrap();
    assert_eq!(done["subtype"], "success", "{done}");
    let haiku = &done["modelUsage"]["claude-haiku-4-5"];
    assert_eq!(haiku["webSearchRequests"], 1, "{done}");
    assert!(haiku["costUSD"].as_f64().unwrap() >= 0.01, "{done}");
    assert!(mock.violations().is_empty(), "{:?}", mock.violations());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_is_not_granted_without_a_rule_in_print_mode() {
    let mock = MockServer::builder()
        .turn(ScriptTurn::tool_use("WebSearch", json!({"query": "rust"})))
        .turn(ScriptTurn::text("no search"))
        .start()
        .await
        .unwrap();
    let (out, frames, _home) = run(Some(&mock.url()), &[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let done = frames.iter().find(|f| f["type"] == "result").unwrap();
    assert_eq!(done["permission_denials"][0]["tool_name"], "WebSearch");
    // No search call was made: two calls, both the main conversation's.
    let reqs = mock.messages_requests();
    assert_eq!(reqs.len(), 2);
    assert!(reqs.iter().all(|r| r.body["model"] == "claude-sonnet-4-5"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_domain_filters_are_refused_before_any_search() {
    let mock = MockServer::builder()
        .turn(ScriptTurn::tool_use(
            "WebSearch",
            json!({"query": "rust", "allowed_domains": ["a.org"], "blocked_domains": ["b.org"]}),
        ))
        .turn(ScriptTurn::tool_use("WebSearch", json!({"query": "r"})))
        .turn(ScriptTurn::text("done"))
        .start()
        .await
        .unwrap();
    let (out, frames, _home) = run(Some(&mock.url()), &["--allowedTools", "WebSearch"]).await;
    assert!(out.status.success(), "{}\n{frames:?}", stderr(&out));
    let reqs = mock.messages_requests();
    assert_eq!(reqs.len(), 3, "no search call");
    let result = |i: usize| {
        let m = reqs[i].body["messages"].as_array().unwrap();
        m.last().unwrap()["content"][0].clone()
    };
    assert_eq!(result(1)["is_error"], true);
    assert!(
        result(1)["content"]
            .as_str()
            .unwrap()
            .contains("Cannot specify both allowed_domains and blocked_domains"),
        "{}",
        result(1)
    );
    assert_eq!(result(2)["is_error"], true);
    assert!(
        result(2)["content"]
            .as_str()
            .unwrap()
            .contains("InputValidationError"),
        "a one-letter query: {}",
        result(2)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn providers_without_server_side_search_do_not_offer_it() {
    let ws = tempfile::tempdir().unwrap();
    let script = ws.path().join("script.json");
    std::fs::write(
        &script,
        json!({"turns": [{"content": [{"type": "text", "text": "hi"}]}]}).to_string(),
    )
    .unwrap();
    let (out, frames, _home) = run(
        None,
        &["--provider", "script", "--script", script.to_str().unwrap()],
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let init = frames.iter().find(|f| f["subtype"] == "init").unwrap();
    let tools = init["tools"].as_array().unwrap();
    assert!(tools.contains(&json!("WebFetch")), "{tools:?}");
    assert!(!tools.contains(&json!("WebSearch")), "{tools:?}");
}
