//! The official Agent SDKs run skiff in place of `claude`: the Python `claude-agent-sdk` and the
//! TypeScript `@anthropic-ai/claude-agent-sdk`, pinned by `sdk-tests/` and installed by `.ci/run`
//! (into `target/sdk-venv` and `target/sdk-ts`), drive the flows of `sdk-tests/{python,ts}`
//! against the scripted model of `sdk-tests/scripts`. Each flow prints what the SDK parsed as one
//! `SDK-SUMMARY {json}` line, the same shape in both languages, and the checks here hold it to
//! what Claude Code gives the same flow (the flows pass against Claude Code 2.1.330 itself; see
//! `sdk-tests/README.md`).
//!
//! The tests are ignored by a plain `cargo test` (the summary counts them, with the reason):
//! `.ci/run` installs the SDKs and runs them with `-- --include-ignored`, and a test run that way
//! without the SDKs fails.
//!
//! `SKIFF_AGENT_SDK_REFERENCE_CLI=/path/to/claude` runs the same flows and checks against Claude
//! Code instead, its model the mock server serving the same scripts (the SDK's wheel bundles a
//! `claude`: `target/sdk-venv/lib/python3.11/site-packages/claude_agent_sdk/_bundled/claude`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skiff_protocol::script::Script;
use skiff_testkit::{MockServer, RecordedRequest};

/// A flow that has not finished by then is killed (the interrupt flow's command sleeps 30 s).
const FLOW_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Clone, Copy, Debug)]
enum Sdk {
    Python,
    Ts,
}

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Where `.ci/run` put an SDK (overridable by SKIFF_AGENT_SDK_PYTHON / SKIFF_AGENT_SDK_TS).
fn install(sdk: Sdk) -> PathBuf {
    let (var, default) = match sdk {
        Sdk::Python => ("SKIFF_AGENT_SDK_PYTHON", "target/sdk-venv/bin/python"),
        Sdk::Ts => ("SKIFF_AGENT_SDK_TS", "target/sdk-ts"),
    };
    std::env::var_os(var).map_or_else(|| repo_root().join(default), PathBuf::from)
}

/// Whether the SDK is installed; a missing one fails the test (it runs only when asked for).
/// Checked once per test run: importing the Python SDK takes about 2 s (its `mcp` and pydantic
/// models), which each flow pays again anyway.
fn installed(sdk: Sdk) -> bool {
    static PYTHON: OnceLock<bool> = OnceLock::new();
    static TS: OnceLock<bool> = OnceLock::new();
    let checked = match sdk {
        Sdk::Python => &PYTHON,
        Sdk::Ts => &TS,
    };
    let ok = *checked.get_or_init(|| check_installed(sdk));
    if !ok {
        let what = format!(
            "the {sdk:?} Agent SDK is not installed at {} (.ci/run installs it)",
            install(sdk).display()
        );
        panic!("{what}");
    }
    ok
}

