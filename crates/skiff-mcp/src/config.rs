//! MCP server entries as Claude Code reads them (PROTOCOL.md §7): the `mcpServers` object of
//! `.mcp.json`, `~/.claude.json`, settings files and `--mcp-config`, with `${VAR}` /
//! `${VAR:-default}` expansion; and the entry Claude Code writes for `claude mcp add`.

mod expand;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value};

pub use self::expand::expand_vars;

/// Where a server entry came from. On a name clash the higher scope wins, whole entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// An enabled plugin's (named `plugin:<plugin>:<server>`); the lowest scope.
    Plugin,
    /// `~/.claude.json` top-level `mcpServers`, or `mcpServers` in user settings.
    User,
    /// `.mcp.json` in the workspace, or `mcpServers` in project settings.
    Project,
    /// `~/.claude.json` `projects[<dir>].mcpServers`, or `mcpServers` in local settings.
    Local,
    /// `--mcp-config` (Claude Code reports these with `source: "dynamic"`).
    Dynamic,
}

impl Scope {
    /// The name Claude Code uses (`user`, `project`, `local`, `dynamic`).
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Local => "local",
            Scope::Dynamic => "dynamic",
            Scope::Plugin => "plugin",
        }
    }
}

/// How to reach a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking newline-delimited JSON-RPC on stdio.
    Stdio {
        /// Program.
        command: String,
        /// Arguments.
        args: Vec<String>,
        /// Extra environment.
        env: BTreeMap<String, String>,
    },
    /// Streamable HTTP (`type: "http"`, alias `streamable-http`).
    Http {
        /// Endpoint.
        url: String,
        /// Headers sent with every request.
        headers: BTreeMap<String, String>,
    },
    /// Legacy HTTP+SSE (`type: "sse"`): tried as streamable HTTP.
    Sse {
        /// Endpoint.
        url: String,
        /// Headers sent with every request.
        headers: BTreeMap<String, String>,
    },
    /// An in-process server of an Agent SDK host (`type: "sdk"`), reached over the control
    /// protocol.
    Sdk,
}

/// One configured server, variables expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// Name (the `<server>` of `mcp__<server>__<tool>`).
    pub name: String,
    /// Where the entry came from.
    pub scope: Scope,
    /// How to reach it.
    pub transport: Transport,
    /// Per-server startup timeout (`timeout`, in ms, in the entry).
    pub timeout: Option<Duration>,
}

/// An entry that cannot be used: reported as a failed server, never fatal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigProblem {
    /// Server name.
    pub name: String,
    /// Where the entry came from.
    pub scope: Scope,
    /// What is wrong, for the user.
    pub message: String,
}

/// What one `mcpServers` object yields: the usable servers, the entries that cannot be used (to
/// show as failed servers), and warnings (unset variables, ignored keys) for the user.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParsedServers {
    /// Usable servers, in the order of the object (sorted by name).
    pub servers: Vec<ServerConfig>,
    /// Entries that cannot be used.
    pub problems: Vec<ConfigProblem>,
    /// Warnings, one line each, already naming the server.
    pub warnings: Vec<String>,
}

/// A configuration file or string that is not of the shape `{"mcpServers": {...}}`. The
/// caller names the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigFileError {
    /// Not JSON.
    #[error("invalid JSON at line {line}, column {column}: {message}")]
    Json {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser expected.
        message: String,
    },
    /// JSON, but not the expected shape.
    #[error("{0}")]
    Shape(String),
}

/// The expected shape, for messages.
const SHAPE: &str = r#"{"mcpServers": {"name": {"command": "...", "args": [...]}}}"#;

