//! The interactive renderer: streams the answer as markdown, shows tool calls as compact lines
//! with a one-line outcome, a spinner with elapsed seconds while waiting, and a cost line after
//! each turn. Colors and the spinner only on a terminal without NO_COLOR.

use std::io::Write;
use std::time::Instant;

use skiff_core::Event;
use skiff_protocol::sdk::ResultMessage;

use crate::term::markdown::MarkdownStream;
use crate::term::view::{Piece, RowCounter, View, result_error};

const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// Renders one conversation's events to a terminal (or plain text when not a terminal).
pub struct Renderer<W: Write> {
    out: W,
    color: bool,
    md: MarkdownStream,
    view: View,
    pieces: Vec<Piece>,
    spinner: Option<(String, Instant)>,
    spinner_shown: bool,
    frame: usize,
    at_line_start: bool,
    /// Cursor column (for erasing a withdrawn answer).
    col: usize,
    /// Rows of answer written since the current model call started.
    rows: Option<RowCounter>,
    turn_started: Instant,
    /// The model runs on this machine: no cost to show.
    local: bool,
}

impl<W: Write> Renderer<W> {
    /// A renderer; `color` enables ANSI styles and the spinner.
    pub fn new(out: W, color: bool) -> Self {
        Self {
            out,
            color,
            md: MarkdownStream::new(color),
            view: View::new(false),
            pieces: Vec::new(),
            spinner: None,
            spinner_shown: false,
            frame: 0,
            at_line_start: true,
            col: 0,
            rows: None,
            turn_started: Instant::now(),
            local: false,
        }
    }

    /// The model runs on this machine: the cost line says "local" instead of dollars.
    pub fn set_local(&mut self, local: bool) {
        self.local = local;
    }

    /// A turn starts: show the waiting spinner.
    pub fn start_turn(&mut self) {
        self.turn_started = Instant::now();
        self.set_spinner("Thinking");
    }

    /// Redraw the spinner (called periodically).
    pub fn tick(&mut self) {
        if !self.color {
            return;
        }
        if let Some((label, since)) = &self.spinner {
            self.frame = (self.frame + 1) % FRAMES.len();
            let line = format!(
                "\r\x1b[2K\x1b[2m{} {label}… {}s\x1b[0m",
                FRAMES[self.frame],
                since.elapsed().as_secs()
            );
            let _ = self.out.write_all(line.as_bytes());
            let _ = self.out.flush();
            self.spinner_shown = true;
        }
    }

    /// Handle one event of the session.
    pub fn event(&mut self, ev: &Event) {
        let mut pieces = std::mem::take(&mut self.pieces);
        self.view.event(ev, &mut pieces);
        for piece in pieces.drain(..) {
            self.piece(piece);
        }
        self.pieces = pieces;
    }

    fn piece(&mut self, piece: Piece) {
        match piece {
            Piece::Text(text) => {
                self.clear_spinner();
                self.spinner = None;
                let rendered = self.md.push(&text);
                self.answer(&rendered);
            }
            Piece::TextEnd => {
                let rest = self.md.finish();
                self.answer(&rest);
            }
            Piece::CallStart => self.rows = None,
            Piece::Withdraw(_) => {
                self.clear_spinner();
                // Drop what the markdown renderer still holds of the withdrawn text.
                self.md = MarkdownStream::new(self.color);
                if let Some(rows) = self.rows.take() {
                    let _ = self.out.write_all(rows.erase().as_bytes());
                    let _ = self.out.flush();
                    self.col = rows.mark_col();
                    self.at_line_start = self.col == 0;
                }
            }
            Piece::ToolCall {
                name,
                summary,
                nested,
                ..
            } => {
                self.rows = None;
                self.clear_spinner();
                self.end_line();
                let dot = if self.color {
                    "\x1b[32m●\x1b[0m"
                } else {
                    "●"
                };
                let indent = if nested { "    " } else { "" };
                self.write(&format!("{indent}{dot} {name}({summary})\n"));
                self.set_spinner(&format!("Running {name}"));
            }
            Piece::ToolOutcome {
                line,
                is_error,
                nested,
                ..
            } => {
                self.rows = None;
                self.clear_spinner();
                let indent = if nested { "    " } else { "" };
                let styled = match (self.color, is_error) {
                    (true, true) => {
                        format!("{indent}  \x1b[2m⎿\x1b[0m \x1b[31m{line}\x1b[0m\n")
                    }
                    (true, false) => format!("{indent}  \x1b[2m⎿ {line}\x1b[0m\n"),
                    _ => format!("{indent}  ⎿ {line}\n"),
                };
                self.write(&styled);
                self.set_spinner("Thinking");
            }
            Piece::Todos(todos) => {
                self.rows = None;
                self.clear_spinner();
                for todo in &todos {
                    let line = todo.render();
                    let styled = match (self.color, todo.status.as_str()) {
                        (true, "completed") => format!("  \x1b[2m{line}\x1b[0m\n"),
                        (true, "in_progress") => format!("  \x1b[1m{line}\x1b[0m\n"),
                        _ => format!("  {line}\n"),
                    };
                    self.write(&styled);
                }
            }
            Piece::Diff { diff, nested } => {
                self.rows = None;
                self.clear_spinner();
                let indent = if nested { "        " } else { "    " };
                let mut painter = crate::term::ansi::Painter::new(self.color);
                let mut text = Vec::new();
                for line in crate::term::diff::diff_lines(&diff, indent, 40) {
                    painter.line(&mut text, &line);
                    text.push(b'\n');
                }
                self.write(&String::from_utf8_lossy(&text));
            }
            Piece::Thinking(_) => {}
            Piece::ShellOutput { text, .. } => self.note(&format!("{text}\n")),
            Piece::Retry(text) => self.note(&format!("[skiff] {text}\n")),
            Piece::Notice { level, message } => {
                self.note(&format!("[skiff] {level}: {message}\n"));
            }
            Piece::Compacted { pre_tokens } => self.note(&format!(
                "[skiff] conversation compacted ({pre_tokens} tokens before)\n"
            )),
            Piece::Result { result, .. } => self.result(&result),
        }
    }

