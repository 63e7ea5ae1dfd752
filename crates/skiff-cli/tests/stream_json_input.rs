//! `--input-format stream-json`: the Agent SDK control protocol driven over real pipes, as a
//! host would: initialize, turns, can_use_tool, SDK hook callbacks, interrupt, mode and model
//! switches, unknown requests, bad lines, EOF.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

struct Host {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
    seen: Vec<Value>,
}

impl Host {
    fn start(ws: &Path, home: &Path, script: &Value, extra: &[&str]) -> Self {
        Self::start_env(ws, home, script, extra, &[])
    }

    fn start_env(
        ws: &Path,
        home: &Path,
        script: &Value,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Self {
        std::fs::write(ws.join("script.json"), script.to_string()).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_skiff"))
            .env_clear()
            .envs(env.iter().copied())
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", home)
            .env("SKIFF_HOME", home.join(".skiff"))
            .env("CLAUDE_CODE_ENTRYPOINT", "sdk-py")
            .current_dir(ws)
            .args([
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
                "--verbose",
                "--provider",
                "script",
                "--script",
                "script.json",
            ])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
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
            seen: Vec::new(),
        }
    }

    fn send(&mut self, v: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    }

    fn user(&mut self, text: &str) {
        self.send(json!({"type": "user", "session_id": "", "message": {"role": "user", "content": text}, "parent_tool_use_id": null}));
    }

    fn control(&mut self, id: &str, request: Value) {
        self.send(json!({"type": "control_request", "request_id": id, "request": request}));
    }

    fn answer(&mut self, id: &str, response: Value) {
        self.send(json!({"type": "control_response", "response": {"subtype": "success", "request_id": id, "response": response}}));
    }

    /// The next frame matching `pred` (frames before it are kept in `seen`).
    fn until(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(v) => {
                    self.seen.push(v.clone());
                    if pred(&v) {
                        return v;
                    }
                }
                Err(_) => panic!("no {what}; saw: {:#?}", self.seen),
            }
        }
    }

    fn response_to(&mut self, id: &str) -> Value {
        let id = id.to_owned();
        self.until(&format!("control_response to {id}"), move |v| {
            v["type"] == "control_response" && v["response"]["request_id"] == id.as_str()
        })["response"]
            .clone()
    }

    fn request(&mut self, subtype: &str) -> Value {
        let s = subtype.to_owned();
        self.until(&format!("{subtype} request"), move |v| {
            v["type"] == "control_request" && v["request"]["subtype"] == s.as_str()
        })
    }

    fn result(&mut self) -> Value {
        self.until("result", |v| v["type"] == "result")
    }

    /// Close stdin and wait for the exit code.
    fn finish(mut self) -> (i32, Vec<Value>) {
        self.stdin.take();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                while let Ok(v) = self.lines.recv_timeout(Duration::from_millis(200)) {
                    self.seen.push(v);
                }
                return (status.code().unwrap_or(-1), self.seen);
            }
            assert!(Instant::now() < deadline, "skiff did not exit after EOF");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn text(t: &str) -> Value {
    json!({"content": [{"type": "text", "text": t}]})
}

fn call(name: &str, input: Value) -> Value {
    json!({"content": [{"type": "tool_use", "name": name, "input": input}]})
}

fn dirs() -> (tempfile::TempDir, tempfile::TempDir) {
    (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap())
}

