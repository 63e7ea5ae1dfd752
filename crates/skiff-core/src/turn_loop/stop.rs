//! A reply without tool calls: continue it (paused, cut off at max_tokens, no structured
//! output yet, a Stop hook that wants more) or end the run with its answer.

use serde_json::Value;
use skiff_protocol::{ContentBlock, StopReason};

use super::TurnIo;
use super::notices::background_tasks;
use super::state::{End, Flow, RunState};
use crate::core::Core;
use crate::hooks::{HookEvent, fields, fire};

/// Text sent to continue an answer cut off by max_tokens.
pub const CONTINUE_PROMPT: &str = "Your previous response was cut off by the output token limit. \
Continue exactly where it stopped, without repeating anything.";

/// Start of the message that carries a blocking Stop hook's reason to the model.
pub const STOP_HOOK_FEEDBACK: &str = "Stop hook feedback:\n";

/// Consecutive continuations a Stop hook may force before the run ends anyway.
const MAX_STOP_CONTINUATIONS: u32 = 8;

/// After a reply without tool calls that stopped for `stop` with `assistant_text`.
pub(super) async fn continue_or_stop(
    core: &mut Core,
    io: &TurnIo<'_>,
    st: &mut RunState,
    stop: StopReason,
    assistant_text: &str,
) -> Flow {
    let sink = io.sink;
    match stop {
        StopReason::PauseTurn => {
            st.merge_next_assistant = true;
            Flow::Continue
        }
        StopReason::MaxTokens if st.continuations < core.config.max_continuations => {
            st.continuations += 1;
            st.text_prefix.push_str(assistant_text);
            core.conversation
                .push_user(vec![ContentBlock::text(CONTINUE_PROMPT)], &[]);
            Flow::Continue
        }
        _ => {
            let text = format!("{}{assistant_text}", st.text_prefix);
            // [small models] A plan instead of the work: told to act (not a subagent, whose report
            // after only reading is its work).
            if core.config.compact_tools
                && core.config.subagent.is_none()
                && st.nudges < crate::act_nudge::MAX_NUDGES
                && let task = crate::act_nudge::latest_task(core.conversation.messages())
                && crate::act_nudge::wants_action(&text, task.as_deref(), st.actions, st.edits)
            {
                st.nudges += 1;
                let reply = crate::act_nudge::reply(task.as_deref());
                core.conversation
                    .push_user(vec![ContentBlock::text(reply)], &[]);
                return Flow::Continue;
            }
            // [hook: structured output] An answer without the StructuredOutput call: the
            // model is told to call it, once.
            if core.config.json_schema.is_some() && core.config.subagent.is_none() {
                use crate::structured::Next;
                match st.structured.after_answer() {
                    Next::Enforce => {
                        core.conversation
                            .push_user(vec![ContentBlock::text(crate::structured::ENFORCE)], &[]);
                        return Flow::Continue;
                    }
                    Next::GiveUp(why) => return Flow::End(End::StructuredRetries(why)),
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
                        ("last_assistant_message", assistant_text.into()),
                    ]),
                    None => fields([
                        ("stop_hook_active", active.into()),
                        ("last_assistant_message", assistant_text.into()),
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
                return Flow::End(End::Completed(text));
            }
            if let Some(reason) = hook.block
                && st.stop_continuations < MAX_STOP_CONTINUATIONS
            {
                st.stop_continuations += 1;
                st.stop_hook_active = true;
                let feedback = format!("{STOP_HOOK_FEEDBACK}{reason}");
                core.conversation
                    .push_user(vec![ContentBlock::text(feedback)], &[]);
                return Flow::Continue;
            }
            Flow::End(End::Completed(text))
        }
    }
}
