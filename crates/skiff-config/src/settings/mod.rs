//! Settings: the JSON settings files (user, project, local, `--settings`), `.env` files,
//! environment variables and flags merged into one effective configuration, every value with
//! the source it came from. Order, later wins: defaults → user → project → local → `--settings`
//! → environment (real env > workspace `.env` > home `.env` > settings `env`) → flags.
//!
//! Environment variables per key (the first set wins): `model` ANTHROPIC_MODEL;
//! `skiff.maxOutputTokens` SKIFF_MAX_OUTPUT_TOKENS, CLAUDE_CODE_MAX_OUTPUT_TOKENS;
//! `skiff.temperature` SKIFF_TEMPERATURE; `skiff.maxToolResultChars` SKIFF_MAX_TOOL_RESULT_CHARS;
//! `skiff.maxConversationMessages` SKIFF_MAX_CONVERSATION_MESSAGES; `skiff.compaction.*`
//! SKIFF_COMPACTION, SKIFF_COMPACTION_THRESHOLD, SKIFF_COMPACTION_KEEP_RECENT; `skiff.maxTurns`
//! SKIFF_MAX_TURNS; `skiff.promptCaching` DISABLE_PROMPT_CACHING (set, not "0" = off);
//! `skiff.retries` SKIFF_MAX_RETRIES; `sandbox.mode` SKIFF_SANDBOX; `sandbox.network`
//! SKIFF_SANDBOX_NETWORK. SKIFF_HOME, HOME and CLAUDE_CONFIG_DIR come from the real
//! environment only (they locate the files).

mod env_lookup;
mod layers;
mod resolve;
#[cfg(test)]
mod tests;

#[allow(unused_imports)]
use crate::error::{ConfigError, Result, bail, invalid};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;
use skiff_core::AgentConfig;

pub use self::env_lookup::{EnvLookup, EnvOrigin};
use self::layers::{Merged, parse_json};
use self::resolve::resolve;
use crate::environment::Environment;
use crate::overrides::Overrides;

/// Permission modes accepted in `permissions.defaultMode`.
pub const PERMISSION_MODES: &[&str] = &[
    "default",
    "manual",
    "acceptEdits",
    "plan",
    "auto",
    "dontAsk",
    "bypassPermissions",
];

/// A settings-file layer (`--setting-sources` selects which load).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    /// `~/.claude/settings.json`, `~/.skiff/settings.json`.
    User,
    /// `<cwd>/.claude/settings.json`, `<cwd>/.skiff/settings.json`.
    Project,
    /// `<cwd>/.claude/settings.local.json`, `<cwd>/.skiff/settings.local.json`.
    Local,
}

impl Layer {
    /// All layers, lowest precedence first.
    pub const ALL: [Layer; 3] = [Layer::User, Layer::Project, Layer::Local];

    /// The name used by `--setting-sources`.
    pub fn name(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Project => "project",
            Self::Local => "local",
        }
    }

    /// Parse a `--setting-sources` list (`user,project,local`; empty = none).
    pub fn parse_list(list: &str) -> Result<Vec<Layer>> {
        let mut out = Vec::new();
        for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let layer = Self::ALL
                .into_iter()
                .find(|l| l.name() == name)
                .ok_or_else(|| {
                    ConfigError::usage(format!(
                        "--setting-sources: unknown source `{name}`; use a comma list of user, project, local (or \"\" for none)"
                    ))
                })?;
            if !out.contains(&layer) {
                out.push(layer);
            }
        }
        Ok(out)
    }
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where an effective value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The built-in default.
    Default,
    /// A settings file.
    File {
        /// Which layer the file belongs to.
        layer: Layer,
        /// The file.
        path: PathBuf,
    },
    /// `--settings FILE` (with the path) or `--settings JSON` (without).
    SettingsArg {
        /// The file, when a path was given.
        path: Option<PathBuf>,
    },
    /// An environment variable.
    Env {
        /// The variable's name.
        var: String,
        /// Where the variable was set.
        origin: EnvOrigin,
    },
    /// A command-line flag.
    Flag(&'static str),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Default => f.write_str("default"),
            Self::File { layer, path } => write!(f, "{layer}: {}", path.display()),
            Self::SettingsArg { path: Some(p) } => write!(f, "--settings: {}", p.display()),
            Self::SettingsArg { path: None } => f.write_str("--settings (inline JSON)"),
            Self::Env { var, origin } => match origin {
                EnvOrigin::Process => write!(f, "env {var}"),
                EnvOrigin::DotEnv(p) => write!(f, "env {var} from .env {}", p.display()),
                EnvOrigin::Settings(s) => write!(f, "env {var} from the env of {s}"),
            },
            Self::Flag(flag) => write!(f, "flag {flag}"),
        }
    }
}

