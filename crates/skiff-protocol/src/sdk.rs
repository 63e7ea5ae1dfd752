//! The stream-json / SDK messages (PROTOCOL.md §2): what `skiff -p --output-format stream-json`
//! prints, one per line, and what the agent loop emits as events.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{JsonMap, Message, MessageResponse, StreamEvent, Usage};

/// One stream-json frame. Unknown frame types are preserved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SdkMessage {
    /// `system` frames (`init`, `compact_boundary`, `api_retry`, ...).
    System(SystemMessage),
    /// One completed assistant content block (or a synthetic API-error message).
    Assistant(AssistantMessage),
    /// Tool results (and other user content).
    User(UserMessage),
    /// A raw API stream event (with `--include-partial-messages`).
    StreamEvent(StreamEventMessage),
    /// A tool has been running for a while.
    ToolProgress(ToolProgressMessage),
    /// The end of a turn.
    Result(ResultMessage),
    /// A frame type this version does not know.
    #[serde(untagged)]
    Unknown(Value),
}

/// `system` frames, by subtype.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
pub enum SystemMessage {
    /// First frame of a turn.
    Init(SystemInit),
    /// A failed model call is being retried.
    ApiRetry(ApiRetry),
    /// History was compacted.
    CompactBoundary(CompactBoundary),
    /// A warning or notice for the user (truncation, trimming, unknown model price, ...).
    Informational(Informational),
    /// A hook command started.
    HookStarted(HookStarted),
    /// A hook command finished (or failed, or timed out).
    HookResponse(HookResponse),
    /// The session's state: sent after every permission mode change.
    Status(StatusFrame),
    /// The run switched to the fallback model (`--fallback-model`).
    ModelFallback(ModelFallback),
    /// A subtype this version does not know.
    #[serde(untagged)]
    Unknown(Value),
}

/// `system/init`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemInit {
    /// Working directory.
    pub cwd: String,
    /// Session id.
    pub session_id: String,
    /// Tool names offered to the model.
    pub tools: Vec<String>,
    /// MCP servers and their status.
    pub mcp_servers: Vec<McpServerStatus>,
    /// Model id.
    pub model: String,
    /// Permission mode.
    #[serde(rename = "permissionMode")]
    pub permission_mode: String,
    /// Slash commands available.
    pub slash_commands: Vec<String>,
    /// Where the API credential came from.
    #[serde(rename = "apiKeySource")]
    pub api_key_source: String,
    /// Version reported to SDKs (a semver ≥ 2.0.0 for compatibility).
    pub claude_code_version: String,
    /// Output style.
    pub output_style: String,
    /// Subagents.
    #[serde(default)]
    pub agents: Vec<String>,
    /// Frame id.
    pub uuid: String,
    /// Other fields.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// An MCP server in `system/init`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpServerStatus {
    /// Server name.
    pub name: String,
    /// `connected`, `failed`, `needs-auth`, `pending`, `disabled`.
    pub status: String,
    /// Where the entry came from (`dynamic` for `--mcp-config`, `project`, `local`, `user`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Why it failed (failed and needs-auth servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// `system/api_retry`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApiRetry {
    /// Retry number (1-based).
    pub attempt: u32,
    /// Configured maximum.
    pub max_retries: u32,
    /// Wait before the retry.
    pub retry_delay_ms: u64,
    /// HTTP status of the failure, if any.
    #[serde(default)]
    pub error_status: Option<u16>,
    /// What failed.
    pub error: String,
    /// Partial output of the failed attempt must be discarded.
    #[serde(default)]
    pub discard_partial: bool,
    /// Session id.
    pub session_id: String,
    /// Frame id.
    pub uuid: String,
}

/// `system/compact_boundary`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompactBoundary {
    /// Trigger and size.
    pub compact_metadata: CompactMetadata,
    /// Session id.
    pub session_id: String,
    /// Frame id.
    pub uuid: String,
}

/// Metadata of a compaction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompactMetadata {
    /// `manual` or `auto`.
    pub trigger: String,
    /// Context tokens before compaction.
    pub pre_tokens: u64,
}

