//! `skiff mcp list | get | add | remove`: the MCP servers in the files Claude Code uses, edited
//! as `claude mcp` edits them: local scope in `~/.claude.json` `projects["<workspace>"]`,
//! project scope in `<workspace>/.mcp.json`, user scope in `~/.claude.json` `mcpServers`.
//! Everything else in those files is kept as it was; a file that is not valid JSON is never
//! overwritten.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use skiff_mcp::config::ServerEntry;
use skiff_mcp::{Scope, ServerConfig, ServerStatus, Transport};

use crate::args::{Args, McpCommand, McpScope, McpTransport};
use crate::cmd::config::is_secret_name;
use crate::session::UsageError;
use skiff_config::json_doc::Json;
use skiff_config::mcp::config::{self as mcp_config, MCP_JSON, read_doc};
use skiff_config::mcp::files::{Target, scope_name, searched};
use skiff_config::settings::{Settings, redact_url};

/// Startup timeout of `list`'s connection check without MCP_TIMEOUT.
const DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// Run `skiff mcp …`.
pub fn run_mcp(args: &Args, command: &McpCommand) -> anyhow::Result<ExitCode> {
    let cwd = match &args.cwd {
        Some(d) => d.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let cwd = std::fs::canonicalize(&cwd)
        .with_context(|| format!("the workspace directory {} does not exist", cwd.display()))?;
    let env = crate::env_guard::process_env();
    let text = match command {
        McpCommand::List => list(args, &cwd)?,
        McpCommand::Get { name } => get(args, &cwd, &env, name)?,
        McpCommand::Add {
            name,
            command_or_url,
            args: rest,
            scope,
            transport,
            env: vars,
            header,
        } => {
            let server = server_from_flags(name, command_or_url, rest, *transport, vars, header)?;
            add(&cwd, &env, *scope, &server)?
        }
        McpCommand::Remove { name, scope } => remove(&cwd, &env, name, *scope)?,
        // Dispatched before this (its flags are a run's).
        McpCommand::Serve { .. } => return crate::cmd::mcp_serve::run_serve(args),
    };
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(anyhow::Error::new(e).context("writing to stdout"))
        }
        _ => Ok(ExitCode::SUCCESS),
    }
}

/// The servers a session here would have (to connect), the same servers for showing (every
/// expanded `${VAR}` masked), warnings printed to stderr.
fn session(
    args: &Args,
    cwd: &Path,
) -> anyhow::Result<(
    Settings,
    mcp_config::SessionServers,
    mcp_config::SessionServers,
)> {
    let settings = crate::session::settings(args, cwd)?;
    let overrides = crate::session::overrides(args);
    let environment = crate::session::environment();
    let found = mcp_config::session_servers(&overrides, &settings, &environment, cwd)?;
    let shown = mcp_config::servers_for_display(&overrides, &settings, &environment, cwd)?;
    for w in settings.trust_warnings.iter().chain(&found.warnings) {
        eprintln!("{w}");
    }
    Ok((settings, found, shown))
}

/// A configured value for display: credential shapes written into it (a token typed into
/// `args`, a URL, a header) masked as expanded variables are.
fn mask_literal(text: &str) -> String {
    let (masked, _) = crate::cmd::replay::redact::Redactor::default().text(text);
    masked.replace(crate::cmd::replay::redact::REDACTED, mcp_config::MASKED)
}

