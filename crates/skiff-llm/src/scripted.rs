//! `ScriptedProvider`: the offline model (`skiff --provider script --script FILE`). It answers
//! from a [`Script`] exactly as the mock server plus the Anthropic provider would: same events,
//! same assembled message, same fault handling and final errors, without a network.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use reqwest::header::{HeaderMap, HeaderValue};
use skiff_protocol::script::{Fault, Script, default_message_for_status, error_type_for_status};
use skiff_protocol::script_cursor::{ScriptCursor, Step};
use skiff_protocol::{MessagesRequest, RequestView, StreamEvent};
use tokio_util::sync::CancellationToken;

use crate::accumulator::StreamAccumulator;
use crate::anthropic::parse_event;
use crate::error::AttemptError;
use crate::provider::{EventStream, Provider, ProviderEvent};
use crate::retry::{self, RetryPolicy};
use crate::retry::{AttemptStream, Retrying, retrying};
use crate::sse::SseEvent;
use crate::{LlmError, StreamError};

/// Longest sleep before a retry: offline there is nobody to wait for.
const MAX_RETRY_SLEEP: Duration = Duration::from_millis(50);

/// Longest silence of a scripted stall before its connection "drops".
const MAX_STALL: Duration = Duration::from_millis(50);

/// The data of the `malformed` fault (what the mock server sends).
const MALFORMED_DATA: &str = "{not json";

/// Why a script file could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScriptError {
    /// The file could not be read.
    #[error("cannot read the model script {}: {message}", path.display())]
    Read {
        /// The script file.
        path: PathBuf,
        /// The I/O error.
        message: String,
    },
    /// The file is not a valid script.
    #[error(
        "the model script {} is not valid at line {line}, column {column}: {message}",
        path.display()
    )]
    Parse {
        /// The script file.
        path: PathBuf,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// The script has no turns.
    #[error(
        "the model script {} has no turns: add at least one entry to \"turns\"",
        path.display()
    )]
    Empty {
        /// The script file.
        path: PathBuf,
    },
}

/// A model that plays back a [`Script`]: each call serves the current turn's pending faults, one
/// per attempt, then the turn's answer, and moves on (wrapping when the script repeats).
/// `Send + Sync`; share it by reference or in an `Arc`.
#[derive(Debug)]
pub struct ScriptedProvider {
    state: Arc<Mutex<State>>,
    model: Option<String>,
    max_retries: u32,
    label: String,
    record: bool,
}

#[derive(Debug)]
struct State {
    cursor: ScriptCursor,
    requests: Vec<MessagesRequest>,
}

impl ScriptedProvider {
    /// A provider playing `script` from its first turn, retrying up to 5 times.
    pub fn new(script: Script) -> Self {
        Self::labelled(script, "the model script".to_owned())
    }

