//! Hooks an Agent SDK host registers in its `initialize` request: each matcher names callback
//! ids, and a firing asks the host (`hook_callback`) with the same input JSON a command hook
//! gets on stdin; the answer is read like a command hook's JSON output.

use std::collections::HashMap;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;

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
    /// ["hook_0"], "timeout": 30}], …}`; `null` means none). Entries skiff cannot use are
    /// left out, each with a warning.
    pub fn from_initialize(hooks: &Value, requester: Requester) -> (Self, Vec<String>) {
        let mut events: HashMap<HookEvent, Vec<Group>> = HashMap::new();
        let mut warnings = Vec::new();
        for (name, groups) in hooks.as_object().into_iter().flatten() {
            let Some(event) = HookEvent::parse(name) else {
                warnings.push(format!("SDK hook event {name:?} is not supported; ignored"));
                continue;
            };
            for g in groups.as_array().into_iter().flatten() {
                let matcher = match Matcher::parse(g.get("matcher").and_then(Value::as_str)) {
                    Ok(m) => m,
                    Err(e) => {
                        warnings.push(format!("SDK hook for {name}: {e}; ignored"));
                        continue;
                    }
                };
                let ids: Vec<String> = g
                    .get("hookCallbackIds")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect();
                if ids.is_empty() {
                    continue;
                }
                let timeout = g
                    .get("timeout")
                    .and_then(Value::as_f64)
                    .filter(|t| t.is_finite() && *t > 0.0)
                    .map_or(DEFAULT_TIMEOUT, Duration::from_secs_f64);
                events.entry(event).or_default().push(Group {
                    matcher,
                    ids,
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
