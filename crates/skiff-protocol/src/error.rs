//! The API's error body: `{"type":"error","error":{"type":"…","message":"…"},"request_id":"…"}`.

use serde::{Deserialize, Serialize};

use crate::JsonMap;

/// Top-level error response of the Messages API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorResponse {
    /// Always `error`.
    #[serde(rename = "type", default = "error_tag")]
    pub kind: String,
    /// The error itself.
    pub error: ApiErrorBody,
    /// Request id, when the API sent one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// `{"type":"overloaded_error","message":"Overloaded"}`: the `error` object, also used by the SSE `error` event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApiErrorBody {
    /// Error type, e.g. `invalid_request_error`, `overloaded_error`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Human-readable message.
    #[serde(default)]
    pub message: String,
    /// Fields this version does not model.
    #[serde(flatten)]
    pub extra: JsonMap,
}

fn error_tag() -> String {
    "error".to_owned()
}

impl ErrorResponse {
    /// An error response with the given type and message.
    pub fn new(kind: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            kind: error_tag(),
            error: ApiErrorBody {
                kind: kind.into(),
                message: message.into(),
                extra: JsonMap::new(),
            },
            request_id: None,
        }
    }
}
