//! Session transcripts (PROTOCOL.md §9): every message of a session is appended, the moment it
//! is complete, as one JSON line to `SKIFF_HOME/projects/<escaped workspace>/<session id>.jsonl`,
//! and [`load_session`] turns such a file back into a history the API accepts.
//!
//! Writing ([`JsonlTranscript`], a [`SessionStore`]):
//! * lines are serialized where the message is added and written by a thread of the store's
//!   own (`writer.rs`), so neither `write` nor `fsync` ever blocks the session's runtime; the
//!   thread starts with the first line, so a session that never says anything leaves no file;
//! * the file is opened in append mode, mode 0600 (directories 0700);
//! * each line is written with a single `write_all` of the whole line and its `\n`, so a crash
//!   leaves at most one half-written last line; a line that failed half-way, or a half line
//!   left by an earlier crash, is closed with a `\n` before the next line is written;
//! * the data is `fsync`ed (`sync_data`) at each turn boundary ([`SessionStore::turn_complete`]),
//!   not per line; dropping the store (the session's end) waits until all is written, not for the
//!   last sync (see `writer.rs`);
//! * I/O errors never fail the run: the first one is logged with `tracing::warn!`, later ones at
//!   debug level, and the store keeps trying.
//!
//! Line shape (Claude Code's, keys as in `testdata/claude-code/transcript_session_sample.jsonl`):
//! `parentUuid` (the previous line's `uuid`, null for the first), `isSidechain: false`, `type`
//! (`user` | `assistant`), `message` (`{role:"user",content}` for user entries, the complete API
//! message with its final `stop_reason` and `usage` for assistant ones), `uuid`, `timestamp`,
//! `userType: "external"`, `cwd`, `sessionId`, `version` (skiff's), `gitBranch` when known.
//! A user entry carrying tool results also has `toolUseResult` and `sourceToolAssistantUUID`.
//! skiff writes one line per loop entry, so one user line may hold several tool_result blocks
//! (Claude Code writes one line per result): `toolUseResult` is then the single structured
//! result when there is one tool_result, or an array with one element (or null) per tool_result,
//! in block order, when there are several. Readers merge consecutive user lines, so both shapes
//! load the same way.
//!
//! An assistant reply cut at max_tokens in the middle of a tool call (the loop retries it with
//! more room and never keeps it in the history) is not written.
//!
//! A forked session ([`JsonlTranscript::with_initial_history`]) starts with the loaded history
//! re-written as its first lines (new session id and uuids, no API metadata). A replaced
//! history (compaction, `/clear`) is recorded with [`JsonlTranscript::record_compaction`]: a
//! `system`/`compact_boundary` line that starts a new `parentUuid` chain, as Claude Code does.
//! A trim is one small `system`/`skiff_trim` line in the chain ([`JsonlTranscript::record_trim`]).
//! A compaction's boundary also carries Claude Code's `compactMetadata` (`trigger`,
//! `preTokens`), the summary call's reply (`summaryReply`) and how many re-written history
//! lines follow it (`messageCount`), so that `skiff sessions export --script` can play the
//! session again. Each run starts with a `system`/`skiff_session` line in the chain holding how
//! it was set up ([`TranscriptMeta::settings`]).
//!
//! Reading ([`load_session`]) never trusts the file to be valid for the API: it follows the
//! chain, merges consecutive messages of one role, gives every unanswered tool call an
//! "interrupted" result, drops orphan results, and checks the outcome with
//! [`skiff_protocol::validate_history`]. The repair is not written back: it is deterministic,
//! so a resumed session appends its new lines after the original ones and loads the same way.

mod load;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use serde::Serialize;
use serde_json::Value;
use skiff_protocol::{ContentBlock, Message, MessageResponse, Role, StopReason};

pub use load::{
    LoadedSession, SessionSummary, TranscriptError, find_session, json_lines, latest_session,
    list_sessions, load_session, repair_history, summarize_session,
};

use crate::frames::{new_uuid, now_iso};
use crate::store::{CompactRecord, SessionEntry, SessionStore, TrimRecord};
use writer::Writer;

