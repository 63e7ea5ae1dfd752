//! A hostile repository, tried from the command line: memory files that are symlinks out of
//! the workspace, broken settings files, `$ARGUMENTS` in a command's `!` expansions, a
//! workspace reached through a symlink, and a directory swapped for a symlink while Write runs.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::{Value, json};
use skiff_protocol::script::ScriptTurn;
use skiff_testkit::MockServer;

/// skiff in `ws` with a clean environment, a private home and the mock model server.
fn skiff(home: &Path, ws: &Path, server: &MockServer) -> Command {
    let mut c = Command::cargo_bin("skiff").unwrap();
    c.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("SKIFF_HOME", home.join(".skiff"))
        .env("SKIFF_SANDBOX", "off")
        .env("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
        .env("ANTHROPIC_BASE_URL", server.url())
        .current_dir(ws);
    c
}

/// Everything the model was sent, as one string.
fn sent(server: &MockServer) -> String {
    server
        .messages_requests()
        .iter()
        .map(|r| r.body.to_string())
        .collect()
}

async fn text_server(turns: usize) -> MockServer {
    MockServer::builder()
        .turns((0..turns).map(|_| ScriptTurn::text("done")))
        .start()
        .await
        .unwrap()
}

fn symlink(target: impl AsRef<Path>, link: impl AsRef<Path>) {
    std::os::unix::fs::symlink(target, link).unwrap();
}

/// A directory with `ws/` (the workspace), `home/`, and a secret outside the workspace.
struct Layout {
    _tmp: tempfile::TempDir,
    base: PathBuf,
}

impl Layout {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir_all(base.join("ws/.claude/rules")).unwrap();
        std::fs::create_dir_all(base.join("home/.ssh")).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        std::fs::write(base.join("outside/notes.md"), "OUTSIDE-SECRET-NOTES").unwrap();
        std::fs::write(base.join("home/.ssh/id_rsa"), "PRIVATE-KEY-MATERIAL").unwrap();
        Self { _tmp: tmp, base }
    }
    fn ws(&self) -> PathBuf {
        self.base.join("ws")
    }
    fn home(&self) -> PathBuf {
        self.base.join("home")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_files_that_link_out_of_an_untrusted_workspace_are_not_read() {
    let l = Layout::new();
    let ws = l.ws();
    symlink(l.base.join("outside/notes.md"), ws.join("CLAUDE.md"));
    symlink(l.home().join(".ssh/id_rsa"), ws.join("CLAUDE.local.md"));
    symlink("/proc/self/environ", ws.join(".claude/rules/env.md"));
    symlink("../../../outside/notes.md", ws.join(".claude/rules/up.md"));
    std::fs::write(ws.join(".claude/rules/fine.md"), "RULE-INSIDE").unwrap();
    // A link that stays inside is followed as before.
    std::fs::write(ws.join("real-agents.md"), "AGENTS-INSIDE").unwrap();
    let server = text_server(1).await;
    let out = skiff(&l.home(), &ws, &server)
        .env("LEAKED_VARIABLE", "ENVIRON-SECRET")
        .args(["-p", "hi"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let body = sent(&server);
    for secret in [
        "OUTSIDE-SECRET-NOTES",
        "PRIVATE-KEY-MATERIAL",
        "ENVIRON-SECRET",
    ] {
        assert!(!body.contains(secret), "{secret} was sent:\n{body}");
    }
    assert!(body.contains("RULE-INSIDE"), "{body}");
    for name in ["CLAUDE.md", "CLAUDE.local.md", "env.md", "up.md"] {
        assert!(
            err.lines()
                .any(|l| l.starts_with("Warning:") && l.contains(name)),
            "no warning for {name}:\n{err}"
        );
    }

    // AGENTS.md as a symlink to a file of the workspace still loads (no CLAUDE.md now).
    std::fs::remove_file(ws.join("CLAUDE.md")).unwrap();
    symlink("real-agents.md", ws.join("AGENTS.md"));
    let server = text_server(1).await;
    let out = skiff(&l.home(), &ws, &server)
        .args(["-p", "hi"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(sent(&server).contains("AGENTS-INSIDE"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trusted_workspace_follows_memory_links_but_never_into_proc() {
    let l = Layout::new();
    let ws = l.ws();
    symlink(l.base.join("outside/notes.md"), ws.join("CLAUDE.md"));
    symlink("/proc/self/environ", ws.join("CLAUDE.local.md"));
    let server = text_server(1).await;
    let out = skiff(&l.home(), &ws, &server)
        .env("LEAKED_VARIABLE", "ENVIRON-SECRET")
        .args(["-p", "hi", "--trust"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let body = sent(&server);
    assert!(body.contains("OUTSIDE-SECRET-NOTES"), "{body}");
    assert!(!body.contains("ENVIRON-SECRET"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_settings_of_an_untrusted_workspace_are_skipped_with_a_warning() {
    let l = Layout::new();
    let ws = l.ws();
    std::fs::write(ws.join(".claude/settings.json"), "{ this is not json").unwrap();
    std::fs::create_dir_all(ws.join(".skiff")).unwrap();
    std::fs::write(
        ws.join(".skiff/settings.json"),
        r#"{"model": 42, "permissions": {"defaultMode": "nonsense"}}"#,
    )
    .unwrap();
    std::fs::write(
        ws.join(".claude/settings.local.json"),
        r#"{"skiff": {"maxTurns": "many"}}"#,
    )
    .unwrap();
    let server = text_server(1).await;
    let out = skiff(&l.home(), &ws, &server)
        .args(["-p", "hi"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "done");
    for file in [
        ".claude/settings.json",
        ".skiff/settings.json",
        ".claude/settings.local.json",
    ] {
        assert!(
            err.lines()
                .any(|l| l.starts_with("Warning:") && l.contains(file) && l.contains("skipped")),
            "no warning for {file}:\n{err}"
        );
    }

    // The same files in a trusted workspace are the user's own: an error, as before.
    let server = text_server(1).await;
    let out = skiff(&l.home(), &ws, &server)
        .args(["-p", "hi", "--trust"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("settings.json"));

    // A settings file that is a FIFO does not hang an untrusted start.
    std::fs::remove_file(ws.join(".claude/settings.json")).unwrap();
    nix::unistd::mkfifo(
        &ws.join(".claude/settings.json"),
        nix::sys::stat::Mode::from_bits_truncate(0o600),
    )
    .unwrap();
    let server = text_server(1).await;
    skiff(&l.home(), &ws, &server)
        .args(["-p", "hi"])
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .success();
}

/// A command whose `!` expansion uses `$ARGUMENTS`, invoked with arguments that try to run
/// their own command: they stay words of the command line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_in_bang_expansions_are_quoted() {
    let l = Layout::new();
    let ws = l.ws();
    std::fs::create_dir_all(ws.join(".claude/commands")).unwrap();
    std::fs::write(
        ws.join(".claude/commands/show.md"),
        "---\nallowed-tools: Bash\n---\nWords: !`printf '[%s]' $ARGUMENTS`\nQuoted: !`printf '[%s]' \"$ARGUMENTS\"`\nFirst: !`printf '[%s]' $0`\nPlain text: $ARGUMENTS\n",
    )
    .unwrap();
    let server = text_server(1).await;
    let marker = ws.join("pwned");
    let hostile = "a; touch pwned $(touch pwned) `touch pwned` \"b c\"";
    // The repository is trusted (its command is the user's own); the arguments are not.
    let out = skiff(&l.home(), &ws, &server)
        .args(["--trust", "-p", &format!("/show {hostile}")])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!marker.exists(), "the arguments ran a command");
    let body = sent(&server);
    // Each argument is one word (shell-split as typed), nothing of it ran.
    assert!(
        body.contains("Words: [a;][touch][pwned][$(touch][pwned)][`touch][pwned`][b c]"),
        "{body}"
    );
    assert!(
        body.contains("Quoted: [a; touch pwned $(touch pwned) `touch pwned` \\\"b c\\\"]"),
        "{body}"
    );
    assert!(body.contains("First: [a;]"), "{body}");
    // Outside `!` commands the text is as typed.
    assert!(body.contains(&format!("Plain text: {hostile}").replace('"', "\\\"")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspace_started_through_a_symlink_accepts_both_spellings() {
    let l = Layout::new();
    let ws = l.ws();
    std::fs::write(ws.join("file.txt"), "hello through the link").unwrap();
    let link = l.base.join("ws_link");
    symlink(&ws, &link);
    let server = MockServer::builder()
        .turn(ScriptTurn::tool_use(
            "Read",
            json!({"file_path": link.join("file.txt")}),
        ))
        .turn(ScriptTurn::tool_use(
            "Read",
            json!({"file_path": ws.join("file.txt")}),
        ))
        .turn(ScriptTurn::text("done"))
        .start()
        .await
        .unwrap();
    let out = skiff(&l.home(), &link, &server)
        .env("PWD", &link)
        .args([
            "-p",
            "read it",
            "--output-format",
            "stream-json",
            "--verbose",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let results: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "user")
        .collect();
    assert_eq!(results.len(), 2, "{results:#?}");
    for r in &results {
        let text = r.to_string();
        assert!(text.contains("hello through the link"), "{text}");
        assert!(!text.contains("outside the workspace"), "{text}");
    }
    // `--cwd ws_link` too.
    let server = MockServer::builder()
        .turn(ScriptTurn::tool_use(
            "Read",
            json!({"file_path": link.join("file.txt")}),
        ))
        .turn(ScriptTurn::text("done"))
        .start()
        .await
        .unwrap();
    let out = skiff(&l.home(), &l.base, &server)
        .arg("--cwd")
        .arg(&link)
        .args([
            "-p",
            "read it",
            "--output-format",
            "stream-json",
            "--verbose",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("hello through the link"));
    // Another link to somewhere else stays outside.
    let elsewhere = l.base.join("elsewhere");
    symlink(l.base.join("outside"), &elsewhere);
    let server = MockServer::builder()
        .turn(ScriptTurn::tool_use(
            "Read",
            json!({"file_path": elsewhere.join("notes.md")}),
        ))
        .turn(ScriptTurn::text("done"))
        .start()
        .await
        .unwrap();
    let out = skiff(&l.home(), &link, &server)
        .env("PWD", &link)
        .args([
            "-p",
            "read it",
            "--output-format",
            "stream-json",
            "--verbose",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("OUTSIDE-SECRET-NOTES"), "{stdout}");
    assert!(stdout.contains("outside the workspace"), "{stdout}");
}

/// Writes into `ws/sub` while another thread keeps swapping `ws/sub` for a symlink to a
/// directory outside: nothing of the model's content may land outside, temp file or final.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_never_leaves_content_outside_when_a_directory_is_swapped_for_a_symlink() {
    let l = Layout::new();
    let ws = l.ws();
    let sub = ws.join("sub");
    let parked = ws.join("sub.real");
    std::fs::create_dir_all(&sub).unwrap();
    let outside = l.base.join("outside");
    const WRITES: usize = 40;
    let mut turns: Vec<ScriptTurn> = (0..WRITES)
        .map(|i| {
            ScriptTurn::tool_use(
                "Write",
                json!({"file_path": sub.join(format!("f{i}.txt")), "content": "MODEL-CONTENT"}),
            )
        })
        .collect();
    turns.push(ScriptTurn::text("done"));
    let server = MockServer::builder().turns(turns).start().await.unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = {
        let (stop, sub, parked, outside) =
            (stop.clone(), sub.clone(), parked.clone(), outside.clone());
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                // Directory → symlink to outside → directory again.
                if std::fs::rename(&sub, &parked).is_ok() {
                    let _ = std::os::unix::fs::symlink(&outside, &sub);
                    std::thread::yield_now();
                    let _ = std::fs::remove_file(&sub);
                    let _ = std::fs::rename(&parked, &sub);
                }
                std::thread::yield_now();
            }
        })
    };
    let out = skiff(&l.home(), &ws, &server)
        .args(["-p", "write", "--permission-mode", "acceptEdits"])
        .output()
        .unwrap();
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    swapper.join().unwrap();
    assert!(out.status.success());
    for entry in std::fs::read_dir(&outside).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        assert_eq!(name, "notes.md", "{name} was left outside the workspace");
    }
}
