//! `session/load`: a saved conversation replayed as `session/update`s, as ACP asks: the user's
//! messages as `user_message_chunk`s, the answers and thinking as agent chunks, each tool call
//! as one `tool_call` that already carries its outcome, and the plan of the last todo list.

use std::collections::HashMap;
use std::path::Path;

use agent_client_protocol::v1::schema::{
    ContentBlock as AcpBlock, ContentChunk, ImageContent, SessionUpdate,
};
use skiff_protocol::{ContentBlock, ImageSource, Message, MessageContent, Role, ToolResultBlock};

use super::tools;
use super::updates::{agent_text, thought};

/// Text the user did not type: memory and other reminders skiff adds.
fn injected(text: &str) -> bool {
    text.trim_start().starts_with("<system-reminder>")
}

fn user_chunk(block: AcpBlock) -> SessionUpdate {
    SessionUpdate::UserMessageChunk(ContentChunk::new(block))
}

/// The updates that show `messages` again, in order.
pub fn replay(messages: &[Message], cwd: &Path) -> Vec<SessionUpdate> {
    let results: HashMap<&str, &ToolResultBlock> = messages
        .iter()
        .filter(|m| m.role == Role::User)
        .filter_map(|m| match &m.content {
            MessageContent::Blocks(b) => Some(b),
            MessageContent::Text(_) => None,
        })
        .flatten()
        .filter_map(|b| match b {
            ContentBlock::ToolResult(r) => Some((r.tool_use_id.as_str(), r)),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    for message in messages {
        let blocks = message.content.to_blocks();
        for block in &blocks {
            match (message.role, block) {
                (Role::User, ContentBlock::Text(t)) if !injected(&t.text) => {
                    out.push(user_chunk(AcpBlock::from(t.text.clone())));
                }
                (Role::User, ContentBlock::Image(i)) => {
                    if let ImageSource::Base64 { media_type, data } = &i.source {
                        out.push(user_chunk(AcpBlock::Image(ImageContent::new(
                            data.clone(),
                            media_type.clone(),
                        ))));
                    }
                }
                (Role::Assistant, ContentBlock::Text(t)) if !t.text.is_empty() => {
                    out.push(agent_text(&t.text));
                }
                (Role::Assistant, ContentBlock::Thinking(t)) if !t.thinking.is_empty() => {
                    out.push(thought(&t.thinking));
                }
                (Role::Assistant, ContentBlock::ToolUse(t)) => {
                    let mut call = tools::started(&t.id, &t.name, &t.input, cwd);
                    if let Some(r) = results.get(t.id.as_str()) {
                        let end = tools::finished(
                            &t.id,
                            &t.name,
                            &t.input,
                            cwd,
                            r.content.as_ref(),
                            r.is_error == Some(true),
                            None,
                        );
                        call.update(end.fields);
                    }
                    out.push(SessionUpdate::ToolCall(call));
                    if let Some(plan) = tools::plan(&t.name, &t.input) {
                        out.push(SessionUpdate::Plan(plan));
                    }
                }
                _ => {}
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use serde_json::{Value, json};

    use super::*;

    #[test]
    fn a_conversation_with_a_tool_round_replays_in_order() {
        let messages: Vec<Message> = serde_json::from_value(json!([
            {"role": "user", "content": [
                {"type": "text", "text": "<system-reminder>memory</system-reminder>"},
                {"type": "text", "text": "fix it"}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "plan", "signature": "s"},
                {"type": "text", "text": "Looking."},
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "false"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "Exit code 1", "is_error": true}]},
            {"role": "assistant", "content": [{"type": "text", "text": "It fails."}]},
        ]))
        .unwrap();
        let updates: Vec<Value> = replay(&messages, Path::new("/w"))
            .iter()
            .map(|u| serde_json::to_value(u).unwrap())
            .collect();
        let kinds: Vec<&str> = updates
            .iter()
            .map(|u| u["sessionUpdate"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            [
                "user_message_chunk",
                "agent_thought_chunk",
                "agent_message_chunk",
                "tool_call",
                "agent_message_chunk"
            ]
        );
        assert_eq!(updates[0]["content"]["text"], "fix it");
        assert_eq!(updates[3]["status"], "failed");
        assert_eq!(updates[3]["kind"], "execute");
        assert!(
            updates[3]["content"][0]["content"]["text"]
                .as_str()
                .unwrap()
                .contains("Exit code 1")
        );
    }
}
