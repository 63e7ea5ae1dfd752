//! What a session tells its client ([`Event`]) and what the client answers to its questions
//! ([`Request`] → [`Answer`], keyed by [`RequestId`]). Plain data; no I/O.

use std::fmt;

use serde_json::Value;
use skiff_protocol::sdk::SdkMessage;
use skiff_protocol::{ContentBlock, StreamEvent};

use skiff_protocol::Usage;

/// One thing the session reports, in order.
// Frames and deltas dominate the stream and are about the same size; boxing them would add an
// allocation per event for the rare small variants' sake.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Event {
    /// A stream-json frame (`system`, `assistant`, `user`, `stream_event`, `tool_progress`,
    /// `result`). Every user message sent to the session ends with exactly one `result` frame.
    Frame(SdkMessage),
    /// A raw API stream event of the answer being streamed, without the stream-json envelope
    /// (sent instead of `stream_event` frames when [`crate::DeltaMode::Raw`] is configured).
    Delta(StreamEvent),
    /// The session asks its client something; answer with [`crate::Op::Reply`] and the same id.
    Request(Request),
    /// A pending request no longer needs an answer (the turn was interrupted); an answer sent
    /// anyway is ignored.
    RequestCancelled(RequestId),
    /// The session started working on a user message (or a compaction).
    Running,
    /// The session finished its work and nothing is queued.
    Idle,
    /// A [`crate::Op::Compact`] finished (the `compact_boundary` frame came before on success).
    Compacted(Result<CompactReport, CompactError>),
    /// The session changed its own permission mode (an approved plan left plan mode); a mode
    /// set by the client is not reported back.
    ModeChanged(crate::PermissionMode),
    /// Output of a running call (a Bash command's, as it comes), when
    /// [`crate::AgentConfig::tool_output`] is on; the call's result follows as usual.
    ToolOutput {
        /// The call.
        tool_use_id: String,
        /// The next chunk of its output.
        text: String,
    },
}

impl Event {
    /// The stream-json frame, if this event is one.
    pub fn frame(&self) -> Option<&SdkMessage> {
        match self {
            Self::Frame(f) => Some(f),
            _ => None,
        }
    }

    /// The stream-json frame, if this event is one.
    pub fn into_frame(self) -> Option<SdkMessage> {
        match self {
            Self::Frame(f) => Some(f),
            _ => None,
        }
    }
}

/// Identifies one request of a session (unique within it).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestId(pub String);

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A question to the client.
#[derive(Debug, Clone)]
pub struct Request {
    /// Answer with this id.
    pub id: RequestId,
    /// What is asked.
    pub kind: RequestKind,
}

/// What a request asks.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum RequestKind {
    /// May this tool call run? Answer with [`Answer::Approval`].
    Approval(ApprovalRequest),
    /// A callback registered by the client (an SDK hook): `input` is the hook's input JSON.
    /// Answer with [`Answer::Json`].
    Callback {
        /// The client's callback id.
        callback_id: String,
        /// The input JSON.
        input: Value,
        /// The tool call it concerns, if any.
        tool_use_id: Option<String>,
    },
}

/// A tool call waiting for the user's consent.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRequest {
    /// The tool.
    pub tool_name: String,
    /// Its input (after any hook changed it).
    pub input: Value,
    /// The call's id.
    pub tool_use_id: String,
    /// Why consent is needed (a rule, the mode, a hook).
    pub reason: String,
}

/// The client's answer to a [`Request`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Answer {
    /// The answer to an approval.
    Approval(ApprovalAnswer),
    /// The answer to a callback (any JSON; `{}` means no opinion).
    Json(Value),
}

/// Whether a tool call may run.
#[derive(Debug, Clone, PartialEq)]
pub enum ApprovalAnswer {
    /// Run it, with this input instead of the model's when given.
    Allow {
        /// Replacement input.
        updated_input: Option<Value>,
    },
    /// Do not run it; `message` goes to the model as the call's error result.
    Deny {
        /// Why (for the model).
        message: String,
        /// Stop the whole turn too.
        interrupt: bool,
    },
}

