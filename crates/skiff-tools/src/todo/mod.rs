//! `TodoWrite`: the model's task list for the session, replaced whole on each call, with
//! Claude Code's schema, result text and `{oldTodos, newTodos}` structured result. The list
//! lives in the session's [`TodoList`] so front ends can show it and compaction can keep it.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::context::ToolContext;
use crate::tool::{ToolOutput, TypedTool};

pub mod list;

pub use list::{Todo, TodoList, TodoStatus};

/// The text the model gets back (Claude Code's).
pub const TODO_RESULT: &str = "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. Please proceed with the current tasks if applicable";

/// Input of `TodoWrite`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoWriteInput {
    /// The updated todo list
    pub todos: Vec<Todo>,
}

/// The `TodoWrite` tool.
#[derive(Debug, Default)]
pub struct TodoWriteTool;

#[async_trait]
impl TypedTool for TodoWriteTool {
    type Input = TodoWriteInput;
    const NAME: &'static str = "TodoWrite";
    const SCHEMA: Option<&'static str> = Some(skiff_protocol::compact_json!(include_str!(
        "../schemas/TodoWrite.json"
    )));

    fn description(&self) -> &str {
        "Your task list for this session: tracks multi-step work (three or more steps, or \
         several tasks) and shows the user your progress. Each call replaces the whole list. \
         Keep exactly one todo in_progress, mark each completed as soon as it is done, never \
         while its tests fail or its work is partial."
    }

    fn is_read_only(&self) -> bool {
        // It changes nothing outside the session, so no permission prompt is needed for it.
        true
    }

    fn is_concurrency_safe(&self, _input: &TodoWriteInput) -> bool {
        // Two lists written at once would race: one at a time, in request order.
        false
    }

    async fn run(&self, input: TodoWriteInput, ctx: &ToolContext) -> ToolOutput {
        let new = input.todos;
        let old = ctx.todos.replace(new.clone());
        ToolOutput::text(TODO_RESULT).with_structured(json!({
            "oldTodos": old,
            "newTodos": new,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reminder_lists_the_todos() {
        let list = TodoList::default();
        assert!(list.reminder().is_none());
        list.replace(vec![Todo {
            content: "Run tests".into(),
            status: TodoStatus::InProgress,
            active_form: "Running tests".into(),
        }]);
        let r = list.reminder().unwrap();
        assert!(
            r.contains(r#""status":"in_progress""#)
                && r.contains(r#""activeForm":"Running tests""#)
        );
    }
}
