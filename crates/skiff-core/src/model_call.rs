//! One model call: stream the response, turn provider events into frames (stream events,
//! one `assistant` frame per completed block, retry notices), return the assembled message.

use std::time::Instant;

use futures::StreamExt;
use skiff_llm::{LlmError, Provider, ProviderEvent};
use skiff_protocol::sdk::{ApiRetry, AssistantMessage, SdkMessage, SystemMessage};
use skiff_protocol::{JsonMap, MessageResponse, RequestView, StreamEvent, Usage};
use tokio_util::sync::CancellationToken;

use crate::frames::{EventSink, new_uuid, now_iso};

/// What a model call produced.
pub struct ModelReply {
    /// The assembled message.
    pub message: MessageResponse,
    /// Time spent in the call.
    pub api_ms: u64,
}

/// What arrived of an answer before the call stopped: its complete text and thinking blocks
/// and the text of the block in progress (Claude Code keeps it in the conversation after an
/// interrupt).
#[derive(Debug, Default)]
pub struct Partial {
    blocks: Vec<skiff_protocol::ContentBlock>,
    text: String,
    runaway: crate::runaway::Runaway,
}

impl Partial {
    fn block_complete(&mut self, block: &skiff_protocol::ContentBlock) {
        use skiff_protocol::ContentBlock as B;
        self.text.clear();
        self.runaway = Default::default();
        if matches!(block, B::Text(_) | B::Thinking(_) | B::RedactedThinking(_)) {
            self.blocks.push(block.clone());
        }
    }

    fn delta(&mut self, ev: &StreamEvent) {
        if let StreamEvent::ContentBlockDelta {
            delta: skiff_protocol::Delta::TextDelta { text },
            ..
        } = ev
        {
            self.text.push_str(text);
        }
    }

    /// The answer so far as an assistant message of `model`, when any text arrived (thinking
    /// alone is not an answer).
    pub fn into_message(mut self, model: &str) -> Option<MessageResponse> {
        if !self.text.is_empty() {
            self.blocks
                .push(skiff_protocol::ContentBlock::text(std::mem::take(
                    &mut self.text,
                )));
        }
        if !self
            .blocks
            .iter()
            .any(|b| matches!(b, skiff_protocol::ContentBlock::Text(t) if !t.text.is_empty()))
        {
            return None;
        }
        let mut message = MessageResponse::new(format!("msg_{}", new_uuid()), model);
        message.content = self.blocks;
        message.stop_reason = None;
        Some(message)
    }
}

/// A model call that failed: the error, the time spent, and what arrived of the answer.
pub struct Failed {
    /// Why.
    pub error: LlmError,
    /// Time spent in the call.
    pub api_ms: u64,
    /// The answer so far (kept when the call was interrupted).
    pub partial: Partial,
}

