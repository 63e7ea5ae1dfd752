//! Folding settings documents (JSON objects) into one merged state, lowest layer first:
//! scalars later-wins, rule lists concatenated, `env` merged by key, `hooks` merged by event with
//! the matcher groups concatenated. Type errors name the key and the file.

#[allow(unused_imports)]
use crate::error::{ConfigError, Result, bail, invalid};
use std::collections::BTreeMap;

use serde_json::{Map, Value};

use skiff_tools::sandbox::{NetworkPolicy, SandboxFallback, SandboxMode};

use super::{CompactionStrategy, CompactionThreshold, PERMISSION_MODES, Source, Sourced};

/// Claude Code keys skiff knows but does not act on (ignored at debug level).
const KNOWN_UNSUPPORTED: &[&str] = &[
    "disableAllHooks",
    "cleanupPeriodDays",
    "includeCoAuthoredBy",
    "outputStyle",
    "forceLoginMethod",
    "awsAuthRefresh",
    "awsCredentialExport",
    "spinnerTipsEnabled",
    "alwaysThinkingEnabled",
    "theme",
];

/// The settings files merged (before the environment and flags).
#[derive(Default)]
pub(super) struct Merged {
    pub model: Option<Sourced<String>>,
    pub env: BTreeMap<String, Sourced<String>>,
    pub allow: Vec<Sourced<String>>,
    pub deny: Vec<Sourced<String>>,
    pub ask: Vec<Sourced<String>>,
    pub default_mode: Option<Sourced<String>>,
    pub additional_directories: Vec<Sourced<String>>,
    pub hooks: BTreeMap<String, Vec<Sourced<Value>>>,
    pub api_key_helper: Option<Sourced<String>>,
    pub status_line: Option<Sourced<String>>,
    pub max_output_tokens: Option<Sourced<u32>>,
    pub temperature: Option<Sourced<f32>>,
    pub max_tool_result_chars: Option<Sourced<usize>>,
    pub max_conversation_messages: Option<Sourced<usize>>,
    pub compaction_strategy: Option<Sourced<CompactionStrategy>>,
    pub compaction_threshold: Option<Sourced<CompactionThreshold>>,
    pub compaction_keep_recent: Option<Sourced<usize>>,
    pub max_turns: Option<Sourced<u32>>,
    pub prompt_caching: Option<Sourced<bool>>,
    pub retries: Option<Sourced<u32>>,
    pub provider: Option<Sourced<String>>,
    pub base_url: Option<Sourced<String>>,
    pub context_window: Option<Sourced<u64>>,
    pub compact_prompt: Option<Sourced<bool>>,
    pub text_tool_calls: Option<Sourced<bool>>,
    pub pricing: Option<Sourced<Pricing>>,
    pub small_model: Option<Sourced<String>>,
    pub web_fetch_private_hosts: Vec<Sourced<String>>,
    pub sandbox_mode: Option<Sourced<SandboxMode>>,
    pub sandbox_network: Option<Sourced<NetworkPolicy>>,
    pub sandbox_fallback: Option<Sourced<SandboxFallback>>,
    pub sandbox_auto_allow: Option<Sourced<bool>>,
    pub sandbox_allowed_domains: Vec<Sourced<String>>,
    pub sandbox_unix_sockets: Vec<Sourced<String>>,
    pub sandbox_deny_read: Vec<Sourced<String>>,
    pub mcp: super::McpSettings,
    pub enabled_plugins: BTreeMap<String, Sourced<bool>>,
    pub extra_marketplaces: BTreeMap<String, Sourced<Value>>,
    pub ignored: Vec<Sourced<String>>,
}

/// Claude Code's `sandbox` keys skiff does not act on.
const SANDBOX_UNSUPPORTED: &[&str] = &[
    "excludedCommands",
    "allowUnsandboxedCommands",
    "enableWeakerNestedSandbox",
    "ignoreViolations",
];

