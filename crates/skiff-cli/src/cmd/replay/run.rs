//! Running a recording again: the current skiff binary, in print mode with the SDK's
//! stream-json protocol, plays the recorded model turns (`--provider script`) in a workspace;
//! this side sends the recorded prompts one turn at a time, answers its permission prompts as
//! the recorded user did, and collects every tool result.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use anyhow::Context;
use serde_json::{Value, json};
use skiff_protocol::ContentBlock;
use skiff_protocol::control::{
    Allow, CanUseTool, CanUseToolAnswer, ControlFrame, ControlRequest, Deny, Plain,
};
use skiff_protocol::recording::{RecordedInput, Recording};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

use super::export::result_text;

/// How to run a replay.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The skiff binary.
    pub exe: PathBuf,
    /// The script file (with the recorded turns).
    pub script: PathBuf,
    /// The workspace.
    pub cwd: PathBuf,
    /// Pass `--trust` (the user's choice, never the recording's).
    pub trust: bool,
}

/// A tool result the replay produced.
#[derive(Debug, Clone)]
pub struct ObservedResult {
    /// The call's id (the recorded one: the script keeps the ids).
    pub tool_use_id: String,
    /// Its text.
    pub content: String,
    /// Whether it was an error.
    pub is_error: bool,
    /// Its structured result.
    pub structured: Option<Value>,
}

/// A permission prompt the replay answered.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Approval {
    /// The call.
    pub tool_use_id: String,
    /// The tool.
    pub tool: String,
    /// `allow` or `deny` (as the recorded user decided).
    pub decision: &'static str,
}

/// What the replay did.
#[derive(Debug, Default)]
pub struct Observed {
    /// Tool results, in the order they came.
    pub results: Vec<ObservedResult>,
    /// Permission prompts and their answers.
    pub approvals: Vec<Approval>,
    /// Model calls made (assistant replies and compactions).
    pub model_calls: usize,
    /// A call was made after the recorded turns ran out.
    pub exhausted: bool,
    /// The `result` frames' texts of failed turns.
    pub errors: Vec<String>,
    /// The end of skiff's stderr (for a run that failed).
    pub stderr_tail: String,
    /// skiff's exit code.
    pub exit_code: Option<i32>,
}

/// The command line of the replaying skiff.
pub fn command_line(recording: &Recording, opts: &RunOptions) -> Vec<String> {
    let mut argv: Vec<String> = [
        "-p",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
        "--permission-prompt-tool",
        "stdio",
        "--no-session-persistence",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    argv.push("--script".into());
    argv.push(opts.script.display().to_string());
    argv.push("--cwd".into());
    argv.push(opts.cwd.display().to_string());
    let settings = &recording.settings;
    let text = |key: &str| settings.get(key).and_then(Value::as_str);
    let list = |key: &str| {
        settings.get(key).and_then(Value::as_array).map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(",")
        })
    };
    if let Some(model) = text("model") {
        argv.extend(["--model".into(), model.to_owned()]);
    }
    if let Some(mode) = text("permissionMode") {
        argv.extend(["--permission-mode".into(), mode.to_owned()]);
    }
    if let Some(tools) = list("tools") {
        argv.extend(["--tools".into(), tools]);
    }
    if let Some(rules) = list("allowedTools").filter(|r| !r.is_empty()) {
        argv.extend(["--allowedTools".into(), rules]);
    }
    if let Some(rules) = list("disallowedTools").filter(|r| !r.is_empty()) {
        argv.extend(["--disallowedTools".into(), rules]);
    }
    if let Some(n) = settings.get("maxTurns").and_then(Value::as_u64) {
        argv.extend(["--max-turns".into(), n.to_string()]);
    }
    if let Some(agents) = text("agents") {
        argv.extend(["--agents".into(), agents.to_owned()]);
    }
    if opts.trust {
        argv.push("--trust".into());
    }
    argv
}

