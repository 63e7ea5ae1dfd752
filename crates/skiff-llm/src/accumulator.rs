//! Assembles a streamed response: applies each SSE event to a growing message and reports
//! every content block as it completes; the final message comes out of [`StreamAccumulator::finish`].

use serde_json::Value;
use skiff_protocol::{ContentBlock, Delta, MessageResponse, StreamEvent};

/// A stream that cannot be assembled into a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StreamError {
    /// An event arrived before `message_start`.
    #[error("stream event `{0}` arrived before message_start")]
    NotStarted(&'static str),
    /// A second `message_start`.
    #[error("duplicate message_start in one stream")]
    DuplicateStart,
    /// A block event names a block that was never started or is already closed.
    #[error("{event} for content block {index}, which is not open")]
    BlockNotOpen {
        /// The event type.
        event: &'static str,
        /// The block index.
        index: usize,
    },
    /// `content_block_start` for an index that already exists.
    #[error("content block {0} started twice")]
    DuplicateBlock(usize),
    /// A delta that does not fit the block type (e.g. text_delta into tool_use).
    #[error("{delta} cannot apply to a {block} block (index {index})")]
    DeltaMismatch {
        /// Delta type.
        delta: &'static str,
        /// Block type.
        block: String,
        /// Block index.
        index: usize,
    },
    /// The stream ended before `message_stop`.
    #[error("stream ended before message_stop ({0})")]
    Truncated(String),
    /// An event's data is not valid JSON for its type.
    #[error("malformed stream event: {0}")]
    Malformed(String),
}

#[derive(Debug)]
enum Slot {
    Open { block: ContentBlock, json: String },
    Closed(ContentBlock),
}

/// Applies stream events in order and assembles the final message.
///
/// Tolerant of what Anthropic-compatible servers (llama.cpp, Ollama, LM Studio, gateways) send:
/// a `tool_use` start without `input`, a block index used again after its block stopped
/// (llama.cpp numbers a text block after a tool call 0 again), and blocks never stopped before
/// `message_stop`. Block indexes are renumbered densely in order of their start, and the events
/// are rewritten to those numbers, so everything downstream sees one consistent numbering.
#[derive(Debug, Default)]
pub struct StreamAccumulator {
    message: Option<MessageResponse>,
    blocks: Vec<Slot>,
    /// The server's index of each open or last-started block → our index.
    indexes: std::collections::HashMap<usize, usize>,
    stopped: bool,
}

impl StreamAccumulator {
    /// A fresh accumulator.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether `message_stop` has been seen.
    pub fn is_complete(&self) -> bool {
        self.stopped
    }

    /// The message id from `message_start`, once known.
    pub fn message_id(&self) -> Option<&str> {
        self.message.as_ref().map(|m| m.id.as_str())
    }

