//! Round-trip the recorded SSE fixtures and representative request bodies through the wire types.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use serde_json::{Value, json};
use skiff_protocol::{
    ContentBlock, Delta, MessageContent, MessagesRequest, StopReason, StreamEvent, SystemPrompt,
    ThinkingConfig, ToolChoice, ToolResultContent,
};

fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/anthropic-sse")
}

fn data_lines(name: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(fixture_dir().join(name)).unwrap();
    text.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect()
}

/// Every key/value of `original` appears in `written` (nested objects compared recursively).
fn assert_superset(original: &Value, written: &Value, path: &str) {
    match (original, written) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in a {
                let w = b
                    .get(k)
                    .unwrap_or_else(|| panic!("{path}.{k} lost in round trip"));
                assert_superset(v, w, &format!("{path}.{k}"));
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            assert_eq!(a.len(), b.len(), "{path}: array length changed");
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                assert_superset(x, y, &format!("{path}[{i}]"));
            }
        }
        _ => assert_eq!(original, written, "{path} changed"),
    }
}

fn roundtrip_event(raw: &Value) -> StreamEvent {
    let ev: StreamEvent = serde_json::from_value(raw.clone()).unwrap();
    let written = serde_json::to_value(&ev).unwrap();
    assert_superset(raw, &written, "$");
    let again: StreamEvent = serde_json::from_value(written).unwrap();
    assert_eq!(ev, again);
    ev
}

#[test]
fn every_fixture_event_round_trips_and_none_is_unknown() {
    for name in [
        "docs_streaming_basic.sse",
        "docs_streaming_tool_use.sse",
        "docs_streaming_thinking.sse",
    ] {
        let events = data_lines(name);
        assert!(events.len() >= 6, "{name}: too few events");
        for raw in &events {
            let ev = roundtrip_event(raw);
            assert!(
                !matches!(ev, StreamEvent::Unknown(_)),
                "{name}: known event parsed as unknown: {raw}"
            );
            if let StreamEvent::ContentBlockDelta { delta, .. } = &ev {
                assert!(!matches!(delta, Delta::Unknown(_)), "{name}: {raw}");
            }
            if let StreamEvent::ContentBlockStart { content_block, .. } = &ev {
                assert!(!matches!(content_block, ContentBlock::Unknown(_)), "{name}");
            }
        }
    }
}

#[test]
fn fixture_specific_values_parse() {
    let events = data_lines("docs_streaming_tool_use.sse");
    let StreamEvent::MessageStart { message } = roundtrip_event(&events[0]) else {
        panic!("first event is not message_start")
    };
    assert_eq!(message.usage.input_tokens, 472);
    assert_eq!(message.model, "claude-opus-5");
    let last_delta = events
        .iter()
        .map(|e| serde_json::from_value::<StreamEvent>(e.clone()).unwrap())
        .find_map(|e| match e {
            StreamEvent::MessageDelta { delta, usage } => Some((delta, usage)),
            _ => None,
        })
        .unwrap();
    assert_eq!(last_delta.0.stop_reason, Some(StopReason::ToolUse));
    assert_eq!(last_delta.1.unwrap().output_tokens, Some(89));
}

