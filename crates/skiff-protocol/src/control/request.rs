//! `control_request` bodies, by `subtype` (PROTOCOL.md §3.2, §3.4, §3.5): those a host sends
//! the CLI and those the CLI sends the host.

use std::collections::BTreeMap;

use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::RequestError;
use super::permission::PermissionUpdate;
use crate::JsonMap;

/// The body of a `control_request`. A subtype this version does not know parses as
/// [`ControlRequest::Unsupported`] (answered with an `unsupported_request` error); a known one
/// whose fields do not fit is a [`RequestError`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
pub enum ControlRequest {
    /// Host → CLI, first: the host's hooks and options; answered with the session's facts.
    Initialize(Box<Initialize>),
    /// Host → CLI: stop the running turn.
    Interrupt(Plain),
    /// Host → CLI: switch the permission mode.
    SetPermissionMode(SetPermissionMode),
    /// Host → CLI: switch the model.
    SetModel(SetModel),
    /// Host → CLI: the thinking budget.
    SetMaxThinkingTokens(SetMaxThinkingTokens),
    /// Host → CLI: the MCP servers and their state.
    McpStatus(Plain),
    /// Host → CLI: what fills the context window.
    GetContextUsage(Plain),
    /// Host → CLI: put the files back as they were at a user message.
    RewindFiles(RewindFiles),
    /// CLI → host: may this tool call run?
    CanUseTool(Box<CanUseTool>),
    /// CLI → host: run one of the host's hooks.
    HookCallback(HookCallback),
    /// CLI → host: a JSON-RPC message for one of the host's in-process MCP servers.
    McpMessage(McpMessage),
    /// A subtype this version does not know.
    #[serde(untagged)]
    Unsupported(UnknownRequest),
}

impl ControlRequest {
    /// The request's `subtype`.
    pub fn subtype(&self) -> &str {
        match self {
            Self::Initialize(_) => "initialize",
            Self::Interrupt(_) => "interrupt",
            Self::SetPermissionMode(_) => "set_permission_mode",
            Self::SetModel(_) => "set_model",
            Self::SetMaxThinkingTokens(_) => "set_max_thinking_tokens",
            Self::McpStatus(_) => "mcp_status",
            Self::GetContextUsage(_) => "get_context_usage",
            Self::RewindFiles(_) => "rewind_files",
            Self::CanUseTool(_) => "can_use_tool",
            Self::HookCallback(_) => "hook_callback",
            Self::McpMessage(_) => "mcp_message",
            Self::Unsupported(u) => &u.subtype,
        }
    }

    /// Read a request body (the `request` object of a `control_request`).
    pub fn from_fields(mut fields: JsonMap) -> Result<Self, RequestError> {
        let subtype = match fields.remove("subtype") {
            Some(Value::String(s)) => s,
            Some(other) => {
                return Err(RequestError::new(format!(
                    "a control request's subtype must be a string, not {other}"
                )));
            }
            None => return Err(RequestError::new("a control request needs a subtype")),
        };
        fn body<T: DeserializeOwned>(subtype: &str, fields: JsonMap) -> Result<T, RequestError> {
            serde_json::from_value(Value::Object(fields))
                .map_err(|e| RequestError::new(format!("invalid {subtype} request: {e}")))
        }
        Ok(match subtype.as_str() {
            "initialize" => Self::Initialize(body(&subtype, fields)?),
            "interrupt" => Self::Interrupt(body(&subtype, fields)?),
            "set_permission_mode" => Self::SetPermissionMode(body(&subtype, fields)?),
            "set_model" => Self::SetModel(body(&subtype, fields)?),
            "set_max_thinking_tokens" => Self::SetMaxThinkingTokens(body(&subtype, fields)?),
            "mcp_status" => Self::McpStatus(body(&subtype, fields)?),
            "get_context_usage" => Self::GetContextUsage(body(&subtype, fields)?),
            "rewind_files" => Self::RewindFiles(body(&subtype, fields)?),
            "can_use_tool" => Self::CanUseTool(body(&subtype, fields)?),
            "hook_callback" => Self::HookCallback(body(&subtype, fields)?),
            "mcp_message" => Self::McpMessage(body(&subtype, fields)?),
            _ => Self::Unsupported(UnknownRequest { subtype, fields }),
        })
    }
}

impl<'de> Deserialize<'de> for ControlRequest {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let fields = JsonMap::deserialize(deserializer)?;
        Self::from_fields(fields).map_err(D::Error::custom)
    }
}