impl Source {
    /// Whether this is a variable set by the `env` object of a settings file.
    pub fn origin_is_settings(&self) -> bool {
        matches!(
            self,
            Self::Env {
                origin: EnvOrigin::Settings(_),
                ..
            }
        )
    }
}

/// A value and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Sourced<T> {
    /// The value.
    pub value: T,
    /// Its source.
    pub source: Source,
}

impl<T> Sourced<T> {
    /// A value with its source.
    pub fn new(value: T, source: Source) -> Self {
        Self { value, source }
    }

    fn default(value: T) -> Self {
        Self::new(value, Source::Default)
    }
}

/// How the conversation is kept under the context window (`skiff.compaction.strategy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactionStrategy {
    /// Summarize older messages with the model.
    Summarize,
    /// Drop older messages.
    Trim,
    /// Leave the history alone.
    Off,
}

impl CompactionStrategy {
    fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "summarize" => Some(Self::Summarize),
            "trim" => Some(Self::Trim),
            "off" => Some(Self::Off),
            _ => None,
        }
    }
}

impl fmt::Display for CompactionStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Summarize => "summarize",
            Self::Trim => "trim",
            Self::Off => "off",
        })
    }
}

/// When compaction starts (`skiff.compaction.threshold`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CompactionThreshold {
    /// A share of the model's context window, in percent (`"80%"`).
    Percent(f64),
    /// A number of input tokens (`150000`).
    Tokens(u64),
}

impl CompactionThreshold {
    fn parse_str(s: &str) -> Option<Self> {
        let s = s.trim();
        match s.strip_suffix('%') {
            Some(p) => p
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|p| *p > 0.0 && *p <= 100.0)
                .map(Self::Percent),
            None => s.parse::<u64>().ok().filter(|n| *n > 0).map(Self::Tokens),
        }
    }
}

impl fmt::Display for CompactionThreshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Percent(p) => write!(f, "{p}%"),
            Self::Tokens(n) => write!(f, "{n}"),
        }
    }
}

/// `skiff.compaction`: each field unset means "the context module's default".
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Compaction {
    /// Strategy.
    pub strategy: Option<Sourced<CompactionStrategy>>,
    /// Threshold.
    pub threshold: Option<Sourced<CompactionThreshold>>,
    /// Most recent messages always kept verbatim.
    pub keep_recent: Option<Sourced<usize>>,
}

/// Effective `permissions`: rule lists pooled from every layer (flags last), the mode.
#[derive(Debug, Clone, PartialEq)]
pub struct Permissions {
    /// Allow rules (settings `permissions.allow`, `--allowedTools`).
    pub allow: Vec<Sourced<String>>,
    /// Deny rules (settings `permissions.deny`, `--disallowedTools`).
    pub deny: Vec<Sourced<String>>,
    /// Ask rules (settings `permissions.ask`).
    pub ask: Vec<Sourced<String>>,
    /// Permission mode (`defaultMode`, `--permission-mode`, `--dangerously-skip-permissions`).
    pub mode: Sourced<String>,
    /// Extra working directories, absolute (`additionalDirectories`, `--add-dir`).
    pub additional_directories: Vec<Sourced<PathBuf>>,
}