/// Whether a result says the user interrupted the call.
pub fn is_interrupt(content: &str, structured: Option<&serde_json::Value>) -> bool {
    content == skiff_core::conversation::INTERRUPTED
        || structured.and_then(|s| s.get("interrupted")) == Some(&serde_json::Value::Bool(true))
}

/// Whether a recorded error result is a permission the user (or the lack of one) refused.
pub fn is_denial(text: &str) -> bool {
    text.starts_with("The user doesn't want to proceed")
        || (text.starts_with("Claude requested permissions to")
            && text.contains("but you haven't granted it yet"))
}

/// Run the replay (`extra`: more flags for skiff, such as `--settings`).
pub async fn run(
    recording: &Recording,
    opts: &RunOptions,
    extra: &[String],
) -> anyhow::Result<Observed> {
    let mut argv = command_line(recording, opts);
    argv.extend(extra.iter().cloned());
    let mut child = tokio::process::Command::new(&opts.exe)
        .args(&argv)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("cannot run {}", opts.exe.display()))?;
    let (Some(stdin), Some(stdout), Some(mut stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        anyhow::bail!("cannot talk to the replaying skiff (no pipes)");
    };
    let stderr_task = tokio::spawn(async move {
        let mut buf = Vec::new();
        let _ = stderr.read_to_end(&mut buf).await;
        buf
    });

    let mut driver = Driver {
        stdin: Some(stdin),
        inputs: recording.inputs.iter(),
        recording,
        observed: Observed::default(),
        replies: HashSet::new(),
        interrupts: 0,
    };
    driver.send_next().await;
    let mut lines = BufReader::new(stdout).lines();
    while let Some(line) = lines
        .next_line()
        .await
        .context("reading the replay's output")?
    {
        let Ok(frame) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        driver.frame(&frame).await;
    }
    drop(driver.stdin.take());
    let status = child.wait().await.context("waiting for the replay")?;
    let mut observed = driver.observed;
    observed.exit_code = status.code();
    let stderr = stderr_task.await.unwrap_or_default();
    let stderr = String::from_utf8_lossy(&stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    observed.stderr_tail = lines[lines.len().saturating_sub(20)..].join("\n");
    Ok(observed)
}

struct Driver<'a> {
    stdin: Option<tokio::process::ChildStdin>,
    inputs: std::slice::Iter<'a, RecordedInput>,
    recording: &'a Recording,
    observed: Observed,
    /// Assistant message ids seen (a reply may come in several frames).
    replies: HashSet<String>,
    /// Interrupts sent.
    interrupts: usize,
}