#[test]
fn initialize_then_two_turns_in_one_process_then_eof() {
    let (ws, home) = dirs();
    let script = json!({"turns": [text("first"), text("second")]});
    let mut host = Host::start(ws.path(), home.path(), &script, &[]);
    host.control(
        "req_1_init",
        json!({"subtype": "initialize", "hooks": null}),
    );
    let init = host.response_to("req_1_init");
    assert_eq!(init["subtype"], "success");
    let r = &init["response"];
    for key in [
        "commands",
        "agents",
        "output_style",
        "available_output_styles",
        "models",
        "account",
    ] {
        assert!(r.get(key).is_some(), "initialize response lacks {key}: {r}");
    }
    assert_eq!(r["hook_on_failure_supported"], true);
    assert_eq!(r["hooks_applied"], true);
    host.user("one");
    host.user("two"); // queued while the first runs
    let first = host.result();
    assert_eq!(first["result"], "first");
    let second = host.result();
    assert_eq!(second["result"], "second");
    assert_eq!(first["session_id"], second["session_id"]);
    let (code, frames) = host.finish();
    assert_eq!(code, 0);
    let inits = frames
        .iter()
        .filter(|f| f["type"] == "system" && f["subtype"] == "init")
        .count();
    assert_eq!(inits, 2, "one init per turn");
    let init = frames.iter().find(|f| f["subtype"] == "init").unwrap();
    let version = init["claude_code_version"].as_str().unwrap();
    assert!(version.split('.').next().unwrap().parse::<u32>().unwrap() >= 2);
    // The transcript records who started the session, as Claude Code does.
    let sid = init["session_id"].as_str().unwrap();
    let transcript = find_file(&home.path().join(".skiff"), &format!("{sid}.jsonl")).unwrap();
    let users: Vec<Value> = std::fs::read_to_string(transcript)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|l: &Value| l["type"] == "user")
        .collect();
    assert!(!users.is_empty());
    assert!(
        users.iter().all(|u| u["entrypoint"] == "sdk-py"),
        "{users:?}"
    );
}

fn find_file(dir: &Path, name: &str) -> Option<std::path::PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let p = entry.path();
        if p.is_dir() {
            if let Some(f) = find_file(&p, name) {
                return Some(f);
            }
        } else if p.file_name().is_some_and(|n| n == name) {
            return Some(p);
        }
    }
    None
}

