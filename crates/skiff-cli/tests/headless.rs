//! Headless end-to-end tests: stream-json compared with Claude Code's capture, a scripted fix
//! in a temp git repository, SIGINT, and the output formats.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skiff_protocol::Usage;
use skiff_protocol::script::{Script, ScriptBlock, ScriptTurn};
use skiff_testkit::MockServer;

/// What the fix-bug example needs granted: its edits, and running its test script.
const FIX_BUG_GRANTS: [&str; 4] = [
    "--permission-mode",
    "acceptEdits",
    "--allowedTools",
    "Bash(bash test.sh)",
];

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A skiff command with a clean environment (temp HOME so no user memory is read).
fn skiff(home: &Path) -> Command {
    skiff_testkit::skiff_command!(home)
}

fn lines(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect()
}

/// Keys of `a` (the capture) that must be present in `b` with equal values, except ids, times
/// and costs, whose presence alone is checked.
fn same_fields(capture: &Value, ours: &Value, keys: &[&str], present: &[&str], what: &str) {
    for k in keys {
        assert_eq!(capture.get(*k), ours.get(*k), "{what}: field `{k}` differs");
    }
    for k in present {
        assert!(
            ours.get(*k).is_some_and(|v| !v.is_null()),
            "{what}: field `{k}` missing"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_json_of_a_tool_round_matches_claude_codes_capture() {
    let capture: Vec<Value> = std::fs::read_to_string(
        repo_root().join("testdata/claude-code/print_stream_json_bash_tool.jsonl"),
    )
    .unwrap()
    .lines()
    .map(|l| serde_json::from_str(l).unwrap())
    .collect();
    let usage = Usage {
        input_tokens: 100,
        output_tokens: 20,
        cache_creation_input_tokens: Some(0),
        cache_read_input_tokens: Some(0),
        ..Usage::default()
    };
    let server = MockServer::start(Script {
        model: Some("claude-opus-5-5".into()),
        repeat: false,
        recording: None,
        turns: vec![
            ScriptTurn {
                content: vec![
                    ScriptBlock::Text {
                        text: "I'll do that.".into(),
                    },
                    ScriptBlock::ToolUse {
                        id: Some("toolu_mock002".into()),
                        name: "Bash".into(),
                        input: json!({"command": "echo hi", "description": "Print hi"}),
                    },
                ],
                usage: Some(usage.clone()),
                ..ScriptTurn::default()
            },
            ScriptTurn {
                usage: Some(usage),
                ..ScriptTurn::text("All done.")
            },
        ],
    })
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let url = server.url();
    let home_path = home.path().to_path_buf();
    let ws_path = ws.path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || {
        skiff(&home_path)
            .env("ANTHROPIC_API_KEY", "sk-test")
            .env("ANTHROPIC_BASE_URL", &url)
            .current_dir(&ws_path)
            .args([
                "-p",
                "say hi with bash",
                "--output-format",
                "stream-json",
                "--verbose",
                "--permission-mode",
                "acceptEdits",
                "--model=claude-opus-5-5",
            ])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ours = lines(&out.stdout);
    let types = |v: &[Value]| -> Vec<(String, Option<String>)> {
        v.iter()
            .map(|f| {
                (
                    f["type"].as_str().unwrap().to_owned(),
                    f.get("subtype").and_then(Value::as_str).map(str::to_owned),
                )
            })
            .collect()
    };
    assert_eq!(types(&ours), types(&capture), "frame sequence");

    let sid = ours[0]["session_id"].clone();
    for f in &ours {
        assert_eq!(f["session_id"], sid, "same session id on every frame");
        assert!(f["uuid"].is_string());
    }
    // system/init
    same_fields(
        &capture[0],
        &ours[0],
        &[
            "type",
            "subtype",
            "permissionMode",
            "apiKeySource",
            "output_style",
            "mcp_servers",
            "model",
        ],
        &[
            "cwd",
            "session_id",
            "uuid",
            "tools",
            "slash_commands",
            "claude_code_version",
        ],
        "init",
    );
    let version = ours[0]["claude_code_version"].as_str().unwrap();
    assert!(version.split('.').next().unwrap().parse::<u32>().unwrap() >= 2);
    assert!(
        ours[0]["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("Bash"))
    );
    // assistant frames: one per block, stop_reason null, message_start usage
    for i in [1, 2, 4] {
        let (c, o) = (&capture[i], &ours[i]);
        same_fields(
            c,
            o,
            &["type", "parent_tool_use_id"],
            &["session_id", "uuid", "timestamp"],
            "assistant",
        );
        let (cm, om) = (&c["message"], &o["message"]);
        same_fields(
            cm,
            om,
            &[
                "type",
                "role",
                "model",
                "content",
                "stop_reason",
                "stop_sequence",
                "usage",
            ],
            &["id"],
            &format!("assistant[{i}].message"),
        );
    }
    assert_eq!(
        ours[1]["message"]["id"], ours[2]["message"]["id"],
        "blocks of one message share its id"
    );
    // user frame with the tool result
    same_fields(
        &capture[3],
        &ours[3],
        &["type", "message", "tool_use_result", "parent_tool_use_id"],
        &["session_id", "uuid", "timestamp"],
        "user",
    );
    // result
    same_fields(
        &capture[5],
        &ours[5],
        &[
            "type",
            "subtype",
            "is_error",
            "num_turns",
            "result",
            "stop_reason",
            "permission_denials",
            "terminal_reason",
        ],
        &[
            "session_id",
            "uuid",
            "duration_ms",
            "duration_api_ms",
            "total_cost_usd",
            "usage",
            "modelUsage",
        ],
        "result",
    );
    assert_eq!(ours[5]["usage"]["input_tokens"], 200);
    assert_eq!(ours[5]["usage"]["output_tokens"], 40);
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .unwrap()
        .status
        .success();
    assert!(ok, "git {args:?}");
}

#[test]
fn scripted_model_fixes_the_bug_in_a_git_repo_and_json_lists_the_change() {
    let home = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    for f in ["calc.sh", "test.sh"] {
        std::fs::copy(
            repo_root().join("examples/buggy-project").join(f),
            repo.path().join(f),
        )
        .unwrap();
    }
    git(repo.path(), &["init", "-q", "-b", "main"]);
    git(repo.path(), &["add", "."]);
    git(repo.path(), &["commit", "-qm", "buggy"]);
    let before = Command::new("bash")
        .arg("test.sh")
        .current_dir(repo.path())
        .output()
        .unwrap();
    assert!(!before.status.success(), "the example starts broken");

    let out = skiff(home.path())
        .current_dir(repo.path())
        .args(FIX_BUG_GRANTS)
        .args([
            "-p",
            "The tests fail; fix the bug.",
            "--output-format",
            "json",
            "--provider",
            "script",
        ])
        .arg("--script")
        .arg(repo_root().join("examples/fix-bug.json"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(result["is_error"], false);
    assert_eq!(result["num_turns"], 5);
    // A scripted model is free (and named `scripted`, not priced as Sonnet).
    assert_eq!(result["total_cost_usd"].as_f64(), Some(0.0));
    assert!(result["modelUsage"].get("scripted").is_some(), "{result}");
    let changes = result["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0]["path"], "calc.sh");
    assert_eq!(changes[0]["kind"], "modified");
    assert!(
        changes[0]["diff"]
            .as_str()
            .unwrap()
            .contains("+add() { echo $(( $1 + $2 )); }")
    );

    let after = Command::new("bash")
        .arg("test.sh")
        .current_dir(repo.path())
        .output()
        .unwrap();
    assert!(after.status.success(), "the tests pass after the run");
    let diff = Command::new("git")
        .args(["diff", "--stat"])
        .current_dir(repo.path())
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&diff.stdout).contains("calc.sh"));
}

#[test]
fn json_verbose_is_an_array_and_text_mode_traces_on_stderr() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    for f in ["calc.sh", "test.sh"] {
        std::fs::copy(
            repo_root().join("examples/buggy-project").join(f),
            ws.path().join(f),
        )
        .unwrap();
    }
    let script = repo_root().join("examples/fix-bug.json");
    let out = skiff(home.path())
        .current_dir(ws.path())
        .args(FIX_BUG_GRANTS)
        .args([
            "-p",
            "fix",
            "--output-format=json",
            "--verbose",
            "--provider=script",
        ])
        .arg(format!("--script={}", script.display()))
        .output()
        .unwrap();
    let all: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(all[0]["subtype"], "init");
    assert_eq!(all.last().unwrap()["type"], "result");
    assert!(all.iter().all(|f| f["type"] != "stream_event"));

    for f in ["calc.sh", "test.sh"] {
        std::fs::copy(
            repo_root().join("examples/buggy-project").join(f),
            ws.path().join(f),
        )
        .unwrap();
    }
    let out = skiff(home.path())
        .current_dir(ws.path())
        .args(FIX_BUG_GRANTS)
        .args(["-p", "fix", "--provider", "script", "--script"])
        .arg(&script)
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.starts_with("I'll look at the code"), "{stdout}");
    assert!(
        stdout
            .trim_end()
            .ends_with("All four checks in test.sh pass."),
        "{stdout}"
    );
    assert!(stderr.contains("● Read(calc.sh)"), "{stderr}");
    assert!(stderr.contains("● Bash(bash test.sh)"), "{stderr}");
    assert!(stderr.contains("⎿ Error: Exit code 1"), "{stderr}");
    assert!(!stdout.contains('●'), "the trace stays off stdout");
}

#[test]
fn max_turns_is_an_error_result_with_exit_1() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::copy(
        repo_root().join("examples/buggy-project/calc.sh"),
        ws.path().join("calc.sh"),
    )
    .unwrap();
    let out = skiff(home.path())
        .current_dir(ws.path())
        .args([
            "-p",
            "fix",
            "--max-turns",
            "1",
            "--output-format",
            "json",
            "--provider",
            "script",
            "--script",
        ])
        .arg(repo_root().join("examples/fix-bug.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["subtype"], "error_max_turns");
    assert_eq!(r["errors"][0], "Reached maximum number of turns (1)");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_interrupts_the_run_kills_the_tool_and_exits_130() {
    let server = MockServer::builder()
        .turn(ScriptTurn::tool_use("Bash", json!({"command": "sleep 60"})))
        .turn(ScriptTurn::text("never"))
        .start()
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let url = server.url();
    let (code, elapsed, stdout) = {
        let home = home.path().to_path_buf();
        let ws = ws.path().to_path_buf();
        tokio::task::spawn_blocking(move || {
            let mut child = skiff(&home)
                .env("ANTHROPIC_API_KEY", "sk-test")
                .env("ANTHROPIC_BASE_URL", &url)
                .current_dir(&ws)
                .args(["-p", "sleep", "--output-format", "stream-json", "--verbose"])
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let mut reader = BufReader::new(child.stdout.take().unwrap());
            let mut seen = String::new();
            // Wait until the tool call was announced, then give bash a moment to start.
            loop {
                let mut line = String::new();
                assert!(
                    reader.read_line(&mut line).unwrap() > 0,
                    "skiff ended early: {seen}"
                );
                seen.push_str(&line);
                if line.contains("\"tool_use\"") {
                    break;
                }
            }
            std::thread::sleep(Duration::from_millis(300));
            let t = Instant::now();
            nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(child.id() as i32),
                nix::sys::signal::Signal::SIGINT,
            )
            .unwrap();
            let mut rest = String::new();
            std::io::Read::read_to_string(&mut reader, &mut rest).unwrap();
            let status = child.wait().unwrap();
            (status.code(), t.elapsed(), format!("{seen}{rest}"))
        })
        .await
        .unwrap()
    };
    assert_eq!(code, Some(130));
    assert!(
        elapsed < Duration::from_secs(20),
        "the sleep kept skiff alive: {elapsed:?}"
    );
    let frames = lines(stdout.as_bytes());
    let result = frames.last().unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(result["subtype"], "error_during_execution");
    assert_eq!(result["terminal_reason"], "aborted_tools");
    assert!(
        frames
            .iter()
            .any(|f| f["type"] == "user" && f["message"]["content"][0]["type"] == "tool_result")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_that_goes_away_is_not_an_interrupt_exit_0() {
    // `skiff -p … | head -1`: head exits after the first line; skiff stops, exits 0, not 130.
    let server = MockServer::builder()
        .turn(ScriptTurn {
            content: vec![
                ScriptBlock::Text {
                    text: "first line\n".into(),
                },
                ScriptBlock::ToolUse {
                    id: None,
                    name: "Bash".into(),
                    input: json!({"command": "sleep 1"}),
                },
            ],
            ..ScriptTurn::default()
        })
        .turn(ScriptTurn::text("second line\nthird line"))
        .start()
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let url = server.url();
    let (home_p, ws_p) = (home.path().to_path_buf(), ws.path().to_path_buf());
    let out = tokio::task::spawn_blocking(move || {
        let skiff = env!("CARGO_BIN_EXE_skiff");
        skiff_cmd_in_shell(&home_p)
            .env("ANTHROPIC_API_KEY", "sk-test")
            .env("ANTHROPIC_BASE_URL", &url)
            .current_dir(&ws_p)
            .args([
                "-o",
                "pipefail",
                "-c",
                &format!("'{skiff}' -p go | head -1"),
            ])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "first line\n");
    assert_eq!(out.status.code(), Some(0), "{out:?}");

    // stream-json: the reader closes the pipe after the first frame.
    let server = MockServer::builder()
        .turn(ScriptTurn::tool_use("Bash", json!({"command": "sleep 30"})))
        .turn(ScriptTurn::text("never"))
        .start()
        .await
        .unwrap();
    let url = server.url();
    let (home_p, ws_p) = (home.path().to_path_buf(), ws.path().to_path_buf());
    let (code, elapsed) = tokio::task::spawn_blocking(move || {
        let mut child = skiff(&home_p)
            .env("ANTHROPIC_API_KEY", "sk-test")
            .env("ANTHROPIC_BASE_URL", &url)
            .current_dir(&ws_p)
            .args(["-p", "sleep", "--output-format", "stream-json", "--verbose"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut reader = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        assert!(line.contains("\"init\""), "{line}");
        let t = Instant::now();
        drop(reader);
        let status = child.wait().unwrap();
        (status.code(), t.elapsed())
    })
    .await
    .unwrap();
    assert_eq!(code, Some(0));
    assert!(
        elapsed < Duration::from_secs(20),
        "the sleep kept skiff alive: {elapsed:?}"
    );
}

/// `bash` with the clean environment of [`skiff`].
fn skiff_cmd_in_shell(home: &Path) -> Command {
    let mut c = Command::new("bash");
    c.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("SKIFF_HOME", home.join(".skiff"));
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn print_mode_shows_an_auto_approved_edit_as_a_diff_with_the_files_line_numbers() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let text: String = (1..=9).map(|i| format!("line {i}\n")).collect();
    std::fs::write(ws.path().join("notes.txt"), text).unwrap();
    let server = MockServer::builder()
        .turn(ScriptTurn::tool_use(
            "Read",
            json!({"file_path": "notes.txt"}),
        ))
        .turn(ScriptTurn::tool_use(
            "Edit",
            json!({"file_path": "notes.txt", "old_string": "line 7", "new_string": "line seven"}),
        ))
        .turn(ScriptTurn::text("edited"))
        .start()
        .await
        .unwrap();
    let out = skiff(home.path())
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", server.url())
        .current_dir(ws.path())
        .args(["-p", "edit it", "--permission-mode", "acceptEdits"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // The hunk where the change is (line 7 of the file), not `@@ -1,3 +1,4 @@`, and no false
    // end-of-file marker.
    assert!(stderr.contains("7 -line 7"), "{stderr}");
    assert!(stderr.contains("7 +line seven"), "{stderr}");
    assert!(stderr.contains("6  line 6"), "{stderr}");
    assert!(!stderr.contains("No newline"), "{stderr}");
}