impl Driver<'_> {
    async fn write(&mut self, v: &impl serde::Serialize) {
        let Some(stdin) = self.stdin.as_mut() else {
            return;
        };
        let Ok(mut line) = serde_json::to_string(v) else {
            return;
        };
        line.push('\n');
        if stdin.write_all(line.as_bytes()).await.is_err() {
            self.stdin = None;
        }
    }

    /// Send the inputs up to and including the next prompt; close stdin when none is left.
    async fn send_next(&mut self) {
        loop {
            let Some(input) = self.inputs.next() else {
                // Everything was sent: skiff finishes the queued work and exits.
                self.stdin = None;
                return;
            };
            let content = match input {
                RecordedInput::Compact => json!("/compact"),
                RecordedInput::Clear => json!("/clear"),
                RecordedInput::Prompt { content } => match content.as_slice() {
                    [ContentBlock::Text(t)] => json!(t.text),
                    blocks => json!(blocks),
                },
            };
            self.write(&json!({
                "type": "user",
                "message": {"role": "user", "content": content},
                "parent_tool_use_id": null,
                "session_id": "",
            }))
            .await;
            if matches!(input, RecordedInput::Prompt { .. }) {
                return;
            }
        }
    }

    async fn frame(&mut self, frame: &Value) {
        match frame.get("type").and_then(Value::as_str) {
            Some("control_request") => self.control(frame).await,
            Some("assistant") => {
                let id = frame
                    .pointer("/message/id")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if self.replies.insert(id.to_owned()) {
                    self.observed.model_calls += 1;
                }
                self.interrupt_if_recorded(frame).await;
            }
            Some("system")
                if frame.get("subtype").and_then(Value::as_str) == Some("compact_boundary") =>
            {
                self.observed.model_calls += 1;
            }
            Some("user") => self.results(frame),
            Some("result") => {
                if frame.get("is_error").and_then(Value::as_bool) == Some(true) {
                    let text = frame.to_string();
                    if text.contains("script is exhausted") {
                        self.observed.exhausted = true;
                    }
                    let why = frame
                        .get("result")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                        .or_else(|| frame.get("errors").map(Value::to_string))
                        .unwrap_or_else(|| {
                            frame
                                .get("subtype")
                                .and_then(Value::as_str)
                                .unwrap_or("error")
                                .to_owned()
                        });
                    self.observed.errors.push(why);
                }
                self.send_next().await;
            }
            _ => {}
        }
    }

    /// The user interrupted the recorded session while this reply's tool calls ran: do the
    /// same, so that the calls end the same way and the next prompt comes where it came.
    async fn interrupt_if_recorded(&mut self, frame: &Value) {
        let Some(blocks) = frame.pointer("/message/content").and_then(Value::as_array) else {
            return;
        };
        let interrupted = blocks.iter().any(|b| {
            let id = b.get("id").and_then(Value::as_str);
            b.get("type").and_then(Value::as_str) == Some("tool_use")
                && self.recording.results.iter().any(|r| {
                    Some(r.tool_use_id.as_str()) == id
                        && is_interrupt(&r.content, r.structured.as_ref())
                })
        });
        if interrupted {
            self.interrupts += 1;
            let request_id = format!("replay-interrupt-{}", self.interrupts);
            self.write(&ControlFrame::request(
                request_id,
                ControlRequest::Interrupt(Plain::default()),
            ))
            .await;
        }
    }

    fn results(&mut self, frame: &Value) {
        let Some(blocks) = frame.pointer("/message/content").and_then(Value::as_array) else {
            return;
        };
        let results: Vec<skiff_protocol::ToolResultBlock> = blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            .filter_map(|b| serde_json::from_value(b.clone()).ok())
            .collect();
        let structured = frame.get("tool_use_result").filter(|v| !v.is_null());
        let single = results.len() == 1;
        for r in results {
            self.observed.results.push(ObservedResult {
                content: result_text(r.content.as_ref()),
                is_error: r.is_error.unwrap_or(false),
                structured: structured.filter(|_| single).cloned(),
                tool_use_id: r.tool_use_id,
            });
        }
    }

    /// Answer skiff's questions: approvals as the recording says, hook callbacks empty.
    async fn control(&mut self, frame: &Value) {
        let reply = match ControlFrame::from_value(frame.clone()) {
            Ok(ControlFrame::ControlRequest(r)) => match r.request {
                ControlRequest::CanUseTool(call) => {
                    let answer = self.approve(&call);
                    match serde_json::to_value(answer) {
                        Ok(answer) => ControlFrame::success(r.request_id, answer),
                        Err(e) => ControlFrame::error(r.request_id, e.to_string(), None),
                    }
                }
                ControlRequest::HookCallback(_) => ControlFrame::success(r.request_id, json!({})),
                _ => ControlFrame::error(r.request_id, "not supported during a replay", None),
            },
            Ok(_) => return,
            Err(e) => match e.reply() {
                Some(reply) => reply,
                None => return,
            },
        };
        self.write(&reply).await;
    }

    /// A permission prompt: refused when the recorded user refused the call, else allowed
    /// unchanged.
    fn approve(&mut self, call: &CanUseTool) -> CanUseToolAnswer {
        let id = call.tool_use_id.clone().unwrap_or_default();
        let refused = self
            .recording
            .results
            .iter()
            .find(|r| r.tool_use_id == id)
            .filter(|r| r.is_error && is_denial(&r.content));
        let (decision, answer) = match refused {
            Some(r) => (
                "deny",
                CanUseToolAnswer::Deny(Deny {
                    message: Some(r.content.clone()),
                    interrupt: None,
                    extra: Default::default(),
                }),
            ),
            None => (
                "allow",
                CanUseToolAnswer::Allow(Allow {
                    updated_input: Some(call.input.clone()),
                    updated_permissions: None,
                    extra: Default::default(),
                }),
            ),
        };
        self.observed.approvals.push(Approval {
            tool_use_id: id,
            tool: call.tool_name.clone(),
            decision,
        });
        answer
    }
}

