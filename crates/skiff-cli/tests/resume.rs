//! Session transcripts and resume from the command line: `-p` writes a transcript,
//! `--continue`/`--resume` replay it to the model, `--fork-session`, `--no-session-persistence`,
//! a session killed with SIGKILL in the middle of a tool run, and a half-written last line.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skiff_core::transcript::{load_session, session_path, tool_results_dir};
use skiff_protocol::script::{ScriptBlock, ScriptTurn};
use skiff_protocol::{
    ContentBlock, Message, MessageContent, MessagesRequest, Role, ToolResultContent,
    validate_history,
};
use skiff_testkit::MockServer;

/// A temp HOME (with SKIFF_HOME inside) and a temp workspace.
struct Env {
    home: tempfile::TempDir,
    ws: tempfile::TempDir,
}

impl Env {
    fn new() -> Self {
        Self {
            home: tempfile::tempdir().unwrap(),
            ws: tempfile::tempdir().unwrap(),
        }
    }

    fn skiff_home(&self) -> PathBuf {
        self.home.path().join(".skiff")
    }

    /// The canonical workspace (what skiff escapes into the project directory name).
    fn ws(&self) -> PathBuf {
        std::fs::canonicalize(self.ws.path()).unwrap()
    }

    fn transcript(&self, sid: &str) -> PathBuf {
        session_path(&self.skiff_home(), &self.ws(), sid)
    }

    fn command(&self, url: &str) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_skiff"));
        c.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.home.path())
            .env("SKIFF_HOME", self.skiff_home())
            .env("ANTHROPIC_API_KEY", "sk-test")
            .env("ANTHROPIC_BASE_URL", url)
            .current_dir(self.ws.path())
            .stdin(Stdio::null());
        c
    }

    /// Run `skiff -p --output-format json ARGS` against the mock.
    async fn run(&self, server: &MockServer, args: &[&str]) -> Output {
        let mut c = self.command(&server.url());
        c.args(["-p", "--output-format", "json"]).args(args);
        tokio::task::spawn_blocking(move || c.output().unwrap())
            .await
            .unwrap()
    }
}

fn result_of(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "skiff failed: {}\nstdout: {}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn requests(server: &MockServer) -> Vec<MessagesRequest> {
    server
        .messages_requests()
        .iter()
        .map(|r| serde_json::from_value(r.body.clone()).unwrap())
        .collect()
}

/// The messages of a request without the prompt-caching marker (caching is on by default; the
/// marker turns a plain string into one text block, which is undone too).
fn messages_of(req: &MessagesRequest) -> Vec<Message> {
    let mut v = serde_json::to_value(&req.messages).unwrap();
    strip_cache_control(&mut v);
    let mut msgs: Vec<Message> = serde_json::from_value(v).unwrap();
    if let Some(last) = msgs.last_mut()
        && let MessageContent::Blocks(b) = &last.content
        && let [ContentBlock::Text(t)] = b.as_slice()
    {
        last.content = MessageContent::Text(t.text.clone());
    }
    msgs
}

fn strip_cache_control(v: &mut Value) {
    match v {
        Value::Object(o) => {
            o.remove("cache_control");
            o.values_mut().for_each(strip_cache_control);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_cache_control),
        _ => {}
    }
}

/// The transcript's lines without the `skiff_session` line each run starts with (how it was
/// set up; checked in `first_session`).
fn lines(path: &Path) -> Vec<Value> {
    all_lines(path)
        .into_iter()
        .filter(|l| l["subtype"] != "skiff_session")
        .collect()
}

/// The `parentUuid` of `line`, looking through the `skiff_session` line a resumed run puts
/// between its first message and the previous run's last one.
fn parent_of(path: &Path, line: &Value) -> Value {
    let all = all_lines(path);
    let mut parent = line["parentUuid"].clone();
    while let Some(p) = all
        .iter()
        .find(|l| l["uuid"] == parent && l["subtype"] == "skiff_session")
    {
        parent = p["parentUuid"].clone();
    }
    parent
}

fn all_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

async fn text_server(text: &str) -> MockServer {
    MockServer::builder()
        .turn(ScriptTurn::text(text))
        .start()
        .await
        .unwrap()
}

fn assistant_text(text: &str) -> Message {
    Message::blocks(Role::Assistant, vec![ContentBlock::text(text)])
}

