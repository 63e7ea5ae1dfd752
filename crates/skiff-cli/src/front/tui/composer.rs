//! The composer: the multi-line text being typed. Editing by grapheme (arrows, words, line
//! starts and ends, kill and yank as in a shell), large pastes kept as one placeholder until
//! sent, and the layout that puts it on screen with the cursor where it belongs.

use ratatui_core::text::{Line, Span};
use unicode_segmentation::UnicodeSegmentation;

use crate::term::wrap::width;

/// A paste at least this long (or with this many lines) is shown as a placeholder.
const LARGE_PASTE_CHARS: usize = 1000;
const LARGE_PASTE_LINES: usize = 8;

/// The text being typed.
#[derive(Debug, Default, Clone)]
pub struct Composer {
    text: String,
    /// Byte offset of the cursor (always on a grapheme boundary).
    cursor: usize,
    /// Large pastes: the placeholder shown and the text it stands for.
    pastes: Vec<(String, String)>,
    /// What Ctrl-K / Ctrl-U / Ctrl-W cut last (Ctrl-Y puts it back).
    killed: String,
    /// The column Up and Down aim for, and where the cursor was left by them: moving through a
    /// shorter line keeps the column of the line the moves started from.
    goal: Option<(usize, usize)>,
}

impl Composer {
    /// The text as shown (with paste placeholders).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The cursor's byte offset.
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// Whether nothing is typed.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Replace the text; the cursor goes to its end.
    pub fn set_text(&mut self, text: &str) {
        self.text = text.to_owned();
        self.cursor = self.text.len();
        self.pastes.retain(|(p, _)| text.contains(p.as_str()));
    }

    /// Empty it; returns the text it had, with pastes expanded.
    pub fn take(&mut self) -> String {
        let mut text = std::mem::take(&mut self.text);
        for (placeholder, content) in self.pastes.drain(..) {
            text = text.replacen(&placeholder, &content, 1);
        }
        self.cursor = 0;
        text
    }

    /// Empty it, discarding the text.
    pub fn clear(&mut self) {
        self.text.clear();
        self.pastes.clear();
        self.cursor = 0;
    }

    /// Type a character.
    pub fn insert_char(&mut self, c: char) {
        self.text.insert(self.cursor, c);
        self.cursor += c.len_utf8();
    }

    /// Type a string.
    pub fn insert_str(&mut self, s: &str) {
        self.text.insert_str(self.cursor, s);
        self.cursor += s.len();
    }

    /// A paste: inserted as typed, or, when large, as a placeholder for it.
    pub fn paste(&mut self, s: &str) {
        let s = s.replace("\r\n", "\n").replace('\r', "\n");
        let lines = s.lines().count();
        if s.chars().count() >= LARGE_PASTE_CHARS || lines >= LARGE_PASTE_LINES {
            let placeholder = format!("[Pasted text #{} +{lines} lines]", self.pastes.len() + 1);
            self.insert_str(&placeholder);
            self.pastes.push((placeholder, s));
        } else {
            self.insert_str(&s);
        }
    }

    fn prev_boundary(&self) -> usize {
        self.text[..self.cursor]
            .grapheme_indices(true)
            .next_back()
            .map_or(0, |(i, _)| i)
    }

    fn next_boundary(&self) -> usize {
        self.text[self.cursor..]
            .graphemes(true)
            .next()
            .map_or(self.cursor, |g| self.cursor + g.len())
    }

