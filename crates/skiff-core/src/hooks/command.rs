//! Command hooks from the settings (`"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks":
//! [{"type": "command", "command": "…", "timeout": 30}]}]}`): matched, run in parallel through
//! bash in their own process group with the event's JSON on stdin, killed at their timeout, and
//! their exit codes and JSON output turned into a [`HookResult`] (PROTOCOL.md §6.4–6.5). A hook
//! that fails, hangs or prints garbage never breaks the loop: it becomes a warning.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use skiff_protocol::sdk::{HookResponse, HookStarted, SdkMessage, SystemMessage};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use super::{HookCall, HookDecision, HookEvent, HookResult, HookRunner};
use crate::frames::{EventSink, new_uuid};

/// A command's timeout when its handler gives none.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// What is kept of a hook's stdout and stderr each (the rest is read and dropped).
const MAX_OUTPUT: usize = 64 * 1024;

/// A hook entry that cannot be used (skipped; the rest load).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct HookConfigError(pub String);

#[derive(Debug)]
pub(crate) enum Matcher {
    All,
    Names(Vec<String>),
    Regex(regex::Regex),
}

impl Matcher {
    pub(crate) fn parse(text: Option<&str>) -> Result<Self, String> {
        let text = text.map(str::trim).unwrap_or("");
        if text.is_empty() || text == "*" {
            return Ok(Self::All);
        }
        let plain = text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ' ' | ',' | '|' | '-'));
        if plain {
            return Ok(Self::Names(
                text.split(['|', ','])
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect(),
            ));
        }
        regex::Regex::new(text)
            .map(Self::Regex)
            .map_err(|e| format!("matcher {text:?} is not a valid regular expression: {e}"))
    }

    pub(crate) fn matches(&self, target: Option<&str>) -> bool {
        match (self, target) {
            (Self::All, _) => true,
            (_, None) => false,
            (Self::Names(names), Some(t)) => names.iter().any(|n| n == t),
            (Self::Regex(re), Some(t)) => re.is_match(t),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
struct Handler {
    command: String,
    timeout: Duration,
    /// Variables of this handler alone (a plugin's `CLAUDE_PLUGIN_ROOT`).
    env: Vec<(String, String)>,
}

#[derive(Debug)]
struct Group {
    matcher: Matcher,
    handlers: Vec<Handler>,
}

/// The command hooks of the settings.
#[derive(Debug, Default)]
pub struct CommandHooks {
    events: HashMap<HookEvent, Vec<Group>>,
    cwd: PathBuf,
    env: Vec<(String, String)>,
    /// The settings' `env`, under `env`.
    settings_env: skiff_tools::ExtraEnv,
}

impl CommandHooks {
    /// Hooks from `(event name, matcher group)` pairs, run in `project_dir`. Entries that
    /// cannot be used are skipped and reported.
    pub fn new(
        groups: impl IntoIterator<Item = (String, Value)>,
        project_dir: &Path,
    ) -> (Self, Vec<HookConfigError>) {
        let mut hooks = Self {
            events: HashMap::new(),
            cwd: project_dir.to_path_buf(),
            env: vec![
                (
                    "CLAUDE_PROJECT_DIR".into(),
                    project_dir.display().to_string(),
                ),
                (
                    "SKIFF_PROJECT_DIR".into(),
                    project_dir.display().to_string(),
                ),
            ],
            settings_env: skiff_tools::ExtraEnv::default(),
        };
        let errors = hooks.add_groups(groups, &[]);
        (hooks, errors)
    }

    /// Add more `(event name, matcher group)` pairs (a plugin's) whose commands run with `env`
    /// too (`CLAUDE_PLUGIN_ROOT`). Entries that cannot be used are skipped and reported.
    pub fn add_groups(
        &mut self,
        groups: impl IntoIterator<Item = (String, Value)>,
        env: &[(String, String)],
    ) -> Vec<HookConfigError> {
        let mut errors = Vec::new();
        for (name, group) in groups {
            let Some(event) = HookEvent::parse(&name) else {
                errors.push(HookConfigError(format!(
                    "hooks.{name}: unknown hook event (skiff runs {})",
                    HookEvent::ALL.map(HookEvent::as_str).join(", ")
                )));
                continue;
            };
            match parse_group(&group) {
                Ok((mut g, skipped)) => {
                    errors.extend(
                        skipped
                            .into_iter()
                            .map(|s| HookConfigError(format!("hooks.{name}: {s}"))),
                    );
                    for h in &mut g.handlers {
                        h.env = env.to_vec();
                    }
                    if !g.handlers.is_empty() {
                        self.events.entry(event).or_default().push(g);
                    }
                }
                Err(e) => errors.push(HookConfigError(format!("hooks.{name}: {e}"))),
            }
        }
        errors
    }

    /// Run the hooks with the settings' `env` (under the project variables skiff sets).
    pub fn with_env(mut self, env: skiff_tools::ExtraEnv) -> Self {
        self.settings_env = env;
        self
    }

    /// Whether no hook is configured.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The handlers of `event` matching `target`, each command once.
    fn matching(&self, event: HookEvent, target: Option<&str>) -> Vec<&Handler> {
        let mut out: Vec<&Handler> = Vec::new();
        for g in self.events.get(&event).into_iter().flatten() {
            if event.has_matcher() && !g.matcher.matches(target) {
                continue;
            }
            for h in &g.handlers {
                if !out.iter().any(|o| o.command == h.command) {
                    out.push(h);
                }
            }
        }
        out
    }
}

fn parse_group(group: &Value) -> Result<(Group, Vec<String>), String> {
    let obj = group
        .as_object()
        .ok_or("a matcher group must be an object with \"hooks\"")?;
    let matcher = Matcher::parse(obj.get("matcher").and_then(Value::as_str))?;
    let list = obj
        .get("hooks")
        .and_then(Value::as_array)
        .ok_or("a matcher group needs a \"hooks\" array")?;
    let mut handlers = Vec::new();
    let mut skipped = Vec::new();
    for h in list {
        let kind = h.get("type").and_then(Value::as_str).unwrap_or("command");
        if kind != "command" {
            skipped.push(format!(
                "hook type {kind:?} is not supported (only \"command\")"
            ));
            continue;
        }
        let Some(command) = h
            .get("command")
            .and_then(Value::as_str)
            .filter(|c| !c.trim().is_empty())
        else {
            skipped.push("a command hook without \"command\"".to_owned());
            continue;
        };
        let timeout = h
            .get("timeout")
            .and_then(Value::as_f64)
            .filter(|t| t.is_finite() && *t > 0.0)
            .map_or(DEFAULT_TIMEOUT, Duration::from_secs_f64);
        handlers.push(Handler {
            command: command.to_owned(),
            timeout,
            env: Vec::new(),
        });
    }
    Ok((Group { matcher, handlers }, skipped))
}

/// How one command ended.
struct Ran {
    exit_code: Option<i32>,
    stdout: String,
    stderr: String,
    /// Why it has no exit code (timeout, could not start).
    failure: Option<String>,
}

#[async_trait]
impl HookRunner for CommandHooks {
    fn wants(&self, event: HookEvent) -> bool {
        self.events.contains_key(&event)
    }

    async fn run(&self, call: HookCall<'_>, sink: &EventSink) -> HookResult {
        let handlers = self.matching(call.event, call.target);
        if handlers.is_empty() {
            return HookResult::default();
        }
        let name = match call.target {
            Some(t) if call.event.has_matcher() => format!("{}:{t}", call.event.as_str()),
            _ => call.event.as_str().to_owned(),
        };
        let stdin = serde_json::to_vec(&call.input).unwrap_or_default();
        let runs = handlers
            .iter()
            .map(|h| self.run_one(h, &stdin, &name, call.event, sink));
        let outcomes = futures::future::join_all(runs).await;
        let mut result = HookResult::default();
        for (handler, ran) in handlers.iter().zip(outcomes) {
            apply(&mut result, call.event, &name, handler, ran);
        }
        result
    }
}

impl CommandHooks {
    async fn run_one(
        &self,
        handler: &Handler,
        stdin: &[u8],
        name: &str,
        event: HookEvent,
        sink: &EventSink,
    ) -> Ran {
        let hook_id = new_uuid();
        sink.emit(SdkMessage::System(SystemMessage::HookStarted(
            HookStarted {
                hook_id: hook_id.clone(),
                hook_name: name.to_owned(),
                hook_event: event.as_str().to_owned(),
                uuid: new_uuid(),
                session_id: sink.session_id().to_owned(),
            },
        )));
        let ran = self.execute(handler, stdin).await;
        let outcome = match (ran.exit_code, &ran.failure) {
            (Some(0), _) => "success",
            (_, Some(f)) if f.starts_with("timed out") => "cancelled",
            _ => "error",
        };
        let output = if ran.exit_code == Some(2) {
            ran.stderr.clone()
        } else {
            ran.stdout.clone()
        };
        sink.emit(SdkMessage::System(SystemMessage::HookResponse(
            HookResponse {
                hook_id,
                hook_name: name.to_owned(),
                hook_event: event.as_str().to_owned(),
                output,
                stdout: ran.stdout.clone(),
                stderr: ran.stderr.clone(),
                exit_code: ran.exit_code,
                outcome: outcome.to_owned(),
                uuid: new_uuid(),
                session_id: sink.session_id().to_owned(),
            },
        )));
        ran
    }

    /// Run the command through bash in its own process group, stdin written, output captured
    /// (capped), killed with its group at the timeout.
    async fn execute(&self, handler: &Handler, stdin: &[u8]) -> Ran {
        let mut cmd = tokio::process::Command::new("bash");
        cmd.arg("-c")
            .arg(&handler.command)
            .current_dir(&self.cwd)
            .envs(
                self.settings_env
                    .vars()
                    .iter()
                    .chain(&self.env)
                    .chain(&handler.env)
                    .map(|(k, v)| (k.as_str(), v.as_str())),
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        // What the hook starts and leaves behind (even with `setsid`) ends with it.
        #[cfg(target_os = "linux")]
        super::reaper::below_reaper(&mut cmd);
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                return Ran {
                    exit_code: None,
                    stdout: String::new(),
                    stderr: String::new(),
                    failure: Some(format!("could not start: {e}")),
                };
            }
        };
        let pgid = child.id();
        let mut input = child.stdin.take();
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let work = async {
            if let Some(pipe) = input.as_mut() {
                // A hook that does not read its input is fine.
                let _ = pipe.write_all(stdin).await;
                let _ = pipe.shutdown().await;
            }
            drop(input);
            let (out, err, status) =
                tokio::join!(read_capped(stdout), read_capped(stderr), child.wait());
            (out, err, status)
        };
        match tokio::time::timeout(handler.timeout, work).await {
            Ok((stdout, stderr, status)) => Ran {
                exit_code: status.ok().and_then(|s| s.code()),
                stdout,
                stderr,
                failure: None,
            },
            Err(_) => {
                // The reaper ends the hook and everything below it, then exits; if it does not
                // (no reaper), the group is killed.
                signal(pgid, nix::sys::signal::Signal::SIGTERM);
                if tokio::time::timeout(REAPER_GRACE, child.wait())
                    .await
                    .is_err()
                {
                    kill_group(pgid);
                }
                kill_group(pgid);
                Ran {
                    exit_code: None,
                    stdout: String::new(),
                    stderr: String::new(),
                    failure: Some(format!(
                        "timed out after {}s",
                        handler.timeout.as_secs_f64()
                    )),
                }
            }
        }
    }
}

/// How long a timed-out hook's reaper gets to end what is below it.
const REAPER_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Send `sig` to the process `pid` (the reaper, or the hook's shell without one).
fn signal(pid: Option<u32>, sig: nix::sys::signal::Signal) {
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), sig);
    }
}