/// Parse a whole configuration document (`.mcp.json`, a `--mcp-config` file or string):
/// a JSON object with an `mcpServers` object. Bad entries become [`ConfigProblem`]s; only a
/// document that is not JSON or not that shape is an error.
pub fn parse_config_str(
    text: &str,
    scope: Scope,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<ParsedServers, ConfigFileError> {
    let doc: Value = serde_json::from_str(text).map_err(|e| {
        let message = e.to_string();
        let message = message
            .split(" at line ")
            .next()
            .unwrap_or(&message)
            .to_owned();
        ConfigFileError::Json {
            line: e.line(),
            column: e.column(),
            message,
        }
    })?;
    let Value::Object(map) = &doc else {
        return Err(ConfigFileError::Shape(format!(
            "the top level must be a JSON object like {SHAPE}"
        )));
    };
    match map.get("mcpServers") {
        Some(servers) => parse_servers(servers, scope, lookup),
        None => Err(ConfigFileError::Shape(format!(
            "no \"mcpServers\" object: the configuration must look like {SHAPE}"
        ))),
    }
}

/// Parse the value of an `mcpServers` key (an object of entries by name). A value that is not
/// an object is an error; bad entries become [`ConfigProblem`]s.
pub fn parse_servers(
    servers: &Value,
    scope: Scope,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<ParsedServers, ConfigFileError> {
    let Value::Object(entries) = servers else {
        return Err(ConfigFileError::Shape(format!(
            "\"mcpServers\" must be an object of server entries by name, like {SHAPE}"
        )));
    };
    let mut out = ParsedServers::default();
    for (name, entry) in entries {
        match parse_entry(name, entry, scope, lookup) {
            Ok((server, warnings)) => {
                out.servers.push(server);
                out.warnings.extend(warnings);
            }
            Err(problem) => out.problems.push(problem),
        }
    }
    Ok(out)
}

/// Parse one entry of `mcpServers`, expanding variables with `lookup`. The warnings name the
/// server; an entry that cannot be used is a [`ConfigProblem`] saying why.
pub fn parse_entry(
    name: &str,
    entry: &Value,
    scope: Scope,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<(ServerConfig, Vec<String>), ConfigProblem> {
    let problem = |message: String| ConfigProblem {
        name: name.to_owned(),
        scope,
        message,
    };
    let Value::Object(fields) = entry else {
        return Err(problem(
            "the entry must be a JSON object (with \"command\", or \"type\" and \"url\")"
                .to_owned(),
        ));
    };
    let mut missing = Vec::new();
    let mut expand = |s: &str| expand_vars(s, lookup, &mut missing);
    let kind = match fields.get("type") {
        None | Some(Value::Null) => None,
        Some(Value::String(t)) => Some(t.as_str()),
        Some(_) => return Err(problem("\"type\" must be a string".to_owned())),
    };
    let kind = match kind {
        Some(k) => k,
        None if fields.contains_key("command") => "stdio",
        None if fields.contains_key("url") => {
            return Err(problem(
                "the entry has a \"url\" but no \"type\": add \"type\": \"http\" (or \"sse\")"
                    .to_owned(),
            ));
        }
        None => {
            return Err(problem(
                "the entry needs a \"command\" (a stdio server) or a \"type\" and a \"url\""
                    .to_owned(),
            ));
        }
    };
    let transport = match kind {
        "stdio" => {
            let command = match fields.get("command") {
                Some(Value::String(c)) if !c.trim().is_empty() => expand(c),
                Some(Value::String(_)) | None | Some(Value::Null) => {
                    return Err(problem("a stdio server needs a \"command\"".to_owned()));
                }
                Some(_) => return Err(problem("\"command\" must be a string".to_owned())),
            };
            let args = match fields.get("args") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => {
                    let mut args = Vec::with_capacity(items.len());
                    for item in items {
                        match item {
                            Value::String(a) => args.push(expand(a)),
                            _ => {
                                return Err(problem(
                                    "\"args\" must be an array of strings".to_owned(),
                                ));
                            }
                        }
                    }
                    args
                }
                Some(_) => return Err(problem("\"args\" must be an array of strings".to_owned())),
            };
            let env = string_map(fields, "env", &mut expand).map_err(problem)?;
            Transport::Stdio { command, args, env }
        }
        "http" | "streamable-http" | "sse" => {
            let url = match fields.get("url") {
                Some(Value::String(u)) if !u.trim().is_empty() => expand(u),
                Some(Value::String(_)) | None | Some(Value::Null) => {
                    return Err(problem(format!("a \"{kind}\" server needs a \"url\"")));
                }
                Some(_) => return Err(problem("\"url\" must be a string".to_owned())),
            };
            let headers = string_map(fields, "headers", &mut expand).map_err(problem)?;
            if kind == "sse" {
                Transport::Sse { url, headers }
            } else {
                Transport::Http { url, headers }
            }
        }
        "sdk" => Transport::Sdk,
        "ws" => {
            return Err(problem(
                "WebSocket servers (\"type\": \"ws\") are not supported; use \"http\" or \"stdio\""
                    .to_owned(),
            ));
        }
        other => {
            return Err(problem(format!(
                "unknown server type \"{other}\": use \"stdio\", \"http\" or \"sse\""
            )));
        }
    };
    let timeout = match fields.get("timeout") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_f64() {
            Some(ms) if ms > 0.0 && ms.is_finite() => {
                Some(Duration::from_millis(ms.round() as u64))
            }
            _ => {
                return Err(problem(
                    "\"timeout\" must be a positive number of milliseconds".to_owned(),
                ));
            }
        },
    };
    let mut warnings: Vec<String> = missing
        .iter()
        .map(|var| {
            format!(
                "MCP server \"{name}\" ({}): environment variable {var} is not set; \"${{{var}}}\" is left as written",
                scope.as_str()
            )
        })
        .collect();
    if fields.contains_key("headersHelper") {
        warnings.push(format!(
            "MCP server \"{name}\" ({}): \"headersHelper\" is not supported; its headers are not sent",
            scope.as_str()
        ));
    }
    Ok((
        ServerConfig {
            name: name.to_owned(),
            scope,
            transport,
            timeout,
        },
        warnings,
    ))
}

/// An optional object of strings (`env`, `headers`), values expanded.
fn string_map(
    fields: &Map<String, Value>,
    key: &str,
    expand: &mut dyn FnMut(&str) -> String,
) -> Result<BTreeMap<String, String>, String> {
    match fields.get(key) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), expand(s))),
                _ => Err(format!("\"{key}.{k}\" must be a string")),
            })
            .collect(),
        Some(_) => Err(format!("\"{key}\" must be an object of strings")),
    }
}