#[test]
fn unknown_event_delta_block_and_stop_reason_are_preserved() {
    let raw = json!({"type":"future_event","foo":1});
    let ev = roundtrip_event(&raw);
    assert_eq!(ev, StreamEvent::Unknown(raw));

    let raw =
        json!({"type":"content_block_delta","index":2,"delta":{"type":"hologram_delta","x":[1]}});
    let StreamEvent::ContentBlockDelta { delta, .. } = roundtrip_event(&raw) else {
        panic!()
    };
    assert!(matches!(delta, Delta::Unknown(_)));

    let raw = json!({"type":"content_block_start","index":0,
        "content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}});
    let StreamEvent::ContentBlockStart { content_block, .. } = roundtrip_event(&raw) else {
        panic!()
    };
    assert_eq!(content_block.type_name(), "server_tool_use");

    let raw = json!({"type":"message_delta","delta":{"stop_reason":"galaxy_brain","stop_sequence":null,
        "stop_details":{"category":"x"}},"usage":{"output_tokens":3,"server_tool_use":{"web_search_requests":1}}});
    let StreamEvent::MessageDelta { delta, .. } = roundtrip_event(&raw) else {
        panic!()
    };
    assert_eq!(
        delta.stop_reason,
        Some(StopReason::Other("galaxy_brain".into()))
    );

    for (s, r) in [
        ("end_turn", StopReason::EndTurn),
        ("tool_use", StopReason::ToolUse),
        ("max_tokens", StopReason::MaxTokens),
        ("stop_sequence", StopReason::StopSequence),
        ("pause_turn", StopReason::PauseTurn),
        ("refusal", StopReason::Refusal),
    ] {
        let parsed: StopReason = serde_json::from_value(json!(s)).unwrap();
        assert_eq!(parsed, r);
        assert_eq!(serde_json::to_value(&r).unwrap(), json!(s));
        assert_eq!(r.as_str(), s);
    }
}

#[test]
fn error_and_ping_events_parse() {
    let ev = roundtrip_event(
        &json!({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}),
    );
    let StreamEvent::Error { error } = ev else {
        panic!()
    };
    assert_eq!(error.kind, "overloaded_error");
    assert_eq!(roundtrip_event(&json!({"type":"ping"})), StreamEvent::Ping);
    assert_eq!(
        roundtrip_event(&json!({"type":"message_stop"})),
        StreamEvent::MessageStop
    );
}

#[test]
fn request_with_every_field_round_trips() {
    let raw = json!({
        "model": "claude-sonnet-4-5",
        "max_tokens": 32000,
        "stream": true,
        "temperature": 0.5,
        "stop_sequences": ["STOP"],
        "system": [
            {"type":"text","text":"You are skiff."},
            {"type":"text","text":"Rules.","cache_control":{"type":"ephemeral"}}
        ],
        "messages": [
            {"role":"user","content":"hi"},
            {"role":"assistant","content":[
                {"type":"thinking","thinking":"hmm","signature":"sig"},
                {"type":"redacted_thinking","data":"abc"},
                {"type":"text","text":"Running."},
                {"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}
            ]},
            {"role":"user","content":[
                {"type":"tool_result","tool_use_id":"toolu_1","content":"a\nb","is_error":false},
                {"type":"tool_result","tool_use_id":"toolu_2","content":[
                    {"type":"text","text":"img"},
                    {"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}
                ],"is_error":true,"cache_control":{"type":"ephemeral","ttl":"1h"}},
                {"type":"document","source":{"type":"text","data":"x"}}
            ]}
        ],
        "tools": [{"name":"Bash","description":"Run","input_schema":{"type":"object"}},
                  {"type":"web_search_20250305","name":"web_search","max_uses":5}],
        "tool_choice": {"type":"auto","disable_parallel_tool_use":true},
        "metadata": {"user_id":"u1"},
        "thinking": {"type":"enabled","budget_tokens":31999},
        "output_config": {"effort":"medium"}
    });
    let req: MessagesRequest = serde_json::from_value(raw.clone()).unwrap();
    assert_eq!(serde_json::to_value(&req).unwrap(), raw);
    assert!(matches!(req.system, Some(SystemPrompt::Blocks(ref b)) if b.len() == 2));
    assert!(matches!(req.tool_choice, Some(ToolChoice::Auto { .. })));
    assert_eq!(
        req.thinking,
        Some(ThinkingConfig::Enabled {
            budget_tokens: 31999
        })
    );
    let MessageContent::Blocks(blocks) = &req.messages[2].content else {
        panic!()
    };
    let ContentBlock::ToolResult(tr) = &blocks[1] else {
        panic!()
    };
    assert!(matches!(tr.content, Some(ToolResultContent::Blocks(ref b)) if b.len() == 2));
    assert!(matches!(blocks[2], ContentBlock::Unknown(_)));

    let plain: MessagesRequest = serde_json::from_value(
        json!({"model":"m","max_tokens":1,"messages":[],"system":"be brief"}),
    )
    .unwrap();
    assert_eq!(plain.system, Some(SystemPrompt::Text("be brief".into())));
}
