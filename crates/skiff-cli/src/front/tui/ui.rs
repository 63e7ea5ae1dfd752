//! The terminal UI's state, without a terminal or a session: what the session's events did to
//! it (through [`View`], the one place that decides what is shown), the lines waiting to be
//! committed to the scrollback, and the live part (streaming answer, running tools, composer,
//! menus, status). Keys are turned into [`Intent`]s in `input.rs`, the frame is laid out in
//! `layout.rs`; the app loop (`app.rs`) carries out the intents against the session.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use ratatui_core::style::{Color, Modifier, Style};
use ratatui_core::text::{Line, Span};
use skiff_core::Event;
use skiff_protocol::sdk::{ResultMessage, SdkMessage};

use super::approve::ApprovalMenu;
use super::composer::Composer;
use super::picker::Picker;
use super::status::StatusInfo;
use crate::front::history::{History, Search};
use crate::term::diff::diff_lines;
use crate::term::live::LiveText;
use crate::term::stream::AnswerStream;
use crate::term::view::{Piece, TodoLine, View, result_error};

/// Lines of a `!cmd`'s output shown before the rest is folded into a count.
const SHELL_LINES: usize = 20;

/// A tool call that has not finished.
#[derive(Debug, Clone)]
pub struct Running {
    /// Its id.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Its main argument.
    pub summary: String,
    /// Made by a subagent.
    pub nested: bool,
    /// When it was announced.
    pub started: Instant,
    /// Calls its subagent finished (a Task's).
    pub nested_done: usize,
}

/// The session is working.
#[derive(Debug, Clone)]
pub struct Busy {
    /// Since when.
    pub since: Instant,
    /// Characters of answer and thinking streamed (for the token estimate).
    pub streamed: usize,
    /// A compaction (not a turn).
    pub compacting: bool,
}

/// A menu under the composer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Menu {
    /// Slash commands or files.
    pub kind: MenuKind,
    /// The entries: what is inserted, and a description.
    pub items: Vec<(String, String)>,
    /// The selected entry.
    pub selected: usize,
}

/// What a menu completes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MenuKind {
    /// `/` commands.
    Commands,
    /// `@` files.
    Files,
}

/// What takes the keys besides the composer.
#[derive(Default)]
pub enum Overlay {
    /// Nothing: the composer has them.
    #[default]
    None,
    /// A completion menu (the composer still edits).
    Menu(Menu),
    /// Ctrl-R history search.
    Search(Search, String),
    /// An approval.
    Approval(Box<ApprovalMenu>),
    /// A picker (resume, rewind).
    Picker(Picker),
}

/// The UI's state.
pub struct Ui {
    /// The screen's width.
    pub width: u16,
    view: View,
    pieces: Vec<Piece>,
    stream: AnswerStream,
    /// The thinking being streamed, and since when.
    pub thinking: Option<(String, Instant)>,
    /// The thinking wrapped for the live view.
    thinking_live: LiveText,
    /// Thinking is committed in full (Ctrl-O), not folded to one line.
    pub show_thinking: bool,
    /// Tool calls running.
    pub running: Vec<Running>,
    /// Lines to commit to the scrollback at the next frame.
    commit: Vec<Line<'static>>,
    /// The session is working.
    pub busy: Option<Busy>,
    /// Messages sent while a turn ran, waiting for their turn.
    pub queued: VecDeque<String>,
    /// What is typed.
    pub composer: Composer,
    /// `!` was typed first: what is typed is a shell command.
    pub shell_mode: bool,
    /// Prompt history.
    pub history: History,
    /// Menus, approvals, pickers.
    pub overlay: Overlay,
    /// The status line.
    pub status: StatusInfo,
    /// The model's todo list.
    pub todos: Vec<TodoLine>,
    /// The todo panel is shown (Ctrl-T).
    pub todos_shown: bool,
    /// A hint shown for a moment ("Ctrl-C again to exit").
    pub notice: Option<(String, Instant)>,
    /// Spinner frame.
    pub frame: usize,
    /// The slash commands for the menu: name (with its arguments) and description.
    pub commands: Vec<(String, String)>,
    /// Workspace paths for `@` completion.
    pub files: Arc<Vec<String>>,
    /// Esc was pressed at this moment (a second Esc soon after rewinds or clears).
    pub esc_at: Option<Instant>,
    /// Ctrl-C was pressed at this moment with nothing to clear (a second one exits).
    pub ctrl_c_at: Option<Instant>,
    /// Anything changed since the last frame.
    pub dirty: bool,
}

