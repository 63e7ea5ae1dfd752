//! Reading transcripts back: [`load_session`] (a history valid for the API, repaired where a
//! crash left it incomplete) and the session list of a workspace.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::Value;
use skiff_protocol::{
    ContentBlock, Message, MessageContent, Role, ToolResultBlock, ToolUseBlock, validate_history,
};

use super::{TRIM_SUBTYPE, is_valid_session_id, project_dir};
use crate::conversation::{INTERRUPTED, NO_CONTENT};

/// Why a session could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum TranscriptError {
    /// No session with this id (or id prefix) in the workspace.
    #[error("no session {id} in this workspace (looked in {})", dir.display())]
    NotFound {
        /// The id asked for.
        id: String,
        /// The workspace's project directory.
        dir: PathBuf,
    },
    /// An id prefix matching several sessions.
    #[error("the session id prefix {prefix} matches several sessions: {}", matches.join(", "))]
    Ambiguous {
        /// The prefix asked for.
        prefix: String,
        /// The matching ids.
        matches: Vec<String>,
    },
    /// Not a usable session id.
    #[error("invalid session id {0:?}: only letters, digits, '-' and '_' are allowed")]
    InvalidId(String),
    /// The file could not be read.
    #[error("cannot read the session transcript {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Even after repair the history is not one the API accepts.
    #[error("the session transcript {} does not give a valid conversation: {reason}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

/// A session read back from its transcript.
#[derive(Debug, Clone)]
pub struct LoadedSession {
    /// The session id (the file's name).
    pub session_id: String,
    /// The transcript file.
    pub path: PathBuf,
    /// The conversation, valid for the API (empty when the file holds no message).
    pub messages: Vec<Message>,
    /// `uuid` of the newest line of the conversation: the `parentUuid` of the next line.
    pub leaf_uuid: Option<String>,
    /// The first prompt the user typed (without memory or hook context).
    pub first_prompt: Option<String>,
    /// Timestamp of the first message line.
    pub created: Option<String>,
    /// Timestamp of the last message line.
    pub updated: Option<String>,
    /// The workspace recorded in the transcript.
    pub cwd: Option<String>,
    /// What was skipped or repaired (half-written line, interrupted tool calls, ...), for the
    /// user; each was also logged with `tracing::warn!`.
    pub warnings: Vec<String>,
}

/// One parsed line that matters for the conversation.
struct Record {
    kind: String,
    uuid: Option<String>,
    parent: Option<String>,
    /// isSidechain, isMeta or teamName: never part of the main conversation.
    excluded: bool,
    compact_summary: bool,
    timestamp: Option<String>,
    cwd: Option<String>,
    message: Option<Value>,
    /// A trim marker: (replaced messages, the new first message).
    trim: Option<(usize, Value)>,
    line_no: usize,
}

impl Record {
    fn is_message(&self) -> bool {
        (self.kind == "user" || self.kind == "assistant") && !self.excluded
    }

    /// A message or a trim marker: what the conversation is made of.
    fn is_part(&self) -> bool {
        self.is_message() || self.trim.is_some()
    }
}

