//! Permissions end to end: a scripted model tries to get around deny rules and modes; the
//! run goes on, the calls fail as data, and the result lists the denials.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

const SECRET: &str = "sk-ant-THE-SECRET";

/// A skiff command with a clean environment (temp HOME, no user settings).
fn skiff(home: &Path) -> Command {
    skiff_testkit::skiff_command!(home)
}

/// One turn per call, then a final answer.
fn script(dir: &Path, calls: &[(&str, Value)]) -> std::path::PathBuf {
    let mut turns: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, input))| {
            json!({"content": [{"type": "tool_use", "id": format!("toolu_{i:02}"), "name": name, "input": input}]})
        })
        .collect();
    turns.push(json!({"content": [{"type": "text", "text": "done"}]}));
    let path = dir.join("script.json");
    std::fs::write(&path, json!({ "turns": turns }).to_string()).unwrap();
    path
}

fn run(ws: &Path, home: &Path, calls: &[(&str, Value)], flags: &[&str]) -> (Output, Vec<Value>) {
    let script = script(home, calls);
    let out = skiff(home)
        .current_dir(ws)
        .args(["-p", "go", "--output-format", "stream-json", "--verbose"])
        .args(["--provider", "script", "--script"])
        .arg(&script)
        .args(flags)
        .output()
        .unwrap();
    let frames = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (out, frames)
}

