//! Recordings and task files from someone else, from the command line: `skiff replay` without
//! `--cwd` never touches the recorded workspace and never takes the recorded permission mode,
//! `sessions export --script` leaves no provider token, cookie or Authorization header in, and
//! `skiff batch` reports a task whose calls were denied as such.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use serde_json::{Value, json};
use skiff_protocol::script::ScriptTurn;
use skiff_testkit::MockServer;

fn skiff(home: &Path, cwd: &Path) -> Command {
    let mut c = Command::cargo_bin("skiff").unwrap();
    c.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("SKIFF_HOME", home.join(".skiff"))
        .env("SKIFF_SANDBOX", "off")
        .current_dir(cwd);
    c
}

fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

fn session_id(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|v| v["session_id"].as_str().map(str::to_owned))
        .unwrap_or_else(|| panic!("no session id:\n{}", text(out)))
}

/// Record one `-p` session through the mock playing `turns`; its id.
async fn record(home: &Path, ws: &Path, turns: Vec<ScriptTurn>, extra: &[&str]) -> String {
    let server = MockServer::builder().turns(turns).start().await.unwrap();
    let out = skiff(home, ws)
        .env("ANTHROPIC_API_KEY", "sk-ant-test-0123456789abcdef")
        .env("ANTHROPIC_BASE_URL", server.url())
        .args(["-p", "go", "--output-format", "stream-json", "--verbose"])
        .args(extra)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    session_id(&out)
}

fn export(home: &Path, ws: &Path, id: &str, to: &Path) -> Output {
    skiff(home, ws)
        .args(["sessions", "export", id, "--script", "-o"])
        .arg(to)
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_redacts_provider_tokens_cookies_and_auth_headers_in_tool_output() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let secrets = [
        "npm_0123456789abcdefghijABCDEFGHIJ012345",
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOp",
        "xoxp-1234567890-1234567890-1234567890-abcdef0123456789abcdef01234567",
        "glpat-abcdefghij0123456789",
        "AIzaSyA0123456789abcdefghijklmnopqrstu",
        "sk_live_0123456789abcdefABCDEF",
        "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
        "ghp_0123456789abcdefghijABCDEFGHIJ012345",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
        "s3ss10n-c00k1e-value",
        "shortbearer",
        "sid=abc123def",
    ];
    let file = format!(
        "NPM_TOKEN_VALUE: {}\nslack: {} / {}\ngitlab {}\ngoogle={}\nstripe {}\nhf {}\ngh {} {}\n\
         SESSION_COOKIE={}\ncurl -H 'Authorization: Bearer {}' -H 'Cookie: {}; theme=dark'\n",
        secrets[0],
        secrets[1],
        secrets[2],
        secrets[3],
        secrets[4],
        secrets[5],
        secrets[6],
        secrets[7],
        secrets[8],
        secrets[9],
        secrets[10],
        secrets[11],
    );
    std::fs::write(ws.path().join("tokens.txt"), &file).unwrap();
    let id = record(
        home.path(),
        ws.path(),
        vec![
            ScriptTurn::tool_use("Bash", json!({"command": "cat tokens.txt"})),
            ScriptTurn::text("I saw them."),
        ],
        &["--allowedTools", "Bash(cat:*)"],
    )
    .await;
    let to = ws.path().join("session.json");
    let out = export(home.path(), ws.path(), &id, &to);
    assert!(out.status.success(), "{}", text(&out));
    let exported = std::fs::read_to_string(&to).unwrap();
    assert!(exported.contains("theme=dark") || exported.contains("[REDACTED]"));
    for s in secrets {
        assert!(!exported.contains(s), "{s} was exported:\n{exported}");
    }
    assert!(
        exported.contains("Authorization: Bearer [REDACTED]"),
        "{exported}"
    );
}

