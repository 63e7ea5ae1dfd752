//! Read-only git stays read-only in a hostile repository: the programs its config and
//! attributes name (fsmonitor, external diff, textconv, signature checking) never run when
//! skiff's auto-approved `git status`/`diff`/`log -p`/`show` do, and their output is normal.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .status()
        .unwrap()
        .success();
    assert!(ok, "git {args:?}");
}

/// A repository whose config names a marker-writing script for every hook point.
fn hostile_repo(dir: &Path, marker: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.email", "a@b.c"]);
    git(dir, &["config", "user.name", "A"]);
    std::fs::write(dir.join("a.txt"), "one\n").unwrap();
    std::fs::write(dir.join("b.bin"), "bin one\n").unwrap();
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "first"]);
    std::fs::write(dir.join("a.txt"), "one\ntwo\n").unwrap();
    std::fs::write(dir.join("b.bin"), "bin two\n").unwrap();
    git(dir, &["commit", "-q", "-am", "second"]);
    std::fs::write(dir.join("a.txt"), "one\ntwo\nthree\n").unwrap();
    let script = dir.join(".evil.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$0 $*\" >> {}\ncat \"$1\" 2>/dev/null\n",
            marker.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let s = script.display().to_string();
    git(dir, &["config", "core.fsmonitor", &s]);
    git(dir, &["config", "diff.external", &s]);
    git(dir, &["config", "diff.evil.textconv", &s]);
    git(dir, &["config", "diff.evil.command", &s]);
    git(dir, &["config", "log.showSignature", "true"]);
    git(dir, &["config", "gpg.program", &s]);
    git(dir, &["config", "core.pager", &s]);
    std::fs::write(
        dir.join(".gitattributes"),
        "*.bin diff=evil\n*.txt diff=evil\n",
    )
    .unwrap();
}

#[test]
fn auto_approved_git_reads_run_no_repository_program() {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let marker = home.path().join("marker");
    hostile_repo(ws.path(), &marker);
    let _ = std::fs::remove_file(&marker);
    let commands = ["git status", "git diff", "git log -p -1", "git show HEAD"];
    let mut turns: Vec<Value> = commands
        .iter()
        .map(
            |c| json!({"content": [{"type": "tool_use", "name": "Bash", "input": {"command": c}}]}),
        )
        .collect();
    turns.push(json!({"content": [{"type": "text", "text": "done"}]}));
    let script = home.path().join("script.json");
    std::fs::write(&script, json!({ "turns": turns }).to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_skiff"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("SKIFF_HOME", home.path().join(".skiff"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .current_dir(ws.path())
        .args(["-p", "look", "--output-format", "stream-json", "--verbose"])
        .args(["--provider", "script", "--script"])
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results: Vec<(bool, String)> = String::from_utf8_lossy(&out.stdout)
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
        .map(|b| {
            (
                b["is_error"] == true,
                b["content"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    assert_eq!(results.len(), 4);
    for ((is_error, text), cmd) in results.iter().zip(commands) {
        assert!(!is_error, "{cmd} was not run: {text}");
    }
    assert!(
        results[0].1.contains("modified:") && results[0].1.contains("a.txt"),
        "{}",
        results[0].1
    );
    assert!(results[1].1.contains("+three"), "{}", results[1].1);
    assert!(
        results[2].1.contains("+two") && results[2].1.contains("second"),
        "{}",
        results[2].1
    );
    assert!(results[3].1.contains("+bin two"), "{}", results[3].1);
    assert!(
        !marker.exists(),
        "a repository program ran: {}",
        std::fs::read_to_string(&marker).unwrap_or_default()
    );
}
