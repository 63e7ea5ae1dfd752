//! A task's own checkout: a `git clone --shared` of a local repository (or a clone of a URL)
//! under the work dir, at the task's ref; afterwards, the diff of everything the task changed.
//!
//! A clone rather than `git worktree add`: each task gets its own `.git` (refs, index, hooks),
//! so tasks sharing a repository cannot see or move each other's branches, and the source
//! repository gets no worktree entries. `--shared` borrows the source's objects, so it is as
//! cheap as a worktree. A dirty source repository does not matter: tasks start from the
//! committed ref, and the source's working tree is never touched.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// At most this much of the whole diff goes into a result (the rest is cut with a notice).
pub const MAX_DIFF_BYTES: usize = 1024 * 1024;
/// At most this much of one file's diff goes into `changes`.
pub const MAX_FILE_DIFF_BYTES: usize = 256 * 1024;

/// A prepared checkout.
#[derive(Debug, Clone)]
pub struct Checkout {
    /// The checkout's directory (canonical).
    pub dir: PathBuf,
    /// The commit it started from.
    pub base_commit: String,
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// Path relative to the checkout.
    pub path: String,
    /// added, modified, deleted or changed (type change).
    pub status: String,
    /// The file's diff against the start commit (cut past MAX_FILE_DIFF_BYTES).
    pub diff: String,
}

/// Everything a task changed.
#[derive(Debug, Clone, Default)]
pub struct Diff {
    /// Per-file changes.
    pub changes: Vec<Change>,
    /// The whole `git diff` against the start commit, new files included.
    pub diff: String,
    /// Whether `diff` (or a file's diff) was cut.
    pub truncated: bool,
}

/// Whether `repo` names a remote repository rather than a local path.
pub fn is_url(repo: &str) -> bool {
    if repo.contains("://") || repo.starts_with("file:") {
        return true;
    }
    // scp-like `user@host:path`
    match (repo.find('@'), repo.find(':'), repo.find('/')) {
        (Some(at), Some(colon), slash) => at < colon && slash.is_none_or(|s| colon < s),
        _ => false,
    }
}

/// Clone `repo` (a local path resolved against `base`, or a URL) into `dir` and check out
/// `git_ref` (default: the repository's HEAD), detached. An existing `dir` (left by an
/// interrupted run) is removed first.
pub async fn prepare(
    repo: &str,
    git_ref: Option<&str>,
    base: &Path,
    dir: &Path,
) -> Result<Checkout, String> {
    let source: std::ffi::OsString = if is_url(repo) {
        repo.into()
    } else {
        let path = base.join(repo);
        if !path.is_dir() {
            return Err(format!(
                "repository {} does not exist or is not a directory",
                path.display()
            ));
        }
        git(Some(&path), ["rev-parse", "--git-dir"])
            .await
            .map_err(|e| format!("{} is not a git repository: {e}", path.display()))?;
        path.into_os_string()
    };
    if std::fs::symlink_metadata(dir).is_ok() {
        std::fs::remove_dir_all(dir)
            .or_else(|_| std::fs::remove_file(dir))
            .map_err(|e| format!("cannot remove the old checkout {}: {e}", dir.display()))?;
    }
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create the work dir {}: {e}", parent.display()))?;
    }
    let mut clone: Vec<&OsStr> = vec![
        "clone".as_ref(),
        "--quiet".as_ref(),
        "--no-checkout".as_ref(),
    ];
    if !is_url(repo) {
        clone.push("--shared".as_ref());
    }
    clone.extend(["--".as_ref(), source.as_os_str(), dir.as_os_str()]);
    git(None, clone).await.map_err(|e| {
        format!(
            "cannot clone {}: {e}",
            skiff_config::settings::redact_url(repo)
        )
    })?;
    let commit = resolve(dir, git_ref).await?;
    git(Some(dir), ["checkout", "--quiet", "--detach", &commit])
        .await
        .map_err(|e| format!("cannot check out {commit}: {e}"))?;
    let dir = dir
        .canonicalize()
        .map_err(|e| format!("cannot resolve {}: {e}", dir.display()))?;
    Ok(Checkout {
        dir,
        base_commit: commit,
    })
}

/// The commit `git_ref` names in the fresh clone `dir`: a commit, a tag, a branch of the
/// source (`origin/<ref>`), or something only a fetch brings (a commit the clone lacks).
async fn resolve(dir: &Path, git_ref: Option<&str>) -> Result<String, String> {
    let Some(r) = git_ref else {
        return git(
            Some(dir),
            ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"],
        )
        .await
        .map(|s| s.trim().to_owned())
        .map_err(|_| "the repository has no commits".to_owned());
    };
    for candidate in [r.to_owned(), format!("origin/{r}")] {
        let spec = format!("{candidate}^{{commit}}");
        if let Ok(sha) = git(Some(dir), ["rev-parse", "--verify", "--quiet", &spec]).await {
            return Ok(sha.trim().to_owned());
        }
    }
    if git(Some(dir), ["fetch", "--quiet", "origin", "--", r])
        .await
        .is_ok()
        && let Ok(sha) = git(
            Some(dir),
            ["rev-parse", "--verify", "--quiet", "FETCH_HEAD^{commit}"],
        )
        .await
    {
        return Ok(sha.trim().to_owned());
    }
    Err(format!("ref {r:?} not found in the repository"))
}

