//! End-to-end tests of the `skiff` binary against the scripted mock server.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Duration;

use predicates::prelude::*;
use skiff_protocol::script::{Fault, ScriptTurn};
use skiff_testkit::MockServer;

const KEY: &str = "sk-ant-cli-test-SECRETKEY";

/// A `skiff` command with a clean environment pointing at `url`.
fn skiff(url: &str) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::new(env!("CARGO_BIN_EXE_skiff"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("ANTHROPIC_API_KEY", KEY)
        .env("ANTHROPIC_BASE_URL", url)
        .env("SKIFF_MAX_RETRIES", "3");
    cmd
}

#[test]
fn version_and_help() {
    assert_cmd::Command::new(env!("CARGO_BIN_EXE_skiff"))
        .arg("--version")
        .assert()
        .success()
        .stdout(predicate::str::starts_with("skiff "));
    assert_cmd::Command::new(env!("CARGO_BIN_EXE_skiff"))
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("--print"));
}

/// `skiff` with no environment at all (no key): commands other than a prompt need none.
fn bare() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::new(env!("CARGO_BIN_EXE_skiff"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    cmd
}

#[test]
fn help_lists_the_commands_and_each_has_its_own_help() {
    let top = bare().arg("--help").assert().success();
    let text = String::from_utf8(top.get_output().stdout.clone()).unwrap();
    for cmd in ["config", "sessions", "completions", "man"] {
        assert!(text.contains(&format!("  {cmd} ")), "{cmd} missing: {text}");
    }
    for cmd in ["config", "sessions", "completions", "man"] {
        for args in [vec!["help", cmd], vec![cmd, "--help"]] {
            bare()
                .args(&args)
                .assert()
                .success()
                .stdout(predicate::str::contains(format!("Usage: skiff {cmd}")))
                .stdout(predicate::str::contains("--print").not());
        }
    }
    // `skiff help` is the top-level help, not a prompt (no API key asked for).
    bare()
        .arg("help")
        .assert()
        .success()
        .stdout(predicate::str::contains("Usage: skiff"))
        .stderr(predicate::str::contains("API").not());
}

#[test]
fn workspace_flags_work_after_a_command() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    bare()
        .env("SKIFF_HOME", home.path())
        .args(["sessions", "--output-format", "json", "--cwd"])
        .arg(dir.path())
        .assert()
        .success()
        .stdout(predicate::str::starts_with("["));
    bare()
        .env("SKIFF_HOME", home.path())
        .args(["config", "--cwd", "/definitely/not/here"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("/definitely/not/here"));
}

#[test]
fn shell_completions_and_man_page() {
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef skiff"),
        ("fish", "complete -c skiff"),
    ] {
        bare()
            .args(["completions", shell])
            .assert()
            .success()
            .stdout(predicate::str::contains(marker))
            .stdout(predicate::str::contains("permission-mode"))
            // A nested command's own flag (`skiff mcp add --transport`).
            .stdout(predicate::str::contains("transport"));
    }
    for (argv, shown) in [
        (&["mcp", "add", "--help"][..], "How to reach the server"),
        // After one of skiff's flags `--help` is one of serve's FLAGS, which skiff answers.
        (
            &["mcp", "serve", "--permission-mode", "acceptEdits", "--help"][..],
            "Serve skiff's own tools",
        ),
        (
            &["help", "sessions", "export"][..],
            "Usage: skiff sessions export",
        ),
    ] {
        bare()
            .args(argv)
            .assert()
            .success()
            .stdout(predicate::str::contains(shown));
    }
    bare()
        .args(["completions", "tcsh"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("bash"));
    bare()
        .arg("man")
        .assert()
        .success()
        .stdout(predicate::str::contains(".TH skiff 1"))
        .stdout(predicate::str::contains("permission\\-mode"))
        .stdout(predicate::str::contains("sessions"));
}

#[test]
fn missing_api_key_is_actionable_and_exits_1() {
    assert_cmd::Command::new(env!("CARGO_BIN_EXE_skiff"))
        .env_clear()
        .args(["-p", "hello"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("ANTHROPIC_API_KEY"))
        .stderr(predicate::str::contains("export"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn print_mode_prints_the_answer() {
    let server = MockServer::builder()
        .turn(ScriptTurn::text("Hello from the mock!"))
        .start()
        .await
        .unwrap();
    let url = server.url();
    let out = tokio::task::spawn_blocking(move || skiff(&url).args(["-p", "hello"]).output())
        .await
        .unwrap()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Hello from the mock!\n"
    );
    let req = &server.messages_requests()[0];
    assert_eq!(req.body["messages"][0]["content"][0]["text"], "hello");
    assert_eq!(req.body["model"], "claude-sonnet-4-5");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_from_stdin_and_model_flag() {
    let server = MockServer::builder()
        .turn(ScriptTurn::text("ok"))
        .start()
        .await
        .unwrap();
    let url = server.url();
    let out = tokio::task::spawn_blocking(move || {
        skiff(&url)
            .args(["-p", "--model", "claude-haiku-4-5"])
            .write_stdin("from stdin\n")
            .output()
    })
    .await
    .unwrap()
    .unwrap();
    assert!(out.status.success());
    let req = &server.messages_requests()[0];
    assert_eq!(
        req.body["messages"][0]["content"][0]["text"],
        "from stdin\n"
    );
    assert_eq!(req.body["model"], "claude-haiku-4-5");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_reaches_a_pipe_as_each_model_call_completes_not_at_exit() {
    // On a pipe (which cannot be erased) text is released when its model call is complete, so
    // a retried call never shows twice; it still arrives while the run goes on.
    let server = MockServer::builder()
        .turn(ScriptTurn {
            content: vec![
                skiff_protocol::script::ScriptBlock::Text {
                    text: "first words".into(),
                },
                skiff_protocol::script::ScriptBlock::ToolUse {
                    id: None,
                    name: "Bash".into(),
                    input: serde_json::json!({"command": "sleep 1"}),
                },
            ],
            chunk_chars: Some(5),
            ..ScriptTurn::default()
        })
        .turn(ScriptTurn::text("then the rest."))
        .start()
        .await
        .unwrap();
    let url = server.url();
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().to_path_buf();
    let (first, still_running, rest, ok) = tokio::task::spawn_blocking(move || {
        let mut child = Command::new(env!("CARGO_BIN_EXE_skiff"))
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("ANTHROPIC_API_KEY", KEY)
            .env("ANTHROPIC_BASE_URL", &url)
            .env("SKIFF_HOME", cwd.join(".home"))
            .current_dir(&cwd)
            .args(["-p", "hi"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut buf = [0u8; 64];
        let n = stdout.read(&mut buf).unwrap();
        let first = String::from_utf8_lossy(&buf[..n]).into_owned();
        let still_running = child.try_wait().unwrap().is_none();
        let mut rest = String::new();
        stdout.read_to_string(&mut rest).unwrap();
        let ok = child.wait().unwrap().success();
        (first, still_running, rest, ok)
    })
    .await
    .unwrap();
    assert!(ok);
    assert!(
        still_running,
        "the first call's text arrived only after skiff exited"
    );
    assert!(first.starts_with("first words"), "first read: {first:?}");
    assert_eq!(format!("{first}{rest}"), "first words\nthen the rest.\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_stream_prints_its_answer_once() {
    // The connection drops after part of the answer streamed; the retry starts over.
    let server = MockServer::builder()
        .turn(ScriptTurn {
            faults: vec![Fault::Disconnect { after_events: 5 }],
            chunk_chars: Some(4),
            ..ScriptTurn::text("The answer is forty-two.")
        })
        .start()
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (url, cwd) = (server.url(), dir.path().to_path_buf());
    let out = tokio::task::spawn_blocking(move || {
        skiff(&url)
            .env("SKIFF_HOME", cwd.join(".home"))
            .current_dir(&cwd)
            .args(["-p", "question"])
            .output()
    })
    .await
    .unwrap()
    .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "The answer is forty-two.\n"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("retrying"), "{stderr}");
    assert_eq!(server.messages_requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retries_are_announced_on_stderr() {
    let server = MockServer::builder()
        .turn(ScriptTurn::text("made it").with_fault(Fault::Status {
            status: 529,
            retry_after_ms: Some(10),
            retry_after: None,
            message: Some("Overloaded".into()),
        }))
        .start()
        .await
        .unwrap();
    let url = server.url();
    let out = tokio::task::spawn_blocking(move || skiff(&url).args(["-p", "x"]).output())
        .await
        .unwrap()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("529") && stderr.contains("retrying"),
        "{stderr}"
    );
    assert!(stderr.contains("retry 1/3"), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "made it\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_errors_exit_1_with_the_message_and_never_the_key() {
    let server = MockServer::builder()
        .turn(
            ScriptTurn::text("no")
                .with_fault(Fault::Status {
                    status: 401,
                    retry_after: None,
                    retry_after_ms: None,
                    message: Some("invalid x-api-key".into()),
                })
                .with_fault(Fault::Status {
                    status: 400,
                    retry_after: None,
                    retry_after_ms: None,
                    message: Some("messages: roles must alternate".into()),
                }),
        )
        .start()
        .await
        .unwrap();
    let url = server.url();
    let (a, b) = tokio::task::spawn_blocking(move || {
        (
            skiff(&url).args(["-p", "x"]).output().unwrap(),
            skiff(&url).args(["-p", "x"]).output().unwrap(),
        )
    })
    .await
    .unwrap();
    for (out, needle) in [(&a, "ANTHROPIC_API_KEY"), (&b, "roles must alternate")] {
        assert_eq!(out.status.code(), Some(1));
        // Text mode prints the error result on stdout, as Claude Code does.
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.starts_with("Error: ") && stdout.contains(needle),
            "{stdout}"
        );
        let all = format!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
        assert!(!all.contains("SECRETKEY"));
    }
    assert_eq!(
        server.messages_requests().len(),
        2,
        "401/400 are not retried"
    );
}

#[test]
fn unreachable_base_url_names_it() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let out = skiff(&url)
        .env("SKIFF_MAX_RETRIES", "0")
        .args(["-p", "x"])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&url) && stdout.contains("ANTHROPIC_BASE_URL"),
        "{stdout}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_flag_exits_2_naming_the_closest_and_runs_nothing() {
    let server = MockServer::builder()
        .turn(ScriptTurn::text("should not be asked"))
        .start()
        .await
        .unwrap();
    let url = server.url();
    tokio::task::spawn_blocking(move || {
        let home = tempfile::tempdir().unwrap();
        for (flag, closest) in [
            ("--permision-mode=plan", "--permission-mode"),
            ("--modle", "--model"),
        ] {
            skiff(&url)
                .env("HOME", home.path())
                .env("SKIFF_HOME", home.path().join(".skiff"))
                .args(["-p", "hello", flag])
                .assert()
                .code(2)
                .stderr(predicate::str::contains(closest));
        }
    })
    .await
    .unwrap();
    assert!(
        server.messages_requests().is_empty(),
        "a model call was made"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_flags_claude_codes_clients_pass_and_skiff_ignores_warn() {
    let server = MockServer::builder()
        .turn(ScriptTurn::text("answered"))
        .start()
        .await
        .unwrap();
    let url = server.url();
    tokio::task::spawn_blocking(move || {
        let home = tempfile::tempdir().unwrap();
        skiff(&url)
            .env("HOME", home.path())
            .env("SKIFF_HOME", home.path().join(".skiff"))
            // --effort, --thinking and --include-hook-events are taken now (issue 36): only a
            // model that has no effort level says so; --agent is still ignored, with a warning.
            .args([
                "-p",
                "--effort",
                "high",
                "--thinking=adaptive",
                "--include-hook-events",
                "--agent",
                "reviewer",
                "hello",
            ])
            .assert()
            .success()
            .stdout(predicate::str::contains("answered"))
            .stderr(predicate::str::contains("--effort high is not sent"))
            .stderr(predicate::str::contains("skiff ignores --agent"))
            .stderr(predicate::str::contains("skiff ignores --thinking").not());
    })
    .await
    .unwrap();
}

/// The CI's check of the flags skiff accepts and ignores: `skiff --help` lists each with the
/// reason, and the README's table documents each with the same reason (or the list is empty).
#[test]
fn every_flag_skiff_ignores_is_documented_with_its_reason() {
    let out = bare().arg("--help").assert().success();
    let help = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let Some(start) = help.find("Accepted for Claude Code's clients and ignored") else {
        // No such section: no flag is ignored.
        assert!(!help.contains("ignored"), "{help}");
        return;
    };
    let listed: Vec<(String, String)> = help[start..]
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("  --"))
        .map(|l| {
            let l = l.trim();
            let (flag, reason) = l.split_once(char::is_whitespace).unwrap_or((l, ""));
            (flag.to_owned(), reason.trim().to_owned())
        })
        .collect();
    assert!(!listed.is_empty(), "{help}");
    let readme = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"),
    )
    .unwrap();
    let section = readme
        .split("### Flags skiff accepts and ignores")
        .nth(1)
        .expect("the README has no \"Flags skiff accepts and ignores\" section");
    for (flag, reason) in &listed {
        assert!(
            reason.len() > 10,
            "{flag} is ignored without a reason in --help"
        );
        let row = format!("| `{flag}` | {reason} |");
        assert!(
            section.contains(&row),
            "the README does not document {flag} with its reason; expected the row\n{row}"
        );
        // Given on a command line, it warns with the reason and takes its value along.
        let home = tempfile::tempdir().unwrap();
        let assert = bare()
            .env("HOME", home.path())
            .env("SKIFF_HOME", home.path().join(".skiff"))
            .current_dir(home.path())
            .args([format!("{flag}=value").as_str(), "config"])
            .assert()
            .success();
        let err = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
        assert!(err.contains(flag) && err.contains(reason), "{flag}: {err}");
    }
}
