//! Permission changes while a session runs — rules added or removed, the mode set — as the
//! Agent SDKs' `PermissionUpdate` describes them. Every front end sends them to the session as
//! [`crate::session::Op::UpdatePermissions`]; the session applies them to its rules through a
//! [`PermissionStore`] (which also saves them where their destination says) and changes the
//! mode itself.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};

use super::PermissionMode;
use super::engine::PermissionEngine;
use super::rule::{Rule, RuleKind, RuleOrigin};

/// Where a change is kept (the SDKs' `PermissionUpdateDestination`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Destination {
    /// For this session only.
    Session,
    /// `.claude/settings.local.json` of the project (not committed).
    LocalSettings,
    /// `.claude/settings.json` of the project (shared).
    ProjectSettings,
    /// `~/.claude/settings.json`.
    UserSettings,
    /// As if given on the command line: this session only.
    CliArg,
}

impl Destination {
    /// The SDKs' spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Session => "session",
            Self::LocalSettings => "localSettings",
            Self::ProjectSettings => "projectSettings",
            Self::UserSettings => "userSettings",
            Self::CliArg => "cliArg",
        }
    }

    /// Whether the change is written to a settings file.
    pub fn is_saved(self) -> bool {
        matches!(
            self,
            Self::LocalSettings | Self::ProjectSettings | Self::UserSettings
        )
    }

    fn parse(s: &str) -> Result<Self, String> {
        Ok(match s {
            "session" => Self::Session,
            "localSettings" => Self::LocalSettings,
            "projectSettings" => Self::ProjectSettings,
            "userSettings" => Self::UserSettings,
            "cliArg" => Self::CliArg,
            other => return Err(format!("unknown permission destination {other:?}")),
        })
    }
}

/// One change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionUpdate {
    /// Add rules (Claude Code's text: `Bash(npm test:*)`, `Edit(./src/**)`, `WebFetch`).
    AddRules {
        /// The rules' texts.
        rules: Vec<String>,
        /// Their list.
        behavior: RuleKind,
        /// Where they are kept.
        destination: Destination,
    },
    /// Remove rules (by their text).
    RemoveRules {
        /// The rules' texts.
        rules: Vec<String>,
        /// Their list.
        behavior: RuleKind,
        /// Where they are removed from.
        destination: Destination,
    },
    /// Switch the permission mode.
    SetMode {
        /// The new mode.
        mode: PermissionMode,
        /// Where it is kept (`defaultMode` of a settings file, or the session only).
        destination: Destination,
    },
}

impl PermissionUpdate {
    /// Rules added for this session and saved in the project's local settings: what "always
    /// allow" does.
    pub fn allow_always(rules: Vec<String>) -> Self {
        Self::AddRules {
            rules,
            behavior: RuleKind::Allow,
            destination: Destination::LocalSettings,
        }
    }

    /// The mode for the rest of the session.
    pub fn mode(mode: PermissionMode) -> Self {
        Self::SetMode {
            mode,
            destination: Destination::Session,
        }
    }

    /// From the SDKs' JSON (`{"type": "addRules", "rules": [{"toolName", "ruleContent"}],
    /// "behavior", "destination"}`, `removeRules`, `setMode`). Other types (`replaceRules`,
    /// `addDirectories`, `removeDirectories`) are an error naming them.
    pub fn from_sdk(v: &Value) -> Result<Self, String> {
        let s = |k: &str| v.get(k).and_then(Value::as_str);
        let destination = Destination::parse(s("destination").unwrap_or("session"))?;
        let behavior = || match s("behavior") {
            Some("deny") => Ok(RuleKind::Deny),
            Some("ask") => Ok(RuleKind::Ask),
            Some("allow") | None => Ok(RuleKind::Allow),
            Some(other) => Err(format!("unknown rule behavior {other:?}")),
        };
        let rules = || -> Vec<String> {
            v.get("rules")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|r| {
                    let tool = r.get("toolName").and_then(Value::as_str)?;
                    Some(match r.get("ruleContent").and_then(Value::as_str) {
                        Some(c) if !c.is_empty() => format!("{tool}({c})"),
                        _ => tool.to_owned(),
                    })
                })
                .collect()
        };
        match s("type") {
            Some("addRules") => Ok(Self::AddRules {
                rules: rules(),
                behavior: behavior()?,
                destination,
            }),
            Some("removeRules") => Ok(Self::RemoveRules {
                rules: rules(),
                behavior: behavior()?,
                destination,
            }),
            Some("setMode") => {
                let mode = s("mode")
                    .ok_or("setMode without a mode")?
                    .parse::<PermissionMode>()
                    .map_err(|e| e.to_string())?;
                Ok(Self::SetMode { mode, destination })
            }
            Some(other) => Err(format!("the permission update {other:?} is not supported")),
            None => Err("a permission update without a type".to_owned()),
        }
    }

    /// The SDKs' JSON (a `permission_suggestions` entry).
    pub fn to_sdk(&self) -> Value {
        let rules_json = |rules: &[String]| -> Vec<Value> {
            rules
                .iter()
                .map(|rule| match rule.split_once('(') {
                    Some((tool, rest)) => json!({
                        "toolName": tool,
                        "ruleContent": rest.strip_suffix(')').unwrap_or(rest),
                    }),
                    None => json!({ "toolName": rule }),
                })
                .collect()
        };
        match self {
            Self::AddRules {
                rules,
                behavior,
                destination,
            } => json!({"type": "addRules", "rules": rules_json(rules),
                "behavior": behavior.as_str(), "destination": destination.as_str()}),
            Self::RemoveRules {
                rules,
                behavior,
                destination,
            } => json!({"type": "removeRules", "rules": rules_json(rules),
                "behavior": behavior.as_str(), "destination": destination.as_str()}),
            Self::SetMode { mode, destination } => json!({"type": "setMode",
                "mode": mode.as_str(), "destination": destination.as_str()}),
        }
    }
}