    /// Load a script file (the JSON of [`Script`]).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, ScriptError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| ScriptError::Read {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        let script: Script = serde_json::from_str(&text).map_err(|e| {
            let (line, column) = (e.line(), e.column());
            let full = e.to_string();
            let suffix = format!(" at line {line} column {column}");
            ScriptError::Parse {
                path: path.to_owned(),
                line,
                column,
                message: full.strip_suffix(&suffix).unwrap_or(&full).to_owned(),
            }
        })?;
        if script.turns.is_empty() {
            return Err(ScriptError::Empty {
                path: path.to_owned(),
            });
        }
        Ok(Self::labelled(
            script,
            format!("the model script {}", path.display()),
        ))
    }

    fn labelled(script: Script, label: String) -> Self {
        Self {
            model: script.model.clone(),
            state: Arc::new(Mutex::new(State {
                cursor: ScriptCursor::new(script),
                requests: Vec::new(),
            })),
            max_retries: 5,
            label,
            record: true,
        }
    }

    /// Do not keep the requests (a long session would keep a copy of its history per call);
    /// [`ScriptedProvider::requests`] is then empty.
    pub fn without_recording(mut self) -> Self {
        self.record = false;
        self
    }

    /// Retry failed attempts at most `max_retries` times (default 5), like the Anthropic provider.
    pub fn with_max_retries(mut self, max_retries: u32) -> Self {
        self.max_retries = max_retries;
        self
    }

    /// The configured maximum number of retries.
    pub fn max_retries(&self) -> u32 {
        self.max_retries
    }

    /// Every request received so far, one per attempt (a call retried twice appears three times),
    /// like the mock server's recording.
    pub fn requests(&self) -> Vec<MessagesRequest> {
        self.lock().requests.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// The retry decisions of the real policy, with no backoff (server waits are kept, then
    /// capped when sleeping).
    fn policy(&self) -> RetryPolicy {
        RetryPolicy {
            max_retries: self.max_retries,
            base_delay: Duration::ZERO,
            rate_limit_base_delay: Duration::ZERO,
            max_delay: Duration::ZERO,
            ..RetryPolicy::default()
        }
    }
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

impl Provider for ScriptedProvider {
    fn name(&self) -> &str {
        "script"
    }

    fn stream(&self, request: &RequestView<'_>, cancel: CancellationToken) -> EventStream {
        let state = Arc::clone(&self.state);
        let mut view = *request;
        view.stream = true;
        let recorded = self.record.then(|| view.to_request());
        let model = self
            .model
            .clone()
            .unwrap_or_else(|| request.model.to_owned());
        let policy = self.policy();
        let label = self.label.clone();
        // The body the Anthropic provider would send: checked as the mock checks it (a request
        // the API would refuse fails here too), its bytes / 4 the mock's token estimate.
        let body = match view.body_chunks() {
            Ok(chunks) => chunks.concat(),
            Err(e) => {
                let e = LlmError::Request(e.to_string());
                return Box::pin(futures::stream::once(async move { Err(e) }));
            }
        };
        let input_estimate = (body.len() / 4) as u64;
        if let Some(why) = serde_json::from_slice::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| skiff_protocol::request_checks::check_request(&v))
        {
            let e = LlmError::InvalidRequest {
                status: 400,
                kind: "invalid_request_error".to_owned(),
                message: format!("the scripted model refused an invalid request: {why}"),
            };
            return Box::pin(futures::stream::once(async move { Err(e) }));
        }
        let retry = Retrying {
            policy,
            target: label,
            max_sleep: Some(MAX_RETRY_SLEEP),
        };
        let attempt_cancel = cancel.clone();
        // A subagent's calls get its own turns (scripts exported from sessions with subagents).
        let thread = lock(&state).cursor.thread_of(request);
        retrying(retry, cancel, move || {
            let step = {
                let mut s = lock(&state);
                if let Some(r) = &recorded {
                    s.requests.push(r.clone());
                }
                s.cursor.next_step_in(thread.as_deref())
            };
            if let Step::Exhausted { turns } = step {
                return Err(exhausted(turns));
            }
            Ok(Box::pin(attempt(
                step,
                model.clone(),
                input_estimate,
                attempt_cancel.clone(),
            )) as AttemptStream)
        })
    }
}

/// The error of a call made after the last turn of a non-repeating script.
fn exhausted(turns: usize) -> LlmError {
    LlmError::InvalidRequest {
        status: 400,
        kind: "script_exhausted".to_owned(),
        message: format!(
            "the model script is exhausted after {turns} turn{}; add turns to the script, or set \
             \"repeat\": true to play it in a loop",
            if turns == 1 { "" } else { "s" }
        ),
    }
}

/// One attempt: a fault or the answer, as the Anthropic provider would report it.
fn attempt(
    step: Step,
    model: String,
    input_estimate: u64,
    cancel: CancellationToken,
) -> impl futures::Stream<Item = Result<ProviderEvent, AttemptError>> + Send + 'static {
    async_stream::stream! {
        let (serial, turn, fault) = match step {
            Step::Exhausted { .. } => return,
            Step::Fault { fault: Fault::Status { status, retry_after, retry_after_ms, message }, .. } => {
                yield Err(status_error(status, retry_after.as_deref(), retry_after_ms, message));
                return;
            }
            Step::Fault { serial, script_turn, fault, .. } => (serial, script_turn, StreamFault::of(fault)),
            Step::Answer { serial, script_turn, .. } => (serial, script_turn, None),
        };
        let events = turn.to_stream_events(serial, &model, input_estimate);
        let limit = fault.as_ref().map_or(events.len(), |f| f.after_events);
        if fault.is_none()
            && let Some(ms) = turn.delay_first_byte_ms
                && !pause(Duration::from_millis(ms), &cancel).await {
                    yield Err(AttemptError::Cancelled);
                    return;
                }
        let between = turn.delay_between_deltas_ms.filter(|_| fault.is_none());
        let mut acc = StreamAccumulator::new();
        let mut ready = Vec::new();
        for (i, event) in events.iter().take(limit).enumerate() {
            if let Some(ms) = between.filter(|_| i > 0)
                && !pause(Duration::from_millis(ms), &cancel).await {
                    yield Err(AttemptError::Cancelled);
                    return;
                }
            if cancel.is_cancelled() {
                yield Err(AttemptError::Cancelled);
                return;
            }
            let outcome = handle_event(&mut acc, event, &mut ready);
            for ev in ready.drain(..) {
                yield Ok(ev);
            }
            match outcome {
                Ok(false) => {}
                Ok(true) => return,
                Err(e) => { yield Err(e); return; }
            }
        }
        let Some(StreamFault { after_events, ending }) = fault else {
            yield Err(AttemptError::Stream(StreamError::Truncated("connection closed".into())));
            return;
        };
        let failure = match ending {
            Ending::Disconnect => AttemptError::Transport(format!(
                "connection lost mid-stream: scripted disconnect after {after_events} events"
            )),
            Ending::Malformed => {
                let raw = SseEvent {
                    event: Some("content_block_delta".to_owned()),
                    data: MALFORMED_DATA.to_owned(),
                };
                match parse_event(&raw) {
                    Err(e) => AttemptError::Stream(e),
                    Ok(_) => AttemptError::Stream(StreamError::Malformed(MALFORMED_DATA.into())),
                }
            }
            Ending::ErrorEvent { kind, message } => AttemptError::ErrorEvent { kind, message },
            Ending::Stall(ms) => {
                if !pause(Duration::from_millis(ms).min(MAX_STALL), &cancel).await {
                    yield Err(AttemptError::Cancelled);
                    return;
                }
                AttemptError::Transport(format!(
                    "connection lost mid-stream: scripted stall of {ms} ms, then the connection dropped"
                ))
            }
        };
        yield Err(failure);
    }
}

