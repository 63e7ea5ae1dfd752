//! Serde types for the wire formats skiff speaks (no I/O).
//!
//! The Anthropic Messages API: requests ([`MessagesRequest`]), content blocks ([`ContentBlock`]),
//! responses ([`MessageResponse`]), usage ([`Usage`]) and the SSE stream events ([`StreamEvent`]).
//! Everything is forward compatible: block types, delta types, events and stop reasons this
//! version does not know are preserved as raw JSON instead of failing to parse.

mod body;
mod content;
pub mod control;
mod error;
mod history;
pub mod recording;
mod request;
pub mod request_checks;
mod response;
pub mod schema;
pub mod script;
pub mod script_cursor;
pub mod sdk;
mod stream;

/// The serde this crate's types implement, for crates that write wire types of their own
/// without depending on serde themselves (`#[serde(crate = "skiff_protocol::serde")]`).
#[doc(hidden)]
pub use serde;

pub use body::{
    CloudBody, Elements, EncodeFn, MessageEncoding, MessagesJson, RequestView, body_from_parts,
    mark_last_block,
};
pub use content::{
    CacheControl, ContentBlock, ImageBlock, ImageSource, Message, MessageContent,
    RedactedThinkingBlock, Role, TextBlock, ThinkingBlock, ToolResultBlock, ToolResultContent,
    ToolUseBlock,
};
pub use error::{ApiErrorBody, ErrorResponse};
pub use history::{HistoryError, validate_history};
pub use request::{
    MessagesRequest, Metadata, SystemBlock, SystemPrompt, ThinkingConfig, ToolChoice,
    ToolDefinition,
};
pub use response::{MessageResponse, StopReason, Usage};
pub use schema::InputSchema;
pub use stream::{Delta, DeltaUsage, MessageDeltaBody, StreamEvent};

/// JSON object type used for forward-compatible "extra" fields.
pub type JsonMap = serde_json::Map<String, serde_json::Value>;
