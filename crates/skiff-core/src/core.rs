//! [`Core`]: everything one session owns — configuration, provider, tools, seams, the
//! [`Conversation`] and the costs. The session actor owns the only `Core`; turns, compaction and
//! the other operations borrow it one at a time.

use std::sync::Arc;

use skiff_llm::Provider;
use skiff_tools::{ToolContext, ToolRegistry};
use tokio_util::sync::CancellationToken;

use crate::config::AgentConfig;
use crate::context_env::ContextEnv;
use crate::conversation::Conversation;
use crate::cost::CostTracker;
use crate::frames::EventSink;
use crate::hooks::{HookCommon, HookRunner};
use crate::live::Live;
use crate::permissions::{Approver, PermissionChecker};
use crate::request::RequestTemplate;
use crate::subagent::env::SubagentEnv;

/// The state of one session.
pub(crate) struct Core {
    pub config: AgentConfig,
    pub provider: Arc<dyn Provider>,
    pub tools: Arc<ToolRegistry>,
    pub ctx: ToolContext,
    pub permissions: Arc<dyn PermissionChecker>,
    pub approver: Arc<dyn Approver>,
    pub hooks: Arc<dyn HookRunner>,
    pub conversation: Conversation,
    pub costs: CostTracker,
    pub template: RequestTemplate,
    /// Id of the prompt being answered (hooks' `prompt_id`).
    pub prompt_id: Option<String>,
    /// The SessionStart source to fire before the next prompt (`startup`, `resume`, `clear`,
    /// `compact`), if any.
    pub session_source: Option<&'static str>,
    /// SessionStart has fired (SessionEnd fires at the end).
    pub session_started: bool,
    /// Tools still on their way (MCP servers connecting).
    pub late_tools: Vec<crate::late_tools::LateTools>,
    /// The session's own tools, without its MCP servers' (`tools` adds theirs).
    pub base_tools: Arc<ToolRegistry>,
    /// The MCP servers (their tools, instructions, prompts and resources change).
    pub mcp: Vec<Arc<dyn skiff_tools::McpCatalog>>,
    /// The servers' generation the tools and instructions were last taken at.
    pub mcp_generation: Option<u64>,
    /// MCP server statuses, once known.
    pub mcp_servers: Vec<skiff_protocol::sdk::McpServerStatus>,
    /// What the `Task` tool's subagents start from (when the session offers Task).
    pub subagents: Option<Arc<SubagentEnv>>,
    /// Notes for the user not yet shown (what the model in use leaves out of the reasoning
    /// options), and the ones shown already (each is shown once).
    pub notes: Notes,
    /// The usage the API reported for the last request.
    pub last_usage: Option<skiff_protocol::Usage>,
    /// What filled the context window after the last model call, for a client that asks
    /// while a turn runs.
    pub context_snapshot: Arc<std::sync::Mutex<Option<crate::context_usage::ContextUsage>>>,
}

/// What a [`Core`] is made of; [`Core::new`] derives the rest (the request template, costs).
pub(crate) struct CoreParts {
    pub config: AgentConfig,
    pub provider: Arc<dyn Provider>,
    pub tools: ToolRegistry,
    pub ctx: ToolContext,
    pub permissions: Arc<dyn PermissionChecker>,
    pub approver: Arc<dyn Approver>,
    pub hooks: Arc<dyn HookRunner>,
    pub conversation: Conversation,
    /// The model's prices (`None`: the provider's table).
    pub price: Option<skiff_llm::ModelInfo>,
    /// The SessionStart source before the first prompt (none for a subagent).
    pub session_source: Option<&'static str>,
    /// Tools still on their way (MCP servers connecting).
    pub late_tools: Vec<crate::late_tools::LateTools>,
    /// What the `Task` tool's subagents start from.
    pub subagents: Option<Arc<SubagentEnv>>,
}

/// Notices for the user, each shown once.
#[derive(Debug, Default)]
pub(crate) struct Notes {
    pending: Vec<String>,
    shown: std::collections::HashSet<String>,
}

impl Notes {
    /// Keep `notes` for the next [`Notes::emit`].
    pub fn add(&mut self, notes: impl IntoIterator<Item = String>) {
        self.pending.extend(notes);
    }

    /// Show the pending notes not shown before, as warnings of `kind`.
    pub fn emit(&mut self, sink: &EventSink, kind: &str) {
        for note in std::mem::take(&mut self.pending) {
            if self.shown.insert(note.clone()) {
                sink.notice(kind, "warning", note);
            }
        }
    }
}

impl Core {
    /// The one way a session or a subagent gets its core: the request template from the
    /// configuration and the tools (their descriptions compacted when configured).
    pub fn new(parts: CoreParts) -> Self {
        let CoreParts {
            config,
            provider,
            tools,
            ctx,
            permissions,
            approver,
            hooks,
            conversation,
            price,
            session_source,
            late_tools,
            subagents,
        } = parts;
        let mut definitions = tools.definitions();
        if config.compact_tools {
            crate::request::compact_descriptions(&mut definitions);
        }
        let template = RequestTemplate::new(
            config.model.clone(),
            config.max_tokens,
            config.temperature,
            &config.system_prompt,
            definitions,
            config.prompt_caching,
        );
        let tools = Arc::new(tools);
        let mut core = Self {
            conversation,
            config,
            provider,
            base_tools: Arc::clone(&tools),
            tools,
            ctx,
            permissions,
            approver,
            hooks,
            costs: CostTracker::with_price(price),
            template,
            prompt_id: None,
            session_source,
            session_started: false,
            late_tools,
            mcp: Vec::new(),
            mcp_generation: Some(0),
            mcp_servers: Vec::new(),
            subagents,
            notes: Notes::default(),
            last_usage: None,
            context_snapshot: Arc::default(),
        };
        core.apply_reasoning();
        core
    }