/// The diff of everything changed in `dir` since `base`: edits, new (untracked, not ignored)
/// files, deletions, and anything the task committed.
pub async fn diff(dir: &Path, base: &str) -> Result<Diff, String> {
    // New files become intent-to-add, so `git diff` shows them (this is the task's own index).
    git_touched(dir, ["add", "--all", "--intent-to-add"]).await?;
    let quiet = [
        "-c",
        "core.quotepath=off",
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--no-renames",
    ];
    let names = git_touched(
        dir,
        quiet.iter().copied().chain(["--name-status", "-z", base]),
    )
    .await?;
    let full = git_touched(dir, quiet.iter().copied().chain([base])).await?;
    let mut out = Diff::default();
    let mut fields = names.split('\0').filter(|s| !s.is_empty());
    let chunks = split_diff(&full);
    let mut entries = Vec::new();
    while let (Some(status), Some(path)) = (fields.next(), fields.next()) {
        entries.push((status.to_owned(), path.to_owned()));
    }
    for (i, (status, path)) in entries.iter().enumerate() {
        let file_diff = if chunks.len() == entries.len() {
            chunks[i].to_owned()
        } else {
            git_touched(dir, quiet.iter().copied().chain([base, "--", path])).await?
        };
        let (file_diff, cut) = cap(file_diff, MAX_FILE_DIFF_BYTES);
        out.truncated |= cut;
        out.changes.push(Change {
            path: path.clone(),
            status: status_word(status).to_owned(),
            diff: file_diff,
        });
    }
    let (full, cut) = cap(full, MAX_DIFF_BYTES);
    out.truncated |= cut;
    out.diff = full;
    Ok(out)
}

/// Split a `git diff` into its per-file parts.
fn split_diff(full: &str) -> Vec<&str> {
    let mut starts: Vec<usize> = Vec::new();
    if full.starts_with("diff --git ") {
        starts.push(0);
    }
    starts.extend(full.match_indices("\ndiff --git ").map(|(i, _)| i + 1));
    starts
        .iter()
        .enumerate()
        .map(|(k, &s)| &full[s..starts.get(k + 1).copied().unwrap_or(full.len())])
        .collect()
}

fn status_word(s: &str) -> &'static str {
    match s.chars().next() {
        Some('A') => "added",
        Some('D') => "deleted",
        Some('T') => "changed",
        _ => "modified",
    }
}

/// Cut `s` to at most `max` bytes (at a character boundary) with a notice.
fn cap(mut s: String, max: usize) -> (String, bool) {
    if s.len() <= max {
        return (s, false);
    }
    let mut at = max;
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    s.truncate(at);
    s.push_str("\n[diff truncated]\n");
    (s, true)
}

/// Run git (optionally in `dir`) without a terminal prompt and without running anything the
/// checkout's configuration or attributes name; its stdout, or its stderr as the error. Git
/// never gets the credentials skiff was started with (they are not in this process's
/// environment).
async fn git<I, S>(dir: Option<&Path>, args: I) -> Result<String, String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    run_git(dir, args, false).await
}

/// [`git`] on a checkout a task's commands ran in: git runs nothing the checkout names
/// (fsmonitor, hooks, filters and drivers of `.gitattributes`, pagers, editors), whatever
/// they wrote.
async fn git_touched<I, S>(dir: &Path, args: I) -> Result<String, String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    run_git(Some(dir), args, true).await
}

async fn run_git<I, S>(dir: Option<&Path>, args: I, touched: bool) -> Result<String, String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    use skiff_tools::git_guard::{
        HOST_GIT_CONFIG, HOST_GIT_ENV, HOST_GIT_ENV_REMOVE, attr_source_args,
    };
    let mut cmd = tokio::process::Command::new("git");
    if let Some(d) = dir {
        cmd.arg("-C").arg(d);
    }
    if touched {
        cmd.args(attr_source_args())
            .args(HOST_GIT_CONFIG)
            .envs(HOST_GIT_ENV.iter().copied());
        for name in HOST_GIT_ENV_REMOVE {
            cmd.env_remove(name);
        }
    }
    // Its own process group: a Ctrl-C at the terminal goes to the batch, which decides.
    cmd.args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .process_group(0)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let out = cmd
        .output()
        .await
        .map_err(|e| format!("cannot run git: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        let err = err.trim();
        let tail: String = err
            .chars()
            .rev()
            .take(500)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        Err(if tail.is_empty() {
            format!("git exited with {}", out.status)
        } else {
            tail
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    #[test]
    fn urls_and_paths() {
        assert!(is_url("https://github.com/a/b.git"));
        assert!(is_url("git@github.com:a/b.git"));
        assert!(is_url("file:///srv/repo"));
        assert!(!is_url("/srv/repo"));
        assert!(!is_url("repos/a"));
        assert!(!is_url("./we@ird:dir/x"));
    }

    #[test]
    fn splits_a_diff_per_file_and_caps() {
        let d = "diff --git a/x b/x\n+1\ndiff --git a/y b/y\n+2\n";
        assert_eq!(
            split_diff(d),
            vec!["diff --git a/x b/x\n+1\n", "diff --git a/y b/y\n+2\n"]
        );
        assert!(split_diff("").is_empty());
        let (s, cut) = cap("ééé".into(), 3);
        assert!(cut);
        assert!(s.starts_with('é') && s.ends_with("[diff truncated]\n"));
    }
}
