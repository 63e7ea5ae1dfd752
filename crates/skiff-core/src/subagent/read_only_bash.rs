//! Bash for read-only agents (Explore, Plan): commands that change nothing run as usual, the
//! others are refused with a result the model can act on.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use skiff_tools::bash_readonly::is_read_only_command;
use skiff_tools::{Tool, ToolContext, ToolOutput};

/// Wraps the Bash tool; refuses commands that are not known to be read-only.
pub(crate) struct ReadOnlyBash {
    inner: Arc<dyn Tool>,
}

impl ReadOnlyBash {
    /// Wrap `inner` (the session's Bash).
    pub fn new(inner: Arc<dyn Tool>) -> Self {
        Self { inner }
    }
}

#[async_trait]
impl Tool for ReadOnlyBash {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn description(&self) -> &str {
        self.inner.description()
    }

    fn input_schema(&self) -> &Value {
        self.inner.input_schema()
    }

    fn definition_schema(&self) -> skiff_protocol::InputSchema {
        self.inner.definition_schema()
    }

    fn is_read_only(&self) -> bool {
        true
    }

    fn is_concurrency_safe(&self, input: &Value) -> bool {
        self.inner.is_concurrency_safe(input)
    }

    async fn validate(&self, input: &Value, ctx: &ToolContext) -> Result<(), ToolOutput> {
        self.inner.validate(input, ctx).await
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let command = input.get("command").and_then(Value::as_str).unwrap_or("");
        let background = input.get("run_in_background").and_then(Value::as_bool) == Some(true);
        if !background && is_read_only_command(command) {
            return self.inner.call(input, ctx).await;
        }
        ToolOutput::tool_use_error(format!(
            "This agent is read-only: `{command}` may change files or system state, so it was \
             not run. Use read-only commands (ls, cat, head, git status, git log, git diff, \
             grep, find) or the Read, Grep and Glob tools."
        ))
    }
}