fn check_installed(sdk: Sdk) -> bool {
    let path = install(sdk);
    match sdk {
        Sdk::Python => Command::new(&path)
            .args(["-c", "import claude_agent_sdk"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success()),
        Sdk::Ts => {
            path.join("node_modules/@anthropic-ai/claude-agent-sdk/sdk.mjs")
                .is_file()
                && Command::new("node")
                    .arg("--version")
                    .output()
                    .is_ok_and(|o| o.status.success())
        }
    }
}

/// Run one flow with skiff as the CLI and the scripted provider, in a temp workspace with a
/// temp HOME; its summary line.
fn run_flow(sdk: Sdk, flow: &str) -> Option<Value> {
    run_flow_in(sdk, flow, false).map(|(summary, _)| summary)
}

/// Run one flow with the mock server serving its script (skiff's Anthropic provider at
/// ANTHROPIC_BASE_URL): its summary line and the Messages API requests the model received.
fn run_flow_mock(sdk: Sdk, flow: &str) -> Option<(Value, Vec<RecordedRequest>)> {
    run_flow_in(sdk, flow, true)
}

fn run_flow_in(sdk: Sdk, flow: &str, mock: bool) -> Option<(Value, Vec<RecordedRequest>)> {
    if !installed(sdk) {
        return None;
    }
    let root = repo_root();
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let script = root.join(format!("sdk-tests/scripts/{flow}.json"));
    let mut cmd = match sdk {
        Sdk::Python => Command::new(install(sdk)),
        Sdk::Ts => Command::new("node"),
    };
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("SKIFF_HOME", home.path().join(".skiff"))
        .env("SKIFF_BIN", env!("CARGO_BIN_EXE_skiff"))
        .env("SKIFF_SDK_SCRIPT", &script);
    match sdk {
        Sdk::Python => cmd
            .arg(root.join(format!("sdk-tests/python/{flow}.py")))
            .env("PYTHONDONTWRITEBYTECODE", "1"),
        Sdk::Ts => cmd
            .arg(root.join(format!("sdk-tests/ts/{flow}.mjs")))
            .env("SKIFF_AGENT_SDK_TS", install(sdk)),
    };
    cmd.current_dir(ws.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Claude Code as the reference, or a flow that checks the model's requests: the mock
    // server serves the script (kept until the flow ends).
    let reference = std::env::var_os("SKIFF_AGENT_SDK_REFERENCE_CLI");
    let served = (mock || reference.is_some()).then(|| {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let script: Script =
            serde_json::from_str(&std::fs::read_to_string(&script).unwrap()).unwrap();
        let mut builder = MockServer::builder().script(script);
        if reference.is_some() {
            builder = builder.allow_invalid_requests();
        }
        let server = rt.block_on(builder.start()).unwrap();
        cmd.env("SKIFF_SDK_MOCK", "1")
            .env("ANTHROPIC_BASE_URL", server.url())
            .env("ANTHROPIC_API_KEY", "sk-test");
        if let Some(cli) = &reference {
            cmd.env("SKIFF_BIN", cli)
                .env("SKIFF_SDK_CLI_IS_CLAUDE", "1")
                .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
        }
        (server, rt)
    });
    let (stdout, stderr, status) = run_with_timeout(cmd, FLOW_TIMEOUT);
    let what =
        format!("{sdk:?} flow {flow}: exit {status}\n--- stdout\n{stdout}\n--- stderr\n{stderr}");
    let summary = stdout
        .lines()
        .find_map(|l| l.strip_prefix("SDK-SUMMARY "))
        .unwrap_or_else(|| panic!("no SDK-SUMMARY line: {what}"));
    assert_eq!(status, "0", "{what}");
    let summary: Value = serde_json::from_str(summary).unwrap();
    common_checks(&summary, &what);
    let requests = match &served {
        Some((server, _)) => {
            assert!(
                reference.is_some() || server.violations().is_empty(),
                "requests the API would reject: {:?}\n{what}",
                server.violations()
            );
            server.messages_requests()
        }
        None => Vec::new(),
    };
    Some((summary, requests))
}

/// Run `cmd`, killing it after `timeout`: (stdout, stderr, exit status or "killed ...").
fn run_with_timeout(mut cmd: Command, timeout: Duration) -> (String, String, String) {
    let mut child = cmd.spawn().unwrap();
    let read = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = r.read_to_string(&mut s);
            s
        })
    };
    let out = read(Box::new(child.stdout.take().unwrap()));
    let err = read(Box::new(child.stderr.take().unwrap()));
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s.code().map_or_else(|| format!("{s}"), |c| c.to_string());
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            break format!("killed after {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // The SDK's CLI child may outlive a killed flow and hold the pipes: don't wait forever.
    let join = |h: std::thread::JoinHandle<String>| {
        let deadline = Instant::now() + Duration::from_secs(5);
        while !h.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        if h.is_finished() {
            h.join().unwrap()
        } else {
            "(output still open)".to_owned()
        }
    };
    (join(out), join(err), status)
}

fn messages(s: &Value) -> &[Value] {
    s["messages"].as_array().unwrap()
}

