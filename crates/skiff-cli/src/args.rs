//! Command-line arguments of `skiff` (clap). Flag names follow Claude Code's so scripts and
//! SDKs work unchanged; both `--flag value` and `--flag=value` are accepted.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

/// Output format of print mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// The answer as text (streamed), a trace on stderr.
    Text,
    /// One JSON result object (an array of all messages with --verbose).
    Json,
    /// One JSON message per line, as produced (needs --verbose).
    #[value(name = "stream-json")]
    StreamJson,
}

/// Input format of print mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InputFormat {
    /// The prompt as text (argument or stdin).
    Text,
    /// NDJSON user messages and control requests on stdin: the Agent SDKs' protocol (needs
    /// --output-format stream-json).
    #[value(name = "stream-json")]
    StreamJson,
}

use skiff_config::provider::parse_provider;

/// Defines [`Command`] and, from the same variants, `WholeCommand`: clap builds a
/// [`Command`]'s own flags (and its commands) only when it is the one given (`defer`), so running
/// the agent does not build every command's flags before its first request. Whatever walks the
/// whole tree (help of a nested command, completions, the man page) takes `WholeCommand`'s
/// commands instead ([`Args::full_command`]), built as they are declared.
macro_rules! commands {
    ($(#[$meta:meta])* pub enum Command { $($variants:tt)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Subcommand)]
        #[command(defer = true)]
        pub enum Command { $($variants)* }

        /// [`Command`]'s variants, built without `defer` (see [`Args::full_command`]).
        #[derive(Subcommand)]
        #[allow(dead_code)]
        enum WholeCommand { $($variants)* }
    };
}

commands! {
/// Commands other than running the agent.
pub enum Command {
    /// Show the effective configuration: settings files, model, provider, permissions, trust.
    Config {
        /// Any of skiff's flags, to see their effect (`skiff config --model opus --settings
        /// FILE`).
        #[arg(
            value_name = "FLAGS",
            trailing_var_arg = true,
            allow_hyphen_values = true
        )]
        flags: Vec<String>,
    },
    /// List the saved sessions of this workspace (resume one with `skiff --resume ID`), or
    /// export one (`skiff sessions export ID --script -o FILE`).
    Sessions {
        /// What to do (default: list).
        #[command(subcommand)]
        action: Option<SessionsCommand>,
        /// The listing as a table (text) or a JSON array (json, stream-json).
        #[arg(long, value_enum)]
        output_format: Option<OutputFormat>,
    },
    /// Replay a saved session's model turns against the current skiff and workspace, and
    /// report where the tool results differ from the recording (exit 0: none, 1: some).
    Replay(ReplayArgs),
    /// Run many tasks from a JSONL file, each in its own worktree, N at a time (`--index I`:
    /// only the task at index I, as a Kubernetes Indexed Job runs it).
    Batch(BatchArgs),
    /// Print a shell completion script: `skiff completions bash > ~/.local/share/bash-completion/completions/skiff`.
    Completions {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff): `skiff man > skiff.1; man ./skiff.1`.
    Man,
    /// List the models the provider offers (`skiff models --provider ollama`).
    Models,
    /// Configure MCP servers (the files Claude Code uses: `~/.claude.json`, `.mcp.json`).
    Mcp {
        /// What to do.
        #[command(subcommand)]
        action: McpCommand,
    },
    /// Manage Claude Code plugins and their marketplaces: `skiff plugin marketplace add
    /// ./my-marketplace`, `skiff plugin install NAME@MARKETPLACE`, `skiff plugin list`.
    Plugin {
        /// What to do.
        #[command(subcommand)]
        action: PluginCommand,
    },
    /// Serve editors over the Agent Client Protocol on stdin/stdout (Zed, JetBrains, Neovim):
    /// `skiff acp --model opus`.
    Acp {
        /// Any of skiff's flags, for every session the editor opens.
        #[arg(
            value_name = "FLAGS",
            trailing_var_arg = true,
            allow_hyphen_values = true
        )]
        flags: Vec<String>,
    },
}
}

/// Where `skiff plugin install|enable|disable|uninstall` records a plugin's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PluginScope {
    /// You, in every workspace: `enabledPlugins` of `~/.skiff/settings.json`.
    User,
    /// Everyone working in this repository: `.claude/settings.json`.
    Project,
    /// You, in this repository: `.claude/settings.local.json`.
    Local,
}

impl From<PluginScope> for skiff_config::plugins::enable::PluginScope {
    fn from(s: PluginScope) -> Self {
        match s {
            PluginScope::User => Self::User,
            PluginScope::Project => Self::Project,
            PluginScope::Local => Self::Local,
        }
    }
}

