//! The Bash tool: runs `bash -c <command>` in the workspace root, in its own process group, with
//! stdout and stderr merged in arrival order, a timeout and cancellation that kill the whole
//! group, bounded memory for huge output, and Claude Code's result texts. With a sandbox
//! configured the command starts as `<helper> __sandbox … -- bash -c <command>` (see
//! [`crate::sandbox`]); everything else is the same.

use std::io;
use std::os::fd::OwnedFd;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use async_trait::async_trait;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use skiff_protocol::ToolResultContent;
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::process::{Child, Command};

use crate::bash_readonly::is_read_only_command;
use crate::context::ToolContext;
use crate::sandbox::{PreparedCall, SandboxConfig};
use crate::tool::{ToolOutput, TypedTool};
use crate::truncate::{group, truncate_middle};

/// How long to keep reading after the shell has exited, for output still in flight from
/// processes it started (a background job keeping the pipe open must not block the call).
const EXIT_GRACE: Duration = Duration::from_millis(200);
/// Read buffer size.
const CHUNK: usize = 64 * 1024;

/// Input of the Bash tool.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashInput {
    /// The command.
    pub command: String,
    /// Milliseconds (default 120000, at most 600000).
    pub timeout: Option<f64>,
    /// What it does, in 5-10 words (shown to the user).
    pub description: Option<String>,
    /// Run in the background.
    pub run_in_background: Option<bool>,
    /// Run outside the sandbox (always asks the user).
    #[serde(rename = "dangerouslyDisableSandbox")]
    pub dangerously_disable_sandbox: Option<bool>,
}

/// The Bash tool.
#[derive(Debug, Default)]
pub struct BashTool;

#[async_trait]
impl TypedTool for BashTool {
    type Input = BashInput;
    const NAME: &'static str = "Bash";
    const SCHEMA: Option<&'static str> = Some(skiff_protocol::compact_json!(include_str!(
        "schemas/Bash.json"
    )));

    fn description(&self) -> &str {
        "Run a shell command (`bash -c`); stdout and stderr come back merged, long output cut \
         in the middle. Each call starts afresh in the workspace root (`cd` and exports do not \
         carry over: chain steps with `&&`). stdin is empty: pass `--yes`, `--no-pager` and \
         the like. `run_in_background` for servers and long jobs returns an id at once \
         (TaskOutput reads it, TaskStop stops it). For files use Read, Grep, Glob, Edit and \
         Write, not cat, grep, find, sed or echo. Quote paths with spaces."
    }

    fn is_read_only(&self) -> bool {
        false
    }

    fn is_concurrency_safe(&self, input: &BashInput) -> bool {
        input.run_in_background != Some(true) && is_read_only_command(&input.command)
    }

    async fn run(&self, input: BashInput, ctx: &ToolContext) -> ToolOutput {
        // A call that asked to leave the sandbox was approved as such (the permission check
        // always asks about it).
        let unsandboxed = input.dangerously_disable_sandbox == Some(true);
        let sandbox = ctx.config.sandbox.as_ref().filter(|_| !unsandboxed);
        if let Some(refused) = sandbox.and_then(|s| s.refused.as_ref()) {
            return ToolOutput::error(refused.clone());
        }
        let prepared = match sandbox {
            Some(s) => match prepare(s, ctx, &input.command).await {
                Ok(p) => Some(p),
                Err(e) => return ToolOutput::error(format!("The command was not run: {e}")),
            },
            None => None,
        };
        if input.run_in_background == Some(true) {
            return start_background(input, ctx, prepared);
        }
        let timeout = effective_timeout(input.timeout, ctx);
        let run = run_command(&input.command, timeout, ctx, prepared.as_ref()).await;
        // The helper could not set the sandbox up (it says so and exits 126): the session's
        // remembered probe answer is forgotten, so the next session probes again.
        if let (Ok(run), Some(p)) = (&run, &prepared)
            && matches!(run.ending, Ending::Exited(s) if s.code() == Some(126))
            && run.output.head.starts_with(b"skiff sandbox: ")
        {
            p.sandbox_failed();
        }
        let notes = prepared
            .map(|p| p.finish(&|path| written_by_tools(ctx, path)))
            .unwrap_or_default();
        let not_found =
            matches!(&run, Ok(r) if matches!(r.ending, Ending::Exited(s) if s.code() == Some(127)));
        let mut output = match run {
            Ok(run) => result_of(run, timeout, ctx.config.bash_max_output_chars, sandbox),
            Err(e) => ToolOutput::error(e),
        };
        if not_found && let ToolResultContent::Text(text) = &mut output.content {
            let path = command_path(ctx).map(|p| p.to_string_lossy().into_owned());
            if let Some(hint) =
                crate::bash_hint::not_found(&input.command, text, ctx.root(), path.as_deref())
            {
                text.push('\n');
                text.push_str(&hint);
            }
        }
        if !notes.is_empty()
            && let ToolResultContent::Text(text) = &mut output.content
        {
            for note in notes {
                text.push_str("\n\n");
                text.push_str(&note);
            }
        }
        output
    }
}

