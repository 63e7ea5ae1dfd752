//! Sessions on the command line: which transcript a run writes to (new, `--continue`,
//! `--resume ID`, `--fork-session`, `--session-id`, `--no-session-persistence`), the history a
//! resumed run starts from, and `skiff sessions`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use skiff_core::prompt::EnvironmentInfo;
use skiff_core::store::{NoSession, SessionStore};
use skiff_core::transcript::{
    self, JsonlTranscript, LoadedSession, SessionSummary, TranscriptError, TranscriptMeta,
};
use skiff_protocol::Message;

use crate::args::{Args, OutputFormat};

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
pub fn skiff_home() -> anyhow::Result<PathBuf> {
    transcript::default_skiff_home()
        .context("neither SKIFF_HOME nor HOME is set: cannot tell where sessions are kept")
}

/// Decide the session of this run from the flags, loading the history of a resumed one. `cwd`
/// is the canonical workspace. Warnings about the loaded transcript (a half-written last line,
/// tool calls marked interrupted) are printed on stderr.
pub fn plan_session(
    args: &Args,
    cwd: &Path,
    record: Option<serde_json::Value>,
) -> anyhow::Result<SessionPlan> {
    let resuming = args.resume.is_some() || args.continue_session;
    if args.fork_session && !resuming {
        bail!("--fork-session needs --continue or --resume ID");
    }
    if let Some(id) = &args.session_id {
        if !transcript::is_valid_session_id(id) || uuid::Uuid::parse_str(id).is_err() {
            return Err(crate::setup::UsageError(format!(
                "invalid --session-id {id:?}: it must be a UUID such as 2a7c1a3e-9f3b-4c1d-8e2f-0123456789ab"
            ))
            .into());
        }
        if resuming && !args.fork_session {
            bail!(
                "--session-id can only be used with --continue or --resume if --fork-session is also given"
            );
        }
    }
    let persist = !args.no_session_persistence;
    let home = if resuming {
        Some(skiff_home()?)
    } else if persist {
        // Saving the session must never stop the run.
        skiff_home()
            .inspect_err(|e| eprintln!("Warning: {e:#}; this session is not saved"))
            .ok()
    } else {
        None
    };

    let loaded = match (&home, &args.resume, args.continue_session) {
        (Some(home), Some(id), _) => Some(load_by_id(home, cwd, id)?),
        (Some(home), None, true) => {
            let Some(latest) = transcript::latest_session(home, cwd) else {
                bail!(
                    "No conversation found to continue in {}. {LIST_HINT}",
                    cwd.display()
                );
            };
            Some(load(&latest.path)?)
        }
        _ => None,
    };

    let keep_id = loaded.as_ref().filter(|_| !args.fork_session);
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
        std::env::var("CLAUDE_CODE_ENTRYPOINT")
            .ok()
            .filter(|e| !e.trim().is_empty())
            .unwrap_or_else(|| {
                if args.print || args.input_format == crate::args::InputFormat::StreamJson {
                    "sdk-cli".to_owned()
                } else {
                    "cli".to_owned()
                }
            }),
    );
    let store = JsonlTranscript::new(&path, meta);
    let store = match (&loaded, keep_id) {
        // Resume: same file, the chain continues from its newest line.
        (Some(l), Some(_)) => store.continue_from(l.leaf_uuid.clone()),
        // Fork: the new file starts with the loaded (repaired) history.
        (Some(l), None) => store.with_initial_history(l.messages.clone()),
        (None, _) => store,
    };
    // Created now: the tools' path guard only accepts existing directories.
    let results_dir = transcript::tool_results_dir(&home, cwd, &session_id);
    if let Err(e) = transcript::create_private_dir(&results_dir) {
        eprintln!(
            "Warning: cannot create the session directory {}: {e}; this session is not saved",
            results_dir.display()
        );
        return Ok(unsaved(session_id, history));
    }
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
    args: &Args,
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

