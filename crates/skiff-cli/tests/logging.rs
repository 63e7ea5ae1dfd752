//! Logging: a session with a known fake key at the most verbose levels leaves the key in no log
//! file, transcript or output; an unusable log directory never stops a run.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use serde_json::json;
use skiff_protocol::script::{Fault, ScriptTurn};
use skiff_testkit::MockServer;

const KEY: &str = "sk-ant-LEAKCHECK-7f3a9c1e5b2d4f6a8c0e2a4c6e8f0b1d";
const MARK: &str = "LEAKCHECK";

fn skiff(home: &Path, project: &Path) -> assert_cmd::Command {
    let mut c = assert_cmd::Command::new(env!("CARGO_BIN_EXE_skiff"));
    c.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("SKIFF_HOME", home.join(".skiff"))
        .current_dir(project);
    c
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries {
        let path = e.unwrap().path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

fn assert_no_key(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    assert!(
        !text.contains(KEY) && !text.contains(MARK),
        "{what} contains the API key:\n{text}"
    );
}

fn leak_check_server() -> skiff_testkit::MockServerBuilder {
    MockServer::builder()
        .turn(
            ScriptTurn::tool_use("Bash", json!({"command": "echo tool-ran"})).with_fault(
                Fault::Status {
                    status: 529,
                    retry_after: None,
                    retry_after_ms: Some(5),
                    message: Some("Overloaded".into()),
                },
            ),
        )
        .turn(ScriptTurn::text("all done"))
}

/// Run one session with SKIFF_LOG at trace and --debug; the key comes from the real environment
/// or from the workspace `.env`. Nothing under SKIFF_HOME and no output may contain it.
async fn run_leak_check(key_in_dotenv: bool, skiff_log: &str) {
    let server = leak_check_server().start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let project = dir.path().join("project");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    let mut cmd = skiff(&home, &project);
    cmd.env("SKIFF_LOG", skiff_log)
        .env("ANTHROPIC_BASE_URL", server.url())
        .args([
            "-p",
            "--debug",
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-partial-messages",
            "run the tool",
        ]);
    if key_in_dotenv {
        std::fs::write(project.join(".env"), format!("ANTHROPIC_API_KEY={KEY}\n")).unwrap();
        // Only a trusted workspace's .env may provide credentials.
        cmd.arg("--trust");
    } else {
        cmd.env("ANTHROPIC_API_KEY", KEY);
    }
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("all done"));
    assert_eq!(server.messages_requests().len(), 3, "a retry and two turns");
    assert_eq!(server.messages_requests()[0].header("x-api-key"), Some(KEY));

    // --debug mirrored the log to stderr; the log file got the trace-level lines.
    assert!(stderr.contains("agent configured"), "{stderr}");
    let logs: Vec<PathBuf> = files_under(&home.join(".skiff/logs"));
    assert_eq!(logs.len(), 1, "{logs:?}");
    let name = logs[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("skiff.log."), "{name}");
    let log = std::fs::read_to_string(&logs[0]).unwrap();
    assert!(log.contains("agent configured"), "{log}");
    assert!(log.contains("retrying model call"), "{log}");

    // The session transcript is scanned with everything else under HOME.
    let transcripts = files_under(&home.join(".skiff/projects"));
    assert!(
        transcripts
            .iter()
            .any(|p| p.extension().is_some_and(|e| e == "jsonl")),
        "no transcript written: {transcripts:?}"
    );

    assert_no_key("stdout", &out.stdout);
    assert_no_key("stderr", &out.stderr);
    let all = files_under(&home);
    assert!(!all.is_empty());
    for f in all {
        assert_no_key(&f.display().to_string(), &std::fs::read(&f).unwrap());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_from_the_environment_is_never_logged() {
    run_leak_check(false, "trace").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_from_a_dotenv_file_is_never_logged() {
    // A directive string, not a bare level: dependencies log at trace too.
    run_leak_check(true, "trace,skiff=trace").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unusable_log_directory_warns_once_and_the_run_goes_on() {
    let server = MockServer::builder()
        .turn(ScriptTurn::text("still works"))
        .start()
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    // SKIFF_HOME/logs cannot be created: SKIFF_HOME is a file.
    let blocker = dir.path().join("not-a-dir");
    std::fs::write(&blocker, "x").unwrap();
    let mut cmd = skiff(&home, dir.path());
    cmd.env("SKIFF_HOME", &blocker)
        .env("ANTHROPIC_API_KEY", KEY)
        .env("ANTHROPIC_BASE_URL", server.url())
        .args(["-p", "hi"]);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "still works\n");
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("log directory"))
        .collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(warnings[0].starts_with("Warning: cannot create the log directory"));
}

#[test]
fn invalid_skiff_log_falls_back_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let out = skiff(dir.path(), dir.path())
        .env("SKIFF_LOG", "skiff=notalevel")
        .arg("config")
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("invalid SKIFF_LOG filter"), "{stderr}");
}