/// Call the model once, emitting frames as the response streams in.
pub async fn call_model(
    provider: &dyn Provider,
    request: &RequestView<'_>,
    sink: &EventSink,
    cancel: &CancellationToken,
) -> Result<ModelReply, Failed> {
    let started = Instant::now();
    let mut stream = provider.stream(request, cancel.clone());
    let mut shell: Option<MessageResponse> = None;
    // Tool calls are shown once the message is complete: a message cut in the middle of a
    // call is asked again, and its calls must never reach clients without a result.
    let mut held_calls: Vec<SdkMessage> = Vec::new();
    let mut partial = Partial::default();
    while let Some(item) = stream.next().await {
        let elapsed = || started.elapsed().as_millis() as u64;
        match item {
            Err(error) => {
                return Err(Failed {
                    error,
                    api_ms: elapsed(),
                    partial,
                });
            }
            Ok(ProviderEvent::Stream(ev)) => {
                partial.delta(&ev);
                // [runaway] The text repeats itself without end: stop the call (dropping the
                // stream closes the connection; the server stops generating).
                if let Some(keep) = partial.runaway.check(&partial.text) {
                    let keep = crate::runaway::floor_boundary(&partial.text, keep);
                    let cut = partial.text.len() - keep;
                    partial.text.truncate(keep);
                    sink.notice(
                        "runaway",
                        "warning",
                        format!(
                            "The model kept repeating itself; its answer was stopped ({cut} \
                             bytes of repetition left out)."
                        ),
                    );
                    let model = shell.as_ref().map_or(request.model, |m| m.model.as_str());
                    // Calls written as text in what is kept are calls (each once).
                    let calls = crate::runaway::calls_in(&partial.text, request.tools);
                    if let Some((rest, _)) = &calls {
                        partial.text.clone_from(rest);
                    }
                    let calls = calls.map(|(_, c)| c).unwrap_or_default();
                    let message = std::mem::take(&mut partial)
                        .into_message(model)
                        .or_else(|| {
                            (!calls.is_empty())
                                .then(|| MessageResponse::new(format!("msg_{}", new_uuid()), model))
                        });
                    if let Some(mut message) = message {
                        message.stop_reason = Some(skiff_protocol::StopReason::EndTurn);
                        if let Some(shell) = &shell {
                            message.usage = shell.usage.clone();
                        }
                        // The block in progress never completed: its frame, as it is kept.
                        if let Some(last) = message.content.last().cloned() {
                            let mut shown = message.clone();
                            shown.content = vec![last];
                            shown.stop_reason = None;
                            sink.emit(assistant_frame(shown, None, JsonMap::new(), sink));
                        }
                        for call in calls {
                            let block = skiff_protocol::ContentBlock::ToolUse(call);
                            let mut shown = message.clone();
                            shown.content = vec![block.clone()];
                            shown.stop_reason = None;
                            sink.emit(assistant_frame(shown, None, JsonMap::new(), sink));
                            message.content.push(block);
                            message.stop_reason = Some(skiff_protocol::StopReason::ToolUse);
                        }
                        return Ok(ModelReply {
                            message,
                            api_ms: elapsed(),
                        });
                    }
                }
                if let StreamEvent::MessageStart { message } = &ev {
                    shell = Some(message.clone());
                }
                // Once the stop reason says the message was not cut, its calls are final.
                if let StreamEvent::MessageDelta { delta, .. } = &ev
                    && delta
                        .stop_reason
                        .as_ref()
                        .is_some_and(|r| *r != skiff_protocol::StopReason::MaxTokens)
                {
                    for frame in held_calls.drain(..) {
                        sink.emit(frame);
                    }
                }
                if !matches!(ev, StreamEvent::Ping) {
                    sink.stream_event(ev);
                }
            }
            Ok(ProviderEvent::BlockComplete { block, .. }) => {
                partial.block_complete(&block);
                let mut message = shell
                    .clone()
                    .unwrap_or_else(|| MessageResponse::new("", request.model));
                let is_call = matches!(block, skiff_protocol::ContentBlock::ToolUse(_));
                message.content = vec![block];
                message.stop_reason = None;
                message.stop_sequence = None;
                let frame = assistant_frame(message, None, JsonMap::new(), sink);
                if is_call {
                    held_calls.push(frame);
                } else {
                    sink.emit(frame);
                }
            }
            Ok(ProviderEvent::Retry(n)) => {
                sink.emit(SdkMessage::System(SystemMessage::ApiRetry(ApiRetry {
                    attempt: n.attempt,
                    max_retries: n.max_retries,
                    retry_delay_ms: n.wait.as_millis() as u64,
                    error_status: n.status,
                    error: n.cause,
                    discard_partial: n.discard_partial,
                    session_id: sink.session_id().to_owned(),
                    uuid: new_uuid(),
                })));
                shell = None;
                held_calls.clear();
                partial = Partial::default();
            }
            Ok(ProviderEvent::Done(message)) => {
                if crate::transcript::is_cut_tool_call(&message) {
                    tracing::debug!(
                        calls = held_calls.len(),
                        "tool calls cut at max_tokens withheld"
                    );
                } else {
                    for frame in held_calls.drain(..) {
                        sink.emit(frame);
                    }
                }
                return Ok(ModelReply {
                    message,
                    api_ms: elapsed(),
                });
            }
        }
    }
    Err(Failed {
        error: LlmError::Stream(skiff_llm::StreamError::Truncated(
            "the provider ended without a message".into(),
        )),
        api_ms: started.elapsed().as_millis() as u64,
        partial,
    })
}

/// The synthetic assistant message Claude Code emits when a call fails for good.
pub fn api_error_frame(err: &LlmError, sink: &EventSink) -> SdkMessage {
    let (kind, text) = match err {
        LlmError::Authentication { .. } => {
            ("authentication_failed", format!("Invalid API key · {err}"))
        }
        LlmError::CloudAuthentication { .. } | LlmError::Credentials { .. } => {
            ("authentication_failed", format!("API Error: {err}"))
        }
        LlmError::RateLimited { .. } => ("rate_limit", format!("API Error: {err}")),
        LlmError::Overloaded { .. } | LlmError::Server { .. } => {
            ("server_error", format!("API Error: {err}"))
        }
        LlmError::InvalidRequest { .. } => ("invalid_request", format!("API Error: {err}")),
        _ => ("unknown", format!("API Error: {err}")),
    };
    let mut message = MessageResponse::new(format!("msg_{}", new_uuid()), "<synthetic>");
    message.content = vec![skiff_protocol::ContentBlock::text(text)];
    message.stop_reason = Some(skiff_protocol::StopReason::StopSequence);
    message.usage = Usage::default();
    let mut extra = JsonMap::new();
    extra.insert("is_api_error_message".into(), true.into());
    if let Some(s) = err.status() {
        extra.insert("api_error_status".into(), s.into());
    }
    assistant_frame(message, Some(kind.to_owned()), extra, sink)
}

/// An `assistant` frame of this session.
fn assistant_frame(
    message: MessageResponse,
    error: Option<String>,
    extra: JsonMap,
    sink: &EventSink,
) -> SdkMessage {
    SdkMessage::Assistant(AssistantMessage {
        message,
        parent_tool_use_id: None,
        session_id: sink.session_id().to_owned(),
        uuid: new_uuid(),
        timestamp: Some(now_iso()),
        request_id: None,
        error,
        extra,
    })
}
