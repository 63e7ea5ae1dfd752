//! One line of stdin, understood: a user message, or a control frame
//! ([`skiff_protocol::control`]).

use serde_json::Value;
use skiff_core::UserInput;
use skiff_protocol::ContentBlock;
use skiff_protocol::control::{ControlFrame, ControlRequest, FrameError};

/// One line of stdin, understood.
#[derive(Debug)]
pub(super) enum Incoming {
    /// A user message: its content, its `uuid` when the host gave one, the message object
    /// (echoed with `--replay-user-messages`), and whether it is delivered as written
    /// (`client_composed`: the SDKs' `verbatim_prompts`).
    User(UserInput, Option<String>, Value, bool),
    /// A request from the host.
    Control { id: String, request: ControlRequest },
    /// The host's answer to one of skiff's requests (an error when it could not be read).
    Response {
        id: String,
        answer: Result<Value, String>,
    },
    /// The host withdrew a request (skiff answers the host's requests at once: nothing to do).
    Cancel,
    /// A request that cannot be read but names its id: the error answer it gets.
    Refused(ControlFrame),
    /// A line that cannot be read at all (reported as a `system/error` frame).
    Bad(String),
    /// stdin ended.
    Eof,
}

/// Parse one stdin line (blank lines and `keep_alive` heartbeats are `None`).
pub(super) fn parse_line(line: &str) -> Option<Incoming> {
    let line = line.trim();
    if line.is_empty() {
        return None;
    }
    let v: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => return Some(Incoming::Bad(format!("not JSON: {e}"))),
    };
    let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
    Some(match kind {
        "user" => match user_input(&v) {
            Ok(input) => Incoming::User(
                input,
                v.get("uuid").and_then(Value::as_str).map(str::to_owned),
                v.get("message").cloned().unwrap_or(Value::Null),
                v.get("client_composed").and_then(Value::as_bool) == Some(true),
            ),
            Err(e) => Incoming::Bad(e),
        },
        kind if ControlFrame::is_control_type(kind) => control(v),
        // A host's heartbeat: nothing to do (PROTOCOL.md §2.7).
        "keep_alive" => return None,
        other => Incoming::Bad(format!("unknown message type {other:?}")),
    })
}

/// A control frame, or what to do about one that cannot be read.
fn control(v: Value) -> Incoming {
    match ControlFrame::from_value(v) {
        Ok(ControlFrame::ControlRequest(r)) => Incoming::Control {
            id: r.request_id,
            request: r.request,
        },
        Ok(ControlFrame::ControlResponse(r)) => Incoming::Response {
            id: r.response.request_id().to_owned(),
            answer: r.response.into_result(),
        },
        Ok(ControlFrame::ControlCancelRequest(_)) => Incoming::Cancel,
        Err(e) => {
            tracing::warn!(error = %e, "a control frame that cannot be read");
            match e {
                FrameError::Request {
                    request_id: Some(_),
                    ..
                } => e
                    .reply()
                    .map_or_else(|| Incoming::Bad(e.to_string()), Incoming::Refused),
                // The request it answers has failed (rather than waiting for ever).
                FrameError::Response {
                    request_id: Some(id),
                    message,
                } => Incoming::Response {
                    id,
                    answer: Err(message),
                },
                e => Incoming::Bad(e.to_string()),
            }
        }
    }
}

/// A `user` message's content: a string, or content blocks (text, images, documents).
fn user_input(v: &Value) -> Result<UserInput, String> {
    let content = v
        .get("message")
        .and_then(|m| m.get("content"))
        .ok_or("a user message needs message.content")?;
    match content {
        Value::String(s) => Ok(UserInput::Text(s.clone())),
        Value::Array(_) => serde_json::from_value::<Vec<ContentBlock>>(content.clone())
            .map(UserInput::Blocks)
            .map_err(|e| format!("invalid content blocks in a user message: {e}")),
        _ => Err("message.content must be a string or an array of content blocks".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_understood_or_reported() {
        assert!(parse_line("  \r").is_none());
        assert!(parse_line(r#"{"type":"keep_alive"}"#).is_none());
        assert!(matches!(parse_line("{nope"), Some(Incoming::Bad(_))));
        assert!(matches!(
            parse_line(r#"{"type":"user","session_id":"","message":{"role":"user","content":"hi"},"parent_tool_use_id":null}"#),
            Some(Incoming::User(UserInput::Text(t), _, _, false)) if t == "hi"
        ));
        assert!(matches!(
            parse_line(r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA"}}]}}"#),
            Some(Incoming::User(UserInput::Blocks(b), _, _, _)) if b.len() == 2
        ));
        assert!(matches!(
            parse_line(r#"{"type":"user","message":{"role":"user","content":"/clear"},"client_composed":true}"#),
            Some(Incoming::User(UserInput::Text(t), _, _, true)) if t == "/clear"
        ));
        assert!(matches!(
            parse_line(r#"{"type":"user","message":{"content":5}}"#),
            Some(Incoming::Bad(_))
        ));
        assert!(matches!(
            parse_line(r#"{"type":"control_request","request_id":"r1","request":{"subtype":"interrupt"}}"#),
            Some(Incoming::Control { id, request: ControlRequest::Interrupt(_) }) if id == "r1"
        ));
        assert!(matches!(
            parse_line(r#"{"type":"control_request","request_id":"r2","request":{"subtype":"frobnicate"}}"#),
            Some(Incoming::Control { request: ControlRequest::Unsupported(u), .. }) if u.subtype == "frobnicate"
        ));
        assert!(matches!(
            parse_line(r#"{"type":"control_response","response":{"subtype":"error","request_id":"x","error":"boom"}}"#),
            Some(Incoming::Response { answer: Err(e), .. }) if e == "boom"
        ));
        assert!(matches!(
            parse_line(r#"{"type":"mystery"}"#),
            Some(Incoming::Bad(_))
        ));
    }

    #[test]
    fn broken_control_frames_are_answered_or_fail_their_request() {
        // A request with an id gets an error answer naming it.
        let Some(Incoming::Refused(reply)) = parse_line(
            r#"{"type":"control_request","request_id":"r3","request":{"subtype":"set_model","model":7}}"#,
        ) else {
            unreachable!("not refused")
        };
        let reply = serde_json::to_value(&reply).unwrap_or_default();
        assert_eq!(reply["response"]["subtype"], "error");
        assert_eq!(reply["response"]["request_id"], "r3");
        assert!(
            reply["response"]["error"]
                .as_str()
                .is_some_and(|e| e.starts_with("invalid set_model request: "))
        );
        // Without an id there is no one to answer: a bad line.
        assert!(matches!(
            parse_line(r#"{"type":"control_request","request":{"subtype":"interrupt"}}"#),
            Some(Incoming::Bad(_))
        ));
        // A response that cannot be read fails the request it names.
        assert!(matches!(
            parse_line(r#"{"type":"control_response","response":{"subtype":"perhaps","request_id":"q"}}"#),
            Some(Incoming::Response { id, answer: Err(_) }) if id == "q"
        ));
        assert!(matches!(
            parse_line(r#"{"type":"control_response","response":{"subtype":"success"}}"#),
            Some(Incoming::Bad(_))
        ));
        assert!(matches!(
            parse_line(r#"{"type":"control_cancel_request","request_id":"q"}"#),
            Some(Incoming::Cancel)
        ));
    }
}
