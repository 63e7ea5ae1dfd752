//! The files `skiff mcp add` and `remove` edit, per scope, as Claude Code lays them out:
//! local → `~/.claude.json` `projects["<workspace>"].mcpServers`, project →
//! `<workspace>/.mcp.json`, user → `~/.claude.json` `mcpServers`. Read whole, one key changed,
//! written atomically; a file that is not valid JSON is never overwritten.

#[allow(unused_imports)]
use crate::error::{ConfigError, Result, bail, invalid};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::json_doc::Json;
use crate::mcp::config::{self, MCP_JSON, project_key, read_doc};

/// Where `mcp add` writes a server (as `claude mcp add --scope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpScope {
    /// You, in this workspace: `~/.claude.json` `projects[<workspace>].mcpServers`.
    Local,
    /// Everyone working in this workspace: `<workspace>/.mcp.json`.
    Project,
    /// You, in every workspace: `~/.claude.json` `mcpServers`.
    User,
}

/// The file of a scope and where in it the servers are.
pub struct Target {
    /// The scope.
    pub scope: McpScope,
    /// The file.
    pub path: PathBuf,
    /// The `projects` key (local scope).
    pub project: Option<String>,
}

impl Target {
    /// The target of `scope` for the workspace `cwd` (`env` finds `~/.claude.json`).
    pub fn new(scope: McpScope, cwd: &Path, env: &HashMap<String, String>) -> Result<Self> {
        Ok(match scope {
            McpScope::Project => Self {
                scope,
                path: cwd.join(MCP_JSON),
                project: None,
            },
            McpScope::User => Self {
                scope,
                path: config::claude_json(env)?,
                project: None,
            },
            McpScope::Local => Self {
                scope,
                path: config::claude_json(env)?,
                project: Some(project_key(cwd)),
            },
        })
    }

    /// `/home/u/.claude.json [project: /w]`.
    pub fn describe(&self) -> String {
        match &self.project {
            Some(p) => format!("{} [project: {p}]", self.path.display()),
            None => self.path.display().to_string(),
        }
    }

    /// The `mcpServers` object, if the file has one.
    pub fn servers<'a>(&self, doc: &'a Json) -> Option<&'a Json> {
        match &self.project {
            Some(p) => doc.get("projects")?.get(p)?.get("mcpServers"),
            None => doc.get("mcpServers"),
        }
    }

    /// The `mcpServers` object, created where missing. An error when something on the way
    /// is not an object (the file is left alone then).
    pub fn servers_mut<'a>(&self, doc: &'a mut Json) -> Result<&'a mut Json> {
        let shape = |what: &str| {
            invalid!(
                "{}: {what} is not a JSON object; fix the file first (nothing was changed)",
                self.path.display()
            )
        };
        let holder = match &self.project {
            Some(p) => doc
                .object_at("projects")
                .ok_or_else(|| shape("the top level or \"projects\""))?
                .object_at(p)
                .ok_or_else(|| shape(&format!("projects[\"{p}\"]")))?,
            None => doc,
        };
        holder
            .object_at("mcpServers")
            .ok_or_else(|| shape("the top level or \"mcpServers\""))
    }

    /// The document (`{}` when the file does not exist); invalid JSON is an error.
    pub fn read(&self) -> Result<(Json, bool)> {
        match read_doc(&self.path)
            .map_err(|e| invalid!("{e}; nothing was changed; fix the file first"))?
        {
            Some(doc) => Ok((doc, true)),
            None => Ok((Json::Object(Vec::new()), false)),
        }
    }

    /// Write the document back atomically, keeping the file's permissions (a new
    /// `~/.claude.json` is private) and its trailing newline, through a symlink.
    pub fn write(&self, doc: &Json, existed: bool) -> Result<()> {
        let mut text = doc
            .to_pretty()
            .map_err(|e| invalid!("cannot write the servers as JSON: {e}"))?;
        let old = std::fs::read(&self.path).unwrap_or_default();
        if old.ends_with(b"\n") {
            text.push('\n');
        }
        let path = if existed {
            std::fs::canonicalize(&self.path).unwrap_or_else(|_| self.path.clone())
        } else {
            self.path.clone()
        };
        if !existed && self.scope != McpScope::Project {
            // A new ~/.claude.json is private from the start (the rename keeps the mode).
            use std::os::unix::fs::OpenOptionsExt;
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)
                    .map_err(|e| ConfigError::io(format!("cannot create {}", dir.display()), e))?;
            }
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
            {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => {
                    return Err(ConfigError::io(
                        format!("cannot create {}", path.display()),
                        e,
                    ));
                }
            }
        }
        skiff_tools::atomic::write_atomic(&path, text.as_bytes())
            .map_err(|e| ConfigError::io(format!("cannot write {}", path.display()), e))?;
        Ok(())
    }
}

/// The `--scope` name of a scope.
pub fn scope_name(scope: McpScope) -> &'static str {
    match scope {
        McpScope::Local => "local",
        McpScope::Project => "project",
        McpScope::User => "user",
    }
}

/// Where `get` and `remove` looked, for their "not found" errors.
pub fn searched(cwd: &Path, env: &HashMap<String, String>) -> String {
    let mut parts = Vec::new();
    for s in [McpScope::Local, McpScope::Project, McpScope::User] {
        if let Ok(t) = Target::new(s, cwd, env) {
            parts.push(format!("{}: {}", scope_name(s), t.describe()));
        }
    }
    format!("searched {}", parts.join("; "))
}