/// Remove from an untrusted workspace's settings document the `sandbox` values that could
/// weaken the sandbox (or skip approvals): only `mode: "read-only"`, `network: "deny"` (or a
/// `network` object without `allowedDomains` and `allowUnixSockets`), `fallback: "refuse"`,
/// `autoAllowBashIfSandboxed: false` and `filesystem.denyRead` stay. The removed keys, as
/// dotted names.
pub(super) fn strip_weakening_sandbox(doc: &mut Value) -> Vec<String> {
    let mut removed = Vec::new();
    let Some(map) = doc.as_object_mut() else {
        return removed;
    };
    let Some(sandbox) = map.get_mut("sandbox") else {
        return removed;
    };
    let Some(fields) = sandbox.as_object_mut() else {
        // Not an object: parsing reports it.
        return removed;
    };
    // Inside the objects: what widens access goes.
    for (key, widening) in [
        (
            "network",
            &["allowedDomains", "allowUnixSockets", "allowLocalBinding"][..],
        ),
        ("filesystem", &["allowWrite", "allowRead"][..]),
    ] {
        if let Some(inner) = fields.get_mut(key).and_then(Value::as_object_mut) {
            for k in widening {
                if inner.remove(*k).is_some_and(|v| !v.is_null()) {
                    removed.push(format!("sandbox.{key}.{k}"));
                }
            }
        }
    }
    let keep = |key: &str, v: &Value| match key {
        "mode" => v.as_str() == Some("read-only"),
        "network" => v.as_str() == Some("deny") || v.is_object(),
        "filesystem" => v.is_object(),
        "fallback" => v.as_str() == Some("refuse"),
        "autoAllowBashIfSandboxed" => v.as_bool() == Some(false),
        k => SANDBOX_UNSUPPORTED.contains(&k),
    };
    let drop: Vec<String> = fields
        .iter()
        .filter(|(k, v)| !v.is_null() && !keep(k, v))
        .map(|(k, _)| k.clone())
        .collect();
    for key in drop {
        fields.remove(&key);
        removed.push(format!("sandbox.{key}"));
    }
    removed
}

/// `skiff.pricing`: USD per million tokens of a model skiff has no price for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pricing {
    /// Uncached input.
    pub input_per_mtok: f64,
    /// Output.
    pub output_per_mtok: f64,
    /// Cache reads (default 0.1× input).
    pub cache_read_per_mtok: Option<f64>,
}

/// Parse JSON; a syntax error names `what` (the file), the line and the column, then `fix`.
pub(super) fn parse_json(text: &str, what: &str, fix: &str) -> Result<Value> {
    if text.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    serde_json::from_str(text).map_err(|e| {
        let msg = e.to_string();
        let msg = msg.split(" at line ").next().unwrap_or(&msg).to_owned();
        invalid!(
            "invalid JSON in {what} at line {}, column {}: {msg}. {fix}",
            e.line(),
            e.column()
        )
    })
}

fn at<T>(value: T, source: &Source) -> Option<Sourced<T>> {
    Some(Sourced::new(value, source.clone()))
}

fn invalid<T>(key: &str, source: &Source, expected: &str) -> Result<T> {
    bail!("invalid settings in {source}: `{key}` must be {expected}")
}

fn object<'a>(v: &'a Value, key: &str, source: &Source) -> Result<&'a Map<String, Value>> {
    match v {
        Value::Object(m) => Ok(m),
        _ => invalid(key, source, "an object"),
    }
}

fn string(v: &Value, key: &str, source: &Source) -> Result<String> {
    match v {
        Value::String(s) if !s.trim().is_empty() => Ok(s.clone()),
        _ => invalid(key, source, "a non-empty string"),
    }
}

