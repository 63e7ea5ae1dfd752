//! [`SubagentEnv`]: what every subagent of a session starts from — the parent's provider,
//! tools, permissions, approvals, hooks, sink, configuration and live settings.

use std::sync::{Arc, Mutex, RwLock};

use skiff_llm::Provider;
use skiff_tools::ToolRegistry;
use tokio::sync::watch;

use super::definition::AgentDefinition;
use crate::config::AgentConfig;
use crate::cost::CostTracker;
use crate::frames::EventSink;
use crate::hooks::HookRunner;
use crate::live::Live;
use crate::permissions::{Approver, PermissionChecker};
use crate::requests::Requester;
use crate::store::SessionStore;

/// The Task tool's name.
pub const TASK_TOOL: &str = "Task";

/// What every subagent of a session starts from: the parent's parts.
pub(crate) struct SubagentEnv {
    pub provider: Arc<dyn Provider>,
    /// The parent's tools (without Task), updated when late tools (MCP) arrive.
    pub tools: RwLock<Arc<ToolRegistry>>,
    pub permissions: Arc<dyn PermissionChecker>,
    pub approver: Arc<dyn Approver>,
    pub hooks: Arc<dyn HookRunner>,
    pub requester: Requester,
    /// The parent's sink (child sinks tag frames with the Task call's id).
    pub sink: EventSink,
    /// The parent's configuration at start.
    pub config: AgentConfig,
    /// The parent's model and mode now.
    pub live: watch::Receiver<Live>,
    /// The types a Task call may ask for.
    pub agents: Vec<AgentDefinition>,
    /// The parent's store (subagent transcripts go beside it).
    pub store: Arc<dyn SessionStore>,
    /// Costs of finished subagents, not yet added to the parent's.
    pub costs: Mutex<Vec<CostTracker>>,
}

impl SubagentEnv {
    /// Costs of subagents that finished since the last call.
    pub fn take_costs(&self) -> Vec<CostTracker> {
        self.costs
            .lock()
            .map(|mut c| std::mem::take(&mut *c))
            .unwrap_or_default()
    }

    /// The tools as they are now (MCP tools may arrive after the start).
    pub fn set_tools(&self, tools: &ToolRegistry) {
        let mut tools = tools.clone();
        tools.disable(TASK_TOOL);
        if let Ok(mut slot) = self.tools.write() {
            *slot = Arc::new(tools);
        }
    }
}