    /// Apply one event, rewriting its block index to skiff's numbering. Blocks completed by
    /// the event (a `content_block_stop`, or a `message_stop` closing blocks the server never
    /// stopped) are pushed on `completed`. `error` events are not handled here (the caller
    /// maps them to its own error type).
    pub fn apply(
        &mut self,
        event: &mut StreamEvent,
        completed: &mut Vec<(usize, ContentBlock)>,
    ) -> Result<(), StreamError> {
        match event {
            StreamEvent::MessageStart { message } => {
                if self.message.is_some() {
                    return Err(StreamError::DuplicateStart);
                }
                let mut message = message.clone();
                // Servers that echo content in message_start: the blocks come as events.
                message.content.clear();
                self.message = Some(message);
            }
            StreamEvent::ContentBlockStart {
                index,
                content_block,
            } => {
                self.started("content_block_start")?;
                if let Some(&ours) = self.indexes.get(index)
                    && matches!(self.blocks.get(ours), Some(Slot::Open { .. }))
                {
                    return Err(StreamError::DuplicateBlock(*index));
                }
                let ours = self.blocks.len();
                self.indexes.insert(*index, ours);
                *index = ours;
                if let ContentBlock::ToolUse(tu) = content_block
                    && tu.input.is_null()
                {
                    tu.input = Value::Object(serde_json::Map::new());
                }
                self.blocks.push(Slot::Open {
                    block: content_block.clone(),
                    json: String::new(),
                });
            }
            StreamEvent::ContentBlockDelta { index, delta } => {
                self.started("content_block_delta")?;
                let ours = self.open_index(*index, "content_block_delta")?;
                *index = ours;
                if let Some(Slot::Open { block, json }) = self.blocks.get_mut(ours) {
                    apply_delta(block, json, delta, ours)?;
                }
            }
            StreamEvent::ContentBlockStop { index } => {
                self.started("content_block_stop")?;
                let ours = self.open_index(*index, "content_block_stop")?;
                *index = ours;
                if let Some(block) = self.close(ours) {
                    completed.push((ours, block));
                }
            }
            StreamEvent::MessageDelta { delta, usage } => {
                let msg = self.started_mut("message_delta")?;
                if delta.stop_reason.is_some() {
                    msg.stop_reason = delta.stop_reason.clone();
                }
                if delta.stop_sequence.is_some() {
                    msg.stop_sequence = delta.stop_sequence.clone();
                }
                for (k, v) in &delta.extra {
                    msg.extra.insert(k.clone(), v.clone());
                }
                if let Some(u) = usage {
                    msg.usage.merge_delta(u);
                }
            }
            StreamEvent::MessageStop => {
                self.started("message_stop")?;
                // Blocks the server never stopped end with the message.
                for i in 0..self.blocks.len() {
                    if matches!(self.blocks.get(i), Some(Slot::Open { .. }))
                        && let Some(block) = self.close(i)
                    {
                        tracing::debug!(index = i, "content block closed by message_stop");
                        completed.push((i, block));
                    }
                }
                self.stopped = true;
            }
            StreamEvent::Ping | StreamEvent::Error { .. } | StreamEvent::Unknown(_) => {}
        }
        Ok(())
    }

    /// Our index of the open block the server calls `index`.
    fn open_index(&self, index: usize, event: &'static str) -> Result<usize, StreamError> {
        match self.indexes.get(&index) {
            Some(&ours) if matches!(self.blocks.get(ours), Some(Slot::Open { .. })) => Ok(ours),
            _ => Err(StreamError::BlockNotOpen { event, index }),
        }
    }

    /// Close the open block `ours`: join and parse its tool input; the block as completed.
    fn close(&mut self, ours: usize) -> Option<ContentBlock> {
        let slot = self.blocks.get_mut(ours)?;
        let Slot::Open { block, json } = slot else {
            return None;
        };
        let mut block = std::mem::replace(block, ContentBlock::text(""));
        let json = std::mem::take(json);
        match &mut block {
            ContentBlock::ToolUse(tu) if !json.trim().is_empty() => {
                match serde_json::from_str::<Value>(&json) {
                    Ok(v) => tu.input = v,
                    Err(e) => {
                        // Kept as its raw text (a JSON string): the loop answers the call with
                        // an error result, or asks again when max_tokens cut it.
                        tracing::warn!(index = ours, tool = %tu.name, error = %e, "tool input is not valid JSON");
                        tu.input = Value::String(json);
                    }
                }
            }
            // A server tool call (`server_tool_use`) streams its input too: kept as the input
            // it is, so the block goes back to the API unchanged.
            ContentBlock::Unknown(Value::Object(map)) if !json.trim().is_empty() => {
                match serde_json::from_str::<Value>(&json) {
                    Ok(v) => {
                        map.insert("input".into(), v);
                    }
                    Err(e) => {
                        tracing::warn!(index = ours, error = %e, "a server tool's input is not valid JSON");
                    }
                }
            }
            _ => {}
        }
        *slot = Slot::Closed(block.clone());
        Some(block)
    }

    /// The assembled message. Fails when the stream was cut short.
    pub fn finish(self) -> Result<MessageResponse, StreamError> {
        let Some(mut msg) = self.message else {
            return Err(StreamError::Truncated("no message_start".into()));
        };
        if !self.stopped {
            return Err(StreamError::Truncated("no message_stop".into()));
        }
        let mut content = Vec::with_capacity(self.blocks.len());
        for (i, slot) in self.blocks.into_iter().enumerate() {
            match slot {
                Slot::Closed(b) => content.push(b),
                Slot::Open { .. } => {
                    return Err(StreamError::Truncated(format!(
                        "content block {i} never stopped"
                    )));
                }
            }
        }
        msg.content = content;
        Ok(msg)
    }

