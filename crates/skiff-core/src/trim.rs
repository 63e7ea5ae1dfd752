//! Trimming (the seeds' MaxConversationMessages): drop older messages at a boundary that keeps
//! the history valid for the API — but never the first one: the session's first user message
//! is the task, and a model that loses it starts over every turn.
//!
//! A boundary is a message the kept part may start at: a user message without tool_result
//! blocks (a real prompt), or an assistant message. Every tool_result after a boundary answers a
//! tool_use after it, so a pair is never split. The new first message is the old first one (the
//! task, with the memory reminder and any compaction summary it carries), then a note that the
//! messages after it were dropped, then the boundary prompt when the cut fell on one. A first
//! message too large to keep whole within the limit is shortened in its middle.

use skiff_protocol::{ContentBlock, Message, MessageContent, Role};

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
    /// Messages dropped (after the first, which is kept).
    pub dropped: usize,
    /// Messages of the old history the new first message stands for: the first, the dropped
    /// ones, plus the first kept message when the cut fell on a prompt (it was merged in).
    pub replaced: usize,
    /// Messages after the trim.
    pub messages_after: usize,
    /// Estimated input tokens after the trim.
    pub tokens_after: u64,
    /// Whether the limits are met (false: even the shortest valid history exceeds them, and
    /// that shortest history was kept).
    pub within_limits: bool,
}

/// Start of the note put in a trimmed history's first message.
pub const TRIMMED_NOTE_START: &str = "[Earlier conversation trimmed";

/// The note put after the first message in a trimmed history.
pub fn trimmed_note(dropped: usize) -> String {
    format!(
        "{TRIMMED_NOTE_START}: the {dropped} messages after your task (above) were dropped to \
stay within the context limits. Carry on with the task from where the messages below stand.]"
    )
}