/// Write `script` to a private temporary file; removed when the returned guard drops.
pub fn script_file(
    script: &skiff_protocol::script::Script,
) -> anyhow::Result<tempfile::NamedTempFile> {
    let mut file = tempfile::Builder::new()
        .prefix("skiff-replay-")
        .suffix(".json")
        .tempfile()
        .context("cannot create a temporary file for the replay's script")?;
    serde_json::to_writer(&mut file, script).context("cannot write the replay's script")?;
    Ok(file)
}

/// The workspace a replay runs in when the user names it: `--cwd DIR`, else (`--in-place`) the
/// current directory.
pub fn workspace(cwd: Option<&Path>) -> anyhow::Result<PathBuf> {
    let dir = match cwd {
        Some(d) => d.to_path_buf(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    std::fs::canonicalize(&dir)
        .ok()
        .filter(|d| d.is_dir())
        .with_context(|| {
            format!(
                "the workspace {} is not an existing directory",
                dir.display()
            )
        })
}

/// The default workspace of a replay: a fresh checkout of the recorded commit in a temporary
/// directory, cloned from the recorded workspace or the current directory (whichever has the
/// commit), so the recorded calls never run in the user's own checkout. Returns the
/// checkout, the temporary directory that holds it (removed when dropped) and a note for the
/// report.
pub async fn fresh_checkout(
    recording: &Recording,
) -> anyhow::Result<(PathBuf, tempfile::TempDir, String)> {
    let Some(commit) = recording
        .settings
        .get("gitCommit")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty() && c.chars().all(|ch| ch.is_ascii_hexdigit()))
    else {
        anyhow::bail!(
            "the recording names no git commit to check out, so there is no fresh copy of its \
             workspace to replay in; choose one with --cwd DIR (a copy of the workspace), or \
             --in-place to replay in the current directory (its files may be changed)"
        );
    };
    let tmp = tempfile::Builder::new()
        .prefix("skiff-replay-")
        .tempdir()
        .context("cannot create a temporary directory for the replay")?;
    let mut sources: Vec<PathBuf> = Vec::new();
    if !recording.cwd.is_empty() {
        sources.push(PathBuf::from(&recording.cwd));
    }
    sources.extend(std::env::current_dir().ok());
    let mut tried = Vec::new();
    // Local directories only: a recorded "workspace" that reads as a URL is not fetched.
    let local =
        |s: &&PathBuf| s.is_dir() && !crate::cmd::batch::worktree::is_url(&s.to_string_lossy());
    for source in sources.iter().filter(local) {
        let dir = tmp.path().join("workspace");
        match crate::cmd::batch::worktree::prepare(
            &source.to_string_lossy(),
            Some(commit),
            Path::new("/"),
            &dir,
        )
        .await
        {
            Ok(checkout) => {
                let note = format!(
                    "replayed in a fresh checkout of {commit} (from {}) in a temporary \
                     directory, removed afterwards; --cwd DIR or --in-place choose the workspace",
                    source.display()
                );
                return Ok((checkout.dir, tmp, note));
            }
            Err(e) => tried.push(format!("{}: {e}", source.display())),
        }
    }
    anyhow::bail!(
        "cannot check out the recorded commit {commit} for a fresh replay ({}); choose the \
         workspace with --cwd DIR, or --in-place to replay in the current directory",
        if tried.is_empty() {
            "neither the recorded workspace nor the current directory exists".to_owned()
        } else {
            tried.join("; ")
        }
    )
}