/// `skiff mcp list`: every server with its connection status.
fn list(args: &Args, cwd: &Path) -> anyhow::Result<String> {
    let (settings, found, shown) = session(args, cwd)?;
    if found.servers.is_empty() && found.problems.is_empty() {
        return Ok("No MCP servers configured. Use `skiff mcp add` to add a server.\n".to_owned());
    }
    let timeout = settings
        .lookup
        .get("MCP_TIMEOUT")
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|ms| *ms > 0)
        .map_or(DEFAULT_PROBE_TIMEOUT, Duration::from_millis);
    eprintln!("Checking MCP server health...");
    let statuses = probe_statuses(&found.servers, cwd, timeout)?;
    let mut out = String::new();
    for server in &shown.servers {
        let status = statuses
            .iter()
            .find(|(n, _)| *n == server.name)
            .map(|(_, s)| s);
        let _ = writeln!(
            out,
            "{}: {} - {}",
            server.name,
            target_text(server),
            status_text(status)
        );
    }
    for p in &shown.problems {
        let _ = writeln!(
            out,
            "{}: {} - ✗ Invalid configuration",
            p.name,
            mask_literal(&p.message)
        );
    }
    Ok(out)
}

/// Each server's connection status (connections closed again).
fn probe_statuses(
    servers: &[ServerConfig],
    cwd: &Path,
    timeout: Duration,
) -> anyhow::Result<Vec<(String, ServerStatus)>> {
    if servers.is_empty() {
        return Ok(Vec::new());
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("could not start the async runtime")?;
    Ok(runtime.block_on(skiff_mcp::probe(servers, cwd, timeout)))
}

/// `✓ Connected`, `✗ Failed to connect: why`, … as `claude mcp list` shows them.
fn status_text(status: Option<&ServerStatus>) -> String {
    match status {
        Some(ServerStatus::Connected { .. }) => "✓ Connected".to_owned(),
        Some(ServerStatus::Failed(why)) => format!("✗ Failed to connect: {why}"),
        Some(ServerStatus::NeedsAuth(_)) => "⚠ Needs authentication".to_owned(),
        Some(ServerStatus::Pending) => "… Pending".to_owned(),
        Some(ServerStatus::Disabled) => "○ Disabled".to_owned(),
        None => "? unknown".to_owned(),
    }
}

/// `command args`, `url (HTTP)`, `url (SSE)` or `(SDK)`.
fn target_text(server: &ServerConfig) -> String {
    match &server.transport {
        Transport::Stdio { command, args, .. } => mask_literal(
            &std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
        ),
        Transport::Http { url, .. } => format!("{} (HTTP)", redact_url_secrets(url)),
        Transport::Sse { url, .. } => format!("{} (SSE)", redact_url_secrets(url)),
        Transport::Sdk => "(SDK)".to_owned(),
    }
}

/// How Claude Code describes a scope.
fn scope_text(scope: Scope) -> &'static str {
    match scope {
        Scope::Local => "Local config (private to you in this project)",
        Scope::Project => "Project config (shared via .mcp.json)",
        Scope::User => "User config (available in all your projects)",
        Scope::Dynamic => "Dynamic config (from --mcp-config)",
        Scope::Plugin => "Plugin (from an enabled plugin; `skiff plugin` manages it)",
    }
}

