//! A saved session as a model script (`skiff sessions export ID --script`): every model call
//! of the session, its subagents' and its compactions' included, in the script format the
//! scripted provider plays, with the [`Recording`] `skiff replay` compares against.
//!
//! The transcript is read line by line in file order (a compaction starts a new chain, and the
//! calls before it are part of the session too). A line that is not JSON (a torn last line
//! after a crash) is skipped with a warning: what is complete is exported.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde_json::{Map, Value};
use skiff_core::transcript;
use skiff_protocol::recording::{RecordedInput, RecordedResult, Recording};
use skiff_protocol::script::{Script, ScriptBlock, ScriptTurn};
use skiff_protocol::{ContentBlock, MessageContent, MessageResponse, ToolResultContent};

/// The export of one session.
#[derive(Debug)]
pub struct Exported {
    /// The script, with its recording.
    pub script: Script,
    /// What was skipped on the way (torn lines, unreadable subagent transcripts).
    pub warnings: Vec<String>,
}

/// Where a tool call was made.
#[derive(Debug, Clone)]
struct Call {
    turn: usize,
    tool: String,
    thread: Option<String>,
}

#[derive(Default)]
struct Builder {
    turns: Vec<ScriptTurn>,
    inputs: Vec<RecordedInput>,
    results: Vec<RecordedResult>,
    calls: HashMap<String, Call>,
    warnings: Vec<String>,
    settings: Value,
    session_id: Option<String>,
    cwd: Option<String>,
    version: Option<String>,
}

/// Export the session saved in `path` (its subagents' transcripts are found beside it).
pub fn export(path: &Path) -> anyhow::Result<Exported> {
    let mut b = Builder::default();
    let session_dir = path.with_extension("");
    b.walk(path, None, &session_dir)?;
    if b.turns.is_empty() {
        bail!("the session {} has no model turn to export", path.display());
    }
    let session_id = b.session_id.clone().unwrap_or_else(|| {
        path.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    });
    let recording = Recording {
        session_id,
        cwd: b.cwd.clone().unwrap_or_default(),
        version: b.version.clone(),
        settings: b.settings.clone(),
        inputs: b.inputs,
        results: b.results,
        redactions: 0,
    };
    Ok(Exported {
        script: Script {
            model: None,
            repeat: false,
            turns: b.turns,
            recording: Some(recording),
        },
        warnings: b.warnings,
    })
}

/// The JSON objects of a transcript's lines, with their line numbers (torn and invalid lines
/// are reported in `warnings`).
fn read_lines(
    path: &Path,
    warnings: &mut Vec<String>,
) -> anyhow::Result<Vec<(usize, Map<String, Value>)>> {
    let bytes = std::fs::read(path)
        .with_context(|| format!("cannot read the session transcript {}", path.display()))?;
    Ok(transcript::json_lines(&bytes, path, warnings))
}

/// Line `n`'s model reply `value`.
fn reply_of(value: &Value, path: &Path, n: usize, what: &str) -> anyhow::Result<MessageResponse> {
    serde_json::from_value(value.clone())
        .with_context(|| format!("{}: line {n}: {what} is not readable", path.display()))
}

fn str_of<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    obj.get(key).and_then(Value::as_str)
}

impl Builder {
    /// Add the model calls and tool results of one transcript (`thread`: the Task call whose
    /// subagent wrote it).
    fn walk(
        &mut self,
        path: &Path,
        thread: Option<&str>,
        session_dir: &Path,
    ) -> anyhow::Result<()> {
        let lines = read_lines(path, &mut self.warnings)?;
        // Lines after a compaction boundary that re-write the new history.
        let mut rewritten = 0usize;
        for (n, obj) in lines {
            let kind = str_of(&obj, "type").unwrap_or_default();
            if thread.is_none() {
                if self.session_id.is_none() {
                    self.session_id = str_of(&obj, "sessionId").map(str::to_owned);
                }
                if self.cwd.is_none() {
                    self.cwd = str_of(&obj, "cwd").map(str::to_owned);
                }
                if self.version.is_none() {
                    self.version = str_of(&obj, "version").map(str::to_owned);
                }
            }
            match kind {
                "system" => match str_of(&obj, "subtype") {
                    Some(transcript::SESSION_SUBTYPE)
                        if thread.is_none() && self.settings.is_null() =>
                    {
                        self.settings = obj.get("settings").cloned().unwrap_or(Value::Null);
                    }
                    Some("compact_boundary") => {
                        rewritten = obj
                            .get("messageCount")
                            .and_then(Value::as_u64)
                            .and_then(|c| usize::try_from(c).ok())
                            .unwrap_or(0);
                        self.compaction(&obj, thread, path, n)?;
                    }
                    _ => {}
                },
                "user" | "assistant" if rewritten > 0 => rewritten -= 1,
                "assistant" => self.assistant(&obj, thread, path, n)?,
                "user" => self.user(&obj, thread, session_dir)?,
                _ => {}
            }
        }
        Ok(())
    }

