//! A run of the agent loop for one prompt: the [`Run`] event stream and the loop itself.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use futures::Stream;
use serde_json::Value;
use skiff_protocol::sdk::{
    PermissionDenial, ResultMessage, ResultSubtype, SdkMessage, SystemInit, SystemMessage,
    UserMessage,
};
use skiff_protocol::{
    ContentBlock, JsonMap, Message, MessageContent, Role, StopReason, ToolUseBlock, Usage,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::agent::Agent;
use crate::dispatch::Dispatcher;
use crate::frames::{EventSink, new_uuid, now_iso};
use crate::hooks::HookOutcome;
use crate::session::SessionEntry;
use crate::turn::{api_error_frame, call_model};

/// Version reported as `claude_code_version` (SDKs require a semver ≥ 2.0.0).
pub const COMPAT_VERSION: &str = "2.1.0";

/// Text sent to continue an answer cut off by max_tokens.
const CONTINUE_PROMPT: &str = "Your previous response was cut off by the output token limit. \
Continue exactly where it stopped, without repeating anything.";

type LoopFuture<'a> = Pin<Box<dyn Future<Output = ResultMessage> + Send + 'a>>;

/// One prompt's run: a stream of events (stream-json frames) that ends with the `result` frame.
/// Dropping it stops the run (the conversation keeps a valid history only when the run ends or
/// is interrupted, so prefer [`Run::interrupt`] and draining).
pub struct Run<'a> {
    fut: Option<LoopFuture<'a>>,
    rx: mpsc::UnboundedReceiver<SdkMessage>,
    cancel: CancellationToken,
    result: Option<ResultMessage>,
}

impl<'a> Run<'a> {
    pub(crate) fn start(agent: &'a mut Agent, prompt: String) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let cancel = CancellationToken::new();
        let sink = EventSink::new(tx, agent.config.session_id.clone());
        let fut = Box::pin(drive(agent, prompt, sink, cancel.clone()));
        Self {
            fut: Some(fut),
            rx,
            cancel,
            result: None,
        }
    }

    /// A token that interrupts the run when cancelled (usable from a signal handler).
    pub fn interrupt_handle(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// Interrupt the run: the model stream stops, running tools are killed, unanswered tool
    /// calls get an "interrupted" result, and the run ends with an error result.
    pub fn interrupt(&self) {
        self.cancel.cancel();
    }

    /// The result, once the stream has ended.
    pub fn result(&self) -> Option<&ResultMessage> {
        self.result.as_ref()
    }

    /// Drive the run to its end, discarding events, and return the result.
    pub async fn finish(mut self) -> ResultMessage {
        use futures::StreamExt;
        while self.next().await.is_some() {}
        self.result.unwrap_or_else(unreachable_result)
    }
}

fn unreachable_result() -> ResultMessage {
    // The loop always produces a result; this only exists to avoid a panic path.
    ResultMessage {
        subtype: ResultSubtype::ErrorDuringExecution,
        is_error: true,
        duration_ms: 0,
        duration_api_ms: 0,
        num_turns: 0,
        result: None,
        stop_reason: None,
        session_id: String::new(),
        uuid: new_uuid(),
        total_cost_usd: 0.0,
        usage: Usage::default(),
        model_usage: Default::default(),
        permission_denials: Vec::new(),
        errors: vec!["the run ended without a result".into()],
        api_error_status: None,
        terminal_reason: None,
        changes: Vec::new(),
        extra: JsonMap::new(),
    }
}

impl Stream for Run<'_> {
    type Item = SdkMessage;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<SdkMessage>> {
        if let Poll::Ready(Some(ev)) = self.rx.poll_recv(cx) {
            return Poll::Ready(Some(ev));
        }
        if let Some(fut) = self.fut.as_mut() {
            match fut.as_mut().poll(cx) {
                Poll::Ready(result) => {
                    self.result = Some(result);
                    self.fut = None;
                }
                Poll::Pending => {
                    return match self.rx.try_recv() {
                        Ok(ev) => Poll::Ready(Some(ev)),
                        Err(_) => Poll::Pending,
                    };
                }
            }
        }
        Poll::Ready(self.rx.try_recv().ok())
    }
}

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
}

/// How a run ended (before it becomes a result frame).
enum End {
    Completed(String),
    MaxTurns,
    Budget(f64),
    Interrupted { during_tools: bool },
    ApiError(skiff_llm::LlmError),
    Failed(String),
}

