//! Tool dispatch for one assistant turn, in two phases.
//!
//! 1. **Decide**, every call in request order: unknown tool, permission check, approval (one
//!    at a time, so two approval prompts never appear at once), PreToolUse hook. A denied or
//!    blocked call gets its error result here and never runs.
//! 2. **Execute** the allowed calls: concurrency-safe ones together (at most `max_parallel` at
//!    a time, so a turn of 1,500 calls does not run out of file descriptors), the others one at
//!    a time in request order; then the PostToolUse hook and truncation of each.
//!
//! Results come back in request order. An interrupt stops waiting for approvals, tells running
//! tools to stop, and after a short grace drops them (tool processes die with their futures);
//! every call without a result then gets an "interrupted" result.

use std::path::Path;
use std::time::{Duration, Instant};

use futures::FutureExt;
use futures::stream::{FuturesUnordered, StreamExt};
use serde_json::Value;
use skiff_protocol::sdk::{PermissionDenial, SdkMessage, ToolProgressMessage};
use skiff_protocol::{ContentBlock, ToolResultBlock, ToolResultContent, ToolUseBlock};
use skiff_tools::{ToolContext, ToolOutput, ToolRegistry, truncate_result};
use tokio_util::sync::CancellationToken;

pub use crate::conversation::INTERRUPTED;
use crate::event::{ApprovalAnswer, ApprovalRequest};
use crate::frames::{EventSink, new_uuid};
use crate::hooks::{HookCommon, HookDecision, HookEvent, HookRunner, fields, fire, reminder};
use crate::permissions::{
    Approver, PermissionChecker, PermissionDecision, PermissionMode, PermissionQuery,
};
use crate::requests::Requester;

/// How long running tools get to stop by themselves after an interrupt before they are dropped.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// What dispatch needs from the session.
pub struct Dispatcher<'a> {
    /// Tools.
    pub tools: &'a ToolRegistry,
    /// Tool context (workspace, file state, change log).
    pub ctx: &'a ToolContext,
    /// Permission checker.
    pub permissions: &'a dyn PermissionChecker,
    /// The session's permission mode for this turn.
    pub mode: PermissionMode,
    /// Answers "ask".
    pub approver: &'a std::sync::Arc<dyn Approver>,
    /// Asks the client (for approvers that do).
    pub requester: &'a Requester,
    /// Hooks.
    pub hooks: &'a dyn HookRunner,
    /// Event sink.
    pub sink: &'a EventSink,
    /// Maximum characters of one result.
    pub max_result_chars: usize,
    /// How often running tools report progress.
    pub progress_interval: Duration,
    /// At most this many calls run at the same time.
    pub max_parallel: usize,
    /// Where results cut by truncation are saved whole (None: not saved).
    pub results_dir: Option<&'a Path>,
    /// Set when the user approved an `ExitPlanMode` plan: the mode the session switches to.
    pub switched_mode: std::sync::Mutex<Option<PermissionMode>>,
    /// The fields every hook input starts with.
    pub hook_common: HookCommon,
    /// Set when a hook said `continue: false`: the run ends after these calls, for this reason.
    pub hook_stop: std::sync::Mutex<Option<String>>,
    /// Send running commands' output as [`crate::Event::ToolOutput`] as it comes.
    pub tool_output: bool,
}

/// The outcome of one call.
#[derive(Debug, Clone)]
pub struct CallResult {
    /// The tool_result block for the history.
    pub block: ToolResultBlock,
    /// Structured result for the `user` frame.
    pub structured: Option<Value>,
    /// Set when permission was denied.
    pub denial: Option<PermissionDenial>,
}

/// What the decide phase made of one call.
// A few per tool round, moved once: boxing the result would buy nothing.
#[allow(clippy::large_enum_variant)]
enum Plan {
    /// Run it with this input; the PreToolUse hooks' context goes with its result.
    Run(Value, Vec<String>),
    /// Its result is known without running it.
    Done(CallResult),
}

