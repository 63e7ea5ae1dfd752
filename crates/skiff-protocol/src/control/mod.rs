//! The Agent SDKs' control protocol (PROTOCOL.md §3): the `control_request`,
//! `control_response` and `control_cancel_request` frames that travel, one JSON line each,
//! between a host (an Agent SDK, `skiff replay`) and `skiff -p --input-format stream-json`.
//!
//! Reading is forgiving where the protocol grows and strict where a frame is broken: unknown
//! fields are kept, an unknown request subtype parses as [`ControlRequest::Unsupported`] (to be
//! answered with an `unsupported_request` error), and a frame that cannot be read is a
//! [`FrameError`] that says which request it was, so it can still be answered.

mod permission;
mod request;
mod response;

#[cfg(test)]
mod tests;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::JsonMap;

pub use permission::{
    Destination, DirectoriesUpdate, ModeUpdate, PermissionUpdate, RuleBehavior, RuleValue,
    RulesUpdate,
};
pub use request::{
    CanUseTool, ControlRequest, HookCallback, HookMatcher, Initialize, McpMessage, Plain,
    RewindFiles, SetMaxThinkingTokens, SetModel, SetPermissionMode, SystemPromptOption,
    UnknownRequest,
};
pub use response::{
    Account, AgentInfo, Allow, CanUseToolAnswer, CommandInfo, ControlResponse, Deny, Failure,
    InitializeResponse, InterruptResponse, McpMessageAnswer, McpServerInfo, McpStatusResponse,
    ModelInfo, RewindFilesResponse, ServerInfo, SetModelResponse, SetPermissionModeResponse,
    Success, ToolInfo,
};

/// The `error_code` of the answer to a request subtype this version does not know.
pub const UNSUPPORTED_REQUEST: &str = "unsupported_request";

/// One control frame.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ControlFrame {
    /// A request, either way.
    ControlRequest(RequestFrame),
    /// The answer to a request.
    ControlResponse(ResponseFrame),
    /// A request withdrawn by its sender (the other side must not answer it any more).
    ControlCancelRequest(CancelFrame),
}

/// `{"type":"control_request","request_id":…,"request":{"subtype":…}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestFrame {
    /// Chosen by the sender, unique among its requests in flight.
    pub request_id: String,
    /// What is asked.
    pub request: ControlRequest,
}

/// `{"type":"control_response","response":{"subtype":…,"request_id":…}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseFrame {
    /// The answer.
    pub response: ControlResponse,
}

/// `{"type":"control_cancel_request","request_id":…}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CancelFrame {
    /// The request withdrawn.
    pub request_id: String,
}

impl ControlFrame {
    /// A request.
    pub fn request(request_id: impl Into<String>, request: ControlRequest) -> Self {
        Self::ControlRequest(RequestFrame {
            request_id: request_id.into(),
            request,
        })
    }

    /// A success answer carrying `payload` (`{}` for a plain acknowledgement).
    pub fn success(request_id: impl Into<String>, payload: Value) -> Self {
        Self::ControlResponse(ResponseFrame {
            response: ControlResponse::Success(Success {
                request_id: request_id.into(),
                response: payload,
                extra: JsonMap::new(),
            }),
        })
    }

    /// An error answer, with an `error_code` when there is one.
    pub fn error(
        request_id: impl Into<String>,
        error: impl Into<String>,
        error_code: Option<&str>,
    ) -> Self {
        Self::ControlResponse(ResponseFrame {
            response: ControlResponse::Error(Failure {
                request_id: request_id.into(),
                error: error.into(),
                error_code: error_code.map(str::to_owned),
                extra: JsonMap::new(),
            }),
        })
    }

    /// The answer to a request subtype this version does not know, as Claude Code words it.
    pub fn unsupported(request_id: impl Into<String>, subtype: &str) -> Self {
        Self::error(
            request_id,
            format!("Unsupported control request subtype: {subtype}"),
            Some(UNSUPPORTED_REQUEST),
        )
    }

