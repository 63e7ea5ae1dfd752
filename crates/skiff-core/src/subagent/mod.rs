//! Subagents: the `Task` tool runs a child session of the actor's loop with its own context,
//! tools and limits; [`definition`] holds the agent types it can start.

pub mod definition;
pub(crate) mod env;
mod read_only_bash;
pub(crate) mod task_tool;

pub use definition::{
    AgentDefinition, AgentSource, builtin_agents, load_agents_dir, merge_agents, parse_agent_file,
    parse_agents_json,
};
pub use task_tool::{TASK_TOOL, TaskInput, TaskModel};
