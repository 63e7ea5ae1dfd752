//! Context management before each model call (token accounting, compaction, trimming).
//! Placeholder: the context-management work fills this in.

use tokio_util::sync::CancellationToken;

use crate::agent::Agent;
use crate::frames::EventSink;

/// Called before every model call; may compact or trim `agent.history`.
pub(crate) async fn prepare(_agent: &mut Agent, _sink: &EventSink, _cancel: &CancellationToken) {}
