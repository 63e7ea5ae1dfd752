//! Record and replay: `skiff sessions export ID --script` turns a saved session into a model
//! script (the model's side, plus the recording of the user's side and the tool results);
//! `skiff replay ID|FILE` runs it against the current skiff and a workspace and reports where
//! the tool results diverge from the recording (exit 0: none, 1: some, 2: could not replay).

mod compare;
mod export;
pub(crate) mod redact;
mod run;
mod secret_patterns;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use skiff_core::transcript::{self, TranscriptError};
use skiff_protocol::recording::RecordedInput;
use skiff_protocol::script::Script;

use crate::args::{Args, ReplayArgs, SessionsCommand};
use crate::session::UsageError;
use compare::{ModelCalls, Normalizer, Report};
use redact::Redactor;

/// `skiff sessions export …`.
pub fn run_sessions_command(args: &Args, action: &SessionsCommand) -> anyhow::Result<ExitCode> {
    let SessionsCommand::Export { id, script, output } = action;
    if !*script {
        return Err(UsageError(
            "say which export you want: `skiff sessions export ID --script` (the model's turns as a script)".into(),
        )
        .into());
    }
    let path = locate(args, id)?;
    let exported = export::export(&path).map_err(|e| UsageError(format!("{e:#}")))?;
    let mut script = exported.script;
    let redactor = Redactor::from_env(&crate::env_guard::process_env());
    let redactions = redact_script(&mut script, &redactor)?;
    for w in &exported.warnings {
        eprintln!("Warning: {w}");
    }
    let mut json = serde_json::to_string_pretty(&script)?;
    json.push('\n');
    match output {
        Some(file) => std::fs::write(file, &json)
            .with_context(|| format!("cannot write {}", file.display()))?,
        None => {
            let mut out = std::io::stdout().lock();
            if let Err(e) = out.write_all(json.as_bytes()).and_then(|()| out.flush())
                && e.kind() != std::io::ErrorKind::BrokenPipe
            {
                return Err(e.into());
            }
        }
    }
    let recording = script.recording.as_ref();
    let prompts = recording.map_or(0, |r| {
        r.inputs
            .iter()
            .filter(|i| matches!(i, RecordedInput::Prompt { .. }))
            .count()
    });
    eprintln!(
        "Exported session {}: {} model turns, {} tool results, {prompts} prompt{}{}; redacted {redactions} secret{}.",
        recording.map_or("", |r| r.session_id.as_str()),
        script.turns.len(),
        recording.map_or(0, |r| r.results.len()),
        if prompts == 1 { "" } else { "s" },
        output
            .as_ref()
            .map(|f| format!(", to {}", f.display()))
            .unwrap_or_default(),
        if redactions == 1 { "" } else { "s" },
    );
    Ok(ExitCode::SUCCESS)
}

/// Replace the secrets in the whole script (turns and recording); the count.
fn redact_script(script: &mut Script, redactor: &Redactor) -> anyhow::Result<usize> {
    let mut value = serde_json::to_value(&*script)?;
    let mut redactor = redactor.clone();
    redactor.learn(&value);
    let count = redactor.json(&mut value);
    *script = serde_json::from_value(value)?;
    if let Some(r) = script.recording.as_mut() {
        r.redactions = count;
    }
    Ok(count)
}

/// `skiff replay …`: any failure to replay exits 2 (1 means "diverged").
pub fn run_replay(args: &Args, replay: &ReplayArgs) -> anyhow::Result<ExitCode> {
    match replay_inner(args, replay) {
        Ok(code) => Ok(code),
        Err(e) => {
            eprintln!("Error: {e:#}");
            Ok(ExitCode::from(2))
        }
    }
}

