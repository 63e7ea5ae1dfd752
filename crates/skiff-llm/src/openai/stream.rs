//! OpenAI chat-completion chunks translated into Messages API stream events, so the rest of
//! skiff (the accumulator, stream-json frames, renderers) sees one stream format.
//!
//! Text and reasoning stream as they come (`reasoning_content` / `reasoning` become thinking).
//! Tool calls are assembled from their deltas by index and id — servers differ: some send no
//! index, some index 0 for every call, some a whole call in one chunk — and come out as
//! `tool_use` blocks when the message ends. Text that may be a tool call written as text is
//! held back until the message ends (see [`super::text_calls`]).

use serde_json::Value;
use skiff_protocol::{
    ContentBlock, Delta, DeltaUsage, MessageDeltaBody, MessageResponse, StopReason, StreamEvent,
    ThinkingBlock, ToolUseBlock,
};

use super::text_calls;

/// An `error` object in the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkError {
    /// The error's type or code.
    pub kind: String,
    /// Its message.
    pub message: String,
}

#[derive(Debug, Default)]
struct PendingCall {
    index: Option<u64>,
    id: String,
    name: String,
    arguments: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    Text,
    Thinking,
}

/// What happens to answer text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TextMode {
    /// Not known yet whether it is a call written as text: held.
    Undecided,
    /// Held to the end: it may be a call written as text.
    Held,
    /// Streamed as it comes.
    Streaming,
}

/// Turns chunks into stream events.
#[derive(Debug)]
pub struct ChunkTranslator {
    model: String,
    known_tools: Vec<String>,
    started: bool,
    next_index: usize,
    open: Option<(Open, usize)>,
    text_mode: TextMode,
    held: String,
    /// Watches the held text for a runaway repetition.
    held_watch: crate::repetition::Runaway,
    streamed_text: String,
    calls: Vec<PendingCall>,
    finish_reason: Option<String>,
    usage: Option<DeltaUsage>,
    ended: bool,
}

impl ChunkTranslator {
    /// A translator for one response; `known_tools` are the request's tool names, for calls
    /// written as text (empty: that detection is off).
    pub fn new(model: &str, known_tools: Vec<String>) -> Self {
        let text_mode = if known_tools.is_empty() {
            TextMode::Streaming
        } else {
            TextMode::Undecided
        };
        Self {
            model: model.to_owned(),
            known_tools,
            started: false,
            next_index: 0,
            open: None,
            text_mode,
            held: String::new(),
            held_watch: Default::default(),
            streamed_text: String::new(),
            calls: Vec::new(),
            finish_reason: None,
            usage: None,
            ended: false,
        }
    }

    /// Whether a `finish_reason` has been seen (the answer is complete even if the stream then
    /// ends without `[DONE]`).
    pub fn finished(&self) -> bool {
        self.finish_reason.is_some()
    }

