//! Word wrapping of styled lines to a terminal width: words move to the next line whole, words
//! wider than a line are cut, wide characters count two columns. Lines committed to the
//! terminal's scrollback are wrapped here, so the number of rows they take is known exactly.

use ratatui_core::style::Style;
use ratatui_core::text::{Line, Span};
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// Columns `s` takes on a terminal.
pub fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// Columns a line takes.
pub fn line_width(line: &Line<'_>) -> usize {
    line.spans.iter().map(|s| width(&s.content)).sum()
}

/// One piece of a word or of a run of spaces, with its style.
type Piece = (String, Style);

/// A word (no spaces) or a run of spaces, possibly in several styles.
struct Token {
    pieces: Vec<Piece>,
    width: usize,
    space: bool,
}

/// Split a line into words and space runs, keeping styles.
fn tokens(line: &Line<'_>) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::new();
    for span in &line.spans {
        let style = line.style.patch(span.style);
        for g in span.content.graphemes(true) {
            let space = g == " " || g == "\t";
            let g = if g == "\t" { "    " } else { g };
            let w = width(g);
            match out.last_mut() {
                Some(t) if t.space == space => {
                    t.width += w;
                    match t.pieces.last_mut() {
                        Some((text, s)) if *s == style => text.push_str(g),
                        _ => t.pieces.push((g.to_owned(), style)),
                    }
                }
                _ => out.push(Token {
                    pieces: vec![(g.to_owned(), style)],
                    width: w,
                    space,
                }),
            }
        }
    }
    out
}

/// Builds wrapped rows.
struct Rows {
    width: usize,
    indent: Vec<Span<'static>>,
    indent_width: usize,
    rows: Vec<Line<'static>>,
    current: Vec<Span<'static>>,
    used: usize,
}

impl Rows {
    fn push(&mut self, text: &str, style: Style, w: usize) {
        self.used += w;
        match self.current.last_mut() {
            Some(s) if s.style == style => s.content.to_mut().push_str(text),
            _ => self.current.push(Span::styled(text.to_owned(), style)),
        }
    }

    fn break_row(&mut self) {
        // Spaces at the end of a row are not kept.
        while let Some(last) = self.current.last_mut() {
            let trimmed = last.content.trim_end_matches(' ').len();
            if trimmed == 0 {
                self.current.pop();
                continue;
            }
            last.content.to_mut().truncate(trimmed);
            break;
        }
        self.rows
            .push(Line::from(std::mem::take(&mut self.current)));
        self.current = self.indent.clone();
        self.used = self.indent_width;
    }

    fn room(&self) -> usize {
        self.width.saturating_sub(self.used)
    }

    /// Place a word wider than the room left: on the next row if it fits one, else cut.
    fn word(&mut self, t: &Token) {
        if t.width <= self.room() {
            for (text, style) in &t.pieces {
                self.push(text, *style, width(text));
            }
            return;
        }
        let fresh = self.width.saturating_sub(self.indent_width);
        if t.width <= fresh && self.used > self.indent_width {
            self.break_row();
            self.word(t);
            return;
        }
        for (text, style) in &t.pieces {
            for g in text.graphemes(true) {
                let w = width(g);
                if w > self.room() && self.used > self.indent_width {
                    self.break_row();
                }
                self.push(g, *style, w);
            }
        }
    }
}

/// Wrap `line` to `width` columns; rows after the first start with `indent` (a list item's
/// hanging indent). An empty line stays one empty row.
pub fn wrap_line(line: &Line<'_>, width: usize, indent: &[Span<'static>]) -> Vec<Line<'static>> {
    let width = width.max(1);
    let indent_width: usize = indent.iter().map(|s| self::width(&s.content)).sum();
    // An indent that leaves no room is dropped.
    let (indent, indent_width) = if indent_width + 1 >= width {
        (Vec::new(), 0)
    } else {
        (indent.to_vec(), indent_width)
    };
    let mut rows = Rows {
        width,
        indent,
        indent_width,
        rows: Vec::new(),
        current: Vec::new(),
        used: 0,
    };
    for t in tokens(line) {
        if t.space {
            if rows.used == rows.indent_width && !rows.rows.is_empty() {
                // Spaces where a wrapped row starts are dropped.
                continue;
            }
            if t.width > rows.room() {
                rows.break_row();
                continue;
            }
            for (text, style) in &t.pieces {
                rows.push(text, *style, self::width(text));
            }
        } else {
            rows.word(&t);
        }
    }
    if !rows.current.is_empty() || rows.rows.is_empty() {
        let last = Line::from(std::mem::take(&mut rows.current));
        rows.rows.push(last);
    }
    rows.rows
}

/// The plain text of a line (tests, searches).
pub fn plain(line: &Line<'_>) -> String {
    line.spans.iter().map(|s| s.content.as_ref()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui_core::style::Modifier;

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(plain).collect()
    }

    #[test]
    fn words_move_whole_and_long_words_are_cut() {
        let l = Line::from("the quick brown fox jumps");
        assert_eq!(
            texts(&wrap_line(&l, 10, &[])),
            ["the quick", "brown fox", "jumps"]
        );
        let l = Line::from("abcdefghijklmnop xy");
        assert_eq!(
            texts(&wrap_line(&l, 6, &[])),
            ["abcdef", "ghijkl", "mnop", "xy"]
        );
        assert_eq!(texts(&wrap_line(&Line::from(""), 6, &[])), [""]);
    }

    #[test]
    fn styles_survive_and_indent_hangs() {
        let l = Line::from(vec![
            Span::raw("- "),
            Span::styled("bold words here", Style::new().add_modifier(Modifier::BOLD)),
        ]);
        let rows = wrap_line(&l, 10, &[Span::raw("  ")]);
        assert_eq!(texts(&rows), ["- bold", "  words", "  here"]);
        assert!(
            rows[1]
                .spans
                .iter()
                .any(|s| s.content == "words" && s.style.add_modifier.contains(Modifier::BOLD))
        );
    }

    #[test]
    fn wide_characters_count_twice() {
        let l = Line::from("界界界界界");
        assert_eq!(texts(&wrap_line(&l, 4, &[])), ["界界", "界界", "界"]);
        for row in wrap_line(&Line::from("a 界界 b 界界界 c"), 5, &[]) {
            assert!(line_width(&row) <= 5, "{row:?}");
        }
    }
}
