//! One HTTP attempt of a streaming model call, shared by the providers: send with an idle
//! timeout, turn a failed status into its error, then read the SSE body (idle timeout,
//! cancellation, a dropped connection) and hand each event to the provider's [`SseHandler`],
//! which turns its wire format into [`ProviderEvent`]s.

use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use crate::StreamError;
use crate::error::AttemptError;
use crate::http_errors::{error_chain, http_error, transport_error};
use crate::provider::ProviderEvent;
use crate::sse::{SseDecoder, SseEvent};

/// What to do after one SSE event.
pub(crate) enum Flow {
    /// Read on.
    Continue,
    /// The message is complete.
    Done,
    /// The body ended in the middle of this event: stop reading (a dropped connection).
    Cut,
}

/// A provider's side of an attempt: its wire format.
pub(crate) trait SseHandler: Send + 'static {
    /// One SSE event (`at_eof`: the body has ended): queue what to report on `out`.
    fn event(
        &mut self,
        raw: &SseEvent,
        at_eof: bool,
        out: &mut Vec<ProviderEvent>,
    ) -> Result<Flow, AttemptError>;

    /// The body ended before [`Flow::Done`]: `Ok(true)` when the message is complete anyway
    /// (its last events queued on `out`).
    fn eof(&mut self, _out: &mut Vec<ProviderEvent>) -> Result<bool, AttemptError> {
        Ok(false)
    }
}

/// How a response body is cut into events: SSE for the Messages API, the AWS event stream
/// for Bedrock (whose decoded payloads become the same events).
pub(crate) trait Framer: Send + 'static {
    /// Decode a chunk: complete events are pushed onto `out`.
    fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), AttemptError>;

    /// The body ended: push a last event that lacked only its terminator.
    fn finish(&mut self, out: &mut Vec<SseEvent>) -> Result<(), AttemptError>;
}

impl Framer for SseDecoder {
    fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), AttemptError> {
        SseDecoder::feed(self, chunk, out);
        Ok(())
    }

    fn finish(&mut self, out: &mut Vec<SseEvent>) -> Result<(), AttemptError> {
        SseDecoder::finish(self, out);
        Ok(())
    }
}

/// Send `request` and stream what `handler` makes of the response.
pub(crate) fn sse_attempt(
    request: reqwest::RequestBuilder,
    idle: std::time::Duration,
    cancel: CancellationToken,
    handler: impl SseHandler,
) -> impl futures::Stream<Item = Result<ProviderEvent, AttemptError>> + Send + 'static {
    async_stream::stream! {
        let request = request.header(reqwest::header::ACCEPT, "text/event-stream");
        let resp = match send(request, idle, &cancel).await {
            Ok(r) => r,
            Err(e) => { yield Err(e); return; }
        };
        let body = read_events(resp, idle, cancel, SseDecoder::new(), handler);
        let mut body = std::pin::pin!(body);
        while let Some(item) = body.next().await {
            yield item;
        }
    }
}

/// Send a request (cancellable, `idle` bounding the wait for the response head); a status
/// other than 2xx is its [`AttemptError::Http`].
pub(crate) async fn send(
    request: reqwest::RequestBuilder,
    idle: std::time::Duration,
    cancel: &CancellationToken,
) -> Result<reqwest::Response, AttemptError> {
    let resp = tokio::select! {
        biased;
        _ = cancel.cancelled() => return Err(AttemptError::Cancelled),
        r = tokio::time::timeout(idle, request.send()) => r,
    };
    let resp = match resp {
        Err(_) => {
            return Err(AttemptError::Transport(format!(
                "no response within {}s",
                idle.as_secs_f64()
            )));
        }
        Ok(Err(e)) => return Err(transport_error(&e)),
        Ok(Ok(r)) => r,
    };
    if !resp.status().is_success() {
        return Err(http_error(resp, idle).await);
    }
    Ok(resp)
}

/// Read a successful response's body (idle timeout, cancellation, a dropped connection), cut
/// it into events with `framer` and hand each to `handler`.
pub(crate) fn read_events(
    resp: reqwest::Response,
    idle: std::time::Duration,
    cancel: CancellationToken,
    mut framer: impl Framer,
    mut handler: impl SseHandler,
) -> impl futures::Stream<Item = Result<ProviderEvent, AttemptError>> + Send + 'static {
    async_stream::stream! {
        let mut body = resp.bytes_stream();
        let mut sse: Vec<SseEvent> = Vec::new();
        let mut ready: Vec<ProviderEvent> = Vec::new();
        loop {
            let next = tokio::select! {
                biased;
                _ = cancel.cancelled() => { yield Err(AttemptError::Cancelled); return; }
                n = tokio::time::timeout(idle, body.next()) => n,
            };
            let (at_eof, framing) = match next {
                Err(_) => {
                    yield Err(AttemptError::Transport(format!(
                        "stream stalled: no data for {}s", idle.as_secs_f64()
                    )));
                    return;
                }
                Ok(Some(Err(e))) => {
                    yield Err(AttemptError::Transport(format!("connection lost mid-stream: {}", error_chain(&e))));
                    return;
                }
                Ok(Some(Ok(bytes))) => (false, framer.feed(&bytes, &mut sse)),
                // A last event without its closing blank line still counts when complete.
                Ok(None) => (true, framer.finish(&mut sse)),
            };
            for raw in sse.drain(..) {
                let flow = handler.event(&raw, at_eof, &mut ready);
                for ev in ready.drain(..) {
                    yield Ok(ev);
                }
                match flow {
                    Ok(Flow::Continue) => {}
                    Ok(Flow::Done) => return,
                    Ok(Flow::Cut) => break,
                    Err(e) => { yield Err(e); return; }
                }
            }
            // Events decoded before a framing error were handed on; the error ends the attempt.
            if let Err(e) = framing {
                yield Err(e);
                return;
            }
            if at_eof {
                let complete = handler.eof(&mut ready);
                for ev in ready.drain(..) {
                    yield Ok(ev);
                }
                match complete {
                    Ok(true) => return,
                    Ok(false) => {}
                    Err(e) => { yield Err(e); return; }
                }
                yield Err(AttemptError::Stream(StreamError::Truncated("connection closed".into())));
                return;
            }
        }
    }
}
