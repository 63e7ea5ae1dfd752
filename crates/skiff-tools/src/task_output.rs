//! `TaskOutput` (alias `BashOutput`) and `TaskStop` (alias `KillShell`): read the output of a
//! background command and stop it, with Claude Code's input schemas and result shapes.

use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::background::{Shell, ShellState};
use crate::context::ToolContext;
use crate::tool::{ToolOutput, TypedTool};
use crate::truncate::truncate_middle;

/// Default wait of a blocking `TaskOutput` (30 s).
const DEFAULT_WAIT_MS: f64 = 30_000.0;
/// Longest wait a call may ask for (10 minutes).
const MAX_WAIT_MS: f64 = 600_000.0;

/// Input of `TaskOutput`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskOutputInput {
    /// The task ID to get output from
    pub task_id: String,
    /// Whether to wait for completion
    #[serde(default = "yes")]
    #[schemars(default = "yes")]
    pub block: bool,
    /// Max wait time in ms
    #[serde(default = "default_wait")]
    #[schemars(default = "default_wait", range(min = 0, max = 600000))]
    pub timeout: f64,
}

fn yes() -> bool {
    true
}

fn default_wait() -> f64 {
    DEFAULT_WAIT_MS
}

/// The `TaskOutput` tool.
#[derive(Debug, Default)]
pub struct TaskOutputTool;

#[async_trait]
impl TypedTool for TaskOutputTool {
    type Input = TaskOutputInput;
    const NAME: &'static str = "TaskOutput";
    const SCHEMA: Option<&'static str> = Some(skiff_protocol::compact_json!(include_str!(
        "schemas/TaskOutput.json"
    )));

    fn description(&self) -> &str {
        "Retrieves output from a background command started with Bash `run_in_background`. \
         Takes the task_id the Bash call returned. Returns the status (running, completed, \
         failed, killed), the exit code once it ended, and the output written since the last \
         TaskOutput call for that task. With block=true (the default) it waits until the \
         command ends or `timeout` ms pass (default 30000); block=false checks at once."
    }

    fn is_read_only(&self) -> bool {
        true
    }

    async fn run(&self, input: TaskOutputInput, ctx: &ToolContext) -> ToolOutput {
        let Some(shell) = ctx.background.get(&input.task_id) else {
            return no_such_task(&input.task_id);
        };
        let mut state = shell.state();
        let mut retrieval = "success";
        if state == ShellState::Running {
            if input.block {
                let ms = if input.timeout.is_finite() {
                    input.timeout.clamp(0.0, MAX_WAIT_MS)
                } else {
                    DEFAULT_WAIT_MS
                };
                state = shell
                    .wait(Duration::from_secs_f64(ms / 1000.0), &ctx.cancel)
                    .await;
                if state == ShellState::Running {
                    retrieval = "timeout";
                }
            } else {
                retrieval = "not_ready";
            }
        }
        if state != ShellState::Running {
            // The model has seen the end now: no separate notice about it.
            shell.take_end_report();
        }
        let max_chars = ctx.config.bash_max_output_chars;
        let (output, skipped) = match shell.read_new((max_chars as u64).saturating_mul(4)) {
            Ok(x) => x,
            Err(e) => {
                return ToolOutput::error(format!(
                    "Cannot read the output of task {} ({}): {e}",
                    shell.id,
                    shell.output_path.display()
                ));
            }
        };
        let mut output = truncate_middle(output.trim_end_matches(['\n', '\r']), max_chars);
        if skipped > 0 {
            output = format!(
                "[{skipped} earlier bytes not shown; {} keeps the beginning and the end of the \
                 output]\n{output}",
                shell.output_path.display()
            );
        }
        render(&shell, state, retrieval, &output)
    }
}

/// The result text and structured result of `TaskOutput`.
fn render(shell: &Shell, state: ShellState, retrieval: &str, output: &str) -> ToolOutput {
    let mut text = format!(
        "<retrieval_status>{retrieval}</retrieval_status>\n\n<task_id>{}</task_id>\n\n\
         <task_type>local_bash</task_type>\n\n<status>{}</status>",
        shell.id,
        state.word()
    );
    let exit_code = match state {
        ShellState::Exited(code) => Some(code),
        _ => None,
    };
    if let Some(code) = exit_code {
        text.push_str(&format!("\n\n<exit_code>{code}</exit_code>"));
    }
    if !output.is_empty() {
        text.push_str(&format!("\n\n<output>\n{output}\n</output>"));
    }
    ToolOutput::text(text).with_structured(json!({
        "retrieval_status": retrieval,
        "task": {
            "task_id": shell.id,
            "task_type": "local_bash",
            "status": state.word(),
            "description": shell.description.as_deref().unwrap_or(&shell.command),
            "output": output,
            "exitCode": exit_code,
        }
    }))
}

fn no_such_task(id: &str) -> ToolOutput {
    ToolOutput::tool_use_error(format!("No task found with ID: {id}"))
}

/// Input of `TaskStop`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskStopInput {
    /// The ID of the background task to stop
    pub task_id: Option<String>,
    /// Deprecated: use task_id instead
    pub shell_id: Option<String>,
}

/// The `TaskStop` tool.
#[derive(Debug, Default)]
pub struct TaskStopTool;

#[async_trait]
impl TypedTool for TaskStopTool {
    type Input = TaskStopInput;
    const NAME: &'static str = "TaskStop";
    const SCHEMA: Option<&'static str> = Some(skiff_protocol::compact_json!(include_str!(
        "schemas/TaskStop.json"
    )));

    fn description(&self) -> &str {
        "Stops a running background command by its task_id (kills its whole process group). \
         Use it to end servers and other long-running commands started with Bash \
         `run_in_background` once they are no longer needed."
    }

    fn is_read_only(&self) -> bool {
        false
    }

    async fn run(&self, input: TaskStopInput, ctx: &ToolContext) -> ToolOutput {
        let Some(id) = input.task_id.or(input.shell_id) else {
            return ToolOutput::tool_use_error("Missing required parameter: task_id");
        };
        let Some(shell) = ctx.background.get(&id) else {
            return no_such_task(&id);
        };
        if !shell.stop() {
            return ToolOutput::tool_use_error(format!(
                "Task {id} is not running (status: {})",
                shell.state().word()
            ));
        }
        // Wait briefly so the status reads `killed` from now on.
        shell
            .wait(
                Duration::from_secs(2),
                &tokio_util::sync::CancellationToken::new(),
            )
            .await;
        shell.take_end_report();
        let message = format!("Successfully stopped task: {id} ({})", shell.command);
        ToolOutput::text(message.clone()).with_structured(json!({
            "message": message,
            "task_id": id,
            "task_type": "local_bash",
            "command": shell.command,
        }))
    }
}