fn strings(v: &Value, key: &str, source: &Source) -> Result<Vec<Sourced<String>>> {
    let Value::Array(items) = v else {
        return invalid(key, source, "an array of strings");
    };
    items
        .iter()
        .map(|i| match i {
            Value::String(s) => Ok(Sourced::new(s.clone(), source.clone())),
            _ => invalid(key, source, "an array of strings"),
        })
        .collect()
}

fn whole(v: &Value, key: &str, source: &Source, min: u64) -> Result<u64> {
    match v.as_u64() {
        Some(n) if n >= min => Ok(n),
        _ if min > 0 => invalid(key, source, "a positive whole number"),
        _ => invalid(key, source, "a whole number"),
    }
}

fn narrow<T: TryFrom<u64>>(n: u64, key: &str, source: &Source) -> Result<T> {
    T::try_from(n).or_else(|_| invalid(key, source, "a smaller number"))
}

impl Merged {
    /// Fold one document (a settings file or `--settings`) in.
    pub fn apply(&mut self, doc: &Value, source: &Source) -> Result<()> {
        let Value::Object(map) = doc else {
            bail!("invalid settings in {source}: the top level must be a JSON object");
        };
        for (key, v) in map {
            if v.is_null() {
                continue;
            }
            match key.as_str() {
                "model" => self.model = Some(Sourced::new(string(v, key, source)?, source.clone())),
                "env" => {
                    for (name, val) in object(v, key, source)? {
                        let val = match val {
                            Value::String(s) => s.clone(),
                            Value::Number(n) => n.to_string(),
                            Value::Bool(b) => b.to_string(),
                            _ => return invalid(&format!("env.{name}"), source, "a string"),
                        };
                        self.env
                            .insert(name.clone(), Sourced::new(val, source.clone()));
                    }
                }
                "permissions" => self.apply_permissions(object(v, key, source)?, source)?,
                "hooks" => {
                    for (event, groups) in object(v, key, source)? {
                        let Value::Array(groups) = groups else {
                            return invalid(&format!("hooks.{event}"), source, "an array");
                        };
                        let list = self.hooks.entry(event.clone()).or_default();
                        for g in groups {
                            if !list.iter().any(|s| s.value == *g) {
                                list.extend(at(g.clone(), source));
                            }
                        }
                    }
                }
                "apiKeyHelper" => {
                    self.api_key_helper =
                        Some(Sourced::new(string(v, key, source)?, source.clone()));
                }
                // `{"type": "command", "command": "…"}`: the terminal UI's status line.
                "statusLine" => {
                    let o = object(v, key, source)?;
                    match (o.get("type").and_then(Value::as_str), o.get("command")) {
                        (Some("command") | None, Some(c)) => {
                            let command = string(c, "statusLine.command", source)?;
                            self.status_line = Some(Sourced::new(command, source.clone()));
                        }
                        _ => self.ignore(key, source, "not a command status line"),
                    }
                }
                "skiff" => self.apply_skiff(object(v, key, source)?, source)?,
                "sandbox" => self.apply_sandbox(object(v, key, source)?, source)?,
                // Read by `mcp_config` (entries are checked there: a bad one is a failed server).
                "mcpServers" => self
                    .mcp
                    .servers
                    .push(Sourced::new(v.clone(), source.clone())),
                "enableAllProjectMcpServers" => match v {
                    Value::Bool(b) => self.mcp.enable_all_project_servers = at(*b, source),
                    _ => return invalid(key, source, "true or false"),
                },
                "enabledMcpjsonServers" => {
                    self.mcp.enabled_mcpjson.extend(strings(v, key, source)?)
                }
                "disabledMcpjsonServers" => {
                    self.mcp.disabled_mcpjson.extend(strings(v, key, source)?)
                }
                // Plugins: `{"name@marketplace": true|false}`, merged by id (later wins).
                "enabledPlugins" => {
                    for (id, on) in object(v, key, source)? {
                        match on {
                            Value::Bool(b) => {
                                self.enabled_plugins
                                    .insert(id.clone(), Sourced::new(*b, source.clone()));
                            }
                            Value::Null => {}
                            _ => {
                                return invalid(
                                    &format!("enabledPlugins.{id}"),
                                    source,
                                    "true or false",
                                );
                            }
                        }
                    }
                }
                // Marketplaces a repository suggests (`skiff plugin marketplace list` shows them).
                "extraKnownMarketplaces" => {
                    for (name, entry) in object(v, key, source)? {
                        self.extra_marketplaces
                            .insert(name.clone(), Sourced::new(entry.clone(), source.clone()));
                    }
                }
                "$schema" => {}
                k if KNOWN_UNSUPPORTED.contains(&k) => self.ignore(k, source, "not supported"),
                k => self.ignore(k, source, "unknown key"),
            }
        }
        Ok(())
    }