fn load_by_id(home: &Path, cwd: &Path, id: &str) -> anyhow::Result<LoadedSession> {
    if id.is_empty() {
        bail!(
            "--resume needs a session id here (choosing from a list is interactive: use /resume in the REPL). {LIST_HINT}"
        );
    }
    match transcript::find_session(home, cwd, id) {
        Ok(path) => load(&path),
        Err(TranscriptError::NotFound { .. }) => {
            bail!("No conversation found with session ID: {id}. {LIST_HINT}")
        }
        Err(e) => Err(anyhow::anyhow!("{e}. {LIST_HINT}")),
    }
}

fn load(path: &Path) -> anyhow::Result<LoadedSession> {
    let loaded = transcript::load_session(path)?;
    for w in &loaded.warnings {
        eprintln!("Warning: {w}");
    }
    Ok(loaded)
}

/// `skiff sessions`: the sessions of this workspace (`--cwd` or the current directory), newest
/// first: id, date, message count and the first prompt. `--output-format json` prints an array.
pub fn run_sessions(args: &Args) -> anyhow::Result<ExitCode> {
    let cwd = match &args.cwd {
        Some(d) => d.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let cwd = std::fs::canonicalize(&cwd)
        .with_context(|| format!("the workspace directory {} does not exist", cwd.display()))?;
    let list = transcript::list_sessions(&skiff_home()?, &cwd);
    let mut out = std::io::stdout().lock();
    let written = if args.output_format == OutputFormat::Text {
        write_sessions(&list, &cwd, &mut out)
    } else {
        write_sessions_json(&list, &mut out)
    };
    match written {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(ExitCode::SUCCESS),
    }
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

/// The listing as a table.
pub fn write_sessions(
    list: &[SessionSummary],
    cwd: &Path,
    out: &mut impl Write,
) -> std::io::Result<()> {
    if list.is_empty() {
        return writeln!(out, "No sessions in {} yet.", cwd.display());
    }
    writeln!(
        out,
        "{:<36}  {:<20}  {:>8}  FIRST PROMPT",
        "ID", "DATE", "MESSAGES"
    )?;
    for s in list {
        writeln!(
            out,
            "{:<36}  {:<20}  {:>8}  {}",
            s.id,
            s.modified_iso(),
            s.message_count,
            one_line(s.first_prompt.as_deref().unwrap_or("(no prompt)"), 60)
        )?;
    }
    writeln!(
        out,
        "\nResume one with `skiff --resume ID`, or the newest with `skiff --continue`."
    )
}

/// The listing as a JSON array.
pub fn write_sessions_json(list: &[SessionSummary], out: &mut impl Write) -> std::io::Result<()> {
    let items: Vec<serde_json::Value> = list
        .iter()
        .map(|s| {
            serde_json::json!({
                "session_id": s.id,
                "path": s.path,
                "modified": s.modified_iso(),
                "message_count": s.message_count,
                "first_prompt": s.first_prompt,
            })
        })
        .collect();
    writeln!(out, "{}", serde_json::Value::Array(items))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    #[test]
    fn listing_formats() {
        assert_eq!(one_line("fix\n  the   bug", 60), "fix the bug");
        assert_eq!(one_line("abcdef", 4), "abc…");
        let list = vec![SessionSummary {
            id: "c9d7e50d-a2d7-4cb9-b6f4-1b7ca93ab4c3".into(),
            path: PathBuf::from("/h/x.jsonl"),
            modified: std::time::UNIX_EPOCH,
            first_prompt: Some("say hi".into()),
            message_count: 4,
        }];
        let mut out = Vec::new();
        write_sessions(&list, Path::new("/w"), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("c9d7e50d-a2d7-4cb9-b6f4-1b7ca93ab4c3  1970-01-01T00:00:00Z"));
        assert!(text.contains("say hi"));
        let mut out = Vec::new();
        write_sessions_json(&list, &mut out).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v[0]["message_count"], 4);
        let mut out = Vec::new();
        write_sessions(&[], Path::new("/w"), &mut out).unwrap();
        assert!(String::from_utf8(out).unwrap().starts_with("No sessions"));
    }
}
