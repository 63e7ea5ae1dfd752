//! `control_response` (PROTOCOL.md §3.1) and the success payloads of the requests skiff
//! answers or reads the answers of.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::permission::PermissionUpdate;
use crate::JsonMap;

/// The `response` object of a `control_response`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
pub enum ControlResponse {
    /// The request was carried out.
    Success(Success),
    /// The request failed.
    Error(Failure),
}

impl ControlResponse {
    /// The request this answers.
    pub fn request_id(&self) -> &str {
        match self {
            Self::Success(s) => &s.request_id,
            Self::Error(e) => &e.request_id,
        }
    }

    /// The payload of a success, or the error's message.
    pub fn into_result(self) -> Result<Value, String> {
        match self {
            Self::Success(s) => Ok(s.response),
            Self::Error(e) => Err(e.error),
        }
    }
}

/// `subtype: "success"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Success {
    /// The request this answers.
    pub request_id: String,
    /// The payload (`{}` when the answer has none).
    #[serde(default = "empty_object")]
    pub response: Value,
    /// Fields this version does not read (`pending_permission_requests`, …).
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `subtype: "error"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    /// The request this answers.
    pub request_id: String,
    /// What went wrong.
    pub error: String,
    /// A machine-readable reason (`unsupported_request`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// Fields this version does not read.
    #[serde(flatten)]
    pub extra: JsonMap,
}

fn empty_object() -> Value {
    Value::Object(JsonMap::new())
}

/// The host's answer to `can_use_tool`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "behavior", rename_all = "lowercase")]
pub enum CanUseToolAnswer {
    /// Run the call.
    Allow(Allow),
    /// Refuse it.
    Deny(Deny),
}

impl CanUseToolAnswer {
    /// Read an answer; one that is not a well-formed `allow` is a denial (with no message of
    /// its own), so a confused host never lets a call through.
    pub fn read(answer: Value) -> Self {
        serde_json::from_value(answer).unwrap_or_else(|_| {
            Self::Deny(Deny {
                message: None,
                interrupt: None,
                extra: JsonMap::new(),
            })
        })
    }
}

/// `behavior: "allow"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Allow {
    /// The input to run the call with (the Python SDK always sends it).
    #[serde(
        rename = "updatedInput",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub updated_input: Option<Value>,
    /// Permission changes to apply (and save) before the call runs.
    #[serde(
        rename = "updatedPermissions",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub updated_permissions: Option<Vec<PermissionUpdate>>,
    /// Fields this version does not read.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `behavior: "deny"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Deny {
    /// Why (becomes the tool result's text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Stop the turn too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupt: Option<bool>,
    /// Fields this version does not read.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// The host's answer to `mcp_message`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct McpMessageAnswer {
    /// The server's JSON-RPC response (absent for a notification's ack).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_response: Option<Value>,
    /// Fields this version does not read.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// The answer to `initialize` (§3.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InitializeResponse {
    /// The commands a host can send as user messages.
    pub commands: Vec<CommandInfo>,
    /// The subagent types.
    pub agents: Vec<AgentInfo>,
    /// The output style in use.
    pub output_style: String,
    /// The output styles there are.
    pub available_output_styles: Vec<String>,
    /// The models a host can switch to.
    pub models: Vec<ModelInfo>,
    /// Where the credential comes from.
    pub account: Account,
    /// The CLI's process id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The Claude Code version the CLI is compatible with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claude_code_version: Option<String>,
    /// skiff's own version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skiff_version: Option<String>,
    /// The permission mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_permission_mode: Option<String>,
    /// Whether `initialize.hooks` were installed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hooks_applied: Option<bool>,
    /// Whether matchers may set `onFailure`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hook_on_failure_supported: Option<bool>,
    /// Fields this version does not write.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// A command in the `initialize` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandInfo {
    /// Its name (without the slash).
    pub name: String,
    /// What it does.
    pub description: String,
    /// Its arguments, for a hint.
    #[serde(rename = "argumentHint", default)]
    pub argument_hint: String,
    /// Fields this version does not write.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// A subagent type in the `initialize` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentInfo {
    /// Its name.
    pub name: String,
    /// When to use it.
    pub description: String,
    /// Its model, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Fields this version does not write.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// A model in the `initialize` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    /// What `set_model` takes.
    pub value: String,
    /// Its name for people.
    #[serde(rename = "displayName")]
    pub display_name: String,
    /// What it is.
    pub description: String,
    /// Fields this version does not write.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// The `account` of the `initialize` answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Account {
    /// Where the API key comes from.
    #[serde(
        rename = "apiKeySource",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub api_key_source: Option<String>,
    /// The API provider (`firstParty`, `bedrock`, `vertex`, …).
    #[serde(
        rename = "apiProvider",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub api_provider: Option<String>,
    /// Fields this version does not write.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// The answer to `interrupt`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InterruptResponse {
    /// Messages still queued.
    #[serde(default)]
    pub still_queued: Vec<Value>,
}

/// The answer to `set_permission_mode`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetPermissionModeResponse {
    /// The mode now.
    pub mode: String,
}

/// The answer to `set_model`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetModelResponse {
    /// The model now.
    pub model: String,
}

/// The answer to `mcp_status`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct McpStatusResponse {
    /// The servers.
    #[serde(rename = "mcpServers")]
    pub mcp_servers: Vec<McpServerInfo>,
}

/// One server of the `mcp_status` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpServerInfo {
    /// Its name.
    pub name: String,
    /// `connected`, `failed`, `needs-auth`, `pending`, `disabled`.
    pub status: String,
    /// Where it is configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// What the server says it is.
    #[serde(
        rename = "serverInfo",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub server_info: Option<ServerInfo>,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Its tools.
    #[serde(default)]
    pub tools: Vec<ToolInfo>,
    /// Fields this version does not write.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// An MCP server's name and version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerInfo {
    /// Name.
    pub name: String,
    /// Version.
    pub version: String,
}

/// A tool of an MCP server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolInfo {
    /// Its name.
    pub name: String,
}

/// The answer to `rewind_files`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RewindFilesResponse {
    /// Whether the files could be (or were) put back.
    #[serde(rename = "canRewind")]
    pub can_rewind: bool,
    /// Why not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The files put back.
    #[serde(
        rename = "filesChanged",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub files_changed: Option<Vec<String>>,
    /// Lines added by putting them back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insertions: Option<u64>,
    /// Lines removed by putting them back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletions: Option<u64>,
}