/// `system/status`: `status` is what the session is doing (`requesting`, `compacting`, or
/// `null`), `permissionMode` the mode after a change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatusFrame {
    /// What the session is doing (`null` after a mode change).
    pub status: Option<String>,
    /// The permission mode, after a change.
    #[serde(
        rename = "permissionMode",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub permission_mode: Option<String>,
    /// Frame id.
    pub uuid: String,
    /// Session id.
    pub session_id: String,
}

/// `system/model_fallback`: the turn goes on with the configured fallback model because the
/// main one failed (as Claude Code reports it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelFallback {
    /// Why: `overloaded` (repeated 529s).
    pub trigger: String,
    /// The model that failed.
    pub original_model: String,
    /// The model the turn goes on with.
    pub fallback_model: String,
    /// What the user reads.
    pub content: String,
    /// Frame id.
    pub uuid: String,
    /// Session id.
    pub session_id: String,
}

/// `system/informational`: a notice for the user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Informational {
    /// Short machine-readable kind (`truncation`, `trim`, `pricing`, ...).
    pub kind: String,
    /// Human-readable text.
    pub message: String,
    /// `info` or `warning`.
    pub level: String,
    /// Session id.
    pub session_id: String,
    /// Frame id.
    pub uuid: String,
}

/// `system/hook_started`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookStarted {
    /// Pairs this frame with its `hook_response`.
    pub hook_id: String,
    /// `PreToolUse:Bash`, `SessionStart:startup`, `Stop`, …
    pub hook_name: String,
    /// The event.
    pub hook_event: String,
    /// Frame id.
    pub uuid: String,
    /// Session id.
    pub session_id: String,
}

/// `system/hook_response`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookResponse {
    /// The `hook_started` frame's id.
    pub hook_id: String,
    /// As in `hook_started`.
    pub hook_name: String,
    /// The event.
    pub hook_event: String,
    /// stderr for a blocking error, stdout otherwise.
    pub output: String,
    /// What the hook printed on stdout.
    pub stdout: String,
    /// What it printed on stderr.
    pub stderr: String,
    /// Its exit code (`null` when it was killed or could not start).
    pub exit_code: Option<i32>,
    /// `success`, `error` or `cancelled`.
    pub outcome: String,
    /// Frame id.
    pub uuid: String,
    /// Session id.
    pub session_id: String,
}

/// `assistant` frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssistantMessage {
    /// The API message, with `content` holding one block.
    pub message: MessageResponse,
    /// Parent Agent/Task tool id for subagent frames.
    pub parent_tool_use_id: Option<String>,
    /// Session id.
    pub session_id: String,
    /// Frame id.
    pub uuid: String,
    /// ISO-8601 time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// API request id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// Error kind on synthetic API-error messages (`authentication_failed`, `rate_limit`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Other fields (`is_api_error_message`, `api_error_status`, ...).
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `user` frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserMessage {
    /// The user message (tool results or text).
    pub message: Message,
    /// Parent Agent/Task tool id for subagent frames.
    pub parent_tool_use_id: Option<String>,
    /// Session id.
    pub session_id: String,
    /// Frame id.
    pub uuid: String,
    /// ISO-8601 time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// The tool's structured result (or `"Error: …"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_result: Option<Value>,
    /// Other fields (`isSynthetic`, `isReplay`, ...).
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `stream_event` frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamEventMessage {
    /// The raw API event.
    pub event: StreamEvent,
    /// Session id.
    pub session_id: String,
    /// Parent Agent/Task tool id.
    pub parent_tool_use_id: Option<String>,
    /// Frame id.
    pub uuid: String,
}

/// `tool_progress` frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolProgressMessage {
    /// The running call.
    pub tool_use_id: String,
    /// Its tool.
    pub tool_name: String,
    /// Parent Agent/Task tool id.
    pub parent_tool_use_id: Option<String>,
    /// Seconds since the call started.
    pub elapsed_time_seconds: f64,
    /// Session id.
    pub session_id: String,
    /// Frame id.
    pub uuid: String,
}

/// Result subtypes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultSubtype {
    /// The turn completed.
    Success,
    /// `--max-turns` reached.
    ErrorMaxTurns,
    /// Interrupted or failed while running.
    ErrorDuringExecution,
    /// `--max-budget-usd` reached.
    ErrorMaxBudgetUsd,
    /// `--json-schema`: no valid structured output within the attempts allowed.
    ErrorMaxStructuredOutputRetries,
    /// skiff: the model sent the same failing call again and again (loop detection).
    ErrorLoopDetected,
    /// A subtype this version does not know.
    #[serde(untagged)]
    Other(String),
}

