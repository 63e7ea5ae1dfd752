//! A session's plugins: those `enabledPlugins` turns on (a repository's scopes only in a
//! trusted workspace — untrusted ones were dropped when the settings loaded), found in skiff's
//! installed copies or, failing that, in Claude Code's (`~/.claude/plugins`), and those of
//! `--plugin-dir`. A plugin that is not installed or does not load is left out with a warning
//! (and listed in `system/init.plugin_errors`); the rest load. Reading them is a few small
//! files each: it does not delay the first request (their MCP servers connect in the
//! background with the others).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use skiff_mcp::config::{ParsedServers, parse_servers};
use skiff_mcp::{Scope, ServerConfig, Transport};

use super::components::{LoadedPlugin, load_plugin};
use super::store::{Installed, PluginHome};
use super::{PluginId, check_name};
use crate::environment::Environment;
use crate::error::{ConfigError, Result};
use crate::settings::Settings;

/// The plugins of a session.
#[derive(Debug, Clone, Default)]
pub struct SessionPlugins {
    /// The plugins that loaded, in order (enabled ones by id, then `--plugin-dir` ones).
    pub plugins: Vec<Loaded>,
    /// Plugins that are enabled but could not be used: `(id, why)`.
    pub errors: Vec<(String, String)>,
}

/// One loaded plugin and its data directory.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The plugin.
    pub plugin: LoadedPlugin,
    /// Its data directory (`CLAUDE_PLUGIN_DATA`), when it has one.
    pub data: Option<PathBuf>,
    /// Where it was enabled (a settings file, `--plugin-dir`).
    pub origin: String,
}

impl Loaded {
    /// The variables its hooks and MCP servers get.
    pub fn env(&self) -> Vec<(String, String)> {
        self.plugin.env(self.data.as_deref())
    }
}

/// Load the plugins of a session in `cwd`: enabled by `settings`, and `plugin_dirs`
/// (`--plugin-dir`, relative to `cwd`: a directory that does not load is an error). Warnings
/// go to `warnings`.
pub fn session_plugins(
    settings: &Settings,
    plugin_dirs: &[PathBuf],
    env: &Environment,
    cwd: &Path,
    warnings: &mut Vec<String>,
) -> Result<SessionPlugins> {
    let started = std::time::Instant::now();
    let mut out = SessionPlugins::default();
    let enabled: Vec<(&String, &crate::settings::Sourced<bool>)> = settings
        .enabled_plugins
        .iter()
        .filter(|(_, v)| v.value)
        .collect();
    if !enabled.is_empty() {
        let home = env.skiff_home().map(|h| PluginHome::new(&h));
        let ours = home
            .as_ref()
            .and_then(|h| {
                h.installed()
                    .map_err(|e| warnings.push(format!("Warning: {e}")))
                    .ok()
            })
            .unwrap_or_default();
        let claude = claude_installed(env);
        for (id, sourced) in enabled {
            let origin = sourced.source.to_string();
            match load_enabled(id, &ours, &claude, home.as_ref()) {
                Ok((plugin, data)) => out.push(plugin, data, origin, warnings),
                Err(why) => {
                    warnings.push(format!(
                        "Warning: plugin {id} (enabled in {origin}) is not loaded: {why}"
                    ));
                    out.errors.push((id.clone(), why));
                }
            }
        }
    }
    for dir in plugin_dirs {
        let dir = crate::settings::absolute(cwd, dir);
        let fallback = dir
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("plugin")
            .to_owned();
        let plugin = load_plugin(&dir, &fallback, &format!("{fallback}@inline"))
            .map_err(|e| ConfigError::usage(format!("--plugin-dir {}: {e}", dir.display())))?;
        let id = format!("{}@inline", plugin.manifest.name);
        let plugin = LoadedPlugin { id, ..plugin };
        out.push(plugin, None, "--plugin-dir".to_owned(), warnings);
    }
    tracing::debug!(
        plugins = out.plugins.len(),
        micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
        "plugins loaded"
    );
    Ok(out)
}

impl SessionPlugins {
    fn push(
        &mut self,
        plugin: LoadedPlugin,
        data: Option<PathBuf>,
        origin: String,
        warnings: &mut Vec<String>,
    ) {
        if let Some(other) = self
            .plugins
            .iter()
            .find(|p| p.plugin.name() == plugin.name())
        {
            let why = format!(
                "another plugin called {:?} ({}) is loaded already",
                plugin.name(),
                other.plugin.id
            );
            warnings.push(format!(
                "Warning: plugin {} is not loaded: {why}",
                plugin.id
            ));
            self.errors.push((plugin.id, why));
            return;
        }
        warnings.extend(plugin.warnings.iter().cloned());
        self.plugins.push(Loaded {
            plugin,
            data,
            origin,
        });
    }

    /// Whether no plugin loaded.
    pub fn is_empty(&self) -> bool {
        self.plugins.is_empty()
    }

    /// The command and skill paths for [`skiff_core::commands::discover`].
    pub fn commands(&self) -> Vec<skiff_core::commands::PluginCommands> {
        self.plugins
            .iter()
            .map(|l| skiff_core::commands::PluginCommands {
                name: l.plugin.name().to_owned(),
                root: l.plugin.root.clone(),
                commands: l.plugin.commands.clone(),
                skills: l.plugin.skills.clone(),
            })
            .collect()
    }