/// Effective `sandbox`: how the Bash tool confines commands (see `skiff_tools::sandbox`).
#[derive(Debug, Clone, PartialEq)]
pub struct SandboxSettings {
    /// Filesystem mode (`sandbox.mode`, `sandbox.enabled`, SKIFF_SANDBOX, `--sandbox`; default
    /// workspace-write where the kernel supports Landlock).
    pub mode: Sourced<skiff_tools::sandbox::SandboxMode>,
    /// Network (`sandbox.network`, `sandbox.network.mode`, SKIFF_SANDBOX_NETWORK,
    /// `--sandbox-network`; default proxy).
    pub network: Sourced<skiff_tools::sandbox::NetworkPolicy>,
    /// Hosts sandboxed commands may reach (`sandbox.network.allowedDomains`, every layer).
    pub allowed_domains: Vec<Sourced<String>>,
    /// Unix sockets outside the workspace they may reach (`sandbox.network.allowUnixSockets`).
    pub allow_unix_sockets: Vec<Sourced<String>>,
    /// Paths they cannot read besides the defaults (`sandbox.filesystem.denyRead`).
    pub deny_read: Vec<Sourced<String>>,
    /// When Landlock cannot enforce the mode (`sandbox.fallback`; default unsandboxed).
    pub fallback: Sourced<skiff_tools::sandbox::SandboxFallback>,
    /// Bash runs without approval while the sandbox is enforced
    /// (`sandbox.autoAllowBashIfSandboxed`). Default: true when a trusted source set the mode
    /// (the user turned the sandbox on), false for the built-in default.
    pub auto_allow_bash: Sourced<bool>,
}

impl SandboxSettings {
    /// The policy these settings ask for.
    pub fn policy(&self) -> skiff_tools::sandbox::SandboxPolicy {
        skiff_tools::sandbox::SandboxPolicy {
            mode: self.mode.value,
            network: self.network.value,
            fallback: self.fallback.value,
            implicit: self.mode.source == Source::Default
                && self.fallback.source == Source::Default,
        }
    }
}

/// Whether a candidate settings or `.env` file was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileState {
    /// Read and applied.
    Loaded,
    /// Does not exist.
    Missing,
    /// Not read: its layer is not in `--setting-sources`, or it is the same file as an earlier one.
    Skipped,
}

/// One candidate file and what happened to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStatus {
    /// `user`, `project`, `local` or `.env`.
    pub label: &'static str,
    /// The file.
    pub path: PathBuf,
    /// Whether it was read.
    pub state: FileState,
}