    fn ignore(&mut self, key: &str, source: &Source, why: &str) {
        tracing::debug!(key, %source, why, "settings key ignored");
        self.ignored
            .push(Sourced::new(key.to_owned(), source.clone()));
    }

    fn apply_permissions(&mut self, map: &Map<String, Value>, source: &Source) -> Result<()> {
        for (key, v) in map {
            if v.is_null() {
                continue;
            }
            let path = format!("permissions.{key}");
            match key.as_str() {
                "allow" => self.allow.extend(strings(v, &path, source)?),
                "deny" => self.deny.extend(strings(v, &path, source)?),
                "ask" => self.ask.extend(strings(v, &path, source)?),
                "additionalDirectories" => self
                    .additional_directories
                    .extend(strings(v, &path, source)?),
                "defaultMode" => {
                    let mode = string(v, &path, source)?;
                    if !PERMISSION_MODES.contains(&mode.as_str()) {
                        return invalid(
                            &path,
                            source,
                            &format!("one of {}", PERMISSION_MODES.join(", ")),
                        );
                    }
                    let mode = if mode == "manual" {
                        "default".to_owned()
                    } else {
                        mode
                    };
                    self.default_mode = Some(Sourced::new(mode, source.clone()));
                }
                _ => self.ignore(&path, source, "not supported"),
            }
        }
        Ok(())
    }

    /// `sandbox`: skiff's `mode`, `network` (a string; Claude Code's object form is ignored),
    /// `fallback`, and Claude Code's `enabled` (false = off, true = workspace-write unless `mode`
    /// says otherwise) and `autoAllowBashIfSandboxed`.
    fn apply_sandbox(&mut self, map: &Map<String, Value>, source: &Source) -> Result<()> {
        fn named<T: std::str::FromStr>(
            v: &Value,
            p: &str,
            source: &Source,
            names: &[&str],
        ) -> Result<T> {
            match v.as_str().and_then(|s| s.parse().ok()) {
                Some(t) => Ok(t),
                None => {
                    let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
                    invalid(p, source, &format!("one of {}", quoted.join(", ")))
                }
            }
        }
        for (key, v) in map {
            if v.is_null() {
                continue;
            }
            let path = format!("sandbox.{key}");
            let p = path.as_str();
            match key.as_str() {
                "mode" => {
                    self.sandbox_mode = at(named(v, p, source, SandboxMode::NAMES)?, source);
                }
                "enabled" => match v {
                    // `mode` in the same object wins.
                    Value::Bool(_) if map.get("mode").is_some_and(|m| !m.is_null()) => {}
                    Value::Bool(true) => {
                        self.sandbox_mode = at(SandboxMode::WorkspaceWrite, source)
                    }
                    Value::Bool(false) => self.sandbox_mode = at(SandboxMode::Off, source),
                    _ => return invalid(p, source, "true or false"),
                },
                "network" if v.is_object() => {
                    self.apply_sandbox_network(object(v, p, source)?, source)?
                }
                "filesystem" => self.apply_sandbox_filesystem(object(v, p, source)?, source)?,
                "network" => {
                    self.sandbox_network = at(named(v, p, source, NetworkPolicy::NAMES)?, source);
                }
                "fallback" => {
                    self.sandbox_fallback =
                        at(named(v, p, source, SandboxFallback::NAMES)?, source);
                }
                "autoAllowBashIfSandboxed" => match v {
                    Value::Bool(b) => self.sandbox_auto_allow = at(*b, source),
                    _ => return invalid(p, source, "true or false"),
                },
                k if SANDBOX_UNSUPPORTED.contains(&k) => self.ignore(p, source, "not supported"),
                _ => self.ignore(p, source, "unknown key"),
            }
        }
        Ok(())
    }

