//! Text that grows while it streams (an answer not yet committed, thinking), wrapped to rows
//! incrementally: rows before the last one are final and kept, and a delta only re-wraps the
//! last row and what follows it. So a paragraph of any length costs the same per delta, and
//! rows already on screen never move as text arrives.
//!
//! A word that does not fit the room left on a row goes to the next row; on an empty row, a
//! word wider than the row is cut. Spaces where a wrapped row starts are dropped.

use std::ops::Range;

use ratatui_core::text::Line;
use unicode_segmentation::UnicodeSegmentation;

use crate::term::wrap::width as text_width;

/// Columns a grapheme takes (a tab four, control characters none).
fn grapheme_width(g: &str) -> usize {
    match g {
        "\t" => 4,
        g if g.chars().all(char::is_control) => 0,
        g => text_width(g),
    }
}

/// Growing text wrapped to rows.
#[derive(Debug, Clone)]
pub struct LiveText {
    width: usize,
    /// Final rows.
    rows: Vec<String>,
    /// Where the open (last) row starts in the text.
    open_from: usize,
    /// The open row continues a wrapped line (its leading spaces are dropped).
    open_continues: bool,
    /// The rows of the text from `open_from`: all final but the last, kept until the next
    /// update moves them to `rows`.
    open: String,
    /// Length of the text last seen.
    seen: usize,
}

impl LiveText {
    /// Empty, wrapping to `width` columns.
    pub fn new(width: usize) -> Self {
        Self {
            width: width.max(1),
            rows: Vec::new(),
            open_from: 0,
            open_continues: false,
            open: String::new(),
            seen: 0,
        }
    }

    /// Forget the text (it was committed, or withdrawn).
    pub fn reset(&mut self) {
        self.rows.clear();
        self.open_from = 0;
        self.open_continues = false;
        self.open.clear();
        self.seen = 0;
    }

    /// Wrap to another width from now on (the text is wrapped again at the next update).
    pub fn set_width(&mut self, width: usize) {
        let width = width.max(1);
        if width != self.width {
            self.width = width;
            self.reset();
        }
    }

    /// The text is now `text`: the text of the previous update with more appended (anything
    /// else starts over).
    pub fn update(&mut self, text: &str) {
        if text.len() < self.seen || !text.is_char_boundary(self.open_from) {
            self.reset();
        }
        self.seen = text.len();
        let mut pos = self.open_from;
        let mut continues = self.open_continues;
        loop {
            let rest = &text[pos..];
            match rest.find('\n') {
                Some(nl) => {
                    let line = &rest[..nl];
                    for r in break_rows(line, self.width, continues) {
                        self.rows.push(row_text(&line[r]));
                    }
                    pos += nl + 1;
                    continues = false;
                }
                None => {
                    let rows = break_rows(rest, self.width, continues);
                    let n = rows.len();
                    for r in &rows[..n - 1] {
                        self.rows.push(row_text(&rest[r.clone()]));
                    }
                    let last = rows[n - 1].clone();
                    self.open_from = pos + last.start;
                    self.open_continues = continues || n > 1;
                    self.open = row_text(&rest[last]);
                    return;
                }
            }
        }
    }

    /// How many rows the text takes.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.rows.len() + usize::from(!self.open.is_empty())
    }

    /// Whether the text is empty.
    pub fn is_empty(&self) -> bool {
        self.seen == 0
    }

    /// The last `max` rows, as lines.
    pub fn tail(&self, max: usize) -> Vec<Line<'static>> {
        let mut out: Vec<Line<'static>> = Vec::new();
        if max == 0 || self.is_empty() {
            return out;
        }
        let keep = if self.open.is_empty() { max } else { max - 1 };
        let from = self.rows.len().saturating_sub(keep);
        out.extend(self.rows[from..].iter().map(|r| Line::from(r.clone())));
        // An empty open row (after a newline, or a wrap) is not shown.
        if !self.open.is_empty() {
            out.push(Line::from(self.open.clone()));
        }
        out
    }
}

/// A row as shown: tabs as spaces, no trailing spaces.
fn row_text(s: &str) -> String {
    s.replace('\t', "    ").trim_end_matches(' ').to_owned()
}

