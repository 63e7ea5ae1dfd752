//! [`Conversation`]: the one owner of the history. Every change goes through it — user content,
//! assistant replies, wholesale replacement (compaction, `/clear`), trimming, repair — so the
//! history and the session store never disagree, and the history is always valid for the API
//! when a request is built ([`Conversation::repair`]). It also keeps the token bookkeeping: the
//! input tokens the API reported for the last call and how much of the history they covered.

use std::sync::Arc;

use serde_json::Value;
use skiff_protocol::{
    ContentBlock, Message, MessageContent, MessageEncoding, MessageResponse, MessagesJson, Role,
    ToolResultBlock,
};

use crate::store::{SessionEntry, SessionStore, TrimRecord};
use crate::tokens;

/// Text of the result given to calls that never ran or were cut short by an interrupt.
pub const INTERRUPTED: &str = "[Request interrupted by user for tool use]";

/// Text of an assistant message that had no content (the API rejects empty content and
/// empty text blocks), as Claude Code writes it.
pub const NO_CONTENT: &str = "(no content)";

/// The history of one session, and where it is recorded.
pub struct Conversation {
    messages: Vec<Message>,
    store: Arc<dyn SessionStore>,
    /// Input tokens the API reported for the last call, and the history length it covered.
    last_input: Option<(u64, usize)>,
    /// The memory reminder went with a prompt already (or the history came from a resume).
    memory_sent: bool,
    /// All messages but the last, serialized, for the next request (extended lazily).
    json: MessagesJson,
    /// Estimated tokens of the first `.0` messages, all but the last (extended lazily, reset
    /// with `json`: only the last message changes in place).
    estimated: std::sync::Mutex<(usize, u64)>,
    /// The model's window as a server's context-size error revealed it (goes under any other).
    window_cap: Option<u64>,
}

impl std::fmt::Debug for Conversation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conversation")
            .field("messages", &self.messages.len())
            .field("last_input", &self.last_input)
            .finish_non_exhaustive()
    }
}

impl Conversation {
    /// An empty conversation recorded in `store`.
    pub fn new(store: Arc<dyn SessionStore>) -> Self {
        Self {
            messages: Vec::new(),
            store,
            last_input: None,
            memory_sent: false,
            json: MessagesJson::new(),
            estimated: std::sync::Mutex::new((0, 0)),
            window_cap: None,
        }
    }

    /// Start from an earlier conversation (a resume; it is already in the store, so nothing is
    /// written). The memory reminder is not sent again. Unanswered tool calls at its end are
    /// answered (as interrupted) by [`Conversation::repair`] before the first request.
    pub fn with_history(store: Arc<dyn SessionStore>, history: Vec<Message>) -> Self {
        let mut c = Self::new(store);
        c.memory_sent = !history.is_empty();
        c.messages = history;
        c
    }

    /// The messages, oldest first.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// Number of messages.
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    /// Whether there are no messages.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// Whether the memory reminder must go with the next prompt; marks it as sent.
    pub fn take_memory_turn(&mut self) -> bool {
        !std::mem::replace(&mut self.memory_sent, true)
    }

    /// Record a change of the session's permission mode in the store.
    pub fn note_mode(&self, mode: &str) {
        self.store.mode_changed(mode);
    }

    /// Append user content (and record it). Merges into a trailing user message so roles keep
    /// alternating (after an API error or an interrupt the last message is the user's).
    /// `tool_use_results` are the structured results of the tool_result blocks, in order.
    pub fn push_user(&mut self, blocks: Vec<ContentBlock>, tool_use_results: &[Option<Value>]) {
        if blocks.is_empty() {
            return;
        }
        self.store.append(SessionEntry::User {
            blocks: &blocks,
            tool_use_results,
        });
        push_user_blocks(&mut self.messages, blocks);
    }

    /// Record the input tokens the API reported for a request built from the whole current
    /// history (the reply itself is not in the history yet).
    pub fn note_request_usage(&mut self, input_tokens: u64) {
        self.last_input = Some((input_tokens, self.messages.len()));
    }