    /// Whether the message has been ended.
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// Apply one chunk.
    pub fn chunk(&mut self, chunk: &Value, out: &mut Vec<StreamEvent>) -> Result<(), ChunkError> {
        if let Some(err) = chunk.get("error") {
            return Err(chunk_error(err));
        }
        self.start(chunk, out);
        if let Some(u) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(usage_of(u));
        }
        let Some(choice) = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        else {
            return Ok(());
        };
        // Some servers put the whole answer in `message` (non-delta) form.
        let delta = choice.get("delta").or_else(|| choice.get("message"));
        if let Some(delta) = delta {
            let reasoning = delta
                .get("reasoning_content")
                .or_else(|| delta.get("reasoning"))
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty());
            if let Some(r) = reasoning {
                self.thinking(r, out);
            }
            if let Some(text) = delta.get("content").and_then(Value::as_str)
                && !text.is_empty()
            {
                self.text(text, out);
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                for call in calls {
                    self.tool_delta(call);
                }
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_owned());
        }
        Ok(())
    }

    /// The end of the stream (`[DONE]`, or the body's end after a finish reason): close the
    /// blocks, emit the tool calls, the stop reason and usage, and `message_stop`.
    pub fn end(&mut self, out: &mut Vec<StreamEvent>) {
        if self.ended {
            return;
        }
        self.ended = true;
        self.start(&Value::Null, out);
        let mut text_calls = Vec::new();
        if self.calls.is_empty() {
            let held = std::mem::take(&mut self.held);
            match text_calls::find(&held, &self.known_tools) {
                Some((rest, calls)) => {
                    if !rest.is_empty() {
                        self.emit_text(&rest, out);
                    }
                    text_calls = calls;
                }
                None => {
                    if !held.is_empty() {
                        self.emit_text(&held, out);
                    }
                    // Calls after streamed prose (in tags, a fence, or bare).
                    if text_calls::may_hold_call(&self.streamed_text)
                        && let Some((_, calls)) =
                            text_calls::find(&self.streamed_text, &self.known_tools)
                    {
                        text_calls = calls;
                    }
                }
            }
        } else if !self.held.is_empty() {
            let held = std::mem::take(&mut self.held);
            self.emit_text(&held, out);
        }
        self.close(out);
        let calls = std::mem::take(&mut self.calls);
        let mut any_call = false;
        for call in calls {
            any_call = true;
            let id = if call.id.is_empty() {
                new_call_id()
            } else {
                call.id
            };
            self.emit_call(id, call.name, call.arguments, out);
        }
        for call in text_calls {
            any_call = true;
            let args = Value::Object(call.arguments).to_string();
            self.emit_call(new_call_id(), call.name, args, out);
        }
        let stop = match self.finish_reason.as_deref() {
            Some("length") => StopReason::MaxTokens,
            Some("content_filter") => StopReason::Refusal,
            _ if any_call => StopReason::ToolUse,
            Some("stop") | Some("eos") | None => StopReason::EndTurn,
            Some("tool_calls") | Some("function_call") => StopReason::ToolUse,
            Some(other) => StopReason::Other(other.to_owned()),
        };
        out.push(StreamEvent::MessageDelta {
            delta: MessageDeltaBody {
                stop_reason: Some(stop),
                stop_sequence: None,
                extra: Default::default(),
            },
            usage: Some(self.usage.take().unwrap_or_default()),
        });
        out.push(StreamEvent::MessageStop);
    }

    fn start(&mut self, chunk: &Value, out: &mut Vec<StreamEvent>) {
        if self.started {
            return;
        }
        self.started = true;
        let id = chunk
            .get("id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map_or_else(|| format!("msg_{}", random_suffix()), str::to_owned);
        let model = chunk
            .get("model")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .unwrap_or(&self.model);
        out.push(StreamEvent::MessageStart {
            message: MessageResponse::new(id, model),
        });
    }

    fn text(&mut self, text: &str, out: &mut Vec<StreamEvent>) {
        match self.text_mode {
            TextMode::Streaming => self.stream_text(text, out),
            TextMode::Held => {
                self.held.push_str(text);
                // Held text that repeats itself without end goes out, for the caller's runaway
                // check to stop (held, it would run to max_tokens unseen).
                if self.held_watch.check(&self.held).is_some() {
                    self.text_mode = TextMode::Streaming;
                    let held = std::mem::take(&mut self.held);
                    self.stream_text(&held, out);
                }
            }
            TextMode::Undecided => {
                self.held.push_str(text);
                if self.held.trim().is_empty() {
                    return;
                }
                if text_calls::may_be_call(&self.held) {
                    // Decided once the start is long enough to rule the markers in or out.
                    let t = self.held.trim_start();
                    if t.starts_with('{')
                        || t.starts_with("[{")
                        || t.starts_with("```")
                        || t.starts_with("<tool_call>")
                    {
                        self.text_mode = TextMode::Held;
                    }
                } else {
                    self.text_mode = TextMode::Streaming;
                    let held = std::mem::take(&mut self.held);
                    self.stream_text(&held, out);
                }
            }
        }
    }

    fn stream_text(&mut self, text: &str, out: &mut Vec<StreamEvent>) {
        self.streamed_text.push_str(text);
        self.emit_text(text, out);
    }

    fn emit_text(&mut self, text: &str, out: &mut Vec<StreamEvent>) {
        let index = self.open_block(Open::Text, out);
        out.push(StreamEvent::ContentBlockDelta {
            index,
            delta: Delta::TextDelta {
                text: text.to_owned(),
            },
        });
    }

    fn thinking(&mut self, text: &str, out: &mut Vec<StreamEvent>) {
        let index = self.open_block(Open::Thinking, out);
        out.push(StreamEvent::ContentBlockDelta {
            index,
            delta: Delta::ThinkingDelta {
                thinking: text.to_owned(),
            },
        });
    }

    /// The index of an open block of this kind, opening one (and closing another) if needed.
    fn open_block(&mut self, kind: Open, out: &mut Vec<StreamEvent>) -> usize {
        if let Some((k, i)) = self.open
            && k == kind
        {
            return i;
        }
        self.close(out);
        let index = self.next_index;
        self.next_index += 1;
        let content_block = match kind {
            Open::Text => ContentBlock::text(""),
            Open::Thinking => ContentBlock::Thinking(ThinkingBlock {
                thinking: String::new(),
                signature: String::new(),
            }),
        };
        out.push(StreamEvent::ContentBlockStart {
            index,
            content_block,
        });
        self.open = Some((kind, index));
        index
    }

    fn close(&mut self, out: &mut Vec<StreamEvent>) {
        if let Some((_, index)) = self.open.take() {
            out.push(StreamEvent::ContentBlockStop { index });
        }
    }

    fn emit_call(
        &mut self,
        id: String,
        name: String,
        arguments: String,
        out: &mut Vec<StreamEvent>,
    ) {
        let index = self.next_index;
        self.next_index += 1;
        out.push(StreamEvent::ContentBlockStart {
            index,
            content_block: ContentBlock::ToolUse(ToolUseBlock {
                id,
                name,
                input: Value::Object(serde_json::Map::new()),
                cache_control: None,
            }),
        });
        if !arguments.trim().is_empty() {
            out.push(StreamEvent::ContentBlockDelta {
                index,
                delta: Delta::InputJsonDelta {
                    partial_json: arguments,
                },
            });
        }
        out.push(StreamEvent::ContentBlockStop { index });
    }

    /// One entry of `delta.tool_calls`.
    fn tool_delta(&mut self, d: &Value) {
        let index = d.get("index").and_then(Value::as_u64);
        let id = d
            .get("id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let function = d.get("function");
        let name = function
            .and_then(|f| f.get("name"))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let arguments = match function.and_then(|f| f.get("arguments")) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => String::new(),
            Some(other) => other.to_string(),
        };
        let existing = match (index, id) {
            (_, Some(id)) if self.calls.iter().any(|c| c.id == id) => {
                self.calls.iter().position(|c| c.id == id)
            }
            // A new id: a new call, unless this index's call has no id yet.
            (Some(i), Some(_)) => self
                .calls
                .iter()
                .rposition(|c| c.index == Some(i) && c.id.is_empty()),
            (None, Some(_)) => None,
            (Some(i), None) => self.calls.iter().rposition(|c| c.index == Some(i)),
            (None, None) => self.calls.len().checked_sub(1),
        };
        let pos = match existing {
            Some(p) => p,
            None => {
                self.calls.push(PendingCall {
                    index,
                    ..PendingCall::default()
                });
                self.calls.len() - 1
            }
        };
        let Some(call) = self.calls.get_mut(pos) else {
            return;
        };
        if let Some(id) = id {
            call.id = id.to_owned();
        }
        if let Some(name) = name
            && call.name != name
        {
            call.name.push_str(name);
        }
        call.arguments.push_str(&arguments);
    }
}

