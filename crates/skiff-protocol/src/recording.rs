//! What a model script exported from a saved session carries besides the model's turns
//! (`skiff sessions export ID --script`): the user's side of the session and what each tool
//! call returned, so that `skiff replay` can run the turns again and compare.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ContentBlock;

/// The recorded session of an exported script ([`crate::script::Script::recording`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Recording {
    /// The recorded session's id.
    pub session_id: String,
    /// The workspace the session ran in.
    pub cwd: String,
    /// The version of skiff that recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// How the run was set up (the transcript's `skiff_session` line: `model`,
    /// `permissionMode`, `tools`, `allowedTools`, `disallowedTools`, `maxTurns`, `agents`,
    /// `trusted`, `gitCommit`), when recorded.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub settings: Value,
    /// What the user sent, in order.
    pub inputs: Vec<RecordedInput>,
    /// What each tool call returned, in the order the results were recorded.
    pub results: Vec<RecordedResult>,
    /// How many secrets the export replaced by `[REDACTED]`.
    #[serde(default)]
    pub redactions: usize,
}

/// One thing the user sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RecordedInput {
    /// A prompt (what was typed, without the context skiff added to it).
    Prompt {
        /// Its content: text and images.
        content: Vec<ContentBlock>,
    },
    /// `/compact`.
    Compact,
    /// `/clear`: a new conversation.
    Clear,
}

/// What one tool call returned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedResult {
    /// The script turn (1-based) whose tool call this answers.
    pub turn: usize,
    /// The tool call's id.
    pub tool_use_id: String,
    /// The tool's name.
    pub tool: String,
    /// The Task call whose subagent made the call, if a subagent did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread: Option<String>,
    /// The result's text (images as `[image]`).
    pub content: String,
    /// Whether the result was an error.
    #[serde(default)]
    pub is_error: bool,
    /// The structured result (`toolUseResult`), when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured: Option<Value>,
}
