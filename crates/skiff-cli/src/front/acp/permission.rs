//! The permission engine's questions as `session/request_permission`: the options offered
//! (allow once, allow always, reject once, reject always — or, for a finished plan, which mode
//! to continue in) and what the editor's choice does: the approval's answer, and for "always"
//! a rule added to the session and saved in `.skiff/settings.local.json`.

use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionId, PermissionOptionKind, RequestPermissionOutcome,
};
use skiff_core::permissions::rule::RuleKind;
use skiff_core::{ApprovalAnswer, ApprovalRequest, PermissionMode};

use skiff_config::sessions::one_line;

/// Option ids.
const ALLOW: &str = "allow";
const ALLOW_ALWAYS: &str = "allow_always";
const REJECT: &str = "reject";
const REJECT_ALWAYS: &str = "reject_always";

/// What a choice changes besides the one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Nothing.
    None,
    /// Add this rule for the session and save it in the local settings.
    Rule(RuleKind, String),
    /// The session continues in this mode (a plan was accepted).
    Mode(PermissionMode),
    /// Save this entry in `sandbox.network.allowedDomains` (a sandboxed command's host).
    Domain(String),
}

fn option(id: &str, name: String, kind: PermissionOptionKind) -> PermissionOption {
    PermissionOption::new(PermissionOptionId::new(id), name, kind)
}

/// The options for a call; `rule` is what "always" adds (`Bash(cargo test)`, `Edit(./src/a.rs)`).
pub fn options(request: &ApprovalRequest, rule: &str) -> Vec<PermissionOption> {
    if request.tool_name == "ExitPlanMode" {
        return vec![
            option(
                PermissionMode::AcceptEdits.as_str(),
                "Yes, and auto-accept edits".to_owned(),
                PermissionOptionKind::AllowAlways,
            ),
            option(
                PermissionMode::Default.as_str(),
                "Yes, and manually approve edits".to_owned(),
                PermissionOptionKind::AllowOnce,
            ),
            option(
                REJECT,
                "No, keep planning".to_owned(),
                PermissionOptionKind::RejectOnce,
            ),
        ];
    }
    let shown = one_line(rule, 60);
    if request.tool_name == skiff_core::permissions::network::NETWORK_TOOL {
        return vec![
            option(
                ALLOW,
                format!("Allow {shown} for this session"),
                PermissionOptionKind::AllowOnce,
            ),
            option(
                ALLOW_ALWAYS,
                format!("Always allow {shown} (saved in .claude/settings.local.json)"),
                PermissionOptionKind::AllowAlways,
            ),
            option(
                REJECT,
                "Reject".to_owned(),
                PermissionOptionKind::RejectOnce,
            ),
        ];
    }
    vec![
        option(ALLOW, "Allow".to_owned(), PermissionOptionKind::AllowOnce),
        option(
            ALLOW_ALWAYS,
            format!("Always allow {shown}"),
            PermissionOptionKind::AllowAlways,
        ),
        option(
            REJECT,
            "Reject".to_owned(),
            PermissionOptionKind::RejectOnce,
        ),
        option(
            REJECT_ALWAYS,
            format!("Always reject {shown}"),
            PermissionOptionKind::RejectAlways,
        ),
    ]
}

