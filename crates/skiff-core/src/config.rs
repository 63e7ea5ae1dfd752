//! [`AgentConfig`]: the settings of one session, with the documented defaults.

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use crate::permissions::PermissionMode;

pub use crate::event::DeltaMode;

/// Agent settings. `Default` gives the documented defaults.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// Model id.
    pub model: String,
    /// Max output tokens per call (default 8192).
    pub max_tokens: u32,
    /// Sampling temperature (API default when unset).
    pub temperature: Option<f32>,
    /// System prompt parts (see `prompt::build_system_prompt`).
    pub system_prompt: Vec<String>,
    /// Memory text (CLAUDE.md/AGENTS.md reminder) put before the first prompt.
    pub memory: Option<String>,
    /// Maximum model calls per user message (`error_max_turns` beyond it).
    pub max_turns: Option<u32>,
    /// Maximum session cost in USD (`error_max_budget_usd` once reached).
    pub max_budget_usd: Option<f64>,
    /// Maximum characters of one tool result (default 40,000).
    pub max_tool_result_chars: usize,
    /// How many times a text answer cut by max_tokens is continued (default 3).
    pub max_continuations: u32,
    /// Prompt caching breakpoints (default on).
    pub prompt_caching: bool,
    /// Interval of `tool_progress` events (default 1 s).
    pub progress_interval: Duration,
    /// At most this many tool calls of one turn run at the same time (default 16).
    pub max_parallel_tools: usize,
    /// Session id reported in every frame.
    pub session_id: String,
    /// Working directory reported in `system/init`.
    pub cwd: PathBuf,
    /// Permission mode at the start (changed later with `Op::SetPermissionMode`).
    pub permission_mode: PermissionMode,
    /// Credential source reported in `system/init`.
    pub api_key_source: String,
    /// Where tool results cut by truncation are saved whole (the session's directory);
    /// the truncation notice then tells the model the file's path.
    pub tool_results_dir: Option<PathBuf>,
    /// Context window in tokens; `None` takes the model table's (200,000 for unknown models).
    pub context_window: Option<u64>,
    /// Compaction of long conversations (default: summarise at 80% of the window, keep the
    /// 6 most recent messages).
    pub compaction: CompactionConfig,
    /// Keep at most this many messages (default: no limit). Once passed, the oldest are
    /// trimmed down to about half of it, so trims (which break the prompt cache) stay rare.
    pub max_messages: Option<usize>,
    /// How stream events reach the client (default: `stream_event` frames).
    pub deltas: DeltaMode,
    /// Small local models (`--compact-prompt`): tool descriptions on one line, a plan is told to
    /// act, and a task that asks for a change gets calls, not answers, until a file changed
    /// (`act_nudge::forces_call`).
    pub compact_tools: bool,
    /// The command that runs the project's tests, when known (`--compact-prompt` guesses it,
    /// see [`crate::prompt::EnvironmentInfo::with_listing`]): with `compact_tools`, the first
    /// call in a task about failing tests is held to Bash, to run them.
    pub test_command: Option<String>,
    /// Which tools are deferred: named to the model and loaded with ToolSearch when it asks
    /// (default: none; the CLI defers the rare ones).
    pub defer_tools: DeferPolicy,
    /// Prices of the model when the table does not know them (`skiff.pricing`).
    pub price: Option<skiff_llm::ModelInfo>,
    /// The small model of tools' side calls (WebFetch); `None`: Haiku on Anthropic, else the
    /// session's model (see [`crate::side_calls::small_model`]).
    pub small_model: Option<String>,
    /// Extra fields of the `system/init` frame (the front end's, e.g. `sandbox`).
    pub init_extra: skiff_protocol::JsonMap,
    /// Extra fields of the `system/init` frame that come later (the sandbox's namespaces, while
    /// its probe runs): they replace `init_extra`'s, and the frame waits for them without
    /// holding up the request (see [`crate::frames::LateInit`]).
    pub late_init: Option<crate::frames::LateInitFields>,
    /// Subagent types the `Task` tool offers (empty: no Task tool).
    pub agents: Vec<crate::subagent::AgentDefinition>,
    /// Set when this session is a subagent run by a parent's `Task` call.
    pub subagent: Option<SubagentInfo>,
    /// Slash commands: the front end's built-in names and the custom commands and skills
    /// (`system/init.slash_commands` and `skills`; `/name args` prompts are expanded).
    pub commands: std::sync::Arc<crate::commands::CommandSet>,
    /// Thinking and effort (default: none asked for).
    pub reasoning: crate::reasoning::Reasoning,
    /// The model to switch to after 3 overloaded responses in a row (`--fallback-model`;
    /// the provider gives up on the main one after that many).
    pub fallback_model: Option<String>,
    /// Structured output (`--json-schema`): the `StructuredOutput` tool is offered and the
    /// run ends once it is called with valid input.
    pub json_schema: Option<crate::structured::OutputSchema>,
    /// The memory files in `memory`, for `get_context_usage`.
    pub memory_files: Vec<MemoryUsage>,
    /// Send running commands' output as [`crate::Event::ToolOutput`] as it comes (an editor
    /// shows it in the call); default off.
    pub tool_output: bool,
}

