//! File changes as the user sees them: the hunks of an edit with the file's real line numbers
//! (from the edit tools' `structuredPatch`, or computed against the file for an approval), as
//! coloured lines, long ones folded with a count.

use std::path::Path;

use ratatui_core::style::{Color, Modifier, Style};
use ratatui_core::text::{Line, Span};
use serde_json::Value;

/// One hunk: where it starts in the old and the new file, and its lines (`-`, `+` or ` `
/// followed by the text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffHunk {
    /// First old line (1-based).
    pub old_start: usize,
    /// First new line (1-based).
    pub new_start: usize,
    /// The lines.
    pub lines: Vec<String>,
}

/// A change to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// The file, as the tool was given it.
    pub path: String,
    /// The file is new.
    pub created: bool,
    /// Its hunks.
    pub hunks: Vec<DiffHunk>,
}

impl FileDiff {
    /// Lines added and removed.
    pub fn counts(&self) -> (usize, usize) {
        let mut added = 0;
        let mut removed = 0;
        for h in &self.hunks {
            for l in &h.lines {
                match l.as_bytes().first() {
                    Some(b'+') => added += 1,
                    Some(b'-') => removed += 1,
                    _ => {}
                }
            }
        }
        (added, removed)
    }

    /// `Added 2 lines, removed 1 line`.
    pub fn summary(&self) -> String {
        let (added, removed) = self.counts();
        let plural = |n: usize| if n == 1 { "line" } else { "lines" };
        match (added, removed) {
            (a, 0) => format!("Added {a} {}", plural(a)),
            (0, r) => format!("Removed {r} {}", plural(r)),
            (a, r) => format!("Added {a} {}, removed {r} {}", plural(a), plural(r)),
        }
    }
}

