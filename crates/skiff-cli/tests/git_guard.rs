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

/// skiff -p running each of `commands` as one Bash call (scripted model): each result's
/// (is_error, text).
fn run_bash(ws: &Path, home: &Path, commands: &[&str], extra: &[&str]) -> Vec<(bool, String)> {
    let mut turns: Vec<Value> = commands
        .iter()
        .map(
            |c| json!({"content": [{"type": "tool_use", "name": "Bash", "input": {"command": c}}]}),
        )
        .collect();
    turns.push(json!({"content": [{"type": "text", "text": "done"}]}));
    let script = home.join("script.json");
    std::fs::write(&script, json!({ "turns": turns }).to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_skiff"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("SKIFF_HOME", home.join(".skiff"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .current_dir(ws)
        .args(["-p", "look", "--output-format", "stream-json", "--verbose"])
        .args(["--provider", "script", "--script"])
        .arg(&script)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
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
        .collect()
}

#[test]
fn auto_approved_git_reads_run_no_repository_program() {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let marker = home.path().join("marker");
    hostile_repo(ws.path(), &marker);
    let _ = std::fs::remove_file(&marker);
    let commands = ["git status", "git diff", "git log -p -1", "git show HEAD"];
    let results = run_bash(ws.path(), home.path(), &commands, &[]);
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

/// Found by red-teaming the CLI: filter drivers named by attributes outside the checkout's
/// `.gitattributes` (a `core.attributesFile` the repository's config sets, and an embedded bare
/// repository's `info/attributes`, which git uses when a command runs inside it) ran their
/// programs on `git status` and `git diff`, with the sandbox off.
#[test]
fn attributes_from_outside_the_checkout_name_no_program_either() {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let marker = home.path().join("marker");
    let dir = ws.path();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.email", "a@b.c"]);
    git(dir, &["config", "user.name", "A"]);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/a.txt"), "one\n").unwrap();
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "first"]);
    std::fs::write(dir.join("src/a.txt"), "one\ntwo\n").unwrap();
    let script = dir.join("evil.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\necho \"$0 $*\" >> {}\ncat\n", marker.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let s = script.display().to_string();
    std::fs::write(dir.join("attrs"), "* filter=x\n").unwrap();
    git(
        dir,
        &[
            "config",
            "core.attributesFile",
            &dir.join("attrs").display().to_string(),
        ],
    );
    git(dir, &["config", "filter.x.clean", &s]);
    // An embedded bare repository whose work tree is the workspace.
    git(dir, &["init", "-q", "--bare", "fake"]);
    git(&dir.join("fake"), &["config", "core.bare", "false"]);
    git(&dir.join("fake"), &["config", "core.worktree", ".."]);
    git(&dir.join("fake"), &["config", "filter.x.clean", &s]);
    std::fs::create_dir_all(dir.join("fake/info")).unwrap();
    std::fs::write(dir.join("fake/info/attributes"), "src/* filter=x\n").unwrap();
    let commands = [
        "git status --short",
        "git diff --stat",
        "cd fake && git status --short; git diff --stat",
    ];
    let _ = run_bash(
        dir,
        home.path(),
        &commands,
        &["--settings", r#"{"sandbox":{"enabled":false}}"#],
    );
    assert!(
        !marker.exists(),
        "a repository program ran: {}",
        std::fs::read_to_string(&marker).unwrap_or_default()
    );
    // With the guard's settings taken away, the set-up does run the program (the test tests
    // something).
    let ran = Command::new("git")
        .args(["diff", "--stat"])
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", home.path())
        .output()
        .unwrap();
    assert!(ran.status.success());
    assert!(marker.exists(), "the hostile set-up ran nothing unguarded");
}
