//! `.claude-plugin/plugin.json`, as Claude Code reads it: `name` (required when the file
//! exists), `version`, `description`, `author` (an object with `name`, or a string), and the
//! component fields — `commands`, `agents`, `skills` (a path or a list of paths), `hooks` and
//! `mcpServers` (a path, a list of paths, or the configuration inline). Component paths are
//! relative to the plugin's directory (`./commands/extra`); they add to the default folders.
//! The file is optional: without it the plugin is named by its marketplace entry (or its
//! directory) and uses the default folders.

use std::path::Path;

use serde_json::{Map, Value};

use crate::error::{ConfigError, Result};

/// Where the manifest lives in a plugin.
pub const MANIFEST: &str = ".claude-plugin/plugin.json";
/// The largest JSON file of a plugin or marketplace read.
pub const MAX_JSON_BYTES: u64 = 1024 * 1024;

/// Where a component comes from: a path in the plugin (`./hooks/extra.json`) or the
/// configuration written inline in the manifest.
#[derive(Debug, Clone, PartialEq)]
pub enum Spec {
    /// A path relative to the plugin's directory.
    Path(String),
    /// The configuration itself.
    Inline(Value),
}

/// A plugin's manifest.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Manifest {
    /// The plugin's name: its commands are `/<name>:<command>`.
    pub name: String,
    /// `version`.
    pub version: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// `author.name` (or the string `author`).
    pub author: Option<String>,
    /// Extra command directories and files.
    pub commands: Vec<String>,
    /// Extra agent directories and files.
    pub agents: Vec<String>,
    /// Extra skill directories.
    pub skills: Vec<String>,
    /// Hook configurations besides `hooks/hooks.json`.
    pub hooks: Vec<Spec>,
    /// MCP server configurations besides `.mcp.json`.
    pub mcp_servers: Vec<Spec>,
    /// Fields of Claude Code's that skiff does not act on (`lspServers`, `outputStyles`, …).
    pub unsupported: Vec<String>,
}

/// Claude Code fields skiff knows and leaves alone.
const METADATA: &[&str] = &[
    "$schema",
    "homepage",
    "repository",
    "license",
    "keywords",
    "category",
    "tags",
    "strict",
    "source",
];

impl Manifest {
    /// A manifest of `name` alone (a plugin without `plugin.json`).
    pub fn named(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            ..Self::default()
        }
    }

    /// Read `<root>/.claude-plugin/plugin.json`; without one, the plugin is `fallback_name`.
    /// Errors name the file and say what is wrong.
    pub fn read(root: &Path, fallback_name: &str) -> Result<Self> {
        let path = root.join(MANIFEST);
        match std::fs::symlink_metadata(&path) {
            Err(e) if crate::settings::is_absent(&e) => return Ok(Self::named(fallback_name)),
            Err(e) => return Err(ConfigError::read(&path, e)),
            Ok(_) => {}
        }
        let doc = read_json_file(&path, root)?;
        Self::parse(&doc, &path.display().to_string())
    }

    /// Check a manifest document; `file` names it in errors.
    pub fn parse(doc: &Value, file: &str) -> Result<Self> {
        let Value::Object(map) = doc else {
            return Err(bad(file, "the top level must be a JSON object"));
        };
        let name = match map.get("name") {
            Some(Value::String(n)) => n.trim().to_owned(),
            Some(_) => return Err(bad(file, "`name` must be a string")),
            None => return Err(bad(file, "`name` is required")),
        };
        super::check_name(&name, "plugin").map_err(|e| bad(file, &e.to_string()))?;
        let mut manifest = Self::named(&name);
        for (key, value) in map {
            if value.is_null() {
                continue;
            }
            match key.as_str() {
                "name" => {}
                "version" => manifest.version = Some(text(value, file, key)?),
                "description" => manifest.description = Some(text(value, file, key)?),
                "author" => manifest.author = author(value, file)?,
                "commands" => manifest.commands = paths(value, file, key)?,
                "agents" => manifest.agents = paths(value, file, key)?,
                "skills" => manifest.skills = paths(value, file, key)?,
                "hooks" => manifest.hooks = specs(value, file, key)?,
                "mcpServers" => manifest.mcp_servers = specs(value, file, key)?,
                k if METADATA.contains(&k) => {}
                k => manifest.unsupported.push(k.to_owned()),
            }
        }
        Ok(manifest)
    }

    /// The manifest as `plugin.json` holds it (what `install` writes for a marketplace entry
    /// that carries the plugin's fields).
    pub fn to_json(&self) -> Value {
        let mut map = Map::new();
        map.insert("name".into(), self.name.clone().into());
        for (key, value) in [
            ("version", &self.version),
            ("description", &self.description),
        ] {
            if let Some(v) = value {
                map.insert(key.into(), v.clone().into());
            }
        }
        if let Some(a) = &self.author {
            map.insert("author".into(), serde_json::json!({ "name": a }));
        }
        for (key, list) in [
            ("commands", &self.commands),
            ("agents", &self.agents),
            ("skills", &self.skills),
        ] {
            if !list.is_empty() {
                map.insert(key.into(), list.clone().into());
            }
        }
        for (key, list) in [("hooks", &self.hooks), ("mcpServers", &self.mcp_servers)] {
            if !list.is_empty() {
                let items: Vec<Value> = list
                    .iter()
                    .map(|s| match s {
                        Spec::Path(p) => Value::String(p.clone()),
                        Spec::Inline(v) => v.clone(),
                    })
                    .collect();
                map.insert(key.into(), Value::Array(items));
            }
        }
        Value::Object(map)
    }
}