impl Ui {
    /// A UI `width` columns wide.
    pub fn new(width: u16, history: History) -> Self {
        Self {
            width,
            view: View::new(false),
            pieces: Vec::new(),
            stream: AnswerStream::new(usize::from(width)),
            thinking: None,
            thinking_live: LiveText::new(usize::from(width).saturating_sub(2)),
            show_thinking: false,
            running: Vec::new(),
            commit: Vec::new(),
            busy: None,
            queued: VecDeque::new(),
            composer: Composer::default(),
            shell_mode: false,
            history,
            overlay: Overlay::None,
            status: StatusInfo::default(),
            todos: Vec::new(),
            todos_shown: true,
            notice: None,
            frame: 0,
            commands: Vec::new(),
            files: Arc::new(Vec::new()),
            esc_at: None,
            ctrl_c_at: None,
            dirty: true,
        }
    }

    /// The screen was resized.
    pub fn resize(&mut self, width: u16) {
        self.width = width;
        self.stream.set_width(usize::from(width));
        self.thinking_live
            .set_width(usize::from(width).saturating_sub(2));
        if let Some((text, _)) = &self.thinking {
            self.thinking_live.update(text);
        }
        self.dirty = true;
    }

    /// Take the lines waiting for the scrollback.
    pub fn take_commits(&mut self) -> Vec<Line<'static>> {
        std::mem::take(&mut self.commit)
    }

    /// Whether lines wait for the scrollback.
    pub fn has_commits(&self) -> bool {
        !self.commit.is_empty()
    }

    /// Commit lines (already styled) to the scrollback.
    pub fn push_lines(&mut self, lines: impl IntoIterator<Item = Line<'static>>) {
        self.commit.extend(lines);
        self.dirty = true;
    }

    /// Commit plain text (command output), line by line.
    pub fn say(&mut self, text: &str) {
        let lines: Vec<Line<'static>> = text.lines().map(|l| Line::from(l.to_owned())).collect();
        self.push_lines(lines);
    }

    /// Commit a dim note.
    pub fn note(&mut self, text: &str) {
        let lines: Vec<Line<'static>> = text
            .lines()
            .map(|l| Line::styled(l.to_owned(), dim()))
            .collect();
        self.push_lines(lines);
    }

    /// The prompt as it goes into the scrollback when its turn starts.
    pub fn echo_prompt(&mut self, prompt: &str) {
        self.push_lines([Line::default()]);
        let style = Style::new().add_modifier(Modifier::BOLD);
        for (i, l) in prompt.lines().enumerate() {
            let lead = if i == 0 { "› " } else { "  " };
            self.push_lines([Line::from(vec![
                Span::styled(lead, dim()),
                Span::styled(l.to_owned(), style),
            ])]);
        }
        self.push_lines([Line::default()]);
    }

    /// A turn (or compaction) starts now.
    pub fn start_busy(&mut self, compacting: bool) {
        self.busy = Some(Busy {
            since: Instant::now(),
            streamed: 0,
            compacting,
        });
        self.dirty = true;
    }

    /// Whether something animates (the spinner): frames are needed while it does.
    pub fn animating(&self) -> bool {
        self.busy.is_some() || !self.running.is_empty()
    }

    /// One event of the session.
    pub fn event(&mut self, event: &Event) {
        self.dirty = true;
        match event {
            Event::Running => {
                if self.busy.is_none() {
                    self.start_busy(false);
                }
                return;
            }
            Event::Idle => {
                self.busy = None;
                return;
            }
            Event::Frame(SdkMessage::Assistant(a)) if a.parent_tool_use_id.is_none() => {
                let u = &a.message.usage;
                let tokens = u.total_input() + u.output_tokens;
                if tokens > 0 {
                    self.status.context_tokens = tokens;
                }
            }
            Event::Frame(SdkMessage::System(skiff_protocol::sdk::SystemMessage::Init(i))) => {
                self.status.model = i.model.clone();
            }
            _ => {}
        }
        let mut pieces = std::mem::take(&mut self.pieces);
        self.view.event(event, &mut pieces);
        for piece in pieces.drain(..) {
            self.piece(piece);
        }
        self.pieces = pieces;
    }

    fn piece(&mut self, piece: Piece) {
        match piece {
            Piece::CallStart => {}
            Piece::Text(t) => {
                self.end_thinking();
                if let Some(b) = &mut self.busy {
                    b.streamed += t.len();
                }
                let lines = self.stream.push(&t);
                self.commit.extend(lines);
            }
            Piece::TextEnd => {
                self.end_thinking();
                let lines = self.stream.finish();
                self.commit.extend(lines);
            }
            Piece::Thinking(t) => {
                if let Some(b) = &mut self.busy {
                    b.streamed += t.len();
                }
                let (text, _) = self
                    .thinking
                    .get_or_insert_with(|| (String::new(), Instant::now()));
                text.push_str(&t);
                self.thinking_live.update(text);
            }
            Piece::Withdraw(_) => {
                let shown = !self.stream.is_empty();
                self.stream.reset();
                if shown {
                    self.note("(the answer was cut off; it starts again)");
                }
            }
            Piece::ToolCall {
                id,
                name,
                summary,
                nested,
            } => {
                self.flush_answer();
                self.running.push(Running {
                    id,
                    name,
                    summary,
                    nested,
                    started: Instant::now(),
                    nested_done: 0,
                });
            }
            Piece::ToolOutcome {
                id,
                line,
                is_error,
                nested,
            } => {
                let call = self
                    .running
                    .iter()
                    .position(|r| r.id == id)
                    .map(|i| self.running.remove(i));
                // A subagent's calls are shown live under its Task, and counted there.
                if nested {
                    if let Some(task) = self.running.iter_mut().rev().find(|r| !r.nested) {
                        task.nested_done += 1;
                    }
                    return;
                }
                let mut line = line;
                if let Some(call) = &call {
                    let dot = if is_error { Color::Red } else { Color::Green };
                    self.commit
                        .push(call_line("", &call.name, &call.summary, dot));
                    if call.nested_done > 0 {
                        line = format!(
                            "{line} ({} tool use{} · {}s)",
                            call.nested_done,
                            if call.nested_done == 1 { "" } else { "s" },
                            call.started.elapsed().as_secs()
                        );
                    }
                }
                let style = if is_error {
                    Style::new().fg(Color::Red)
                } else {
                    dim()
                };
                self.commit.push(Line::from(vec![
                    Span::styled("  ⎿  ", dim()),
                    Span::styled(line, style),
                ]));
            }
            Piece::Diff { diff, nested } => {
                let (added, removed) = diff.counts();
                self.status.lines_added += added;
                self.status.lines_removed += removed;
                if nested {
                    return;
                }
                let indent = "     ";
                self.commit
                    .push(Line::styled(format!("{indent}{}", diff.summary()), dim()));
                self.commit.extend(diff_lines(&diff, indent, 30));
            }
            Piece::Todos(todos) => {
                if let Some(i) = self.running.iter().rposition(|r| r.name == "TodoWrite") {
                    self.running.remove(i);
                }
                self.commit
                    .push(call_line("", "Update Todos", "", Color::Green));
                self.commit.extend(todo_lines(&todos, "  ⎿  "));
                self.todos = todos;
            }
            Piece::Retry(text) => {
                self.commit
                    .push(Line::styled(format!("⚠ {text}"), yellow()));
            }
            Piece::Notice { level, message } => {
                let style = if level == "warning" || level == "error" {
                    yellow()
                } else {
                    dim()
                };
                for l in message.lines() {
                    self.commit.push(Line::styled(l.to_owned(), style));
                }
            }
            Piece::Compacted { pre_tokens } => {
                self.commit.push(Line::styled(
                    format!("✻ Conversation compacted ({pre_tokens} tokens before)"),
                    dim(),
                ));
            }
            Piece::ShellOutput { text, is_error } => {
                let style = if is_error {
                    Style::new().fg(Color::Red)
                } else {
                    dim()
                };
                let lines: Vec<&str> = text.lines().collect();
                let shown = lines.len().min(SHELL_LINES);
                for (i, l) in lines[..shown].iter().enumerate() {
                    let lead = if i == 0 { "  ⎿  " } else { "     " };
                    self.commit.push(Line::from(vec![
                        Span::styled(lead, dim()),
                        Span::styled((*l).to_owned(), style),
                    ]));
                }
                if lines.len() > shown {
                    self.commit.push(Line::styled(
                        format!("     … +{} lines", lines.len() - shown),
                        dim(),
                    ));
                }
                if lines.is_empty() {
                    self.commit.push(Line::styled("  ⎿  (no output)", dim()));
                }
            }
            Piece::Result { result, .. } => self.result(&result),
        }
    }

    /// Commit the streamed answer so far (before a tool call).
    fn flush_answer(&mut self) {
        self.end_thinking();
        let lines = self.stream.finish();
        self.commit.extend(lines);
    }

    /// A thinking block ended: committed folded to one line, or in full (Ctrl-O).
    fn end_thinking(&mut self) {
        let Some((text, since)) = self.thinking.take() else {
            return;
        };
        self.thinking_live.reset();
        let secs = since.elapsed().as_secs();
        if self.show_thinking {
            self.commit.push(Line::styled("✻ Thinking…", dim()));
            for l in text.lines() {
                self.commit.push(Line::styled(
                    format!("  {l}"),
                    dim().add_modifier(Modifier::ITALIC),
                ));
            }
        } else {
            let lines = text.lines().count();
            self.commit.push(Line::styled(
                format!(
                    "✻ Thought for {secs}s ({lines} line{}; ctrl+o shows thinking)",
                    if lines == 1 { "" } else { "s" }
                ),
                dim(),
            ));
        }
    }

    fn result(&mut self, r: &ResultMessage) {
        self.flush_answer();
        // Calls that never got an outcome (an interrupt) are shown as they stood.
        for call in std::mem::take(&mut self.running) {
            let indent = if call.nested { "    " } else { "" };
            self.commit
                .push(call_line(indent, &call.name, &call.summary, Color::Red));
        }
        if r.is_error {
            let text = result_error(r);
            self.commit.push(Line::styled(
                format!("Error: {text}"),
                Style::new().fg(Color::Red),
            ));
        }
        self.status.cost_usd = r.total_cost_usd;
        let u = &r.usage;
        let cost = if self.status.local {
            "local".to_owned()
        } else {
            format!("${:.4} session", r.total_cost_usd)
        };
        let cached = if u.cache_read() > 0 {
            format!(" · {} cached", group(u.cache_read()))
        } else {
            String::new()
        };
        self.commit.push(Line::styled(
            format!(
                "  {} in · {} out{cached} · {cost} · {:.1}s",
                group(u.total_input()),
                group(u.output_tokens),
                r.duration_ms as f64 / 1000.0
            ),
            dim(),
        ));
        // The next queued message's turn starts.
        if let Some(next) = self.queued.pop_front() {
            self.echo_prompt(&next);
            self.start_busy(false);
        } else {
            self.busy = None;
        }
    }

    /// The last `max` rows of the answer being streamed (not committed yet).
    pub fn answer_rows(&self, max: usize) -> Vec<Line<'static>> {
        self.stream.live_rows(max)
    }

    /// Whether answer text is being streamed (not committed yet).
    pub fn answer_streaming(&self) -> bool {
        !self.stream.is_empty()
    }

    /// The last `max` rows of the thinking being streamed.
    pub fn thinking_rows(&self, max: usize) -> Vec<Line<'static>> {
        self.thinking_live.tail(max)
    }

    /// Forget the live state (a new conversation).
    pub fn reset_live(&mut self) {
        self.stream.reset();
        self.thinking = None;
        self.thinking_live.reset();
        self.running.clear();
        self.todos.clear();
        self.view = View::new(false);
        self.dirty = true;
    }
}