    fn started(&self, event: &'static str) -> Result<(), StreamError> {
        if self.message.is_none() {
            return Err(StreamError::NotStarted(event));
        }
        Ok(())
    }

    fn started_mut(&mut self, event: &'static str) -> Result<&mut MessageResponse, StreamError> {
        self.message.as_mut().ok_or(StreamError::NotStarted(event))
    }
}

fn apply_delta(
    block: &mut ContentBlock,
    json: &mut String,
    delta: &Delta,
    index: usize,
) -> Result<(), StreamError> {
    let mismatch = |delta: &'static str, block: &ContentBlock| StreamError::DeltaMismatch {
        delta,
        block: block.type_name().to_owned(),
        index,
    };
    match delta {
        Delta::TextDelta { text } => match block {
            ContentBlock::Text(t) => t.text.push_str(text),
            other => return Err(mismatch("text_delta", other)),
        },
        Delta::InputJsonDelta { partial_json } => match block {
            ContentBlock::ToolUse(_) => json.push_str(partial_json),
            // Server tool blocks (server_tool_use, ...) also stream input JSON; keep it verbatim.
            ContentBlock::Unknown(_) => json.push_str(partial_json),
            other => return Err(mismatch("input_json_delta", other)),
        },
        Delta::ThinkingDelta { thinking } => match block {
            ContentBlock::Thinking(t) => t.thinking.push_str(thinking),
            other => return Err(mismatch("thinking_delta", other)),
        },
        Delta::SignatureDelta { signature } => match block {
            ContentBlock::Thinking(t) => t.signature.push_str(signature),
            other => return Err(mismatch("signature_delta", other)),
        },
        Delta::CitationsDelta { citation } => match block {
            ContentBlock::Text(t) => t
                .citations
                .get_or_insert_with(Vec::new)
                .push(citation.clone()),
            other => return Err(mismatch("citations_delta", other)),
        },
        Delta::Unknown(_) => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use skiff_protocol::StopReason;

    fn ev(v: serde_json::Value) -> StreamEvent {
        serde_json::from_value(v).unwrap()
    }

    /// Apply one event; the blocks it completed.
    fn put(
        a: &mut StreamAccumulator,
        mut e: StreamEvent,
    ) -> Result<Vec<(usize, ContentBlock)>, StreamError> {
        let mut done = Vec::new();
        a.apply(&mut e, &mut done)?;
        Ok(done)
    }

    fn start() -> StreamEvent {
        ev(
            json!({"type":"message_start","message":{"id":"m","type":"message","role":"assistant",
            "model":"x","content":[],"stop_reason":null,"stop_sequence":null,
            "usage":{"input_tokens":10,"output_tokens":1,"cache_read_input_tokens":7}}}),
        )
    }

    #[test]
    fn usage_merges_cumulatively() {
        let mut a = StreamAccumulator::new();
        put(&mut a, start()).unwrap();
        put(&mut a, ev(json!({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}))).unwrap();
        put(
            &mut a,
            ev(json!({"type":"message_delta","delta":{},"usage":{"output_tokens":9}})),
        )
        .unwrap();
        put(&mut a, ev(json!({"type":"message_stop"}))).unwrap();
        let m = a.finish().unwrap();
        assert_eq!(m.usage.input_tokens, 10);
        assert_eq!(m.usage.output_tokens, 9);
        assert_eq!(m.usage.cache_read_input_tokens, Some(7));
        assert_eq!(m.stop_reason, Some(StopReason::EndTurn));
    }

    #[test]
    fn truncated_streams_are_errors() {
        let mut a = StreamAccumulator::new();
        put(&mut a, start()).unwrap();
        put(&mut a, ev(json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}))).unwrap();
        assert!(matches!(a.finish(), Err(StreamError::Truncated(_))));
        assert!(matches!(
            StreamAccumulator::new().finish(),
            Err(StreamError::Truncated(_))
        ));
    }

    #[test]
    fn events_out_of_order_are_typed_errors() {
        let mut a = StreamAccumulator::new();
        assert_eq!(
            put(&mut a, ev(json!({"type":"content_block_stop","index":0}))),
            Err(StreamError::NotStarted("content_block_stop"))
        );
        put(&mut a, start()).unwrap();
        assert!(matches!(
            put(
                &mut a,
                ev(
                    json!({"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"x"}})
                )
            ),
            Err(StreamError::BlockNotOpen { index: 3, .. })
        ));
        put(&mut a, ev(json!({"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"Bash","input":{}}}))).unwrap();
        assert!(matches!(
            put(
                &mut a,
                ev(
                    json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}})
                )
            ),
            Err(StreamError::DeltaMismatch { .. })
        ));
        assert_eq!(put(&mut a, start()), Err(StreamError::DuplicateStart));
        put(&mut a, ev(json!({"type":"content_block_stop","index":0}))).unwrap();
        assert!(matches!(
            put(&mut a, ev(json!({"type":"content_block_stop","index":0}))),
            Err(StreamError::BlockNotOpen { .. })
        ));
    }

    fn tool_stream(partial: &str, stop: &str) -> Result<MessageResponse, StreamError> {
        let mut a = StreamAccumulator::new();
        put(&mut a, start())?;
        put(
            &mut a,
            ev(
                json!({"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"Bash","input":{}}}),
            ),
        )?;
        put(
            &mut a,
            ev(
                json!({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":partial}}),
            ),
        )?;
        put(&mut a, ev(json!({"type":"content_block_stop","index":0})))?;
        put(
            &mut a,
            ev(
                json!({"type":"message_delta","delta":{"stop_reason":stop},"usage":{"output_tokens":5}}),
            ),
        )?;
        put(&mut a, ev(json!({"type":"message_stop"})))?;
        a.finish()
    }

    #[test]
    fn server_tool_blocks_keep_their_streamed_input_and_their_results_whole() {
        let mut a = StreamAccumulator::new();
        put(&mut a, start()).unwrap();
        put(
            &mut a,
            ev(
                json!({"type":"content_block_start","index":0,"content_block":
            {"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}),
            ),
        )
        .unwrap();
        for part in ["", "{\"query\": ", "\"rust 2024\"}"] {
            put(
                &mut a,
                ev(json!({"type":"content_block_delta","index":0,"delta":
                {"type":"input_json_delta","partial_json":part}})),
            )
            .unwrap();
        }
        let done = put(&mut a, ev(json!({"type":"content_block_stop","index":0}))).unwrap();
        assert_eq!(
            serde_json::to_value(&done[0].1).unwrap(),
            json!({"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"rust 2024"}})
        );
        let result = json!({"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":
            [{"type":"web_search_result","title":"Rust","url":"https://rust-lang.org","encrypted_content":"abc","page_age":null}]});
        put(
            &mut a,
            ev(json!({"type":"content_block_start","index":1,"content_block": result})),
        )
        .unwrap();
        put(&mut a, ev(json!({"type":"content_block_stop","index":1}))).unwrap();
        put(
            &mut a,
            ev(
                json!({"type":"message_delta","delta":{"stop_reason":"end_turn"},
            "usage":{"output_tokens":5,"server_tool_use":{"web_search_requests":1}}}),
            ),
        )
        .unwrap();
        put(&mut a, ev(json!({"type":"message_stop"}))).unwrap();
        let m = a.finish().unwrap();
        assert_eq!(serde_json::to_value(&m.content[1]).unwrap(), result);
        assert_eq!(m.usage.web_search_requests(), 1);
    }

    #[test]
    fn half_tool_input_is_kept_raw_only_when_cut_by_max_tokens() {
        let m = tool_stream("{\"command\": \"ec", "max_tokens").unwrap();
        let ContentBlock::ToolUse(tu) = &m.content[0] else {
            panic!()
        };
        assert_eq!(tu.input, json!("{\"command\": \"ec"));
        let bad = tool_stream("{\"command\": \"ec", "tool_use").unwrap();
        let ContentBlock::ToolUse(tu) = &bad.content[0] else {
            panic!()
        };
        assert_eq!(tu.input, json!("{\"command\": \"ec"));
        let ok = tool_stream("", "tool_use").unwrap();
        let ContentBlock::ToolUse(tu) = &ok.content[0] else {
            panic!()
        };
        assert_eq!(tu.input, json!({}));
    }
}