fn replay_inner(args: &Args, replay: &ReplayArgs) -> anyhow::Result<ExitCode> {
    if replay.in_place && args.cwd.is_some() {
        return Err(
            UsageError("--in-place and --cwd both say where to replay; give one".into()).into(),
        );
    }
    let mut script = load_script(args, &replay.id)?;
    if script.turns.is_empty() {
        anyhow::bail!("{} has no model turns to replay", replay.id);
    }
    let Some(mut recording) = script.recording.take() else {
        anyhow::bail!(
            "{} is a model script without a recording; export one with `skiff sessions export ID --script`",
            replay.id
        );
    };
    let mut warnings = Vec::new();
    // A recording may come from someone else: its permission mode is not taken.
    let recorded_mode = recording
        .settings
        .as_object_mut()
        .and_then(|s| s.remove("permissionMode"))
        .and_then(|m| m.as_str().map(str::to_owned));
    match &replay.permission_mode {
        Some(mode) => recording.settings["permissionMode"] = mode.clone().into(),
        None => {
            if let Some(mode) = recorded_mode.filter(|m| m != "default") {
                warnings.push(format!(
                    "the recording ran in permission mode {mode}; this replay uses the default \
                     mode (pass --permission-mode {mode} to use it)"
                ));
            }
        }
    }
    if let Some(tools) = &replay.tools {
        let list: Vec<String> = crate::args::split_rules(tools);
        recording.settings["tools"] = list.into();
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let (cwd, checkout) = if args.cwd.is_some() || replay.in_place {
        (run::workspace(args.cwd.as_deref())?, None)
    } else {
        let (cwd, dir, note) = runtime.block_on(run::fresh_checkout(&recording))?;
        warnings.push(note);
        (cwd, Some(dir))
    };
    let exe = std::env::current_exe().context("cannot find skiff's own executable")?;
    let file = run::script_file(&script)?;
    let mut opts = run::RunOptions {
        exe,
        script: file.path().to_path_buf(),
        cwd: cwd.clone(),
        trust: args.trust,
    };
    if recording
        .settings
        .get("trusted")
        .and_then(serde_json::Value::as_bool)
        == Some(true)
        && !args.trust
        && std::env::var_os("SKIFF_TRUST_WORKSPACE").is_none()
    {
        warnings.push(
            "the recording ran in a trusted workspace; without --trust this replay ignores the workspace's hooks, rules and settings".to_owned(),
        );
    }
    opts.trust = args.trust;
    let mut extra = Vec::new();
    if let Some(s) = &args.settings {
        extra.extend(["--settings".to_owned(), s.clone()]);
    }
    if let Some(s) = &args.setting_sources {
        extra.extend(["--setting-sources".to_owned(), s.clone()]);
    }
    let observed = runtime.block_on(run::run(&recording, &opts, &extra))?;
    drop(file);

    let norm = Normalizer::new(
        &recording.cwd,
        &cwd.to_string_lossy(),
        Redactor::from_env(&crate::env_guard::process_env()),
    );
    let (divergences, counts, files) = compare::compare(&script, &recording, &observed, &norm);
    warnings.extend(
        observed
            .errors
            .iter()
            .map(|e| format!("a replayed turn failed: {e}")),
    );
    if observed.exit_code.is_none_or(|c| c != 0) && !observed.stderr_tail.trim().is_empty() {
        warnings.push(format!(
            "skiff exited with {}; its last messages:\n{}",
            observed
                .exit_code
                .map_or_else(|| "a signal".to_owned(), |c| format!("code {c}")),
            observed.stderr_tail
        ));
    }
    let report = Report {
        ok: divergences.is_empty(),
        session_id: recording.session_id.clone(),
        workspace: cwd.display().to_string(),
        recorded_commit: recording
            .settings
            .get("gitCommit")
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned),
        workspace_commit: skiff_core::prompt::git_head_commit(&cwd),
        model_calls: ModelCalls {
            recorded: script.turns.len(),
            replayed: observed.model_calls,
        },
        results: counts,
        first_divergence: divergences.first().cloned(),
        divergences,
        approvals: observed.approvals,
        files_changed: files,
        warnings,
    };
    // The temporary checkout goes (the report names where it was).
    drop(checkout);
    let text = if replay.json {
        let mut t = serde_json::to_string(&report)?;
        t.push('\n');
        t
    } else {
        compare::render(&report)
    };
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush())
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        return Err(e.into());
    }
    Ok(if report.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The script to replay: an exported script file, a transcript file, or a session id.
fn load_script(args: &Args, id: &str) -> anyhow::Result<Script> {
    let as_path = Path::new(id);
    if as_path.is_file() && as_path.extension().is_some_and(|e| e == "json") {
        let text = std::fs::read_to_string(as_path)
            .with_context(|| format!("cannot read {}", as_path.display()))?;
        return serde_json::from_str(&text).map_err(|e| {
            anyhow::anyhow!(
                "{} is not a model script ({e}); export one with `skiff sessions export ID --script`",
                as_path.display()
            )
        });
    }
    let path = locate(args, id)?;
    let exported = export::export(&path)?;
    for w in &exported.warnings {
        eprintln!("Warning: {w}");
    }
    Ok(exported.script)
}

/// The transcript of session `id` (or the transcript file `id`): in this workspace first, then
/// in any workspace's sessions.
fn locate(args: &Args, id: &str) -> anyhow::Result<PathBuf> {
    let as_path = Path::new(id);
    if as_path.is_file() {
        return Ok(as_path.to_path_buf());
    }
    if !transcript::is_valid_session_id(id) {
        return Err(UsageError(format!(
            "{id:?} is neither a session id nor an existing file"
        ))
        .into());
    }
    let home = crate::session::skiff_home()?;
    let cwd = match &args.cwd {
        Some(d) => d.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let cwd = std::fs::canonicalize(&cwd).unwrap_or(cwd);
    match transcript::find_session(&home, &cwd, id) {
        Ok(path) => return Ok(path),
        Err(TranscriptError::NotFound { .. }) => {}
        Err(e) => return Err(UsageError(e.to_string()).into()),
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir(home.join("projects"))
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.path().join(format!("{id}.jsonl")))
        .filter(|p| p.is_file())
        .collect();
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(UsageError(format!(
            "No session with ID {id} (looked in {}). Run `skiff sessions` in the session's workspace to list its sessions.",
            home.join("projects").display()
        ))
        .into()),
        _ => Err(UsageError(format!(
            "the session ID {id} is in several workspaces: {}; pass the transcript's path instead",
            found
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .into()),
    }
}
