//! Provider errors, each worded so a user knows what happened and what to do.

use std::time::Duration;

use crate::accumulator::StreamError;

/// A failed model call (after retries, where retrying applies).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    /// 401/403: the credential was rejected.
    #[error(
        "authentication failed (HTTP {status}): {message}. Check the API key: set a valid key in \
         ANTHROPIC_API_KEY (or a bearer token in ANTHROPIC_AUTH_TOKEN)"
    )]
    Authentication {
        /// HTTP status.
        status: u16,
        /// The API's message.
        message: String,
    },
    /// 401/403 from a cloud: the credentials were rejected (which ones, and where from).
    #[error(
        "authentication failed at {cloud} (HTTP {status}): {message}. The credentials came from \
         {credential}: check that they are valid, not expired, and allowed to invoke the model"
    )]
    CloudAuthentication {
        /// HTTP status.
        status: u16,
        /// The cloud (`Amazon Bedrock`, `Google Vertex AI`, `Microsoft Foundry`).
        cloud: String,
        /// The credential source that was tried (never the secret).
        credential: String,
        /// The cloud's message.
        message: String,
    },
    /// No cloud credentials could be found or obtained (the chain was tried in full).
    #[error("{cloud}: {message}")]
    Credentials {
        /// The cloud.
        cloud: String,
        /// What was tried and what to do.
        message: String,
    },
    /// 400, 402, 404, 413 and other client errors: not retried; the API's own message.
    #[error("API error {status} ({kind}): {message}")]
    InvalidRequest {
        /// HTTP status.
        status: u16,
        /// API error type.
        kind: String,
        /// The API's message.
        message: String,
    },
    /// 429 after all retries (or with a wait longer than we are willing to sleep).
    #[error("rate limited (HTTP 429) after {retries} retries: {message}")]
    RateLimited {
        /// Retries made.
        retries: u32,
        /// The API's message.
        message: String,
    },
    /// 529 / overloaded_error after all retries.
    #[error(
        "the API is overloaded (529) after {retries} retries: {message}. Try again in a few minutes"
    )]
    Overloaded {
        /// Retries made.
        retries: u32,
        /// The API's message.
        message: String,
    },
    /// 5xx after all retries.
    #[error("API server error {status} after {retries} retries: {message}")]
    Server {
        /// HTTP status.
        status: u16,
        /// Retries made.
        retries: u32,
        /// The API's message.
        message: String,
    },
    /// The connection could not be made (refused, DNS, TLS).
    #[error(
        "could not connect to {url} (after {retries} retries): {message}. Check the base URL \
         (ANTHROPIC_BASE_URL, OPENAI_BASE_URL or --base-url) and that the server is running"
    )]
    Connect {
        /// The URL that was tried.
        url: String,
        /// Retries made.
        retries: u32,
        /// Transport detail.
        message: String,
    },
    /// The connection broke, stalled or timed out (after all retries).
    #[error("connection to {url} failed after {retries} retries: {message}")]
    Transport {
        /// The URL that was tried.
        url: String,
        /// Retries made.
        retries: u32,
        /// What went wrong.
        message: String,
    },
    /// An `error` event arrived in the stream (after all retries when retryable).
    #[error("the API reported {kind} mid-stream after {retries} retries: {message}")]
    StreamErrorEvent {
        /// API error type.
        kind: String,
        /// The API's message.
        message: String,
        /// Retries made.
        retries: u32,
    },
    /// The stream could not be assembled (malformed or inconsistent events).
    #[error("invalid response stream: {0}")]
    Stream(#[from] StreamError),
    /// The request could not be built (serialisation, bad header value).
    #[error("could not build the request: {0}")]
    Request(String),
    /// The caller cancelled the call.
    #[error("request cancelled")]
    Cancelled,
}

impl LlmError {
    /// HTTP status behind the error, if any.
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Authentication { status, .. }
            | Self::CloudAuthentication { status, .. }
            | Self::InvalidRequest { status, .. }
            | Self::Server { status, .. } => Some(*status),
            Self::RateLimited { .. } => Some(429),
            Self::Overloaded { .. } => Some(529),
            _ => None,
        }
    }
}

/// One failed attempt, before the retry decision.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum AttemptError {
    /// Non-2xx response.
    Http {
        status: u16,
        kind: String,
        message: String,
        retry_after: Option<Duration>,
        should_retry: Option<bool>,
    },
    /// Connection could not be opened.
    Connect(String),
    /// Connection broke, stalled or timed out after it was opened.
    Transport(String),
    /// `error` SSE event.
    ErrorEvent { kind: String, message: String },
    /// Stream not assemblable.
    Stream(StreamError),
    /// Cloud credentials could not be obtained (`cloud`, what was tried); never retried.
    Credentials { cloud: String, message: String },
    /// Cancelled by the caller.
    Cancelled,
}

impl std::fmt::Display for AttemptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Http {
                status,
                kind,
                message,
                ..
            } => write!(f, "HTTP {status} {kind}: {message}"),
            Self::Connect(m) => write!(f, "connection failed: {m}"),
            Self::Transport(m) => write!(f, "{m}"),
            Self::ErrorEvent { kind, message } => write!(f, "stream error event {kind}: {message}"),
            Self::Stream(e) => write!(f, "{e}"),
            Self::Credentials { cloud, message } => write!(f, "{cloud}: {message}"),
            Self::Cancelled => write!(f, "cancelled"),
        }
    }
}

impl AttemptError {
    /// Whether the server said it is overloaded (HTTP 529 or an `overloaded_error` event).
    pub(crate) fn is_overloaded(&self) -> bool {
        match self {
            Self::Http { status, .. } => *status == 529,
            Self::ErrorEvent { kind, .. } => kind == "overloaded_error",
            _ => false,
        }
    }

    /// The user-facing error once no (more) retries will happen.
    pub(crate) fn into_final(self, url: &str, retries: u32) -> LlmError {
        match self {
            Self::Http {
                status,
                kind,
                message,
                ..
            } => match status {
                401 | 403 => LlmError::Authentication { status, message },
                429 => LlmError::RateLimited { retries, message },
                529 => LlmError::Overloaded { retries, message },
                s if s >= 500 => LlmError::Server {
                    status,
                    retries,
                    message,
                },
                _ => LlmError::InvalidRequest {
                    status,
                    kind,
                    message,
                },
            },
            Self::Connect(message) => LlmError::Connect {
                url: url.to_owned(),
                retries,
                message,
            },
            Self::Transport(message) => LlmError::Transport {
                url: url.to_owned(),
                retries,
                message,
            },
            Self::ErrorEvent { kind, message } if kind == "overloaded_error" => {
                LlmError::Overloaded { retries, message }
            }
            Self::ErrorEvent { kind, message } => LlmError::StreamErrorEvent {
                kind,
                message,
                retries,
            },
            Self::Stream(e) => LlmError::Stream(e),
            Self::Credentials { cloud, message } => LlmError::Credentials { cloud, message },
            Self::Cancelled => LlmError::Cancelled,
        }
    }
}
