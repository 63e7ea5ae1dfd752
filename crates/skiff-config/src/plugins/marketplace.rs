//! `.claude-plugin/marketplace.json`, as Claude Code reads it: `name`, `owner`, optional
//! `metadata` (`description`, `version`, `pluginRoot`), and `plugins`, each with a `name` and a
//! `source` — a path relative to the marketplace (`"./plugins/demo"`), `{"source": "github",
//! "repo": "owner/repo"}`, `{"source": "url", "url": "https://….git"}` or `{"source":
//! "git-subdir", "url", "path"}` (each with an optional `ref` and `sha`) — and optionally the
//! plugin's own fields (`description`, `version`, `author`, component paths), which a
//! `strict: false` entry uses instead of a `plugin.json`. One bad entry does not spoil the
//! others: it is kept with what is wrong, reported when it is listed or installed.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::manifest::{Manifest, read_json_file};
use crate::error::{ConfigError, Result};

/// Where the catalog lives in a marketplace.
pub const MARKETPLACE: &str = ".claude-plugin/marketplace.json";

/// Where a marketplace entry's plugin comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginSource {
    /// A directory of the marketplace (relative to its root, after `metadata.pluginRoot`).
    Path(String),
    /// A git repository (a GitHub `owner/repo` becomes its https URL).
    Git {
        /// The clone URL.
        url: String,
        /// A branch or tag.
        git_ref: Option<String>,
        /// The exact commit.
        sha: Option<String>,
        /// A directory of the repository holding the plugin (`git-subdir`).
        subdir: Option<String>,
    },
}

/// One plugin a marketplace lists.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Its name (`name@marketplace`).
    pub name: String,
    /// Where it comes from.
    pub source: PluginSource,
    /// `description`.
    pub description: Option<String>,
    /// `version`.
    pub version: Option<String>,
    /// `strict` (default true): the plugin's own `plugin.json` is the manifest, the entry's
    /// component fields add to it; false: the entry is the manifest.
    pub strict: bool,
    /// The entry's plugin fields as a manifest (name, version, description, author,
    /// component paths), when it has component fields.
    pub manifest: Option<Manifest>,
}

/// A marketplace, read.
#[derive(Debug, Clone)]
pub struct Marketplace {
    /// Its name (the `@marketplace` of plugin ids).
    pub name: String,
    /// `owner.name`.
    pub owner: Option<String>,
    /// `metadata.description` (or `description`).
    pub description: Option<String>,
    /// The directory holding `.claude-plugin/marketplace.json`, canonical.
    pub root: PathBuf,
    /// The plugins by name: each usable, or what is wrong with it.
    pub plugins: Vec<(String, std::result::Result<Entry, String>)>,
}

impl Marketplace {
    /// Read the marketplace whose root is `root` (the file is `root/.claude-plugin/
    /// marketplace.json`, or `file` when given). Errors name the file.
    pub fn read(root: &Path, file: Option<&Path>) -> Result<Self> {
        let root = std::fs::canonicalize(root).map_err(|e| ConfigError::read(root, e))?;
        let path = file.map_or_else(|| root.join(MARKETPLACE), Path::to_path_buf);
        if std::fs::symlink_metadata(&path).is_err() {
            return Err(ConfigError::invalid(format!(
                "{} has no {MARKETPLACE}: it is not a plugin marketplace",
                root.display()
            )));
        }
        let doc = read_json_file(&path, &root)?;
        Self::parse(&doc, &root, &path.display().to_string())
    }

