//! [`Agent`]: builds a session — configuration, provider, tools, seams, an earlier history —
//! and starts it with [`Agent::spawn`].

use std::sync::Arc;

use skiff_llm::Provider;
use skiff_protocol::Message;
use skiff_tools::{ToolContext, ToolRegistry};
use tokio::sync::mpsc;

use crate::config::AgentConfig;
use crate::conversation::Conversation;
use crate::core::{Core, CoreParts};
use crate::event::{DeltaMode, Event};
use crate::frames::EventSink;
use crate::hooks::{HookRunner, NoHooks};
use crate::late_tools::LateTools;
use crate::permissions::{AllowAll, Approver, DenyAsks, PermissionChecker};
use crate::requests::Requester;
use crate::session::Session;
use crate::store::{NoSession, SessionStore};
use crate::subagent::env::{SubagentEnv, TASK_TOOL};
use crate::subagent::task_tool::TaskTool;

/// The parts of a session, before it starts.
pub struct Agent {
    config: AgentConfig,
    provider: Arc<dyn Provider>,
    tools: ToolRegistry,
    ctx: ToolContext,
    permissions: Arc<dyn PermissionChecker>,
    approver: Arc<dyn Approver>,
    hooks: Arc<dyn HookRunner>,
    store: Arc<dyn SessionStore>,
    history: Vec<Message>,
    /// Tools still on their way (MCP servers connecting).
    late_tools: Vec<LateTools>,
    /// Where the session's rule changes go.
    permission_store: Option<Arc<dyn crate::permissions::PermissionStore>>,
    /// The session's event channel, made here so that seams can get a [`Requester`] before
    /// the session starts.
    events: (mpsc::UnboundedSender<Event>, mpsc::UnboundedReceiver<Event>),
    requester: Requester,
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
    /// An agent with allow-all permissions, approvals denied, no hooks and no session store.
    pub fn new(
        config: AgentConfig,
        provider: Arc<dyn Provider>,
        mut tools: ToolRegistry,
        ctx: ToolContext,
    ) -> Self {
        // WebSearch runs on the provider's side: not offered where the provider has no search
        // (unless the context brings a side model that searches).
        let searches = provider.server_web_search()
            || ctx.side_model.as_ref().is_some_and(|s| s.has_web_search());
        if !searches {
            tools.disable(skiff_tools::web_search::NAME);
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let requester = Requester::new(EventSink::with_deltas(
            tx.clone(),
            config.session_id.clone(),
            DeltaMode::Off,
        ));
        Self {
            config,
            provider,
            tools,
            ctx,
            permissions: Arc::new(AllowAll),
            approver: Arc::new(DenyAsks),
            hooks: Arc::new(NoHooks),
            store: Arc::new(NoSession),
            history: Vec::new(),
            late_tools: Vec::new(),
            permission_store: None,
            events: (tx, rx),
            requester,
        }
    }

    /// Asks this session's client questions ([`crate::Event::Request`], answered with
    /// [`crate::Op::Reply`]): for hooks or other seams built before the session starts that
    /// need the client's answer (an SDK's hook callbacks, for example).
    pub fn requester(&self) -> Requester {
        self.requester.clone()
    }

    /// Record the conversation in this session store.
    pub fn with_session(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.store = store;
        self
    }

    /// Start from an earlier conversation (resume). The memory reminder is not sent again.
    pub fn with_history(mut self, history: Vec<Message>) -> Self {
        self.history = history;
        self
    }

    /// Use this permission checker.
    pub fn with_permissions(mut self, checker: Arc<dyn PermissionChecker>) -> Self {
        self.permissions = checker;
        self
    }

    /// Use this approver for "ask" decisions ([`crate::permissions::AskClient`] asks the
    /// session's client with a request).
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = approver;
        self
    }

    /// Where [`crate::session::Op::UpdatePermissions`] rule changes go (and are saved); without
    /// one, rules cannot change while the session runs.
    pub fn with_permission_store(
        mut self,
        store: Arc<dyn crate::permissions::PermissionStore>,
    ) -> Self {
        self.permission_store = Some(store);
        self
    }