    /// The window a server's context-size error revealed, if any.
    pub fn window_cap(&self) -> Option<u64> {
        self.window_cap
    }

    /// Remember the window a server's context-size error revealed (the smallest one said).
    pub fn cap_window(&mut self, window: u64) {
        self.window_cap = Some(self.window_cap.map_or(window, |w| w.min(window)));
    }

    /// Append a complete assistant reply (and record it with its API metadata). With `merge`,
    /// its blocks continue the trailing assistant message (a `pause_turn` continuation).
    pub fn push_reply(&mut self, message: MessageResponse, merge: bool) {
        self.store
            .append(SessionEntry::Assistant { message: &message });
        let mut content = message.content;
        if merge
            && let Some(last) = self
                .messages
                .last_mut()
                .filter(|m| m.role == Role::Assistant)
        {
            let mut merged = take_blocks(&mut last.content);
            merged.append(&mut content);
            last.content = MessageContent::Blocks(merged);
            return;
        }
        if content.is_empty() {
            // The API rejects empty content and empty text blocks; keep the turn with a note.
            content.push(ContentBlock::text(NO_CONTENT));
        }
        self.messages
            .push(Message::blocks(Role::Assistant, content));
    }

    /// The messages before the last one, serialized in `encoding` (the provider's
    /// [`skiff_llm::Provider::history_encoding`]) for the next request: only what was added
    /// since the previous request is serialized now. `None` if serialization failed (the
    /// request then serializes everything itself).
    pub fn request_prefix(&mut self, encoding: MessageEncoding) -> Option<&MessagesJson> {
        let upto = self.messages.len().saturating_sub(1);
        if self.json.encoding() != encoding {
            self.json = MessagesJson::with_encoding(encoding);
        } else if self.json.count() > upto {
            self.json.clear();
        }
        let start = self.json.count();
        if let Err(e) = self.json.extend(&self.messages[start..upto]) {
            tracing::warn!(error = %e, "cannot serialize the history; sending it whole");
            self.json.clear();
            return None;
        }
        Some(&self.json)
    }

    /// Replace the whole history (compaction, `/clear`) and record that.
    pub fn replace(&mut self, history: Vec<Message>) {
        self.messages = history;
        self.last_input = None;
        self.json.clear();
        self.forget_estimate();
        self.store.history_replaced(&self.messages);
    }

    /// Replace the whole history by a compaction's result and record that with the summary
    /// call's reply.
    pub fn replace_compacted(
        &mut self,
        history: Vec<Message>,
        trigger: &str,
        pre_tokens: u64,
        reply: &skiff_protocol::MessageResponse,
    ) {
        self.messages = history;
        self.last_input = None;
        self.json.clear();
        self.forget_estimate();
        self.store.history_compacted(crate::store::CompactRecord {
            trigger,
            pre_tokens,
            reply,
            history: &self.messages,
        });
    }

    /// Replace the history by a trimmed one whose first message stands for the first
    /// `replaced` messages of the current one, and record the trim.
    pub fn trim_to(&mut self, history: Vec<Message>, replaced: usize) {
        self.messages = history;
        self.last_input = None;
        self.json.clear();
        self.forget_estimate();
        if let Some(first) = self.messages.first() {
            self.store.history_trimmed(TrimRecord {
                replaced,
                first,
                history: &self.messages,
            });
        }
    }

    /// Start a new conversation: no messages, and the memory goes with the next prompt again.
    pub fn clear(&mut self) {
        self.replace(Vec::new());
        self.memory_sent = false;
    }

