//! The Edit tool: exact substring replacement with the uniqueness rule, `replace_all`, CRLF
//! files kept CRLF, atomic writes and Claude Code's error texts.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::context::ToolContext;
use crate::patch::structured_patch;
use crate::read::missing_file_help;
use crate::tool::{ToolOutput, TypedTool};
use crate::write::{Existing, OnRefusal, commit_change, load_for_change};

/// Input of the Edit tool.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditInput {
    /// Absolute, or relative to the workspace root.
    pub file_path: String,
    /// The exact text to replace, whitespace included.
    pub old_string: String,
    /// Its replacement (must differ).
    pub new_string: String,
    /// Replace every occurrence.
    #[serde(default)]
    pub replace_all: bool,
}

/// The Edit tool.
#[derive(Debug, Default)]
pub struct EditTool;

#[async_trait]
impl TypedTool for EditTool {
    type Input = EditInput;
    const NAME: &'static str = "Edit";
    const SCHEMA: Option<&'static str> = Some(skiff_protocol::compact_json!(include_str!(
        "schemas/Edit.json"
    )));

    fn description(&self) -> &str {
        "Replace exact text in a file Read earlier in this session. `old_string` must match \
         exactly (without Read's line-number prefix) and be unique unless `replace_all`: add \
         surrounding lines to make it so. An empty `old_string` creates the file."
    }

    fn is_read_only(&self) -> bool {
        false
    }

    async fn check(&self, input: &EditInput, ctx: &ToolContext) -> Result<(), ToolOutput> {
        prepare(input, ctx).await.map(|_| ())
    }

    async fn run(&self, input: EditInput, ctx: &ToolContext) -> ToolOutput {
        let (path, original, updated) = match prepare(&input, ctx).await {
            Ok(x) => x,
            Err(out) => return out,
        };
        if let Err(out) =
            commit_change(&path, &input.file_path, original.as_deref(), &updated, ctx).await
        {
            return out;
        }
        let text = match (&original, input.replace_all) {
            (None, _) => format!("File created successfully at: {}", input.file_path),
            (Some(_), false) => format!(
                "The file {} has been updated successfully.",
                input.file_path
            ),
            (Some(_), true) => format!(
                "The file {} has been updated. All occurrences were successfully replaced.",
                input.file_path
            ),
        };
        let patch = structured_patch(original.as_deref().unwrap_or(""), &updated);
        ToolOutput::text(text).with_structured(json!({
            "filePath": input.file_path, "oldString": input.old_string,
            "newString": input.new_string, "originalFile": original,
            "structuredPatch": patch, "userModified": false, "replaceAll": input.replace_all,
        }))
    }
}

/// Everything an Edit checks before it writes: the path, the read-before-write rule, that the
/// text to replace is there. The resolved path, the file as it is and as it will be.
async fn prepare(
    input: &EditInput,
    ctx: &ToolContext,
) -> Result<(std::path::PathBuf, Option<String>, String), ToolOutput> {
    if input.old_string == input.new_string {
        return Err(ToolOutput::tool_use_error(
            "No changes to make: old_string and new_string are exactly the same.",
        ));
    }
    let path = ctx
        .guard
        .resolve_existing(&input.file_path)
        .map_err(|e| ToolOutput::tool_use_error(e.to_string()))?;
    let original = match load_for_change(
        &path,
        &input.file_path,
        OnRefusal::Show(Some(input.old_string.as_str()).filter(|s| !s.is_empty())),
        ctx,
    )
    .await?
    {
        Existing::Missing if input.old_string.is_empty() => None,
        Existing::Missing => return Err(ToolOutput::error(missing_file_help(ctx, &path).await)),
        Existing::File(s) => Some(s),
    };
    let updated = match &original {
        None => input.new_string.clone(),
        Some(content) => apply(content, input).map_err(ToolOutput::tool_use_error)?,
    };
    Ok((path, original, updated))
}

/// The new content, or the model-facing error text.
fn apply(content: &str, input: &EditInput) -> Result<String, String> {
    if input.old_string.is_empty() {
        if content.is_empty() {
            return Ok(input.new_string.clone());
        }
        return Err("Cannot create new file - file already exists.".to_owned());
    }
    // A CRLF file keeps CRLF: match and insert with the file's line ending.
    let crlf = content.contains("\r\n") && !input.old_string.contains('\r');
    let (old, new) = if crlf {
        (
            input.old_string.replace('\n', "\r\n"),
            input.new_string.replace('\n', "\r\n"),
        )
    } else {
        (input.old_string.clone(), input.new_string.clone())
    };
    let count = content.matches(old.as_str()).count();
    if count == 0 {
        return Err(format!(
            "String to replace not found in file.\nString: {}{}",
            input.old_string,
            closest_line(content, &input.old_string)
        ));
    }
    if count > 1 && !input.replace_all {
        return Err(format!(
            "Found {count} matches of the string to replace, but replace_all is false. To \
             replace all occurrences, set replace_all to true. To replace only one occurrence, \
             please provide more context to uniquely identify the instance.\nString: {}{}",
            input.old_string,
            match_lines(content, &old, &input.new_string)
        ));
    }
    Ok(if input.replace_all {
        content.replace(old.as_str(), &new)
    } else {
        content.replacen(old.as_str(), &new, 1)
    })
}

