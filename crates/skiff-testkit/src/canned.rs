//! `CannedServer`: answers requests with recorded responses, byte for byte, in order (the last
//! one repeats). For streams recorded from other servers (llama.cpp, Ollama, gateways) whose
//! quirks a script cannot express.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use tokio::task::JoinHandle;

/// One recorded response.
#[derive(Debug, Clone)]
pub struct Canned {
    /// HTTP status.
    pub status: u16,
    /// `content-type`.
    pub content_type: String,
    /// The body, sent as one piece.
    pub body: Bytes,
}

impl Canned {
    /// A 200 `text/event-stream` response with this body.
    pub fn sse(body: impl Into<Bytes>) -> Self {
        Self {
            status: 200,
            content_type: "text/event-stream".into(),
            body: body.into(),
        }
    }

    /// A JSON response.
    pub fn json(status: u16, body: impl Into<Bytes>) -> Self {
        Self {
            status,
            content_type: "application/json".into(),
            body: body.into(),
        }
    }
}

#[derive(Debug)]
struct State {
    responses: Vec<Canned>,
    next: usize,
    paths: Vec<String>,
}

/// A server on an ephemeral port of 127.0.0.1 serving canned responses; stops when dropped.
#[derive(Debug)]
pub struct CannedServer {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    task: JoinHandle<()>,
}

impl CannedServer {
    /// Serve `responses` in order, any method and path.
    pub async fn start(responses: Vec<Canned>) -> io::Result<Self> {
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(Mutex::new(State {
            responses,
            next: 0,
            paths: Vec::new(),
        }));
        let shared = Arc::clone(&state);
        let app = Router::new().fallback(move |req: axum::extract::Request| {
            let shared = Arc::clone(&shared);
            async move { answer(&shared, req.uri().path()) }
        });
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self { addr, state, task })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The paths requested so far.
    pub fn paths(&self) -> Vec<String> {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .paths
            .clone()
    }
}

impl Drop for CannedServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn answer(state: &Mutex<State>, path: &str) -> Response {
    let mut st = state.lock().unwrap_or_else(|e| e.into_inner());
    st.paths.push(path.to_owned());
    let i = st.next.min(st.responses.len().saturating_sub(1));
    st.next += 1;
    let Some(c) = st.responses.get(i).cloned() else {
        return (StatusCode::NOT_FOUND, "no canned response").into_response();
    };
    let status = StatusCode::from_u16(c.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, [(header::CONTENT_TYPE, c.content_type)], c.body).into_response()
}