#[test]
fn can_use_tool_allow_with_updated_input_and_deny() {
    let (ws, home) = dirs();
    let script = json!({"turns": [
        call("Write", json!({"file_path": "a.txt", "content": "from the model"})),
        call("Write", json!({"file_path": "b.txt", "content": "never"})),
        text("done"),
    ]});
    let mut host = Host::start(
        ws.path(),
        home.path(),
        &script,
        &["--permission-prompt-tool", "stdio"],
    );
    host.control("req_1", json!({"subtype": "initialize"}));
    host.response_to("req_1");
    host.user("write files");
    let ask = host.request("can_use_tool");
    assert_eq!(ask["request"]["tool_name"], "Write");
    assert_eq!(ask["request"]["input"]["content"], "from the model");
    assert!(ask["request"]["tool_use_id"].is_string());
    let suggestions = &ask["request"]["permission_suggestions"];
    assert_eq!(suggestions[0]["type"], "addRules");
    assert_eq!(suggestions[0]["rules"][0]["toolName"], "Edit");
    assert_eq!(suggestions[1]["mode"], "acceptEdits");
    assert!(
        ask["request"]["blocked_path"]
            .as_str()
            .unwrap()
            .ends_with("/a.txt")
    );
    let id = ask["request_id"].as_str().unwrap().to_owned();
    host.answer(
        &id,
        json!({"behavior": "allow", "updatedInput": {"file_path": "a.txt", "content": "from the host"}}),
    );
    let ask = host.request("can_use_tool");
    let id = ask["request_id"].as_str().unwrap().to_owned();
    host.answer(&id, json!({"behavior": "deny", "message": "not b"}));
    let result = host.result();
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["permission_denials"][0]["tool_name"], "Write");
    let (code, frames) = host.finish();
    assert_eq!(code, 0);
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "from the host"
    );
    assert!(!ws.path().join("b.txt").exists());
    let denied = frames
        .iter()
        .filter(|f| f["type"] == "user")
        .flat_map(|f| {
            f["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .find(|b| b["is_error"] == true)
        .unwrap();
    assert!(denied["content"].to_string().contains("not b"), "{denied}");
}

#[test]
fn an_sdk_hook_blocks_a_tool_and_sees_the_hook_input() {
    let (ws, home) = dirs();
    let script = json!({"turns": [call("Bash", json!({"command": "echo hi", "description": "Say hi"})), text("ok")]});
    let mut host = Host::start(ws.path(), home.path(), &script, &[]);
    host.control(
        "req_1",
        json!({"subtype": "initialize", "hooks": {"PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["hook_0"]}]}}),
    );
    host.response_to("req_1");
    host.user("go");
    let cb = host.request("hook_callback");
    assert_eq!(cb["request"]["callback_id"], "hook_0");
    let input = &cb["request"]["input"];
    assert_eq!(input["hook_event_name"], "PreToolUse");
    assert_eq!(input["tool_name"], "Bash");
    assert_eq!(input["tool_input"]["command"], "echo hi");
    assert_eq!(cb["request"]["tool_use_id"], input["tool_use_id"]);
    let id = cb["request_id"].as_str().unwrap().to_owned();
    host.answer(
        &id,
        json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no shell today"}}),
    );
    host.result();
    let (_, frames) = host.finish();
    let blocked = frames
        .iter()
        .filter(|f| f["type"] == "user")
        .flat_map(|f| {
            f["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .find(|b| b["type"] == "tool_result")
        .unwrap();
    assert_eq!(blocked["is_error"], true);
    assert!(
        blocked["content"].to_string().contains("no shell today"),
        "{blocked}"
    );
}

#[test]
fn interrupt_stops_a_long_command_at_once() {
    let (ws, home) = dirs();
    let script = json!({"turns": [call("Bash", json!({"command": "sleep 30"})), text("never")]});
    let mut host = Host::start(
        ws.path(),
        home.path(),
        &script,
        &["--allowedTools", "Bash(sleep:*)"],
    );
    host.user("sleep");
    host.until("the tool call", |v| {
        v["type"] == "assistant" && v["message"]["content"][0]["type"] == "tool_use"
    });
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    host.control("req_int", json!({"subtype": "interrupt"}));
    assert_eq!(host.response_to("req_int")["subtype"], "success");
    let result = host.result();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(result["is_error"], true, "{result}");
    let (code, _) = host.finish();
    assert_eq!(code, 1, "the last result was an error");
}

#[test]
fn mode_model_status_unknown_requests_and_bad_lines() {
    let (ws, home) = dirs();
    let script = json!({"turns": [text("fine")]});
    let mut host = Host::start(ws.path(), home.path(), &script, &[]);
    host.control(
        "m1",
        json!({"subtype": "set_permission_mode", "mode": "acceptEdits"}),
    );
    assert_eq!(host.response_to("m1")["response"]["mode"], "acceptEdits");
    host.control(
        "m2",
        json!({"subtype": "set_permission_mode", "mode": "bogus"}),
    );
    assert_eq!(host.response_to("m2")["subtype"], "error");
    host.control("m3", json!({"subtype": "set_model", "model": "opus"}));
    let model = host.response_to("m3");
    assert!(
        model["response"]["model"]
            .as_str()
            .unwrap()
            .contains("opus")
    );
    host.control("m4", json!({"subtype": "mcp_status"}));
    assert_eq!(host.response_to("m4")["response"]["mcpServers"], json!([]));
    host.control("m5", json!({"subtype": "frobnicate"}));
    let unknown = host.response_to("m5");
    assert_eq!(unknown["subtype"], "error");
    assert_eq!(unknown["error_code"], "unsupported_request");
    assert_eq!(
        unknown["error"],
        "Unsupported control request subtype: frobnicate"
    );
    host.send(json!("just a string"));
    {
        let stdin = host.stdin.as_mut().unwrap();
        writeln!(stdin, "{{not json").unwrap();
        writeln!(stdin, "   ").unwrap();
    }
    host.user("still there?");
    let result = host.result();
    assert_eq!(result["result"], "fine");
    let init = host
        .seen
        .iter()
        .find(|f| f["subtype"] == "init")
        .unwrap()
        .clone();
    assert_eq!(init["permissionMode"], "acceptEdits");
    assert!(init["model"].as_str().unwrap().contains("opus"));
    let errors = host
        .seen
        .iter()
        .filter(|f| f["type"] == "system" && f["subtype"] == "error")
        .count();
    assert_eq!(errors, 2, "{:#?}", host.seen);
    let (code, _) = host.finish();
    assert_eq!(code, 0);
}

#[test]
fn eof_without_any_message_exits_cleanly() {
    let (ws, home) = dirs();
    let host = Host::start(
        ws.path(),
        home.path(),
        &json!({"turns": [text("unused")]}),
        &[],
    );
    let (code, frames) = host.finish();
    assert_eq!(code, 0);
    assert!(frames.is_empty(), "{frames:?}");
}

fn write(path: &str, content: &str) -> Value {
    json!({"content": [{"type": "tool_use", "name": "Write",
        "input": {"file_path": path, "content": content}}]})
}

#[test]
fn rewind_files_puts_back_what_a_message_changed() {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let script = json!({"turns": [
        write("a.txt", "v1\n"),
        {"content": [{"type": "text", "text": "one"}]},
        write("a.txt", "v2\nmore\n"),
        write("b.txt", "new\n"),
        {"content": [{"type": "text", "text": "two"}]}
    ]});
    let mut host = Host::start_env(
        ws.path(),
        home.path(),
        &script,
        &["--replay-user-messages", "--permission-mode", "acceptEdits"],
        &[("CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING", "true")],
    );
    host.control("i", json!({"subtype": "initialize"}));
    host.response_to("i");
    host.send(json!({"type": "user", "uuid": "msg-one", "session_id": "",
        "message": {"role": "user", "content": "first"}, "parent_tool_use_id": null}));
    let echo = host.until("replayed message", |v| {
        v["type"] == "user" && v["isReplay"] == true
    });
    assert_eq!(echo["uuid"], "msg-one");
    assert_eq!(echo["message"]["content"], "first");
    host.result();
    // A message without a uuid gets one; its echo tells the host which.
    host.user("second");
    let echo = host.until("second echo", |v| {
        v["type"] == "user" && v["isReplay"] == true && v["message"]["content"] == "second"
    });
    let second = echo["uuid"].as_str().unwrap().to_owned();
    host.result();
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "v2\nmore\n"
    );

    host.control(
        "dry",
        json!({"subtype": "rewind_files", "user_message_id": second, "dry_run": true}),
    );
    let dry = host.response_to("dry");
    assert_eq!(dry["subtype"], "success");
    assert_eq!(dry["response"]["canRewind"], true);
    let files: Vec<String> = dry["response"]["filesChanged"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().rsplit('/').next().unwrap().to_owned())
        .collect();
    assert_eq!(files, ["a.txt", "b.txt"]);
    assert_eq!(dry["response"]["deletions"], 3);
    assert_eq!(dry["response"]["insertions"], 1);
    assert!(
        ws.path().join("b.txt").exists(),
        "a dry run changes nothing"
    );

    host.control(
        "r2",
        json!({"subtype": "rewind_files", "user_message_id": second}),
    );
    assert_eq!(host.response_to("r2")["response"]["canRewind"], true);
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "v1\n"
    );
    assert!(!ws.path().join("b.txt").exists());

    host.control(
        "r1",
        json!({"subtype": "rewind_files", "user_message_id": "msg-one"}),
    );
    assert_eq!(host.response_to("r1")["response"]["canRewind"], true);
    assert!(!ws.path().join("a.txt").exists());

    host.control(
        "bad",
        json!({"subtype": "rewind_files", "user_message_id": "nope"}),
    );
    let bad = host.response_to("bad");
    assert_eq!(bad["response"]["canRewind"], false);
    assert!(
        bad["response"]["error"]
            .as_str()
            .unwrap()
            .contains("no file checkpoint")
    );
    let (code, _) = host.finish();
    assert_eq!(code, 0);
}

#[test]
fn rewind_files_without_checkpointing_says_so() {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let script = json!({"turns": [{"content": [{"type": "text", "text": "hi"}]}]});
    let mut host = Host::start(ws.path(), home.path(), &script, &[]);
    host.user("hello");
    host.result();
    assert!(
        !host.seen.iter().any(|v| v["isReplay"] == true),
        "no echo without the flag"
    );
    host.control(
        "r",
        json!({"subtype": "rewind_files", "user_message_id": "x"}),
    );
    let r = host.response_to("r");
    assert_eq!(r["response"]["canRewind"], false);
    assert!(
        r["response"]["error"]
            .as_str()
            .unwrap()
            .contains("not enabled")
    );
    host.finish();
}

#[test]
fn a_call_that_cannot_succeed_fails_without_asking_the_host() {
    // An Edit of a file not read yet: the host is never asked; the model gets the reason.
    let (ws, home) = dirs();
    std::fs::write(ws.path().join("a.txt"), "old\n").unwrap();
    let script = json!({"turns": [
        call("Edit", json!({"file_path": "a.txt", "old_string": "old", "new_string": "new"})),
        text("done"),
    ]});
    let mut host = Host::start(
        ws.path(),
        home.path(),
        &script,
        &["--permission-prompt-tool", "stdio"],
    );
    host.control("req_1", json!({"subtype": "initialize"}));
    host.response_to("req_1");
    host.user("edit it");
    let result = host.result();
    assert_eq!(result["subtype"], "success");
    let (code, frames) = host.finish();
    assert_eq!(code, 0);
    assert!(
        !frames
            .iter()
            .any(|f| f["type"] == "control_request" && f["request"]["subtype"] == "can_use_tool"),
        "the host was asked about an Edit that cannot succeed"
    );
    let error = frames
        .iter()
        .filter(|f| f["type"] == "user")
        .flat_map(|f| {
            f["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .find(|b| b["is_error"] == true)
        .unwrap();
    assert!(
        error.to_string().contains("File has not been read yet"),
        "{error}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "old\n"
    );
}

#[test]
fn the_hosts_updated_input_goes_through_the_rules_again() {
    let (ws, home) = dirs();
    let script = json!({"turns": [
        call("Bash", json!({"command": "touch fine.txt"})),
        call("Write", json!({"file_path": "a.txt", "content": "x"})),
        text("done"),
    ]});
    let mut host = Host::start(
        ws.path(),
        home.path(),
        &script,
        &[
            "--permission-prompt-tool",
            "stdio",
            "--disallowedTools",
            "Bash(rm:*)",
            "Edit(./secret.txt)",
        ],
    );
    host.control("req_1", json!({"subtype": "initialize"}));
    host.response_to("req_1");
    std::fs::write(ws.path().join("keep.txt"), "keep").unwrap();
    host.user("go");
    let ask = host.request("can_use_tool");
    let id = ask["request_id"].as_str().unwrap().to_owned();
    host.answer(
        &id,
        json!({"behavior": "allow", "updatedInput": {"command": "rm keep.txt"}}),
    );
    let ask = host.request("can_use_tool");
    let id = ask["request_id"].as_str().unwrap().to_owned();
    host.answer(
        &id,
        json!({"behavior": "allow", "updatedInput": {"file_path": "secret.txt", "content": "x"}}),
    );
    let result = host.result();
    let (code, _) = host.finish();
    assert_eq!(code, 0);
    assert!(ws.path().join("keep.txt").exists(), "the denied rm ran");
    assert!(
        !ws.path().join("secret.txt").exists(),
        "the denied write ran"
    );
    let denials: Vec<&str> = result["permission_denials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["tool_name"].as_str().unwrap())
        .collect();
    assert_eq!(denials, ["Bash", "Write"]);
}

#[test]
fn always_allow_on_a_compound_command_saves_one_rule_per_part() {
    let (ws, home) = dirs();
    std::fs::create_dir(ws.path().join("sub")).unwrap();
    let script = json!({"turns": [
        call("Bash", json!({"command": "cd sub && touch one.txt"})),
        call("Bash", json!({"command": "cd sub && touch two.txt"})),
        text("done"),
    ]});
    let mut host = Host::start(
        ws.path(),
        home.path(),
        &script,
        &["--permission-prompt-tool", "stdio"],
    );
    host.control("req_1", json!({"subtype": "initialize"}));
    host.response_to("req_1");
    host.user("go");
    let ask = host.request("can_use_tool");
    let suggestions = ask["request"]["permission_suggestions"].clone();
    assert_eq!(
        suggestions[0]["rules"],
        json!([{"toolName": "Bash", "ruleContent": "touch:*"}]),
        "{suggestions}"
    );
    let id = ask["request_id"].as_str().unwrap().to_owned();
    host.answer(
        &id,
        json!({"behavior": "allow", "updatedPermissions": [suggestions[0].clone()]}),
    );
    // The second command is covered: not asked again.
    let result = host.result();
    assert_eq!(result["subtype"], "success");
    let (code, frames) = host.finish();
    assert_eq!(code, 0);
    let asks = frames
        .iter()
        .filter(|f| f["type"] == "control_request" && f["request"]["subtype"] == "can_use_tool")
        .count();
    assert_eq!(asks, 1);
    assert!(ws.path().join("sub/one.txt").exists() && ws.path().join("sub/two.txt").exists());
    let local = std::fs::read_to_string(ws.path().join(".skiff/settings.local.json")).unwrap();
    assert!(local.contains("\"Bash(touch:*)\""), "{local}");
}

#[test]
fn get_context_usage_answers_while_a_turn_waits_for_the_host() {
    let (ws, home) = dirs();
    let script = json!({"turns": [
        call("Write", json!({"file_path": "a.txt", "content": "x"})),
        text("done"),
    ]});
    let mut host = Host::start(
        ws.path(),
        home.path(),
        &script,
        &["--permission-prompt-tool", "stdio"],
    );
    host.control("req_1", json!({"subtype": "initialize"}));
    host.response_to("req_1");
    host.user("write a file");
    // The turn waits for this answer; the context's breakdown comes meanwhile.
    let ask = host.request("can_use_tool");
    host.control("req_ctx", json!({"subtype": "get_context_usage"}));
    let usage = host.response_to("req_ctx");
    assert_eq!(usage["subtype"], "success", "{usage}");
    let u = &usage["response"];
    assert_eq!(u["model"], "scripted");
    assert!(u["totalTokens"].as_u64().unwrap() > 0, "{u}");
    assert!(u["rawMaxTokens"].as_u64().unwrap() >= u["maxTokens"].as_u64().unwrap());
    let ids: Vec<&str> = u["categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    for id in ["system_prompt", "system_tools", "messages", "free_space"] {
        assert!(ids.contains(&id), "{ids:?}");
    }
    for c in u["categories"].as_array().unwrap() {
        assert!(
            ["used", "free", "buffer"].contains(&c["kind"].as_str().unwrap()),
            "{c}"
        );
    }
    let id = ask["request_id"].as_str().unwrap().to_owned();
    host.answer(
        &id,
        json!({"behavior": "allow", "updatedInput": {"file_path": "a.txt", "content": "x"}}),
    );
    assert_eq!(host.result()["subtype"], "success");
    let (code, _) = host.finish();
    assert_eq!(code, 0);
}

#[test]
fn initialize_options_agents_schema_and_a_verbatim_prompt() {
    let (ws, home) = dirs();
    let script = json!({"turns": [
        call("StructuredOutput", json!({"answer": 42})),
        text("unused"),
    ]});
    let mut host = Host::start(ws.path(), home.path(), &script, &[]);
    // An unusable schema fails initialize with the reason.
    host.control(
        "req_bad",
        json!({"subtype": "initialize", "jsonSchema": {"type": "string"}}),
    );
    let bad = host.response_to("req_bad");
    assert_eq!(bad["subtype"], "error", "{bad}");
    assert!(
        bad["error"].as_str().unwrap().contains("jsonSchema"),
        "{bad}"
    );
    host.control(
        "req_1",
        json!({"subtype": "initialize",
               "agents": {"helper": {"description": "Helps.", "prompt": "You help.", "model": "haiku"}},
               "jsonSchema": {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}}),
    );
    let init = host.response_to("req_1");
    let agents = init["response"]["agents"].as_array().unwrap().clone();
    assert!(
        agents
            .iter()
            .any(|a| a["name"] == "helper" && a["model"] == "haiku"),
        "{agents:?}"
    );
    let names: Vec<&str> = init["response"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"compact") && names.contains(&"clear"),
        "{names:?}"
    );
    assert_eq!(init["response"]["claude_code_version"], "2.1.330");
    // `client_composed`: `/clear` is the prompt, not the command.
    host.send(
        json!({"type": "user", "session_id": "", "client_composed": true,
                     "message": {"role": "user", "content": "/clear everything"}}),
    );
    let result = host.result();
    assert_eq!(result["subtype"], "success", "{result}");
    assert_eq!(result["structured_output"], json!({"answer": 42}));
    let init_frame = host
        .seen
        .iter()
        .find(|f| f["subtype"] == "init")
        .unwrap()
        .clone();
    assert!(
        init_frame["agents"]
            .as_array()
            .unwrap()
            .contains(&json!("helper"))
    );
    assert!(
        init_frame["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("StructuredOutput"))
    );
    let (code, _) = host.finish();
    assert_eq!(code, 0);
}

#[test]
fn malformed_control_frames_are_answered_and_broken_answers_fail_closed() {
    let (ws, home) = dirs();
    let script = json!({"turns": [
        call("Write", json!({"file_path": "a.txt", "content": "x"})),
        text("done"),
    ]});
    let mut host = Host::start(
        ws.path(),
        home.path(),
        &script,
        &["--permission-prompt-tool", "stdio"],
    );
    // A request that cannot be read is answered with an error naming it.
    host.control("bad1", json!({"subtype": "set_permission_mode", "mode": 5}));
    let bad = host.response_to("bad1");
    assert_eq!(bad["subtype"], "error");
    assert!(
        bad["error"]
            .as_str()
            .unwrap()
            .starts_with("invalid set_permission_mode request:"),
        "{bad}"
    );
    host.control("bad2", json!({"subtype": "rewind_files"}));
    let bad = host.response_to("bad2");
    assert!(
        bad["error"].as_str().unwrap().contains("user_message_id"),
        "{bad}"
    );
    host.send(json!({"type": "control_request", "request_id": "bad3", "request": "interrupt"}));
    assert_eq!(host.response_to("bad3")["subtype"], "error");
    // Fields this version does not know are no reason to fail.
    host.control(
        "init",
        json!({"subtype": "initialize", "hooks": null, "someFutureOption": {"x": 1}}),
    );
    assert_eq!(host.response_to("init")["subtype"], "success");
    host.user("write a file");
    let ask = host.request("can_use_tool");
    let id = ask["request_id"].as_str().unwrap().to_owned();
    // An answer that cannot be read denies the call rather than allowing it or hanging.
    host.send(
        json!({"type": "control_response", "response": {"subtype": "maybe",
        "request_id": id, "response": {"behavior": "allow"}}}),
    );
    let result = host.result();
    assert_eq!(
        result["permission_denials"][0]["tool_name"], "Write",
        "{result}"
    );
    let (code, _) = host.finish();
    assert_eq!(code, 0);
    assert!(!ws.path().join("a.txt").exists());
}
