//! `skiff batch TASKS --index I`: exactly the task at index I (a Kubernetes Indexed Job's
//! `JOB_COMPLETION_INDEX`), its result line on stdout and, with `--results-dir`, in
//! `DIR/<I>.json` (written whole, then renamed into place). A result already there (a retried
//! pod) is printed again instead of running the task twice, unless it was interrupted.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::results::{ResultsFile, Status, TaskResult};
use super::run_one::{Ctx, run_task};
use super::task::Entry;

/// Run the task at `index` of `entries`.
pub async fn run_index(
    index: usize,
    entries: &[Entry],
    results_dir: Option<&Path>,
    out: Option<&Path>,
    ctx: &Ctx,
) -> anyhow::Result<ExitCode> {
    let Some(entry) = entries.get(index) else {
        anyhow::bail!(
            "--index {index} is out of range: the task file has {} task line(s){}",
            entries.len(),
            match entries.len() {
                0 => String::new(),
                n => format!(" (indexes 0 to {})", n - 1),
            }
        );
    };
    let saved = results_dir.map(|d| d.join(format!("{index}.json")));
    if let Some(path) = &saved
        && let Some(prev) = previous(path)
    {
        eprintln!(
            "skiff batch: task {index} already has a result in {}; not running it again",
            path.display()
        );
        print_line(&prev)?;
        return Ok(exit_code(prev.status));
    }
    let r = run_task(entry, ctx).await;
    if let Some(path) = &saved {
        write_whole(path, &r)?;
    }
    if let Some(out) = out {
        ResultsFile::open(out)?.append(&r)?;
    }
    print_line(&r)?;
    Ok(exit_code(r.status))
}

/// 0 for success, 130 for an interrupted task, 1 otherwise (the Job's pod fails, and
/// `backoffLimitPerIndex` decides whether it is retried).
pub fn exit_code(status: Status) -> ExitCode {
    match status {
        Status::Success => ExitCode::SUCCESS,
        Status::Interrupted => ExitCode::from(130),
        _ => ExitCode::FAILURE,
    }
}

fn previous(path: &Path) -> Option<TaskResult> {
    let text = std::fs::read_to_string(path).ok()?;
    let r: TaskResult = serde_json::from_str(text.trim()).ok()?;
    (r.status != Status::Interrupted).then_some(r)
}

fn print_line(r: &TaskResult) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", r.to_line())?;
    out.flush()?;
    Ok(())
}

/// Write the result to a temporary file beside `path`, then rename it into place, so a reader
/// never sees half a result.
fn write_whole(path: &Path, r: &TaskResult) -> anyhow::Result<()> {
    let dir = path
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    std::fs::create_dir_all(&dir)
        .map_err(|e| anyhow::anyhow!("cannot create the results dir {}: {e}", dir.display()))?;
    let mut tmp = tempfile::NamedTempFile::new_in(&dir)
        .map_err(|e| anyhow::anyhow!("cannot write in {}: {e}", dir.display()))?;
    writeln!(tmp, "{}", r.to_line())?;
    tmp.as_file().sync_all()?;
    tmp.persist(path)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    Ok(())
}
