//! Context management before each model call: measure the next request ([`crate::tokens`]),
//! compact it when it passes the threshold ([`crate::compaction`]), and trim it when it still
//! passes the hard limits ([`crate::trim`]).
//!
//! Per call, in order:
//! 1. `tokens` = API-reported input of the last call + estimate of the messages added since.
//! 2. Over the threshold (default 80% of the window): `Summarize` summarises the older history
//!    (a PreCompact hook may block it); if the summary call fails or is empty, the history is
//!    kept and trimmed to half the threshold instead, with a warning. `TrimOnly` trims to half
//!    the threshold. `Off` does nothing here.
//! 3. Still over the hard limit (window − max output tokens), or more messages than
//!    `max_messages`: trim, with a warning. Trimming never happens silently.
//!
//! Trimming goes down to half the threshold rather than just under it, so that it happens
//! rarely: every trim changes the start of the conversation and so invalidates the prompt cache.

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::agent::Agent;
use crate::compaction::{self, CompactError, CompactReport, CompactTrigger, CompactionStrategy};
use crate::frames::EventSink;
use crate::tokens;
use crate::trim::{self, TrimLimits};

/// The token limits of the next request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextLimits {
    /// The model's context window.
    pub window: u64,
    /// Compaction starts above this many input tokens.
    pub threshold: u64,
    /// Input tokens that leave room for the max output tokens in the window; trimming keeps
    /// requests below it.
    pub hard: u64,
    /// Where trimming for tokens goes down to (half the threshold).
    pub trim_target: u64,
}

impl ContextLimits {
    /// The limits for `agent`'s configuration.
    pub fn of(agent: &Agent) -> Self {
        let window = tokens::context_window(&agent.config);
        let hard = window.saturating_sub(u64::from(agent.config.max_tokens));
        let threshold = agent.config.compaction.threshold.tokens(window).min(hard);
        Self {
            window,
            threshold,
            hard,
            trim_target: threshold / 2,
        }
    }
}

/// Called before every model call; may compact or trim `agent.history`.
pub(crate) async fn prepare(agent: &mut Agent, sink: &EventSink, cancel: &CancellationToken) {
    if agent.history.is_empty() || cancel.is_cancelled() {
        return;
    }
    let limits = ContextLimits::of(agent);
    let before = tokens::next_request_tokens(agent);
    let mut trim_to: Option<u64> = None;
    if before > limits.threshold {
        match agent.config.compaction.strategy {
            CompactionStrategy::Summarize => {
                match compaction::summarize(agent, CompactTrigger::Auto, None, sink, cancel, before)
                    .await
                {
                    Ok(_) => {}
                    // The run stops at the next check; nothing is dropped because of an interrupt.
                    Err(CompactError::Cancelled) => return,
                    // Only the hard limit below applies.
                    Err(CompactError::NothingToCompact) => {}
                    Err(e @ CompactError::Blocked(_)) => {
                        sink.notice("compaction", "info", e.to_string())
                    }
                    Err(e) => {
                        sink.notice(
                            "compaction",
                            "warning",
                            format!(
                                "compaction failed ({e}); the history is kept and trimmed instead"
                            ),
                        );
                        trim_to = Some(limits.trim_target);
                    }
                }
            }
            CompactionStrategy::TrimOnly => trim_to = Some(limits.trim_target),
            CompactionStrategy::Off => {}
        }
    }
    if trim_to.is_none() && tokens::next_request_tokens(agent) > limits.hard {
        trim_to = Some(limits.trim_target);
    }
    let max_messages = agent.config.max_messages;
    if trim_to.is_some() || max_messages.is_some_and(|m| agent.history.len() > m) {
        apply_trim(
            agent,
            sink,
            TrimLimits {
                max_messages,
                max_tokens: trim_to,
            },
        );
    }
}

/// Trim the history to `limits` and say so.
fn apply_trim(agent: &mut Agent, sink: &EventSink, limits: TrimLimits) {
    let scale = tokens::calibration(agent);
    let fixed = (tokens::estimate_fixed(&agent.template) as f64 * scale) as u64;
    let cost = |m: &skiff_protocol::Message| (tokens::estimate_message(m) as f64 * scale) as u64;
    let before = agent.history.len();
    let Some((history, outcome)) = trim::trim(
        &agent.history,
        limits,
        cost,
        fixed,
        agent.config.memory.as_deref(),
    ) else {
        return;
    };
    if let Err(e) = skiff_protocol::validate_history(&history) {
        // Cannot happen for a valid input history; keep the history rather than break it.
        sink.notice(
            "trim",
            "warning",
            format!("trimming skipped: the trimmed history would be invalid ({e})"),
        );
        return;
    }
    agent.history = history;
    agent.session.history_replaced(&agent.history);
    agent.last_input = None;
    let why = match (limits.max_tokens, limits.max_messages) {
        (Some(t), _) => format!("to fit about {t} context tokens"),
        (None, Some(m)) => format!("to keep at most {m} messages"),
        (None, None) => String::new(),
    };
    let mut message = format!(
        "dropped the {} oldest messages {why}; {} of {before} remain (about {} tokens)",
        outcome.dropped, outcome.messages_after, outcome.tokens_after
    );
    if !outcome.within_limits {
        message.push_str("; even the shortest valid history exceeds that limit");
    }
    sink.notice("trim", "warning", message);
}

/// Compact now (manual `/compact`): summarise the older history, with `focus` appended to the
/// summary prompt. The events emitted on the way (the `compact_boundary` frame and notices)
/// are collected into the report, since there is no run stream to carry them.
pub(crate) async fn compact_now(
    agent: &mut Agent,
    focus: Option<&str>,
    cancel: &CancellationToken,
) -> Result<CompactReport, CompactError> {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let sink = EventSink::new(tx, agent.config.session_id.clone());
    let pre = tokens::next_request_tokens(agent);
    let result =
        compaction::summarize(agent, CompactTrigger::Manual, focus, &sink, cancel, pre).await;
    drop(sink);
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    result.map(|mut report| {
        report.events = events;
        report
    })
}
