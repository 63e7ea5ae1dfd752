#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write as _;
use std::path::PathBuf;

use serde_json::{Value, json};
use skiff_protocol::{
    ContentBlock, Message, MessageContent, MessageResponse, Role, StopReason, ToolResultBlock,
    ToolUseBlock, Usage, validate_history,
};

use super::*;
use crate::store::{SessionEntry, SessionStore};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn tool_use(id: &str) -> ContentBlock {
    ContentBlock::ToolUse(ToolUseBlock {
        id: id.into(),
        name: "Bash".into(),
        input: json!({"command": "echo hi"}),
        cache_control: None,
    })
}

fn tool_result(id: &str, text: &str) -> ContentBlock {
    ContentBlock::ToolResult(ToolResultBlock::text(id, text, false))
}

fn response(id: &str, content: Vec<ContentBlock>, stop: StopReason) -> MessageResponse {
    MessageResponse {
        id: id.into(),
        kind: "message".into(),
        role: Role::Assistant,
        model: "claude-sonnet-4-5".into(),
        content,
        stop_reason: Some(stop),
        stop_sequence: None,
        usage: Usage {
            input_tokens: 100,
            output_tokens: 20,
            ..Usage::default()
        },
        extra: Default::default(),
    }
}

/// A store writing to a temp dir, and the path.
fn store(dir: &Path) -> (JsonlTranscript, PathBuf) {
    let path = session_path(&dir.join("home"), Path::new("/tmp/proj"), "s1");
    let mut meta = TranscriptMeta::new("s1", "/tmp/proj");
    meta.git_branch = Some("main".into());
    (JsonlTranscript::new(&path, meta), path)
}

fn user(store: &JsonlTranscript, blocks: &[ContentBlock], results: &[Option<Value>]) {
    store.append(SessionEntry::User {
        blocks,
        tool_use_results: results,
    });
}

/// Write raw JSON lines (a hand-made transcript).
fn write_raw(path: &Path, lines: &[Value]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut s = String::new();
    for l in lines {
        s.push_str(&l.to_string());
        s.push('\n');
    }
    std::fs::write(path, s).unwrap();
}

/// A linear chain of message lines: (type, content).
fn chain(lines: &[(&str, Value)]) -> Vec<Value> {
    let mut parent: Option<String> = None;
    lines
        .iter()
        .enumerate()
        .map(|(i, (kind, content))| {
            let uuid = format!("u{i}");
            let role = if *kind == "assistant" {
                "assistant"
            } else {
                "user"
            };
            let v = json!({
                "type": kind, "uuid": uuid, "parentUuid": parent, "isSidechain": false,
                "sessionId": "s", "timestamp": format!("2026-01-01T00:00:0{}Z", i % 10),
                "cwd": "/tmp/proj",
                "message": {"role": role, "content": content},
            });
            parent = Some(uuid);
            v
        })
        .collect()
}

fn load_raw(lines: &[Value]) -> LoadedSession {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    write_raw(&path, lines);
    let loaded = load_session(&path).unwrap();
    if !loaded.messages.is_empty() {
        validate_history(&loaded.messages).unwrap();
    }
    loaded
}

fn blocks(m: &Message) -> Vec<ContentBlock> {
    m.content.to_blocks()
}

#[test]
fn escaping_matches_claude_code() {
    assert_eq!(escape_project_path("/tmp/proj"), "-tmp-proj");
    assert_eq!(escape_project_path("/a b/ü😀.x"), "-a-b-----x"); // 😀 is two UTF-16 units
    assert_eq!(escape_project_path(""), "");
    // Values computed with Node.js from the algorithm in PROTOCOL.md §9.
    assert_eq!(
        base36(u64::from(js_hash("/tmp/proj").unsigned_abs())),
        "uddym4"
    );
    assert_eq!(base36(u64::from(js_hash("a").unsigned_abs())), "2p");
    assert_eq!(base36(0), "0");
    let long = format!(
        "/home/user/{}proj ü😀",
        "very-long-directory-name/".repeat(9)
    );
    let escaped = escape_project_path(&long);
    assert_eq!(
        escaped,
        "-home-user-very-long-directory-name-very-long-directory-name-very-long-directory-name-\
         very-long-directory-name-very-long-directory-name-very-long-directory-name-\
         very-long-directory-name-very-long-dire-7iy22r"
    );
    assert_eq!(escaped.len(), 200 + 1 + 6);
    // Exactly 200 characters: no hash.
    let p200 = format!("/{}", "a".repeat(199));
    assert_eq!(escape_project_path(&p200).len(), 200);
    // The hash of i32::MIN's absolute value must not overflow.
    assert_eq!(base36(u64::from(i32::MIN.unsigned_abs())), "zik0zk");
}