/// Who a subagent session is (hooks get these fields; SubagentStop fires instead of Stop).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubagentInfo {
    /// Its id.
    pub agent_id: String,
    /// Its type (`subagent_type`).
    pub agent_type: String,
    /// The parent session's transcript.
    pub parent_transcript: Option<PathBuf>,
    /// The subagent's own transcript.
    pub agent_transcript: Option<PathBuf>,
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            model: "claude-sonnet-4-5".to_owned(),
            max_tokens: 8192,
            temperature: None,
            system_prompt: Vec::new(),
            memory: None,
            max_turns: None,
            max_budget_usd: None,
            max_tool_result_chars: skiff_tools::DEFAULT_MAX_RESULT_CHARS,
            max_continuations: 3,
            prompt_caching: true,
            progress_interval: Duration::from_secs(1),
            max_parallel_tools: 16,
            session_id: crate::frames::new_uuid(),
            cwd: PathBuf::from("."),
            permission_mode: PermissionMode::Default,
            api_key_source: "none".to_owned(),
            tool_results_dir: None,
            context_window: None,
            compaction: CompactionConfig::default(),
            max_messages: None,
            deltas: DeltaMode::Frames,
            compact_tools: false,
            test_command: None,
            defer_tools: DeferPolicy::Off,
            price: None,
            small_model: None,
            init_extra: skiff_protocol::JsonMap::new(),
            late_init: None,
            agents: Vec::new(),
            subagent: None,
            commands: std::sync::Arc::default(),
            reasoning: crate::reasoning::Reasoning::default(),
            fallback_model: None,
            json_schema: None,
            memory_files: Vec::new(),
            tool_output: false,
        }
    }
}

/// What happens when the context passes the compaction threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CompactionStrategy {
    /// Summarise the older history with the model (trimming if that fails).
    #[default]
    Summarize,
    /// Drop the oldest messages instead of summarising.
    TrimOnly,
    /// Do nothing at the threshold; only the hard limits (window, `max_messages`) trim.
    Off,
}

impl FromStr for CompactionStrategy {
    type Err = String;

    /// `summarize` (`summarise`, `auto`), `trim` (`trim_only`, `trim-only`) or `off`
    /// (`none`, `false`), case-insensitive.
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "summarize" | "summarise" | "auto" => Ok(Self::Summarize),
            "trim" | "trim_only" | "trim-only" | "trimonly" => Ok(Self::TrimOnly),
            "off" | "none" | "false" | "disabled" => Ok(Self::Off),
            other => Err(format!(
                "unknown compaction strategy {other:?} (expected summarize, trim or off)"
            )),
        }
    }
}

/// When compaction starts: a share of the context window or an absolute token count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactionThreshold {
    /// This percentage of the context window (clamped to 1..=100).
    Percent(u8),
    /// This many input tokens.
    Tokens(u64),
}

impl Default for CompactionThreshold {
    fn default() -> Self {
        Self::Percent(80)
    }
}

impl CompactionThreshold {
    /// The threshold in tokens for a context window of `window` tokens.
    pub fn tokens(self, window: u64) -> u64 {
        match self {
            Self::Percent(p) => window * u64::from(p.clamp(1, 100)) / 100,
            Self::Tokens(n) => n,
        }
    }
}

impl FromStr for CompactionThreshold {
    type Err = String;

    /// `80%` (a percentage of the window) or `150000` (tokens).
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if let Some(p) = s.strip_suffix('%') {
            return match p.trim().parse::<u8>() {
                Ok(p) if (1..=100).contains(&p) => Ok(Self::Percent(p)),
                _ => Err(format!(
                    "invalid compaction threshold {s:?} (expected 1%..100%)"
                )),
            };
        }
        s.replace('_', "")
            .parse::<u64>()
            .ok()
            .filter(|n| *n > 0)
            .map(Self::Tokens)
            .ok_or_else(|| {
                format!("invalid compaction threshold {s:?} (expected a percentage or tokens)")
            })
    }
}

/// Compaction settings (`AgentConfig::compaction`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionConfig {
    /// What to do at the threshold (default summarize).
    pub strategy: CompactionStrategy,
    /// When to act (default 80% of the context window).
    pub threshold: CompactionThreshold,
    /// How many of the most recent messages stay verbatim (default 6). The kept part always
    /// starts with an assistant message, so it may hold one more.
    pub keep_recent: usize,
    /// Max output tokens of the summary call (default 8192, capped at the model's limit).
    pub summary_max_tokens: u32,
}

impl Default for CompactionConfig {
    fn default() -> Self {
        Self {
            strategy: CompactionStrategy::Summarize,
            threshold: CompactionThreshold::default(),
            keep_recent: 6,
            summary_max_tokens: 8192,
        }
    }
}

/// One memory file loaded into the conversation.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct MemoryUsage {
    /// Its path.
    pub path: String,
    /// `User`, `Project` or `Local`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Estimated tokens.
    pub tokens: u64,
}

/// What a session defers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DeferPolicy {
    /// Every tool is sent in full (`--tools` lists, `ENABLE_TOOL_SEARCH=false`, no ToolSearch).
    #[default]
    Off,
    /// [`crate::deferred::RARE_TOOLS`], and MCP tools past this many estimated tokens.
    Rare {
        /// Estimated tokens of MCP tool definitions sent in full (0: every MCP tool deferred).
        mcp_budget: u64,
    },
}