    fn compaction(
        &mut self,
        obj: &Map<String, Value>,
        thread: Option<&str>,
        path: &Path,
        n: usize,
    ) -> anyhow::Result<()> {
        if obj.get("messageCount").is_none() {
            bail!(
                "{}: line {n} records a compaction or /clear the way skiff did before it kept what a replay needs; this session cannot be exported",
                path.display()
            );
        }
        // Without a summary: `/clear` (no model call).
        let Some(reply) = obj.get("summaryReply") else {
            if thread.is_none() {
                self.inputs.push(RecordedInput::Clear);
            }
            return Ok(());
        };
        let reply = reply_of(reply, path, n, "the compaction's summary")?;
        self.push_turn(&reply, thread);
        let manual = obj
            .get("compactMetadata")
            .and_then(|m| m.get("trigger"))
            .and_then(Value::as_str)
            == Some("manual");
        if manual && thread.is_none() {
            self.inputs.push(RecordedInput::Compact);
        }
        Ok(())
    }

    fn assistant(
        &mut self,
        obj: &Map<String, Value>,
        thread: Option<&str>,
        path: &Path,
        n: usize,
    ) -> anyhow::Result<()> {
        let Some(message) = obj.get("message") else {
            return Ok(());
        };
        if message.get("id").is_none() || message.get("usage").is_none() {
            bail!(
                "{}: line {n} is a copy of another session's history (the session was forked with --fork-session); export the session it was forked from",
                path.display()
            );
        }
        let reply = reply_of(message, path, n, "the model's reply")?;
        self.push_turn(&reply, thread);
        Ok(())
    }

    /// One model call, as a script turn.
    fn push_turn(&mut self, reply: &MessageResponse, thread: Option<&str>) {
        let number = self.turns.len() + 1;
        let mut content = Vec::with_capacity(reply.content.len());
        for block in &reply.content {
            match block {
                ContentBlock::Text(t) => content.push(ScriptBlock::Text {
                    text: t.text.clone(),
                }),
                ContentBlock::Thinking(t) => content.push(ScriptBlock::Thinking {
                    thinking: t.thinking.clone(),
                    signature: t.signature.clone(),
                }),
                ContentBlock::ToolUse(t) => {
                    self.calls.insert(
                        t.id.clone(),
                        Call {
                            turn: number,
                            tool: t.name.clone(),
                            thread: thread.map(str::to_owned),
                        },
                    );
                    content.push(ScriptBlock::ToolUse {
                        id: Some(t.id.clone()),
                        name: t.name.clone(),
                        input: t.input.clone(),
                    });
                }
                other => self.warnings.push(format!(
                    "turn {number}: left out a {} block (scripts cannot play it)",
                    other.type_name()
                )),
            }
        }
        self.turns.push(ScriptTurn {
            content,
            stop_reason: reply.stop_reason.clone(),
            usage: Some(reply.usage.clone()),
            thread: thread.map(str::to_owned),
            ..ScriptTurn::default()
        });
    }

