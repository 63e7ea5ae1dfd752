//! The session seam: the loop reports every complete message to a [`SessionStore`] the moment
//! it is complete, and marks turn boundaries (where a store should make its writes durable).

use serde_json::Value;
use skiff_protocol::{ContentBlock, MessageResponse};

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

/// Where a session's messages go (a JSONL transcript, memory, or nothing).
pub trait SessionStore: Send + Sync {
    /// A complete message was added to the history.
    fn append(&self, entry: SessionEntry<'_>);
    /// A turn ended (result emitted): make what was appended durable.
    fn turn_complete(&self) {}
    /// The history was replaced as a whole (compaction, trimming, `/clear`): later loads must
    /// start from `history` instead of replaying what came before.
    fn history_replaced(&self, _history: &[skiff_protocol::Message]) {}
}

/// Keeps nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoSession;

impl SessionStore for NoSession {
    fn append(&self, _: SessionEntry<'_>) {}
}
