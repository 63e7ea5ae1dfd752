//! A run's state: its counters ([`RunState`]), how it ended ([`End`]) and what the loop does
//! after a step ([`Flow`]).

use std::time::Instant;

use serde_json::Value;
use skiff_protocol::sdk::PermissionDenial;
use skiff_protocol::{StopReason, Usage};

/// Per-run counters.
pub(super) struct RunState {
    pub(super) started: Instant,
    pub(super) num_turns: u32,
    /// Calls that change or run something in this run ([`crate::act_nudge::acts`]).
    pub(super) actions: usize,
    /// Calls that changed a file in this run ([`crate::act_nudge::edits`]; not failed ones).
    pub(super) edits: usize,
    /// Times the model was told to act instead of planning ([`crate::act_nudge`]).
    pub(super) nudges: u32,
    /// Requests that made the model call a tool ([`crate::act_nudge::forces_call`]).
    pub(super) forced_calls: u32,
    pub(super) api_ms: u64,
    pub(super) usage: Usage,
    pub(super) denials: Vec<PermissionDenial>,
    pub(super) last_stop: Option<StopReason>,
    /// Text of answers continued after max_tokens, joined.
    pub(super) text_prefix: String,
    pub(super) continuations: u32,
    pub(super) max_tokens: u32,
    pub(super) merge_next_assistant: bool,
    pub(super) stop_hook_active: bool,
    /// Continuations forced by Stop hooks in a row.
    pub(super) stop_continuations: u32,
    /// What a slash command changed for this turn (grants, model).
    pub(super) command: crate::commands::turn::TurnCommand,
    /// Failing calls sent again and again ([`crate::loop_guard`]).
    pub(super) loop_guard: crate::loop_guard::LoopGuard,
    /// One retry after a server's context-size error ([`crate::overflow`]).
    pub(super) overflow: crate::overflow::OverflowRetry,
    /// Structured output's attempts ([`crate::structured`]).
    pub(super) structured: crate::structured::Attempts,
    /// The valid structured output, once given.
    pub(super) structured_output: Option<Value>,
}

/// How a run ended (before it becomes a result frame).
pub(super) enum End {
    Completed(String),
    MaxTurns,
    Budget(f64),
    Interrupted {
        during_tools: bool,
    },
    ApiError(skiff_llm::LlmError),
    Failed(String),
    /// The same failing call again and again ([`crate::loop_guard`]).
    Loop(Box<crate::loop_guard::Repeated>),
    /// No valid structured output within the attempts allowed.
    StructuredRetries(String),
}

impl RunState {
    /// A fresh run that asks for `max_tokens` of output.
    pub(super) fn new(max_tokens: u32) -> Self {
        Self {
            started: Instant::now(),
            num_turns: 0,
            actions: 0,
            edits: 0,
            nudges: 0,
            forced_calls: 0,
            api_ms: 0,
            usage: Usage::default(),
            denials: Vec::new(),
            last_stop: None,
            text_prefix: String::new(),
            continuations: 0,
            max_tokens,
            merge_next_assistant: false,
            stop_hook_active: false,
            stop_continuations: 0,
            command: Default::default(),
            loop_guard: Default::default(),
            overflow: Default::default(),
            structured: Default::default(),
            structured_output: None,
        }
    }
}

/// What the loop does after a step.
pub(super) enum Flow {
    /// Ask the model again.
    Continue,
    /// The run is over.
    End(End),
}
