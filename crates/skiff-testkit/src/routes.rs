//! The request handlers: `/v1/messages` driven by the script, `/v1/messages/count_tokens`, and
//! the 404 for everything else. Every request is recorded before anything else happens.

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use skiff_protocol::script::{Fault, ScriptTurn};

use crate::faults::{error_response, fault_kind, status_fault_response, stream_fault_plan};
use crate::recording::RecordedRequest;
use crate::shared::Shared;
use crate::sse::{Dialect, Frames};
use crate::streaming::{Ending, OpenStreamGuard, StreamPlan};
use skiff_protocol::script_cursor::Step;

/// Largest request body read (bigger bodies are cut off and answered 413).
const MAX_BODY_BYTES: usize = 256 * 1024 * 1024;

/// Model reported when neither the script nor the request names one.
const FALLBACK_MODEL: &str = "mock-model";

/// What the `/v1/messages` handler needs from the request body.
struct MessagesCall {
    stream: bool,
    model: String,
    input_estimate: u64,
    request_id: String,
    /// The subagent thread of the request (scripts with `thread` turns; Anthropic dialect).
    thread: Option<String>,
}

/// The body's chunks as received, its length, and whether it was cut at [`MAX_BODY_BYTES`].
async fn read_body(body: Body) -> (Vec<Bytes>, usize, bool) {
    use futures::StreamExt;
    let mut stream = body.into_data_stream();
    let mut chunks = Vec::new();
    let mut len = 0usize;
    while let Some(chunk) = stream.next().await {
        match chunk {
            Ok(c) => {
                len += c.len();
                if len > MAX_BODY_BYTES {
                    return (Vec::new(), 0, true);
                }
                chunks.push(c);
            }
            Err(_) => return (Vec::new(), 0, true),
        }
    }
    (chunks, len, false)
}

/// Entry point for every request.
pub(crate) async fn handle(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    shared.touch();
    if let Some(timeline) = &shared.timeline {
        timeline.note(&format!(
            "request {} {}",
            request.method(),
            request.uri().path()
        ));
    }
    let (parts, body) = request.into_parts();
    let (mut chunks, mut body_len, too_large) = read_body(body).await;
    let mut cloud_dialect = None;
    if let Some(cloud) = &shared.cloud {
        let joined: Vec<u8> = chunks.concat();
        match cloud
            .intercept(&parts.method, parts.uri.path(), &parts.headers, &joined)
            .await
        {
            crate::cloud::Intercept::Respond(r) => {
                shared.recorder.record(RecordedRequest::new(
                    &parts.method,
                    &parts.uri,
                    &parts.headers,
                    &[Bytes::from(joined)],
                    true,
                ));
                return r;
            }
            crate::cloud::Intercept::Messages { body, dialect } => {
                body_len = body.len();
                chunks = vec![body];
                cloud_dialect = Some(dialect);
            }
            crate::cloud::Intercept::Invalid(why) => {
                let seq = shared.recorder.record(RecordedRequest::new(
                    &parts.method,
                    &parts.uri,
                    &parts.headers,
                    &[Bytes::from(joined)],
                    true,
                ));
                shared
                    .violations
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((seq, why.clone()));
                return error_response(
                    StatusCode::BAD_REQUEST,
                    "invalid_request_error",
                    &why,
                    &format!("req_mock_{seq}"),
                );
            }
            crate::cloud::Intercept::Pass => {}
        }
    }
    let full_body = shared.check || shared.recorder.keeps();
    let record = RecordedRequest::new(
        &parts.method,
        &parts.uri,
        &parts.headers,
        &chunks,
        full_body,
    );
    drop(chunks);
    let call = MessagesCall {
        stream: record.body.get("stream").and_then(|v| v.as_bool()) == Some(true),
        model: record
            .body
            .get("model")
            .and_then(|v| v.as_str())
            .unwrap_or(FALLBACK_MODEL)
            .to_owned(),
        // Token estimate used everywhere in the mock: request body bytes / 4.
        input_estimate: (body_len / 4) as u64,
        request_id: String::new(),
        thread: thread_of(&shared, &record.body),
    };
    let is_messages = cloud_dialect.is_some()
        || (parts.method == Method::POST && parts.uri.path() == "/v1/messages");
    let is_chat = parts.method == Method::POST && parts.uri.path() == "/v1/chat/completions";
    let violation = if !shared.check {
        None
    } else if is_messages {
        skiff_protocol::request_checks::check_request(&record.body)
    } else if is_chat {
        skiff_protocol::request_checks::check_chat_request(&record.body)
    } else {
        None
    };
    let seq = shared.recorder.record(record);
    let request_id = format!("req_mock_{seq}");
    let call = MessagesCall {
        request_id: request_id.clone(),
        ..call
    };

    let mut response = if let Some(why) = violation {
        shared
            .violations
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((seq, why.clone()));
        error_response(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            &why,
            &request_id,
        )
    } else if too_large {
        error_response(
            StatusCode::PAYLOAD_TOO_LARGE,
            "request_too_large",
            "mock: request body could not be read in full",
            &request_id,
        )
    } else if let Some(dialect) = cloud_dialect {
        messages(&shared, call, dialect).await
    } else if parts.method == Method::POST && parts.uri.path() == "/v1/messages" {
        messages(&shared, call, Dialect::Anthropic).await
    } else if parts.method == Method::POST && parts.uri.path() == "/v1/chat/completions" {
        messages(&shared, call, Dialect::OpenAi).await
    } else if let Some(answer) = metadata(&shared, &parts.method, parts.uri.path()).await {
        answer
    } else if parts.method == Method::POST && parts.uri.path() == "/v1/messages/count_tokens" {
        json_response(json!({ "input_tokens": call.input_estimate }).to_string())
    } else {
        error_response(
            StatusCode::NOT_FOUND,
            "not_found_error",
            &format!("mock: no route for {} {}", parts.method, parts.uri.path()),
            &request_id,
        )
    };
    if let Ok(value) = HeaderValue::from_str(&request_id) {
        response.headers_mut().insert("request-id", value);
    }
    response
}

