//! A plugin's components, found and checked: command and skill paths (for
//! [`skiff_core::commands::discover`]), agents (named `plugin-name:agent`), hooks and MCP
//! servers (`${CLAUDE_PLUGIN_ROOT}` in them is the plugin's directory). Default folders add to
//! the manifest's paths. Every path must stay inside the plugin's directory, every named file
//! must exist, every JSON file must parse: otherwise the plugin is refused whole, with an error
//! naming the file — nothing of it loads.

use std::path::{Component, Path, PathBuf};

use serde_json::{Map, Value};
use skiff_core::subagent::{AgentDefinition, load_agents_dir, parse_agent_file};

use super::manifest::{MANIFEST, Manifest, Spec, read_json_file};
use crate::error::{ConfigError, Result};

/// The variable for the plugin's directory in hooks, MCP servers and command bodies.
pub const ROOT_VAR: &str = "CLAUDE_PLUGIN_ROOT";
/// The variable for the plugin's own data directory (kept across updates).
pub const DATA_VAR: &str = "CLAUDE_PLUGIN_DATA";
/// The largest agent file read.
const MAX_AGENT_BYTES: u64 = 256 * 1024;

/// A plugin, loaded.
#[derive(Debug, Clone)]
pub struct LoadedPlugin {
    /// `name@marketplace`, or `name@inline` for `--plugin-dir`.
    pub id: String,
    /// Its directory, canonical.
    pub root: PathBuf,
    /// Its manifest (or the name alone).
    pub manifest: Manifest,
    /// Command directories and files.
    pub commands: Vec<PathBuf>,
    /// Skill directories.
    pub skills: Vec<PathBuf>,
    /// Agents, named `plugin-name:agent`.
    pub agents: Vec<AgentDefinition>,
    /// Hook matcher groups by event, `${CLAUDE_PLUGIN_ROOT}` replaced.
    pub hooks: Vec<(String, Value)>,
    /// MCP server entries by name, as written (variables are expanded when a session starts
    /// them).
    pub mcp_servers: Map<String, Value>,
    /// What is worth telling about files that were skipped (an agent file without
    /// frontmatter, …).
    pub warnings: Vec<String>,
}

impl LoadedPlugin {
    /// The plugin's name (the `plugin-name` of `/plugin-name:command`).
    pub fn name(&self) -> &str {
        &self.manifest.name
    }

    /// The variables a plugin's hooks and MCP servers get: `CLAUDE_PLUGIN_ROOT` and, when
    /// given, `CLAUDE_PLUGIN_DATA`.
    pub fn env(&self, data: Option<&Path>) -> Vec<(String, String)> {
        let mut env = vec![(ROOT_VAR.to_owned(), self.root.display().to_string())];
        if let Some(d) = data {
            env.push((DATA_VAR.to_owned(), d.display().to_string()));
        }
        env
    }
}

/// Load the plugin in `root`; without a manifest it is called `fallback_name`. `id` is what
/// it is known by (`name@marketplace`). An error refuses the whole plugin.
pub fn load_plugin(root: &Path, fallback_name: &str, id: &str) -> Result<LoadedPlugin> {
    let meta = std::fs::metadata(root).map_err(|e| {
        ConfigError::invalid(format!(
            "plugin directory {} cannot be read: {e}",
            root.display()
        ))
    })?;
    if !meta.is_dir() {
        return Err(ConfigError::invalid(format!(
            "plugin directory {} is not a directory",
            root.display()
        )));
    }
    let root = std::fs::canonicalize(root).map_err(|e| ConfigError::read(root, e))?;
    let manifest = Manifest::read(&root, fallback_name)?;
    let file = root.join(MANIFEST).display().to_string();
    let mut plugin = LoadedPlugin {
        id: id.to_owned(),
        root: root.clone(),
        manifest,
        commands: Vec::new(),
        skills: Vec::new(),
        agents: Vec::new(),
        hooks: Vec::new(),
        mcp_servers: Map::new(),
        warnings: Vec::new(),
    };
    let m = plugin.manifest.clone();
    plugin.commands = paths(&root, "commands", &m.commands, &file)?;
    plugin.skills = paths(&root, "skills", &m.skills, &file)?;
    for path in paths(&root, "agents", &m.agents, &file)? {
        load_agents(&mut plugin, &path)?;
    }
    for (doc, origin) in docs(&root, "hooks/hooks.json", &m.hooks, "hooks", &file)? {
        add_hooks(&mut plugin, &doc, &origin)?;
    }
    for (doc, origin) in docs(&root, ".mcp.json", &m.mcp_servers, "mcpServers", &file)? {
        add_servers(&mut plugin, &doc, &origin)?;
    }
    if !m.unsupported.is_empty() {
        tracing::debug!(plugin = %plugin.id, fields = ?m.unsupported, "plugin fields skiff does not use");
    }
    Ok(plugin)
}

