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

use crate::compaction::{self, CompactError, CompactReport, CompactTrigger, CompactionStrategy};
use crate::config::AgentConfig;
use crate::context_env::ContextEnv;
use crate::conversation::Conversation;
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
    /// The limits for this configuration and what the server says about the model
    /// ([`skiff_llm::Provider::served_model`]; the configuration goes over it), within
    /// `window_cap`, a window the server's context-size error revealed.
    pub fn of(
        config: &AgentConfig,
        served: Option<&skiff_llm::ServedModel>,
        window_cap: Option<u64>,
    ) -> Self {
        let window = tokens::context_window(config, served);
        let window = window_cap.map_or(window, |cap| window.min(cap));
        let hard = window.saturating_sub(tokens::output_reserve(config, served, window));
        let threshold = config.compaction.threshold.tokens(window).min(hard);
        Self {
            window,
            threshold,
            hard,
            trim_target: threshold / 2,
        }
    }
}

/// Where a trim for `max_messages` goes down to: about half of it, so that the next trim is
/// many turns away (each trim changes the start of the conversation and breaks the cache).
pub fn message_trim_target(max_messages: usize) -> usize {
    max_messages.div_ceil(2).max(1)
}

/// Called before every model call; may compact or trim the conversation. Returns the output
/// tokens the next request has room for in the window (at least the output reserve), for its
/// `max_tokens`.
pub(crate) async fn prepare(conv: &mut Conversation, env: &mut ContextEnv<'_>) -> u32 {
    let room = |conv: &Conversation, env: &ContextEnv<'_>| {
        let served = env.provider.served_model(env.model);
        let limits = ContextLimits::of(env.config, served.as_ref(), conv.window_cap());
        let reserve = limits.window - limits.hard;
        let free = limits
            .window
            .saturating_sub(conv.next_request_tokens(env.fixed_tokens()));
        u32::try_from(free.max(reserve)).unwrap_or(u32::MAX)
    };
    if conv.is_empty() || env.cancel.is_cancelled() {
        return room(conv, env);
    }
    manage(conv, env).await;
    room(conv, env)
}

/// Compact or trim the conversation when it passes the limits.
async fn manage(conv: &mut Conversation, env: &mut ContextEnv<'_>) {
    let served = env.provider.served_model(env.model);
    let limits = ContextLimits::of(env.config, served.as_ref(), conv.window_cap());
    let fixed = env.fixed_tokens();
    let before = conv.next_request_tokens(fixed);
    let mut trim_to: Option<u64> = None;
    if before > limits.threshold {
        match env.config.compaction.strategy {
            CompactionStrategy::Summarize => {
                match compaction::summarize(conv, env, CompactTrigger::Auto, None, before).await {
                    Ok(_) => {}
                    // The run stops at the next check; nothing is dropped because of an interrupt.
                    Err(CompactError::Cancelled) => return,
                    // Only the hard limit below applies.
                    Err(CompactError::NothingToCompact) => {}
                    Err(e @ CompactError::Blocked(_)) => {
                        env.sink.notice("compaction", "info", e.to_string())
                    }
                    Err(e) => {
                        env.sink.notice(
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
    if trim_to.is_none() && conv.next_request_tokens(fixed) > limits.hard {
        trim_to = Some(limits.trim_target);
    }
    let max_messages = env.config.max_messages;
    let too_many = max_messages.is_some_and(|m| conv.len() > m);
    if trim_to.is_some() || too_many {
        let max_messages = match (max_messages, too_many) {
            (Some(m), true) => Some(message_trim_target(m)),
            (m, _) => m,
        };
        apply_trim(
            conv,
            env,
            TrimLimits {
                max_messages,
                max_tokens: trim_to,
            },
            limits.hard,
        );
    }
}

/// Trim the history to `limits` and say so; `hard` is the most input a request may carry.
fn apply_trim(conv: &mut Conversation, env: &ContextEnv<'_>, limits: TrimLimits, hard: u64) {
    let fixed_estimate = env.fixed_tokens();
    let scale = conv.calibration(fixed_estimate);
    let fixed = (fixed_estimate as f64 * scale) as u64;
    let cost = |m: &skiff_protocol::Message| (tokens::estimate_message(m) as f64 * scale) as u64;
    let before = conv.len();
    let Some((history, outcome)) = trim::trim(conv.messages(), limits, cost, fixed) else {
        return;
    };
    if let Err(e) = skiff_protocol::validate_history(&history) {
        // Cannot happen for a valid input history; keep the history rather than break it.
        env.sink.notice(
            "trim",
            "warning",
            format!("trimming skipped: the trimmed history would be invalid ({e})"),
        );
        return;
    }
    conv.trim_to(history, outcome.replaced);
    let why = match (limits.max_tokens, limits.max_messages) {
        (Some(t), _) => format!("to fit about {t} context tokens"),
        (None, Some(m)) => format!(
            "to keep at most {} messages",
            env.config.max_messages.unwrap_or(m)
        ),
        (None, None) => String::new(),
    };
    let mut message = format!(
        "dropped {} earlier messages {why} (the first prompt is kept); {} of {before} remain \
         (about {} tokens)",
        outcome.dropped, outcome.messages_after, outcome.tokens_after
    );
    // Short of the trim target is no news while the request fits the window.
    if !outcome.within_limits && (limits.max_tokens.is_none() || outcome.tokens_after > hard) {
        message.push_str("; even the shortest valid history exceeds that limit");
    }
    env.sink.notice("trim", "warning", message);
}

/// Compact now (manual `/compact`): summarise the older history, with `focus` appended to the
/// summary prompt. The `compact_boundary` frame and notices go to the session's events.
pub(crate) async fn compact_now(
    conv: &mut Conversation,
    env: &mut ContextEnv<'_>,
    focus: Option<&str>,
) -> Result<CompactReport, CompactError> {
    let pre = conv.next_request_tokens(env.fixed_tokens());
    compaction::summarize(conv, env, CompactTrigger::Manual, focus, pre).await
}
