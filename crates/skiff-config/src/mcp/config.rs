//! The MCP servers of a session, from where Claude Code keeps them: `~/.claude.json` (user scope
//! at the top level, local scope under `projects["<workspace>"]`), the workspace's `.mcp.json`
//! (project scope), `mcpServers` in the settings files, and `--mcp-config` (dynamic). On a name
//! clash the higher scope wins, whole entry: dynamic > local > project > user.
//!
//! An untrusted workspace's own servers (`.mcp.json`, its settings files) do not start.

#[allow(unused_imports)]
use crate::error::{ConfigError, Result, bail, invalid};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use skiff_mcp::config::{ConfigFileError, ParsedServers, parse_config_str, parse_servers};
use skiff_mcp::{ConfigProblem, Scope, ServerConfig};

use crate::environment::Environment;
use crate::json_doc::Json;
use crate::overrides::Overrides;
use crate::settings::{Layer, Settings, Source};

/// The project-scope file, at the workspace root.
pub const MCP_JSON: &str = ".mcp.json";

/// The servers a session starts, the entries that cannot start (shown as failed), and warnings
/// to print once (each a whole line, starting with `Warning:`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionServers {
    /// Servers to connect, lowest scope first.
    pub servers: Vec<ServerConfig>,
    /// Entries that cannot be used: report them as failed servers with this message.
    pub problems: Vec<ConfigProblem>,
    /// Warnings: skipped untrusted servers, unset variables, unreadable files.
    pub warnings: Vec<String>,
}

/// Gather the servers of a session in `cwd` (the workspace, canonical). `--mcp-config` values
/// that cannot be read are usage errors (exit 2); everything else becomes a problem or a
/// warning.
pub fn session_servers(
    args: &Overrides,
    settings: &Settings,
    env: &Environment,
    cwd: &Path,
) -> Result<SessionServers> {
    gather(args, settings, cwd, env.vars())
}

/// What a variable's value is shown as by [`servers_for_display`].
pub const MASKED: &str = "***";

/// [`session_servers`] for showing them (`skiff mcp list`, `skiff mcp get`): every `${VAR}`
/// that has a value is [`MASKED`] instead of expanded, so no credential a variable holds is
/// printed (a `${VAR:-default}` whose variable is unset shows its default, as written).
pub fn servers_for_display(
    args: &Overrides,
    settings: &Settings,
    env: &Environment,
    cwd: &Path,
) -> Result<SessionServers> {
    gather_with(args, settings, cwd, env.vars(), true)
}

/// [`session_servers`] with the process environment given (`HOME`, `CLAUDE_CONFIG_DIR`, and the
/// values for `${VAR}` not in the settings' lookup).
pub(crate) fn gather(
    args: &Overrides,
    settings: &Settings,
    cwd: &Path,
    env: &HashMap<String, String>,
) -> Result<SessionServers> {
    gather_with(args, settings, cwd, env, false)
}

/// [`gather`]; `mask`: variables expand to [`MASKED`].
fn gather_with(
    args: &Overrides,
    settings: &Settings,
    cwd: &Path,
    env: &HashMap<String, String>,
    mask: bool,
) -> Result<SessionServers> {
    // The settings' lookup (real env incl. the credentials env_guard keeps aside, `.env`
    // files, settings `env`); then the raw environment, where an empty value counts as set.
    let real = |k: &str| settings.lookup.get(k).or_else(|| env.get(k).cloned());
    let lookup = |k: &str| real(k).map(|v| if mask { MASKED.to_owned() } else { v });
    let mut found = Found::default();

    let dynamic = dynamic_servers(&args.mcp_config, cwd, &lookup)?;
    if !args.strict_mcp_config {
        let layers = match &args.setting_sources {
            Some(list) => Layer::parse_list(list)?,
            None => Layer::ALL.to_vec(),
        };
        let claude_json = crate::settings::claude_global_config(env);
        let global = match &claude_json {
            Some(path) => match read_doc(path) {
                Ok(doc) => doc.map(|d| (path.clone(), d)),
                Err(e) => {
                    found.warn(format!("Warning: no MCP servers from {e:#}"));
                    None
                }
            },
            None => None,
        };
        for layer in Layer::ALL {
            let scope = scope_of(layer);
            for sourced in &settings.mcp.servers {
                if matches!(&sourced.source, Source::File { layer: l, .. } if *l == layer) {
                    found.add_value(&sourced.value, scope, &sourced.source.to_string(), &lookup);
                }
            }
            if !layers.contains(&layer) {
                continue;
            }
            match layer {
                Layer::User => {
                    if let Some((path, doc)) = &global
                        && let Some(servers) = doc.get("mcpServers")
                    {
                        found.add_value(
                            &servers.to_value(),
                            scope,
                            &path.display().to_string(),
                            &lookup,
                        );
                    }
                }
                Layer::Project => found.add_mcp_json(settings, cwd, &lookup),
                Layer::Local => {
                    if let Some((path, doc)) = &global
                        && let Some(servers) = doc
                            .get("projects")
                            .and_then(|p| p.get(&project_key(cwd)))
                            .and_then(|p| p.get("mcpServers"))
                    {
                        let origin = format!("{} (project {})", path.display(), cwd.display());
                        found.add_value(&servers.to_value(), scope, &origin, &lookup);
                    }
                }
            }
        }
        // `--settings`: above the files.
        for sourced in &settings.mcp.servers {
            if matches!(sourced.source, Source::SettingsArg { .. }) {
                let origin = sourced.source.to_string();
                found.add_value(&sourced.value, Scope::Local, &origin, &lookup);
            }
        }
    }
    for (parsed, _) in dynamic {
        found.add(parsed);
    }
    for server in &args.mcp_servers {
        found.put(&server.name, Ok(server.clone()), Vec::new());
    }
    Ok(found.finish())
}

