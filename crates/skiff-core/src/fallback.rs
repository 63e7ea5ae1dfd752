//! `--fallback-model`: when the main model stays overloaded (the provider gives up after 3
//! overloaded responses in a row), the session goes on with the fallback model, as Claude Code
//! does, and says so with a `system/model_fallback` frame.

use skiff_llm::LlmError;
use skiff_protocol::sdk::{ModelFallback, SdkMessage, SystemMessage};

use crate::core::Core;
use crate::frames::new_uuid;
use crate::turn_loop::TurnIo;

/// Switch to the fallback model after `error`, when it is an overload and there is a fallback
/// other than the model in use. Returns whether the call should be sent again.
pub(crate) fn switch(core: &mut Core, error: &LlmError, io: &TurnIo<'_>) -> bool {
    if !matches!(error, LlmError::Overloaded { .. }) {
        return false;
    }
    let Some(fallback) = core.config.fallback_model.clone() else {
        return false;
    };
    let original = core.config.model.clone();
    if fallback == original {
        return false;
    }
    tracing::warn!(%original, %fallback, "model overloaded; switching to the fallback model");
    io.live.send_modify(|l| l.model.clone_from(&fallback));
    core.sync(&io.live.borrow());
    io.sink
        .emit(SdkMessage::System(SystemMessage::ModelFallback(
            ModelFallback {
                trigger: "overloaded".to_owned(),
                content: format!("Switched to {fallback} because {original} is overloaded"),
                original_model: original,
                fallback_model: fallback,
                uuid: new_uuid(),
                session_id: io.sink.session_id().to_owned(),
            },
        )));
    true
}