    /// `sandbox.network` as Claude Code writes it: `allowedDomains`, `allowUnixSockets`
    /// (lists), `allowLocalBinding` (always true in skiff's sandbox, which has its own
    /// loopback), and skiff's `mode` (`allow`, `proxy`, `deny`).
    fn apply_sandbox_network(&mut self, map: &Map<String, Value>, source: &Source) -> Result<()> {
        for (key, v) in map {
            if v.is_null() {
                continue;
            }
            let path = format!("sandbox.network.{key}");
            let p = path.as_str();
            match key.as_str() {
                "allowedDomains" => self.sandbox_allowed_domains.extend(strings(v, p, source)?),
                "allowUnixSockets" => self.sandbox_unix_sockets.extend(strings(v, p, source)?),
                "allowLocalBinding" => match v {
                    Value::Bool(_) => {}
                    _ => return invalid(p, source, "true or false"),
                },
                "mode" => match v.as_str().and_then(|s| s.parse::<NetworkPolicy>().ok()) {
                    Some(policy) => self.sandbox_network = at(policy, source),
                    None => {
                        let names: Vec<String> = NetworkPolicy::NAMES
                            .iter()
                            .map(|n| format!("\"{n}\""))
                            .collect();
                        return invalid(p, source, &format!("one of {}", names.join(", ")));
                    }
                },
                "httpProxyPort" | "socksProxyPort" | "deniedDomains" => {
                    self.ignore(p, source, "not supported")
                }
                _ => self.ignore(p, source, "unknown key"),
            }
        }
        Ok(())
    }

    /// `sandbox.filesystem`: `denyRead` (paths and patterns commands cannot read).
    fn apply_sandbox_filesystem(
        &mut self,
        map: &Map<String, Value>,
        source: &Source,
    ) -> Result<()> {
        for (key, v) in map {
            if v.is_null() {
                continue;
            }
            let path = format!("sandbox.filesystem.{key}");
            let p = path.as_str();
            match key.as_str() {
                "denyRead" => self.sandbox_deny_read.extend(strings(v, p, source)?),
                "allowWrite" | "denyWrite" | "allowRead" => self.ignore(p, source, "not supported"),
                _ => self.ignore(p, source, "unknown key"),
            }
        }
        Ok(())
    }

