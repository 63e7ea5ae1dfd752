//! Small builders for stream-json frames: ids, timestamps, and the event sink.

use skiff_protocol::sdk::{Informational, SdkMessage, SystemMessage};
use tokio::sync::mpsc::UnboundedSender;

/// A fresh frame id.
pub fn new_uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// The current time as ISO-8601 with milliseconds (`2026-11-22T02:57:09.562Z`).
pub fn now_iso() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

/// Where the loop sends its events. Sending never blocks; a dropped receiver is ignored.
#[derive(Debug, Clone)]
pub struct EventSink {
    tx: UnboundedSender<SdkMessage>,
    session_id: String,
}

impl EventSink {
    /// A sink for `session_id`.
    pub fn new(tx: UnboundedSender<SdkMessage>, session_id: String) -> Self {
        Self { tx, session_id }
    }

    /// The session the frames belong to.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// Emit a frame.
    pub fn emit(&self, msg: SdkMessage) {
        let _ = self.tx.send(msg);
    }

    /// Emit a `system/informational` notice (warnings the CLI prints on stderr).
    pub fn notice(&self, kind: &str, level: &str, message: impl Into<String>) {
        let message = message.into();
        tracing::info!(kind, %message, "notice");
        self.emit(SdkMessage::System(SystemMessage::Informational(
            Informational {
                kind: kind.to_owned(),
                message,
                level: level.to_owned(),
                session_id: self.session_id.clone(),
                uuid: new_uuid(),
            },
        )));
    }
}
