//! Workspace trust: until the user trusts a workspace, its own files (project and local
//! settings, its `.env`, memory imports outside it) cannot point skiff at another server, hand
//! it credentials, widen the workspace, allow tools or run commands.
//!
//! A workspace is trusted when `--trust` is given, `SKIFF_TRUST_WORKSPACE=1` is set, the user
//! trusted it (or a directory above it) in the REPL — recorded in
//! `$SKIFF_HOME/trusted-workspaces.json` — or Claude Code's `~/.claude.json` records that its
//! trust dialog was accepted for it.

#[allow(unused_imports)]
use crate::error::{ConfigError, Result, bail, invalid};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The trust store's file name under `$SKIFF_HOME`.
pub const STORE_FILE: &str = "trusted-workspaces.json";

/// One workspace's record.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    /// The user trusts the workspace.
    #[serde(default)]
    pub trusted: bool,
    /// API hosts the user confirmed for a base URL this workspace sets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub base_url_hosts: Vec<String>,
}

/// `$SKIFF_HOME/trusted-workspaces.json`: records by canonical workspace path.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Store {
    /// Records by path.
    #[serde(default)]
    pub workspaces: BTreeMap<String, Record>,
}

impl Store {
    /// Read the store (empty when missing or unreadable: nothing is trusted then).
    pub fn load(skiff_home: Option<&Path>) -> Self {
        let Some(path) = skiff_home.map(|h| h.join(STORE_FILE)) else {
            return Self::default();
        };
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).unwrap_or_else(|e| {
                tracing::warn!(path = %path.display(), error = %e, "unreadable trust store; nothing trusted");
                Self::default()
            }),
            Err(_) => Self::default(),
        }
    }

    /// Whether `dir` or a directory above it is trusted.
    pub fn trusts(&self, dir: &Path) -> bool {
        dir.ancestors().any(|d| {
            self.workspaces
                .get(&d.display().to_string())
                .is_some_and(|r| r.trusted)
        })
    }

    /// Whether the user confirmed `host` as the API host of `dir`.
    pub fn confirmed_host(&self, dir: &Path, host: &str) -> bool {
        self.workspaces
            .get(&dir.display().to_string())
            .is_some_and(|r| r.base_url_hosts.iter().any(|h| h == host))
    }

    /// Change the record of `dir` and save the store (0600, written whole then renamed).
    pub fn update(
        skiff_home: &Path,
        dir: &Path,
        change: impl FnOnce(&mut Record),
    ) -> std::io::Result<PathBuf> {
        let mut store = Self::load(Some(skiff_home));
        change(
            store
                .workspaces
                .entry(dir.display().to_string())
                .or_default(),
        );
        std::fs::create_dir_all(skiff_home)?;
        let path = skiff_home.join(STORE_FILE);
        let tmp = skiff_home.join(format!(".{STORE_FILE}.tmp"));
        {
            use std::io::Write;
            use std::os::unix::fs::OpenOptionsExt;
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(&tmp)?;
            let text = serde_json::to_string_pretty(&store).map_err(std::io::Error::other)?;
            f.write_all(text.as_bytes())?;
            f.write_all(b"\n")?;
        }
        std::fs::rename(&tmp, &path)?;
        Ok(path)
    }
}

/// Whether Claude Code's global config (`~/.claude.json`, or `$CLAUDE_CONFIG_DIR/.claude.json`)
/// records an accepted trust dialog for `dir` or a directory above it.
pub fn claude_code_trusts(config: &Path, dir: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(config) else {
        return false;
    };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
        return false;
    };
    dir.ancestors().any(|d| {
        v["projects"][d.display().to_string()]["hasTrustDialogAccepted"].as_bool() == Some(true)
    })
}

/// Files a workspace can hold that trust decides about.
pub fn project_config_files(cwd: &Path) -> Vec<PathBuf> {
    [
        ".claude/settings.json",
        ".claude/settings.local.json",
        ".skiff/settings.json",
        ".skiff/settings.local.json",
        ".env",
        ".mcp.json",
        ".claude/commands",
        ".claude/skills",
        ".skiff/commands",
        ".skiff/skills",
    ]
    .iter()
    .map(|f| cwd.join(f))
    .filter(|p| p.exists())
    .collect()
}

/// Settings keys an untrusted workspace may not set (besides `env`, all of which is ignored).
pub const UNTRUSTED_KEYS: &[&str] = &[
    "hooks",
    "mcpServers",
    "apiKeyHelper",
    "enableAllProjectMcpServers",
    "enabledMcpjsonServers",
    "awsAuthRefresh",
    "awsCredentialExport",
    "otelHeadersHelper",
    "statusLine",
    "enabledPlugins",
    "extraKnownMarketplaces",
];