// `skiff plugin …`. Not a doc comment: clap would make it the command's description, over
// the one of its `Command` variant (see `commands!`).
#[derive(Debug, Clone, Subcommand)]
pub enum PluginCommand {
    /// Add, list, update or remove plugin marketplaces.
    Marketplace {
        /// What to do.
        #[command(subcommand)]
        action: MarketplaceCommand,
    },
    /// Install a plugin from an added marketplace (shows what it adds and asks first) and
    /// enable it.
    Install {
        /// `NAME@MARKETPLACE` (or NAME, when one marketplace has it).
        plugin: String,
        /// The settings that enable it.
        #[arg(short, long, value_enum, default_value = "user")]
        scope: PluginScope,
        /// Do not ask: install it.
        #[arg(short, long)]
        yes: bool,
    },
    /// Remove an installed plugin and its `enabledPlugins` entry.
    #[command(visible_aliases = ["remove", "rm"])]
    Uninstall {
        /// `NAME@MARKETPLACE`.
        plugin: String,
        /// The settings whose entry is removed.
        #[arg(short, long, value_enum, default_value = "user")]
        scope: PluginScope,
    },
    /// Turn an installed plugin on.
    Enable {
        /// `NAME@MARKETPLACE`.
        plugin: String,
        /// The settings to write.
        #[arg(short, long, value_enum, default_value = "user")]
        scope: PluginScope,
    },
    /// Turn a plugin off (without uninstalling it).
    Disable {
        /// `NAME@MARKETPLACE`.
        plugin: String,
        /// The settings to write.
        #[arg(short, long, value_enum, default_value = "user")]
        scope: PluginScope,
    },
    /// List the installed plugins and whether they are on here.
    List {
        /// Also list what the added marketplaces offer.
        #[arg(long)]
        available: bool,
    },
    /// Check a plugin or marketplace directory: what it adds, or what is wrong.
    Validate {
        /// The plugin's or marketplace's directory.
        path: PathBuf,
    },
}

/// `skiff plugin marketplace …`.
#[derive(Debug, Clone, Subcommand)]
pub enum MarketplaceCommand {
    /// Add a marketplace: a directory, a marketplace.json, a git URL (`#ref` for a branch or
    /// tag) or GitHub's owner/repo.
    Add {
        /// Where it is.
        source: String,
    },
    /// List the added marketplaces.
    List,
    /// Fetch the newest commit of a git marketplace (every one without NAME).
    Update {
        /// The marketplace.
        name: Option<String>,
    },
    /// Remove a marketplace (its installed plugins are uninstalled).
    #[command(visible_aliases = ["rm"])]
    Remove {
        /// The marketplace.
        name: String,
    },
}

// `skiff sessions …`. Not a doc comment: clap would make it the command's description, over
// the one of its `Command` variant (see `commands!`).
#[derive(Debug, Clone, Subcommand)]
pub enum SessionsCommand {
    /// Export a saved session: `--script` writes the model's side of it as a model script
    /// that `skiff --provider script --script FILE` (and `skiff replay`) runs offline.
    Export {
        /// The session id (or a saved transcript's path).
        id: String,
        /// Export the model's turns as a script (the only export format so far).
        #[arg(long)]
        script: bool,
        /// Write to this file instead of stdout.
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
    },
}

// `skiff replay …`. Not a doc comment: clap would make it the command's description, over
// the one of its `Command` variant (see `commands!`).
#[derive(Debug, Clone, clap::Args)]
pub struct ReplayArgs {
    /// The session id, a saved transcript's path, or a script exported with
    /// `skiff sessions export ID --script`.
    pub id: String,
    /// Print one machine-readable JSON report instead of text.
    #[arg(long)]
    pub json: bool,
    /// The permission mode of the replay (default: `default`; a recording's own mode is
    /// never taken, since someone else may have written it).
    #[arg(long, value_name = "MODE")]
    pub permission_mode: Option<String>,
    /// Offer these tools instead of the recorded set (comma list, as `--tools`).
    #[arg(long, value_name = "TOOLS")]
    pub tools: Option<String>,
    /// Replay in the current directory as it is (its files may be changed). Without it (and
    /// without `--cwd DIR`), the replay runs in a fresh checkout of the recorded commit in a
    /// temporary directory.
    #[arg(long)]
    pub in_place: bool,
}

// `skiff batch …`. Not a doc comment: clap would make it the command's description, over
// the one of its `Command` variant (see `commands!`).
#[derive(Debug, Clone, clap::Args)]
pub struct BatchArgs {
    /// The task file: one JSON task per line.
    pub tasks: PathBuf,
    /// How many tasks run at once.
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<usize>,
    /// The results file (JSONL, appended as tasks finish; tasks already in it are skipped).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Where the tasks' worktrees go.
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,
    /// Run only the task at this index (0-based; a Kubernetes Indexed Job's
    /// JOB_COMPLETION_INDEX) and print its result line.
    #[arg(long, value_name = "I")]
    pub index: Option<usize>,
    /// With --index: also write the result to DIR/<index>.json.
    #[arg(long, value_name = "DIR")]
    pub results_dir: Option<PathBuf>,
    /// Time limit of each task without its own `timeout_secs`, in seconds.
    #[arg(long, value_name = "SECS", value_parser = parse_batch_timeout)]
    pub timeout: Option<f64>,
    /// skiff flags for every task, after `--` (`-- --model opus --permission-mode acceptEdits`);
    /// a task's own fields replace the same flags.
    #[arg(last = true, value_name = "FLAGS", allow_hyphen_values = true)]
    pub flags: Vec<String>,
}

/// A positive number of seconds.
fn parse_batch_timeout(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(t) if t.is_finite() && t > 0.0 => Ok(t),
        _ => Err(format!("{s:?} is not a positive number of seconds")),
    }
}

