//! `--include-hook-events`: which hook frames reach a host. As with Claude Code, the
//! `system/hook_started` and `system/hook_response` frames of SessionStart hooks always do, the
//! other events' only with the flag.

use skiff_protocol::sdk::{SdkMessage, SystemMessage};

/// Whether `frame` is a hook frame the host did not ask for.
pub fn withheld(frame: &SdkMessage, include_hook_events: bool) -> bool {
    if include_hook_events {
        return false;
    }
    let event = match frame {
        SdkMessage::System(SystemMessage::HookStarted(h)) => &h.hook_event,
        SdkMessage::System(SystemMessage::HookResponse(h)) => &h.hook_event,
        _ => return false,
    };
    event != "SessionStart"
}
