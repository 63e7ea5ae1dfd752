//! Small builders for stream-json frames (ids, timestamps) and the [`EventSink`] the session
//! sends its events through.

use skiff_protocol::StreamEvent;
use skiff_protocol::sdk::{Informational, SdkMessage, StreamEventMessage, SystemMessage};
use tokio::sync::mpsc::UnboundedSender;

use crate::event::{DeltaMode, Event};

/// A fresh frame id.
pub fn new_uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// The current time as ISO-8601 with milliseconds (`2026-11-22T02:57:09.562Z`).
pub fn now_iso() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

/// Where the session sends its events. Sending never blocks; a dropped receiver is ignored.
#[derive(Debug, Clone)]
pub struct EventSink {
    tx: UnboundedSender<Event>,
    session_id: String,
    deltas: DeltaMode,
    /// Set for a subagent's sink: the parent's `Task` call its frames belong to.
    parent_tool_use_id: Option<String>,
}

impl EventSink {
    /// A sink for `session_id` that sends stream events as `stream_event` frames.
    pub fn new(tx: UnboundedSender<Event>, session_id: String) -> Self {
        Self::with_deltas(tx, session_id, DeltaMode::Frames)
    }

    /// A sink for `session_id` sending stream events as `deltas` says.
    pub fn with_deltas(tx: UnboundedSender<Event>, session_id: String, deltas: DeltaMode) -> Self {
        Self {
            tx,
            session_id,
            deltas,
            parent_tool_use_id: None,
        }
    }

    /// A sink for a subagent run by the `Task` call `tool_use_id`: its assistant, user and
    /// progress frames carry `parent_tool_use_id`; it emits no `init` or `result` frames and
    /// no stream events of its own.
    pub fn for_subagent(&self, tool_use_id: &str) -> Self {
        Self {
            tx: self.tx.clone(),
            session_id: self.session_id.clone(),
            deltas: DeltaMode::Off,
            parent_tool_use_id: Some(tool_use_id.to_owned()),
        }
    }

    /// The session the frames belong to.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// Send an event.
    pub fn send(&self, event: Event) {
        let _ = self.tx.send(event);
    }

    /// Emit a frame.
    pub fn emit(&self, mut msg: SdkMessage) {
        if let Some(parent) = &self.parent_tool_use_id {
            match &mut msg {
                SdkMessage::System(SystemMessage::Init(_)) | SdkMessage::Result(_) => return,
                SdkMessage::Assistant(m) => m.parent_tool_use_id = Some(parent.clone()),
                SdkMessage::User(m) => m.parent_tool_use_id = Some(parent.clone()),
                SdkMessage::StreamEvent(m) => m.parent_tool_use_id = Some(parent.clone()),
                SdkMessage::ToolProgress(m) => m.parent_tool_use_id = Some(parent.clone()),
                _ => {}
            }
        }
        self.send(Event::Frame(msg));
    }

    /// Emit a raw stream event the way the configuration asks: as a `stream_event` frame (with
    /// its own uuid), as a bare [`Event::Delta`], or not at all.
    pub fn stream_event(&self, event: StreamEvent) {
        match self.deltas {
            DeltaMode::Off => {}
            DeltaMode::Raw => self.send(Event::Delta(event)),
            DeltaMode::Frames => self.emit(SdkMessage::StreamEvent(StreamEventMessage {
                event,
                session_id: self.session_id.clone(),
                parent_tool_use_id: None,
                uuid: new_uuid(),
            })),
        }
    }

    /// The permission mode changed: `system/status` with the new mode (SDK hosts follow it).
    pub fn mode_changed(&self, mode: &str) {
        self.emit(SdkMessage::System(SystemMessage::Status(
            skiff_protocol::sdk::StatusFrame {
                status: None,
                permission_mode: Some(mode.to_owned()),
                uuid: new_uuid(),
                session_id: self.session_id.clone(),
            },
        )));
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

/// A `user` frame of this session.
pub(crate) fn user_frame(
    message: skiff_protocol::Message,
    tool_use_result: Option<serde_json::Value>,
    sink: &EventSink,
) -> SdkMessage {
    SdkMessage::User(skiff_protocol::sdk::UserMessage {
        message,
        parent_tool_use_id: None,
        session_id: sink.session_id().to_owned(),
        uuid: new_uuid(),
        timestamp: Some(now_iso()),
        tool_use_result,
        extra: skiff_protocol::JsonMap::new(),
    })
}