    /// Check a marketplace document of the marketplace at `root`; `file` names it in errors.
    pub fn parse(doc: &Value, root: &Path, file: &str) -> Result<Self> {
        let bad = |what: &str| ConfigError::invalid(format!("{file}: {what}"));
        let Value::Object(map) = doc else {
            return Err(bad("the top level must be a JSON object"));
        };
        let name = match map.get("name") {
            Some(Value::String(n)) => n.trim().to_owned(),
            _ => return Err(bad("`name` (a string) is required")),
        };
        super::check_name(&name, "marketplace").map_err(|e| bad(&e.to_string()))?;
        let owner = match map.get("owner") {
            Some(Value::Object(o)) => o.get("name").and_then(Value::as_str).map(str::to_owned),
            Some(Value::String(s)) => Some(s.clone()),
            _ => None,
        };
        let metadata = map.get("metadata");
        let description = metadata
            .and_then(|m| m.get("description"))
            .or_else(|| map.get("description"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let plugin_root = match metadata.and_then(|m| m.get("pluginRoot")) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err(bad("`metadata.pluginRoot` must be a string")),
        };
        let Some(Value::Array(list)) = map.get("plugins") else {
            return Err(bad("`plugins` (an array of plugin entries) is required"));
        };
        let mut plugins: Vec<(String, std::result::Result<Entry, String>)> = Vec::new();
        for (i, item) in list.iter().enumerate() {
            let entry_name = item
                .get("name")
                .and_then(Value::as_str)
                .map_or_else(|| format!("#{}", i + 1), str::to_owned);
            let mut parsed = parse_entry(item, plugin_root.as_deref());
            if plugins.iter().any(|(n, _)| *n == entry_name) {
                parsed = Err(format!("the marketplace lists {entry_name:?} twice"));
            }
            plugins.push((entry_name, parsed));
        }
        Ok(Self {
            name,
            owner,
            description,
            root: root.to_path_buf(),
            plugins,
        })
    }

    /// The entry called `name`: usable, or an error saying why not (or which names exist).
    pub fn entry(&self, name: &str) -> Result<&Entry> {
        match self.plugins.iter().rev().find(|(n, _)| n == name) {
            Some((_, Ok(e))) => Ok(e),
            Some((_, Err(why))) => Err(ConfigError::invalid(format!(
                "plugin {name:?} of marketplace {:?} cannot be installed: {why}",
                self.name
            ))),
            None => {
                let names: Vec<&str> = self.plugins.iter().map(|(n, _)| n.as_str()).collect();
                Err(ConfigError::usage(format!(
                    "marketplace {:?} has no plugin {name:?}; it has: {}",
                    self.name,
                    if names.is_empty() {
                        "none".to_owned()
                    } else {
                        names.join(", ")
                    }
                )))
            }
        }
    }
}

/// One `plugins` item.
fn parse_entry(item: &Value, plugin_root: Option<&str>) -> std::result::Result<Entry, String> {
    let Value::Object(map) = item else {
        return Err("an entry must be a JSON object with \"name\" and \"source\"".into());
    };
    let name = map
        .get("name")
        .and_then(Value::as_str)
        .ok_or("an entry needs a \"name\"")?
        .trim()
        .to_owned();
    super::check_name(&name, "plugin").map_err(|e| e.to_string())?;
    let source = match map.get("source") {
        Some(Value::String(path)) => PluginSource::Path(relative_source(path, plugin_root)),
        Some(Value::Object(s)) => object_source(s)?,
        Some(_) => return Err("`source` must be a path or an object".into()),
        None => return Err("an entry needs a \"source\"".into()),
    };
    let strict = match map.get("strict") {
        None | Some(Value::Null) => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("`strict` must be true or false".into()),
    };
    let text = |k: &str| map.get(k).and_then(Value::as_str).map(str::to_owned);
    let has_components = ["commands", "agents", "skills", "hooks", "mcpServers"]
        .iter()
        .any(|k| map.get(*k).is_some_and(|v| !v.is_null()));
    let manifest = if has_components || !strict {
        let mut doc = serde_json::Map::new();
        for (k, v) in map {
            if !matches!(k.as_str(), "source" | "strict" | "category" | "tags") {
                doc.insert(k.clone(), v.clone());
            }
        }
        Some(
            Manifest::parse(&Value::Object(doc), "the marketplace entry")
                .map_err(|e| e.to_string())?,
        )
    } else {
        None
    };
    Ok(Entry {
        name,
        source,
        description: text("description"),
        version: text("version"),
        strict,
        manifest,
    })
}

/// A path source, with `metadata.pluginRoot` in front of a bare name.
fn relative_source(path: &str, plugin_root: Option<&str>) -> String {
    match plugin_root {
        Some(base) if !path.starts_with("./") && !path.starts_with('/') => {
            format!("{}/{path}", base.trim_end_matches('/'))
        }
        _ => path.to_owned(),
    }
}

fn object_source(s: &serde_json::Map<String, Value>) -> std::result::Result<PluginSource, String> {
    let field = |k: &str| -> std::result::Result<Option<String>, String> {
        match s.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(v)) if !v.trim().is_empty() => Ok(Some(v.trim().to_owned())),
            Some(_) => Err(format!("`source.{k}` must be a non-empty string")),
        }
    };
    let git_ref = field("ref")?;
    let sha = field("sha")?;
    if let Some(sha) = &sha
        && !(sha.len() == 40 && sha.chars().all(|c| c.is_ascii_hexdigit()))
    {
        return Err(format!(
            "`source.sha` {sha:?} is not a full 40-character commit id"
        ));
    }
    let kind = field("source")?.ok_or("`source.source` is required (github, url, git-subdir)")?;
    let required =
        |k: &str| field(k)?.ok_or(format!("`source.{k}` is required for a {kind} source"));
    match kind.as_str() {
        "github" => {
            let repo = required("repo")?;
            if !super::source::is_github_repo(&repo) {
                return Err(format!("`source.repo` {repo:?} is not owner/repo"));
            }
            Ok(PluginSource::Git {
                url: super::source::github_url(&repo),
                git_ref,
                sha,
                subdir: None,
            })
        }
        "url" | "git" => Ok(PluginSource::Git {
            url: required("url")?,
            git_ref,
            sha,
            subdir: None,
        }),
        "git-subdir" => Ok(PluginSource::Git {
            url: required("url")?,
            git_ref,
            sha,
            subdir: Some(required("path")?),
        }),
        other => Err(format!(
            "plugin sources of type {other:?} are not supported (only a relative path, github, \
             url and git-subdir)"
        )),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn parse(doc: Value) -> Result<Marketplace> {
        Marketplace::parse(&doc, Path::new("/m"), "marketplace.json")
    }

    #[test]
    fn entries_of_every_source_kind() {
        let sha = "a".repeat(40);
        let m = parse(json!({
            "name": "team", "owner": {"name": "Team"},
            "metadata": {"description": "Tools", "pluginRoot": "./plugins"},
            "plugins": [
                {"name": "local", "source": "./plugins/local", "description": "L"},
                {"name": "bare", "source": "bare"},
                {"name": "gh", "source": {"source": "github", "repo": "o/r", "ref": "v1"}},
                {"name": "git", "source": {"source": "url", "url": "file:///r.git", "sha": sha}},
                {"name": "sub", "source": {"source": "git-subdir", "url": "/r.git", "path": "p/x"}},
                {"name": "loose", "source": "./plugins/loose", "strict": false,
                 "commands": ["./c.md"], "version": "2.0.0"},
                {"name": "npm", "source": {"source": "npm", "package": "x"}},
                {"name": "../evil", "source": "./x"},
                {"source": "./nameless"},
                {"name": "gh", "source": "./again"}
            ]
        }))
        .unwrap();
        assert_eq!(
            (m.name.as_str(), m.owner.as_deref()),
            ("team", Some("Team"))
        );
        assert_eq!(m.description.as_deref(), Some("Tools"));
        let e = m.entry("local").unwrap();
        assert_eq!(e.source, PluginSource::Path("./plugins/local".into()));
        assert!(e.strict && e.manifest.is_none());
        assert_eq!(
            m.entry("bare").unwrap().source,
            PluginSource::Path("./plugins/bare".into())
        );
        let Err(e) = m.entry("gh") else { panic!() };
        assert!(e.to_string().contains("twice"), "{e}");
        assert_eq!(
            m.plugins[2].1.as_ref().unwrap().source,
            PluginSource::Git {
                url: "https://github.com/o/r.git".into(),
                git_ref: Some("v1".into()),
                sha: None,
                subdir: None
            }
        );
        assert!(matches!(
            &m.entry("git").unwrap().source,
            PluginSource::Git { sha: Some(s), .. } if *s == sha
        ));
        assert!(matches!(
            &m.entry("sub").unwrap().source,
            PluginSource::Git { subdir: Some(p), .. } if p == "p/x"
        ));
        let loose = m.entry("loose").unwrap();
        assert!(!loose.strict);
        assert_eq!(loose.manifest.as_ref().unwrap().commands, ["./c.md"]);
        assert!(
            m.entry("npm")
                .unwrap_err()
                .to_string()
                .contains("not supported")
        );
        assert!(
            m.entry("../evil")
                .unwrap_err()
                .to_string()
                .contains("not valid")
        );
        assert!(
            m.entry("#9")
                .unwrap_err()
                .to_string()
                .contains("needs a \"name\"")
        );
        let missing = m.entry("nope").unwrap_err();
        assert!(missing.is_usage() && missing.to_string().contains("it has: local, bare"));
    }

    #[test]
    fn bad_catalogs_are_errors() {
        let e = |doc: Value| parse(doc).unwrap_err().to_string();
        assert!(e(json!([])).contains("top level"));
        assert!(e(json!({"plugins": []})).contains("`name`"));
        assert!(e(json!({"name": "a/b", "plugins": []})).contains("not valid"));
        assert!(e(json!({"name": "a"})).contains("`plugins`"));
        assert!(
            e(json!({"name": "a", "plugins": [], "metadata": {"pluginRoot": 1}}))
                .contains("pluginRoot")
        );
        let m = parse(json!({"name": "a", "plugins": [
            {"name": "x", "source": {"source": "url", "url": "u", "sha": "abc"}}]}))
        .unwrap();
        assert!(
            m.entry("x")
                .unwrap_err()
                .to_string()
                .contains("40-character")
        );
    }
}