fn kill_group(pid: Option<u32>) {
    use nix::sys::signal::{Signal, killpg};
    use nix::unistd::Pid;
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
    }
}

/// Read a pipe to its end, keeping the first [`MAX_OUTPUT`] bytes (lossy UTF-8).
async fn read_capped(pipe: Option<impl AsyncRead + Unpin>) -> String {
    let Some(mut pipe) = pipe else {
        return String::new();
    };
    let mut kept = Vec::new();
    let mut buf = [0u8; 8192];
    let mut cut = false;
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = MAX_OUTPUT.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
                cut |= n > room;
            }
        }
    }
    let mut text = String::from_utf8_lossy(&kept).into_owned();
    if cut {
        text.push_str("\n[output truncated]");
    }
    text
}

/// Fold one command's outcome into the event's result.
fn apply(result: &mut HookResult, event: HookEvent, name: &str, handler: &Handler, ran: Ran) {
    if let Some(failure) = ran.failure {
        tracing::warn!(hook = %handler.command, %failure, "hook failed");
        result.messages.push(format!(
            "{name} hook [{}] {failure}; it was ignored",
            handler.command
        ));
        return;
    }
    match ran.exit_code {
        Some(0) => apply_output(result, event, name, &handler.command, &ran.stdout),
        Some(2) => {
            let reason = if event == HookEvent::PreToolUse {
                format!("[{}]: {}", handler.command, ran.stderr)
            } else {
                ran.stderr.clone()
            };
            join(&mut result.block, reason);
        }
        code => {
            let first = ran.stderr.lines().next().unwrap_or("").trim();
            let code = code.map_or_else(|| "a signal".to_owned(), |c| c.to_string());
            result.messages.push(format!(
                "{name} hook error: Failed with non-blocking status code {code}: {first}"
            ));
        }
    }
}

