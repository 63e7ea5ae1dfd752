//! Small builders for stream-json frames (ids, timestamps) and the [`EventSink`] the session
//! sends its events through.

use std::sync::{Arc, Mutex, PoisonError};

use skiff_protocol::sdk::{Informational, SdkMessage, StreamEventMessage, SystemMessage};
use skiff_protocol::{JsonMap, StreamEvent};
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

/// Fields of the `system/init` frame that may be known only after the session has started
/// (whether the Bash sandbox's namespaces work: its probe runs while the first request goes
/// out). The frame is held back until they are, and so is every event after it: the first
/// request waits for nothing, and the frames still come in order.
pub trait LateInit: Send + Sync {
    /// Whether [`LateInit::fill`] would return at once.
    fn ready(&self) -> bool;
    /// Add the late fields to the frame's extra fields, waiting for them when they are not
    /// known yet (blocking this thread: what is waited for runs on a thread of its own).
    fn fill(&self, extra: &mut JsonMap);
}

/// A [`LateInit`] as [`crate::AgentConfig::late_init`] holds it.
#[derive(Clone)]
pub struct LateInitFields(pub Arc<dyn LateInit>);

impl std::fmt::Debug for LateInitFields {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LateInitFields")
    }
}

/// A `system/init` frame waiting for its late fields.
#[derive(Debug)]
struct HeldInit {
    frame: SdkMessage,
    late: LateInitFields,
}

impl HeldInit {
    /// The frame with its late fields (waited for when need be).
    fn complete(mut self) -> SdkMessage {
        if let SdkMessage::System(SystemMessage::Init(init)) = &mut self.frame {
            self.late.0.fill(&mut init.extra);
        }
        self.frame
    }
}

/// Where the session sends its events. Sending never blocks, but for the `system/init` frame
/// it holds back ([`EventSink::emit_init`]); a dropped receiver is ignored.
#[derive(Debug, Clone)]
pub struct EventSink {
    tx: UnboundedSender<Event>,
    session_id: String,
    deltas: DeltaMode,
    /// Set for a subagent's sink: the parent's `Task` call its frames belong to.
    parent_tool_use_id: Option<String>,
    /// The `system/init` frame held back, shared by the session's sinks (a subagent's too):
    /// it goes out before the next event, whichever sink sends it.
    held: Arc<Mutex<Option<HeldInit>>>,
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
            held: Arc::default(),
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
            held: Arc::clone(&self.held),
        }
    }

    /// The session the frames belong to.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// Send an event (after the `system/init` frame held back, if one is: see
    /// [`EventSink::emit_init`]).
    pub fn send(&self, event: Event) {
        // Locked while sending, so that no other sender's event overtakes the frame.
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(init) = held.take() {
            let _ = self.tx.send(Event::Frame(init.complete()));
        }
        let _ = self.tx.send(event);
    }

    /// Emit the `system/init` frame; while `late` fields are not known yet, hold it back
    /// until the next event is sent (the turn's requests go out meanwhile). A subagent's sink
    /// emits none.
    pub fn emit_init(&self, frame: SdkMessage, late: Option<&LateInitFields>) {
        if self.parent_tool_use_id.is_some() {
            return;
        }
        let Some(late) = late else {
            self.send(Event::Frame(frame));
            return;
        };
        let init = HeldInit {
            frame,
            late: late.clone(),
        };
        if late.0.ready() {
            self.send(Event::Frame(init.complete()));
            return;
        }
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(earlier) = held.replace(init) {
            let _ = self.tx.send(Event::Frame(earlier.complete()));
        }
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;

    /// Late fields that come when `known` is set.
    struct Probe {
        known: AtomicBool,
    }

    impl LateInit for Probe {
        fn ready(&self) -> bool {
            self.known.load(Ordering::SeqCst)
        }

        fn fill(&self, extra: &mut JsonMap) {
            extra.insert("sandbox".into(), "probed".into());
        }
    }

    fn init_frame() -> SdkMessage {
        serde_json::from_value(serde_json::json!({
            "type": "system", "subtype": "init", "cwd": "/w", "session_id": "s", "tools": [],
            "mcp_servers": [], "model": "m", "permissionMode": "default", "slash_commands": [],
            "apiKeySource": "none", "claude_code_version": "2.0.0", "output_style": "default",
            "uuid": "u", "sandbox": "unknown"
        }))
        .unwrap()
    }

    fn sandbox_of(event: &Event) -> Option<String> {
        match event.frame()? {
            SdkMessage::System(SystemMessage::Init(init)) => {
                init.extra.get("sandbox")?.as_str().map(str::to_owned)
            }
            _ => None,
        }
    }

    /// A sink, what it sends, and late fields already `known` or not.
    fn sink_with(
        known: bool,
    ) -> (
        EventSink,
        tokio::sync::mpsc::UnboundedReceiver<Event>,
        LateInitFields,
    ) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let late = LateInitFields(Arc::new(Probe {
            known: AtomicBool::new(known),
        }));
        (EventSink::new(tx, "s".into()), rx, late)
    }

    #[test]
    fn an_init_frame_waiting_for_late_fields_goes_out_before_the_next_event() {
        let (sink, mut rx, late) = sink_with(false);
        sink.emit_init(init_frame(), Some(&late));
        assert!(
            rx.try_recv().is_err(),
            "held back while the fields are not known"
        );
        // A subagent's event releases it too, first.
        sink.for_subagent("toolu_1").notice("k", "info", "first");
        let first = rx.try_recv().unwrap();
        assert_eq!(sandbox_of(&first).as_deref(), Some("probed"));
        assert!(matches!(
            rx.try_recv().unwrap().frame(),
            Some(SdkMessage::System(SystemMessage::Informational(_)))
        ));
        sink.send(Event::Idle);
        assert!(matches!(rx.try_recv().unwrap(), Event::Idle), "sent once");
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn an_init_frame_whose_late_fields_are_known_goes_out_at_once() {
        let (sink, mut rx, late) = sink_with(true);
        sink.emit_init(init_frame(), Some(&late));
        assert_eq!(
            sandbox_of(&rx.try_recv().unwrap()).as_deref(),
            Some("probed")
        );
        sink.emit_init(init_frame(), None);
        assert_eq!(
            sandbox_of(&rx.try_recv().unwrap()).as_deref(),
            Some("unknown")
        );
        // A subagent's sink emits none.
        sink.for_subagent("toolu_1")
            .emit_init(init_frame(), Some(&late));
        assert!(rx.try_recv().is_err());
    }
}
