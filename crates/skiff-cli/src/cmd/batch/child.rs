//! Running one task's child `skiff -p --output-format stream-json` in its own process group:
//! the prompt on stdin, the last `result` frame kept from stdout, the end of stderr kept for
//! errors. A time limit or the batch's interrupt sends it SIGINT (skiff stops the turn and
//! writes its result), then SIGKILL to the group after a grace period.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio_util::sync::CancellationToken;

/// How long a child may take to stop after SIGINT before its group is killed.
const GRACE: Duration = Duration::from_secs(10);
/// How much of the child's stderr is kept.
const STDERR_TAIL: usize = 4096;

/// What to run.
pub struct Spec {
    /// The skiff binary.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Extra environment (the credentials the batch process itself no longer has).
    pub env: Vec<(String, String)>,
    /// The prompt, written to stdin.
    pub prompt: String,
    /// Time limit.
    pub timeout: Option<Duration>,
}

/// Why the child stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// It exited by itself.
    Exited,
    /// Its time limit passed.
    TimedOut,
    /// The batch was interrupted.
    Interrupted,
}

/// What came of it.
#[derive(Debug)]
pub struct Outcome {
    /// The last stream-json `result` frame.
    pub result: Option<serde_json::Value>,
    /// The session id of the `system init` frame.
    pub session_id: Option<String>,
    /// The exit code (None when killed by a signal).
    pub exit_code: Option<i32>,
    /// The end of stderr.
    pub stderr_tail: String,
    /// Why it stopped.
    pub ended: Ended,
}

/// Run the child to its end. `stop` is the batch's interrupt; `kill_now` skips the grace
/// period (a second Ctrl-C).
pub async fn run(
    spec: Spec,
    stop: CancellationToken,
    kill_now: CancellationToken,
) -> Result<Outcome, String> {
    let mut cmd = tokio::process::Command::new(&spec.program);
    cmd.args(&spec.args)
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", spec.program.display()))?;
    let pid = child.id().and_then(|p| i32::try_from(p).ok()).unwrap_or(0);
    if let Some(mut stdin) = child.stdin.take() {
        let prompt = spec.prompt;
        tokio::spawn(async move {
            let _ = stdin.write_all(prompt.as_bytes()).await;
            let _ = stdin.shutdown().await;
        });
    }
    let stdout = child.stdout.take();
    let frames = tokio::spawn(async move {
        let mut result = None;
        let mut session_id = None;
        let Some(out) = stdout else {
            return (result, session_id);
        };
        let mut lines = BufReader::new(out).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            // Only the frames the batch needs are parsed.
            let kind = line.get(..40).unwrap_or(&line);
            if !(kind.contains(r#""type":"result""#) || kind.contains(r#""type":"system""#)) {
                continue;
            }
            let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) else {
                continue;
            };
            match v.get("type").and_then(|t| t.as_str()) {
                Some("result") => result = Some(v),
                Some("system") if session_id.is_none() => {
                    session_id = v
                        .get("session_id")
                        .and_then(|s| s.as_str())
                        .map(str::to_owned);
                }
                _ => {}
            }
        }
        (result, session_id)
    });
    let stderr = child.stderr.take();
    let errs = tokio::spawn(async move {
        let mut tail: Vec<u8> = Vec::new();
        let Some(mut err) = stderr else {
            return String::new();
        };
        let mut buf = [0u8; 4096];
        while let Ok(n) = err.read(&mut buf).await {
            if n == 0 {
                break;
            }
            tail.extend_from_slice(&buf[..n]);
            if tail.len() > 2 * STDERR_TAIL {
                tail.drain(..tail.len() - STDERR_TAIL);
            }
        }
        let start = tail.len().saturating_sub(STDERR_TAIL);
        String::from_utf8_lossy(&tail[start..]).into_owned()
    });

    let limit = async {
        match spec.timeout {
            Some(t) => tokio::time::sleep(t).await,
            None => std::future::pending().await,
        }
    };
    let mut ended = Ended::Exited;
    let status = tokio::select! {
        s = child.wait() => s,
        () = limit => {
            ended = Ended::TimedOut;
            stop_child(&mut child, pid, &kill_now).await
        }
        () = stop.cancelled() => {
            ended = Ended::Interrupted;
            stop_child(&mut child, pid, &kill_now).await
        }
    };
    // Anything the child left in its group goes with it.
    if pid > 0 {
        let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
    }
    let (result, session_id) = frames.await.unwrap_or((None, None));
    let stderr_tail = errs.await.unwrap_or_default();
    let exit_code = status.ok().and_then(|s| s.code());
    Ok(Outcome {
        result,
        session_id,
        exit_code,
        stderr_tail,
        ended,
    })
}

/// SIGINT, then wait for the grace period (or a second interrupt), then SIGKILL the group.
async fn stop_child(
    child: &mut tokio::process::Child,
    pid: i32,
    kill_now: &CancellationToken,
) -> std::io::Result<std::process::ExitStatus> {
    if pid > 0 {
        let _ = kill(Pid::from_raw(pid), Signal::SIGINT);
    }
    tokio::select! {
        s = child.wait() => return s,
        () = tokio::time::sleep(GRACE) => {}
        () = kill_now.cancelled() => {}
    }
    if pid > 0 {
        let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
    }
    child.wait().await
}
