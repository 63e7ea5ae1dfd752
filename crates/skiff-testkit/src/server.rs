//! `MockServer`: a scripted Anthropic Messages API on 127.0.0.1, its builder, and the state its
//! request handlers share.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::serve::ListenerExt;
use skiff_protocol::script::{Script, ScriptTurn};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::openai::ModelMetadata;
use crate::recording::{RecordedRequest, Recorder};
use crate::routes;
use crate::shared::Shared;
use skiff_protocol::script_cursor::ScriptCursor;

/// A running mock Anthropic Messages API server; it stops when dropped.
///
/// Routes: `POST /v1/messages` and `POST /v1/chat/completions` (script-driven, query strings
/// ignored), `POST /v1/messages/count_tokens` (`{"input_tokens": body bytes / 4}`), the model
/// metadata endpoints (`GET /v1/models`, and with [`MockServerBuilder::model_metadata`]
/// `GET /props`, `POST /api/show`, `GET /api/v0/models`), anything else 404.
/// Each `/v1/messages` request first gets the current turn's pending faults, one per request,
/// then the turn's answer, after which the script moves to the next turn.
#[derive(Debug)]
pub struct MockServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: Option<JoinHandle<()>>,
}

impl MockServer {
    /// Serve `script` on an ephemeral port of 127.0.0.1.
    pub async fn start(script: Script) -> io::Result<Self> {
        Self::builder().script(script).start().await
    }

    /// A builder for a script assembled turn by turn.
    pub fn builder() -> MockServerBuilder {
        MockServerBuilder::default()
    }

    async fn start_with(b: MockServerBuilder) -> io::Result<Self> {
        let (script, port, record, check) = (b.script, b.port, !b.no_record, !b.lenient);
        let timeline = match &b.timeline {
            Some(path) => Some(Arc::new(crate::timeline::Timeline::create(path)?)),
            None => None,
        };
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            cursor: Mutex::new(ScriptCursor::new(script)),
            recorder: Recorder::new(record),
            open_streams: Arc::new(AtomicUsize::new(0)),
            cancel: CancellationToken::new(),
            last_activity: Mutex::new(Instant::now()),
            check,
            violations: Mutex::new(Vec::new()),
            metadata: b.metadata,
            cloud: b.cloud.map(crate::cloud::CloudState::new),
            timeline,
        });
        let app = Router::new()
            .fallback(routes::handle)
            .with_state(Arc::clone(&shared));
        let shutdown = shared.cancel.clone().cancelled_owned();
        let task = tokio::spawn(async move {
            // Errors here mean the listener failed; there is no one to report them to.
            // Each event is written as it comes, as real servers do (without TCP_NODELAY a
            // reply's events wait for the client's delayed acknowledgement: 40 ms a turn on a
            // kept-alive connection when the first byte is delayed).
            let listener = listener.tap_io(|tcp| {
                let _ = tcp.set_nodelay(true);
            });
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(shutdown)
                .await;
        });
        Ok(Self {
            addr,
            shared,
            task: Some(task),
        })
    }

    /// The base URL, `http://127.0.0.1:PORT` (what a client puts in `ANTHROPIC_BASE_URL`).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The socket address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request received so far (all routes), in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.recorder.all()
    }

    /// How many requests have arrived (all routes).
    pub fn request_count(&self) -> usize {
        self.shared.recorder.len()
    }

    /// The `POST /v1/messages` requests received so far, in arrival order.
    pub fn messages_requests(&self) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(RecordedRequest::is_messages)
            .collect()
    }

    /// The `POST /v1/chat/completions` requests received so far, in arrival order (not the
    /// model metadata requests an OpenAI-compatible client makes beside them).
    pub fn chat_requests(&self) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(RecordedRequest::is_chat)
            .collect()
    }

    /// How many successful streaming responses are being written right now (0 once clients hung up).
    pub fn open_streams(&self) -> usize {
        self.shared.open_streams.load(Ordering::SeqCst)
    }

    /// Time since the last request arrived (or since the server started, before any request).
    pub fn idle_time(&self) -> Duration {
        self.shared
            .last_activity
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .elapsed()
    }

    /// The requests that broke the API's rules so far: (1-based request number, why).
    pub fn violations(&self) -> Vec<(usize, String)> {
        self.shared
            .violations
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// What the cloud mock saw (tokens issued, signatures verified, refusals).
    pub fn cloud_stats(&self) -> crate::cloud::CloudStats {
        self.shared
            .cloud
            .as_ref()
            .map(crate::cloud::CloudState::stats)
            .unwrap_or_default()
    }

    /// Refuse every access token issued so far (they "expired" on the server's side).
    pub fn revoke_cloud_tokens(&self) {
        if let Some(c) = &self.shared.cloud {
            c.revoke_tokens();
        }
    }

    /// Stop the server and wait (at most 5 s) until its listener is closed.
    pub async fn shutdown(mut self) {
        self.shared.cancel.cancel();
        if let Some(task) = self.task.take() {
            let _ = tokio::time::timeout(Duration::from_secs(5), task).await;
        }
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.shared.cancel.cancel();
        let violations = self.violations();
        if !violations.is_empty() && !std::thread::panicking() {
            let list: Vec<String> = violations
                .iter()
                .map(|(n, why)| format!("request {n}: {why}"))
                .collect();
            #[allow(clippy::panic)]
            {
                panic!(
                    "the mock server received requests the real API would reject:\n{}",
                    list.join("\n")
                );
            }
        }
    }
}

