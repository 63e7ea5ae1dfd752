//! The state the server handle and the request handlers share.

use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use skiff_protocol::script_cursor::ScriptCursor;
use tokio_util::sync::CancellationToken;

use crate::openai::ModelMetadata;
use crate::recording::Recorder;

/// State shared by the server handle and the request handlers.
#[derive(Debug)]
pub(crate) struct Shared {
    /// Where the script is.
    pub(crate) cursor: Mutex<ScriptCursor>,
    /// Every request received.
    pub(crate) recorder: Recorder,
    /// Successful streams currently being written.
    pub(crate) open_streams: Arc<AtomicUsize>,
    /// Fired when the server shuts down; aborts delays and streams in flight.
    pub(crate) cancel: CancellationToken,
    /// When the last request arrived (or the server started).
    pub(crate) last_activity: Mutex<Instant>,
    /// Check every request against the API's rules.
    pub(crate) check: bool,
    /// Requests that broke them: (request number, what was wrong).
    pub(crate) violations: Mutex<Vec<(usize, String)>>,
    /// What the model metadata endpoints say.
    pub(crate) metadata: Option<ModelMetadata>,
    /// The cloud the server plays, if any.
    pub(crate) cloud: Option<crate::cloud::CloudState>,
    /// Where arrivals and answers' ends are noted, if anywhere.
    pub(crate) timeline: Option<Arc<crate::timeline::Timeline>>,
}

impl Shared {
    /// Note that a request arrived now.
    pub(crate) fn touch(&self) {
        *self.last_activity.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }
}