/// Apply one event as the Anthropic provider does, after a round trip through its wire form (so
/// the caller gets exactly the values a real stream would parse to). `Ok(true)` once done.
fn handle_event(
    acc: &mut StreamAccumulator,
    event: &StreamEvent,
    out: &mut Vec<ProviderEvent>,
) -> Result<bool, AttemptError> {
    let data = serde_json::to_value(event)
        .map_err(|e| AttemptError::Stream(StreamError::Malformed(e.to_string())))?;
    let raw = SseEvent {
        event: data
            .get("type")
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned),
        data: data.to_string(),
    };
    let event = parse_event(&raw).map_err(AttemptError::Stream)?;
    crate::anthropic::apply_event(acc, event, out)
}

/// The failed attempt of a `status` fault: what the Anthropic provider makes of the mock's answer.
fn status_error(
    status: u16,
    retry_after: Option<&str>,
    retry_after_ms: Option<u64>,
    message: Option<String>,
) -> AttemptError {
    let mut headers = HeaderMap::new();
    if let Some(v) = retry_after.and_then(|v| HeaderValue::from_str(v).ok()) {
        headers.insert("retry-after", v);
    }
    if let Some(ms) = retry_after_ms {
        headers.insert("retry-after-ms", HeaderValue::from(ms));
    }
    AttemptError::Http {
        status,
        kind: error_type_for_status(status).to_owned(),
        message: message.unwrap_or_else(|| default_message_for_status(status).to_owned()),
        retry_after: retry::retry_after(&headers, SystemTime::now()),
        should_retry: None,
    }
}

/// Sleep for `wait`; false when cancelled first.
async fn pause(wait: Duration, cancel: &CancellationToken) -> bool {
    if wait.is_zero() {
        return !cancel.is_cancelled();
    }
    tokio::select! {
        biased;
        () = cancel.cancelled() => false,
        () = tokio::time::sleep(wait) => true,
    }
}

/// A mid-stream fault: how many of the turn's events go out, and how the attempt then fails.
#[derive(Debug)]
struct StreamFault {
    after_events: usize,
    ending: Ending,
}

/// How a mid-stream fault ends its attempt.
#[derive(Debug)]
enum Ending {
    Disconnect,
    Malformed,
    ErrorEvent {
        kind: String,
        message: String,
    },
    /// Silence for this many milliseconds (capped), then a dropped connection.
    Stall(u64),
}

impl StreamFault {
    /// The mid-stream part of `fault`; `None` for `status` faults.
    fn of(fault: Fault) -> Option<Self> {
        let (after_events, ending) = match fault {
            Fault::Status { .. } => return None,
            Fault::Disconnect { after_events } => (after_events, Ending::Disconnect),
            Fault::Malformed { after_events } => (after_events, Ending::Malformed),
            Fault::ErrorEvent {
                after_events,
                error_type,
                message,
            } => (
                after_events,
                Ending::ErrorEvent {
                    kind: error_type,
                    message,
                },
            ),
            Fault::Stall { after_events, ms } => (after_events, Ending::Stall(ms)),
        };
        Some(Self {
            after_events,
            ending,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_faults_read_retry_after_like_the_real_client() {
        let e = status_error(429, Some("2"), None, None);
        let AttemptError::Http {
            kind,
            message,
            retry_after,
            ..
        } = e
        else {
            panic!("not http: {e:?}")
        };
        assert_eq!(kind, "rate_limit_error");
        assert_eq!(message, "Rate limited");
        assert_eq!(retry_after, Some(Duration::from_secs(2)));
        let e = status_error(529, Some("2"), Some(250), Some("busy".into()));
        assert!(matches!(
            e,
            AttemptError::Http { retry_after: Some(d), ref message, .. }
                if d == Duration::from_millis(250) && message == "busy"
        ));
    }
}
