//! [`ContextEnv`]: what context management (trimming, compaction) uses besides the
//! conversation, borrowed from the session's `Core`.

use tokio_util::sync::CancellationToken;

use crate::config::AgentConfig;
use crate::cost::CostTracker;
use crate::frames::EventSink;
use crate::hooks::{HookCommon, HookRunner};
use crate::request::RequestTemplate;

/// What context management uses besides the conversation itself.
pub(crate) struct ContextEnv<'a> {
    /// Settings (model, window, compaction, limits, memory).
    pub config: &'a AgentConfig,
    /// Model of the summary call.
    pub model: &'a str,
    /// Makes the summary call.
    pub provider: &'a dyn skiff_llm::Provider,
    /// PreCompact.
    pub hooks: &'a dyn HookRunner,
    /// The fields of hook inputs.
    pub hook_common: HookCommon,
    /// The fixed part of every request (system prompt, tools).
    pub template: &'a RequestTemplate,
    /// The summary call's cost goes here.
    pub costs: &'a mut CostTracker,
    /// Notices and `compact_boundary`.
    pub sink: &'a EventSink,
    /// Stops the summary call.
    pub cancel: &'a CancellationToken,
    /// The todo list as a reminder, kept after the summary (none when empty).
    pub todos: Option<String>,
}

impl ContextEnv<'_> {
    /// Estimated tokens of the system prompt and tool definitions.
    pub fn fixed_tokens(&self) -> u64 {
        self.template.fixed_tokens()
    }
}
