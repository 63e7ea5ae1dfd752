//! `--max-budget-usd`: the session's cost is checked after every model call, before any of its
//! tool calls run. Past the budget the run ends (`error_max_budget_usd`) and the calls the
//! model asked for are answered as not run, so the conversation stays valid.

use skiff_protocol::{ContentBlock, Message, Role, ToolResultBlock, ToolUseBlock};

use crate::core::Core;
use crate::frames::EventSink;

/// The budget, when the session has one and its cost has reached it.
pub(crate) fn exceeded(core: &Core) -> Option<f64> {
    let budget = core.config.max_budget_usd?;
    // A cost that is not a number is never under the budget.
    let cost = core.costs.total_cost_usd;
    (cost.is_nan() || cost >= budget).then_some(budget)
}

/// The text a call that was not run gets.
pub(crate) fn not_run_text(budget: f64) -> String {
    format!(
        "The tool was not run: the session reached its maximum budget (${budget}) before the \
         call could start."
    )
}

/// Answer each of `calls` as not run (one user message, in request order), and show it.
pub(crate) fn answer_not_run(
    core: &mut Core,
    calls: &[ToolUseBlock],
    budget: f64,
    sink: &EventSink,
) {
    if calls.is_empty() {
        return;
    }
    let text = not_run_text(budget);
    let blocks: Vec<ContentBlock> = calls
        .iter()
        .map(|c| ContentBlock::ToolResult(ToolResultBlock::text(c.id.clone(), text.clone(), true)))
        .collect();
    for block in &blocks {
        sink.emit(crate::frames::user_frame(
            Message::blocks(Role::User, vec![block.clone()]),
            Some(serde_json::Value::String(format!("Error: {text}"))),
            sink,
        ));
    }
    let structured = vec![None; blocks.len()];
    core.conversation.push_user(blocks, &structured);
}