/// skiff's version, written as each line's `version`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// `subtype` of the line recording how a run was set up (see [`TranscriptMeta::settings`]).
pub const SESSION_SUBTYPE: &str = "skiff_session";

/// `subtype` of the line recording a trim (see [`JsonlTranscript::record_trim`]).
pub const TRIM_SUBTYPE: &str = "skiff_trim";

/// Escaped paths longer than this are cut and given a hash suffix (PROTOCOL.md §9).
const MAX_ESCAPED_LEN: usize = 200;

/// `SKIFF_HOME`, or `~/.skiff` when it is unset or empty; `None` without either `HOME`.
pub fn default_skiff_home() -> Option<PathBuf> {
    if let Some(home) = std::env::var_os("SKIFF_HOME").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(home));
    }
    std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .map(|h| PathBuf::from(h).join(".skiff"))
}

/// The project directory name of a workspace path, exactly as Claude Code makes it: every
/// UTF-16 code unit outside `[A-Za-z0-9]` becomes `-` (`/tmp/proj` → `-tmp-proj`); a result
/// longer than 200 characters is cut to 200 and gets `-` plus the base-36 absolute value of the
/// path's 32-bit djb2-style hash (`h = (h << 5) - h + unit`, JavaScript wraparound).
pub fn escape_project_path(path: &str) -> String {
    let escaped: String = path
        .encode_utf16()
        .map(|u| match u8::try_from(u) {
            Ok(b) if b.is_ascii_alphanumeric() => char::from(b),
            _ => '-',
        })
        .collect();
    if escaped.len() <= MAX_ESCAPED_LEN {
        return escaped;
    }
    format!(
        "{}-{}",
        &escaped[..MAX_ESCAPED_LEN],
        base36(u64::from(js_hash(path).unsigned_abs()))
    )
}

/// `h = (h << 5) - h + code_unit` over the UTF-16 code units, wrapping at 32 bits like `h |= 0`.
fn js_hash(s: &str) -> i32 {
    s.encode_utf16().fold(0i32, |h, u| {
        h.wrapping_shl(5).wrapping_sub(h).wrapping_add(i32::from(u))
    })
}

/// `n.toString(36)`.
fn base36(mut n: u64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8_lossy(&out).into_owned()
}

/// `<skiff_home>/projects/<escaped cwd>`: where a workspace's sessions live.
pub fn project_dir(skiff_home: &Path, cwd: &Path) -> PathBuf {
    skiff_home
        .join("projects")
        .join(escape_project_path(&cwd.to_string_lossy()))
}

/// `<project dir>/<session id>.jsonl`.
pub fn session_path(skiff_home: &Path, cwd: &Path, session_id: &str) -> PathBuf {
    project_dir(skiff_home, cwd).join(format!("{session_id}.jsonl"))
}

/// `<project dir>/<session id>/tool-results`: where oversized tool results are saved whole.
pub fn tool_results_dir(skiff_home: &Path, cwd: &Path, session_id: &str) -> PathBuf {
    project_dir(skiff_home, cwd)
        .join(session_id)
        .join("tool-results")
}

/// Whether `id` can name a session file: 1 to 128 ASCII letters, digits, `-` or `_` (a UUID is
/// the normal case). Anything else could escape the project directory.
pub fn is_valid_session_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Create `dir` and its missing parents with mode 0700 (existing directories are left alone).
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// What every line of a session carries besides the message.
#[derive(Debug, Clone)]
pub struct TranscriptMeta {
    /// The session id (`sessionId`).
    pub session_id: String,
    /// The workspace (`cwd`).
    pub cwd: PathBuf,
    /// The checked-out branch (`gitBranch`), when known.
    pub git_branch: Option<String>,
    /// The writer's version (`version`); [`VERSION`] by default.
    pub version: String,
    /// Who started the session (`entrypoint`: `cli`, `sdk-cli`, or the Agent SDK's
    /// `CLAUDE_CODE_ENTRYPOINT`, e.g. `sdk-py`), when known.
    pub entrypoint: Option<String>,
    /// How the session was run (model, permission mode, tools, the workspace's commit, …):
    /// written once per run as a `system`/`skiff_session` line before its first message, so
    /// that `skiff replay` can run it the same way.
    pub settings: Option<Value>,
}

