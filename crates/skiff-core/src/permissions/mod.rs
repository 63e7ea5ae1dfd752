//! The permission seam: a [`PermissionChecker`] decides allow / deny / ask before every tool
//! call, given the session's [`PermissionMode`], and an [`Approver`] answers "ask" — by asking
//! the session's client ([`AskClient`]: a request the client answers with a `Reply` op), by a
//! fixed answer ([`DenyAsks`]), or by the library user's own code. [`PermissionEngine`] is
//! Claude Code's rules and modes; [`AllowAll`] allows everything.

mod bash_rules;
pub mod command_line;
mod command_paths;
mod engine;
pub mod network;
pub mod rule;
mod spelling;
mod suggest;
pub mod update;
mod workspace;

/// The shell analysis the engine decides on (skiff's one shell analysis).
pub use skiff_tools::shell;

pub use engine::{PermissionEngine, READ_DENIED, RuleSet, Workspace};
pub use rule::{Rule, RuleKind, RuleOrigin};
pub use update::{Destination, PermissionStore, PermissionUpdate, SessionRules};

use async_trait::async_trait;
use serde_json::Value;

use crate::event::{Answer, ApprovalAnswer, ApprovalRequest, RequestKind};
use crate::requests::Requester;

pub use crate::permission_mode::PermissionMode;

/// What the checker decided for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionDecision {
    /// Run it.
    Allow,
    /// Don't run it; tell the model why.
    Deny {
        /// Message sent to the model as the tool result.
        message: String,
    },
    /// Ask the approver.
    Ask {
        /// Why approval is needed, in Claude Code's words ("Claude requested permissions to
        /// …, but you haven't granted it yet."): the model gets it when nobody grants the call.
        message: String,
    },
}

/// One tool call to decide on.
#[derive(Debug, Clone, Copy)]
pub struct PermissionQuery<'a> {
    /// The tool's name.
    pub tool: &'a str,
    /// The call's input.
    pub input: &'a Value,
    /// The call's id.
    pub tool_use_id: &'a str,
    /// Whether the tool only reads.
    pub read_only: bool,
    /// The session's mode when the call is decided.
    pub mode: PermissionMode,
}

/// Decides whether a tool call may run.
#[async_trait]
pub trait PermissionChecker: Send + Sync {
    /// Check one call.
    async fn check(&self, query: &PermissionQuery<'_>) -> PermissionDecision;

    /// Check one call as if `grants` were extra allow rules (the `allowed-tools` of a command
    /// or skill, for the turn that runs it); deny and ask rules still win. Checkers without
    /// rules of their own let a grant naming the bare tool turn "ask" into "allow".
    async fn check_with_grants(
        &self,
        query: &PermissionQuery<'_>,
        grants: &[Rule],
    ) -> PermissionDecision {
        match self.check(query).await {
            PermissionDecision::Ask { .. }
                if grants.iter().any(|g| g.bare_tool() == Some(query.tool)) =>
            {
                PermissionDecision::Allow
            }
            d => d,
        }
    }
}

/// Answers "ask" decisions. `client` asks the session's client (see [`AskClient`]).
#[async_trait]
pub trait Approver: Send + Sync {
    /// Whether the call may run.
    async fn approve(&self, request: ApprovalRequest, client: &Requester) -> ApprovalAnswer;

    /// Whether anyone is asked (false for [`DenyAsks`]: then questions that could wait for an
    /// answer, like a sandboxed command's network access, are not put at all).
    fn asks(&self) -> bool {
        true
    }
}

/// Allows everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct AllowAll;

#[async_trait]
impl PermissionChecker for AllowAll {
    async fn check(&self, _: &PermissionQuery<'_>) -> PermissionDecision {
        PermissionDecision::Allow
    }
}

/// The message a call gets when nobody granted it.
pub fn not_granted(tool: &str) -> String {
    format!("Claude requested permissions to use {tool}, but you haven't granted it yet.")
}

/// Denies every "ask" (headless runs without a prompt tool).
#[derive(Debug, Default, Clone, Copy)]
pub struct DenyAsks;

#[async_trait]
impl Approver for DenyAsks {
    fn asks(&self) -> bool {
        false
    }

    async fn approve(&self, request: ApprovalRequest, _: &Requester) -> ApprovalAnswer {
        if request.reason.is_empty() {
            ApprovalAnswer::deny(not_granted(&request.tool_name))
        } else {
            ApprovalAnswer::deny(request.reason)
        }
    }
}

/// Asks the session's client: an [`crate::Event::Request`] it answers with
/// `Op::Reply { id, answer: Answer::Approval(..) }`. A client that goes away counts as a denial.
#[derive(Debug, Default, Clone, Copy)]
pub struct AskClient;

#[async_trait]
impl Approver for AskClient {
    async fn approve(&self, request: ApprovalRequest, client: &Requester) -> ApprovalAnswer {
        let tool = request.tool_name.clone();
        match client.ask(RequestKind::Approval(request)).await {
            Ok(Answer::Approval(a)) => a,
            Ok(other) => {
                tracing::warn!(
                    ?other,
                    "an approval was answered with something else; denied"
                );
                ApprovalAnswer::deny(not_granted(&tool))
            }
            Err(_) => ApprovalAnswer::deny(not_granted(&tool)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_mode_is_never_wider_than_its_parent() {
        use PermissionMode::*;
        for parent in PermissionMode::ALL {
            for wanted in PermissionMode::ALL {
                let child = parent.for_child(Some(wanted));
                assert!(
                    child.width() <= parent.width(),
                    "{parent} + {wanted} = {child}"
                );
                if parent != BypassPermissions {
                    assert!(
                        child.width() <= wanted.width(),
                        "{parent} + {wanted} = {child}"
                    );
                }
            }
            assert_eq!(parent.for_child(None), parent);
        }
        assert_eq!(Plan.for_child(Some(AcceptEdits)), Plan);
        assert_eq!(Plan.for_child(Some(BypassPermissions)), Plan);
        assert_eq!(Default.for_child(Some(AcceptEdits)), Default);
        assert_eq!(AcceptEdits.for_child(Some(Plan)), Plan);
        assert_eq!(BypassPermissions.for_child(Some(Plan)), BypassPermissions);
    }

    #[test]
    fn modes_parse_by_their_claude_code_names_only() {
        for m in PermissionMode::ALL {
            assert_eq!(m.as_str().parse::<PermissionMode>(), Ok(m));
        }
        let e = "yolo".parse::<PermissionMode>().unwrap_err();
        assert!(e.contains("acceptEdits") && e.contains("\"yolo\""), "{e}");
    }
}