/// The sandbox of one call: through the session's runtime (namespaces, proxy) when there is
/// one, else Landlock and seccomp only.
async fn prepare(
    sandbox: &SandboxConfig,
    ctx: &ToolContext,
    command: &str,
) -> Result<PreparedCall, String> {
    match &sandbox.runtime {
        Some(runtime) => {
            let call = crate::sandbox::CallRequest {
                allowed_dirs: ctx.guard.allowed_dirs(),
                tool_use_id: ctx.tool_use_id.as_deref(),
                network_approver: ctx.network_approver.clone(),
            };
            runtime.prepare(call, command).await
        }
        None => Ok(PreparedCall::landlock_only(
            sandbox.filesystem,
            sandbox.network,
            ctx.guard.allowed_dirs(),
        )),
    }
}

/// Whether skiff's own Write/Edit tools wrote `path` (or something under it) in this run:
/// those files were approved as such and are not undone.
fn written_by_tools(ctx: &ToolContext, path: &std::path::Path) -> bool {
    ctx.changes.changes().iter().any(|c| {
        let changed = std::path::Path::new(&c.path);
        changed == path || changed.starts_with(path)
    })
}

/// Start the command in the background: output to a file, an id returned at once (Claude
/// Code's text), the shell tracked by the session's [`crate::background::BackgroundShells`].
fn start_background(
    input: BashInput,
    ctx: &ToolContext,
    prepared: Option<PreparedCall>,
) -> ToolOutput {
    use crate::background::{Started, create_output, new_id, output_dir};
    if let Err(e) = std::fs::metadata(ctx.root()) {
        return ToolOutput::error(format!(
            "The working directory {} is not available: {e}",
            ctx.root().display()
        ));
    }
    let id = new_id();
    let output = match output_dir().and_then(|dir| create_output(&dir, &id)) {
        Ok(x) => x,
        Err(e) => return ToolOutput::error(format!("Cannot create the output file: {e}")),
    };
    // Through a pipe, so that skiff bounds what reaches the file.
    let (writer, reader) =
        match pipe::pipe().and_then(|(sender, reader)| Ok((sender.into_blocking_fd()?, reader))) {
            Ok(x) => x,
            Err(e) => {
                output.remove();
                return ToolOutput::error(format!("Cannot create a pipe: {e}"));
            }
        };
    // A process of its own (not the zygote's): the background registry owns and reaps it.
    let child =
        spawn_shell(ctx, &input.command, &writer, prepared.as_ref(), false).and_then(|shell| {
            match shell {
                Shell::Process(child) => Ok(child),
                #[cfg(target_os = "linux")]
                Shell::Zygote(_) => Err("Cannot start the command in the background".to_owned()),
            }
        });
    drop(writer);
    let child = match child {
        Ok(child) => child,
        Err(e) => {
            output.remove();
            return ToolOutput::error(e);
        }
    };
    let shell = ctx.background.adopt(
        Started {
            child,
            reader,
            output,
            sandbox: prepared,
        },
        id,
        input.command,
        input.description,
    );
    let text = format!(
        "Command running in background with ID: {}. Output is being written to: {}",
        shell.id,
        shell.output_path.display()
    );
    ToolOutput::text(text).with_structured(json!({
        "stdout": "",
        "stderr": "",
        "interrupted": false,
        "isImage": false,
        "noOutputExpected": false,
        "backgroundTaskId": shell.id,
    }))
}

