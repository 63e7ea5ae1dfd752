//! [`Live`]: the settings a client may change while a turn runs (model, permission mode),
//! shared through a watch channel by the session actor, its turns and their subagents.

use crate::permissions::PermissionMode;

/// Settings a client may change while a turn runs; the turn reads them before each request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Live {
    /// Model of the next request.
    pub model: String,
    /// Permission mode of the next tool calls.
    pub mode: PermissionMode,
    /// Thinking and effort of the next request.
    pub reasoning: crate::reasoning::Reasoning,
}
