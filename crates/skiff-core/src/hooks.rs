//! The hook seam. The loop fires Claude Code's hook events — PreToolUse, PostToolUse,
//! PostToolUseFailure, UserPromptSubmit, Stop, SubagentStop, SessionStart, SessionEnd,
//! PreCompact, Notification — through a [`HookRunner`]: it gets the event's stdin JSON and
//! answers with a [`HookResult`], which the loop applies (PROTOCOL.md §6). [`NoHooks`] runs
//! nothing; [`CommandHooks`] runs the settings' command hooks; SDK callback hooks plug in the
//! same way.

mod command;
#[cfg(target_os = "linux")]
mod reaper;
mod sdk;

use async_trait::async_trait;
use serde_json::{Map, Value};

pub use command::{CommandHooks, HookConfigError};
pub use sdk::SdkHooks;

use crate::frames::EventSink;

/// A hook event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HookEvent {
    /// Before a tool runs; may allow, deny, ask, change the input.
    PreToolUse,
    /// After a tool succeeded.
    PostToolUse,
    /// After a tool failed.
    PostToolUseFailure,
    /// Before a prompt enters the conversation.
    UserPromptSubmit,
    /// When the model has finished answering.
    Stop,
    /// When a subagent has finished.
    SubagentStop,
    /// When a session starts (startup, resume, clear, compact).
    SessionStart,
    /// When a session ends.
    SessionEnd,
    /// Before the conversation is compacted.
    PreCompact,
    /// When skiff needs the user (a permission prompt).
    Notification,
}

impl HookEvent {
    /// Every event.
    pub const ALL: [HookEvent; 10] = [
        Self::PreToolUse,
        Self::PostToolUse,
        Self::PostToolUseFailure,
        Self::UserPromptSubmit,
        Self::Stop,
        Self::SubagentStop,
        Self::SessionStart,
        Self::SessionEnd,
        Self::PreCompact,
        Self::Notification,
    ];

    /// The settings / wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PreToolUse => "PreToolUse",
            Self::PostToolUse => "PostToolUse",
            Self::PostToolUseFailure => "PostToolUseFailure",
            Self::UserPromptSubmit => "UserPromptSubmit",
            Self::Stop => "Stop",
            Self::SubagentStop => "SubagentStop",
            Self::SessionStart => "SessionStart",
            Self::SessionEnd => "SessionEnd",
            Self::PreCompact => "PreCompact",
            Self::Notification => "Notification",
        }
    }

    /// The event called `name`.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.as_str() == name)
    }

    /// Whether matchers apply (tool events, and those with a source/reason/trigger/type).
    pub fn has_matcher(self) -> bool {
        !matches!(self, Self::UserPromptSubmit | Self::Stop)
    }
}

/// One firing of an event.
#[derive(Debug, Clone)]
pub struct HookCall<'a> {
    /// The event.
    pub event: HookEvent,
    /// What matchers match against: the tool name, SessionStart's source, SessionEnd's reason,
    /// PreCompact's trigger, Notification's type.
    pub target: Option<&'a str>,
    /// The stdin JSON: the common fields and the event's own.
    pub input: Value,
}

/// A PreToolUse permission decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookDecision {
    /// Run without asking (deny rules still apply).
    Allow,
    /// Do not run; the reason goes to the model.
    Deny,
    /// Ask the user even if the rules allow it.
    Ask,
}

/// What the hooks of one event decided, merged.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookResult {
    /// A blocking error (exit code 2, or `decision: "block"`): the reason, as the model or
    /// user sees it.
    pub block: Option<String>,
    /// PreToolUse `permissionDecision` (deny > ask > allow across hooks) and its reason.
    pub decision: Option<(HookDecision, Option<String>)>,
    /// PreToolUse `updatedInput`: the tool's input replaced.
    pub updated_input: Option<Value>,
    /// `additionalContext` for the model.
    pub context: Vec<String>,
    /// Plain stdout of successful hooks (the model sees it for UserPromptSubmit and
    /// SessionStart).
    pub output: Vec<String>,
    /// `continue: false`: the run stops, with this reason for the user.
    pub stop: Option<String>,
    /// `systemMessage`s: warnings for the user.
    pub messages: Vec<String>,
}

/// Runs the hooks of an event.
#[async_trait]
pub trait HookRunner: Send + Sync {
    /// Whether any hook listens to `event` (the loop builds no input otherwise).
    fn wants(&self, _event: HookEvent) -> bool {
        false
    }