/// The timeout a call asked for, clamped to the configured maximum; the default when it asked
/// for none (or for zero or less).
fn effective_timeout(requested_ms: Option<f64>, ctx: &ToolContext) -> Duration {
    let max = ctx.config.bash_max_timeout;
    match requested_ms {
        Some(ms) if ms.is_finite() && ms > 0.0 => {
            let capped = (ms / 1000.0).min(max.as_secs_f64());
            Duration::try_from_secs_f64(capped).unwrap_or(max)
        }
        _ => ctx.config.bash_default_timeout.min(max),
    }
}

/// How the command ended.
#[derive(Debug)]
enum Ending {
    /// The shell exited by itself (or was killed by someone else).
    Exited(ExitStatus),
    /// We killed the group when the timeout expired.
    TimedOut,
    /// We killed the group because the call was cancelled.
    Interrupted,
}

/// A finished command: how it ended and its merged output.
#[derive(Debug)]
struct Run {
    ending: Ending,
    output: Output,
}

/// Spawn the command and collect its output until it ends.
async fn run_command(
    command: &str,
    timeout: Duration,
    ctx: &ToolContext,
    prepared: Option<&PreparedCall>,
) -> Result<Run, String> {
    let root = ctx.root();
    // A plain stat: cheaper than a hop to the blocking pool for one syscall.
    if let Err(e) = std::fs::metadata(root) {
        return Err(format!(
            "The working directory {} is not available: {e}",
            root.display()
        ));
    }
    let mut output = Output::new(ctx.config.bash_max_output_chars.saturating_mul(4));
    if ctx.cancel.is_cancelled() {
        return Ok(Run {
            ending: Ending::Interrupted,
            output,
        });
    }
    // One pipe for both streams (like `2>&1`), so output arrives in the order it was written.
    // tokio creates it close-on-exec; the write end is made blocking for the children.
    let (sender, mut reader) = pipe::pipe().map_err(|e| format!("Cannot create a pipe: {e}"))?;
    let writer = sender
        .into_blocking_fd()
        .map_err(|e| format!("Cannot create a pipe: {e}"))?;
    let mut child = spawn_shell(ctx, command, &writer, prepared, true)?;
    // The children hold the only write ends now, so the pipe reaches EOF when they are gone.
    drop(writer);
    let pgid = child.id().and_then(|id| i32::try_from(id).ok());
    // If this future is dropped before the command ends (the turn was dropped or aborted),
    // the whole process group goes with it; if skiff is killed, the process guard kills it.
    let mut group = KillOnDrop(pgid);
    // In a namespace tied to skiff's lifeline the command cannot outlive skiff anyway: no
    // guard (it would cost a bash process and two writes per command).
    let guarded = !prepared.is_some_and(PreparedCall::ends_with_skiff);
    if let Some(pgid) = pgid.filter(|_| guarded) {
        crate::process_guard::watch(pgid);
    }

    // Read into spare capacity (`read_buf`): a zeroed 64 KiB buffer cost a memset per call.
    let mut buf = Vec::with_capacity(CHUNK);
    let mut eof = false;
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let ending = loop {
        tokio::select! {
            status = child.wait() => match status {
                Ok(status) => break Ending::Exited(status),
                Err(e) => {
                    kill_group(pgid);
                    return Err(format!("Cannot wait for the command: {e}"));
                }
            },
            () = &mut deadline => break Ending::TimedOut,
            () = ctx.cancel.cancelled() => break Ending::Interrupted,
            read = reader.read_buf(&mut buf), if !eof => match read {
                Ok(0) | Err(_) => eof = true,
                Ok(_) => {
                    output.push(&buf);
                    if let Some(tap) = &ctx.output {
                        tap.bytes(&buf);
                    }
                    buf.clear();
                }
            },
        }
    };
    if !matches!(ending, Ending::Exited(_)) {
        // The shell has not been reaped, so its pid still names the group: kill all of it.
        kill_group(pgid);
        child.kill();
        let _ = child.wait().await;
    }
    // The shell is gone. In the sandbox, so is everything it started (its namespace ended
    // with it); without one, what it left running in the background stays (as in Claude Code).
    group.disarm();
    if let Some(pgid) = pgid.filter(|_| guarded) {
        crate::process_guard::release(pgid);
    }
    if !eof {
        finish_reading(reader, &mut buf, &mut output).await;
    }
    Ok(Run { ending, output })
}

