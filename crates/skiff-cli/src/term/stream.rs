//! The streamed answer of the terminal UI: text arrives delta by delta and is shown at once
//! (plain, in the live viewport); each markdown block, once complete, is rendered with its
//! styles and handed out to be committed to the scrollback, exactly once.
//!
//! A block is complete at a blank line outside a code fence. Inside a fence every complete code
//! line is committed at once (highlighted with the state of the lines before it), so a long
//! code block scrolls by as it streams.

use ratatui_core::style::{Modifier, Style};
use ratatui_core::text::Line;

use crate::term::blocks::{code_spans, render_markdown};
use crate::term::live::LiveText;
use crate::term::markdown::{CodeHighlighter, fence_of};

/// An open code fence.
struct Fence {
    marker: char,
    len: usize,
    highlighter: CodeHighlighter,
    /// The fence's indentation, taken off its code lines.
    indent: usize,
}

/// One answer being streamed.
pub struct AnswerStream {
    width: usize,
    /// Text not committed yet (complete lines of an unfinished block, then the partial line).
    pending: String,
    /// Where the first line not looked at yet starts in `pending` (complete lines before it
    /// are not looked at again).
    scanned: usize,
    /// `pending` wrapped for the live view.
    live: LiveText,
    fence: Option<Fence>,
    /// Something was committed: the next block is separated by a blank line.
    committed: bool,
}

impl AnswerStream {
    /// A stream rendering to `width` columns.
    pub fn new(width: usize) -> Self {
        Self {
            width: width.max(8),
            pending: String::new(),
            scanned: 0,
            live: LiveText::new(width.max(8)),
            fence: None,
            committed: false,
        }
    }

    /// The width lines are rendered to (a resize changes it for the blocks to come).
    pub fn set_width(&mut self, width: usize) {
        self.width = width.max(8);
        self.live.set_width(self.width);
        self.live.update(&self.pending);
    }

    /// Whether nothing is pending and nothing was committed.
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty() && !self.committed
    }

    /// The text shown live: what is not committed yet.
    #[cfg(test)]
    pub fn tail(&self) -> &str {
        &self.pending
    }

    /// The last `max` rows of the text shown live, wrapped.
    pub fn live_rows(&self, max: usize) -> Vec<Line<'static>> {
        self.live.tail(max)
    }

    /// Add a delta; returns the lines it completes, to be committed.
    pub fn push(&mut self, delta: &str) -> Vec<Line<'static>> {
        self.pending.push_str(delta);
        let mut out = Vec::new();
        // Look at the complete lines not looked at yet.
        let mut start = self.scanned;
        let mut block_start = 0;
        while let Some(nl) = self.pending[start..].find('\n') {
            let end = start + nl + 1;
            let line = self.pending[start..end]
                .trim_end_matches(['\n', '\r'])
                .to_owned();
            if let Some(fence) = &mut self.fence {
                let closes = fence_of(&line).is_some_and(|(m, len, info)| {
                    m == fence.marker && len >= fence.len && info.is_empty()
                });
                if closes {
                    out.push(Line::styled(line.trim_start().to_owned(), dim()));
                    self.fence = None;
                } else {
                    let code = strip_indent(&line, fence.indent);
                    let runs = fence.highlighter.line(code);
                    out.push(Line::from(code_spans(code, runs)));
                }
                start = end;
                block_start = end;
                continue;
            }
            if let Some((marker, len, info)) = fence_of(&line) {
                // Commit what comes before the fence, then the fence line itself.
                self.commit_block(block_start, start, &mut out);
                self.gap(&mut out);
                let indent = line.len() - line.trim_start().len();
                out.push(Line::styled(line.trim_start().to_owned(), dim()));
                self.fence = Some(Fence {
                    marker,
                    len,
                    highlighter: CodeHighlighter::new(info),
                    indent,
                });
                self.committed = true;
                start = end;
                block_start = end;
                continue;
            }
            if line.trim().is_empty() {
                self.commit_block(block_start, start, &mut out);
                block_start = end;
            }
            start = end;
        }
        self.pending.drain(..block_start);
        self.scanned = start - block_start;
        if block_start > 0 {
            self.live.reset();
        }
        self.live.update(&self.pending);
        out
    }

    /// The answer's text block ended: render what is left.
    pub fn finish(&mut self) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        if let Some(fence) = &mut self.fence {
            for line in std::mem::take(&mut self.pending).lines() {
                let code = strip_indent(line, fence.indent).to_owned();
                let runs = fence.highlighter.line(&code);
                out.push(Line::from(code_spans(&code, runs)));
            }
            self.fence = None;
        } else {
            let end = self.pending.len();
            self.commit_block(0, end, &mut out);
            self.pending.clear();
        }
        self.scanned = 0;
        self.live.reset();
        self.committed = false;
        out
    }

    /// Forget the pending text (a withdrawn answer) and start again.
    pub fn reset(&mut self) {
        self.pending.clear();
        self.scanned = 0;
        self.live.reset();
        self.fence = None;
        self.committed = false;
    }

    /// Render `pending[from..to]` (complete blocks) into `out`.
    fn commit_block(&mut self, from: usize, to: usize, out: &mut Vec<Line<'static>>) {
        let Some(source) = self.pending.get(from..to) else {
            return;
        };
        if source.trim().is_empty() {
            return;
        }
        let lines = render_markdown(source, self.width);
        if lines.is_empty() {
            return;
        }
        self.gap(out);
        out.extend(lines);
        self.committed = true;
    }

    fn gap(&self, out: &mut Vec<Line<'static>>) {
        if self.committed || !out.is_empty() {
            out.push(Line::default());
        }
    }
}