/// Break one line (no newline) into rows of at most `width` columns; the byte ranges of the
/// rows. `continues`: the line starts a wrapped row (leading spaces dropped).
fn break_rows(line: &str, width: usize, continues: bool) -> Vec<Range<usize>> {
    let mut rows = Vec::new();
    let mut start = 0;
    let mut used = 0;
    // Spaces are being dropped (the row is a continuation with nothing on it yet).
    let mut dropping = continues;
    let mut i = 0;
    while i < line.len() {
        let rest = &line[i..];
        let space = rest.starts_with([' ', '\t']);
        // The token: a run of spaces, or a word.
        let len = if space {
            rest.find(|c| c != ' ' && c != '\t').unwrap_or(rest.len())
        } else {
            rest.find([' ', '\t']).unwrap_or(rest.len())
        };
        let token = &rest[..len];
        let w: usize = token.graphemes(true).map(grapheme_width).sum();
        if space {
            if dropping {
                start = i + len;
            } else if w > width.saturating_sub(used) {
                rows.push(start..i);
                start = i + len;
                used = 0;
                dropping = true;
            } else {
                used += w;
            }
        } else if w <= width.saturating_sub(used) {
            used += w;
            dropping = false;
        } else {
            if used > 0 {
                rows.push(start..i);
                start = i;
                used = 0;
            }
            if w <= width {
                used = w;
            } else {
                for (at, g) in token.grapheme_indices(true) {
                    let gw = grapheme_width(g);
                    if used + gw > width && used > 0 {
                        rows.push(start..i + at);
                        start = i + at;
                        used = 0;
                    }
                    used += gw;
                }
            }
            dropping = false;
        }
        i += len;
    }
    rows.push(start..line.len());
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::wrap::plain;

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(plain).collect()
    }

    fn whole(text: &str, width: usize) -> Vec<String> {
        let mut l = LiveText::new(width);
        l.update(text);
        texts(&l.tail(usize::MAX))
    }

    #[test]
    fn words_wrap_and_long_words_are_cut() {
        assert_eq!(
            whole("the quick brown fox jumps", 10),
            ["the quick", "brown fox", "jumps"]
        );
        assert_eq!(
            whole("abcdefghijklmnop xy", 6),
            ["abcdef", "ghijkl", "mnop", "xy"]
        );
        assert_eq!(whole("界界界界界", 4), ["界界", "界界", "界"]);
        assert_eq!(whole("  indented\nnext", 20), ["  indented", "next"]);
        assert_eq!(whole("ends with a newline\n", 40), ["ends with a newline"]);
        assert_eq!(whole("", 40), Vec::<String>::new());
    }

    #[test]
    fn any_chunking_gives_the_same_rows_and_rows_never_move() {
        let text = "Lorem ipsum dolor sit amet,   consectetur adipiscing elit.\nA verylongwordthatdoesnotfit here  and\tthere 界界界 end ";
        for width in [1, 3, 8, 13, 40] {
            let expected = whole(text, width);
            for size in [1, 2, 5, 17] {
                let mut l = LiveText::new(width);
                let chars: Vec<char> = text.chars().collect();
                let mut sofar = String::new();
                let mut before: Vec<String> = Vec::new();
                for chunk in chars.chunks(size) {
                    sofar.extend(chunk);
                    l.update(&sofar);
                    let now = texts(&l.tail(usize::MAX));
                    // Rows before the last are final: still there, unchanged.
                    if before.len() > 1 {
                        assert_eq!(now[..before.len() - 1], before[..before.len() - 1]);
                    }
                    for row in &now {
                        assert!(text_width(row) <= width.max(2), "{row:?} at {width}");
                    }
                    before = now;
                }
                assert_eq!(before, expected, "width {width}, chunks of {size}");
            }
        }
    }

    #[test]
    fn the_tail_is_the_last_rows() {
        let mut l = LiveText::new(4);
        l.update("aaa bbb ccc ddd");
        assert_eq!(texts(&l.tail(2)), ["ccc", "ddd"]);
        assert_eq!(l.len(), 4);
    }

    #[test]
    fn a_long_paragraph_costs_the_same_per_delta() {
        // 20k words, one delta at a time: each update re-wraps only the open row.
        let mut l = LiveText::new(80);
        let mut text = String::new();
        for i in 0..20_000 {
            text.push_str(&format!("word{i} "));
            l.update(&text);
        }
        assert!(l.len() > 2_000);
        assert!(texts(&l.tail(1))[0].ends_with("word19999"));
    }
}