/// A server entry as Claude Code writes it into `mcpServers` (`claude mcp add`), fields in its
/// order: `{"type": "stdio", "command", "args", "env"}` or `{"type": "http", "url", "headers"}`
/// (headers only when there are some).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServerEntry {
    /// `stdio`, `http`, `sse` or `sdk`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Program (stdio).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Arguments (stdio; always written, maybe empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
    /// Environment (stdio; always written, maybe empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub env: Option<BTreeMap<String, String>>,
    /// Endpoint (http, sse).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Headers (http, sse; only when there are some).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headers: Option<BTreeMap<String, String>>,
    /// Server name (sdk).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Startup timeout in ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u64>,
}

impl ServerEntry {
    /// The entry for a server (its values as given: write unexpanded values to keep `${VAR}`).
    pub fn new(server: &ServerConfig) -> Self {
        let mut entry = Self {
            kind: "stdio",
            command: None,
            args: None,
            env: None,
            url: None,
            headers: None,
            name: None,
            timeout: server
                .timeout
                .map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX)),
        };
        let non_empty = |h: &BTreeMap<String, String>| (!h.is_empty()).then(|| h.clone());
        match &server.transport {
            Transport::Stdio { command, args, env } => {
                entry.command = Some(command.clone());
                entry.args = Some(args.clone());
                entry.env = Some(env.clone());
            }
            Transport::Http { url, headers } => {
                entry.kind = "http";
                entry.url = Some(url.clone());
                entry.headers = non_empty(headers);
            }
            Transport::Sse { url, headers } => {
                entry.kind = "sse";
                entry.url = Some(url.clone());
                entry.headers = non_empty(headers);
            }
            Transport::Sdk => {
                entry.kind = "sdk";
                entry.name = Some(server.name.clone());
            }
        }
        entry
    }

    /// The entry as a JSON value (keys sorted: for field order serialize the entry itself).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl Transport {
    /// The `type` Claude Code writes for this transport.
    pub fn kind(&self) -> &'static str {
        match self {
            Transport::Stdio { .. } => "stdio",
            Transport::Http { .. } => "http",
            Transport::Sse { .. } => "sse",
            Transport::Sdk => "sdk",
        }
    }
}
