//! The recorded SSE fixtures, fed to the decoder and accumulator split at every byte boundary,
//! always assemble to the same message.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use serde_json::json;
use skiff_llm::StreamAccumulator;
use skiff_llm::sse::SseDecoder;
use skiff_protocol::{ContentBlock, MessageResponse, StopReason, StreamEvent};

fn fixture(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/anthropic-sse")
        .join(name);
    std::fs::read(p).unwrap()
}

/// Decode `chunks` in order; return the message and the number of completed blocks reported.
fn assemble(chunks: &[&[u8]]) -> (MessageResponse, Vec<(usize, ContentBlock)>) {
    let mut dec = SseDecoder::new();
    let mut acc = StreamAccumulator::new();
    let mut out = Vec::new();
    let mut completed = Vec::new();
    for (i, c) in chunks.iter().enumerate() {
        dec.feed(c, &mut out);
        if i + 1 == chunks.len() {
            dec.finish(&mut out);
        }
        for raw in out.drain(..) {
            let mut ev: StreamEvent = serde_json::from_str(&raw.data).unwrap();
            assert_eq!(raw.event.as_deref(), Some(event_type(&ev)));
            acc.apply(&mut ev, &mut completed).unwrap();
        }
    }
    assert!(!dec.has_pending());
    (acc.finish().unwrap(), completed)
}

fn event_type(ev: &StreamEvent) -> &'static str {
    match ev {
        StreamEvent::MessageStart { .. } => "message_start",
        StreamEvent::ContentBlockStart { .. } => "content_block_start",
        StreamEvent::ContentBlockDelta { .. } => "content_block_delta",
        StreamEvent::ContentBlockStop { .. } => "content_block_stop",
        StreamEvent::MessageDelta { .. } => "message_delta",
        StreamEvent::MessageStop => "message_stop",
        StreamEvent::Ping => "ping",
        StreamEvent::Error { .. } => "error",
        StreamEvent::Unknown(_) => "unknown",
    }
}

fn check_every_split(name: &str) -> MessageResponse {
    let bytes = fixture(name);
    let (whole, blocks) = assemble(&[&bytes]);
    for cut in 0..=bytes.len() {
        let (m, b) = assemble(&[&bytes[..cut], &bytes[cut..]]);
        assert_eq!(m, whole, "{name}: cut at {cut}");
        assert_eq!(b, blocks, "{name}: cut at {cut}");
    }
    // Three pieces at a sample of cut pairs, and one byte at a time.
    for a in (0..bytes.len()).step_by(17) {
        for b in (a..bytes.len()).step_by(29) {
            let (m, _) = assemble(&[&bytes[..a], &bytes[a..b], &bytes[b..]]);
            assert_eq!(m, whole, "{name}: cuts at {a},{b}");
        }
    }
    let singles: Vec<&[u8]> = bytes.chunks(1).collect();
    assert_eq!(assemble(&singles).0, whole);
    // Completed blocks are reported in order and equal the final content.
    assert_eq!(
        blocks.into_iter().map(|(_, b)| b).collect::<Vec<_>>(),
        whole.content
    );
    whole
}

#[test]
fn basic_text_stream() {
    let m = check_every_split("docs_streaming_basic.sse");
    assert_eq!(m.text(), "Hello!");
    assert_eq!(m.stop_reason, Some(StopReason::EndTurn));
    assert_eq!(m.usage.input_tokens, 25);
    assert_eq!(
        m.usage.output_tokens, 15,
        "message_delta usage replaces message_start's"
    );
}

#[test]
fn tool_use_stream_joins_partial_json() {
    let m = check_every_split("docs_streaming_tool_use.sse");
    assert_eq!(
        m.text(),
        "Okay, let's check the weather for San Francisco, CA:"
    );
    let ContentBlock::ToolUse(tu) = &m.content[1] else {
        panic!("second block is not tool_use: {:?}", m.content[1])
    };
    assert_eq!(tu.name, "get_weather");
    assert_eq!(tu.id, "toolu_01T1x1fJ34qAmk2tNTrN7Up6");
    assert_eq!(tu.input, json!({"location": "San Francisco, CA"}));
    assert_eq!(m.stop_reason, Some(StopReason::ToolUse));
    assert_eq!((m.usage.input_tokens, m.usage.output_tokens), (472, 89));
}

#[test]
fn thinking_stream_keeps_signature() {
    let m = check_every_split("docs_streaming_thinking.sse");
    let ContentBlock::Thinking(t) = &m.content[0] else {
        panic!()
    };
    assert!(t.thinking.starts_with("I need to find the GCD"));
    assert!(t.thinking.ends_with("GCD(1071, 462) = 21."));
    assert!(t.signature.starts_with("EqQBCgIYAhIM"));
    assert_eq!(
        m.text(),
        "The greatest common divisor of 1071 and 462 is **21**."
    );
}

#[test]
fn truncated_fixture_never_panics_and_is_an_error() {
    let bytes = fixture("docs_streaming_tool_use.sse");
    for cut in (0..bytes.len()).step_by(7) {
        let mut dec = SseDecoder::new();
        let mut acc = StreamAccumulator::new();
        let mut out = Vec::new();
        dec.feed(&bytes[..cut], &mut out);
        for raw in out.drain(..) {
            let mut ev: StreamEvent = serde_json::from_str(&raw.data).unwrap();
            acc.apply(&mut ev, &mut Vec::new()).unwrap();
        }
        assert!(acc.finish().is_err(), "cut at {cut} assembled a message");
    }
}