/// `--mcp-config FILE|JSON` values, parsed; one that cannot be read is a usage error.
fn dynamic_servers(
    values: &[String],
    cwd: &Path,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<(ParsedServers, String)>> {
    let mut out = Vec::new();
    for value in values {
        if value.trim_start().starts_with('{') {
            let parsed = parse_config_str(value, Scope::Dynamic, lookup).map_err(|e| {
                ConfigError::Usage(format!(
                    "--mcp-config: {e}. Fix the JSON given to --mcp-config"
                ))
            })?;
            out.push((parsed, "--mcp-config (inline JSON)".to_owned()));
            continue;
        }
        let path = crate::settings::absolute(cwd, Path::new(value));
        let text = std::fs::read_to_string(&path).map_err(|e| {
            ConfigError::Usage(format!(
                "--mcp-config: cannot read {}: {e} (give a file or a JSON object {{\"mcpServers\": {{…}}}})",
                path.display()
            ))
        })?;
        let parsed = parse_config_str(&text, Scope::Dynamic, lookup)
            .map_err(|e| ConfigError::Usage(format!("--mcp-config {}: {e}", path.display())))?;
        out.push((parsed, path.display().to_string()));
    }
    Ok(out)
}

/// The MCP scope of a settings layer.
fn scope_of(layer: Layer) -> Scope {
    match layer {
        Layer::User => Scope::User,
        Layer::Project => Scope::Project,
        Layer::Local => Scope::Local,
    }
}

/// The key of a workspace in `~/.claude.json` `projects`.
pub fn project_key(cwd: &Path) -> String {
    cwd.display().to_string()
}

/// A JSON file other programs own, or `None` when it does not exist. Invalid JSON is an error
/// naming the file, the line and the column.
pub fn read_doc(path: &Path) -> Result<Option<Json>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if crate::settings::is_absent(&e) => return Ok(None),
        Err(e) => return Err(ConfigError::read(path, e)),
    };
    if text.trim().is_empty() {
        return Ok(Some(Json::Object(Vec::new())));
    }
    Json::parse(&text).map(Some).map_err(|e| {
        let msg = e.to_string();
        let msg = msg.split(" at line ").next().unwrap_or(&msg).to_owned();
        invalid!(
            "{}: invalid JSON at line {}, column {}: {msg}",
            path.display(),
            e.line(),
            e.column()
        )
    })
}

/// Servers by name as they are found, lowest precedence first; a later entry replaces an
/// earlier one with the same name, whole.
#[derive(Default)]
struct Found {
    entries: Vec<(String, Result<ServerConfig, ConfigProblem>, Vec<String>)>,
    warnings: Vec<String>,
}

impl Found {
    fn warn(&mut self, warning: String) {
        if !self.warnings.contains(&warning) {
            self.warnings.push(warning);
        }
    }

    fn put(
        &mut self,
        name: &str,
        entry: Result<ServerConfig, ConfigProblem>,
        warnings: Vec<String>,
    ) {
        let warnings = warnings
            .into_iter()
            .map(|w| format!("Warning: {w}"))
            .collect();
        match self.entries.iter_mut().find(|(n, ..)| n == name) {
            Some(slot) => *slot = (name.to_owned(), entry, warnings),
            None => self.entries.push((name.to_owned(), entry, warnings)),
        }
    }

