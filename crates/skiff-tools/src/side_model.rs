//! The side-model seam: a tool that needs a model's answer of its own (WebFetch answering its
//! `prompt` over a page) asks through [`SideModel`]. The tools know no providers; the session
//! supplies an implementation over its provider's small model (and counts its cost).

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

/// Why a side call gave no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SideModelError {
    /// The call was cancelled (interrupt) before the answer came.
    #[error("the model call was cancelled")]
    Cancelled,
    /// The call failed (the provider's error, in words).
    #[error("{0}")]
    Failed(String),
}

/// What one side call used, for the session's costs.
#[derive(Debug, Clone, PartialEq)]
pub struct SideUsage {
    /// The model that answered.
    pub model: String,
    /// Its token usage.
    pub usage: skiff_protocol::Usage,
}

/// One web search (the `WebSearch` tool's input).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WebSearchQuery {
    /// What to search for.
    pub query: String,
    /// Only results from these domains (empty: any).
    pub allowed_domains: Vec<String>,
    /// Never results from these domains.
    pub blocked_domains: Vec<String>,
}

/// A model a tool can ask one question: `system` (empty for none) and one user message in,
/// the answer's text out; and, where the provider runs it, Anthropic's server-side web search.
#[async_trait]
pub trait SideModel: Send + Sync + std::fmt::Debug {
    /// Ask once; `cancel` stops the call.
    async fn answer(
        &self,
        system: &str,
        user: &str,
        cancel: CancellationToken,
    ) -> Result<String, SideModelError>;

    /// The usage of the calls answered since the last time this was asked (the session adds
    /// it to its cost); none by default.
    fn take_usage(&self) -> Vec<SideUsage> {
        Vec::new()
    }

    /// Whether [`SideModel::web_search`] works (the provider runs the server-side search).
    fn has_web_search(&self) -> bool {
        false
    }

    /// Search the web with the provider's server-side tool: the content of the model's answer
    /// (its text, `server_tool_use` and `web_search_tool_result` blocks, in order, across the
    /// continuations of a paused turn).
    async fn web_search(
        &self,
        query: &WebSearchQuery,
        cancel: CancellationToken,
    ) -> Result<Vec<skiff_protocol::ContentBlock>, SideModelError> {
        let _ = (query, cancel);
        Err(SideModelError::Failed(
            "web search is not available with this model provider".into(),
        ))
    }
}