/// The effective configuration. No `Debug`: `env` and `lookup` may hold secrets.
#[derive(Clone)]
pub struct Settings {
    /// The workspace is trusted (see [`crate::trust`]).
    pub trusted: bool,
    /// Warnings to show once: what an untrusted workspace's files tried to set and was
    /// ignored (one line per file), `.env` lines that were skipped.
    pub trust_warnings: Vec<String>,
    /// The workspace directory.
    pub cwd: PathBuf,
    /// `$SKIFF_HOME`, or `~/.skiff`.
    pub skiff_home: Option<PathBuf>,
    /// The user's home directory (`HOME`).
    pub home: Option<PathBuf>,
    /// Model id or alias (`model`, ANTHROPIC_MODEL, `--model`).
    pub model: Sourced<String>,
    /// Max output tokens per call (`skiff.maxOutputTokens`, `--max-tokens`).
    pub max_output_tokens: Sourced<u32>,
    /// Sampling temperature (`skiff.temperature`); unset = API default.
    pub temperature: Option<Sourced<f32>>,
    /// Max characters of one tool result (`skiff.maxToolResultChars`).
    pub max_tool_result_chars: Sourced<usize>,
    /// Max messages kept in the conversation (`skiff.maxConversationMessages`); unset = no cap.
    pub max_conversation_messages: Option<Sourced<usize>>,
    /// Context compaction (`skiff.compaction`).
    pub compaction: Compaction,
    /// Max model calls per run (`skiff.maxTurns`, `--max-turns`); unset = the mode's default.
    pub max_turns: Option<Sourced<u32>>,
    /// Prompt caching (`skiff.promptCaching`, DISABLE_PROMPT_CACHING, `--no-prompt-caching`).
    pub prompt_caching: Sourced<bool>,
    /// Max retries of a model call (`skiff.retries`, SKIFF_MAX_RETRIES); unset = provider default.
    pub retries: Option<Sourced<u32>>,
    /// Model backend (`skiff.provider`, SKIFF_PROVIDER, `--provider`; default anthropic).
    pub provider: Sourced<String>,
    /// The provider's base URL (`skiff.baseUrl`, `--base-url`); unset = the provider's
    /// variable (ANTHROPIC_BASE_URL / OPENAI_BASE_URL) or its default.
    pub base_url: Option<Sourced<String>>,
    /// Context window in tokens (`skiff.contextWindow`, SKIFF_CONTEXT_WINDOW); unset = the
    /// model table's.
    pub context_window: Option<Sourced<u64>>,
    /// The compact prompt for small models (`skiff.compactPrompt`, SKIFF_COMPACT_PROMPT,
    /// `--compact-prompt`).
    pub compact_prompt: Sourced<bool>,
    /// Tool calls written as text count as calls on OpenAI-compatible servers
    /// (`skiff.textToolCalls`, SKIFF_TEXT_TOOL_CALLS; default true).
    pub text_tool_calls: Sourced<bool>,
    /// Prices of a model skiff does not know (`skiff.pricing`); unknown models cost $0.
    pub pricing: Option<Sourced<layers::Pricing>>,
    /// The small model of tools' side calls, WebFetch's (`skiff.smallModel`,
    /// ANTHROPIC_SMALL_FAST_MODEL, ANTHROPIC_DEFAULT_HAIKU_MODEL); unset = Haiku on Anthropic,
    /// else the session's model.
    pub small_model: Option<Sourced<String>>,
    /// Hosts WebFetch may fetch from private, loopback or link-local addresses
    /// (`skiff.webFetch.allowPrivateHosts`, pooled across files), beside the hosts of
    /// `WebFetch(domain:…)` allow rules.
    pub web_fetch_private_hosts: Vec<Sourced<String>>,
    /// Permission rules, mode and extra directories.
    pub permissions: Permissions,
    /// The Bash tool's sandbox.
    pub sandbox: SandboxSettings,
    /// The settings `env` objects, merged by key. Values may be secrets: never print them.
    pub env: BTreeMap<String, Sourced<String>>,
    /// The settings `hooks` objects: per event, the matcher groups of every layer.
    pub hooks: BTreeMap<String, Vec<Sourced<Value>>>,
    /// `apiKeyHelper` (recorded, not run: unsupported).
    pub api_key_helper: Option<Sourced<String>>,
    /// `statusLine.command`: the terminal UI shows the first line it prints (a trusted
    /// workspace's, or the user's).
    pub status_line: Option<Sourced<String>>,
    /// The MCP keys of the settings files (see [`crate::mcp_config`]).
    pub mcp: McpSettings,
    /// `enabledPlugins`, merged by plugin id (`name@marketplace`), later layers winning (an
    /// untrusted workspace's were dropped).
    pub enabled_plugins: BTreeMap<String, Sourced<bool>>,
    /// `extraKnownMarketplaces`: marketplaces the settings suggest, by name, as written.
    pub extra_marketplaces: BTreeMap<String, Sourced<Value>>,
    /// Keys present in settings files that skiff ignores (dotted paths).
    pub ignored: Vec<Sourced<String>>,
    /// The settings files considered, in load order.
    pub files: Vec<FileStatus>,
    /// The `.env` files considered (workspace first: it wins).
    pub dotenv_files: Vec<FileStatus>,
    /// Variable lookup: real env > workspace `.env` > home `.env` > settings `env`.
    pub lookup: EnvLookup,
}