/// Where `skiff mcp add` writes a server (as `claude mcp add --scope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum McpScope {
    /// You, in this workspace: `~/.claude.json` `projects[<workspace>].mcpServers`.
    Local,
    /// Everyone working in this workspace: `<workspace>/.mcp.json`.
    Project,
    /// You, in every workspace: `~/.claude.json` `mcpServers`.
    User,
}

impl From<McpScope> for skiff_config::mcp::files::McpScope {
    fn from(s: McpScope) -> Self {
        match s {
            McpScope::Local => Self::Local,
            McpScope::Project => Self::Project,
            McpScope::User => Self::User,
        }
    }
}

/// How `skiff mcp add` reaches a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum McpTransport {
    /// A command speaking MCP on stdin/stdout.
    Stdio,
    /// Streamable HTTP at a URL.
    Http,
    /// Legacy HTTP+SSE at a URL.
    Sse,
}

// `skiff mcp …`. Not a doc comment: clap would make it the command's description, over
// the one of its `Command` variant (see `commands!`).
#[derive(Debug, Clone, Subcommand)]
pub enum McpCommand {
    /// List the configured servers with their connection status.
    List,
    /// Show one server's configuration.
    Get {
        /// Server name.
        name: String,
    },
    /// Add a server: `skiff mcp add NAME -- CMD ARGS…`, or
    /// `skiff mcp add --transport http NAME URL`.
    Add {
        /// Server name (letters, digits, `-` and `_`).
        name: String,
        /// The command (stdio) or the URL (http, sse).
        #[arg(value_name = "COMMAND_OR_URL")]
        command_or_url: String,
        /// The command's arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
        /// Where to write it.
        #[arg(short, long, value_enum, default_value = "local")]
        scope: McpScope,
        /// How to reach the server.
        #[arg(short, long, value_enum, default_value = "stdio")]
        transport: McpTransport,
        /// An environment variable of the command: `-e KEY=VALUE` (repeatable).
        #[arg(short, long = "env", value_name = "KEY=VALUE")]
        env: Vec<String>,
        /// An HTTP header: `-H "Name: value"` (repeatable).
        #[arg(short = 'H', long = "header", value_name = "HEADER")]
        header: Vec<String>,
    },
    /// Remove a server (from the one scope that has it, or from --scope).
    Remove {
        /// Server name.
        name: String,
        /// The scope to remove it from.
        #[arg(short, long, value_enum)]
        scope: Option<McpScope>,
    },
    /// Serve skiff's own tools (Bash, Read, Write, Edit, Glob, Grep, LS, …) over MCP on
    /// stdin/stdout, under this workspace's settings, permission rules and sandbox: `skiff mcp
    /// serve --permission-mode acceptEdits`. Calls that would need approval are refused.
    Serve {
        /// Any of skiff's flags (--cwd, --permission-mode, --allowedTools, --settings, …).
        #[arg(
            value_name = "FLAGS",
            trailing_var_arg = true,
            allow_hyphen_values = true
        )]
        flags: Vec<String>,
    },
}

/// skiff: an agentic coding assistant.
///
/// Without a prompt on a terminal skiff starts the interactive REPL; `skiff -p "task"` (or a
/// prompt on stdin) answers once and exits.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "skiff",
    version,
    about,
    after_help = after_help()
)]
pub struct Args {
    /// The prompt. With -p it is answered once and skiff exits.
    pub prompt: Option<String>,

    /// A command instead of a prompt.
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Print mode: answer the prompt (argument or stdin) non-interactively and exit.
    #[arg(short = 'p', long = "print")]
    pub print: bool,

    /// Output format of print mode (not a global flag: the commands that do not print a
    /// result do not offer it; `skiff sessions` has its own).
    #[arg(long, value_enum, default_value = "text")]
    pub output_format: OutputFormat,

    /// Input format of print mode.
    #[arg(long, value_enum, default_value = "text")]
    pub input_format: InputFormat,

    /// Verbose output (required for stream-json; makes json an array of all messages).
    #[arg(long)]
    pub verbose: bool,

    /// Emit stream_event frames with the raw API events (stream-json).
    #[arg(long)]
    pub include_partial_messages: bool,

    /// Maximum model calls in one run (default 100 in print mode).
    #[arg(long)]
    pub max_turns: Option<u32>,

    /// Stop once the estimated cost reaches this many USD.
    #[arg(long)]
    pub max_budget_usd: Option<f64>,

    /// Model id or alias (sonnet, opus, haiku). Default claude-sonnet-4-5, or ANTHROPIC_MODEL.
    #[arg(long)]
    pub model: Option<String>,

    /// Maximum output tokens per model call (default 8192).
    #[arg(long)]
    pub max_tokens: Option<u32>,

    /// Extra directories the tools may use (comma or space separated, repeatable).
    #[arg(long = "add-dir", num_args = 1.., value_delimiter = ',')]
    pub add_dir: Vec<PathBuf>,

    /// Trust this workspace: use its project settings' env, allow rules, hooks and extra
    /// directories and its .env (also SKIFF_TRUST_WORKSPACE=1; the REPL asks once).
    #[arg(long, global = true)]
    pub trust: bool,

    /// Send the API key to this host although the base URL comes from the workspace's own
    /// files (the REPL asks instead).
    #[arg(long, value_name = "HOST")]
    pub trust_base_url: Option<String>,

    /// Workspace directory (default: the current directory).
    #[arg(long, global = true)]
    pub cwd: Option<PathBuf>,

