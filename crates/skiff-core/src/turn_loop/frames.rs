//! The frames that open and close a run: `system/init` and the `result` frame.

use serde_json::Value;
use skiff_protocol::sdk::{ResultMessage, ResultSubtype, SdkMessage, SystemInit, SystemMessage};
use skiff_protocol::{ContentBlock, JsonMap, Message};

use super::state::{End, RunState};
use crate::core::Core;
use crate::frames::{EventSink, new_uuid};

/// Version reported as `claude_code_version`: the Claude Code release whose wire protocol skiff
/// follows, the one the fixtures were captured from and the Agent SDK flows are checked
/// against (`sdk-tests/`). The SDKs require a semver ≥ 2.0.0 (the Python SDK's
/// `verbatim_prompts` ≥ 2.1.248); skiff's own version is `skiff_version` beside it.
pub const COMPAT_VERSION: &str = "2.1.330";

/// skiff's own version (`skiff_version` in `system/init` and the `initialize` answer).
pub const SKIFF_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The `system/init` frame that opens a run.
pub(super) fn init_frame(core: &Core) -> SdkMessage {
    // The TypeScript SDK's type has these arrays (`plugins` is set when plugins are loaded).
    let mut extra = core.config.init_extra.clone();
    extra.insert(
        "skills".into(),
        Value::from(core.config.commands.skill_names()),
    );
    for key in ["skills", "plugins"] {
        extra.entry(key).or_insert_with(|| Value::Array(Vec::new()));
    }
    extra.insert("skiff_version".into(), SKIFF_VERSION.into());
    SdkMessage::System(SystemMessage::Init(SystemInit {
        cwd: core.config.cwd.display().to_string(),
        session_id: core.config.session_id.clone(),
        tools: core.tools.names(),
        mcp_servers: core.mcp_servers.clone(),
        model: core.config.model.clone(),
        permission_mode: core.config.permission_mode.as_str().to_owned(),
        slash_commands: core.config.commands.slash_command_names(),
        api_key_source: core.config.api_key_source.clone(),
        claude_code_version: COMPAT_VERSION.to_owned(),
        output_style: "default".to_owned(),
        agents: core.config.agents.iter().map(|a| a.name.clone()).collect(),
        uuid: new_uuid(),
        extra,
    }))
}

/// The `result` frame for how the run ended (an interrupt also leaves its note in the
/// conversation).
pub(super) fn result_frame(
    core: &mut Core,
    st: &RunState,
    end: End,
    sink: &EventSink,
) -> ResultMessage {
    let changes: Vec<Value> = core
        .ctx
        .changes
        .take()
        .into_iter()
        .filter_map(|c| serde_json::to_value(c).ok())
        .collect();
    let (subtype, is_error, result, errors, terminal, status) = match end {
        End::Completed(text) => (
            ResultSubtype::Success,
            false,
            Some(text),
            vec![],
            "completed",
            None,
        ),
        End::MaxTurns => (
            ResultSubtype::ErrorMaxTurns,
            true,
            None,
            vec![format!(
                "Reached maximum number of turns ({})",
                core.config.max_turns.unwrap_or_default()
            )],
            "max_turns",
            None,
        ),
        End::Budget(b) => (
            ResultSubtype::ErrorMaxBudgetUsd,
            true,
            None,
            vec![format!("Reached maximum budget (${b})")],
            "budget_exhausted",
            None,
        ),
        End::Interrupted { during_tools } => {
            let note = if during_tools {
                "[Request interrupted by user for tool use]"
            } else {
                "[Request interrupted by user]"
            };
            // In the conversation too: the model's next request knows it was stopped.
            core.conversation.repair();
            core.conversation
                .push_user(vec![ContentBlock::text(note)], &[]);
            sink.emit(crate::frames::user_frame(
                Message::user_text(note),
                None,
                sink,
            ));
            (
                ResultSubtype::ErrorDuringExecution,
                true,
                None,
                vec!["Interrupted by user".to_owned()],
                if during_tools {
                    "aborted_tools"
                } else {
                    "aborted_streaming"
                },
                None,
            )
        }
        // Never `success`: a run that ends on an error says so in its subtype.
        End::ApiError(e) => {
            let text = e.to_string();
            let terminal = if e.context_overflow().is_some() {
                "prompt_too_long"
            } else {
                "api_error"
            };
            (
                ResultSubtype::ErrorDuringExecution,
                true,
                Some(text.clone()),
                vec![text],
                terminal,
                e.status(),
            )
        }
        End::Loop(repeated) => (
            ResultSubtype::ErrorLoopDetected,
            true,
            None,
            vec![repeated.message()],
            "loop_detected",
            None,
        ),
        End::Failed(text) => (
            ResultSubtype::ErrorDuringExecution,
            true,
            None,
            vec![text],
            "error",
            None,
        ),
        End::StructuredRetries(text) => (
            ResultSubtype::ErrorMaxStructuredOutputRetries,
            true,
            None,
            vec![text],
            "structured_output_retry_exhausted",
            None,
        ),
    };
    let mut extra = JsonMap::new();
    if let Some(value) = st.structured_output.clone() {
        extra.insert("structured_output".into(), value);
    }
    ResultMessage {
        subtype,
        is_error,
        duration_ms: st.started.elapsed().as_millis() as u64,
        duration_api_ms: st.api_ms,
        num_turns: st.num_turns,
        result,
        stop_reason: st.last_stop.as_ref().map(|s| s.as_str().to_owned()),
        session_id: core.config.session_id.clone(),
        uuid: new_uuid(),
        total_cost_usd: core.costs.total_cost_usd,
        usage: st.usage.clone(),
        model_usage: core.costs.per_model.clone(),
        permission_denials: st.denials.clone(),
        errors,
        api_error_status: status,
        terminal_reason: Some(terminal.to_owned()),
        changes,
        extra,
    }
}