/// The MCP keys of the settings files, as written (an untrusted workspace's files have lost
/// `mcpServers`, `enableAllProjectMcpServers` and `enabledMcpjsonServers` already).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct McpSettings {
    /// Each file's `mcpServers` value, lowest layer first (checked by [`crate::mcp_config`]).
    pub servers: Vec<Sourced<Value>>,
    /// `enableAllProjectMcpServers`.
    pub enable_all_project_servers: Option<Sourced<bool>>,
    /// `enabledMcpjsonServers`, pooled.
    pub enabled_mcpjson: Vec<Sourced<String>>,
    /// `disabledMcpjsonServers`, pooled: these `.mcp.json` servers never start.
    pub disabled_mcpjson: Vec<Sourced<String>>,
}

/// Claude Code's global config: `$CLAUDE_CONFIG_DIR/.claude.json`, or `~/.claude.json`
/// (user- and local-scoped MCP servers, accepted trust dialogs).
pub fn claude_global_config(env: &HashMap<String, String>) -> Option<PathBuf> {
    let get = |k: &str| env.get(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    get("CLAUDE_CONFIG_DIR")
        .map(|d| d.join(".claude.json"))
        .or_else(|| get("HOME").map(|h| h.join(".claude.json")))
}

/// What settings are loaded from: the overrides, the workspace and a snapshot of the process
/// env.
pub(crate) struct Inputs<'a> {
    pub args: &'a Overrides,
    pub cwd: PathBuf,
    pub process_env: HashMap<String, String>,
}

impl Settings {
    /// Load the settings for these overrides and workspace from the files, `.env` files and
    /// the environment. Errors name the file (and line/column for bad JSON).
    pub fn load(overrides: &Overrides, env: &Environment, cwd: &Path) -> Result<Self> {
        Self::load_from(&Inputs {
            args: overrides,
            cwd: cwd.to_path_buf(),
            process_env: env.vars().clone(),
        })
    }