pub(crate) fn join(slot: &mut Option<String>, text: String) {
    match slot {
        Some(s) => {
            s.push('\n');
            s.push_str(&text);
        }
        None => *slot = Some(text),
    }
}

/// Exit 0: JSON output when stdout is a JSON object, plain text otherwise. `label` names the
/// hook in warnings (its command, or an SDK callback id).
pub(crate) fn apply_output(
    result: &mut HookResult,
    event: HookEvent,
    name: &str,
    label: &str,
    out: &str,
) {
    let trimmed = out.trim();
    if trimmed.is_empty() {
        return;
    }
    if !trimmed.starts_with('{') {
        result.output.push(trimmed.to_owned());
        return;
    }
    let Ok(Value::Object(json)) = serde_json::from_str::<Value>(trimmed) else {
        result.messages.push(format!(
            "{name} hook [{label}] printed output that starts like JSON but is not; it was ignored"
        ));
        return;
    };
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
    if json.get("continue").and_then(Value::as_bool) == Some(false) {
        let reason =
            text(json.get("stopReason")).unwrap_or_else(|| format!("{name} hook stopped the run"));
        result.stop.get_or_insert(reason);
    }
    if let Some(m) = text(json.get("systemMessage")) {
        result.messages.push(m);
    }
    let reason = text(json.get("reason"));
    match json.get("decision").and_then(Value::as_str) {
        Some("block") if event == HookEvent::PreToolUse => {
            merge_decision(result, HookDecision::Deny, reason.clone());
        }
        Some("block") => join(
            &mut result.block,
            reason
                .clone()
                .unwrap_or_else(|| format!("blocked by {name} hook")),
        ),
        Some("approve") if event == HookEvent::PreToolUse => {
            merge_decision(result, HookDecision::Allow, reason.clone());
        }
        _ => {}
    }
    let Some(specific) = json.get("hookSpecificOutput").and_then(Value::as_object) else {
        return;
    };
    if let Some(ctx) = text(specific.get("additionalContext")) {
        result.context.push(ctx);
    }
    if event == HookEvent::PreToolUse {
        let why = text(specific.get("permissionDecisionReason"));
        match specific.get("permissionDecision").and_then(Value::as_str) {
            Some("allow") => merge_decision(result, HookDecision::Allow, why),
            Some("deny") => merge_decision(result, HookDecision::Deny, why),
            Some("ask") => merge_decision(result, HookDecision::Ask, why),
            _ => {}
        }
        if let Some(updated) = specific.get("updatedInput").filter(|v| v.is_object()) {
            result.updated_input = Some(updated.clone());
        }
    }
}

