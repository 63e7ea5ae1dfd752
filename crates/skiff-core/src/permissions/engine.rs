//! The permission engine: Claude Code's rules and modes.
//!
//! Order: deny rules → ask rules → plan mode → allow rules → the mode's defaults. A Bash
//! command is analysed into every command it runs ([`super::command_line`], over the one shell
//! analysis in [`skiff_tools::shell`]) and decided in [`super::bash_rules`]: denied if any part
//! is denied, asked if any part asks or could be covered by a deny or ask rule without it being
//! known, and run without asking only if every part is allowed. Paths are matched in their
//! lexical, real and physical forms, so `..`, `./`, absolute forms and symlinks cannot dodge a
//! rule.

use std::path::Path;
use std::sync::RwLock;

use async_trait::async_trait;
use serde_json::Value;
use skiff_tools::path_guard::path_forms;

use super::rule::{EDIT_TOOLS, READ_TOOLS, Rule, RuleKind};
pub use super::workspace::Workspace;
use super::{PermissionChecker, PermissionDecision, PermissionMode, PermissionQuery};

/// The text a Read deny rule gives the model.
pub const READ_DENIED: &str = "<tool_use_error>File is in a directory that is denied by your permission settings.</tool_use_error>";

/// Tools that change nothing by themselves (their own calls are checked where they act).
const HARMLESS: &[&str] = &[
    "TodoWrite",
    "Task",
    "Agent",
    "BashOutput",
    "KillShell",
    "KillBash",
    "TaskOutput",
    "TaskStop",
    "ListMcpResourcesTool",
    "ReadMcpResourceTool",
];

/// Tools that only read, but read the network: what they reach is the user's call, so they
/// ask unless an allow rule covers the call (`WebFetch(domain:…)`), plan mode included.
const WEB_TOOLS: &[&str] = &["WebFetch", "WebSearch"];

/// The rules of a session, by kind.
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    /// Allow rules.
    pub allow: Vec<Rule>,
    /// Ask rules.
    pub ask: Vec<Rule>,
    /// Deny rules.
    pub deny: Vec<Rule>,
}

impl RuleSet {
    /// Add a rule to its list (allow rules with tool-name globs are ignored with a warning).
    pub fn push(&mut self, kind: RuleKind, rule: Rule) {
        match kind {
            RuleKind::Allow if !rule.allowable() => {
                tracing::warn!(rule = %rule, "allow rules cannot use tool-name wildcards; ignored");
            }
            RuleKind::Allow => self.allow.push(rule),
            RuleKind::Ask => self.ask.push(rule),
            RuleKind::Deny => self.deny.push(rule),
        }
    }

    /// The rules of one kind.
    pub fn list(&self, kind: RuleKind) -> &[Rule] {
        match kind {
            RuleKind::Allow => &self.allow,
            RuleKind::Ask => &self.ask,
            RuleKind::Deny => &self.deny,
        }
    }

    /// Tools that bare-name deny rules remove from the model's list.
    pub fn removed_tools(&self) -> Vec<String> {
        self.deny
            .iter()
            .filter_map(|r| r.bare_tool().map(str::to_owned))
            .collect()
    }

    /// Whether a deny rule without a specifier covers `tool` (by name, MCP server or glob):
    /// such a tool is not offered to the model at all.
    pub fn removes_tool(&self, tool: &str) -> bool {
        self.deny.iter().any(|r| r.removes(tool))
    }
}

/// Claude Code's permission rules and modes.
#[derive(Debug)]
pub struct PermissionEngine {
    rules: RwLock<RuleSet>,
    workspace: Workspace,
}

/// What one check found, before the mode turns "not allowed" into ask or deny.
pub(super) enum Verdict {
    Allow,
    Deny(String),
    /// An ask rule matched: asked even in `bypassPermissions`.
    AskRule,
    /// Nothing allows it.
    NotAllowed,
}

impl PermissionEngine {
    /// An engine with these rules for this workspace.
    pub fn new(rules: RuleSet, workspace: Workspace) -> Self {
        Self {
            rules: RwLock::new(rules),
            workspace,
        }
    }

    /// The workspace the engine judges paths against.
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// A copy of the current rules.
    pub fn rules(&self) -> RuleSet {
        self.read().clone()
    }

    /// See [`RuleSet::removes_tool`].
    pub fn removes_tool(&self, tool: &str) -> bool {
        self.read().removes_tool(tool)
    }