/// `skiff mcp get NAME`: one server's configuration, secrets redacted.
fn get(
    args: &Args,
    cwd: &Path,
    env: &HashMap<String, String>,
    name: &str,
) -> anyhow::Result<String> {
    let (_, _, found) = session(args, cwd)?;
    let mut out = String::new();
    if let Some(p) = found.problems.iter().find(|p| p.name == name) {
        let _ = writeln!(out, "{name}:\n  Scope: {}", scope_text(p.scope));
        let _ = writeln!(
            out,
            "  Status: ✗ Invalid configuration: {}",
            mask_literal(&p.message)
        );
        return Ok(out);
    }
    let Some(server) = found.servers.iter().find(|s| s.name == name) else {
        let in_mcp_json = read_doc(&cwd.join(MCP_JSON))
            .ok()
            .flatten()
            .and_then(|d| d.get("mcpServers").map(|s| s.get(name).is_some()))
            .unwrap_or(false);
        if in_mcp_json {
            bail!(
                "MCP server \"{name}\" is in {}, but it is not used here: this workspace is not \
                 trusted (run with --trust), or disabledMcpjsonServers names it",
                cwd.join(MCP_JSON).display()
            );
        }
        bail!(
            "No MCP server found with name: \"{name}\" ({})",
            searched(cwd, env)
        );
    };
    let _ = writeln!(out, "{name}:");
    let _ = writeln!(out, "  Scope: {}", scope_text(server.scope));
    let _ = writeln!(out, "  Type: {}", server.transport.kind());
    match &server.transport {
        Transport::Stdio { command, args, env } => {
            let _ = writeln!(out, "  Command: {}", mask_literal(command));
            let _ = writeln!(out, "  Args: {}", mask_literal(&args.join(" ")));
            if !env.is_empty() {
                let _ = writeln!(out, "  Environment:");
                for (k, v) in env {
                    let v = if is_secret_name(k) {
                        "***".to_owned()
                    } else {
                        mask_literal(v)
                    };
                    let _ = writeln!(out, "    {k}={v}");
                }
            }
        }
        Transport::Http { url, headers } | Transport::Sse { url, headers } => {
            let _ = writeln!(out, "  URL: {}", redact_url_secrets(url));
            if !headers.is_empty() {
                let _ = writeln!(out, "  Headers:");
                for (k, v) in headers {
                    let _ = writeln!(out, "    {k}: {}", mask_literal(&redact_header(k, v)));
                }
            }
        }
        Transport::Sdk => {}
    }
    if let Some(t) = server.timeout {
        let _ = writeln!(out, "  Timeout: {} ms", t.as_millis());
    }
    if let Some(scope) = editable_scope(server.scope) {
        let _ = writeln!(
            out,
            "\nTo remove this server, run: skiff mcp remove \"{name}\" -s {}",
            scope_name(scope.into())
        );
    }
    Ok(out)
}

/// A header value for display: credentials replaced by `***` (the scheme kept).
fn redact_header(name: &str, value: &str) -> String {
    let scheme = value
        .split_once(' ')
        .map(|(s, _)| s)
        .filter(|s| ["bearer", "basic", "token", "bot"].contains(&s.to_ascii_lowercase().as_str()));
    match scheme {
        Some(s) => format!("{s} ***"),
        None if is_secret_name(name) => "***".to_owned(),
        None => value.to_owned(),
    }
}

/// A URL for display: no userinfo, and query values with secret-looking names replaced.
fn redact_url_secrets(url: &str) -> String {
    let url = mask_literal(&redact_url(url));
    let Some((base, query)) = url.split_once('?') else {
        return url;
    };
    let query: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((k, _)) if is_secret_name(k) => format!("{k}=***"),
            _ => pair.to_owned(),
        })
        .collect();
    format!("{base}?{}", query.join("&"))
}

/// The `skiff mcp` scope of a server's scope.
fn editable_scope(scope: Scope) -> Option<McpScope> {
    match scope {
        Scope::Local => Some(McpScope::Local),
        Scope::Project => Some(McpScope::Project),
        Scope::User => Some(McpScope::User),
        Scope::Dynamic | Scope::Plugin => None,
    }
}