/// Builds a [`MockServer`] turn by turn.
#[derive(Debug, Clone, Default)]
pub struct MockServerBuilder {
    script: Script,
    port: u16,
    no_record: bool,
    lenient: bool,
    metadata: Option<ModelMetadata>,
    cloud: Option<crate::cloud::CloudMock>,
    timeline: Option<std::path::PathBuf>,
}

impl MockServerBuilder {
    /// Append a turn.
    pub fn turn(mut self, turn: ScriptTurn) -> Self {
        self.script.turns.push(turn);
        self
    }

    /// Append several turns.
    pub fn turns(mut self, turns: impl IntoIterator<Item = ScriptTurn>) -> Self {
        self.script.turns.extend(turns);
        self
    }

    /// Start again from the first turn when the script is exhausted.
    pub fn repeat(mut self, repeat: bool) -> Self {
        self.script.repeat = repeat;
        self
    }

    /// Report this model name instead of the requested one.
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.script.model = Some(model.into());
        self
    }

    /// Replace the whole script (turns added before are dropped).
    pub fn script(mut self, script: Script) -> Self {
        self.script = script;
        self
    }

    /// Only count requests instead of keeping them (for the long-running `skiff-mock` binary,
    /// whose recordings nobody can read; keeps its memory flat in long benchmarks).
    pub fn no_record(mut self) -> Self {
        self.no_record = true;
        self
    }

    /// Answer requests that break the API's rules instead of rejecting them (tests of what a
    /// client does with arbitrary requests; the long-running `skiff-mock`).
    pub fn allow_invalid_requests(mut self) -> Self {
        self.lenient = true;
        self
    }

    /// Listen on this port of 127.0.0.1 instead of an ephemeral one.
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Say this about the model on the metadata endpoints (`/v1/models`, `/props`,
    /// `/api/show`, `/api/v0/models`).
    pub fn model_metadata(mut self, metadata: ModelMetadata) -> Self {
        self.metadata = Some(metadata);
        self
    }

    /// Play a cloud: its paths, body envelope, framing and authentication (see [`crate::cloud`]).
    pub fn cloud(mut self, cloud: crate::cloud::CloudMock) -> Self {
        self.cloud = Some(cloud);
        self
    }

    /// Note in the file at `path` (created, or emptied) when each request arrives and each
    /// streamed answer ends, for benchmarks of the client's own time between them
    /// (`skiff-mock --timeline FILE`; the format is in the `timeline` module's source).
    pub fn timeline(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.timeline = Some(path.into());
        self
    }

    /// Bind and start serving.
    pub async fn start(self) -> io::Result<MockServer> {
        MockServer::start_with(self).await
    }
}
