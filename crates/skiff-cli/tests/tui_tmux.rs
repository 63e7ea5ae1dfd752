//! The terminal UI end to end: the real binary in a tmux pane (send-keys, capture-pane)
//! against the mock model server. tmux is the terminal here, so these tests see what a user
//! sees: a long paragraph shown before its newline, Esc interrupting a running tool, Shift+Tab
//! changing the mode in the status line, the approval menu, `@` completion, a rewind, and a
//! finished answer in the scrollback exactly once.
//!
//! They need tmux: without it they are skipped with a message, except in CI, where `.ci/run`
//! installs tmux and sets `SKIFF_REQUIRE_TMUX=1`, and a missing tmux fails them.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use skiff_protocol::script::ScriptTurn;
use skiff_testkit::MockServer;

/// How long to wait for the screen to show something.
const WAIT: Duration = Duration::from_secs(30);

/// Whether tmux can run here; fails when CI requires it.
fn tmux_available() -> bool {
    let found = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        if std::env::var("SKIFF_REQUIRE_TMUX").is_ok_and(|v| v == "1") {
            panic!("tmux is required (SKIFF_REQUIRE_TMUX=1) but was not found on PATH");
        }
        eprintln!("skipping: tmux is not installed (CI installs it and sets SKIFF_REQUIRE_TMUX=1)");
    }
    found
}

/// skiff running in a pane of a private tmux server.
struct Pane {
    socket: PathBuf,
    /// skiff's home (its log, shown when a test fails).
    home: PathBuf,
    _dir: tempfile::TempDir,
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

impl Pane {
    /// Start skiff (with `args`) in a `cols`×`rows` pane, in workspace `ws`.
    fn start(url: &str, home: &Path, ws: &Path, args: &[&str], cols: u16, rows: u16) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("tmux.sock");
        let mut command = vec![
            "env".to_owned(),
            "-i".to_owned(),
            format!("PATH={}", std::env::var("PATH").unwrap_or_default()),
            format!("HOME={}", home.display()),
            format!("SKIFF_HOME={}", home.join(".skiff").display()),
            "TERM=screen-256color".to_owned(),
            "ANTHROPIC_API_KEY=sk-test".to_owned(),
            format!("ANTHROPIC_BASE_URL={url}"),
            // Approvals are under test; the sandbox has its own tests.
            "SKIFF_SANDBOX=off".to_owned(),
            format!(
                "SKIFF_LOG={}",
                std::env::var("SKIFF_LOG").unwrap_or_default()
            ),
            env!("CARGO_BIN_EXE_skiff").to_owned(),
        ];
        command.extend(args.iter().map(|a| (*a).to_owned()));
        let line = command
            .iter()
            .map(|a| quote(a))
            .collect::<Vec<_>>()
            .join(" ");
        let status = Command::new("tmux")
            .arg("-S")
            .arg(&socket)
            .args(["-f", "/dev/null", "new-session", "-d", "-s", "t"])
            .args(["-x", &cols.to_string(), "-y", &rows.to_string()])
            .arg("-c")
            .arg(ws)
            .arg(line)
            .args([";", "set-option", "-t", "t", "remain-on-exit", "on"])
            .args([";", "set-option", "-t", "t", "history-limit", "10000"])
            .status()
            .unwrap();
        assert!(status.success(), "tmux new-session failed");
        Self {
            socket,
            home: home.to_path_buf(),
            _dir: dir,
        }
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Send tmux key names (`Enter`, `Escape`, `BTab`, `C-c`).
    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    /// Type text literally.
    fn type_text(&self, text: &str) {
        self.tmux(&["send-keys", "-t", "t", "-l", text]);
    }