/// Lines of help shown at most, and the longest line shown whole.
const HELP_LINES: usize = 5;
const HELP_LINE_CHARS: usize = 200;

/// `N\tline` for the 0-based line `i`, cut to [`HELP_LINE_CHARS`].
fn numbered_line(i: usize, line: &str) -> String {
    let shown: String = line.chars().take(HELP_LINE_CHARS).collect();
    format!("\n{}\t{shown}", i + 1)
}

/// For an `old_string` not in the file: the line that comes closest to its first line, so a
/// model that got the whitespace or a character wrong can copy the real text. Empty when no
/// line is close.
fn closest_line(content: &str, old_string: &str) -> String {
    let lines: Vec<&str> = content.lines().collect();
    match crate::file_excerpt::nearest_line(&lines, old_string) {
        Some(i) => format!(
            "\nThe closest line in the file (copy old_string from it exactly):{}",
            numbered_line(i, lines[i])
        ),
        // Nothing like it (a placeholder such as "old_code"): a small file is shown whole.
        None if content.len() <= SHOW_WHOLE_BYTES => format!(
            "\nThe file's current content (lines as Read shows them; copy old_string from it \
             exactly, without the line numbers):\n{}",
            crate::file_excerpt::excerpt(content, None).text.trim_end()
        ),
        None => String::new(),
    }
}

/// The lines holding a match that are considered for a ready-made edit of one of them.
const EDIT_CANDIDATES: usize = 50;

/// Files up to this size are shown whole when nothing in them is like `old_string`.
const SHOW_WHOLE_BYTES: usize = 4_096;