fn dim() -> Style {
    Style::new().add_modifier(Modifier::DIM)
}

/// `line` without up to `indent` leading spaces.
fn strip_indent(line: &str, indent: usize) -> &str {
    let n = line.bytes().take(indent).take_while(|b| *b == b' ').count();
    line.get(n..).unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::wrap::plain;

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(plain).collect()
    }

    #[test]
    fn a_paragraph_is_committed_when_it_ends() {
        let mut s = AnswerStream::new(80);
        assert!(s.push("Hello **wor").is_empty());
        assert_eq!(s.tail(), "Hello **wor");
        assert!(s.push("ld**\nmore").is_empty());
        let out = s.push(" text\n\nNext");
        assert_eq!(texts(&out), ["Hello world more text"]);
        assert_eq!(s.tail(), "Next");
        assert_eq!(texts(&s.finish()), ["", "Next"]);
    }

    #[test]
    fn code_lines_are_committed_one_by_one() {
        let mut s = AnswerStream::new(80);
        let out = s.push("Intro\n```rust\nfn a() {}\n");
        assert_eq!(texts(&out), ["Intro", "", "```rust", "fn a() {}"]);
        let out = s.push("fn b() {}\n``");
        assert_eq!(texts(&out), ["fn b() {}"]);
        let out = s.push("`\nAfter\n");
        assert_eq!(texts(&out), ["```"]);
        assert_eq!(texts(&s.finish()), ["", "After"]);
    }

    #[test]
    fn every_line_is_committed_once_whatever_the_chunks() {
        let text = "# Plan\n\n1. read\n2. write\n\n```sh\ncargo test\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nThe end.";
        let whole = {
            let mut s = AnswerStream::new(60);
            let mut out = s.push(text);
            out.extend(s.finish());
            texts(&out)
        };
        for size in [1, 2, 3, 7, 13] {
            let mut s = AnswerStream::new(60);
            let mut out = Vec::new();
            let chars: Vec<char> = text.chars().collect();
            for chunk in chars.chunks(size) {
                out.extend(s.push(&chunk.iter().collect::<String>()));
            }
            out.extend(s.finish());
            assert_eq!(texts(&out), whole, "chunks of {size}");
        }
        assert!(whole.iter().any(|l| l.starts_with("┌")), "{whole:?}");
    }
}