    /// Backspace. A paste placeholder goes as a whole.
    pub fn backspace(&mut self) {
        if let Some(i) = self
            .pastes
            .iter()
            .position(|(p, _)| self.text[..self.cursor].ends_with(p.as_str()))
        {
            let (p, _) = self.pastes.remove(i);
            let start = self.cursor - p.len();
            self.text.replace_range(start..self.cursor, "");
            self.cursor = start;
            return;
        }
        let start = self.prev_boundary();
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    /// Delete the grapheme under the cursor.
    pub fn delete(&mut self) {
        let end = self.next_boundary();
        self.text.replace_range(self.cursor..end, "");
    }

    /// Cursor one grapheme left.
    pub fn left(&mut self) {
        self.cursor = self.prev_boundary();
    }

    /// Cursor one grapheme right.
    pub fn right(&mut self) {
        self.cursor = self.next_boundary();
    }

    /// Cursor to the start of the previous word.
    pub fn word_left(&mut self) {
        let before = &self.text[..self.cursor];
        let trimmed = before.trim_end();
        self.cursor = trimmed
            .char_indices()
            .rev()
            .find(|(_, c)| c.is_whitespace())
            .map_or(0, |(i, c)| i + c.len_utf8());
    }

    /// Cursor past the end of the next word.
    pub fn word_right(&mut self) {
        let after = &self.text[self.cursor..];
        let skip = after.len() - after.trim_start().len();
        let rest = &after[skip..];
        let word = rest.find(char::is_whitespace).unwrap_or(rest.len());
        self.cursor += skip + word;
    }

    fn line_start(&self) -> usize {
        self.text[..self.cursor].rfind('\n').map_or(0, |i| i + 1)
    }

    fn line_end(&self) -> usize {
        self.text[self.cursor..]
            .find('\n')
            .map_or(self.text.len(), |i| self.cursor + i)
    }

    /// Cursor to the start of its line.
    pub fn home(&mut self) {
        self.cursor = self.line_start();
    }

    /// Cursor to the end of its line.
    pub fn end(&mut self) {
        self.cursor = self.line_end();
    }

    /// Whether the cursor is on the first line.
    pub fn on_first_line(&self) -> bool {
        !self.text[..self.cursor].contains('\n')
    }

    /// Whether the cursor is on the last line.
    pub fn on_last_line(&self) -> bool {
        !self.text[self.cursor..].contains('\n')
    }

    /// The column a vertical move aims for: the one the last vertical move aimed for if the
    /// cursor has not moved since, else the cursor's.
    fn goal_column(&self) -> usize {
        match self.goal {
            Some((at, col)) if at == self.cursor => col,
            _ => width(&self.text[self.line_start()..self.cursor]),
        }
    }

    /// Cursor to the same column of the line above.
    pub fn up(&mut self) {
        let start = self.line_start();
        if start == 0 {
            return;
        }
        let col = self.goal_column();
        let prev_start = self.text[..start - 1].rfind('\n').map_or(0, |i| i + 1);
        self.cursor = at_column(&self.text, prev_start, start - 1, col);
        self.goal = Some((self.cursor, col));
    }

    /// Cursor to the same column of the line below.
    pub fn down(&mut self) {
        let end = self.line_end();
        if end == self.text.len() {
            return;
        }
        let col = self.goal_column();
        let next_start = end + 1;
        let next_end = self.text[next_start..]
            .find('\n')
            .map_or(self.text.len(), |i| next_start + i);
        self.cursor = at_column(&self.text, next_start, next_end, col);
        self.goal = Some((self.cursor, col));
    }

    /// Cut from the cursor to the end of the line (or the newline at its end).
    pub fn kill_to_end(&mut self) {
        let mut end = self.line_end();
        if end == self.cursor && end < self.text.len() {
            end += 1;
        }
        self.killed = self.text[self.cursor..end].to_owned();
        self.text.replace_range(self.cursor..end, "");
    }

    /// Cut from the start of the line to the cursor.
    pub fn kill_to_start(&mut self) {
        let start = self.line_start();
        self.killed = self.text[start..self.cursor].to_owned();
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    /// Cut the word before the cursor.
    pub fn kill_word(&mut self) {
        let end = self.cursor;
        self.word_left();
        self.killed = self.text[self.cursor..end].to_owned();
        self.text.replace_range(self.cursor..end, "");
    }

    /// Put back what was cut last.
    pub fn yank(&mut self) {
        let killed = self.killed.clone();
        self.insert_str(&killed);
    }

    /// The token being typed at the cursor that starts with `@` (its start, and the text
    /// after the `@`), for file completion.
    pub fn at_token(&self) -> Option<(usize, &str)> {
        let before = &self.text[..self.cursor];
        let start = before
            .rfind(|c: char| c.is_whitespace())
            .map_or(0, |i| i + 1);
        let token = &before[start..];
        let after_ok = self.text[self.cursor..]
            .chars()
            .next()
            .is_none_or(char::is_whitespace);
        token
            .strip_prefix('@')
            .filter(|_| after_ok)
            .map(|rest| (start, rest))
    }

    /// Replace the text from byte `start` to the cursor with `with`.
    pub fn replace_before_cursor(&mut self, start: usize, with: &str) {
        self.text.replace_range(start..self.cursor, with);
        self.cursor = start + with.len();
    }

    /// The rows the text takes at `width` columns after a prompt of `prompt_width` columns
    /// (rows after the first are indented as much), and where the cursor is among them.
    pub fn layout(&self, cols: usize, prompt_width: usize) -> (Vec<String>, (usize, usize)) {
        let room = cols.saturating_sub(prompt_width).max(1);
        let mut rows = vec![String::new()];
        let mut used = 0;
        let mut cursor = (0, 0);
        let mut offset = 0;
        for g in self.text.graphemes(true) {
            if offset == self.cursor {
                cursor = (rows.len() - 1, used);
            }
            offset += g.len();
            if g == "\n" || g == "\r\n" {
                rows.push(String::new());
                used = 0;
                continue;
            }
            let w = width(g);
            if used + w > room {
                rows.push(String::new());
                used = 0;
            }
            if let Some(last) = rows.last_mut() {
                last.push_str(g);
            }
            used += w;
        }
        if offset == self.cursor {
            if used >= room {
                rows.push(String::new());
                used = 0;
            }
            cursor = (rows.len() - 1, used);
        }
        (rows, cursor)
    }

    /// The composer's lines, each starting with `prompt` or an indent as wide, and where the
    /// cursor is (row, column).
    pub fn lines(&self, cols: usize, prompt: Span<'static>) -> (Vec<Line<'static>>, (u16, u16)) {
        let pw = width(&prompt.content);
        let (rows, (r, c)) = self.layout(cols, pw);
        let lines = rows
            .into_iter()
            .enumerate()
            .map(|(i, row)| {
                let lead = if i == 0 {
                    prompt.clone()
                } else {
                    Span::raw(" ".repeat(pw))
                };
                Line::from(vec![lead, Span::raw(row)])
            })
            .collect();
        let r = u16::try_from(r).unwrap_or(u16::MAX);
        let c = u16::try_from(c + pw).unwrap_or(u16::MAX);
        (lines, (r, c))
    }
}

/// The byte offset in `text[start..end]` at display column `col` (or the line's end).
fn at_column(text: &str, start: usize, end: usize, col: usize) -> usize {
    let mut used = 0;
    for (i, g) in text[start..end].grapheme_indices(true) {
        let w = width(g);
        if used + w > col {
            return start + i;
        }
        used += w;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(s: &str) -> Composer {
        let mut c = Composer::default();
        c.insert_str(s);
        c
    }

    #[test]
    fn editing_by_grapheme_and_word() {
        let mut c = typed("héllo wörld");
        c.backspace();
        assert_eq!(c.text(), "héllo wörl");
        c.word_left();
        assert_eq!(c.cursor(), "héllo ".len());
        c.kill_to_end();
        assert_eq!(c.text(), "héllo ");
        c.yank();
        assert_eq!(c.text(), "héllo wörl");
        c.home();
        c.right();
        c.right();
        c.insert_char('X');
        assert_eq!(c.text(), "héXllo wörl");
        c.end();
        c.kill_word();
        assert_eq!(c.text(), "héXllo ");
    }

    #[test]
    fn lines_and_vertical_moves() {
        let mut c = typed("first line\nab\nthird");
        assert!(c.on_last_line());
        c.up();
        assert_eq!(c.cursor(), "first line\nab".len());
        c.up();
        assert_eq!(c.cursor(), "first".len());
        assert!(c.on_first_line());
        c.down();
        c.down();
        assert_eq!(c.cursor(), "first line\nab\nthird".len());
    }

    #[test]
    fn large_pastes_are_one_placeholder_until_sent() {
        let mut c = typed("see: ");
        let big = "x\n".repeat(50);
        c.paste(&big);
        assert_eq!(c.text(), "see: [Pasted text #1 +50 lines]");
        assert_eq!(c.take(), format!("see: {big}"));
        let mut c = typed("");
        c.paste(&big);
        c.backspace();
        assert!(c.is_empty());
    }

    #[test]
    fn layout_wraps_and_places_the_cursor() {
        let c = typed("abcdefgh\nxy");
        let (rows, cursor) = c.layout(7, 2);
        assert_eq!(rows, ["abcde", "fgh", "xy"]);
        assert_eq!(cursor, (2, 2));
        let c = typed("abcde");
        assert_eq!(c.layout(7, 2).1, (1, 0));
    }

    #[test]
    fn at_tokens() {
        let c = typed("look at @src/ma");
        assert_eq!(c.at_token(), Some((8, "src/ma")));
        assert_eq!(typed("mail me@x y").at_token(), None);
    }
}
