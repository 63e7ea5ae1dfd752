//! The environment and flag layers over the merged settings files: each effective value is the
//! last one set (default → files → environment → flags); rule lists are pooled and de-duplicated.

#[allow(unused_imports)]
use crate::error::{ConfigError, Result, bail, invalid};
use std::path::{Path, PathBuf};

use skiff_core::AgentConfig;

use super::layers::Merged;
use super::{
    Compaction, CompactionStrategy, CompactionThreshold, EnvLookup, EnvOrigin, FileStatus,
    Permissions, SandboxSettings, Settings, Source, Sourced, absolute,
};
use crate::overrides::Overrides;

/// `~/x` → `$HOME/x`; relative → against `cwd`.
fn expand_dir(raw: &str, cwd: &Path, home: Option<&Path>) -> PathBuf {
    match (raw.strip_prefix("~/").or((raw == "~").then_some("")), home) {
        (Some(rest), Some(h)) => h.join(rest),
        _ => absolute(cwd, Path::new(raw)),
    }
}

/// The last source that set a value wins.
fn latest<T>(layers: impl IntoIterator<Item = Option<Sourced<T>>>) -> Option<Sourced<T>> {
    layers.into_iter().flatten().last()
}

/// The first of `vars` set in the lookup, parsed; a value that does not parse is an error.
fn from_env<T>(
    lookup: &EnvLookup,
    vars: &[&str],
    what: &str,
    parse: impl Fn(&str) -> Option<T>,
) -> Result<Option<Sourced<T>>> {
    for var in vars {
        if let Some(raw) = lookup.get(var) {
            let source = lookup.source(var).unwrap_or(Source::Default);
            return match parse(raw.trim()) {
                Some(v) => Ok(Some(Sourced::new(v, source))),
                None => bail!("invalid {var} ({source}): `{}` is not {what}", raw.trim()),
            };
        }
    }
    Ok(None)
}

fn flag<T>(value: Option<T>, name: &'static str) -> Option<Sourced<T>> {
    value.map(|v| Sourced::new(v, Source::Flag(name)))
}

fn positive<T: std::str::FromStr + PartialOrd + Default>(s: &str) -> Option<T> {
    s.parse::<T>().ok().filter(|n| *n > T::default())
}

/// Apply the environment and flag layers over the merged files, one concern at a time: the
/// model and what requests ask for, the run's limits, compaction, the sandbox, permissions.
#[allow(clippy::too_many_arguments)]
pub(super) fn resolve(
    mut m: Merged,
    lookup: &EnvLookup,
    args: &Overrides,
    cwd: &Path,
    home: Option<&Path>,
    files: Vec<FileStatus>,
    dotenv_files: Vec<FileStatus>,
    skiff_home: Option<PathBuf>,
) -> Result<Settings> {
    let model = model_settings(&mut m, lookup, args)?;
    let limits = limit_settings(&mut m, lookup, args)?;
    let (compaction, compact_prompt) = compaction_settings(&mut m, lookup, args)?;
    let mode = permission_mode(&mut m, args);
    let sandbox = resolve_sandbox(SandboxFiles::take(&mut m), lookup, args, cwd)?;
    let permissions = permission_rules(&mut m, args, cwd, home, mode);
    Ok(Settings {
        cwd: cwd.to_path_buf(),
        skiff_home,
        home: None,
        model: model.model,
        max_output_tokens: model.max_output_tokens,
        temperature: model.temperature,
        max_tool_result_chars: limits.max_tool_result_chars,
        max_conversation_messages: limits.max_conversation_messages,
        compaction,
        max_turns: limits.max_turns,
        prompt_caching: model.prompt_caching,
        retries: model.retries,
        provider: model.provider,
        base_url: model.base_url,
        context_window: model.context_window,
        compact_prompt,
        text_tool_calls: model.text_tool_calls,
        pricing: m.pricing,
        small_model: model.small_model,
        web_fetch_private_hosts: dedup_by_value(m.web_fetch_private_hosts),
        permissions,
        sandbox,
        env: m.env,
        hooks: m.hooks,
        api_key_helper: m.api_key_helper,
        status_line: m.status_line,
        mcp: m.mcp,
        enabled_plugins: m.enabled_plugins,
        extra_marketplaces: m.extra_marketplaces,
        ignored: m.ignored,
        files,
        dotenv_files,
        lookup: lookup.clone(),
        trusted: false,
        trust_warnings: Vec::new(),
    })
}