/// A path of the manifest, inside the plugin: relative, without `..`, existing, and not
/// through a symlink that leaves the plugin. `${CLAUDE_PLUGIN_ROOT}/` in front is allowed.
pub fn resolve(root: &Path, raw: &str, field: &str, file: &str) -> Result<PathBuf> {
    let bad = |what: &str| {
        ConfigError::invalid(format!(
            "{file}: `{field}` path {raw:?} {what}; paths are relative to the plugin's directory, like \"./{field}\""
        ))
    };
    let rel = raw
        .strip_prefix("${CLAUDE_PLUGIN_ROOT}/")
        .unwrap_or(raw)
        .trim();
    if rel.is_empty() {
        return Err(bad("is empty"));
    }
    let rel_path = Path::new(rel);
    if rel_path.is_absolute() || rel.starts_with('~') {
        return Err(bad("is not relative"));
    }
    if rel_path
        .components()
        .any(|c| matches!(c, Component::ParentDir | Component::Prefix(_)))
    {
        return Err(bad("leaves the plugin's directory"));
    }
    let joined = root.join(rel_path);
    let real = match std::fs::canonicalize(&joined) {
        Ok(r) => r,
        Err(e) if crate::settings::is_absent(&e) => return Err(bad("does not exist")),
        Err(e) => return Err(bad(&format!("cannot be read ({e})"))),
    };
    if !real.starts_with(root) {
        return Err(bad("leaves the plugin's directory through a symlink"));
    }
    Ok(real)
}

/// A default location (`commands`, `hooks/hooks.json`) when it exists, checked like a path of
/// the manifest.
fn default_file(root: &Path, rel: &str) -> Result<Option<PathBuf>> {
    let joined = root.join(rel);
    if std::fs::symlink_metadata(&joined).is_err() {
        return Ok(None);
    }
    let real = std::fs::canonicalize(&joined)
        .map_err(|e| ConfigError::invalid(format!("{}: cannot be read ({e})", joined.display())))?;
    if !real.starts_with(root) {
        return Err(ConfigError::invalid(format!(
            "{}: it is a symlink leading outside the plugin's directory",
            joined.display()
        )));
    }
    Ok(Some(real))
}

/// The default folder `field` (when present) and the manifest's paths for it.
fn paths(root: &Path, field: &str, extra: &[String], file: &str) -> Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = default_file(root, field)?.into_iter().collect();
    for raw in extra {
        let p = resolve(root, raw, field, file)?;
        if !out.contains(&p) {
            out.push(p);
        }
    }
    Ok(out)
}

/// The documents of a hooks or MCP field: the default file (when present), then the
/// manifest's paths and inline values, each with where it came from (for errors).
fn docs(
    root: &Path,
    default: &str,
    specs: &[Spec],
    field: &str,
    file: &str,
) -> Result<Vec<(Value, String)>> {
    let mut files: Vec<PathBuf> = default_file(root, default)?.into_iter().collect();
    let mut out = Vec::new();
    for spec in specs {
        match spec {
            Spec::Inline(v) => out.push((v.clone(), format!("{file} (`{field}`)"))),
            Spec::Path(p) => {
                let path = resolve(root, p, field, file)?;
                if !files.contains(&path) {
                    files.push(path);
                }
            }
        }
    }
    let mut read = Vec::new();
    for path in files {
        let doc = read_json_file(&path, root)?;
        read.push((doc, path.display().to_string()));
    }
    read.extend(out);
    Ok(read)
}

