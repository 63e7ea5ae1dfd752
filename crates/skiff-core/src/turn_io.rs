//! [`TurnIo`]: what a turn talks through besides its core — the sink, the interrupt, the
//! client's questions and the live settings.

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::frames::EventSink;
use crate::live::Live;
use crate::requests::Requester;

/// What a turn talks through besides its core.
pub(crate) struct TurnIo<'a> {
    /// Events out.
    pub sink: &'a EventSink,
    /// Cancelled by an interrupt.
    pub cancel: &'a CancellationToken,
    /// Questions to the client.
    pub requester: &'a Requester,
    /// Settings changed while the turn runs (by the client, or by the turn itself when an
    /// approved plan leaves plan mode).
    pub live: &'a watch::Sender<Live>,
    /// The prompt is delivered as written: no slash command, MCP prompt or mention expanded.
    pub verbatim: bool,
}
