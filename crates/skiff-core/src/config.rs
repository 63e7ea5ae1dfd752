//! [`AgentConfig`]: the settings of one session, with the documented defaults.

use std::path::PathBuf;
use std::time::Duration;

use crate::compaction::CompactionConfig;
use crate::permissions::PermissionMode;

/// How the raw API stream events of an answer reach the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeltaMode {
    /// Not at all (stream-json without `--include-partial-messages`, json): no per-delta work.
    Off,
    /// As bare [`crate::Event::Delta`]s without an envelope or uuid (renderers that print
    /// the answer as it streams).
    Raw,
    /// As `stream_event` frames, each with its own uuid (`--include-partial-messages`).
    #[default]
    Frames,
}

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
        }
    }
}