/// The answer to the session for the editor's outcome (`Err` when the request failed), and
/// what else the choice does. A rejection (or a cancelled request) stops the turn, as in the
/// REPL.
pub fn answer(
    request: &ApprovalRequest,
    rule: &str,
    outcome: Result<RequestPermissionOutcome, String>,
) -> (ApprovalAnswer, Effect) {
    let chosen = match outcome {
        Ok(RequestPermissionOutcome::Selected(s)) => s.option_id.0.to_string(),
        Ok(_) => return (crate::front::approval::reject(None), Effect::None),
        Err(e) => {
            return (
                ApprovalAnswer::Deny {
                    message: format!("The permission request failed: {e}"),
                    interrupt: true,
                },
                Effect::None,
            );
        }
    };
    if request.tool_name == "ExitPlanMode" {
        return match chosen.parse::<PermissionMode>() {
            Ok(mode) if chosen != REJECT => (ApprovalAnswer::allow(), Effect::Mode(mode)),
            _ => (crate::front::approval::reject(None), Effect::None),
        };
    }
    if request.tool_name == skiff_core::permissions::network::NETWORK_TOOL {
        return match chosen.as_str() {
            ALLOW => (ApprovalAnswer::allow(), Effect::None),
            ALLOW_ALWAYS => (ApprovalAnswer::allow(), Effect::Domain(rule.to_owned())),
            _ => (
                ApprovalAnswer::Deny {
                    message: "The user did not allow the network access.".to_owned(),
                    interrupt: false,
                },
                Effect::None,
            ),
        };
    }
    match chosen.as_str() {
        ALLOW => (ApprovalAnswer::allow(), Effect::None),
        ALLOW_ALWAYS => (
            ApprovalAnswer::allow(),
            Effect::Rule(RuleKind::Allow, rule.to_owned()),
        ),
        REJECT_ALWAYS => (
            crate::front::approval::reject(None),
            Effect::Rule(RuleKind::Deny, rule.to_owned()),
        ),
        _ => (crate::front::approval::reject(None), Effect::None),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use agent_client_protocol::v1::schema::SelectedPermissionOutcome;
    use serde_json::json;

    use super::*;
    use serde_json::Value;

    fn req(tool: &str, input: Value) -> ApprovalRequest {
        ApprovalRequest {
            tool_name: tool.into(),
            input,
            tool_use_id: "t".into(),
            reason: String::new(),
        }
    }

    fn picked(id: &str) -> Result<RequestPermissionOutcome, String> {
        Ok(RequestPermissionOutcome::Selected(
            SelectedPermissionOutcome::new(id.to_owned()),
        ))
    }

    #[test]
    fn the_four_choices() {
        let r = req("Bash", json!({"command": "cargo test"}));
        let kinds: Vec<Value> = options(&r, "Bash(cargo test)")
            .iter()
            .map(|o| serde_json::to_value(o).unwrap())
            .collect();
        assert_eq!(
            kinds,
            vec![
                json!({"optionId": "allow", "name": "Allow", "kind": "allow_once"}),
                json!({"optionId": "allow_always", "name": "Always allow Bash(cargo test)", "kind": "allow_always"}),
                json!({"optionId": "reject", "name": "Reject", "kind": "reject_once"}),
                json!({"optionId": "reject_always", "name": "Always reject Bash(cargo test)", "kind": "reject_always"}),
            ]
        );
        let rule = "Bash(cargo test)";
        assert_eq!(
            answer(&r, rule, picked("allow")),
            (ApprovalAnswer::allow(), Effect::None)
        );
        assert_eq!(
            answer(&r, rule, picked("allow_always")).1,
            Effect::Rule(RuleKind::Allow, rule.into())
        );
        let (a, e) = answer(&r, rule, picked("reject_always"));
        assert!(matches!(
            a,
            ApprovalAnswer::Deny {
                interrupt: true,
                ..
            }
        ));
        assert_eq!(e, Effect::Rule(RuleKind::Deny, rule.into()));
        assert!(matches!(
            answer(&r, rule, picked("reject")).0,
            ApprovalAnswer::Deny { .. }
        ));
        assert!(matches!(
            answer(&r, rule, Ok(RequestPermissionOutcome::Cancelled)).0,
            ApprovalAnswer::Deny { .. }
        ));
        assert!(matches!(
            answer(&r, rule, Err("gone".into())).0,
            ApprovalAnswer::Deny { message, .. } if message.contains("gone")
        ));
    }

    #[test]
    fn a_plan_is_accepted_into_a_mode() {
        let r = req("ExitPlanMode", json!({"plan": "1. fix"}));
        assert_eq!(options(&r, "ExitPlanMode").len(), 3);
        let (a, e) = answer(&r, "ExitPlanMode", picked("acceptEdits"));
        assert_eq!(e, Effect::Mode(PermissionMode::AcceptEdits));
        // The input goes unchanged: the mode reaches the session as a permission update.
        assert_eq!(
            a,
            ApprovalAnswer::Allow {
                updated_input: None
            }
        );
        assert!(matches!(
            answer(&r, "ExitPlanMode", picked("reject")).0,
            ApprovalAnswer::Deny { .. }
        ));
    }

    #[test]
    fn network_access_is_allowed_for_the_session_or_saved_as_a_domain() {
        let r = req(
            skiff_core::permissions::network::NETWORK_TOOL,
            json!({"host": "registry.npmjs.org", "port": 443, "command": "npm ci"}),
        );
        let ids: Vec<Value> = options(&r, "registry.npmjs.org")
            .iter()
            .map(|o| serde_json::to_value(o).unwrap()["optionId"].clone())
            .collect();
        assert_eq!(
            ids,
            vec![json!("allow"), json!("allow_always"), json!("reject")]
        );
        let entry = "registry.npmjs.org";
        assert_eq!(
            answer(&r, entry, picked("allow_always")),
            (ApprovalAnswer::allow(), Effect::Domain(entry.into()))
        );
        // A refusal fails the connection, not the turn.
        assert!(matches!(
            answer(&r, entry, picked("reject")).0,
            ApprovalAnswer::Deny {
                interrupt: false,
                ..
            }
        ));
    }
}