fn chunk_error(err: &Value) -> ChunkError {
    let message = err
        .get("message")
        .and_then(Value::as_str)
        .or_else(|| err.as_str())
        .unwrap_or("the server reported an error mid-stream")
        .to_owned();
    let raw = err
        .get("type")
        .and_then(Value::as_str)
        .or_else(|| err.get("code").and_then(Value::as_str))
        .unwrap_or("")
        .to_ascii_lowercase();
    let kind = if raw.contains("rate_limit") {
        "rate_limit_error"
    } else if raw.contains("overload") {
        "overloaded_error"
    } else if raw.contains("server_error") || raw.contains("internal") || raw.is_empty() {
        "api_error"
    } else {
        return ChunkError { kind: raw, message };
    };
    ChunkError {
        kind: kind.to_owned(),
        message,
    }
}

/// OpenAI usage as Messages API usage: cached prompt tokens are cache reads, the rest input.
fn usage_of(u: &Value) -> DeltaUsage {
    let get = |v: Option<&Value>| v.and_then(Value::as_u64);
    let prompt = get(u.get("prompt_tokens"));
    let cached = get(u
        .get("prompt_tokens_details")
        .and_then(|d| d.get("cached_tokens")));
    DeltaUsage {
        input_tokens: prompt.map(|p| p.saturating_sub(cached.unwrap_or(0))),
        output_tokens: get(u.get("completion_tokens")),
        cache_creation_input_tokens: None,
        cache_read_input_tokens: cached,
        extra: Default::default(),
    }
}

pub(crate) fn random_suffix() -> String {
    (0..24)
        .map(|_| {
            let n = fastrand::u8(0..62);
            char::from(match n {
                0..=9 => b'0' + n,
                10..=35 => b'a' + n - 10,
                _ => b'A' + n - 36,
            })
        })
        .collect()
}

