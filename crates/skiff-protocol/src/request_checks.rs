//! The rules every model request must follow, checked on every request of every test by the
//! test kit's mock (both dialects) and by the scripted provider (as codex-rs's mock does), so
//! no test can forget them. A Messages API request: the conversation is valid
//! ([`skiff_protocol::validate_history`]: starts with the user, roles alternate, every tool_use
//! answered exactly once in the next user message, no orphan results), it ends with a user
//! message (or a server-tool turn the server paused), no text block is empty, and at most 4 `cache_control` breakpoints are set — each a
//! 400 from the real API.

use crate::{ContentBlock, Message, MessageContent, Role, validate_history};
use serde_json::Value;

/// Most cache breakpoints the API accepts in one request.
pub const MAX_CACHE_BREAKPOINTS: usize = 4;

/// What is wrong with a Messages API request body (None: nothing).
pub fn check_request(body: &Value) -> Option<String> {
    let messages = body.get("messages")?;
    let messages: Vec<Message> = match serde_json::from_value(messages.clone()) {
        Ok(m) => m,
        Err(e) => return Some(format!("messages: not a list of messages ({e})")),
    };
    if let Err(e) = validate_history(&messages) {
        return Some(format!("messages: {e}"));
    }
    if messages
        .last()
        .is_some_and(|m| m.role != Role::User && !paused_server_turn(m))
    {
        return Some("messages: the last message must be a user message".into());
    }
    for (i, m) in messages.iter().enumerate() {
        let empty = match &m.content {
            MessageContent::Text(t) => t.is_empty(),
            MessageContent::Blocks(b) => {
                b.is_empty()
                    || b.iter()
                        .any(|b| matches!(b, ContentBlock::Text(t) if t.text.is_empty()))
            }
        };
        if empty {
            return Some(format!(
                "messages.{i}: text content blocks must be non-empty"
            ));
        }
    }
    let breakpoints = count_key(body, "cache_control");
    if breakpoints > MAX_CACHE_BREAKPOINTS {
        return Some(format!(
            "A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found {breakpoints}."
        ));
    }
    None
}

fn count_key(v: &Value, key: &str) -> usize {
    match v {
        Value::Object(o) => o
            .iter()
            .map(|(k, v)| usize::from(k == key && !v.is_null()) + count_key(v, key))
            .sum(),
        Value::Array(a) => a.iter().map(|v| count_key(v, key)).sum(),
        _ => 0,
    }
}

/// An assistant turn the server paused while running its own tools (`pause_turn`): sent back
/// as the last message so that the server goes on with it.
fn paused_server_turn(m: &Message) -> bool {
    m.role == Role::Assistant
        && matches!(&m.content, MessageContent::Blocks(blocks) if blocks.iter().any(|b| {
            matches!(b.type_name(), "server_tool_use" | "web_search_tool_result")
        }))
}

