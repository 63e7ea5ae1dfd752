//! Which transcript a session writes to (new, `--continue`, `--resume ID`, `--fork-session`,
//! `--session-id`, `--no-session-persistence`), the history a resumed one starts from, and how
//! the run is recorded for `skiff replay`.

#[allow(unused_imports)]
use crate::error::{ConfigError, Result, bail, invalid};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use skiff_core::prompt::EnvironmentInfo;
use skiff_core::store::{NoSession, SessionStore};
use skiff_core::transcript::{
    self, JsonlTranscript, LoadedSession, TranscriptError, TranscriptMeta,
};
use skiff_protocol::Message;

use crate::environment::Environment;
use crate::overrides::Overrides;

/// How to see the sessions that exist (quoted in errors).
const LIST_HINT: &str = "Run `skiff sessions` to list the sessions of this workspace.";

/// The session a run uses.
pub struct SessionPlan {
    /// The session id (reported in every frame; the transcript's name).
    pub session_id: String,
    /// Where the messages go (`NoSession` with `--no-session-persistence`).
    pub store: Arc<dyn SessionStore>,
    /// The conversation to start from (empty for a new session).
    pub history: Vec<Message>,
    /// Where oversized tool results are saved (exists; None without persistence).
    pub tool_results_dir: Option<PathBuf>,
}

/// `SKIFF_HOME`, or `~/.skiff`.
pub fn skiff_home(env: &Environment) -> Result<PathBuf> {
    env.skiff_home().ok_or_else(|| {
        ConfigError::invalid(
            "neither SKIFF_HOME nor HOME is set: cannot tell where sessions are kept",
        )
    })
}

/// Decide the session of this run from the overrides, loading the history of a resumed one.
/// `cwd` is the canonical workspace. Warnings about the loaded transcript (a half-written last
/// line, tool calls marked interrupted) go to `warnings`.
pub fn plan_session(
    overrides: &Overrides,
    env: &Environment,
    cwd: &Path,
    record: Option<serde_json::Value>,
    warnings: &mut Vec<String>,
) -> Result<SessionPlan> {
    let args = &overrides.session;
    let resuming = args.resume.is_some() || args.continue_latest;
    if args.fork && !resuming {
        bail!("--fork-session needs --continue or --resume ID");
    }
    if let Some(id) = &args.session_id {
        if !transcript::is_valid_session_id(id) || uuid::Uuid::parse_str(id).is_err() {
            return Err(ConfigError::Usage(format!(
                "invalid --session-id {id:?}: it must be a UUID such as 2a7c1a3e-9f3b-4c1d-8e2f-0123456789ab"
            )));
        }
        if resuming && !args.fork {
            bail!(
                "--session-id can only be used with --continue or --resume if --fork-session is also given"
            );
        }
    }
    let persist = !args.no_persistence;
    let home = if resuming {
        Some(skiff_home(env)?)
    } else if persist {
        // Saving the session must never stop the run.
        match skiff_home(env) {
            Ok(h) => Some(h),
            Err(e) => {
                warnings.push(format!("Warning: {e}; this session is not saved"));
                None
            }
        }
    } else {
        None
    };

    let loaded = match (&home, &args.resume, args.continue_latest) {
        (Some(home), Some(id), _) => Some(load_by_id(home, cwd, id, warnings)?),
        (Some(home), None, true) => {
            let Some(latest) = transcript::latest_session(home, cwd) else {
                bail!(
                    "No conversation found to continue in {}. {LIST_HINT}",
                    cwd.display()
                );
            };
            Some(load(&latest.path, warnings)?)
        }
        _ => None,
    };

    let keep_id = loaded.as_ref().filter(|_| !args.fork);
    let session_id = match (keep_id, &args.session_id) {
        (Some(l), _) => l.session_id.clone(),
        (None, Some(id)) => id.clone(),
        (None, None) => skiff_core::frames::new_uuid(),
    };
    let history = loaded
        .as_ref()
        .map(|l| l.messages.clone())
        .unwrap_or_default();

    let unsaved = |session_id, history| SessionPlan {
        session_id,
        store: Arc::new(NoSession),
        history,
        tool_results_dir: None,
    };
    let (Some(home), true) = (home, persist) else {
        return Ok(unsaved(session_id, history));
    };
    let path = transcript::session_path(&home, cwd, &session_id);
    if keep_id.is_none() && args.session_id.is_some() && path.exists() {
        bail!(
            "Session ID {session_id} is already in use in this workspace; resume it with --resume {session_id}"
        );
    }
    let mut meta = TranscriptMeta::new(&session_id, cwd);
    meta.git_branch = EnvironmentInfo::detect(cwd, "").git_branch;
    meta.settings = record;
    // As Claude Code records it: the Agent SDK's own name, else how skiff was run.
    meta.entrypoint = Some(
        env.get("CLAUDE_CODE_ENTRYPOINT")
            .filter(|e| !e.trim().is_empty())
            .map_or_else(
                || if args.headless { "sdk-cli" } else { "cli" }.to_owned(),
                str::to_owned,
            ),
    );
    let store = JsonlTranscript::new(&path, meta);
    let store = match (&loaded, keep_id) {
        // Resume: same file, the chain continues from its newest line.
        (Some(l), Some(_)) => store.continue_from(l.leaf_uuid.clone()),
        // Fork: the new file starts with the loaded (repaired) history.
        (Some(l), None) => store.with_initial_history(l.messages.clone()),
        (None, _) => store,
    };
    // The session's own directory and its tool-results directory are created when something
    // is first saved there, not now: two new directories cost about a millisecond before the
    // first request on a well-used ext4 (`mkdir` searches for a free inode). What is checked
    // now: the project directory, where the transcript goes, exists and can be written.
    let project = transcript::project_dir(&home, cwd);
    if let Err(e) = transcript::create_private_dir(&project).and_then(|()| writable(&project)) {
        warnings.push(format!(
            "Warning: cannot create the session directory {}: {e}; this session is not saved",
            project.display()
        ));
        return Ok(unsaved(session_id, history));
    }
    let results_dir = transcript::tool_results_dir(&home, cwd, &session_id);
    Ok(SessionPlan {
        session_id,
        store: Arc::new(store),
        history,
        tool_results_dir: Some(results_dir),
    })
}

