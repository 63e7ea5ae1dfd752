//! What a Claude model accepts of the reasoning options: extended thinking with a token budget,
//! adaptive thinking (the model decides how much to think) and an effort level
//! (`output_config.effort`), as Claude Code decides it per model.

use crate::pricing::{Family, parse};

/// The reasoning options a model accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReasoningSupport {
    /// `thinking: {type: "enabled", budget_tokens}`.
    pub budget: bool,
    /// `thinking: {type: "adaptive"}`.
    pub adaptive: bool,
    /// `output_config: {effort}`.
    pub effort: bool,
}

impl ReasoningSupport {
    /// Everything: a model skiff does not know is sent what the user asked for (the server
    /// decides).
    pub const ALL: Self = Self {
        budget: true,
        adaptive: true,
        effort: true,
    };
    /// Nothing (Claude 3 models).
    pub const NONE: Self = Self {
        budget: false,
        adaptive: false,
        effort: false,
    };
}

/// The reasoning options `model` accepts. Claude 3 models: none; Claude 4.0 to 4.5: a thinking
/// budget (and effort on Opus 4.5); Claude 4.6: both kinds of thinking and effort; later
/// models: adaptive thinking and effort (a budget is refused). Unknown models: everything.
pub fn reasoning_support(model: &str) -> ReasoningSupport {
    let Some((family, version)) = parse(&crate::resolve_alias(model)) else {
        return ReasoningSupport::ALL;
    };
    match version {
        (0..=3, _) => ReasoningSupport::NONE,
        (4, 0..=5) => ReasoningSupport {
            budget: true,
            adaptive: false,
            effort: family == Family::Opus && version == (4, 5),
        },
        (4, 6) => ReasoningSupport::ALL,
        _ => ReasoningSupport {
            budget: false,
            adaptive: true,
            effort: true,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_model() {
        assert_eq!(
            reasoning_support("claude-3-5-haiku"),
            ReasoningSupport::NONE
        );
        assert_eq!(
            reasoning_support("claude-sonnet-4-5-20250929"),
            ReasoningSupport {
                budget: true,
                adaptive: false,
                effort: false
            }
        );
        assert!(reasoning_support("opus").effort);
        assert!(!reasoning_support("haiku").effort);
        assert_eq!(reasoning_support("claude-opus-4-6"), ReasoningSupport::ALL);
        let later = reasoning_support("claude-opus-4-7");
        assert!(!later.budget && later.adaptive && later.effort);
        assert_eq!(reasoning_support("gpt-5"), ReasoningSupport::ALL);
        assert_eq!(
            reasoning_support("us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
            reasoning_support("claude-sonnet-4-5")
        );
    }
}