    fn add(&mut self, parsed: ParsedServers) {
        // Warnings name their server; keep each with it so an overridden entry's go too.
        for server in parsed.servers {
            let prefix = format!("MCP server \"{}\" (", server.name);
            let own: Vec<String> = parsed
                .warnings
                .iter()
                .filter(|w| w.starts_with(&prefix))
                .cloned()
                .collect();
            let name = server.name.clone();
            self.put(&name, Ok(server), own);
        }
        for problem in parsed.problems {
            let name = problem.name.clone();
            self.put(&name, Err(problem), Vec::new());
        }
    }

    /// An `mcpServers` value from `origin` (a file, for warnings).
    fn add_value(
        &mut self,
        value: &serde_json::Value,
        scope: Scope,
        origin: &str,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) {
        match parse_servers(value, scope, lookup) {
            Ok(parsed) => self.add(parsed),
            Err(e) => self.warn(format!(
                "Warning: ignoring the MCP servers of {origin}: {e}"
            )),
        }
    }

    /// The workspace's `.mcp.json`: only when the workspace is trusted, without the servers
    /// `disabledMcpjsonServers` names.
    fn add_mcp_json(
        &mut self,
        settings: &Settings,
        cwd: &Path,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) {
        let path = cwd.join(MCP_JSON);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if crate::settings::is_absent(&e) => return,
            Err(e) => {
                self.warn(format!(
                    "Warning: cannot read {}: {e}; its MCP servers are not started",
                    path.display()
                ));
                return;
            }
        };
        let parsed = match parse_config_str(&text, Scope::Project, lookup) {
            Ok(p) => p,
            Err(e) => {
                let fix = match e {
                    ConfigFileError::Json { .. } => "fix the JSON",
                    ConfigFileError::Shape(_) => "fix the file",
                };
                self.warn(format!(
                    "Warning: {}: {e}; its MCP servers are not started ({fix})",
                    path.display()
                ));
                return;
            }
        };
        let disabled = |name: &str| {
            settings
                .mcp
                .disabled_mcpjson
                .iter()
                .any(|d| d.value == name)
        };
        if !settings.trusted {
            let mut names: Vec<&str> = parsed
                .servers
                .iter()
                .map(|s| s.name.as_str())
                .chain(parsed.problems.iter().map(|p| p.name.as_str()))
                .filter(|n| !disabled(n))
                .collect();
            names.sort_unstable();
            for name in names {
                self.warn(untrusted_warning(name, &path));
            }
            return;
        }
        let mut kept = ParsedServers {
            warnings: parsed.warnings,
            ..ParsedServers::default()
        };
        // Trust is the approval Claude Code asks for per server: every server of a trusted
        // workspace starts unless `disabledMcpjsonServers` names it.
        let approved = |name: &str| {
            settings
                .mcp
                .enable_all_project_servers
                .as_ref()
                .is_some_and(|e| e.value)
                || settings.mcp.enabled_mcpjson.iter().any(|e| e.value == name)
        };
        for server in parsed.servers {
            if disabled(&server.name) {
                tracing::debug!(server = %server.name, "disabled by disabledMcpjsonServers");
            } else {
                tracing::debug!(
                    server = %server.name,
                    approved_by_settings = approved(&server.name),
                    "from .mcp.json of a trusted workspace"
                );
                kept.servers.push(server);
            }
        }
        kept.problems = parsed
            .problems
            .into_iter()
            .filter(|p| !disabled(&p.name))
            .collect();
        self.add(kept);
    }

    fn finish(self) -> SessionServers {
        let mut out = SessionServers {
            warnings: self.warnings,
            ..SessionServers::default()
        };
        for (_, entry, warnings) in self.entries {
            match entry {
                Ok(server) => out.servers.push(server),
                Err(problem) => out.problems.push(problem),
            }
            for w in warnings {
                if !out.warnings.contains(&w) {
                    out.warnings.push(w);
                }
            }
        }
        out
    }
}

/// The warning for a server of an untrusted workspace's `.mcp.json`.
fn untrusted_warning(name: &str, file: &Path) -> String {
    format!(
        "Warning: skipped MCP server \"{name}\" from {}: this workspace is not trusted. Trust it \
         in the REPL, or run with --trust (or SKIFF_TRUST_WORKSPACE=1), to use it.",
        file.display()
    )
}

/// `~/.claude.json` for this environment (for `skiff mcp`).
pub fn claude_json(env: &HashMap<String, String>) -> Result<PathBuf> {
    crate::settings::claude_global_config(env).ok_or_else(|| {
        ConfigError::invalid(
            "neither HOME nor CLAUDE_CONFIG_DIR is set: cannot find ~/.claude.json",
        )
    })
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
