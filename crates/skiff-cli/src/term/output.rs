//! Print-mode output: the text renderer (answer on stdout, compact trace on stderr) and the
//! json / stream-json writers. All consume the same event stream; what text mode shows is
//! decided by [`crate::term::view::View`].

use std::io::Write;

use skiff_core::Event;
use skiff_protocol::sdk::{ResultMessage, SdkMessage};

use crate::args::OutputFormat;
use crate::term::view::{Piece, RowCounter, View, result_error};

/// Writes events in one output format.
pub struct OutputWriter<W: Write> {
    format: OutputFormat,
    verbose: bool,
    partial: bool,
    out: W,
    collected: Vec<SdkMessage>,
    view: View,
    pieces: Vec<Piece>,
    /// Text mode: whether the last text written ended a line.
    at_line_start: bool,
    /// Text mode on a terminal: its width, so a withdrawn answer can be erased.
    width: Option<usize>,
    /// Column of the cursor on stdout (text mode on a terminal).
    col: usize,
    /// Rows of answer text written since the current model call started.
    rows: Option<RowCounter>,
}

impl<W: Write> OutputWriter<W> {
    /// A writer for `format`. `terminal_width` is the width of the terminal stdout is, if it
    /// is one (text mode then erases a withdrawn partial answer; otherwise it holds answer
    /// text back until each model call is complete).
    pub fn new(
        format: OutputFormat,
        verbose: bool,
        partial: bool,
        out: W,
        terminal_width: Option<usize>,
    ) -> Self {
        Self {
            format,
            verbose,
            partial,
            out,
            collected: Vec::new(),
            view: View::new(terminal_width.is_none()),
            pieces: Vec::new(),
            at_line_start: true,
            width: terminal_width,
            col: 0,
            rows: None,
        }
    }

    /// Handle one event.
    pub fn event(&mut self, ev: &Event) -> std::io::Result<()> {
        let Event::Frame(frame) = ev else {
            if self.format == OutputFormat::Text {
                return self.text_event(ev);
            }
            return Ok(());
        };
        match self.format {
            OutputFormat::StreamJson => {
                if matches!(frame, SdkMessage::StreamEvent(_)) && !self.partial {
                    return Ok(());
                }
                serde_json::to_writer(&mut self.out, frame)?;
                self.out.write_all(b"\n")?;
                self.out.flush()
            }
            OutputFormat::Json => {
                let keep = matches!(frame, SdkMessage::Result(_))
                    || (self.verbose
                        && (self.partial || !matches!(frame, SdkMessage::StreamEvent(_))));
                if keep {
                    self.collected.push(frame.clone());
                }
                Ok(())
            }
            OutputFormat::Text => self.text_event(ev),
        }
    }

    /// Write what is buffered (json modes) at the end of the run.
    pub fn finish(&mut self) -> std::io::Result<()> {
        if self.format == OutputFormat::Json {
            if self.verbose {
                serde_json::to_writer(&mut self.out, &self.collected)?;
            } else if let Some(r) = self.collected.last() {
                serde_json::to_writer(&mut self.out, r)?;
            }
            self.out.write_all(b"\n")?;
        }
        self.out.flush()
    }

    fn text_event(&mut self, ev: &Event) -> std::io::Result<()> {
        let mut pieces = std::mem::take(&mut self.pieces);
        self.view.event(ev, &mut pieces);
        let mut result = Ok(());
        for piece in pieces.drain(..) {
            result = self.piece(piece);
            if result.is_err() {
                break;
            }
        }
        self.pieces = pieces;
        result
    }

    fn piece(&mut self, piece: Piece) -> std::io::Result<()> {
        match piece {
            Piece::Text(text) => {
                if let Some(width) = self.width {
                    self.rows
                        .get_or_insert_with(|| RowCounter::new(width, self.col))
                        .feed(&text);
                }
                self.write_answer(&text)?;
            }
            Piece::TextEnd | Piece::Thinking(_) | Piece::ShellOutput { .. } => {}
            Piece::CallStart => self.rows = None,
            Piece::Withdraw(_) => {
                if let Some(rows) = self.rows.take() {
                    let erase = rows.erase();
                    self.out.write_all(erase.as_bytes())?;
                    self.out.flush()?;
                    self.col = rows.mark_col();
                    self.at_line_start = self.col == 0;
                }
            }
            other => {
                self.rows = None;
                self.end_line()?;
                match other {
                    Piece::ToolCall {
                        name,
                        summary,
                        nested,
                        ..
                    } => {
                        let indent = if nested { "    " } else { "" };
                        eprintln!("{indent}● {name}({summary})");
                    }
                    Piece::ToolOutcome { line, nested, .. } => {
                        let indent = if nested { "    " } else { "" };
                        eprintln!("{indent}  ⎿ {line}");
                    }
                    Piece::Todos(todos) => {
                        for todo in &todos {
                            eprintln!("  {}", todo.render());
                        }
                    }
                    Piece::Diff { diff, nested } => {
                        let indent = if nested { "        " } else { "    " };
                        for line in crate::term::diff::diff_lines(&diff, indent, 40) {
                            eprintln!("{}", crate::term::wrap::plain(&line));
                        }
                    }
                    Piece::Retry(text) => eprintln!("[skiff] {text}"),
                    Piece::Notice { level, message } => eprintln!("[skiff] {level}: {message}"),
                    Piece::Compacted { pre_tokens } => {
                        eprintln!("[skiff] conversation compacted ({pre_tokens} tokens before)")
                    }
                    Piece::Result { result, wrote_text } => {
                        self.text_result(&result, wrote_text)?
                    }
                    Piece::Text(_)
                    | Piece::TextEnd
                    | Piece::Withdraw(_)
                    | Piece::CallStart
                    | Piece::Thinking(_)
                    | Piece::ShellOutput { .. } => {}
                }
            }
        }
        Ok(())
    }

    fn write_answer(&mut self, text: &str) -> std::io::Result<()> {
        self.out.write_all(text.as_bytes())?;
        self.out.flush()?;
        self.at_line_start = text.ends_with('\n');
        match text.rfind('\n') {
            Some(i) => self.col = text[i + 1..].chars().count(),
            None => self.col += text.chars().count(),
        }
        Ok(())
    }

    fn text_result(&mut self, r: &ResultMessage, wrote_text: bool) -> std::io::Result<()> {
        if r.is_error {
            writeln!(self.out, "Error: {}", result_error(r))?;
        } else if !wrote_text && let Some(text) = &r.result {
            writeln!(self.out, "{text}")?;
        }
        self.at_line_start = true;
        self.col = 0;
        self.out.flush()
    }

    /// Start a new line on stdout if text left one open.
    fn end_line(&mut self) -> std::io::Result<()> {
        if !self.at_line_start {
            self.out.write_all(b"\n")?;
            self.out.flush()?;
            self.at_line_start = true;
            self.col = 0;
        }
        Ok(())
    }
}