const WHOLE: &str = "a positive whole number";

/// A value that always has a default (an error only if a layer lost it).
fn required<T>(value: Option<Sourced<T>>, name: &str) -> Result<Sourced<T>> {
    match value {
        Some(v) => Ok(v),
        None => bail!("internal error: the setting {name} lost its default"),
    }
}

/// The model, the provider and what each request asks for.
struct ModelSettings {
    model: Sourced<String>,
    max_output_tokens: Sourced<u32>,
    temperature: Option<Sourced<f32>>,
    prompt_caching: Sourced<bool>,
    retries: Option<Sourced<u32>>,
    provider: Sourced<String>,
    base_url: Option<Sourced<String>>,
    context_window: Option<Sourced<u64>>,
    small_model: Option<Sourced<String>>,
    text_tool_calls: Sourced<bool>,
}

/// `model`, ANTHROPIC_MODEL, `--model`; the output limit, temperature, prompt caching,
/// retries; the provider, its URL and window; the small model; text tool calls.
fn model_settings(m: &mut Merged, lookup: &EnvLookup, args: &Overrides) -> Result<ModelSettings> {
    let defaults = AgentConfig::default();
    let model = latest([
        Some(Sourced::default(crate::builder::DEFAULT_MODEL.to_owned())),
        m.model.take(),
        from_env(lookup, &["ANTHROPIC_MODEL"], "a model name", |s| {
            Some(s.to_owned())
        })?,
        flag(args.model.clone(), "--model"),
    ]);
    let max_output_tokens = latest([
        Some(Sourced::default(defaults.max_tokens)),
        m.max_output_tokens.take(),
        from_env(
            lookup,
            &["SKIFF_MAX_OUTPUT_TOKENS", "CLAUDE_CODE_MAX_OUTPUT_TOKENS"],
            WHOLE,
            positive,
        )?,
        flag(args.max_tokens, "--max-tokens"),
    ]);
    let temperature = latest([
        m.temperature.take(),
        from_env(
            lookup,
            &["SKIFF_TEMPERATURE"],
            "a number from 0 to 1",
            |s| s.parse::<f32>().ok().filter(|t| (0.0..=1.0).contains(t)),
        )?,
    ]);
    let prompt_caching = latest([
        Some(Sourced::default(defaults.prompt_caching)),
        m.prompt_caching.take(),
        // DISABLE_PROMPT_CACHING: set and not "0" turns caching off; "0" leaves it alone.
        from_env(lookup, &["DISABLE_PROMPT_CACHING"], "", |s| Some(s != "0"))?
            .filter(|d| d.value)
            .map(|d| Sourced::new(false, d.source)),
        flag(
            args.no_prompt_caching.then_some(false),
            "--no-prompt-caching",
        ),
    ]);
    let retries = latest([
        m.retries.take(),
        from_env(lookup, &["SKIFF_MAX_RETRIES"], "a whole number", |s| {
            s.parse().ok()
        })?,
    ]);
    let provider = latest([
        Some(Sourced::default("anthropic".to_owned())),
        m.provider.take(),
        from_env(lookup, &["SKIFF_PROVIDER"], "a provider name", |s| {
            crate::provider::parse_provider(s).ok()
        })?,
        flag(args.provider.clone(), "--provider"),
    ]);
    let base_url = latest([m.base_url.take(), flag(args.base_url.clone(), "--base-url")]);
    let context_window = latest([
        m.context_window.take(),
        from_env(lookup, &["SKIFF_CONTEXT_WINDOW"], WHOLE, |s| {
            s.parse::<u64>().ok().filter(|n| *n > 0)
        })?,
    ]);
    let small_model = latest([
        m.small_model.take(),
        from_env(
            lookup,
            &[
                "ANTHROPIC_SMALL_FAST_MODEL",
                "ANTHROPIC_DEFAULT_HAIKU_MODEL",
            ],
            "a model name",
            |s| (!s.is_empty()).then(|| s.to_owned()),
        )?,
    ]);
    let text_tool_calls = latest([
        Some(Sourced::default(true)),
        m.text_tool_calls.take(),
        from_env(lookup, &["SKIFF_TEXT_TOOL_CALLS"], "1 or 0", bool_var)?,
    ]);
    Ok(ModelSettings {
        model: required(model, "model")?,
        max_output_tokens: required(max_output_tokens, "maxOutputTokens")?,
        temperature,
        prompt_caching: required(prompt_caching, "promptCaching")?,
        retries,
        provider: required(provider, "provider")?,
        base_url,
        context_window,
        small_model,
        text_tool_calls: required(text_tool_calls, "textToolCalls")?,
    })
}