/// A request with no fields of its own (`interrupt`, `mcp_status`, `get_context_usage`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Plain {
    /// Fields this version does not read (`interrupt.cancel_queued`, …).
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// A request whose subtype this version does not know.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnknownRequest {
    /// Its `subtype`.
    pub subtype: String,
    /// Its other fields.
    #[serde(flatten)]
    pub fields: JsonMap,
}

/// `initialize` (§3.2).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Initialize {
    /// The host's hooks, by event name (`null`: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hooks: Option<BTreeMap<String, Vec<HookMatcher>>>,
    /// Subagent definitions (the shape `--agents` takes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agents: Option<Value>,
    /// A JSON Schema the final answer must satisfy (structured output).
    #[serde(
        rename = "jsonSchema",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub json_schema: Option<Value>,
    /// The host's system prompt in place of skiff's (TypeScript SDK).
    #[serde(
        rename = "systemPrompt",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub system_prompt: Option<SystemPromptOption>,
    /// Text appended to the system prompt (TypeScript SDK).
    #[serde(
        rename = "appendSystemPrompt",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub append_system_prompt: Option<String>,
    /// The names of the host's in-process MCP servers (TypeScript SDK).
    #[serde(
        rename = "sdkMcpServers",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub sdk_mcp_servers: Option<Vec<String>>,
    /// Fields this version does not read.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `initialize.systemPrompt`: a string, a list of parts, or a shape this version ignores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SystemPromptOption {
    /// The whole prompt.
    Text(String),
    /// Parts, joined with blank lines.
    Parts(Vec<String>),
    /// Something else (ignored).
    Other(Value),
}

impl SystemPromptOption {
    /// The prompt's text (`None` for a shape this version ignores).
    pub fn text(&self) -> Option<String> {
        match self {
            Self::Text(s) => Some(s.clone()),
            Self::Parts(parts) => Some(
                parts
                    .iter()
                    .filter(|p| !p.is_empty())
                    .map(String::as_str)
                    .collect::<Vec<_>>()
                    .join("\n\n"),
            ),
            Self::Other(_) => None,
        }
    }
}

/// One matcher of `initialize.hooks`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HookMatcher {
    /// What it matches (a tool name pattern; `null` or absent: everything).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matcher: Option<String>,
    /// The callbacks to run (`hook_callback.callback_id`).
    #[serde(rename = "hookCallbackIds", default)]
    pub hook_callback_ids: Vec<String>,
    /// How long a callback may take, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<f64>,
    /// `continue` or `block` when the callback fails.
    #[serde(rename = "onFailure", default, skip_serializing_if = "Option::is_none")]
    pub on_failure: Option<String>,
    /// Fields this version does not read.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `set_permission_mode`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetPermissionMode {
    /// The mode (`default`, `acceptEdits`, `plan`, `bypassPermissions`, …).
    pub mode: String,
    /// Fields this version does not read.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `set_model`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SetModel {
    /// The model or alias (`null` or `"default"`: back to the default).
    #[serde(default)]
    pub model: Option<String>,
    /// Fields this version does not read.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `set_max_thinking_tokens`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SetMaxThinkingTokens {
    /// The budget (`null`: none).
    #[serde(default)]
    pub max_thinking_tokens: Option<u64>,
    /// Fields this version does not read.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `rewind_files`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RewindFiles {
    /// The user message (its `uuid`) whose files come back.
    pub user_message_id: String,
    /// Only say what would change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
    /// Fields this version does not read.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `can_use_tool` (§3.5): the CLI asks the host about a tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CanUseTool {
    /// The tool.
    pub tool_name: String,
    /// Its name as shown to the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// The call's input.
    pub input: Value,
    /// Changes the host may apply with its answer ("always allow").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_suggestions: Option<Vec<PermissionUpdate>>,
    /// The call's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// The path a file tool wants.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked_path: Option<String>,
    /// The call's description (Bash's `description`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Why consent is needed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision_reason: Option<String>,
    /// The MCP server of an MCP tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_server: Option<String>,
    /// Fields this version does not write (`decision_reason_type`, `title`, `agent_id`, …).
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `hook_callback` (§3.5): the CLI runs one of the host's hooks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookCallback {
    /// The callback (from `initialize.hooks`).
    pub callback_id: String,
    /// The hook's input: the JSON a command hook reads on stdin.
    pub input: Value,
    /// The tool call's id (a random id for events without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// Fields this version does not read.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `mcp_message` (§3.5): JSON-RPC for one of the host's in-process MCP servers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpMessage {
    /// The server.
    pub server_name: String,
    /// The JSON-RPC 2.0 message.
    pub message: Value,
    /// Fields this version does not read.
    #[serde(flatten)]
    pub extra: JsonMap,
}
