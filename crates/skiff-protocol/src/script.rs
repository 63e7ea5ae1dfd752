//! The model script format: scripted model turns (text, tool_use, thinking) with per-turn faults.
//!
//! Shared by the test kit's mock servers and the offline scripted provider, so a script that
//! drives a test also drives `skiff --provider script`. Rendering a turn into SSE events is a pure
//! function here; serving them over HTTP lives in `skiff-testkit`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{
    ContentBlock, Delta, DeltaUsage, JsonMap, MessageDeltaBody, MessageResponse, StopReason,
    StreamEvent, TextBlock, ThinkingBlock, ToolUseBlock, Usage,
};

/// A whole script: the model's turns in order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Script {
    /// Model name reported in responses (defaults to the requested model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Start again from the first turn when the script is exhausted (benchmarks).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub repeat: bool,
    /// The turns, one per successful model call.
    pub turns: Vec<ScriptTurn>,
    /// The session the script was exported from (`skiff sessions export ID --script`): the
    /// user's inputs and the recorded tool results, for `skiff replay`. Ignored otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recording: Option<crate::recording::Recording>,
}

/// One model response, plus the failed attempts that precede it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScriptTurn {
    /// Content blocks of the response.
    #[serde(default)]
    pub content: Vec<ScriptBlock>,
    /// Stop reason; defaults to `tool_use` when the turn has a tool_use block, else `end_turn`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<StopReason>,
    /// Usage to report; defaults to a small estimate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Faults served on consecutive attempts before this turn is answered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<Fault>,
    /// Delay before the first byte of the successful response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_first_byte_ms: Option<u64>,
    /// Delay between consecutive SSE events of the successful response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_between_deltas_ms: Option<u64>,
    /// Characters per text/thinking delta (default 16).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk_chars: Option<usize>,
    /// The id of the Task (or Agent) tool call whose subagent makes this call. Such turns
    /// answer only that subagent's requests, and the other turns only the main
    /// conversation's, so subagents running in parallel each get their own turns in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread: Option<String>,
}

/// A content block of a scripted turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ScriptBlock {
    /// Text, streamed in chunks.
    Text {
        /// The text.
        text: String,
    },
    /// A tool call; its input JSON is streamed in fragments (an input given as a JSON string
    /// is streamed verbatim, so it may be invalid JSON).
    ToolUse {
        /// Tool-use id; generated (`toolu_<turn>_<index>`) when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// Tool name.
        name: String,
        /// Tool input.
        #[serde(default = "empty_object")]
        input: Value,
    },
    /// A thinking block with its signature.
    Thinking {
        /// Thinking text.
        thinking: String,
        /// Signature.
        #[serde(default)]
        signature: String,
    },
    /// A call of a tool the API runs itself (`server_tool_use`, e.g. `web_search`); its input
    /// JSON is streamed like a tool call's. A `web_search` call counts in the turn's usage
    /// (`server_tool_use.web_search_requests`) unless the usage is scripted.
    ServerToolUse {
        /// Its id; generated (`srvtoolu_<turn>_<index>`) when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The server tool's name.
        name: String,
        /// Its input.
        #[serde(default = "empty_object")]
        input: Value,
    },
    /// A web search's results (`web_search_tool_result`), whole in `content_block_start` as
    /// the API sends them: an array of `web_search_result`s, or an error object.
    WebSearchToolResult {
        /// The `server_tool_use` it answers.
        tool_use_id: String,
        /// The results.
        content: Value,
    },
}

fn empty_object() -> Value {
    Value::Object(JsonMap::new())
}