/// The entry of `skiff mcp add`, from its flags (values as typed: `${VAR}` stays).
fn server_from_flags(
    name: &str,
    command_or_url: &str,
    rest: &[String],
    transport: McpTransport,
    vars: &[String],
    headers: &[String],
) -> anyhow::Result<ServerConfig> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(UsageError(format!(
            "invalid server name \"{name}\": use only letters, digits, hyphens and underscores"
        ))
        .into());
    }
    let transport = match transport {
        McpTransport::Stdio => {
            if !headers.is_empty() {
                return Err(UsageError(
                    "-H/--header is for http and sse servers (add --transport http)".into(),
                )
                .into());
            }
            if command_or_url.starts_with("http://") || command_or_url.starts_with("https://") {
                eprintln!(
                    "Warning: \"{command_or_url}\" looks like a URL but is added as a command \
                     (stdio); for an HTTP server use --transport http"
                );
            }
            let mut env = BTreeMap::new();
            for var in vars {
                match var.split_once('=') {
                    Some((k, v)) if !k.trim().is_empty() => {
                        env.insert(k.trim().to_owned(), v.to_owned());
                    }
                    _ => {
                        return Err(UsageError(format!(
                            "-e {var}: environment variables are given as KEY=VALUE"
                        ))
                        .into());
                    }
                }
            }
            Transport::Stdio {
                command: command_or_url.to_owned(),
                args: rest.to_vec(),
                env,
            }
        }
        McpTransport::Http | McpTransport::Sse => {
            if !vars.is_empty() {
                return Err(UsageError("-e/--env is for stdio servers".into()).into());
            }
            if !rest.is_empty() {
                return Err(UsageError(format!(
                    "an {} server takes a URL and no arguments (got {})",
                    if transport == McpTransport::Http {
                        "http"
                    } else {
                        "sse"
                    },
                    rest.join(" ")
                ))
                .into());
            }
            let mut map = BTreeMap::new();
            for h in headers {
                match h.split_once(':') {
                    Some((k, v)) if !k.trim().is_empty() => {
                        map.insert(k.trim().to_owned(), v.trim().to_owned());
                    }
                    _ => {
                        return Err(UsageError(format!(
                            "-H {h}: headers are given as \"Name: value\""
                        ))
                        .into());
                    }
                }
            }
            let url = command_or_url.to_owned();
            if transport == McpTransport::Http {
                Transport::Http { url, headers: map }
            } else {
                Transport::Sse { url, headers: map }
            }
        }
    };
    Ok(ServerConfig {
        name: name.to_owned(),
        scope: Scope::Local,
        transport,
        timeout: None,
    })
}

/// `skiff mcp add`.
fn add(
    cwd: &Path,
    env: &HashMap<String, String>,
    scope: McpScope,
    server: &ServerConfig,
) -> anyhow::Result<String> {
    let target = Target::new(scope.into(), cwd, env)?;
    let (mut doc, existed) = target.read()?;
    let name = &server.name;
    let servers = target.servers_mut(&mut doc)?;
    if servers.get(name).is_some() {
        bail!(
            "MCP server {name} already exists in {} config ({}); remove it first with: skiff mcp remove \"{name}\" -s {}",
            scope_name(scope.into()),
            target.describe(),
            scope_name(scope.into())
        );
    }
    servers.insert(name, Json::from_serialize(&ServerEntry::new(server))?);
    target.write(&doc, existed)?;
    let what = match &server.transport {
        Transport::Stdio { command, args, .. } => {
            let line = std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" ");
            format!("stdio MCP server {name} with command: {line}")
        }
        Transport::Http { url, .. } => {
            format!(
                "HTTP MCP server {name} with URL: {}",
                redact_url_secrets(url)
            )
        }
        Transport::Sse { url, .. } => {
            format!(
                "SSE MCP server {name} with URL: {}",
                redact_url_secrets(url)
            )
        }
        Transport::Sdk => format!("SDK MCP server {name}"),
    };
    Ok(format!(
        "Added {what} to {} config\nFile modified: {}\n",
        scope_name(scope.into()),
        target.describe()
    ))
}