impl Dispatcher<'_> {
    /// Decide and run every call of a turn; results in request order.
    pub async fn run_all(
        &self,
        calls: &[ToolUseBlock],
        cancel: &CancellationToken,
    ) -> Vec<CallResult> {
        let mut plans = Vec::with_capacity(calls.len());
        for call in calls {
            let plan = if cancel.is_cancelled() {
                Plan::Done(interrupted(call))
            } else {
                tokio::select! {
                    biased;
                    () = cancel.cancelled() => Plan::Done(interrupted(call)),
                    plan = self.decide(call, cancel) => plan,
                }
            };
            plans.push(plan);
        }

        let mut results: Vec<Option<CallResult>> = Vec::with_capacity(calls.len());
        let mut runnable: Vec<(usize, Value)> = Vec::new();
        let mut contexts: Vec<Vec<String>> = vec![Vec::new(); calls.len()];
        for (i, plan) in plans.into_iter().enumerate() {
            match plan {
                Plan::Done(r) => results.push(Some(r)),
                Plan::Run(input, context) => {
                    results.push(None);
                    runnable.push((i, input));
                    if let Some(slot) = contexts.get_mut(i) {
                        *slot = context;
                    }
                }
            }
        }
        let mut start = 0;
        while start < runnable.len() && !cancel.is_cancelled() {
            let safe = |(i, input): &(usize, Value)| self.is_safe(&calls[*i], input);
            let end = if safe(&runnable[start]) {
                start + runnable[start..].iter().take_while(|r| safe(r)).count()
            } else {
                start + 1
            };
            let batch = runnable[start..end]
                .iter()
                .map(|(i, input)| (*i, input.clone()));
            for (idx, mut r) in self.run_batch(calls, batch.collect(), cancel).await {
                if let Some(context) = contexts.get(idx).filter(|c| !c.is_empty()) {
                    add_context(&mut r, context);
                }
                results[idx] = Some(r);
            }
            start = end;
        }
        results
            .into_iter()
            .zip(calls)
            .map(|(r, call)| r.unwrap_or_else(|| interrupted(call)))
            .collect()
    }

    fn is_safe(&self, call: &ToolUseBlock, input: &Value) -> bool {
        self.tools
            .get(&call.name)
            .is_some_and(|t| t.is_concurrency_safe(input))
    }

    /// Phase 1 for one call: may it run, and with which input?
    async fn decide(&self, call: &ToolUseBlock, cancel: &CancellationToken) -> Plan {
        let Some(tool) = self.tools.get(&call.name) else {
            return Plan::Done(finish(call, self.tools.unknown(&call.name)));
        };
        if !call.input.is_object() {
            let raw = call.input.as_str().unwrap_or_default();
            let excerpt: String = raw.chars().take(200).collect();
            return Plan::Done(finish(
                call,
                ToolOutput::tool_use_error(format!(
                    "InputValidationError: the input of {} is not valid JSON: {excerpt}{}. Call \
                     the tool again with its input as a JSON object.",
                    call.name,
                    if raw.chars().count() > 200 { "…" } else { "" }
                )),
            ));
        }
        let mut input = call.input.clone();
        let hook = fire(
            self.hooks,
            self.sink,
            &self.hook_common,
            HookEvent::PreToolUse,
            Some(&call.name),
            || {
                fields([
                    ("tool_name", call.name.clone().into()),
                    ("tool_input", call.input.clone()),
                    ("tool_use_id", call.id.clone().into()),
                ])
            },
        )
        .await;
        if let Some(reason) = hook.stop {
            self.stop_run(reason.clone());
            return Plan::Done(finish(
                call,
                ToolOutput::error(format!(
                    "PreToolUse:{} hook stopped the run: {reason}",
                    call.name
                )),
            ));
        }
        if let Some(reason) = hook.block {
            return Plan::Done(finish(
                call,
                ToolOutput::error(format!("PreToolUse:{} hook error: {reason}", call.name)),
            ));
        }
        let hook_decision = hook.decision.clone();
        if let Some((HookDecision::Deny, reason)) = &hook_decision {
            let reason = reason.as_deref().unwrap_or("denied by the hook");
            return Plan::Done(denied(
                call,
                format!("PreToolUse:{} hook error: {reason}", call.name),
            ));
        }
        if let Some(updated) = hook.updated_input {
            input = updated;
        }
        let query = PermissionQuery {
            tool: &call.name,
            input: &input,
            tool_use_id: &call.id,
            read_only: tool.is_read_only(),
            mode: self.mode,
        };
        let decision = match (self.permissions.check(&query).await, hook_decision) {
            // Deny rules apply whatever a hook said.
            (d @ PermissionDecision::Deny { .. }, _) => d,
            (_, Some((HookDecision::Allow, _))) => PermissionDecision::Allow,
            (PermissionDecision::Allow, Some((HookDecision::Ask, reason))) => {
                PermissionDecision::Ask {
                    message: reason.unwrap_or_else(|| {
                        format!("A PreToolUse hook asks for approval of {}", call.name)
                    }),
                }
            }
            (d, _) => d,
        };
        match decision {
            PermissionDecision::Allow => {}
            PermissionDecision::Deny { message } => return Plan::Done(denied(call, message)),
            PermissionDecision::Ask { message } => {
                // What would fail anyway fails now, before anyone is asked about it (an Edit of
                // a file not read yet).
                if let Err(out) = tool.validate(&input, self.ctx).await {
                    return Plan::Done(finish(call, out));
                }
                fire(
                    self.hooks,
                    self.sink,
                    &self.hook_common,
                    HookEvent::Notification,
                    Some("permission_prompt"),
                    || {
                        fields([
                            (
                                "message",
                                format!("skiff needs your permission to use {}", call.name).into(),
                            ),
                            ("notification_type", "permission_prompt".into()),
                        ])
                    },
                )
                .await;
                let request = ApprovalRequest {
                    tool_name: call.name.clone(),
                    input: input.clone(),
                    tool_use_id: call.id.clone(),
                    reason: message,
                };
                match self.approver.approve(request, self.requester).await {
                    ApprovalAnswer::Allow { updated_input } => {
                        if let Some(updated) = updated_input {
                            let changed = updated != input;
                            input = updated;
                            // A host that changes the call gets its version checked by the
                            // rules again: what they deny stays denied.
                            if changed && call.name != "ExitPlanMode" {
                                let query = PermissionQuery {
                                    tool: &call.name,
                                    input: &input,
                                    tool_use_id: &call.id,
                                    read_only: tool.is_read_only(),
                                    mode: self.mode,
                                };
                                if let PermissionDecision::Deny { message } =
                                    self.permissions.check(&query).await
                                {
                                    return Plan::Done(denied(call, message));
                                }
                            }
                        }
                        if call.name == "ExitPlanMode" {
                            self.leave_plan_mode();
                        }
                    }
                    ApprovalAnswer::Deny { message, interrupt } => {
                        if interrupt {
                            cancel.cancel();
                        }
                        return Plan::Done(denied(call, message));
                    }
                }
            }
        }
        Plan::Run(input, hook.context)
    }

    /// A hook said `continue: false`: the run ends after this turn's calls.
    fn stop_run(&self, reason: String) {
        let mut slot = match self.hook_stop.lock() {
            Ok(s) => s,
            Err(p) => p.into_inner(),
        };
        slot.get_or_insert(reason);
    }

    /// An approved plan: the session leaves plan mode — for the mode the client chose with
    /// [`crate::session::Op::UpdatePermissions`] before answering, `default` otherwise.
    fn leave_plan_mode(&self) {
        if self.mode != PermissionMode::Plan {
            return;
        }
        match self.switched_mode.lock() {
            Ok(mut m) => *m = Some(PermissionMode::Default),
            Err(p) => *p.into_inner() = Some(PermissionMode::Default),
        }
    }

    /// Phase 2 for a batch: run its calls concurrently (at most `max_parallel` at a time),
    /// emitting progress for calls running longer than the interval.
    async fn run_batch(
        &self,
        calls: &[ToolUseBlock],
        batch: Vec<(usize, Value)>,
        cancel: &CancellationToken,
    ) -> Vec<(usize, CallResult)> {
        let total = batch.len();
        let mut waiting = batch.into_iter();
        let mut running = FuturesUnordered::new();
        let mut started: Vec<(usize, Instant)> = Vec::new();
        let limit = self.max_parallel.max(1);
        let mut launch = |running: &mut FuturesUnordered<_>,
                          started: &mut Vec<(usize, Instant)>| {
            if let Some((idx, input)) = waiting.next() {
                started.push((idx, Instant::now()));
                running.push(
                    self.run_one(&calls[idx], input, cancel)
                        .map(move |r| (idx, r)),
                );
            }
        };
        for _ in 0..limit.min(total) {
            launch(&mut running, &mut started);
        }
        let mut done = Vec::with_capacity(total);
        let mut ticker = tokio::time::interval_at(
            tokio::time::Instant::now() + self.progress_interval,
            self.progress_interval,
        );
        let grace = tokio::time::sleep(Duration::MAX);
        tokio::pin!(grace);
        let mut stopping = false;
        loop {
            tokio::select! {
                next = running.next() => match next {
                    Some((idx, r)) => {
                        started.retain(|(i, _)| *i != idx);
                        done.push((idx, r));
                        if !stopping {
                            launch(&mut running, &mut started);
                        }
                    }
                    None => break,
                },
                () = cancel.cancelled(), if !stopping => {
                    // Tools see the same cancellation; give them a moment to stop cleanly.
                    stopping = true;
                    grace.as_mut().reset(tokio::time::Instant::now() + STOP_GRACE);
                }
                () = &mut grace, if stopping => {
                    tracing::warn!(calls = running.len(), "tools did not stop after an interrupt; dropping them");
                    break;
                }
                _ = ticker.tick() => {
                    for (idx, since) in &started {
                        let elapsed = since.elapsed().as_secs_f64();
                        self.sink.emit(SdkMessage::ToolProgress(ToolProgressMessage {
                            tool_use_id: calls[*idx].id.clone(),
                            tool_name: calls[*idx].name.clone(),
                            parent_tool_use_id: None,
                            elapsed_time_seconds: (elapsed * 10.0).round() / 10.0,
                            session_id: self.sink.session_id().to_owned(),
                            uuid: new_uuid(),
                        }));
                    }
                }
            }
        }
        done
    }

    async fn run_one(
        &self,
        call: &ToolUseBlock,
        input: Value,
        cancel: &CancellationToken,
    ) -> CallResult {
        let mut ctx = self.ctx.with_cancel(cancel.child_token());
        ctx.tool_use_id = Some(std::sync::Arc::from(call.id.as_str()));
        if self.tool_output {
            let sink = self.sink.clone();
            let id = call.id.clone();
            ctx.output = Some(skiff_tools::OutputTap::new(move |text| {
                sink.send(crate::Event::ToolOutput {
                    tool_use_id: id.clone(),
                    text: text.to_owned(),
                });
            }));
        }
        // A sandboxed command's connection to a host not allowed yet is asked about here.
        if self.approver.asks() {
            ctx.network_approver = Some(std::sync::Arc::new(
                crate::permissions::network::AskNetwork {
                    approver: std::sync::Arc::clone(self.approver),
                    requester: self.requester.clone(),
                    mode: self.mode,
                    tool_use_id: call.id.clone(),
                },
            ));
        }
        let started = Instant::now();
        let fut = self.tools.call(&call.name, input.clone(), &ctx);
        let mut output = match std::panic::AssertUnwindSafe(fut).catch_unwind().await {
            Ok(o) => o,
            Err(panic) => {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".to_owned());
                tracing::error!(tool = %call.name, %what, "tool panicked");
                ToolOutput::error(format!(
                    "The {} tool failed unexpectedly: {what}",
                    call.name
                ))
            }
        };
        let event = if output.is_error {
            HookEvent::PostToolUseFailure
        } else {
            HookEvent::PostToolUse
        };
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let hook = fire(
            self.hooks,
            self.sink,
            &self.hook_common,
            event,
            Some(&call.name),
            || {
                let mut f = fields([
                    ("tool_name", call.name.clone().into()),
                    ("tool_input", input.clone()),
                ]);
                if output.is_error {
                    f.insert("tool_use_id".into(), call.id.clone().into());
                    f.insert("error".into(), output_text(&output).into());
                    f.insert("is_interrupt".into(), cancel.is_cancelled().into());
                } else {
                    let response = output
                        .structured
                        .clone()
                        .unwrap_or_else(|| output_text(&output).into());
                    f.insert("tool_response".into(), response);
                    f.insert("tool_use_id".into(), call.id.clone().into());
                }
                f.insert("duration_ms".into(), duration_ms.into());
                f
            },
        )
        .await;
        if let Some(reason) = hook.block {
            append_text(
                &mut output,
                &format!(
                    "{}:{} hook error: {}",
                    event.as_str(),
                    call.name,
                    reason.trim_end()
                ),
            );
        }
        for ctx in &hook.context {
            append_text(&mut output, &reminder(event, "additional context", ctx));
        }
        if let Some(reason) = hook.stop {
            self.stop_run(reason);
        }
        self.truncate(call, &mut output);
        finish(call, output)
    }

    fn truncate(&self, call: &ToolUseBlock, output: &mut ToolOutput) {
        // Blocks (MCP results): their text is cut as one, the images stay after it.
        let (joined, others) = match &output.content {
            ToolResultContent::Text(_) => (None, Vec::new()),
            ToolResultContent::Blocks(blocks) => {
                let texts: Vec<&str> = blocks
                    .iter()
                    .filter_map(|b| match b {
                        ContentBlock::Text(t) => Some(t.text.as_str()),
                        _ => None,
                    })
                    .collect();
                if texts.iter().map(|t| t.len()).sum::<usize>() <= self.max_result_chars {
                    return;
                }
                let others = blocks
                    .iter()
                    .filter(|b| !matches!(b, ContentBlock::Text(_)))
                    .cloned()
                    .collect();
                (Some(texts.join("\n")), others)
            }
        };
        let text = match (&output.content, &joined) {
            (ToolResultContent::Text(t), _) => t.as_str(),
            (_, Some(j)) => j.as_str(),
            _ => return,
        };
        let Some(mut cut) = truncate_result(text, self.max_result_chars, &call.name) else {
            return;
        };
        let total = text.chars().count();
        let saved = self
            .results_dir
            .and_then(|dir| save_whole(dir, &call.id, text));
        if let Some(path) = &saved {
            cut.push_str(&format!(
                "\nThe full output was saved to {}: use Read with offset/limit or Grep on that file \
                 to see the rest.",
                path.display()
            ));
        }
        self.sink.notice(
            "truncation",
            "warning",
            format!(
                "{} output truncated to {} of {} characters{}",
                call.name,
                self.max_result_chars,
                total,
                saved
                    .map(|p| format!(" (full output in {})", p.display()))
                    .unwrap_or_default()
            ),
        );
        output.content = if joined.is_some() {
            let mut blocks = vec![ContentBlock::text(cut)];
            blocks.extend(others);
            ToolResultContent::Blocks(blocks)
        } else {
            ToolResultContent::Text(cut)
        };
    }
}

