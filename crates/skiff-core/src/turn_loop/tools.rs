//! A round's tool calls: run through the dispatcher, their results sent as frames and put in
//! the conversation, and what they mean for the run (a plan approved, a loop, a hook that
//! stops it, the structured output given).

use serde_json::Value;
use skiff_protocol::{ContentBlock, Message, Role, ToolUseBlock};

use super::TurnIo;
use super::notices::{background_notices, mark_frame};
use super::state::{End, Flow, RunState};
use crate::core::Core;
use crate::dispatch::Dispatcher;

/// Run the reply's tool calls (`assistant_text`: the reply's text, the answer when a valid
/// StructuredOutput call ends the run).
pub(super) async fn run_tools(
    core: &mut Core,
    io: &TurnIo<'_>,
    st: &mut RunState,
    tool_uses: &[ToolUseBlock],
    assistant_text: &str,
) -> Flow {
    let (sink, cancel) = (io.sink, io.cancel);
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
    let mut results = dispatcher.run_all(tool_uses, cancel).await;
    core.note_tool_calls(tool_uses);
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
    let switched = switched.filter(|_| io.live.borrow().mode == crate::PermissionMode::Plan);
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
        .after_tools(core, io, tool_uses, &mut results)
        .await;
    // [small models] Files changed so far (a refused or failed Edit changed nothing); a
    // change of a test in a task about failing tests gets a note instead of counting.
    // The task is looked up only when a call changed a file (not on every round).
    let mut task: Option<Option<String>> = None;
    for (t, r) in tool_uses.iter().zip(results.iter_mut()) {
        if !crate::act_nudge::edits(&t.name) || r.block.is_error == Some(true) {
            continue;
        }
        let task = task.get_or_insert_with(|| {
            core.config
                .compact_tools
                .then(|| crate::act_nudge::latest_task(core.conversation.messages()))
                .flatten()
        });
        match task
            .as_deref()
            .and_then(|task| crate::test_edits::note(&t.name, &t.input, task))
        {
            Some(note) => crate::loop_guard::append(&mut r.block.content, note),
            None => st.edits += 1,
        }
    }
    // [small models] A failed run of the tests: where the code the failure names is defined.
    if let Some(test_command) = core.config.test_command.as_deref()
        && core.config.compact_tools
    {
        for (t, r) in tool_uses.iter().zip(results.iter_mut()) {
            let command = t.input.get("command").and_then(Value::as_str);
            let ran_tests = t.name == "Bash"
                && r.block.is_error == Some(true)
                && command.is_some_and(|c| crate::test_failures::runs_tests(c, test_command));
            if !ran_tests {
                continue;
            }
            let task = task
                .get_or_insert_with(|| crate::act_nudge::latest_task(core.conversation.messages()));
            if !task
                .as_deref()
                .is_some_and(crate::test_edits::about_failing_tests)
            {
                continue;
            }
            let output = crate::loop_guard::result_text(&r.block.content);
            if let Some(note) = crate::test_failures::note(&core.ctx.guard, &output).await {
                crate::loop_guard::append(&mut r.block.content, note);
            }
        }
    }
    // [hook: loop guard] The same failing call again: a note, then the end.
    let repeated = st
        .loop_guard
        .observe(tool_uses, &mut results, &core.ctx)
        .await;
    let structured_calls = structured_calls(core, tool_uses, &results);
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
        return Flow::End(End::Interrupted { during_tools: true });
    }
    if let Some(repeated) = repeated {
        let go_on = crate::loop_guard::client_lets_it_go_on(
            core.approver.as_ref(),
            io.requester,
            &repeated,
        )
        .await;
        if !go_on {
            return Flow::End(End::Loop(Box::new(repeated)));
        }
        st.loop_guard.forgive(&repeated);
    }
    if let Some(reason) = hook_stop {
        sink.notice(
            "hook",
            "warning",
            format!("A hook stopped the run: {reason}"),
        );
        return Flow::End(End::Completed(reason));
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
                return Flow::End(End::Completed(format!(
                    "{}{assistant_text}",
                    st.text_prefix
                )));
            }
            Next::GiveUp(why) => return Flow::End(End::StructuredRetries(why)),
            Next::Continue | Next::Enforce => {}
        }
    }
    Flow::Continue
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
