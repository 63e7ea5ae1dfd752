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

/// A model a tool can ask one question: `system` (empty for none) and one user message in,
/// the answer's text out.
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
}