#[test]
fn session_ids_that_could_escape_the_directory_are_invalid() {
    assert!(is_valid_session_id("c9d7e50d-a2d7-4cb9-b6f4-1b7ca93ab4c3"));
    assert!(is_valid_session_id("my_session-1"));
    for bad in ["", "../x", "a/b", "a.b", "a b", &"x".repeat(129)] {
        assert!(!is_valid_session_id(bad), "{bad:?}");
    }
}

#[test]
fn lines_have_the_sample_shape_and_chain() {
    let dir = tempfile::tempdir().unwrap();
    let (store, path) = store(dir.path());
    user(
        &store,
        &[
            ContentBlock::text("<system-reminder>\nmemory\n</system-reminder>"),
            ContentBlock::text("say hi"),
        ],
        &[],
    );
    let reply = response(
        "msg_1",
        vec![ContentBlock::text("I'll do that."), tool_use("toolu_1")],
        StopReason::ToolUse,
    );
    store.append(SessionEntry::Assistant { message: &reply });
    user(
        &store,
        &[tool_result("toolu_1", "hi")],
        &[Some(
            json!({"stdout": "hi", "stderr": "", "interrupted": false}),
        )],
    );
    let end = response(
        "msg_2",
        vec![ContentBlock::text("done")],
        StopReason::EndTurn,
    );
    store.append(SessionEntry::Assistant { message: &end });
    store.turn_complete();
    store.flush();

    let ours = read_lines(&path);
    assert_eq!(ours.len(), 4, "one line per message");
    let sample: Vec<Value> = std::fs::read_to_string(
        repo_root().join("testdata/claude-code/transcript_session_sample.jsonl"),
    )
    .unwrap()
    .lines()
    .map(|l| serde_json::from_str(l).unwrap())
    .collect();
    let sample_user = sample.iter().find(|l| l["type"] == "user").unwrap();
    let sample_result = sample
        .iter()
        .find(|l| l["type"] == "user" && l.get("toolUseResult").is_some())
        .unwrap();
    let sample_assistant = sample.iter().find(|l| l["type"] == "assistant").unwrap();
    let required = [
        "type",
        "uuid",
        "parentUuid",
        "isSidechain",
        "sessionId",
        "cwd",
        "version",
        "gitBranch",
        "userType",
        "timestamp",
        "message",
    ];
    for (line, sample_line) in [
        (&ours[0], sample_user),
        (&ours[1], sample_assistant),
        (&ours[2], sample_result),
        (&ours[3], sample_assistant),
    ] {
        for k in required {
            assert!(line.get(k).is_some(), "missing {k} in {line}");
            assert!(sample_line.get(k).is_some(), "sample lacks {k}");
        }
        for k in line.as_object().unwrap().keys() {
            assert!(
                sample_line.get(k).is_some(),
                "key {k} is not in the sample's {} line",
                sample_line["type"]
            );
        }
        assert_eq!(line["isSidechain"], false);
        assert_eq!(line["userType"], "external");
        assert_eq!(line["sessionId"], "s1");
        assert_eq!(line["cwd"], "/tmp/proj");
        assert_eq!(line["gitBranch"], "main");
        assert_eq!(line["version"], VERSION);
    }
    assert_eq!(ours[0]["parentUuid"], Value::Null);
    for i in 1..4 {
        assert_eq!(ours[i]["parentUuid"], ours[i - 1]["uuid"]);
    }
    assert_eq!(ours[0]["message"]["role"], "user");
    assert_eq!(ours[0]["message"]["content"][1]["text"], "say hi");
    assert_eq!(ours[1]["message"]["id"], "msg_1");
    assert_eq!(ours[1]["message"]["stop_reason"], "tool_use");
    assert_eq!(ours[1]["message"]["usage"]["output_tokens"], 20);
    assert_eq!(ours[2]["toolUseResult"]["stdout"], "hi");
    assert_eq!(ours[2]["sourceToolAssistantUUID"], ours[1]["uuid"]);
    assert_eq!(
        ours[2]["message"]["content"][0],
        json!({"type": "tool_result", "tool_use_id": "toolu_1", "content": "hi", "is_error": false})
    );

    let loaded = load_session(&path).unwrap();
    assert_eq!(loaded.session_id, "s1");
    assert_eq!(loaded.first_prompt.as_deref(), Some("say hi"));
    assert_eq!(loaded.messages.len(), 4);
    assert_eq!(loaded.leaf_uuid.as_deref(), ours[3]["uuid"].as_str());
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    validate_history(&loaded.messages).unwrap();
}