fn of_type<'a>(s: &'a Value, ty: &str) -> Vec<&'a Value> {
    messages(s).iter().filter(|m| m["type"] == ty).collect()
}

fn blocks<'a>(s: &'a Value, ty: &str, block: &str) -> Vec<&'a Value> {
    of_type(s, ty)
        .into_iter()
        .flat_map(|m| m["blocks"].as_array().unwrap())
        .filter(|b| b["type"] == block)
        .collect()
}

fn results(s: &Value) -> Vec<&Value> {
    of_type(s, "result")
}

fn last_result(s: &Value) -> &Value {
    results(s).last().copied().expect("no ResultMessage")
}

fn init(s: &Value) -> &Value {
    &messages(s)[0]
}

/// `major.minor.patch` of a version string.
fn semver(v: &str) -> Option<(u64, u64, u64)> {
    let mut it = v.split(|c: char| !c.is_ascii_digit());
    Some((
        it.next()?.parse().ok()?,
        it.next()?.parse().ok()?,
        it.next()?.parse().ok()?,
    ))
}

/// What every flow must show: no SDK warnings, no fields missing that the SDK's types promise,
/// an init first with a version the SDKs accept, one session id throughout.
fn common_checks(s: &Value, what: &str) {
    assert_eq!(s["warnings"], json!([]), "SDK warnings: {what}");
    assert_eq!(
        s["problems"],
        json!([]),
        "frames the SDK's types reject: {what}"
    );
    let init = init(s);
    assert_eq!(
        (&init["type"], &init["subtype"]),
        (&json!("system"), &json!("init")),
        "the first message is not system/init: {what}"
    );
    let version = init["claude_code_version"].as_str().unwrap_or_default();
    assert!(
        semver(version).is_some_and(|v| v >= (2, 0, 0)),
        "init.claude_code_version {version:?} is not a version >= 2.0.0 the SDKs accept: {what}"
    );
    let sid = &init["session_id"];
    assert!(
        sid.as_str().is_some_and(|s| !s.is_empty()),
        "init.session_id: {what}"
    );
    for m in messages(s) {
        if m["type"] == "assistant" || m["type"] == "result" || m["subtype"] == "init" {
            assert_eq!(&m["session_id"], sid, "session_id of {m}: {what}");
        }
    }
    assert!(!results(s).is_empty(), "no ResultMessage: {what}");
}

fn assert_success(s: &Value, text: &str) {
    let r = last_result(s);
    assert_eq!(r["subtype"], "success", "{r}");
    assert_eq!(r["is_error"], false, "{r}");
    assert_eq!(r["result"], text, "{r}");
}

// --- the flows -----------------------------------------------------------------------------

fn text_only(sdk: Sdk) {
    let Some(s) = run_flow(sdk, "text") else {
        return;
    };
    let texts: Vec<_> = blocks(&s, "assistant", "text")
        .iter()
        .map(|b| b["text"].clone())
        .collect();
    assert_eq!(texts, [json!("Hello from the script.")], "{s}");
    assert_success(&s, "Hello from the script.");
    assert_eq!(last_result(&s)["num_turns"], 1, "{s}");
}

fn tool_round(sdk: Sdk) {
    let Some(s) = run_flow(sdk, "tool") else {
        return;
    };
    let uses = blocks(&s, "assistant", "tool_use");
    assert_eq!(uses.len(), 1, "{s}");
    assert_eq!(uses[0]["id"], "toolu_sdk_bash", "{s}");
    assert_eq!(uses[0]["name"], "Bash", "{s}");
    assert_eq!(uses[0]["input"]["command"], "echo hi", "{s}");
    let results = blocks(&s, "user", "tool_result");
    assert_eq!(results.len(), 1, "{s}");
    assert_eq!(results[0]["tool_use_id"], "toolu_sdk_bash", "{s}");
    assert_eq!(results[0]["content"].as_str().unwrap().trim(), "hi", "{s}");
    assert_eq!(results[0]["is_error"], false, "{s}");
    assert_success(&s, "The command printed hi.");
    assert_eq!(last_result(&s)["num_turns"], 2, "{s}");
}