/// Several hooks: deny wins over ask, ask over allow.
pub(crate) fn merge_decision(
    result: &mut HookResult,
    decision: HookDecision,
    reason: Option<String>,
) {
    let rank = |d: HookDecision| match d {
        HookDecision::Deny => 2,
        HookDecision::Ask => 1,
        HookDecision::Allow => 0,
    };
    match &result.decision {
        Some((d, _)) if rank(*d) >= rank(decision) => {}
        _ => result.decision = Some((decision, reason)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn matchers_follow_claude_codes_rules() {
        let m = |s: &str| Matcher::parse(Some(s)).unwrap();
        assert!(m("").matches(Some("Bash")) && m("*").matches(None));
        assert!(m("Bash").matches(Some("Bash")) && !m("Bash").matches(Some("BashOutput")));
        assert!(m("Edit|Write").matches(Some("Write")) && m("Edit, Write").matches(Some("Edit")));
        assert!(m("mcp__memory__.*").matches(Some("mcp__memory__create")));
        assert!(
            m("^Notebook").matches(Some("NotebookEdit"))
                && !m("^Notebook").matches(Some("XNotebook"))
        );
        assert!(Matcher::parse(Some("(")).is_err());
    }

    #[test]
    fn bad_entries_are_skipped_with_a_reason() {
        let (hooks, errors) = CommandHooks::new(
            [
                ("Nope".to_owned(), json!({"hooks": []})),
                (
                    "PreToolUse".to_owned(),
                    json!({"matcher": "(", "hooks": []}),
                ),
                (
                    "Stop".to_owned(),
                    json!({"hooks": [{"type": "http", "url": "x"}, {"type": "command"}]}),
                ),
                (
                    "PreToolUse".to_owned(),
                    json!({"matcher": "Bash", "hooks": [{"type": "command", "command": "true", "timeout": 5}]}),
                ),
            ],
            Path::new("/tmp"),
        );
        assert_eq!(errors.len(), 4, "{errors:?}");
        assert!(hooks.wants(HookEvent::PreToolUse));
        assert!(!hooks.wants(HookEvent::Stop));
        assert_eq!(
            hooks.matching(HookEvent::PreToolUse, Some("Bash"))[0].timeout,
            Duration::from_secs(5)
        );
        assert!(
            hooks
                .matching(HookEvent::PreToolUse, Some("Read"))
                .is_empty()
        );
    }

    fn handler() -> Handler {
        Handler {
            command: "h.sh".into(),
            timeout: DEFAULT_TIMEOUT,
            env: Vec::new(),
        }
    }

    fn ran(code: i32, stdout: &str, stderr: &str) -> Ran {
        Ran {
            exit_code: Some(code),
            stdout: stdout.into(),
            stderr: stderr.into(),
            failure: None,
        }
    }

    #[test]
    fn exit_codes_and_json_become_a_result() {
        let mut r = HookResult::default();
        apply(
            &mut r,
            HookEvent::PreToolUse,
            "PreToolUse:Bash",
            &handler(),
            ran(2, "", "no rm -rf\n"),
        );
        assert_eq!(r.block.as_deref(), Some("[h.sh]: no rm -rf\n"));

        let mut r = HookResult::default();
        let out = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"ls"}}}"#;
        apply(
            &mut r,
            HookEvent::PreToolUse,
            "n",
            &handler(),
            ran(0, out, ""),
        );
        let deny = r#"{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"json deny reason"}}"#;
        apply(
            &mut r,
            HookEvent::PreToolUse,
            "n",
            &handler(),
            ran(0, deny, ""),
        );
        assert_eq!(
            r.decision,
            Some((HookDecision::Deny, Some("json deny reason".into())))
        );
        assert_eq!(r.updated_input, Some(json!({"command": "ls"})));

        let mut r = HookResult::default();
        apply(
            &mut r,
            HookEvent::UserPromptSubmit,
            "n",
            &handler(),
            ran(0, "extra context\n", ""),
        );
        apply(
            &mut r,
            HookEvent::UserPromptSubmit,
            "n",
            &handler(),
            ran(1, "", "oops\nmore"),
        );
        apply(
            &mut r,
            HookEvent::UserPromptSubmit,
            "n",
            &handler(),
            ran(0, "{not json", ""),
        );
        apply(
            &mut r,
            HookEvent::UserPromptSubmit,
            "n",
            &handler(),
            ran(
                0,
                r#"{"continue":false,"stopReason":"enough","systemMessage":"careful"}"#,
                "",
            ),
        );
        assert_eq!(r.output, ["extra context"]);
        assert_eq!(r.stop.as_deref(), Some("enough"));
        assert_eq!(r.messages.len(), 3, "{:?}", r.messages);
        assert!(r.messages[0].contains("non-blocking status code 1: oops"));
        assert!(r.block.is_none(), "exit 1 does not block");

        let mut r = HookResult::default();
        apply(
            &mut r,
            HookEvent::Stop,
            "Stop",
            &handler(),
            ran(0, r#"{"decision":"block","reason":"run the tests"}"#, ""),
        );
        assert_eq!(r.block.as_deref(), Some("run the tests"));
    }
}