    fn apply_skiff(&mut self, map: &Map<String, Value>, source: &Source) -> Result<()> {
        for (key, v) in map {
            if v.is_null() {
                continue;
            }
            let path = format!("skiff.{key}");
            let p = path.as_str();
            match key.as_str() {
                "maxOutputTokens" => {
                    self.max_output_tokens =
                        at(narrow(whole(v, p, source, 1)?, p, source)?, source);
                }
                "temperature" => match v.as_f64() {
                    Some(t) if (0.0..=1.0).contains(&t) => self.temperature = at(t as f32, source),
                    _ => return invalid(p, source, "a number from 0 to 1"),
                },
                "maxToolResultChars" => {
                    self.max_tool_result_chars =
                        at(narrow(whole(v, p, source, 1)?, p, source)?, source);
                }
                "maxConversationMessages" => {
                    self.max_conversation_messages =
                        at(narrow(whole(v, p, source, 1)?, p, source)?, source);
                }
                "maxTurns" => {
                    self.max_turns = at(narrow(whole(v, p, source, 1)?, p, source)?, source)
                }
                "retries" => self.retries = at(narrow(whole(v, p, source, 0)?, p, source)?, source),
                "promptCaching" => match v {
                    Value::Bool(b) => self.prompt_caching = at(*b, source),
                    _ => return invalid(p, source, "true or false"),
                },
                "compaction" => self.apply_compaction(object(v, p, source)?, source)?,
                "provider" => {
                    let name = string(v, p, source)?;
                    match crate::provider::parse_provider(&name) {
                        Ok(n) => self.provider = at(n, source),
                        Err(_) => {
                            return invalid(
                                p,
                                source,
                                &format!("one of {}", crate::provider::PROVIDER_NAMES.join(", ")),
                            );
                        }
                    }
                }
                "baseUrl" => self.base_url = at(string(v, p, source)?, source),
                "contextWindow" => self.context_window = at(whole(v, p, source, 1)?, source),
                "compactPrompt" => match v {
                    Value::Bool(b) => self.compact_prompt = at(*b, source),
                    _ => return invalid(p, source, "true or false"),
                },
                "pricing" => {
                    let m = object(v, p, source)?;
                    let num = |k: &str| m.get(k).and_then(Value::as_f64).filter(|n| *n >= 0.0);
                    match (num("inputPerMtok"), num("outputPerMtok")) {
                        (Some(i), Some(o)) => {
                            self.pricing = at(
                                Pricing {
                                    input_per_mtok: i,
                                    output_per_mtok: o,
                                    cache_read_per_mtok: num("cacheReadPerMtok"),
                                },
                                source,
                            );
                        }
                        _ => {
                            return invalid(
                                p,
                                source,
                                "{\"inputPerMtok\": USD, \"outputPerMtok\": USD} per million tokens",
                            );
                        }
                    }
                }
                "textToolCalls" => match v {
                    Value::Bool(b) => self.text_tool_calls = at(*b, source),
                    _ => return invalid(p, source, "true or false"),
                },
                "smallModel" => self.small_model = at(string(v, p, source)?, source),
                "webFetch" => {
                    for (k, w) in object(v, p, source)? {
                        let path = format!("skiff.webFetch.{k}");
                        match k.as_str() {
                            _ if w.is_null() => {}
                            "allowPrivateHosts" => self
                                .web_fetch_private_hosts
                                .extend(strings(w, &path, source)?),
                            _ => self.ignore(&path, source, "unknown key"),
                        }
                    }
                }
                _ => self.ignore(p, source, "unknown key"),
            }
        }
        Ok(())
    }

    fn apply_compaction(&mut self, map: &Map<String, Value>, source: &Source) -> Result<()> {
        for (key, v) in map {
            if v.is_null() {
                continue;
            }
            let path = format!("skiff.compaction.{key}");
            let p = path.as_str();
            match key.as_str() {
                "strategy" => match v.as_str().and_then(CompactionStrategy::parse) {
                    Some(st) => self.compaction_strategy = at(st, source),
                    None => return invalid(p, source, "\"summarize\", \"trim\" or \"off\""),
                },
                "threshold" => {
                    let t = match v {
                        Value::String(text) => CompactionThreshold::parse_str(text),
                        Value::Number(n) => n
                            .as_u64()
                            .filter(|n| *n > 0)
                            .map(CompactionThreshold::Tokens),
                        _ => None,
                    };
                    match t {
                        Some(t) => self.compaction_threshold = at(t, source),
                        None => {
                            return invalid(
                                p,
                                source,
                                "a percentage of the context window (\"80%\") or a number of tokens",
                            );
                        }
                    }
                }
                "keepRecent" => {
                    self.compaction_keep_recent =
                        at(narrow(whole(v, p, source, 0)?, p, source)?, source);
                }
                _ => self.ignore(p, source, "unknown key"),
            }
        }
        Ok(())
    }
}