/// Applies rule changes to a session's rules, and saves them where their destination says.
pub trait PermissionStore: Send + Sync {
    /// Apply one change (never a [`PermissionUpdate::SetMode`] for the session: the session
    /// switches its mode itself and hands saved modes here). Returns the file it was saved in.
    fn apply(&self, update: &PermissionUpdate) -> Result<Option<PathBuf>, String>;
}

/// A store that keeps changes in the session's rules only (nothing is saved): the default of
/// sessions built without a settings layer.
#[derive(Debug, Clone)]
pub struct SessionRules {
    engine: Arc<PermissionEngine>,
}

impl SessionRules {
    /// Changes go to `engine`'s rules.
    pub fn new(engine: Arc<PermissionEngine>) -> Self {
        Self { engine }
    }

    /// Apply rule changes to the running rules (rules are anchored at the workspace). A rule
    /// that does not parse is an error naming it; the others still apply.
    pub fn apply_rules(&self, update: &PermissionUpdate) -> Result<(), String> {
        let origin = RuleOrigin::at(&self.engine.workspace().cwd);
        let mut errors = Vec::new();
        match update {
            PermissionUpdate::AddRules {
                rules, behavior, ..
            } => {
                for text in rules {
                    match Rule::parse(text, &origin) {
                        Ok(rule) => self.engine.add_rule(*behavior, rule),
                        Err(e) => errors.push(format!("{text}: {e}")),
                    }
                }
            }
            PermissionUpdate::RemoveRules {
                rules, behavior, ..
            } => {
                for text in rules {
                    self.engine.remove_rule(*behavior, text);
                }
            }
            PermissionUpdate::SetMode { .. } => {}
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(format!("cannot apply the rules {}", errors.join("; ")))
        }
    }
}

impl PermissionStore for SessionRules {
    fn apply(&self, update: &PermissionUpdate) -> Result<Option<PathBuf>, String> {
        self.apply_rules(update).map(|()| None)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn sdk_updates_round_trip() {
        let v = json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test:*"},
            {"toolName": "WebFetch"}], "behavior": "allow", "destination": "localSettings"});
        let u = PermissionUpdate::from_sdk(&v).unwrap();
        assert_eq!(
            u,
            PermissionUpdate::AddRules {
                rules: vec!["Bash(npm test:*)".into(), "WebFetch".into()],
                behavior: RuleKind::Allow,
                destination: Destination::LocalSettings,
            }
        );
        assert_eq!(u.to_sdk(), v);
        let m = json!({"type": "setMode", "mode": "acceptEdits", "destination": "session"});
        assert_eq!(
            PermissionUpdate::from_sdk(&m).unwrap(),
            PermissionUpdate::mode(PermissionMode::AcceptEdits)
        );
        let err = PermissionUpdate::from_sdk(&json!({"type": "addDirectories"})).unwrap_err();
        assert!(err.contains("addDirectories"), "{err}");
        assert!(PermissionUpdate::from_sdk(&json!({"type": "setMode", "mode": "yolo"})).is_err());
        assert!(
            PermissionUpdate::from_sdk(&json!({"type": "addRules", "destination": "elsewhere"}))
                .is_err()
        );
    }
}
