//! Record and replay, end to end: sessions recorded against the mock model server (or the
//! scripted provider) are exported with `skiff sessions export ID --script` and replayed with
//! `skiff replay` in fresh copies of their workspace; changed files, hooks that now block a
//! call, subagents, compactions, torn transcripts, secrets and bad input.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};
use skiff_testkit::MockServer;

const CALC: &str =
    "#!/usr/bin/env bash\nadd() { echo $(( $1 - $2 )); }\nsub() { echo $(( $1 - $2 )); }\n";
const TEST: &str =
    "source ./calc.sh\n[ \"$(add 2 3)\" = 5 ] && echo 'ok add' || { echo 'FAIL add'; exit 1; }\n";

/// A workspace: a git repository with a fixed first commit (the same in every copy).
fn workspace(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("calc.sh"), CALC).unwrap();
    std::fs::write(dir.join("test.sh"), TEST).unwrap();
    std::fs::write(dir.join("notes.md"), "# Notes\nadd is broken\n").unwrap();
    let git = |args: &[&str]| {
        Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(dir)
            .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
            .output()
            .unwrap()
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["add", "."]);
    git(&["commit", "-qm", "start"]);
}

fn skiff(home: &Path, cwd: &Path) -> Command {
    let mut c = skiff_testkit::skiff_command!(home);
    c.env("SKIFF_SANDBOX", "off").current_dir(cwd);
    c
}

async fn run(cmd: Command) -> Output {
    let mut cmd = cmd;
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn session_id(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|v| v["session_id"].as_str().map(str::to_owned))
        .unwrap_or_else(|| panic!("no session id:\n{}", text(out)))
}

fn tool(id: &str, name: &str, input: Value) -> Value {
    json!({"type": "tool_use", "id": id, "name": name, "input": input})
}

/// A Task call of the general-purpose agent.
fn task(id: &str, prompt: &str) -> Value {
    tool(
        id,
        "Task",
        json!({"description": "read", "prompt": prompt, "subagent_type": "general-purpose"}),
    )
}

/// The two files the subagent tests read.
fn fruit_files(dir: &Path) {
    std::fs::write(dir.join("a.txt"), "apple\n").unwrap();
    std::fs::write(dir.join("b.txt"), "banana\n").unwrap();
}

