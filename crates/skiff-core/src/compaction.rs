//! Compaction by summarisation (the seeds' SummarizeCompactionStrategy): the older part of the
//! history is summarised by the model with our own prompt and replaced by that summary; the
//! first user message and the most recent messages stay verbatim, and the memory is re-injected.
//!
//! Shape of a compacted history:
//!
//! ```text
//! user:      [memory reminder] [first user message's blocks, verbatim] [summary reminder]
//! assistant: ┐
//! user:      │ the most recent messages, verbatim, starting with an assistant message,
//! …          ┘ so every kept tool_result's tool_use is kept too
//! ```

use skiff_protocol::sdk::{CompactBoundary, CompactMetadata, SdkMessage, SystemMessage};
use skiff_protocol::{ContentBlock, Message, Role, validate_history};

use crate::context_env::ContextEnv;
use crate::conversation::Conversation;
use crate::frames::new_uuid;
use crate::hooks::HookEvent;
use crate::tokens;
use serde_json::Value;

pub use crate::config::{CompactionConfig, CompactionStrategy, CompactionThreshold};
pub use crate::event::{CompactError, CompactReport, CompactTrigger};
use crate::memory::is_memory_block;

mod summary;

pub use summary::{
    SUMMARY_HEADER, SUMMARY_PROMPT, render_transcript, summary_block, summary_request,
};

fn is_summary_block(block: &ContentBlock) -> bool {
    matches!(block, ContentBlock::Text(t) if t.text.starts_with(SUMMARY_HEADER))
}

/// Where the kept part starts: an assistant message at index ≥ 2 (so at least one message is
/// summarised), at least `keep_recent` messages from the end when possible. `history.len()`
/// itself is a cut (nothing kept) only when `keep_recent` is 0. `None` when there is none.
pub fn plan_cut(history: &[Message], keep_recent: usize) -> Option<usize> {
    let len = history.len();
    let mut candidates: Vec<usize> = (2..len)
        .filter(|&i| history[i].role == Role::Assistant)
        .collect();
    if keep_recent == 0 && len >= 2 {
        candidates.push(len);
    }
    let want = len.saturating_sub(keep_recent);
    candidates
        .iter()
        .rev()
        .find(|&&i| i <= want)
        .or_else(|| candidates.first())
        .copied()
}

/// The compacted history: the first user message (memory re-injected, an earlier summary
/// dropped) with the summary appended, then `history[cut..]` verbatim.
pub fn compacted_history(
    history: &[Message],
    cut: usize,
    summary: &str,
    memory: Option<&str>,
) -> Vec<Message> {
    let mut first: Vec<ContentBlock> = Vec::new();
    let old_first = history
        .first()
        .map(|m| m.content.to_blocks())
        .unwrap_or_default();
    let old_memory = old_first
        .first()
        .filter(|b| is_memory_block(b, memory))
        .cloned();
    match (memory, old_memory) {
        (Some(m), _) => first.push(ContentBlock::text(m)),
        (None, Some(b)) => first.push(b),
        (None, None) => {}
    }
    first.extend(
        old_first
            .into_iter()
            .enumerate()
            .filter(|(i, b)| !(is_summary_block(b) || (*i == 0 && is_memory_block(b, memory))))
            .map(|(_, b)| b),
    );
    first.push(ContentBlock::text(summary_block(summary)));
    let mut out = Vec::with_capacity(history.len().saturating_sub(cut) + 1);
    out.push(Message::blocks(Role::User, first));
    out.extend_from_slice(&history[cut.min(history.len())..]);
    out
}

