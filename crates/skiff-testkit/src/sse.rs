//! Rendering stream events to SSE bytes (`event: <type>\ndata: <json>\n\n`), pre-rendered once
//! per response so serving them is just writing buffers.

use bytes::{BufMut, Bytes, BytesMut};
use skiff_protocol::{ApiErrorBody, JsonMap, StreamEvent};

/// The keep-alive the real API sends right after `message_start`.
pub const PING_FRAME: &[u8] = b"event: ping\ndata: {\"type\": \"ping\"}\n\n";

/// A content-block delta whose data is not JSON (the `malformed` fault).
pub const MALFORMED_FRAME: &[u8] = b"event: content_block_delta\ndata: {not json\n\n";

/// The SSE event name of `event`: its `type` field.
pub fn event_type(event: &StreamEvent) -> &str {
    match event {
        StreamEvent::MessageStart { .. } => "message_start",
        StreamEvent::ContentBlockStart { .. } => "content_block_start",
        StreamEvent::ContentBlockDelta { .. } => "content_block_delta",
        StreamEvent::ContentBlockStop { .. } => "content_block_stop",
        StreamEvent::MessageDelta { .. } => "message_delta",
        StreamEvent::MessageStop => "message_stop",
        StreamEvent::Ping => "ping",
        StreamEvent::Error { .. } => "error",
        StreamEvent::Unknown(value) => value
            .get("type")
            .and_then(|t| t.as_str())
            .unwrap_or("unknown"),
    }
}

/// One event as an SSE frame: `event: <type>\ndata: <json>\n\n`.
pub fn encode_event(event: &StreamEvent) -> serde_json::Result<Bytes> {
    let name = event_type(event);
    let mut buf = BytesMut::with_capacity(64 + name.len());
    buf.put_slice(b"event: ");
    buf.put_slice(name.as_bytes());
    buf.put_slice(b"\ndata: ");
    let mut writer = buf.writer();
    serde_json::to_writer(&mut writer, event)?;
    let mut buf = writer.into_inner();
    buf.put_slice(b"\n\n");
    Ok(buf.freeze())
}

/// The SSE `error` event frame with this error type and message.
pub fn error_frame(error_type: &str, message: &str) -> serde_json::Result<Bytes> {
    encode_event(&StreamEvent::Error {
        error: ApiErrorBody {
            kind: error_type.to_owned(),
            message: message.to_owned(),
            extra: JsonMap::new(),
        },
    })
}

/// Which API a response imitates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// The Messages API (`/v1/messages`).
    Anthropic,
    /// OpenAI chat completions (`/v1/chat/completions`).
    OpenAi,
    /// Amazon Bedrock (`/model/{id}/invoke-with-response-stream`, the AWS event stream).
    Bedrock,
}

/// A turn's events, each already framed.
#[derive(Debug, Clone)]
pub(crate) struct Frames {
    frames: Vec<Bytes>,
    pub(crate) dialect: Dialect,
}

impl Frames {
    /// Frame every event.
    pub(crate) fn render(events: &[StreamEvent]) -> serde_json::Result<Self> {
        let frames = events
            .iter()
            .map(encode_event)
            .collect::<serde_json::Result<Vec<_>>>()?;
        Ok(Self {
            frames,
            dialect: Dialect::Anthropic,
        })
    }

    /// Frame every event as Bedrock event-stream `chunk` messages (no ping).
    pub(crate) fn render_bedrock(events: &[StreamEvent]) -> serde_json::Result<Self> {
        Ok(Self {
            frames: events
                .iter()
                .map(crate::event_stream::chunk_frame)
                .collect::<serde_json::Result<Vec<_>>>()?,
            dialect: Dialect::Bedrock,
        })
    }

    /// Frame every event as chat-completion chunks (one frame per event, no ping).
    pub(crate) fn render_openai(events: &[StreamEvent]) -> serde_json::Result<Self> {
        Ok(Self {
            frames: crate::openai::chunk_frames(events)?,
            dialect: Dialect::OpenAi,
        })
    }

    /// The frames to write for the first `n` scripted events: a ping follows the first event
    /// (`message_start`) and does not count.
    pub(crate) fn first(&self, n: usize) -> Vec<Bytes> {
        let mut out = Vec::with_capacity(n.min(self.frames.len()) + 1);
        for (i, frame) in self.frames.iter().take(n).enumerate() {
            out.push(frame.clone());
            if i == 0 && self.dialect == Dialect::Anthropic {
                out.push(Bytes::from_static(PING_FRAME));
            }
        }
        out
    }

    /// Every frame to write, ping included.
    pub(crate) fn all(&self) -> Vec<Bytes> {
        self.first(self.frames.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use skiff_protocol::script::ScriptTurn;

    #[test]
    fn frames_are_event_and_data_lines_with_ping_after_start() {
        let events = ScriptTurn::text("hello").to_stream_events(0, "m", 3);
        let frames = Frames::render(&events).unwrap();
        let text: String = frames
            .all()
            .iter()
            .map(|f| std::str::from_utf8(f).unwrap())
            .collect();
        let blocks: Vec<&str> = text.split_terminator("\n\n").collect();
        assert_eq!(blocks.len(), events.len() + 1);
        assert!(blocks[0].starts_with("event: message_start\ndata: {"));
        assert_eq!(blocks[1], "event: ping\ndata: {\"type\": \"ping\"}");
        assert_eq!(
            blocks.last(),
            Some(&"event: message_stop\ndata: {\"type\":\"message_stop\"}")
        );
        for block in blocks {
            let (event, data) = block.split_once('\n').unwrap();
            let data: StreamEvent =
                serde_json::from_str(data.strip_prefix("data: ").unwrap()).unwrap();
            assert_eq!(event.strip_prefix("event: "), Some(event_type(&data)));
        }
    }

    #[test]
    fn first_counts_scripted_events_only() {
        let events = ScriptTurn::text("hello").to_stream_events(0, "m", 3);
        let frames = Frames::render(&events).unwrap();
        assert!(frames.first(0).is_empty());
        assert_eq!(frames.first(1).len(), 2);
        assert_eq!(frames.first(3).len(), 4);
        assert_eq!(frames.first(999).len(), events.len() + 1);
    }

    #[test]
    fn error_frame_shape() {
        let f = error_frame("overloaded_error", "Overloaded").unwrap();
        assert_eq!(
            &f[..],
            b"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
        );
    }
}
