//! The session's modes (skiff's permission modes) and its configuration options (mode and
//! model selectors) as ACP shows them.

use agent_client_protocol::v1::schema::{
    SessionConfigOption, SessionConfigOptionCategory, SessionConfigSelectOption, SessionMode,
    SessionModeState,
};
use skiff_core::PermissionMode;

/// The config option that picks the mode.
pub const MODE_OPTION: &str = "mode";
/// The config option that picks the model.
pub const MODEL_OPTION: &str = "model";

/// The modes an editor offers, with their names and what each runs without asking — which
/// depends on whether the Bash sandbox lets commands run without asking in this session
/// (`sandboxed`).
fn offered(sandboxed: bool) -> [(PermissionMode, &'static str, &'static str); 4] {
    [
        (
            PermissionMode::Default,
            "Default",
            if sandboxed {
                "Runs reads and commands inside the sandbox without asking; asks before edits, \
                 commands that leave the sandbox and other changes the rules do not allow"
            } else {
                "Runs reads and read-only commands without asking; asks before edits, other \
                 commands and other changes the rules do not allow"
            },
        ),
        (
            PermissionMode::AcceptEdits,
            "Accept Edits",
            if sandboxed {
                "Runs reads, edits in the workspace and commands inside the sandbox without \
                 asking; asks before the rest"
            } else {
                "Runs reads and edits in the workspace (and mkdir, touch, rm, mv, cp there) \
                 without asking; asks before other commands"
            },
        ),
        (
            PermissionMode::Plan,
            "Plan",
            "Reads and plans only; nothing is edited or run until the plan is accepted",
        ),
        (
            PermissionMode::BypassPermissions,
            "Bypass Permissions",
            "Runs everything without asking (deny and ask rules still apply)",
        ),
    ]
}

/// The modes, with `current` among them even when it is not one of the four offered
/// (`dontAsk` from the settings).
fn modes(
    current: PermissionMode,
    sandboxed: bool,
) -> Vec<(PermissionMode, &'static str, &'static str)> {
    let mut list = offered(sandboxed).to_vec();
    if !list.iter().any(|(m, _, _)| *m == current) {
        let about = match current {
            PermissionMode::DontAsk => {
                "Runs only what the rules (and the sandbox) allow; the rest is denied, never asked"
            }
            _ => "The mode set in the settings",
        };
        list.push((current, current.as_str(), about));
    }
    list
}

/// `modes` of `session/new` and `session/load`.
pub fn mode_state(current: PermissionMode, sandboxed: bool) -> SessionModeState {
    SessionModeState::new(
        current.as_str(),
        modes(current, sandboxed)
            .into_iter()
            .map(|(m, name, about)| {
                SessionMode::new(m.as_str(), name).description(about.to_owned())
            })
            .collect(),
    )
}

/// The models offered: the session's, then the aliases' models (for Anthropic's API; a local
/// server offers only the one it runs).
pub fn models(current: &str, local: bool) -> Vec<String> {
    let mut list = vec![current.to_owned()];
    if !local {
        for alias in ["sonnet", "opus", "haiku"] {
            let model = skiff_llm::resolve_alias(alias);
            if !list.contains(&model) {
                list.push(model);
            }
        }
    }
    list
}

/// The configuration options: the mode and the model.
pub fn config_options(
    mode: PermissionMode,
    model: &str,
    models: &[String],
    sandboxed: bool,
) -> Vec<SessionConfigOption> {
    let mode_values: Vec<SessionConfigSelectOption> = modes(mode, sandboxed)
        .into_iter()
        .map(|(m, name, about)| {
            SessionConfigSelectOption::new(m.as_str(), name).description(about.to_owned())
        })
        .collect();
    let mut model_values: Vec<SessionConfigSelectOption> = models
        .iter()
        .map(|m| SessionConfigSelectOption::new(m.clone(), m.clone()))
        .collect();
    if !models.iter().any(|m| m == model) {
        model_values.insert(
            0,
            SessionConfigSelectOption::new(model.to_owned(), model.to_owned()),
        );
    }
    vec![
        SessionConfigOption::select(MODE_OPTION, "Mode", mode.as_str(), mode_values)
            .category(SessionConfigOptionCategory::Mode)
            .description("How skiff asks before acting".to_owned()),
        SessionConfigOption::select(MODEL_OPTION, "Model", model.to_owned(), model_values)
            .category(SessionConfigOptionCategory::Model),
    ]
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use serde_json::json;

    use super::*;

    #[test]
    fn modes_and_options_on_the_wire() {
        let state = serde_json::to_value(mode_state(PermissionMode::Plan, false)).unwrap();
        assert_eq!(state["currentModeId"], "plan");
        let ids: Vec<&str> = state["availableModes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["default", "acceptEdits", "plan", "bypassPermissions"]);
        let state = serde_json::to_value(mode_state(PermissionMode::DontAsk, false)).unwrap();
        assert_eq!(state["availableModes"].as_array().unwrap().len(), 5);

        let options = serde_json::to_value(config_options(
            PermissionMode::Default,
            "m1",
            &models("m1", true),
            false,
        ))
        .unwrap();
        assert_eq!(options[0]["id"], "mode");
        assert_eq!(options[0]["type"], "select");
        assert_eq!(options[0]["category"], "mode");
        assert_eq!(options[1]["currentValue"], "m1");
        assert_eq!(
            options[1]["options"],
            json!([{"value": "m1", "name": "m1"}])
        );
        assert!(models("m1", false).len() > 1);
    }

    #[test]
    fn the_descriptions_say_what_runs_without_asking() {
        let about = |sandboxed| {
            serde_json::to_value(mode_state(PermissionMode::Default, sandboxed)).unwrap()
                ["availableModes"][0]["description"]
                .as_str()
                .unwrap()
                .to_owned()
        };
        assert!(about(true).contains("commands inside the sandbox without asking"));
        assert!(about(false).contains("asks before edits, other commands"));
        assert!(!about(false).contains("sandbox"));
    }
}