    /// Replace the default system prompt.
    #[arg(long, conflicts_with = "system_prompt_file")]
    pub system_prompt: Option<String>,

    /// Replace the default system prompt with this file's content.
    #[arg(long)]
    pub system_prompt_file: Option<PathBuf>,

    /// Append text to the system prompt.
    #[arg(long)]
    pub append_system_prompt: Option<String>,

    /// Append this file's content to the system prompt.
    #[arg(long)]
    pub append_system_prompt_file: Option<PathBuf>,

    /// Permission rules allowed without asking (e.g. "Bash(git:*)", "Edit").
    #[arg(long = "allowedTools", alias = "allowed-tools", num_args = 1..)]
    pub allowed_tools: Vec<String>,

    /// Permission rules denied; a bare tool name removes the tool.
    #[arg(long = "disallowedTools", alias = "disallowed-tools", num_args = 1..)]
    pub disallowed_tools: Vec<String>,

    /// Built-in tools available at all: "" (none), "default", or names ("Bash,Read").
    #[arg(long, num_args = 0.., value_delimiter = ',')]
    pub tools: Option<Vec<String>>,

    /// Permission mode: default, acceptEdits, plan, bypassPermissions or dontAsk.
    #[arg(long, value_parser = parse_permission_mode)]
    pub permission_mode: Option<String>,

    /// Who answers approvals in print mode: `stdio` (the Agent SDK's control protocol, with
    /// --input-format stream-json). Without it, calls that need approval are denied.
    #[arg(long, value_name = "TOOL")]
    pub permission_prompt_tool: Option<String>,

    /// Extended thinking with this budget of tokens per response (Claude models that support
    /// it; 0 turns thinking off). Also MAX_THINKING_TOKENS.
    #[arg(long, value_name = "TOKENS")]
    pub max_thinking_tokens: Option<u32>,

    /// Thinking: adaptive (the model decides how much to think; a budget on models without
    /// adaptive thinking), enabled (the same) or disabled.
    #[arg(long, value_name = "MODE", value_parser = ["adaptive", "enabled", "disabled"])]
    pub thinking: Option<String>,

    /// How adaptive thinking is shown: summarized or omitted.
    #[arg(long, value_name = "DISPLAY", value_parser = ["summarized", "omitted"])]
    pub thinking_display: Option<String>,

    /// Effort of the model's answers: low, medium, high, xhigh or max (the API's
    /// `output_config.effort` on models that support it; `reasoning_effort` on
    /// OpenAI-compatible servers that take it).
    #[arg(long, value_name = "LEVEL", value_parser = ["low", "medium", "high", "xhigh", "max"])]
    pub effort: Option<String>,

    /// Echo user messages read from stdin back as `user` frames with their uuid (stream-json
    /// in and out; the Agent SDKs' file checkpoints use the uuids).
    #[arg(long)]
    pub replay_user_messages: bool,

    /// Every hook run as `system/hook_started` and `system/hook_response` frames in
    /// stream-json (without it only SessionStart hooks show, as with Claude Code).
    #[arg(long)]
    pub include_hook_events: bool,

    /// Custom subagents as JSON (`{"name": {"description": …, "prompt": …, "tools": […],
    /// "model": …}}`, as the Agent SDKs pass them), offered by the Task tool.
    #[arg(long, value_name = "JSON")]
    pub agents: Option<String>,

    /// Extra `anthropic-beta` header values (comma or space separated; Anthropic API).
    #[arg(long, num_args = 1.., value_delimiter = ',', value_name = "BETAS")]
    pub betas: Vec<String>,

    /// Model to switch to when the main one is overloaded (after 3 overloaded responses in a
    /// row).
    #[arg(long, value_name = "MODEL")]
    pub fallback_model: Option<String>,

    /// Load the plugin in DIR for this session too (repeatable; the Agent SDKs' `plugins`).
    #[arg(long, value_name = "DIR")]
    pub plugin_dir: Vec<PathBuf>,

    /// Structured output: a JSON Schema (object-rooted) the final answer must match. The model
    /// answers through a `StructuredOutput` tool whose input is validated; the result carries
    /// it as `structured_output`.
    #[arg(long, value_name = "SCHEMA")]
    pub json_schema: Option<String>,

    /// Same as --permission-mode bypassPermissions.
    #[arg(long)]
    pub dangerously_skip_permissions: bool,

    /// Model backend: anthropic (default), bedrock, vertex, foundry (Claude on a cloud; also
    /// CLAUDE_CODE_USE_BEDROCK/_VERTEX/_FOUNDRY=1), openai (any OpenAI-compatible server, with
    /// --base-url), ollama, llamacpp, vllm, lmstudio, openrouter, or script (also SKIFF_PROVIDER).
    #[arg(long, value_name = "NAME", value_parser = parse_provider, global = true)]
    pub provider: Option<String>,

    /// The provider's base URL (ANTHROPIC_BASE_URL / OPENAI_BASE_URL otherwise; the presets
    /// know theirs).
    #[arg(long, value_name = "URL", global = true)]
    pub base_url: Option<String>,

    /// A short system prompt and tool descriptions, for small local models (a CPU spends long
    /// on a long prompt's prefill).
    #[arg(long)]
    pub compact_prompt: bool,

    /// Model script for --provider script (JSON; see examples/).
    #[arg(long)]
    pub script: Option<PathBuf>,

