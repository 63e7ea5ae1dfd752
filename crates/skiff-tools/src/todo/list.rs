//! The session's todo list and its entries (what `TodoWrite` replaces and front ends show).

use std::sync::Mutex;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A todo's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
}

/// One entry of the list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Todo {
    /// Imperative: "Run the tests".
    #[schemars(length(min = 1))]
    pub content: String,
    /// Its state.
    pub status: TodoStatus,
    /// Present continuous: "Running the tests".
    #[serde(rename = "activeForm")]
    #[schemars(length(min = 1))]
    pub active_form: String,
}

/// The session's todo list.
#[derive(Debug, Default)]
pub struct TodoList(Mutex<Vec<Todo>>);

impl TodoList {
    /// The current list.
    pub fn get(&self) -> Vec<Todo> {
        self.0.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// Replace the list; returns the old one.
    pub fn replace(&self, todos: Vec<Todo>) -> Vec<Todo> {
        match self.0.lock() {
            Ok(mut l) => std::mem::replace(&mut *l, todos),
            Err(poisoned) => std::mem::replace(&mut *poisoned.into_inner(), todos),
        }
    }

    /// The list as a reminder for the model (after compaction), or `None` when it is empty.
    pub fn reminder(&self) -> Option<String> {
        let todos = self.get();
        if todos.is_empty() {
            return None;
        }
        let list = serde_json::to_string(&todos).unwrap_or_default();
        Some(format!(
            "<system-reminder>\nYour todo list, kept from before the conversation was summarized \
             (continue to keep it up to date with TodoWrite):\n\n{list}\n</system-reminder>"
        ))
    }
}