    pub(crate) fn load_from(inputs: &Inputs<'_>) -> Result<Self> {
        let args = inputs.args;
        let cwd = inputs.cwd.clone();
        let penv = |k: &str| inputs.process_env.get(k).filter(|v| !v.is_empty());
        let home = penv("HOME").map(PathBuf::from);
        let skiff_home = penv("SKIFF_HOME")
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".skiff")));
        let claude_dir = penv("CLAUDE_CONFIG_DIR")
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".claude")));

        let selected = match &args.setting_sources {
            Some(list) => Layer::parse_list(list)?,
            None => Layer::ALL.to_vec(),
        };
        let mut candidates: Vec<(Layer, PathBuf)> = Vec::new();
        for (dir, file) in [
            (&claude_dir, "settings.json"),
            (&skiff_home, "settings.json"),
        ] {
            if let Some(d) = dir {
                candidates.push((Layer::User, d.join(file)));
            }
        }
        for (layer, file) in [
            (Layer::Project, "settings.json"),
            (Layer::Local, "settings.local.json"),
        ] {
            candidates.push((layer, cwd.join(".claude").join(file)));
            candidates.push((layer, cwd.join(".skiff").join(file)));
        }

        let trusted = args.trust
            || penv("SKIFF_TRUST_WORKSPACE")
                .is_some_and(|v| matches!(v.as_str(), "1" | "true" | "yes"))
            || crate::trust::Store::load(skiff_home.as_deref()).trusts(&cwd)
            || claude_global_config(&inputs.process_env)
                .is_some_and(|cfg| crate::trust::claude_code_trusts(&cfg, &cwd));
        let mut trust_warnings = Vec::new();
        let mut merged = Merged::default();
        let mut files = Vec::new();
        for (layer, path) in candidates {
            let dup = files
                .iter()
                .any(|f: &FileStatus| f.path == path && f.state == FileState::Loaded);
            let workspace_file = layer != Layer::User
                && Some(&path) != user_path(&claude_dir, &skiff_home, &path).as_ref();
            let state = if !selected.contains(&layer) || dup {
                FileState::Skipped
            } else if workspace_file && !trusted {
                // An untrusted workspace's file is the repository's, not the user's: a broken
                // one is skipped with a warning rather than stopping skiff.
                match load_untrusted(&path, layer, &mut merged, &mut trust_warnings) {
                    Ok(state) => state,
                    Err(e) => {
                        tracing::warn!(path = %path.display(), error = %e, "settings file skipped");
                        trust_warnings.push(format!(
                            "Warning: {} skipped (this workspace is not trusted): {e}",
                            path.display()
                        ));
                        FileState::Skipped
                    }
                }
            } else {
                match read_optional(&path)? {
                    None => FileState::Missing,
                    Some(text) => {
                        let source = Source::File {
                            layer,
                            path: path.clone(),
                        };
                        let doc = parse_json(
                            &text,
                            &format!("settings file {}", path.display()),
                            "Fix the JSON, or leave the file out with --setting-sources",
                        )?;
                        merged.apply(&doc, &source)?;
                        tracing::debug!(path = %path.display(), %layer, "loaded settings file");
                        FileState::Loaded
                    }
                }
            };
            files.push(FileStatus {
                label: layer.name(),
                path,
                state,
            });
        }
        if let Some(arg) = &args.settings {
            let (doc, source) = settings_arg(arg, &cwd)?;
            merged.apply(&doc, &source)?;
        }

        let mut dotenv_files = Vec::new();
        let workspace_env = cwd.join(".env");
        let home_env = skiff_home.as_ref().map(|h| h.join(".env"));
        let mut dotenvs = Vec::new();
        for path in std::iter::once(workspace_env.clone()).chain(home_env) {
            let read = match env_lookup::read_dotenv(&path) {
                // Not the user's file: unreadable is the same as absent.
                Err(e) if path == workspace_env && !trusted => {
                    trust_warnings.push(format!(
                        "Warning: {} skipped (this workspace is not trusted): {e}",
                        path.display()
                    ));
                    None
                }
                other => other?,
            };
            let mut vars = match read {
                Some(parsed) => {
                    if trusted || path != workspace_env {
                        trust_warnings.extend(parsed.warnings);
                    }
                    Some(parsed.vars)
                }
                None => None,
            };
            if path == workspace_env
                && !trusted
                && let Some(found) = vars.take()
            {
                let used = crate::trust::skiff_variables(&found);
                if !used.is_empty() {
                    trust_warnings.push(crate::trust::ignored_warning(&path, &used));
                }
                dotenv_files.push(FileStatus {
                    label: ".env",
                    path: path.clone(),
                    state: FileState::Skipped,
                });
                continue;
            }
            dotenv_files.push(FileStatus {
                label: ".env",
                path: path.clone(),
                state: if vars.is_some() {
                    FileState::Loaded
                } else {
                    FileState::Missing
                },
            });
            if let Some(vars) = vars {
                dotenvs.push((path, vars));
            }
        }
        let lookup = EnvLookup::build(&inputs.process_env, &dotenvs, &merged.env);

        let mut settings = resolve(
            merged,
            &lookup,
            args,
            &cwd,
            home.as_deref(),
            files,
            dotenv_files,
            skiff_home,
        )?;
        settings.trusted = trusted;
        settings.trust_warnings = trust_warnings;
        settings.home = home;
        Ok(settings)
    }

    /// Apply the values `AgentConfig` has fields for (model alias resolved).
    pub fn apply_to(&self, config: &mut AgentConfig) {
        config.model = skiff_llm::resolve_alias(&self.model.value);
        config.max_tokens = self.max_output_tokens.value;
        config.temperature = self.temperature.as_ref().map(|t| t.value);
        config.max_tool_result_chars = self.max_tool_result_chars.value;
        config.prompt_caching = self.prompt_caching.value;
    }
}

