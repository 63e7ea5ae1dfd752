//! Trimming (the seeds' MaxConversationMessages): drop the oldest messages from the front at a
//! boundary that keeps the history valid for the API.
//!
//! A boundary is a message the kept part may start at: a user message without tool_result
//! blocks (a real prompt), or an assistant message (then a short user note is put in front so
//! the history still starts with the user). Every tool_result after a boundary answers a
//! tool_use after it, so a pair is never split. The new first message says that earlier
//! messages were dropped, and carries the memory reminder again when the dropped part had it.

use skiff_protocol::{ContentBlock, Message, MessageContent, Role};

use crate::memory::is_memory_block;

/// The limits a trim must bring the history within.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TrimLimits {
    /// At most this many messages.
    pub max_messages: Option<usize>,
    /// At most this many input tokens for the whole request.
    pub max_tokens: Option<u64>,
}

/// What a trim did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrimOutcome {
    /// Messages dropped from the front.
    pub dropped: usize,
    /// Messages of the old history the new first message stands for: `dropped`, plus the
    /// first kept message when the cut fell on a prompt (it was merged into the new first one).
    pub replaced: usize,
    /// Messages after the trim (the note message included).
    pub messages_after: usize,
    /// Estimated input tokens after the trim.
    pub tokens_after: u64,
    /// Whether the limits are met (false: even the shortest valid history exceeds them, and
    /// that shortest history was kept).
    pub within_limits: bool,
}

/// The note put first in a trimmed history.
pub fn trimmed_note(dropped: usize) -> String {
    format!(
        "[Earlier conversation trimmed: the {dropped} oldest messages were dropped to stay \
within the context limits.]"
    )
}

fn is_boundary(m: &Message) -> bool {
    match (&m.role, &m.content) {
        (Role::Assistant, _) => true,
        (Role::User, MessageContent::Text(_)) => true,
        (Role::User, MessageContent::Blocks(b)) => {
            !b.iter().any(|b| matches!(b, ContentBlock::ToolResult(_)))
        }
    }
}

