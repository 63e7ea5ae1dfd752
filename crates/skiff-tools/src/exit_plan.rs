//! ExitPlanMode: in plan mode the model presents its plan with this tool; the session asks the
//! user, and on approval leaves plan mode (the permission layer does the asking and the
//! switching; this tool only answers the model).

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::ToolContext;
use crate::tool::{ToolOutput, TypedTool};

/// What the model is told when the user approves its plan (Claude Code's text).
pub const PLAN_APPROVED: &str = "User has approved your plan. You can now start coding. Start with updating your todo list if applicable";

/// Input of ExitPlanMode.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ExitPlanModeInput {
    /// The plan you came up with, that you want to run by the user for approval. Supports
    /// markdown. The plan should be pretty concise.
    pub plan: String,
}

/// The ExitPlanMode tool.
#[derive(Debug, Default)]
pub struct ExitPlanModeTool;

#[async_trait]
impl TypedTool for ExitPlanModeTool {
    type Input = ExitPlanModeInput;
    const NAME: &'static str = "ExitPlanMode";
    const SCHEMA: Option<&'static str> = Some(skiff_protocol::compact_json!(include_str!(
        "schemas/ExitPlanMode.json"
    )));

    fn description(&self) -> &str {
        "Use this tool when you are in plan mode and have finished planning and are ready to \
         code: it presents your plan to the user for approval. Only use it for tasks that \
         require planning the implementation steps of a task that needs writing code; for \
         research tasks (gathering information, reading files, understanding the codebase) do \
         not use it."
    }

    fn is_read_only(&self) -> bool {
        true
    }

    async fn run(&self, input: ExitPlanModeInput, _ctx: &ToolContext) -> ToolOutput {
        if input.plan.trim().is_empty() {
            return ToolOutput::tool_use_error("The plan is empty: describe what you will do.");
        }
        ToolOutput::text(PLAN_APPROVED)
    }
}