/// One `-p` run; returns its session id after checking the transcript it wrote.
async fn first_session(env: &Env) -> String {
    let server = text_server("first answer").await;
    let r = result_of(&env.run(&server, &["first question"]).await);
    let sid = r["session_id"].as_str().unwrap().to_owned();
    let path = env.transcript(&sid);
    let written = lines(&path);
    let kinds: Vec<&str> = written
        .iter()
        .map(|l| l["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["user", "assistant"]);
    // The run's settings come first, in the chain (for `skiff replay`).
    let first = &all_lines(&path)[0];
    assert_eq!(first["type"], "system");
    assert_eq!(first["subtype"], "skiff_session");
    assert_eq!(first["settings"]["permissionMode"], "default");
    assert_eq!(written[0]["parentUuid"], first["uuid"]);
    assert_eq!(written[0]["message"]["content"], "first question");
    assert_eq!(written[1]["message"]["content"][0]["text"], "first answer");
    assert_eq!(written[0]["cwd"], env.ws().to_str().unwrap());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    sid
}

fn first_history() -> Vec<Message> {
    vec![
        Message::user_text("first question"),
        assistant_text("first answer"),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn print_writes_a_transcript_and_continue_replays_it() {
    let env = Env::new();
    let sid = first_session(&env).await;

    let server = text_server("second answer").await;
    let r = result_of(&env.run(&server, &["--continue", "second question"]).await);
    assert_eq!(r["session_id"], sid.as_str(), "resume keeps the session id");
    assert_eq!(r["result"], "second answer");
    let reqs = requests(&server);
    let mut expected = first_history();
    expected.push(Message::user_text("second question"));
    assert_eq!(messages_of(&reqs[0]), expected);

    // Appended to the same file, chained.
    let written = lines(&env.transcript(&sid));
    assert_eq!(written.len(), 4);
    assert_eq!(
        parent_of(&env.transcript(&sid), &written[2]),
        written[1]["uuid"]
    );
    assert_eq!(written[2]["message"]["content"], "second question");
    let files = std::fs::read_dir(env.transcript(&sid).parent().unwrap())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "jsonl")
        })
        .count();
    assert_eq!(files, 1);

    // -c works too, and sees all four messages.
    let server = text_server("third answer").await;
    result_of(&env.run(&server, &["-c", "third question"]).await);
    assert_eq!(messages_of(&requests(&server)[0]).len(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_by_id_replays_the_session() {
    let env = Env::new();
    let sid = first_session(&env).await;
    // A second, newer session: --resume must pick the one asked for, not the latest.
    let other = text_server("other").await;
    result_of(&env.run(&other, &["another question"]).await);

    for form in [
        vec!["--resume".to_owned(), sid.clone()],
        vec![format!("--resume={sid}")],
        vec!["-r".to_owned(), sid[..8].to_owned()], // a unique prefix
    ] {
        let server = text_server("resumed reply").await;
        let mut args: Vec<&str> = form.iter().map(String::as_str).collect();
        args.push("go on");
        let r = result_of(&env.run(&server, &args).await);
        assert_eq!(r["session_id"], sid.as_str());
        let msgs = messages_of(&requests(&server)[0]);
        validate_history(&msgs).unwrap();
        assert_eq!(msgs[..2], first_history()[..], "{form:?}");
        assert_eq!(msgs.last().unwrap().content.text(), "go on");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fork_session_continues_under_a_new_id() {
    let env = Env::new();
    let sid = first_session(&env).await;
    let before = std::fs::read_to_string(env.transcript(&sid)).unwrap();

    let server = text_server("forked reply").await;
    let r = result_of(
        &env.run(&server, &["--resume", &sid, "--fork-session", "fork it"])
            .await,
    );
    let new_sid = r["session_id"].as_str().unwrap().to_owned();
    assert_ne!(new_sid, sid);
    let mut expected = first_history();
    expected.push(Message::user_text("fork it"));
    assert_eq!(messages_of(&requests(&server)[0]), expected);
    assert_eq!(
        std::fs::read_to_string(env.transcript(&sid)).unwrap(),
        before,
        "the original session is untouched"
    );
    let forked = load_session(&env.transcript(&new_sid)).unwrap();
    expected.push(assistant_text("forked reply"));
    assert_eq!(forked.messages, expected);
    assert!(
        lines(&env.transcript(&new_sid))
            .iter()
            .all(|l| l["sessionId"] == new_sid.as_str())
    );

    // --session-id names the fork.
    let server = text_server("named fork").await;
    let named = "1f2e3d4c-0000-4000-8000-000000000001";
    let r = result_of(
        &env.run(
            &server,
            &[
                "--continue",
                "--fork-session",
                "--session-id",
                named,
                "again",
            ],
        )
        .await,
    );
    assert_eq!(r["session_id"], named);
    assert!(env.transcript(named).exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_session_persistence_writes_nothing() {
    let env = Env::new();
    let server = text_server("answer").await;
    result_of(
        &env.run(&server, &["--no-session-persistence", "question"])
            .await,
    );
    assert!(
        !env.skiff_home().join("projects").exists(),
        "nothing may be written under SKIFF_HOME/projects"
    );
    // And with nothing to continue, --continue says so.
    let server = text_server("x").await;
    let out = env.run(&server, &["--continue", "more"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("No conversation found"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_id_flag_names_a_new_session() {
    let env = Env::new();
    let sid = "2a7c1a3e-9f3b-4c1d-8e2f-0123456789ab";
    let server = text_server("hello").await;
    let r = result_of(&env.run(&server, &["--session-id", sid, "hi"]).await);
    assert_eq!(r["session_id"], sid);
    assert!(env.transcript(sid).exists());
    // Reusing it for a new session is refused; a bad id is refused.
    let server = text_server("x").await;
    let out = env.run(&server, &["--session-id", sid, "hi"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("already in use"));
    for bad in ["../../x", "not-a-uuid"] {
        let out = env.run(&server, &["--session-id", bad, "hi"]).await;
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("UUID"));
    }
    assert!(server.messages_requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_session_is_a_clear_error() {
    let env = Env::new();
    let server = text_server("never").await;
    let out = env
        .run(
            &server,
            &["--resume", "0000dead-beef-4000-8000-000000000000", "hi"],
        )
        .await;
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("No conversation found with session ID: 0000dead-beef-4000-8000-000000000000"),
        "{err}"
    );
    assert!(err.contains("skiff sessions"), "{err}");
    let out = env.run(&server, &["--resume", "hi"]).await; // "hi" taken as the id; no prompt
    assert!(!out.status.success());
    assert!(server.messages_requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_half_written_last_line_is_ignored_with_a_warning() {
    let env = Env::new();
    let sid = first_session(&env).await;
    let path = env.transcript(&sid);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(br#"{"parentUuid":"x","isSidechain":false,"type":"user","message":{"role":"user","content":"lo"#)
        .unwrap();
    drop(f);

    let server = text_server("still here").await;
    let out = env.run(&server, &["--resume", &sid, "go on"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let r = result_of(&out);
    assert_eq!(r["result"], "still here");
    assert!(stderr.contains("half-written last line"), "{stderr}");
    let mut expected = first_history();
    expected.push(Message::user_text("go on"));
    assert_eq!(messages_of(&requests(&server)[0]), expected, "nothing lost");

    // The broken line is now closed off in the middle: a later resume still works.
    let server = text_server("and again").await;
    let out = env.run(&server, &["-c", "more"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    result_of(&out);
    // (Line 1 is the first run's settings.)
    assert!(stderr.contains("skipped line 4"), "{stderr}");
    assert_eq!(messages_of(&requests(&server)[0]).len(), 5);
}

/// The real thing: SIGKILL while a tool runs, then resume.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_killed_during_a_tool_run_resumes_with_a_valid_history() {
    let env = Env::new();
    let sid = "5e55f00d-1111-4222-8333-444455556666";
    let pid_file = env.ws().join("sleep.pid");
    let command = format!("echo $$ > {} && exec sleep 30", pid_file.display());
    let server = MockServer::builder()
        .turn(ScriptTurn {
            content: vec![
                ScriptBlock::Text {
                    text: "Sleeping.".into(),
                },
                ScriptBlock::ToolUse {
                    id: Some("toolu_sleep".into()),
                    name: "Bash".into(),
                    input: json!({"command": command}),
                },
            ],
            ..ScriptTurn::default()
        })
        .turn(ScriptTurn::text("never"))
        .start()
        .await
        .unwrap();
    let path = env.transcript(sid);
    let mut child = env
        .command(&server.url())
        .args([
            "-p",
            "sleep for me",
            "--allowedTools",
            "Bash",
            "--output-format",
            "stream-json",
            "--verbose",
            "--session-id",
            sid,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();

    // Wait until the tool_use line is in the transcript and the command is running.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let has_call = std::fs::read_to_string(&path)
            .is_ok_and(|t| t.contains("\"toolu_sleep\"") && t.ends_with('\n'));
        let running =
            std::fs::read_to_string(&pid_file).is_ok_and(|p| p.trim().parse::<i32>().is_ok());
        if has_call && running {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "skiff ended before it could be killed"
        );
        assert!(Instant::now() < deadline, "the tool call never started");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9)
    );
    // The orphaned sleep is ours to clean up.
    let sleep_pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(sleep_pid),
        nix::sys::signal::Signal::SIGKILL,
    );

    let before = lines(&path);
    let kinds: Vec<&str> = before.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["user", "assistant"],
        "the call was written, its result never"
    );

    let server = text_server("resumed after the crash").await;
    let out = env.run(&server, &["--resume", sid, "go on"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let r = result_of(&out);
    assert_eq!(r["result"], "resumed after the crash");
    assert_eq!(r["session_id"], sid);
    assert!(stderr.contains("marked interrupted"), "{stderr}");

    let msgs = messages_of(&requests(&server)[0]);
    validate_history(&msgs).unwrap();
    assert_eq!(msgs.len(), 3);
    assert_eq!(msgs[0], Message::user_text("sleep for me"));
    let MessageContent::Blocks(call) = &msgs[1].content else {
        panic!("{:?}", msgs[1])
    };
    assert_eq!(call[0], ContentBlock::text("Sleeping."));
    assert!(matches!(&call[1], ContentBlock::ToolUse(t) if t.id == "toolu_sleep"));
    let MessageContent::Blocks(answer) = &msgs[2].content else {
        panic!("{:?}", msgs[2])
    };
    let ContentBlock::ToolResult(res) = &answer[0] else {
        panic!("{answer:?}")
    };
    assert_eq!(res.tool_use_id, "toolu_sleep");
    assert_eq!(res.is_error, Some(true));
    assert_eq!(
        res.content,
        Some(ToolResultContent::Text(
            "[Request interrupted by user for tool use]".into()
        ))
    );
    assert_eq!(answer[1], ContentBlock::text("go on"));

    // The resumed run appended to the same file, chained to the last line written before.
    let after = lines(&path);
    assert_eq!(after.len(), 4);
    assert_eq!(after[..2], before[..]);
    assert_eq!(parent_of(&path, &after[2]), before[1]["uuid"]);
    let reloaded = load_session(&path).unwrap();
    validate_history(&reloaded.messages).unwrap();
    assert_eq!(reloaded.messages.len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_tool_result_is_saved_and_readable() {
    let env = Env::new();
    let big: String = (1..=2000)
        .map(|i| format!("line {i:04} {}\n", "x".repeat(30)))
        .collect();
    std::fs::write(env.ws().join("big.txt"), &big).unwrap();
    let sid = "7a7a7a7a-0000-4000-8000-000000000007";
    let saved = tool_results_dir(&env.skiff_home(), &env.ws(), sid).join("toolu_big.txt");
    let server = MockServer::builder()
        .turn(ScriptTurn {
            content: vec![ScriptBlock::ToolUse {
                id: Some("toolu_big".into()),
                name: "Read".into(),
                input: json!({"file_path": "big.txt"}),
            }],
            ..ScriptTurn::default()
        })
        .turn(ScriptTurn {
            content: vec![ScriptBlock::ToolUse {
                id: Some("toolu_more".into()),
                name: "Read".into(),
                input: json!({"file_path": saved, "offset": 1995, "limit": 2}),
            }],
            ..ScriptTurn::default()
        })
        .turn(ScriptTurn::text("done"))
        .start()
        .await
        .unwrap();
    result_of(
        &env.run(&server, &["--session-id", sid, "read big.txt"])
            .await,
    );
    assert!(saved.is_file());
    // The session's directory was created by the first result saved there, private.
    for dir in [
        saved.parent().unwrap(),
        saved.parent().unwrap().parent().unwrap(),
    ] {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "{}", dir.display());
    }
    let reqs = requests(&server);
    let result_text = |req: &MessagesRequest| -> (bool, String) {
        let MessageContent::Blocks(b) = &req.messages.last().unwrap().content else {
            panic!()
        };
        let ContentBlock::ToolResult(r) = &b[0] else {
            panic!("{b:?}")
        };
        let text = match &r.content {
            Some(ToolResultContent::Text(t)) => t.clone(),
            other => format!("{other:?}"),
        };
        (r.is_error.unwrap_or(false), text)
    };
    let (_, cut) = result_text(&reqs[1]);
    assert!(cut.contains(saved.to_str().unwrap()), "{cut}");
    let (is_error, more) = result_text(&reqs[2]);
    assert!(!is_error, "{more}");
    assert!(more.contains("line 1995"), "{more}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_that_saves_no_result_makes_no_directory_of_its_own() {
    // Two new directories per run cost a millisecond before the first request on a well-used
    // ext4: the session's directory waits for the first result saved in it.
    let env = Env::new();
    let sid = "7a7a7a7a-0000-4000-8000-000000000008";
    let server = text_server("hi").await;
    result_of(&env.run(&server, &["--session-id", sid, "hello"]).await);
    let path = session_path(&env.skiff_home(), &env.ws(), sid);
    assert!(path.is_file(), "{}", path.display());
    let own = path.with_extension("");
    assert!(!own.exists(), "{} was created", own.display());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_lists_this_workspace() {
    let env = Env::new();
    let sid = first_session(&env).await;
    let server = text_server("x").await;
    let mut c = env.command(&server.url());
    c.arg("sessions");
    let out = tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&sid), "{text}");
    assert!(text.contains("first question"), "{text}");
    assert!(server.messages_requests().is_empty());
}