impl TranscriptMeta {
    /// Metadata for `session_id` in `cwd`, no branch, skiff's version.
    pub fn new(session_id: impl Into<String>, cwd: impl Into<PathBuf>) -> Self {
        Self {
            session_id: session_id.into(),
            cwd: cwd.into(),
            git_branch: None,
            version: VERSION.to_owned(),
            entrypoint: None,
            settings: None,
        }
    }
}

/// A [`SessionStore`] appending JSONL lines to a transcript file (see the module docs).
pub struct JsonlTranscript {
    path: PathBuf,
    meta: TranscriptMeta,
    cwd: String,
    state: Mutex<ChainState>,
    /// Set for a subagent's transcript (`agentId`, `isSidechain: true` on every line).
    agent_id: Option<String>,
}

/// The store's side: the `parentUuid` chain. The file itself belongs to the writer thread.
#[derive(Default)]
struct ChainState {
    /// `uuid` of the last line sent (the next line's `parentUuid`).
    parent: Option<String>,
    /// `uuid` of the last assistant line (`sourceToolAssistantUUID` of tool results).
    last_assistant: Option<String>,
    /// Messages to write before the first appended line (a forked session's history).
    initial: Vec<Message>,
    /// Whether this run's `skiff_session` line was written.
    settings_written: bool,
    /// The writer thread, started with the first line.
    writer: Option<Writer>,
}

impl std::fmt::Debug for JsonlTranscript {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonlTranscript")
            .field("path", &self.path)
            .field("session_id", &self.meta.session_id)
            .finish_non_exhaustive()
    }
}

impl JsonlTranscript {
    /// A transcript at `path` (usually [`session_path`]). Nothing is created until the first
    /// message; an existing file is appended to.
    pub fn new(path: impl Into<PathBuf>, meta: TranscriptMeta) -> Self {
        let cwd = meta.cwd.to_string_lossy().into_owned();
        Self {
            path: path.into(),
            meta,
            cwd,
            state: Mutex::new(ChainState::default()),
            agent_id: None,
        }
    }

    /// Where the transcript of subagent `agent_id` of this session goes, as Claude Code keeps
    /// them: `<session id>/subagents/agent-<agent id>.jsonl` beside this file.
    pub fn subagent_path(&self, agent_id: &str) -> PathBuf {
        self.path
            .with_extension("")
            .join("subagents")
            .join(format!("agent-{agent_id}.jsonl"))
    }

    /// Continue the `parentUuid` chain from this line (a resumed session's
    /// [`LoadedSession::leaf_uuid`]).
    pub fn continue_from(self, leaf_uuid: Option<String>) -> Self {
        self.lock().parent = leaf_uuid;
        self
    }