fn say(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

/// A mock model server playing `turns`.
async fn mock(turns: Value) -> MockServer {
    MockServer::start(serde_json::from_value(json!({ "turns": turns })).unwrap())
        .await
        .unwrap()
}

/// `skiff -p PROMPT` in stream-json through `server`, with the API key `key`.
fn through(server: &MockServer, home: &Path, ws: &Path, key: &str, prompt: &str) -> Command {
    let mut c = skiff(home, ws);
    c.env("ANTHROPIC_API_KEY", key)
        .env("ANTHROPIC_BASE_URL", server.url())
        .args(["-p", prompt, "--output-format", "stream-json", "--verbose"]);
    c
}

/// A recorded two-prompt session (the second a `--resume`) with Grep, Read, Edit and Bash,
/// against the mock server. Returns the home and the session id.
async fn record_basic(ws: &Path) -> (tempfile::TempDir, String) {
    let server = mock(json!([
            {"content": [say("Looking for add."), tool("toolu_grep", "Grep", json!({"pattern": "add", "output_mode": "content"}))]},
            {"content": [tool("toolu_read", "Read", json!({"file_path": "calc.sh"}))]},
            {"content": [tool("toolu_edit", "Edit", json!({"file_path": "calc.sh", "old_string": "add() { echo $(( $1 - $2 )); }", "new_string": "add() { echo $(( $1 + $2 )); }"}))]},
            {"content": [say("Fixed add.")]},
            {"content": [tool("toolu_bash", "Bash", json!({"command": "bash test.sh", "description": "Run the tests"}))]},
            {"content": [say("The tests pass.")]}
    ]))
    .await;
    let home = tempfile::tempdir().unwrap();
    let first = |prompt: &str| {
        let mut c = through(&server, home.path(), ws, "sk-test-0123456789abcdef", prompt);
        c.args(["--permission-mode", "acceptEdits", "--allowedTools", "Bash"]);
        c
    };
    let out = run(first("fix add")).await;
    assert!(out.status.success(), "{}", text(&out));
    let id = session_id(&out);
    let mut again = first("run the tests");
    again.args(["--resume", &id]);
    let out = run(again).await;
    assert!(out.status.success(), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("ok add"));
    (home, id)
}

/// The basic session, recorded in `root/ws` and exported to `root/session.json`.
struct Recorded {
    root: tempfile::TempDir,
    home: tempfile::TempDir,
    script_path: PathBuf,
}

async fn recorded_basic() -> Recorded {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("ws");
    workspace(&ws);
    let (home, id) = record_basic(&ws).await;
    let script_path = root.path().join("session.json");
    let out = export(home.path(), &ws, &id, &script_path).await;
    assert!(out.status.success(), "{}", text(&out));
    Recorded {
        root,
        home,
        script_path,
    }
}

async fn export(home: &Path, cwd: &Path, id: &str, to: &Path) -> Output {
    let mut c = skiff(home, cwd);
    c.args(["sessions", "export", id, "--script", "-o"]).arg(to);
    run(c).await
}

async fn replay(home: &Path, script: &Path, ws: &Path, extra: &[&str]) -> (Output, Value) {
    let mut c = skiff(home, ws);
    c.arg("replay")
        .arg(script)
        .arg("--cwd")
        .arg(ws)
        .arg("--json")
        .args(extra);
    let out = run(c).await;
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no JSON report ({e}):\n{}", text(&out)));
    (out, report)
}

fn script_of(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[tokio::test]
async fn an_exported_session_replays_without_divergence_in_a_fresh_copy() {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("ws");
    workspace(&ws);
    let (home, id) = record_basic(&ws).await;
    let script_path = root.path().join("session.json");
    let out = export(home.path(), &ws, &id, &script_path).await;
    assert!(out.status.success(), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("6 model turns, 4 tool results, 2 prompts"),
        "{stderr}"
    );
    let script = script_of(&script_path);
    assert_eq!(script["turns"].as_array().unwrap().len(), 6);
    assert_eq!(script["turns"][2]["content"][0]["name"], "Edit");
    assert!(
        script["turns"][0]["usage"]["output_tokens"]
            .as_u64()
            .is_some()
    );
    let rec = &script["recording"];
    assert_eq!(rec["session_id"], id.as_str());
    assert_eq!(rec["inputs"][0]["content"][0]["text"], "fix add");
    assert_eq!(rec["inputs"][1]["content"][0]["text"], "run the tests");
    assert_eq!(rec["settings"]["permissionMode"], "acceptEdits");
    assert_eq!(rec["settings"]["allowedTools"], json!(["Bash"]));
    assert_eq!(rec["settings"]["gitCommit"].as_str().unwrap().len(), 40);
    let tools: Vec<&str> = rec["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["tool"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["Grep", "Read", "Edit", "Bash"]);

    // The script plays with the scripted provider as it is.
    let plain = root.path().join("plain");
    workspace(&plain);
    let mut c = skiff(home.path(), &plain);
    c.args([
        "-p",
        "fix add",
        "--permission-mode",
        "acceptEdits",
        "--script",
    ])
    .arg(&script_path);
    let out = run(c).await;
    assert!(out.status.success(), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Fixed add."));

    // A fresh copy: no divergence, exit 0.
    let fresh = root.path().join("fresh");
    workspace(&fresh);
    let (out, report) = replay(home.path(), &script_path, &fresh, &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(report["ok"], true, "{report:#}");
    assert_eq!(report["results"]["compared"], 4);
    assert_eq!(report["results"]["matched"], 4);
    assert_eq!(report["model_calls"], json!({"recorded": 6, "replayed": 6}));
    assert_eq!(report["files_changed"]["replayed"], json!(["calc.sh"]));
    assert_eq!(report["recorded_commit"], report["workspace_commit"]);
    assert_eq!(
        std::fs::read_to_string(fresh.join("calc.sh")).unwrap(),
        CALC.replace("$1 - $2 )); }\nsub", "$1 + $2 )); }\nsub")
    );

    // By id, from the saved session, as text.
    let again = root.path().join("again");
    workspace(&again);
    let mut c = skiff(home.path(), &again);
    c.args(["replay", &id, "--cwd"]).arg(&again);
    let out = run(c).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("No divergence."), "{stdout}");
    assert!(stdout.contains("4 matched, 0 diverged"), "{stdout}");
}

#[tokio::test]
async fn a_changed_file_is_reported_at_its_turn_with_a_diff() {
    let Recorded {
        root,
        home,
        script_path,
        ..
    } = recorded_basic().await;

    let changed = root.path().join("changed");
    workspace(&changed);
    let calc = CALC.replace("sub()", "# a comment from someone\nsub()");
    std::fs::write(changed.join("calc.sh"), &calc).unwrap();
    let (out, report) = replay(home.path(), &script_path, &changed, &[]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(report["ok"], false);
    let first = &report["first_divergence"];
    // Grep (turn 1) sees the same lines with "add"; the Read of turn 2 differs.
    assert_eq!(first["turn"], 2, "{report:#}");
    assert_eq!(first["tool"], "Read");
    assert_eq!(first["tool_use_id"], "toolu_read");
    assert_eq!(first["kind"], "result");
    let diff = first["diff"].as_str().unwrap();
    assert!(
        diff.contains("--- recorded") && diff.contains("+++ replay"),
        "{diff}"
    );
    assert!(diff.contains("+3\t# a comment from someone"), "{diff}");

    // Overrides: without the Edit tool the fix fails at turn 3 (in a pristine copy).
    let no_edit = root.path().join("no-edit");
    workspace(&no_edit);
    let (out, report) = replay(
        home.path(),
        &script_path,
        &no_edit,
        &["--tools", "Read,Grep,Bash"],
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(report["first_divergence"]["tool"], "Edit", "{report:#}");
    assert_eq!(report["first_divergence"]["turn"], 3);

    // The text report says the same (the first replay edited its copy: a new one).
    let changed = root.path().join("changed-again");
    workspace(&changed);
    std::fs::write(changed.join("calc.sh"), &calc).unwrap();
    let mut c = skiff(home.path(), &changed);
    c.arg("replay").arg(&script_path).arg("--cwd").arg(&changed);
    let out = run(c).await;
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("First divergence: turn 2, Read (toolu_read): the result differs"),
        "{stdout}"
    );
    assert!(stdout.contains("+3\t# a comment from someone"), "{stdout}");
}

#[tokio::test]
async fn a_hook_that_now_blocks_a_call_is_a_divergence() {
    let Recorded {
        root,
        home,
        script_path,
        ..
    } = recorded_basic().await;

    let hooked = root.path().join("hooked");
    workspace(&hooked);
    std::fs::create_dir_all(hooked.join(".claude")).unwrap();
    std::fs::write(
        hooked.join(".claude/settings.json"),
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "echo 'no tests on Fridays' >&2; exit 2"}
        ]}]}})
        .to_string(),
    )
    .unwrap();
    let (out, report) = replay(home.path(), &script_path, &hooked, &["--trust"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let first = &report["first_divergence"];
    assert_eq!(first["tool"], "Bash", "{report:#}");
    assert_eq!(first["turn"], 5);
    assert!(
        first["message"].as_str().unwrap().contains("hook"),
        "{report:#}"
    );
    assert!(
        first["actual"]
            .as_str()
            .unwrap()
            .contains("no tests on Fridays")
    );
    assert_eq!(report["results"]["matched"], 3);
}

#[tokio::test]
async fn parallel_subagents_export_with_their_threads_and_replay_faithfully() {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("ws");
    workspace(&ws);
    fruit_files(&ws);
    let recorded = root.path().join("recorded.json");
    std::fs::write(
        &recorded,
        json!({"turns": [
            {"content": [task("task_a", "Read a.txt"), task("task_b", "Read b.txt")]},
            {"thread": "task_b", "content": [tool("read_b", "Read", json!({"file_path": "b.txt"}))]},
            {"thread": "task_a", "content": [tool("read_a", "Read", json!({"file_path": "a.txt"}))]},
            {"thread": "task_b", "content": [say("b.txt says banana")]},
            {"thread": "task_a", "content": [say("a.txt says apple")]},
            {"content": [say("apple and banana")]}
        ]})
        .to_string(),
    )
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut c = skiff(home.path(), &ws);
    c.args([
        "-p",
        "read both",
        "--output-format",
        "stream-json",
        "--verbose",
        "--script",
    ])
    .arg(&recorded);
    let out = run(c).await;
    assert!(out.status.success(), "{}", text(&out));
    let id = session_id(&out);

    let script_path = root.path().join("session.json");
    let out = export(home.path(), &ws, &id, &script_path).await;
    assert!(out.status.success(), "{}", text(&out));
    let script = script_of(&script_path);
    let turns = script["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 6, "{script:#}");
    let threads: Vec<Option<&str>> = turns.iter().map(|t| t["thread"].as_str()).collect();
    assert_eq!(threads.iter().filter(|t| **t == Some("task_a")).count(), 2);
    assert_eq!(threads.iter().filter(|t| **t == Some("task_b")).count(), 2);
    let results = script["recording"]["results"].as_array().unwrap();
    let order: Vec<&str> = results
        .iter()
        .map(|r| r["tool_use_id"].as_str().unwrap())
        .collect();
    // Each subagent's calls come before its Task call's result.
    let pos = |id| order.iter().position(|o| *o == id).unwrap();
    assert!(
        pos("read_a") < pos("task_a") && pos("read_b") < pos("task_b"),
        "{order:?}"
    );
    assert_eq!(results[pos("read_a")]["thread"], "task_a");

    let fresh = root.path().join("fresh");
    workspace(&fresh);
    fruit_files(&fresh);
    let (out, report) = replay(home.path(), &script_path, &fresh, &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}\n{report:#}", text(&out));
    assert_eq!(report["results"]["matched"], 4);

    // In the subagent: a changed b.txt is found in task_b's thread.
    std::fs::write(fresh.join("b.txt"), "blueberry\n").unwrap();
    let (out, report) = replay(home.path(), &script_path, &fresh, &[]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let first = &report["first_divergence"];
    assert_eq!(first["tool_use_id"], "read_b", "{report:#}");
    assert_eq!(first["subagent_of"], "task_b");
}

/// Record a session over the stream-json input with these stdin lines.
async fn record_stream(
    home: &Path,
    ws: &Path,
    script: &Path,
    lines: &[Value],
    env: &[(&str, &str)],
) -> Output {
    let mut c = skiff(home, ws);
    c.args([
        "-p",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
        "--script",
    ])
    .arg(script)
    .envs(env.iter().copied())
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    tokio::task::spawn_blocking(move || {
        let mut child = c.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap()
}

fn user(t: &str) -> Value {
    json!({"type": "user", "message": {"role": "user", "content": t}, "parent_tool_use_id": null, "session_id": ""})
}

fn compaction_turns() -> Vec<Value> {
    vec![
        json!({"content": [tool("r1", "Read", json!({"file_path": "notes.md"}))], "usage": {"input_tokens": 9000, "output_tokens": 10}}),
        json!({"content": [tool("r2", "Read", json!({"file_path": "calc.sh"}))], "usage": {"input_tokens": 9000, "output_tokens": 10}}),
        json!({"content": [say("Read both.")], "usage": {"input_tokens": 9000, "output_tokens": 10}}),
        json!({"content": [say("The user had me read notes.md and calc.sh; add is broken.")], "usage": {"input_tokens": 500, "output_tokens": 20}}),
        json!({"content": [tool("r3", "Read", json!({"file_path": "test.sh"}))], "usage": {"input_tokens": 300, "output_tokens": 10}}),
        json!({"content": [say("It tests add.")], "usage": {"input_tokens": 300, "output_tokens": 10}}),
    ]
}

#[tokio::test]
async fn a_manual_compaction_is_exported_and_replayed() {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("ws");
    workspace(&ws);
    let recorded = root.path().join("recorded.json");
    let turns = compaction_turns();
    // Small usage figures: only the /compact compacts.
    let turns: Vec<Value> = turns
        .into_iter()
        .map(|mut t| {
            t["usage"]["input_tokens"] = json!(100);
            t
        })
        .collect();
    std::fs::write(&recorded, json!({ "turns": turns }).to_string()).unwrap();
    let home = tempfile::tempdir().unwrap();
    let env = [("SKIFF_COMPACTION_KEEP_RECENT", "2")];
    let out = record_stream(
        home.path(),
        &ws,
        &recorded,
        &[
            user("read the notes"),
            user("/compact"),
            user("and test.sh?"),
        ],
        &env,
    )
    .await;
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("compact_boundary"),
        "{}",
        text(&out)
    );
    let id = session_id(&out);

    let script_path = root.path().join("session.json");
    let out = export(home.path(), &ws, &id, &script_path).await;
    assert!(out.status.success(), "{}", text(&out));
    let script = script_of(&script_path);
    assert_eq!(script["turns"].as_array().unwrap().len(), 6, "{script:#}");
    assert_eq!(
        script["turns"][3]["content"][0]["text"],
        "The user had me read notes.md and calc.sh; add is broken."
    );
    let inputs = &script["recording"]["inputs"];
    assert_eq!(inputs[1], json!({"type": "compact"}), "{inputs:#}");
    assert_eq!(inputs.as_array().unwrap().len(), 3);

    let fresh = root.path().join("fresh");
    workspace(&fresh);
    let mut c = skiff(home.path(), &fresh);
    c.envs(env)
        .arg("replay")
        .arg(&script_path)
        .args(["--json", "--cwd"])
        .arg(&fresh);
    let out = run(c).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["model_calls"], json!({"recorded": 6, "replayed": 6}));
}

#[tokio::test]
async fn an_automatic_compaction_replays_at_the_same_point() {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("ws");
    workspace(&ws);
    let recorded = root.path().join("recorded.json");
    std::fs::write(
        &recorded,
        json!({ "turns": compaction_turns() }).to_string(),
    )
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let env = [
        ("SKIFF_COMPACTION_KEEP_RECENT", "2"),
        ("SKIFF_COMPACTION_THRESHOLD", "5000"),
    ];
    let out = record_stream(
        home.path(),
        &ws,
        &recorded,
        &[user("read the notes"), user("and test.sh?")],
        &env,
    )
    .await;
    assert!(out.status.success(), "{}", text(&out));
    let id = session_id(&out);
    let script_path = root.path().join("session.json");
    let out = export(home.path(), &ws, &id, &script_path).await;
    assert!(out.status.success(), "{}", text(&out));
    let script = script_of(&script_path);
    let inputs = script["recording"]["inputs"].as_array().unwrap();
    assert_eq!(
        inputs.len(),
        2,
        "an automatic compaction is no input: {inputs:?}"
    );
    assert_eq!(script["turns"].as_array().unwrap().len(), 6);

    let fresh = root.path().join("fresh");
    workspace(&fresh);
    let mut c = skiff(home.path(), &fresh);
    c.envs(env)
        .arg("replay")
        .arg(&script_path)
        .args(["--json", "--cwd"])
        .arg(&fresh);
    let out = run(c).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["results"]["matched"], 3, "{report:#}");

    // Without the same threshold no compaction happens: the replay runs out of turns.
    let bare = root.path().join("bare");
    workspace(&bare);
    let (out, report) = replay(home.path(), &script_path, &bare, &[]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let kinds: Vec<&str> = report["divergences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["kind"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"model_calls") || kinds.contains(&"result"),
        "{report:#}"
    );
}

fn transcript(home: &Path, id: &str) -> PathBuf {
    let projects = home.join(".skiff/projects");
    for dir in std::fs::read_dir(projects).unwrap() {
        let p = dir.unwrap().path().join(format!("{id}.jsonl"));
        if p.is_file() {
            return p;
        }
    }
    panic!("no transcript for {id}");
}

#[tokio::test]
async fn a_torn_last_line_exports_what_is_complete() {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("ws");
    workspace(&ws);
    let (home, id) = record_basic(&ws).await;
    let path = transcript(home.path(), &id);
    let data = std::fs::read(&path).unwrap();
    // Cut the last line (the final answer) in half.
    let body = &data[..data.len() - 1];
    let last_start = body.iter().rposition(|&b| b == b'\n').unwrap() + 1;
    let torn = &data[..last_start + (data.len() - last_start) / 2];
    std::fs::write(&path, torn).unwrap();

    let script_path = root.path().join("session.json");
    let out = export(home.path(), &ws, &id, &script_path).await;
    assert!(out.status.success(), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("half-written last line"), "{stderr}");
    let script = script_of(&script_path);
    assert_eq!(script["turns"].as_array().unwrap().len(), 5);
    assert_eq!(script["recording"]["results"].as_array().unwrap().len(), 4);
}

#[tokio::test]
async fn secrets_are_redacted_and_the_redacted_recording_still_replays() {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("ws");
    workspace(&ws);
    let secret_file =
        "DEPLOY_TOKEN=tok_9f8e7d6c5b4a3210\nkey: sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAA\n";
    std::fs::write(ws.join("deploy.env"), secret_file).unwrap();
    let server = mock(json!([
            {"content": [tool("toolu_cat", "Read", json!({"file_path": "deploy.env"}))]},
            {"content": [say("The token is tok_9f8e7d6c5b4a3210 and your key is my-own-key-0123456789.")]}
    ]))
    .await;
    let home = tempfile::tempdir().unwrap();
    let c = through(
        &server,
        home.path(),
        &ws,
        "my-own-key-0123456789",
        "show the config",
    );
    let out = run(c).await;
    assert!(out.status.success(), "{}", text(&out));
    let id = session_id(&out);

    let script_path = root.path().join("session.json");
    let mut c = skiff(home.path(), &ws);
    c.env("ANTHROPIC_API_KEY", "my-own-key-0123456789")
        .args(["sessions", "export", &id, "--script", "-o"])
        .arg(&script_path);
    let out = run(c).await;
    assert!(out.status.success(), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let count: u64 = stderr
        .split("redacted ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(count >= 5, "{stderr}");
    let exported = std::fs::read_to_string(&script_path).unwrap();
    for secret in [
        "tok_9f8e7d6c5b4a3210",
        "sk-ant-api03",
        "my-own-key-0123456789",
    ] {
        assert!(!exported.contains(secret), "{secret} in {exported}");
    }
    assert!(exported.contains("DEPLOY_TOKEN=[REDACTED]"), "{exported}");
    let script = script_of(&script_path);
    assert_eq!(script["recording"]["redactions"], count);

    let fresh = root.path().join("fresh");
    workspace(&fresh);
    std::fs::write(fresh.join("deploy.env"), secret_file).unwrap();
    let (out, report) = replay(home.path(), &script_path, &fresh, &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}\n{report:#}", text(&out));
}

#[tokio::test]
async fn bad_input_is_a_usage_error() {
    let root = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let ws = root.path().join("ws");
    workspace(&ws);
    let code = |out: &Output| out.status.code();

    let mut c = skiff(home.path(), &ws);
    c.args(["replay", "0b0e4a30-0000-4000-8000-000000000000"]);
    let out = run(c).await;
    assert_eq!(code(&out), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("No session with ID"));

    let mut c = skiff(home.path(), &ws);
    c.args(["sessions", "export", "../../etc/passwd-ish", "--script"]);
    let out = run(c).await;
    assert_eq!(code(&out), Some(2), "{}", text(&out));

    let mut c = skiff(home.path(), &ws);
    c.args(["sessions", "export", "abc"]);
    let out = run(c).await;
    assert_eq!(code(&out), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--script"));

    let not_script = root.path().join("x.json");
    std::fs::write(&not_script, "[1, 2").unwrap();
    let mut c = skiff(home.path(), &ws);
    c.arg("replay").arg(&not_script);
    let out = run(c).await;
    assert_eq!(code(&out), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a model script"));

    let bare = root.path().join("bare.json");
    std::fs::write(
        &bare,
        r#"{"turns": [{"content": [{"type": "text", "text": "hi"}]}]}"#,
    )
    .unwrap();
    let mut c = skiff(home.path(), &ws);
    c.arg("replay").arg(&bare);
    let out = run(c).await;
    assert_eq!(code(&out), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("without a recording"));

    // A transcript that is garbage: a clear error, exit 2.
    let junk = root.path().join("junk.jsonl");
    std::fs::write(&junk, b"\xff\xfe not json\n").unwrap();
    let mut c = skiff(home.path(), &ws);
    c.args(["sessions", "export"]).arg(&junk).arg("--script");
    let out = run(c).await;
    assert_eq!(code(&out), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no model turn"));
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), dest).unwrap();
        }
    }
}

#[tokio::test]
async fn the_recorded_example_workflow_replays() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/recorded-workflow");
    let root = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let ws = root.path().join("project");
    copy_dir(&example.join("project"), &ws);
    let script = example.join("session.json");
    let (out, report) = replay(home.path(), &script, &ws, &["--trust"]).await;
    assert_eq!(out.status.code(), Some(0), "{}\n{report:#}", text(&out));
    assert_eq!(report["results"]["matched"], 6);
    assert!(
        std::fs::read_to_string(ws.join("calc.sh"))
            .unwrap()
            .contains("$(( $1 + $2 ))")
    );

    // The team drops its rm -rf hook: the replay says where the workflow changed.
    let ws = root.path().join("no-hook");
    copy_dir(&example.join("project"), &ws);
    let settings = ws.join(".claude/settings.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    v.as_object_mut().unwrap().remove("hooks");
    std::fs::write(&settings, v.to_string()).unwrap();
    let (out, report) = replay(home.path(), &script, &ws, &["--trust"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let first = &report["first_divergence"];
    assert_eq!(first["turn"], 4, "{report:#}");
    assert_eq!(first["tool_use_id"], "toolu_clean");
    assert!(first["message"].as_str().unwrap().contains("hook"));
}

#[tokio::test]
async fn an_interrupted_call_is_interrupted_again() {
    use std::io::{BufRead, BufReader};
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("ws");
    workspace(&ws);
    let recorded = root.path().join("recorded.json");
    std::fs::write(
        &recorded,
        json!({"turns": [
            {"content": [tool("toolu_wait", "Bash", json!({"command": "sleep 30", "description": "wait"}))]},
            {"content": [say("Stopped waiting.")]}
        ]})
        .to_string(),
    )
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut c = skiff(home.path(), &ws);
    c.args([
        "-p",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
        "--allowedTools",
        "Bash",
        "--script",
    ])
    .arg(&recorded)
    .stdin(Stdio::piped())
    .stdout(Stdio::piped());
    let id = tokio::task::spawn_blocking(move || {
        let mut child = c.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        writeln!(stdin, "{}", user("wait a bit")).unwrap();
        let mut id = String::new();
        let mut results = 0;
        while let Some(Ok(line)) = lines.next() {
            let v: Value = serde_json::from_str(&line).unwrap_or_default();
            if let Some(s) = v["session_id"].as_str() {
                id = s.to_owned();
            }
            if v["type"] == "assistant" && line.contains("toolu_wait") {
                let interrupt = json!({"type": "control_request", "request_id": "i1", "request": {"subtype": "interrupt"}});
                writeln!(stdin, "{interrupt}").unwrap();
            }
            if v["type"] == "result" {
                results += 1;
                if results == 1 {
                    writeln!(stdin, "{}", user("go on")).unwrap();
                } else {
                    break;
                }
            }
        }
        drop(stdin);
        child.wait().unwrap();
        id
    })
    .await
    .unwrap();

    let script_path = root.path().join("session.json");
    let out = export(home.path(), &ws, &id, &script_path).await;
    assert!(out.status.success(), "{}", text(&out));
    let script = script_of(&script_path);
    let rec = &script["recording"];
    assert_eq!(
        rec["results"][0]["content"], "[Command interrupted]",
        "{rec:#}"
    );
    assert_eq!(rec["results"][0]["structured"]["interrupted"], true);
    // The prompt and "go on"; the note the interrupt left in the conversation is not an input
    // (the replay's own interrupt leaves it again).
    assert_eq!(rec["inputs"].as_array().unwrap().len(), 2, "{rec:#}");

    let fresh = root.path().join("fresh");
    workspace(&fresh);
    let (out, report) = replay(home.path(), &script_path, &fresh, &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}\n{report:#}", text(&out));
    assert_eq!(report["results"]["matched"], 1);
}

#[tokio::test]
async fn a_clear_is_exported_and_sent_again() {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("ws");
    workspace(&ws);
    let recorded = root.path().join("recorded.json");
    std::fs::write(
        &recorded,
        json!({"turns": [
            {"content": [tool("c1", "Read", json!({"file_path": "notes.md"}))]},
            {"content": [say("Read it.")]},
            {"content": [tool("c2", "Read", json!({"file_path": "test.sh"}))]},
            {"content": [say("A fresh start.")]}
        ]})
        .to_string(),
    )
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let out = record_stream(
        home.path(),
        &ws,
        &recorded,
        &[user("read the notes"), user("/clear"), user("now test.sh")],
        &[],
    )
    .await;
    assert!(out.status.success(), "{}", text(&out));
    let id = session_id(&out);
    // The second conversation starts from nothing: its transcript chain holds only it.
    let path = transcript(home.path(), &id);
    let text_of = std::fs::read_to_string(&path).unwrap();
    assert!(text_of.contains(r#""messageCount":0"#), "{text_of}");

    let script_path = root.path().join("session.json");
    let out = export(home.path(), &ws, &id, &script_path).await;
    assert!(out.status.success(), "{}", text(&out));
    let inputs = script_of(&script_path)["recording"]["inputs"].clone();
    assert_eq!(inputs[1], json!({"type": "clear"}), "{inputs:#}");

    let fresh = root.path().join("fresh");
    workspace(&fresh);
    let (out, report) = replay(home.path(), &script_path, &fresh, &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}\n{report:#}", text(&out));
    assert_eq!(report["results"]["matched"], 2);
}

#[tokio::test]
async fn the_mock_server_routes_subagent_threads_too() {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("ws");
    workspace(&ws);
    fruit_files(&ws);
    // Listed in an order the two subagents will not ask in: each gets its own turns anyway.
    let server = mock(json!([
            {"content": [task("task_a", "Read a.txt"), task("task_b", "Read b.txt")]},
            {"thread": "task_b", "content": [tool("read_b", "Read", json!({"file_path": "b.txt"}))]},
            {"thread": "task_b", "content": [say("b.txt says banana")]},
            {"thread": "task_a", "content": [tool("read_a", "Read", json!({"file_path": "a.txt"}))]},
            {"thread": "task_a", "content": [say("a.txt says apple")]},
            {"content": [say("apple and banana")]}
    ]))
    .await;
    let home = tempfile::tempdir().unwrap();
    let c = through(
        &server,
        home.path(),
        &ws,
        "sk-test-0123456789abcdef",
        "read both",
    );
    let out = run(c).await;
    assert!(out.status.success(), "{}", text(&out));
    let frames: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let result_of = |id: &str| -> String {
        frames
            .iter()
            .filter(|f| f["type"] == "user")
            .flat_map(|f| {
                f["message"]["content"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .find(|b| b["tool_use_id"] == id)
            .map(|b| b["content"].to_string())
            .unwrap_or_else(|| panic!("no result for {id}"))
    };
    // Each Read was asked for by its own subagent.
    let caller = |id: &str| -> Value {
        frames
            .iter()
            .find(|f| f["type"] == "assistant" && f["message"]["content"].to_string().contains(id))
            .map(|f| f["parent_tool_use_id"].clone())
            .unwrap_or_else(|| panic!("no call {id}"))
    };
    assert_eq!(caller("read_a"), "task_a");
    assert_eq!(caller("read_b"), "task_b");
    assert!(result_of("read_a").contains("apple"));
    assert!(result_of("read_b").contains("banana"));
    assert!(result_of("task_a").contains("a.txt says apple"));
    assert!(result_of("task_b").contains("b.txt says banana"));
    let last = frames.iter().rfind(|f| f["type"] == "result").unwrap();
    assert_eq!(last["result"], "apple and banana");
}
