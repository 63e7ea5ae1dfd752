//! `PermissionUpdate` (PROTOCOL.md §3.5): a permission change as the Agent SDKs write it, in a
//! `can_use_tool` request's `permission_suggestions` and in the host's `updatedPermissions`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::JsonMap;

/// One permission change. Types this version does not know, and entries that do not fit their
/// type, are kept as raw JSON ([`PermissionUpdate::Unknown`]) so one bad entry never spoils a
/// whole answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum PermissionUpdate {
    /// Add rules to a list.
    AddRules(RulesUpdate),
    /// Replace a list's rules.
    ReplaceRules(RulesUpdate),
    /// Remove rules from a list.
    RemoveRules(RulesUpdate),
    /// Switch the permission mode.
    SetMode(ModeUpdate),
    /// Add working directories.
    AddDirectories(DirectoriesUpdate),
    /// Remove working directories.
    RemoveDirectories(DirectoriesUpdate),
    /// A type this version does not know, or an entry that does not fit its type.
    #[serde(untagged)]
    Unknown(Value),
}

impl PermissionUpdate {
    /// The update's `type` as written (`addRules`, `setMode`, …; `None` when it has none).
    pub fn type_name(&self) -> Option<&str> {
        Some(match self {
            Self::AddRules(_) => "addRules",
            Self::ReplaceRules(_) => "replaceRules",
            Self::RemoveRules(_) => "removeRules",
            Self::SetMode(_) => "setMode",
            Self::AddDirectories(_) => "addDirectories",
            Self::RemoveDirectories(_) => "removeDirectories",
            Self::Unknown(v) => return v.get("type").and_then(Value::as_str),
        })
    }
}

/// `addRules`, `replaceRules`, `removeRules`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RulesUpdate {
    /// The rules.
    pub rules: Vec<RuleValue>,
    /// Their list (the SDKs' default: allow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behavior: Option<RuleBehavior>,
    /// Where the change is kept (the SDKs' default: the session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destination: Option<Destination>,
    /// Other fields.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// One rule: a tool and, optionally, what of it (`Bash` + `npm test:*` is `Bash(npm test:*)`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleValue {
    /// The tool's name.
    #[serde(rename = "toolName")]
    pub tool_name: String,
    /// The rule's argument (a command prefix, a path pattern, a domain).
    #[serde(
        rename = "ruleContent",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub rule_content: Option<String>,
    /// Other fields.
    #[serde(flatten)]
    pub extra: JsonMap,
}

impl RuleValue {
    /// A rule from Claude Code's text form: `Bash(npm test:*)`, `WebFetch`.
    pub fn from_text(rule: &str) -> Self {
        let (tool, content) = match rule.split_once('(') {
            Some((tool, rest)) => (tool, Some(rest.strip_suffix(')').unwrap_or(rest))),
            None => (rule, None),
        };
        Self {
            tool_name: tool.to_owned(),
            rule_content: content.map(str::to_owned),
            extra: JsonMap::new(),
        }
    }

    /// Claude Code's text form of the rule (an empty `ruleContent` is the whole tool).
    pub fn to_text(&self) -> String {
        match self.rule_content.as_deref() {
            Some(c) if !c.is_empty() => format!("{}({c})", self.tool_name),
            _ => self.tool_name.clone(),
        }
    }
}

/// Which list rules belong to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleBehavior {
    /// Allowed without asking.
    Allow,
    /// Refused.
    Deny,
    /// Asked about.
    Ask,
}

/// Where a change is kept (`PermissionUpdateDestination`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Destination {
    /// `~/.claude/settings.json`.
    UserSettings,
    /// `.claude/settings.json` of the project.
    ProjectSettings,
    /// `.claude/settings.local.json` of the project.
    LocalSettings,
    /// This session only.
    Session,
    /// As if given on the command line.
    CliArg,
}

/// `setMode`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModeUpdate {
    /// The mode (`default`, `acceptEdits`, `plan`, `bypassPermissions`, …).
    pub mode: String,
    /// Where it is kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destination: Option<Destination>,
    /// Other fields.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `addDirectories`, `removeDirectories`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DirectoriesUpdate {
    /// The directories.
    pub directories: Vec<String>,
    /// Where the change is kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destination: Option<Destination>,
    /// Other fields.
    #[serde(flatten)]
    pub extra: JsonMap,
}