/// An id for a call the server sent without one (or wrote as text).
fn new_call_id() -> String {
    format!("call_{}", random_suffix())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::StreamAccumulator;
    use serde_json::json;

    /// Run chunks through the translator and the accumulator: the assembled message.
    fn run(chunks: &[Value], tools: &[&str]) -> (MessageResponse, Vec<StreamEvent>) {
        let mut t = ChunkTranslator::new("m", tools.iter().map(|s| s.to_string()).collect());
        let mut events = Vec::new();
        for c in chunks {
            t.chunk(c, &mut events).unwrap();
        }
        t.end(&mut events);
        let mut acc = StreamAccumulator::new();
        for e in &mut events.clone() {
            acc.apply(e, &mut Vec::new()).unwrap();
        }
        (acc.finish().unwrap(), events)
    }

    fn delta(d: Value) -> Value {
        json!({"id": "chatcmpl-1", "model": "qwen", "choices": [{"index": 0, "delta": d, "finish_reason": null}]})
    }

    fn finish(reason: &str) -> Value {
        json!({"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
    }

    #[test]
    fn text_reasoning_and_usage() {
        let (m, events) = run(
            &[
                delta(json!({"role": "assistant", "reasoning_content": "think"})),
                delta(json!({"content": "Hel"})),
                delta(json!({"content": "lo"})),
                finish("stop"),
                json!({"id": "chatcmpl-1", "choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": 60}}}),
            ],
            &["Bash"],
        );
        assert_eq!(m.text(), "Hello");
        assert!(matches!(&m.content[0], ContentBlock::Thinking(t) if t.thinking == "think"));
        assert_eq!(m.stop_reason, Some(StopReason::EndTurn));
        assert_eq!(m.model, "qwen");
        assert_eq!(m.usage.input_tokens, 40);
        assert_eq!(m.usage.cache_read_input_tokens, Some(60));
        assert_eq!(m.usage.output_tokens, 7);
        // Prose is streamed, not held back.
        assert!(events.iter().any(|e| matches!(e, StreamEvent::ContentBlockDelta { delta: Delta::TextDelta { text }, .. } if text == "Hel")));
    }

    fn tool_uses(m: &MessageResponse) -> Vec<(String, String, Value)> {
        m.content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolUse(t) => Some((t.id.clone(), t.name.clone(), t.input.clone())),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn held_text_that_repeats_without_end_goes_out_before_the_end() {
        let mut t = ChunkTranslator::new("m", vec!["Bash".into()]);
        let mut events = Vec::new();
        t.chunk(
            &delta(json!({"role": "assistant", "content": "```\n"})),
            &mut events,
        )
        .unwrap();
        let unit = "Please note that I cannot run tests in this repository. ";
        for _ in 0..40 {
            t.chunk(&delta(json!({"content": unit})), &mut events)
                .unwrap();
        }
        // No end yet: the runaway is out as text, for the caller's check to stop.
        let streamed = crate::text_call_filter::text_deltas(&events);
        assert!(
            streamed.starts_with("```\n") && streamed.contains(unit),
            "{streamed}"
        );
    }

    #[test]
    fn prose_then_a_fenced_call_is_a_call() {
        let (m, _) = run(
            &[
                delta(
                    json!({"role": "assistant", "content": "I found the bug. Here is the change:\n"}),
                ),
                delta(json!({"content": "```json\n{\"name\": \"Bash\", \"arguments\": "})),
                delta(json!({"content": "{\"command\": \"bash test.sh\"}}\n```"})),
                finish("stop"),
            ],
            &["Bash"],
        );
        let calls = tool_uses(&m);
        assert_eq!(calls.len(), 1, "{m:?}");
        assert_eq!(calls[0].1, "Bash");
        assert_eq!(calls[0].2, json!({"command": "bash test.sh"}));
        assert_eq!(m.stop_reason, Some(StopReason::ToolUse));
        // A fence of code stays prose.
        let (m, _) = run(
            &[
                delta(json!({"role": "assistant", "content": "Run:\n```sh\nbash test.sh\n```"})),
                finish("stop"),
            ],
            &["Bash"],
        );
        assert!(tool_uses(&m).is_empty());
        assert_eq!(m.stop_reason, Some(StopReason::EndTurn));
    }

    #[test]
    fn parallel_calls_by_index() {
        let (m, _) = run(
            &[
                delta(
                    json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "Bash", "arguments": ""}}]}),
                ),
                delta(
                    json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"command\":"}}]}),
                ),
                delta(
                    json!({"tool_calls": [{"index": 1, "id": "call_b", "function": {"name": "Read", "arguments": "{\"file_path\""}}]}),
                ),
                delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"ls\"}"}}]})),
                delta(json!({"tool_calls": [{"index": 1, "function": {"arguments": ":\"a\"}"}}]})),
                finish("tool_calls"),
            ],
            &["Bash", "Read"],
        );
        let calls = tool_uses(&m);
        assert_eq!(calls.len(), 2);
        assert_eq!(
            calls[0],
            ("call_a".into(), "Bash".into(), json!({"command": "ls"}))
        );
        assert_eq!(
            calls[1],
            ("call_b".into(), "Read".into(), json!({"file_path": "a"}))
        );
        assert_eq!(m.stop_reason, Some(StopReason::ToolUse));
    }

    #[test]
    fn index_zero_for_every_call_and_whole_calls_and_no_index() {
        let (m, _) = run(
            &[
                delta(
                    json!({"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "Bash", "arguments": "{\"command\":\"a\"}"}}]}),
                ),
                delta(
                    json!({"tool_calls": [{"index": 0, "id": "c2", "function": {"name": "Bash", "arguments": "{\"command\""}}]}),
                ),
                delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": ":\"b\"}"}}]})),
                delta(
                    json!({"tool_calls": [{"id": "c3", "function": {"name": "Read", "arguments": {"file_path": "x"}}}]}),
                ),
                // Ollama: finish_reason stop although it called tools.
                finish("stop"),
            ],
            &["Bash", "Read"],
        );
        let calls = tool_uses(&m);
        assert_eq!(calls.len(), 3, "{calls:?}");
        assert_eq!(calls[1].2, json!({"command": "b"}));
        assert_eq!(
            calls[2],
            ("c3".into(), "Read".into(), json!({"file_path": "x"}))
        );
        assert_eq!(m.stop_reason, Some(StopReason::ToolUse));
    }

    #[test]
    fn a_call_written_as_text_becomes_a_call() {
        let (m, events) = run(
            &[
                delta(json!({"content": "```json\n{\"name\": \"Bash\", "})),
                delta(json!({"content": "\"arguments\": {\"command\": \"ls\"}}\n```"})),
                finish("stop"),
            ],
            &["Bash"],
        );
        let calls = tool_uses(&m);
        assert_eq!(calls.len(), 1);
        assert!(calls[0].0.starts_with("call_"));
        assert_eq!(calls[0].2, json!({"command": "ls"}));
        assert_eq!(m.text(), "");
        assert_eq!(m.stop_reason, Some(StopReason::ToolUse));
        assert!(!events.iter().any(|e| matches!(
            e,
            StreamEvent::ContentBlockDelta {
                delta: Delta::TextDelta { .. },
                ..
            }
        )));
        // Off (no known tools): it stays text.
        let (m, _) = run(
            &[
                delta(json!({"content": "{\"name\": \"Bash\", \"arguments\": {}}"})),
                finish("stop"),
            ],
            &[],
        );
        assert!(tool_uses(&m).is_empty());
        // JSON that is no call is given back as text.
        let (m, _) = run(
            &[
                delta(json!({"content": "{\"answer\": 42}"})),
                finish("stop"),
            ],
            &["Bash"],
        );
        assert_eq!(m.text(), "{\"answer\": 42}");
        assert_eq!(m.stop_reason, Some(StopReason::EndTurn));
    }

    #[test]
    fn length_and_content_filter_and_errors() {
        let (m, _) = run(&[delta(json!({"content": "cut"})), finish("length")], &[]);
        assert_eq!(m.stop_reason, Some(StopReason::MaxTokens));
        let (m, _) = run(&[finish("content_filter")], &[]);
        assert_eq!(m.stop_reason, Some(StopReason::Refusal));
        let mut t = ChunkTranslator::new("m", vec![]);
        let err = t
            .chunk(
                &json!({"error": {"message": "boom", "type": "server_error"}}),
                &mut Vec::new(),
            )
            .unwrap_err();
        assert_eq!(err.kind, "api_error");
        assert_eq!(err.message, "boom");
    }

    #[test]
    fn half_arguments_cut_by_length_stay_raw() {
        let (m, _) = run(
            &[
                delta(
                    json!({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "Bash", "arguments": "{\"comm"}}]}),
                ),
                finish("length"),
            ],
            &["Bash"],
        );
        assert_eq!(m.stop_reason, Some(StopReason::MaxTokens));
        assert_eq!(tool_uses(&m)[0].2, json!("{\"comm"));
    }
}