    fn user(
        &mut self,
        obj: &Map<String, Value>,
        thread: Option<&str>,
        session_dir: &Path,
    ) -> anyhow::Result<()> {
        if obj.get("isMeta").and_then(Value::as_bool) == Some(true) {
            return Ok(());
        }
        let Some(content) = obj
            .get("message")
            .and_then(|m| m.get("content"))
            .cloned()
            .and_then(|c| serde_json::from_value::<MessageContent>(c).ok())
        else {
            return Ok(());
        };
        let blocks = content.to_blocks();
        let results: Vec<&skiff_protocol::ToolResultBlock> = blocks
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolResult(r) => Some(r),
                _ => None,
            })
            .collect();
        if results.is_empty() {
            // The note an interrupt leaves in the conversation is the session's, not a prompt:
            // a replay's own interrupt leaves it again.
            if thread.is_none()
                && let Some(prompt) = typed_prompt(&blocks)
                && !is_interruption_note(&prompt)
            {
                self.inputs.push(RecordedInput::Prompt { content: prompt });
            }
            return Ok(());
        }
        let structured = obj.get("toolUseResult");
        for (i, r) in results.iter().enumerate() {
            let structured = match structured {
                Some(Value::Array(all)) if results.len() > 1 => all.get(i).cloned(),
                Some(v) if results.len() == 1 => Some(v.clone()),
                _ => None,
            }
            .filter(|v| !v.is_null());
            let call = self.calls.get(&r.tool_use_id).cloned();
            let tool = call.as_ref().map_or_else(String::new, |c| c.tool.clone());
            // A subagent's calls come before the Task call's own result.
            if thread.is_none()
                && (tool == "Task" || tool == "Agent")
                && let Some(agent) = structured
                    .as_ref()
                    .and_then(|s| s.get("agentId"))
                    .and_then(Value::as_str)
            {
                self.subagent(agent, &r.tool_use_id, session_dir);
            }
            self.results.push(RecordedResult {
                turn: call.as_ref().map_or(0, |c| c.turn),
                tool_use_id: r.tool_use_id.clone(),
                tool,
                thread: call.and_then(|c| c.thread),
                content: result_text(r.content.as_ref()),
                is_error: r.is_error.unwrap_or(false),
                structured,
            });
        }
        Ok(())
    }

    /// Add the subagent `agent`'s calls, made for the Task call `call_id`.
    fn subagent(&mut self, agent: &str, call_id: &str, session_dir: &Path) {
        if !transcript::is_valid_session_id(agent) {
            self.warnings.push(format!(
                "skipped the subagent with the unusable id {agent:?}"
            ));
            return;
        }
        let path: PathBuf = session_dir
            .join("subagents")
            .join(format!("agent-{agent}.jsonl"));
        if !path.is_file() {
            self.warnings.push(format!(
                "the transcript of subagent {agent} (Task call {call_id}) is missing ({}); its turns are not in the script",
                path.display()
            ));
            return;
        }
        if let Err(e) = self.walk(&path, Some(call_id), session_dir) {
            self.warnings.push(format!("{e:#}"));
        }
    }
}

/// What the user typed in a prompt line: its blocks without the context skiff added (memory,
/// hook context, reminders, background notices); None for the loop's own messages.
fn typed_prompt(blocks: &[ContentBlock]) -> Option<Vec<ContentBlock>> {
    let typed: Vec<ContentBlock> = blocks
        .iter()
        .filter(|b| match b {
            ContentBlock::Text(t) => {
                let text = t.text.trim_start();
                !text.starts_with("<system-reminder>") && !text.starts_with("<task-notification>")
            }
            ContentBlock::Image(_) => true,
            _ => false,
        })
        .cloned()
        .collect();
    let loop_made = match typed.as_slice() {
        [] => true,
        [ContentBlock::Text(t)] => {
            t.text == skiff_core::CONTINUE_PROMPT
                || t.text.starts_with(skiff_core::STOP_HOOK_FEEDBACK)
        }
        _ => false,
    };
    (!loop_made).then_some(typed)
}

/// A tool result's content as text (images as `[image]`).
pub fn result_text(content: Option<&ToolResultContent>) -> String {
    match content {
        None => String::new(),
        Some(ToolResultContent::Text(t)) => t.clone(),
        Some(ToolResultContent::Blocks(blocks)) => blocks
            .iter()
            .map(|b| match b {
                ContentBlock::Text(t) => t.text.clone(),
                ContentBlock::Image(_) => "[image]".to_owned(),
                other => format!("[{}]", other.type_name()),
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// `[Request interrupted by user]` (or `… for tool use]`): what an interrupt leaves.
fn is_interruption_note(prompt: &[ContentBlock]) -> bool {
    matches!(prompt, [ContentBlock::Text(t)] if matches!(
        t.text.trim(),
        "[Request interrupted by user]" | "[Request interrupted by user for tool use]"
    ))
}
