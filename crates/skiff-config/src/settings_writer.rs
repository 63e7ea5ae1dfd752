//! Changes skiff writes into settings files on the user's say: permission rules ("always
//! allow", an SDK host's `updatedPermissions`), the default mode, a sandbox's allowed domains.
//! Everything else in the file is kept; a file that is not a JSON object is left alone (an
//! error). [`SettingsStore`] is the session's [`PermissionStore`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};
use skiff_core::permissions::{
    Destination, PermissionEngine, PermissionStore, PermissionUpdate, SessionRules,
};

/// Add `rule` to `permissions.allow` of `<cwd>/.skiff/settings.local.json`, keeping everything
/// else in the file. A file that is not a JSON object is left alone (an error).
pub fn persist_allow_rule(cwd: &Path, rule: &str) -> std::io::Result<PathBuf> {
    persist_rule(cwd, "allow", rule)
}

/// Add `entry` to `sandbox.network.allowedDomains` of `<cwd>/.claude/settings.local.json`
/// (Claude Code's file and key), keeping everything else in the file.
pub fn persist_allowed_domain(cwd: &Path, entry: &str) -> std::io::Result<PathBuf> {
    let dir = cwd.join(".claude");
    let path = dir.join("settings.local.json");
    let mut root = read_object(&path, &format!("sandbox.network.allowedDomains: {entry:?}"))?;
    let mut sandbox = match root.remove("sandbox") {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    let mut network = match sandbox.remove("network") {
        Some(Value::Object(m)) => m,
        // The string form is the policy: kept as the object's `mode`.
        Some(Value::String(mode)) => Map::from_iter([("mode".to_owned(), Value::String(mode))]),
        _ => Map::new(),
    };
    let mut list = match network.remove("allowedDomains") {
        Some(Value::Array(a)) => a,
        _ => Vec::new(),
    };
    if !list.iter().any(|d| d.as_str() == Some(entry)) {
        list.push(Value::String(entry.to_owned()));
    }
    network.insert("allowedDomains".into(), Value::Array(list));
    sandbox.insert("network".into(), Value::Object(network));
    root.insert("sandbox".into(), Value::Object(sandbox));
    write_object(&dir, &path, root)
}

/// A settings file as a JSON object (empty when missing); `what` names the change for the
/// error when the file is not an object.
fn read_object(path: &Path, what: &str) -> std::io::Result<Map<String, Value>> {
    match std::fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => Ok(Map::new()),
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(m)) => Ok(m),
            _ => Err(std::io::Error::other(format!(
                "{} is not a JSON object; not changed (add {what} by hand)",
                path.display()
            ))),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Map::new()),
        Err(e) => Err(std::io::Error::new(
            e.kind(),
            format!("cannot read {}: {e}", path.display()),
        )),
    }
}

/// Write a settings object atomically; a command's sandbox check leaves the file alone.
fn write_object(dir: &Path, path: &Path, root: Map<String, Value>) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    skiff_tools::protected::record_own_write(dir);
    let text = serde_json::to_string_pretty(&Value::Object(root))?;
    let tmp = dir.join(format!(
        ".{}.tmp",
        path.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("settings")
    ));
    std::fs::write(&tmp, format!("{text}\n"))?;
    std::fs::rename(&tmp, path)?;
    Ok(path.to_path_buf())
}

/// Add `rule` to `permissions.<list>` (`allow`, `deny` or `ask`) of
/// `<cwd>/.skiff/settings.local.json`, keeping everything else in the file.
pub fn persist_rule(cwd: &Path, list: &str, rule: &str) -> std::io::Result<PathBuf> {
    save_rule(&cwd.join(".skiff"), "settings.local.json", list, rule)
}