/// The shell the sandbox helper execs: bash when it is on PATH, else `sh` (the helper cannot
/// fall back by itself once it is confined).
fn sandboxed_shell() -> &'static str {
    let bash = crate::bash_binary::path();
    if std::path::Path::new(bash).is_absolute() {
        bash
    } else {
        "sh"
    }
}

/// A started command: a process skiff spawned, or one the sandbox's zygote runs.
enum Shell {
    Process(Child),
    #[cfg(target_os = "linux")]
    Zygote(crate::sandbox::zygote_client::ZygoteChild),
}

impl Shell {
    /// The process id (and group) of a process skiff spawned.
    fn id(&self) -> Option<u32> {
        match self {
            Self::Process(child) => child.id(),
            #[cfg(target_os = "linux")]
            Self::Zygote(_) => None,
        }
    }

    /// Wait for it to end (cancel-safe).
    async fn wait(&mut self) -> io::Result<ExitStatus> {
        match self {
            Self::Process(child) => child.wait().await,
            #[cfg(target_os = "linux")]
            Self::Zygote(child) => child.wait().await,
        }
    }

    /// End a zygote's command (a process's group is killed by [`kill_group`]).
    fn kill(&self) {
        #[cfg(target_os = "linux")]
        if let Self::Zygote(child) = self {
            child.kill();
        }
    }
}

/// Start the command through the sandbox helper when there is a sandbox (never retried
/// unsandboxed: without the helper the command does not run) — by the session's zygote when
/// `zygote` allows and it runs — else through bash, or `sh` when bash is missing. Errors are
/// the tool's texts.
fn spawn_shell(
    ctx: &ToolContext,
    command: &str,
    writer: &OwnedFd,
    prepared: Option<&PreparedCall>,
    zygote: bool,
) -> Result<Shell, String> {
    match (prepared, &ctx.config.sandbox) {
        (Some(prepared), Some(sandbox)) => spawn(
            ctx,
            sandboxed_shell(),
            command,
            writer,
            Some((sandbox, prepared, zygote)),
        )
        .map_err(|e| {
            format!(
                "Cannot start the sandbox helper {}: {e}",
                sandbox.helper.display()
            )
        }),
        _ => match spawn(ctx, crate::bash_binary::path(), command, writer, None) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                spawn(ctx, "sh", command, writer, None)
            }
            other => other,
        }
        .map_err(|e| format!("Cannot run the command: {e}")),
    }
}

