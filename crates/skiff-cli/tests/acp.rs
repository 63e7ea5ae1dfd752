//! `skiff acp` driven over real pipes as an editor drives it: initialize, session/new, prompts
//! with tool rounds and approvals, cancel during a long command, load and list of saved
//! sessions, modes, the editor's files, bad input. Every message skiff sends is parsed into
//! the ACP schema types and must survive a round trip through them unchanged, so a shape
//! mistake fails the test.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use agent_client_protocol::v1::schema as acp;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// How long any one message may take (a hang fails instead of blocking the suite).
const WAIT: Duration = Duration::from_secs(20);

/// Nulls and empty objects removed, so `null` and an absent field compare equal.
fn normalized(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, normalized(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(normalized).collect()),
        v => v,
    }
}

/// `v` parses as `T` and serializes back to the same JSON.
fn conforms<T: DeserializeOwned + Serialize>(v: &Value, what: &str) {
    let parsed: T = serde_json::from_value(v.clone())
        .unwrap_or_else(|e| panic!("{what} is not a valid ACP message ({e}):\n{v:#}"));
    let back = serde_json::to_value(&parsed).unwrap();
    assert_eq!(
        normalized(back),
        normalized(v.clone()),
        "{what} changed in a round trip through its ACP type"
    );
}

/// Check one message from skiff against the schema; `sent` maps our request ids to methods.
fn check(msg: &Value, sent: &HashMap<u64, String>) {
    assert_eq!(msg["jsonrpc"], "2.0", "{msg}");
    let method = msg.get("method").and_then(Value::as_str);
    match (method, msg.get("id")) {
        (Some(m), Some(_)) => {
            let params = &msg["params"];
            match m {
                "session/request_permission" => {
                    conforms::<acp::RequestPermissionRequest>(params, m);
                }
                "fs/read_text_file" => conforms::<acp::ReadTextFileRequest>(params, m),
                "fs/write_text_file" => conforms::<acp::WriteTextFileRequest>(params, m),
                other => panic!("skiff sent an unexpected request {other}: {msg}"),
            }
        }
        (Some(m), None) => match m {
            "session/update" => conforms::<acp::SessionNotification>(&msg["params"], m),
            other => panic!("skiff sent an unexpected notification {other}: {msg}"),
        },
        (None, Some(id)) => {
            if let Some(err) = msg.get("error") {
                assert!(err["code"].is_i64() && err["message"].is_string(), "{msg}");
                return;
            }
            let result = &msg["result"];
            let Some(method) = id.as_u64().and_then(|n| sent.get(&n)) else {
                panic!("a response to no request of ours: {msg}");
            };
            match method.as_str() {
                "initialize" => conforms::<acp::InitializeResponse>(result, method),
                "session/new" => conforms::<acp::NewSessionResponse>(result, method),
                "session/load" => conforms::<acp::LoadSessionResponse>(result, method),
                "session/list" => conforms::<acp::ListSessionsResponse>(result, method),
                "session/prompt" => conforms::<acp::PromptResponse>(result, method),
                "session/set_mode" => conforms::<acp::SetSessionModeResponse>(result, method),
                "session/set_config_option" => {
                    conforms::<acp::SetSessionConfigOptionResponse>(result, method);
                }
                "session/close" => conforms::<acp::CloseSessionResponse>(result, method),
                "session/set_model" => assert_eq!(result, &json!({})),
                other => panic!("no check for {other}"),
            }
        }
        (None, None) => panic!("neither a request, a notification nor a response: {msg}"),
    }
}

/// An editor on the other end of `skiff acp`.
struct Editor {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
    /// Our requests by id.
    sent: HashMap<u64, String>,
    next_id: u64,
    /// Everything skiff sent so far.
    seen: Vec<Value>,
    stderr: PathBuf,
}

impl Editor {
    fn start(ws: &Path, home: &Path, script: &Value, flags: &[&str]) -> Self {
        std::fs::write(home.join("script.json"), script.to_string()).unwrap();
        let stderr = home.join(format!("stderr-{}.log", std::process::id()));
        let mut child = Command::new(env!("CARGO_BIN_EXE_skiff"))
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", home)
            .env("SKIFF_HOME", home.join(".skiff"))
            .current_dir(ws)
            .arg("acp")
            .args(["--provider", "script", "--script"])
            .arg(home.join("script.json"))
            .args(flags)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Self {
            child,
            stdin,
            lines: rx,
            sent: HashMap::new(),
            next_id: 1,
            seen: Vec::new(),
            stderr,
        }
    }

