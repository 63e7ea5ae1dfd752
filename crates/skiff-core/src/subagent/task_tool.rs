//! The `Task` tool: runs a subagent — a child session with its own conversation, system
//! prompt, tools, model and turn limit — sharing the parent's provider, workspace, permissions,
//! approvals, hooks and change log. Its frames reach the parent's client tagged with
//! `parent_tool_use_id`; its final text is the tool result; its cost rolls up into the parent's.

use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use skiff_protocol::sdk::ResultMessage;
use skiff_protocol::{ContentBlock, Usage};
use skiff_tools::{Tool, ToolContext, ToolOutput, ToolRegistry, TypedTool};
use tokio::sync::watch;

use super::definition::{AgentDefinition, WRITING_TOOLS};
use super::env::SubagentEnv;
pub use super::env::TASK_TOOL;
use super::read_only_bash::ReadOnlyBash;
use crate::config::SubagentInfo;
use crate::conversation::Conversation;
use crate::core::{Core, CoreParts};
use crate::event::{DeltaMode, UserInput};
use crate::live::Live;
use crate::store::{NoSession, SessionStore};
use crate::turn_io::TurnIo;
use crate::turn_loop::run_turn;

/// The models a Task call may name.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TaskModel {
    /// Claude Sonnet.
    Sonnet,
    /// Claude Opus.
    Opus,
    /// Claude Haiku.
    Haiku,
}

impl TaskModel {
    fn alias(self) -> &'static str {
        match self {
            Self::Sonnet => "sonnet",
            Self::Opus => "opus",
            Self::Haiku => "haiku",
        }
    }
}

/// Input of `Task`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskInput {
    /// The task in 3-5 words.
    pub description: String,
    /// The task for the agent.
    pub prompt: String,
    /// The agent type.
    pub subagent_type: String,
    /// Model (default: the agent's, else yours); haiku for quick, simple tasks.
    pub model: Option<TaskModel>,
}

/// The `Task` tool.
pub(crate) struct TaskTool {
    env: Arc<SubagentEnv>,
    description: String,
}

impl TaskTool {
    /// A Task tool over these agents.
    pub fn new(env: Arc<SubagentEnv>) -> Self {
        let mut description = String::from(
            "Launch a subagent for a complex, multi-step task. It works in its own context and \
             returns one final report, which only you see (relay what matters). Agents:\n",
        );
        for a in &env.agents {
            let tools = match (&a.tools, a.read_only) {
                (Some(t), _) => t.join(", "),
                (None, true) => {
                    "all but Edit, Write, NotebookEdit, Task; Bash read-only".to_owned()
                }
                (None, false) => "all but Task".to_owned(),
            };
            description.push_str(&format!(
                "- {}: {} (tools: {tools})\n",
                a.name, a.description
            ));
        }
        description.push_str(
            "Run independent tasks at once: several Task calls in one message. An agent starts \
             fresh: the prompt must hold all it needs (goal, context, what to return, whether to \
             write code).",
        );
        Self { env, description }
    }
}

#[async_trait]
impl TypedTool for TaskTool {
    type Input = TaskInput;
    const NAME: &'static str = TASK_TOOL;
    const SCHEMA: Option<&'static str> = Some(skiff_protocol::compact_json!(include_str!(
        "../schemas/Task.json"
    )));

    fn description(&self) -> &str {
        &self.description
    }

    fn is_read_only(&self) -> bool {
        // The subagent's own calls are each checked by the permission engine.
        true
    }

    fn is_concurrency_safe(&self, _input: &TaskInput) -> bool {
        true
    }

    async fn run(&self, input: TaskInput, ctx: &ToolContext) -> ToolOutput {
        let Some(agent) = self
            .env
            .agents
            .iter()
            .find(|a| a.name == input.subagent_type)
        else {
            let names: Vec<&str> = self.env.agents.iter().map(|a| a.name.as_str()).collect();
            return ToolOutput::tool_use_error(format!(
                "Agent type '{}' not found. Available agents: {}",
                input.subagent_type,
                names.join(", ")
            ));
        };
        run_subagent(&self.env, agent, input, ctx).await
    }
}

