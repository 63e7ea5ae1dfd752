//! Server-sent events of a streaming Messages API response.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{ApiErrorBody, ContentBlock, JsonMap, MessageResponse, StopReason};

/// One SSE event. Unknown event types are preserved in [`StreamEvent::Unknown`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    /// First event: the message shell with input usage.
    MessageStart {
        /// The message with empty content.
        message: MessageResponse,
    },
    /// A content block begins.
    ContentBlockStart {
        /// Block index.
        index: usize,
        /// The empty block (text "", tool_use with input {}, ...).
        content_block: ContentBlock,
    },
    /// An increment of the block at `index`.
    ContentBlockDelta {
        /// Block index.
        index: usize,
        /// The increment.
        delta: Delta,
    },
    /// The block at `index` is complete.
    ContentBlockStop {
        /// Block index.
        index: usize,
    },
    /// Top-level changes: stop reason and cumulative usage.
    MessageDelta {
        /// Stop reason and sequence.
        delta: MessageDeltaBody,
        /// Cumulative usage (replaces, not adds).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<DeltaUsage>,
    },
    /// Last event of a complete stream.
    MessageStop,
    /// Keep-alive.
    Ping,
    /// An error after HTTP 200 (e.g. `overloaded_error`).
    Error {
        /// The error.
        error: ApiErrorBody,
    },
    /// An event type this version does not know.
    #[serde(untagged)]
    Unknown(Value),
}

/// A content block delta. Unknown delta types are preserved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Delta {
    /// More text.
    TextDelta {
        /// The text fragment.
        text: String,
    },
    /// A fragment of the tool input JSON.
    InputJsonDelta {
        /// The fragment (joined and parsed at block stop).
        partial_json: String,
    },
    /// More thinking text.
    ThinkingDelta {
        /// The thinking fragment.
        thinking: String,
    },
    /// The thinking block's signature.
    SignatureDelta {
        /// The signature.
        signature: String,
    },
    /// A citation for the text block.
    CitationsDelta {
        /// The citation, kept verbatim.
        citation: Value,
    },
    /// A delta type this version does not know.
    #[serde(untagged)]
    Unknown(Value),
}

/// The `delta` of a `message_delta` event.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MessageDeltaBody {
    /// Final stop reason.
    #[serde(default)]
    pub stop_reason: Option<StopReason>,
    /// Matched stop sequence.
    #[serde(default)]
    pub stop_sequence: Option<String>,
    /// Other fields (`stop_details`, ...).
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// Usage in `message_delta`: present counts are cumulative and replace earlier ones.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeltaUsage {
    /// Input tokens, when restated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Cumulative output tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// Cache writes, when restated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation_input_tokens: Option<u64>,
    /// Cache reads, when restated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_input_tokens: Option<u64>,
    /// Other fields.
    #[serde(flatten)]
    pub extra: JsonMap,
}

impl crate::Usage {
    /// Merge a `message_delta` usage into this one: present counts replace the current ones.
    pub fn merge_delta(&mut self, d: &DeltaUsage) {
        if let Some(v) = d.input_tokens {
            self.input_tokens = v;
        }
        if let Some(v) = d.output_tokens {
            self.output_tokens = v;
        }
        if d.cache_creation_input_tokens.is_some() {
            self.cache_creation_input_tokens = d.cache_creation_input_tokens;
        }
        if d.cache_read_input_tokens.is_some() {
            self.cache_read_input_tokens = d.cache_read_input_tokens;
        }
        for (k, v) in &d.extra {
            self.extra.insert(k.clone(), v.clone());
        }
    }
}