/// Write a whole tool result to `dir/<tool_use_id>.txt`; None (with a log line) if that fails.
fn save_whole(dir: &Path, tool_use_id: &str, text: &str) -> Option<std::path::PathBuf> {
    let name: String = tool_use_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let path = dir.join(format!("{name}.txt"));
    // The session's directory is created by the first result saved there (mode 0700).
    let written =
        crate::transcript::create_private_dir(dir).and_then(|()| std::fs::write(&path, text));
    match written {
        Ok(()) => Some(path),
        Err(e) => {
            tracing::warn!(error = %e, path = %path.display(), "could not save a truncated tool result");
            None
        }
    }
}

fn append_text(output: &mut ToolOutput, extra: &str) {
    match &mut output.content {
        ToolResultContent::Text(t) => {
            t.push('\n');
            t.push_str(extra);
        }
        ToolResultContent::Blocks(b) => b.push(ContentBlock::text(extra)),
    }
}

/// The text of a result (its text blocks joined), at most 2,000 characters.
fn output_text(output: &ToolOutput) -> String {
    let text = match &output.content {
        ToolResultContent::Text(t) => t.clone(),
        ToolResultContent::Blocks(b) => b
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
    };
    text.chars().take(2_000).collect()
}

/// PreToolUse hooks' context, after the result it goes with.
fn add_context(result: &mut CallResult, context: &[String]) {
    let extra: Vec<String> = context
        .iter()
        .map(|c| reminder(HookEvent::PreToolUse, "additional context", c))
        .collect();
    match &mut result.block.content {
        Some(ToolResultContent::Text(t)) => {
            for e in extra {
                t.push('\n');
                t.push_str(&e);
            }
        }
        Some(ToolResultContent::Blocks(b)) => b.extend(extra.into_iter().map(ContentBlock::text)),
        None => result.block.content = Some(ToolResultContent::Text(extra.join("\n"))),
    }
}

fn finish(call: &ToolUseBlock, output: ToolOutput) -> CallResult {
    CallResult {
        block: ToolResultBlock {
            tool_use_id: call.id.clone(),
            content: Some(output.content),
            is_error: Some(output.is_error),
            cache_control: None,
        },
        structured: output.structured,
        denial: None,
    }
}

fn denied(call: &ToolUseBlock, message: String) -> CallResult {
    let output = match message
        .strip_prefix("<tool_use_error>")
        .and_then(|m| m.strip_suffix("</tool_use_error>"))
    {
        Some(inner) => ToolOutput::tool_use_error(inner),
        None => ToolOutput::error(message),
    };
    let mut r = finish(call, output);
    r.denial = Some(PermissionDenial {
        tool_name: call.name.clone(),
        tool_use_id: call.id.clone(),
        tool_input: call.input.clone(),
    });
    r
}

/// The result of a call that was interrupted before it finished.
pub fn interrupted(call: &ToolUseBlock) -> CallResult {
    CallResult {
        block: ToolResultBlock::text(call.id.clone(), INTERRUPTED, true),
        structured: Some(Value::String(format!("Error: {INTERRUPTED}"))),
        denial: None,
    }
}
