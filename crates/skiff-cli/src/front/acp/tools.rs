//! How a tool call looks in an editor: its ACP `kind`, title, the locations the editor can
//! follow (file and line), its content (text, or a `diff` for Edit and Write) and, when it
//! ends, its status and output. Pure functions of the call's name, input and result.

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{
    ContentBlock as AcpBlock, Diff, ImageContent, Plan, PlanEntry, PlanEntryPriority,
    PlanEntryStatus, ToolCall, ToolCallContent, ToolCallId, ToolCallLocation, ToolCallStatus,
    ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use serde_json::Value;
use skiff_protocol::{ContentBlock, ImageSource, ToolResultContent};

use skiff_config::sessions::one_line;

/// What the editor shows of a call before it runs.
#[derive(Debug, Clone, PartialEq)]
pub struct CallInfo {
    /// One line: `Read src/main.rs`, `` `cargo test` ``.
    pub title: String,
    /// The ACP kind (read, edit, delete, move, search, execute, fetch, think, switch_mode, other).
    pub kind: ToolKind,
    /// Files the call touches, absolute, with a line when known.
    pub locations: Vec<ToolCallLocation>,
    /// What the call will do: a diff for edits, the command's description, the plan.
    pub content: Vec<ToolCallContent>,
}

/// A string input of the call.
fn s<'a>(input: &'a Value, key: &str) -> Option<&'a str> {
    input.get(key).and_then(Value::as_str)
}

/// `path` made absolute against the workspace.
pub fn absolute(cwd: &Path, path: &str) -> PathBuf {
    let p = Path::new(path);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}

/// A path as the title shows it: relative to the workspace when inside it.
fn shown(cwd: &Path, path: &str) -> String {
    let abs = absolute(cwd, path);
    abs.strip_prefix(cwd)
        .map(|r| r.display().to_string())
        .ok()
        .filter(|r| !r.is_empty())
        .unwrap_or_else(|| abs.display().to_string())
}

fn location(cwd: &Path, path: &str, line: Option<u32>) -> ToolCallLocation {
    ToolCallLocation::new(absolute(cwd, path)).line(line)
}

/// Text as tool-call content.
pub fn text_content(text: impl Into<String>) -> ToolCallContent {
    ToolCallContent::from(AcpBlock::from(text.into()))
}

/// The kind of a shell command: a lone `rm` deletes, a lone `mv` moves, the rest executes.
fn command_kind(command: &str) -> ToolKind {
    let simple = !command.contains(['|', ';', '&', '>', '<', '`', '$', '\n']);
    match command.split_whitespace().next() {
        Some("rm" | "rmdir" | "unlink") if simple => ToolKind::Delete,
        Some("mv") if simple => ToolKind::Move,
        _ => ToolKind::Execute,
    }
}

/// A command in backticks for the title (as is when it holds a backtick itself).
fn code(text: &str) -> String {
    let line = one_line(text, 120);
    if line.contains('`') {
        line
    } else {
        format!("`{line}`")
    }
}