/// Run one subagent to the end and turn its result into the tool's output.
async fn run_subagent(
    env: &Arc<SubagentEnv>,
    agent: &AgentDefinition,
    input: TaskInput,
    ctx: &ToolContext,
) -> ToolOutput {
    let started = Instant::now();
    let agent_id = crate::frames::new_uuid().replace('-', "")[..16].to_owned();
    let parent_id = ctx.tool_use_id.as_deref().unwrap_or_default().to_owned();
    let live = env.live.borrow().clone();
    let model = child_model(
        env.provider.name(),
        &live.model,
        input.model.map(TaskModel::alias).or(agent.model.as_deref()),
    );
    // An agent definition can narrow the mode, never widen it: plan stays plan.
    let mode = live.mode.for_child(agent.permission_mode);
    let tools = child_tools(env, agent);
    let tool_count = tools.len();
    let store: Arc<dyn SessionStore> = env
        .store
        .child(&agent_id)
        .unwrap_or_else(|| Arc::new(NoSession));
    let agent_transcript = store.path().map(std::path::Path::to_path_buf);
    let mut config = env.config.clone();
    config.model = model.clone();
    config.permission_mode = mode;
    config.system_prompt = child_system_prompt(&env.config.system_prompt, &agent.prompt);
    config.max_turns = agent.max_turns.or(env.config.max_turns);
    config.deltas = DeltaMode::Off;
    config.init_extra = skiff_protocol::JsonMap::new();
    config.late_init = None;
    // Structured output is the main conversation's answer, not a subagent's.
    config.json_schema = None;
    config.subagent = Some(SubagentInfo {
        agent_id: agent_id.clone(),
        agent_type: agent.name.clone(),
        parent_transcript: env.store.path().map(std::path::Path::to_path_buf),
        agent_transcript: agent_transcript.clone(),
    });
    let child_ctx = ToolContext {
        files: Arc::default(),
        todos: Arc::default(),
        tool_use_id: None,
        ..ctx.clone()
    };
    let price = if model == env.config.model {
        env.config.price
    } else {
        None
    };
    let mut core = Core::new(CoreParts {
        conversation: Conversation::with_history(store, Vec::new()),
        config,
        provider: Arc::clone(&env.provider),
        tools,
        ctx: child_ctx,
        permissions: Arc::clone(&env.permissions),
        approver: Arc::clone(&env.approver),
        hooks: Arc::clone(&env.hooks),
        price,
        session_source: None,
        late_tools: Vec::new(),
        subagents: None,
    });
    let sink = env.sink.for_subagent(&parent_id);
    let reasoning = core.config.reasoning.clone();
    let (live_tx, _live_rx) = watch::channel(Live {
        model,
        mode,
        reasoning,
    });
    let io = TurnIo {
        sink: &sink,
        cancel: &ctx.cancel,
        requester: &env.requester,
        live: &live_tx,
        verbatim: false,
    };
    tracing::info!(agent = %agent.name, %agent_id, tools = tool_count, "subagent started");
    let result = run_turn(&mut core, UserInput::Text(input.prompt.clone()), &io).await;
    let tool_uses = count_tool_uses(core.conversation.messages());
    if let Ok(mut costs) = env.costs.lock() {
        costs.push(core.costs.clone());
    }
    tracing::info!(agent = %agent.name, %agent_id, turns = result.num_turns, "subagent finished");
    output_of(
        &result,
        &input.prompt,
        &agent_id,
        tool_uses,
        started.elapsed().as_millis(),
    )
}

/// The subagent's model: the call's or the agent's choice, else the parent's. Claude model
/// aliases only mean something to the Anthropic API; other providers keep the parent's model
/// unless a full model id is named.
fn child_model(provider: &str, parent: &str, asked: Option<&str>) -> String {
    let Some(asked) = asked
        .map(str::trim)
        .filter(|m| !m.is_empty() && *m != "inherit")
    else {
        return parent.to_owned();
    };
    let resolved = skiff_llm::resolve_alias(asked);
    let is_alias = resolved != asked;
    if is_alias && provider != "anthropic" {
        parent.to_owned()
    } else {
        resolved
    }
}

/// The agent's prompt, then the parent's environment block (working directory, platform, date).
fn child_system_prompt(parent: &[String], agent_prompt: &str) -> Vec<String> {
    let mut parts = vec![agent_prompt.to_owned()];
    parts.extend(parent.iter().filter(|p| p.starts_with("<env>")).cloned());
    parts
}