#[cfg(unix)]
#[test]
fn files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let (store, path) = store(dir.path());
    assert!(
        !path.exists(),
        "nothing is created before the first message"
    );
    user(&store, &[ContentBlock::text("hi")], &[]);
    store.flush();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(path.parent().unwrap()), 0o700);
    assert_eq!(mode(path.parent().unwrap().parent().unwrap()), 0o700);
}

#[test]
fn several_tool_results_in_one_entry_get_an_array() {
    let dir = tempfile::tempdir().unwrap();
    let (store, path) = store(dir.path());
    user(&store, &[ContentBlock::text("go")], &[]);
    let reply = response(
        "msg_1",
        vec![tool_use("t1"), tool_use("t2")],
        StopReason::ToolUse,
    );
    store.append(SessionEntry::Assistant { message: &reply });
    user(
        &store,
        &[tool_result("t1", "a"), tool_result("t2", "b")],
        &[Some(json!({"n": 1})), None],
    );
    store.flush();
    let lines = read_lines(&path);
    assert_eq!(lines[2]["toolUseResult"], json!([{"n": 1}, null]));
}

#[test]
fn a_tool_call_cut_at_max_tokens_is_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let (store, path) = store(dir.path());
    user(&store, &[ContentBlock::text("go")], &[]);
    let mut cut = response("msg_1", vec![tool_use("t1")], StopReason::MaxTokens);
    if let ContentBlock::ToolUse(t) = &mut cut.content[0] {
        t.input = json!("{\"command\": \"ec");
    }
    store.append(SessionEntry::Assistant { message: &cut });
    store.flush();
    assert_eq!(read_lines(&path).len(), 1);
}

#[test]
fn the_claude_code_sample_loads() {
    let loaded =
        load_session(&repo_root().join("testdata/claude-code/transcript_session_sample.jsonl"))
            .unwrap();
    validate_history(&loaded.messages).unwrap();
    let roles: Vec<Role> = loaded.messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [
            Role::User,
            Role::Assistant,
            Role::User,
            Role::Assistant,
            Role::User,
            Role::Assistant
        ]
    );
    // The two lines of msg_mock002 (text, tool_use) are one message.
    assert_eq!(blocks(&loaded.messages[1]).len(), 2);
    assert_eq!(loaded.messages[4].content.text(), "second prompt");
    assert_eq!(loaded.messages[5].content.text(), "resumed reply");
    assert_eq!(loaded.first_prompt.as_deref(), Some("say hi"));
    assert_eq!(loaded.cwd.as_deref(), Some("/tmp/proj"));
    assert!(loaded.created.is_some() && loaded.updated.is_some());
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
}