/// The run's limits.
struct Limits {
    max_tool_result_chars: Sourced<usize>,
    max_conversation_messages: Option<Sourced<usize>>,
    max_turns: Option<Sourced<u32>>,
}

/// The size of a tool result, of the conversation, the number of turns.
fn limit_settings(m: &mut Merged, lookup: &EnvLookup, args: &Overrides) -> Result<Limits> {
    let max_tool_result_chars = latest([
        Some(Sourced::default(
            AgentConfig::default().max_tool_result_chars,
        )),
        m.max_tool_result_chars.take(),
        from_env(lookup, &["SKIFF_MAX_TOOL_RESULT_CHARS"], WHOLE, positive)?,
    ]);
    let max_conversation_messages = latest([
        m.max_conversation_messages.take(),
        from_env(
            lookup,
            &["SKIFF_MAX_CONVERSATION_MESSAGES"],
            WHOLE,
            positive,
        )?,
    ]);
    let max_turns = latest([
        args.default_max_turns.map(Sourced::default),
        m.max_turns.take(),
        from_env(lookup, &["SKIFF_MAX_TURNS"], WHOLE, positive)?,
        flag(args.max_turns, "--max-turns"),
    ]);
    Ok(Limits {
        max_tool_result_chars: required(max_tool_result_chars, "maxToolResultChars")?,
        max_conversation_messages,
        max_turns,
    })
}

/// How the history is compacted, and whether the user is asked first (`compactPrompt`).
fn compaction_settings(
    m: &mut Merged,
    lookup: &EnvLookup,
    args: &Overrides,
) -> Result<(Compaction, Sourced<bool>)> {
    let compaction = Compaction {
        strategy: latest([
            m.compaction_strategy.take(),
            from_env(
                lookup,
                &["SKIFF_COMPACTION"],
                "summarize, trim or off",
                CompactionStrategy::parse,
            )?,
        ]),
        threshold: latest([
            m.compaction_threshold.take(),
            from_env(
                lookup,
                &["SKIFF_COMPACTION_THRESHOLD"],
                "a percentage (\"80%\") or a number of tokens",
                CompactionThreshold::parse_str,
            )?,
        ]),
        keep_recent: latest([
            m.compaction_keep_recent.take(),
            from_env(
                lookup,
                &["SKIFF_COMPACTION_KEEP_RECENT"],
                "a whole number",
                |s| s.parse().ok(),
            )?,
        ]),
    };
    let compact_prompt = latest([
        Some(Sourced::default(false)),
        m.compact_prompt.take(),
        from_env(lookup, &["SKIFF_COMPACT_PROMPT"], "1 or 0", bool_var)?,
        flag(args.compact_prompt.then_some(true), "--compact-prompt"),
    ]);
    Ok((compaction, required(compact_prompt, "compactPrompt")?))
}