    /// A request withdrawn.
    pub fn cancel(request_id: impl Into<String>) -> Self {
        Self::ControlCancelRequest(CancelFrame {
            request_id: request_id.into(),
        })
    }

    /// Whether a frame's `type` is one of the control protocol's.
    pub fn is_control_type(frame_type: &str) -> bool {
        matches!(
            frame_type,
            "control_request" | "control_response" | "control_cancel_request"
        )
    }

    /// Read a frame, saying which request a broken one was so that it can be answered.
    pub fn from_value(frame: Value) -> Result<Self, FrameError> {
        let Value::Object(mut frame) = frame else {
            return Err(FrameError::other("a control frame must be a JSON object"));
        };
        let id_of = |m: &JsonMap| {
            m.get("request_id")
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        match frame.get("type").and_then(Value::as_str) {
            Some("control_request") => {
                let request_id = id_of(&frame);
                let fail = |message: String| FrameError::Request {
                    request_id: request_id.clone(),
                    message,
                };
                if request_id.is_none() {
                    return Err(fail(
                        "a control_request needs a request_id (a string)".into(),
                    ));
                }
                let Some(Value::Object(request)) = frame.remove("request") else {
                    return Err(fail("a control_request needs a request object".into()));
                };
                let request = ControlRequest::from_fields(request).map_err(|e| fail(e.0))?;
                Ok(Self::ControlRequest(RequestFrame {
                    request_id: request_id.unwrap_or_default(),
                    request,
                }))
            }
            Some("control_response") => {
                let Some(response) = frame.remove("response").filter(Value::is_object) else {
                    return Err(FrameError::Response {
                        request_id: None,
                        message: "a control_response needs a response object".into(),
                    });
                };
                let request_id = response.as_object().and_then(id_of);
                serde_json::from_value::<ControlResponse>(response)
                    .map(|response| Self::ControlResponse(ResponseFrame { response }))
                    .map_err(|e| FrameError::Response {
                        message: match &request_id {
                            Some(_) => format!("invalid control_response: {e}"),
                            None => "a control_response needs response.request_id".into(),
                        },
                        request_id,
                    })
            }
            Some("control_cancel_request") => match id_of(&frame) {
                Some(request_id) => Ok(Self::ControlCancelRequest(CancelFrame { request_id })),
                None => Err(FrameError::other(
                    "a control_cancel_request needs a request_id",
                )),
            },
            Some(other) => Err(FrameError::other(format!(
                "{other:?} is not a control frame type"
            ))),
            None => Err(FrameError::other("a control frame needs a type")),
        }
    }
}

impl<'de> Deserialize<'de> for ControlFrame {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Self::from_value(Value::deserialize(deserializer)?).map_err(D::Error::custom)
    }
}

/// A request body that cannot be read: a missing or non-string subtype, or fields that do
/// not fit a known subtype.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestError(pub String);

impl RequestError {
    fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

impl std::fmt::Display for RequestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RequestError {}

/// A control frame that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameError {
    /// A broken `control_request`; with its id, it is answered with [`FrameError::reply`].
    Request {
        /// The request's id, when it has a readable one.
        request_id: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// A broken `control_response`; with the id it answers, that request has failed.
    Response {
        /// The id of the request it answers, when readable.
        request_id: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// Not a control frame at all.
    Other(String),
}

impl FrameError {
    fn other(message: impl Into<String>) -> Self {
        Self::Other(message.into())
    }

    /// What is wrong.
    pub fn message(&self) -> &str {
        match self {
            Self::Request { message, .. }
            | Self::Response { message, .. }
            | Self::Other(message) => message,
        }
    }

    /// The error answer a broken request gets (`None` when it has no id to answer, or is not
    /// a request).
    pub fn reply(&self) -> Option<ControlFrame> {
        match self {
            Self::Request {
                request_id: Some(id),
                message,
            } => Some(ControlFrame::error(id.clone(), message.clone(), None)),
            _ => None,
        }
    }
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for FrameError {}
