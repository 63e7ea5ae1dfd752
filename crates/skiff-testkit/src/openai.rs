//! The OpenAI chat-completions dialect of the mock: a scripted turn's Messages API events
//! rendered as `chat.completion.chunk` frames (one frame per event, so the faults' event
//! counts mean the same in both dialects), non-streaming completions, and error bodies.

use bytes::Bytes;
use serde_json::{Value, json};
use skiff_protocol::{ContentBlock, Delta, MessageResponse, StopReason, StreamEvent};

/// Renders events to chunk frames, remembering ids across events.
#[derive(Debug, Default)]
struct ChunkWriter {
    id: String,
    model: String,
    input_tokens: u64,
    /// Content block index → tool call index.
    calls: Vec<(usize, usize)>,
}

/// One SSE frame per event (empty for events without a chunk), `[DONE]` for `message_stop`.
pub fn chunk_frames(events: &[StreamEvent]) -> serde_json::Result<Vec<Bytes>> {
    let mut w = ChunkWriter::default();
    events.iter().map(|e| w.frame(e)).collect()
}

impl ChunkWriter {
    fn frame(&mut self, event: &StreamEvent) -> serde_json::Result<Bytes> {
        let chunks: Vec<Value> = match event {
            StreamEvent::MessageStart { message } => {
                self.id = format!("chatcmpl-{}", message.id);
                self.model = message.model.clone();
                self.input_tokens = message.usage.input_tokens;
                vec![self.chunk(json!({"role": "assistant", "content": ""}), None)]
            }
            StreamEvent::ContentBlockStart {
                index,
                content_block: ContentBlock::ToolUse(t),
            } => {
                let call = self.calls.len();
                self.calls.push((*index, call));
                vec![self.chunk(
                    json!({"tool_calls": [{"index": call, "id": t.id, "type": "function",
                        "function": {"name": t.name, "arguments": ""}}]}),
                    None,
                )]
            }
            StreamEvent::ContentBlockDelta { index, delta } => match delta {
                Delta::TextDelta { text } => vec![self.chunk(json!({"content": text}), None)],
                Delta::ThinkingDelta { thinking } => {
                    vec![self.chunk(json!({"reasoning_content": thinking}), None)]
                }
                Delta::InputJsonDelta { partial_json } => {
                    let call = self
                        .calls
                        .iter()
                        .find(|(block, _)| block == index)
                        .map_or(0, |(_, c)| *c);
                    vec![self.chunk(
                        json!({"tool_calls": [{"index": call, "function": {"arguments": partial_json}}]}),
                        None,
                    )]
                }
                _ => Vec::new(),
            },
            StreamEvent::MessageDelta { delta, usage } => {
                let reason = finish_reason(delta.stop_reason.as_ref());
                let mut out = vec![self.chunk(json!({}), Some(reason))];
                let output = usage.as_ref().and_then(|u| u.output_tokens).unwrap_or(0);
                out.push(json!({
                    "id": self.id, "object": "chat.completion.chunk", "model": self.model,
                    "choices": [],
                    "usage": {"prompt_tokens": self.input_tokens, "completion_tokens": output,
                        "total_tokens": self.input_tokens + output},
                }));
                out
            }
            StreamEvent::MessageStop => return Ok(Bytes::from_static(b"data: [DONE]\n\n")),
            _ => Vec::new(),
        };
        let mut buf = Vec::new();
        for c in chunks {
            buf.extend_from_slice(b"data: ");
            serde_json::to_writer(&mut buf, &c)?;
            buf.extend_from_slice(b"\n\n");
        }
        Ok(Bytes::from(buf))
    }

    fn chunk(&self, delta: Value, finish: Option<&str>) -> Value {
        json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        })
    }
}

/// A stop reason as OpenAI's `finish_reason`.
pub fn finish_reason(stop: Option<&StopReason>) -> &'static str {
    match stop {
        Some(StopReason::ToolUse) => "tool_calls",
        Some(StopReason::MaxTokens) => "length",
        Some(StopReason::Refusal) => "content_filter",
        _ => "stop",
    }
}

/// A whole message as a non-streaming `chat.completion`.
pub fn completion(message: &MessageResponse) -> Value {
    let mut text = String::new();
    let mut calls = Vec::new();
    for block in &message.content {
        match block {
            ContentBlock::Text(t) => text.push_str(&t.text),
            ContentBlock::ToolUse(t) => calls.push(json!({
                "id": t.id, "type": "function",
                "function": {"name": t.name, "arguments": t.input.to_string()},
            })),
            _ => {}
        }
    }
    let mut msg = json!({"role": "assistant", "content": text});
    if !calls.is_empty() {
        msg["tool_calls"] = Value::Array(calls);
    }
    let u = &message.usage;
    json!({
        "id": format!("chatcmpl-{}", message.id),
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": message.model,
        "choices": [{"index": 0, "message": msg,
            "finish_reason": finish_reason(message.stop_reason.as_ref())}],
        "usage": {"prompt_tokens": u.input_tokens, "completion_tokens": u.output_tokens,
            "total_tokens": u.input_tokens + u.output_tokens},
    })
}