async fn drive(
    agent: &mut Agent,
    prompt: String,
    sink: EventSink,
    cancel: CancellationToken,
) -> ResultMessage {
    let mut st = RunState {
        started: Instant::now(),
        num_turns: 0,
        api_ms: 0,
        usage: Usage::default(),
        denials: Vec::new(),
        last_stop: None,
        text_prefix: String::new(),
        continuations: 0,
        max_tokens: agent.config.max_tokens,
        merge_next_assistant: false,
        stop_hook_active: false,
    };
    sink.emit(init_frame(agent));
    let end = run_loop(agent, prompt, &sink, &cancel, &mut st).await;
    let result = result_frame(agent, &st, end, &sink);
    agent.session.turn_complete();
    sink.emit(SdkMessage::Result(result.clone()));
    result
}

async fn run_loop(
    agent: &mut Agent,
    prompt: String,
    sink: &EventSink,
    cancel: &CancellationToken,
    st: &mut RunState,
) -> End {
    let mut blocks = Vec::new();
    if !agent.memory_sent {
        if let Some(m) = &agent.config.memory {
            blocks.push(ContentBlock::text(m.clone()));
        }
        agent.memory_sent = true;
    }
    match agent.hooks.user_prompt_submit(&prompt).await {
        HookOutcome::Block { reason } => {
            return End::Failed(format!(
                "UserPromptSubmit hook blocked the prompt: {reason}"
            ));
        }
        HookOutcome::AddContext(ctx) => blocks.push(ContentBlock::text(ctx)),
        HookOutcome::Continue => {}
    }
    blocks.push(ContentBlock::text(prompt));
    record_user(agent, blocks, &[]);

    loop {
        if cancel.is_cancelled() {
            return End::Interrupted {
                during_tools: false,
            };
        }
        st.num_turns += 1;
        if let Some(max) = agent.config.max_turns {
            if st.num_turns > max {
                return End::MaxTurns;
            }
        }
        if let Some(budget) = agent.config.max_budget_usd {
            if agent.costs.total_cost_usd >= budget {
                return End::Budget(budget);
            }
        }
        crate::context::prepare(agent, sink, cancel).await;
        let request = agent.template.build(&agent.history, st.max_tokens);
        let reply = match call_model(agent.provider.as_ref(), &request, sink, cancel).await {
            Ok(r) => r,
            Err((skiff_llm::LlmError::Cancelled, ms)) => {
                st.api_ms += ms;
                return End::Interrupted {
                    during_tools: false,
                };
            }
            Err((e, ms)) => {
                st.api_ms += ms;
                sink.emit(api_error_frame(&e, sink));
                return End::ApiError(e);
            }
        };
        st.api_ms += reply.api_ms;
        let msg = reply.message;
        agent.last_input = Some((msg.usage.total_input(), agent.history.len()));
        agent
            .session
            .append(SessionEntry::Assistant { message: &msg });
        st.usage.accumulate(&msg.usage);
        let (_, unknown) = agent.costs.add(&agent.config.model, &msg.usage);
        if unknown {
            sink.notice(
                "pricing",
                "warning",
                format!(
                    "no price known for model {}; its cost is counted as $0",
                    agent.config.model
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
            let cap = skiff_llm::model_info(&agent.config.model)
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

        let assistant_text = msg.text();
        push_assistant(&mut agent.history, msg.content, st.merge_next_assistant);
        st.merge_next_assistant = false;

        match stop {
            StopReason::ToolUse | StopReason::MaxTokens if !tool_uses.is_empty() => {
                let dispatcher = Dispatcher {
                    tools: &agent.tools,
                    ctx: &agent.ctx,
                    permissions: agent.permissions.as_ref(),
                    approver: agent.approver.as_ref(),
                    hooks: agent.hooks.as_ref(),
                    sink,
                    max_result_chars: agent.config.max_tool_result_chars,
                    progress_interval: agent.config.progress_interval,
                    results_dir: agent.config.tool_results_dir.as_deref(),
                };
                let results = dispatcher.run_all(&tool_uses, cancel).await;
                let mut blocks = Vec::with_capacity(results.len());
                let mut structured: Vec<Option<Value>> = Vec::with_capacity(results.len());
                for r in results {
                    if let Some(d) = r.denial {
                        st.denials.push(d);
                    }
                    sink.emit(user_frame(
                        Message::blocks(
                            Role::User,
                            vec![ContentBlock::ToolResult(r.block.clone())],
                        ),
                        r.structured.clone(),
                        sink,
                    ));
                    blocks.push(ContentBlock::ToolResult(r.block));
                    structured.push(r.structured);
                }
                record_user(agent, blocks, &structured);
                if cancel.is_cancelled() {
                    return End::Interrupted { during_tools: true };
                }
            }
            StopReason::PauseTurn => {
                st.merge_next_assistant = true;
            }
            StopReason::MaxTokens if st.continuations < agent.config.max_continuations => {
                st.continuations += 1;
                st.text_prefix.push_str(&assistant_text);
                record_user(agent, vec![ContentBlock::text(CONTINUE_PROMPT)], &[]);
            }
            _ => {
                let text = format!("{}{assistant_text}", st.text_prefix);
                if let HookOutcome::Block { reason } = agent.hooks.stop(st.stop_hook_active).await {
                    st.stop_hook_active = true;
                    let feedback = format!("Stop hook feedback:\n{reason}");
                    record_user(agent, vec![ContentBlock::text(feedback)], &[]);
                    continue;
                }
                return End::Completed(text);
            }
        }
    }
}

/// Append user content to the history and the session store.
fn record_user(agent: &mut Agent, blocks: Vec<ContentBlock>, tool_use_results: &[Option<Value>]) {
    agent.session.append(SessionEntry::User {
        blocks: &blocks,
        tool_use_results,
    });
    push_user(&mut agent.history, blocks);
}

/// Append user content; merges into a trailing user message so roles keep alternating (after
/// an API error or an interrupt the last message is the user's).
pub(crate) fn push_user(history: &mut Vec<Message>, mut blocks: Vec<ContentBlock>) {
    if let Some(last) = history.last_mut() {
        if last.role == Role::User {
            let mut merged = last.content.to_blocks();
            merged.append(&mut blocks);
            last.content = MessageContent::Blocks(merged);
            return;
        }
    }
    let content = match blocks.as_slice() {
        [ContentBlock::Text(t)] if t.cache_control.is_none() => {
            MessageContent::Text(t.text.clone())
        }
        _ => MessageContent::Blocks(blocks),
    };
    history.push(Message {
        role: Role::User,
        content,
    });
}

fn push_assistant(history: &mut Vec<Message>, mut content: Vec<ContentBlock>, merge: bool) {
    if merge {
        if let Some(last) = history.last_mut() {
            if last.role == Role::Assistant {
                let mut merged = last.content.to_blocks();
                merged.append(&mut content);
                last.content = MessageContent::Blocks(merged);
                return;
            }
        }
    }
    if content.is_empty() {
        // The API rejects empty assistant content; keep the turn with an empty text block.
        content.push(ContentBlock::text(""));
    }
    history.push(Message::blocks(Role::Assistant, content));
}

fn user_frame(message: Message, tool_use_result: Option<Value>, sink: &EventSink) -> SdkMessage {
    SdkMessage::User(UserMessage {
        message,
        parent_tool_use_id: None,
        session_id: sink.session_id().to_owned(),
        uuid: new_uuid(),
        timestamp: Some(now_iso()),
        tool_use_result,
        extra: JsonMap::new(),
    })
}

fn init_frame(agent: &Agent) -> SdkMessage {
    SdkMessage::System(SystemMessage::Init(SystemInit {
        cwd: agent.config.cwd.display().to_string(),
        session_id: agent.config.session_id.clone(),
        tools: agent.tools.names(),
        mcp_servers: Vec::new(),
        model: agent.config.model.clone(),
        permission_mode: agent.config.permission_mode.clone(),
        slash_commands: Vec::new(),
        api_key_source: agent.config.api_key_source.clone(),
        claude_code_version: COMPAT_VERSION.to_owned(),
        output_style: "default".to_owned(),
        agents: Vec::new(),
        uuid: new_uuid(),
        extra: JsonMap::new(),
    }))
}

fn result_frame(agent: &mut Agent, st: &RunState, end: End, sink: &EventSink) -> ResultMessage {
    let changes: Vec<Value> = agent
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
                agent.config.max_turns.unwrap_or_default()
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
            sink.emit(user_frame(
                Message::user_text(if during_tools {
                    "[Request interrupted by user for tool use]"
                } else {
                    "[Request interrupted by user]"
                }),
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
        End::ApiError(e) => {
            let text = e.to_string();
            (
                ResultSubtype::Success,
                true,
                Some(text.clone()),
                vec![text],
                "api_error",
                e.status(),
            )
        }
        End::Failed(text) => (
            ResultSubtype::ErrorDuringExecution,
            true,
            None,
            vec![text],
            "error",
            None,
        ),
    };
    ResultMessage {
        subtype,
        is_error,
        duration_ms: st.started.elapsed().as_millis() as u64,
        duration_api_ms: st.api_ms,
        num_turns: st.num_turns,
        result,
        stop_reason: st.last_stop.as_ref().map(|s| s.as_str().to_owned()),
        session_id: agent.config.session_id.clone(),
        uuid: new_uuid(),
        total_cost_usd: agent.costs.total_cost_usd,
        usage: st.usage.clone(),
        model_usage: agent.costs.per_model.clone(),
        permission_denials: st.denials.clone(),
        errors,
        api_error_status: status,
        terminal_reason: Some(terminal.to_owned()),
        changes,
        extra: JsonMap::new(),
    }
}