    /// Answer every unanswered tool call of the last assistant message with an "interrupted"
    /// error result (recorded like any other result), so the history is valid for the API.
    /// Returns how many calls were answered this way. Only the tail can be unanswered, so
    /// this costs O(1) per call on a long history.
    pub fn repair(&mut self) -> usize {
        let len = self.messages.len();
        let Some(ai) = (0..len)
            .rev()
            .take(2)
            .find(|&i| self.messages[i].role == Role::Assistant)
        else {
            return 0;
        };
        let calls: Vec<String> = match &self.messages[ai].content {
            MessageContent::Blocks(b) => b
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::ToolUse(t) => Some(t.id.clone()),
                    _ => None,
                })
                .collect(),
            MessageContent::Text(_) => Vec::new(),
        };
        if calls.is_empty() {
            return 0;
        }
        let answered: Vec<&str> = self.messages[ai + 1..]
            .iter()
            .flat_map(|m| match &m.content {
                MessageContent::Blocks(b) => b.as_slice(),
                MessageContent::Text(_) => &[],
            })
            .filter_map(|b| match b {
                ContentBlock::ToolResult(r) => Some(r.tool_use_id.as_str()),
                _ => None,
            })
            .collect();
        let missing: Vec<String> = calls
            .iter()
            .filter(|id| !answered.contains(&id.as_str()))
            .cloned()
            .collect();
        if missing.is_empty() {
            return 0;
        }
        tracing::info!(calls = ?missing, "answering unanswered tool calls as interrupted");
        let results: Vec<ContentBlock> = missing
            .iter()
            .map(|id| ContentBlock::ToolResult(ToolResultBlock::text(id, INTERRUPTED, true)))
            .collect();
        let structured = vec![Some(Value::String(format!("Error: {INTERRUPTED}"))); results.len()];
        self.store.append(SessionEntry::User {
            blocks: &results,
            tool_use_results: &structured,
        });
        if ai + 1 == len {
            push_user_blocks(&mut self.messages, results);
        } else if let Some(last) = self.messages.last_mut() {
            // Results first, in call order, then the rest: the order a reload gives too.
            let mut existing = take_blocks(&mut last.content);
            let mut extra = results.into_iter();
            let mut ordered = Vec::with_capacity(existing.len() + missing.len());
            for id in &calls {
                let found = existing
                    .iter()
                    .position(|b| matches!(b, ContentBlock::ToolResult(r) if &r.tool_use_id == id));
                match found {
                    Some(i) => ordered.push(existing.remove(i)),
                    None => ordered.extend(extra.next()),
                }
            }
            existing.retain(|b| !matches!(b, ContentBlock::ToolResult(_)));
            ordered.extend(existing);
            last.content = MessageContent::Blocks(ordered);
        }
        missing.len()
    }

    /// Input tokens of the next request: the API-reported count of the last call plus an
    /// estimate of what was added since, or a full estimate (`fixed`: the system prompt and
    /// tools) when there is no usable reported count.
    pub fn next_request_tokens(&self, fixed: u64) -> u64 {
        match self.last_input {
            Some((reported, covered)) if covered <= self.messages.len() => {
                reported + tokens::estimate_messages(&self.messages[covered..])
            }
            _ => self.full_estimate(fixed),
        }
    }

    /// Heuristic estimate of the whole next request (`fixed` plus the whole history).
    pub fn full_estimate(&self, fixed: u64) -> u64 {
        fixed + self.estimate_messages()
    }

    /// [`tokens::estimate_messages`] of the whole history, in time proportional to what was
    /// added since the last call (asked after every model call: a long session must not pay
    /// for its whole history each turn).
    pub fn estimate_messages(&self) -> u64 {
        let upto = self.messages.len().saturating_sub(1);
        let mut cached = self
            .estimated
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if cached.0 > upto {
            *cached = (0, 0);
        }
        let (from, sum) = *cached;
        let sum = sum + tokens::estimate_messages(&self.messages[from..upto]);
        *cached = (upto, sum);
        sum + self.messages.get(upto).map_or(0, tokens::estimate_message)
    }

    /// The history was replaced: estimate it afresh.
    fn forget_estimate(&mut self) {
        *self
            .estimated
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = (0, 0);
    }

    /// How many API tokens one heuristic token is worth in this conversation: the last
    /// reported count divided by the estimate of what it covered (1.0 without a reported
    /// count). Converts the estimate of a message into its share of the reported total.
    pub fn calibration(&self, fixed: u64) -> f64 {
        match self.last_input {
            Some((reported, covered)) if covered <= self.messages.len() && reported > 0 => {
                let estimated = fixed + tokens::estimate_messages(&self.messages[..covered]);
                if estimated == 0 {
                    1.0
                } else {
                    reported as f64 / estimated as f64
                }
            }
            _ => 1.0,
        }
    }

    /// The transcript file, when the session is saved.
    pub fn transcript_path(&self) -> Option<&std::path::Path> {
        self.store.path()
    }

    /// A turn ended: let the store make it durable.
    pub fn turn_complete(&self) {
        self.store.turn_complete();
    }
}