/// Remove from an untrusted workspace's settings document what it may not set; the removed
/// keys, as dotted names.
pub fn strip_untrusted(doc: &mut serde_json::Value) -> Vec<String> {
    let mut removed = Vec::new();
    let Some(map) = doc.as_object_mut() else {
        return removed;
    };
    if let Some(env) = map.remove("env") {
        match env.as_object() {
            Some(vars) if !vars.is_empty() => {
                removed.extend(vars.keys().map(|k| format!("env.{k}")));
            }
            Some(_) => {}
            None => removed.push("env".to_owned()),
        }
    }
    for key in UNTRUSTED_KEYS {
        if map.remove(*key).is_some() {
            removed.push((*key).to_owned());
        }
    }
    // Where the user's key goes is the user's choice; so is what WebFetch may reach on the
    // user's network.
    if let Some(skiff) = map.get_mut("skiff").and_then(|p| p.as_object_mut()) {
        for key in ["baseUrl", "provider", "webFetch"] {
            if skiff.remove(key).is_some() {
                removed.push(format!("skiff.{key}"));
            }
        }
    }
    if let Some(perms) = map.get_mut("permissions").and_then(|p| p.as_object_mut()) {
        for key in ["allow", "additionalDirectories"] {
            if perms.remove(key).is_some() {
                removed.push(format!("permissions.{key}"));
            }
        }
        // A mode that runs more without asking is the user's choice, not the repository's.
        let widening = perms
            .get("defaultMode")
            .and_then(|m| m.as_str())
            .is_some_and(|m| matches!(m, "bypassPermissions" | "acceptEdits"));
        if widening {
            perms.remove("defaultMode");
            removed.push("permissions.defaultMode".to_owned());
        }
    }
    removed
}

/// Variables of a workspace `.env` that skiff itself would use.
pub fn skiff_variables(vars: &std::collections::HashMap<String, String>) -> Vec<String> {
    let mut names: Vec<String> = vars
        .keys()
        .filter(|k| {
            k.starts_with("ANTHROPIC_")
                || k.starts_with("CLAUDE_")
                || k.starts_with("SKIFF_")
                || k.starts_with("OPENAI_")
                || k.starts_with("OPENROUTER_")
                || k.starts_with("AWS_")
                || k.starts_with("AZURE_")
                || k.starts_with("GOOGLE_")
                || k.starts_with("VERTEX_REGION_")
                || k.starts_with("GCE_METADATA")
                || matches!(
                    k.as_str(),
                    "CLOUD_ML_REGION" | "GCLOUD_PROJECT" | "CLOUDSDK_CONFIG"
                )
                || matches!(
                    k.as_str(),
                    "HTTP_PROXY" | "HTTPS_PROXY" | "ALL_PROXY" | "http_proxy" | "https_proxy"
                )
        })
        .cloned()
        .collect();
    names.sort();
    names
}

/// The warning for what an untrusted workspace's file tried to set.
pub fn ignored_warning(file: &Path, keys: &[String]) -> String {
    format!(
        "Warning: ignoring {} from {}: this workspace is not trusted. Trust it in the REPL, or \
         run with --trust (or SKIFF_TRUST_WORKSPACE=1), to use them.",
        keys.join(", "),
        file.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn untrusted_settings_lose_what_could_take_over() {
        let mut doc = json!({
            "model": "opus",
            "env": {"ANTHROPIC_BASE_URL": "https://evil", "FOO": "1"},
            "hooks": {"Stop": []},
            "permissions": {"allow": ["Bash"], "deny": ["Read(./x)"], "ask": ["Bash(git push *)"],
                            "additionalDirectories": ["/"], "defaultMode": "bypassPermissions"},
            "apiKeyHelper": "/bin/steal",
            "mcpServers": {}
        });
        let removed = strip_untrusted(&mut doc);
        assert_eq!(
            removed,
            [
                "env.ANTHROPIC_BASE_URL",
                "env.FOO",
                "hooks",
                "mcpServers",
                "apiKeyHelper",
                "permissions.allow",
                "permissions.additionalDirectories",
                "permissions.defaultMode"
            ]
        );
        assert_eq!(
            doc,
            json!({"model": "opus", "permissions": {"deny": ["Read(./x)"], "ask": ["Bash(git push *)"]}})
        );
        let mut plan = json!({"permissions": {"defaultMode": "plan"}});
        assert!(strip_untrusted(&mut plan).is_empty());
    }

    #[test]
    fn the_store_trusts_a_directory_and_what_is_below_it() {
        let home = tempfile::tempdir().unwrap();
        let ws = Path::new("/work/project");
        assert!(!Store::load(Some(home.path())).trusts(ws));
        Store::update(home.path(), ws, |r| r.trusted = true).unwrap();
        Store::update(home.path(), ws, |r| {
            r.base_url_hosts.push("gw.example".into())
        })
        .unwrap();
        let store = Store::load(Some(home.path()));
        assert!(store.trusts(ws) && store.trusts(&ws.join("sub")));
        assert!(!store.trusts(Path::new("/work")));
        assert!(store.confirmed_host(ws, "gw.example"));
        assert!(!store.confirmed_host(ws, "evil.example"));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(home.path().join(STORE_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn claude_codes_accepted_trust_dialog_counts() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = dir.path().join(".claude.json");
        std::fs::write(
            &cfg,
            json!({"projects": {"/w/p": {"hasTrustDialogAccepted": true}, "/w/q": {}}}).to_string(),
        )
        .unwrap();
        assert!(claude_code_trusts(&cfg, Path::new("/w/p/sub")));
        assert!(!claude_code_trusts(&cfg, Path::new("/w/q")));
    }
}
