//! The session's questions as the host sees them: a `can_use_tool` request for an approval,
//! and the host's answer read back into an [`ApprovalAnswer`].

use std::path::Path;

use serde_json::Value;
use skiff_core::permissions::{PermissionEngine, PermissionUpdate, not_granted};
use skiff_core::{ApprovalAnswer, ApprovalRequest, PermissionMode};
use skiff_protocol::control::{self, CanUseTool, CanUseToolAnswer, ModeUpdate};

/// The tools for which Claude Code also suggests switching the session to acceptEdits.
const EDITING_TOOLS: &[&str] = &["Bash", "Edit", "Write", "MultiEdit", "NotebookEdit"];

/// The `can_use_tool` request for an approval: the call, the rules "always allow" would add,
/// the path a file tool wants, why consent is needed.
pub(super) fn can_use_tool(
    a: &ApprovalRequest,
    engine: &PermissionEngine,
    cwd: &Path,
) -> CanUseTool {
    let rules = engine.suggest_rules(&a.tool_name, &a.input, PermissionMode::Default);
    let mut suggestions = Vec::new();
    if !rules.is_empty() {
        suggestions.push(PermissionUpdate::allow_always(rules).to_wire());
    }
    // As Claude Code: edits and commands may also switch the session to acceptEdits.
    if EDITING_TOOLS.contains(&a.tool_name.as_str()) {
        suggestions.push(control::PermissionUpdate::SetMode(ModeUpdate {
            mode: PermissionMode::AcceptEdits.as_str().to_owned(),
            destination: Some(control::Destination::Session),
            extra: Default::default(),
        }));
    }
    let text = |key: &str| a.input.get(key).and_then(Value::as_str);
    CanUseTool {
        tool_name: a.tool_name.clone(),
        display_name: Some(a.tool_name.clone()),
        input: a.input.clone(),
        permission_suggestions: Some(suggestions),
        tool_use_id: Some(a.tool_use_id.clone()),
        // A file tool names the path it wants.
        blocked_path: text("file_path")
            .or_else(|| text("notebook_path"))
            .map(|p| cwd.join(p).display().to_string()),
        description: text("description").map(str::to_owned),
        decision_reason: Some(a.reason.clone()).filter(|r| !r.is_empty()),
        mcp_server: a
            .tool_name
            .strip_prefix("mcp__")
            .and_then(|r| r.split("__").next())
            .map(str::to_owned),
        extra: Default::default(),
    }
}

/// A `can_use_tool` answer: allow (with `updatedInput`) or deny, and the permission changes
/// (`updatedPermissions`) an allow brings. An answer that is not a clean allow denies.
pub(super) fn read_answer(
    request: &ApprovalRequest,
    answer: Result<Value, String>,
) -> (ApprovalAnswer, Vec<PermissionUpdate>) {
    let v = match answer {
        Ok(v) => v,
        Err(e) => {
            return (
                ApprovalAnswer::deny(format!("The permission check failed: {e}")),
                Vec::new(),
            );
        }
    };
    match CanUseToolAnswer::read(v) {
        CanUseToolAnswer::Allow(allow) => {
            let updates = allow
                .updated_permissions
                .iter()
                .flatten()
                .filter_map(|u| match PermissionUpdate::from_wire(u) {
                    Ok(u) => Some(u),
                    Err(e) => {
                        tracing::warn!(error = %e, "permission update not applied");
                        None
                    }
                })
                .collect();
            (
                ApprovalAnswer::Allow {
                    updated_input: allow.updated_input.filter(Value::is_object),
                },
                updates,
            )
        }
        CanUseToolAnswer::Deny(deny) => (
            ApprovalAnswer::Deny {
                message: deny
                    .message
                    .filter(|m| !m.is_empty())
                    .unwrap_or_else(|| not_granted(&request.tool_name)),
                interrupt: deny.interrupt == Some(true),
            },
            Vec::new(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn request() -> ApprovalRequest {
        ApprovalRequest {
            tool_name: "Bash".into(),
            input: json!({"command": "ls"}),
            tool_use_id: "toolu_1".into(),
            reason: String::new(),
        }
    }

    #[test]
    fn answers_allow_deny_and_fail_closed() {
        let (a, updates) = read_answer(
            &request(),
            Ok(
                json!({"behavior": "allow", "updatedInput": {"command": "ls -a"},
                "updatedPermissions": [{"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "ls:*"}],
                    "behavior": "allow", "destination": "session"}, {"type": "addDirectories", "directories": ["/x"]}]}),
            ),
        );
        assert_eq!(
            a,
            ApprovalAnswer::Allow {
                updated_input: Some(json!({"command": "ls -a"}))
            }
        );
        assert_eq!(updates.len(), 1, "addDirectories is not applied");
        let (a, _) = read_answer(
            &request(),
            Ok(json!({"behavior": "allow", "updatedInput": "ls"})),
        );
        assert_eq!(
            a,
            ApprovalAnswer::Allow {
                updated_input: None
            }
        );
        let (a, _) = read_answer(
            &request(),
            Ok(json!({"behavior": "deny", "interrupt": true})),
        );
        assert!(matches!(
            a,
            ApprovalAnswer::Deny {
                interrupt: true,
                ..
            }
        ));
        for garbage in [
            json!({"behavior": "sure"}),
            json!(null),
            json!({"behavior": "allow", "updatedPermissions": 1}),
        ] {
            let (a, updates) = read_answer(&request(), Ok(garbage));
            assert!(matches!(
                a,
                ApprovalAnswer::Deny {
                    interrupt: false,
                    ..
                }
            ));
            assert!(updates.is_empty());
        }
        let (a, _) = read_answer(&request(), Err("boom".into()));
        assert!(matches!(a, ApprovalAnswer::Deny { message, .. } if message.contains("boom")));
    }
}
