//! The model options of a session from [`Overrides`] and the environment: thinking
//! (`--max-thinking-tokens`, MAX_THINKING_TOKENS, `--thinking`, `--thinking-display`), effort
//! (`--effort`) and the fallback model (`--fallback-model`).

use skiff_core::{Reasoning, ThinkingMode};

use crate::error::{ConfigError, Result};
use crate::overrides::Overrides;
use crate::settings::Settings;

/// Thinking and effort as asked for. `--thinking disabled` and a budget of 0 turn thinking
/// off; `--thinking adaptive` (or `enabled`) with a budget thinks with that budget where the
/// model takes one.
pub fn reasoning(o: &Overrides, settings: &Settings) -> Result<Reasoning> {
    let env_budget = match settings.lookup.get("MAX_THINKING_TOKENS") {
        Some(v) if !v.trim().is_empty() => Some(v.trim().parse::<u32>().map_err(|_| {
            ConfigError::invalid(format!(
                "MAX_THINKING_TOKENS: `{v}` is not a whole number of tokens"
            ))
        })?),
        _ => None,
    };
    let budget = o.max_thinking_tokens.or(env_budget);
    let thinking = match (o.thinking.as_deref(), budget) {
        (Some("disabled"), _) | (_, Some(0)) => Some(ThinkingMode::Disabled),
        (_, Some(n)) => Some(ThinkingMode::Budget(n)),
        (Some("adaptive" | "enabled"), None) => Some(ThinkingMode::Adaptive),
        (Some(other), None) => {
            return Err(ConfigError::usage(format!(
                "--thinking: unknown mode {other:?} (adaptive, enabled or disabled)"
            )));
        }
        (None, None) => None,
    };
    if let Some(effort) = &o.effort
        && !skiff_core::reasoning::EFFORT_LEVELS.contains(&effort.as_str())
    {
        return Err(ConfigError::usage(format!(
            "--effort: unknown level {effort:?} ({})",
            skiff_core::reasoning::EFFORT_LEVELS.join(", ")
        )));
    }
    Ok(Reasoning {
        thinking,
        display: o.thinking_display.clone(),
        effort: o.effort.clone(),
    })
}

/// The fallback model (an alias resolved); the same model as the main one is a usage error, as
/// with Claude Code.
pub fn fallback_model(o: &Overrides, model: &str) -> Result<Option<String>> {
    let Some(fallback) = o.fallback_model.as_deref().map(str::trim) else {
        return Ok(None);
    };
    if fallback.is_empty() {
        return Ok(None);
    }
    let fallback = skiff_llm::resolve_alias(fallback);
    if fallback == model {
        return Err(ConfigError::usage(format!(
            "--fallback-model {fallback} is the main model; name a different one"
        )));
    }
    Ok(Some(fallback))
}
