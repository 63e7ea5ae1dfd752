//! A session's events as ACP `session/update`s: the answer and the model's thinking streamed
//! as chunks, each tool call announced (`tool_call`) and ended (`tool_call_update`), the plan
//! of a todo list, and the context used after a turn (`usage_update`).

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use agent_client_protocol::v1::schema::{
    ContentBlock as AcpBlock, ContentChunk, Cost, SessionUpdate, ToolCallStatus, UsageUpdate,
};
use serde_json::Value;
use skiff_core::Event;
use skiff_protocol::sdk::{ResultMessage, SdkMessage};
use skiff_protocol::{ContentBlock, Delta, MessageContent, StreamEvent, Usage};

use super::tools;

/// Turns one session's events into updates; keeps what it needs across events (the calls in
/// flight, what was streamed of the current answer, the last call's context size).
#[derive(Debug)]
pub struct Translator {
    cwd: PathBuf,
    /// Calls announced and not ended: name and input, by id.
    calls: HashMap<String, (String, Value)>,
    /// Calls already reported running.
    running: HashSet<String>,
    /// Text of the current model call arrived as deltas (its finished block is not sent again).
    text_streamed: bool,
    /// Thinking of the current model call arrived as deltas.
    thinking_streamed: bool,
    /// Usage of the latest model call.
    usage: Usage,
    /// Output of running calls so far (the last [`LIVE_OUTPUT_CHARS`] of it), by id.
    output: HashMap<String, String>,
}

/// How much of a running command's output its call shows (the end of it).
const LIVE_OUTPUT_CHARS: usize = 32 * 1024;

impl Translator {
    /// A translator for a session in the workspace `cwd`.
    pub fn new(cwd: PathBuf) -> Self {
        Self {
            cwd,
            calls: HashMap::new(),
            running: HashSet::new(),
            text_streamed: false,
            thinking_streamed: false,
            usage: Usage::default(),
            output: HashMap::new(),
        }
    }

    /// The name and input of a call announced and not yet ended.
    #[cfg(test)]
    pub fn call(&self, id: &str) -> Option<&(String, Value)> {
        self.calls.get(id)
    }

    /// The updates of one event (none for requests and the result, which the session handles).
    pub fn event(&mut self, event: &Event) -> Vec<SessionUpdate> {
        match event {
            Event::Delta(ev) => self.stream_event(ev),
            Event::Frame(SdkMessage::StreamEvent(s)) => self.stream_event(&s.event),
            Event::Frame(frame) => self.frame(frame),
            Event::ToolOutput { tool_use_id, text } => self.tool_output(tool_use_id, text),
            _ => Vec::new(),
        }
    }

    /// A running call's output so far, in the call (as a console block), the call reported
    /// running with it; the result replaces it when the call ends.
    fn tool_output(&mut self, id: &str, text: &str) -> Vec<SessionUpdate> {
        if !self.calls.contains_key(id) {
            return Vec::new();
        }
        self.running.insert(id.to_owned());
        let so_far = self.output.entry(id.to_owned()).or_default();
        so_far.push_str(text);
        if so_far.len() > LIVE_OUTPUT_CHARS {
            let mut cut = so_far.len() - LIVE_OUTPUT_CHARS;
            while !so_far.is_char_boundary(cut) {
                cut += 1;
            }
            so_far.drain(..cut);
        }
        vec![SessionUpdate::ToolCallUpdate(tools::live_output(
            id, so_far,
        ))]
    }

    fn stream_event(&mut self, ev: &StreamEvent) -> Vec<SessionUpdate> {
        match ev {
            StreamEvent::MessageStart { message } => {
                self.text_streamed = false;
                self.thinking_streamed = false;
                self.usage = message.usage.clone();
                Vec::new()
            }
            StreamEvent::MessageDelta {
                usage: Some(delta), ..
            } => {
                self.usage.merge_delta(delta);
                Vec::new()
            }
            StreamEvent::ContentBlockDelta {
                delta: Delta::TextDelta { text },
                ..
            } if !text.is_empty() => {
                self.text_streamed = true;
                vec![agent_text(text)]
            }
            StreamEvent::ContentBlockDelta {
                delta: Delta::ThinkingDelta { thinking },
                ..
            } if !thinking.is_empty() => {
                self.thinking_streamed = true;
                vec![thought(thinking)]
            }
            _ => Vec::new(),
        }
    }

