//! Hooks an Agent SDK host registers in its `initialize` request: each matcher names callback
//! ids, and a firing asks the host (`hook_callback`) with the same input JSON a command hook
//! gets on stdin; the answer is read like a command hook's JSON output.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use skiff_protocol::control::HookMatcher;

use super::command::{Matcher, apply_output};
use super::{HookCall, HookEvent, HookResult, HookRunner};
use crate::event::{Answer, RequestKind};
use crate::frames::EventSink;
use crate::requests::Requester;

/// How long a callback may take unless its matcher sets `timeout` (seconds).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Debug)]
struct Group {
    matcher: Matcher,
    ids: Vec<String>,
    timeout: Duration,
}

/// The host's hooks.
#[derive(Debug)]
pub struct SdkHooks {
    events: HashMap<HookEvent, Vec<Group>>,
    requester: Requester,
}

impl SdkHooks {
    /// From `initialize.hooks` (`{"PreToolUse": [{"matcher": "Bash", "hookCallbackIds":
    /// ["hook_0"], "timeout": 30}], …}`). Entries skiff cannot use are left out, each with a
    /// warning.
    pub fn from_initialize(
        hooks: &BTreeMap<String, Vec<HookMatcher>>,
        requester: Requester,
    ) -> (Self, Vec<String>) {
        let mut events: HashMap<HookEvent, Vec<Group>> = HashMap::new();
        let mut warnings = Vec::new();
        for (name, groups) in hooks {
            let Some(event) = HookEvent::parse(name) else {
                warnings.push(format!("SDK hook event {name:?} is not supported; ignored"));
                continue;
            };
            for g in groups {
                let matcher = match Matcher::parse(g.matcher.as_deref()) {
                    Ok(m) => m,
                    Err(e) => {
                        warnings.push(format!("SDK hook for {name}: {e}; ignored"));
                        continue;
                    }
                };
                if g.hook_callback_ids.is_empty() {
                    continue;
                }
                let timeout = g
                    .timeout
                    .filter(|t| *t > 0.0)
                    .and_then(|t| Duration::try_from_secs_f64(t).ok())
                    .unwrap_or(DEFAULT_TIMEOUT);
                events.entry(event).or_default().push(Group {
                    matcher,
                    ids: g.hook_callback_ids.clone(),
                    timeout,
                });
            }
        }
        (Self { events, requester }, warnings)
    }

    /// Whether no hook is registered.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
}

#[async_trait]
impl HookRunner for SdkHooks {
    fn wants(&self, event: HookEvent) -> bool {
        self.events.contains_key(&event)
    }

    async fn run(&self, call: HookCall<'_>, _sink: &EventSink) -> HookResult {
        let mut calls: Vec<(&str, Duration)> = Vec::new();
        for g in self.events.get(&call.event).into_iter().flatten() {
            if call.event.has_matcher() && !g.matcher.matches(call.target) {
                continue;
            }
            for id in &g.ids {
                if !calls.iter().any(|(c, _)| c == id) {
                    calls.push((id, g.timeout));
                }
            }
        }
        let name = call.event.as_str();
        let tool_use_id = call
            .input
            .get("tool_use_id")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let asks = calls.iter().map(|(id, timeout)| {
            let kind = RequestKind::Callback {
                callback_id: (*id).to_owned(),
                input: call.input.clone(),
                tool_use_id: tool_use_id.clone(),
            };
            async move {
                (
                    *id,
                    tokio::time::timeout(*timeout, self.requester.ask(kind)).await,
                )
            }
        });
        let mut result = HookResult::default();
        for (id, answer) in futures::future::join_all(asks).await {
            let label = format!("callback {id}");
            match answer {
                Ok(Ok(Answer::Json(v))) => {
                    // `{"async": true}`: the host answers later, with no opinion now.
                    if v.get("async").and_then(Value::as_bool) == Some(true) {
                        continue;
                    }
                    apply_output(&mut result, call.event, name, &label, &v.to_string());
                }
                Ok(Ok(other)) => {
                    tracing::warn!(?other, "a hook callback was answered with something else")
                }
                Ok(Err(_)) => {}
                Err(_) => result.messages.push(format!(
                    "{name} hook [{label}] did not answer in time; it was ignored"
                )),
            }
        }
        result
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::frames::EventSink;

    fn matchers(v: serde_json::Value) -> BTreeMap<String, Vec<HookMatcher>> {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn matchers_become_groups_and_odd_ones_are_warned_about() {
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let requester = Requester::new(EventSink::new(tx, "s".into()));
        let hooks = matchers(serde_json::json!({
            "PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["hook_0"], "timeout": 30},
                           {"matcher": null, "hookCallbackIds": []}],
            // A timeout no clock can hold is the default, not a panic.
            "Stop": [{"hookCallbackIds": ["hook_1"], "timeout": 1e300}],
            "NoSuchEvent": [{"hookCallbackIds": ["hook_2"]}],
        }));
        let (sdk, warnings) = SdkHooks::from_initialize(&hooks, requester);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("NoSuchEvent"));
        let pre = &sdk.events[&HookEvent::PreToolUse];
        assert_eq!(pre.len(), 1);
        assert_eq!(pre[0].timeout, Duration::from_secs(30));
        assert_eq!(sdk.events[&HookEvent::Stop][0].timeout, DEFAULT_TIMEOUT);
    }
}