/// The model metadata endpoints: `GET /v1/models` always; `GET /props`, `POST /api/show` and
/// `GET /api/v0/models` when the server was given [`crate::openai::ModelMetadata`]. `None`:
/// not one of them.
async fn metadata(shared: &Shared, method: &Method, path: &str) -> Option<Response> {
    let model = shared
        .cursor
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .model()
        .unwrap_or(FALLBACK_MODEL)
        .to_owned();
    let Some(meta) = &shared.metadata else {
        return (*method == Method::GET && path == "/v1/models").then(|| {
            json_response(
                json!({"object": "list", "data": [{"id": model, "object": "model", "owned_by": "skiff-mock"}]})
                    .to_string(),
            )
        });
    };
    let body = match (method.as_str(), path) {
        ("GET", "/v1/models") => json!({"object": "list", "data": [meta.list_entry(&model)]}),
        ("GET", "/props") => meta.props(),
        ("POST", "/api/show") => meta.ollama_show(),
        ("GET", "/api/v0/models") => meta.lmstudio_models(&model),
        _ => return None,
    };
    if meta.delay_ms > 0 {
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(meta.delay_ms)) => {}
            () = shared.cancel.cancelled() => {}
        }
    }
    if let Some(status) = meta.status {
        let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        return Some(
            (
                status,
                [(header::CONTENT_TYPE, "application/json")],
                crate::openai::error_body("server_error", "mock: metadata fault").to_string(),
            )
                .into_response(),
        );
    }
    Some(json_response(body.to_string()))
}

/// An error response in the dialect's shape.
fn dialect_error(
    dialect: Dialect,
    status: StatusCode,
    error_type: &str,
    message: &str,
    request_id: &str,
) -> Response {
    match dialect {
        Dialect::Anthropic => error_response(status, error_type, message, request_id),
        Dialect::Bedrock => (
            status,
            [(header::CONTENT_TYPE, "application/json")],
            json!({ "message": message }).to_string(),
        )
            .into_response(),
        Dialect::OpenAi => (
            status,
            [(header::CONTENT_TYPE, "application/json")],
            crate::openai::error_body(error_type, message).to_string(),
        )
            .into_response(),
    }
}

/// The subagent thread a `/v1/messages` body belongs to, when the script has threads (see
/// `ScriptCursor::thread_of`).
fn thread_of(shared: &Shared, body: &serde_json::Value) -> Option<String> {
    let cursor = shared.cursor.lock().unwrap_or_else(|e| e.into_inner());
    if !cursor.has_threads() {
        return None;
    }
    let tools = body
        .get("tools")
        .and_then(|t| t.as_array())
        .into_iter()
        .flatten()
        .filter_map(|t| t.get("name").and_then(|n| n.as_str()));
    let first = body
        .get("messages")
        .and_then(|m| m.get(0))
        .and_then(|m| serde_json::from_value::<skiff_protocol::Message>(m.clone()).ok());
    cursor.thread_for(tools, first.as_ref())
}

