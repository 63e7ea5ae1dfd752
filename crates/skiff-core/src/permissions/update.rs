//! Permission changes while a session runs — rules added or removed, the mode set — as the
//! Agent SDKs' `PermissionUpdate` describes them. Every front end sends them to the session as
//! [`crate::session::Op::UpdatePermissions`]; the session applies them to its rules through a
//! [`PermissionStore`] (which also saves them where their destination says) and changes the
//! mode itself.

use std::path::PathBuf;
use std::sync::Arc;

use skiff_protocol::control as wire;

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

    /// From the SDKs' destination.
    pub fn from_wire(d: wire::Destination) -> Self {
        match d {
            wire::Destination::Session => Self::Session,
            wire::Destination::LocalSettings => Self::LocalSettings,
            wire::Destination::ProjectSettings => Self::ProjectSettings,
            wire::Destination::UserSettings => Self::UserSettings,
            wire::Destination::CliArg => Self::CliArg,
        }
    }

    /// The SDKs' destination.
    pub fn to_wire(self) -> wire::Destination {
        match self {
            Self::Session => wire::Destination::Session,
            Self::LocalSettings => wire::Destination::LocalSettings,
            Self::ProjectSettings => wire::Destination::ProjectSettings,
            Self::UserSettings => wire::Destination::UserSettings,
            Self::CliArg => wire::Destination::CliArg,
        }
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

    /// From the SDKs' `PermissionUpdate` (`addRules`, `removeRules`, `setMode`; a missing
    /// destination is the session, a missing behavior is allow). Other types (`replaceRules`,
    /// `addDirectories`, `removeDirectories`) and entries that do not fit their type are an
    /// error naming them.
    pub fn from_wire(update: &wire::PermissionUpdate) -> Result<Self, String> {
        let destination = |d: Option<wire::Destination>| {
            Destination::from_wire(d.unwrap_or(wire::Destination::Session))
        };
        let rules = |u: &wire::RulesUpdate| -> Vec<String> {
            u.rules.iter().map(wire::RuleValue::to_text).collect()
        };
        let behavior = |u: &wire::RulesUpdate| match u.behavior {
            Some(wire::RuleBehavior::Deny) => RuleKind::Deny,
            Some(wire::RuleBehavior::Ask) => RuleKind::Ask,
            Some(wire::RuleBehavior::Allow) | None => RuleKind::Allow,
        };
        match update {
            wire::PermissionUpdate::AddRules(u) => Ok(Self::AddRules {
                rules: rules(u),
                behavior: behavior(u),
                destination: destination(u.destination),
            }),
            wire::PermissionUpdate::RemoveRules(u) => Ok(Self::RemoveRules {
                rules: rules(u),
                behavior: behavior(u),
                destination: destination(u.destination),
            }),
            wire::PermissionUpdate::SetMode(u) => Ok(Self::SetMode {
                mode: u
                    .mode
                    .parse::<PermissionMode>()
                    .map_err(|e| e.to_string())?,
                destination: destination(u.destination),
            }),
            wire::PermissionUpdate::Unknown(_) => Err(match update.type_name() {
                Some(t) => format!("the permission update {t:?} is not supported or malformed"),
                None => "a permission update without a type".to_owned(),
            }),
            other => Err(format!(
                "the permission update {:?} is not supported",
                other.type_name().unwrap_or_default()
            )),
        }
    }

    /// The SDKs' `PermissionUpdate` (a `permission_suggestions` entry).
    pub fn to_wire(&self) -> wire::PermissionUpdate {
        let rules_update =
            |rules: &[String], behavior: &RuleKind, destination: &Destination| wire::RulesUpdate {
                rules: rules
                    .iter()
                    .map(|r| wire::RuleValue::from_text(r))
                    .collect(),
                behavior: Some(match behavior {
                    RuleKind::Allow => wire::RuleBehavior::Allow,
                    RuleKind::Deny => wire::RuleBehavior::Deny,
                    RuleKind::Ask => wire::RuleBehavior::Ask,
                }),
                destination: Some(destination.to_wire()),
                extra: Default::default(),
            };
        match self {
            Self::AddRules {
                rules,
                behavior,
                destination,
            } => wire::PermissionUpdate::AddRules(rules_update(rules, behavior, destination)),
            Self::RemoveRules {
                rules,
                behavior,
                destination,
            } => wire::PermissionUpdate::RemoveRules(rules_update(rules, behavior, destination)),
            Self::SetMode { mode, destination } => {
                wire::PermissionUpdate::SetMode(wire::ModeUpdate {
                    mode: mode.as_str().to_owned(),
                    destination: Some(destination.to_wire()),
                    extra: Default::default(),
                })
            }
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

    use serde_json::json;

    use super::*;

    fn from_sdk(v: &serde_json::Value) -> Result<PermissionUpdate, String> {
        let wire: wire::PermissionUpdate =
            serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
        PermissionUpdate::from_wire(&wire)
    }

    #[test]
    fn sdk_updates_round_trip() {
        let v = json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test:*"},
            {"toolName": "WebFetch"}], "behavior": "allow", "destination": "localSettings"});
        let u = from_sdk(&v).unwrap();
        assert_eq!(
            u,
            PermissionUpdate::AddRules {
                rules: vec!["Bash(npm test:*)".into(), "WebFetch".into()],
                behavior: RuleKind::Allow,
                destination: Destination::LocalSettings,
            }
        );
        assert_eq!(serde_json::to_value(u.to_wire()).unwrap(), v);
        let m = json!({"type": "setMode", "mode": "acceptEdits", "destination": "session"});
        assert_eq!(
            from_sdk(&m).unwrap(),
            PermissionUpdate::mode(PermissionMode::AcceptEdits)
        );
        let err = from_sdk(&json!({"type": "addDirectories"})).unwrap_err();
        assert!(err.contains("addDirectories"), "{err}");
        let err = from_sdk(&json!({"type": "addDirectories", "directories": ["/x"]})).unwrap_err();
        assert!(err.contains("addDirectories"), "{err}");
        assert!(from_sdk(&json!({"type": "setMode", "mode": "yolo"})).is_err());
        assert!(from_sdk(&json!({"type": "addRules", "destination": "elsewhere"})).is_err());
        assert_eq!(
            from_sdk(
                &json!({"type": "removeRules", "rules": [{"toolName": "Bash", "ruleContent": ""}]})
            )
            .unwrap(),
            PermissionUpdate::RemoveRules {
                rules: vec!["Bash".into()],
                behavior: RuleKind::Allow,
                destination: Destination::Session,
            }
        );
    }
}