    /// The visible screen.
    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "t"])
    }

    /// The scrollback and the screen, wrapped lines joined.
    fn everything(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-J", "-t", "t", "-S", "-"])
    }

    /// Wait until the screen satisfies `pred`; the screen then.
    fn wait(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if pred(&screen) {
                return screen;
            }
            if start.elapsed() > WAIT {
                panic!(
                    "timed out waiting for {what}; the screen:\n{screen}\n---\n{}",
                    self.everything()
                );
            }
            std::thread::sleep(Duration::from_millis(40));
        }
    }

    fn wait_for(&self, text: &str) -> String {
        self.wait(text, |s| s.contains(text))
    }

    /// Whether skiff has exited (and with which status).
    fn exit_status(&self) -> Option<i32> {
        let out = self.tmux(&[
            "display-message",
            "-p",
            "-t",
            "t",
            "#{pane_dead}:#{pane_dead_status}:#{pane_dead_signal}",
        ]);
        // tmux marks the pane dead when its terminal closes, and knows the exit status once
        // it has reaped the process (which can take it long): until then the status is read
        // from the exited process itself.
        let mut parts = out.trim().split(':');
        if parts.next() != Some("1") {
            return self.zombie_status();
        }
        match (parts.next(), parts.next()) {
            (Some(status), _) if !status.is_empty() => status.parse().ok(),
            (_, Some(signal)) if !signal.is_empty() => {
                panic!(
                    "skiff was killed by signal {signal}:\n{}",
                    self.everything()
                )
            }
            _ => self.zombie_status(),
        }
    }

    /// The exit status of skiff when it has exited but tmux has not reaped it yet (seen to
    /// take tmux more than 30 s on a loaded machine): a zombie's status is in its `stat`.
    fn zombie_status(&self) -> Option<i32> {
        let pid = self.tmux(&["display-message", "-p", "-t", "t", "#{pane_pid}"]);
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).ok()?;
        let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
        // Field 3 is the state; field 52, the exit code as waitpid reports it.
        if fields.first() != Some(&"Z") {
            return None;
        }
        let raw: i32 = fields.last()?.parse().ok()?;
        if raw & 0x7f != 0 {
            panic!(
                "skiff was killed by signal {}:\n{}",
                raw & 0x7f,
                self.everything()
            );
        }
        Some((raw >> 8) & 0xff)
    }

    /// skiff's log (with `SKIFF_LOG` set for the test run).
    fn log(&self) -> String {
        let dir = self.home.join(".skiff/logs");
        let mut out = String::new();
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            out.push_str(&std::fs::read_to_string(entry.path()).unwrap_or_default());
        }
        out
    }

    fn wait_exit(&self) -> i32 {
        let start = Instant::now();
        loop {
            if let Some(code) = self.exit_status() {
                return code;
            }
            if start.elapsed() > WAIT {
                panic!(
                    "skiff did not exit; the screen:\n{}\n---\nits log:\n{}",
                    self.screen(),
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(40));
        }
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}

/// The prompts of a recorded request, in order.
fn prompts(body: &serde_json::Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .flat_map(|m| match &m["content"] {
            serde_json::Value::String(s) => vec![s.clone()],
            serde_json::Value::Array(blocks) => blocks
                .iter()
                .filter(|b| b["type"] == "text")
                .filter_map(|b| b["text"].as_str().map(str::to_owned))
                .filter(|t| !t.starts_with("<system-reminder>"))
                .collect(),
            _ => Vec::new(),
        })
        .collect()
}

struct Dirs {
    home: tempfile::TempDir,
    ws: tempfile::TempDir,
}

fn dirs() -> Dirs {
    Dirs {
        home: tempfile::tempdir().unwrap(),
        ws: tempfile::tempdir().unwrap(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_paragraph_is_shown_as_it_streams_and_committed_once() {
    if !tmux_available() {
        return;
    }
    let words: Vec<String> = (0..400).map(|i| format!("w{i}")).collect();
    let paragraph = words.join(" ");
    let mut turn = ScriptTurn::text(format!("{paragraph}\n\nThe end."));
    turn.chunk_chars = Some(16);
    turn.delay_between_deltas_ms = Some(15);
    let server = MockServer::builder().turn(turn).start().await.unwrap();
    let d = dirs();
    let url = server.url();
    tokio::task::spawn_blocking(move || {
        let p = Pane::start(&url, d.home.path(), d.ws.path(), &[], 100, 30);
        p.wait_for("shift+tab");
        p.type_text("write a long paragraph");
        p.keys(&["Enter"]);
        // Words show up while the paragraph (one line, no newline yet) is still streaming.
        let screen = p.wait("the first words", |s| s.contains("w20 "));
        assert!(screen.contains("esc to interrupt"), "{screen}");
        assert!(!screen.contains("w399"), "{screen}");
        p.wait_for("The end.");
        p.wait("the turn to end", |s| s.contains("session ·"));
        let all = p.everything();
        assert_eq!(all.matches("w123 ").count(), 1, "committed once:\n{all}");
        assert_eq!(all.matches("The end.").count(), 1, "{all}");
        assert_eq!(all.matches("write a long paragraph").count(), 1, "{all}");
        p.keys(&["C-d"]);
        assert_eq!(p.wait_exit(), 0);
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn esc_interrupts_a_running_tool_and_the_next_prompt_works() {
    if !tmux_available() {
        return;
    }
    let server = MockServer::builder()
        .turn(ScriptTurn::tool_use("Bash", json!({"command": "sleep 30"})))
        .turn(ScriptTurn::text("answer after the interrupt"))
        .start()
        .await
        .unwrap();
    let d = dirs();
    let url = server.url();
    tokio::task::spawn_blocking(move || {
        let p = Pane::start(
            &url,
            d.home.path(),
            d.ws.path(),
            &["--dangerously-skip-permissions"],
            100,
            30,
        );
        p.wait_for("shift+tab");
        p.type_text("sleep a while");
        p.keys(&["Enter"]);
        p.wait_for("Bash(sleep 30)");
        p.keys(&["Escape"]);
        p.wait("the interrupt", |s| {
            s.contains("nterrupted") && !s.contains("esc to interrupt")
        });
        p.type_text("go on");
        p.keys(&["Enter"]);
        p.wait_for("answer after the interrupt");
        p.keys(&["C-c"]);
        p.keys(&["C-c"]);
        assert_eq!(p.wait_exit(), 0);
    })
    .await
    .unwrap();
    let reqs = server.messages_requests();
    assert_eq!(reqs.len(), 2);
    let req: skiff_protocol::MessagesRequest =
        serde_json::from_value(reqs[1].body.clone()).unwrap();
    skiff_protocol::validate_history(&req.messages).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shift_tab_shows_the_new_mode_in_the_status_line() {
    if !tmux_available() {
        return;
    }
    let server = MockServer::builder()
        .turn(ScriptTurn::text("ok"))
        .start()
        .await
        .unwrap();
    let d = dirs();
    let url = server.url();
    tokio::task::spawn_blocking(move || {
        let p = Pane::start(&url, d.home.path(), d.ws.path(), &[], 100, 30);
        p.wait_for("default mode");
        p.keys(&["BTab"]);
        p.wait_for("accept edits");
        p.keys(&["BTab"]);
        p.wait_for("plan mode");
        p.keys(&["BTab"]);
        p.wait_for("default mode");
        p.keys(&["C-d"]);
        assert_eq!(p.wait_exit(), 0);
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_approval_menu_answers_yes_always_and_no_with_feedback() {
    if !tmux_available() {
        return;
    }
    let d = dirs();
    std::fs::write(
        d.ws.path().join("notes.txt"),
        (1..=9).map(|i| format!("line {i}\n")).collect::<String>(),
    )
    .unwrap();
    let server = MockServer::builder()
        .turn(ScriptTurn::tool_use(
            "Bash",
            json!({"command": "touch one"}),
        ))
        .turn(ScriptTurn::tool_use(
            "Bash",
            json!({"command": "touch two"}),
        ))
        .turn(ScriptTurn::tool_use(
            "Bash",
            json!({"command": "touch two"}),
        ))
        // Edit needs the file read first.
        .turn(ScriptTurn::tool_use(
            "Read",
            json!({"file_path": "notes.txt"}),
        ))
        .turn(ScriptTurn::tool_use(
            "Edit",
            json!({"file_path": "notes.txt", "old_string": "line 7", "new_string": "line seven"}),
        ))
        .turn(ScriptTurn::text("all done"))
        .start()
        .await
        .unwrap();
    let url = server.url();
    let ws = d.ws.path().to_path_buf();
    let home = d.home.path().to_path_buf();
    tokio::task::spawn_blocking(move || {
        let p = Pane::start(&url, &home, &ws, &[], 100, 40);
        p.wait_for("shift+tab");
        p.type_text("make files");
        p.keys(&["Enter"]);
        p.wait_for("Do you want to proceed?");
        p.wait_for("touch one");
        p.keys(&["Enter"]);
        p.wait_for("don't ask again for Bash(touch two:*)");
        p.keys(&["a"]);
        // The same command again is not asked; the edit shows its diff with the file's line
        // numbers.
        let screen = p.wait_for("Edit file");
        assert!(screen.contains("7 -line 7"), "{screen}");
        assert!(screen.contains("7 +line seven"), "{screen}");
        assert!(!screen.contains("No newline"), "{screen}");
        p.keys(&["n"]);
        p.wait_for("Tell skiff what to do instead");
        p.type_text("put it in other.txt instead");
        p.keys(&["Enter"]);
        p.wait_for("all done");
        p.keys(&["C-d"]);
        assert_eq!(p.wait_exit(), 0);
    })
    .await
    .unwrap();
    assert!(d.ws.path().join("one").exists() && d.ws.path().join("two").exists());
    assert!(!d.ws.path().join("other.txt").exists());
    let local = std::fs::read_to_string(d.ws.path().join(".skiff/settings.local.json")).unwrap();
    assert!(local.contains("\"Bash(touch two:*)\""), "{local}");
    let reqs = server.messages_requests();
    assert_eq!(reqs.len(), 6);
    let last = reqs[5].body["messages"].to_string();
    assert!(
        last.contains("To tell you how to proceed, the user said:\\nput it in other.txt instead"),
        "{last}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_completes_workspace_files() {
    if !tmux_available() {
        return;
    }
    let d = dirs();
    std::fs::create_dir_all(d.ws.path().join("src")).unwrap();
    std::fs::write(d.ws.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(d.ws.path().join("README.md"), "hi\n").unwrap();
    std::fs::write(d.ws.path().join(".gitignore"), "ignored.rs\n").unwrap();
    std::fs::write(d.ws.path().join("ignored.rs"), "\n").unwrap();
    let server = MockServer::builder()
        .turn(ScriptTurn::text("read it"))
        .start()
        .await
        .unwrap();
    let url = server.url();
    tokio::task::spawn_blocking(move || {
        let p = Pane::start(&url, d.home.path(), d.ws.path(), &[], 100, 30);
        p.wait_for("shift+tab");
        p.type_text("look at @mainrs");
        p.wait_for("src/main.rs");
        p.keys(&["Tab"]);
        p.wait_for("look at @src/main.rs");
        p.type_text("please");
        p.keys(&["Enter"]);
        p.wait_for("read it");
        p.keys(&["C-d"]);
        assert_eq!(p.wait_exit(), 0);
    })
    .await
    .unwrap();
    let reqs = server.messages_requests();
    let prompts = prompts(&reqs[0].body);
    assert!(
        prompts
            .iter()
            .any(|p| p.contains("look at @src/main.rs please")),
        "{prompts:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn esc_esc_rewinds_the_conversation_and_the_files() {
    if !tmux_available() {
        return;
    }
    let server = MockServer::builder()
        .turn(ScriptTurn::tool_use(
            "Write",
            json!({"file_path": "a.txt", "content": "one\n"}),
        ))
        .turn(ScriptTurn::text("wrote one"))
        .turn(ScriptTurn::tool_use(
            "Edit",
            json!({"file_path": "a.txt", "old_string": "one", "new_string": "two"}),
        ))
        .turn(ScriptTurn::text("changed it to two"))
        .turn(ScriptTurn::text("fresh answer"))
        .start()
        .await
        .unwrap();
    let d = dirs();
    let url = server.url();
    let ws = d.ws.path().to_path_buf();
    tokio::task::spawn_blocking(move || {
        let p = Pane::start(
            &url,
            d.home.path(),
            &ws,
            &["--permission-mode", "acceptEdits"],
            100,
            40,
        );
        p.wait_for("shift+tab");
        p.type_text("first: write one");
        p.keys(&["Enter"]);
        p.wait_for("wrote one");
        p.type_text("second: make it two");
        p.keys(&["Enter"]);
        p.wait_for("changed it to two");
        assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "two\n");
        p.wait("the turn to end", |s| !s.contains("esc to interrupt"));
        // Two presses as a hand makes them: the second once the first has been seen (two
        // Escs in one read of the terminal are one key to crossterm).
        p.keys(&["Escape"]);
        p.wait_for("Esc again to rewind");
        p.keys(&["Escape"]);
        p.wait_for("Rewind the conversation");
        // The newest message is selected: go back to before it.
        p.keys(&["Enter"]);
        p.wait_for("Rewound to before");
        p.wait_for("› second: make it two");
        assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "one\n");
        // The prompt is back in the composer: send something else instead.
        p.keys(&["C-u"]);
        p.type_text("something else");
        p.keys(&["Enter"]);
        p.wait_for("fresh answer");
        p.keys(&["C-d"]);
        assert_eq!(p.wait_exit(), 0);
    })
    .await
    .unwrap();
    let reqs = server.messages_requests();
    let last = prompts(&reqs.last().unwrap().body);
    assert!(
        last.iter().any(|p| p.contains("first: write one")),
        "{last:?}"
    );
    assert!(!last.iter().any(|p| p.contains("second")), "{last:?}");
    assert!(
        last.iter().any(|p| p.contains("something else")),
        "{last:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resize_and_many_turns_commit_each_answer_once() {
    if !tmux_available() {
        return;
    }
    let turns: Vec<ScriptTurn> = (0..12)
        .map(|i| ScriptTurn::text(format!("answer number {i} with some words to wrap around")))
        .collect();
    let server = MockServer::builder().turns(turns).start().await.unwrap();
    let d = dirs();
    let url = server.url();
    tokio::task::spawn_blocking(move || {
        let p = Pane::start(&url, d.home.path(), d.ws.path(), &[], 80, 20);
        p.wait_for("shift+tab");
        for i in 0..12 {
            if i == 6 {
                p.tmux(&["resize-window", "-t", "t", "-x", "44", "-y", "16"]);
            }
            p.type_text(&format!("question {i}"));
            p.keys(&["Enter"]);
            p.wait_for(&format!("answer number {i} "));
            p.wait("the turn to end", |s| !s.contains("esc to interrupt"));
        }
        let all = p.everything();
        for i in 0..12 {
            assert_eq!(
                all.matches(&format!("answer number {i} ")).count(),
                1,
                "answer {i}:\n{all}"
            );
        }
        p.keys(&["C-d"]);
        assert_eq!(p.wait_exit(), 0);
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plugin_commands_run_in_the_terminal_ui() {
    if !tmux_available() {
        return;
    }
    let server = MockServer::builder()
        .turn(ScriptTurn::text("ok"))
        .start()
        .await
        .unwrap();
    let d = dirs();
    let mkt = d.home.path().join("mkt");
    let w = |rel: &str, text: &str| {
        let p = mkt.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    w(
        ".claude-plugin/marketplace.json",
        r#"{"name": "m", "owner": {"name": "t"}, "plugins": [{"name": "demo", "source": "./demo"}]}"#,
    );
    w(
        "demo/.claude-plugin/plugin.json",
        r#"{"name": "demo", "version": "0.1.0"}"#,
    );
    w("demo/commands/hello.md", "Hello");
    let url = server.url();
    let home = d.home.path().to_path_buf();
    tokio::task::spawn_blocking(move || {
        let p = Pane::start(&url, d.home.path(), d.ws.path(), &[], 120, 40);
        p.wait_for("default mode");
        p.type_text(&format!("/plugin marketplace add {}", mkt.display()));
        p.keys(&["Enter"]);
        p.wait_for("Added marketplace \"m\" (1 plugin)");
        // Without --yes: what it adds, and how to install it.
        p.type_text("/plugin install demo@m");
        p.keys(&["Enter"]);
        p.wait_for("/plugin install demo@m --yes");
        assert!(p.everything().contains("commands     /demo:hello"));
        assert!(!home.join(".skiff/plugins/cache").exists());
        p.type_text("/plugin install demo@m --yes");
        p.keys(&["Enter"]);
        p.wait_for("Installed demo@m 0.1.0");
        p.type_text("/plugin list");
        p.keys(&["Enter"]);
        p.wait_for("demo@m  0.1.0  local copy  enabled");
        p.keys(&["C-d"]);
        assert_eq!(p.wait_exit(), 0);
    })
    .await
    .unwrap();
}