/// `defaultMode`, `--permission-mode`, `--dangerously-skip-permissions`.
fn permission_mode(m: &mut Merged, args: &Overrides) -> Sourced<String> {
    latest([
        Some(Sourced::default(
            AgentConfig::default().permission_mode.as_str().to_owned(),
        )),
        m.default_mode.take(),
        flag(args.permission_mode.clone(), "--permission-mode"),
        flag(
            args.dangerously_skip_permissions
                .then(|| "bypassPermissions".to_owned()),
            "--dangerously-skip-permissions",
        ),
    ])
    .unwrap_or_else(|| Sourced::default("default".to_owned()))
}

/// The rule lists (files and `--allowedTools` / `--disallowedTools`, pooled) and the
/// additional directories (files and `--add-dir`).
fn permission_rules(
    m: &mut Merged,
    args: &Overrides,
    cwd: &Path,
    home: Option<&Path>,
    mode: Sourced<String>,
) -> Permissions {
    let rules = |mut list: Vec<Sourced<String>>, extra: &[String], name: &'static str| {
        list.extend(
            extra
                .iter()
                .map(|r| Sourced::new(r.clone(), Source::Flag(name))),
        );
        dedup_by_value(list)
    };
    let mut dirs: Vec<Sourced<PathBuf>> = std::mem::take(&mut m.additional_directories)
        .into_iter()
        .map(|d| Sourced::new(expand_dir(&d.value, cwd, home), d.source))
        .collect();
    dirs.extend(
        args.add_dirs
            .iter()
            .map(|d| Sourced::new(absolute(cwd, d), Source::Flag("--add-dir"))),
    );
    Permissions {
        allow: rules(
            std::mem::take(&mut m.allow),
            &args.allowed_tools,
            "--allowedTools",
        ),
        deny: rules(
            std::mem::take(&mut m.deny),
            &args.disallowed_tools,
            "--disallowedTools",
        ),
        ask: dedup_by_value(std::mem::take(&mut m.ask)),
        mode,
        additional_directories: dedup_by_value(dirs),
    }
}

/// The `sandbox` values of the merged files.
struct SandboxFiles {
    mode: Option<Sourced<skiff_tools::sandbox::SandboxMode>>,
    network: Option<Sourced<skiff_tools::sandbox::NetworkPolicy>>,
    fallback: Option<Sourced<skiff_tools::sandbox::SandboxFallback>>,
    auto_allow: Option<Sourced<bool>>,
    allowed_domains: Vec<Sourced<String>>,
    unix_sockets: Vec<Sourced<String>>,
    deny_read: Vec<Sourced<String>>,
}

impl SandboxFiles {
    /// The `sandbox` values, taken out of the merged files.
    fn take(m: &mut Merged) -> Self {
        Self {
            mode: m.sandbox_mode.take(),
            network: m.sandbox_network.take(),
            fallback: m.sandbox_fallback.take(),
            auto_allow: m.sandbox_auto_allow.take(),
            allowed_domains: dedup_by_value(std::mem::take(&mut m.sandbox_allowed_domains)),
            unix_sockets: dedup_by_value(std::mem::take(&mut m.sandbox_unix_sockets)),
            deny_read: dedup_by_value(std::mem::take(&mut m.sandbox_deny_read)),
        }
    }
}

