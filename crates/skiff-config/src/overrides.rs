//! What a front end asks for beyond the settings files — the command line's flags, an editor's
//! session options — as plain data. Later wins over the settings files and the environment.

use std::path::PathBuf;

/// A session's overrides. `Default` asks for nothing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    /// The workspace (the current directory when `None`).
    pub cwd: Option<PathBuf>,
    /// Extra working directories (`--add-dir`), relative to the workspace or absolute.
    pub add_dirs: Vec<PathBuf>,
    /// Extra settings: a JSON object or the path of a settings file (`--settings`).
    pub settings: Option<String>,
    /// Which settings files are read: comma list of `user`, `project`, `local`
    /// (`--setting-sources`).
    pub setting_sources: Option<String>,
    /// Trust the workspace for this run (`--trust`).
    pub trust: bool,
    /// The model (`--model`).
    pub model: Option<String>,
    /// Most output tokens per response (`--max-tokens`).
    pub max_tokens: Option<u32>,
    /// Most turns of a run (`--max-turns`).
    pub max_turns: Option<u32>,
    /// Most turns when nothing else sets a limit (print mode's 100).
    pub default_max_turns: Option<u32>,
    /// Largest cost of a run, in USD (`--max-budget-usd`).
    pub max_budget_usd: Option<f64>,
    /// The provider by name (`--provider`).
    pub provider: Option<String>,
    /// The provider's base URL (`--base-url`).
    pub base_url: Option<String>,
    /// A host the workspace may send the API key to (`--trust-base-url`).
    pub trust_base_url: Option<String>,
    /// The scripted provider's script (`--script`).
    pub script: Option<PathBuf>,
    /// The short system prompt and tool descriptions (`--compact-prompt`).
    pub compact_prompt: bool,
    /// No prompt caching (`--no-prompt-caching`).
    pub no_prompt_caching: bool,
    /// The permission mode (`--permission-mode`).
    pub permission_mode: Option<String>,
    /// `bypassPermissions` (`--dangerously-skip-permissions`).
    pub dangerously_skip_permissions: bool,
    /// Who answers approvals (`--permission-prompt-tool`; `stdio` for an SDK host).
    pub permission_prompt_tool: Option<String>,
    /// Allow rules (`--allowedTools`).
    pub allowed_tools: Vec<String>,
    /// Deny rules (`--disallowedTools`).
    pub disallowed_tools: Vec<String>,
    /// The built-in tools offered (`--tools`; `None`: the defaults).
    pub tools: Option<Vec<String>>,
    /// The sandbox's filesystem mode (`--sandbox`).
    pub sandbox: Option<String>,
    /// The sandbox's network policy (`--sandbox-network`).
    pub sandbox_network: Option<String>,
    /// MCP server configurations: JSON objects or file paths (`--mcp-config`).
    pub mcp_config: Vec<String>,
    /// MCP servers handed over as data (an editor's, in ACP's `session/new`): with the
    /// `mcp_config` servers, above every file; a name clash replaces the file's entry.
    pub mcp_servers: Vec<skiff_mcp::ServerConfig>,
    /// Only the servers of `mcp_config` and `mcp_servers` (`--strict-mcp-config`).
    pub strict_mcp_config: bool,
    /// Plugin directories loaded for this session (`--plugin-dir`), relative to the workspace
    /// or absolute.
    pub plugin_dirs: Vec<PathBuf>,
    /// Agent definitions as JSON (`--agents`).
    pub agents: Option<String>,
    /// The thinking budget in tokens (`--max-thinking-tokens`; 0: no thinking).
    pub max_thinking_tokens: Option<u32>,
    /// `adaptive`, `enabled` or `disabled` (`--thinking`).
    pub thinking: Option<String>,
    /// How adaptive thinking is shown: `summarized` or `omitted` (`--thinking-display`).
    pub thinking_display: Option<String>,
    /// Effort: `low`, `medium`, `high`, `xhigh` or `max` (`--effort`).
    pub effort: Option<String>,
    /// Extra `anthropic-beta` values (`--betas`).
    pub betas: Vec<String>,
    /// The model to switch to when the main one is overloaded (`--fallback-model`).
    pub fallback_model: Option<String>,
    /// A JSON Schema the final answer must match (`--json-schema`): the StructuredOutput tool.
    pub json_schema: Option<String>,
    /// The whole system prompt (`--system-prompt`).
    pub system_prompt: Option<String>,
    /// The whole system prompt from a file (`--system-prompt-file`).
    pub system_prompt_file: Option<PathBuf>,
    /// Text appended to the system prompt (`--append-system-prompt`).
    pub append_system_prompt: Option<String>,
    /// Text appended to the system prompt, from a file (`--append-system-prompt-file`).
    pub append_system_prompt_file: Option<PathBuf>,
    /// Which transcript the session writes to and starts from.
    pub session: SessionOverrides,
}

/// The session's transcript.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionOverrides {
    /// Resume this session (`--resume ID`).
    pub resume: Option<String>,
    /// Resume the newest session of the workspace (`--continue`).
    pub continue_latest: bool,
    /// Write the resumed conversation to a new session (`--fork-session`).
    pub fork: bool,
    /// The new session's id (`--session-id`).
    pub session_id: Option<String>,
    /// Keep no transcript (`--no-session-persistence`).
    pub no_persistence: bool,
    /// Nobody can be asked to choose (print mode, an SDK host): `--resume` needs an id.
    pub headless: bool,
}
