//! `Agent`: configuration, conversation state and the public entry point [`Agent::run`].

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use skiff_llm::Provider;
use skiff_protocol::Message;
use skiff_tools::{ToolContext, ToolRegistry};

use crate::compaction::{CompactError, CompactReport, CompactionConfig};
use crate::cost::CostTracker;
use crate::hooks::{HookRunner, NoHooks};
use crate::permissions::{AllowAll, Approver, DenyAsks, PermissionChecker};
use crate::request::RequestTemplate;
use crate::run::Run;
use crate::session::{NoSession, SessionStore};

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
    /// Maximum model calls per run (`error_max_turns` beyond it).
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
    /// Session id reported in every frame.
    pub session_id: String,
    /// Working directory reported in `system/init`.
    pub cwd: PathBuf,
    /// Permission mode reported in `system/init`.
    pub permission_mode: String,
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
    /// Trim the oldest messages beyond this many (default: no limit).
    pub max_messages: Option<usize>,
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
            session_id: crate::frames::new_uuid(),
            cwd: PathBuf::from("."),
            permission_mode: "default".to_owned(),
            api_key_source: "none".to_owned(),
            tool_results_dir: None,
            context_window: None,
            compaction: CompactionConfig::default(),
            max_messages: None,
        }
    }
}

/// The agent: a provider, tools, seams and the conversation so far.
pub struct Agent {
    pub(crate) config: AgentConfig,
    pub(crate) provider: Arc<dyn Provider>,
    pub(crate) tools: Arc<ToolRegistry>,
    pub(crate) ctx: ToolContext,
    pub(crate) permissions: Arc<dyn PermissionChecker>,
    pub(crate) approver: Arc<dyn Approver>,
    pub(crate) hooks: Arc<dyn HookRunner>,
    pub(crate) history: Vec<Message>,
    pub(crate) costs: CostTracker,
    pub(crate) template: RequestTemplate,
    pub(crate) memory_sent: bool,
    pub(crate) session: Arc<dyn SessionStore>,
    /// Input tokens the API reported for the last call, and the history length it covered.
    pub(crate) last_input: Option<(u64, usize)>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("model", &self.config.model)
            .field("provider", &self.provider.name())
            .field("tools", &self.tools)
            .field("messages", &self.history.len())
            .finish_non_exhaustive()
    }
}

impl Agent {
    /// An agent with allow-all permissions and no hooks.
    pub fn new(
        config: AgentConfig,
        provider: Arc<dyn Provider>,
        tools: ToolRegistry,
        ctx: ToolContext,
    ) -> Self {
        let template = RequestTemplate::new(
            config.model.clone(),
            config.max_tokens,
            config.temperature,
            &config.system_prompt,
            tools.definitions(),
            config.prompt_caching,
        );
        Self {
            config,
            provider,
            tools: Arc::new(tools),
            ctx,
            permissions: Arc::new(AllowAll),
            approver: Arc::new(DenyAsks),
            hooks: Arc::new(NoHooks),
            history: Vec::new(),
            costs: CostTracker::default(),
            template,
            memory_sent: false,
            session: Arc::new(NoSession),
            last_input: None,
        }
    }

    /// Record the conversation in this session store.
    pub fn with_session(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.session = store;
        self
    }

    /// Start from an earlier conversation (resume). The memory reminder is not sent again.
    pub fn with_history(mut self, history: Vec<Message>) -> Self {
        self.memory_sent = !history.is_empty();
        self.history = history;
        self
    }

    /// Use this permission checker.
    pub fn with_permissions(mut self, checker: Arc<dyn PermissionChecker>) -> Self {
        self.permissions = checker;
        self
    }

    /// Use this approver for "ask" decisions.
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = approver;
        self
    }

    /// Use these hooks.
    pub fn with_hooks(mut self, hooks: Arc<dyn HookRunner>) -> Self {
        self.hooks = hooks;
        self
    }

    /// Run one prompt through the loop. The returned [`Run`] is a stream of events ending with
    /// the `result` frame; [`Run::interrupt_handle`] stops it from elsewhere.
    pub fn run(&mut self, prompt: impl Into<String>) -> Run<'_> {
        Run::start(self, prompt.into())
    }

    /// The conversation so far (always valid for the API between runs).
    pub fn history(&self) -> &[Message] {
        &self.history
    }

    /// Session cost and usage so far.
    pub fn costs(&self) -> &CostTracker {
        &self.costs
    }

    /// The configuration.
    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// Tool names offered to the model.
    pub fn tool_names(&self) -> Vec<String> {
        self.tools.names()
    }

    /// Switch the model for the following turns (cost is tracked per model).
    pub fn set_model(&mut self, model: impl Into<String>) {
        let model = model.into();
        self.template.model = model.clone();
        self.config.model = model;
    }

    /// Compact the conversation now (the REPL's `/compact [focus]`): the older history is
    /// summarised by the model, with `focus` appended to the summary prompt, and replaced by
    /// the summary; see [`crate::compaction`]. Events emitted meanwhile (`compact_boundary`,
    /// notices) are returned in [`CompactReport::events`]. On error the history is unchanged.
    pub async fn compact(&mut self, focus: Option<&str>) -> Result<CompactReport, CompactError> {
        self.compact_with_cancel(focus, &tokio_util::sync::CancellationToken::new())
            .await
    }

    /// [`Agent::compact`], stopped early (history unchanged) when `cancel` is cancelled.
    pub async fn compact_with_cancel(
        &mut self,
        focus: Option<&str>,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<CompactReport, CompactError> {
        crate::context::compact_now(self, focus, cancel).await
    }

    /// Start a new conversation (same session settings).
    pub fn clear(&mut self) {
        self.history.clear();
        self.session.history_replaced(&self.history);
        self.last_input = None;
        self.memory_sent = false;
        self.ctx.files.clear();
    }
}
