//! A file's text as an error shows it, so a model can act on the error at once: the whole file
//! when it is small, else its head and the lines around the nearest match of the text the model
//! was looking for. Lines are numbered as Read numbers them (`N<TAB>line`).

use std::collections::HashMap;

/// Files up to this many lines (and [`WHOLE_MAX_BYTES`]) are shown whole.
const WHOLE_MAX_LINES: usize = 300;
/// Files up to this many bytes (and [`WHOLE_MAX_LINES`]) are shown whole.
const WHOLE_MAX_BYTES: usize = 24_000;
/// Lines of the head of a large file.
const HEAD_LINES: usize = 40;
/// Lines shown on each side of the nearest match.
const AROUND: usize = 15;
/// Characters of one shown line at most.
const MAX_LINE_CHARS: usize = 500;

/// An excerpt of a file's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Excerpt {
    /// The numbered lines (with `…` lines where lines were left out).
    pub text: String,
    /// Whether the whole file is in it.
    pub whole: bool,
}

/// The excerpt of `content` to show with an error about it; `near` is the text the model meant
/// (an Edit's `old_string`), whose nearest match is shown for a large file.
pub fn excerpt(content: &str, near: Option<&str>) -> Excerpt {
    let lines: Vec<&str> = content.lines().collect();
    if lines.len() <= WHOLE_MAX_LINES && content.len() <= WHOLE_MAX_BYTES {
        return Excerpt {
            text: numbered(&lines, 0, lines.len()),
            whole: true,
        };
    }
    let head_end = HEAD_LINES.min(lines.len());
    let mut text = numbered(&lines, 0, head_end);
    if let Some(at) = near.and_then(|n| nearest_line(&lines, n)) {
        let start = at.saturating_sub(AROUND).max(head_end);
        let end = (at + AROUND + 1).min(lines.len());
        if start > head_end {
            text.push_str(&format!("… (lines {}–{start} left out)\n", head_end + 1));
        }
        if start < end {
            text.push_str(&numbered(&lines, start, end));
        }
        if end < lines.len() {
            text.push_str(&format!("… ({} more lines)\n", lines.len() - end));
        }
    } else {
        text.push_str(&format!("… ({} more lines)\n", lines.len() - head_end));
    }
    Excerpt { text, whole: false }
}

/// The lines `start..end` (0-based) numbered from `start + 1`.
fn numbered(lines: &[&str], start: usize, end: usize) -> String {
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate().take(end).skip(start) {
        let shown: String = line.chars().take(MAX_LINE_CHARS).collect();
        out.push_str(&format!("{}\t{shown}\n", i + 1));
    }
    out
}

/// The index of the line that best matches the first non-blank line of `wanted` (exact
/// substring first, then the most character bigrams in common).
pub fn nearest_line(lines: &[&str], wanted: &str) -> Option<usize> {
    let first = wanted.lines().map(str::trim).find(|l| !l.is_empty())?;
    if let Some(i) = lines.iter().position(|l| l.contains(first)) {
        return Some(i);
    }
    // The bigrams of `wanted`'s line, counted; each line's bigrams are matched against a copy
    // of the counts (linear in the line: matching each pair against every pair of the line
    // took seconds for a file of long lines).
    let mut want: HashMap<(char, char), usize> = HashMap::new();
    for g in bigrams(first) {
        *want.entry(g).or_default() += 1;
    }
    let wanted_len: usize = want.values().sum();
    if wanted_len == 0 {
        return None;
    }
    let score = |line: &str| {
        let mut left = want.clone();
        let (mut have, mut common) = (0, 0);
        for g in bigrams(line) {
            have += 1;
            if let Some(n) = left.get_mut(&g).filter(|n| **n > 0) {
                *n -= 1;
                common += 1;
            }
        }
        200 * common / (wanted_len + have).max(1)
    };
    lines
        .iter()
        .enumerate()
        .map(|(i, l)| (score(l), i))
        .filter(|(s, _)| *s >= 40)
        .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)))
        .map(|(_, i)| i)
}

/// The pairs of adjacent characters of `s`, whitespace left out.
fn bigrams(s: &str) -> impl Iterator<Item = (char, char)> + '_ {
    let mut chars = s.chars().filter(|c| !c.is_whitespace());
    let mut last = chars.next();
    chars.map(move |c| {
        let pair = (last.unwrap_or(c), c);
        last = Some(c);
        pair
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_file_is_shown_whole() {
        let e = excerpt("add() {\n  echo $(( $1 - $2 ))\n}\n", Some("x"));
        assert!(e.whole);
        assert_eq!(e.text, "1\tadd() {\n2\t  echo $(( $1 - $2 ))\n3\t}\n");
    }

    /// Long lines: each is scored in one pass (matching every pair against every pair of a
    /// line took seconds for a minified file).
    #[test]
    fn the_nearest_of_many_long_lines() {
        let long: Vec<String> = (0..300)
            .map(|i| format!("{i}:{}", "abcdefghij".repeat(1_000)))
            .collect();
        let mut lines: Vec<&str> = long.iter().map(String::as_str).collect();
        lines.push("let total = price * quantity;");
        assert_eq!(
            nearest_line(&lines, "let totl = price * quantity;"),
            Some(300)
        );
        assert_eq!(nearest_line(&lines, "zzzz"), None);
        assert_eq!(nearest_line(&["aab"], "aba"), Some(0));
    }

    #[test]
    fn a_large_file_shows_its_head_and_the_nearest_match() {
        let content: String = (1..=1000).map(|i| format!("line number {i}\n")).collect();
        let e = excerpt(&content, Some("line numbr 700"));
        assert!(!e.whole);
        assert!(e.text.starts_with("1\tline number 1\n"));
        assert!(e.text.contains("700\tline number 700\n"), "{}", e.text);
        assert!(e.text.contains("… (lines 41–"), "{}", e.text);
        assert!(!e.text.contains("\tline number 900\n"));
        let e = excerpt(&content, None);
        assert!(e.text.ends_with("… (960 more lines)\n"));
    }
}