    /// Add tools that arrive later (MCP servers connecting): the first turn waits for them.
    pub fn with_late_tools(mut self, tools: LateTools) -> Self {
        self.late_tools.push(tools);
        self
    }

    /// Add hooks beside the ones already set (an SDK host's, beside the settings' commands).
    pub fn add_hooks(mut self, hooks: Arc<dyn HookRunner>) -> Self {
        self.hooks = Arc::new(crate::hooks::HookChain(vec![self.hooks, hooks]));
        self
    }

    /// Use these hooks.
    pub fn with_hooks(mut self, hooks: Arc<dyn HookRunner>) -> Self {
        self.hooks = hooks;
        self
    }

    /// The configuration.
    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// Mutable configuration, before the session starts.
    pub fn config_mut(&mut self) -> &mut AgentConfig {
        &mut self.config
    }

    /// Messages of the earlier conversation it starts from.
    pub fn history(&self) -> &[Message] {
        &self.history
    }

    /// Tool names offered to the model.
    pub fn tool_names(&self) -> Vec<String> {
        self.tools.names()
    }

    /// Start the session on the current tokio runtime. The session lives until
    /// [`Session::shutdown`] or until its [`Session`] is dropped.
    pub fn spawn(self) -> Session {
        let (ev_tx, ev_rx) = self.events;
        let requester = self.requester;
        let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
        let session_id = self.config.session_id.clone();
        let sink = EventSink::with_deltas(ev_tx, session_id.clone(), self.config.deltas);
        let (live_tx, live_rx) = tokio::sync::watch::channel(crate::live::Live {
            reasoning: self.config.reasoning.clone(),
            model: self.config.model.clone(),
            mode: self.config.permission_mode,
        });
        let mut tools = self.tools;
        let subagents = if self.config.agents.is_empty() || tools.get(TASK_TOOL).is_some() {
            None
        } else {
            let env = Arc::new(SubagentEnv {
                provider: Arc::clone(&self.provider),
                tools: std::sync::RwLock::new(Arc::new(tools.clone())),
                permissions: Arc::clone(&self.permissions),
                approver: Arc::clone(&self.approver),
                hooks: Arc::clone(&self.hooks),
                requester: requester.clone(),
                sink: sink.clone(),
                config: self.config.clone(),
                live: live_rx.clone(),
                agents: self.config.agents.clone(),
                store: Arc::clone(&self.store),
                costs: std::sync::Mutex::new(Vec::new()),
            });
            let task: Arc<dyn skiff_tools::Tool> =
                Arc::new(skiff_tools::Typed::new(TaskTool::new(Arc::clone(&env))));
            let _ = tools.register(task);
            tools.register_alias("Agent", TASK_TOOL, &[]);
            Some(env)
        };
        // Structured output: the main conversation's own tool (subagents do not get it).
        if let Some(schema) = &self.config.json_schema {
            let tool: Arc<dyn skiff_tools::Tool> =
                Arc::new(crate::structured::StructuredOutputTool::new(schema.clone()));
            let _ = tools.register(tool);
        }
        let price = self.config.price;
        // Tools' side calls (WebFetch) go to the provider's small model unless the caller
        // gave the context a side model of its own.
        let mut ctx = self.ctx;
        if ctx.side_model.is_none() {
            ctx.side_model = Some(crate::side_calls::for_session(&self.provider, &self.config));
        }
        // E.g. the server's prices and context window, looked up while the first call goes.
        self.provider.prepare(&self.config.model);
        let resumed = !self.history.is_empty();
        let core = Core::new(CoreParts {
            conversation: Conversation::with_history(self.store, self.history),
            config: self.config,
            provider: self.provider,
            tools,
            ctx,
            permissions: self.permissions,
            approver: self.approver,
            hooks: self.hooks,
            price,
            session_source: Some(if resumed { "resume" } else { "startup" }),
            late_tools: self.late_tools,
            subagents,
        });
        let task = tokio::spawn(crate::session::actor_run(
            core,
            cmd_rx,
            sink,
            requester,
            (live_tx, live_rx),
            self.permission_store,
        ));
        Session::new(cmd_tx, ev_rx, task, session_id)
    }
}