impl ApprovalAnswer {
    /// Allow unchanged.
    pub fn allow() -> Self {
        Self::Allow {
            updated_input: None,
        }
    }

    /// Deny with a message, without interrupting the turn.
    pub fn deny(message: impl Into<String>) -> Self {
        Self::Deny {
            message: message.into(),
            interrupt: false,
        }
    }
}

/// Why a compaction happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactTrigger {
    /// The context passed the threshold before a model call.
    Auto,
    /// The user asked for it (`/compact`).
    Manual,
}

impl CompactTrigger {
    /// `auto` or `manual`, as in `compact_boundary` and the PreCompact hook input.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Manual => "manual",
        }
    }
}

impl fmt::Display for CompactTrigger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a successful compaction did.
#[derive(Debug, Clone)]
pub struct CompactReport {
    /// Auto or manual.
    pub trigger: CompactTrigger,
    /// Context tokens before (reported + estimated).
    pub pre_tokens: u64,
    /// Estimated context tokens after.
    pub post_tokens: u64,
    /// Messages before.
    pub messages_before: usize,
    /// Messages after.
    pub messages_after: usize,
    /// How many messages the summary replaced.
    pub summarized_messages: usize,
    /// The summary text.
    pub summary: String,
    /// Usage of the summary call (already added to the session's costs).
    pub usage: Usage,
    /// Events emitted while compacting (the `compact_boundary` frame, notices). Filled by
    /// `Session::compact`; empty for automatic compaction, whose events go to the run's stream.
    pub events: Vec<SdkMessage>,
}

/// Why a compaction did not happen. The history is unchanged in every case.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompactError {
    /// The history is too short: nothing lies between the first message and the recent ones.
    #[error("nothing to compact: the conversation is too short")]
    NothingToCompact,
    /// A PreCompact hook blocked it.
    #[error("a PreCompact hook blocked compaction: {0}")]
    Blocked(String),
    /// The summary call was cancelled.
    #[error("compaction was cancelled")]
    Cancelled,
    /// The summary call failed.
    #[error("the summary request failed: {0}")]
    Failed(String),
    /// The model answered with an empty summary.
    #[error("the model returned an empty summary")]
    EmptySummary,
    /// The compacted history would not be valid for the API (a bug; never swapped in).
    #[error("the compacted history is invalid: {0}")]
    Invalid(String),
}

/// How the raw API stream events of an answer reach the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeltaMode {
    /// Not at all (stream-json without `--include-partial-messages`, json): no per-delta work.
    Off,
    /// As bare [`Event::Delta`]s without an envelope or uuid (renderers that print the answer
    /// as it streams).
    Raw,
    /// As `stream_event` frames, each with its own uuid (`--include-partial-messages`).
    #[default]
    Frames,
}

/// What a user sends: text, or content blocks (text, images, documents).
#[derive(Debug, Clone, PartialEq)]
pub enum UserInput {
    /// Plain text.
    Text(String),
    /// API content blocks.
    Blocks(Vec<ContentBlock>),
}

impl UserInput {
    /// The text of the input (text blocks joined by newlines), for hooks and logs.
    pub fn text(&self) -> String {
        match self {
            Self::Text(t) => t.clone(),
            Self::Blocks(b) => b
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::Text(t) => Some(t.text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }

    /// The content blocks.
    pub fn into_blocks(self) -> Vec<ContentBlock> {
        match self {
            Self::Text(t) => vec![ContentBlock::text(t)],
            Self::Blocks(b) => b,
        }
    }
}

impl From<String> for UserInput {
    fn from(t: String) -> Self {
        Self::Text(t)
    }
}

impl From<&str> for UserInput {
    fn from(t: &str) -> Self {
        Self::Text(t.to_owned())
    }
}

impl From<Vec<ContentBlock>> for UserInput {
    fn from(b: Vec<ContentBlock>) -> Self {
        Self::Blocks(b)
    }
}