/// For an `old_string` found more than once: the lines each match starts on, so a model can
/// add the text that tells them apart, and for each line that holds one match and is unique in
/// the file, the edit of that line alone (its `old_string` and its `new_string`, with `new`
/// put in place of the match), ready to send.
fn match_lines(content: &str, old: &str, new: &str) -> String {
    // The line each match starts on, the newlines counted once through the content (counting
    // from the start for each match took 127 s for `;` in a 100,000-line file).
    let mut starts: Vec<usize> = Vec::new();
    let (mut line, mut counted) = (0, 0);
    for (at, _) in content.match_indices(old) {
        line += content.as_bytes()[counted..at]
            .iter()
            .filter(|b| **b == b'\n')
            .count();
        counted = at;
        starts.push(line);
    }
    let lines: Vec<&str> = content.lines().collect();
    let mut out = String::from("\nThe matches start on these lines:");
    for &i in starts.iter().take(HELP_LINES) {
        out.push_str(&numbered_line(i, lines.get(i).copied().unwrap_or("")));
    }
    if starts.len() > HELP_LINES {
        out.push_str(&format!("\n… and {} more", starts.len() - HELP_LINES));
    }
    // A whole line is usually unique where a part of it is not: offer the edit of each one
    // that is. A small model told only of the first took `replace_all` instead when it meant
    // another; told only to send the whole line as old_string, it sent `new_string` "+" for a
    // `-` it meant to turn into `+`, and the line became "+".
    starts.dedup();
    // Each line offered is looked for in the whole file: a few dozen lines at most.
    let edits: Vec<String> = starts
        .iter()
        .take(EDIT_CANDIDATES)
        .filter_map(|&i| Some((i, *lines.get(i)?)))
        .filter(|(_, l)| {
            !old.contains('\n')
                && l.trim() != old.trim()
                && l.matches(old).count() == 1
                && content.matches(*l).count() == 1
        })
        .take(HELP_LINES)
        .map(|(i, line)| {
            // As JSON (quotes and backslashes escaped), old_string first.
            let quoted = |s: &str| serde_json::Value::from(s).to_string();
            format!(
                "\nline {}: {{\"old_string\": {}, \"new_string\": {}}}",
                i + 1,
                quoted(line),
                quoted(&line.replacen(old, new, 1))
            )
        })
        .collect();
    if !edits.is_empty() {
        out.push_str(
            "\nTo change only one of them, send the Edit again with that match's line as \
             old_string (it is unique) and the line as it should be as new_string:",
        );
        out.extend(edits);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(old: &str, new: &str, all: bool) -> EditInput {
        EditInput {
            file_path: "f".into(),
            old_string: old.into(),
            new_string: new.into(),
            replace_all: all,
        }
    }

    #[test]
    fn a_match_found_twice_offers_the_edit_of_each_line_that_holds_it_once() {
        let content = "x = a - b - c\ny = a - b\ny = a - b\n";
        let e = apply(content, &input("a - b", "say \"a\" \\ b", false)).unwrap_err();
        // Lines 2 and 3 are the same text, so neither is unique: only line 1 is offered, and
        // its new_string is escaped as JSON.
        assert!(
            e.ends_with(
                "as new_string:\nline 1: {\"old_string\": \"x = a - b - c\", \"new_string\": \
                 \"x = say \\\"a\\\" \\\\ b - c\"}"
            ),
            "{e}"
        );
        // A line with the match twice is not offered (which of the two is meant is unknown).
        let e = apply("k = b - b\nb\n", &input("b", "c", false)).unwrap_err();
        assert!(!e.contains("To change only one"), "{e}");
    }

    /// A short `old_string` found on every line of a large file: the lines are counted once
    /// (counting from the start for each match took 127 s for 100,000 lines).
    #[test]
    fn many_matches_in_a_large_file() {
        let content: String = (0..100_000)
            .map(|i| format!("    value_{i} = compute({i});\n"))
            .collect();
        let err = apply(&content, &input(";", "; // x", false)).expect_err("ambiguous");
        assert!(err.starts_with("Found 100000 matches"), "{err}");
        assert!(
            err.contains("\n1\t    value_0 = compute(0);\n2\t    value_1 = compute(1);\n"),
            "{err}"
        );
        assert!(
            err.contains("\n5\t    value_4 = compute(4);\n… and 99995 more"),
            "{err}"
        );
        assert!(
            err.contains("line 1: {\"old_string\": \"    value_0 = compute(0);\""),
            "{err}"
        );
    }

    #[test]
    fn uniqueness_and_replace_all() {
        assert_eq!(apply("a b a", &input("b", "c", false)).unwrap(), "a c a");
        let e = apply("a b a", &input("a", "c", false)).unwrap_err();
        assert!(
            e.starts_with("Found 2 matches of the string to replace, but replace_all is false.")
        );
        assert!(e.contains("\nString: a\n"), "{e}");
        let e = apply(
            "add() { echo $(( $1 - $2 )); }\nsub() { echo $(( $1 - $2 )); }\n",
            &input("$1 - $2", "$1 + $2", false),
        )
        .unwrap_err();
        assert!(
            e.ends_with(
                "\nThe matches start on these lines:\n1\tadd() { echo $(( $1 - $2 )); }\n2\tsub() \
                 { echo $(( $1 - $2 )); }\nTo change only one of them, send the Edit again with \
                 that match's line as old_string (it is unique) and the line as it should be as \
                 new_string:\nline 1: {\"old_string\": \"add() { echo $(( $1 - $2 )); \
                 }\", \"new_string\": \"add() { echo $(( $1 + $2 )); }\"}\nline 2: \
                 {\"old_string\": \"sub() { echo $(( $1 - $2 )); }\", \"new_string\": \"sub() \
                 { echo $(( $1 + $2 )); }\"}"
            ),
            "{e}"
        );
        assert_eq!(apply("a b a", &input("a", "c", true)).unwrap(), "c b c");
        let e = apply("abc", &input("x", "y", false)).unwrap_err();
        assert_eq!(
            e,
            "String to replace not found in file.\nString: x\nThe file's current content (lines \
             as Read shows them; copy old_string from it exactly, without the line numbers):\n1\tabc"
        );
        let big = "abc\n".repeat(2_000);
        let e = apply(&big, &input("x", "y", false)).unwrap_err();
        assert_eq!(e, "String to replace not found in file.\nString: x");
        // Whitespace the model got wrong: the real line is shown to copy from.
        let e = apply(
            "#!/bin/sh\nadd() { echo $(( $1 - $2 )); }\n",
            &input("add() { echo $(($1 - $2)); }", "x", false),
        )
        .unwrap_err();
        assert_eq!(
            e,
            "String to replace not found in file.\nString: add() { echo $(($1 - $2)); }\nThe \
             closest line in the file (copy old_string from it exactly):\n2\tadd() { echo $(( $1 \
             - $2 )); }"
        );
    }

    #[test]
    fn crlf_is_kept() {
        let out = apply(
            "one\r\ntwo\r\nthree\r\n",
            &input("one\ntwo", "1\n2\n2b", false),
        )
        .unwrap();
        assert_eq!(out, "1\r\n2\r\n2b\r\nthree\r\n");
    }

    #[test]
    fn empty_old_string() {
        assert_eq!(apply("", &input("", "new", false)).unwrap(), "new");
        assert!(apply("x", &input("", "new", false)).is_err());
    }
}
