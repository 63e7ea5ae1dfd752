//! One turn of the agent loop: a user message in, model calls and tool rounds until the model
//! answers without tool calls (or a limit, an error or an interrupt ends it), one `result`
//! frame out. The session actor runs turns one at a time on its [`Core`].

use std::time::Instant;

use serde_json::Value;
use skiff_protocol::sdk::{
    PermissionDenial, ResultMessage, ResultSubtype, SdkMessage, SystemInit, SystemMessage,
};
use skiff_protocol::{ContentBlock, JsonMap, Message, Role, StopReason, ToolUseBlock, Usage};

use crate::core::Core;
use crate::dispatch::Dispatcher;
use crate::event::UserInput;
use crate::frames::{EventSink, new_uuid};
use crate::hooks::{HookEvent, fields, fire, reminder};
use crate::model_call::{api_error_frame, call_model};
pub(crate) use crate::turn_io::TurnIo;

/// Version reported as `claude_code_version`: the Claude Code release whose wire protocol skiff
/// follows, the one the fixtures were captured from and the Agent SDK flows are checked
/// against (`sdk-tests/`). The SDKs require a semver ≥ 2.0.0 (the Python SDK's
/// `verbatim_prompts` ≥ 2.1.248); skiff's own version is `skiff_version` beside it.
pub const COMPAT_VERSION: &str = "2.1.330";

/// skiff's own version (`skiff_version` in `system/init` and the `initialize` answer).
pub const SKIFF_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Text sent to continue an answer cut off by max_tokens.
pub const CONTINUE_PROMPT: &str = "Your previous response was cut off by the output token limit. \
Continue exactly where it stopped, without repeating anything.";

/// Start of the message that carries a blocking Stop hook's reason to the model.
pub const STOP_HOOK_FEEDBACK: &str = "Stop hook feedback:\n";

/// Sent with each prompt while the session is in plan mode.
const PLAN_MODE_REMINDER: &str = "<system-reminder>\nPlan mode is active. The user indicated that they do not want you to execute yet -- you MUST NOT make any edits, run any non-readonly tools (including changing configs or making commits), or otherwise make any changes to the system. Research with read-only tools, then present your plan by calling the ExitPlanMode tool; the user approves it before anything is changed.\n</system-reminder>";

/// Per-run counters.
struct RunState {
    started: Instant,
    num_turns: u32,
    api_ms: u64,
    usage: Usage,
    denials: Vec<PermissionDenial>,
    last_stop: Option<StopReason>,
    /// Text of answers continued after max_tokens, joined.
    text_prefix: String,
    continuations: u32,
    max_tokens: u32,
    merge_next_assistant: bool,
    stop_hook_active: bool,
    /// Continuations forced by Stop hooks in a row.
    stop_continuations: u32,
    /// What a slash command changed for this turn (grants, model).
    command: crate::commands::turn::TurnCommand,
    /// Failing calls sent again and again ([`crate::loop_guard`]).
    loop_guard: crate::loop_guard::LoopGuard,
    /// One retry after a server's context-size error ([`crate::overflow`]).
    overflow: crate::overflow::OverflowRetry,
    /// Structured output's attempts ([`crate::structured`]).
    structured: crate::structured::Attempts,
    /// The valid structured output, once given.
    structured_output: Option<Value>,
}

/// How a run ended (before it becomes a result frame).
enum End {
    Completed(String),
    MaxTurns,
    Budget(f64),
    Interrupted {
        during_tools: bool,
    },
    ApiError(skiff_llm::LlmError),
    Failed(String),
    /// The same failing call again and again ([`crate::loop_guard`]).
    Loop(crate::loop_guard::Repeated),
    /// No valid structured output within the attempts allowed.
    StructuredRetries(String),
}