    /// Use this session id (a UUID) for a new session (or the fork of --fork-session).
    #[arg(long)]
    pub session_id: Option<String>,

    /// Continue the most recent session of this workspace.
    #[arg(short = 'c', long = "continue", conflicts_with = "resume")]
    pub continue_session: bool,

    /// Resume the session with this id (or unique id prefix); see `skiff sessions`. Without a
    /// value the value is "" (the REPL offers a list to pick from).
    #[arg(short = 'r', long, num_args = 0..=1, default_missing_value = "")]
    pub resume: Option<String>,

    /// With --continue/--resume: continue in a new session (new id) instead of appending to
    /// the old one.
    #[arg(long)]
    pub fork_session: bool,

    /// Do not write the session transcript (it cannot be resumed later).
    #[arg(long)]
    pub no_session_persistence: bool,

    /// Turn prompt caching off (also DISABLE_PROMPT_CACHING=1).
    #[arg(long)]
    pub no_prompt_caching: bool,

    /// Extra settings: a JSON file or a JSON string (above the settings files).
    #[arg(long, value_name = "FILE|JSON", global = true)]
    pub settings: Option<String>,

    /// MCP servers from a JSON file or a JSON string (`{"mcpServers": {…}}`; repeatable).
    #[arg(long = "mcp-config", value_name = "FILE|JSON")]
    pub mcp_config: Vec<String>,

    /// Use only the MCP servers of --mcp-config (none from .mcp.json, settings or
    /// ~/.claude.json).
    #[arg(long)]
    pub strict_mcp_config: bool,

    /// Which settings files load: comma list of user, project, local ("" = none).
    #[arg(long, value_name = "SOURCES", global = true)]
    pub setting_sources: Option<String>,

    /// Debug logging, mirrored to stderr; optional filter: "api,tools" or tracing directives
    /// (write `--debug=FILTER` before a prompt).
    #[arg(long, value_name = "FILTER", num_args = 0..=1, default_missing_value = "", global = true)]
    pub debug: Option<String>,

    /// Sandbox of the Bash tool's commands (Linux: namespaces and Landlock): workspace-write
    /// (writes only in the workspace, extra directories and temp directories; the default
    /// where the kernel supports it), read-only (no writes), or off.
    #[arg(long, value_name = "MODE", value_parser = ["off", "workspace-write", "read-only"])]
    pub sandbox: Option<String>,

    /// Network access of sandboxed commands: proxy (the default: only through skiff's proxy,
    /// to sandbox.network.allowedDomains; other hosts are asked about), allow (the host's
    /// network, unfiltered) or deny (none; the sandbox's own loopback still works).
    #[arg(long, value_name = "POLICY", value_parser = ["proxy", "allow", "deny"])]
    pub sandbox_network: Option<String>,

    /// Max turns when neither settings, SKIFF_MAX_TURNS nor --max-turns set one (print mode
    /// sets 100; the REPL leaves it unlimited). Not a flag.
    #[arg(skip)]
    pub default_max_turns: Option<u32>,
}

/// A flag Claude Code's clients pass that skiff accepts and does not act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IgnoredFlag {
    /// The flag (`--name`).
    pub name: &'static str,
    /// Whether it takes a value (removed with it).
    pub takes_value: bool,
    /// Why skiff does not act on it (shown by `skiff --help` and in the README).
    pub reason: &'static str,
}

const fn ignored(name: &'static str, takes_value: bool, reason: &'static str) -> IgnoredFlag {
    IgnoredFlag {
        name,
        takes_value,
        reason,
    }
}

/// Flags that Claude Code's clients (the Agent SDKs, editors' launchers) pass and skiff
/// deliberately ignores, each with the reason: they are accepted with a warning (their value
/// too, never taken for the prompt). Any other unknown flag is an error (exit 2, naming the
/// closest flag skiff has). `skiff --help` lists them with their reasons, and so does the
/// README under "Flags skiff accepts and ignores" (a test holds the three together).
pub const IGNORED_FLAGS: &[IgnoredFlag] = &[
    ignored(
        "--agent",
        true,
        "runs the main conversation as a named agent; skiff's main conversation is always its own",
    ),
    ignored(
        "--allow-dangerously-skip-permissions",
        false,
        "skiff lets a session switch to bypassPermissions without it",
    ),
    ignored(
        "--await-initialize",
        false,
        "skiff always answers initialize before it reads a user message",
    ),
    ignored(
        "--channels",
        true,
        "Claude Code's release channels; skiff has none",
    ),
    ignored(
        "--debug-file",
        true,
        "skiff's debug log is always ~/.skiff/logs/skiff.log (--debug mirrors it to stderr)",
    ),
    ignored(
        "--debug-to-stderr",
        false,
        "--debug already mirrors the log to stderr",
    ),
    ignored(
        "--initialize-fields",
        true,
        "skiff's initialize answer always carries every field it has",
    ),
    ignored(
        "--managed-settings",
        true,
        "organization-managed settings; skiff reads the settings files and --settings",
    ),
    ignored(
        "--managed-settings-in-initialize",
        false,
        "organization-managed settings; skiff reads the settings files and --settings",
    ),
    ignored(
        "--permission-prompts",
        true,
        "skiff asks the host only with --permission-prompt-tool stdio and denies otherwise",
    ),
    ignored(
        "--plugin-dir-no-mcp",
        true,
        "skiff does not load Claude Code plugins",
    ),
    ignored(
        "--project-config-root",
        true,
        "skiff reads the project's settings from the workspace (--cwd)",
    ),
    ignored(
        "--resume-drops-turn",
        true,
        "resuming part of a session; skiff resumes whole sessions",
    ),
    ignored(
        "--resume-session-at",
        true,
        "resuming part of a session; skiff resumes whole sessions",
    ),
    ignored(
        "--session-mirror",
        false,
        "mirrors the transcript to the SDK's session store; skiff writes its own transcript",
    ),
    ignored(
        "--task-budget",
        true,
        "a token budget the model is told about; skiff limits runs with --max-turns and --max-budget-usd",
    ),
];

