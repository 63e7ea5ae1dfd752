//! Snapshots of the viewport's states (ratatui's `TestBackend`, insta), driven by the same
//! session events and keys as the real UI.

use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui_core::backend::TestBackend;
use ratatui_core::terminal::Terminal;
use serde_json::json;
use skiff_core::permissions::{PermissionEngine, RuleSet, Workspace};
use skiff_core::{ApprovalRequest, Event, PermissionMode, RequestId};
use skiff_protocol::sdk::{AssistantMessage, SdkMessage, UserMessage};
use skiff_protocol::{
    ContentBlock, Delta, Message, MessageResponse, Role, StreamEvent, ToolResultBlock,
    ToolResultContent, ToolUseBlock,
};

use super::approve::ApprovalMenu;
use super::input::Intent;
use super::ui::{Overlay, Ui};
use crate::front::history::History;

struct Rig {
    ui: Ui,
    engine: Arc<PermissionEngine>,
    dir: tempfile::TempDir,
}

impl Rig {
    fn new(width: u16) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let engine = Arc::new(PermissionEngine::new(
            RuleSet::default(),
            Workspace::new(dir.path(), &[]),
        ));
        let mut ui = Ui::new(width, History::default());
        ui.status.model = "claude-sonnet-4-5".into();
        ui.status.context_window = Some(200_000);
        ui.commands = crate::front::commands::help_entries(&Default::default(), |_| true).0;
        Self { ui, engine, dir }
    }

    fn key(&mut self, code: KeyCode, modifiers: KeyModifiers) -> Vec<Intent> {
        self.ui.key(KeyEvent::new(code, modifiers), self.dir.path())
    }

    fn typed(&mut self, text: &str) -> Vec<Intent> {
        let mut out = Vec::new();
        for c in text.chars() {
            out.extend(self.key(KeyCode::Char(c), KeyModifiers::NONE));
        }
        out
    }

    /// The viewport as a `TestBackend` shows it (max `height` rows).
    fn screen(&self, height: u16) -> String {
        let frame = self.ui.layout(height);
        let mut t = Terminal::new(TestBackend::new(self.ui.width, frame.height())).unwrap();
        t.draw(|f| {
            if let Some(p) = frame.paint(f.buffer_mut()) {
                f.set_cursor_position(p);
            }
        })
        .unwrap();
        t.backend().to_string()
    }

    /// The lines committed to the scrollback so far, as text.
    fn committed(&mut self) -> String {
        self.ui
            .take_commits()
            .iter()
            .map(crate::term::wrap::plain)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn delta(text: &str) -> Event {
    Event::Delta(StreamEvent::ContentBlockDelta {
        index: 0,
        delta: Delta::TextDelta { text: text.into() },
    })
}

fn start() -> Event {
    Event::Delta(StreamEvent::MessageStart {
        message: MessageResponse::new("m", "x"),
    })
}

fn assistant_call(id: &str, name: &str, input: serde_json::Value) -> Event {
    let mut message = MessageResponse::new("m", "x");
    message.content = vec![ContentBlock::ToolUse(ToolUseBlock {
        id: id.into(),
        name: name.into(),
        input,
        cache_control: None,
    })];
    Event::Frame(SdkMessage::Assistant(AssistantMessage {
        message,
        parent_tool_use_id: None,
        session_id: "s".into(),
        uuid: "u".into(),
        timestamp: None,
        request_id: None,
        error: None,
        extra: Default::default(),
    }))
}

fn tool_result(id: &str, text: &str, structured: Option<serde_json::Value>) -> Event {
    Event::Frame(SdkMessage::User(UserMessage {
        message: Message::blocks(
            Role::User,
            vec![ContentBlock::ToolResult(ToolResultBlock {
                tool_use_id: id.into(),
                content: Some(ToolResultContent::Text(text.into())),
                is_error: None,
                cache_control: None,
            })],
        ),
        parent_tool_use_id: None,
        session_id: "s".into(),
        uuid: "u".into(),
        timestamp: None,
        tool_use_result: structured,
        extra: Default::default(),
    }))
}

#[test]
fn idle_composer_and_status() {
    let r = Rig::new(60);
    insta::assert_snapshot!(r.screen(20));
}

#[test]
fn a_long_paragraph_streams_before_its_newline() {
    let mut r = Rig::new(50);
    r.ui.start_busy(false);
    r.ui.event(&start());
    let words = "The quick brown fox jumps over the lazy dog. ".repeat(4);
    r.ui.event(&delta(&words));
    // Nothing is committed (the block is not complete) but all of it is on screen.
    assert_eq!(r.committed(), "");
    insta::assert_snapshot!(r.screen(20));
    // The paragraph ends: committed once, styled, and gone from the live part.
    r.ui.event(&delta("\n\nNext **bold**"));
    let committed = r.committed().replace('\n', " ");
    assert_eq!(
        committed.matches("quick brown fox").count(),
        4,
        "{committed}"
    );
    assert!(!r.screen(20).contains("quick brown"));
    r.ui.event(&Event::Delta(StreamEvent::ContentBlockStop { index: 0 }));
    assert_eq!(r.committed(), "\nNext bold");
}

#[test]
fn a_running_tool_and_its_outcome() {
    let mut r = Rig::new(60);
    r.ui.start_busy(false);
    r.ui.event(&start());
    r.ui.event(&Event::Delta(StreamEvent::MessageStop));
    r.ui.event(&assistant_call(
        "t1",
        "Bash",
        json!({"command": "sleep 30"}),
    ));
    insta::assert_snapshot!(r.screen(20));
    r.ui.event(&tool_result("t1", "done\nline 2\nline 3", None));
    assert_eq!(r.committed(), "● Bash(sleep 30)\n  ⎿  done (+2 lines)");
}

#[test]
fn an_auto_approved_edit_shows_its_diff_with_real_line_numbers() {
    let mut r = Rig::new(60);
    r.ui.start_busy(false);
    r.ui.event(&start());
    r.ui.event(&Event::Delta(StreamEvent::MessageStop));
    r.ui.event(&assistant_call("t1", "Edit", json!({"file_path": "a.txt"})));
    let structured = json!({
        "filePath": "a.txt", "oldString": "five", "newString": "FIVE",
        "originalFile": "x", "userModified": false, "replaceAll": false,
        "structuredPatch": [{"oldStart": 3, "oldLines": 5, "newStart": 3, "newLines": 5,
            "lines": [" three", " four", "-five", "+FIVE", " six", " seven"]}]
    });
    r.ui.event(&tool_result(
        "t1",
        "The file a.txt has been updated successfully.",
        Some(structured),
    ));
    insta::assert_snapshot!(r.committed());
}

#[test]
fn the_approval_menu_with_a_diff_and_its_keys() {
    let mut r = Rig::new(60);
    let text: String = (1..=8).map(|i| format!("line {i}\n")).collect();
    std::fs::write(r.dir.path().join("a.txt"), text).unwrap();
    let request = ApprovalRequest {
        tool_name: "Edit".into(),
        input: json!({"file_path": "a.txt", "old_string": "line 6", "new_string": "line six"}),
        tool_use_id: "t1".into(),
        reason: String::new(),
    };
    r.ui.overlay = Overlay::Approval(Box::new(ApprovalMenu::new(
        RequestId("r1".into()),
        request,
        r.dir.path(),
        &r.engine,
    )));
    insta::assert_snapshot!(r.screen(30));
    // Down moves; the letter answers.
    assert!(r.key(KeyCode::Down, KeyModifiers::NONE).is_empty());
    let intents = r.key(KeyCode::Char('a'), KeyModifiers::NONE);
    let [Intent::Answer(d)] = intents.as_slice() else {
        panic!("{intents:?}")
    };
    assert!(
        matches!(
            d.updates.as_slice(),
            [skiff_core::permissions::PermissionUpdate::AddRules { rules, .. }] if !rules.is_empty()
        ),
        "{:?}",
        d.updates
    );
}

#[test]
fn the_approval_menu_at_forty_columns() {
    let mut r = Rig::new(40);
    let request = ApprovalRequest {
        tool_name: "Bash".into(),
        input: json!({"command": "cargo test --workspace --locked -- --nocapture"}),
        tool_use_id: "t1".into(),
        reason: String::new(),
    };
    r.ui.overlay = Overlay::Approval(Box::new(ApprovalMenu::new(
        RequestId("r1".into()),
        request,
        r.dir.path(),
        &r.engine,
    )));
    let screen = r.screen(30);
    for line in screen.lines() {
        assert!(crate::term::wrap::width(line) <= 42, "{line}");
    }
    insta::assert_snapshot!(screen);
    // No, then what to do instead.
    assert!(r.key(KeyCode::Char('n'), KeyModifiers::NONE).is_empty());
    r.typed("use make");
    let intents = r.key(KeyCode::Enter, KeyModifiers::NONE);
    let [Intent::Answer(d)] = intents.as_slice() else {
        panic!("{intents:?}")
    };
    let skiff_core::Answer::Approval(skiff_core::ApprovalAnswer::Deny { message, .. }) = &d.answer
    else {
        panic!()
    };
    assert!(message.ends_with("use make"));
}

#[test]
fn slash_opens_the_command_menu() {
    let mut r = Rig::new(70);
    r.typed("/c");
    insta::assert_snapshot!(r.screen(20));
    // Enter on a command without arguments sends it.
    let intents = r.key(KeyCode::Enter, KeyModifiers::NONE);
    assert!(
        matches!(intents.as_slice(), [Intent::Submit(s)] if s.trim() == "/clear"),
        "{intents:?}"
    );
}

#[test]
fn at_opens_file_completion() {
    let mut r = Rig::new(60);
    let intents = r.typed("read @mai");
    assert!(matches!(intents.last(), Some(Intent::Files(q)) if q == "mai"));
    r.ui.set_file_matches(vec!["src/main.rs".into(), "docs/maintaining.md".into()]);
    insta::assert_snapshot!(r.screen(20));
    r.key(KeyCode::Tab, KeyModifiers::NONE);
    assert_eq!(r.ui.composer.text(), "read @src/main.rs ");
}

#[test]
fn shift_tab_cycles_the_mode_and_queued_messages_show() {
    let mut r = Rig::new(80);
    let intents = r.key(KeyCode::BackTab, KeyModifiers::SHIFT);
    assert!(matches!(intents.as_slice(), [Intent::CycleMode]));
    r.ui.status.mode = PermissionMode::AcceptEdits;
    r.ui.start_busy(false);
    r.ui.queued.push_back("and then run the tests".into());
    r.ui.todos = crate::term::view::TodoLine::from_input(&json!({"todos": [
        {"content": "Read the code", "activeForm": "Reading the code", "status": "completed"},
        {"content": "Fix it", "activeForm": "Fixing it", "status": "in_progress"},
        {"content": "Test", "activeForm": "Testing", "status": "pending"}
    ]}));
    insta::assert_snapshot!(r.screen(20));
}

#[test]
fn esc_interrupts_and_twice_rewinds() {
    let mut r = Rig::new(60);
    r.ui.start_busy(false);
    assert!(matches!(
        r.key(KeyCode::Esc, KeyModifiers::NONE).as_slice(),
        [Intent::Interrupt]
    ));
    r.ui.busy = None;
    assert!(r.key(KeyCode::Esc, KeyModifiers::NONE).is_empty());
    assert!(matches!(
        r.key(KeyCode::Esc, KeyModifiers::NONE).as_slice(),
        [Intent::Rewind]
    ));
    // Ctrl-C: clears what is typed, then twice exits.
    r.typed("draft");
    r.key(KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert!(r.ui.composer.is_empty());
    assert!(r.key(KeyCode::Char('c'), KeyModifiers::CONTROL).is_empty());
    assert!(matches!(
        r.key(KeyCode::Char('c'), KeyModifiers::CONTROL).as_slice(),
        [Intent::Exit]
    ));
}

#[test]
fn multi_line_editing_and_history() {
    let mut r = Rig::new(40);
    r.typed("first line");
    r.key(KeyCode::Enter, KeyModifiers::ALT);
    r.typed("second\\");
    r.key(KeyCode::Enter, KeyModifiers::NONE);
    r.typed("third");
    insta::assert_snapshot!(r.screen(20));
    let intents = r.key(KeyCode::Enter, KeyModifiers::NONE);
    assert!(matches!(intents.as_slice(), [Intent::Submit(s)] if s == "first line\nsecond\nthird"));
    r.key(KeyCode::Up, KeyModifiers::NONE);
    assert_eq!(r.ui.composer.text(), "first line\nsecond\nthird");
}

#[test]
fn a_large_paste_is_one_block() {
    let mut r = Rig::new(60);
    r.ui.paste(&"fn x() {}\n".repeat(40));
    insta::assert_snapshot!(r.screen(10));
}

#[test]
fn bang_first_is_shell_mode() {
    let mut r = Rig::new(60);
    r.typed("!ls -la");
    assert!(r.ui.shell_mode);
    assert_eq!(r.ui.composer.text(), "ls -la");
    insta::assert_snapshot!(r.screen(20));
    let intents = r.key(KeyCode::Enter, KeyModifiers::NONE);
    assert!(
        matches!(intents.as_slice(), [Intent::Submit(s)] if s == "!ls -la"),
        "{intents:?}"
    );
    assert!(!r.ui.shell_mode);
    // Backspace on nothing leaves shell mode; a `!` later in a prompt is just text.
    r.typed("!");
    assert!(r.ui.shell_mode);
    r.key(KeyCode::Backspace, KeyModifiers::NONE);
    assert!(!r.ui.shell_mode);
    r.typed("hi!");
    assert_eq!(r.ui.composer.text(), "hi!");
    assert!(!r.ui.shell_mode);
}