fn bad(file: &str, what: &str) -> ConfigError {
    ConfigError::invalid(format!("{file}: {what}"))
}

fn text(value: &Value, file: &str, key: &str) -> Result<String> {
    value
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| bad(file, &format!("`{key}` must be a string")))
}

fn author(value: &Value, file: &str) -> Result<Option<String>> {
    match value {
        Value::String(s) => Ok(Some(s.clone())),
        Value::Object(m) => match m.get("name") {
            Some(Value::String(n)) => Ok(Some(n.clone())),
            None | Some(Value::Null) => Ok(None),
            Some(_) => Err(bad(file, "`author.name` must be a string")),
        },
        _ => Err(bad(
            file,
            "`author` must be an object like {\"name\": \"…\"} or a string",
        )),
    }
}

fn paths(value: &Value, file: &str, key: &str) -> Result<Vec<String>> {
    let wrong = || bad(file, &format!("`{key}` must be a path or a list of paths"));
    match value {
        Value::String(s) => Ok(vec![s.clone()]),
        Value::Array(items) => items
            .iter()
            .map(|i| i.as_str().map(str::to_owned).ok_or_else(wrong))
            .collect(),
        _ => Err(wrong()),
    }
}

fn specs(value: &Value, file: &str, key: &str) -> Result<Vec<Spec>> {
    let wrong = || {
        bad(
            file,
            &format!("`{key}` must be a path, a list of paths, or the configuration as an object"),
        )
    };
    let one = |v: &Value| match v {
        Value::String(s) => Ok(Spec::Path(s.clone())),
        Value::Object(_) => Ok(Spec::Inline(v.clone())),
        _ => Err(wrong()),
    };
    match value {
        Value::Array(items) => items.iter().map(one).collect(),
        v => Ok(vec![one(v)?]),
    }
}