/// What the mock says about its model where OpenAI-compatible servers say it: `GET /v1/models`
/// (OpenRouter's `context_length`, `top_provider.max_completion_tokens`, `pricing`; vLLM's
/// `max_model_len`), llama.cpp's `GET /props`, Ollama's `POST /api/show`, LM Studio's
/// `GET /api/v0/models`. Without it only `/v1/models` answers, with the id alone.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelMetadata {
    /// The context window, on every endpoint.
    pub context_window: Option<u64>,
    /// `top_provider.max_completion_tokens` in the model list.
    pub max_output_tokens: Option<u64>,
    /// `pricing.prompt` and `pricing.completion`: USD per token, as strings (OpenRouter).
    pub price_per_token: Option<(String, String)>,
    /// Answer the metadata endpoints after this long (a slow server).
    pub delay_ms: u64,
    /// Answer them with this error status instead.
    pub status: Option<u16>,
}

impl ModelMetadata {
    /// The model list's entry for `model`.
    pub fn list_entry(&self, model: &str) -> Value {
        let mut entry = json!({"id": model, "object": "model", "owned_by": "skiff-mock"});
        if let Some(n) = self.context_window {
            entry["context_length"] = n.into();
            entry["max_model_len"] = n.into();
        }
        if let Some(n) = self.max_output_tokens {
            entry["top_provider"] =
                json!({"context_length": self.context_window, "max_completion_tokens": n});
        }
        if let Some((prompt, completion)) = &self.price_per_token {
            entry["pricing"] = json!({"prompt": prompt, "completion": completion});
        }
        entry
    }

    /// llama.cpp's `/props`.
    pub fn props(&self) -> Value {
        json!({"default_generation_settings": {"n_ctx": self.context_window}, "total_slots": 1})
    }

    /// Ollama's `/api/show`.
    pub fn ollama_show(&self) -> Value {
        json!({
            "parameters": "stop \"<|im_end|>\"",
            "model_info": {"general.architecture": "qwen2",
                           "qwen2.context_length": self.context_window},
        })
    }

    /// LM Studio's `/api/v0/models`.
    pub fn lmstudio_models(&self, model: &str) -> Value {
        json!({"object": "list", "data": [{"id": model, "object": "model", "type": "llm",
            "state": "loaded", "max_context_length": self.context_window}]})
    }
}

/// OpenAI's error body.
pub fn error_body(error_type: &str, message: &str) -> Value {
    json!({"error": {"message": message, "type": error_type, "param": null, "code": null}})
}

/// The in-stream error chunk (the `error_event` fault).
pub fn error_frame(error_type: &str, message: &str) -> serde_json::Result<Bytes> {
    let mut buf = b"data: ".to_vec();
    serde_json::to_writer(&mut buf, &error_body(error_type, message))?;
    buf.extend_from_slice(b"\n\n");
    Ok(Bytes::from(buf))
}

/// A chunk whose data is not JSON (the `malformed` fault).
pub const MALFORMED_FRAME: &[u8] = b"data: {not json\n\n";

#[cfg(test)]
mod tests {
    use super::*;
    use skiff_protocol::script::{ScriptBlock, ScriptTurn};

    #[test]
    fn a_tool_turn_renders_as_chunks_with_calls_and_usage() {
        let turn = ScriptTurn {
            content: vec![
                ScriptBlock::Text {
                    text: "Let me run it.".into(),
                },
                ScriptBlock::ToolUse {
                    id: Some("call_1".into()),
                    name: "Bash".into(),
                    input: json!({"command": "ls"}),
                },
            ],
            ..ScriptTurn::default()
        };
        let events = turn.to_stream_events(0, "m", 100);
        let frames = chunk_frames(&events).unwrap();
        assert_eq!(frames.len(), events.len());
        let text: String = frames
            .iter()
            .map(|f| String::from_utf8(f.to_vec()).unwrap())
            .collect();
        assert!(text.contains("\"content\":\"Let me"));
        assert!(text.contains("\"id\":\"call_1\""));
        assert!(text.contains("\"finish_reason\":\"tool_calls\""));
        assert!(text.contains("\"prompt_tokens\":100"));
        assert!(text.ends_with("data: [DONE]\n\n"));
        for block in text.split_terminator("\n\n") {
            let data = block.strip_prefix("data: ").unwrap();
            if data != "[DONE]" {
                serde_json::from_str::<Value>(data).unwrap();
            }
        }
    }
}