/// What the editor shows of a call, from its name and input. `cwd` is the workspace (relative
/// paths are made absolute against it); a Write's old text is read from disk.
pub fn call_info(name: &str, input: &Value, cwd: &Path) -> CallInfo {
    let path = s(input, "file_path").or_else(|| s(input, "notebook_path"));
    let mut info = CallInfo {
        title: name.to_owned(),
        kind: ToolKind::Other,
        locations: Vec::new(),
        content: Vec::new(),
    };
    match name {
        "Read" | "NotebookRead" => {
            info.kind = ToolKind::Read;
            if let Some(p) = path {
                let offset = input.get("offset").and_then(Value::as_u64);
                let limit = input.get("limit").and_then(Value::as_u64);
                info.title = match (offset, limit) {
                    (Some(o), Some(l)) => format!("Read {} ({o}-{})", shown(cwd, p), o + l - 1),
                    (Some(o), None) => format!("Read {} (from line {o})", shown(cwd, p)),
                    (None, Some(l)) => format!("Read {} (1-{l})", shown(cwd, p)),
                    (None, None) => format!("Read {}", shown(cwd, p)),
                };
                let line = offset.map(|o| u32::try_from(o.max(1)).unwrap_or(u32::MAX));
                info.locations.push(location(cwd, p, line));
            }
        }
        "Edit" | "MultiEdit" | "NotebookEdit" => {
            info.kind = ToolKind::Edit;
            if let Some(p) = path {
                info.title = format!("Edit {}", shown(cwd, p));
                info.locations.push(location(cwd, p, None));
                let original = std::fs::read_to_string(absolute(cwd, p)).ok();
                if let Some(diff) = edit_diff(cwd, p, input, original) {
                    info.content.push(ToolCallContent::from(diff));
                }
            }
        }
        "Write" => {
            info.kind = ToolKind::Edit;
            if let Some(p) = path {
                info.title = format!("Write {}", shown(cwd, p));
                info.locations.push(location(cwd, p, None));
                let abs = absolute(cwd, p);
                let old = std::fs::read_to_string(&abs).ok();
                info.content.push(ToolCallContent::from(
                    Diff::new(abs, s(input, "content").unwrap_or_default()).old_text(old),
                ));
            }
        }
        "Bash" => {
            let command = s(input, "command").unwrap_or_default();
            info.kind = command_kind(command);
            info.title = code(command);
            if let Some(d) = s(input, "description").filter(|d| !d.trim().is_empty()) {
                info.content.push(text_content(d));
            }
        }
        "BashOutput" | "KillShell" | "KillBash" | "TaskOutput" => info.kind = ToolKind::Execute,
        "Glob" => {
            info.kind = ToolKind::Search;
            let pattern = s(input, "pattern").unwrap_or_default();
            info.title = match s(input, "path").filter(|p| !p.is_empty()) {
                Some(p) => {
                    info.locations.push(location(cwd, p, None));
                    format!("Find {pattern} in {}", shown(cwd, p))
                }
                None => format!("Find {pattern}"),
            };
        }
        "Grep" => {
            info.kind = ToolKind::Search;
            let pattern = s(input, "pattern").unwrap_or_default();
            info.title = match s(input, "path").filter(|p| !p.is_empty()) {
                Some(p) => {
                    info.locations.push(location(cwd, p, None));
                    format!("Search for {} in {}", code(pattern), shown(cwd, p))
                }
                None => format!("Search for {}", code(pattern)),
            };
        }
        "LS" => {
            info.kind = ToolKind::Search;
            let p = s(input, "path").unwrap_or(".");
            info.title = format!("List {}", shown(cwd, p));
            info.locations.push(location(cwd, p, None));
        }
        "WebFetch" => {
            info.kind = ToolKind::Fetch;
            info.title = format!("Fetch {}", s(input, "url").unwrap_or_default());
        }
        "WebSearch" => {
            info.kind = ToolKind::Fetch;
            info.title = format!(
                "Search the web for {:?}",
                s(input, "query").unwrap_or_default()
            );
        }
        "TodoWrite" => {
            info.kind = ToolKind::Think;
            info.title = "Update the plan".to_owned();
        }
        "Task" | "Agent" => {
            info.kind = ToolKind::Think;
            if let Some(d) = s(input, "description") {
                info.title = one_line(d, 120);
            }
            if let Some(p) = s(input, "prompt") {
                info.content.push(text_content(p));
            }
        }
        "ExitPlanMode" => {
            info.kind = ToolKind::SwitchMode;
            info.title = "Ready to code?".to_owned();
            if let Some(plan) = s(input, "plan") {
                info.content.push(text_content(plan));
            }
        }
        other => {
            if let Some(rest) = other.strip_prefix("mcp__")
                && let Some((server, tool)) = rest.split_once("__")
            {
                info.title = format!("{tool} ({server} MCP)");
            }
        }
    }
    info
}

/// The replacements an Edit (`old_string`, `new_string`, `replace_all`) or a MultiEdit
/// (`edits: [...]`) makes.
fn replacements(input: &Value) -> Vec<(&str, &str, bool)> {
    fn one(v: &Value) -> Option<(&str, &str, bool)> {
        Some((
            v.get("old_string")?.as_str()?,
            v.get("new_string")?.as_str()?,
            v.get("replace_all").and_then(Value::as_bool) == Some(true),
        ))
    }
    match input.get("edits").and_then(Value::as_array) {
        Some(edits) => edits.iter().filter_map(one).collect(),
        None => one(input).into_iter().collect(),
    }
}

/// An edit's diff as the whole file before and after (so the editor's diff view has the
/// surrounding lines), from `original` (the file as it was); the replaced fragments alone when
/// the file is not known or the text to replace is not in it.
fn edit_diff(cwd: &Path, path: &str, input: &Value, original: Option<String>) -> Option<Diff> {
    let edits = replacements(input);
    let first = edits.first()?;
    let whole = original.and_then(|old| {
        let mut new = old.clone();
        for (from, to, all) in &edits {
            if from.is_empty() {
                // Creating the file (Edit with an empty old_string on a missing file).
                if !new.is_empty() {
                    return None;
                }
                new = (*to).to_owned();
            } else if !new.contains(from) {
                return None;
            } else if *all {
                new = new.replace(from, to);
            } else {
                new = new.replacen(from, to, 1);
            }
        }
        Some((old, new))
    });
    Some(match whole {
        Some((old, new)) => Diff::new(absolute(cwd, path), new).old_text(old),
        None => Diff::new(absolute(cwd, path), first.1).old_text(first.0.to_owned()),
    })
}