    fn frame(&mut self, frame: &SdkMessage) -> Vec<SessionUpdate> {
        let mut out = Vec::new();
        match frame {
            SdkMessage::Assistant(a) => {
                // A subagent's (Task's) words stay inside it; its tool calls are shown.
                let subagent = a.parent_tool_use_id.is_some();
                for block in &a.message.content {
                    match block {
                        ContentBlock::Text(t)
                            if !subagent && !self.text_streamed && !t.text.is_empty() =>
                        {
                            out.push(agent_text(&t.text));
                        }
                        ContentBlock::Thinking(t)
                            if !subagent && !self.thinking_streamed && !t.thinking.is_empty() =>
                        {
                            out.push(thought(&t.thinking));
                        }
                        ContentBlock::ToolUse(t) => {
                            out.push(SessionUpdate::ToolCall(tools::started(
                                &t.id, &t.name, &t.input, &self.cwd,
                            )));
                            if !subagent && let Some(plan) = tools::plan(&t.name, &t.input) {
                                out.push(SessionUpdate::Plan(plan));
                            }
                            self.calls
                                .insert(t.id.clone(), (t.name.clone(), t.input.clone()));
                        }
                        _ => {}
                    }
                }
            }
            SdkMessage::User(u) => {
                let MessageContent::Blocks(blocks) = &u.message.content else {
                    return out;
                };
                let results: Vec<_> = blocks
                    .iter()
                    .filter_map(|b| match b {
                        ContentBlock::ToolResult(r) => Some(r),
                        _ => None,
                    })
                    .collect();
                // One structured result per frame: it belongs to a frame's only result.
                let structured = (results.len() == 1)
                    .then_some(u.tool_use_result.as_ref())
                    .flatten()
                    .filter(|v| v.is_object());
                for r in results {
                    let (name, input) = self
                        .calls
                        .remove(&r.tool_use_id)
                        .unwrap_or_else(|| (String::new(), Value::Null));
                    self.running.remove(&r.tool_use_id);
                    self.output.remove(&r.tool_use_id);
                    out.push(SessionUpdate::ToolCallUpdate(tools::finished(
                        &r.tool_use_id,
                        &name,
                        &input,
                        &self.cwd,
                        r.content.as_ref(),
                        r.is_error == Some(true),
                        structured,
                    )));
                }
            }
            SdkMessage::ToolProgress(p) => {
                if let Some(update) = self.running(&p.tool_use_id) {
                    out.push(update);
                }
            }
            _ => {}
        }
        out
    }

    /// `in_progress` for a call not yet reported running (once).
    pub fn running(&mut self, id: &str) -> Option<SessionUpdate> {
        (self.calls.contains_key(id) && self.running.insert(id.to_owned()))
            .then(|| SessionUpdate::ToolCallUpdate(tools::status(id, ToolCallStatus::InProgress)))
    }

    /// The context after a turn: tokens of the latest model call, the model's window (from the
    /// result's per-model usage), the session's cost so far. `None` when the window is unknown.
    pub fn usage_update(&self, result: &ResultMessage, model: &str) -> Option<SessionUpdate> {
        let window = result
            .model_usage
            .get(model)
            .or_else(|| result.model_usage.values().next())
            .map(|m| m.context_window)
            .filter(|w| *w > 0)?;
        let used = self.usage.total_input() + self.usage.output_tokens;
        let mut update = UsageUpdate::new(used, window);
        if result.total_cost_usd > 0.0 {
            update = update.cost(Cost::new(result.total_cost_usd, "USD"));
        }
        Some(SessionUpdate::UsageUpdate(update))
    }

    /// Forget the calls in flight (a new conversation).
    pub fn clear(&mut self) {
        self.calls.clear();
        self.running.clear();
        self.output.clear();
    }
}

/// A chunk of the answer.
pub fn agent_text(text: &str) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(ContentChunk::new(AcpBlock::from(text.to_owned())))
}