/// A failed attempt injected before a turn's successful response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Fault {
    /// Answer with an HTTP error status and an API error body.
    Status {
        /// HTTP status (429, 500, 529, 400, ...).
        status: u16,
        /// `retry-after` header value (seconds or HTTP date).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after: Option<String>,
        /// `retry-after-ms` header value.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after_ms: Option<u64>,
        /// Error message in the body (a default per status otherwise).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// Send this many events of the turn, then drop the connection.
    Disconnect {
        /// Events sent before the drop.
        after_events: usize,
    },
    /// Send this many events, then an event whose data is not valid JSON.
    Malformed {
        /// Events sent before the bad one.
        after_events: usize,
    },
    /// Send this many events, then an SSE `error` event and end the stream.
    ErrorEvent {
        /// Events sent before the error.
        after_events: usize,
        /// Error type (default `overloaded_error`).
        #[serde(default = "overloaded")]
        error_type: String,
        /// Error message.
        #[serde(default = "overloaded_message")]
        message: String,
    },
    /// Send this many events, then go silent for `ms` before dropping the connection.
    Stall {
        /// Events sent before the stall.
        after_events: usize,
        /// How long to stay silent.
        ms: u64,
    },
}

fn overloaded() -> String {
    "overloaded_error".to_owned()
}

fn overloaded_message() -> String {
    "Overloaded".to_owned()
}

impl ScriptTurn {
    /// A turn answering with text only.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![ScriptBlock::Text { text: text.into() }],
            ..Self::default()
        }
    }

    /// A turn calling one tool.
    pub fn tool_use(name: impl Into<String>, input: Value) -> Self {
        Self {
            content: vec![ScriptBlock::ToolUse {
                id: None,
                name: name.into(),
                input,
            }],
            ..Self::default()
        }
    }

    /// Add a fault before this turn's answer.
    pub fn with_fault(mut self, fault: Fault) -> Self {
        self.faults.push(fault);
        self
    }

    /// The stop reason this turn reports.
    pub fn effective_stop_reason(&self) -> StopReason {
        if let Some(r) = &self.stop_reason {
            return r.clone();
        }
        if self
            .content
            .iter()
            .any(|b| matches!(b, ScriptBlock::ToolUse { .. }))
        {
            StopReason::ToolUse
        } else {
            StopReason::EndTurn
        }
    }

    /// The usage this turn reports (scripted, or estimated at ~4 characters per token).
    pub fn effective_usage(&self, input_estimate: u64) -> Usage {
        if let Some(u) = &self.usage {
            return u.clone();
        }
        let out_chars: usize = self
            .content
            .iter()
            .map(|b| match b {
                ScriptBlock::Text { text } => text.len(),
                ScriptBlock::ToolUse { name, input, .. } => name.len() + input.to_string().len(),
                ScriptBlock::Thinking { thinking, .. } => thinking.len(),
                ScriptBlock::ServerToolUse { name, input, .. } => {
                    name.len() + input.to_string().len()
                }
                ScriptBlock::WebSearchToolResult { .. } => 0,
            })
            .sum();
        let searches = self
            .content
            .iter()
            .filter(
                |b| matches!(b, ScriptBlock::ServerToolUse { name, .. } if name == "web_search"),
            )
            .count();
        let mut extra = JsonMap::new();
        if searches > 0 {
            extra.insert(
                "server_tool_use".into(),
                serde_json::json!({"web_search_requests": searches}),
            );
        }
        Usage {
            input_tokens: input_estimate,
            output_tokens: (out_chars as u64).div_ceil(4).max(1),
            cache_creation_input_tokens: Some(0),
            cache_read_input_tokens: Some(0),
            extra,
        }
    }

    /// The complete assistant message of this turn.
    pub fn to_message(
        &self,
        turn_index: usize,
        model: &str,
        input_estimate: u64,
    ) -> MessageResponse {
        let mut msg = MessageResponse::new(format!("msg_mock_{turn_index:04}"), model);
        msg.content = self
            .content
            .iter()
            .enumerate()
            .map(|(i, b)| block_of(b, turn_index, i))
            .collect();
        msg.stop_reason = Some(self.effective_stop_reason());
        msg.usage = self.effective_usage(input_estimate);
        msg
    }

    /// The SSE events of this turn's successful response, `message_start` to `message_stop`.
    pub fn to_stream_events(
        &self,
        turn_index: usize,
        model: &str,
        input_estimate: u64,
    ) -> Vec<StreamEvent> {
        let full = self.to_message(turn_index, model, input_estimate);
        let chunk = self.chunk_chars.unwrap_or(16).max(1);
        let mut start = full.clone();
        start.content = Vec::new();
        start.stop_reason = None;
        start.usage.output_tokens = 1;
        let mut events = vec![StreamEvent::MessageStart { message: start }];
        for (index, block) in full.content.iter().enumerate() {
            let (empty, deltas) = match block {
                ContentBlock::Text(t) => (
                    ContentBlock::text(""),
                    split_chars(&t.text, chunk)
                        .map(|s| Delta::TextDelta { text: s.to_owned() })
                        .collect::<Vec<_>>(),
                ),
                ContentBlock::ToolUse(t) => {
                    // An input given as a string is streamed verbatim: scripts can reproduce a
                    // model that writes invalid JSON.
                    let json = match &t.input {
                        Value::String(raw) => raw.clone(),
                        other => other.to_string(),
                    };
                    let mut deltas = vec![Delta::InputJsonDelta {
                        partial_json: String::new(),
                    }];
                    deltas.extend(split_chars(&json, chunk).map(|s| Delta::InputJsonDelta {
                        partial_json: s.to_owned(),
                    }));
                    let empty = ContentBlock::ToolUse(ToolUseBlock {
                        input: empty_object(),
                        ..t.clone()
                    });
                    (empty, deltas)
                }
                ContentBlock::Thinking(t) => {
                    let mut deltas: Vec<Delta> = split_chars(&t.thinking, chunk)
                        .map(|s| Delta::ThinkingDelta {
                            thinking: s.to_owned(),
                        })
                        .collect();
                    deltas.push(Delta::SignatureDelta {
                        signature: t.signature.clone(),
                    });
                    let empty = ContentBlock::Thinking(ThinkingBlock {
                        thinking: String::new(),
                        signature: String::new(),
                    });
                    (empty, deltas)
                }
                // A server tool call streams its input as a tool call does.
                ContentBlock::Unknown(v) if v["type"] == "server_tool_use" => {
                    let mut empty = v.clone();
                    empty["input"] = empty_object();
                    let json = v.get("input").map(Value::to_string).unwrap_or_default();
                    let mut deltas = vec![Delta::InputJsonDelta {
                        partial_json: String::new(),
                    }];
                    deltas.extend(split_chars(&json, chunk).map(|s| Delta::InputJsonDelta {
                        partial_json: s.to_owned(),
                    }));
                    (ContentBlock::Unknown(empty), deltas)
                }
                other => (other.clone(), Vec::new()),
            };
            events.push(StreamEvent::ContentBlockStart {
                index,
                content_block: empty,
            });
            events.extend(
                deltas
                    .into_iter()
                    .map(|delta| StreamEvent::ContentBlockDelta { index, delta }),
            );
            events.push(StreamEvent::ContentBlockStop { index });
        }
        events.push(StreamEvent::MessageDelta {
            delta: MessageDeltaBody {
                stop_reason: full.stop_reason.clone(),
                stop_sequence: None,
                extra: JsonMap::new(),
            },
            usage: Some(DeltaUsage {
                output_tokens: Some(full.usage.output_tokens),
                ..DeltaUsage::default()
            }),
        });
        events.push(StreamEvent::MessageStop);
        events
    }
}

