//! Which plugins are on: `enabledPlugins` (`{"name@marketplace": true}`) of the settings
//! scopes Claude Code uses — user (skiff's own `$SKIFF_HOME/settings.json`, so that Claude
//! Code's file does not name copies it does not have; `~/.claude/settings.json` is read too),
//! project (`.claude/settings.json`, shared with the team) and local
//! (`.claude/settings.local.json`). Later scopes win per plugin; a repository's scopes count
//! only in a trusted workspace (see [`crate::trust`]).

use std::path::{Path, PathBuf};

use crate::environment::Environment;
use crate::error::{ConfigError, Result};
use crate::json_doc::Json;

/// The settings key.
pub const KEY: &str = "enabledPlugins";

/// A settings scope `skiff plugin install|enable|disable` writes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PluginScope {
    /// You, in every workspace: `$SKIFF_HOME/settings.json`.
    User,
    /// Everyone working in this repository: `<workspace>/.claude/settings.json`.
    Project,
    /// You, in this repository: `<workspace>/.claude/settings.local.json`.
    Local,
}

impl PluginScope {
    /// `user`, `project`, `local`.
    pub fn name(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Project => "project",
            Self::Local => "local",
        }
    }

    /// The settings file of this scope.
    pub fn file(self, cwd: &Path, env: &Environment) -> Result<PathBuf> {
        match self {
            Self::User => env
                .skiff_home()
                .map(|h| h.join("settings.json"))
                .ok_or_else(|| ConfigError::invalid("neither SKIFF_HOME nor HOME is set")),
            Self::Project => Ok(cwd.join(".claude").join("settings.json")),
            Self::Local => Ok(cwd.join(".claude").join("settings.local.json")),
        }
    }
}

/// Set `enabledPlugins[id]` in the file of `scope` (`None` removes the entry), keeping the
/// rest of the file as it was. A file that is not a JSON object is left alone (an error).
/// Returns the file.
pub fn set_enabled(
    scope: PluginScope,
    cwd: &Path,
    env: &Environment,
    id: &str,
    value: Option<bool>,
) -> Result<PathBuf> {
    let path = scope.file(cwd, env)?;
    let (mut doc, existed) = match crate::mcp::config::read_doc(&path) {
        Ok(Some(d)) => (d, true),
        Ok(None) => (Json::Object(Vec::new()), false),
        Err(e) => return Err(ConfigError::invalid(format!("{e}; nothing was changed"))),
    };
    if !existed && value.is_none() {
        return Ok(path);
    }
    let not_object = || {
        ConfigError::invalid(format!(
            "{}: the top level or \"{KEY}\" is not a JSON object; fix the file first (nothing was \
             changed)",
            path.display()
        ))
    };
    let map = doc.object_at(KEY).ok_or_else(not_object)?;
    match value {
        Some(v) => map.insert(id, Json::Bool(v)),
        None => {
            map.remove(id);
        }
    }
    if value.is_none() && matches!(doc.get(KEY), Some(Json::Object(f)) if f.is_empty()) {
        doc.remove(KEY);
    }
    let mut text = doc
        .to_pretty()
        .map_err(|e| ConfigError::invalid(format!("cannot write {}: {e}", path.display())))?;
    text.push('\n');
    if let Some(dir) = path.parent() {
        skiff_tools::protected::record_own_write(dir);
    }
    let target = if existed {
        std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone())
    } else {
        path.clone()
    };
    skiff_tools::atomic::write_atomic(&target, text.as_bytes())
        .map_err(|e| ConfigError::io(format!("cannot write {}", path.display()), e))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn entries_are_set_and_removed_keeping_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let env = Environment::from_vars(
            [(
                "SKIFF_HOME".to_owned(),
                dir.path().join("h").display().to_string(),
            )]
            .into_iter()
            .collect(),
        );
        let ws = dir.path();
        std::fs::create_dir_all(ws.join(".claude")).unwrap();
        std::fs::write(ws.join(".claude/settings.json"), "{\"model\": \"opus\"}\n").unwrap();
        let p = set_enabled(PluginScope::Project, ws, &env, "a@m", Some(true)).unwrap();
        set_enabled(PluginScope::Project, ws, &env, "b@m", Some(false)).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(
            text.starts_with("{\n  \"model\": \"opus\",\n  \"enabledPlugins\""),
            "{text}"
        );
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v[KEY], serde_json::json!({"a@m": true, "b@m": false}));
        set_enabled(PluginScope::Project, ws, &env, "a@m", None).unwrap();
        set_enabled(PluginScope::Project, ws, &env, "b@m", None).unwrap();
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        assert_eq!(v, serde_json::json!({"model": "opus"}));

        let user = set_enabled(PluginScope::User, ws, &env, "a@m", Some(true)).unwrap();
        assert_eq!(user, dir.path().join("h/settings.json"));
        std::fs::write(ws.join(".claude/settings.local.json"), "[1]").unwrap();
        let e = set_enabled(PluginScope::Local, ws, &env, "a@m", Some(true)).unwrap_err();
        assert!(e.to_string().contains("nothing was changed"), "{e}");
        assert_eq!(
            std::fs::read_to_string(ws.join(".claude/settings.local.json")).unwrap(),
            "[1]"
        );
    }
}