/// The parent's tools, less Task, narrowed to what the agent may use.
fn child_tools(env: &SubagentEnv, agent: &AgentDefinition) -> ToolRegistry {
    let mut tools = env.tools.read().map(|t| (**t).clone()).unwrap_or_default();
    tools.disable(TASK_TOOL);
    if let Some(allowed) = &agent.tools {
        let names: Vec<&str> = allowed.iter().map(String::as_str).collect();
        tools.retain(&names);
    }
    for name in &agent.disallowed_tools {
        tools.disable(name);
    }
    if agent.read_only {
        for name in WRITING_TOOLS {
            tools.disable(name);
        }
        if let Some(bash) = tools.get("Bash").cloned() {
            tools.disable("Bash");
            let wrapped: Arc<dyn Tool> = Arc::new(ReadOnlyBash::new(bash));
            let _ = tools.register(wrapped);
        }
    }
    tools
}

fn count_tool_uses(messages: &[skiff_protocol::Message]) -> usize {
    messages
        .iter()
        .map(|m| match &m.content {
            skiff_protocol::MessageContent::Blocks(blocks) => blocks
                .iter()
                .filter(|b| matches!(b, ContentBlock::ToolUse(_)))
                .count(),
            skiff_protocol::MessageContent::Text(_) => 0,
        })
        .sum()
}

/// The tool result: the final text and a trailer with the agent id and usage (as Claude Code
/// sends them), or an error naming how the subagent ended.
fn output_of(
    result: &ResultMessage,
    prompt: &str,
    agent_id: &str,
    tool_uses: usize,
    duration_ms: u128,
) -> ToolOutput {
    let text = result.result.clone().unwrap_or_default();
    let total_tokens = total_tokens(&result.usage);
    if result.is_error {
        let why = if text.is_empty() {
            result.errors.join("; ")
        } else {
            text
        };
        let why = if why.is_empty() {
            format!("{:?}", result.subtype)
        } else {
            why
        };
        return ToolOutput::error(format!("The subagent did not finish: {why}"));
    }
    let text = if text.trim().is_empty() {
        "(The subagent finished without a final message.)".to_owned()
    } else {
        text
    };
    let trailer = format!(
        "agentId: {agent_id}\n<usage>total_tokens: {total_tokens}\ntool_uses: {tool_uses}\nduration_ms: {duration_ms}</usage>"
    );
    let usage = serde_json::to_value(&result.usage).unwrap_or(Value::Null);
    ToolOutput::blocks(vec![
        ContentBlock::text(text.clone()),
        ContentBlock::text(trailer),
    ])
    .with_structured(json!({
        "status": "completed",
        "prompt": prompt,
        "agentId": agent_id,
        "content": [{"type": "text", "text": text}],
        "totalDurationMs": duration_ms,
        "totalTokens": total_tokens,
        "totalToolUseCount": tool_uses,
        "usage": usage,
        "total_cost_usd": result.total_cost_usd,
    }))
}

fn total_tokens(u: &Usage) -> u64 {
    u.input_tokens + u.output_tokens + u.cache_read() + u.cache_creation()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The schema shipped rendered is the one the input type derives
    /// (`SKIFF_BLESS_SCHEMAS=1` renders it again).
    #[test]
    fn rendered_schema_is_the_derived_one() {
        skiff_tools::check_rendered_schema::<TaskTool>(env!("CARGO_MANIFEST_DIR")).unwrap();
    }

    #[test]
    fn models() {
        assert_eq!(
            child_model("anthropic", "claude-sonnet-4-5", None),
            "claude-sonnet-4-5"
        );
        assert_eq!(
            child_model("anthropic", "p", Some("haiku")),
            "claude-haiku-4-5"
        );
        assert_eq!(child_model("openai", "qwen3", Some("haiku")), "qwen3");
        assert_eq!(child_model("openai", "qwen3", Some("llama3")), "llama3");
        assert_eq!(child_model("anthropic", "p", Some("inherit")), "p");
    }

    #[test]
    fn system_prompt_keeps_the_environment() {
        let parent = vec!["You are skiff".to_owned(), "<env>\ncwd\n</env>".to_owned()];
        assert_eq!(
            child_system_prompt(&parent, "agent"),
            vec!["agent".to_owned(), "<env>\ncwd\n</env>".to_owned()]
        );
    }
}
