//! The rules every Messages API request must follow, checked by the mock on every request of
//! every test (as codex-rs's mock does), so no test can forget them: the conversation is valid
//! ([`skiff_protocol::validate_history`]: starts with the user, roles alternate, every tool_use
//! answered exactly once in the next user message, no orphan results), it ends with a user
//! message (or a server-tool turn the server paused), no text block is empty, and at most 4 `cache_control` breakpoints are set — each a
//! 400 from the real API.

use serde_json::Value;
use skiff_protocol::{ContentBlock, Message, MessageContent, Role, validate_history};

/// Most cache breakpoints the API accepts in one request.
pub const MAX_CACHE_BREAKPOINTS: usize = 4;

/// What is wrong with a request body (None: nothing).
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
}
