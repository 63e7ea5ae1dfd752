//! The interactive renderer: streams the answer as markdown, shows tool calls as compact lines
//! with a one-line outcome, a spinner with elapsed seconds while waiting, and a cost line after
//! each turn. Colors and the spinner only on a terminal without NO_COLOR.

use std::collections::HashMap;
use std::io::Write;
use std::time::Instant;

use skiff_protocol::sdk::{ResultMessage, SdkMessage, SystemMessage};
use skiff_protocol::{ContentBlock, Delta, MessageContent, StreamEvent};

use crate::markdown::MarkdownStream;
use crate::output::{outcome_line, tool_summary};

const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// Renders one conversation's events to a terminal (or plain text when not a terminal).
pub struct Renderer<W: Write> {
    out: W,
    color: bool,
    md: MarkdownStream,
    spinner: Option<(String, Instant)>,
    spinner_shown: bool,
    frame: usize,
    at_line_start: bool,
    tool_names: HashMap<String, String>,
    turn_started: Instant,
}

impl<W: Write> Renderer<W> {
    /// A renderer; `color` enables ANSI styles and the spinner.
    pub fn new(out: W, color: bool) -> Self {
        Self {
            out,
            color,
            md: MarkdownStream::new(color),
            spinner: None,
            spinner_shown: false,
            frame: 0,
            at_line_start: true,
            tool_names: HashMap::new(),
            turn_started: Instant::now(),
        }
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

    /// Handle one event of the run.
    pub fn event(&mut self, ev: &SdkMessage) {
        match ev {
            SdkMessage::StreamEvent(s) => match &s.event {
                StreamEvent::ContentBlockDelta {
                    delta: Delta::TextDelta { text },
                    ..
                } if !text.is_empty() => {
                    self.clear_spinner();
                    self.spinner = None;
                    let rendered = self.md.push(text);
                    self.write(&rendered);
                }
                StreamEvent::ContentBlockStop { .. } => {
                    let rest = self.md.finish();
                    self.write(&rest);
                }
                _ => {}
            },
            SdkMessage::Assistant(a) => {
                for block in &a.message.content {
                    if let ContentBlock::ToolUse(t) = block {
                        self.tool_names.insert(t.id.clone(), t.name.clone());
                        self.clear_spinner();
                        self.end_line();
                        let dot = if self.color {
                            "\x1b[32m●\x1b[0m"
                        } else {
                            "●"
                        };
                        self.write(&format!(
                            "{dot} {}({})\n",
                            t.name,
                            tool_summary(&t.name, &t.input)
                        ));
                        self.set_spinner(&format!("Running {}", t.name));
                    }
                }
            }
            SdkMessage::User(u) => {
                if let MessageContent::Blocks(blocks) = &u.message.content {
                    for b in blocks {
                        if let ContentBlock::ToolResult(r) = b {
                            let tool = self.tool_names.remove(&r.tool_use_id).unwrap_or_default();
                            let err = r.is_error == Some(true);
                            let line = outcome_line(&tool, err, r.content.as_ref());
                            self.clear_spinner();
                            let styled = match (self.color, err) {
                                (true, true) => {
                                    format!("  \x1b[2m⎿\x1b[0m \x1b[31m{line}\x1b[0m\n")
                                }
                                (true, false) => format!("  \x1b[2m⎿ {line}\x1b[0m\n"),
                                _ => format!("  ⎿ {line}\n"),
                            };
                            self.write(&styled);
                            self.set_spinner("Thinking");
                        }
                    }
                }
            }
            SdkMessage::System(SystemMessage::ApiRetry(r)) => {
                self.clear_spinner();
                self.end_line();
                self.write(&format!(
                    "[skiff] {}; retrying in {:.1}s (retry {}/{})\n",
                    r.error,
                    r.retry_delay_ms as f64 / 1000.0,
                    r.attempt,
                    r.max_retries
                ));
            }
            SdkMessage::System(SystemMessage::Informational(i)) => {
                self.clear_spinner();
                self.end_line();
                self.write(&format!("[skiff] {}: {}\n", i.level, i.message));
            }
            SdkMessage::System(SystemMessage::CompactBoundary(c)) => {
                self.clear_spinner();
                self.end_line();
                self.write(&format!(
                    "[skiff] conversation compacted ({} tokens before)\n",
                    c.compact_metadata.pre_tokens
                ));
            }
            SdkMessage::Result(r) => self.result(r),
            _ => {}
        }
    }

    fn result(&mut self, r: &ResultMessage) {
        self.spinner = None;
        self.clear_spinner();
        let rest = self.md.finish();
        self.write(&rest);
        self.end_line();
        if r.is_error {
            let text = r
                .errors
                .first()
                .cloned()
                .or_else(|| r.result.clone())
                .unwrap_or_else(|| "the turn failed".to_owned());
            let text = if self.color {
                format!("\x1b[31mError: {text}\x1b[0m\n")
            } else {
                format!("Error: {text}\n")
            };
            self.write(&text);
        }
        let u = &r.usage;
        let line = format!(
            "{} in · {} out{} · ${:.4} session · {:.1}s",
            group(u.total_input()),
            group(u.output_tokens),
            if u.cache_read() > 0 {
                format!(" · {} cached", group(u.cache_read()))
            } else {
                String::new()
            },
            r.total_cost_usd,
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
    }
}

fn group(n: u64) -> String {
    skiff_tools::truncate::group(n as usize)
}