/// `● Name(summary)`, the dot coloured.
pub fn call_line(indent: &str, name: &str, summary: &str, dot: Color) -> Line<'static> {
    let args = if summary.is_empty() {
        String::new()
    } else {
        format!("({summary})")
    };
    Line::from(vec![
        Span::raw(indent.to_owned()),
        Span::styled("● ", Style::new().fg(dot)),
        Span::styled(name.to_owned(), Style::new().add_modifier(Modifier::BOLD)),
        Span::raw(args),
    ])
}

/// A todo list as a checklist; the first line starts with `lead`.
pub fn todo_lines(todos: &[TodoLine], lead: &str) -> Vec<Line<'static>> {
    let pad = " ".repeat(crate::term::wrap::width(lead));
    todos
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let style = match t.status.as_str() {
                "completed" => dim().add_modifier(Modifier::CROSSED_OUT),
                "in_progress" => Style::new().add_modifier(Modifier::BOLD),
                _ => Style::new(),
            };
            let lead = if i == 0 { lead.to_owned() } else { pad.clone() };
            Line::from(vec![
                Span::styled(lead, dim()),
                Span::styled(t.render(), style),
            ])
        })
        .collect()
}

/// Dim text.
pub fn dim() -> Style {
    Style::new().add_modifier(Modifier::DIM)
}

fn yellow() -> Style {
    Style::new().fg(Color::Yellow)
}

fn group(n: u64) -> String {
    skiff_tools::truncate::group(n as usize)
}