#[test]
fn a_half_written_last_line_is_ignored_and_nothing_before_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let (store, path) = store(dir.path());
    user(&store, &[ContentBlock::text("one")], &[]);
    let a = response("m1", vec![ContentBlock::text("two")], StopReason::EndTurn);
    store.append(SessionEntry::Assistant { message: &a });
    user(&store, &[ContentBlock::text("three")], &[]);
    let b = response("m2", vec![ContentBlock::text("four")], StopReason::EndTurn);
    store.append(SessionEntry::Assistant { message: &b });
    store.flush();
    let full = std::fs::read_to_string(&path).unwrap();
    drop(store);
    // A crash in the middle of the next line.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(br#"{"parentUuid":"x","isSidechain":false,"type":"user","message":{"role":"us"#)
        .unwrap();
    drop(f);

    let loaded = load_session(&path).unwrap();
    let texts: Vec<String> = loaded.messages.iter().map(|m| m.content.text()).collect();
    assert_eq!(texts, ["one", "two", "three", "four"]);
    assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
    assert!(loaded.warnings[0].contains("half-written last line"));

    // Resuming appends after it: the half line is closed first, the chain continues from the
    // last good line, and both loads agree.
    let (store, _) = store_again(dir.path(), loaded.leaf_uuid.clone());
    user(&store, &[ContentBlock::text("five")], &[]);
    store.flush();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with(&full));
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["parentUuid"].as_str(), loaded.leaf_uuid.as_deref());
    let again = load_session(&path).unwrap();
    let texts: Vec<String> = again.messages.iter().map(|m| m.content.text()).collect();
    assert_eq!(texts, ["one", "two", "three", "four", "five"]);
    assert_eq!(again.warnings.len(), 1);
    assert!(again.warnings[0].contains("line 5"), "{:?}", again.warnings);
}

fn store_again(dir: &Path, leaf: Option<String>) -> (JsonlTranscript, PathBuf) {
    let (s, p) = store(dir);
    (s.continue_from(leaf), p)
}

#[test]
fn a_dangling_tool_use_at_the_end_gets_an_interrupted_result() {
    let loaded = load_raw(&chain(&[
        ("user", json!("run it")),
        (
            "assistant",
            json!([{"type": "text", "text": "ok"}, {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "sleep 30"}}]),
        ),
    ]));
    assert_eq!(loaded.messages.len(), 3);
    let last = blocks(&loaded.messages[2]);
    assert_eq!(
        last,
        [ContentBlock::ToolResult(ToolResultBlock::text(
            "t1",
            crate::conversation::INTERRUPTED,
            true
        ))]
    );
    assert!(loaded.warnings[0].contains("marked interrupted"));
}

#[test]
fn missing_results_go_first_into_the_following_user_message() {
    let loaded = load_raw(&chain(&[
        ("user", json!("run")),
        (
            "assistant",
            json!([{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}},
                   {"type": "tool_use", "id": "t2", "name": "Read", "input": {}}]),
        ),
        (
            "user",
            json!([{"type": "tool_result", "tool_use_id": "t2", "content": "two"}]),
        ),
        ("user", json!("go on")),
    ]));
    assert_eq!(loaded.messages.len(), 3);
    let b = blocks(&loaded.messages[2]);
    assert_eq!(b.len(), 3);
    let ContentBlock::ToolResult(r1) = &b[0] else {
        panic!("{b:?}")
    };
    assert_eq!(r1.tool_use_id, "t1");
    assert_eq!(r1.is_error, Some(true));
    let ContentBlock::ToolResult(r2) = &b[1] else {
        panic!("{b:?}")
    };
    assert_eq!(r2.tool_use_id, "t2");
    assert_eq!(b[2], ContentBlock::text("go on"));
}

