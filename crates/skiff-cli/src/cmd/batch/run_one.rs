//! One task from start to result: its checkout, its child skiff, its diff.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::child::{self, Ended, Spec};
use super::command::child_args;
use super::results::{Status, TaskResult};
use super::task::Entry;
use super::worktree;
use crate::args::Args;

/// What every task of a batch shares.
pub struct Ctx {
    /// The batch's own parsed command line (its global flags go to every task).
    pub global: Args,
    /// The flags after `--`, for every task.
    pub flags: Vec<String>,
    /// Where the checkouts go (`<workdir>/<task id>`).
    pub workdir: PathBuf,
    /// Relative local `repo` paths are resolved against this directory.
    pub base: PathBuf,
    /// The skiff binary for the children.
    pub program: PathBuf,
    /// Credentials for the children (never for git).
    pub env: Vec<(String, String)>,
    /// Where the children keep their transcripts.
    pub skiff_home: Option<PathBuf>,
    /// Time limit of a task without its own.
    pub timeout: Option<Duration>,
    /// The batch's interrupt.
    pub stop: CancellationToken,
    /// A second interrupt: no grace period.
    pub kill_now: CancellationToken,
}

/// Run `entry` to its result (never fails: what goes wrong is in the result).
pub async fn run_task(entry: &Entry, ctx: &Ctx) -> TaskResult {
    let started = Instant::now();
    let task = match &entry.task {
        Ok(t) => t,
        Err(bad) => {
            let mut r = TaskResult::bare(bad.id.clone(), entry.index, entry.line, Status::Error);
            r.error = Some(bad.message.clone());
            return r;
        }
    };
    let mut r = TaskResult::bare(
        Some(task.id.clone()),
        entry.index,
        entry.line,
        Status::Error,
    );
    r.repo = Some(skiff_config::settings::redact_url(&task.repo));
    r.git_ref = task.git_ref.clone();
    let fail = |mut r: TaskResult, msg: String| {
        if ctx.stop.is_cancelled() {
            r.status = Status::Interrupted;
        }
        r.error = Some(msg);
        r.duration_ms = millis(started);
        r
    };
    if ctx.stop.is_cancelled() {
        r.status = Status::Interrupted;
        return fail(
            r,
            "the batch was interrupted before the task started".into(),
        );
    }
    let dir = ctx.workdir.join(&task.id);
    let checkout =
        match worktree::prepare(&task.repo, task.git_ref.as_deref(), &ctx.base, &dir).await {
            Ok(c) => c,
            Err(e) => return fail(r, e),
        };
    r.worktree = Some(checkout.dir.clone());
    r.base_commit = Some(checkout.base_commit.clone());
    let args = match child_args(&ctx.global, &ctx.flags, task, &checkout.dir) {
        Ok(a) => a,
        Err(e) => return fail(r, format!("line {}: {e}", entry.line)),
    };
    let timeout = task
        .timeout_secs
        .map(Duration::from_secs_f64)
        .or(ctx.timeout);
    let spec = Spec {
        program: ctx.program.clone(),
        args,
        env: ctx.env.clone(),
        prompt: task.prompt.clone(),
        timeout,
    };
    if ctx.stop.is_cancelled() {
        r.status = Status::Interrupted;
        return fail(
            r,
            "the batch was interrupted before the task started".into(),
        );
    }
    let outcome = match child::run(spec, ctx.stop.clone(), ctx.kill_now.clone()).await {
        Ok(o) => o,
        Err(e) => return fail(r, e),
    };
    r.session_id = outcome.session_id.clone();
    if let Some(frame) = &outcome.result {
        let subtype = frame.get("subtype").and_then(|s| s.as_str()).unwrap_or("");
        r.status = Status::from_subtype(subtype);
        r.result = frame
            .get("result")
            .and_then(|s| s.as_str())
            .map(str::to_owned);
        r.total_cost_usd = frame
            .get("total_cost_usd")
            .and_then(serde_json::Value::as_f64)
            .unwrap_or(0.0);
        r.usage = frame.get("usage").cloned().unwrap_or_default();
        r.num_turns = frame
            .get("num_turns")
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0);
        if let Some(sid) = frame.get("session_id").and_then(|s| s.as_str()) {
            r.session_id = Some(sid.to_owned());
        }
        if r.status != Status::Success {
            r.error = frame
                .get("errors")
                .and_then(|e| e.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|m| m.as_str())
                        .collect::<Vec<_>>()
                        .join("; ")
                })
                .filter(|m| !m.is_empty())
                .or_else(|| r.result.clone());
        }
        // Finished, but not as asked: what it needed was refused.
        r.permission_denials = frame
            .get("permission_denials")
            .and_then(serde_json::Value::as_array)
            .cloned()
            .unwrap_or_default();
        if r.status == Status::Success && !r.permission_denials.is_empty() {
            r.status = Status::PermissionDenied;
            r.error = Some(denied_calls(&r.permission_denials));
        }
    } else {
        r.status = Status::Error;
        let tail = outcome.stderr_tail.trim();
        r.error = Some(match (outcome.exit_code, tail.is_empty()) {
            (Some(c), true) => format!("skiff exited with code {c} without a result"),
            (None, true) => "skiff was killed without a result".to_owned(),
            (_, false) => format!("skiff ended without a result: {tail}"),
        });
    }
    match outcome.ended {
        Ended::Exited => {}
        Ended::TimedOut => {
            r.status = Status::Timeout;
            let secs = timeout.map(|t| t.as_secs_f64()).unwrap_or_default();
            r.error = Some(format!("the task ran past its time limit of {secs} s"));
        }
        Ended::Interrupted => {
            r.status = Status::Interrupted;
            r.error = Some("the batch was interrupted while the task ran".into());
        }
    }
    if let (Some(home), Some(sid)) = (&ctx.skiff_home, &r.session_id) {
        r.transcript = Some(skiff_core::transcript::session_path(
            home,
            &checkout.dir,
            sid,
        ));
    }
    match worktree::diff(&checkout.dir, &checkout.base_commit).await {
        Ok(d) => {
            r.changes = d.changes;
            r.diff = d.diff;
            r.diff_truncated = d.truncated;
        }
        Err(e) => {
            let msg = format!("cannot diff the checkout: {e}");
            r.error = Some(match r.error.take() {
                Some(prev) => format!("{prev}; {msg}"),
                None => msg,
            });
        }
    }
    r.duration_ms = millis(started);
    r
}

/// "2 tool calls were denied: Bash (rm -rf build), Write (src/a.rs)".
fn denied_calls(denials: &[serde_json::Value]) -> String {
    let calls: Vec<String> = denials
        .iter()
        .map(|d| {
            let tool = d
                .get("tool_name")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("a tool");
            let input = d.get("tool_input");
            let what = ["command", "file_path", "notebook_path", "url", "pattern"]
                .iter()
                .find_map(|k| {
                    input
                        .and_then(|i| i.get(*k))
                        .and_then(serde_json::Value::as_str)
                });
            match what {
                Some(w) => {
                    let short: String = w.chars().take(80).collect();
                    format!("{tool} ({short})")
                }
                None => tool.to_owned(),
            }
        })
        .collect();
    format!(
        "{} tool call{} denied: {}",
        calls.len(),
        if calls.len() == 1 { " was" } else { "s were" },
        calls.join(", ")
    )
}

fn millis(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}
