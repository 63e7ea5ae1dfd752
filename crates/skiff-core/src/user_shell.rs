//! `!command`: a shell command the user typed, run with the Bash tool through the same
//! permission checks, approvals and hooks as the model's calls, then added to the conversation
//! with its output as Claude Code adds it (`<bash-input>`, then `<bash-stdout>` and
//! `<bash-stderr>`), without a model call. The next prompt joins the same user message.

use std::sync::Mutex;

use serde_json::json;
use skiff_protocol::sdk::{SdkMessage, UserMessage};
use skiff_protocol::{ContentBlock, JsonMap, Message, Role, ToolResultContent, ToolUseBlock};

use crate::core::Core;
use crate::dispatch::Dispatcher;
use crate::frames::{new_uuid, now_iso};
use crate::turn_loop::TurnIo;

/// Run `command` for the user and record it; the `user` frame emitted carries the output.
pub(crate) async fn run(core: &mut Core, command: String, io: &TurnIo<'_>) {
    core.sync(&io.live.borrow());
    let mode = io.live.borrow().mode;
    let call = ToolUseBlock {
        id: format!("user_shell_{}", new_uuid()),
        name: "Bash".into(),
        input: json!({"command": command, "description": "The user's shell command"}),
        cache_control: None,
    };
    let dispatcher = Dispatcher {
        tools: &core.tools,
        ctx: &core.ctx,
        permissions: core.permissions.as_ref(),
        mode,
        approver: &core.approver,
        requester: io.requester,
        hooks: core.hooks.as_ref(),
        sink: io.sink,
        max_result_chars: core.config.max_tool_result_chars,
        progress_interval: core.config.progress_interval,
        max_parallel: 1,
        tool_output: core.config.tool_output,
        results_dir: core.config.tool_results_dir.as_deref(),
        switched_mode: Mutex::new(None),
        hook_common: core.hook_common(),
        hook_stop: Mutex::new(None),
    };
    let results = dispatcher
        .run_all(std::slice::from_ref(&call), io.cancel)
        .await;
    let Some(result) = results.into_iter().next() else {
        return;
    };
    let text = match &result.block.content {
        Some(ToolResultContent::Text(t)) => t.clone(),
        Some(ToolResultContent::Blocks(blocks)) => blocks
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        None => String::new(),
    };
    let (stdout, stderr) = if result.block.is_error == Some(true) {
        (String::new(), text)
    } else {
        (text, String::new())
    };
    let blocks = vec![
        ContentBlock::text(format!("<bash-input>{command}</bash-input>")),
        ContentBlock::text(format!(
            "<bash-stdout>{stdout}</bash-stdout><bash-stderr>{stderr}</bash-stderr>"
        )),
    ];
    core.conversation.push_user(blocks.clone(), &[]);
    core.conversation.turn_complete();
    io.sink.emit(SdkMessage::User(UserMessage {
        message: Message::blocks(Role::User, blocks),
        parent_tool_use_id: None,
        session_id: io.sink.session_id().to_owned(),
        uuid: new_uuid(),
        timestamp: Some(now_iso()),
        tool_use_result: None,
        extra: JsonMap::new(),
    }));
}
