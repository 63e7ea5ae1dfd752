//! The JSON-text tool-call fallback for Messages API streams (llama.cpp's, Ollama's and LM
//! Studio's `/v1/messages`), so it works as on the OpenAI-compatible path
//! ([`crate::openai::text_calls`]): answer text that may be a tool call written as text is held
//! back; when the message ends it becomes `tool_use` blocks (and the stop reason `tool_use`) if
//! it names a tool of the request, else it goes out unchanged. Text that cannot be a call
//! streams as it comes; a message with real tool calls is left alone.

use serde_json::Value;
use skiff_protocol::{ContentBlock, Delta, StopReason, StreamEvent, ToolUseBlock};

use crate::openai::text_calls;

/// Rewrites one message's events; one filter per attempt.
#[derive(Debug)]
pub(crate) struct TextCallFilter {
    known: Vec<String>,
    /// Events held back while the text may still be a call.
    held: Vec<StreamEvent>,
    /// The held text blocks' text, joined.
    text: String,
    /// The indexes of the held text blocks.
    text_indexes: Vec<usize>,
    /// Passing everything through (the text cannot be a call, or a real call came).
    passing: bool,
    /// The text let through: prose can end with calls (in a fence, tags, or bare).
    streamed: String,
    /// Whether the message has real tool calls.
    real_calls: bool,
    /// The highest block index seen.
    max_index: usize,
    /// Watches the held text for a runaway repetition.
    watch: crate::repetition::Runaway,
}

impl TextCallFilter {
    /// A filter for calls to the tools named `known` (none: it passes everything).
    pub(crate) fn new(known: Vec<String>) -> Self {
        let passing = known.is_empty();
        Self {
            known,
            held: Vec::new(),
            text: String::new(),
            text_indexes: Vec::new(),
            passing,
            streamed: String::new(),
            real_calls: false,
            max_index: 0,
            watch: Default::default(),
        }
    }

    /// Take one event; push what goes on now to `out`.
    pub(crate) fn push(&mut self, event: StreamEvent, out: &mut Vec<StreamEvent>) {
        if let StreamEvent::ContentBlockStart { index, .. } = &event {
            self.max_index = self.max_index.max(*index);
        }
        if self.passing {
            self.pass(event, out);
            return;
        }
        match event {
            StreamEvent::ContentBlockStart {
                index,
                content_block: ContentBlock::Text(t),
            } => {
                self.text_indexes.push(index);
                self.text.push_str(&t.text);
                self.held.push(StreamEvent::ContentBlockStart {
                    index,
                    content_block: ContentBlock::Text(t),
                });
                self.decide_early(out);
            }
            StreamEvent::ContentBlockStart {
                content_block: ContentBlock::ToolUse(_),
                ..
            } => {
                // Real calls: the text is text.
                self.real_calls = true;
                self.pass_all(out);
                out.push(event);
            }
            StreamEvent::ContentBlockDelta {
                index,
                delta: Delta::TextDelta { text },
            } if !self.text_indexes.is_empty() => {
                self.text.push_str(&text);
                self.held.push(StreamEvent::ContentBlockDelta {
                    index,
                    delta: Delta::TextDelta { text },
                });
                self.decide_early(out);
            }
            StreamEvent::MessageDelta { mut delta, usage } => {
                if self.convert(out) {
                    delta.stop_reason = Some(StopReason::ToolUse);
                }
                out.push(StreamEvent::MessageDelta { delta, usage });
            }
            StreamEvent::MessageStop | StreamEvent::Error { .. } => {
                self.pass_all(out);
                out.push(event);
            }
            // Keep the order of what was held (thinking, pings) once holding began.
            other if !self.text_indexes.is_empty() => self.held.push(other),
            other => out.push(other),
        }
    }

    /// Once the text cannot be a call any more, let it (and everything after) through; so too
    /// text that repeats itself without end, for the caller's runaway check to stop (held, it
    /// would run to max_tokens unseen).
    fn decide_early(&mut self, out: &mut Vec<StreamEvent>) {
        if (!self.text.trim().is_empty() && !text_calls::may_be_call(&self.text))
            || self.watch.check(&self.text).is_some()
        {
            self.pass_all(out);
        }
    }

    fn pass_all(&mut self, out: &mut Vec<StreamEvent>) {
        out.append(&mut self.held);
        self.streamed.push_str(&std::mem::take(&mut self.text));
        self.passing = true;
    }

