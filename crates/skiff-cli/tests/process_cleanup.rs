#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! No command outlives skiff: background commands die when the session ends, and both
//! background and foreground commands die when skiff itself is killed with SIGKILL.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::json;

/// Processes whose command line contains `marker` (seen from the host: inside the sandbox a
/// command's own PIDs are those of its PID namespace).
fn processes_with(marker: &str) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let zombie = std::fs::read_to_string(entry.path().join("stat")).is_ok_and(|stat| {
            stat.rsplit_once(") ")
                .is_some_and(|(_, rest)| rest.starts_with('Z'))
        });
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline"))
            && !zombie
        {
            let line = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if line.contains(marker) {
                out.push(format!("{name}: {line}"));
            }
        }
    }
    out
}

/// Wait (at most 10 s) until no process carries `marker`.
fn gone(marker: &str) -> bool {
    for _ in 0..100 {
        if processes_with(marker).is_empty() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

/// Wait (at most 10 s) until a process carries `marker`.
fn started(marker: &str) {
    for _ in 0..200 {
        if !processes_with(marker).is_empty() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("no process with {marker} ever appeared");
}

/// A long-running command whose processes carry `marker` in their command line.
fn long(marker: &str) -> String {
    format!("sh -c 'sleep 300; : {marker}'")
}

fn skiff(home: &Path, ws: &Path, script: &Path) -> Command {
    let mut cmd = skiff_testkit::skiff_command!(home);
    cmd.current_dir(ws)
        .args(["-p", "go", "--output-format", "stream-json", "--verbose"])
        .args(["--permission-mode", "bypassPermissions"])
        .args(["--provider", "script", "--script"])
        .arg(script);
    cmd
}

fn bash(command: &str, background: bool) -> serde_json::Value {
    json!({"content": [{"type": "tool_use", "name": "Bash",
        "input": {"command": command, "run_in_background": background}}]})
}

#[test]
fn sigkill_of_skiff_kills_its_background_and_foreground_commands() {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let script = home.path().join("script.json");
    let mark = format!("cleanup-sigkill-{}", std::process::id());
    let (bg, fg) = (format!("{mark}-bg"), format!("{mark}-fg"));
    let turns = vec![
        bash(&long(&bg), true),
        bash(&long(&fg), false),
        json!({"content": [{"type": "text", "text": "done"}]}),
    ];
    std::fs::write(&script, json!({ "turns": turns }).to_string()).unwrap();
    let mut child = skiff(home.path(), ws.path(), &script)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    started(&bg);
    started(&fg);
    kill(
        Pid::from_raw(i32::try_from(child.id()).unwrap()),
        Signal::SIGKILL,
    )
    .unwrap();
    child.wait().unwrap();
    assert!(gone(&bg), "the background command outlived a killed skiff");
    assert!(gone(&fg), "the foreground command outlived a killed skiff");
}

/// A command that runs without asking runs in the sandbox, whose namespace ends with skiff (its
/// lifeline), with no process guard in between.
#[test]
fn sigkill_of_skiff_kills_a_sandboxed_command() {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let script = home.path().join("script.json");
    let mark = format!("cleanup-sandboxed-{}", std::process::id());
    let turns = vec![
        bash(&long(&mark), false),
        json!({"content": [{"type": "text", "text": "done"}]}),
    ];
    std::fs::write(&script, json!({ "turns": turns }).to_string()).unwrap();
    let mut cmd = skiff_testkit::skiff_command!(home.path());
    cmd.current_dir(ws.path())
        .args(["-p", "go", "--allowedTools", "Bash(sh -c:*)"])
        .args(["--provider", "script", "--script"])
        .arg(&script);
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    started(&mark);
    // In the sandbox: a PID namespace other than ours (the zygote forked it; no helper's
    // command line names it).
    let ours = std::fs::read_link("/proc/self/ns/pid").unwrap();
    let theirs: Vec<_> = processes_with(&mark)
        .iter()
        .filter_map(|p| p.split_once(':'))
        .filter_map(|(pid, _)| std::fs::read_link(format!("/proc/{pid}/ns/pid")).ok())
        .collect();
    assert!(
        !theirs.is_empty() && theirs.iter().all(|ns| *ns != ours),
        "the command runs in the sandbox: {:?} in {theirs:?}",
        processes_with(&mark)
    );
    kill(
        Pid::from_raw(i32::try_from(child.id()).unwrap()),
        Signal::SIGKILL,
    )
    .unwrap();
    child.wait().unwrap();
    assert!(gone(&mark), "the sandboxed command outlived a killed skiff");
}

#[test]
fn background_commands_end_with_the_session() {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let script = home.path().join("script.json");
    let mark = format!("cleanup-session-{}", std::process::id());
    let turns = vec![
        bash(
            &format!("{} & echo started > bg.started; wait", long(&mark)),
            true,
        ),
        // Wait until the background command has started its child.
        bash("until [ -s bg.started ]; do sleep 0.05; done", false),
        json!({"content": [{"type": "tool_use", "name": "TaskOutput",
            "input": {"task_id": "nope", "block": false}}]}),
        json!({"content": [{"type": "text", "text": "done"}]}),
    ];
    std::fs::write(&script, json!({ "turns": turns }).to_string()).unwrap();
    let out = skiff(home.path(), ws.path(), &script).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("Command running in background with ID: b"),
        "{stdout}"
    );
    assert!(stdout.contains("No task found with ID: nope"));
    let init = stdout
        .lines()
        .find(|l| l.contains("\"subtype\":\"init\""))
        .unwrap();
    assert!(init.contains("\"TaskOutput\"") && init.contains("\"TaskStop\""));
    assert!(gone(&mark), "a background command outlived skiff -p");
}

#[tokio::test]
async fn the_model_hears_when_a_background_command_ends() {
    let server = skiff_testkit::MockServer::start(
        serde_json::from_value(json!({"turns": [
            bash("echo from-bg", true),
            bash("sleep 0.5", false),
            {"content": [{"type": "text", "text": "done"}]}
        ]}))
        .unwrap(),
    )
    .await
    .unwrap();
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_skiff"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("SKIFF_HOME", home.path().join(".skiff"))
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", server.url())
        .current_dir(ws.path())
        .args(["-p", "go", "--permission-mode", "bypassPermissions"]);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = server.messages_requests();
    assert_eq!(requests.len(), 3);
    let last = requests[2].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    let text = last["content"].to_string();
    assert!(text.contains("<task-notification>"), "{text}");
    assert!(text.contains("<status>completed</status>"));
    assert!(
        text.contains("Background command \\\"echo from-bg\\\" completed (exit code 0)"),
        "{text}"
    );
    // Told once only.
    let second = requests[1].body["messages"].to_string();
    assert_eq!(second.matches("<task-notification>").count(), 0);
}
