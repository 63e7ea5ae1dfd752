//! Tool dispatch for one assistant turn: permission check, PreToolUse hook, execution (safe calls
//! in parallel, workspace-changing calls one at a time in request order), PostToolUse hook,
//! truncation, progress events. Results always come back in request order.

use std::time::{Duration, Instant};

use futures::FutureExt;
use futures::stream::{FuturesUnordered, StreamExt};
use serde_json::Value;
use skiff_protocol::sdk::{PermissionDenial, SdkMessage, ToolProgressMessage};
use skiff_protocol::{ContentBlock, ToolResultBlock, ToolResultContent, ToolUseBlock};
use skiff_tools::{ToolContext, ToolOutput, ToolRegistry, truncate_result};
use tokio_util::sync::CancellationToken;

use crate::frames::{EventSink, new_uuid};
use crate::hooks::{HookOutcome, HookRunner};
use crate::permissions::{Approver, PermissionChecker, PermissionDecision};

/// Text of the result given to calls that never ran or were cut short by an interrupt.
pub const INTERRUPTED: &str = "[Request interrupted by user for tool use]";

/// What dispatch needs from the agent.
pub struct Dispatcher<'a> {
    /// Tools.
    pub tools: &'a ToolRegistry,
    /// Tool context (workspace, file state, change log).
    pub ctx: &'a ToolContext,
    /// Permission checker.
    pub permissions: &'a dyn PermissionChecker,
    /// Answers "ask".
    pub approver: &'a dyn Approver,
    /// Hooks.
    pub hooks: &'a dyn HookRunner,
    /// Event sink.
    pub sink: &'a EventSink,
    /// Maximum characters of one result.
    pub max_result_chars: usize,
    /// How often running tools report progress.
    pub progress_interval: Duration,
    /// Where results cut by truncation are saved whole (None: not saved).
    pub results_dir: Option<&'a std::path::Path>,
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

impl Dispatcher<'_> {
    /// Run every call of a turn; results in request order. On cancellation, calls still running
    /// are stopped and every call without a result gets an "interrupted" result.
    pub async fn run_all(
        &self,
        calls: &[ToolUseBlock],
        cancel: &CancellationToken,
    ) -> Vec<CallResult> {
        let mut results: Vec<Option<CallResult>> = vec![None; calls.len()];
        let mut i = 0;
        while i < calls.len() {
            if cancel.is_cancelled() {
                break;
            }
            let safe = self.is_safe(&calls[i]);
            let mut j = i + 1;
            if safe {
                while j < calls.len() && self.is_safe(&calls[j]) {
                    j += 1;
                }
            }
            let batch: Vec<usize> = (i..j).collect();
            for (idx, r) in self.run_batch(calls, &batch, cancel).await {
                results[idx] = Some(r);
            }
            i = j;
        }
        results
            .into_iter()
            .zip(calls)
            .map(|(r, call)| r.unwrap_or_else(|| interrupted(call)))
            .collect()
    }

    fn is_safe(&self, call: &ToolUseBlock) -> bool {
        match self.tools.get(&call.name) {
            Some(t) => t.is_concurrency_safe(&call.input),
            None => true, // fails at once without touching anything
        }
    }

    /// Run calls concurrently, emitting progress for those running longer than the interval.
    async fn run_batch(
        &self,
        calls: &[ToolUseBlock],
        batch: &[usize],
        cancel: &CancellationToken,
    ) -> Vec<(usize, CallResult)> {
        let started = Instant::now();
        let mut running: FuturesUnordered<_> = batch
            .iter()
            .map(|&idx| self.run_one(&calls[idx], cancel).map(move |r| (idx, r)))
            .collect();
        let mut done = Vec::with_capacity(batch.len());
        let mut finished = vec![false; calls.len()];
        let mut ticker = tokio::time::interval_at(
            tokio::time::Instant::now() + self.progress_interval,
            self.progress_interval,
        );
        loop {
            tokio::select! {
                next = running.next() => match next {
                    Some((idx, r)) => {
                        finished[idx] = true;
                        done.push((idx, r));
                    }
                    None => break,
                },
                _ = ticker.tick() => {
                    let elapsed = started.elapsed().as_secs_f64();
                    for &idx in batch.iter().filter(|&&i| !finished[i]) {
                        self.sink.emit(SdkMessage::ToolProgress(ToolProgressMessage {
                            tool_use_id: calls[idx].id.clone(),
                            tool_name: calls[idx].name.clone(),
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

    async fn run_one(&self, call: &ToolUseBlock, cancel: &CancellationToken) -> CallResult {
        let tool = self.tools.get(&call.name);
        let read_only = tool.is_some_and(|t| t.is_read_only());
        if tool.is_some() {
            let decision = self
                .permissions
                .check(&call.name, &call.input, read_only)
                .await;
            let denied = match decision {
                PermissionDecision::Allow => None,
                PermissionDecision::Deny { message } => Some(message),
                PermissionDecision::Ask { message } => {
                    if self
                        .approver
                        .approve(&call.name, &call.input, &message)
                        .await
                    {
                        None
                    } else {
                        Some(format!(
                            "Claude requested permissions to use {}, but you haven't granted it yet.",
                            call.name
                        ))
                    }
                }
            };
            if let Some(message) = denied {
                let mut r = finish(call, ToolOutput::error(message));
                r.denial = Some(PermissionDenial {
                    tool_name: call.name.clone(),
                    tool_use_id: call.id.clone(),
                    tool_input: call.input.clone(),
                });
                return r;
            }
            if let HookOutcome::Block { reason } = self
                .hooks
                .pre_tool_use(&call.name, &call.input, &call.id)
                .await
            {
                return finish(
                    call,
                    ToolOutput::error(format!("PreToolUse:{} hook error: {reason}", call.name)),
                );
            }
        }
        let ctx = self.ctx.with_cancel(cancel.child_token());
        let fut = self.tools.call(&call.name, call.input.clone(), &ctx);
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
        if tool.is_some() {
            if let HookOutcome::AddContext(extra) | HookOutcome::Block { reason: extra } = self
                .hooks
                .post_tool_use(&call.name, &call.input, &call.id, &output)
                .await
            {
                append_text(&mut output, &extra);
            }
        }
        self.truncate(call, &mut output);
        finish(call, output)
    }

    fn truncate(&self, call: &ToolUseBlock, output: &mut ToolOutput) {
        let ToolResultContent::Text(text) = &output.content else {
            return;
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
        output.content = ToolResultContent::Text(cut);
    }
}

/// Write a whole tool result to `dir/<tool_use_id>.txt`; None (with a log line) if that fails.
fn save_whole(dir: &std::path::Path, tool_use_id: &str, text: &str) -> Option<std::path::PathBuf> {
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
    let written = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&path, text));
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

/// The result of a call that was interrupted before it finished.
pub fn interrupted(call: &ToolUseBlock) -> CallResult {
    CallResult {
        block: ToolResultBlock::text(call.id.clone(), INTERRUPTED, true),
        structured: Some(Value::String(format!("Error: {INTERRUPTED}"))),
        denial: None,
    }
}