/// `sandbox`: files, then SKIFF_SANDBOX / SKIFF_SANDBOX_NETWORK, then `--sandbox` /
/// `--sandbox-network`. Approval-free Bash (`autoAllowBashIfSandboxed`) defaults on: the
/// sandbox contains the commands, and what they change among git hooks, settings and MCP
/// configuration is put back (`skiff_tools::protected`).
fn resolve_sandbox(
    m: SandboxFiles,
    lookup: &EnvLookup,
    args: &Overrides,
    cwd: &Path,
) -> Result<SandboxSettings> {
    // The workspace's `.env` is a file sandboxed commands may write: what it says about the
    // sandbox would hold for the next session's commands (`SKIFF_SANDBOX_NETWORK=allow`
    // planted by one). The user's environment, `~/.skiff/.env` and settings still count.
    let usable = |var: &str| match lookup.source(var) {
        Some(Source::Env {
            origin: EnvOrigin::DotEnv(path),
            ..
        }) if path.starts_with(cwd) => {
            tracing::warn!(
                "{var} in {} ignored: a workspace .env cannot change the sandbox",
                path.display()
            );
            false
        }
        _ => true,
    };
    use skiff_tools::sandbox::{NetworkPolicy, SandboxFallback, SandboxMode};
    let mode_names = SandboxMode::NAMES.join(", ");
    let network_names = NetworkPolicy::NAMES.join(" or ");
    let mode = latest([
        Some(Sourced::default(SandboxMode::WorkspaceWrite)),
        m.mode,
        if usable("SKIFF_SANDBOX") {
            from_env(lookup, &["SKIFF_SANDBOX"], &mode_names, |s| s.parse().ok())?
        } else {
            None
        },
        match &args.sandbox {
            Some(text) => Some(Sourced::new(
                text.parse::<SandboxMode>()
                    .map_err(|e| invalid!("--sandbox: {e}"))?,
                Source::Flag("--sandbox"),
            )),
            None => None,
        },
    ])
    .unwrap_or_else(|| Sourced::default(SandboxMode::default()));
    let network = latest([
        Some(Sourced::default(NetworkPolicy::Proxy)),
        m.network,
        if usable("SKIFF_SANDBOX_NETWORK") {
            from_env(lookup, &["SKIFF_SANDBOX_NETWORK"], &network_names, |s| {
                s.parse().ok()
            })?
        } else {
            None
        },
        match &args.sandbox_network {
            Some(text) => Some(Sourced::new(
                text.parse::<NetworkPolicy>()
                    .map_err(|e| invalid!("--sandbox-network: {e}"))?,
                Source::Flag("--sandbox-network"),
            )),
            None => None,
        },
    ])
    .unwrap_or_else(|| Sourced::default(NetworkPolicy::default()));
    let fallback = m
        .fallback
        .unwrap_or_else(|| Sourced::default(SandboxFallback::default()));
    // As Claude Code's sandbox mode: sandboxed commands run without approval unless a setting
    // says otherwise — or a host answers approvals (`--permission-prompt-tool`, an Agent SDK's
    // can_use_tool): a host that registered an approval callback sees every command unless
    // it turns this on itself — or the command line (an SDK's `allowed_tools`) gives an allow
    // list naming Bash patterns: commands outside it ask (headless: are denied), as with
    // Claude Code, unless a setting turns auto-allow on explicitly. Allow rules in settings
    // files keep adding to the auto-allow.
    let host_approves = args.permission_prompt_tool.is_some();
    let allow_list = flag_allows_bash_patterns(&args.allowed_tools);
    let auto_allow_bash = m
        .auto_allow
        .unwrap_or_else(|| Sourced::default(!host_approves && !allow_list));
    Ok(SandboxSettings {
        mode,
        network,
        fallback,
        auto_allow_bash,
        allowed_domains: m.allowed_domains,
        allow_unix_sockets: m.unix_sockets,
        deny_read: m.deny_read,
    })
}

/// Whether allow rules given on the command line name Bash patterns (`Bash(git:*)`): an allow
/// list for commands. A bare `Bash` allows every command anyway.
fn flag_allows_bash_patterns(rules: &[String]) -> bool {
    rules.iter().any(|r| {
        r.trim()
            .strip_prefix("Bash(")
            .is_some_and(|rest| rest.ends_with(')'))
    })
}

/// Keep the first occurrence of each value (lists are pooled across layers).
fn dedup_by_value<T: PartialEq>(list: Vec<Sourced<T>>) -> Vec<Sourced<T>> {
    let mut out: Vec<Sourced<T>> = Vec::with_capacity(list.len());
    for item in list {
        if !out.iter().any(|o| o.value == item.value) {
            out.push(item);
        }
    }
    out
}

/// A yes/no variable: 1/true/yes or 0/false/no.
fn bool_var(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}