/// Set `permissions.defaultMode` of a settings file.
pub fn persist_default_mode(dir: &Path, file: &str, mode: &str) -> std::io::Result<PathBuf> {
    let path = dir.join(file);
    let mut root = read_object(&path, &format!("permissions.defaultMode {mode:?}"))?;
    let mut permissions = match root.remove("permissions") {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    permissions.insert("defaultMode".into(), Value::String(mode.to_owned()));
    root.insert("permissions".into(), Value::Object(permissions));
    write_object(dir, &path, root)
}

/// Take `rule` out of `permissions.<list>` of a settings file (nothing when it is not there).
pub fn unpersist_rule(dir: &Path, file: &str, list: &str, rule: &str) -> std::io::Result<PathBuf> {
    let path = dir.join(file);
    let mut root = read_object(&path, &format!("the removal of {rule:?}"))?;
    if let Some(Value::Object(permissions)) = root.get_mut("permissions")
        && let Some(Value::Array(rules)) = permissions.get_mut(list)
    {
        rules.retain(|r| r.as_str() != Some(rule));
    }
    write_object(dir, &path, root)
}

/// The session's rules, with changes saved in skiff's settings files: `localSettings` in
/// `<cwd>/.skiff/settings.local.json`, `projectSettings` in `<cwd>/.skiff/settings.json`,
/// `userSettings` in `~/.skiff/settings.json` (skiff reads them beside Claude Code's).
#[derive(Debug, Clone)]
pub struct SettingsStore {
    rules: SessionRules,
    cwd: PathBuf,
    home: Option<PathBuf>,
}

impl SettingsStore {
    /// Changes to `engine`'s rules, saved for the workspace `cwd` and the user's `home`.
    pub fn new(engine: Arc<PermissionEngine>, cwd: &Path, home: Option<PathBuf>) -> Self {
        Self {
            rules: SessionRules::new(engine),
            cwd: cwd.to_path_buf(),
            home,
        }
    }

    /// The directory and file a destination saves to.
    fn file(&self, destination: Destination) -> Option<(PathBuf, &'static str)> {
        match destination {
            Destination::LocalSettings => Some((self.cwd.join(".skiff"), "settings.local.json")),
            Destination::ProjectSettings => Some((self.cwd.join(".skiff"), "settings.json")),
            Destination::UserSettings => self
                .home
                .as_ref()
                .map(|h| (h.join(".skiff"), "settings.json")),
            Destination::Session | Destination::CliArg => None,
        }
    }
}

impl PermissionStore for SettingsStore {
    fn apply(&self, update: &PermissionUpdate) -> Result<Option<PathBuf>, String> {
        self.rules.apply_rules(update)?;
        let destination = match update {
            PermissionUpdate::AddRules { destination, .. }
            | PermissionUpdate::RemoveRules { destination, .. }
            | PermissionUpdate::SetMode { destination, .. } => *destination,
        };
        let Some((dir, file)) = self.file(destination) else {
            return Ok(None);
        };
        let saved = match update {
            PermissionUpdate::AddRules {
                rules, behavior, ..
            } => rules.iter().try_fold(dir.join(file), |_, rule| {
                save_rule(&dir, file, behavior.as_str(), rule)
            }),
            PermissionUpdate::RemoveRules {
                rules, behavior, ..
            } => rules.iter().try_fold(dir.join(file), |_, rule| {
                unpersist_rule(&dir, file, behavior.as_str(), rule)
            }),
            PermissionUpdate::SetMode { mode, .. } => {
                persist_default_mode(&dir, file, mode.as_str())
            }
        };
        saved
            .map(Some)
            .map_err(|e| format!("Applied for this session; not saved: {e}"))
    }
}

/// Add `rule` to `permissions.<list>` of a settings file.
fn save_rule(dir: &Path, file: &str, list: &str, rule: &str) -> std::io::Result<PathBuf> {
    let path = dir.join(file);
    let mut root = read_object(&path, &format!("{rule:?} to permissions.{list}"))?;
    let mut permissions = match root.remove("permissions") {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    let mut rules = match permissions.remove(list) {
        Some(Value::Array(a)) => a,
        _ => Vec::new(),
    };
    if !rules.iter().any(|r| r.as_str() == Some(rule)) {
        rules.push(Value::String(rule.to_owned()));
    }
    permissions.insert(list.to_owned(), Value::Array(rules));
    root.insert("permissions".into(), Value::Object(permissions));
    write_object(dir, &path, root)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;
    use skiff_core::PermissionMode;
    use skiff_core::permissions::{RuleKind, Workspace};

    use super::*;

    #[test]
    fn the_rule_is_added_to_the_local_settings_keeping_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".skiff")).unwrap();
        std::fs::write(
            dir.path().join(".skiff/settings.local.json"),
            r#"{"model":"x","permissions":{"allow":["Read"],"deny":["WebFetch"]}}"#,
        )
        .unwrap();
        let path = persist_allow_rule(dir.path(), "Bash(ls)").unwrap();
        persist_allow_rule(dir.path(), "Bash(ls)").unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        assert_eq!(v["model"], "x");
        assert_eq!(v["permissions"]["allow"], json!(["Read", "Bash(ls)"]));
        assert_eq!(v["permissions"]["deny"], json!(["WebFetch"]));
        std::fs::write(dir.path().join(".skiff/settings.local.json"), "not json").unwrap();
        assert!(persist_allow_rule(dir.path(), "Bash(ls)").is_err());
        assert_eq!(
            std::fs::read_to_string(dir.path().join(".skiff/settings.local.json")).unwrap(),
            "not json"
        );
    }

    #[test]
    fn network_approvals_save_allowed_domains() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let entry = |host: &str, port: u64| {
            skiff_core::permissions::network::domain_entry(
                &json!({"host": host, "port": port, "command": "curl x"}),
            )
        };
        assert_eq!(entry("registry.npmjs.org", 443), "registry.npmjs.org");
        assert_eq!(entry("localhost", 5432), "localhost:5432");
        assert_eq!(entry("::1", 80), "[::1]:80");
        // The string form of the policy survives as `mode`; other keys are kept.
        std::fs::create_dir_all(cwd.join(".claude")).unwrap();
        std::fs::write(
            cwd.join(".claude/settings.local.json"),
            r#"{"model": "x", "sandbox": {"network": "proxy"}}"#,
        )
        .unwrap();
        let path = persist_allowed_domain(cwd, "github.com").unwrap();
        persist_allowed_domain(cwd, "github.com").unwrap();
        persist_allowed_domain(cwd, "localhost:5432").unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        assert_eq!(
            v,
            json!({"model": "x", "sandbox": {"network": {"mode": "proxy",
                   "allowedDomains": ["github.com", "localhost:5432"]}}})
        );
    }

    #[test]
    fn the_store_applies_rules_and_saves_them_by_destination() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().canonicalize().unwrap();
        let home = cwd.join("home");
        let engine = Arc::new(PermissionEngine::new(
            Default::default(),
            Workspace::new(&cwd, &[]),
        ));
        let store = SettingsStore::new(Arc::clone(&engine), &cwd, Some(home.clone()));
        let add = |destination| PermissionUpdate::AddRules {
            rules: vec!["Bash(npm test:*)".into()],
            behavior: RuleKind::Allow,
            destination,
        };
        assert_eq!(store.apply(&add(Destination::Session)).unwrap(), None);
        assert_eq!(engine.rules().allow.len(), 1);
        let local = store
            .apply(&add(Destination::LocalSettings))
            .unwrap()
            .unwrap();
        assert_eq!(local, cwd.join(".skiff/settings.local.json"));
        let user = store
            .apply(&add(Destination::UserSettings))
            .unwrap()
            .unwrap();
        assert_eq!(user, home.join(".skiff/settings.json"));
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&local).unwrap()).unwrap();
        assert_eq!(v["permissions"]["allow"], json!(["Bash(npm test:*)"]));
        let removed = PermissionUpdate::RemoveRules {
            rules: vec!["Bash(npm test:*)".into()],
            behavior: RuleKind::Allow,
            destination: Destination::LocalSettings,
        };
        store.apply(&removed).unwrap();
        assert!(engine.rules().allow.is_empty());
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&local).unwrap()).unwrap();
        assert_eq!(v["permissions"]["allow"], json!([]));
        let mode = PermissionUpdate::SetMode {
            mode: PermissionMode::AcceptEdits,
            destination: Destination::ProjectSettings,
        };
        let project = store.apply(&mode).unwrap().unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(project).unwrap()).unwrap();
        assert_eq!(v["permissions"]["defaultMode"], "acceptEdits");
        // A rule that does not parse is named; nothing is saved for it.
        let bad = PermissionUpdate::AddRules {
            rules: vec!["Bash(".into()],
            behavior: RuleKind::Deny,
            destination: Destination::LocalSettings,
        };
        assert!(store.apply(&bad).unwrap_err().contains("Bash("));
    }
}
