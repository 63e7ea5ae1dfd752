//! Expanding a command or skill for the model: arguments substituted, each `` !`command` ``
//! run through the Bash tool and its output put in its place, each `@path` read with the Read
//! tool and added after the text (as Claude Code's @-mentions are). Every command and read is
//! first checked by the session's permission rules (with the command's `allowed-tools`
//! granted); what the rules deny, or what would need an approval nobody gives, is not run and
//! the text says so. Output of commands is not scanned again for placeholders or references.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::json;
use skiff_protocol::{ContentBlock, ToolResultContent};
use skiff_tools::{Tool, ToolContext, Typed};
use tokio_util::sync::CancellationToken;

use super::CustomCommand;
use super::args::{Arguments, append_arguments, substitute_in_shell, substitute_text};
use crate::event::{ApprovalAnswer, ApprovalRequest};
use crate::permissions::{
    Approver, PermissionChecker, PermissionDecision, PermissionMode, PermissionQuery, Rule,
};
use crate::requests::Requester;

#[allow(clippy::expect_used)]
static BANG: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(^|[\s(\[])!`([^`\n]+)`").expect("the command pattern is valid"));

#[allow(clippy::expect_used)]
static MENTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?:^|\s)@(?:"([^"\n]+)"|([^\s"'`]+))"#).expect("the mention pattern is valid")
});

/// At most this many files are inlined for one command.
const MAX_MENTIONS: usize = 20;
/// At most this many commands run for one command.
const MAX_COMMANDS: usize = 20;

/// What running and reading go through: the session's permission rules, approver and tools.
pub struct Effects<'a> {
    /// The session's permission rules.
    pub permissions: &'a dyn PermissionChecker,
    /// Allow rules granted for this turn (`allowed-tools`).
    pub grants: &'a [Rule],
    /// The permission mode.
    pub mode: PermissionMode,
    /// Answers "ask" (the REPL asks the user; `-p` denies).
    pub approver: &'a dyn Approver,
    /// The session's client, for approvers that ask it.
    pub requester: &'a Requester,
    /// The tools' context (workspace, path guard, sandbox).
    pub ctx: &'a ToolContext,
    /// Stops commands still running.
    pub cancel: &'a CancellationToken,
    /// `${CLAUDE_SESSION_ID}`.
    pub session_id: &'a str,
}

/// A command or skill body made ready for the model.
#[derive(Debug, Clone, PartialEq)]
pub struct Expansion {
    /// The body: arguments substituted, command output inlined.
    pub text: String,
    /// The files its `@path` references name, as Read results.
    pub files: Vec<ContentBlock>,
}

/// Expand `cmd` invoked with `raw_args`.
///
/// The `` !`command` ``s are found in the body as written, before anything is substituted: the
/// arguments cannot add commands, and inside a command their values are shell-quoted.
pub async fn expand(cmd: &CustomCommand, raw_args: &str, fx: &Effects<'_>) -> Expansion {
    let dir = cmd.dir.as_ref().map(|d| d.display().to_string());
    let args = Arguments {
        raw: raw_args,
        names: &cmd.argument_names,
        session_id: fx.session_id,
        skill_dir: dir.as_deref(),
    };
    let mut parts = Vec::new();
    let mut saw_arguments = false;
    let mut last = 0;
    for c in BANG.captures_iter(&cmd.body) {
        let (Some(whole), Some(prefix), Some(command)) = (c.get(0), c.get(1), c.get(2)) else {
            continue;
        };
        let text = &cmd.body[last..prefix.end()];
        let (text, saw) = substitute_text(text, &args);
        saw_arguments |= saw;
        parts.push(Part::Text(text));
        let (line, saw) = substitute_in_shell(command.as_str(), &args);
        saw_arguments |= saw;
        parts.push(Part::Command(line));
        last = whole.end();
    }
    let (tail, saw) = substitute_text(&cmd.body[last..], &args);
    saw_arguments |= saw;
    parts.push(Part::Text(tail));
    if !saw_arguments
        && !raw_args.trim().is_empty()
        && let Some(Part::Text(t)) = parts.last_mut()
    {
        let text = std::mem::take(t);
        *t = append_arguments(text, &args, false);
    }
    // References are looked for in the body's own text, not in command output.
    let plain: String = parts
        .iter()
        .filter_map(|p| match p {
            Part::Text(t) => Some(t.as_str()),
            Part::Command(_) => None,
        })
        .collect();
    let mentions = mentions(&plain);
    let mut body = match &dir {
        Some(d) => format!("Base directory for this skill: {d}\n\n"),
        None => String::new(),
    };
    let mut commands = 0;
    for part in parts {
        match part {
            Part::Text(t) => body.push_str(&t),
            Part::Command(line) => {
                let text = if commands >= MAX_COMMANDS {
                    format!(
                        "(not run: at most {MAX_COMMANDS} `!` commands run for one command: \"!`{line}`\")"
                    )
                } else {
                    run_one(&line, fx).await
                };
                commands += 1;
                body.push_str(&text);
            }
        }
    }
    let mut files = Vec::new();
    for path in mentions.into_iter().take(MAX_MENTIONS) {
        files.extend(read_mention(&path, fx).await);
    }
    Expansion { text: body, files }
}