    /// Run the hooks of `call.event` that match; report each run on `sink`.
    async fn run(&self, _call: HookCall<'_>, _sink: &EventSink) -> HookResult {
        HookResult::default()
    }
}

/// Several runners, each asked in turn; their results merged.
pub struct HookChain(pub Vec<std::sync::Arc<dyn HookRunner>>);

#[async_trait]
impl HookRunner for HookChain {
    fn wants(&self, event: HookEvent) -> bool {
        self.0.iter().any(|r| r.wants(event))
    }

    async fn run(&self, call: HookCall<'_>, sink: &EventSink) -> HookResult {
        let mut merged = HookResult::default();
        for runner in self.0.iter().filter(|r| r.wants(call.event)) {
            merged.merge(runner.run(call.clone(), sink).await);
        }
        merged
    }
}

impl HookResult {
    /// Add another runner's result: blocks and stops joined, deny over ask over allow, the
    /// later updated input, every context, output and message.
    pub fn merge(&mut self, other: HookResult) {
        for (slot, text) in [(&mut self.block, other.block), (&mut self.stop, other.stop)] {
            if let Some(t) = text {
                command::join(slot, t);
            }
        }
        if let Some((d, why)) = other.decision {
            command::merge_decision(self, d, why);
        }
        if other.updated_input.is_some() {
            self.updated_input = other.updated_input;
        }
        self.context.extend(other.context);
        self.output.extend(other.output);
        self.messages.extend(other.messages);
    }
}

/// No hooks configured.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoHooks;

impl HookRunner for NoHooks {}

/// The fields every event's input starts with (PROTOCOL.md §6.3).
#[derive(Debug, Clone, Default)]
pub struct HookCommon {
    /// Session id.
    pub session_id: String,
    /// The session's transcript file ("" when not saved).
    pub transcript_path: String,
    /// Working directory.
    pub cwd: String,
    /// Id of the prompt being answered (none before the first).
    pub prompt_id: Option<String>,
    /// Permission mode now.
    pub permission_mode: String,
    /// Inside a subagent: its `agent_id` and `agent_type`.
    pub agent: Option<(String, String)>,
}

impl HookCommon {
    /// The stdin JSON of `event`: the common fields, then the event's own.
    pub fn input(&self, event: HookEvent, fields: Map<String, Value>) -> Value {
        let mut m = Map::new();
        m.insert("session_id".into(), self.session_id.clone().into());
        m.insert(
            "transcript_path".into(),
            self.transcript_path.clone().into(),
        );
        m.insert("cwd".into(), self.cwd.clone().into());
        if event != HookEvent::SessionStart
            && let Some(p) = &self.prompt_id
        {
            m.insert("prompt_id".into(), p.clone().into());
        }
        if !matches!(event, HookEvent::SessionStart | HookEvent::SessionEnd) {
            m.insert(
                "permission_mode".into(),
                self.permission_mode.clone().into(),
            );
        }
        if let Some((id, kind)) = &self.agent {
            m.insert("agent_id".into(), id.clone().into());
            m.insert("agent_type".into(), kind.clone().into());
        }
        m.insert("hook_event_name".into(), event.as_str().into());
        m.extend(fields);
        Value::Object(m)
    }
}

/// Fire `event` when a hook wants it: the input built from `common` and `fields` (built only
/// then), the merged result.
pub async fn fire(
    hooks: &dyn HookRunner,
    sink: &EventSink,
    common: &HookCommon,
    event: HookEvent,
    target: Option<&str>,
    fields: impl FnOnce() -> Map<String, Value>,
) -> HookResult {
    if !hooks.wants(event) {
        return HookResult::default();
    }
    let call = HookCall {
        event,
        target,
        input: common.input(event, fields()),
    };
    let result = hooks.run(call, sink).await;
    for message in &result.messages {
        sink.notice("hook", "warning", message.clone());
    }
    result
}

/// `<system-reminder>` text for the model: `"<Event> hook <what>: <text>"`.
pub fn reminder(event: HookEvent, what: &str, text: &str) -> String {
    format!(
        "<system-reminder>\n{} hook {what}: {}\n</system-reminder>",
        event.as_str(),
        text.trim_end()
    )
}

/// Fields of a JSON object, built with `(key, value)` pairs.
pub fn fields<const N: usize>(pairs: [(&str, Value); N]) -> Map<String, Value> {
    pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}