#[test]
fn orphan_results_are_dropped() {
    let loaded = load_raw(&chain(&[
        (
            "user",
            json!([{"type": "tool_result", "tool_use_id": "nope", "content": "x"}, {"type": "text", "text": "hi"}]),
        ),
        ("assistant", json!([{"type": "text", "text": "hello"}])),
        (
            "user",
            json!([{"type": "tool_result", "tool_use_id": "gone", "content": "x"}]),
        ),
        ("assistant", json!([{"type": "text", "text": "more"}])),
        ("user", json!("bye")),
    ]));
    let texts: Vec<String> = loaded.messages.iter().map(|m| m.content.text()).collect();
    // The second user message had nothing valid left: the assistant messages around it merge.
    assert_eq!(texts, ["hi", "hellomore", "bye"]);
    assert_eq!(
        loaded.messages[0].content,
        MessageContent::Text("hi".into())
    );
    assert!(loaded.warnings.iter().any(|w| w.contains("dropped 2")));
}

#[test]
fn consecutive_user_entries_are_merged() {
    let loaded = load_raw(&chain(&[
        ("user", json!("first")),
        ("user", json!([{"type": "text", "text": "second"}])),
        ("assistant", json!([{"type": "text", "text": "ok"}])),
    ]));
    assert_eq!(loaded.messages.len(), 2);
    assert_eq!(
        blocks(&loaded.messages[0]),
        [ContentBlock::text("first"), ContentBlock::text("second")]
    );
    assert_eq!(loaded.first_prompt.as_deref(), Some("first"));
}

#[test]
fn unknown_sidechain_and_meta_lines_are_skipped() {
    let mut lines = chain(&[
        ("user", json!("hi")),
        ("assistant", json!([{"type": "text", "text": "hello"}])),
    ]);
    lines.insert(
        0,
        json!({"type": "queue-operation", "operation": "enqueue", "content": "hi"}),
    );
    lines.insert(
        2,
        json!({"type": "some-future-thing", "uuid": "zz", "x": 1}),
    );
    lines.push(json!({"type": "summary", "summary": "s", "leafUuid": "u1"}));
    lines.push(
        json!({"type": "user", "uuid": "side", "parentUuid": "u1", "isSidechain": true,
        "message": {"role": "user", "content": "sidechain"}}),
    );
    lines.push(
        json!({"type": "user", "uuid": "meta", "parentUuid": "u1", "isMeta": true,
        "message": {"role": "user", "content": "meta"}}),
    );
    lines.push(json!([1, 2, 3]));
    let loaded = load_raw(&lines);
    let texts: Vec<String> = loaded.messages.iter().map(|m| m.content.text()).collect();
    assert_eq!(texts, ["hi", "hello"]);
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
}

#[test]
fn the_newest_branch_of_a_tree_is_the_conversation() {
    // u0 <- u1 <- u2 (old branch), u1 <- u3 <- u4 (newest): the conversation is u0 u1 u3 u4.
    let mut lines = chain(&[
        ("user", json!("q")),
        ("assistant", json!([{"type": "text", "text": "a"}])),
        ("user", json!("old follow-up")),
    ]);
    lines.push(json!({"type": "user", "uuid": "u3", "parentUuid": "u1",
        "message": {"role": "user", "content": "new follow-up"}}));
    lines.push(
        json!({"type": "assistant", "uuid": "u4", "parentUuid": "u3",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "b"}]}}),
    );
    let loaded = load_raw(&lines);
    let texts: Vec<String> = loaded.messages.iter().map(|m| m.content.text()).collect();
    assert_eq!(texts, ["q", "a", "new follow-up", "b"]);
    assert_eq!(loaded.leaf_uuid.as_deref(), Some("u4"));
}

#[test]
fn an_empty_or_garbage_file_loads_as_no_messages() {
    let loaded = load_raw(&[]);
    assert!(loaded.messages.is_empty());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.jsonl");
    std::fs::write(&path, "{\"type\":\"us").unwrap();
    let loaded = load_session(&path).unwrap();
    assert!(loaded.messages.is_empty());
    assert_eq!(loaded.warnings.len(), 1);
    assert!(matches!(
        load_session(&dir.path().join("missing.jsonl")),
        Err(TranscriptError::Io { .. })
    ));
}

