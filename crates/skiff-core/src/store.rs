//! The session-store seam: [`crate::Conversation`] reports every complete message to a
//! [`SessionStore`] the moment it is added, every wholesale replacement (compaction, `/clear`)
//! and every trim, and marks turn boundaries (where a store should make its writes durable).

use serde_json::Value;
use skiff_protocol::{ContentBlock, Message, MessageResponse};

/// One complete piece of the conversation.
#[derive(Debug, Clone, Copy)]
pub enum SessionEntry<'a> {
    /// User content appended to the history: a prompt (with memory or hook context), tool
    /// results (with each tool's structured result, same order), or a continuation prompt.
    User {
        /// The blocks appended.
        blocks: &'a [ContentBlock],
        /// Structured tool results (`toolUseResult`), one per tool_result block; empty otherwise.
        tool_use_results: &'a [Option<Value>],
    },
    /// A complete assistant message as the API returned it (final stop_reason and usage).
    Assistant {
        /// The message.
        message: &'a MessageResponse,
    },
}

/// The oldest messages were dropped: the first `replaced` messages of the history became
/// `first` (a note saying so, the memory reminder, and the first kept prompt when the cut fell
/// on one). `history` is the whole new history.
#[derive(Debug, Clone, Copy)]
pub struct TrimRecord<'a> {
    /// How many messages at the front were replaced by `first`.
    pub replaced: usize,
    /// The new first message.
    pub first: &'a Message,
    /// The history after the trim (`first` followed by the kept messages).
    pub history: &'a [Message],
}

/// What a compaction replaced the history with, and how (see
/// [`SessionStore::history_compacted`]).
#[derive(Debug, Clone, Copy)]
pub struct CompactRecord<'a> {
    /// `auto` or `manual`.
    pub trigger: &'a str,
    /// The context's size in tokens before.
    pub pre_tokens: u64,
    /// The summary call's complete reply (what a replay of the session must answer with).
    pub reply: &'a skiff_protocol::MessageResponse,
    /// The new history.
    pub history: &'a [Message],
}

/// Where a session's messages go (a JSONL transcript, memory, or nothing).
pub trait SessionStore: Send + Sync {
    /// A complete message was added to the history.
    fn append(&self, entry: SessionEntry<'_>);
    /// A turn ended (result emitted): make what was appended durable.
    fn turn_complete(&self) {}
    /// The history was replaced as a whole (compaction, `/clear`): later loads must start from
    /// `history` instead of replaying what came before.
    fn history_replaced(&self, _history: &[Message]) {}
    /// The history was replaced by a compaction's summary. Stores that can keep how it came
    /// about should; the default records it like [`Self::history_replaced`].
    fn history_compacted(&self, record: CompactRecord<'_>) {
        self.history_replaced(record.history);
    }
    /// The oldest messages were trimmed. Stores that can record this compactly (a marker)
    /// should; the default records the whole new history like [`Self::history_replaced`].
    fn history_trimmed(&self, trim: TrimRecord<'_>) {
        self.history_replaced(trim.history);
    }
    /// The session's permission mode changed (a client's `set_mode`, an approved plan): stores
    /// that can should record it, so that a reloaded session comes back in it.
    fn mode_changed(&self, _mode: &str) {}
    /// The file the session is saved in, if any (hooks get it as `transcript_path`).
    fn path(&self) -> Option<&std::path::Path> {
        None
    }
    /// A store for the subagent `agent_id` of this session (its own transcript beside this
    /// one), if this store keeps them.
    fn child(&self, _agent_id: &str) -> Option<std::sync::Arc<dyn SessionStore>> {
        None
    }
}

/// Keeps nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoSession;

impl SessionStore for NoSession {
    fn append(&self, _: SessionEntry<'_>) {}
}