/// `POST /v1/messages` and `POST /v1/chat/completions`: the script's next step.
async fn messages(shared: &Shared, call: MessagesCall, dialect: Dialect) -> Response {
    let (step, forced_model) = {
        let mut cursor = shared.cursor.lock().unwrap_or_else(|e| e.into_inner());
        (
            cursor.next_step_in(call.thread.as_deref()),
            cursor.model().map(str::to_owned),
        )
    };
    let model = forced_model.unwrap_or_else(|| call.model.clone());
    match step {
        // A client error, not a server fault: clients must not retry it. The same error the
        // scripted provider gives.
        Step::Exhausted { turns } => dialect_error(
            dialect,
            StatusCode::BAD_REQUEST,
            "script_exhausted",
            &format!(
                "the model script is exhausted after {turns} turn{}; add turns to the script, or \
                 set \"repeat\": true to play it in a loop",
                if turns == 1 { "" } else { "s" }
            ),
            &call.request_id,
        ),
        Step::Fault {
            fault:
                Fault::Status {
                    status,
                    retry_after,
                    retry_after_ms,
                    message,
                },
            ..
        } => {
            let mut response = status_fault_response(
                status,
                retry_after.as_deref(),
                retry_after_ms,
                message.as_deref(),
                &call.request_id,
            );
            if dialect == Dialect::OpenAi {
                let code = response.status();
                let text = message
                    .as_deref()
                    .unwrap_or_else(|| crate::faults::default_message_for_status(status));
                let kind = crate::faults::error_type_for_status(status);
                let headers = response.headers().clone();
                response = dialect_error(dialect, code, kind, text, &call.request_id);
                for name in ["retry-after", "retry-after-ms"] {
                    if let Some(v) = headers.get(name) {
                        response.headers_mut().insert(name, v.clone());
                    }
                }
            }
            response
        }
        Step::Fault {
            turn,
            serial,
            fault,
            script_turn,
        } => {
            if !call.stream {
                return dialect_error(
                    dialect,
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "api_error",
                    &format!(
                        "mock fault `{}` (turn {turn}) on a non-streaming request",
                        fault_kind(&fault)
                    ),
                    &call.request_id,
                );
            }
            let events = script_turn.to_stream_events(serial, &model, call.input_estimate);
            match render(dialect, &events).and_then(|f| stream_fault_plan(&fault, &f)) {
                Ok(plan) => stream_response(dialect, plan.into_body(shared.cancel.clone())),
                Err(e) => render_failed(&e, &call.request_id),
            }
        }
        Step::Answer {
            serial,
            script_turn,
            ..
        } => {
            if call.stream {
                answer_stream(shared, &script_turn, serial, &model, &call, dialect)
            } else {
                answer_json(shared, &script_turn, serial, &model, &call, dialect).await
            }
        }
    }
}

/// A turn's successful streaming response.
fn answer_stream(
    shared: &Shared,
    turn: &ScriptTurn,
    serial: usize,
    model: &str,
    call: &MessagesCall,
    dialect: Dialect,
) -> Response {
    let events = turn.to_stream_events(serial, model, call.input_estimate);
    let frames = match render(dialect, &events) {
        Ok(frames) => frames,
        Err(e) => return render_failed(&e, &call.request_id),
    };
    let plan = StreamPlan {
        first_byte_delay: turn.delay_first_byte_ms.map(Duration::from_millis),
        between_delay: turn.delay_between_deltas_ms.map(Duration::from_millis),
        frames: frames.all(),
        ending: Ending::Clean,
        guard: Some(OpenStreamGuard::new(&shared.open_streams).noting_end(shared.timeline.clone())),
    };
    stream_response(dialect, plan.into_body(shared.cancel.clone()))
}

/// A turn's successful non-streaming response.
async fn answer_json(
    shared: &Shared,
    turn: &ScriptTurn,
    serial: usize,
    model: &str,
    call: &MessagesCall,
    dialect: Dialect,
) -> Response {
    if let Some(ms) = turn.delay_first_byte_ms.filter(|ms| *ms > 0) {
        tokio::select! {
            () = shared.cancel.cancelled() => {
                return error_response(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "api_error",
                    "mock server shutting down",
                    &call.request_id,
                );
            }
            () = tokio::time::sleep(Duration::from_millis(ms)) => {}
        }
    }
    let message = turn.to_message(serial, model, call.input_estimate);
    let body = match dialect {
        Dialect::Anthropic | Dialect::Bedrock => serde_json::to_string(&message),
        Dialect::OpenAi => Ok(crate::openai::completion(&message).to_string()),
    };
    match body {
        Ok(json) => json_response(json),
        Err(e) => render_failed(&e, &call.request_id),
    }
}

fn render(dialect: Dialect, events: &[skiff_protocol::StreamEvent]) -> serde_json::Result<Frames> {
    match dialect {
        Dialect::Anthropic => Frames::render(events),
        Dialect::OpenAi => Frames::render_openai(events),
        Dialect::Bedrock => Frames::render_bedrock(events),
    }
}

/// A streamed answer: SSE, or Bedrock's event stream.
fn stream_response(dialect: Dialect, body: Body) -> Response {
    if dialect == Dialect::Bedrock {
        return (
            [(header::CONTENT_TYPE, "application/vnd.amazon.eventstream")],
            body,
        )
            .into_response();
    }
    sse_response(body)
}

fn sse_response(body: Body) -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

fn json_response(json: String) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], json).into_response()
}

fn render_failed(error: &serde_json::Error, request_id: &str) -> Response {
    error_response(
        StatusCode::INTERNAL_SERVER_ERROR,
        "api_error",
        &format!("mock: cannot render the scripted turn: {error}"),
        request_id,
    )
}