    /// Write these messages (a forked session's loaded history) as the file's first lines,
    /// just before the first appended message.
    pub fn with_initial_history(self, messages: Vec<Message>) -> Self {
        self.lock().initial = messages;
        self
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The session id written on every line.
    pub fn session_id(&self) -> &str {
        &self.meta.session_id
    }

    /// `uuid` of the last line written (or given to [`Self::continue_from`]).
    pub fn leaf_uuid(&self) -> Option<String> {
        self.lock().parent.clone()
    }

    /// Wait until every line so far is in the file and synced (lines are written by a
    /// thread of their own; dropping the store waits for it too).
    pub fn flush(&self) {
        if let Some(w) = &self.lock().writer {
            w.flush();
        }
    }

    fn lock(&self) -> MutexGuard<'_, ChainState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Hand one finished line to the writer thread (started on first use); it becomes the
    /// chain's newest line.
    fn send(&self, st: &mut ChainState, uuid: String, mut line: Vec<u8>) {
        line.push(b'\n');
        st.writer
            .get_or_insert_with(|| Writer::start(self.path.clone()))
            .line(line);
        st.parent = Some(uuid);
    }

    /// Serialize and send one message line. Returns its uuid.
    fn write_line(
        &self,
        st: &mut ChainState,
        kind: &str,
        message: MessageOut<'_>,
        extra: Extras<'_>,
    ) -> Option<String> {
        let uuid = new_uuid();
        let timestamp = now_iso();
        let line = Line {
            parent_uuid: st.parent.as_deref(),
            is_sidechain: self.agent_id.is_some(),
            agent_id: self.agent_id.as_deref(),
            kind,
            message,
            uuid: &uuid,
            timestamp: &timestamp,
            user_type: "external",
            cwd: &self.cwd,
            session_id: &self.meta.session_id,
            version: &self.meta.version,
            git_branch: self.meta.git_branch.as_deref(),
            entrypoint: (kind == "user")
                .then_some(self.meta.entrypoint.as_deref())
                .flatten(),
            tool_use_result: extra.tool_use_result,
            source_tool_assistant_uuid: extra.source_assistant,
        };
        let mut buf = Vec::with_capacity(1024);
        if let Err(e) = serde_json::to_writer(&mut buf, &line) {
            tracing::warn!(path = %self.path.display(), error = %e, "session transcript: cannot serialize a message");
            return None;
        }
        self.send(st, uuid.clone(), buf);
        Some(uuid)
    }

    /// Write this run's settings line (once) and the forked history waiting in `initial`, if
    /// any.
    fn write_initial(&self, st: &mut ChainState) {
        if !st.settings_written {
            st.settings_written = true;
            if let Some(settings) = &self.meta.settings {
                let fields = serde_json::json!({"parentUuid": st.parent, "settings": settings});
                self.write_system(st, SESSION_SUBTYPE, "Session settings", fields);
            }
        }
        if st.initial.is_empty() {
            return;
        }
        let initial = std::mem::take(&mut st.initial);
        self.write_messages(st, &initial);
    }

    /// Write whole history messages (without API metadata) as lines.
    fn write_messages(&self, st: &mut ChainState, messages: &[Message]) {
        for m in messages {
            match m.role {
                Role::User => {
                    let msg = UserOut {
                        role: "user",
                        content: UserContent::Whole(&m.content),
                    };
                    self.write_line(st, "user", MessageOut::User(msg), Extras::default());
                }
                Role::Assistant => {
                    let msg = AssistantOut {
                        kind: "message",
                        role: "assistant",
                        content: &m.content,
                    };
                    let msg = MessageOut::Plain(msg);
                    if let Some(uuid) = self.write_line(st, "assistant", msg, Extras::default()) {
                        st.last_assistant = Some(uuid);
                    }
                }
            }
        }
    }

    /// Record that the conversation was replaced (compaction, `/clear`): a `system` line
    /// with `subtype: "compact_boundary"` that starts a new chain (`parentUuid` null,
    /// `logicalParentUuid` = the previous line), followed by `messages` as the new chain. A
    /// later [`load_session`] then returns `messages` and what follows them, not the old
    /// history (which stays in the file above the boundary). Synced at once.
    pub fn record_compaction(&self, messages: &[Message]) {
        self.record_boundary(messages, Value::Null);
    }

    /// [`Self::record_compaction`] with `fields` added to the boundary line.
    fn record_boundary(&self, messages: &[Message], fields: Value) {
        let mut st = self.lock();
        self.write_initial(&mut st);
        // `messageCount`: how many lines after this one are the new history re-written (an
        // export tells them from what the session did next).
        let mut chain = serde_json::json!({
            "parentUuid": null,
            "logicalParentUuid": st.parent,
            "messageCount": messages.len(),
        });
        if let (Some(chain), Value::Object(fields)) = (chain.as_object_mut(), fields) {
            chain.extend(fields);
        }
        self.write_system(&mut st, "compact_boundary", "Conversation compacted", chain);
        st.last_assistant = None;
        self.write_messages(&mut st, messages);
        if let Some(w) = &st.writer {
            w.sync();
        }
    }

    /// Record a trim: a small `system` line with `subtype: "skiff_trim"` in the chain, saying
    /// that the first `replaced` messages of the conversation so far became `first`. A later
    /// [`load_session`] applies it at that point of the chain; nothing is rewritten.
    pub fn record_trim(&self, replaced: usize, first: &Message) {
        let mut st = self.lock();
        self.write_initial(&mut st);
        let fields = serde_json::json!({
            "parentUuid": st.parent,
            "replacedMessages": replaced,
            "firstMessage": first,
        });
        self.write_system(&mut st, TRIM_SUBTYPE, "Conversation trimmed", fields);
    }

    /// Send a `system` line of `subtype` with the common fields and `fields` (which include
    /// its `parentUuid`).
    fn write_system(&self, st: &mut ChainState, subtype: &str, content: &str, fields: Value) {
        let uuid = new_uuid();
        let mut line = serde_json::json!({
            "isSidechain": false,
            "type": "system",
            "subtype": subtype,
            "content": content,
            "isMeta": false,
            "level": "info",
            "uuid": uuid,
            "timestamp": now_iso(),
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.meta.session_id,
            "version": self.meta.version,
        });
        if let (Some(line), Value::Object(fields)) = (line.as_object_mut(), fields) {
            line.extend(fields);
        }
        self.send(st, uuid, line.to_string().into_bytes());
    }
}

impl SessionStore for JsonlTranscript {
    fn path(&self) -> Option<&Path> {
        Some(&self.path)
    }