/// The Anthropic error type the API uses for an HTTP status.
pub fn error_type_for_status(status: u16) -> &'static str {
    match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        504 => "timeout_error",
        529 => "overloaded_error",
        _ => "api_error",
    }
}

/// A default error message for an HTTP status (what the mock and the scripted provider send).
pub fn default_message_for_status(status: u16) -> &'static str {
    match status {
        400 => "Invalid request",
        401 => "invalid x-api-key",
        403 => "Permission denied",
        404 => "Not found",
        413 => "Request exceeds the maximum allowed number of bytes",
        429 => "Rate limited",
        500 => "Internal server error",
        502 => "Bad gateway",
        503 => "Service unavailable",
        504 => "Request timed out",
        529 => "Overloaded",
        _ => "Mock error",
    }
}

fn block_of(b: &ScriptBlock, turn: usize, index: usize) -> ContentBlock {
    match b {
        ScriptBlock::Text { text } => ContentBlock::Text(TextBlock {
            text: text.clone(),
            citations: None,
            cache_control: None,
        }),
        ScriptBlock::ToolUse { id, name, input } => ContentBlock::ToolUse(ToolUseBlock {
            id: id
                .clone()
                .unwrap_or_else(|| format!("toolu_{turn:04}_{index:02}")),
            name: name.clone(),
            input: input.clone(),
            cache_control: None,
        }),
        ScriptBlock::Thinking {
            thinking,
            signature,
        } => ContentBlock::Thinking(ThinkingBlock {
            thinking: thinking.clone(),
            signature: signature.clone(),
        }),
        ScriptBlock::ServerToolUse { id, name, input } => {
            ContentBlock::Unknown(serde_json::json!({
                "type": "server_tool_use",
                "id": id.clone().unwrap_or_else(|| format!("srvtoolu_{turn:04}_{index:02}")),
                "name": name,
                "input": input,
            }))
        }
        ScriptBlock::WebSearchToolResult {
            tool_use_id,
            content,
        } => ContentBlock::Unknown(serde_json::json!({
            "type": "web_search_tool_result",
            "tool_use_id": tool_use_id,
            "content": content,
        })),
    }
}