/// Run one user message through the loop; emits the frames and returns the `result` frame
/// (also emitted).
pub(crate) async fn run_turn(core: &mut Core, input: UserInput, io: &TurnIo<'_>) -> ResultMessage {
    core.sync(&io.live.borrow());
    let mut st = RunState {
        started: Instant::now(),
        num_turns: 0,
        api_ms: 0,
        usage: Usage::default(),
        denials: Vec::new(),
        last_stop: None,
        text_prefix: String::new(),
        continuations: 0,
        max_tokens: core.config.max_tokens,
        merge_next_assistant: false,
        stop_hook_active: false,
        stop_continuations: 0,
        command: Default::default(),
        loop_guard: Default::default(),
        overflow: Default::default(),
        structured: Default::default(),
        structured_output: None,
    };
    core.prompt_id = Some(new_uuid());
    let mut before = prompt_hooks(core, &input, io).await;
    core.receive_late_tools().await;
    core.refresh_mcp().await;
    io.sink.emit(init_frame(core));
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
    let result = result_frame(core, &st, end, io.sink);
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

/// Consecutive continuations a Stop hook may force before the run ends anyway.
const MAX_STOP_CONTINUATIONS: u32 = 8;

async fn run_loop(
    core: &mut Core,
    input: UserInput,
    hook_blocks: Vec<ContentBlock>,
    io: &TurnIo<'_>,
    st: &mut RunState,
) -> End {
    let (sink, cancel) = (io.sink, io.cancel);
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
    blocks.extend(background_notices(core));
    core.conversation.push_user(blocks, &[]);

    loop {
        if cancel.is_cancelled() {
            return End::Interrupted {
                during_tools: false,
            };
        }
        // Checked before counting: `num_turns` never exceeds `--max-turns`.
        if let Some(max) = core.config.max_turns
            && st.num_turns >= max
        {
            return End::MaxTurns;
        }
        st.num_turns += 1;
        if let Some(budget) = crate::budget::exceeded(core) {
            return End::Budget(budget);
        }
        core.sync(&io.live.borrow());
        // The MCP servers' tools as they are now (a call may have changed them).
        core.refresh_mcp().await;
        // Deferred tools the model loaded join the tools, after the ones sent from the start.
        core.sync_deferred();
        // The output the window has room for: a small window gets a smaller max_tokens.
        let room = {
            let (conv, mut env) = core.context_parts(sink, cancel);
            crate::context::prepare(conv, &mut env).await
        };
        core.conversation.repair();
        core.notes.emit(sink, "reasoning");
        let conv = &mut core.conversation;
        let prefix = conv
            .request_prefix(core.provider.history_encoding())
            .cloned();
        let request =
            core.template
                .build(conv.messages(), prefix.as_ref(), st.max_tokens.min(room));
        let reply = call_model(core.provider.as_ref(), &request, sink, cancel).await;
        core.notes.add(core.provider.take_notices());
        core.notes.emit(sink, "provider");
        let reply = match reply {
            Ok(r) => r,
            Err(crate::model_call::Failed {
                error: skiff_llm::LlmError::Cancelled,
                api_ms,
                partial,
            }) => {
                st.api_ms += api_ms;
                // What the model had said stays in the conversation, as with Claude Code.
                if let Some(message) = partial.into_message(&core.config.model) {
                    core.conversation
                        .push_reply(message, st.merge_next_assistant);
                }
                return End::Interrupted {
                    during_tools: false,
                };
            }
            Err(crate::model_call::Failed {
                error: e,
                api_ms: ms,
                ..
            }) => {
                st.api_ms += ms;
                // [hook: overflow] A context-size error: make the history fit and send again,
                // once, without counting a turn.
                if st.overflow.recover(core, &e, sink, cancel).await {
                    st.num_turns -= 1;
                    continue;
                }
                // [hook: fallback] Overloaded again and again: the fallback model answers.
                if crate::fallback::switch(core, &e, io) {
                    st.num_turns -= 1;
                    continue;
                }
                sink.emit(api_error_frame(&e, sink));
                return End::ApiError(e);
            }
        };
        st.overflow.succeeded();
        st.api_ms += reply.api_ms;
        let msg = reply.message;
        core.conversation
            .note_request_usage(msg.usage.total_input());
        st.usage.accumulate(&msg.usage);
        core.last_usage = Some(msg.usage.clone());
        let served = core.provider.served_model(&core.config.model);
        let (_, unknown) = core
            .costs
            .add(&core.config.model, &msg.usage, served.as_ref());
        // A local server's models cost nothing: no news there.
        if unknown && !core.provider.is_local() {
            sink.notice(
                "pricing",
                "warning",
                format!(
                    "no price known for model {}; its cost is counted as $0",
                    core.config.model
                ),
            );
        }
        st.last_stop = msg.stop_reason.clone();
        let tool_uses: Vec<ToolUseBlock> = msg
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolUse(t) => Some(t.clone()),
                _ => None,
            })
            .collect();
        let cut_tool = tool_uses.iter().any(|t| !t.input.is_object());
        let stop = msg.stop_reason.clone().unwrap_or(StopReason::EndTurn);

        if stop == StopReason::MaxTokens && cut_tool {
            // A tool call cut in half cannot be run or sent back: ask again with more room.
            let cap = skiff_llm::model_info(&core.config.model)
                .map_or(64_000, |i| i.max_output_tokens as u32);
            if st.max_tokens < cap {
                st.max_tokens = (st.max_tokens.saturating_mul(2)).min(cap);
                sink.notice(
                    "max_tokens",
                    "warning",
                    format!(
                        "a tool call was cut off at the output limit; retrying with max_tokens {}",
                        st.max_tokens
                    ),
                );
                continue;
            }
            return End::Failed(format!(
                "the model's response was cut off at max_tokens ({}) in the middle of a tool call",
                st.max_tokens
            ));
        }

        // A tool input that is not a JSON object (the model wrote invalid JSON) goes to the
        // dispatcher as it is, which answers it with an error result; the history keeps `{}`
        // so that the next request is valid.
        let mut msg = msg;
        for block in &mut msg.content {
            if let ContentBlock::ToolUse(t) = block
                && !t.input.is_object()
            {
                t.input = Value::Object(serde_json::Map::new());
            }
        }
        let assistant_text = msg.text();
        core.conversation.push_reply(msg, st.merge_next_assistant);
        st.merge_next_assistant = false;
        if let Ok(mut snapshot) = core.context_snapshot.lock() {
            *snapshot = Some(core.context_usage());
        }
        // [hook: budget] Past the budget after this call: nothing more runs.
        if let Some(budget) = crate::budget::exceeded(core) {
            crate::budget::answer_not_run(core, &tool_uses, budget, sink);
            return End::Budget(budget);
        }

        if tool_uses.is_empty() && stop == StopReason::ToolUse {
            // The model asked for a tool and no call came (a server that lost it): never a
            // success with nothing run.
            return End::Failed(
                "the model stopped to use a tool (stop_reason tool_use) but the response had no \
                 tool call; the server may not support tool calls with this model"
                    .to_owned(),
            );
        }
        match stop {
            // Calls are run whatever the stop reason says (some servers end with end_turn).
            _ if !tool_uses.is_empty() => {
                let mode = io.live.borrow().mode;
                let hook_common = core.hook_common();
                let dispatcher = Dispatcher {
                    tools: &core.tools,
                    ctx: &core.ctx,
                    permissions: core.permissions.as_ref(),
                    mode,
                    approver: &core.approver,
                    requester: io.requester,
                    hooks: core.hooks.as_ref(),
                    sink,
                    max_result_chars: core.config.max_tool_result_chars,
                    progress_interval: core.config.progress_interval,
                    max_parallel: core.config.max_parallel_tools,
                    results_dir: core.config.tool_results_dir.as_deref(),
                    switched_mode: std::sync::Mutex::new(None),
                    hook_common,
                    hook_stop: std::sync::Mutex::new(None),
                    tool_output: core.config.tool_output,
                };
                let mut results = dispatcher.run_all(&tool_uses, cancel).await;
                core.note_tool_calls(&tool_uses);
                crate::side_calls::absorb(&core.ctx, &mut core.costs, core.provider.as_ref(), sink);
                let switched = dispatcher
                    .switched_mode
                    .into_inner()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                let hook_stop = dispatcher
                    .hook_stop
                    .into_inner()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                core.collect_subagent_costs(&mut st.usage);
                // The client may have chosen the next mode while approving; otherwise default.
                let switched =
                    switched.filter(|_| io.live.borrow().mode == crate::PermissionMode::Plan);
                if let Some(mode) = switched {
                    io.live.send_modify(|l| l.mode = mode);
                    core.sync(&io.live.borrow());
                    sink.mode_changed(mode.as_str());
                    sink.send(crate::Event::ModeChanged(mode));
                    sink.notice(
                        "permission_mode",
                        "info",
                        format!("The plan was approved: permission mode is now {mode}."),
                    );
                }
                st.command
                    .after_tools(core, io, &tool_uses, &mut results)
                    .await;
                // [hook: loop guard] The same failing call again: a note, then the end.
                let repeated = st
                    .loop_guard
                    .observe(&tool_uses, &mut results, &core.ctx)
                    .await;
                let structured_calls = structured_calls(core, &tool_uses, &results);
                let mut blocks = Vec::with_capacity(results.len());
                let mut structured: Vec<Option<Value>> = Vec::with_capacity(results.len());
                for r in results {
                    if let Some(d) = r.denial {
                        st.denials.push(d);
                    }
                    let block = ContentBlock::ToolResult(r.block);
                    let frame = crate::frames::user_frame(
                        Message::blocks(Role::User, vec![block.clone()]),
                        r.structured.clone(),
                        sink,
                    );
                    mark_frame(core, &frame);
                    sink.emit(frame);
                    blocks.push(block);
                    structured.push(r.structured);
                }
                blocks.extend(background_notices(core));
                core.conversation.push_user(blocks, &structured);
                if cancel.is_cancelled() {
                    return End::Interrupted { during_tools: true };
                }
                if let Some(repeated) = repeated {
                    let go_on = crate::loop_guard::client_lets_it_go_on(
                        core.approver.as_ref(),
                        io.requester,
                        &repeated,
                    )
                    .await;
                    if !go_on {
                        return End::Loop(repeated);
                    }
                    st.loop_guard.forgive(&repeated);
                }
                if let Some(reason) = hook_stop {
                    sink.notice(
                        "hook",
                        "warning",
                        format!("A hook stopped the run: {reason}"),
                    );
                    return End::Completed(reason);
                }
                // [hook: structured output] A valid StructuredOutput call ends the run; too
                // many invalid ones end it with an error.
                if let Some(calls) = structured_calls {
                    use crate::structured::Next;
                    let max = core
                        .config
                        .json_schema
                        .as_ref()
                        .map_or(crate::structured::DEFAULT_MAX_RETRIES, |s| s.max_attempts());
                    match st.structured.after_tools(calls, max) {
                        Next::Done(value) => {
                            st.structured_output = Some(value);
                            return End::Completed(format!("{}{assistant_text}", st.text_prefix));
                        }
                        Next::GiveUp(why) => return End::StructuredRetries(why),
                        Next::Continue | Next::Enforce => {}
                    }
                }
            }
            StopReason::PauseTurn => {
                st.merge_next_assistant = true;
            }
            StopReason::MaxTokens if st.continuations < core.config.max_continuations => {
                st.continuations += 1;
                st.text_prefix.push_str(&assistant_text);
                core.conversation
                    .push_user(vec![ContentBlock::text(CONTINUE_PROMPT)], &[]);
            }
            _ => {
                let text = format!("{}{assistant_text}", st.text_prefix);
                // [hook: structured output] An answer without the StructuredOutput call: the
                // model is told to call it, once.
                if core.config.json_schema.is_some() && core.config.subagent.is_none() {
                    use crate::structured::Next;
                    match st.structured.after_answer() {
                        Next::Enforce => {
                            core.conversation.push_user(
                                vec![ContentBlock::text(crate::structured::ENFORCE)],
                                &[],
                            );
                            continue;
                        }
                        Next::GiveUp(why) => return End::StructuredRetries(why),
                        Next::Continue | Next::Done(_) => {}
                    }
                }
                let common = core.hook_common();
                let active = st.stop_hook_active;
                let subagent = core.config.subagent.clone();
                let event = if subagent.is_some() {
                    HookEvent::SubagentStop
                } else {
                    HookEvent::Stop
                };
                let hook = fire(
                    core.hooks.as_ref(),
                    sink,
                    &common,
                    event,
                    subagent.as_ref().map(|s| s.agent_type.as_str()),
                    || match &subagent {
                        Some(sub) => fields([
                            ("stop_hook_active", active.into()),
                            ("agent_id", sub.agent_id.clone().into()),
                            ("agent_type", sub.agent_type.clone().into()),
                            (
                                "agent_transcript_path",
                                sub.agent_transcript
                                    .as_ref()
                                    .map(|p| p.display().to_string())
                                    .unwrap_or_default()
                                    .into(),
                            ),
                            ("last_assistant_message", assistant_text.clone().into()),
                        ]),
                        None => fields([
                            ("stop_hook_active", active.into()),
                            ("last_assistant_message", assistant_text.clone().into()),
                            ("background_tasks", background_tasks(&core.ctx)),
                            ("session_crons", Value::Array(Vec::new())),
                        ]),
                    },
                )
                .await;
                if let Some(reason) = hook.stop {
                    sink.notice(
                        "hook",
                        "warning",
                        format!("A hook stopped the run: {reason}"),
                    );
                    return End::Completed(text);
                }
                if let Some(reason) = hook.block
                    && st.stop_continuations < MAX_STOP_CONTINUATIONS
                {
                    st.stop_continuations += 1;
                    st.stop_hook_active = true;
                    let feedback = format!("{STOP_HOOK_FEEDBACK}{reason}");
                    core.conversation
                        .push_user(vec![ContentBlock::text(feedback)], &[]);
                    continue;
                }
                return End::Completed(text);
            }
        }
    }
}