    fn child(&self, agent_id: &str) -> Option<std::sync::Arc<dyn SessionStore>> {
        let path = self.subagent_path(agent_id);
        if let Some(dir) = path.parent()
            && let Err(e) = create_private_dir(dir)
        {
            tracing::warn!(error = %e, dir = %dir.display(), "cannot create the subagent transcript directory");
            return None;
        }
        let mut meta = self.meta.clone();
        meta.settings = None;
        let mut child = JsonlTranscript::new(path, meta);
        child.agent_id = Some(agent_id.to_owned());
        Some(std::sync::Arc::new(child))
    }

    fn append(&self, entry: SessionEntry<'_>) {
        let mut st = self.lock();
        self.write_initial(&mut st);
        match entry {
            SessionEntry::User {
                blocks,
                tool_use_results,
            } => {
                let msg = UserOut {
                    role: "user",
                    content: UserContent::of(blocks),
                };
                let results = blocks
                    .iter()
                    .filter(|b| matches!(b, ContentBlock::ToolResult(_)))
                    .count();
                let structured = structured_result(tool_use_results, results);
                let source = if results > 0 {
                    st.last_assistant.clone()
                } else {
                    None
                };
                let extra = Extras {
                    tool_use_result: structured.as_ref(),
                    source_assistant: source.as_deref(),
                };
                self.write_line(&mut st, "user", MessageOut::User(msg), extra);
            }
            SessionEntry::Assistant { message } => {
                if is_cut_tool_call(message) {
                    return;
                }
                let msg = MessageOut::Api(message);
                if let Some(uuid) = self.write_line(&mut st, "assistant", msg, Extras::default()) {
                    st.last_assistant = Some(uuid);
                }
            }
        }
    }

    fn turn_complete(&self) {
        if let Some(w) = &self.lock().writer {
            w.sync();
        }
    }

    /// A `{"type": "mode", "permissionMode": …}` line (as Claude Code records a mode change),
    /// outside the message chain, synced at once.
    fn mode_changed(&self, mode: &str) {
        if self.agent_id.is_some() {
            return;
        }
        let mut st = self.lock();
        self.write_initial(&mut st);
        let mut line = serde_json::json!({
            "type": "mode",
            "permissionMode": mode,
            "sessionId": self.meta.session_id,
            "timestamp": now_iso(),
        })
        .to_string()
        .into_bytes();
        line.push(b'\n');
        let writer = st
            .writer
            .get_or_insert_with(|| Writer::start(self.path.clone()));
        writer.line(line);
        writer.sync();
    }

    fn history_replaced(&self, history: &[Message]) {
        self.record_compaction(history);
    }

