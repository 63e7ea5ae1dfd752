//! One turn of the agent loop: a user message in, model calls and tool rounds until the model
//! answers without tool calls (or a limit, an error or an interrupt ends it), one `result`
//! frame out. The session actor runs turns one at a time on its [`Core`].
//!
//! Each round: [`limits::check_limits`], [`model::ask_model`], then [`tools::run_tools`] for a
//! reply with tool calls or [`stop::continue_or_stop`] for one without.

mod frames;
mod limits;
mod model;
mod notices;
mod state;
mod stop;
mod tools;

use skiff_protocol::ContentBlock;
use skiff_protocol::sdk::{ResultMessage, SdkMessage};

use crate::core::Core;
use crate::event::UserInput;
use crate::frames::new_uuid;
use crate::hooks::{HookEvent, fields, fire, reminder};
pub(crate) use crate::turn_io::TurnIo;
pub use frames::{COMPAT_VERSION, SKIFF_VERSION};
use model::Asked;
use state::{End, Flow, RunState};
pub use stop::{CONTINUE_PROMPT, STOP_HOOK_FEEDBACK};

/// Sent with each prompt while the session is in plan mode.
const PLAN_MODE_REMINDER: &str = "<system-reminder>\nPlan mode is active. The user indicated that they do not want you to execute yet -- you MUST NOT make any edits, run any non-readonly tools (including changing configs or making commits), or otherwise make any changes to the system. Research with read-only tools, then present your plan by calling the ExitPlanMode tool; the user approves it before anything is changed.\n</system-reminder>";

/// Run one user message through the loop; emits the frames and returns the `result` frame
/// (also emitted).
pub(crate) async fn run_turn(core: &mut Core, input: UserInput, io: &TurnIo<'_>) -> ResultMessage {
    core.sync(&io.live.borrow());
    let mut st = RunState::new(core.config.max_tokens);
    core.prompt_id = Some(new_uuid());
    let mut before = prompt_hooks(core, &input, io).await;
    core.receive_late_tools().await;
    core.refresh_mcp().await;
    io.sink
        .emit_init(frames::init_frame(core), core.config.late_init.as_ref());
    // The user's prompt (not a subagent's): `/mcp__server__prompt args` is the server's prompt.
    let users = before.is_ok() && core.config.subagent.is_none() && !io.verbatim;
    let input = if users {
        let prompts = core.config.commands.mcp().clone();
        match crate::commands::mcp_prompt::apply(&prompts, input, io.cancel).await {
            Ok(input) => input,
            Err(e) => {
                before = Err(End::Failed(e));
                UserInput::Text(String::new())
            }
        }
    } else {
        input
    };
    let (input, command) =
        crate::commands::turn::TurnCommand::begin(core, input, before.is_ok() && !io.verbatim, io)
            .await;
    st.command = command;
    // `@server:uri` mentions attach the resources after the prompt.
    let input = if users && before.is_ok() {
        let attached = core
            .mentioned_resources(&input.text(), io.sink, io.cancel)
            .await;
        if attached.is_empty() {
            input
        } else {
            let mut blocks = input.into_blocks();
            blocks.extend(attached);
            UserInput::Blocks(blocks)
        }
    } else {
        input
    };
    let end = match before {
        Ok(blocks) => run_loop(core, input, blocks, io, &mut st).await,
        Err(end) => end,
    };
    std::mem::take(&mut st.command).end(core, io);
    // Whatever ended the turn, the history stays valid for the next request.
    core.conversation.repair();
    let result = frames::result_frame(core, &st, end, io.sink);
    core.conversation.turn_complete();
    io.sink.emit(SdkMessage::Result(result.clone()));
    result
}

/// SessionStart (first prompt of a session, or after `/clear`) and UserPromptSubmit: the text
/// blocks they add before the prompt, or how the run ends when a hook blocks it.
async fn prompt_hooks(
    core: &mut Core,
    input: &UserInput,
    io: &TurnIo<'_>,
) -> Result<Vec<ContentBlock>, End> {
    let mut blocks = Vec::new();
    if let Some(source) = core.session_source.take() {
        core.session_started = true;
        let common = core.hook_common();
        let r = fire(
            core.hooks.as_ref(),
            io.sink,
            &common,
            HookEvent::SessionStart,
            Some(source),
            || fields([("source", source.into())]),
        )
        .await;
        for text in r.output.iter().chain(&r.context) {
            blocks.push(ContentBlock::text(reminder(
                HookEvent::SessionStart,
                "additional context",
                text,
            )));
        }
    }
    if core.config.subagent.is_some() {
        // A subagent's prompt comes from the model, not the user.
        return Ok(blocks);
    }
    let common = core.hook_common();
    let r = fire(
        core.hooks.as_ref(),
        io.sink,
        &common,
        HookEvent::UserPromptSubmit,
        None,
        || fields([("prompt", input.text().into())]),
    )
    .await;
    if let Some(reason) = r.block.or(r.stop) {
        return Err(End::Failed(format!(
            "UserPromptSubmit operation blocked by hook: {}",
            reason.trim_end()
        )));
    }
    for out in &r.output {
        blocks.push(ContentBlock::text(reminder(
            HookEvent::UserPromptSubmit,
            "success",
            out,
        )));
    }
    for ctx in &r.context {
        blocks.push(ContentBlock::text(reminder(
            HookEvent::UserPromptSubmit,
            "additional context",
            ctx,
        )));
    }
    Ok(blocks)
}

/// The run's rounds, from the user's message to how the run ends.
async fn run_loop(
    core: &mut Core,
    input: UserInput,
    hook_blocks: Vec<ContentBlock>,
    io: &TurnIo<'_>,
    st: &mut RunState,
) -> End {
    let mut blocks = Vec::new();
    if core.conversation.take_memory_turn()
        && let Some(m) = &core.config.memory
    {
        blocks.push(ContentBlock::text(m.clone()));
    }
    blocks.extend(hook_blocks);
    if core.config.permission_mode == crate::PermissionMode::Plan {
        blocks.push(ContentBlock::text(PLAN_MODE_REMINDER));
    }
    blocks.extend(input.into_blocks());
    blocks.extend(notices::background_notices(core));
    core.conversation.push_user(blocks, &[]);

    loop {
        if let Err(end) = limits::check_limits(core, io, st) {
            return end;
        }
        let reply = match model::ask_model(core, io, st).await {
            Asked::Reply(reply) => reply,
            Asked::Again => continue,
            Asked::End(end) => return end,
        };
        // Calls are run whatever the stop reason says (some servers end with end_turn).
        st.actions += reply
            .tool_uses
            .iter()
            .filter(|t| crate::act_nudge::acts(&t.name))
            .count();

        let flow = if reply.tool_uses.is_empty() {
            stop::continue_or_stop(core, io, st, reply.stop, &reply.text).await
        } else {
            tools::run_tools(core, io, st, &reply.tool_uses, &reply.text).await
        };
        if let Flow::End(end) = flow {
            return end;
        }
    }
}
