//! What skiff starts must not outgrow or outlive it, from the command line: a background
//! command that prints without end leaves a bounded output file, removed when the session
//! ends; what a hook starts with `setsid` ends with the hook.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use serde_json::{Value, json};
use skiff_protocol::script::ScriptTurn;
use skiff_testkit::MockServer;

fn skiff(home: &Path, ws: &Path, tmp: &Path, server: &MockServer) -> Command {
    let mut c = Command::cargo_bin("skiff").unwrap();
    c.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("SKIFF_HOME", home.join(".skiff"))
        .env("SKIFF_SANDBOX", "off")
        .env("TMPDIR", tmp)
        .env("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
        .env("ANTHROPIC_BASE_URL", server.url())
        .current_dir(ws)
        .timeout(Duration::from_secs(300));
    c
}

/// The texts of the tool results of a stream-json run, in order.
fn results(stdout: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|f| f["type"] == "user")
        .flat_map(|f| {
            f["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter(|b| b["type"] == "tool_result")
        .map(|b| match &b["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

/// The output files of background commands under `tmp`.
fn output_files(tmp: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(tmp).into_iter().flatten().flatten() {
        let tasks = entry.path().join("tasks");
        for f in std::fs::read_dir(tasks).into_iter().flatten().flatten() {
            out.push(f.path());
        }
    }
    out
}

/// Wait (bounded) until `cond` holds.
fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_output_is_bounded_and_removed_when_the_session_ends() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let server = MockServer::builder()
        // 30 MB, then a last line.
        .turn(ScriptTurn::tool_use(
            "Bash",
            json!({"command": "head -c 30000000 /dev/zero | tr '\\0' y; echo; echo END-MARK",
                   "run_in_background": true}),
        ))
        // One that never stops.
        .turn(ScriptTurn::tool_use(
            "Bash",
            json!({"command": "yes", "run_in_background": true}),
        ))
        // Wait for the first one's last line to reach its file, then measure the files.
        .turn(ScriptTurn::tool_use(
            "Bash",
            json!({"command": "f=$(grep -l END-MARK \"$TMPDIR\"/skiff-*/tasks/*.output 2>/dev/null); \
                               until [ -n \"$f\" ]; do sleep 0.1; f=$(grep -l END-MARK \"$TMPDIR\"/skiff-*/tasks/*.output 2>/dev/null); done; \
                               head -c 4 \"$f\"; echo; stat -c 'size %s' \"$f\"; tail -c 9 \"$f\""}),
        ))
        .turn(ScriptTurn::text("done"))
        .start()
        .await
        .unwrap();
    let out = skiff(home.path(), ws.path(), tmp.path(), &server)
        .args(["-p", "go", "--output-format", "stream-json", "--verbose"])
        .args(["--allowedTools", "Bash"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = results(&out.stdout);
    assert_eq!(r.len(), 3, "{r:?}");
    let measured = &r[2];
    let size: u64 = measured
        .split("size ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{measured}"));
    assert!(measured.starts_with("yyyy"), "{measured}");
    assert!(measured.trim_end().ends_with("END-MARK"), "{measured}");
    assert!(
        size <= 8 * 1024 * 1024 + 1024,
        "the output file is {size} bytes"
    );
    // The session is over: no output file is left, and `yes` is gone.
    wait_for("the output files to be removed", || {
        output_files(tmp.path()).is_empty()
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_hook_starts_with_setsid_ends_with_the_hook() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join(".claude")).unwrap();
    let hook = "setsid sleep 300 >/dev/null 2>&1 </dev/null & echo $! > \"$CLAUDE_PROJECT_DIR/hook-child.pid\"";
    std::fs::write(
        ws.path().join(".claude/settings.json"),
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": hook}
        ]}]}})
        .to_string(),
    )
    .unwrap();
    let server = MockServer::builder()
        .turn(ScriptTurn::tool_use(
            "Bash",
            json!({"command": "pid=$(cat hook-child.pid); if kill -0 \"$pid\" 2>/dev/null; then echo ALIVE; else echo GONE; fi"}),
        ))
        .turn(ScriptTurn::text("done"))
        .start()
        .await
        .unwrap();
    let out = skiff(home.path(), ws.path(), tmp.path(), &server)
        .args([
            "--trust",
            "-p",
            "go",
            "--output-format",
            "stream-json",
            "--verbose",
        ])
        .args(["--allowedTools", "Bash"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = results(&out.stdout);
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(
        r[0].trim(),
        "GONE",
        "the hook's setsid child outlived the hook"
    );
    let pid = std::fs::read_to_string(ws.path().join("hook-child.pid")).unwrap();
    assert!(
        !Path::new(&format!("/proc/{}", pid.trim())).exists(),
        "process {pid} still exists"
    );
}