/// How this run is set up, as its transcript records it (`skiff_session` line) for
/// `skiff replay`: what the command line chose (settings files stay in the workspace and the
/// user's home, where a replay finds them again) and the commit the workspace was at.
pub fn run_record(
    args: &Overrides,
    model: &str,
    provider: &str,
    permission_mode: &str,
    trusted: bool,
    cwd: &Path,
) -> serde_json::Value {
    // (The branch is on every line already: `gitBranch`.)
    let mut record = serde_json::json!({
        "model": model,
        "provider": provider,
        "permissionMode": permission_mode,
        "trusted": trusted,
        "gitCommit": skiff_core::prompt::git_head_commit(cwd),
    });
    if let Some(obj) = record.as_object_mut() {
        if let Some(tools) = &args.tools {
            obj.insert("tools".into(), tools.clone().into());
        }
        if !args.allowed_tools.is_empty() {
            obj.insert("allowedTools".into(), args.allowed_tools.clone().into());
        }
        if !args.disallowed_tools.is_empty() {
            obj.insert(
                "disallowedTools".into(),
                args.disallowed_tools.clone().into(),
            );
        }
        if let Some(n) = args.max_turns {
            obj.insert("maxTurns".into(), n.into());
        }
        if let Some(agents) = &args.agents {
            obj.insert("agents".into(), agents.clone().into());
        }
    }
    record
}

fn load_by_id(
    home: &Path,
    cwd: &Path,
    id: &str,
    warnings: &mut Vec<String>,
) -> Result<LoadedSession> {
    if id.is_empty() {
        bail!(
            "--resume needs a session id here (choosing from a list is interactive: use /resume in the REPL). {LIST_HINT}"
        );
    }
    match transcript::find_session(home, cwd, id) {
        Ok(path) => load(&path, warnings),
        Err(TranscriptError::NotFound { .. }) => {
            bail!("No conversation found with session ID: {id}. {LIST_HINT}")
        }
        Err(e) => Err(invalid!("{e}. {LIST_HINT}")),
    }
}

fn load(path: &Path, warnings: &mut Vec<String>) -> Result<LoadedSession> {
    let loaded = transcript::load_session(path).map_err(|e| ConfigError::invalid(e.to_string()))?;
    warnings.extend(loaded.warnings.iter().map(|w| format!("Warning: {w}")));
    Ok(loaded)
}

/// Shorten a prompt to one line of at most `max` characters.
pub fn one_line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let cut: String = flat.chars().take(max.saturating_sub(1)).collect();
    format!("{cut}…")
}

/// Whether this process may create files in `dir`.
fn writable(dir: &Path) -> std::io::Result<()> {
    nix::unistd::access(
        dir,
        nix::unistd::AccessFlags::W_OK | nix::unistd::AccessFlags::X_OK,
    )
    .map_err(std::io::Error::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_shortens() {
        assert_eq!(one_line("fix\n  the   bug", 60), "fix the bug");
        assert_eq!(one_line("abcdef", 4), "abc…");
    }
}