/// The tool results in call order: (is_error, text).
fn results(frames: &[Value]) -> Vec<(bool, String)> {
    frames
        .iter()
        .filter(|f| f["type"] == "user")
        .flat_map(|f| {
            f["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter(|b| b["type"] == "tool_result")
        .map(|b| {
            let text = match &b["content"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (b["is_error"] == true, text)
        })
        .collect()
}

fn result_frame(frames: &[Value]) -> &Value {
    frames
        .iter()
        .find(|f| f["type"] == "result")
        .expect("a result frame")
}

fn workspace() -> (tempfile::TempDir, tempfile::TempDir) {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join(".env"),
        format!("ANTHROPIC_API_KEY={SECRET}\n"),
    )
    .unwrap();
    std::fs::create_dir(ws.path().join("sub")).unwrap();
    std::fs::write(ws.path().join("notes.txt"), "hello\n").unwrap();
    symlink(ws.path().join(".env"), ws.path().join("innocent.txt")).unwrap();
    (ws, home)
}

#[test]
fn a_read_deny_rule_holds_for_every_form_of_the_path_and_every_reading_tool() {
    let (ws, home) = workspace();
    let abs = std::fs::canonicalize(ws.path()).unwrap().join(".env");
    let calls = vec![
        ("Read", json!({"file_path": ".env"})),
        ("Read", json!({"file_path": abs.display().to_string()})),
        ("Read", json!({"file_path": "sub/../.env"})),
        ("Read", json!({"file_path": ".//.env"})),
        ("Read", json!({"file_path": "innocent.txt"})),
        (
            "Grep",
            json!({"pattern": "sk-ant", "path": ".env", "output_mode": "content"}),
        ),
        (
            "Grep",
            json!({"pattern": "sk-ant", "output_mode": "content"}),
        ),
        (
            "Grep",
            json!({"pattern": "sk-ant", "glob": ".env", "output_mode": "content"}),
        ),
        ("Glob", json!({"pattern": "**/.env"})),
        ("Bash", json!({"command": "cat .env"})),
        ("Read", json!({"file_path": "notes.txt"})),
    ];
    let (out, frames) = run(
        ws.path(),
        home.path(),
        &calls,
        &["--disallowedTools", "Read(./.env)"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let res = results(&frames);
    assert_eq!(res.len(), calls.len());
    for (i, (is_error, text)) in res.iter().enumerate() {
        assert!(!text.contains(SECRET), "call {i} leaked the secret: {text}");
        if i < 6 {
            assert!(is_error, "call {i} should be denied: {text}");
            assert!(
                text.contains("denied by your permission settings"),
                "call {i}: {text}"
            );
        }
    }
    assert!(res[10].1.contains("hello"), "{:?}", res[10]);
    let denials = result_frame(&frames)["permission_denials"]
        .as_array()
        .unwrap()
        .len();
    assert!(denials >= 6, "{denials}");
}

#[test]
fn compound_commands_cannot_slip_a_denied_command_through() {
    let (ws, home) = workspace();
    let commands = [
        "true && rm notes.txt",
        "echo; rm notes.txt",
        "(rm notes.txt)",
        "echo $(rm notes.txt)",
        "bash -c 'rm notes.txt'",
    ];
    let calls: Vec<(&str, Value)> = commands
        .iter()
        .map(|c| ("Bash", json!({ "command": c })))
        .collect();
    let (out, frames) = run(
        ws.path(),
        home.path(),
        &calls,
        &["--disallowedTools", "Bash(rm:*)", "--allowedTools", "Bash"],
    );
    assert!(out.status.success());
    for (i, (is_error, text)) in results(&frames).iter().enumerate() {
        assert!(is_error, "{}: {text}", commands[i]);
        assert!(text.contains("has been denied"), "{}: {text}", commands[i]);
    }
    assert!(ws.path().join("notes.txt").exists(), "the file was removed");
}

#[test]
fn headless_default_mode_denies_what_needs_approval_with_claude_codes_text() {
    let (ws, home) = workspace();
    let calls = vec![
        ("Write", json!({"file_path": "new.txt", "content": "x"})),
        ("Bash", json!({"command": "touch made-by-bash"})),
        ("Bash", json!({"command": "ls"})),
    ];
    // Without the sandbox, commands that change things ask (and nobody answers in -p).
    let (out, frames) = run(ws.path(), home.path(), &calls, &["--sandbox", "off"]);
    assert!(out.status.success());
    let res = results(&frames);
    let new = std::fs::canonicalize(ws.path()).unwrap().join("new.txt");
    assert_eq!(
        res[0],
        (
            true,
            format!(
                "Claude requested permissions to write to {}, but you haven't granted it yet.",
                new.display()
            )
        )
    );
    assert_eq!(
        res[1],
        (
            true,
            "Claude requested permissions to use Bash, but you haven't granted it yet.".into()
        )
    );
    assert!(!res[2].0, "ls is read-only: {:?}", res[2]);
    assert!(!new.exists() && !ws.path().join("made-by-bash").exists());
    let denials = &result_frame(&frames)["permission_denials"];
    assert_eq!(denials.as_array().unwrap().len(), 2, "{denials}");
    assert_eq!(denials[0]["tool_name"], "Write");
    assert_eq!(denials[0]["tool_use_id"], "toolu_00");
    assert_eq!(denials[0]["tool_input"]["file_path"], "new.txt");
}

#[test]
fn modes_from_the_command_line() {
    let (ws, home) = workspace();
    let calls = vec![
        ("Write", json!({"file_path": "new.txt", "content": "x"})),
        ("Bash", json!({"command": "mkdir made"})),
        ("Write", json!({"file_path": ".git/config", "content": "x"})),
    ];
    let (_, frames) = run(
        ws.path(),
        home.path(),
        &calls,
        &["--permission-mode", "acceptEdits"],
    );
    let res = results(&frames);
    assert!(!res[0].0 && !res[1].0, "{res:?}");
    assert!(res[2].0, "protected path: {:?}", res[2]);
    assert!(ws.path().join("new.txt").exists() && ws.path().join("made").is_dir());

    let (ws, home) = workspace();
    let (_, frames) = run(
        ws.path(),
        home.path(),
        &calls,
        &["--permission-mode", "plan"],
    );
    let res = results(&frames);
    assert!(res.iter().all(|r| r.0), "{res:?}");
    assert!(res[0].1.contains("plan mode"), "{:?}", res[0]);
    assert!(!ws.path().join("new.txt").exists());

    let out = skiff(home.path())
        .args(["-p", "x", "--permission-mode", "yolo"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("yolo") && err.contains("acceptEdits"), "{err}");
}

#[test]
fn project_rules_with_anchors_apply() {
    let (ws, home) = workspace();
    std::fs::create_dir(ws.path().join(".claude")).unwrap();
    std::fs::write(
        ws.path().join(".claude/settings.json"),
        json!({"permissions": {"deny": ["Read(/sub/**)", "Edit(*.lock)"]}}).to_string(),
    )
    .unwrap();
    std::fs::write(ws.path().join("sub/data"), "private").unwrap();
    let calls = vec![
        ("Read", json!({"file_path": "sub/data"})),
        (
            "Write",
            json!({"file_path": "deep/Cargo.lock", "content": "x"}),
        ),
    ];
    let (_, frames) = run(
        ws.path(),
        home.path(),
        &calls,
        &["--permission-mode", "acceptEdits"],
    );
    let res = results(&frames);
    assert!(res[0].0 && !res[0].1.contains("private"), "{:?}", res[0]);
    assert!(res[1].0, "{:?}", res[1]);
    assert!(!ws.path().join("deep/Cargo.lock").exists());
}

#[test]
fn tool_names_match_case_insensitively_and_unknown_ones_are_usage_errors() {
    let (ws, home) = workspace();
    let out = skiff(home.path())
        .current_dir(ws.path())
        .args(["-p", "x", "--tools", "Bogus"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("Bogus") && err.contains("Bash, Edit"), "{err}");

    // `--script` alone means the scripted provider; `bash,read` are Bash and Read; a call of
    // `bash` is told the right name.
    let script = script(home.path(), &[("bash", json!({"command": "ls"}))]);
    let out = skiff(home.path())
        .current_dir(ws.path())
        .args([
            "-p",
            "go",
            "--output-format",
            "stream-json",
            "--verbose",
            "--tools",
            "bash,read",
        ])
        .arg("--script")
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let frames: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let init = frames.iter().find(|f| f["subtype"] == "init").unwrap();
    assert_eq!(init["tools"], json!(["Bash", "Read"]));
    let res = results(&frames);
    assert!(
        res[0].0 && res[0].1.contains("Did you mean Bash?"),
        "{res:?}"
    );
}

#[test]
fn usage_errors_exit_2_and_name_what_is_wrong() {
    let (ws, home) = workspace();
    let script = script(home.path(), &[]);
    let cases: &[(&[&str], &str)] = &[
        (&["--session-id", "not-a-uuid"], "UUID"),
        (&["--cwd", "/etc/passwd"], "not a directory"),
        (&["--cwd", "/no/such/dir"], "/no/such/dir"),
        (&["--add-dir", "/no/such/extra"], "/no/such/extra"),
        (&["--output-format", "stream-json"], "--verbose"),
        (&["--permission-mode", "yolo"], "yolo"),
    ];
    for (flags, needle) in cases {
        let out = skiff(home.path())
            .current_dir(ws.path())
            .args(["-p", "x", "--script"])
            .arg(&script)
            .args(*flags)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {err}");
        assert!(err.contains(needle), "{flags:?}: {err}");
    }
}

#[test]
fn sandboxed_commands_run_without_approval_and_cannot_keep_hooks_or_settings() {
    let (ws, home) = workspace();
    std::fs::create_dir_all(ws.path().join(".git/hooks")).unwrap();
    std::fs::write(ws.path().join(".git/config"), "[core]\n\tbare = false\n").unwrap();
    let planted = "touch made-by-bash && mkdir -p .claude && echo '{\"hooks\": {}}' > .claude/settings.json && echo evil > .git/hooks/pre-commit && printf '[core]\\n\\tfsmonitor = ./evil\\n' >> .git/config";
    let calls = vec![
        ("Bash", json!({"command": planted})),
        (
            "Bash",
            json!({"command": "git config user.name Someone 2>/dev/null || printf '[user]\\n\\tname = Someone\\n' >> .git/config"}),
        ),
    ];
    let (out, frames) = run(ws.path(), home.path(), &calls, &[]);
    assert!(out.status.success());
    let init = frames.iter().find(|f| f["subtype"] == "init").unwrap();
    if init["sandbox"]["enforced"] != true {
        eprintln!("skipped: no Landlock here ({})", init["sandbox"]);
        return;
    }
    let res = results(&frames);
    // It ran without approval, inside the sandbox: git hooks and config are read-only there,
    // and the agent settings it created were moved away when it ended.
    assert!(
        !res[0].1.contains("requested permissions"),
        "not run: {:?}",
        res[0]
    );
    assert!(ws.path().join("made-by-bash").exists());
    assert!(
        res[0].1.contains("Read-only file system") && res[0].1.contains("skiff undid that"),
        "{}",
        res[0].1
    );
    assert!(!ws.path().join(".claude/settings.json").exists());
    assert!(!ws.path().join(".git/hooks/pre-commit").exists());
    let config = std::fs::read_to_string(ws.path().join(".git/config")).unwrap();
    assert!(!config.contains("fsmonitor"), "{config}");
    // Even a harmless config change cannot be made from a command that runs without asking.
    assert!(!config.contains("Someone"), "{config}");
}
