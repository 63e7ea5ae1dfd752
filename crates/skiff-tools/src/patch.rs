//! Structured patches (`structuredPatch` in Edit/Write results): hunks of a line diff, and the
//! line diff every diff skiff shows is made with ([`line_diff`]).

use std::time::Duration;

use serde::Serialize;

/// How long a line diff may search for the smallest set of changes. The search takes time in
/// proportion to the lines of the file times the lines changed: a 50,000-line file written over
/// with new content took 140 s (20,000 lines: 24 s). Past this, what is left is described as
/// lines removed and lines added: still a correct diff, only not the smallest.
const DIFF_TIMEOUT: Duration = Duration::from_millis(100);

/// A line diff of `old` and `new`: the smallest one found within [`DIFF_TIMEOUT`].
pub fn line_diff<'a>(old: &'a str, new: &'a str) -> similar::TextDiff<'a, 'a, 'a, str> {
    similar::TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new)
}

/// One hunk, in Claude Code's shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hunk {
    /// First old line (1-based).
    pub old_start: usize,
    /// Old line count.
    pub old_lines: usize,
    /// First new line (1-based).
    pub new_start: usize,
    /// New line count.
    pub new_lines: usize,
    /// Lines prefixed with `-`, `+` or ` `, without line endings.
    pub lines: Vec<String>,
}

/// The hunks turning `old` into `new`, with three lines of context.
pub fn structured_patch(old: &str, new: &str) -> Vec<Hunk> {
    let diff = line_diff(old, new);
    diff.grouped_ops(3)
        .iter()
        .filter_map(|group| {
            let first = group.first()?;
            let last = group.last()?;
            let old_range = first.old_range().start..last.old_range().end;
            let new_range = first.new_range().start..last.new_range().end;
            let mut lines = Vec::new();
            for op in group {
                for change in diff.iter_changes(op) {
                    let sign = match change.tag() {
                        similar::ChangeTag::Delete => '-',
                        similar::ChangeTag::Insert => '+',
                        similar::ChangeTag::Equal => ' ',
                    };
                    let text = change.value();
                    let text = text.strip_suffix('\n').unwrap_or(text);
                    let text = text.strip_suffix('\r').unwrap_or(text);
                    lines.push(format!("{sign}{text}"));
                }
            }
            Some(Hunk {
                old_start: old_range.start + 1,
                old_lines: old_range.len(),
                new_start: new_range.start + 1,
                new_lines: new_range.len(),
                lines,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_hunk() {
        let h = structured_patch("a\nb\nc\n", "a\nB\nc\n");
        assert_eq!(
            h,
            vec![Hunk {
                old_start: 1,
                old_lines: 3,
                new_start: 1,
                new_lines: 3,
                lines: vec![" a".into(), "-b".into(), "+B".into(), " c".into()],
            }]
        );
        assert!(structured_patch("same", "same").is_empty());
    }

    /// `old` with `hunks` applied.
    fn apply(old: &str, hunks: &[Hunk]) -> String {
        let old: Vec<&str> = old.lines().collect();
        let mut out = Vec::new();
        let mut next = 0;
        for h in hunks {
            out.extend_from_slice(&old[next..h.old_start - 1]);
            for line in &h.lines {
                if let Some(kept) = line.strip_prefix([' ', '+']) {
                    out.push(kept);
                }
            }
            next = h.old_start - 1 + h.old_lines;
        }
        out.extend_from_slice(&old[next..]);
        out.iter().map(|l| format!("{l}\n")).collect()
    }

    /// A whole large file rewritten, and changes scattered over one: before the diff had a
    /// time limit, the first took minutes (time grows with lines × changes). The hunks are
    /// still a correct patch, minimal or not.
    #[test]
    fn large_rewrites_still_give_a_correct_patch() {
        let old: String = (0..30_000).map(|i| format!("line {i} alpha\n")).collect();
        let rewritten: String = (0..30_000).map(|i| format!("row {i} beta\n")).collect();
        let hunks = structured_patch(&old, &rewritten);
        assert_eq!(apply(&old, &hunks), rewritten);
        let scattered: String = (0..30_000)
            .map(|i| match i % 7 {
                0 => format!("line {i} changed\n"),
                _ => format!("line {i} alpha\n"),
            })
            .collect();
        let hunks = structured_patch(&old, &scattered);
        assert_eq!(apply(&old, &hunks), scattered);
        let small = structured_patch("a\nb\nc\nd\n", "a\nB\nc\nd\ne\n");
        assert_eq!(apply("a\nb\nc\nd\n", &small), "a\nB\nc\nd\ne\n");
    }
}
