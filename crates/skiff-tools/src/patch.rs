//! Structured patches (`structuredPatch` in Edit/Write results): hunks of a line diff.

use serde::Serialize;

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
    let diff = similar::TextDiff::from_lines(old, new);
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
}
