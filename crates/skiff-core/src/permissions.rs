//! The permission seam: a checker decides allow / deny / ask before every tool call, and an
//! approver answers "ask". This crate ships allow-all, a deny-rule checker for
//! `--disallowedTools` patterns, and a headless approver that denies.

use async_trait::async_trait;
use serde_json::Value;

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

/// Decides whether a tool call may run.
#[async_trait]
pub trait PermissionChecker: Send + Sync {
    /// Check one call.
    async fn check(&self, tool: &str, input: &Value, read_only: bool) -> PermissionDecision;
}

/// Answers "ask" decisions (a terminal prompt, an SDK callback, or a fixed answer).
#[async_trait]
pub trait Approver: Send + Sync {
    /// Whether the call may run.
    async fn approve(&self, tool: &str, input: &Value, message: &str) -> bool;
}

/// Allows everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct AllowAll;

#[async_trait]
impl PermissionChecker for AllowAll {
    async fn check(&self, _: &str, _: &Value, _: bool) -> PermissionDecision {
        PermissionDecision::Allow
    }
}

/// Denies every "ask" (headless runs without a prompt tool).
#[derive(Debug, Default, Clone, Copy)]
pub struct DenyAsks;

#[async_trait]
impl Approver for DenyAsks {
    async fn approve(&self, _: &str, _: &Value, _: &str) -> bool {
        false
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
    async fn check(&self, tool: &str, input: &Value, _: bool) -> PermissionDecision {
        match self.rules.iter().find(|r| r.matches(tool, input)) {
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
}