/// The `tool_call` announcing a call (status pending).
pub fn started(id: &str, name: &str, input: &Value, cwd: &Path) -> ToolCall {
    let info = call_info(name, input, cwd);
    ToolCall::new(ToolCallId::new(id), info.title)
        .name(name.to_owned())
        .kind(info.kind)
        .status(ToolCallStatus::Pending)
        .locations(info.locations)
        .content(info.content)
        .raw_input(input.clone())
}

/// The call as a permission request shows it (every field, so the editor can show it even
/// when it did not see the `tool_call`).
pub fn asked(id: &str, name: &str, input: &Value, cwd: &Path) -> ToolCallUpdate {
    ToolCallUpdate::from(started(id, name, input, cwd))
}

/// A status change only.
pub fn status(id: &str, status: ToolCallStatus) -> ToolCallUpdate {
    ToolCallUpdate::new(
        ToolCallId::new(id),
        ToolCallUpdateFields::new().status(status),
    )
}

/// A running call with its output so far (in progress).
pub fn live_output(id: &str, output: &str) -> ToolCallUpdate {
    ToolCallUpdate::new(
        ToolCallId::new(id),
        ToolCallUpdateFields::new()
            .status(ToolCallStatus::InProgress)
            .content(vec![text_content(fenced(output, "console"))]),
    )
}

/// A tool result's text, without the `<tool_use_error>` wrapper.
fn result_text(content: Option<&ToolResultContent>) -> String {
    let text = match content {
        Some(ToolResultContent::Text(t)) => t.clone(),
        Some(ToolResultContent::Blocks(blocks)) => blocks
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        None => String::new(),
    };
    text.trim()
        .trim_start_matches("<tool_use_error>")
        .trim_end_matches("</tool_use_error>")
        .to_owned()
}

/// Text in a code fence longer than any run of backticks inside it.
fn fenced(text: &str, lang: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}{lang}\n{}\n{fence}", text.trim_end_matches('\n'))
}

