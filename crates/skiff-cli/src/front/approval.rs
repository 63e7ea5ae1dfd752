//! Approval prompts of the REPL: what the call would do (a diff for Edit and Write), the
//! user's answer (yes / always / no, with optional feedback for the model), and saving the
//! allow rules "always" adds (the engine's `suggest_rules`) to `.skiff/settings.local.json`.

use std::path::Path;

use serde_json::Value;
use skiff_core::event::{ApprovalAnswer, ApprovalRequest};

/// What the model is told when the user rejects a call without saying why.
pub const REJECTED: &str = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.";

/// What the model is told when the user rejects a call and says how to proceed.
pub fn rejected_with(feedback: &str) -> String {
    format!(
        "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). To tell you how to proceed, the user said:\n{feedback}"
    )
}

/// The user's answer to an approval prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// Run it once.
    Yes,
    /// Run it and add an allow rule so it is not asked again.
    Always,
    /// Don't run it; stop the turn.
    No,
    /// Don't run it; tell the model this.
    Feedback(String),
}

/// Read an answer line: `y`/`yes`, `a`/`always`, `n`/`no`/empty; anything else is feedback.
pub fn parse_choice(line: &str) -> Choice {
    let t = line.trim();
    match t.to_ascii_lowercase().as_str() {
        "y" | "yes" => Choice::Yes,
        "a" | "always" | "yes, always" | "don't ask again" => Choice::Always,
        "" | "n" | "no" => Choice::No,
        _ => Choice::Feedback(t.to_owned()),
    }
}

/// The approval answer for a rejection.
pub fn reject(feedback: Option<&str>) -> ApprovalAnswer {
    match feedback {
        Some(f) => ApprovalAnswer::Deny {
            message: rejected_with(f),
            interrupt: false,
        },
        None => ApprovalAnswer::Deny {
            message: REJECTED.to_owned(),
            interrupt: true,
        },
    }
}

pub use skiff_config::settings_writer::persist_allowed_domain;

/// Lines shown above the question: for Edit and Write a unified diff of the change (at most
/// `max_lines`), for Bash the whole command.
pub fn preview(a: &ApprovalRequest, cwd: &Path, max_lines: usize) -> Vec<String> {
    let s = |k: &str| a.input.get(k).and_then(Value::as_str);
    let (old, new, path) = match a.tool_name.as_str() {
        "Edit" => (
            s("old_string").unwrap_or("").to_owned(),
            s("new_string").unwrap_or("").to_owned(),
            s("file_path"),
        ),
        "Write" => {
            let path = s("file_path");
            let old = path
                .map(|p| cwd.join(p))
                .filter(|p| p.is_file())
                .and_then(|p| std::fs::read_to_string(p).ok())
                .unwrap_or_default();
            (old, s("content").unwrap_or("").to_owned(), path)
        }
        "Bash" => {
            return s("command")
                .map(|c| {
                    c.lines()
                        .take(max_lines)
                        .map(|l| format!("  {l}"))
                        .collect()
                })
                .unwrap_or_default();
        }
        _ => return Vec::new(),
    };
    let diff = skiff_tools::patch::line_diff(&old, &new);
    let name = path.unwrap_or("file");
    let text = diff
        .unified_diff()
        .context_radius(2)
        .header(name, name)
        .to_string();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    if lines.len() > max_lines {
        let more = lines.len() - max_lines;
        lines.truncate(max_lines);
        lines.push(format!("… {more} more lines"));
    }
    lines
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn req(tool: &str, input: Value) -> ApprovalRequest {
        ApprovalRequest {
            tool_name: tool.into(),
            input,
            tool_use_id: "t".into(),
            reason: String::new(),
        }
    }

    #[test]
    fn choices() {
        assert_eq!(parse_choice("Y"), Choice::Yes);
        assert_eq!(parse_choice(" always "), Choice::Always);
        assert_eq!(parse_choice(""), Choice::No);
        assert_eq!(
            parse_choice("use the other file"),
            Choice::Feedback("use the other file".into())
        );
        let ApprovalAnswer::Deny { message, interrupt } = reject(Some("try B")) else {
            panic!()
        };
        assert!(message.ends_with("the user said:\ntry B") && !interrupt);
        assert!(matches!(
            reject(None),
            ApprovalAnswer::Deny {
                interrupt: true,
                ..
            }
        ));
    }

    #[test]
    fn edit_previews_are_diffs() {
        let lines = preview(
            &req(
                "Edit",
                json!({"file_path":"a.rs","old_string":"let x = 1;\n","new_string":"let x = 2;\n"}),
            ),
            Path::new("/nonexistent"),
            40,
        );
        assert!(lines.iter().any(|l| l == "-let x = 1;"), "{lines:?}");
        assert!(lines.iter().any(|l| l == "+let x = 2;"), "{lines:?}");
    }
}
