//! The reasoning options of a session — extended thinking (a budget or adaptive), its display,
//! the effort level — and what each request carries for them on the model in use, as Claude
//! Code sends them: `thinking` and `output_config.effort` where the model takes them, a notice
//! where it does not. OpenAI-compatible servers get the effort as `reasoning_effort` (the
//! provider maps it) and no thinking.

use skiff_protocol::{JsonMap, ThinkingConfig};

/// The thinking a session asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThinkingMode {
    /// A budget of thinking tokens per response (`--max-thinking-tokens`).
    Budget(u32),
    /// The model decides how much to think (`--thinking adaptive`).
    Adaptive,
    /// No thinking (`--thinking disabled`, `--max-thinking-tokens 0`).
    Disabled,
}

/// The reasoning options of a session. `Default` asks for nothing (no thinking, the API's
/// default effort).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reasoning {
    /// Thinking, when asked for.
    pub thinking: Option<ThinkingMode>,
    /// How adaptive thinking is shown (`summarized`, `omitted`).
    pub display: Option<String>,
    /// Effort: `low`, `medium`, `high`, `xhigh`, `max`.
    pub effort: Option<String>,
}

/// The effort levels `--effort` takes.
pub const EFFORT_LEVELS: &[&str] = &["low", "medium", "high", "xhigh", "max"];

/// The budget of thinking asked for as "adaptive" on a model that only takes a budget, as
/// Claude Code sends it (`max_tokens` 32,000, budget 31,999).
const ADAPTIVE_AS_BUDGET: u32 = 31_999;

/// The smallest budget the API takes.
const MIN_BUDGET: u32 = 1_024;

/// The room a request gets for an answer besides its thinking, at least.
const THINKING_ROOM: u32 = 32_000;

/// What the requests of one model carry for the session's [`Reasoning`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestReasoning {
    /// Thinking budget, or adaptive thinking with its display.
    thinking: Option<Planned>,
    /// Top-level fields: `output_config`.
    pub extra: JsonMap,
    /// Why part of what was asked is not sent (shown once each).
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
enum Planned {
    Budget(u32),
    Adaptive(Option<String>),
}

impl RequestReasoning {
    /// What the requests carry for `reasoning` on `model`; `chat` for an OpenAI-compatible
    /// provider.
    pub fn plan(reasoning: &Reasoning, model: &str, chat: bool) -> Self {
        let mut out = Self::default();
        if let Some(effort) = &reasoning.effort {
            let support = skiff_llm::reasoning_support(model);
            if chat || support.effort {
                let mut config = JsonMap::new();
                config.insert("effort".into(), effort.clone().into());
                out.extra
                    .insert("output_config".into(), serde_json::Value::Object(config));
            } else {
                out.notes.push(format!(
                    "{model} does not take an effort level; --effort {effort} is not sent"
                ));
            }
        }
        let Some(thinking) = reasoning.thinking else {
            return out;
        };
        if thinking == ThinkingMode::Disabled {
            return out;
        }
        if chat {
            out.notes.push(
                "thinking options are not sent to OpenAI-compatible servers (--effort is, as \
                 reasoning_effort)"
                    .to_owned(),
            );
            return out;
        }
        let support = skiff_llm::reasoning_support(model);
        let display = reasoning.display.clone();
        out.thinking = match thinking {
            ThinkingMode::Budget(n) if support.budget => Some(Planned::Budget(n.max(MIN_BUDGET))),
            ThinkingMode::Budget(_) if support.adaptive => {
                out.notes.push(format!(
                    "{model} takes adaptive thinking only; it thinks adaptively instead of with \
                     the --max-thinking-tokens budget"
                ));
                Some(Planned::Adaptive(display))
            }
            ThinkingMode::Adaptive if support.adaptive => Some(Planned::Adaptive(display)),
            ThinkingMode::Adaptive if support.budget => Some(Planned::Budget(ADAPTIVE_AS_BUDGET)),
            _ => {
                out.notes.push(format!(
                    "{model} does not support extended thinking; no thinking is requested"
                ));
                None
            }
        };
        out
    }

    /// Whether requests think.
    pub fn thinks(&self) -> bool {
        self.thinking.is_some()
    }