/// When the workspace is the home directory, its `.claude/settings.json` is the user's own file:
/// the path of that user file if `path` is one.
fn user_path(
    claude_dir: &Option<PathBuf>,
    skiff_home: &Option<PathBuf>,
    path: &Path,
) -> Option<PathBuf> {
    [claude_dir, skiff_home]
        .into_iter()
        .flatten()
        .map(|d| d.join("settings.json"))
        .find(|p| p == path)
}

/// `$SKIFF_HOME`, or `~/.skiff`, from the process environment.
pub fn skiff_home() -> Option<PathBuf> {
    let get = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    get("SKIFF_HOME")
        .map(PathBuf::from)
        .or_else(|| get("HOME").map(|h| PathBuf::from(h).join(".skiff")))
}

/// A URL with any `user:password@` part replaced.
pub fn redact_url(url: &str) -> String {
    if let Some((scheme, rest)) = url.split_once("://") {
        let authority_end = rest.find('/').unwrap_or(rest.len());
        if let Some(at) = rest[..authority_end].rfind('@') {
            return format!("{scheme}://[redacted]@{}", &rest[at + 1..]);
        }
    }
    url.to_owned()
}

/// Fold an untrusted workspace's settings file in: what it may not set is removed (with a
/// warning), and the file is applied whole or not at all (an error leaves `merged` as it was).
/// Special files are not opened (a FIFO would wait for a writer).
fn load_untrusted(
    path: &Path,
    layer: Layer,
    merged: &mut Merged,
    warnings: &mut Vec<String>,
) -> Result<FileState> {
    let text = match std::fs::metadata(path) {
        Err(e) if is_absent(&e) => return Ok(FileState::Missing),
        Ok(meta) if !meta.is_file() => bail!("it is not a regular file"),
        _ => match read_optional(path)? {
            None => return Ok(FileState::Missing),
            Some(text) => text,
        },
    };
    let source = Source::File {
        layer,
        path: path.to_path_buf(),
    };
    let mut doc = parse_json(
        &text,
        &format!("settings file {}", path.display()),
        "Fix the JSON",
    )?;
    let mut removed = crate::trust::strip_untrusted(&mut doc);
    removed.extend(layers::strip_weakening_sandbox(&mut doc));
    // Checked on its own first, so that a bad value leaves nothing of the file behind.
    Merged::default().apply(&doc, &source)?;
    if !removed.is_empty() {
        warnings.push(crate::trust::ignored_warning(path, &removed));
    }
    merged.apply(&doc, &source)?;
    tracing::debug!(path = %path.display(), %layer, "loaded settings file");
    Ok(FileState::Loaded)
}

/// A file's text, or `None` when it does not exist.
fn read_optional(path: &Path) -> Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if is_absent(&e) => Ok(None),
        Err(e) => bail!("cannot read settings file {}: {e}", path.display()),
    }
}

/// Whether an I/O error means "there is no such file" (a missing file or a parent that is not
/// a directory).
pub(crate) fn is_absent(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
    )
}

/// `--settings FILE|JSON`: inline JSON when it starts with `{`, else a path (relative to cwd).
fn settings_arg(arg: &str, cwd: &Path) -> Result<(Value, Source)> {
    if arg.trim_start().starts_with('{') {
        let doc = parse_json(arg, "--settings JSON", "Fix the JSON given to --settings")?;
        return Ok((doc, Source::SettingsArg { path: None }));
    }
    let path = absolute(cwd, Path::new(arg));
    let text = std::fs::read_to_string(&path).map_err(|e| {
        ConfigError::io(
            format!(
                "--settings: cannot read {} (give a settings file or a JSON object)",
                path.display()
            ),
            e,
        )
    })?;
    let doc = parse_json(
        &text,
        &format!("settings file {}", path.display()),
        "Fix the JSON in the file given to --settings",
    )?;
    Ok((doc, Source::SettingsArg { path: Some(path) }))
}

pub(crate) fn absolute(base: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}