/// Per-model usage in `modelUsage` (camelCase keys).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelUsage {
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Cache reads.
    pub cache_read_input_tokens: u64,
    /// Cache writes.
    pub cache_creation_input_tokens: u64,
    /// Web searches.
    pub web_search_requests: u64,
    /// Estimated cost.
    #[serde(rename = "costUSD")]
    pub cost_usd: f64,
    /// Context window of the model.
    pub context_window: u64,
    /// Maximum output tokens of the model.
    pub max_output_tokens: u64,
}

/// A denied tool call in `permission_denials`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionDenial {
    /// Tool name.
    pub tool_name: String,
    /// Call id.
    pub tool_use_id: String,
    /// Call input.
    pub tool_input: Value,
}

/// `result` frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultMessage {
    /// How the turn ended.
    pub subtype: ResultSubtype,
    /// Whether it ended in error.
    pub is_error: bool,
    /// Wall time of the turn.
    pub duration_ms: u64,
    /// Time spent in model calls.
    pub duration_api_ms: u64,
    /// Model round-trips in the turn.
    pub num_turns: u32,
    /// Final text (absent on error subtypes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// Last API stop reason.
    #[serde(default)]
    pub stop_reason: Option<String>,
    /// Session id.
    pub session_id: String,
    /// Frame id.
    pub uuid: String,
    /// Estimated cost, cumulative over the session.
    pub total_cost_usd: f64,
    /// Usage summed over the turn's model calls.
    pub usage: Usage,
    /// Per-model usage.
    #[serde(rename = "modelUsage")]
    pub model_usage: std::collections::BTreeMap<String, ModelUsage>,
    /// Denied tool calls.
    pub permission_denials: Vec<PermissionDenial>,
    /// Error texts on error subtypes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
    /// HTTP status when the turn ended on an API error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_error_status: Option<u16>,
    /// `completed`, `max_turns`, `api_error`, `aborted_streaming`, `aborted_tools`, `budget_exhausted`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal_reason: Option<String>,
    /// Files created or modified in the turn, with diffs (skiff extension).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<Value>,
    /// Other fields.
    #[serde(flatten)]
    pub extra: JsonMap,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captured_frames_parse() {
        let lines = [
            r#"{"type":"system","subtype":"init","cwd":"/tmp/proj","session_id":"s","tools":["Bash"],"mcp_servers":[],"model":"m","permissionMode":"default","slash_commands":[],"apiKeySource":"ANTHROPIC_API_KEY","claude_code_version":"2.1.330","output_style":"default","agents":[],"uuid":"u","skills":[]}"#,
            r#"{"type":"assistant","message":{"id":"msg","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"hi"}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}},"parent_tool_use_id":null,"session_id":"s","uuid":"u","timestamp":"t","request_id":"r"}"#,
            r#"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t","type":"tool_result","content":"hi","is_error":false}]},"parent_tool_use_id":null,"session_id":"s","uuid":"u","tool_use_result":{"stdout":"hi"},"tool_result_meta":[]}"#,
            r#"{"type":"result","subtype":"error_max_turns","is_error":true,"duration_ms":1,"duration_api_ms":1,"num_turns":2,"stop_reason":"tool_use","session_id":"s","uuid":"u","total_cost_usd":0.1,"usage":{"input_tokens":1,"output_tokens":1},"modelUsage":{},"permission_denials":[],"errors":["Reached maximum number of turns (1)"],"terminal_reason":"max_turns"}"#,
            r#"{"type":"keep_alive"}"#,
            r#"{"type":"system","subtype":"session_state_changed","state":"idle"}"#,
        ];
        for l in lines {
            let m: SdkMessage = serde_json::from_str(l).unwrap();
            let back: Value = serde_json::to_value(&m).unwrap();
            let orig: Value = serde_json::from_str(l).unwrap();
            for (k, v) in orig.as_object().unwrap() {
                assert_eq!(back.get(k), Some(v), "{k} in {l}");
            }
        }
    }
}