/// `skiff mcp remove`.
fn remove(
    cwd: &Path,
    env: &HashMap<String, String>,
    name: &str,
    scope: Option<McpScope>,
) -> anyhow::Result<String> {
    let scopes = match scope {
        Some(s) => vec![s],
        None => vec![McpScope::Local, McpScope::Project, McpScope::User],
    };
    let mut holders = Vec::new();
    for s in scopes {
        let target = Target::new(s.into(), cwd, env)?;
        let (doc, existed) = target.read()?;
        if target.servers(&doc).and_then(|m| m.get(name)).is_some() {
            holders.push((target, doc, existed));
        }
    }
    match holders.len() {
        0 => match scope {
            Some(s) => bail!(
                "No MCP server named \"{name}\" in {} config ({})",
                scope_name(s.into()),
                Target::new(s.into(), cwd, env)?.describe()
            ),
            None => bail!(
                "No MCP server found with name: \"{name}\" ({})",
                searched(cwd, env)
            ),
        },
        1 => {}
        _ => {
            let names: Vec<&str> = holders.iter().map(|(t, ..)| scope_name(t.scope)).collect();
            bail!(
                "MCP server \"{name}\" exists in several scopes: {}. Remove it from one with: \
                 skiff mcp remove \"{name}\" --scope <{}>",
                names.join(", "),
                names.join("|")
            );
        }
    }
    let Some((target, mut doc, existed)) = holders.pop() else {
        bail!("internal error: no scope to remove from");
    };
    target.servers_mut(&mut doc)?.remove(name);
    target.write(&doc, existed)?;
    Ok(format!(
        "Removed MCP server \"{name}\" from {} config\nFile modified: {}\n",
        scope_name(target.scope),
        target.describe()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_redacted_for_display() {
        assert_eq!(redact_header("Authorization", "Bearer abc"), "Bearer ***");
        assert_eq!(redact_header("X-Api-Key", "abc"), "***");
        assert_eq!(redact_header("X-Other", "Basic abc"), "Basic ***");
        assert_eq!(
            redact_header("Accept", "application/json"),
            "application/json"
        );
        assert_eq!(
            redact_url_secrets("https://u:p@h/mcp?api_key=s&x=1"),
            "https://[redacted]@h/mcp?api_key=***&x=1"
        );
    }

    #[test]
    fn add_flags() {
        let s = server_from_flags(
            "fs",
            "npx",
            &["-y".into(), "srv".into()],
            McpTransport::Stdio,
            &["K=v=w".into()],
            &[],
        )
        .unwrap();
        assert_eq!(
            s.transport,
            Transport::Stdio {
                command: "npx".into(),
                args: vec!["-y".into(), "srv".into()],
                env: BTreeMap::from([("K".into(), "v=w".into())])
            }
        );
        let h = server_from_flags(
            "r",
            "https://h/mcp",
            &[],
            McpTransport::Http,
            &[],
            &["Authorization: Bearer ${TOKEN}".into()],
        )
        .unwrap();
        assert_eq!(
            h.transport,
            Transport::Http {
                url: "https://h/mcp".into(),
                headers: BTreeMap::from([("Authorization".into(), "Bearer ${TOKEN}".into())])
            }
        );
        let usage = |r: anyhow::Result<ServerConfig>| {
            let e = r.unwrap_err();
            assert!(e.downcast_ref::<UsageError>().is_some(), "{e}");
            e.to_string()
        };
        assert!(
            usage(server_from_flags(
                "a b",
                "c",
                &[],
                McpTransport::Stdio,
                &[],
                &[]
            ))
            .contains("invalid server name")
        );
        assert!(
            usage(server_from_flags(
                "a",
                "c",
                &[],
                McpTransport::Stdio,
                &["K".into()],
                &[]
            ))
            .contains("KEY=VALUE")
        );
        assert!(
            usage(server_from_flags(
                "a",
                "c",
                &[],
                McpTransport::Stdio,
                &[],
                &["A: b".into()]
            ))
            .contains("--transport http")
        );
        assert!(
            usage(server_from_flags(
                "a",
                "u",
                &["x".into()],
                McpTransport::Http,
                &[],
                &[]
            ))
            .contains("no arguments")
        );
        assert!(
            usage(server_from_flags(
                "a",
                "u",
                &[],
                McpTransport::Sse,
                &[],
                &["nocolon".into()]
            ))
            .contains("Name: value")
        );
        assert!(
            usage(server_from_flags(
                "a",
                "u",
                &[],
                McpTransport::Http,
                &["K=v".into()],
                &[]
            ))
            .contains("stdio")
        );
    }
}