/// A git workspace whose first commit has a `notes.txt`.
fn repo(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("notes.txt"), "start\n").unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "."]);
    git(dir, &["commit", "-qm", "start"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_without_cwd_runs_in_a_fresh_checkout_and_never_takes_the_recorded_mode() {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    let ws = root.path().join("ws");
    std::fs::create_dir_all(&home).unwrap();
    repo(&ws);
    let id = record(
        &home,
        &ws,
        vec![
            ScriptTurn::tool_use("Bash", json!({"command": "echo ran >> notes.txt"})),
            ScriptTurn::tool_use("Write", json!({"file_path": "new.txt", "content": "new\n"})),
            ScriptTurn::text("done"),
        ],
        &["--allowedTools", "Bash", "--permission-mode", "acceptEdits"],
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.txt")).unwrap(),
        "start\nran\n"
    );
    std::fs::remove_file(ws.join("new.txt")).unwrap();
    let script = root.path().join("session.json");
    let out = export(&home, &ws, &id, &script);
    assert!(out.status.success(), "{}", text(&out));
    // Someone else's recording: it asks for bypassPermissions.
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&script).unwrap()).unwrap();
    doc["recording"]["settings"]["permissionMode"] = json!("bypassPermissions");
    std::fs::write(&script, doc.to_string()).unwrap();

    // `skiff replay FILE` from anywhere: the user's workspace is left alone.
    let out = skiff(&home, &ws)
        .arg("replay")
        .arg(&script)
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.txt")).unwrap(),
        "start\nran\n",
        "the replay ran in the recorded workspace"
    );
    let replayed_in = PathBuf::from(report["workspace"].as_str().unwrap());
    assert!(!replayed_in.starts_with(&ws), "{report:#}");
    assert!(
        !replayed_in.exists(),
        "the temporary checkout is left: {report:#}"
    );
    let warnings = report["warnings"].to_string();
    assert!(warnings.contains("fresh checkout"), "{warnings}");
    assert!(warnings.contains("bypassPermissions"), "{warnings}");
    assert!(!ws.join("new.txt").exists());
    // The Write was asked about (default mode), not let through by the recorded mode.
    assert_eq!(report["approvals"][0]["tool"], "Write", "{report:#}");

    // `--in-place` replays in the current directory, on purpose.
    let copy = root.path().join("copy");
    git(root.path(), &["clone", "-q", ws.to_str().unwrap(), "copy"]);
    let out = skiff(&home, &copy)
        .arg("replay")
        .arg(&script)
        .args(["--json", "--in-place"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(copy.join("notes.txt")).unwrap(),
        "start\nran\n"
    );
    assert!(copy.join("new.txt").exists());
    // `--in-place` with `--cwd` is a usage error.
    let out = skiff(&home, &copy)
        .arg("replay")
        .arg(&script)
        .args(["--in-place", "--cwd"])
        .arg(&copy)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_of_a_recording_without_a_commit_asks_where_to_run() {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    let ws = root.path().join("plain");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("notes.txt"), "start\n").unwrap();
    let id = record(
        &home,
        &ws,
        vec![
            ScriptTurn::tool_use("Bash", json!({"command": "echo ran >> notes.txt"})),
            ScriptTurn::text("done"),
        ],
        &["--allowedTools", "Bash"],
    )
    .await;
    let script = root.path().join("session.json");
    assert!(export(&home, &ws, &id, &script).status.success());
    let out = skiff(&home, &ws)
        .arg("replay")
        .arg(&script)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--cwd DIR") && err.contains("--in-place"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.txt")).unwrap(),
        "start\nran\n"
    );
}

#[test]
fn a_batch_task_whose_calls_were_denied_is_not_a_success() {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    let src = root.path().join("src");
    repo(&src);
    let script = root.path().join("denied.json");
    std::fs::write(
        &script,
        json!({"turns": [
            {"content": [{"type": "tool_use", "id": "toolu_w", "name": "Write",
                          "input": {"file_path": "new.txt", "content": "x"}}]},
            {"content": [{"type": "tool_use", "id": "toolu_b", "name": "Bash",
                          "input": {"command": "rm -rf notes.txt"}}]},
            {"content": [{"type": "text", "text": "All done!"}]}
        ]})
        .to_string(),
    )
    .unwrap();
    let tasks = root.path().join("tasks.jsonl");
    std::fs::write(
        &tasks,
        format!(
            "{}\n",
            json!({"id": "t1", "repo": "src", "prompt": "change things",
                   "args": ["--script", script]})
        ),
    )
    .unwrap();
    let out = skiff(&home, root.path())
        .args([
            "batch",
            "tasks.jsonl",
            "--out",
            "results.jsonl",
            "--workdir",
            "work",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let line: Value = serde_json::from_str(
        std::fs::read_to_string(root.path().join("results.jsonl"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(line["status"], "permission_denied", "{line:#}");
    let denied: Vec<&str> = line["permission_denials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["tool_name"].as_str().unwrap())
        .collect();
    assert_eq!(denied, ["Write", "Bash"], "{line:#}");
    assert!(
        line["error"]
            .as_str()
            .unwrap()
            .contains("2 tool calls were denied"),
        "{line:#}"
    );
    assert_eq!(line["diff"], "");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("permission_denied"), "{stderr}");
    assert!(stderr.contains("1 with denied tool calls"), "{stderr}");
}