/// Split `s` into pieces of at most `n` characters, on char boundaries.
fn split_chars(s: &str, n: usize) -> impl Iterator<Item = &str> {
    let mut rest = s;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let cut = rest.char_indices().nth(n).map_or(rest.len(), |(i, _)| i);
        let (head, tail) = rest.split_at(cut);
        rest = tail;
        Some(head)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn script_parses_from_json_and_defaults_stop_reason() {
        let s: Script = serde_json::from_value(json!({"turns":[
            {"content":[{"type":"text","text":"hi"},{"type":"tool_use","name":"Bash","input":{"command":"ls"}}],
             "faults":[{"kind":"status","status":529,"retry_after":"1"},{"kind":"disconnect","after_events":3}]},
            {"content":[{"type":"text","text":"done"}]}
        ]}))
        .unwrap();
        assert_eq!(s.turns[0].effective_stop_reason(), StopReason::ToolUse);
        assert_eq!(s.turns[1].effective_stop_reason(), StopReason::EndTurn);
        assert_eq!(s.turns[0].faults.len(), 2);
    }

    #[test]
    fn stream_events_reassemble_to_the_message() {
        let turn = ScriptTurn {
            content: vec![
                ScriptBlock::Thinking {
                    thinking: "let me think about ünïcödé".into(),
                    signature: "sig".into(),
                },
                ScriptBlock::Text {
                    text: "héllo wörld, this is a longer text".into(),
                },
                ScriptBlock::ToolUse {
                    id: None,
                    name: "Bash".into(),
                    input: json!({"command":"echo hi","timeout":5000}),
                },
            ],
            chunk_chars: Some(5),
            ..ScriptTurn::default()
        };
        let msg = turn.to_message(3, "m", 10);
        let events = turn.to_stream_events(3, "m", 10);
        assert!(matches!(events[0], StreamEvent::MessageStart { .. }));
        assert_eq!(events.last(), Some(&StreamEvent::MessageStop));
        let mut text = String::new();
        let mut json_buf = String::new();
        let mut thinking = String::new();
        for e in &events {
            if let StreamEvent::ContentBlockDelta { delta, .. } = e {
                match delta {
                    Delta::TextDelta { text: t } => text.push_str(t),
                    Delta::InputJsonDelta { partial_json } => json_buf.push_str(partial_json),
                    Delta::ThinkingDelta { thinking: t } => thinking.push_str(t),
                    _ => {}
                }
            }
        }
        assert_eq!(text, "héllo wörld, this is a longer text");
        assert_eq!(thinking, "let me think about ünïcödé");
        let input: Value = serde_json::from_str(&json_buf).unwrap();
        assert_eq!(input, json!({"command":"echo hi","timeout":5000}));
        let ContentBlock::ToolUse(tu) = &msg.content[2] else {
            panic!()
        };
        assert_eq!(tu.id, "toolu_0003_02");
    }

    #[test]
    fn split_chars_respects_boundaries() {
        let parts: Vec<_> = split_chars("aé😀bc", 2).collect();
        assert_eq!(parts, vec!["aé", "😀b", "c"]);
        assert_eq!(split_chars("", 3).count(), 0);
    }
}