#[test]
fn forked_history_is_written_before_the_first_new_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fork.jsonl");
    let history = vec![
        Message::user_text("q"),
        Message::blocks(Role::Assistant, vec![tool_use("t1")]),
        Message::blocks(Role::User, vec![tool_result("t1", "r")]),
        Message::blocks(Role::Assistant, vec![ContentBlock::text("a")]),
    ];
    let store = JsonlTranscript::new(&path, TranscriptMeta::new("fork", "/w"))
        .with_initial_history(history.clone());
    assert!(!path.exists());
    user(&store, &[ContentBlock::text("next")], &[]);
    store.flush();
    let lines = read_lines(&path);
    assert_eq!(lines.len(), 5);
    assert!(lines.iter().all(|l| l["sessionId"] == "fork"));
    let loaded = load_session(&path).unwrap();
    let mut expected = history;
    expected.push(Message::user_text("next"));
    assert_eq!(loaded.messages, expected);
}

#[test]
fn listing_finding_and_latest() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let cwd = Path::new("/work/proj");
    for (n, (id, prompt)) in [("aaa-1", "first task"), ("bbb-2", "second task")]
        .into_iter()
        .enumerate()
    {
        let store = JsonlTranscript::new(session_path(home, cwd, id), TranscriptMeta::new(id, cwd));
        user(
            &store,
            &[
                ContentBlock::text("<system-reminder>\nmemory\n</system-reminder>"),
                ContentBlock::text(prompt),
            ],
            &[],
        );
        let a = response("m", vec![ContentBlock::text("ok")], StopReason::EndTurn);
        store.append(SessionEntry::Assistant { message: &a });
        store.turn_complete();
        drop(store);
        // Written a minute apart, whatever the file system's clock resolution.
        let written =
            std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000 + 60 * n as u64);
        std::fs::File::options()
            .append(true)
            .open(session_path(home, cwd, id))
            .unwrap()
            .set_modified(written)
            .unwrap();
    }
    // A file without messages is not listed.
    std::fs::write(project_dir(home, cwd).join("empty.jsonl"), "").unwrap();
    let list = list_sessions(home, cwd);
    let ids: Vec<&str> = list.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["bbb-2", "aaa-1"], "newest first");
    assert_eq!(list[0].first_prompt.as_deref(), Some("second task"));
    assert_eq!(list[0].message_count, 2);
    assert!(list[0].modified_iso().ends_with('Z'));
    assert_eq!(latest_session(home, cwd).unwrap().id, "bbb-2");
    assert!(list_sessions(home, Path::new("/elsewhere")).is_empty());

    assert_eq!(
        find_session(home, cwd, "aaa").unwrap(),
        session_path(home, cwd, "aaa-1")
    );
    assert_eq!(
        find_session(home, cwd, "bbb-2").unwrap(),
        session_path(home, cwd, "bbb-2")
    );
    assert!(matches!(
        find_session(home, cwd, "zzz"),
        Err(TranscriptError::NotFound { .. })
    ));
    assert!(matches!(
        find_session(home, cwd, "../x"),
        Err(TranscriptError::InvalidId(_))
    ));
    std::fs::write(project_dir(home, cwd).join("aaa-2.jsonl"), "").unwrap();
    assert!(matches!(
        find_session(home, cwd, "aaa"),
        Err(TranscriptError::Ambiguous { .. })
    ));
}

#[test]
fn io_errors_do_not_panic_or_stop_the_store() {
    let dir = tempfile::tempdir().unwrap();
    // The "directory" is a file: nothing can be created, every append fails quietly.
    let blocker = dir.path().join("blocker");
    std::fs::write(&blocker, "").unwrap();
    let store = JsonlTranscript::new(blocker.join("s.jsonl"), TranscriptMeta::new("s", "/w"));
    user(&store, &[ContentBlock::text("hi")], &[]);
    store.turn_complete();
    store.flush();
    drop(store);
    assert!(!blocker.join("s.jsonl").exists());
}