    /// An event once the text is known not to be (only) a call: through, but prose followed
    /// by calls (in a fence, tags, or bare; and no real call) still makes them calls when the
    /// message ends, as on the OpenAI-compatible path.
    fn pass(&mut self, event: StreamEvent, out: &mut Vec<StreamEvent>) {
        match event {
            StreamEvent::MessageDelta { mut delta, usage } if !self.real_calls => {
                let calls = text_calls::may_hold_call(&self.streamed)
                    .then(|| text_calls::find(&self.streamed, &self.known))
                    .flatten();
                if let Some((_, calls)) = calls {
                    self.real_calls = true;
                    self.emit_calls(calls, out);
                    delta.stop_reason = Some(StopReason::ToolUse);
                }
                out.push(StreamEvent::MessageDelta { delta, usage });
            }
            event => {
                match &event {
                    StreamEvent::ContentBlockStart {
                        content_block: ContentBlock::Text(t),
                        ..
                    } => self.streamed.push_str(&t.text),
                    StreamEvent::ContentBlockDelta {
                        delta: Delta::TextDelta { text },
                        ..
                    } => self.streamed.push_str(text),
                    StreamEvent::ContentBlockStart {
                        content_block: ContentBlock::ToolUse(_),
                        ..
                    } => self.real_calls = true,
                    _ => {}
                }
                out.push(event);
            }
        }
    }

    /// At the message's end: the held text as calls (with any prose around them) when it is
    /// calls; else unchanged. Returns whether calls were made.
    fn convert(&mut self, out: &mut Vec<StreamEvent>) -> bool {
        let Some(&first) = self.text_indexes.first() else {
            self.passing = true;
            return false;
        };
        let Some((rest, calls)) = text_calls::find(&self.text, &self.known) else {
            self.pass_all(out);
            return false;
        };
        // Other held events (thinking, pings) keep their place; the text blocks are replaced.
        for event in self.held.drain(..) {
            match &event {
                StreamEvent::ContentBlockStart {
                    content_block: ContentBlock::Text(_),
                    ..
                }
                | StreamEvent::ContentBlockDelta {
                    delta: Delta::TextDelta { .. },
                    ..
                } => {}
                StreamEvent::ContentBlockStop { index } if self.text_indexes.contains(index) => {}
                _ => out.push(event),
            }
        }
        if !rest.is_empty() {
            out.push(StreamEvent::ContentBlockStart {
                index: first,
                content_block: ContentBlock::text(""),
            });
            out.push(StreamEvent::ContentBlockDelta {
                index: first,
                delta: Delta::TextDelta { text: rest },
            });
            out.push(StreamEvent::ContentBlockStop { index: first });
        }
        self.emit_calls(calls, out);
        self.passing = true;
        true
    }

    /// `calls` as tool_use blocks after every block of the message.
    fn emit_calls(&mut self, calls: Vec<text_calls::TextCall>, out: &mut Vec<StreamEvent>) {
        for (i, call) in calls.into_iter().enumerate() {
            let index = self.max_index + 1 + i;
            out.push(StreamEvent::ContentBlockStart {
                index,
                content_block: ContentBlock::ToolUse(ToolUseBlock {
                    id: format!("toolu_text_{}", crate::openai::random_suffix()),
                    name: call.name,
                    input: Value::Object(serde_json::Map::new()),
                    cache_control: None,
                }),
            });
            out.push(StreamEvent::ContentBlockDelta {
                index,
                delta: Delta::InputJsonDelta {
                    partial_json: Value::Object(call.arguments).to_string(),
                },
            });
            out.push(StreamEvent::ContentBlockStop { index });
        }
    }
}

