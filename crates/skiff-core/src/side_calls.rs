//! The session's small model for tools (WebFetch's answer over a page, WebSearch's search):
//! [`ProviderSideModel`] asks one question through the session's provider with the small model
//! ([`small_model`]: the configured one, else Haiku on Anthropic, else the session's model),
//! and keeps each call's usage until the turn loop adds it to the session's cost ([`absorb`]).

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use skiff_llm::{LlmError, Provider};
use skiff_protocol::{ContentBlock, Message, MessagesRequest, SystemPrompt};
use skiff_tools::{SideModel, SideModelError, SideUsage, ToolContext, WebSearchQuery};
use tokio_util::sync::CancellationToken;

use crate::cost::CostTracker;
use crate::frames::EventSink;

/// Anthropic's small, fast model (Claude Code's default for side calls).
pub const DEFAULT_ANTHROPIC_SMALL_MODEL: &str = "claude-haiku-4-5";
/// Output budget of one side call.
const MAX_TOKENS: u32 = 4_096;

/// The small model of a session: `configured` (`skiff.smallModel`, `ANTHROPIC_SMALL_FAST_MODEL`,
/// `ANTHROPIC_DEFAULT_HAIKU_MODEL`) when given, else Haiku for the Anthropic provider, else the
/// session's own model (a local or OpenAI-compatible server may serve nothing else).
pub fn small_model(provider: &str, configured: Option<&str>, main: &str) -> String {
    match configured.map(str::trim).filter(|m| !m.is_empty()) {
        Some(m) => skiff_llm::resolve_alias(m),
        None if provider == "anthropic" => DEFAULT_ANTHROPIC_SMALL_MODEL.to_owned(),
        None => main.to_owned(),
    }
}

/// A [`SideModel`] over the session's provider.
pub struct ProviderSideModel {
    provider: Arc<dyn Provider>,
    model: String,
    usage: Mutex<Vec<SideUsage>>,
}

impl std::fmt::Debug for ProviderSideModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderSideModel")
            .field("provider", &self.provider.name())
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl ProviderSideModel {
    /// Side calls to `model` through `provider`.
    pub fn new(provider: Arc<dyn Provider>, model: impl Into<String>) -> Self {
        Self {
            provider,
            model: model.into(),
            usage: Mutex::new(Vec::new()),
        }
    }

    /// The model it asks.
    pub fn model(&self) -> &str {
        &self.model
    }
}

#[async_trait]
impl SideModel for ProviderSideModel {
    async fn answer(
        &self,
        system: &str,
        user: &str,
        cancel: CancellationToken,
    ) -> Result<String, SideModelError> {
        let mut request =
            MessagesRequest::new(&self.model, MAX_TOKENS, vec![Message::user_text(user)]);
        if !system.is_empty() {
            request.system = Some(SystemPrompt::Text(system.to_owned()));
        }
        request.stream = true;
        let reply = match skiff_llm::complete(self.provider.stream(&request.view(), cancel.clone()))
            .await
        {
            Ok(r) => r,
            Err(LlmError::Cancelled) => return Err(SideModelError::Cancelled),
            Err(_) if cancel.is_cancelled() => return Err(SideModelError::Cancelled),
            Err(e) => {
                tracing::warn!(model = %self.model, error = %e, "a side call failed");
                return Err(SideModelError::Failed(e.to_string()));
            }
        };
        self.usage
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(SideUsage {
                model: self.model.clone(),
                usage: reply.usage.clone(),
            });
        Ok(reply.text())
    }

    fn has_web_search(&self) -> bool {
        self.provider.server_web_search()
    }

    async fn web_search(
        &self,
        query: &WebSearchQuery,
        cancel: CancellationToken,
    ) -> Result<Vec<ContentBlock>, SideModelError> {
        crate::web_search::search(
            self.provider.as_ref(),
            &self.model,
            query,
            cancel,
            |usage| {
                self.usage
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push(SideUsage {
                        model: self.model.clone(),
                        usage,
                    });
            },
        )
        .await
    }

    fn take_usage(&self) -> Vec<SideUsage> {
        std::mem::take(
            &mut *self
                .usage
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }
}

/// The side model a session gets when its tool context has none: the provider's small model.
pub fn for_session(
    provider: &Arc<dyn Provider>,
    config: &crate::AgentConfig,
) -> Arc<dyn SideModel> {
    let model = small_model(
        provider.name(),
        config.small_model.as_deref(),
        &config.model,
    );
    tracing::debug!(%model, "side calls (WebFetch) use this model");
    Arc::new(ProviderSideModel::new(Arc::clone(provider), model))
}

/// Add the usage of the side calls made by the tools (since the last time) to the session's
/// costs; a model without a known price is warned about once, as the main model's.
pub(crate) fn absorb(
    ctx: &ToolContext,
    costs: &mut CostTracker,
    provider: &dyn Provider,
    sink: &EventSink,
) {
    let Some(side) = &ctx.side_model else {
        return;
    };
    for call in side.take_usage() {
        let served = provider.served_model(&call.model);
        let (_, unknown) = costs.add(&call.model, &call.usage, served.as_ref());
        if unknown && !provider.is_local() {
            sink.notice(
                "pricing",
                "warning",
                format!(
                    "no price known for model {}; its cost is counted as $0",
                    call.model
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_small_model_is_configured_else_haiku_on_anthropic_else_the_main_one() {
        assert_eq!(
            small_model("anthropic", None, "claude-sonnet-4-5"),
            "claude-haiku-4-5"
        );
        assert_eq!(
            small_model("anthropic", Some("haiku"), "x"),
            "claude-haiku-4-5"
        );
        assert_eq!(
            small_model("anthropic", Some(" my-small "), "x"),
            "my-small"
        );
        assert_eq!(
            small_model("openai", None, "qwen2.5-coder:7b"),
            "qwen2.5-coder:7b"
        );
        assert_eq!(small_model("openai", Some(""), "m"), "m");
    }
}