#[test]
fn thousands_of_lines_in_a_row_are_all_written() {
    let dir = tempfile::tempdir().unwrap();
    let (store, path) = store(dir.path());
    let text = "x".repeat(2000);
    let reply = response(
        "msg",
        vec![ContentBlock::text(&text), tool_use("t")],
        StopReason::ToolUse,
    );
    let result = [tool_result("t", &text)];
    let structured = [Some(json!({"stdout": text}))];
    let n = 2000;
    for _ in 0..n / 2 {
        store.append(SessionEntry::Assistant { message: &reply });
        user(&store, &result, &structured);
    }
    store.turn_complete();
    drop(store);
    let lines = read_lines(&path);
    assert_eq!(lines.len(), n);
    for pair in lines.windows(2) {
        assert_eq!(pair[1]["parentUuid"], pair[0]["uuid"]);
    }
}

#[test]
fn a_compaction_boundary_starts_the_conversation_anew() {
    let dir = tempfile::tempdir().unwrap();
    let (store, path) = store(dir.path());
    user(&store, &[ContentBlock::text("first task")], &[]);
    let a = response("m1", vec![tool_use("t1")], StopReason::ToolUse);
    store.append(SessionEntry::Assistant { message: &a });
    user(&store, &[tool_result("t1", "long output")], &[None]);
    let b = response("m2", vec![ContentBlock::text("done")], StopReason::EndTurn);
    store.append(SessionEntry::Assistant { message: &b });
    let compacted = vec![
        Message::user_text("first task"),
        Message::blocks(Role::Assistant, vec![ContentBlock::text("summary: done")]),
    ];
    store.record_compaction(&compacted);
    user(&store, &[ContentBlock::text("next")], &[]);
    let c = response("m3", vec![ContentBlock::text("ok")], StopReason::EndTurn);
    store.append(SessionEntry::Assistant { message: &c });
    store.flush();

    let lines = read_lines(&path);
    let boundary = &lines[4];
    assert_eq!(boundary["type"], "system");
    assert_eq!(boundary["subtype"], "compact_boundary");
    assert_eq!(boundary["parentUuid"], Value::Null);
    assert_eq!(boundary["logicalParentUuid"], lines[3]["uuid"]);
    assert_eq!(lines[5]["parentUuid"], boundary["uuid"]);

    let loaded = load_session(&path).unwrap();
    let mut expected = compacted;
    expected.push(Message::user_text("next"));
    expected.push(Message::blocks(
        Role::Assistant,
        vec![ContentBlock::text("ok")],
    ));
    assert_eq!(loaded.messages, expected);
    assert_eq!(loaded.first_prompt.as_deref(), Some("first task"));
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
}

#[test]
fn a_trim_marker_replaces_the_front_and_a_damaged_one_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let (store, path) = store(dir.path());
    user(&store, &[ContentBlock::text("one")], &[]);
    store.append(SessionEntry::Assistant {
        message: &response("m1", vec![ContentBlock::text("a1")], StopReason::EndTurn),
    });
    user(&store, &[ContentBlock::text("two")], &[]);
    store.append(SessionEntry::Assistant {
        message: &response("m2", vec![ContentBlock::text("a2")], StopReason::EndTurn),
    });
    // The first three messages became one note message (holding the prompt "two").
    let first = Message::blocks(
        Role::User,
        vec![ContentBlock::text("[trimmed]"), ContentBlock::text("two")],
    );
    store.record_trim(3, &first);
    user(&store, &[ContentBlock::text("three")], &[]);
    drop(store);
    let loaded = load_session(&path).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(
        loaded.messages,
        vec![
            first.clone(),
            Message::blocks(Role::Assistant, vec![ContentBlock::text("a2")]),
            Message::user_text("three"),
        ]
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 6, "one small line for the trim");

    // A marker claiming more messages than there are is ignored, with a warning.
    let mut lines = read_lines(&path);
    let marker = lines
        .iter_mut()
        .find(|l| l["subtype"] == "skiff_trim")
        .unwrap();
    marker["replacedMessages"] = json!(99);
    write_raw(&path, &lines);
    let loaded = load_session(&path).unwrap();
    assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
    assert_eq!(loaded.messages.len(), 5);
    validate_history(&loaded.messages).unwrap();
}
