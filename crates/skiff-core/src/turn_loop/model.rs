//! One model call of a run: the context made to fit, the request sent, the reply accounted
//! (usage, cost, stop reason) and put in the conversation, or how the run ends instead.

use serde_json::Value;
use skiff_protocol::{ContentBlock, StopReason, ToolUseBlock};

use super::TurnIo;
use super::state::{End, RunState};
use crate::core::Core;
use crate::model_call::{api_error_frame, call_model};

/// The model's reply, as the rest of the round needs it.
pub(super) struct Reply {
    /// Its tool calls (inputs that were not JSON objects kept as sent).
    pub(super) tool_uses: Vec<ToolUseBlock>,
    /// Why it stopped (`end_turn` when the server did not say).
    pub(super) stop: StopReason,
    /// Its text.
    pub(super) text: String,
}

/// What came of asking the model.
pub(super) enum Asked {
    /// A reply, now in the conversation.
    Reply(Reply),
    /// Ask again (the history was made to fit, the fallback model took over, or a cut tool
    /// call gets more room).
    Again,
    /// The run is over.
    End(End),
}

/// Send the conversation to the model and take its reply in.
pub(super) async fn ask_model(core: &mut Core, io: &TurnIo<'_>, st: &mut RunState) -> Asked {
    let (sink, cancel) = (io.sink, io.cancel);
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
    let mut request =
        core.template
            .build(conv.messages(), prefix.as_ref(), st.max_tokens.min(room));
    // [small models] A task that wants a change, and nothing changed yet: a call, not a plan.
    let forced = skiff_protocol::ToolChoice::Any {
        disable_parallel_tool_use: None,
    };
    let repeated = st.loop_guard.repeated_tools();
    let task = core
        .config
        .compact_tools
        .then(|| crate::act_nudge::latest_task(conv.messages()))
        .flatten();
    // A task about failing tests starts by running them, with the command the environment
    // block names (where the server can be held to it).
    let test_run = core
        .config
        .test_command
        .as_ref()
        .filter(|_| {
            core.config.compact_tools
                && crate::test_command::holds_to_tests(task.as_deref(), st.actions, st.forced_calls)
        })
        .map(|command| serde_json::json!({ "command": command }));
    let others: Vec<String> = if !core.config.compact_tools {
        Vec::new()
    } else if test_run.is_some() {
        vec!["Bash".to_owned()]
    } else if repeated.is_empty() {
        Vec::new()
    } else {
        request
            .tools
            .iter()
            .map(|t| t.name.clone())
            .filter(|n| !repeated.contains(n))
            .collect()
    };
    if core.config.compact_tools
        && core.config.subagent.is_none()
        && !request.tools.is_empty()
        && request.thinking.is_none()
        && request.tool_choice.is_none()
        && crate::act_nudge::forces_call(task.as_deref(), st.edits, st.forced_calls)
    {
        st.forced_calls += 1;
        request.tool_choice = Some(&forced);
        // Stuck looking with one tool: a call of another (where the server can be held to a set).
        request.forced_among = &others;
        request.forced_input = test_run.as_ref();
    }
    // [small models] Low temperature, more freedom once the model repeats itself.
    if core.config.compact_tools && request.thinking.is_none() {
        let repeating = st.loop_guard.repeating();
        request.temperature = Some(crate::act_nudge::temperature(
            request.temperature,
            repeating,
        ));
    }
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
            return Asked::End(End::Interrupted {
                during_tools: false,
            });
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
                return Asked::Again;
            }
            // [hook: fallback] Overloaded again and again: the fallback model answers.
            if crate::fallback::switch(core, &e, io) {
                st.num_turns -= 1;
                return Asked::Again;
            }
            sink.emit(api_error_frame(&e, sink));
            return Asked::End(End::ApiError(e));
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
            return Asked::Again;
        }
        return Asked::End(End::Failed(format!(
            "the model's response was cut off at max_tokens ({}) in the middle of a tool call",
            st.max_tokens
        )));
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
        return Asked::End(End::Budget(budget));
    }

    if tool_uses.is_empty() && stop == StopReason::ToolUse {
        // The model asked for a tool and no call came (a server that lost it): never a
        // success with nothing run.
        return Asked::End(End::Failed(
            "the model stopped to use a tool (stop_reason tool_use) but the response had no \
             tool call; the server may not support tool calls with this model"
                .to_owned(),
        ));
    }
    Asked::Reply(Reply {
        tool_uses,
        stop,
        text: assistant_text,
    })
}