/// A chunk of the model's thinking.
pub fn thought(text: &str) -> SessionUpdate {
    SessionUpdate::AgentThoughtChunk(ContentChunk::new(AcpBlock::from(text.to_owned())))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use serde_json::json;

    use super::*;

    fn ev(v: Value) -> Event {
        Event::Frame(serde_json::from_value(v).unwrap())
    }

    fn delta(v: Value) -> Event {
        Event::Delta(serde_json::from_value(v).unwrap())
    }

    fn assistant(content: Value) -> Event {
        ev(
            json!({"type": "assistant", "parent_tool_use_id": null, "session_id": "s", "uuid": "u",
            "message": {"id": "m", "type": "message", "role": "assistant", "model": "m",
                "content": content, "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": 1, "output_tokens": 1}}}),
        )
    }

    fn wire(updates: &[SessionUpdate]) -> Vec<Value> {
        updates
            .iter()
            .map(|u| serde_json::to_value(u).unwrap())
            .collect()
    }

    #[test]
    fn streamed_text_is_not_sent_twice_and_unstreamed_text_is_sent() {
        let mut t = Translator::new(PathBuf::from("/w"));
        let start = delta(
            json!({"type": "message_start", "message": {"id": "m", "type": "message",
            "role": "assistant", "model": "m", "content": [], "stop_reason": null,
            "stop_sequence": null, "usage": {"input_tokens": 100, "output_tokens": 1,
            "cache_read_input_tokens": 20}}}),
        );
        assert!(t.event(&start).is_empty());
        let chunk = wire(
            &t.event(&delta(json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": "Hel"}}))),
        );
        assert_eq!(
            chunk,
            vec![
                json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hel"}})
            ]
        );
        let thinking = wire(
            &t.event(&delta(json!({"type": "content_block_delta", "index": 1,
            "delta": {"type": "thinking_delta", "thinking": "hmm"}}))),
        );
        assert_eq!(thinking[0]["sessionUpdate"], "agent_thought_chunk");
        assert!(
            t.event(&assistant(json!([{"type": "text", "text": "Hello"}])))
                .is_empty()
        );
        t.event(&delta(
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 30}}),
        ));
        // A provider that sends no deltas: the finished block is the chunk.
        t.event(&delta(
            json!({"type": "message_start", "message": {"id": "m2", "type": "message",
            "role": "assistant", "model": "m", "content": [], "stop_reason": null,
            "stop_sequence": null, "usage": {"input_tokens": 200, "output_tokens": 0}}}),
        ));
        let whole = wire(&t.event(&assistant(json!([{"type": "text", "text": "Hello"}]))));
        assert_eq!(whole[0]["content"]["text"], "Hello");
    }

    #[test]
    fn a_tool_round_is_announced_then_ended() {
        let mut t = Translator::new(PathBuf::from("/w"));
        let call = wire(
            &t.event(&assistant(json!([{"type": "tool_use", "id": "toolu_1",
            "name": "Read", "input": {"file_path": "a.txt"}}]))),
        );
        assert_eq!(call.len(), 1);
        assert_eq!(call[0]["sessionUpdate"], "tool_call");
        assert_eq!(call[0]["toolCallId"], "toolu_1");
        assert_eq!(call[0]["kind"], "read");
        // Pending is the default status: not sent.
        assert!(call[0].get("status").is_none(), "{call:?}");
        assert_eq!(call[0]["locations"][0]["path"], "/w/a.txt");
        assert!(t.running("toolu_1").is_some());
        assert!(t.running("toolu_1").is_none(), "reported running once");
        let done = wire(
            &t.event(&ev(json!({"type": "user", "parent_tool_use_id": null,
            "session_id": "s", "uuid": "u",
            "message": {"role": "user", "content": [{"type": "tool_result",
                "tool_use_id": "toolu_1", "content": "1\thi"}]},
            "tool_use_result": {"type": "text", "file": {"filePath": "/w/a.txt", "content": "hi",
                "numLines": 1, "startLine": 1, "totalLines": 1}}}))),
        );
        assert_eq!(done[0]["sessionUpdate"], "tool_call_update");
        assert_eq!(done[0]["status"], "completed");
        assert_eq!(done[0]["content"][0]["content"]["text"], "```\nhi\n```");
        assert_eq!(done[0]["rawOutput"]["file"]["content"], "hi");
        assert!(t.call("toolu_1").is_none());
    }

    #[test]
    fn a_subagents_words_stay_inside_it_and_its_calls_are_shown() {
        let mut t = Translator::new(PathBuf::from("/w"));
        let frame = ev(json!({"type": "assistant", "parent_tool_use_id": "task_1",
            "session_id": "s", "uuid": "u",
            "message": {"id": "m", "type": "message", "role": "assistant", "model": "m",
                "content": [{"type": "text", "text": "sub-answer"},
                    {"type": "tool_use", "id": "sub_1", "name": "Grep", "input": {"pattern": "x"}}],
                "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": 1, "output_tokens": 1}}}));
        let out = wire(&t.event(&frame));
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(out[0]["sessionUpdate"], "tool_call");
        assert_eq!(out[0]["kind"], "search");
    }

    #[test]
    fn todo_lists_send_a_plan_and_usage_reports_the_context() {
        let mut t = Translator::new(PathBuf::from("/w"));
        let out = wire(&t.event(&assistant(
            json!([{"type": "tool_use", "id": "t", "name": "TodoWrite",
            "input": {"todos": [{"content": "a", "status": "pending"}]}}]),
        )));
        assert_eq!(out[1]["sessionUpdate"], "plan");
        assert_eq!(out[1]["entries"][0]["content"], "a");
        t.event(&delta(
            json!({"type": "message_start", "message": {"id": "m", "type": "message",
            "role": "assistant", "model": "m", "content": [], "stop_reason": null,
            "stop_sequence": null, "usage": {"input_tokens": 100, "output_tokens": 0,
            "cache_read_input_tokens": 50}}}),
        ));
        t.event(&delta(
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 25}}),
        ));
        let result: ResultMessage = serde_json::from_value(json!({"type": "result",
            "subtype": "success", "is_error": false, "duration_ms": 1, "duration_api_ms": 1,
            "num_turns": 1, "session_id": "s", "uuid": "u", "total_cost_usd": 0.5,
            "usage": {"input_tokens": 1, "output_tokens": 1}, "permission_denials": [],
            "modelUsage": {"m": {"inputTokens": 1, "outputTokens": 1, "cacheReadInputTokens": 0,
                "cacheCreationInputTokens": 0, "webSearchRequests": 0, "costUSD": 0.5,
                "contextWindow": 200000, "maxOutputTokens": 8192}}}))
        .unwrap();
        let usage = serde_json::to_value(t.usage_update(&result, "m").unwrap()).unwrap();
        assert_eq!(
            usage,
            json!({"sessionUpdate": "usage_update", "used": 175, "size": 200000,
                "cost": {"amount": 0.5, "currency": "USD"}})
        );
    }
}
