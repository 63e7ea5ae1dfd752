//! `skiff batch TASKS.jsonl`: many tasks, each in its own checkout, N at a time; `--index I`
//! runs one task as a Kubernetes Indexed Job does.
//!
//! Each task runs as a child `skiff -p --output-format stream-json` of this binary in its own
//! process group (own session, workspace and sandbox); this process only supervises, so it
//! stays small.

mod child;
mod command;
mod index;
mod progress;
mod results;
mod run_one;
mod task;
pub(crate) mod worktree;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use self::progress::Progress;
use self::results::{ResultsFile, Status};
use self::run_one::{Ctx, run_task};
use crate::args::{Args, BatchArgs};

/// Tasks at once without `--jobs`.
const DEFAULT_JOBS: usize = 4;

/// `skiff batch …`.
pub fn run_batch(args: &Args, batch: &BatchArgs) -> anyhow::Result<ExitCode> {
    if batch.jobs == Some(0) {
        anyhow::bail!("--jobs must be at least 1");
    }
    if batch.results_dir.is_some() && batch.index.is_none() {
        anyhow::bail!("--results-dir goes with --index (the batch writes --out)");
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| anyhow::anyhow!("could not start the async runtime: {e}"))?;
    runtime.block_on(run(args, batch))
}

async fn run(args: &Args, batch: &BatchArgs) -> anyhow::Result<ExitCode> {
    let entries = task::load(&batch.tasks)?;
    let stop = CancellationToken::new();
    let kill_now = CancellationToken::new();
    watch_signals(stop.clone(), kill_now.clone());
    let workdir = match &batch.workdir {
        Some(w) => w.clone(),
        None if batch.index.is_some() => std::env::temp_dir().join("skiff-batch"),
        None => sibling(&batch.tasks, "work"),
    };
    std::fs::create_dir_all(&workdir)
        .map_err(|e| anyhow::anyhow!("cannot create the work dir {}: {e}", workdir.display()))?;
    let workdir = workdir.canonicalize()?;
    let base = match &args.cwd {
        Some(c) => c.clone(),
        None => std::env::current_dir()?,
    };
    let ctx = Ctx {
        global: args.clone(),
        flags: batch.flags.clone(),
        workdir,
        base,
        program: std::env::current_exe()
            .map_err(|e| anyhow::anyhow!("cannot find the skiff binary to run tasks: {e}"))?,
        env: child_credentials(),
        skiff_home: skiff_config::settings::skiff_home(),
        timeout: batch.timeout.map(Duration::from_secs_f64),
        stop,
        kill_now,
    };
    if let Some(i) = batch.index {
        return index::run_index(
            i,
            &entries,
            batch.results_dir.as_deref(),
            batch.out.as_deref(),
            &ctx,
        )
        .await;
    }
    let out = batch
        .out
        .clone()
        .unwrap_or_else(|| sibling(&batch.tasks, "results.jsonl"));
    run_all(
        entries,
        &out,
        batch.jobs.unwrap_or(DEFAULT_JOBS),
        Arc::new(ctx),
    )
    .await
}

/// Run every task not already finished in `out`, `jobs` at a time, appending each result.
async fn run_all(
    entries: Vec<task::Entry>,
    out: &Path,
    jobs: usize,
    ctx: Arc<Ctx>,
) -> anyhow::Result<ExitCode> {
    let done = results::finished(out)?;
    let todo: Vec<task::Entry> = entries
        .into_iter()
        .filter(|e| !done.contains_key(&e.key()))
        .collect();
    let skipped = done.len();
    if skipped > 0 {
        eprintln!(
            "skiff batch: {skipped} task(s) already have a result in {}; running the other {}",
            out.display(),
            todo.len()
        );
    }
    let mut file = ResultsFile::open(out)?;
    let mut progress = Progress::new(todo.len(), std::io::stderr().is_terminal());
    // A rerun's exit status covers the earlier results too.
    let mut any_failed = done.values().any(|s| *s != Status::Success);
    let mut set = JoinSet::new();
    let mut pending = todo.into_iter();
    loop {
        while set.len() < jobs && !ctx.stop.is_cancelled() {
            let Some(entry) = pending.next() else { break };
            if entry.task.is_err() {
                let r = run_task(&entry, &ctx).await;
                any_failed = true;
                file.append(&r)?;
                progress.finished(&r, false);
                continue;
            }
            progress.started();
            let ctx = Arc::clone(&ctx);
            set.spawn(async move { run_task(&entry, &ctx).await });
        }
        let Some(joined) = set.join_next().await else {
            break;
        };
        let r = joined.map_err(|e| anyhow::anyhow!("a task's supervisor failed: {e}"))?;
        any_failed |= r.status != Status::Success;
        file.append(&r)?;
        progress.finished(&r, true);
    }
    progress.clear();
    eprintln!(
        "skiff batch: {}; results in {}",
        progress.summary(),
        out.display()
    );
    Ok(if ctx.stop.is_cancelled() {
        eprintln!("skiff batch: interrupted; run the same command again to run the rest");
        ExitCode::from(130)
    } else if any_failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// `<dir of tasks>/<stem of tasks>.<suffix>`.
fn sibling(tasks: &Path, suffix: &str) -> PathBuf {
    let stem = tasks
        .file_stem()
        .map_or_else(|| "tasks".into(), |s| s.to_string_lossy().into_owned());
    tasks.with_file_name(format!("{stem}.{suffix}"))
}

/// The credentials skiff was started with (removed from this process's environment), for the
/// child skiffs only.
fn child_credentials() -> Vec<(String, String)> {
    let snapshot = crate::env_guard::process_env();
    snapshot
        .into_iter()
        .filter(|(k, _)| {
            crate::env_guard::SECRET_VARS.contains(&k.as_str())
                || (matches!(k.as_str(), "ANTHROPIC_BASE_URL" | "OPENAI_BASE_URL")
                    && std::env::var_os(k).is_none())
        })
        .collect()
}

/// First SIGINT/SIGTERM: start no more tasks, interrupt the running ones; second: kill them.
fn watch_signals(stop: CancellationToken, kill_now: CancellationToken) {
    use tokio::signal::unix::{SignalKind, signal};
    let int = signal(SignalKind::interrupt());
    let term = signal(SignalKind::terminate());
    tokio::spawn(async move {
        let (mut int, mut term) = match (int, term) {
            (Ok(i), Ok(t)) => (i, t),
            _ => {
                tracing::warn!("cannot listen for SIGINT/SIGTERM; Ctrl-C ends the batch at once");
                return;
            }
        };
        loop {
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
            if stop.is_cancelled() {
                eprintln!("\nskiff batch: stopping the running tasks now");
                kill_now.cancel();
                return;
            }
            eprintln!(
                "\nskiff batch: interrupted; stopping the running tasks (again to kill them)"
            );
            stop.cancel();
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_paths_sit_beside_the_task_file() {
        assert_eq!(
            sibling(Path::new("/a/b/tasks.jsonl"), "results.jsonl"),
            PathBuf::from("/a/b/tasks.results.jsonl")
        );
        assert_eq!(sibling(Path::new("t"), "work"), PathBuf::from("t.work"));
    }
}
