//! The permission seam: a [`PermissionChecker`] decides allow / deny / ask before every tool
//! call, given the session's [`PermissionMode`], and an [`Approver`] answers "ask" — by asking
//! the session's client ([`AskClient`]: a request the client answers with a `Reply` op), by a
//! fixed answer ([`DenyAsks`]), or by the library user's own code. This crate ships allow-all
//! and a deny-rule checker for `--disallowedTools` patterns.

use std::fmt;
use std::str::FromStr;

use async_trait::async_trait;
use serde_json::Value;

use crate::event::{Answer, ApprovalAnswer, ApprovalRequest, RequestKind};
use crate::requests::Requester;

/// How much runs without asking (Claude Code's modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum PermissionMode {
    /// Rules decide; what no rule allows and is not read-only is asked.
    #[default]
    Default,
    /// File edits in the workspace run without asking.
    AcceptEdits,
    /// Read-only: nothing that changes the workspace runs.
    Plan,
    /// Everything runs without asking (deny rules still apply).
    BypassPermissions,
    /// Nothing is asked: what would be asked is denied.
    DontAsk,
}

impl PermissionMode {
    /// Every mode, in the order they are documented.
    pub const ALL: [Self; 5] = [
        Self::Default,
        Self::AcceptEdits,
        Self::Plan,
        Self::BypassPermissions,
        Self::DontAsk,
    ];

    /// The name Claude Code uses (`default`, `acceptEdits`, `plan`, `bypassPermissions`,
    /// `dontAsk`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::AcceptEdits => "acceptEdits",
            Self::Plan => "plan",
            Self::BypassPermissions => "bypassPermissions",
            Self::DontAsk => "dontAsk",
        }
    }
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for PermissionMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|m| m.as_str() == s.trim())
            .ok_or_else(|| {
                format!(
                    "invalid permission mode {s:?}: expected one of {}",
                    Self::ALL.map(Self::as_str).join(", ")
                )
            })
    }
}

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
        /// Why approval is needed.
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
}

/// Answers "ask" decisions. `client` asks the session's client (see [`AskClient`]).
#[async_trait]
pub trait Approver: Send + Sync {
    /// Whether the call may run.
    async fn approve(&self, request: ApprovalRequest, client: &Requester) -> ApprovalAnswer;
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
    async fn approve(&self, request: ApprovalRequest, _: &Requester) -> ApprovalAnswer {
        ApprovalAnswer::deny(not_granted(&request.tool_name))
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

/// A permission rule: `Tool` or `Tool(specifier)`, where the specifier is an exact argument or a
/// `prefix:*` pattern (Bash: the command; file tools: the path; others: the whole input JSON).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    tool: String,
    specifier: Option<String>,
}

impl Rule {
    /// Parse `Bash(git push:*)`, `Write`, `Read(./secrets/**)`.
    pub fn parse(text: &str) -> Self {
        let text = text.trim();
        match (text.find('('), text.strip_suffix(')')) {
            (Some(open), Some(inner)) if open > 0 => Self {
                tool: text[..open].to_owned(),
                specifier: Some(inner[open + 1..].to_owned()),
            },
            _ => Self {
                tool: text.to_owned(),
                specifier: None,
            },
        }
    }

    /// A bare tool name (no specifier): such a deny rule removes the tool entirely.
    pub fn bare_tool(&self) -> Option<&str> {
        self.specifier.is_none().then_some(self.tool.as_str())
    }

    /// Whether the rule covers this call.
    pub fn matches(&self, tool: &str, input: &Value) -> bool {
        if self.tool != tool {
            return false;
        }
        let Some(spec) = &self.specifier else {
            return true;
        };
        let arg = primary_argument(tool, input);
        match spec.strip_suffix(":*") {
            Some(prefix) => arg.starts_with(prefix),
            None => match spec.strip_suffix("**") {
                Some(prefix) => arg
                    .trim_start_matches("./")
                    .starts_with(prefix.trim_start_matches("./")),
                None => arg == *spec,
            },
        }
    }
}

fn primary_argument(tool: &str, input: &Value) -> String {
    let field = match tool {
        "Bash" => "command",
        "Read" | "Write" | "Edit" => "file_path",
        "Glob" | "Grep" => "pattern",
        "LS" => "path",
        _ => return input.to_string(),
    };
    input
        .get(field)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .trim()
        .to_owned()
}

/// Denies calls matching any deny rule; allows the rest.
#[derive(Debug, Default, Clone)]
pub struct DenyRules {
    rules: Vec<Rule>,
}

impl DenyRules {
    /// A checker with these deny rules.
    pub fn new(rules: Vec<Rule>) -> Self {
        Self { rules }
    }
}

#[async_trait]
impl PermissionChecker for DenyRules {
    async fn check(&self, q: &PermissionQuery<'_>) -> PermissionDecision {
        let tool = q.tool;
        match self.rules.iter().find(|r| r.matches(tool, q.input)) {
            Some(_) => PermissionDecision::Deny {
                message: format!(
                    "Permission to use {tool} with this input has been denied by your permission settings."
                ),
            },
            None => PermissionDecision::Allow,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rules() {
        let r = Rule::parse("Bash(git push:*)");
        assert!(r.matches("Bash", &json!({"command":"git push origin main"})));
        assert!(!r.matches("Bash", &json!({"command":"git status"})));
        assert!(!r.matches("Read", &json!({"file_path":"git push"})));
        assert_eq!(r.bare_tool(), None);
        let w = Rule::parse("Write");
        assert_eq!(w.bare_tool(), Some("Write"));
        assert!(w.matches("Write", &json!({})));
        let e = Rule::parse("Read(.env)");
        assert!(e.matches("Read", &json!({"file_path":".env"})));
        assert!(!e.matches("Read", &json!({"file_path":".env.example"})));
        let s = Rule::parse("Read(./secrets/**)");
        assert!(s.matches("Read", &json!({"file_path":"secrets/key.pem"})));
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
