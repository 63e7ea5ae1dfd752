//! Validity of a conversation for the Messages API: starts with a user message, roles
//! alternate, every tool_use is answered exactly once by a tool_result in the next user
//! message, and no tool_result is orphaned.

use std::collections::HashSet;

use crate::{ContentBlock, Message, MessageContent, Role};

/// Why a history would be rejected by the API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryError(pub String);

impl std::fmt::Display for HistoryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for HistoryError {}

fn blocks(m: &Message) -> Vec<&ContentBlock> {
    match &m.content {
        MessageContent::Text(_) => Vec::new(),
        MessageContent::Blocks(b) => b.iter().collect(),
    }
}

/// Check `messages` against the API's rules.
pub fn validate_history(messages: &[Message]) -> Result<(), HistoryError> {
    let err = |i: usize, msg: String| Err(HistoryError(format!("message {i}: {msg}")));
    let Some(first) = messages.first() else {
        return Err(HistoryError("the conversation is empty".into()));
    };
    if first.role != Role::User {
        return err(0, "the first message must be a user message".into());
    }
    let mut pending: Vec<String> = Vec::new();
    let mut seen_ids: HashSet<String> = HashSet::new();
    for (i, m) in messages.iter().enumerate() {
        if i > 0 && messages[i - 1].role == m.role {
            return err(i, format!("two {:?} messages in a row", m.role));
        }
        match m.role {
            Role::Assistant => {
                if !pending.is_empty() {
                    return err(i, format!("tool_use {pending:?} not answered"));
                }
                for b in blocks(m) {
                    if let ContentBlock::ToolUse(t) = b {
                        if !seen_ids.insert(t.id.clone()) {
                            return err(i, format!("duplicate tool_use id {}", t.id));
                        }
                        pending.push(t.id.clone());
                    }
                    if let ContentBlock::ToolResult(_) = b {
                        return err(i, "tool_result in an assistant message".into());
                    }
                }
            }
            Role::User => {
                let mut answered = Vec::new();
                for b in blocks(m) {
                    if let ContentBlock::ToolResult(r) = b {
                        if !pending.contains(&r.tool_use_id) {
                            return err(
                                i,
                                format!(
                                    "tool_result for unknown or already answered id {}",
                                    r.tool_use_id
                                ),
                            );
                        }
                        if answered.contains(&r.tool_use_id) {
                            return err(i, format!("tool_use {} answered twice", r.tool_use_id));
                        }
                        answered.push(r.tool_use_id.clone());
                    }
                }
                if answered.len() != pending.len() {
                    let missing: Vec<_> =
                        pending.iter().filter(|p| !answered.contains(p)).collect();
                    return err(
                        i,
                        format!("tool_use {missing:?} not answered in the next user message"),
                    );
                }
                pending.clear();
            }
        }
    }
    if !pending.is_empty() {
        return err(
            messages.len() - 1,
            format!("tool_use {pending:?} never answered"),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ToolResultBlock, ToolUseBlock};
    use serde_json::json;

    fn tool_use(id: &str) -> ContentBlock {
        ContentBlock::ToolUse(ToolUseBlock {
            id: id.into(),
            name: "Bash".into(),
            input: json!({}),
            cache_control: None,
        })
    }
    fn result(id: &str) -> ContentBlock {
        ContentBlock::ToolResult(ToolResultBlock::text(id, "ok", false))
    }

    #[test]
    fn valid_and_invalid() {
        let u = Message::user_text("hi");
        let a = Message::blocks(
            Role::Assistant,
            vec![ContentBlock::text("x"), tool_use("t1"), tool_use("t2")],
        );
        let r = Message::blocks(Role::User, vec![result("t1"), result("t2")]);
        validate_history(&[u.clone(), a.clone(), r.clone()]).unwrap();
        assert!(validate_history(&[u.clone(), a.clone()]).is_err());
        assert!(validate_history(std::slice::from_ref(&a)).is_err());
        assert!(validate_history(&[u.clone(), u.clone()]).is_err());
        let partial = Message::blocks(Role::User, vec![result("t1")]);
        assert!(validate_history(&[u.clone(), a.clone(), partial]).is_err());
        let twice = Message::blocks(Role::User, vec![result("t1"), result("t1"), result("t2")]);
        assert!(validate_history(&[u.clone(), a.clone(), twice]).is_err());
        let orphan = Message::blocks(Role::User, vec![result("zz")]);
        assert!(validate_history(&[orphan]).is_err());
        assert!(validate_history(&[]).is_err());
    }
}