    /// A compaction: the boundary line carries Claude Code's `compactMetadata` and skiff's
    /// `summaryReply` (the summary call's reply, which `skiff sessions export --script` needs).
    fn history_compacted(&self, record: CompactRecord<'_>) {
        let fields = serde_json::json!({
            "compactMetadata": {"trigger": record.trigger, "preTokens": record.pre_tokens},
            "summaryReply": record.reply,
        });
        self.record_boundary(record.history, fields);
    }

    fn history_trimmed(&self, trim: TrimRecord<'_>) {
        self.record_trim(trim.replaced, trim.first);
    }
}

/// The permission mode a saved session was last in: its newest `mode` line, else the mode of
/// its newest prompt (`permissionMode` on user lines, as Claude Code writes them) or run
/// (`skiff_session`'s settings). `None` when the file says nothing (or cannot be read).
pub fn last_permission_mode(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut mode = None;
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let found = match v.get("type").and_then(Value::as_str) {
            Some("mode" | "user") => v.get("permissionMode"),
            Some("system") if v.get("subtype").and_then(Value::as_str) == Some(SESSION_SUBTYPE) => {
                v.get("settings").and_then(|s| s.get("permissionMode"))
            }
            _ => None,
        };
        if let Some(m) = found.and_then(Value::as_str) {
            mode = Some(m.to_owned());
        }
    }
    mode
}

/// The loop's own rule: a max_tokens reply whose tool call input was cut is retried, not kept.
pub(crate) fn is_cut_tool_call(message: &MessageResponse) -> bool {
    message.stop_reason == Some(StopReason::MaxTokens)
        && message
            .content
            .iter()
            .any(|b| matches!(b, ContentBlock::ToolUse(t) if !t.input.is_object()))
}

/// `toolUseResult`: the single structured result, or one element per tool_result when several.
fn structured_result(results: &[Option<Value>], tool_results: usize) -> Option<Value> {
    if results.iter().all(Option::is_none) {
        return None;
    }
    if tool_results <= 1 && results.len() == 1 {
        return results[0].clone();
    }
    Some(Value::Array(
        results
            .iter()
            .map(|r| r.clone().unwrap_or(Value::Null))
            .collect(),
    ))
}

#[derive(Default, Clone, Copy)]
struct Extras<'a> {
    tool_use_result: Option<&'a Value>,
    source_assistant: Option<&'a str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Line<'a> {
    parent_uuid: Option<&'a str>,
    is_sidechain: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent_id: Option<&'a str>,
    #[serde(rename = "type")]
    kind: &'a str,
    message: MessageOut<'a>,
    uuid: &'a str,
    timestamp: &'a str,
    user_type: &'a str,
    cwd: &'a str,
    session_id: &'a str,
    version: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    git_branch: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    entrypoint: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_use_result: Option<&'a Value>,
    #[serde(
        rename = "sourceToolAssistantUUID",
        skip_serializing_if = "Option::is_none"
    )]
    source_tool_assistant_uuid: Option<&'a str>,
}

#[derive(Serialize)]
struct UserOut<'a> {
    role: &'a str,
    content: UserContent<'a>,
}

/// A user line's `content`, borrowed: as the conversation stores it, one plain text block is a
/// string.
#[derive(Serialize)]
#[serde(untagged)]
enum UserContent<'a> {
    Text(&'a str),
    Blocks(&'a [ContentBlock]),
    Whole(&'a skiff_protocol::MessageContent),
}

impl<'a> UserContent<'a> {
    fn of(blocks: &'a [ContentBlock]) -> Self {
        match blocks {
            [ContentBlock::Text(t)] if t.cache_control.is_none() => Self::Text(&t.text),
            _ => Self::Blocks(blocks),
        }
    }
}

/// An assistant message without the API's metadata (forked history).
#[derive(Serialize)]
struct AssistantOut<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    role: &'a str,
    content: &'a skiff_protocol::MessageContent,
}

/// A line's `message`.
#[derive(Serialize)]
#[serde(untagged)]
enum MessageOut<'a> {
    User(UserOut<'a>),
    Api(&'a MessageResponse),
    Plain(AssistantOut<'a>),
}

#[cfg(test)]
mod tests;
