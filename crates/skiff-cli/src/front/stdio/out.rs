//! Frames to stdout, one JSON line each, in order.

use serde_json::Value;
use skiff_protocol::control::ControlFrame;
use tokio::sync::mpsc;

/// The writer's queue (a task writes the lines to stdout).
#[derive(Clone)]
pub(super) struct Out {
    pub(super) tx: mpsc::UnboundedSender<String>,
}

impl Out {
    /// Any frame.
    pub(super) fn send(&self, v: &impl serde::Serialize) {
        match serde_json::to_string(v) {
            Ok(line) => {
                let _ = self.tx.send(line);
            }
            Err(e) => tracing::error!(error = %e, "cannot serialize a frame"),
        }
    }

    /// A control frame.
    pub(super) fn frame(&self, frame: &ControlFrame) {
        self.send(frame);
    }

    /// A success answer to the host's request `id` carrying `payload`.
    pub(super) fn success(&self, id: &str, payload: &impl serde::Serialize) {
        match serde_json::to_value(payload) {
            Ok(v) => self.frame(&ControlFrame::success(id, v)),
            Err(e) => self.error(id, &format!("cannot write the answer: {e}")),
        }
    }

    /// A plain acknowledgement (`{}`).
    pub(super) fn ack(&self, id: &str) {
        self.frame(&ControlFrame::success(
            id,
            Value::Object(serde_json::Map::new()),
        ));
    }

    /// An error answer to the host's request `id`.
    pub(super) fn error(&self, id: &str, error: &str) {
        self.frame(&ControlFrame::error(id, error, None));
    }
}