    /// Wait for tools still on their way and add them (before the first request).
    pub async fn receive_late_tools(&mut self) {
        if self.late_tools.is_empty() {
            return;
        }
        let mut base = (*self.base_tools).clone();
        for late in std::mem::take(&mut self.late_tools) {
            let arrived = late.arrive().await;
            self.mcp_servers.extend(arrived.servers);
            for tool in arrived.tools {
                if let Err(e) = base.register(tool) {
                    tracing::warn!(error = %e, "an MCP tool was left out");
                }
            }
            if let Some(catalog) = arrived.catalog {
                self.add_catalog(catalog);
            }
        }
        self.base_tools = Arc::new(base);
        self.mcp_generation = None;
        self.refresh_mcp().await;
    }

    /// Add the costs of subagents that finished to the session's (and to `usage`, the run's).
    pub fn collect_subagent_costs(&mut self, usage: &mut skiff_protocol::Usage) {
        let Some(env) = &self.subagents else {
            return;
        };
        for child in env.take_costs() {
            usage.accumulate(&child.total_usage);
            self.costs.merge(&child);
        }
    }

    /// Take over the live settings (a model switched while idle or mid-turn).
    pub fn sync(&mut self, live: &Live) {
        if self.config.model != live.model {
            tracing::info!(from = %self.config.model, to = %live.model, "model switched");
            self.config.model.clone_from(&live.model);
            self.template.model.clone_from(&live.model);
            self.apply_reasoning();
        }
        if self.config.reasoning != live.reasoning {
            self.config.reasoning.clone_from(&live.reasoning);
            self.apply_reasoning();
        }
        if self.config.permission_mode != live.mode {
            self.conversation.note_mode(live.mode.as_str());
        }
        self.config.permission_mode = live.mode;
    }

    /// What the requests of the model in use carry for the session's thinking and effort.
    pub fn apply_reasoning(&mut self) {
        let chat = self.provider.history_encoding() == skiff_llm::openai::CHAT_ENCODING;
        let notes = self.template.set_reasoning(&self.config.reasoning, chat);
        self.notes.add(notes);
    }

    /// The fields every hook input starts with.
    pub fn hook_common(&self) -> HookCommon {
        let own = self.conversation.transcript_path();
        let transcript = match &self.config.subagent {
            Some(sub) => sub.parent_transcript.as_deref(),
            None => own,
        };
        HookCommon {
            session_id: self.config.session_id.clone(),
            transcript_path: transcript
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            agent: self
                .config
                .subagent
                .as_ref()
                .map(|s| (s.agent_id.clone(), s.agent_type.clone())),
            cwd: self.config.cwd.display().to_string(),
            prompt_id: self.prompt_id.clone(),
            permission_mode: self.config.permission_mode.as_str().to_owned(),
        }
    }

    /// The conversation and what context management needs besides it.
    pub fn context_parts<'a>(
        &'a mut self,
        sink: &'a EventSink,
        cancel: &'a CancellationToken,
    ) -> (&'a mut Conversation, ContextEnv<'a>) {
        let hook_common = self.hook_common();
        let todos = self.ctx.todos.reminder();
        let Self {
            config,
            provider,
            hooks,
            template,
            costs,
            conversation,
            ..
        } = self;
        let (config, provider, hooks): (
            &'a AgentConfig,
            &'a Arc<dyn Provider>,
            &'a Arc<dyn HookRunner>,
        ) = (config, provider, hooks);
        let env = ContextEnv {
            config,
            model: &config.model,
            provider: provider.as_ref(),
            hooks: hooks.as_ref(),
            hook_common,
            template,
            costs,
            sink,
            cancel,
            todos,
        };
        (conversation, env)
    }

    /// Start a new conversation (same settings); file read states are forgotten. SessionEnd
    /// (reason `clear`) fires for the old one, SessionStart (source `clear`) before the next
    /// prompt.
    pub async fn clear(&mut self, sink: &EventSink) {
        self.end_session(sink, "clear").await;
        self.conversation.clear();
        self.ctx.files.clear();
        self.session_source = Some("clear");
    }

    /// Keep only the first `n` messages (a rewind); the files read before are forgotten, so
    /// the model reads them again before editing. Back to no message, the memory goes with the
    /// next prompt again.
    pub fn rewind_history(&mut self, n: usize) {
        if n >= self.conversation.len() {
            return;
        }
        if n == 0 {
            self.conversation.clear();
        } else {
            let kept = self.conversation.messages()[..n].to_vec();
            self.conversation.replace(kept);
        }
        self.ctx.files.clear();
    }

    /// Fire SessionEnd once for a started session.
    pub async fn end_session(&mut self, sink: &EventSink, reason: &str) {
        if !std::mem::take(&mut self.session_started) {
            return;
        }
        let common = self.hook_common();
        crate::hooks::fire(
            self.hooks.as_ref(),
            sink,
            &common,
            crate::hooks::HookEvent::SessionEnd,
            Some(reason),
            || crate::hooks::fields([("reason", reason.into())]),
        )
        .await;
    }
}
