//! Print-mode output: the text renderer (answer on stdout, compact trace on stderr) and the
//! json / stream-json writers. All consume the same event stream.

use std::io::Write;

use skiff_protocol::sdk::{ResultMessage, SdkMessage, SystemMessage};
use skiff_protocol::{ContentBlock, Delta, MessageContent, StreamEvent, ToolResultContent};

use crate::args::OutputFormat;

/// Writes events in one output format.
pub struct OutputWriter<W: Write> {
    format: OutputFormat,
    verbose: bool,
    partial: bool,
    out: W,
    collected: Vec<SdkMessage>,
    /// Text mode: whether the last text written ended a line.
    at_line_start: bool,
    wrote_text: bool,
    /// Tool names by tool_use id, for the trace's outcome lines.
    tool_names: std::collections::HashMap<String, String>,
}

impl<W: Write> OutputWriter<W> {
    /// A writer for `format`.
    pub fn new(format: OutputFormat, verbose: bool, partial: bool, out: W) -> Self {
        Self {
            format,
            verbose,
            partial,
            out,
            collected: Vec::new(),
            at_line_start: true,
            wrote_text: false,
            tool_names: std::collections::HashMap::new(),
        }
    }

    /// Handle one event.
    pub fn event(&mut self, ev: SdkMessage) -> std::io::Result<()> {
        match self.format {
            OutputFormat::StreamJson => {
                if matches!(ev, SdkMessage::StreamEvent(_)) && !self.partial {
                    return Ok(());
                }
                serde_json::to_writer(&mut self.out, &ev)?;
                self.out.write_all(b"\n")?;
                self.out.flush()
            }
            OutputFormat::Json => {
                let keep = matches!(ev, SdkMessage::Result(_))
                    || (self.verbose
                        && (self.partial || !matches!(ev, SdkMessage::StreamEvent(_))));
                if keep {
                    self.collected.push(ev);
                }
                Ok(())
            }
            OutputFormat::Text => self.text_event(&ev),
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

    fn text_event(&mut self, ev: &SdkMessage) -> std::io::Result<()> {
        match ev {
            SdkMessage::StreamEvent(s) => {
                if let StreamEvent::ContentBlockDelta {
                    delta: Delta::TextDelta { text },
                    ..
                } = &s.event
                {
                    if text.is_empty() {
                        return Ok(());
                    }
                    self.out.write_all(text.as_bytes())?;
                    self.out.flush()?;
                    self.at_line_start = text.ends_with('\n');
                    self.wrote_text = true;
                }
            }
            SdkMessage::Assistant(a) => {
                for block in &a.message.content {
                    if let ContentBlock::ToolUse(t) = block {
                        self.tool_names.insert(t.id.clone(), t.name.clone());
                        self.end_line()?;
                        eprintln!("● {}({})", t.name, tool_summary(&t.name, &t.input));
                    }
                }
            }
            SdkMessage::User(u) => {
                if let MessageContent::Blocks(blocks) = &u.message.content {
                    for b in blocks {
                        if let ContentBlock::ToolResult(r) = b {
                            let tool = self.tool_names.remove(&r.tool_use_id).unwrap_or_default();
                            let err = r.is_error == Some(true);
                            eprintln!("  ⎿ {}", outcome_line(&tool, err, r.content.as_ref()));
                        }
                    }
                }
            }
            SdkMessage::System(SystemMessage::ApiRetry(r)) => {
                self.end_line()?;
                eprintln!(
                    "[skiff] {}; retrying in {:.1}s (retry {}/{})",
                    r.error,
                    r.retry_delay_ms as f64 / 1000.0,
                    r.attempt,
                    r.max_retries
                );
            }
            SdkMessage::System(SystemMessage::Informational(i)) => {
                self.end_line()?;
                eprintln!("[skiff] {}: {}", i.level, i.message);
            }
            SdkMessage::Result(r) => self.text_result(r)?,
            _ => {}
        }
        Ok(())
    }

    fn text_result(&mut self, r: &ResultMessage) -> std::io::Result<()> {
        self.end_line()?;
        if r.is_error {
            let text = r
                .errors
                .first()
                .cloned()
                .or_else(|| r.result.clone())
                .unwrap_or_else(|| "the run failed".to_owned());
            writeln!(self.out, "Error: {text}")?;
        } else if !self.wrote_text {
            if let Some(text) = &r.result {
                writeln!(self.out, "{text}")?;
            }
        }
        self.out.flush()
    }

    /// Start a new line on stdout if text left one open.
    fn end_line(&mut self) -> std::io::Result<()> {
        if !self.at_line_start {
            self.out.write_all(b"\n")?;
            self.out.flush()?;
            self.at_line_start = true;
        }
        Ok(())
    }
}

/// A short argument summary for the trace line: `Bash(cargo test)`, `Read(src/lib.rs)`.
pub fn tool_summary(name: &str, input: &serde_json::Value) -> String {
    let key = match name {
        "Bash" => "command",
        "Read" | "Write" | "Edit" => "file_path",
        "Glob" | "Grep" => "pattern",
        "LS" => "path",
        _ => "",
    };
    let text = input
        .get(key)
        .and_then(|v| v.as_str())
        .map(str::to_owned)
        .unwrap_or_else(|| input.to_string());
    one_line(&text, 80)
}

pub fn outcome_line(tool: &str, is_error: bool, content: Option<&ToolResultContent>) -> String {
    let text = match content {
        Some(ToolResultContent::Text(t)) => t.clone(),
        Some(ToolResultContent::Blocks(_)) => "(image)".to_owned(),
        None => String::new(),
    };
    let text = text
        .trim_start_matches("<tool_use_error>")
        .trim_end_matches("</tool_use_error>");
    let lines = text.lines().count();
    if tool == "Read" && !is_error && text.starts_with("1\t") {
        return format!("Read {lines} lines");
    }
    let first = one_line(text.lines().next().unwrap_or(""), 100);
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

fn one_line(s: &str, max: usize) -> String {
    let s = s.replace('\n', " ");
    if s.chars().count() <= max {
        s
    } else {
        let cut: String = s.chars().take(max).collect();
        format!("{cut}…")
    }
}