/// The round's `StructuredOutput` calls, valid (their input) or not (the error sent back), in
/// request order; `None` when the session has no structured output.
fn structured_calls(
    core: &Core,
    tool_uses: &[ToolUseBlock],
    results: &[crate::dispatch::CallResult],
) -> Option<Vec<Result<Value, String>>> {
    if core.config.json_schema.is_none() || core.config.subagent.is_some() {
        return None;
    }
    Some(
        tool_uses
            .iter()
            .zip(results)
            .filter(|(call, _)| call.name == crate::structured::STRUCTURED_OUTPUT)
            .map(|(call, r)| {
                if r.block.is_error == Some(true) {
                    Err(r
                        .block
                        .content
                        .as_ref()
                        .map(crate::structured::result_text)
                        .unwrap_or_default())
                } else {
                    Ok(call.input.clone())
                }
            })
            .collect(),
    )
}

/// A notice for each background command that ended since the model last heard of it (the
/// main session's loop only), as Claude Code's `<task-notification>`.
fn background_notices(core: &Core) -> Vec<ContentBlock> {
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
fn background_tasks(ctx: &skiff_tools::ToolContext) -> Value {
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
fn mark_frame(core: &Core, frame: &SdkMessage) {
    if let SdkMessage::User(u) = frame {
        core.ctx.changes.mark(&u.uuid);
    }
}

fn init_frame(core: &Core) -> SdkMessage {
    // The TypeScript SDK's type has these arrays (`plugins` is set when plugins are loaded).
    let mut extra = core.config.init_extra.clone();
    extra.insert(
        "skills".into(),
        Value::from(core.config.commands.skill_names()),
    );
    for key in ["skills", "plugins"] {
        extra.entry(key).or_insert_with(|| Value::Array(Vec::new()));
    }
    extra.insert("skiff_version".into(), SKIFF_VERSION.into());
    SdkMessage::System(SystemMessage::Init(SystemInit {
        cwd: core.config.cwd.display().to_string(),
        session_id: core.config.session_id.clone(),
        tools: core.tools.names(),
        mcp_servers: core.mcp_servers.clone(),
        model: core.config.model.clone(),
        permission_mode: core.config.permission_mode.as_str().to_owned(),
        slash_commands: core.config.commands.slash_command_names(),
        api_key_source: core.config.api_key_source.clone(),
        claude_code_version: COMPAT_VERSION.to_owned(),
        output_style: "default".to_owned(),
        agents: core.config.agents.iter().map(|a| a.name.clone()).collect(),
        uuid: new_uuid(),
        extra,
    }))
}

fn result_frame(core: &mut Core, st: &RunState, end: End, sink: &EventSink) -> ResultMessage {
    let changes: Vec<Value> = core
        .ctx
        .changes
        .take()
        .into_iter()
        .filter_map(|c| serde_json::to_value(c).ok())
        .collect();
    let (subtype, is_error, result, errors, terminal, status) = match end {
        End::Completed(text) => (
            ResultSubtype::Success,
            false,
            Some(text),
            vec![],
            "completed",
            None,
        ),
        End::MaxTurns => (
            ResultSubtype::ErrorMaxTurns,
            true,
            None,
            vec![format!(
                "Reached maximum number of turns ({})",
                core.config.max_turns.unwrap_or_default()
            )],
            "max_turns",
            None,
        ),
        End::Budget(b) => (
            ResultSubtype::ErrorMaxBudgetUsd,
            true,
            None,
            vec![format!("Reached maximum budget (${b})")],
            "budget_exhausted",
            None,
        ),
        End::Interrupted { during_tools } => {
            let note = if during_tools {
                "[Request interrupted by user for tool use]"
            } else {
                "[Request interrupted by user]"
            };
            // In the conversation too: the model's next request knows it was stopped.
            core.conversation.repair();
            core.conversation
                .push_user(vec![ContentBlock::text(note)], &[]);
            sink.emit(crate::frames::user_frame(
                Message::user_text(note),
                None,
                sink,
            ));
            (
                ResultSubtype::ErrorDuringExecution,
                true,
                None,
                vec!["Interrupted by user".to_owned()],
                if during_tools {
                    "aborted_tools"
                } else {
                    "aborted_streaming"
                },
                None,
            )
        }
        // Never `success`: a run that ends on an error says so in its subtype.
        End::ApiError(e) => {
            let text = e.to_string();
            let terminal = if e.context_overflow().is_some() {
                "prompt_too_long"
            } else {
                "api_error"
            };
            (
                ResultSubtype::ErrorDuringExecution,
                true,
                Some(text.clone()),
                vec![text],
                terminal,
                e.status(),
            )
        }
        End::Loop(repeated) => (
            ResultSubtype::ErrorLoopDetected,
            true,
            None,
            vec![repeated.message()],
            "loop_detected",
            None,
        ),
        End::Failed(text) => (
            ResultSubtype::ErrorDuringExecution,
            true,
            None,
            vec![text],
            "error",
            None,
        ),
        End::StructuredRetries(text) => (
            ResultSubtype::ErrorMaxStructuredOutputRetries,
            true,
            None,
            vec![text],
            "structured_output_retry_exhausted",
            None,
        ),
    };
    let mut extra = JsonMap::new();
    if let Some(value) = st.structured_output.clone() {
        extra.insert("structured_output".into(), value);
    }
    ResultMessage {
        subtype,
        is_error,
        duration_ms: st.started.elapsed().as_millis() as u64,
        duration_api_ms: st.api_ms,
        num_turns: st.num_turns,
        result,
        stop_reason: st.last_stop.as_ref().map(|s| s.as_str().to_owned()),
        session_id: core.config.session_id.clone(),
        uuid: new_uuid(),
        total_cost_usd: core.costs.total_cost_usd,
        usage: st.usage.clone(),
        model_usage: core.costs.per_model.clone(),
        permission_denials: st.denials.clone(),
        errors,
        api_error_status: status,
        terminal_reason: Some(terminal.to_owned()),
        changes,
        extra,
    }
}