/// Flags skiff parses (so that their values are never taken for a prompt) but does not act on:
/// they warn too. Part of the same documented list.
pub const PARSED_BUT_IGNORED: &[IgnoredFlag] = &[];

/// Examples at the end of `skiff --help`.
const EXAMPLES: &str = "Examples:\n  skiff                                  the interactive REPL\n  skiff -p \"fix the failing test\"         answer once and exit\n  skiff -c                               continue the last session here\n  skiff config                           where each setting comes from\n  skiff help sessions                    the help of a command";

/// The end of `skiff --help`: the examples, then the flags accepted and ignored.
fn after_help() -> String {
    format!("{EXAMPLES}\n\n{}", ignored_flags_help().trim_end())
}

/// The `--help` section listing [`IGNORED_FLAGS`] with their reasons.
pub fn ignored_flags_help() -> String {
    let mut text =
        String::from("Accepted for Claude Code's clients and ignored (with a warning):\n");
    let mut all: Vec<&IgnoredFlag> = IGNORED_FLAGS.iter().chain(PARSED_BUT_IGNORED).collect();
    all.sort_by_key(|f| f.name);
    for f in all {
        text.push_str(&format!("  {:<38} {}\n", f.name, f.reason));
    }
    text
}

impl Args {
    /// The whole command tree, each command's flags and commands built (see `commands!`): for
    /// whatever walks it (the help of a nested command, completions, the man page).
    pub fn full_command() -> clap::Command {
        use clap::CommandFactory;
        let whole = WholeCommand::augment_subcommands(clap::Command::new("skiff"));
        let mut cmd = Self::command();
        for sub in whole.get_subcommands() {
            cmd = cmd.mut_subcommand(sub.get_name(), |_| sub.clone());
        }
        cmd
    }

    /// Parse a command line: the flags of [`IGNORED_FLAGS`] (with their values) are removed with
    /// a warning each; any other unknown flag is an error. Returns the arguments and the
    /// warnings to print.
    pub fn parse_command_line(
        mut argv: Vec<std::ffi::OsString>,
    ) -> Result<(Self, Vec<String>), clap::Error> {
        use clap::error::{ContextKind, ContextValue, ErrorKind};
        let mut warnings = Vec::new();
        loop {
            let e = match Self::try_parse_from(&argv) {
                Ok(args) => {
                    for flag in PARSED_BUT_IGNORED {
                        let given = argv.iter().any(|a| {
                            let a = a.to_string_lossy();
                            a == flag.name || a.starts_with(&format!("{}=", flag.name))
                        });
                        if given {
                            warnings.push(ignored_warning(flag));
                        }
                    }
                    return Ok((args, warnings));
                }
                Err(e) => e,
            };
            if e.kind() != ErrorKind::UnknownArgument {
                return Err(e);
            }
            let Some(ContextValue::String(flag)) = e.get(ContextKind::InvalidArg).cloned() else {
                return Err(e);
            };
            let name = flag.split('=').next().unwrap_or(&flag).to_owned();
            let Some(flag) = IGNORED_FLAGS.iter().find(|f| f.name == name) else {
                return Err(closest_flag(e, &name));
            };
            let Some(at) = argv.iter().position(|a| {
                let a = a.to_string_lossy();
                a == name.as_str() || a.starts_with(&format!("{name}="))
            }) else {
                return Err(e);
            };
            let attached = argv[at].to_string_lossy().contains('=');
            let n = if flag.takes_value && !attached && at + 1 < argv.len() {
                2
            } else {
                1
            };
            argv.drain(at..at + n);
            warnings.push(ignored_warning(flag));
        }
    }

    /// `skiff config FLAGS…`: the command line with the `config` token removed, so the flags
    /// after it parse as they would for a run. `raw` is the whole command line and the last
    /// `n` words are the flags clap left to `config`.
    pub fn without_config_token(raw: Vec<std::ffi::OsString>, n: usize) -> Vec<std::ffi::OsString> {
        Self::without_command_token(raw, "config", n)
    }

    /// The command line with the command word `token` removed (`config`, `acp`), so the `n`
    /// flags clap left to the command parse as they would for a run.
    pub fn without_command_token(
        mut raw: Vec<std::ffi::OsString>,
        token: &str,
        n: usize,
    ) -> Vec<std::ffi::OsString> {
        let last = raw.len().saturating_sub(n + 1);
        if let Some(at) = (1..=last)
            .rev()
            .find(|&i| raw.get(i).is_some_and(|w| w == token))
        {
            raw.remove(at);
        }
        raw
    }