fn can_use_tool(sdk: Sdk) {
    let Some(s) = run_flow(sdk, "permission") else {
        return;
    };
    let asked: Vec<_> = s["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["tool_name"].clone(), c["input"]["command"].clone()))
        .collect();
    assert_eq!(
        asked,
        [
            (json!("Bash"), json!("touch denied.txt")),
            (json!("Bash"), json!("touch original.txt"))
        ],
        "the can_use_tool callback's calls: {s}"
    );
    let results = blocks(&s, "user", "tool_result");
    assert_eq!(results.len(), 2, "{s}");
    assert_eq!(results[0]["tool_use_id"], "toolu_sdk_deny", "{s}");
    assert_eq!(results[0]["is_error"], true, "{s}");
    assert!(
        results[0]["content"]
            .as_str()
            .unwrap()
            .contains("denied by the sdk-tests callback"),
        "the denial's message: {s}"
    );
    assert_eq!(results[1]["tool_use_id"], "toolu_sdk_allow", "{s}");
    assert_eq!(results[1]["is_error"], false, "{s}");
    assert_eq!(
        s["files"],
        json!(["changed.txt"]),
        "the allowed call must run the callback's updatedInput (touch changed.txt), the denied one nothing: {s}"
    );
    assert_success(&s, "Permissions done.");
    let denials: Vec<_> = last_result(&s)["permission_denials"]
        .as_array()
        .unwrap_or_else(|| panic!("result.permission_denials: {s}"))
        .iter()
        .map(|d| (d["tool_name"].clone(), d["tool_use_id"].clone()))
        .collect();
    assert_eq!(
        denials,
        [(json!("Bash"), json!("toolu_sdk_deny"))],
        "result.permission_denials: {s}"
    );
}

fn hook_blocks_a_tool(sdk: Sdk) {
    let Some(s) = run_flow(sdk, "hook") else {
        return;
    };
    let calls = s["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 1, "the hook's calls: {s}");
    assert_eq!(calls[0]["hook_event_name"], "PreToolUse", "{s}");
    assert_eq!(calls[0]["tool_name"], "Bash", "{s}");
    assert_eq!(calls[0]["input"]["command"], "touch hooked.txt", "{s}");
    assert_eq!(calls[0]["tool_use_id"], "toolu_sdk_hooked", "{s}");
    let results = blocks(&s, "user", "tool_result");
    assert_eq!(results.len(), 1, "{s}");
    assert_eq!(results[0]["tool_use_id"], "toolu_sdk_hooked", "{s}");
    assert_eq!(results[0]["is_error"], true, "{s}");
    assert!(
        results[0]["content"]
            .as_str()
            .unwrap()
            .contains("blocked by the sdk-tests hook"),
        "the tool result carries the hook's reason: {s}"
    );
    assert_eq!(s["files"], json!([]), "the blocked command ran: {s}");
    assert_success(&s, "The hook blocked it.");
}

fn interrupt(sdk: Sdk) {
    let Some(s) = run_flow(sdk, "interrupt") else {
        return;
    };
    let interrupt_ms = s["interrupt_ms"]
        .as_u64()
        .unwrap_or_else(|| panic!("no interrupt happened (no tool_use seen?): {s}"));
    assert!(
        interrupt_ms < 5_000,
        "interrupt() took {interrupt_ms} ms: {s}"
    );
    let to_result = s["tool_use_to_result_ms"].as_u64().unwrap();
    assert!(
        to_result < 15_000,
        "{to_result} ms from the tool call to the result (the command sleeps 30 s): {s}"
    );
    let results = blocks(&s, "user", "tool_result");
    assert_eq!(results.len(), 1, "{s}");
    assert_eq!(results[0]["tool_use_id"], "toolu_sdk_sleep", "{s}");
    assert_eq!(results[0]["is_error"], true, "{s}");
    let r = last_result(&s);
    assert_eq!(r["subtype"], "error_during_execution", "{r}: {s}");
    assert_eq!(r["is_error"], true, "{r}: {s}");
    assert!(
        blocks(&s, "assistant", "text").is_empty(),
        "the model was called again after the interrupt: {s}"
    );
}

fn two_queries(sdk: Sdk) {
    let Some(s) = run_flow(sdk, "session") else {
        return;
    };
    let rs = results(&s);
    assert_eq!(rs.len(), 2, "{s}");
    for (r, text) in rs.iter().zip(["first answer", "second answer"]) {
        assert_eq!(r["subtype"], "success", "{s}");
        assert_eq!(r["result"], text, "{s}");
    }
    // common_checks: every init, assistant and result carries the first init's session_id.
}

fn sdk_mcp_tool(sdk: Sdk) {
    let Some(s) = run_flow(sdk, "sdk_mcp") else {
        return;
    };
    let init = init(&s);
    let servers = init["mcp_servers"].as_array().unwrap();
    assert!(
        servers
            .iter()
            .any(|v| v["name"] == "calc" && v["status"] == "connected"),
        "init.mcp_servers: {s}"
    );
    assert!(
        init["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("mcp__calc__add")),
        "init.tools: {s}"
    );
    let uses = blocks(&s, "assistant", "tool_use");
    assert_eq!(uses.len(), 1, "{s}");
    assert_eq!(uses[0]["name"], "mcp__calc__add", "{s}");
    assert_eq!(
        s["calls"],
        json!([{"a": 2, "b": 3}]),
        "the tool's calls: {s}"
    );
    let results = blocks(&s, "user", "tool_result");
    assert_eq!(results.len(), 1, "{s}");
    assert_eq!(results[0]["content"], "5", "{s}");
    assert_eq!(results[0]["is_error"], false, "{s}");
    assert_success(&s, "The sum is 5.");
}

/// The system prompt of a recorded request, as one text.
fn system_text(r: &RecordedRequest) -> String {
    match &r.body["system"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn tool_names(r: &RecordedRequest) -> Vec<String> {
    r.body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|d| d["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn sdk_agents(sdk: Sdk) {
    let Some((s, requests)) = run_flow_mock(sdk, "agents") else {
        return;
    };
    assert!(
        init(&s)["agents"]
            .as_array()
            .unwrap()
            .contains(&json!("code-reviewer")),
        "init.agents: {s}"
    );
    assert!(
        s["server_agents"]
            .as_array()
            .unwrap()
            .contains(&json!("code-reviewer")),
        "the server info's agents: {s}"
    );
    for cmd in ["compact", "clear"] {
        assert!(
            s["server_commands"]
                .as_array()
                .unwrap()
                .contains(&json!(cmd)),
            "the server info's commands: {s}"
        );
    }
    assert_eq!(s["server_version"], skiff_core::COMPAT_VERSION, "{s}");
    let results = blocks(&s, "user", "tool_result");
    assert_eq!(results.len(), 1, "{s}");
    assert_eq!(results[0]["tool_use_id"], "toolu_sdk_task", "{s}");
    assert_eq!(results[0]["is_error"], false, "{s}");
    assert!(
        results[0]["content"]
            .as_str()
            .unwrap()
            .contains("LGTM from the reviewer."),
        "{s}"
    );
    assert_success(&s, "The reviewer says LGTM.");
    // The Task tool offered it; the subagent ran with its own prompt, tools and model.
    let task = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "Task")
        .unwrap_or_else(|| panic!("no Task tool: {:?}", tool_names(&requests[0])));
    assert!(
        task["description"]
            .as_str()
            .unwrap()
            .contains("- code-reviewer: Reviews code changes for bugs."),
        "{task}"
    );
    let sub = requests
        .iter()
        .find(|r| system_text(r).contains("You are a strict code reviewer."))
        .unwrap_or_else(|| panic!("no request with the agent's prompt: {requests:?}"));
    assert_eq!(sub.body["model"], "claude-haiku-4-5");
    assert_eq!(tool_names(sub), ["Read"]);
}

fn structured_output(sdk: Sdk) {
    let Some(s) = run_flow(sdk, "structured") else {
        return;
    };
    assert!(
        init(&s)["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("StructuredOutput")),
        "init.tools: {s}"
    );
    let results = blocks(&s, "user", "tool_result");
    assert_eq!(results.len(), 2, "{s}");
    assert_eq!(results[0]["is_error"], true, "{s}");
    assert!(
        results[0]["content"]
            .as_str()
            .unwrap()
            .contains("Output does not match required schema: /count: "),
        "{s}"
    );
    assert_eq!(results[1]["is_error"], false, "{s}");
    let r = last_result(&s);
    assert_eq!(r["subtype"], "success", "{s}");
    assert_eq!(
        r["structured_output"],
        json!({"count": 3, "names": ["a", "b", "c"]}),
        "{s}"
    );
}

fn max_budget(sdk: Sdk) {
    let Some((s, requests)) = run_flow_mock(sdk, "budget") else {
        return;
    };
    let r = last_result(&s);
    assert_eq!(r["subtype"], "error_max_budget_usd", "{s}");
    assert_eq!(r["is_error"], true, "{s}");
    assert_eq!(s["files"], json!([]), "the pending Bash call ran: {s}");
    let results = blocks(&s, "user", "tool_result");
    assert_eq!(results.len(), 1, "{s}");
    assert_eq!(results[0]["tool_use_id"], "toolu_sdk_budget", "{s}");
    assert_eq!(results[0]["is_error"], true, "{s}");
    assert!(
        results[0]["content"].as_str().unwrap().contains("not run"),
        "{s}"
    );
    assert_eq!(requests.len(), 1, "the model was called past the budget");
}

fn allow_list(sdk: Sdk) {
    let Some(s) = run_flow(sdk, "allowlist") else {
        return;
    };
    let results = blocks(&s, "user", "tool_result");
    assert_eq!(results.len(), 2, "{s}");
    assert_eq!(results[0]["tool_use_id"], "toolu_sdk_touch", "{s}");
    assert_eq!(results[0]["is_error"], true, "{s}");
    assert_eq!(results[1]["is_error"], false, "{s}");
    assert_eq!(results[1]["content"].as_str().unwrap().trim(), "allowed");
    assert_eq!(
        s["files"],
        json!([]),
        "touch ran outside the allow list: {s}"
    );
    assert_success(&s, "Only echo ran.");
    let denials = last_result(&s)["permission_denials"].clone();
    assert_eq!(denials[0]["tool_use_id"], "toolu_sdk_touch", "{s}");
}

fn model_options(sdk: Sdk) {
    let Some((s, requests)) = run_flow_mock(sdk, "model_options") else {
        return;
    };
    assert_success(&s, "Answered by the fallback.");
    let models: Vec<&Value> = requests.iter().map(|r| &r.body["model"]).collect();
    assert_eq!(
        models,
        [
            "claude-opus-4-5",
            "claude-opus-4-5",
            "claude-opus-4-5",
            "claude-sonnet-4-5"
        ],
        "{s}"
    );
    for r in &requests {
        assert_eq!(
            r.body["thinking"],
            json!({"type": "enabled", "budget_tokens": 5000}),
            "{}",
            r.body
        );
        let betas = r.header("anthropic-beta").unwrap_or_default();
        assert!(betas.contains("context-1m-2025-08-07"), "{betas}");
    }
    // Opus 4.5 takes an effort level, Sonnet 4.5 does not.
    assert_eq!(requests[0].body["output_config"], json!({"effort": "high"}));
    assert!(requests[3].body.get("output_config").is_none());
    let fallback = of_type(&s, "system")
        .into_iter()
        .find(|m| m["subtype"] == "model_fallback")
        .unwrap_or_else(|| panic!("no model_fallback frame: {s}"));
    assert_eq!(fallback["trigger"], "overloaded");
    assert_eq!(fallback["fallback_model"], "claude-sonnet-4-5");
}

fn extras(sdk: Sdk) {
    let Some((s, requests)) = run_flow_mock(sdk, "extras") else {
        return;
    };
    for cmd in ["compact", "clear"] {
        assert!(
            s["server_commands"]
                .as_array()
                .unwrap()
                .contains(&json!(cmd)),
            "{s}"
        );
    }
    let rs = results(&s);
    assert_eq!(rs.len(), 3, "{s}");
    // Verbatim: `/clear …` was not run as a command; the model got it as written.
    assert_eq!(rs[0]["result"], "Nothing to clear.", "{s}");
    let first = requests[0].body["messages"].to_string();
    assert!(first.contains("/clear the cache please"), "{first}");
    // Hook events in the stream (the UserPromptSubmit command hook of --settings).
    let hooks: Vec<&Value> = s["hook_events"].as_array().unwrap().iter().collect();
    assert!(
        hooks
            .iter()
            .any(|h| h["subtype"] == "hook_response" && h["hook_event"] == "UserPromptSubmit"),
        "{s}"
    );
    // The context's breakdown.
    let ctx = &s["context"];
    assert_eq!(ctx["model"], "claude-sonnet-4-5", "{s}");
    assert_eq!(ctx["rawMaxTokens"], 200_000, "{s}");
    assert!(ctx["categories"]["messages"].as_u64().unwrap() > 0, "{s}");
    assert!(
        ctx["categories"]["system_prompt"].as_u64().unwrap() > 0,
        "{s}"
    );
    assert!(ctx["totalTokens"].as_u64().unwrap() > 0, "{s}");
    // The interrupted answer stayed in the conversation, with the interruption noted.
    assert_eq!(s["interrupted"], true, "{s}");
    assert_eq!(rs[1]["subtype"], "error_during_execution", "{s}");
    assert_eq!(rs[2]["result"], "Going on.", "{s}");
    let last = requests.last().unwrap().body["messages"]
        .as_array()
        .unwrap();
    let kept = last[last.len() - 2].to_string();
    assert!(
        last[last.len() - 2]["role"] == "assistant" && kept.contains("The "),
        "{last:?}"
    );
    assert!(
        last[last.len() - 1]
            .to_string()
            .contains("[Request interrupted by user]"),
        "{last:?}"
    );
}

#[test]
#[ignore = "needs the Agent SDKs (.ci/run installs them into target/); run with -- --include-ignored"]
fn python_agents_from_initialize() {
    sdk_agents(Sdk::Python);
}

#[test]
#[ignore = "needs the Agent SDKs (.ci/run installs them into target/); run with -- --include-ignored"]
fn ts_agents_from_initialize() {
    sdk_agents(Sdk::Ts);
}

#[test]
#[ignore = "needs the Agent SDKs (.ci/run installs them into target/); run with -- --include-ignored"]
fn python_structured_output() {
    structured_output(Sdk::Python);
}

#[test]
#[ignore = "needs the Agent SDKs (.ci/run installs them into target/); run with -- --include-ignored"]
fn ts_structured_output() {
    structured_output(Sdk::Ts);
}

#[test]
#[ignore = "needs the Agent SDKs (.ci/run installs them into target/); run with -- --include-ignored"]
fn python_max_budget() {
    max_budget(Sdk::Python);
}

#[test]
#[ignore = "needs the Agent SDKs (.ci/run installs them into target/); run with -- --include-ignored"]
fn ts_max_budget() {
    max_budget(Sdk::Ts);
}

#[test]
#[ignore = "needs the Agent SDKs (.ci/run installs them into target/); run with -- --include-ignored"]
fn python_allowed_tools_is_an_allow_list() {
    allow_list(Sdk::Python);
}

#[test]
#[ignore = "needs the Agent SDKs (.ci/run installs them into target/); run with -- --include-ignored"]
fn ts_allowed_tools_is_an_allow_list() {
    allow_list(Sdk::Ts);
}

#[test]
#[ignore = "needs the Agent SDKs (.ci/run installs them into target/); run with -- --include-ignored"]
fn python_model_options() {
    model_options(Sdk::Python);
}

#[test]
#[ignore = "needs the Agent SDKs (.ci/run installs them into target/); run with -- --include-ignored"]
fn ts_model_options() {
    model_options(Sdk::Ts);
}

#[test]
#[ignore = "needs the Agent SDKs (.ci/run installs them into target/); run with -- --include-ignored"]
fn python_extras() {
    extras(Sdk::Python);
}

#[test]
#[ignore = "needs the Agent SDKs (.ci/run installs them into target/); run with -- --include-ignored"]
fn ts_extras() {
    extras(Sdk::Ts);
}

#[test]
#[ignore = "needs the Agent SDKs (.ci/run installs them into target/); run with -- --include-ignored"]
fn python_text_only() {
    text_only(Sdk::Python);
}

#[test]
#[ignore = "needs the Agent SDKs (.ci/run installs them into target/); run with -- --include-ignored"]
fn ts_text_only() {
    text_only(Sdk::Ts);
}

#[test]
#[ignore = "needs the Agent SDKs (.ci/run installs them into target/); run with -- --include-ignored"]
fn python_tool_round() {
    tool_round(Sdk::Python);
}

#[test]
#[ignore = "needs the Agent SDKs (.ci/run installs them into target/); run with -- --include-ignored"]
fn ts_tool_round() {
    tool_round(Sdk::Ts);
}

#[test]
#[ignore = "needs the Agent SDKs (.ci/run installs them into target/); run with -- --include-ignored"]
fn python_can_use_tool_deny_and_allow_with_updated_input() {
    can_use_tool(Sdk::Python);
}

#[test]
#[ignore = "needs the Agent SDKs (.ci/run installs them into target/); run with -- --include-ignored"]
fn ts_can_use_tool_deny_and_allow_with_updated_input() {
    can_use_tool(Sdk::Ts);
}

#[test]
#[ignore = "needs the Agent SDKs (.ci/run installs them into target/); run with -- --include-ignored"]
fn python_hook_blocks_a_tool() {
    hook_blocks_a_tool(Sdk::Python);
}

#[test]
#[ignore = "needs the Agent SDKs (.ci/run installs them into target/); run with -- --include-ignored"]
fn ts_hook_blocks_a_tool() {
    hook_blocks_a_tool(Sdk::Ts);
}

#[test]
#[ignore = "needs the Agent SDKs (.ci/run installs them into target/); run with -- --include-ignored"]
fn python_interrupt_during_a_long_bash() {
    interrupt(Sdk::Python);
}

#[test]
#[ignore = "needs the Agent SDKs (.ci/run installs them into target/); run with -- --include-ignored"]
fn ts_interrupt_during_a_long_bash() {
    interrupt(Sdk::Ts);
}

#[test]
#[ignore = "needs the Agent SDKs (.ci/run installs them into target/); run with -- --include-ignored"]
fn python_two_queries_in_one_session() {
    two_queries(Sdk::Python);
}

#[test]
#[ignore = "needs the Agent SDKs (.ci/run installs them into target/); run with -- --include-ignored"]
fn ts_two_queries_in_one_session() {
    two_queries(Sdk::Ts);
}

#[test]
#[ignore = "needs the Agent SDKs (.ci/run installs them into target/); run with -- --include-ignored"]
fn python_sdk_mcp_tool() {
    sdk_mcp_tool(Sdk::Python);
}

#[test]
#[ignore = "needs the Agent SDKs (.ci/run installs them into target/); run with -- --include-ignored"]
fn ts_sdk_mcp_tool() {
    sdk_mcp_tool(Sdk::Ts);
}

#[test]
#[ignore = "needs the Agent SDKs (.ci/run installs them into target/); run with -- --include-ignored"]
fn semver_parses_claude_code_versions() {
    assert_eq!(semver("2.1.330"), Some((2, 1, 330)));
    assert_eq!(semver("2.0.0 (Claude Code)"), Some((2, 0, 0)));
    assert_eq!(semver("dev"), None);
}