    fn write_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.sent.insert(id, method.to_owned());
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.write_line(&msg.to_string());
        id
    }

    fn notify(&mut self, method: &str, params: Value) {
        let msg = json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.write_line(&msg.to_string());
    }

    fn reply(&mut self, id: &Value, result: Value) {
        let msg = json!({"jsonrpc": "2.0", "id": id, "result": result});
        self.write_line(&msg.to_string());
    }

    /// The next message matching `pred`, every message checked against the schema.
    fn until(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(v) => {
                    check(&v, &self.sent);
                    self.seen.push(v.clone());
                    if pred(&v) {
                        return v;
                    }
                }
                Err(_) => panic!(
                    "no {what}; saw: {:#?}\nstderr: {}",
                    self.seen,
                    std::fs::read_to_string(&self.stderr).unwrap_or_default()
                ),
            }
        }
    }

    /// The response to our request `id` (its `result`; panics on an error).
    fn response(&mut self, id: u64) -> Value {
        let r = self.until(&format!("response {id}"), |v| {
            v["id"] == id && v.get("method").is_none()
        });
        assert!(r.get("error").is_none(), "request {id} failed: {r}");
        r["result"].clone()
    }

    /// The error answering our request `id`.
    fn error(&mut self, id: u64) -> Value {
        let r = self.until(&format!("error {id}"), |v| {
            v["id"] == id && v.get("method").is_none()
        });
        r.get("error")
            .cloned()
            .unwrap_or_else(|| panic!("not an error: {r}"))
    }

    /// skiff's next request of this method.
    fn asked(&mut self, method: &str) -> Value {
        let m = method.to_owned();
        self.until(method, move |v| {
            v["method"] == m.as_str() && v.get("id").is_some()
        })
    }

    /// The next `session/update` of this kind.
    fn update(&mut self, kind: &str) -> Value {
        let k = kind.to_owned();
        self.until(kind, move |v| {
            v["method"] == "session/update" && v["params"]["update"]["sessionUpdate"] == k.as_str()
        })["params"]["update"]
            .clone()
    }

    fn initialize(&mut self, capabilities: Value) -> Value {
        let id = self.request(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": capabilities,
                   "clientInfo": {"name": "test-editor", "version": "1.0"}}),
        );
        self.response(id)
    }

    fn new_session(&mut self, cwd: &Path) -> String {
        let id = self.request("session/new", json!({"cwd": cwd, "mcpServers": []}));
        let r = self.response(id);
        r["sessionId"].as_str().unwrap().to_owned()
    }

    fn prompt(&mut self, session: &str, text: &str) -> u64 {
        self.request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
        )
    }

    /// Updates of this kind seen so far.
    fn seen_updates(&self, kind: &str) -> Vec<Value> {
        self.seen
            .iter()
            .filter(|v| v["method"] == "session/update")
            .map(|v| v["params"]["update"].clone())
            .filter(|u| u["sessionUpdate"] == kind)
            .collect()
    }

    /// Close stdin; skiff must exit cleanly.
    fn finish(mut self) {
        self.stdin.take();
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(
                    status.success(),
                    "skiff acp exited with {status}: {}",
                    std::fs::read_to_string(&self.stderr).unwrap_or_default()
                );
                return;
            }
            assert!(
                Instant::now() < deadline,
                "skiff acp did not exit after EOF"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Editor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn text(t: &str) -> Value {
    json!({"content": [{"type": "text", "text": t}]})
}

fn call(id: &str, name: &str, input: Value) -> Value {
    json!({"content": [{"type": "tool_use", "id": id, "name": name, "input": input}]})
}

/// The text of session `sid`'s transcript under `home` (empty while it is not written).
fn transcript_of(home: &Path, sid: &str) -> String {
    std::fs::read_dir(home.join(".skiff/projects"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|d| d.path().join(format!("{sid}.jsonl")))
        .find(|p| p.is_file())
        .and_then(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_default()
}

/// A workspace and a home, canonical (the session's cwd is the canonical path).
fn dirs() -> (tempfile::TempDir, tempfile::TempDir, PathBuf) {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let cwd = ws.path().canonicalize().unwrap();
    (ws, home, cwd)
}

fn pick(editor: &mut Editor, ask: &Value, option: &str) {
    editor.reply(
        &ask["id"],
        json!({"outcome": {"outcome": "selected", "optionId": option}}),
    );
}

#[test]
fn a_session_with_tool_rounds_approvals_and_a_plan_then_load_and_list_in_a_new_process() {
    let (_ws, home, cwd) = dirs();
    let script = json!({"turns": [
        {"content": [
            {"type": "thinking", "thinking": "Two files, then a command.", "signature": "s"},
            {"type": "text", "text": "Writing the files."},
            {"type": "tool_use", "id": "todo_1", "name": "TodoWrite", "input": {"todos": [
                {"content": "write a.txt", "status": "in_progress", "activeForm": "writing"},
                {"content": "write b.txt", "status": "pending", "activeForm": "writing"}]}},
            {"type": "tool_use", "id": "write_a", "name": "Write",
             "input": {"file_path": "a.txt", "content": "one\n"}}]},
        call("write_b", "Write", json!({"file_path": "b.txt", "content": "two\n"})),
        call("bash_rm", "Bash", json!({"command": "rm a.txt"})),
        text("All done."),
    ]});
    // Without the sandbox every command is asked about (a sandboxed one may run unasked).
    let mut ed = Editor::start(&cwd, home.path(), &script, &["--sandbox", "off"]);
    let init = ed.initialize(json!({}));
    assert_eq!(init["protocolVersion"], 1);
    let caps = &init["agentCapabilities"];
    assert_eq!(caps["loadSession"], true);
    assert_eq!(caps["promptCapabilities"]["image"], true);
    assert_eq!(caps["promptCapabilities"]["embeddedContext"], true);
    assert!(caps["sessionCapabilities"]["list"].is_object());

    let new = ed.request("session/new", json!({"cwd": cwd, "mcpServers": []}));
    let created = ed.response(new);
    let sid = created["sessionId"].as_str().unwrap().to_owned();
    assert_eq!(created["modes"]["currentModeId"], "default");
    assert_eq!(created["configOptions"][0]["id"], "mode");
    let commands = ed.update("available_commands_update");
    assert!(
        commands["availableCommands"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == "compact")
    );

    let p = ed.prompt(&sid, "write two files and clean up");
    assert_eq!(
        ed.update("agent_thought_chunk")["content"]["text"]
            .as_str()
            .map(|t| !t.is_empty()),
        Some(true)
    );
    let plan = ed.update("plan");
    assert_eq!(plan["entries"][0]["content"], "write a.txt");
    assert_eq!(plan["entries"][0]["status"], "in_progress");
    let write = ed.update("tool_call");
    let write = if write["toolCallId"] == "todo_1" {
        assert_eq!(write["kind"], "think");
        ed.update("tool_call")
    } else {
        write
    };
    assert_eq!(write["toolCallId"], "write_a");
    assert_eq!(write["kind"], "edit");
    assert!(
        write.get("status").is_none(),
        "pending, the default: {write}"
    );
    assert_eq!(
        write["locations"][0]["path"],
        cwd.join("a.txt").to_str().unwrap()
    );
    assert_eq!(write["content"][0]["type"], "diff");
    assert_eq!(write["content"][0]["newText"], "one\n");

    // Allow once.
    let ask = ed.asked("session/request_permission");
    assert_eq!(ask["params"]["sessionId"], sid.as_str());
    assert_eq!(ask["params"]["toolCall"]["toolCallId"], "write_a");
    let kinds: Vec<&str> = ask["params"]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["allow_once", "allow_always", "reject_once", "reject_always"]
    );
    pick(&mut ed, &ask, "allow");
    let done = ed.until("write_a completed", |v| {
        v["params"]["update"]["toolCallId"] == "write_a"
            && v["params"]["update"]["status"] == "completed"
    });
    assert_eq!(done["params"]["update"]["content"][0]["type"], "diff");
    assert_eq!(std::fs::read_to_string(cwd.join("a.txt")).unwrap(), "one\n");

    // Allow always: the rule is saved in the local settings.
    let ask = ed.asked("session/request_permission");
    assert_eq!(ask["params"]["toolCall"]["toolCallId"], "write_b");
    pick(&mut ed, &ask, "allow_always");
    ed.until("write_b completed", |v| {
        v["params"]["update"]["toolCallId"] == "write_b"
            && v["params"]["update"]["status"] == "completed"
    });
    let local: Value = serde_json::from_str(
        &std::fs::read_to_string(cwd.join(".skiff/settings.local.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(local["permissions"]["allow"], json!(["Edit(./b.txt)"]));

    // Reject: the command does not run and the turn ends.
    let rm = ed.update("tool_call");
    assert_eq!(
        (rm["toolCallId"].as_str(), rm["kind"].as_str()),
        (Some("bash_rm"), Some("delete"))
    );
    let ask = ed.asked("session/request_permission");
    pick(&mut ed, &ask, "reject");
    let failed = ed.until("bash_rm failed", |v| {
        v["params"]["update"]["toolCallId"] == "bash_rm"
            && v["params"]["update"]["sessionUpdate"] == "tool_call_update"
    });
    assert_eq!(failed["params"]["update"]["status"], "failed");
    assert!(cwd.join("a.txt").exists(), "the rejected rm must not run");
    let answer = ed.response(p);
    assert_eq!(answer["stopReason"], "end_turn");
    let usage = ed.seen_updates("usage_update");
    assert!(
        !usage.is_empty(),
        "a usage_update before the prompt's answer"
    );
    assert!(usage[0]["size"].as_u64().unwrap() > 0);

    // The next prompt goes on in the same conversation.
    let p = ed.prompt(&sid, "anything else?");
    assert_eq!(
        ed.update("agent_message_chunk")["content"]["text"],
        "All done."
    );
    assert_eq!(ed.response(p)["stopReason"], "end_turn");
    ed.finish();

    // A new editor process: list the saved sessions, load this one, go on in accept-edits.
    let script = json!({"turns": [
        call("write_c", "Write", json!({"file_path": "c.txt", "content": "three\n"})),
        text("Wrote c.txt."),
    ]});
    let mut ed = Editor::start(&cwd, home.path(), &script, &[]);
    ed.initialize(json!({}));
    let list = ed.request("session/list", json!({"cwd": cwd}));
    let list = ed.response(list);
    assert_eq!(list["sessions"][0]["sessionId"], sid.as_str());
    assert_eq!(list["sessions"][0]["title"], "write two files and clean up");
    assert_eq!(list["sessions"][0]["cwd"], cwd.to_str().unwrap());
    let all = ed.request("session/list", json!({}));
    assert_eq!(ed.response(all)["sessions"][0]["sessionId"], sid.as_str());

    let load = ed.request(
        "session/load",
        json!({"sessionId": sid, "cwd": cwd, "mcpServers": []}),
    );
    let loaded = ed.response(load);
    assert_eq!(loaded["modes"]["currentModeId"], "default");
    // The replay came before the answer, in order.
    let replayed: Vec<Value> = ed
        .seen
        .iter()
        .filter(|v| v["method"] == "session/update")
        .map(|v| v["params"]["update"].clone())
        .collect();
    assert_eq!(replayed[0]["sessionUpdate"], "user_message_chunk");
    assert_eq!(
        replayed[0]["content"]["text"],
        "write two files and clean up"
    );
    let calls: Vec<(&str, &str)> = replayed
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call")
        .map(|u| {
            (
                u["toolCallId"].as_str().unwrap(),
                u["status"].as_str().unwrap(),
            )
        })
        .collect();
    // (TodoWrite's own outcome depends on whether this build has the tool.)
    assert_eq!(calls[0].0, "todo_1");
    assert_eq!(
        calls[1..],
        [
            ("write_a", "completed"),
            ("write_b", "completed"),
            ("bash_rm", "failed")
        ]
    );
    assert!(replayed.iter().any(
        |u| u["sessionUpdate"] == "agent_message_chunk" && u["content"]["text"] == "All done."
    ));

    let mode = ed.request(
        "session/set_mode",
        json!({"sessionId": sid, "modeId": "acceptEdits"}),
    );
    ed.response(mode);
    let p = ed.prompt(&sid, "one more file");
    let written = ed.until("write_c completed", |v| {
        v["params"]["update"]["toolCallId"] == "write_c"
            && v["params"]["update"]["status"] == "completed"
    });
    assert_eq!(
        written["params"]["update"]["sessionUpdate"],
        "tool_call_update"
    );
    assert_eq!(ed.response(p)["stopReason"], "end_turn");
    assert!(
        ed.seen
            .iter()
            .all(|v| v["method"] != "session/request_permission"),
        "acceptEdits writes without asking"
    );
    assert_eq!(
        std::fs::read_to_string(cwd.join("c.txt")).unwrap(),
        "three\n"
    );
    let bad = ed.request(
        "session/set_mode",
        json!({"sessionId": sid, "modeId": "yolo"}),
    );
    assert_eq!(ed.error(bad)["code"], -32602);
    let missing = ed.request(
        "session/load",
        json!({"sessionId": "00000000-0000-4000-8000-000000000000", "cwd": cwd, "mcpServers": []}),
    );
    assert_eq!(ed.error(missing)["code"], -32002);
    ed.finish();
}

#[test]
fn cancel_during_a_long_command_answers_cancelled_and_the_session_goes_on() {
    let (_ws, home, cwd) = dirs();
    let script = json!({"turns": [
        call("sleepy", "Bash", json!({"command": "touch started && sleep 30"})),
        text("Still here."),
    ]});
    let mut ed = Editor::start(&cwd, home.path(), &script, &["--allowedTools", "Bash"]);
    ed.initialize(json!({}));
    let sid = ed.new_session(&cwd);
    let p = ed.prompt(&sid, "wait a while");
    let started = ed.update("tool_call");
    assert_eq!(started["kind"], "execute");
    assert_eq!(started["title"], "`touch started && sleep 30`");
    let deadline = Instant::now() + WAIT;
    while !cwd.join("started").exists() {
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    ed.notify("session/cancel", json!({"sessionId": sid}));
    // Well before the 30 s the command would take.
    let answer = ed.response(p);
    assert_eq!(answer["stopReason"], "cancelled");
    let ended: Vec<Value> = ed
        .seen_updates("tool_call_update")
        .into_iter()
        .filter(|u| u["toolCallId"] == "sleepy" && u["status"] == "failed")
        .collect();
    assert_eq!(ended.len(), 1, "the interrupted call ends failed");
    let p = ed.prompt(&sid, "still there?");
    assert_eq!(
        ed.update("agent_message_chunk")["content"]["text"],
        "Still here."
    );
    assert_eq!(ed.response(p)["stopReason"], "end_turn");
    ed.finish();
}

#[test]
fn a_malformed_line_gets_a_parse_error_and_the_connection_goes_on() {
    let (_ws, home, cwd) = dirs();
    let script = json!({"turns": [text("fine")]});
    let mut ed = Editor::start(&cwd, home.path(), &script, &[]);
    ed.write_line("{this is not json");
    let err = ed.until("parse error", |v| v.get("error").is_some());
    assert_eq!(err["error"]["code"], -32700);
    assert!(err["id"].is_null());
    ed.initialize(json!({}));
    let unknown = ed.request("session/teleport", json!({}));
    assert_eq!(ed.error(unknown)["code"], -32601);
    let sid = ed.new_session(&cwd);
    ed.write_line("[1, 2");
    let p = ed.prompt(&sid, "hello");
    assert_eq!(ed.update("agent_message_chunk")["content"]["text"], "fine");
    assert_eq!(ed.response(p)["stopReason"], "end_turn");
    let bad = ed.request(
        "session/prompt",
        json!({"sessionId": "no-such-session", "prompt": [{"type": "text", "text": "x"}]}),
    );
    assert_eq!(ed.error(bad)["code"], -32002);
    let relative = ed.request(
        "session/new",
        json!({"cwd": "relative/dir", "mcpServers": []}),
    );
    assert_eq!(ed.error(relative)["code"], -32602);
    ed.finish();
}

#[test]
fn read_and_edit_go_through_the_editors_buffers() {
    let (_ws, home, cwd) = dirs();
    let file = cwd.join("notes.txt");
    std::fs::write(&file, "saved on disk\n").unwrap();
    let script = json!({"turns": [
        call("r", "Read", json!({"file_path": "notes.txt"})),
        call("e", "Edit", json!({"file_path": "notes.txt", "old_string": "unsaved", "new_string": "edited"})),
        text("Edited."),
    ]});
    let mut ed = Editor::start(&cwd, home.path(), &script, &[]);
    ed.initialize(json!({"fs": {"readTextFile": true, "writeTextFile": true}}));
    let sid = ed.new_session(&cwd);
    let p = ed.prompt(&sid, "edit the notes");
    let read = ed.asked("fs/read_text_file");
    assert_eq!(read["params"]["path"], file.to_str().unwrap());
    assert_eq!(read["params"]["sessionId"], sid.as_str());
    ed.reply(&read["id"], json!({"content": "unsaved buffer\n"}));
    let shown = ed.until("read completed", |v| {
        v["params"]["update"]["toolCallId"] == "r" && v["params"]["update"]["status"] == "completed"
    });
    assert!(
        shown["params"]["update"]["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("unsaved buffer")
    );
    // The Edit is checked against the buffer before the user is asked (an Edit that cannot
    // apply fails without a prompt), and again when it runs. The check's read may come before
    // the Read's completion.
    let first = read["id"].clone();
    let early = ed
        .seen
        .iter()
        .find(|v| v["method"] == "fs/read_text_file" && v["id"] != first)
        .cloned();
    let check = match early {
        Some(r) => r,
        None => ed.asked("fs/read_text_file"),
    };
    ed.reply(&check["id"], json!({"content": "unsaved buffer\n"}));
    let ask = ed.asked("session/request_permission");
    pick(&mut ed, &ask, "allow");
    let read = ed.asked("fs/read_text_file");
    ed.reply(&read["id"], json!({"content": "unsaved buffer\n"}));
    let write = ed.asked("fs/write_text_file");
    assert_eq!(write["params"]["path"], file.to_str().unwrap());
    assert_eq!(write["params"]["content"], "edited buffer\n");
    // The editor saves the buffer.
    std::fs::write(&file, "edited buffer\n").unwrap();
    ed.reply(&write["id"], json!({}));
    ed.until("edit completed", |v| {
        v["params"]["update"]["toolCallId"] == "e" && v["params"]["update"]["status"] == "completed"
    });
    assert_eq!(ed.response(p)["stopReason"], "end_turn");
    ed.finish();
}

#[test]
fn prompts_carry_images_and_the_editors_context_and_slash_commands_run_in_skiff() {
    let (_ws, home, cwd) = dirs();
    let greet = home.path().join(".claude/commands/greet.md");
    std::fs::create_dir_all(greet.parent().unwrap()).unwrap();
    std::fs::write(
        &greet,
        "---\ndescription: Say hello\nargument-hint: NAME\n---\nSay hello to $ARGUMENTS.",
    )
    .unwrap();
    let script = json!({"turns": [text("Seen."), text("Hello, Bob.")]});
    let mut ed = Editor::start(&cwd, home.path(), &script, &[]);
    ed.initialize(json!({}));
    let sid = ed.new_session(&cwd);
    // The user's custom command is offered beside skiff's own.
    let offered = ed.update("available_commands_update");
    let custom = offered["availableCommands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "greet")
        .cloned()
        .unwrap_or_else(|| panic!("no /greet in {offered}"));
    assert_eq!(custom["input"]["hint"], "NAME");
    assert!(
        custom["description"]
            .as_str()
            .unwrap()
            .starts_with("Say hello")
    );
    let p = ed.request(
        "session/prompt",
        json!({"sessionId": sid, "prompt": [
            {"type": "text", "text": "what is in these?"},
            {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
            {"type": "resource_link", "name": "main.rs", "uri": "file:///w/src/main.rs"},
            {"type": "resource", "resource": {"uri": "file:///w/lib.rs", "text": "pub fn lib() {}", "mimeType": "text/x-rust"}},
        ]}),
    );
    assert_eq!(ed.response(p)["stopReason"], "end_turn");
    // The transcript holds what the model was sent (written by its own thread: wait for it).
    let user_line = || -> Option<Value> {
        let path = std::fs::read_dir(home.path().join(".skiff/projects"))
            .ok()?
            .flatten()
            .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
            .map(|e| e.path())
            .find(|p| {
                p.file_name()
                    .is_some_and(|n| n == format!("{sid}.jsonl").as_str())
            })?;
        std::fs::read_to_string(path)
            .ok()?
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|l| l["type"] == "user")
    };
    let deadline = Instant::now() + WAIT;
    let user = loop {
        if let Some(u) = user_line() {
            break u;
        }
        assert!(Instant::now() < deadline, "no transcript for {sid}");
        std::thread::sleep(Duration::from_millis(20));
    };
    let content = user["message"]["content"].to_string();
    assert!(content.contains("\"type\":\"image\""), "{content}");
    assert!(
        content.contains("[@main.rs](file:///w/src/main.rs)"),
        "{content}"
    );
    assert!(
        content.contains("<context ref=\\\"file:///w/lib.rs\\\">"),
        "{content}"
    );

    // A custom command goes to the session, which expands it.
    let p = ed.prompt(&sid, "/greet Bob");
    assert_eq!(
        ed.update("agent_message_chunk")["content"]["text"],
        "Hello, Bob."
    );
    assert_eq!(ed.response(p)["stopReason"], "end_turn");
    let deadline = Instant::now() + WAIT;
    while !transcript_of(home.path(), &sid).contains("Say hello to Bob.") {
        assert!(Instant::now() < deadline, "the command was not expanded");
        std::thread::sleep(Duration::from_millis(20));
    }

    let p = ed.prompt(&sid, "/mode plan");
    let mode = ed.update("current_mode_update");
    assert_eq!(mode["currentModeId"], "plan");
    assert_eq!(ed.response(p)["stopReason"], "end_turn");
    let p = ed.prompt(&sid, "/cost");
    assert!(
        ed.update("agent_message_chunk")["content"]["text"]
            .as_str()
            .unwrap()
            .starts_with("Session cost")
    );
    assert_eq!(ed.response(p)["stopReason"], "end_turn");
    let set = ed.request(
        "session/set_config_option",
        json!({"sessionId": sid, "configId": "model", "value": "my-model"}),
    );
    let options = ed.response(set);
    assert_eq!(options["configOptions"][1]["currentValue"], "my-model");
    assert_eq!(options["configOptions"][0]["currentValue"], "plan");
    let legacy = ed.request(
        "session/set_model",
        json!({"sessionId": sid, "modelId": "other-model"}),
    );
    ed.response(legacy);
    let close = ed.request("session/close", json!({"sessionId": sid}));
    ed.response(close);
    let gone = ed.prompt(&sid, "hello?");
    assert_eq!(ed.error(gone)["code"], -32002);
    ed.finish();
}

#[test]
fn a_finished_plan_asks_which_mode_to_go_on_in() {
    let (_ws, home, cwd) = dirs();
    let script = json!({"turns": [
        call("plan", "ExitPlanMode", json!({"plan": "1. Write d.txt"})),
        call("write_d", "Write", json!({"file_path": "d.txt", "content": "four\n"})),
        text("Done."),
    ]});
    let mut ed = Editor::start(&cwd, home.path(), &script, &["--permission-mode", "plan"]);
    ed.initialize(json!({}));
    let new = ed.request("session/new", json!({"cwd": cwd, "mcpServers": []}));
    let created = ed.response(new);
    assert_eq!(created["modes"]["currentModeId"], "plan");
    let sid = created["sessionId"].as_str().unwrap().to_owned();
    let p = ed.prompt(&sid, "plan, then write d.txt");
    let call = ed.update("tool_call");
    assert_eq!(call["kind"], "switch_mode");
    let ask = ed.asked("session/request_permission");
    let ids: Vec<&str> = ask["params"]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["optionId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["acceptEdits", "default", "reject"]);
    pick(&mut ed, &ask, "acceptEdits");
    assert_eq!(
        ed.update("current_mode_update")["currentModeId"],
        "acceptEdits"
    );
    ed.until("write_d completed", |v| {
        v["params"]["update"]["toolCallId"] == "write_d"
            && v["params"]["update"]["status"] == "completed"
    });
    assert_eq!(ed.response(p)["stopReason"], "end_turn");
    let asks = ed
        .seen
        .iter()
        .filter(|v| v["method"] == "session/request_permission")
        .count();
    assert_eq!(asks, 1, "accept-edits writes without asking");
    ed.finish();
}

#[test]
fn an_editor_is_offered_the_mcp_servers_prompts_once_they_connect_and_they_run() {
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !node {
        assert!(
            std::env::var_os("SKIFF_REQUIRE_MCP_SERVERS").is_none(),
            "node is needed for the MCP tests (.ci/run installs it)"
        );
        eprintln!("skipped: node is not installed");
        return;
    }
    let server = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../skiff-mcp/tests/fixtures/rich-server.js")
        .canonicalize()
        .unwrap();
    let (_ws, home, cwd) = dirs();
    let script = json!({"turns": [text("Reviewed.")]});
    let mut ed = Editor::start(&cwd, home.path(), &script, &[]);
    ed.initialize(json!({}));
    let id = ed.request(
        "session/new",
        json!({"cwd": cwd, "mcpServers": [
            {"name": "rich", "command": "node", "args": [server], "env": []}]}),
    );
    let sid = ed.response(id)["sessionId"].as_str().unwrap().to_owned();
    let offered = ed.until("the MCP prompts offered", |v| {
        v["method"] == "session/update"
            && v["params"]["update"]["sessionUpdate"] == "available_commands_update"
            && v["params"]["update"]["availableCommands"]
                .as_array()
                .is_some_and(|l| l.iter().any(|c| c["name"] == "mcp__rich__review"))
    });
    let review = offered["params"]["update"]["availableCommands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "mcp__rich__review")
        .cloned()
        .unwrap();
    assert_eq!(review["description"], "Review someone's work (MCP)");
    assert_eq!(review["input"]["hint"], "<name> [focus]");

    let p = ed.prompt(&sid, "/help");
    let help = ed.update("agent_message_chunk")["content"]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        help.contains("MCP prompts:") && help.contains("`/mcp__rich__review <name> [focus]`"),
        "{help}"
    );
    assert_eq!(ed.response(p)["stopReason"], "end_turn");

    let p = ed.prompt(&sid, "/mcp__rich__review Ada");
    assert_eq!(
        ed.update("agent_message_chunk")["content"]["text"],
        "Reviewed."
    );
    assert_eq!(ed.response(p)["stopReason"], "end_turn");
    ed.finish();
}

#[test]
fn modes_say_what_runs_unasked_every_change_is_told_and_a_loaded_session_keeps_its_mode() {
    let (_ws, home, cwd) = dirs();
    let script = json!({"turns": [
        call("touch", "Bash", json!({"command": "touch made.txt"})),
        text("Made."),
    ]});
    let mut ed = Editor::start(&cwd, home.path(), &script, &[]);
    ed.initialize(json!({}));
    let new = ed.request("session/new", json!({"cwd": cwd, "mcpServers": []}));
    let created = ed.response(new);
    let sid = created["sessionId"].as_str().unwrap().to_owned();
    let modes = created["modes"]["availableModes"].as_array().unwrap();
    assert_eq!(modes[0]["id"], "default");
    let about = modes[0]["description"].as_str().unwrap().to_owned();
    // What the description promises is what happens to a command in default mode.
    let p = ed.prompt(&sid, "make a file");
    let asked = ed.until("a permission request or the end of the prompt", |v| {
        v["method"] == "session/request_permission" || (v["id"] == p && v.get("method").is_none())
    });
    let sandboxed = asked["method"] != "session/request_permission";
    if !sandboxed {
        pick(&mut ed, &asked, "allow");
        ed.response(p);
    }
    assert_eq!(
        about.contains("commands inside the sandbox without asking"),
        sandboxed,
        "the default mode says {about:?} but a command {} asked",
        if sandboxed { "was not" } else { "was" }
    );
    assert!(!about.contains("Ask before edits, commands"), "{about}");
    // A mode set by the editor is told back as the current mode.
    let set = ed.request(
        "session/set_mode",
        json!({"sessionId": sid, "modeId": "acceptEdits"}),
    );
    ed.response(set);
    assert_eq!(
        ed.update("current_mode_update")["currentModeId"],
        "acceptEdits"
    );
    let set = ed.request(
        "session/set_config_option",
        json!({"sessionId": sid, "configId": "mode", "value": "plan"}),
    );
    ed.response(set);
    assert_eq!(ed.update("current_mode_update")["currentModeId"], "plan");
    ed.finish();
    // A new process loads the session in the mode it was left in.
    let mut ed = Editor::start(&cwd, home.path(), &json!({"turns": [text("Loaded.")]}), &[]);
    ed.initialize(json!({}));
    let load = ed.request(
        "session/load",
        json!({"sessionId": sid, "cwd": cwd, "mcpServers": []}),
    );
    let loaded = ed.response(load);
    assert_eq!(loaded["modes"]["currentModeId"], "plan", "{loaded}");
    ed.finish();
}

#[test]
fn an_edit_shows_the_whole_file_and_a_running_commands_output_streams_into_its_call() {
    let (_ws, home, cwd) = dirs();
    let original = "one\ntwo\nthree\n";
    std::fs::write(cwd.join("a.txt"), original).unwrap();
    let script = json!({"turns": [
        call("read_a", "Read", json!({"file_path": "a.txt"})),
        call("edit_a", "Edit", json!({"file_path": "a.txt", "old_string": "two", "new_string": "TWO"})),
        call("run", "Bash", json!({"command": "echo first; sleep 1; echo second"})),
        text("Done."),
    ]});
    let mut ed = Editor::start(&cwd, home.path(), &script, &["--allowedTools", "Bash"]);
    ed.initialize(json!({}));
    let sid = ed.new_session(&cwd);
    let p = ed.prompt(&sid, "edit and run");
    // Asked before it runs: the editor's diff view gets the whole file, before and after.
    let ask = ed.asked("session/request_permission");
    let diff = &ask["params"]["toolCall"]["content"][0];
    assert_eq!(diff["type"], "diff", "{ask}");
    assert_eq!(diff["oldText"], original);
    assert_eq!(diff["newText"], "one\nTWO\nthree\n");
    pick(&mut ed, &ask, "allow");
    let done = ed.until("the Edit's end", |v| {
        v["params"]["update"]["toolCallId"] == "edit_a"
            && v["params"]["update"]["status"] == "completed"
    })["params"]["update"]
        .clone();
    assert_eq!(done["content"][0]["oldText"], original, "{done}");
    assert_eq!(done["content"][0]["newText"], "one\nTWO\nthree\n");
    // The command's first line shows in its call while it still runs.
    let live = ed.until("the command's output while it runs", |v| {
        let u = &v["params"]["update"];
        u["toolCallId"] == "run"
            && u["status"] == "in_progress"
            && u["content"].to_string().contains("first")
    })["params"]["update"]
        .clone();
    assert!(!live["content"].to_string().contains("second"), "{live}");
    let finished = ed.until("the command's end", |v| {
        v["params"]["update"]["toolCallId"] == "run"
            && v["params"]["update"]["status"] == "completed"
    })["params"]["update"]
        .clone();
    let all = finished["content"].to_string();
    assert!(all.contains("first") && all.contains("second"), "{all}");
    assert_eq!(ed.response(p)["stopReason"], "end_turn");
    ed.finish();
}