/// What is wrong with a chat-completions request body (None: nothing), as OpenAI-compatible
/// servers reject it: messages present, known roles, every assistant `tool_calls` entry a
/// function call with an id, a name and JSON arguments, answered by exactly one `tool` message
/// before the next user or assistant message, no `tool` message without its call, and the
/// last message from the user or a tool.
pub fn check_chat_request(body: &Value) -> Option<String> {
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        return Some("messages: missing".into());
    };
    if messages.is_empty() {
        return Some("messages: empty".into());
    }
    let mut open: Vec<String> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        match role {
            "tool" => {
                let id = m.get("tool_call_id").and_then(Value::as_str).unwrap_or("");
                match open.iter().position(|o| o == id) {
                    Some(p) => {
                        open.remove(p);
                    }
                    None => {
                        return Some(format!(
                            "messages.{i}: a tool message for {id:?}, which no open tool call has"
                        ));
                    }
                }
            }
            "system" | "developer" | "user" | "assistant" => {
                if let Some(id) = open.first() {
                    return Some(format!(
                        "messages.{i}: the tool call {id:?} was not answered before the next {role} message"
                    ));
                }
                if role == "assistant" {
                    for (j, call) in m
                        .get("tool_calls")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .enumerate()
                    {
                        let id = call.get("id").and_then(Value::as_str).unwrap_or("");
                        let f = call.get("function");
                        let name = f.and_then(|f| f.get("name")).and_then(Value::as_str);
                        let args = f.and_then(|f| f.get("arguments")).and_then(Value::as_str);
                        if id.is_empty() || name.is_none_or(str::is_empty) {
                            return Some(format!(
                                "messages.{i}.tool_calls.{j}: a call needs an id and a function name"
                            ));
                        }
                        if args.is_none_or(|a| serde_json::from_str::<Value>(a).is_err()) {
                            return Some(format!(
                                "messages.{i}.tool_calls.{j}: arguments must be a JSON string"
                            ));
                        }
                        open.push(id.to_owned());
                    }
                }
            }
            other => return Some(format!("messages.{i}: unknown role {other:?}")),
        }
    }
    if let Some(id) = open.first() {
        return Some(format!("the tool call {id:?} was not answered"));
    }
    match messages
        .last()
        .and_then(|m| m.get("role"))
        .and_then(Value::as_str)
    {
        Some("user" | "tool") => None,
        _ => Some("messages: the last message must be from the user or a tool".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn valid_and_invalid_requests() {
        let ok = json!({"messages": [{"role": "user", "content": "hi"}]});
        assert_eq!(check_request(&ok), None);
        let not_answered = json!({"messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]},
            {"role": "user", "content": "next"}
        ]});
        assert!(check_request(&not_answered).unwrap().contains("t1"));
        let ends_with_assistant = json!({"messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "ok"}
        ]});
        assert!(check_request(&ends_with_assistant).is_some());
        let paused = json!({"messages": [
            {"role": "user", "content": "search"},
            {"role": "assistant", "content": [
                {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "q"}},
                {"type": "web_search_tool_result", "tool_use_id": "s1", "content": []}]}
        ]});
        assert_eq!(
            check_request(&paused),
            None,
            "a paused server turn goes back as it is"
        );
        let empty = json!({"messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "text", "text": ""}]},
            {"role": "user", "content": "again"}
        ]});
        assert!(check_request(&empty).unwrap().contains("non-empty"));
        let cc = json!({"type": "ephemeral"});
        let many = json!({"system": [{"type": "text", "text": "a", "cache_control": cc}],
            "tools": [{"name": "x", "cache_control": cc}],
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": "a", "cache_control": cc},
                {"type": "text", "text": "b", "cache_control": cc},
                {"type": "text", "text": "c", "cache_control": cc}]}]});
        assert!(check_request(&many).unwrap().contains("Found 5"));
        assert_eq!(check_request(&json!({"no": "messages"})), None);
    }

    #[test]
    fn chat_requests() {
        let call = json!({"id": "c1", "type": "function", "function": {"name": "Bash", "arguments": "{}"}});
        let ok = json!({"messages": [
            {"role": "system", "content": "s"},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": null, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"}
        ]});
        assert_eq!(check_chat_request(&ok), None);
        let unanswered = json!({"messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "tool_calls": [call]},
            {"role": "user", "content": "next"}
        ]});
        assert!(check_chat_request(&unanswered).unwrap().contains("c1"));
        let orphan = json!({"messages": [
            {"role": "user", "content": "hi"},
            {"role": "tool", "tool_call_id": "zz", "content": "x"}
        ]});
        assert!(check_chat_request(&orphan).unwrap().contains("zz"));
        let bad_args = json!({"messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "x", "arguments": "{"}}]},
            {"role": "tool", "tool_call_id": "c", "content": "x"}
        ]});
        assert!(check_chat_request(&bad_args).unwrap().contains("JSON"));
        let ends = json!({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "a"}]});
        assert!(check_chat_request(&ends).is_some());
        assert!(check_chat_request(&json!({"messages": []})).is_some());
    }
}