    /// The plugins' agents.
    pub fn agents(&self) -> Vec<skiff_core::subagent::AgentDefinition> {
        self.plugins
            .iter()
            .flat_map(|l| l.plugin.agents.iter().cloned())
            .collect()
    }

    /// The plugins' MCP servers, named `plugin:<plugin>:<server>`, variables expanded
    /// (`${CLAUDE_PLUGIN_ROOT}`, `${CLAUDE_PLUGIN_DATA}`, then `lookup`), stdio ones given the
    /// plugin's variables.
    pub fn mcp_servers(&self, lookup: &dyn Fn(&str) -> Option<String>) -> ParsedServers {
        let mut out = ParsedServers::default();
        for l in &self.plugins {
            if l.plugin.mcp_servers.is_empty() {
                continue;
            }
            let vars: HashMap<String, String> = l.env().into_iter().collect();
            let expand = |k: &str| vars.get(k).cloned().or_else(|| lookup(k));
            let named: serde_json::Map<String, Value> = l
                .plugin
                .mcp_servers
                .iter()
                .map(|(k, v)| (format!("plugin:{}:{k}", l.plugin.name()), v.clone()))
                .collect();
            match parse_servers(&Value::Object(named), Scope::Plugin, &expand) {
                Ok(parsed) => {
                    out.servers
                        .extend(parsed.servers.into_iter().map(|s| with_env(s, &vars)));
                    out.problems.extend(parsed.problems);
                    out.warnings.extend(parsed.warnings);
                }
                Err(e) => out
                    .warnings
                    .push(format!("plugin {}: its MCP servers: {e}", l.plugin.id)),
            }
        }
        out
    }

    /// Add the plugins' MCP servers to a session's (`${VAR}` looked up in the settings, then
    /// `env`); their warnings start with `Warning:` as the others'.
    pub fn add_servers(
        &self,
        servers: &mut crate::mcp::config::SessionServers,
        settings: &Settings,
        env: &Environment,
    ) {
        let lookup = |k: &str| {
            settings
                .lookup
                .get(k)
                .or_else(|| env.vars().get(k).cloned())
        };
        let found = self.mcp_servers(&lookup);
        servers.servers.extend(found.servers);
        servers.problems.extend(found.problems);
        servers
            .warnings
            .extend(found.warnings.into_iter().map(|w| format!("Warning: {w}")));
    }

    /// Put `plugins` (and `plugin_errors`, when some could not load) into `system/init`'s
    /// extra fields.
    pub fn describe_in(&self, init: &mut serde_json::Map<String, Value>) {
        init.insert("plugins".into(), self.init_json());
        if !self.errors.is_empty() {
            init.insert("plugin_errors".into(), self.errors_json());
        }
    }

    /// `system/init.plugins`: `[{name, path, source, version?}]`.
    pub fn init_json(&self) -> Value {
        Value::Array(
            self.plugins
                .iter()
                .map(|l| {
                    let mut v = json!({
                        "name": l.plugin.name(),
                        "path": l.plugin.root.display().to_string(),
                        "source": l.plugin.id,
                    });
                    if let Some(ver) = &l.plugin.manifest.version {
                        v["version"] = Value::String(ver.clone());
                    }
                    v
                })
                .collect(),
        )
    }

    /// `system/init.plugin_errors`: `[{plugin, error}]`.
    pub fn errors_json(&self) -> Value {
        Value::Array(
            self.errors
                .iter()
                .map(|(id, e)| json!({"plugin": id, "error": e}))
                .collect(),
        )
    }
}

/// A stdio server of a plugin gets the plugin's variables (its entry's own win).
fn with_env(mut server: ServerConfig, vars: &HashMap<String, String>) -> ServerConfig {
    if let Transport::Stdio { env, .. } = &mut server.transport {
        for (k, v) in vars {
            env.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    server
}

/// Claude Code's installed plugins (`~/.claude/plugins/installed_plugins.json`), used for a
/// plugin skiff has no copy of.
fn claude_installed(env: &Environment) -> Installed {
    env.claude_dir()
        .map(|d| d.join("plugins").join("installed_plugins.json"))
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .map(|v| Installed::from_value(&v))
        .unwrap_or_default()
}

/// Load an enabled plugin from skiff's copy, else Claude Code's.
fn load_enabled(
    id: &str,
    ours: &Installed,
    claude: &Installed,
    home: Option<&PluginHome>,
) -> std::result::Result<(LoadedPlugin, Option<PathBuf>), String> {
    let parsed = PluginId::parse(id).map_err(|e| e.to_string())?;
    check_name(&parsed.name, "plugin").map_err(|e| e.to_string())?;
    let record = ours.get(id).or_else(|| claude.get(id)).ok_or_else(|| {
        format!("it is not installed; install it with `skiff plugin install {id}`")
    })?;
    let plugin = load_plugin(&record.install_path, &parsed.name, id).map_err(|e| e.to_string())?;
    let data = home.map(|h| h.data_dir(&parsed));
    if let Some(d) = &data
        && !d.is_dir()
    {
        let _ = std::fs::create_dir_all(d);
    }
    Ok((plugin, data))
}

#[cfg(test)]
#[path = "load_tests.rs"]
mod tests;