/// Read a JSON file of a plugin or marketplace whose directory is `root`: a regular file
/// inside `root` (not through a symlink that leaves it), at most [`MAX_JSON_BYTES`], valid
/// JSON. Errors name the file (and line and column for bad JSON).
pub fn read_json_file(path: &Path, root: &Path) -> Result<Value> {
    let real = std::fs::canonicalize(path).map_err(|e| ConfigError::read(path, e))?;
    let real_root = std::fs::canonicalize(root).map_err(|e| ConfigError::read(root, e))?;
    if !real.starts_with(&real_root) {
        return Err(ConfigError::invalid(format!(
            "{}: it is a symlink to a file outside {}",
            path.display(),
            root.display()
        )));
    }
    let meta = std::fs::metadata(&real).map_err(|e| ConfigError::read(path, e))?;
    if !meta.is_file() {
        return Err(ConfigError::invalid(format!(
            "{}: not a file",
            path.display()
        )));
    }
    if meta.len() > MAX_JSON_BYTES {
        return Err(ConfigError::invalid(format!(
            "{}: {} bytes is too large (at most {} KiB)",
            path.display(),
            meta.len(),
            MAX_JSON_BYTES / 1024
        )));
    }
    let text = std::fs::read_to_string(&real).map_err(|e| ConfigError::read(path, e))?;
    serde_json::from_str(&text).map_err(|e| {
        let msg = e.to_string();
        let msg = msg.split(" at line ").next().unwrap_or(&msg).to_owned();
        ConfigError::invalid(format!(
            "{}: invalid JSON at line {}, column {}: {msg}",
            path.display(),
            e.line(),
            e.column()
        ))
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn the_fields_claude_code_documents_parse() {
        let m = Manifest::parse(
            &json!({
                "name": "demo", "version": "1.2.0", "description": "d",
                "author": {"name": "A", "email": "a@example.com"},
                "homepage": "https://example.com", "keywords": ["k"],
                "commands": ["./extra/cmd.md", "./more"], "agents": "./agents2",
                "skills": "./sk", "hooks": "./config/hooks.json",
                "mcpServers": {"s": {"command": "x"}}, "lspServers": "./.lsp.json"
            }),
            "plugin.json",
        )
        .unwrap();
        assert_eq!(m.name, "demo");
        assert_eq!(m.version.as_deref(), Some("1.2.0"));
        assert_eq!(m.author.as_deref(), Some("A"));
        assert_eq!(m.commands, ["./extra/cmd.md", "./more"]);
        assert_eq!(m.agents, ["./agents2"]);
        assert_eq!(m.hooks, [Spec::Path("./config/hooks.json".into())]);
        assert!(matches!(&m.mcp_servers[..], [Spec::Inline(_)]));
        assert_eq!(m.unsupported, ["lspServers"]);
        let again = Manifest::parse(&m.to_json(), "x").unwrap();
        assert_eq!(
            (again.commands, again.hooks, again.mcp_servers),
            (m.commands, m.hooks, m.mcp_servers)
        );
    }

    #[test]
    fn bad_manifests_say_what_is_wrong() {
        let err = |doc: Value| Manifest::parse(&doc, "p.json").unwrap_err().to_string();
        assert!(err(json!([])).contains("top level"));
        assert!(err(json!({})).contains("`name` is required"));
        assert!(err(json!({"name": "../x"})).contains("not valid"));
        assert!(err(json!({"name": "a", "commands": 3})).contains("`commands` must be a path"));
        assert!(err(json!({"name": "a", "hooks": [1]})).contains("`hooks` must be"));
        assert!(err(json!({"name": "a", "author": 1})).contains("`author`"));
    }

    #[test]
    fn json_files_are_checked_before_they_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("p");
        std::fs::create_dir_all(root.join(".claude-plugin")).unwrap();
        std::fs::write(root.join(MANIFEST), "{\"name\": \"p\",}").unwrap();
        let e = Manifest::read(&root, "p").unwrap_err().to_string();
        assert!(e.contains("invalid JSON at line 1"), "{e}");
        std::fs::write(dir.path().join("outside.json"), "{\"name\": \"p\"}").unwrap();
        std::fs::remove_file(root.join(MANIFEST)).unwrap();
        std::os::unix::fs::symlink(dir.path().join("outside.json"), root.join(MANIFEST)).unwrap();
        let e = Manifest::read(&root, "p").unwrap_err().to_string();
        assert!(e.contains("outside"), "{e}");
        std::fs::remove_file(root.join(MANIFEST)).unwrap();
        assert_eq!(Manifest::read(&root, "fallback").unwrap().name, "fallback");
    }
}
