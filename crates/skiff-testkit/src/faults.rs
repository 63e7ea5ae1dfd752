//! Fault responses: HTTP error statuses with API error bodies, and the stream plans of the
//! mid-stream faults (disconnect, malformed event, SSE error event, stall).

use std::time::Duration;

use axum::http::{HeaderValue, StatusCode, header::HeaderName};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use skiff_protocol::ErrorResponse;
use skiff_protocol::script::Fault;

use crate::sse::{Dialect, Frames, MALFORMED_FRAME, error_frame};
use crate::streaming::{Ending, StreamPlan};

pub use skiff_protocol::script::{default_message_for_status, error_type_for_status};

/// A JSON error response: `{"type":"error","error":{"type":…,"message":…},"request_id":…}`.
pub(crate) fn error_response(
    status: StatusCode,
    error_type: &str,
    message: &str,
    request_id: &str,
) -> Response {
    let mut body = ErrorResponse::new(error_type, message);
    body.request_id = Some(request_id.to_owned());
    let json = serde_json::to_vec(&body).unwrap_or_else(|_| b"{\"type\":\"error\"}".to_vec());
    let mut response = (status, Bytes::from(json)).into_response();
    response.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// The response of a `status` fault, with `retry-after` / `retry-after-ms` when scripted.
pub(crate) fn status_fault_response(
    status: u16,
    retry_after: Option<&str>,
    retry_after_ms: Option<u64>,
    message: Option<&str>,
    request_id: &str,
) -> Response {
    let code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let message = message.unwrap_or_else(|| default_message_for_status(status));
    let mut response = error_response(code, error_type_for_status(status), message, request_id);
    let headers = response.headers_mut();
    if let Some(value) = retry_after.and_then(|v| HeaderValue::from_str(v).ok()) {
        headers.insert(HeaderName::from_static("retry-after"), value);
    }
    if let Some(ms) = retry_after_ms {
        headers.insert(
            HeaderName::from_static("retry-after-ms"),
            HeaderValue::from(ms),
        );
    }
    response
}

/// The body plan of a mid-stream fault (every fault kind except `status`), from the turn's frames.
pub(crate) fn stream_fault_plan(fault: &Fault, frames: &Frames) -> serde_json::Result<StreamPlan> {
    let (after, tail, ending) = match fault {
        Fault::Disconnect { after_events } => (*after_events, None, Ending::Abort(None)),
        Fault::Malformed { after_events } => (
            *after_events,
            Some(match frames.dialect {
                Dialect::Anthropic => Bytes::from_static(MALFORMED_FRAME),
                Dialect::OpenAi => Bytes::from_static(crate::openai::MALFORMED_FRAME),
                Dialect::Bedrock => crate::event_stream::corrupted_frame(),
            }),
            Ending::Clean,
        ),
        Fault::ErrorEvent {
            after_events,
            error_type,
            message,
        } => (
            *after_events,
            Some(match frames.dialect {
                Dialect::Anthropic => error_frame(error_type, message)?,
                Dialect::OpenAi => crate::openai::error_frame(error_type, message)?,
                Dialect::Bedrock => crate::event_stream::exception_frame(error_type, message),
            }),
            Ending::Clean,
        ),
        Fault::Stall { after_events, ms } => (
            *after_events,
            None,
            Ending::Abort(Some(Duration::from_millis(*ms))),
        ),
        Fault::Status { .. } => (0, None, Ending::Clean),
    };
    let mut out = frames.first(after);
    out.extend(tail);
    Ok(StreamPlan {
        first_byte_delay: None,
        between_delay: None,
        frames: out,
        ending,
        guard: None,
    })
}

/// A short name of the fault kind, for messages.
pub(crate) fn fault_kind(fault: &Fault) -> &'static str {
    match fault {
        Fault::Status { .. } => "status",
        Fault::Disconnect { .. } => "disconnect",
        Fault::Malformed { .. } => "malformed",
        Fault::ErrorEvent { .. } => "error_event",
        Fault::Stall { .. } => "stall",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_maps_to_error_types() {
        assert_eq!(error_type_for_status(529), "overloaded_error");
        assert_eq!(error_type_for_status(429), "rate_limit_error");
        assert_eq!(error_type_for_status(503), "api_error");
        assert_eq!(error_type_for_status(418), "api_error");
    }

    #[test]
    fn status_fault_sets_retry_headers() {
        let r = status_fault_response(429, Some("2"), Some(1500), None, "req_mock_1");
        assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(r.headers()["retry-after"], "2");
        assert_eq!(r.headers()["retry-after-ms"], "1500");
        assert_eq!(r.headers()["content-type"], "application/json");
    }
}