/// `bash -c <command>` (or `sh`) in the workspace root, in a new process group, stdin from
/// /dev/null, stdout and stderr both writing to `writer`, secrets removed from the environment.
/// With a sandbox, the helper runs first and runs the shell.
fn spawn(
    ctx: &ToolContext,
    shell: &str,
    command: &str,
    writer: &OwnedFd,
    sandbox: Option<(&SandboxConfig, &PreparedCall, bool)>,
) -> io::Result<Shell> {
    let mut cmd = match sandbox {
        Some((sandbox, prepared, _)) => {
            let mut cmd = Command::new(&sandbox.helper);
            cmd.args(&prepared.args).arg(shell);
            cmd
        }
        None => Command::new(shell),
    };
    // The settings' `env` first: what the sandbox and skiff set or remove below wins. The
    // sockets a sandboxed command may reach are decided from skiff's own environment.
    for (name, value) in ctx.config.env.vars() {
        if sandbox.is_some() && crate::sandbox::paths::SOCKET_VARS.contains(&name.as_str()) {
            continue;
        }
        cmd.env(name, value);
    }
    let own = std::env::var_os("SHELL");
    if let Some(shell) = default_shell_var(ctx.config.env.get("SHELL"), own.as_deref(), shell) {
        cmd.env("SHELL", shell);
    }
    if let Some((_, prepared, _)) = sandbox {
        for name in &prepared.env_remove {
            cmd.env_remove(name);
        }
        cmd.envs(prepared.env_set.iter().map(|(k, v)| (k, v)));
    }
    cmd.arg("-c")
        .arg(command)
        .current_dir(ctx.root())
        .process_group(0)
        .stdin(Stdio::null())
        .kill_on_drop(false);
    for name in &ctx.config.bash_env_remove {
        cmd.env_remove(name);
    }
    // A base URL with `user:password@` is a credential too.
    let base_url = match ctx.config.env.get("ANTHROPIC_BASE_URL") {
        Some(url) => Some(url.to_owned()),
        None => std::env::var("ANTHROPIC_BASE_URL").ok(),
    };
    if base_url.as_deref().is_some_and(url_has_userinfo) {
        cmd.env_remove("ANTHROPIC_BASE_URL");
    }
    cmd.env("SKIFF", "1").env("CLAUDECODE", "1");
    // git without the programs the repository's own config names (see `git_guard`), on the
    // PATH the command gets.
    if let Some(path) = crate::git_guard::guarded_path(command_path(ctx).as_deref()) {
        cmd.env("PATH", path);
    }
    #[cfg(target_os = "linux")]
    if let Some((_, prepared, true)) = sandbox
        && let Some(zygote) = prepared.zygote()
        && let Some(started) = zygote.run(&cmd, writer)
    {
        return started.map(Shell::Zygote);
    }
    // A background command's helper joins the session's user and network namespaces (and
    // only skiff names them).
    #[cfg(target_os = "linux")]
    cmd.env_remove(crate::sandbox::JOIN_VAR);
    #[cfg(target_os = "linux")]
    if let Some(join) = sandbox
        .as_ref()
        .and_then(|(_, prepared, _)| prepared.zygote())
        .and_then(|z| z.join_spec())
    {
        cmd.env(crate::sandbox::JOIN_VAR, join);
    }
    // Not for the zygote, which is sent `writer` itself.
    cmd.stdout(writer.try_clone()?).stderr(writer.try_clone()?);
    // The namespace ends the moment skiff does, even before the process guard knows it.
    #[cfg(target_os = "linux")]
    if sandbox.is_some() {
        crate::sandbox::lifeline::attach(&mut cmd);
    }
    // `cmd` (and its copies of the write end) is dropped on return.
    spawn_retrying(&mut cmd).map(Shell::Process)
}

/// `SHELL` for a command whose environment has none (neither the settings' `env` nor skiff's:
/// containers, CI, clients that start skiff with a bare environment): the shell that runs it,
/// as a login sets it. Without it bash looks the user up in the password database on every
/// start (in the sandbox: two connects to nscd, each a round trip through the sandbox's socket
/// supervisor, then `/etc/passwd`). Only an absolute path is given.
fn default_shell_var<'a>(
    settings: Option<&str>,
    own: Option<&std::ffi::OsStr>,
    shell: &'a str,
) -> Option<&'a str> {
    let unset = settings.is_none() && own.is_none_or(|v| v.is_empty());
    (unset && std::path::Path::new(shell).is_absolute()).then_some(shell)
}

/// The PATH a command gets (before the git guard's directory): the settings' when they set
/// one, else skiff's.
fn command_path(ctx: &ToolContext) -> Option<std::ffi::OsString> {
    match ctx.config.env.get("PATH") {
        Some(p) => Some(p.into()),
        None => std::env::var_os("PATH"),
    }
}

/// `cmd.spawn()`, tried again a few times on ETXTBSY: a program written a moment ago can be
/// "busy" while another thread's fork still holds its write descriptor (until that child execs).
fn spawn_retrying(cmd: &mut Command) -> io::Result<Child> {
    const ETXTBSY: i32 = 26;
    let mut tries = 0;
    loop {
        match cmd.spawn() {
            Err(e) if e.raw_os_error() == Some(ETXTBSY) && tries < 5 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(5 * tries));
            }
            other => return other,
        }
    }
}

/// Kills a process group when dropped, unless disarmed first.
struct KillOnDrop(Option<i32>);

impl KillOnDrop {
    fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(pgid) = self.0.take() {
            kill_group(Some(pgid));
            crate::process_guard::release(pgid);
        }
    }
}

