//! Streaming markdown for the terminal: text arrives in arbitrary chunks and is printed as it
//! arrives. Headings, list bullets, quotes and code fences are recognised at line starts, inline
//! `code` and **bold** are styled as they stream. A whole-document renderer cannot stream, hence
//! this small state machine.

const RESET: &str = "\x1b[0m";
const BOLD: &str = "\x1b[1m";
const DIM: &str = "\x1b[2m";
const CODE: &str = "\x1b[36m";
const HEADING: &str = "\x1b[1;4m";
const FENCE: &str = "\x1b[33m";

/// Renders markdown chunks to terminal text.
#[derive(Debug)]
pub struct MarkdownStream {
    color: bool,
    /// Characters at the start of the current line not yet classified.
    pending: String,
    at_line_start: bool,
    in_fence: bool,
    in_code_span: bool,
    in_bold: bool,
    /// Style that lasts until the end of the line (headings).
    line_style: Option<&'static str>,
    /// A `*` seen that may start `**`.
    star: bool,
}

impl MarkdownStream {
    /// A renderer; without color the text passes through unchanged.
    pub fn new(color: bool) -> Self {
        Self {
            color,
            pending: String::new(),
            at_line_start: true,
            in_fence: false,
            in_code_span: false,
            in_bold: false,
            line_style: None,
            star: false,
        }
    }

    /// Render a chunk; returns what to print now.
    pub fn push(&mut self, chunk: &str) -> String {
        if !self.color {
            return chunk.to_owned();
        }
        let mut out = String::new();
        for c in chunk.chars() {
            self.push_char(c, &mut out);
        }
        out
    }

    /// End of the text block: flush what is pending and reset styles.
    pub fn finish(&mut self) -> String {
        if !self.color {
            return String::new();
        }
        let mut out = String::new();
        if !self.pending.is_empty() {
            let p = std::mem::take(&mut self.pending);
            self.classify_line(&p, &mut out);
        }
        if self.star {
            out.push('*');
            self.star = false;
        }
        if self.in_code_span || self.in_bold || self.line_style.is_some() || self.in_fence {
            out.push_str(RESET);
        }
        self.in_code_span = false;
        self.in_bold = false;
        self.line_style = None;
        self.in_fence = false;
        self.at_line_start = true;
        out
    }

    fn push_char(&mut self, c: char, out: &mut String) {
        if self.at_line_start {
            if c == '\n' {
                let p = std::mem::take(&mut self.pending);
                self.classify_line(&p, out);
                self.end_line(out);
                return;
            }
            self.pending.push(c);
            if decided(&self.pending) {
                let p = std::mem::take(&mut self.pending);
                self.classify_line(&p, out);
            }
            return;
        }
        if c == '\n' {
            self.end_line(out);
            return;
        }
        self.inline(c, out);
    }

    fn end_line(&mut self, out: &mut String) {
        if self.star {
            out.push('*');
            self.star = false;
        }
        if self.line_style.take().is_some() || self.in_code_span || self.in_bold {
            out.push_str(RESET);
            self.in_code_span = false;
            self.in_bold = false;
        }
        out.push('\n');
        self.at_line_start = true;
    }