    /// Split rule and tool lists given as one comma- or space-separated token (as the SDKs
    /// send them), keeping separators inside parentheses (`Bash(git push:*)`).
    pub fn normalize(&mut self) {
        fn split(v: &mut Vec<String>) {
            *v = v.iter().flat_map(|s| split_rules(s)).collect();
        }
        split(&mut self.allowed_tools);
        split(&mut self.disallowed_tools);
        if let Some(t) = &mut self.tools {
            split(t);
        }
        // `--script FILE` means the scripted provider.
        if self.script.is_some() {
            self.provider = Some("script".to_owned());
        }
        // `skiff --debug "fix the bug"`: a filter has no spaces, so that was the prompt.
        if self.prompt.is_none() && self.debug.as_deref().is_some_and(|d| d.contains(' ')) {
            self.prompt = self.debug.replace(String::new());
        }
    }
}

/// The warning for a flag of [`IGNORED_FLAGS`].
fn ignored_warning(flag: &IgnoredFlag) -> String {
    format!("Warning: skiff ignores {}: {}", flag.name, flag.reason)
}

/// The error for an unknown flag, naming the flag of skiff's closest to it when clap has not.
fn closest_flag(e: clap::Error, given: &str) -> clap::Error {
    use clap::CommandFactory;
    use clap::error::{ContextKind, ContextValue};
    if e.get(ContextKind::SuggestedArg).is_some() || !given.starts_with("--") {
        return e;
    }
    let cmd = Args::command();
    let closest = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set())
        .filter_map(|a| a.get_long())
        .map(|long| (edit_distance(&given[2..], long), long))
        .min();
    let Some((distance, long)) = closest else {
        return e;
    };
    if distance > given.len() / 2 + 2 {
        return e;
    }
    let mut err = clap::Error::new(clap::error::ErrorKind::UnknownArgument).with_cmd(&cmd);
    err.insert(
        ContextKind::InvalidArg,
        ContextValue::String(given.to_owned()),
    );
    err.insert(
        ContextKind::SuggestedArg,
        ContextValue::String(format!("--{long}")),
    );
    err
}