    fn note(&mut self, text: &str) {
        self.rows = None;
        self.clear_spinner();
        self.end_line();
        self.write(text);
    }

    /// Answer text: counted so it can be withdrawn.
    fn answer(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        if let Some((width, _)) = terminal_size() {
            self.rows
                .get_or_insert_with(|| RowCounter::new(width, self.col))
                .feed(text);
        }
        self.write(text);
    }

    fn result(&mut self, r: &ResultMessage) {
        self.spinner = None;
        self.rows = None;
        self.clear_spinner();
        let rest = self.md.finish();
        self.write(&rest);
        self.end_line();
        if r.is_error {
            let text = result_error(r);
            let text = if self.color {
                format!("\x1b[31mError: {text}\x1b[0m\n")
            } else {
                format!("Error: {text}\n")
            };
            self.write(&text);
        }
        let u = &r.usage;
        let cost = if self.local {
            "local".to_owned()
        } else {
            format!("${:.4} session", r.total_cost_usd)
        };
        let line = format!(
            "{} in · {} out{} · {cost} · {:.1}s",
            group(u.total_input()),
            group(u.output_tokens),
            if u.cache_read() > 0 {
                format!(" · {} cached", group(u.cache_read()))
            } else {
                String::new()
            },
            self.turn_started.elapsed().as_secs_f64()
        );
        let line = if self.color {
            format!("\x1b[2m  {line}\x1b[0m\n")
        } else {
            format!("  {line}\n")
        };
        self.write(&line);
    }

    /// Print a line of text (commands, notices).
    pub fn say(&mut self, text: &str) {
        self.clear_spinner();
        self.end_line();
        self.write(text);
        if !text.ends_with('\n') {
            self.write("\n");
        }
    }

    fn set_spinner(&mut self, label: &str) {
        self.spinner = Some((label.to_owned(), Instant::now()));
    }

    fn clear_spinner(&mut self) {
        if self.spinner_shown {
            let _ = self.out.write_all(b"\r\x1b[2K");
            self.spinner_shown = false;
        }
    }

    fn end_line(&mut self) {
        if !self.at_line_start {
            self.write("\n");
        }
    }

    fn write(&mut self, s: &str) {
        if s.is_empty() {
            return;
        }
        let _ = self.out.write_all(s.as_bytes());
        let _ = self.out.flush();
        self.at_line_start = s.ends_with('\n');
        match s.rfind('\n') {
            Some(i) => self.col = visible_width(&s[i + 1..]),
            None => self.col += visible_width(s),
        }
    }
}

/// The terminal's (columns, rows), when stdout is one.
pub fn terminal_size() -> Option<(usize, usize)> {
    crossterm::terminal::size()
        .ok()
        .filter(|(w, _)| *w > 0)
        .map(|(w, h)| (usize::from(w), usize::from(h)))
}

/// Columns `s` takes on screen (escape sequences take none).
fn visible_width(s: &str) -> usize {
    let mut counter = RowCounter::new(usize::MAX, 0);
    counter.feed(s);
    counter.col()
}

fn group(n: u64) -> String {
    skiff_tools::truncate::group(n as usize)
}