/// Summarise the older history of `conv` and swap the compacted history in. On any error the
/// history is left as it was. Emits `compact_boundary` on success.
pub(crate) async fn summarize(
    conv: &mut Conversation,
    env: &mut ContextEnv<'_>,
    trigger: CompactTrigger,
    focus: Option<&str>,
    pre_tokens: u64,
) -> Result<CompactReport, CompactError> {
    let config = env.config;
    let keep = config.compaction.keep_recent;
    let cut = plan_cut(conv.messages(), keep).ok_or(CompactError::NothingToCompact)?;
    let hook = crate::hooks::fire(
        env.hooks,
        env.sink,
        &env.hook_common,
        HookEvent::PreCompact,
        Some(trigger.as_str()),
        || {
            crate::hooks::fields([
                ("trigger", trigger.as_str().into()),
                (
                    "custom_instructions",
                    focus.map_or(Value::Null, Value::from),
                ),
            ])
        },
    )
    .await;
    if let Some(reason) = hook.block {
        return Err(CompactError::Blocked(reason));
    }
    let model = env.model.to_owned();
    let served = env.provider.served_model(&model);
    let max_output = served
        .and_then(|s| s.max_output_tokens)
        .or_else(|| skiff_llm::model_info(&model).map(|i| i.max_output_tokens));
    let max_tokens = max_output.map_or(config.compaction.summary_max_tokens, |m| {
        config
            .compaction
            .summary_max_tokens
            .min(u32::try_from(m).unwrap_or(u32::MAX))
    });
    // Leave room for the prompt and the answer; 3 bytes per token keeps the transcript well
    // inside the window even for dense text.
    let window = tokens::context_window(config, served.as_ref());
    let window = conv.window_cap().map_or(window, |cap| window.min(cap));
    let budget_tokens = window
        .saturating_sub(u64::from(max_tokens) + 4_000)
        .max(1_000);
    let max_bytes = usize::try_from(budget_tokens * 3).unwrap_or(usize::MAX);
    let memory = config.memory.as_deref();
    let transcript = render_transcript(&conv.messages()[..cut], memory, max_bytes);
    let request = summary_request(&model, max_tokens, &transcript, focus);

    env.sink.notice(
        "compaction",
        "info",
        format!(
            "compacting the conversation ({pre_tokens} tokens; summarising {} of {} messages)",
            cut - 1,
            conv.len()
        ),
    );
    let cancel = env.cancel.clone();
    let reply =
        match skiff_llm::complete(env.provider.stream(&request.view(), cancel.clone())).await {
            Ok(r) => r,
            Err(skiff_llm::LlmError::Cancelled) => return Err(CompactError::Cancelled),
            Err(e) if cancel.is_cancelled() => {
                tracing::debug!(error = %e, "summary call ended by cancellation");
                return Err(CompactError::Cancelled);
            }
            Err(e) => return Err(CompactError::Failed(e.to_string())),
        };
    let served = env.provider.served_model(&model);
    let (_, unknown) = env.costs.add(&model, &reply.usage, served.as_ref());
    if unknown && !env.provider.is_local() {
        env.sink.notice(
            "pricing",
            "warning",
            format!("no price known for model {model}; its cost is counted as $0"),
        );
    }
    let summary = reply.text().trim().to_owned();
    if summary.is_empty() {
        return Err(CompactError::EmptySummary);
    }
    // The todo list survives the summary (the model keeps tracking it).
    let mut kept = match &env.todos {
        Some(todos) => format!("{summary}\n\n{todos}"),
        None => summary.clone(),
    };
    // SessionStart with source `compact`: its context goes with the summary.
    let start = crate::hooks::fire(
        env.hooks,
        env.sink,
        &env.hook_common,
        HookEvent::SessionStart,
        Some("compact"),
        || crate::hooks::fields([("source", "compact".into())]),
    )
    .await;
    for text in start.output.iter().chain(&start.context) {
        kept.push_str("\n\n");
        kept.push_str(&crate::hooks::reminder(
            HookEvent::SessionStart,
            "additional context",
            text,
        ));
    }
    let new_history = compacted_history(conv.messages(), cut, &kept, memory);
    validate_history(&new_history).map_err(|e| CompactError::Invalid(e.to_string()))?;

    let messages_before = conv.len();
    conv.replace_compacted(new_history, trigger.as_str(), pre_tokens, &reply);
    let post_tokens = conv.full_estimate(env.fixed_tokens());
    env.sink
        .emit(SdkMessage::System(SystemMessage::CompactBoundary(
            CompactBoundary {
                compact_metadata: CompactMetadata {
                    trigger: trigger.as_str().to_owned(),
                    pre_tokens,
                },
                session_id: env.sink.session_id().to_owned(),
                uuid: new_uuid(),
            },
        )));
    tracing::info!(
        trigger = trigger.as_str(),
        pre_tokens,
        post_tokens,
        messages_before,
        messages_after = conv.len(),
        "conversation compacted"
    );
    Ok(CompactReport {
        trigger,
        pre_tokens,
        post_tokens,
        messages_before,
        messages_after: conv.len(),
        summarized_messages: cut - 1,
        summary,
        usage: reply.usage,
        events: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use skiff_protocol::{ToolResultBlock, ToolUseBlock};

    fn user(t: &str) -> Message {
        Message::user_text(t)
    }
    fn call(id: &str) -> Message {
        Message::blocks(
            Role::Assistant,
            vec![ContentBlock::ToolUse(ToolUseBlock {
                id: id.into(),
                name: "Bash".into(),
                input: json!({"command": format!("echo {id}")}),
                cache_control: None,
            })],
        )
    }
    fn result(id: &str) -> Message {
        Message::blocks(
            Role::User,
            vec![ContentBlock::ToolResult(ToolResultBlock::text(
                id,
                format!("out {id}"),
                false,
            ))],
        )
    }
    fn session(pairs: usize) -> Vec<Message> {
        let mut h = vec![user("task")];
        for i in 0..pairs {
            h.push(call(&format!("t{i}")));
            h.push(result(&format!("t{i}")));
        }
        h
    }

    #[test]
    fn thresholds_parse_and_resolve() {
        assert_eq!("80%".parse(), Ok(CompactionThreshold::Percent(80)));
        assert_eq!("150_000".parse(), Ok(CompactionThreshold::Tokens(150_000)));
        assert!("0%".parse::<CompactionThreshold>().is_err());
        assert!("lots".parse::<CompactionThreshold>().is_err());
        assert_eq!(CompactionThreshold::Percent(80).tokens(200_000), 160_000);
        assert_eq!(CompactionThreshold::Tokens(5).tokens(200_000), 5);
        assert_eq!("Trim".parse(), Ok(CompactionStrategy::TrimOnly));
        assert_eq!("summarise".parse(), Ok(CompactionStrategy::Summarize));
        assert!("maybe".parse::<CompactionStrategy>().is_err());
    }

    #[test]
    fn the_cut_keeps_pairs_together_and_at_least_n_messages() {
        let h = session(5); // 11 messages: u, (a, r) × 5
        for keep in 0..12 {
            let Some(cut) = plan_cut(&h, keep) else {
                panic!("no cut for keep {keep}");
            };
            assert!(cut >= 2);
            if cut < h.len() {
                assert_eq!(h[cut].role, Role::Assistant);
            }
            if keep + 3 <= h.len() {
                assert!(h.len() - cut >= keep, "keep {keep}: cut {cut}");
            }
            let new = compacted_history(&h, cut, "s", None);
            validate_history(&new).unwrap();
        }
        assert_eq!(plan_cut(&h, 6), Some(5));
        assert_eq!(plan_cut(&h, 5), Some(5));
        assert_eq!(plan_cut(&[user("x")], 0), None);
        assert_eq!(plan_cut(&session(1), 6), None);
    }

    #[test]
    fn recompaction_replaces_the_old_summary_and_keeps_the_memory_first() {
        let memory = "<system-reminder>\nCodebase and user instructions are shown below. M\n</system-reminder>";
        let mut h = session(4);
        h[0] = Message::blocks(
            Role::User,
            vec![ContentBlock::text(memory), ContentBlock::text("task")],
        );
        let once = compacted_history(&h, 5, "first summary", Some(memory));
        let mut again = once.clone();
        again.extend(session(6).into_iter().skip(9));
        let twice = compacted_history(&again, 3, "second summary", Some(memory));
        let blocks = twice[0].content.to_blocks();
        assert_eq!(blocks.len(), 3, "{blocks:?}");
        assert_eq!(blocks[0], ContentBlock::text(memory));
        assert_eq!(blocks[1], ContentBlock::text("task"));
        let ContentBlock::Text(s) = &blocks[2] else {
            panic!()
        };
        assert!(s.text.contains("second summary") && !s.text.contains("first summary"));
        validate_history(&twice).unwrap();
    }
}
