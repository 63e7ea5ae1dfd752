//! The hook seam: the loop calls a [`HookRunner`] at UserPromptSubmit, PreToolUse, PostToolUse,
//! Stop and PreCompact. [`NoHooks`] does nothing; command hooks plug in here later without loop
//! changes.

use async_trait::async_trait;
use serde_json::Value;
use skiff_tools::ToolOutput;

/// What a hook decided.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum HookOutcome {
    /// Go on, optionally adding context for the model.
    #[default]
    Continue,
    /// Go on and add this text for the model (UserPromptSubmit, PostToolUse).
    AddContext(String),
    /// Stop this step: the prompt is rejected / the tool is not run / the turn may not end.
    Block {
        /// Why (shown to the model or the user).
        reason: String,
    },
}

/// Lifecycle hooks.
#[async_trait]
pub trait HookRunner: Send + Sync {
    /// Before a prompt is added to the conversation.
    async fn user_prompt_submit(&self, _prompt: &str) -> HookOutcome {
        HookOutcome::Continue
    }
    /// Before a tool runs (after the permission check).
    async fn pre_tool_use(&self, _tool: &str, _input: &Value, _tool_use_id: &str) -> HookOutcome {
        HookOutcome::Continue
    }
    /// After a tool ran.
    async fn post_tool_use(
        &self,
        _tool: &str,
        _input: &Value,
        _tool_use_id: &str,
        _output: &ToolOutput,
    ) -> HookOutcome {
        HookOutcome::Continue
    }
    /// When the model has finished; `Block` makes it continue with the reason as a prompt.
    async fn stop(&self, _stop_hook_active: bool) -> HookOutcome {
        HookOutcome::Continue
    }
    /// Before the conversation is compacted (`custom_instructions`: the `/compact` focus);
    /// `Block` cancels the compaction.
    async fn pre_compact(
        &self,
        _trigger: crate::event::CompactTrigger,
        _custom_instructions: Option<&str>,
    ) -> HookOutcome {
        HookOutcome::Continue
    }
}

/// No hooks configured.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoHooks;

impl HookRunner for NoHooks {}