    /// The `max_tokens` and `thinking` of a request that leaves `answer` tokens for the answer
    /// (the session's max output tokens, or less when the window is nearly full) on a model
    /// that takes at most `cap`. A budget comes on top of the answer's room; adaptive thinking
    /// gets at least 32,000 tokens in all. A budget that does not fit (under 1,024 tokens)
    /// means no thinking.
    pub fn fit(&self, answer: u32, cap: Option<u32>) -> (u32, Option<ThinkingConfig>) {
        let cap = cap.unwrap_or(u32::MAX);
        match &self.thinking {
            None => (answer, None),
            Some(Planned::Budget(n)) => {
                let max = answer.saturating_add(*n).min(cap).max(answer);
                let budget = (*n).min(max.saturating_sub(1));
                if budget < MIN_BUDGET {
                    (answer, None)
                } else {
                    (
                        max,
                        Some(ThinkingConfig::Enabled {
                            budget_tokens: budget,
                        }),
                    )
                }
            }
            Some(Planned::Adaptive(display)) => (
                answer.max(THINKING_ROOM.min(cap)),
                Some(ThinkingConfig::Adaptive {
                    display: display.clone(),
                }),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(thinking: Option<ThinkingMode>, effort: Option<&str>) -> Reasoning {
        Reasoning {
            thinking,
            display: None,
            effort: effort.map(str::to_owned),
        }
    }

    #[test]
    fn a_budget_on_a_model_that_takes_one() {
        let plan = RequestReasoning::plan(
            &asked(Some(ThinkingMode::Budget(10_000)), None),
            "claude-sonnet-4-5",
            false,
        );
        assert!(plan.notes.is_empty());
        let (max, thinking) = plan.fit(8_192, Some(64_000));
        assert_eq!(max, 18_192);
        assert_eq!(
            thinking,
            Some(ThinkingConfig::Enabled {
                budget_tokens: 10_000
            })
        );
        // A nearly full window: the budget shrinks, then goes.
        let (max, thinking) = plan.fit(8_192, Some(9_000));
        assert_eq!(max, 9_000);
        assert_eq!(
            thinking,
            Some(ThinkingConfig::Enabled {
                budget_tokens: 8_999
            })
        );
        let small = RequestReasoning::plan(
            &asked(Some(ThinkingMode::Budget(100)), None),
            "claude-sonnet-4-5",
            false,
        );
        assert_eq!(
            small.fit(8_192, None).1,
            Some(ThinkingConfig::Enabled {
                budget_tokens: 1_024
            })
        );
    }

    #[test]
    fn adaptive_where_taken_a_budget_elsewhere_nothing_on_claude_3() {
        let plan = RequestReasoning::plan(
            &Reasoning {
                thinking: Some(ThinkingMode::Adaptive),
                display: Some("summarized".into()),
                effort: Some("high".into()),
            },
            "claude-opus-4-6",
            false,
        );
        assert!(plan.notes.is_empty());
        let (max, thinking) = plan.fit(8_192, Some(128_000));
        assert_eq!(max, 32_000);
        assert_eq!(
            thinking,
            Some(ThinkingConfig::Adaptive {
                display: Some("summarized".into())
            })
        );
        assert_eq!(plan.extra["output_config"]["effort"], "high");

        let plan = RequestReasoning::plan(
            &asked(Some(ThinkingMode::Adaptive), Some("low")),
            "claude-sonnet-4-5",
            false,
        );
        assert_eq!(
            plan.fit(8_192, Some(64_000)).1,
            Some(ThinkingConfig::Enabled {
                budget_tokens: 31_999
            })
        );
        assert!(plan.extra.is_empty());
        assert_eq!(plan.notes.len(), 1, "{:?}", plan.notes);

        let plan = RequestReasoning::plan(
            &asked(Some(ThinkingMode::Budget(4_000)), None),
            "claude-3-5-haiku",
            false,
        );
        assert!(!plan.thinks());
        assert_eq!(plan.fit(8_192, None), (8_192, None));
        assert_eq!(plan.notes.len(), 1);
    }

    #[test]
    fn disabled_and_chat_servers() {
        let plan = RequestReasoning::plan(
            &asked(Some(ThinkingMode::Disabled), None),
            "claude-sonnet-4-5",
            false,
        );
        assert_eq!(plan, RequestReasoning::default());
        let plan = RequestReasoning::plan(
            &asked(Some(ThinkingMode::Budget(2_000)), Some("medium")),
            "qwen3",
            true,
        );
        assert!(!plan.thinks());
        assert_eq!(plan.extra["output_config"]["effort"], "medium");
        assert_eq!(plan.notes.len(), 1);
    }
}
