//! Writing pre-rendered SSE frames as a response body: optional delays, a clean end or an abrupt
//! abort, cancellation when the server shuts down, and the count of open streams.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::body::Body;
use bytes::{BufMut, Bytes, BytesMut};
use futures::Stream;
use tokio_util::sync::CancellationToken;

use crate::timeline::Timeline;

/// How a streamed body ends after its frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// The body completes normally (terminating chunk sent).
    Clean,
    /// Stay silent for the given time (if any), then abort the connection mid-body.
    Abort(Option<Duration>),
}

/// Counts a successful stream as open while it lives.
#[derive(Debug)]
pub(crate) struct OpenStreamGuard {
    counter: Arc<AtomicUsize>,
    /// Where the stream's end is noted (`answered`), if anywhere.
    timeline: Option<Arc<Timeline>>,
}

impl OpenStreamGuard {
    /// Count one more open stream until the guard is dropped.
    pub(crate) fn new(counter: &Arc<AtomicUsize>) -> Self {
        counter.fetch_add(1, Ordering::SeqCst);
        Self {
            counter: Arc::clone(counter),
            timeline: None,
        }
    }

    /// Also note on `timeline` when the stream ends (the guard is dropped with the stream,
    /// once its last frame is out).
    pub(crate) fn noting_end(mut self, timeline: Option<Arc<Timeline>>) -> Self {
        self.timeline = timeline;
        self
    }
}

impl Drop for OpenStreamGuard {
    fn drop(&mut self) {
        self.counter.fetch_sub(1, Ordering::SeqCst);
        if let Some(timeline) = &self.timeline {
            timeline.note("answered");
        }
    }
}

/// Everything needed to write one streamed body.
#[derive(Debug)]
pub(crate) struct StreamPlan {
    /// Silence before the first frame.
    pub(crate) first_byte_delay: Option<Duration>,
    /// Silence between consecutive frames.
    pub(crate) between_delay: Option<Duration>,
    /// The frames, in order.
    pub(crate) frames: Vec<Bytes>,
    /// What happens after the last frame.
    pub(crate) ending: Ending,
    /// Held until the body is finished or dropped.
    pub(crate) guard: Option<OpenStreamGuard>,
}

impl StreamPlan {
    /// The response body for this plan; aborts early when `cancel` fires.
    pub(crate) fn into_body(self, cancel: CancellationToken) -> Body {
        Body::from_stream(self.into_stream(cancel))
    }

    fn into_stream(
        self,
        cancel: CancellationToken,
    ) -> impl Stream<Item = Result<Bytes, io::Error>> + Send + 'static {
        let StreamPlan {
            first_byte_delay,
            between_delay,
            frames,
            ending,
            guard,
        } = self;
        async_stream::stream! {
            let _guard = guard;
            if let Some(delay) = first_byte_delay.filter(|d| !d.is_zero())
                && !pause(delay, &cancel).await {
                    yield Err(aborted("server shut down"));
                    return;
                }
            match between_delay.filter(|d| !d.is_zero()) {
                None => {
                    if !frames.is_empty() {
                        yield Ok(concat(&frames));
                    }
                }
                Some(delay) => {
                    for (i, frame) in frames.into_iter().enumerate() {
                        if i > 0 && !pause(delay, &cancel).await {
                            yield Err(aborted("server shut down"));
                            return;
                        }
                        yield Ok(frame);
                    }
                }
            }
            if let Ending::Abort(silence) = ending {
                // Let the connection flush what was written before it is cut.
                tokio::task::yield_now().await;
                if let Some(silence) = silence {
                    pause(silence, &cancel).await;
                }
                yield Err(aborted("mock fault: connection dropped"));
            }
        }
    }
}

/// Sleep for `delay`; false when the server shut down first.
async fn pause(delay: Duration, cancel: &CancellationToken) -> bool {
    tokio::select! {
        () = cancel.cancelled() => false,
        () = tokio::time::sleep(delay) => true,
    }
}

fn aborted(why: &str) -> io::Error {
    io::Error::new(io::ErrorKind::ConnectionAborted, why.to_owned())
}

fn concat(frames: &[Bytes]) -> Bytes {
    if let [one] = frames {
        return one.clone();
    }
    let mut buf = BytesMut::with_capacity(frames.iter().map(Bytes::len).sum());
    for frame in frames {
        buf.put_slice(frame);
    }
    buf.freeze()
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;

    fn plan(frames: &[&'static str], between: Option<u64>, ending: Ending) -> StreamPlan {
        StreamPlan {
            first_byte_delay: None,
            between_delay: between.map(Duration::from_millis),
            frames: frames
                .iter()
                .map(|f| Bytes::from_static(f.as_bytes()))
                .collect(),
            ending,
            guard: None,
        }
    }

    #[tokio::test]
    async fn without_delays_everything_is_one_chunk() {
        let s = plan(&["a", "b", "c"], None, Ending::Clean).into_stream(CancellationToken::new());
        let items: Vec<_> = s.collect().await;
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].as_ref().unwrap(), &Bytes::from_static(b"abc"));
    }

    #[tokio::test]
    async fn with_delays_one_chunk_per_frame_then_abort() {
        let s =
            plan(&["a", "b"], Some(1), Ending::Abort(None)).into_stream(CancellationToken::new());
        let items: Vec<_> = s.collect().await;
        assert_eq!(items.len(), 3);
        assert!(items[2].is_err());
    }

    #[tokio::test]
    async fn guard_counts_while_alive_and_cancel_aborts() {
        let counter = Arc::new(AtomicUsize::new(0));
        let mut p = plan(&["a"], None, Ending::Clean);
        p.first_byte_delay = Some(Duration::from_secs(60));
        p.guard = Some(OpenStreamGuard::new(&counter));
        let cancel = CancellationToken::new();
        let s = p.into_stream(cancel.clone());
        assert_eq!(counter.load(Ordering::SeqCst), 1);
        cancel.cancel();
        let items: Vec<_> = s.collect().await;
        assert_eq!(items.len(), 1);
        assert!(items[0].is_err());
        assert_eq!(counter.load(Ordering::SeqCst), 0);
    }
}