/// A piece of a command's body: text, or a `` !`command` `` to run (placeholders substituted).
enum Part {
    Text(String),
    Command(String),
}

/// The `@path` references of a text, in order, each once.
fn mentions(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in MENTION.captures_iter(text) {
        let path = match (c.get(1), c.get(2)) {
            (Some(quoted), _) => quoted.as_str().to_owned(),
            (None, Some(bare)) => bare
                .as_str()
                .trim_end_matches(['.', ',', ';', ':', ')', '!', '?', ']'])
                .to_owned(),
            _ => continue,
        };
        if !path.is_empty() && !out.contains(&path) {
            out.push(path);
        }
    }
    out
}

/// Check one command with the permission rules, then run it with the Bash tool.
async fn run_one(command: &str, fx: &Effects<'_>) -> String {
    let input = json!({"command": command, "description": "Command of a slash command"});
    let refused = |reason: &str| {
        format!(
            "(not run: Bash command permission check failed for pattern \"!`{command}`\": {})",
            reason.trim()
        )
    };
    let query = PermissionQuery {
        tool: "Bash",
        input: &input,
        tool_use_id: "",
        read_only: false,
        mode: fx.mode,
    };
    let mut input = input.clone();
    match fx.permissions.check_with_grants(&query, fx.grants).await {
        PermissionDecision::Allow => {}
        PermissionDecision::Deny { message } => return refused(&message),
        PermissionDecision::Ask { message } => {
            let request = ApprovalRequest {
                tool_name: "Bash".to_owned(),
                input: input.clone(),
                tool_use_id: format!("toolu_cmd_{}", &crate::frames::new_uuid()[..8]),
                reason: message,
            };
            match fx.approver.approve(request, fx.requester).await {
                ApprovalAnswer::Allow { updated_input } => {
                    if let Some(updated) = updated_input {
                        input = updated;
                    }
                }
                ApprovalAnswer::Deny { message, .. } => return refused(&message),
            }
        }
    }
    let ctx = fx.ctx.with_cancel(fx.cancel.child_token());
    let output = Typed::new(skiff_tools::bash::BashTool)
        .call(input, &ctx)
        .await;
    let text = output.text_content();
    if text == "(Bash completed with no output)" {
        String::new()
    } else {
        text.trim_end().to_owned()
    }
}

/// Read one `@path` (inside the workspace, if the Read rules allow it) as a Read result; a
/// reference to nothing that exists is left alone.
async fn read_mention(path: &str, fx: &Effects<'_>) -> Vec<ContentBlock> {
    let resolved = match fx.ctx.guard.resolve(path) {
        Ok(p) => p,
        Err(e) => {
            // Only say so for files that exist: `@someone` in prose is not a reference.
            let candidate = fx.ctx.root().join(path);
            return if candidate.is_file() {
                vec![ContentBlock::text(format!("(@{path} was not read: {e})"))]
            } else {
                Vec::new()
            };
        }
    };
    if !resolved.is_file() {
        return Vec::new();
    }
    let file_path = resolved.display().to_string();
    let input = json!({ "file_path": file_path });
    let query = PermissionQuery {
        tool: "Read",
        input: &input,
        tool_use_id: "",
        read_only: true,
        mode: fx.mode,
    };
    match fx.permissions.check_with_grants(&query, fx.grants).await {
        PermissionDecision::Allow => {}
        PermissionDecision::Deny { message } | PermissionDecision::Ask { message } => {
            return vec![ContentBlock::text(format!(
                "(@{path} was not read: {})",
                message.trim()
            ))];
        }
    }
    let output = Typed::new(skiff_tools::read::ReadTool)
        .call(input.clone(), fx.ctx)
        .await;
    let head = format!(
        "Called the Read tool with the following input: {input}\nResult of calling the Read tool:\n"
    );
    match output.content {
        ToolResultContent::Text(t) => vec![ContentBlock::text(format!("{head}{t}"))],
        ToolResultContent::Blocks(blocks) => {
            let mut out = vec![ContentBlock::text(head.trim_end().to_owned())];
            out.extend(blocks);
            out
        }
    }
}

#[cfg(test)]
#[path = "expand_tests.rs"]
mod tests;