/// `path`: an agents folder or one agent file.
fn load_agents(plugin: &mut LoadedPlugin, path: &Path) -> Result<()> {
    let (found, problems) = if path.is_dir() {
        load_agents_dir(path)
    } else {
        let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        if size > MAX_AGENT_BYTES {
            (
                Vec::new(),
                vec![format!(
                    "agent file {} is larger than 256 KiB; skipped",
                    path.display()
                )],
            )
        } else {
            let text = std::fs::read(path)
                .map_err(|e| ConfigError::read(path, e))
                .map(|b| String::from_utf8_lossy(&b).into_owned())?;
            match parse_agent_file(path, &text) {
                Ok(a) => (vec![a], Vec::new()),
                Err(e) => (
                    Vec::new(),
                    vec![format!("agent file {}: {e}; skipped", path.display())],
                ),
            }
        }
    };
    plugin.warnings.extend(
        problems
            .into_iter()
            .map(|w| format!("Warning: plugin {}: {w}", plugin.id)),
    );
    let root = plugin.root.display().to_string();
    for mut agent in found {
        agent.name = format!("{}:{}", plugin.manifest.name, agent.name);
        agent.prompt = agent.prompt.replace("${CLAUDE_PLUGIN_ROOT}", &root);
        match plugin.agents.iter_mut().find(|a| a.name == agent.name) {
            Some(slot) => *slot = agent,
            None => plugin.agents.push(agent),
        }
    }
    Ok(())
}

/// A hooks document: `{"hooks": {Event: [groups]}}` (as `hooks.json` has it) or
/// `{Event: [groups]}`.
fn add_hooks(plugin: &mut LoadedPlugin, doc: &Value, origin: &str) -> Result<()> {
    let events = match doc.get("hooks") {
        Some(inner @ Value::Object(_)) => inner,
        _ => doc,
    };
    let Value::Object(events) = events else {
        return Err(ConfigError::invalid(format!(
            "{origin}: hooks must be an object like {{\"hooks\": {{\"PostToolUse\": [...]}}}}"
        )));
    };
    let root = plugin.root.display().to_string();
    for (event, groups) in events {
        if event == "description" && groups.is_string() {
            continue;
        }
        let Value::Array(groups) = groups else {
            return Err(ConfigError::invalid(format!(
                "{origin}: hooks.{event} must be an array of matcher groups"
            )));
        };
        for g in groups {
            plugin.hooks.push((
                event.clone(),
                replace_in_strings(g, "${CLAUDE_PLUGIN_ROOT}", &root),
            ));
        }
    }
    Ok(())
}

/// An MCP document: `{"mcpServers": {name: entry}}` (as `.mcp.json` has it) or `{name: entry}`.
fn add_servers(plugin: &mut LoadedPlugin, doc: &Value, origin: &str) -> Result<()> {
    let servers = match doc.get("mcpServers") {
        Some(inner) => inner,
        None => doc,
    };
    let Value::Object(servers) = servers else {
        return Err(ConfigError::invalid(format!(
            "{origin}: the MCP servers must be an object like {{\"mcpServers\": {{\"name\": {{\"command\": \"...\"}}}}}}"
        )));
    };
    for (name, entry) in servers {
        if !entry.is_object() {
            return Err(ConfigError::invalid(format!(
                "{origin}: MCP server {name:?} must be an object"
            )));
        }
        if plugin
            .mcp_servers
            .insert(name.clone(), entry.clone())
            .is_some()
        {
            plugin.warnings.push(format!(
                "Warning: plugin {}: MCP server {name:?} is defined twice; {origin} wins",
                plugin.id
            ));
        }
    }
    Ok(())
}

/// `value` with `from` replaced by `to` in every string.
pub fn replace_in_strings(value: &Value, from: &str, to: &str) -> Value {
    match value {
        Value::String(s) => Value::String(s.replace(from, to)),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|i| replace_in_strings(i, from, to))
                .collect(),
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), replace_in_strings(v, from, to)))
                .collect(),
        ),
        v => v.clone(),
    }
}

#[cfg(test)]
#[path = "components_tests.rs"]
mod tests;