/// The text the text deltas among `events` carry, joined (tests of the holders here and on
/// the OpenAI-compatible path).
#[cfg(test)]
pub(crate) fn text_deltas(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ContentBlockDelta {
                delta: Delta::TextDelta { text },
                ..
            } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use skiff_protocol::{MessageDeltaBody, MessageResponse};

    fn run(events: Vec<StreamEvent>) -> Vec<StreamEvent> {
        let mut f = TextCallFilter::new(vec!["Bash".into(), "Read".into()]);
        let mut out = Vec::new();
        for e in events {
            f.push(e, &mut out);
        }
        out
    }

    fn text_message(parts: &[&str], stop: StopReason) -> Vec<StreamEvent> {
        let mut events = vec![
            StreamEvent::MessageStart {
                message: MessageResponse::new("msg_1", "local"),
            },
            StreamEvent::ContentBlockStart {
                index: 0,
                content_block: ContentBlock::text(""),
            },
        ];
        for p in parts {
            events.push(StreamEvent::ContentBlockDelta {
                index: 0,
                delta: Delta::TextDelta {
                    text: (*p).to_owned(),
                },
            });
        }
        events.push(StreamEvent::ContentBlockStop { index: 0 });
        events.push(StreamEvent::MessageDelta {
            delta: MessageDeltaBody {
                stop_reason: Some(stop),
                stop_sequence: None,
                extra: Default::default(),
            },
            usage: None,
        });
        events.push(StreamEvent::MessageStop);
        events
    }

    fn assemble(events: Vec<StreamEvent>) -> skiff_protocol::MessageResponse {
        let mut acc = crate::StreamAccumulator::new();
        let mut done = Vec::new();
        for mut e in events {
            acc.apply(&mut e, &mut done).unwrap();
        }
        acc.finish().unwrap()
    }

    #[test]
    fn a_call_written_as_text_becomes_a_call() {
        let out = run(text_message(
            &[
                "```json\n{\"name\": \"bash\", ",
                "\"arguments\": {\"command\": \"bash test.sh\"}}\n```",
            ],
            StopReason::EndTurn,
        ));
        let msg = assemble(out);
        assert_eq!(msg.stop_reason, Some(StopReason::ToolUse));
        assert_eq!(msg.content.len(), 1, "{:?}", msg.content);
        match &msg.content[0] {
            ContentBlock::ToolUse(t) => {
                assert_eq!(t.name, "Bash");
                assert_eq!(t.input["command"], "bash test.sh");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn held_text_that_repeats_without_end_goes_out_before_the_end() {
        let unit = "Please note that I cannot run tests in this repository. ";
        let mut parts = vec!["```\n"];
        parts.extend(std::iter::repeat_n(unit, 40));
        let events = text_message(&parts, StopReason::EndTurn);
        let mut f = TextCallFilter::new(vec!["Bash".into()]);
        let mut out = Vec::new();
        // Everything but the block's and the message's end.
        for e in &events[..events.len() - 3] {
            f.push(e.clone(), &mut out);
        }
        let text = text_deltas(&out);
        assert!(text.starts_with("```\n") && text.contains(unit), "{text}");
    }

    #[test]
    fn prose_streams_at_once_and_stays_prose() {
        let events = text_message(&["The bug is", " in add."], StopReason::EndTurn);
        let mut f = TextCallFilter::new(vec!["Bash".into()]);
        let mut out = Vec::new();
        f.push(events[0].clone(), &mut out);
        f.push(events[1].clone(), &mut out);
        f.push(events[2].clone(), &mut out);
        // Not held: the first words already went out.
        assert_eq!(out.len(), 3);
        let msg = assemble(run(events));
        assert_eq!(msg.text(), "The bug is in add.");
        assert_eq!(msg.stop_reason, Some(StopReason::EndTurn));
        // JSON that names no tool of the request stays text.
        let msg = assemble(run(text_message(
            &["{\"name\": \"Nope\", \"arguments\": {}}"],
            StopReason::EndTurn,
        )));
        assert_eq!(msg.stop_reason, Some(StopReason::EndTurn));
        assert!(msg.text().contains("Nope"));
    }

    #[test]
    fn prose_then_a_call_in_a_fence_or_tags_becomes_a_call_after_the_prose() {
        for tail in [
            "```json\n{\"name\": \"Read\", \"arguments\": {\"file_path\": \"calc.sh\"}}\n```",
            "<tool_call>{\"name\": \"Read\", \"arguments\": {\"file_path\": \"calc.sh\"}}</tool_call>",
        ] {
            let msg = assemble(run(text_message(
                &["I will read calc.sh.\n", tail],
                StopReason::EndTurn,
            )));
            assert_eq!(msg.stop_reason, Some(StopReason::ToolUse), "{tail}");
            assert_eq!(msg.content.len(), 2, "{:?}", msg.content);
            assert!(msg.text().starts_with("I will read calc.sh."));
            match &msg.content[1] {
                ContentBlock::ToolUse(t) => {
                    assert_eq!(t.name, "Read");
                    assert_eq!(t.input["file_path"], "calc.sh");
                }
                other => panic!("{other:?}"),
            }
        }
        // A fence with code, not a call, stays prose.
        let msg = assemble(run(text_message(
            &["Run this:\n", "```sh\nbash test.sh\n```"],
            StopReason::EndTurn,
        )));
        assert_eq!(msg.stop_reason, Some(StopReason::EndTurn));
        assert_eq!(msg.content.len(), 1);
    }
}