/// The diff an edit tool's structured result describes (Edit, MultiEdit, Write).
pub fn from_result(tool: &str, result: &Value) -> Option<FileDiff> {
    if !matches!(tool, "Edit" | "MultiEdit" | "Write") {
        return None;
    }
    let path = result.get("filePath")?.as_str()?.to_owned();
    let created = result.get("type").and_then(Value::as_str) == Some("create")
        || (tool != "Write" && result.get("originalFile").is_some_and(Value::is_null));
    let mut hunks: Vec<DiffHunk> = result
        .get("structuredPatch")
        .and_then(Value::as_array)
        .map(|hs| {
            hs.iter()
                .filter_map(|h| {
                    Some(DiffHunk {
                        old_start: h.get("oldStart")?.as_u64()? as usize,
                        new_start: h.get("newStart")?.as_u64()? as usize,
                        lines: h
                            .get("lines")?
                            .as_array()?
                            .iter()
                            .filter_map(|l| l.as_str().map(str::to_owned))
                            .collect(),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    if hunks.is_empty() && created {
        let content = result
            .get("content")
            .or_else(|| result.get("newString"))
            .and_then(Value::as_str)?;
        hunks.push(added_hunk(content));
    }
    (!hunks.is_empty()).then_some(FileDiff {
        path,
        created,
        hunks,
    })
}

fn added_hunk(content: &str) -> DiffHunk {
    DiffHunk {
        old_start: 0,
        new_start: 1,
        lines: content.lines().map(|l| format!("+{l}")).collect(),
    }
}

/// What an Edit or Write call would change, against the file as it is now (for its approval):
/// the whole file's line numbers, no false end-of-file markers. None for other tools, or when
/// the edit would not apply (the tool reports that itself).
pub fn preview(tool: &str, input: &Value, cwd: &Path) -> Option<FileDiff> {
    let s = |k: &str| input.get(k).and_then(Value::as_str);
    let path = s("file_path")?;
    let abs = cwd.join(path);
    let before = std::fs::read_to_string(&abs).ok();
    let after = match tool {
        "Write" => s("content")?.to_owned(),
        "Edit" => {
            let (old, new) = (s("old_string")?, s("new_string")?);
            match &before {
                None if old.is_empty() => new.to_owned(),
                None => return None,
                Some(content) if old.is_empty() && content.is_empty() => new.to_owned(),
                Some(_) if old.is_empty() => return None,
                Some(content) => {
                    let (old, new) = if content.contains("\r\n") && !old.contains('\r') {
                        (old.replace('\n', "\r\n"), new.replace('\n', "\r\n"))
                    } else {
                        (old.to_owned(), new.to_owned())
                    };
                    if !content.contains(&old) {
                        return None;
                    }
                    if input.get("replace_all").and_then(Value::as_bool) == Some(true) {
                        content.replace(&old, &new)
                    } else {
                        content.replacen(&old, &new, 1)
                    }
                }
            }
        }
        _ => return None,
    };
    let hunks = match &before {
        None => vec![added_hunk(&after)],
        Some(b) => skiff_tools::patch::structured_patch(b, &after)
            .into_iter()
            .map(|h| DiffHunk {
                old_start: h.old_start,
                new_start: h.new_start,
                lines: h.lines,
            })
            .collect(),
    };
    Some(FileDiff {
        path: path.to_owned(),
        created: before.is_none(),
        hunks,
    })
}

/// The diff as lines: a line number, the sign and the text, removed lines red and added green;
/// at most `max` lines, the rest folded into a count.
pub fn diff_lines(diff: &FileDiff, indent: &str, max: usize) -> Vec<Line<'static>> {
    // As wide as the largest line number shown.
    let width = diff
        .hunks
        .iter()
        .map(|h| {
            let old = h.lines.iter().filter(|l| !l.starts_with('+')).count();
            let new = h.lines.iter().filter(|l| !l.starts_with('-')).count();
            (h.old_start + old).max(h.new_start + new).saturating_sub(1)
        })
        .max()
        .unwrap_or(1)
        .max(1)
        .to_string()
        .len();
    let mut out = Vec::new();
    let mut total = 0;
    for (i, h) in diff.hunks.iter().enumerate() {
        if i > 0 {
            total += 1;
            if out.len() < max {
                out.push(Line::styled(
                    format!("{indent}{:>width$} ⋮", ""),
                    Style::new().add_modifier(Modifier::DIM),
                ));
            }
        }
        let (mut old, mut new) = (h.old_start, h.new_start);
        for l in &h.lines {
            total += 1;
            let (sign, text) = l.split_at(l.chars().next().map_or(0, char::len_utf8));
            let (num, style) = match sign {
                "-" => {
                    old += 1;
                    (old - 1, Style::new().fg(Color::Red))
                }
                "+" => {
                    new += 1;
                    (new - 1, Style::new().fg(Color::Green))
                }
                _ => {
                    old += 1;
                    new += 1;
                    (new - 1, Style::new())
                }
            };
            if out.len() >= max {
                continue;
            }
            let sign = if sign.is_empty() { " " } else { sign };
            out.push(Line::from(vec![
                Span::styled(
                    format!("{indent}{num:>width$} "),
                    Style::new().add_modifier(Modifier::DIM),
                ),
                Span::styled(format!("{sign}{text}"), style),
            ]));
        }
    }
    if total > out.len() {
        out.push(Line::styled(
            format!("{indent}… +{} lines", total - out.len()),
            Style::new().add_modifier(Modifier::DIM),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::wrap::plain;
    use serde_json::json;

    #[test]
    fn previews_use_the_files_line_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let text: String = (1..=9).map(|i| format!("line {i}\n")).collect();
        std::fs::write(dir.path().join("a.txt"), &text).unwrap();
        let d = preview(
            "Edit",
            &json!({"file_path": "a.txt", "old_string": "line 5", "new_string": "line five\nextra"}),
            dir.path(),
        )
        .unwrap();
        assert_eq!(d.hunks[0].old_start, 2);
        let lines: Vec<String> = diff_lines(&d, "", 40).iter().map(plain).collect();
        assert!(lines.contains(&"5 -line 5".to_owned()), "{lines:?}");
        assert!(lines.contains(&"5 +line five".to_owned()), "{lines:?}");
        assert!(lines.contains(&"6 +extra".to_owned()), "{lines:?}");
        assert!(!lines.iter().any(|l| l.contains("No newline")), "{lines:?}");
        assert_eq!(d.summary(), "Added 2 lines, removed 1 line");
    }

    #[test]
    fn results_give_diffs_and_long_ones_fold() {
        let r = json!({"type": "create", "filePath": "n.txt", "content": "a\nb\nc\n",
                       "structuredPatch": [], "originalFile": null});
        let d = from_result("Write", &r).unwrap();
        assert!(d.created);
        let lines: Vec<String> = diff_lines(&d, "  ", 2).iter().map(plain).collect();
        assert_eq!(lines, ["  1 +a", "  2 +b", "  … +1 lines"]);
        assert!(from_result("Read", &r).is_none());
    }
}
