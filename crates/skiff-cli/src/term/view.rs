//! What the text front ends show of a session's events: the one place that decides it, so that
//! text mode (`-p`) and the REPL cannot drift (ripgrep's sink/printer split). [`View`] turns
//! events into [`Piece`]s; each renderer only decides how a piece looks.
//!
//! A model call that is retried after part of its answer was shown starts again from scratch:
//! the part shown is withdrawn ([`Piece::Withdraw`], which terminal renderers erase), or, when
//! the output cannot be erased (a pipe or a file), answer text is held back until its message is
//! complete and a discarded attempt is never shown. Either way the answer appears once. Tool
//! calls are announced when their message is complete, so a discarded attempt's calls never are.

use std::collections::HashMap;

use skiff_core::Event;
use skiff_protocol::sdk::{ResultMessage, SdkMessage, SystemMessage};
use skiff_protocol::{ContentBlock, Delta, MessageContent, StreamEvent, ToolResultContent};

/// One entry of a shown todo list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TodoLine {
    /// `pending`, `in_progress` or `completed`.
    pub status: String,
    /// The text (the active form while in progress).
    pub text: String,
}

impl TodoLine {
    /// The list of a TodoWrite call's input (entries that do not parse are left out).
    pub fn from_input(input: &serde_json::Value) -> Vec<Self> {
        input
            .get("todos")
            .and_then(|t| t.as_array())
            .map(|todos| {
                todos
                    .iter()
                    .filter_map(|t| {
                        let status = t.get("status")?.as_str()?.to_owned();
                        let key = if status == "in_progress" {
                            "activeForm"
                        } else {
                            "content"
                        };
                        let text = t
                            .get(key)
                            .or_else(|| t.get("content"))?
                            .as_str()?
                            .to_owned();
                        Some(Self { status, text })
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// `☐ text`, `◐ text` or `☑ text`.
    pub fn render(&self) -> String {
        let mark = match self.status.as_str() {
            "completed" => "☑",
            "in_progress" => "◐",
            _ => "☐",
        };
        format!("{mark} {}", self.text)
    }
}

/// One thing to show.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    /// More of the answer.
    Text(String),
    /// A text block of the answer ended.
    TextEnd,
    /// Take back this much answer text, shown since the current model call started (it was
    /// retried and starts again).
    Withdraw(String),
    /// The model calls a tool: `● Name(summary)`.
    ToolCall {
        /// The call's id (its outcome carries the same).
        id: String,
        /// Tool name.
        name: String,
        /// Its main argument, on one line.
        summary: String,
        /// Made by a subagent (shown indented under its Task call).
        nested: bool,
    },
    /// A tool call's outcome: `⎿ line`.
    ToolOutcome {
        /// The call's id.
        id: String,
        /// One-line summary of the result.
        line: String,
        /// The call failed.
        is_error: bool,
        /// Of a subagent's call.
        nested: bool,
    },
    /// The model's todo list as it now stands (after a TodoWrite call).
    Todos(Vec<TodoLine>),
    /// What an edit tool changed in a file (after its outcome).
    Diff {
        /// The change.
        diff: crate::term::diff::FileDiff,
        /// Made by a subagent.
        nested: bool,
    },
    /// More of the model's thinking (not held back: shown only where it can be streamed).
    Thinking(String),
    /// The output of a shell command the user ran (`!cmd`).
    ShellOutput {
        /// What it printed.
        text: String,
        /// It failed.
        is_error: bool,
    },
    /// A retry announcement.
    Retry(String),
    /// A notice (`level`: info or warning).
    Notice {
        /// `info` or `warning`.
        level: String,
        /// The text.
        message: String,
    },
    /// The conversation was compacted.
    Compacted {
        /// Context tokens before.
        pre_tokens: u64,
    },
    /// A model call starts: answer text shown from here on may be withdrawn.
    CallStart,
    /// The turn ended.
    Result {
        /// The result frame.
        result: Box<ResultMessage>,
        /// Answer text was shown during the turn.
        wrote_text: bool,
    },
}

/// Turns events into pieces.
#[derive(Debug, Default)]
pub struct View {
    /// Hold answer text back until its message is complete (output that cannot be erased).
    hold_back: bool,
    tool_names: HashMap<String, String>,
    /// Answer text of the current model call already shown.
    shown: String,
    /// Answer text held back.
    held: String,
    /// Tool calls of the current model call, announced when it completes.
    calls: Vec<Piece>,
    /// The current model call's message is complete (calls arriving now are shown at once).
    complete: bool,
    /// Some answer text was shown this turn.
    wrote_text: bool,
}

impl View {
    /// A view; `hold_back` for output that cannot be erased.
    pub fn new(hold_back: bool) -> Self {
        Self {
            hold_back,
            ..Self::default()
        }
    }

    /// Whether answer text was shown since the last [`Piece::Result`].
    #[cfg(test)]
    pub fn wrote_text(&self) -> bool {
        self.wrote_text
    }

    /// The pieces of one event, appended to `out`.
    pub fn event(&mut self, event: &Event, out: &mut Vec<Piece>) {
        match event {
            Event::Delta(ev) => self.stream_event(ev, out),
            Event::Frame(frame) => self.frame(frame, out),
            _ => {}
        }
    }

    fn stream_event(&mut self, ev: &StreamEvent, out: &mut Vec<Piece>) {
        match ev {
            StreamEvent::MessageStart { .. } => {
                self.shown.clear();
                self.held.clear();
                self.calls.clear();
                self.complete = false;
                out.push(Piece::CallStart);
            }
            StreamEvent::ContentBlockDelta {
                delta: Delta::TextDelta { text },
                ..
            } if !text.is_empty() => {
                if self.hold_back {
                    self.held.push_str(text);
                } else {
                    self.shown.push_str(text);
                    self.wrote_text = true;
                    out.push(Piece::Text(text.clone()));
                }
            }
            StreamEvent::ContentBlockDelta {
                delta: Delta::ThinkingDelta { thinking },
                ..
            } if !thinking.is_empty() && !self.hold_back => {
                out.push(Piece::Thinking(thinking.clone()));
            }
            StreamEvent::ContentBlockStop { .. } if !self.hold_back => out.push(Piece::TextEnd),
            StreamEvent::MessageStop => self.message_complete(out),
            _ => {}
        }
    }

    /// The model call is complete: release what was held for it.
    fn message_complete(&mut self, out: &mut Vec<Piece>) {
        if !self.held.is_empty() {
            self.wrote_text = true;
            out.push(Piece::Text(std::mem::take(&mut self.held)));
            out.push(Piece::TextEnd);
        }
        out.append(&mut self.calls);
        self.shown.clear();
        self.complete = true;
    }

    fn frame(&mut self, frame: &SdkMessage, out: &mut Vec<Piece>) {
        match frame {
            SdkMessage::StreamEvent(s) => self.stream_event(&s.event, out),
            SdkMessage::Assistant(a) => {
                let nested = a.parent_tool_use_id.is_some();
                for block in &a.message.content {
                    if let ContentBlock::ToolUse(t) = block {
                        self.tool_names.insert(t.id.clone(), t.name.clone());
                        let mut calls = vec![Piece::ToolCall {
                            id: t.id.clone(),
                            name: t.name.clone(),
                            summary: tool_summary(&t.name, &t.input),
                            nested,
                        }];
                        if t.name == "TodoWrite" && !nested {
                            calls.push(Piece::Todos(TodoLine::from_input(&t.input)));
                        }
                        // The session shows calls once their message is complete (a
                        // subagent's arrive complete).
                        if self.complete || nested {
                            out.append(&mut calls);
                        } else {
                            self.calls.append(&mut calls);
                        }
                    }
                }
            }
            SdkMessage::User(u) => {
                let nested = u.parent_tool_use_id.is_some();
                if let Some(piece) = shell_output(u) {
                    out.push(piece);
                }
                // Tools run once their message is complete; announce calls not yet shown.
                out.append(&mut self.calls);
                if let MessageContent::Blocks(blocks) = &u.message.content {
                    for b in blocks {
                        if let ContentBlock::ToolResult(r) = b {
                            let tool = self.tool_names.remove(&r.tool_use_id).unwrap_or_default();
                            let is_error = r.is_error == Some(true);
                            // The todo list is shown as a list, not the model-facing text.
                            if tool == "TodoWrite" && !is_error {
                                continue;
                            }
                            out.push(Piece::ToolOutcome {
                                id: r.tool_use_id.clone(),
                                line: outcome_line(&tool, is_error, r.content.as_ref()),
                                is_error,
                                nested,
                            });
                            if let Some(diff) = u
                                .tool_use_result
                                .as_ref()
                                .filter(|_| !is_error)
                                .and_then(|v| crate::term::diff::from_result(&tool, v))
                            {
                                out.push(Piece::Diff { diff, nested });
                            }
                        }
                    }
                }
            }
            SdkMessage::System(SystemMessage::ApiRetry(r)) => {
                if r.discard_partial {
                    self.held.clear();
                    self.calls.clear();
                    if !self.shown.is_empty() {
                        out.push(Piece::Withdraw(std::mem::take(&mut self.shown)));
                    }
                }
                out.push(Piece::Retry(format!(
                    "{}; retrying in {:.1}s (retry {}/{})",
                    r.error,
                    r.retry_delay_ms as f64 / 1000.0,
                    r.attempt,
                    r.max_retries
                )));
            }
            SdkMessage::System(SystemMessage::Informational(i)) => out.push(Piece::Notice {
                level: i.level.clone(),
                message: i.message.clone(),
            }),
            SdkMessage::System(SystemMessage::ModelFallback(f)) => out.push(Piece::Notice {
                level: "warning".to_owned(),
                message: f.content.clone(),
            }),
            SdkMessage::System(SystemMessage::CompactBoundary(c)) => out.push(Piece::Compacted {
                pre_tokens: c.compact_metadata.pre_tokens,
            }),
            SdkMessage::Result(r) => {
                // An interrupted call: show what arrived of it.
                self.message_complete(out);
                self.calls.clear();
                self.tool_names.clear();
                out.push(Piece::Result {
                    result: Box::new(r.clone()),
                    wrote_text: self.wrote_text,
                });
                self.wrote_text = false;
            }
            _ => {}
        }
    }
}

/// The output of a user's `!cmd`, from the user frame that records it.
fn shell_output(u: &skiff_protocol::sdk::UserMessage) -> Option<Piece> {
    let MessageContent::Blocks(blocks) = &u.message.content else {
        return None;
    };
    blocks.iter().find_map(|b| {
        let ContentBlock::Text(t) = b else {
            return None;
        };
        let rest = t.text.strip_prefix("<bash-stdout>")?;
        let (stdout, rest) = rest.split_once("</bash-stdout>")?;
        let stderr = rest
            .strip_prefix("<bash-stderr>")
            .and_then(|r| r.strip_suffix("</bash-stderr>"))
            .unwrap_or("");
        let is_error = !stderr.is_empty();
        let text = if is_error { stderr } else { stdout };
        Some(Piece::ShellOutput {
            text: text.to_owned(),
            is_error,
        })
    })
}

/// The error text of a failed result.
pub fn result_error(r: &ResultMessage) -> String {
    r.errors
        .first()
        .cloned()
        .or_else(|| r.result.clone())
        .unwrap_or_else(|| "the turn failed".to_owned())
}

/// A short argument summary for the trace line: `Bash(cargo test)`, `Read(src/lib.rs)`.
pub fn tool_summary(name: &str, input: &serde_json::Value) -> String {
    let key = match name {
        "Bash" => "command",
        "Read" | "Write" | "Edit" => "file_path",
        "Glob" | "Grep" => "pattern",
        "LS" => "path",
        "NotebookEdit" => "notebook_path",
        "WebFetch" => "url",
        "WebSearch" => "query",
        "TaskOutput" | "TaskStop" => "task_id",
        "Task" | "Agent" => {
            let kind = input.get("subagent_type").and_then(|v| v.as_str());
            let what = input.get("description").and_then(|v| v.as_str());
            if let (Some(kind), Some(what)) = (kind, what) {
                return one_line(&format!("{kind}: {what}"), 80);
            }
            ""
        }
        "TodoWrite" => {
            let n = input
                .get("todos")
                .and_then(|t| t.as_array())
                .map_or(0, Vec::len);
            return format!("{n} todo{}", if n == 1 { "" } else { "s" });
        }
        _ => "",
    };
    let text = input
        .get(key)
        .and_then(|v| v.as_str())
        .map(str::to_owned)
        .unwrap_or_else(|| input.to_string());
    one_line(&text, 80)
}

/// One line about a tool result: `Read 12 lines`, `Error: …`, the first output line.
pub fn outcome_line(tool: &str, is_error: bool, content: Option<&ToolResultContent>) -> String {
    let text = match content {
        Some(ToolResultContent::Text(t)) => t.as_str(),
        Some(ToolResultContent::Blocks(_)) => "(image)",
        None => "",
    };
    let text = text
        .trim_start_matches("<tool_use_error>")
        .trim_end_matches("</tool_use_error>");
    let lines = text.lines().count();
    if tool == "Read" && !is_error && text.starts_with("1\t") {
        return format!("Read {lines} lines");
    }
    if tool == skiff_tools::web_search::NAME && !is_error {
        return web_search_outcome(text);
    }
    let first_line = text.lines().next().unwrap_or("");
    // Results that already say "Error: …" are not prefixed twice.
    let first_line = if is_error {
        first_line.strip_prefix("Error: ").unwrap_or(first_line)
    } else {
        first_line
    };
    let first = one_line(first_line, 100);
    let more = if lines > 1 {
        format!(" (+{} lines)", lines - 1)
    } else {
        String::new()
    };
    if is_error {
        format!("Error: {first}{more}")
    } else if first.is_empty() {
        "(no output)".to_owned()
    } else {
        format!("{first}{more}")
    }
}

/// A search's sources, one a line (at most ten): `Title — url`.
fn web_search_outcome(text: &str) -> String {
    let sources: Vec<(String, String)> = text
        .lines()
        .filter_map(|l| l.strip_prefix("Links: "))
        .filter_map(|json| serde_json::from_str::<Vec<serde_json::Value>>(json).ok())
        .flatten()
        .filter_map(|link| {
            let url = link.get("url")?.as_str()?.to_owned();
            let title = link
                .get("title")
                .and_then(|t| t.as_str())
                .unwrap_or(&url)
                .to_owned();
            Some((title, url))
        })
        .collect();
    if sources.is_empty() {
        return "No sources found".to_owned();
    }
    let mut out = format!(
        "{} source{}",
        sources.len(),
        if sources.len() == 1 { "" } else { "s" }
    );
    for (title, url) in sources.iter().take(10) {
        out.push_str(&format!(
            "\n      {} — {}",
            one_line(title, 60),
            one_line(url, 100)
        ));
    }
    if sources.len() > 10 {
        out.push_str(&format!("\n      … {} more", sources.len() - 10));
    }
    out
}

fn one_line(s: &str, max: usize) -> String {
    let s = s.replace('\n', " ");
    if s.chars().count() <= max {
        s
    } else {
        let cut: String = s.chars().take(max).collect();
        format!("{cut}…")
    }
}

/// Counts the terminal rows written since a mark, so they can be erased: visible columns
/// (ANSI escape sequences skipped, wide characters counted twice) wrap at the terminal width.
#[derive(Debug, Clone)]
pub struct RowCounter {
    width: usize,
    col: usize,
    /// Rows completed since the mark.
    rows: usize,
    /// Column of the mark.
    mark_col: usize,
    in_escape: bool,
}

impl RowCounter {
    /// A counter for a terminal `width` columns wide, starting at column `col`.
    pub fn new(width: usize, col: usize) -> Self {
        Self {
            width: width.max(1),
            col,
            rows: 0,
            mark_col: col,
            in_escape: false,
        }
    }

    /// Account for `s` being written.
    pub fn feed(&mut self, s: &str) {
        for ch in s.chars() {
            if self.in_escape {
                // CSI sequences end with a letter (or `~`).
                if ch.is_ascii_alphabetic() || ch == '~' {
                    self.in_escape = false;
                }
                continue;
            }
            match ch {
                '\x1b' => self.in_escape = true,
                '\n' => {
                    self.rows += 1;
                    self.col = 0;
                }
                '\r' => self.col = 0,
                c => {
                    let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
                    if self.col + w > self.width {
                        self.rows += 1;
                        self.col = 0;
                    }
                    self.col += w;
                }
            }
        }
    }

    /// The cursor's column now.
    pub fn col(&self) -> usize {
        self.col
    }

    /// The column the mark is at.
    pub fn mark_col(&self) -> usize {
        self.mark_col
    }

    /// The escape sequence that moves the cursor back to the mark and clears everything after.
    pub fn erase(&self) -> String {
        let mut s = String::from("\r");
        if self.rows > 0 {
            s.push_str(&format!("\x1b[{}A", self.rows));
        }
        if self.mark_col > 0 {
            s.push_str(&format!("\x1b[{}C", self.mark_col));
        }
        s.push_str("\x1b[J");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use skiff_protocol::sdk::ApiRetry;

    fn delta(text: &str) -> Event {
        Event::Delta(StreamEvent::ContentBlockDelta {
            index: 0,
            delta: Delta::TextDelta { text: text.into() },
        })
    }

    fn start() -> Event {
        Event::Delta(StreamEvent::MessageStart {
            message: skiff_protocol::MessageResponse::new("m", "x"),
        })
    }

    fn retry() -> Event {
        Event::Frame(SdkMessage::System(SystemMessage::ApiRetry(ApiRetry {
            attempt: 1,
            max_retries: 5,
            retry_delay_ms: 10,
            error_status: None,
            error: "connection dropped".into(),
            discard_partial: true,
            session_id: "s".into(),
            uuid: "u".into(),
        })))
    }

    fn pieces(view: &mut View, events: &[Event]) -> Vec<Piece> {
        let mut out = Vec::new();
        for e in events {
            view.event(e, &mut out);
        }
        out
    }

    fn text_of(pieces: &[Piece]) -> String {
        let mut s = String::new();
        for p in pieces {
            match p {
                Piece::Text(t) => s.push_str(t),
                Piece::Withdraw(t) => {
                    assert!(s.ends_with(t.as_str()), "{s:?} does not end with {t:?}");
                    s.truncate(s.len() - t.len());
                }
                _ => {}
            }
        }
        s
    }

    #[test]
    fn a_retried_answer_is_withdrawn_when_streaming() {
        let mut v = View::new(false);
        let events = [
            start(),
            delta("Hello, "),
            delta("wor"),
            retry(),
            start(),
            delta("Hello, world."),
            Event::Delta(StreamEvent::MessageStop),
        ];
        let out = pieces(&mut v, &events);
        assert!(out.contains(&Piece::Withdraw("Hello, wor".into())));
        assert_eq!(text_of(&out), "Hello, world.");
    }

    #[test]
    fn a_retried_answer_is_never_shown_when_held_back() {
        let mut v = View::new(true);
        let events = [
            start(),
            delta("Hello, "),
            delta("wor"),
            retry(),
            start(),
            delta("Hello, world."),
            Event::Delta(StreamEvent::MessageStop),
        ];
        let out = pieces(&mut v, &events);
        assert!(!out.iter().any(|p| matches!(p, Piece::Withdraw(_))));
        assert_eq!(
            out.iter()
                .filter(|p| matches!(p, Piece::Text(_)))
                .collect::<Vec<_>>(),
            [&Piece::Text("Hello, world.".into())]
        );
        assert!(v.wrote_text());
    }

    fn call_frame() -> Event {
        let mut message = skiff_protocol::MessageResponse::new("m", "x");
        message.content = vec![ContentBlock::ToolUse(skiff_protocol::ToolUseBlock {
            id: "t1".into(),
            name: "Bash".into(),
            input: serde_json::json!({"command": "sleep 30"}),
            cache_control: None,
        })];
        Event::Frame(SdkMessage::Assistant(
            skiff_protocol::sdk::AssistantMessage {
                message,
                parent_tool_use_id: None,
                session_id: "s".into(),
                uuid: "u".into(),
                timestamp: None,
                request_id: None,
                error: None,
                extra: Default::default(),
            },
        ))
    }

    #[test]
    fn a_call_is_shown_when_its_message_completes_before_it_runs() {
        // The call's frame before the end of its message: shown at the end.
        let mut v = View::new(false);
        let out = pieces(&mut v, &[start(), call_frame()]);
        assert!(!out.iter().any(|p| matches!(p, Piece::ToolCall { .. })));
        let out = pieces(&mut v, &[Event::Delta(StreamEvent::MessageStop)]);
        assert!(out.iter().any(|p| matches!(p, Piece::ToolCall { .. })));
        // The session sends calls after the message is complete: shown at once, not when the
        // (possibly long) tool has finished.
        let mut v = View::new(false);
        let out = pieces(
            &mut v,
            &[
                start(),
                Event::Delta(StreamEvent::MessageStop),
                call_frame(),
            ],
        );
        assert!(out.iter().any(|p| matches!(p, Piece::ToolCall { .. })));
    }

    fn frame_of(name: &str, input: serde_json::Value, parent: Option<&str>) -> Event {
        let Event::Frame(SdkMessage::Assistant(mut a)) = call_frame() else {
            unreachable!()
        };
        a.message.content = vec![ContentBlock::ToolUse(skiff_protocol::ToolUseBlock {
            id: "t2".into(),
            name: name.into(),
            input,
            cache_control: None,
        })];
        a.parent_tool_use_id = parent.map(str::to_owned);
        Event::Frame(SdkMessage::Assistant(a))
    }

    #[test]
    fn todo_lists_and_subagent_calls() {
        let todos = serde_json::json!({"todos": [
            {"content": "Run tests", "activeForm": "Running tests", "status": "in_progress"},
            {"content": "Fix bug", "activeForm": "Fixing bug", "status": "completed"},
            {"content": "Ship", "activeForm": "Shipping", "status": "pending"}
        ]});
        let mut v = View::new(false);
        let out = pieces(
            &mut v,
            &[
                start(),
                Event::Delta(StreamEvent::MessageStop),
                frame_of("TodoWrite", todos, None),
            ],
        );
        let lines: Vec<String> = out
            .iter()
            .find_map(|p| match p {
                Piece::Todos(t) => Some(t.iter().map(TodoLine::render).collect()),
                _ => None,
            })
            .unwrap();
        assert_eq!(lines, ["◐ Running tests", "☑ Fix bug", "☐ Ship"]);
        assert!(
            out.iter()
                .any(|p| matches!(p, Piece::ToolCall { summary, .. } if summary == "3 todos"))
        );

        // A subagent's call is shown at once, nested.
        let mut v = View::new(false);
        let out = pieces(
            &mut v,
            &[frame_of(
                "Read",
                serde_json::json!({"file_path": "a"}),
                Some("t1"),
            )],
        );
        assert!(
            out.iter()
                .any(|p| matches!(p, Piece::ToolCall { nested: true, name, .. } if name == "Read"))
        );
        assert_eq!(
            tool_summary(
                "Task",
                &serde_json::json!({"subagent_type": "Explore", "description": "find x"})
            ),
            "Explore: find x"
        );
    }

    #[test]
    fn a_search_shows_its_sources() {
        let text = "Web search results for query: \"rust\"\n\nLinks: [{\"title\":\"Rust\",\"url\":\"https://www.rust-lang.org\"}]\n\nNotes.\n\n\nREMINDER: …";
        assert_eq!(
            outcome_line(
                "WebSearch",
                false,
                Some(&ToolResultContent::Text(text.into()))
            ),
            "1 source\n      Rust — https://www.rust-lang.org"
        );
        assert_eq!(
            tool_summary("WebSearch", &serde_json::json!({"query": "rust 2024"})),
            "rust 2024"
        );
    }

    #[test]
    fn rows_count_wraps_newlines_and_skip_escapes() {
        let mut r = RowCounter::new(10, 0);
        r.feed("\x1b[1mhello\x1b[0m");
        assert_eq!((r.rows, r.col), (0, 5));
        r.feed(" world!\n");
        assert_eq!((r.rows, r.col), (2, 0));
        r.feed("界界界界界界");
        assert_eq!((r.rows, r.col), (3, 2));
        assert_eq!(r.erase(), "\r\x1b[3A\x1b[J");
    }
}
