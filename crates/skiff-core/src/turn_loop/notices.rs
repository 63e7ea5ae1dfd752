//! What the model hears of the background commands, and the checkpoints user frames name.

use serde_json::Value;
use skiff_protocol::ContentBlock;
use skiff_protocol::sdk::SdkMessage;

use crate::core::Core;

/// A notice for each background command that ended since the model last heard of it (the
/// main session's loop only), as Claude Code's `<task-notification>`.
pub(super) fn background_notices(core: &Core) -> Vec<ContentBlock> {
    if core.config.subagent.is_some() {
        return Vec::new();
    }
    core.ctx
        .background
        .take_ended()
        .into_iter()
        .map(|shell| {
            let state = shell.state();
            let what = shell.description.as_deref().unwrap_or(&shell.command);
            let how = match state {
                skiff_tools::background::ShellState::Exited(code) => {
                    format!("{} (exit code {code})", state.word())
                }
                _ => format!("was {}", state.word()),
            };
            let path = shell.output_path.display();
            ContentBlock::text(format!(
                "<task-notification>\n<task-id>{}</task-id>\n<output-file>{path}</output-file>\n<status>{}</status>\n<summary>Background command \"{what}\" {how}</summary>\n</task-notification>\nRead the output file to retrieve the result: {path}",
                shell.id,
                state.word()
            ))
        })
        .collect()
}

/// The background commands still running, as Stop hooks get them.
pub(super) fn background_tasks(ctx: &skiff_tools::ToolContext) -> Value {
    ctx.background
        .list()
        .iter()
        .filter(|s| s.state() == skiff_tools::background::ShellState::Running)
        .map(|s| {
            serde_json::json!({
                "task_id": s.id,
                "task_type": "local_bash",
                "command": s.command,
                "description": s.description,
                "output_file": s.output_path.display().to_string(),
            })
        })
        .collect()
}

/// Name a file checkpoint after a user frame, so a host can rewind to it.
pub(super) fn mark_frame(core: &Core, frame: &SdkMessage) {
    if let SdkMessage::User(u) = frame {
        core.ctx.changes.mark(&u.uuid);
    }
}
