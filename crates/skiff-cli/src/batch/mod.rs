//! `skiff batch TASKS.jsonl`: many tasks, each in its own worktree, N at a time; `--index I`
//! runs one task as a Kubernetes Indexed Job does.

use std::process::ExitCode;

use crate::args::{Args, BatchArgs};

/// `skiff batch …`.
pub fn run_batch(_args: &Args, _batch: &BatchArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("skiff batch is not available yet")
}