/// Images of a result, as ACP image content.
fn images(content: Option<&ToolResultContent>) -> Vec<ToolCallContent> {
    let Some(ToolResultContent::Blocks(blocks)) = content else {
        return Vec::new();
    };
    blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Image(i) => match &i.source {
                ImageSource::Base64 { media_type, data } => Some(ToolCallContent::from(
                    AcpBlock::Image(ImageContent::new(data.clone(), media_type.clone())),
                )),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// The line where an edit landed: the first hunk of its structured patch.
fn edited_line(structured: Option<&Value>) -> Option<u32> {
    let hunk = structured?.get("structuredPatch")?.as_array()?.first()?;
    let line = hunk.get("newStart")?.as_u64()?;
    u32::try_from(line).ok()
}

/// The `tool_call_update` that ends a call: completed or failed, with its output (a diff for
/// a successful edit, the text otherwise), the line an edit landed on, and the structured
/// result as `rawOutput`.
pub fn finished(
    id: &str,
    name: &str,
    input: &Value,
    cwd: &Path,
    content: Option<&ToolResultContent>,
    is_error: bool,
    structured: Option<&Value>,
) -> ToolCallUpdate {
    let mut fields = ToolCallUpdateFields::new().status(if is_error {
        ToolCallStatus::Failed
    } else {
        ToolCallStatus::Completed
    });
    let text = result_text(content);
    let path = s(input, "file_path").or_else(|| s(input, "notebook_path"));
    let mut out = Vec::new();
    if is_error {
        if !text.is_empty() {
            out.push(text_content(fenced(&text, "")));
        }
    } else {
        match name {
            "Edit" | "MultiEdit" | "Write" | "NotebookEdit" => {
                out = call_info(name, input, cwd).content;
                // The result knows the file as it was: the whole file before and after.
                if matches!(name, "Edit" | "MultiEdit")
                    && let (Some(p), Some(st)) = (path, structured)
                    && let Some(diff) = edit_diff(
                        cwd,
                        p,
                        input,
                        Some(
                            st.get("originalFile")
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_owned(),
                        ),
                    )
                {
                    out = vec![ToolCallContent::from(diff)];
                }
                // A Write's old text was read before it ran; the result knows it for sure.
                if name == "Write"
                    && let (Some(p), Some(st)) = (path, structured)
                {
                    let old = st
                        .get("originalFile")
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                    out = vec![ToolCallContent::from(
                        Diff::new(absolute(cwd, p), s(input, "content").unwrap_or_default())
                            .old_text(old),
                    )];
                }
                if let Some(p) = path {
                    fields = fields.locations(vec![location(cwd, p, edited_line(structured))]);
                }
            }
            "Read" => {
                let raw = structured
                    .and_then(|st| st.get("file"))
                    .and_then(|f| f.get("content"))
                    .and_then(Value::as_str);
                match raw {
                    Some(raw) => out.push(text_content(fenced(raw, ""))),
                    None => out = images(content),
                }
                if out.is_empty() && !text.is_empty() {
                    out.push(text_content(text.clone()));
                }
            }
            "Bash" | "BashOutput" | "TaskOutput" => {
                if !text.is_empty() {
                    out.push(text_content(fenced(&text, "console")));
                }
            }
            "TodoWrite" | "ExitPlanMode" => {}
            _ => {
                out = images(content);
                if !text.is_empty() {
                    out.insert(0, text_content(text.clone()));
                }
            }
        }
    }
    fields = fields.content(out);
    if let Some(st) = structured {
        fields = fields.raw_output(st.clone());
    }
    ToolCallUpdate::new(ToolCallId::new(id), fields)
}

/// The plan of a TodoWrite call (`todos: [{content, status, priority?}]`), if it has one.
pub fn plan(name: &str, input: &Value) -> Option<Plan> {
    if name != "TodoWrite" {
        return None;
    }
    let todos = input.get("todos")?.as_array()?;
    let entries = todos
        .iter()
        .filter_map(|t| {
            let content = s(t, "content").or_else(|| s(t, "activeForm"))?;
            let status = match s(t, "status") {
                Some("in_progress") => PlanEntryStatus::InProgress,
                Some("completed") => PlanEntryStatus::Completed,
                _ => PlanEntryStatus::Pending,
            };
            let priority = match s(t, "priority") {
                Some("high") => PlanEntryPriority::High,
                Some("low") => PlanEntryPriority::Low,
                _ => PlanEntryPriority::Medium,
            };
            Some(PlanEntry::new(content, priority, status))
        })
        .collect();
    Some(Plan::new(entries))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use serde_json::json;

    use super::*;

    fn v<T: serde::Serialize>(t: &T) -> Value {
        serde_json::to_value(t).unwrap()
    }

    #[test]
    fn kinds_titles_and_locations() {
        let cwd = Path::new("/w");
        let read = call_info(
            "Read",
            &json!({"file_path": "src/a.rs", "offset": 10, "limit": 5}),
            cwd,
        );
        assert_eq!(read.kind, ToolKind::Read);
        assert_eq!(read.title, "Read src/a.rs (10-14)");
        assert_eq!(
            v(&read.locations),
            json!([{"path": "/w/src/a.rs", "line": 10}])
        );
        let edit = call_info(
            "Edit",
            &json!({"file_path": "/w/b.rs", "old_string": "a", "new_string": "b"}),
            cwd,
        );
        assert_eq!(edit.kind, ToolKind::Edit);
        assert_eq!(
            v(&edit.content),
            json!([{"type": "diff", "path": "/w/b.rs", "oldText": "a", "newText": "b"}])
        );
        let write = call_info(
            "Write",
            &json!({"file_path": "new.txt", "content": "x"}),
            cwd,
        );
        assert_eq!(
            v(&write.content),
            json!([{"type": "diff", "path": "/w/new.txt", "newText": "x"}])
        );
        for (cmd, kind) in [
            ("cargo test", ToolKind::Execute),
            ("rm -r target", ToolKind::Delete),
            ("mv a b", ToolKind::Move),
            ("rm a && cargo build", ToolKind::Execute),
        ] {
            let b = call_info("Bash", &json!({"command": cmd}), cwd);
            assert_eq!(b.kind, kind, "{cmd}");
            assert_eq!(b.title, format!("`{cmd}`"));
        }
        assert_eq!(
            call_info("Grep", &json!({"pattern": "fn main"}), cwd).kind,
            ToolKind::Search
        );
        assert_eq!(
            call_info("Glob", &json!({"pattern": "*.rs"}), cwd).title,
            "Find *.rs"
        );
        assert_eq!(
            call_info("WebFetch", &json!({"url": "https://x.dev"}), cwd).kind,
            ToolKind::Fetch
        );
        assert_eq!(
            call_info("TodoWrite", &json!({}), cwd).kind,
            ToolKind::Think
        );
        assert_eq!(
            call_info("ExitPlanMode", &json!({"plan": "p"}), cwd).kind,
            ToolKind::SwitchMode
        );
        let mcp = call_info("mcp__docs__search", &json!({}), cwd);
        assert_eq!(
            (mcp.kind, mcp.title.as_str()),
            (ToolKind::Other, "search (docs MCP)")
        );
        // The wire names of the kinds.
        assert_eq!(v(&ToolKind::SwitchMode), json!("switch_mode"));
    }

    #[test]
    fn a_finished_edit_is_a_diff_at_its_line_and_a_failure_is_text() {
        let cwd = Path::new("/w");
        let input = json!({"file_path": "a.rs", "old_string": "x", "new_string": "y"});
        let structured = json!({"structuredPatch": [{"oldStart": 7, "newStart": 7, "lines": []}]});
        let done = v(&finished(
            "t1",
            "Edit",
            &input,
            cwd,
            None,
            false,
            Some(&structured),
        ));
        assert_eq!(done["status"], "completed");
        assert_eq!(done["content"][0]["type"], "diff");
        assert_eq!(done["locations"], json!([{"path": "/w/a.rs", "line": 7}]));
        assert_eq!(done["rawOutput"], structured);
        let failed = v(&finished(
            "t1",
            "Edit",
            &input,
            cwd,
            Some(&ToolResultContent::Text(
                "<tool_use_error>String to replace not found</tool_use_error>".into(),
            )),
            true,
            None,
        ));
        assert_eq!(failed["status"], "failed");
        let text = failed["content"][0]["content"]["text"].as_str().unwrap();
        assert!(text.contains("String to replace not found") && !text.contains("tool_use_error"));
    }

    #[test]
    fn an_edit_diff_is_the_whole_file_before_and_after() {
        let cwd = Path::new("/w");
        let input = json!({"file_path": "a.rs", "old_string": "x = 1", "new_string": "x = 2"});
        let original = "fn main() {\n    let x = 1;\n    println!(\"{x}\");\n}\n";
        let structured = json!({"originalFile": original,
            "structuredPatch": [{"oldStart": 2, "newStart": 2, "lines": []}]});
        let done = v(&finished(
            "t",
            "Edit",
            &input,
            cwd,
            None,
            false,
            Some(&structured),
        ));
        let diff = &done["content"][0];
        assert_eq!(diff["type"], "diff");
        assert_eq!(diff["oldText"], original);
        assert_eq!(diff["newText"], original.replace("x = 1", "x = 2"));
        // replace_all and MultiEdit's edits, in order.
        let multi = json!({"file_path": "a.rs", "edits": [
            {"old_string": "a", "new_string": "b", "replace_all": true},
            {"old_string": "bb", "new_string": "c"}]});
        let d = v(&edit_diff(cwd, "a.rs", &multi, Some("aa a".into())).unwrap());
        assert_eq!(
            (d["oldText"].as_str(), d["newText"].as_str()),
            (Some("aa a"), Some("c b"))
        );
        // Not in the file (or no file): the fragments.
        let d = v(&edit_diff(cwd, "a.rs", &input, Some("other".into())).unwrap());
        assert_eq!(
            (d["oldText"].as_str(), d["newText"].as_str()),
            (Some("x = 1"), Some("x = 2"))
        );
    }

    #[test]
    fn bash_output_is_fenced_safely() {
        let out = v(&finished(
            "t",
            "Bash",
            &json!({"command": "echo"}),
            Path::new("/w"),
            Some(&ToolResultContent::Text("a ``` b".into())),
            false,
            None,
        ));
        let text = out["content"][0]["content"]["text"].as_str().unwrap();
        assert!(
            text.starts_with("````console\n") && text.ends_with("\n````"),
            "{text}"
        );
    }

    #[test]
    fn todo_lists_become_plans() {
        let p = plan(
            "TodoWrite",
            &json!({"todos": [
                {"content": "read", "status": "completed", "activeForm": "reading"},
                {"content": "fix", "status": "in_progress", "priority": "high"},
                {"content": "test", "status": "pending"},
                {"status": "pending"}
            ]}),
        )
        .unwrap();
        assert_eq!(
            v(&p),
            json!({"entries": [
                {"content": "read", "priority": "medium", "status": "completed"},
                {"content": "fix", "priority": "high", "status": "in_progress"},
                {"content": "test", "priority": "medium", "status": "pending"},
            ]})
        );
        assert!(plan("Bash", &json!({})).is_none());
    }
}