/// Levenshtein distance (small strings only).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Split on commas and whitespace outside parentheses.
pub fn split_rules(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0usize;
    for c in s.chars() {
        match c {
            '(' => {
                depth += 1;
                cur.push(c);
            }
            ')' => {
                depth = depth.saturating_sub(1);
                cur.push(c);
            }
            c if depth == 0 && (c == ',' || c.is_whitespace()) => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// `--permission-mode`: one of Claude Code's mode names (an unknown one is a usage error).
fn parse_permission_mode(text: &str) -> Result<String, String> {
    text.parse::<skiff_core::PermissionMode>()
        .map(|m| m.as_str().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each command's help starts with its own description, as the command list shows it (not
    /// with the description of the type that holds its flags).
    #[test]
    fn each_command_s_help_starts_with_its_description() {
        use clap::CommandFactory;
        let top = Args::command();
        let mut checked = 0;
        for sub in top.get_subcommands() {
            let name = sub.get_name();
            let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
            assert!(!about.is_empty(), "{name} has no description");
            let err = Args::try_parse_from(["skiff", name, "--help"]).unwrap_err();
            assert_eq!(err.kind(), clap::error::ErrorKind::DisplayHelp, "{name}");
            let help = err.to_string();
            assert!(
                help.starts_with(&about),
                "`skiff {name} --help` starts {:?}, not with {about:?}",
                help.lines().next()
            );
            checked += 1;
        }
        assert!(checked >= 10, "only {checked} commands");
    }

    /// Running the agent builds the top level alone: a command's own flags and commands are
    /// built when it is given. The whole tree has every command, in the same order, with the
    /// same description, built.
    #[test]
    fn commands_are_built_when_given_and_whole_for_help() {
        use clap::CommandFactory;
        let top = Args::command();
        let mcp = top.find_subcommand("mcp").unwrap();
        assert_eq!(
            mcp.get_subcommands().count(),
            0,
            "mcp's commands built early"
        );
        assert_eq!(
            top.find_subcommand("batch")
                .unwrap()
                .get_arguments()
                .count(),
            0
        );
        let whole = Args::full_command();
        let names = |c: &clap::Command| {
            c.get_subcommands()
                .map(|s| {
                    (
                        s.get_name().to_owned(),
                        s.get_about().map(|a| a.to_string()),
                    )
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&top), names(&whole));
        let mcp = whole.find_subcommand("mcp").unwrap();
        for name in ["add", "get", "list", "remove", "serve"] {
            assert!(mcp.find_subcommand(name).is_some(), "mcp {name}");
        }
        assert!(
            whole
                .find_subcommand("batch")
                .unwrap()
                .get_arguments()
                .count()
                > 1
        );
    }

    #[test]
    fn config_flags_reparse_as_a_run() {
        let raw = |words: &[&str]| {
            words
                .iter()
                .map(Into::into)
                .collect::<Vec<std::ffi::OsString>>()
        };
        let argv = raw(&["skiff", "--cwd", "/x", "config", "--model", "opus"]);
        let parsed = Args::try_parse_from(&argv).unwrap();
        let Some(Command::Config { flags }) = &parsed.command else {
            panic!("not config: {parsed:?}");
        };
        assert_eq!(flags, &["--model", "opus"]);
        let again = Args::try_parse_from(Args::without_config_token(argv, flags.len())).unwrap();
        assert!(again.command.is_none() && again.prompt.is_none());
        assert_eq!(again.model.as_deref(), Some("opus"));
        assert_eq!(again.cwd.as_deref(), Some(std::path::Path::new("/x")));
    }

    fn line(args: &[&str]) -> Vec<std::ffi::OsString> {
        std::iter::once("skiff")
            .chain(args.iter().copied())
            .map(Into::into)
            .collect()
    }

    #[test]
    fn unknown_flags_are_errors_naming_the_closest_one() {
        use clap::error::{ContextKind, ErrorKind};
        for (given, closest) in [
            ("--permision-mode=plan", "--permission-mode"),
            ("--permission-mod", "--permission-mode"),
            ("--modle", "--model"),
            ("--max-turn", "--max-turns"),
        ] {
            let e = Args::parse_command_line(line(&["-p", "x", given])).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::UnknownArgument, "{given}");
            assert_eq!(e.exit_code(), 2);
            assert_eq!(
                e.get(ContextKind::SuggestedArg).map(ToString::to_string),
                Some(closest.to_owned()),
                "{given}"
            );
        }
        assert!(Args::parse_command_line(line(&["--zzzzzzzzzzzz"])).is_err());
    }

    #[test]
    fn the_ignored_flags_of_claude_codes_clients_warn() {
        let (args, warnings) = Args::parse_command_line(line(&[
            "-p",
            "--task-budget",
            "1000",
            "--resume-session-at=msg_1",
            "--session-mirror",
            "--agent",
            "reviewer",
            "--permission-mode",
            "plan",
            "hello",
        ]))
        .unwrap();
        assert_eq!(args.prompt.as_deref(), Some("hello"));
        assert_eq!(args.permission_mode.as_deref(), Some("plan"));
        assert_eq!(warnings.len(), 4, "{warnings:?}");
        for flag in [
            "--task-budget",
            "--resume-session-at",
            "--session-mirror",
            "--agent",
        ] {
            assert!(
                warnings.iter().any(|w| w.contains(flag)),
                "{flag}: {warnings:?}"
            );
        }
        let (_, warnings) = Args::parse_command_line(line(&["-p", "hi"])).unwrap();
        assert!(warnings.is_empty());
    }

    #[test]
    fn model_options_take_their_values_never_the_prompt() {
        // As a user writes it: the prompt first, the flags after it.
        let (args, warnings) = Args::parse_command_line(line(&[
            "-p",
            "explain this",
            "--effort",
            "high",
            "--thinking",
            "adaptive",
            "--thinking-display=summarized",
            "--max-thinking-tokens",
            "4096",
            "--betas",
            "b1,b2",
            "--fallback-model",
            "haiku",
            "--json-schema",
            r#"{"type":"object"}"#,
            "--include-hook-events",
            "--agents",
            "{}",
        ]))
        .unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(args.prompt.as_deref(), Some("explain this"));
        assert_eq!(args.effort.as_deref(), Some("high"));
        assert_eq!(args.thinking.as_deref(), Some("adaptive"));
        assert_eq!(args.thinking_display.as_deref(), Some("summarized"));
        assert_eq!(args.max_thinking_tokens, Some(4096));
        assert_eq!(args.betas, ["b1", "b2"]);
        assert_eq!(args.fallback_model.as_deref(), Some("haiku"));
        assert_eq!(args.json_schema.as_deref(), Some(r#"{"type":"object"}"#));
        assert!(args.include_hook_events);
        // The SDKs' `=` form, flags before the prompt.
        let (args, _) = Args::parse_command_line(line(&[
            "--effort=low",
            "--thinking=disabled",
            "--betas=x",
            "-p",
            "hi",
        ]))
        .unwrap();
        assert_eq!(args.prompt.as_deref(), Some("hi"));
        assert_eq!(args.effort.as_deref(), Some("low"));
        assert_eq!(args.thinking.as_deref(), Some("disabled"));
        assert_eq!(args.betas, ["x"]);
        let e = Args::parse_command_line(line(&["-p", "hi", "--effort", "extreme"])).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::InvalidValue);
    }

    #[test]
    fn every_ignored_flag_says_why_in_the_help() {
        use clap::CommandFactory;
        let help = Args::command().render_help().to_string();
        for f in IGNORED_FLAGS.iter().chain(PARSED_BUT_IGNORED) {
            assert!(!f.reason.trim().is_empty(), "{}", f.name);
            assert!(
                help.lines()
                    .any(|l| l.trim_start().starts_with(f.name) && l.contains(f.reason)),
                "{} is not listed with its reason in --help:\n{help}",
                f.name
            );
            // An ignored flag is never one skiff acts on.
            let long = &f.name[2..];
            let parsed = Args::command()
                .get_arguments()
                .any(|a| a.get_long() == Some(long) && !a.is_hide_set());
            assert!(
                !parsed,
                "{} is a visible flag and in the ignored list",
                f.name
            );
        }
    }

    #[test]
    fn rule_lists() {
        assert_eq!(
            split_rules("Bash(git push:*),Edit Read"),
            vec!["Bash(git push:*)", "Edit", "Read"]
        );
        assert_eq!(split_rules(""), Vec::<String>::new());
    }
}
