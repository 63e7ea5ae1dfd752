//! The git that marketplaces and plugins are cloned with: the user's `git`, never prompting
//! (`GIT_TERMINAL_PROMPT=0`), with the transports that run programs (`ext::`, `fd::`) off, no
//! submodules, the URL after `--` so that it is never read as an option. Blocking: callers on
//! an async runtime run these on a blocking thread.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::error::{ConfigError, Result};

/// A `git` command that never prompts and never runs a transport's program.
fn git() -> Command {
    let mut c = Command::new("git");
    c.env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_ASKPASS", "true")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .args([
            "-c",
            "protocol.ext.allow=never",
            "-c",
            "protocol.fd.allow=never",
            "-c",
            "advice.detachedHead=false",
        ])
        .stdin(Stdio::null());
    c
}

/// Run `cmd`; its stderr's last lines in the error, after `what`.
fn run(mut cmd: Command, what: &str) -> Result<String> {
    let out = cmd
        .output()
        .map_err(|e| ConfigError::io(format!("{what}: cannot run git (is it installed?)"), e))?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(3)..].join(" / ");
    Err(ConfigError::invalid(format!("{what}: git failed: {tail}")))
}

/// Clone `url` into `dest` (which must not exist): the branch or tag `git_ref` (default:
/// the remote's default branch), then the commit `sha` when given. Returns the commit checked
/// out.
pub fn clone(url: &str, git_ref: Option<&str>, sha: Option<&str>, dest: &Path) -> Result<String> {
    super::source::check_git_url(url)?;
    if let Some(r) = git_ref {
        check_ref(r)?;
    }
    let what = format!("cloning {url}");
    let mut cmd = git();
    cmd.args(["clone", "--quiet", "--no-recurse-submodules"]);
    if sha.is_none() {
        cmd.args(["--depth", "1"]);
    }
    if let Some(r) = git_ref {
        cmd.args(["--branch", r]);
    }
    cmd.arg("--").arg(url).arg(dest);
    run(cmd, &what)?;
    if let Some(sha) = sha {
        let mut cmd = git();
        cmd.arg("-C")
            .arg(dest)
            .args(["checkout", "--quiet", "--detach", sha, "--"]);
        run(cmd, &format!("{what}: checking out {sha}"))?;
    }
    head(dest)
}

/// The commit checked out in `dir`.
pub fn head(dir: &Path) -> Result<String> {
    let mut cmd = git();
    cmd.arg("-C").arg(dir).args(["rev-parse", "HEAD"]);
    run(cmd, &format!("reading the commit of {}", dir.display()))
}

/// The commit of `dir` when it is the top of a git work tree (a local marketplace kept in
/// git), else `None`.
pub fn head_if_repository(dir: &Path) -> Option<String> {
    if !dir.join(".git").exists() {
        return None;
    }
    head(dir).ok()
}

/// Bring the clone in `dir` to the newest commit of `git_ref` (default: the remote's HEAD).
/// Returns the commit.
pub fn update(dir: &Path, git_ref: Option<&str>) -> Result<String> {
    if let Some(r) = git_ref {
        check_ref(r)?;
    }
    let what = format!("updating {}", dir.display());
    let mut cmd = git();
    cmd.arg("-C")
        .arg(dir)
        .args(["fetch", "--quiet", "--depth", "1", "origin"])
        .arg(git_ref.unwrap_or("HEAD"));
    run(cmd, &what)?;
    let mut cmd = git();
    cmd.arg("-C")
        .arg(dir)
        .args(["reset", "--quiet", "--hard", "FETCH_HEAD"]);
    run(cmd, &what)?;
    head(dir)
}

/// A branch or tag name git cannot take for an option.
fn check_ref(r: &str) -> Result<()> {
    if r.is_empty() || r.starts_with('-') || r.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(ConfigError::invalid(format!(
            "{r:?} is not a branch or tag name"
        )));
    }
    Ok(())
}