fn is_trim_note(b: &ContentBlock) -> bool {
    matches!(b, ContentBlock::Text(t) if t.text.starts_with(TRIMMED_NOTE_START))
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

/// Characters kept of a first message's text that is too large for the limit: at least this.
const MIN_KEPT_CHARS: usize = 2_000;

/// `blocks` with long texts shortened in the middle so that all of them hold about `budget`
/// characters.
fn shorten(blocks: Vec<ContentBlock>, budget: usize) -> Vec<ContentBlock> {
    let total: usize = blocks
        .iter()
        .map(|b| match b {
            ContentBlock::Text(t) => t.text.len(),
            _ => 0,
        })
        .sum();
    if total <= budget {
        return blocks;
    }
    blocks
        .into_iter()
        .map(|b| match b {
            ContentBlock::Text(t) if t.text.len() > MIN_KEPT_CHARS => {
                let keep = (t.text.len() * budget / total).max(MIN_KEPT_CHARS / 2);
                let chars: Vec<char> = t.text.chars().collect();
                if chars.len() <= keep {
                    return ContentBlock::Text(t);
                }
                let head: String = chars[..keep / 2].iter().collect();
                let tail: String = chars[chars.len() - keep / 2..].iter().collect();
                let cut = chars.len() - 2 * (keep / 2);
                ContentBlock::text(format!(
                    "{head}\n[… {cut} characters left out to fit the context window …]\n{tail}"
                ))
            }
            other => other,
        })
        .collect()
}

/// Trim `history` to `limits`, dropping as few messages as possible and never the first.
/// `cost` gives a message's tokens, `fixed` the tokens of the system prompt and tools. Returns
/// the new history, or `None` when nothing needs to (or can) be dropped.
pub fn trim(
    history: &[Message],
    limits: TrimLimits,
    cost: impl Fn(&Message) -> u64,
    fixed: u64,
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
    // The first message, without the note of an earlier trim; shortened when it alone would
    // take more than half of the token limit.
    let mut first: Vec<ContentBlock> = history
        .first()?
        .content
        .to_blocks()
        .into_iter()
        .filter(|b| !is_trim_note(b))
        .collect();
    if let Some(max) = limits.max_tokens {
        let half = (max / 2).saturating_sub(fixed);
        let first_cost = cost(&Message::blocks(Role::User, first.clone()));
        if first_cost > half {
            let bytes: usize = first
                .iter()
                .map(|b| match b {
                    ContentBlock::Text(t) => t.text.len(),
                    _ => 0,
                })
                .sum();
            let budget = (bytes as u64 * half / first_cost.max(1)) as usize;
            first = shorten(first, budget.max(MIN_KEPT_CHARS));
        }
    }
    let front_cost = cost(&Message::blocks(
        Role::User,
        first
            .iter()
            .cloned()
            .chain([ContentBlock::text(trimmed_note(len))])
            .collect(),
    ));
    let mut suffix = vec![0u64; len + 1];
    for i in (0..len).rev() {
        suffix[i] = suffix[i + 1] + costs[i];
    }
    // Cutting at 1 would drop nothing.
    let boundaries: Vec<usize> = (2..len).filter(|&i| is_boundary(&history[i])).collect();
    let shape = |i: usize| {
        let front_message = usize::from(history[i].role == Role::Assistant);
        let count = len - i + front_message;
        let tokens = fixed + suffix[i] + front_cost;
        (count, tokens)
    };
    let (cut, within_limits) = match boundaries.iter().find(|&&i| {
        let (c, t) = shape(i);
        fits(c, t)
    }) {
        Some(&i) => (i, true),
        None => (*boundaries.last()?, false),
    };

    let mut front = first;
    front.push(ContentBlock::text(trimmed_note(cut - 1)));
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
        dropped: cut - 1,
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
            match trim(&h, limits, |_| 10, 0) {
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
                    // The task is never dropped.
                    assert!(out[0].content.text().starts_with("prompt 0"), "max {max}");
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
        let (out, o) = trim(&h, limits, |_| 100, 0).unwrap();
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
        let (out, _) = trim(&h, limits, |_| 1, 0).unwrap();
        validate_history(&out).unwrap();
        let first = out[0].content.to_blocks();
        assert_eq!(first[0], ContentBlock::text(memory));
        // The boundary was the second prompt: it is kept after the note.
        assert_eq!(first.last(), Some(&ContentBlock::text("prompt 1")));
    }

    #[test]
    fn the_first_message_survives_every_trim_and_only_one_note_stays() {
        let mut h = session(1, 12);
        // One large tool result, as after reading a big file.
        h[2] = Message::blocks(
            Role::User,
            vec![ContentBlock::ToolResult(ToolResultBlock::text(
                "t0_0",
                "x".repeat(18_000),
                false,
            ))],
        );
        let cost = |m: &Message| crate::tokens::estimate_message(m);
        let limits = TrimLimits {
            max_messages: None,
            max_tokens: Some(4_096),
        };
        let (out, o) = trim(&h, limits, cost, 1_000).unwrap();
        validate_history(&out).unwrap();
        assert!(o.within_limits, "{o:?}");
        let first = out[0].content.text();
        assert!(first.starts_with("prompt 0"), "{first}");
        assert!(
            !out.iter()
                .any(|m| m.content.text().contains(&"x".repeat(100)))
        );
        // Trimming the trimmed history again keeps the task and one note.
        let mut again = out.clone();
        for i in 20..26 {
            again.push(call(&format!("u{i}")));
            again.push(Message::blocks(
                Role::User,
                vec![ContentBlock::ToolResult(ToolResultBlock::text(
                    format!("u{i}"),
                    "y".repeat(4_000),
                    false,
                ))],
            ));
        }
        let (out2, _) = trim(&again, limits, cost, 1_000).unwrap();
        validate_history(&out2).unwrap();
        let first = out2[0].content.text();
        assert!(first.starts_with("prompt 0"), "{first}");
        assert_eq!(first.matches(TRIMMED_NOTE_START).count(), 1, "{first}");
    }

    #[test]
    fn a_huge_first_message_is_shortened_in_the_middle_not_dropped() {
        let mut h = session(1, 3);
        h[0] = Message::user_text(format!("TASK START {} TASK END", "z".repeat(60_000)));
        let cost = |m: &Message| crate::tokens::estimate_message(m);
        let limits = TrimLimits {
            max_messages: None,
            max_tokens: Some(8_000),
        };
        let (out, _) = trim(&h, limits, cost, 500).unwrap();
        validate_history(&out).unwrap();
        let first = out[0].content.text();
        assert!(first.starts_with("TASK START"), "{}", &first[..50]);
        assert!(first.contains("TASK END"));
        assert!(first.contains("characters left out to fit the context window"));
        assert!(cost(&out[0]) < 4_000, "{}", cost(&out[0]));
    }
}