    /// Add a rule while the session runs ("yes, and don't ask again").
    pub fn add_rule(&self, kind: RuleKind, rule: Rule) {
        match self.rules.write() {
            Ok(mut r) => r.push(kind, rule),
            Err(poisoned) => poisoned.into_inner().push(kind, rule),
        }
    }

    /// Remove the rules of one kind written as `text` (a rule removed while the session runs).
    pub fn remove_rule(&self, kind: RuleKind, text: &str) {
        let mut rules = self
            .rules
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let list = match kind {
            RuleKind::Allow => &mut rules.allow,
            RuleKind::Ask => &mut rules.ask,
            RuleKind::Deny => &mut rules.deny,
        };
        list.retain(|r| r.text() != text.trim());
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, RuleSet> {
        self.rules
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether a Read deny rule covers `path` (for the search tools' directory walks).
    pub fn read_denied(&self, path: &Path) -> bool {
        let rules = self.read();
        rules.deny.iter().any(|r| {
            r.is_path_rule() && r.names_tool("Read", RuleKind::Deny) && r.matches_path(path)
        })
    }

    /// Decide one call.
    pub fn decide(&self, q: &PermissionQuery<'_>) -> PermissionDecision {
        self.decide_in(&self.read(), q)
    }

    /// Decide one call with `grants` added to the allow rules (a command's `allowed-tools`).
    pub fn decide_with_grants(
        &self,
        q: &PermissionQuery<'_>,
        grants: &[Rule],
    ) -> PermissionDecision {
        if grants.is_empty() {
            return self.decide(q);
        }
        let mut rules = self.rules();
        for g in grants {
            rules.push(RuleKind::Allow, g.clone());
        }
        self.decide_in(&rules, q)
    }

    fn decide_in(&self, rules: &RuleSet, q: &PermissionQuery<'_>) -> PermissionDecision {
        let verdict = match q.tool {
            "Bash" => self.bash(rules, q),
            // Leaving plan mode is the user's call, whatever the rules say.
            "ExitPlanMode" if q.mode == PermissionMode::BypassPermissions => Verdict::Allow,
            "ExitPlanMode" => return self.ask(q),
            t if READ_TOOLS.contains(&t) || EDIT_TOOLS.contains(&t) => self.file_tool(rules, q),
            _ => self.other_tool(rules, q),
        };
        match verdict {
            Verdict::Allow => PermissionDecision::Allow,
            Verdict::Deny(message) => PermissionDecision::Deny { message },
            Verdict::AskRule => self.ask(q),
            Verdict::NotAllowed if q.mode == PermissionMode::BypassPermissions => {
                PermissionDecision::Allow
            }
            Verdict::NotAllowed if q.mode == PermissionMode::Plan => PermissionDecision::Deny {
                message: plan_denied(q.tool),
            },
            Verdict::NotAllowed => self.ask(q),
        }
    }

    fn ask(&self, q: &PermissionQuery<'_>) -> PermissionDecision {
        let message = self.not_granted(q);
        if q.mode == PermissionMode::DontAsk {
            PermissionDecision::Deny { message }
        } else {
            PermissionDecision::Ask { message }
        }
    }

    /// Claude Code's text for a call nobody granted.
    fn not_granted(&self, q: &PermissionQuery<'_>) -> String {
        if EDIT_TOOLS.contains(&q.tool)
            && let Some(path) = file_path(q.tool, q.input)
            && let Some((_, real)) = path_forms(&self.workspace.cwd, path)
        {
            return format!(
                "Claude requested permissions to write to {}, but you haven't granted it yet.",
                real.display()
            );
        }
        super::not_granted(q.tool)
    }

    /// Rules about the call judged on its input alone (parameter rules, domains, MCP, agents).
    pub(super) fn input_rules(rules: &RuleSet, kind: RuleKind, q: &PermissionQuery<'_>) -> bool {
        rules.list(kind).iter().any(|r| {
            r.names_tool(q.tool, kind)
                && !r.is_path_rule()
                && (q.tool != "Bash" || !r.is_command_rule())
                && r.matches_input(q.tool, q.input)
        })
    }

    fn other_tool(&self, rules: &RuleSet, q: &PermissionQuery<'_>) -> Verdict {
        if Self::input_rules(rules, RuleKind::Deny, q) {
            return Verdict::Deny(format!("Permission to use {} has been denied.", q.tool));
        }
        if Self::input_rules(rules, RuleKind::Ask, q) {
            return Verdict::AskRule;
        }
        let web = WEB_TOOLS.contains(&q.tool);
        let harmless = HARMLESS.contains(&q.tool) || (q.read_only && !web);
        if q.mode == PermissionMode::Plan && !harmless && !web {
            return Verdict::Deny(plan_denied(q.tool));
        }
        let allowed = rules.allow.iter().any(|r| {
            r.names_tool(q.tool, RuleKind::Allow)
                && !r.is_param_rule()
                && r.matches_input(q.tool, q.input)
        });
        if allowed || harmless {
            Verdict::Allow
        } else if web && q.mode == PermissionMode::Plan {
            // Plan mode denies what is not allowed; a read of the web is asked instead.
            Verdict::AskRule
        } else {
            Verdict::NotAllowed
        }
    }

    fn file_tool(&self, rules: &RuleSet, q: &PermissionQuery<'_>) -> Verdict {
        let is_edit = EDIT_TOOLS.contains(&q.tool);
        if Self::input_rules(rules, RuleKind::Deny, q) {
            return Verdict::Deny(format!("Permission to use {} has been denied.", q.tool));
        }
        let given = file_path(q.tool, q.input).unwrap_or(".");
        // A path that cannot even be formed is refused by the tool itself.
        let forms = path_forms(&self.workspace.cwd, given);
        let matches = |kind: RuleKind| {
            forms.as_ref().is_some_and(|(lexical, real)| {
                rules.list(kind).iter().any(|r| {
                    r.is_path_rule()
                        && r.names_tool(q.tool, kind)
                        && (r.matches_path(lexical) || r.matches_path(real))
                })
            })
        };
        if matches(RuleKind::Deny) {
            let denied_by_read = forms.as_ref().is_some_and(|(l, r)| {
                rules.deny.iter().any(|rule| {
                    rule.is_path_rule()
                        && rule.names_tool("Read", RuleKind::Deny)
                        && (rule.matches_path(l) || rule.matches_path(r))
                })
            });
            return Verdict::Deny(if !is_edit || denied_by_read {
                READ_DENIED.to_owned()
            } else {
                format!("Permission to use {} has been denied.", q.tool)
            });
        }
        if matches(RuleKind::Ask) || Self::input_rules(rules, RuleKind::Ask, q) {
            return Verdict::AskRule;
        }
        if !is_edit {
            return Verdict::Allow;
        }
        if q.mode == PermissionMode::Plan {
            return Verdict::Deny(plan_denied(q.tool));
        }
        // Allow rules only ever match the real path: a symlink cannot borrow an allowed name.
        let allowed = forms.as_ref().is_some_and(|(_, real)| {
            rules.allow.iter().any(|r| {
                r.names_tool(q.tool, RuleKind::Allow) && !r.is_param_rule() && r.matches_path(real)
            })
        });
        if allowed {
            return Verdict::Allow;
        }
        let auto = q.mode == PermissionMode::AcceptEdits
            && forms.as_ref().is_some_and(|(lexical, real)| {
                self.workspace.inside(real)
                    && !self.workspace.protected(real)
                    && !self.workspace.protected(lexical)
            });
        if auto {
            Verdict::Allow
        } else {
            Verdict::NotAllowed
        }
    }
}

#[async_trait]
impl PermissionChecker for PermissionEngine {
    async fn check(&self, query: &PermissionQuery<'_>) -> PermissionDecision {
        self.decide(query)
    }

    async fn check_with_grants(
        &self,
        query: &PermissionQuery<'_>,
        grants: &[Rule],
    ) -> PermissionDecision {
        self.decide_with_grants(query, grants)
    }
}

fn plan_denied(tool: &str) -> String {
    format!(
        "{tool} is not available in plan mode: only read-only tools and commands run until the \
         user approves a plan (present it with ExitPlanMode)."
    )
}

/// The path a file tool works on.
fn file_path<'a>(tool: &str, input: &'a Value) -> Option<&'a str> {
    let field = match tool {
        "NotebookEdit" | "NotebookRead" => "notebook_path",
        "Grep" | "Glob" | "LS" => "path",
        _ => "file_path",
    };
    input
        .get(field)
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty())
}

#[cfg(test)]
mod tests;