/// The blocks of a message content, leaving it empty (no copy).
fn take_blocks(content: &mut MessageContent) -> Vec<ContentBlock> {
    match std::mem::replace(content, MessageContent::Blocks(Vec::new())) {
        MessageContent::Text(t) => vec![ContentBlock::text(t)],
        MessageContent::Blocks(b) => b,
    }
}

/// Append user blocks, merging into a trailing user message; one plain text block alone
/// becomes a string content.
fn push_user_blocks(messages: &mut Vec<Message>, mut blocks: Vec<ContentBlock>) {
    if let Some(last) = messages.last_mut().filter(|m| m.role == Role::User) {
        let mut merged = take_blocks(&mut last.content);
        merged.append(&mut blocks);
        last.content = MessageContent::Blocks(merged);
        return;
    }
    let content = if matches!(blocks.as_slice(), [ContentBlock::Text(t)] if t.cache_control.is_none())
    {
        match blocks.pop() {
            Some(ContentBlock::Text(t)) => MessageContent::Text(t.text),
            _ => MessageContent::Blocks(blocks),
        }
    } else {
        MessageContent::Blocks(blocks)
    };
    messages.push(Message {
        role: Role::User,
        content,
    });
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use std::sync::Mutex;

    use super::*;
    use serde_json::json;
    use skiff_protocol::{StopReason, ToolUseBlock, validate_history};

    /// Records what the conversation reports, as the loader would see it.
    #[derive(Default)]
    struct Recorder {
        entries: Mutex<Vec<(Role, Vec<ContentBlock>)>>,
    }

    impl SessionStore for Recorder {
        fn append(&self, entry: SessionEntry<'_>) {
            let e = match entry {
                SessionEntry::User { blocks, .. } => (Role::User, blocks.to_vec()),
                SessionEntry::Assistant { message } => (Role::Assistant, message.content.clone()),
            };
            self.entries.lock().unwrap().push(e);
        }
    }

    fn reply(blocks: Vec<ContentBlock>) -> MessageResponse {
        let mut m = MessageResponse::new("msg_1", "m");
        m.content = blocks;
        m.stop_reason = Some(StopReason::ToolUse);
        m
    }

    fn call(id: &str) -> ContentBlock {
        ContentBlock::ToolUse(ToolUseBlock {
            id: id.into(),
            name: "Bash".into(),
            input: json!({}),
            cache_control: None,
        })
    }

    /// The running estimate is the whole history's, whatever happened to it: appends, merges
    /// into the last message, repairs, a replaced (shorter or longer) history.
    #[test]
    fn the_running_estimate_is_the_whole_historys() {
        let mut c = Conversation::new(Arc::new(crate::store::NoSession));
        let whole = |c: &Conversation| tokens::estimate_messages(c.messages());
        assert_eq!(c.estimate_messages(), 0);
        c.push_user(vec![ContentBlock::text("go")], &[]);
        assert_eq!(c.estimate_messages(), whole(&c));
        for i in 0..20 {
            let id = format!("toolu_{i}");
            c.push_reply(reply(vec![call(&id)]), false);
            assert_eq!(c.estimate_messages(), whole(&c));
            // A `pause_turn` continuation merges into the last message.
            c.push_reply(reply(vec![ContentBlock::text("x".repeat(i * 50))]), true);
            assert_eq!(c.estimate_messages(), whole(&c));
            c.push_user(
                vec![ContentBlock::ToolResult(
                    skiff_protocol::ToolResultBlock::text(&id, "y".repeat(i * 100), false),
                )],
                &[],
            );
            assert_eq!(c.estimate_messages(), whole(&c));
            // More user content merges into the trailing user message.
            c.push_user(vec![ContentBlock::text("z".repeat(i * 30))], &[]);
            assert_eq!(c.estimate_messages(), whole(&c));
        }
        c.push_reply(reply(vec![call("toolu_last")]), false);
        assert_eq!(c.repair(), 1);
        assert_eq!(c.estimate_messages(), whole(&c));
        let long: Vec<Message> = c.messages().to_vec();
        let short = long[long.len() - 3..].to_vec();
        c.trim_to(short, long.len() - 3);
        assert_eq!(c.estimate_messages(), whole(&c));
        // Replaced by a longer, different history: nothing of the old estimate is kept.
        let mut longer = long.clone();
        longer.extend(long[1..].iter().cloned());
        c.replace(longer);
        assert_eq!(c.estimate_messages(), whole(&c));
        c.clear();
        assert_eq!(c.estimate_messages(), 0);
    }

    #[test]
    fn repair_answers_a_trailing_call_and_the_store_sees_the_same() {
        let rec = Arc::new(Recorder::default());
        let mut c = Conversation::new(rec.clone());
        c.push_user(vec![ContentBlock::text("go")], &[]);
        c.push_reply(
            reply(vec![ContentBlock::text("ok"), call("a"), call("b")]),
            false,
        );
        assert!(validate_history(c.messages()).is_err());
        assert_eq!(c.repair(), 2);
        validate_history(c.messages()).unwrap();
        assert_eq!(c.repair(), 0);
        let entries = rec.entries.lock().unwrap().clone();
        let reloaded = crate::transcript::repair_history(entries, &mut Vec::new());
        assert_eq!(reloaded, c.messages());
    }

    #[test]
    fn repair_completes_a_partly_answered_turn_in_call_order() {
        let rec = Arc::new(Recorder::default());
        let mut c = Conversation::new(rec.clone());
        c.push_user(vec![ContentBlock::text("go")], &[]);
        c.push_reply(reply(vec![call("a"), call("b"), call("c")]), false);
        c.push_user(
            vec![
                ContentBlock::ToolResult(ToolResultBlock::text("b", "done b", false)),
                ContentBlock::text("and a note"),
            ],
            &[None],
        );
        assert_eq!(c.repair(), 2);
        validate_history(c.messages()).unwrap();
        let blocks = c.messages()[2].content.to_blocks();
        let ids: Vec<String> = blocks
            .iter()
            .map(|b| match b {
                ContentBlock::ToolResult(r) => r.tool_use_id.clone(),
                ContentBlock::Text(t) => t.text.clone(),
                _ => String::new(),
            })
            .collect();
        assert_eq!(ids, ["a", "b", "c", "and a note"]);
        let entries = rec.entries.lock().unwrap().clone();
        let reloaded = crate::transcript::repair_history(entries, &mut Vec::new());
        assert_eq!(reloaded, c.messages());
    }

    #[test]
    fn user_content_merges_and_a_lone_text_is_a_string() {
        let mut c = Conversation::new(Arc::new(crate::store::NoSession));
        c.push_user(vec![ContentBlock::text("one")], &[]);
        assert_eq!(c.messages()[0].content, MessageContent::Text("one".into()));
        c.push_user(vec![ContentBlock::text("two")], &[]);
        assert_eq!(c.len(), 1);
        assert_eq!(c.messages()[0].content.to_blocks().len(), 2);
        c.push_reply(reply(vec![]), false);
        assert_eq!(
            c.messages()[1].content.to_blocks(),
            [ContentBlock::text(NO_CONTENT)]
        );
        c.push_reply(reply(vec![ContentBlock::text("more")]), true);
        assert_eq!(c.len(), 2);
        assert!(c.take_memory_turn());
        assert!(!c.take_memory_turn());
        c.clear();
        assert!(c.is_empty());
        assert!(c.take_memory_turn());
    }
}