fn read_file(path: &Path) -> Result<Vec<u8>, TranscriptError> {
    std::fs::read(path).map_err(|source| TranscriptError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// The JSON objects of a transcript's lines with their (1-based) line numbers; a line that is
/// not JSON is skipped with a warning (a half-written last line is the expected case after a
/// crash), one that is JSON but not an object silently.
pub fn json_lines(
    bytes: &[u8],
    path: &Path,
    warnings: &mut Vec<String>,
) -> Vec<(usize, serde_json::Map<String, Value>)> {
    let lines: Vec<(usize, &[u8])> = bytes
        .split(|&b| b == b'\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim_ascii()))
        .filter(|(_, l)| !l.is_empty())
        .collect();
    let last_no = lines.last().map_or(0, |(n, _)| *n);
    let mut objects = Vec::with_capacity(lines.len());
    for (line_no, line) in lines {
        let value: Value = match serde_json::from_slice(line) {
            Ok(v) => v,
            Err(e) => {
                let w = if line_no == last_no {
                    format!(
                        "{}: ignored a half-written last line ({} bytes; the session probably ended while writing it)",
                        path.display(),
                        line.len()
                    )
                } else {
                    format!(
                        "{}: skipped line {line_no}, which is not valid JSON ({e})",
                        path.display()
                    )
                };
                tracing::warn!("{w}");
                warnings.push(w);
                continue;
            }
        };
        if let Value::Object(obj) = value {
            objects.push((line_no, obj));
        }
    }
    objects
}

/// Parse the lines into records (see [`json_lines`]).
fn parse_lines(bytes: &[u8], path: &Path, warnings: &mut Vec<String>) -> Vec<Record> {
    let objects = json_lines(bytes, path, warnings);
    let mut records = Vec::with_capacity(objects.len());
    for (line_no, mut obj) in objects {
        let str_field = |obj: &serde_json::Map<String, Value>, k: &str| {
            obj.get(k).and_then(Value::as_str).map(str::to_owned)
        };
        let flag = |obj: &serde_json::Map<String, Value>, k: &str| {
            obj.get(k).and_then(Value::as_bool).unwrap_or(false)
        };
        records.push(Record {
            kind: str_field(&obj, "type").unwrap_or_default(),
            uuid: str_field(&obj, "uuid"),
            parent: str_field(&obj, "parentUuid"),
            excluded: flag(&obj, "isSidechain")
                || flag(&obj, "isMeta")
                || obj.get("teamName").is_some_and(|t| !t.is_null()),
            compact_summary: flag(&obj, "isCompactSummary"),
            timestamp: str_field(&obj, "timestamp"),
            cwd: str_field(&obj, "cwd"),
            trim: trim_marker(&mut obj),
            message: obj.remove("message"),
            line_no,
        });
    }
    records
}

/// The trim marker of a `system` line, if it is one.
fn trim_marker(obj: &mut serde_json::Map<String, Value>) -> Option<(usize, Value)> {
    if obj.get("type").and_then(Value::as_str) != Some("system")
        || obj.get("subtype").and_then(Value::as_str) != Some(TRIM_SUBTYPE)
    {
        return None;
    }
    let replaced = usize::try_from(obj.get("replacedMessages")?.as_u64()?).ok()?;
    Some((replaced, obj.remove("firstMessage")?))
}

/// Indices of the main conversation's message records, oldest first: the `parentUuid` chain
/// from the newest message line back to the root, or, if that chain is broken, every message
/// line in file order.
fn main_chain(records: &[Record], path: &Path, warnings: &mut Vec<String>) -> Vec<usize> {
    let linear = || -> Vec<usize> {
        (0..records.len())
            .filter(|&i| records[i].is_part())
            .collect()
    };
    let Some(leaf) = (0..records.len()).rev().find(|&i| records[i].is_part()) else {
        return Vec::new();
    };
    if records[leaf].uuid.is_none() {
        return linear();
    }
    let index: HashMap<&str, usize> = records
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.excluded)
        .filter_map(|(i, r)| r.uuid.as_deref().map(|u| (u, i)))
        .collect();
    let mut chain = vec![leaf];
    let mut visited = HashSet::from([leaf]);
    let mut cur = leaf;
    while let Some(parent) = records[cur].parent.as_deref() {
        match index.get(parent) {
            Some(&i) if visited.insert(i) => {
                if records[i].is_part() {
                    chain.push(i);
                }
                cur = i;
            }
            _ => {
                let w = format!(
                    "{}: the parentUuid chain breaks at line {} (parent {parent} not found); reading the messages in file order",
                    path.display(),
                    records[cur].line_no
                );
                tracing::warn!("{w}");
                warnings.push(w);
                return linear();
            }
        }
    }
    chain.reverse();
    chain
}

/// The role and blocks of a message record; None (with a warning) if unreadable.
fn record_blocks(
    r: &Record,
    path: &Path,
    warnings: &mut Vec<String>,
) -> Option<(Role, Vec<ContentBlock>)> {
    let role = if r.kind == "assistant" {
        Role::Assistant
    } else {
        Role::User
    };
    let content = r
        .message
        .as_ref()
        .and_then(|m| m.get("content"))
        .cloned()
        .and_then(|c| serde_json::from_value::<MessageContent>(c).ok());
    let Some(content) = content else {
        let w = format!(
            "{}: skipped line {}: its message has no readable content",
            path.display(),
            r.line_no
        );
        tracing::warn!("{w}");
        warnings.push(w);
        return None;
    };
    if role == Role::Assistant {
        let cut = r
            .message
            .as_ref()
            .and_then(|m| m.get("stop_reason"))
            .and_then(Value::as_str)
            == Some("max_tokens");
        let blocks = content.to_blocks();
        if cut
            && blocks
                .iter()
                .any(|b| matches!(b, ContentBlock::ToolUse(t) if !t.input.is_object()))
        {
            // A tool call cut at max_tokens: the loop retried it and never kept it.
            return None;
        }
        return Some((role, blocks));
    }
    Some((role, content.to_blocks()))
}

fn interrupted_result(id: &str) -> ContentBlock {
    ContentBlock::ToolResult(ToolResultBlock::text(id, INTERRUPTED, true))
}

/// Make a conversation valid for the API, the way the loop itself keeps it:
/// * consecutive messages of one role are merged (Claude Code writes one line per block or
///   result; skiff's prompt after an API error or interrupt follows a user message);
/// * every tool_use gets exactly one tool_result in the next user message, first and in call
///   order; a missing one becomes `[Request interrupted by user for tool use]` (is_error), in a
///   new user message if the conversation ends with the call;
/// * tool_results answering nothing (orphans, duplicates) are dropped, as are tool_use blocks
///   with an id already used and anything before the first user message.
pub fn repair_history(
    entries: Vec<(Role, Vec<ContentBlock>)>,
    warnings: &mut Vec<String>,
) -> Vec<Message> {
    let mut merged: Vec<(Role, Vec<ContentBlock>)> = Vec::with_capacity(entries.len());
    for (role, blocks) in entries {
        match merged.last_mut() {
            Some((last, acc)) if *last == role => acc.extend(blocks),
            _ => merged.push((role, blocks)),
        }
    }

    let mut note = |w: String| {
        tracing::warn!("{w}");
        warnings.push(w);
    };
    let mut out: Vec<(Role, Vec<ContentBlock>)> = Vec::with_capacity(merged.len());
    let mut seen_ids: HashSet<String> = HashSet::new();
    let mut pending: Vec<ToolUseBlock> = Vec::new();
    let mut orphans = 0usize;
    for (role, blocks) in merged {
        match role {
            Role::Assistant => {
                if out.is_empty() {
                    note(
                        "dropped an assistant message that came before the first user message"
                            .into(),
                    );
                    continue;
                }
                let mut kept = Vec::with_capacity(blocks.len());
                for b in blocks {
                    match b {
                        ContentBlock::ToolUse(t) => {
                            if seen_ids.insert(t.id.clone()) {
                                pending.push(t.clone());
                                kept.push(ContentBlock::ToolUse(t));
                            } else {
                                note(format!("dropped a second tool call with the id {}", t.id));
                            }
                        }
                        ContentBlock::ToolResult(_) => orphans += 1,
                        other => kept.push(other),
                    }
                }
                if kept.is_empty() {
                    // As the loop does: the API rejects empty assistant content.
                    kept.push(ContentBlock::text(NO_CONTENT));
                }
                match out.last_mut() {
                    // Only reachable when the user message between had nothing valid, so no
                    // call of the previous message is waiting for a result.
                    Some((Role::Assistant, acc)) => acc.extend(kept),
                    _ => out.push((Role::Assistant, kept)),
                }
            }
            Role::User => {
                let (mut results, others): (Vec<ContentBlock>, Vec<ContentBlock>) = blocks
                    .into_iter()
                    .partition(|b| matches!(b, ContentBlock::ToolResult(_)));
                let mut new_blocks = Vec::with_capacity(pending.len() + others.len());
                for call in pending.drain(..) {
                    let found = results.iter().position(
                        |b| matches!(b, ContentBlock::ToolResult(r) if r.tool_use_id == call.id),
                    );
                    match found {
                        Some(i) => new_blocks.push(results.remove(i)),
                        None => {
                            note(format!(
                                "the {} call {} had no result (the session ended while it ran); it is marked interrupted",
                                call.name, call.id
                            ));
                            new_blocks.push(interrupted_result(&call.id));
                        }
                    }
                }
                orphans += results.len();
                new_blocks.extend(others);
                if new_blocks.is_empty() {
                    continue;
                }
                match out.last_mut() {
                    Some((Role::User, acc)) => acc.extend(new_blocks),
                    _ => out.push((Role::User, new_blocks)),
                }
            }
        }
    }
    if !pending.is_empty() {
        for call in &pending {
            note(format!(
                "the {} call {} had no result (the session ended while it ran); it is marked interrupted",
                call.name, call.id
            ));
        }
        out.push((
            Role::User,
            pending.iter().map(|c| interrupted_result(&c.id)).collect(),
        ));
    }
    if orphans > 0 {
        note(format!(
            "dropped {orphans} tool result(s) that answer no tool call"
        ));
    }
    out.into_iter()
        .map(|(role, blocks)| {
            let content = match blocks.as_slice() {
                [ContentBlock::Text(t)] if role == Role::User && t.cache_control.is_none() => {
                    MessageContent::Text(t.text.clone())
                }
                _ => MessageContent::Blocks(blocks),
            };
            Message { role, content }
        })
        .collect()
}

/// The text a user typed, from a prompt line's content: the last text block that is not a
/// `<system-reminder>` (memory) block; None for tool results.
fn prompt_text(content: &MessageContent) -> Option<String> {
    let blocks = match content {
        MessageContent::Text(t) => return Some(t.trim().to_owned()).filter(|t| !t.is_empty()),
        MessageContent::Blocks(b) => b,
    };
    if blocks
        .iter()
        .any(|b| matches!(b, ContentBlock::ToolResult(_)))
    {
        return None;
    }
    blocks
        .iter()
        .rev()
        .find_map(|b| match b {
            ContentBlock::Text(t) if !t.text.trim_start().starts_with("<system-reminder>") => {
                Some(t.text.trim().to_owned())
            }
            _ => None,
        })
        .filter(|t| !t.is_empty())
}

fn record_prompt(r: &Record) -> Option<String> {
    if r.kind != "user" || r.excluded || r.compact_summary {
        return None;
    }
    let content = r.message.as_ref()?.get("content")?.clone();
    prompt_text(&serde_json::from_value(content).ok()?)
}

fn session_id_of(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Read a transcript into a conversation valid for the API. Unknown line types, sidechain and
/// meta lines are skipped; the main chain is followed from the newest message back through
/// `parentUuid`; a half-written last line (or any line that is not JSON) is ignored with a
/// warning; the history is repaired (see [`repair_history`]) and checked with
/// [`validate_history`]. Only a missing or unreadable file is an error.
pub fn load_session(path: &Path) -> Result<LoadedSession, TranscriptError> {
    let bytes = read_file(path)?;
    let mut warnings = Vec::new();
    let records = parse_lines(&bytes, path, &mut warnings);
    let chain = main_chain(&records, path, &mut warnings);
    let mut entries: Vec<(Role, Vec<ContentBlock>)> = Vec::with_capacity(chain.len());
    for &i in &chain {
        match &records[i].trim {
            Some((replaced, first)) => {
                entries = apply_trim(entries, *replaced, first, &records[i], path, &mut warnings);
            }
            None => entries.extend(record_blocks(&records[i], path, &mut warnings)),
        }
    }
    let messages = repair_history(entries, &mut warnings);
    if !messages.is_empty()
        && let Err(e) = validate_history(&messages)
    {
        return Err(TranscriptError::Invalid {
            path: path.to_path_buf(),
            reason: e.to_string(),
        });
    }
    let first = chain.first().map(|&i| &records[i]);
    let last = chain.last().map(|&i| &records[i]);
    Ok(LoadedSession {
        session_id: session_id_of(path),
        path: path.to_path_buf(),
        messages,
        leaf_uuid: last.and_then(|r| r.uuid.clone()),
        first_prompt: chain.iter().find_map(|&i| record_prompt(&records[i])),
        created: first.and_then(|r| r.timestamp.clone()),
        updated: last.and_then(|r| r.timestamp.clone()),
        cwd: first.and_then(|r| r.cwd.clone()),
        warnings,
    })
}

/// Apply a trim marker to the conversation read so far: its first `replaced` messages become
/// `first`. A marker that does not fit (a damaged file) is ignored with a warning: the longer
/// history is kept, which is still valid.
fn apply_trim(
    entries: Vec<(Role, Vec<ContentBlock>)>,
    replaced: usize,
    first: &Value,
    r: &Record,
    path: &Path,
    warnings: &mut Vec<String>,
) -> Vec<(Role, Vec<ContentBlock>)> {
    let messages = repair_history(entries, warnings);
    let to_entries = |messages: Vec<Message>| -> Vec<(Role, Vec<ContentBlock>)> {
        messages
            .into_iter()
            .map(|m| (m.role, m.content.to_blocks()))
            .collect()
    };
    let first: Option<Message> = serde_json::from_value(first.clone()).ok();
    match first {
        Some(first) if first.role == Role::User && replaced <= messages.len() => {
            let mut out = Vec::with_capacity(messages.len() - replaced + 1);
            out.push((Role::User, first.content.to_blocks()));
            out.extend(to_entries(messages.into_iter().skip(replaced).collect()));
            out
        }
        _ => {
            let w = format!(
                "{}: ignored the trim record at line {} (it does not fit the conversation before it)",
                path.display(),
                r.line_no
            );
            tracing::warn!("{w}");
            warnings.push(w);
            to_entries(messages)
        }
    }
}

/// One session of a workspace, for listings and pickers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSummary {
    /// Session id.
    pub id: String,
    /// Transcript file.
    pub path: PathBuf,
    /// When the transcript was last written.
    pub modified: SystemTime,
    /// The first prompt the user typed.
    pub first_prompt: Option<String>,
    /// Message lines (user and assistant) in the file.
    pub message_count: usize,
}

impl SessionSummary {
    /// `modified` as ISO-8601 UTC to the second (`2026-11-22T02:57:09Z`).
    pub fn modified_iso(&self) -> String {
        humantime::format_rfc3339_seconds(self.modified).to_string()
    }
}

/// Summarize one transcript file (None if it cannot be read).
pub fn summarize_session(path: &Path) -> Option<SessionSummary> {
    let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok()?;
    let bytes = std::fs::read(path).ok()?;
    let mut message_count = 0;
    let mut first_prompt = None;
    for line in bytes.split(|&b| b == b'\n') {
        let line = line.trim_ascii();
        if line.is_empty() {
            continue;
        }
        let Ok(Value::Object(obj)) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        let kind = obj.get("type").and_then(Value::as_str).unwrap_or_default();
        let flag = |k: &str| obj.get(k).and_then(Value::as_bool).unwrap_or(false);
        if !(kind == "user" || kind == "assistant") || flag("isSidechain") || flag("isMeta") {
            continue;
        }
        message_count += 1;
        if first_prompt.is_none() && kind == "user" && !flag("isCompactSummary") {
            first_prompt = obj
                .get("message")
                .and_then(|m| m.get("content"))
                .cloned()
                .and_then(|c| serde_json::from_value::<MessageContent>(c).ok())
                .and_then(|c| prompt_text(&c));
        }
    }
    Some(SessionSummary {
        id: session_id_of(path),
        path: path.to_path_buf(),
        modified,
        first_prompt,
        message_count,
    })
}

/// The sessions of the workspace `cwd` that hold at least one message, newest first.
pub fn list_sessions(skiff_home: &Path, cwd: &Path) -> Vec<SessionSummary> {
    let dir = project_dir(skiff_home, cwd);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut list: Vec<SessionSummary> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl") && p.is_file())
        .filter_map(|p| summarize_session(&p))
        .filter(|s| s.message_count > 0)
        .collect();
    list.sort_by(|a, b| b.modified.cmp(&a.modified).then_with(|| a.id.cmp(&b.id)));
    list
}

/// The most recently written session of the workspace (`--continue`).
pub fn latest_session(skiff_home: &Path, cwd: &Path) -> Option<SessionSummary> {
    list_sessions(skiff_home, cwd).into_iter().next()
}

/// The transcript of session `id` in the workspace `cwd`; a unique prefix of an id also works.
pub fn find_session(skiff_home: &Path, cwd: &Path, id: &str) -> Result<PathBuf, TranscriptError> {
    if !is_valid_session_id(id) {
        return Err(TranscriptError::InvalidId(id.to_owned()));
    }
    let dir = project_dir(skiff_home, cwd);
    let exact = dir.join(format!("{id}.jsonl"));
    if exact.is_file() {
        return Ok(exact);
    }
    let mut matches: Vec<String> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    let stem = name.strip_suffix(".jsonl")?;
                    stem.starts_with(id).then(|| stem.to_owned())
                })
                .collect()
        })
        .unwrap_or_default();
    matches.sort();
    match matches.len() {
        0 => Err(TranscriptError::NotFound {
            id: id.to_owned(),
            dir,
        }),
        1 => Ok(dir.join(format!("{}.jsonl", matches[0]))),
        _ => Err(TranscriptError::Ambiguous {
            prefix: id.to_owned(),
            matches,
        }),
    }
}
