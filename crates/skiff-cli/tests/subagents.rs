//! Subagents through the Task tool, end to end against the mock model server: the child's
//! frames carry `parent_tool_use_id`, its final text is the tool result, its usage rolls up,
//! its tools are narrowed (read-only agents refuse changes), its transcript is saved beside the
//! session's, SubagentStop hooks fire, and custom agents come from files and `--agents`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};
use skiff_testkit::MockServer;

fn skiff(home: &Path, ws: &Path, url: &str) -> Command {
    let mut c = skiff_testkit::skiff_command!(home);
    c.env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", url)
        .current_dir(ws)
        .args(["--output-format", "stream-json", "--verbose"]);
    c
}

fn frames(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn task(agent: &str, prompt: &str) -> Value {
    json!({"type": "tool_use", "name": "Task",
        "input": {"description": "delegate", "prompt": prompt, "subagent_type": agent}})
}

async fn mock(turns: Value) -> MockServer {
    MockServer::start(serde_json::from_value(json!({ "turns": turns })).unwrap())
        .await
        .unwrap()
}

async fn run(cmd: Command) -> Output {
    let mut cmd = cmd;
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn an_explore_subagent_reads_refuses_changes_and_reports_back() {
    let server = mock(json!([
        {"content": [task("Explore", "Read a.txt and report")]},
        {"content": [
            {"type": "tool_use", "name": "Read", "input": {"file_path": "a.txt"}},
            {"type": "tool_use", "name": "Bash", "input": {"command": "touch made-by-explore"}}
        ]},
        {"content": [{"type": "text", "text": "The file says hello."}]},
        {"content": [{"type": "text", "text": "Subagent reported: hello."}]}
    ]))
    .await;
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "hello from file\n").unwrap();
    let mut cmd = skiff(home.path(), ws.path(), &server.url());
    cmd.args(["-p", "explore", "--permission-mode", "bypassPermissions"]);
    let out = run(cmd).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let all = frames(&out);

    let init = all.iter().find(|f| f["subtype"] == "init").unwrap();
    assert!(init["tools"].as_array().unwrap().contains(&json!("Task")));
    assert_eq!(
        init["agents"],
        json!(["general-purpose", "Explore", "Plan"])
    );
    assert_eq!(all.iter().filter(|f| f["subtype"] == "init").count(), 1);
    assert_eq!(all.iter().filter(|f| f["type"] == "result").count(), 1);

    let task_id = all
        .iter()
        .find(|f| f["type"] == "assistant" && f["message"]["content"][0]["name"] == "Task")
        .map(|f| {
            f["message"]["content"][0]["id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .unwrap();
    let child: Vec<&Value> = all
        .iter()
        .filter(|f| f["parent_tool_use_id"] == json!(task_id))
        .collect();
    // Two tool calls, two results, one final text.
    assert_eq!(child.len(), 5, "{child:#?}");
    let refused = child
        .iter()
        .find(|f| f["type"] == "user" && f["message"]["content"][0]["is_error"] == true)
        .unwrap();
    assert!(
        refused["message"]["content"][0]["content"]
            .as_str()
            .unwrap()
            .contains("This agent is read-only")
    );
    assert!(!ws.path().join("made-by-explore").exists());

    // The Task result: the child's final text, then the agent id and usage.
    let result = all
        .iter()
        .find(|f| {
            f["type"] == "user"
                && f["parent_tool_use_id"].is_null()
                && f["message"]["content"][0]["tool_use_id"] == json!(task_id)
        })
        .unwrap();
    let content = &result["message"]["content"][0];
    assert_eq!(content["is_error"], false);
    assert_eq!(content["content"][0]["text"], "The file says hello.");
    assert!(
        content["content"][1]["text"]
            .as_str()
            .unwrap()
            .starts_with("agentId: ")
    );
    assert_eq!(result["tool_use_result"]["status"], "completed");
    assert_eq!(result["tool_use_result"]["totalToolUseCount"], 2);

    // The child's requests: its own system prompt and narrowed tools, no Task.
    let requests: Vec<Value> = server
        .messages_requests()
        .into_iter()
        .map(|r| r.body)
        .collect();
    assert_eq!(requests.len(), 4);
    let child_tools = tool_names(&requests[1]);
    assert!(!child_tools.contains(&"Task".to_owned()));
    assert!(!child_tools.contains(&"Write".to_owned()));
    assert!(!child_tools.contains(&"Edit".to_owned()));
    assert!(child_tools.contains(&"Read".to_owned()));
    assert!(
        requests[1]["system"]
            .to_string()
            .contains("file search specialist"),
        "{}",
        requests[1]["system"]
    );
    assert!(
        requests[1]["messages"][0]["content"]
            .to_string()
            .contains("Read a.txt and report")
    );

    // Usage of all four calls (parent and child) is in the result.
    let final_result = all.iter().find(|f| f["type"] == "result").unwrap();
    let per_message: std::collections::BTreeMap<String, u64> = all
        .iter()
        .filter(|f| f["type"] == "assistant")
        .map(|f| {
            (
                f["message"]["id"].as_str().unwrap().to_owned(),
                f["message"]["usage"]["input_tokens"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(per_message.len(), 4);
    assert_eq!(
        final_result["usage"]["input_tokens"].as_u64().unwrap(),
        per_message.values().sum::<u64>()
    );

    // The subagent's transcript sits beside the session's, marked as a sidechain.
    let session = final_result["session_id"].as_str().unwrap();
    let project = std::fs::read_dir(home.path().join(".skiff/projects"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let subagents = project.join(session).join("subagents");
    let file = std::fs::read_dir(&subagents)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let first: Value = serde_json::from_str(
        std::fs::read_to_string(&file)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(first["isSidechain"], true);
    assert!(first["agentId"].is_string());
}

#[tokio::test]
async fn custom_agents_from_files_and_flag_with_their_tools_and_subagent_stop_hooks() {
    let server = mock(json!([
        {"content": [task("reviewer", "review it"), task("lister", "list")]},
        {"content": [{"type": "text", "text": "child done"}]},
        {"content": [{"type": "text", "text": "child done"}]},
        {"content": [{"type": "text", "text": "both done"}]}
    ]))
    .await;
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let agents = ws.path().join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("reviewer.md"),
        "---\nname: reviewer\ndescription: Reviews code\ntools: Read, Grep\n---\nYou are a careful reviewer.\n",
    )
    .unwrap();
    std::fs::write(
        ws.path().join(".claude/settings.json"),
        r#"{"hooks": {"SubagentStop": [{"hooks": [{"type": "command", "command": "cat > \"$CLAUDE_PROJECT_DIR/stop-$$.json\""}]}],
                      "Stop": [{"hooks": [{"type": "command", "command": "cat >> \"$CLAUDE_PROJECT_DIR/parent-stops.jsonl\"; echo >> \"$CLAUDE_PROJECT_DIR/parent-stops.jsonl\""}]}]}}"#,
    )
    .unwrap();
    let mut cmd = skiff(home.path(), ws.path(), &server.url());
    cmd.env("SKIFF_TRUST_WORKSPACE", "1").args([
        "-p",
        "review",
        "--permission-mode",
        "bypassPermissions",
        "--agents",
        r#"{"lister": {"description": "Lists files", "prompt": "You list files.", "tools": ["LS"]}}"#,
    ]);
    let out = run(cmd).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let all = frames(&out);
    let init = all.iter().find(|f| f["subtype"] == "init").unwrap();
    let names: Vec<&str> = init["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"reviewer") && names.contains(&"lister"),
        "{names:?}"
    );

    // Both ran (in parallel: either may take either scripted answer) and answered.
    let results: Vec<&Value> = all
        .iter()
        .filter(|f| f["type"] == "user" && f["parent_tool_use_id"].is_null())
        .collect();
    assert_eq!(results.len(), 2);
    for r in &results {
        assert_eq!(r["message"]["content"][0]["is_error"], false, "{r}");
        assert_eq!(
            r["message"]["content"][0]["content"][0]["text"],
            "child done"
        );
    }
    let requests: Vec<Value> = server
        .messages_requests()
        .into_iter()
        .map(|r| r.body)
        .collect();
    let mut child_tools: Vec<Vec<String>> = requests[1..3].iter().map(tool_names).collect();
    child_tools.sort();
    assert_eq!(
        child_tools,
        vec![
            vec!["Grep".to_owned(), "Read".to_owned()],
            vec!["LS".to_owned()]
        ]
    );

    // The two subagents end in parallel: each hook run writes its own file.
    let stops: Vec<Value> = std::fs::read_dir(ws.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("stop-"))
        })
        .map(|p| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap())
        .collect();
    assert_eq!(stops.len(), 2);
    let mut types: Vec<&str> = stops
        .iter()
        .map(|s| s["agent_type"].as_str().unwrap())
        .collect();
    types.sort();
    assert_eq!(types, ["lister", "reviewer"]);
    for s in &stops {
        assert_eq!(s["hook_event_name"], "SubagentStop");
        assert!(s["agent_id"].is_string());
        assert!(
            s["agent_transcript_path"]
                .as_str()
                .unwrap()
                .contains("subagents")
        );
        assert_eq!(s["last_assistant_message"], "child done");
    }
    let parent = std::fs::read_to_string(ws.path().join("parent-stops.jsonl")).unwrap();
    assert_eq!(parent.lines().filter(|l| !l.trim().is_empty()).count(), 1);
}

#[tokio::test]
async fn unknown_agent_types_and_tasks_left_out() {
    let server = mock(json!([
        {"content": [task("nope", "x")]},
        {"content": [{"type": "text", "text": "ok"}]}
    ]))
    .await;
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let mut cmd = skiff(home.path(), ws.path(), &server.url());
    cmd.args(["-p", "go", "--permission-mode", "bypassPermissions"]);
    let out = run(cmd).await;
    let all = frames(&out);
    let result = all
        .iter()
        .find(|f| f["type"] == "user")
        .map(|f| f["message"]["content"][0].clone())
        .unwrap();
    assert_eq!(result["is_error"], true);
    assert_eq!(
        result["content"],
        "<tool_use_error>Agent type 'nope' not found. Available agents: general-purpose, Explore, Plan</tool_use_error>"
    );

    // `--tools` without Task, or a deny rule, leaves it out.
    let server = mock(json!([{"content": [{"type": "text", "text": "ok"}]}])).await;
    let mut cmd = skiff(home.path(), ws.path(), &server.url());
    cmd.args(["-p", "go", "--tools", "Read,Grep"]);
    let out = run(cmd).await;
    let init = frames(&out)
        .into_iter()
        .find(|f| f["subtype"] == "init")
        .unwrap();
    assert_eq!(init["tools"], json!(["Grep", "Read"]));
    assert_eq!(init["agents"], json!([]));
    let mut cmd = skiff(home.path(), ws.path(), &server.url());
    cmd.args(["-p", "go", "--tools", "Read,Task"]);
    let out = run(cmd).await;
    let init = frames(&out)
        .into_iter()
        .find(|f| f["subtype"] == "init")
        .unwrap();
    assert_eq!(init["tools"], json!(["Read", "Task"]));

    let mut cmd = skiff(home.path(), ws.path(), &server.url());
    cmd.args(["-p", "go", "--agents", "{not json"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--agents: not valid JSON"));
}

#[tokio::test]
async fn an_agent_definition_cannot_widen_the_parents_mode() {
    // The parent plans; the agent's definition asks for acceptEdits: its Write is refused as in
    // plan mode, and nothing is written.
    let server = mock(json!([
        {"content": [task("editor", "write it")]},
        {"content": [
            {"type": "tool_use", "name": "Write", "input": {"file_path": "made-by-child.txt", "content": "x"}}
        ]},
        {"content": [{"type": "text", "text": "could not write"}]},
        {"content": [{"type": "text", "text": "done"}]}
    ]))
    .await;
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let mut cmd = skiff(home.path(), ws.path(), &server.url());
    cmd.args([
        "-p",
        "plan it",
        "--permission-mode",
        "plan",
        "--agents",
        r#"{"editor": {"description": "Edits files", "prompt": "You edit.", "tools": ["Write"], "permissionMode": "acceptEdits"}}"#,
    ]);
    let out = run(cmd).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!ws.path().join("made-by-child.txt").exists());
    let all = frames(&out);
    let child_result = all
        .iter()
        .find(|f| f["type"] == "user" && !f["parent_tool_use_id"].is_null())
        .unwrap();
    let block = &child_result["message"]["content"][0];
    assert_eq!(block["is_error"], true, "{block}");
    assert!(
        block.to_string().contains("plan mode"),
        "the child's Write is refused as in plan mode: {block}"
    );
}