/// Trim `history` to `limits`, dropping as few messages as possible. `cost` gives a message's
/// tokens, `fixed` the tokens of the system prompt and tools, `memory` the configured memory
/// text. Returns the new history, or `None` when nothing needs to (or can) be dropped.
pub fn trim(
    history: &[Message],
    limits: TrimLimits,
    cost: impl Fn(&Message) -> u64,
    fixed: u64,
    memory: Option<&str>,
) -> Option<(Vec<Message>, TrimOutcome)> {
    let len = history.len();
    let costs: Vec<u64> = history.iter().map(&cost).collect();
    let total = fixed + costs.iter().sum::<u64>();
    let fits = |count: usize, tokens: u64| {
        limits.max_messages.is_none_or(|m| count <= m)
            && limits.max_tokens.is_none_or(|t| tokens <= t)
    };
    if fits(len, total) {
        return None;
    }
    // The memory reminder of the first message moves to the new first message.
    let memory_text: Option<String> = history
        .first()
        .and_then(|m| m.content.to_blocks().into_iter().next())
        .filter(|b| is_memory_block(b, memory))
        .map(|b| match (memory, b) {
            (Some(m), _) => m.to_owned(),
            (None, ContentBlock::Text(t)) => t.text,
            (None, _) => String::new(),
        });
    let front_extra = cost(&Message::user_text(format!(
        "{}{}",
        memory_text.as_deref().unwrap_or(""),
        trimmed_note(len)
    )));
    let mut suffix = vec![0u64; len + 1];
    for i in (0..len).rev() {
        suffix[i] = suffix[i + 1] + costs[i];
    }
    let boundaries: Vec<usize> = (1..len).filter(|&i| is_boundary(&history[i])).collect();
    let shape = |i: usize| {
        let synthetic = history[i].role == Role::Assistant;
        let count = len - i + usize::from(synthetic);
        let tokens = fixed + suffix[i] + front_extra;
        (count, tokens)
    };
    let (cut, within_limits) = match boundaries.iter().find(|&&i| {
        let (c, t) = shape(i);
        fits(c, t)
    }) {
        Some(&i) => (i, true),
        None => (*boundaries.last()?, false),
    };

    let mut front: Vec<ContentBlock> = Vec::new();
    if let Some(m) = memory_text.filter(|m| !m.is_empty()) {
        front.push(ContentBlock::text(m));
    }
    front.push(ContentBlock::text(trimmed_note(cut)));
    let mut out = Vec::with_capacity(len - cut + 1);
    let replaced = if history[cut].role == Role::User {
        front.extend(history[cut].content.to_blocks());
        out.push(Message::blocks(Role::User, front));
        out.extend_from_slice(&history[cut + 1..]);
        cut + 1
    } else {
        out.push(Message::blocks(Role::User, front));
        out.extend_from_slice(&history[cut..]);
        cut
    };
    let tokens_after = fixed + out.iter().map(&cost).sum::<u64>();
    let outcome = TrimOutcome {
        dropped: cut,
        replaced,
        messages_after: out.len(),
        tokens_after,
        within_limits,
    };
    Some((out, outcome))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use skiff_protocol::{ToolResultBlock, ToolUseBlock, validate_history};

    fn call(id: &str) -> Message {
        Message::blocks(
            Role::Assistant,
            vec![ContentBlock::ToolUse(ToolUseBlock {
                id: id.into(),
                name: "Read".into(),
                input: json!({}),
                cache_control: None,
            })],
        )
    }
    fn result(id: &str) -> Message {
        Message::blocks(
            Role::User,
            vec![ContentBlock::ToolResult(ToolResultBlock::text(
                id, "x", false,
            ))],
        )
    }
    fn session(prompts: usize, pairs: usize) -> Vec<Message> {
        let mut h = Vec::new();
        for p in 0..prompts {
            h.push(Message::user_text(format!("prompt {p}")));
            for i in 0..pairs {
                h.push(call(&format!("t{p}_{i}")));
                h.push(result(&format!("t{p}_{i}")));
            }
            h.push(Message::blocks(
                Role::Assistant,
                vec![ContentBlock::text("done")],
            ));
        }
        h
    }

    #[test]
    fn every_message_limit_gives_a_valid_history() {
        let h = session(3, 3); // 3 × 8 = 24 messages
        for max in 0..30 {
            let limits = TrimLimits {
                max_messages: Some(max),
                max_tokens: None,
            };
            match trim(&h, limits, |_| 10, 0, None) {
                None => assert!(max >= h.len()),
                Some((out, o)) => {
                    validate_history(&out).unwrap();
                    // The new first message stands for `replaced` old ones; the rest are kept.
                    assert_eq!(&out[1..], &h[o.replaced..]);
                    assert_eq!(o.messages_after, out.len());
                    assert_eq!(o.within_limits, out.len() <= max, "max {max}");
                    assert!(
                        out[0]
                            .content
                            .text()
                            .contains("Earlier conversation trimmed")
                    );
                }
            }
        }
    }

    #[test]
    fn token_limit_drops_the_fewest_messages() {
        let h = session(1, 10); // 22 messages of 100 tokens
        let limits = TrimLimits {
            max_messages: None,
            max_tokens: Some(1_000),
        };
        let (out, o) = trim(&h, limits, |_| 100, 0, None).unwrap();
        validate_history(&out).unwrap();
        assert!(o.within_limits);
        assert!(o.tokens_after <= 1_000);
        // The note message + 9 kept: one more kept message would pass the limit.
        assert_eq!(out.len(), 10);
        assert_eq!(out[1].role, Role::Assistant);
    }

    #[test]
    fn memory_moves_to_the_new_first_message() {
        let memory = "<system-reminder>\nCodebase and user instructions are shown below. M\n</system-reminder>";
        let mut h = session(2, 2);
        h[0] = Message::blocks(
            Role::User,
            vec![ContentBlock::text(memory), ContentBlock::text("prompt 0")],
        );
        let limits = TrimLimits {
            max_messages: Some(6),
            max_tokens: None,
        };
        let (out, _) = trim(&h, limits, |_| 1, 0, Some(memory)).unwrap();
        validate_history(&out).unwrap();
        let first = out[0].content.to_blocks();
        assert_eq!(first[0], ContentBlock::text(memory));
        // The boundary was the second prompt: it is kept after the note.
        assert_eq!(first.last(), Some(&ContentBlock::text("prompt 1")));
    }
}