    /// Decide the line type from its first characters and print the (styled) prefix.
    fn classify_line(&mut self, prefix: &str, out: &mut String) {
        self.at_line_start = false;
        let trimmed = prefix.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            self.in_fence = !self.in_fence;
            out.push_str(DIM);
            out.push_str(prefix);
            out.push_str(RESET);
            // The rest of the fence line (language tag) is dim too.
            self.line_style = Some(DIM);
            out.push_str(DIM);
            return;
        }
        if self.in_fence {
            out.push_str(FENCE);
            out.push_str(prefix);
            self.line_style = Some(FENCE);
            return;
        }
        let indent = &prefix[..prefix.len() - trimmed.len()];
        if trimmed.starts_with('#') {
            let text = trimmed.trim_start_matches('#').trim_start();
            self.line_style = Some(HEADING);
            out.push_str(HEADING);
            self.inline_str(text, out);
        } else if let Some(rest) = trimmed
            .strip_prefix("- ")
            .or_else(|| trimmed.strip_prefix("* "))
            .or_else(|| trimmed.strip_prefix("+ "))
        {
            out.push_str(indent);
            out.push_str("  • ");
            self.inline_str(rest, out);
        } else if let Some(rest) = trimmed.strip_prefix("> ") {
            out.push_str(indent);
            out.push_str(DIM);
            out.push_str("│ ");
            out.push_str(RESET);
            self.inline_str(rest, out);
        } else {
            self.inline_str(prefix, out);
        }
    }

    fn inline_str(&mut self, s: &str, out: &mut String) {
        for c in s.chars() {
            self.inline(c, out);
        }
    }

    fn inline(&mut self, c: char, out: &mut String) {
        if self.in_fence {
            out.push(c);
            return;
        }
        if c == '`' {
            self.flush_star(out);
            self.in_code_span = !self.in_code_span;
            if self.in_code_span {
                out.push_str(CODE);
            } else {
                out.push_str(RESET);
                self.restore(out);
            }
            return;
        }
        if self.in_code_span {
            out.push(c);
            return;
        }
        if c == '*' {
            if self.star {
                self.star = false;
                self.in_bold = !self.in_bold;
                if self.in_bold {
                    out.push_str(BOLD);
                } else {
                    out.push_str(RESET);
                    self.restore(out);
                }
            } else {
                self.star = true;
            }
            return;
        }
        self.flush_star(out);
        out.push(c);
    }

    fn flush_star(&mut self, out: &mut String) {
        if self.star {
            out.push('*');
            self.star = false;
        }
    }

    /// Re-apply the styles still active after a reset.
    fn restore(&self, out: &mut String) {
        if let Some(s) = self.line_style {
            out.push_str(s);
        }
        if self.in_bold {
            out.push_str(BOLD);
        }
    }
}

/// Whether the start of a line is long enough to know its type.
fn decided(pending: &str) -> bool {
    let t = pending.trim_start();
    if t.is_empty() {
        return pending.len() > 8;
    }
    let first = t.chars().next().unwrap_or(' ');
    match first {
        '#' => t.contains(' ') || t.len() > 6,
        '`' | '~' => t.len() >= 3,
        '-' | '*' | '+' | '>' => t.chars().count() >= 2,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(chunks: &[&str]) -> String {
        let mut m = MarkdownStream::new(true);
        let mut s: String = chunks.iter().map(|c| m.push(c)).collect();
        s.push_str(&m.finish());
        s
    }

    fn strip(s: &str) -> String {
        let mut out = String::new();
        let mut esc = false;
        for c in s.chars() {
            match (esc, c) {
                (false, '\x1b') => esc = true,
                (true, 'm') => esc = false,
                (true, _) => {}
                (false, c) => out.push(c),
            }
        }
        out
    }

    #[test]
    fn styles_and_structure() {
        let s = render(&["# Title\n", "Some `code` and **bold**.\n- item\n"]);
        assert!(s.contains(&format!("{HEADING}Title")));
        assert!(s.contains(&format!("{CODE}code{RESET}")));
        assert!(s.contains(&format!("{BOLD}bold{RESET}")));
        assert_eq!(strip(&s), "Title\nSome code and bold.\n  • item\n");
    }

    #[test]
    fn chunk_boundaries_do_not_matter() {
        let text = "## Plan\n1. read `src/lib.rs`\n```rust\nfn main() { let x = 2 * 3; }\n```\n> note **this**\n* star item\nend";
        let whole = render(&[text]);
        let chars: Vec<String> = text.chars().map(|c| c.to_string()).collect();
        let refs: Vec<&str> = chars.iter().map(String::as_str).collect();
        assert_eq!(render(&refs), whole);
        let plain = strip(&whole);
        assert!(
            plain.contains("fn main() { let x = 2 * 3; }"),
            "code kept verbatim: {plain}"
        );
        assert!(plain.contains("  • star item"));
        assert!(plain.contains("│ note this"));
    }

    #[test]
    fn without_color_text_passes_through() {
        let mut m = MarkdownStream::new(false);
        assert_eq!(m.push("# a `b`"), "# a `b`");
        assert_eq!(m.finish(), "");
    }
}