/// SIGKILL the whole process group; errors (the group is already gone) are ignored.
fn kill_group(pgid: Option<i32>) {
    if let Some(pgid) = pgid {
        let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
    }
}

/// After the shell is gone: read until EOF, but for at most [`EXIT_GRACE`]. If something it
/// started in the background still holds the pipe open, hand the pipe to a detached task that
/// discards what it writes until it closes the pipe, so that process neither blocks on a full
/// pipe nor dies of SIGPIPE (it is left running, as Claude Code leaves it).
async fn finish_reading(mut reader: pipe::Receiver, buf: &mut Vec<u8>, output: &mut Output) {
    let grace = tokio::time::sleep(EXIT_GRACE);
    tokio::pin!(grace);
    loop {
        tokio::select! {
            () = &mut grace => break,
            read = reader.read_buf(buf) => match read {
                Ok(0) | Err(_) => return,
                Ok(_) => {
                    output.push(buf);
                    buf.clear();
                }
            },
        }
    }
    tokio::spawn(async move {
        let mut sink = vec![0u8; CHUNK];
        while let Ok(n) = reader.read(&mut sink).await {
            if n == 0 {
                break;
            }
        }
    });
}

/// Command output with bounded memory: the first `cap` bytes and the last `cap` bytes, plus
/// an estimate of the characters dropped in between.
#[derive(Debug)]
struct Output {
    cap: usize,
    head: Vec<u8>,
    /// Ring of the most recent bytes once `head` is full (at most `2 * cap`, trimmed to `cap`).
    tail: Vec<u8>,
    /// Bytes dropped between `head` and `tail`.
    dropped_bytes: usize,
    /// Characters (UTF-8 lead bytes) among the dropped bytes.
    dropped_chars: usize,
}

impl Output {
    fn new(cap: usize) -> Self {
        Self {
            cap: cap.max(1),
            head: Vec::new(),
            tail: Vec::new(),
            dropped_bytes: 0,
            dropped_chars: 0,
        }
    }

    fn push(&mut self, mut data: &[u8]) {
        if self.head.len() < self.cap {
            let n = (self.cap - self.head.len()).min(data.len());
            self.head.extend_from_slice(&data[..n]);
            data = &data[n..];
        }
        if data.is_empty() {
            return;
        }
        self.tail.extend_from_slice(data);
        // Amortised: let the tail grow to twice the cap, then drop its oldest part.
        if self.tail.len() > 2 * self.cap {
            let excess = self.tail.len() - self.cap;
            self.dropped_bytes += excess;
            self.dropped_chars += self.tail[..excess]
                .iter()
                .filter(|&&b| !is_continuation(b))
                .count();
            self.tail.drain(..excess);
        }
    }

    /// The text shown to the model: lossy UTF-8, trailing newlines trimmed, and at most
    /// `max_chars` characters (head and tail kept, with a marker of what was left out).
    fn text(&self, max_chars: usize) -> String {
        if self.dropped_bytes == 0 {
            let mut all = self.head.clone();
            all.extend_from_slice(&self.tail);
            let text = String::from_utf8_lossy(&all);
            return truncate_middle(trim_newlines(&text), max_chars);
        }
        // Too much to hold: the head and tail buffers each hold at least `max_chars`
        // characters, so cut the same way `truncate_middle` does, counting the dropped part.
        let head_text = String::from_utf8_lossy(&self.head);
        // Continuation bytes at the start belong to a character whose lead byte was dropped
        // (and counted there).
        let skip = self
            .tail
            .iter()
            .take_while(|&&b| is_continuation(b))
            .count();
        let tail_text = String::from_utf8_lossy(&self.tail[skip..]);
        let tail_text = trim_newlines(&tail_text);
        let head_keep = max_chars / 2;
        let tail_keep = max_chars - head_keep;
        let head_total = head_text.chars().count();
        let tail_total = tail_text.chars().count();
        let head_end = head_text
            .char_indices()
            .nth(head_keep)
            .map_or(head_text.len(), |(i, _)| i);
        let tail_start = tail_text
            .char_indices()
            .nth(tail_total.saturating_sub(tail_keep))
            .map_or(tail_text.len(), |(i, _)| i);
        let omitted = head_total.saturating_sub(head_keep)
            + self.dropped_chars
            + tail_total.saturating_sub(tail_keep);
        format!(
            "{}\n\n... [{} characters omitted] ...\n\n{}",
            &head_text[..head_end],
            group(omitted),
            &tail_text[tail_start..]
        )
    }
}

fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

fn trim_newlines(text: &str) -> &str {
    text.trim_end_matches(['\n', '\r'])
}

/// The tool result of a finished command (texts as in PROTOCOL.md §4.2); a failed sandboxed
/// command whose output looks like the sandbox stopped it gets a line saying so.
fn result_of(
    run: Run,
    timeout: Duration,
    max_chars: usize,
    sandbox: Option<&SandboxConfig>,
) -> ToolOutput {
    let text = run.output.text(max_chars);
    let structured = |interrupted: bool| {
        json!({
            "stdout": text,
            "stderr": "",
            "interrupted": interrupted,
            "isImage": false,
            "noOutputExpected": false,
        })
    };
    let with_output = |first: String| {
        if text.is_empty() {
            first
        } else {
            format!("{first}\n{text}")
        }
    };
    match run.ending {
        Ending::Exited(status) => match crate::background::exit_code(status) {
            0 if text.is_empty() => ToolOutput::text("(Bash completed with no output)")
                .with_structured(structured(false)),
            0 => ToolOutput::text(text.clone()).with_structured(structured(false)),
            code => {
                let mut body = with_output(format!("Exit code {code}"));
                if let Some(note) = sandbox.and_then(|s| s.failure_note(&text)) {
                    body.push('\n');
                    body.push_str(&note);
                }
                ToolOutput::error(body)
            }
        },
        Ending::TimedOut => {
            let notice = format!("Command timed out after {}ms", timeout.as_millis());
            let body = if text.is_empty() {
                notice
            } else {
                format!("{text}\n{notice}")
            };
            ToolOutput::error(body)
        }
        Ending::Interrupted => {
            let body = if text.is_empty() {
                "[Command interrupted]".to_owned()
            } else {
                format!("{text}\n[Command interrupted]")
            };
            let mut out = ToolOutput::text(body).with_structured(structured(true));
            out.is_error = true;
            out
        }
    }
}

/// Whether a URL carries `user:password@` (such a URL is a credential).
pub fn url_has_userinfo(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.split(['/', '?', '#'])
        .next()
        .unwrap_or("")
        .contains('@')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_is_given_only_where_the_environment_has_none() {
        use std::ffi::OsStr;
        let bash = "/usr/bin/bash";
        assert_eq!(default_shell_var(None, None, bash), Some(bash));
        assert_eq!(
            default_shell_var(None, Some(OsStr::new("")), bash),
            Some(bash)
        );
        assert_eq!(
            default_shell_var(None, Some(OsStr::new("/bin/zsh")), bash),
            None
        );
        assert_eq!(default_shell_var(Some("/bin/fish"), None, bash), None);
        assert_eq!(default_shell_var(Some(""), None, bash), None);
        // A shell found by name only (no bash on PATH: `sh`) is not named.
        assert_eq!(default_shell_var(None, None, "sh"), None);
    }

    #[test]
    fn output_small_is_kept_whole_and_trimmed() {
        let mut out = Output::new(100);
        out.push(b"hello\n");
        out.push(b"world\n\n");
        assert_eq!(out.text(100), "hello\nworld");
    }

    #[test]
    fn output_bounded_and_counts_dropped() {
        let mut out = Output::new(40);
        let data: Vec<u8> = (0..10_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        for chunk in data.chunks(7) {
            out.push(chunk);
        }
        assert!(out.head.len() <= 40 && out.tail.len() <= 80);
        let text = out.text(10);
        let expected = truncate_middle(&String::from_utf8_lossy(&data), 10);
        assert_eq!(text, expected);
    }

    #[test]
    fn output_multibyte_tail_boundary() {
        let mut out = Output::new(8);
        let data = "é".repeat(1000);
        for chunk in data.as_bytes().chunks(3) {
            out.push(chunk);
        }
        let text = out.text(4);
        assert_eq!(text, truncate_middle(&data, 4));
    }
}
