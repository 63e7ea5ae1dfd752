//! Background commands (`Bash` with `run_in_background: true`): each runs in its own process
//! group with its output going through a pipe to a bounded file
//! ([`crate::background_output`]); the session's [`BackgroundShells`] knows them, the
//! `TaskOutput` and `TaskStop` tools read and stop them, and every group still running is
//! killed, and every output file removed, when the registry is dropped (the session ended) or,
//! through [`crate::process_guard`], when skiff exits or is killed.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::AsyncReadExt;
use tokio::sync::watch;

use crate::background_output::CappedOutput;

/// Where a background command stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellState {
    /// Still running.
    Running,
    /// The shell exited with this code (128 + signal when a signal ended it).
    Exited(i32),
    /// Stopped by `TaskStop` or at the end of the session.
    Killed,
}

impl ShellState {
    /// Claude Code's status word: running, completed, failed or killed.
    pub fn word(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Exited(0) => "completed",
            Self::Exited(_) => "failed",
            Self::Killed => "killed",
        }
    }
}

/// One background command.
#[derive(Debug)]
pub struct Shell {
    /// Its id (`b` and eight base-36 characters).
    pub id: String,
    /// The command line.
    pub command: String,
    /// The call's description, if it gave one.
    pub description: Option<String>,
    /// The file its stdout and stderr go to.
    pub output_path: PathBuf,
    /// That file, bounded.
    output: Arc<CappedOutput>,
    /// When it started.
    pub started: Instant,
    pgid: i32,
    state: watch::Receiver<ShellState>,
    /// Set before a deliberate kill, so the waiter records `Killed` rather than the signal.
    stopping: std::sync::atomic::AtomicBool,
    /// The end was reported to the model (a `TaskOutput` saw it, or a notice was sent).
    end_reported: std::sync::atomic::AtomicBool,
    /// Its sandbox, checked when it ends (protected paths it created, refused hosts).
    sandbox: Mutex<Option<crate::sandbox::PreparedCall>>,
}

impl Shell {
    /// Run the sandbox's checks once it ended; what they found is appended to its output.
    fn finish_sandbox(&self) {
        let prepared = self.sandbox.lock().ok().and_then(|mut p| p.take());
        let Some(prepared) = prepared else {
            return;
        };
        let notes = prepared.finish(&|_| false);
        if notes.is_empty() {
            return;
        }
        tracing::warn!(task = %self.id, ?notes, "sandbox notes of a background command");
        self.output
            .push(format!("\n{}\n", notes.join("\n")).as_bytes());
    }
}

impl Shell {
    /// Where it stands now.
    pub fn state(&self) -> ShellState {
        *self.state.borrow()
    }

    /// Wait until it ends, at most `timeout`, or until `cancel` fires; returns the state then.
    pub async fn wait(
        &self,
        timeout: Duration,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> ShellState {
        let mut rx = self.state.clone();
        let ended = async {
            // An error means the waiter is gone; the last value is final then.
            let _ = rx.wait_for(|s| *s != ShellState::Running).await;
        };
        tokio::select! {
            () = ended => {},
            () = tokio::time::sleep(timeout) => {},
            () = cancel.cancelled() => {},
        }
        self.state()
    }

    /// The output written since the last call (at most the last `max_bytes` of it, with the
    /// number of bytes skipped), lossily decoded.
    pub fn read_new(&self, max_bytes: u64) -> std::io::Result<(String, u64)> {
        self.output.read_new(max_bytes)
    }

    /// Kill its process group (SIGKILL). Returns false if it had already ended.
    pub fn stop(&self) -> bool {
        if self.state() != ShellState::Running {
            return false;
        }
        self.stopping.store(true, Ordering::SeqCst);
        let _ = killpg(Pid::from_raw(self.pgid), Signal::SIGKILL);
        true
    }

    /// Mark its end as reported; true the first time after it ended.
    pub fn take_end_report(&self) -> bool {
        self.state() != ShellState::Running && !self.end_reported.swap(true, Ordering::SeqCst)
    }
}

/// The background commands of one session.
#[derive(Debug, Default)]
pub struct BackgroundShells {
    shells: Mutex<Vec<Arc<Shell>>>,
}

/// What a background start needs from the Bash tool: the spawned shell (leader of its own
/// process group), the pipe its output comes out of and where that goes.
pub(crate) struct Started {
    pub child: tokio::process::Child,
    pub reader: tokio::net::unix::pipe::Receiver,
    pub output: Arc<CappedOutput>,
    /// Its sandbox, checked when it ends.
    pub sandbox: Option<crate::sandbox::PreparedCall>,
}

impl BackgroundShells {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// All shells, oldest first.
    pub fn list(&self) -> Vec<Arc<Shell>> {
        self.shells.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// The shell with this id.
    pub fn get(&self, id: &str) -> Option<Arc<Shell>> {
        self.list().into_iter().find(|s| s.id == id)
    }

    /// Shells that ended and whose end the model has not heard of yet (each reported once).
    pub fn take_ended(&self) -> Vec<Arc<Shell>> {
        self.list()
            .into_iter()
            .filter(|s| s.take_end_report())
            .collect()
    }

    /// Kill every shell still running.
    pub fn stop_all(&self) {
        for shell in self.list() {
            shell.stop();
        }
    }

    /// Track a started shell: a task waits for it and records how it ended.
    pub(crate) fn adopt(
        &self,
        started: Started,
        id: String,
        command: String,
        description: Option<String>,
    ) -> Arc<Shell> {
        let Started {
            mut child,
            mut reader,
            output,
            sandbox,
        } = started;
        crate::process_guard::delete_at_exit(output.path());
        let pgid = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .unwrap_or(0);
        crate::process_guard::watch(pgid);
        let (tx, rx) = watch::channel(ShellState::Running);
        let shell = Arc::new(Shell {
            id,
            command,
            description,
            output_path: output.path().to_path_buf(),
            output: Arc::clone(&output),
            started: Instant::now(),
            pgid,
            state: rx,
            stopping: Default::default(),
            end_reported: Default::default(),
            sandbox: Mutex::new(sandbox),
        });
        let watched = Arc::clone(&shell);
        tokio::spawn(async move {
            let mut buf = vec![0u8; 64 * 1024];
            let mut eof = false;
            let mut ended = false;
            while !(eof && ended) {
                tokio::select! {
                    status = child.wait(), if !ended => {
                        ended = true;
                        // Everything the shell itself wrote is in the pipe now.
                        drain(&mut reader, &mut buf, &output, &mut eof);
                        let state = if watched.stopping.load(Ordering::SeqCst) {
                            ShellState::Killed
                        } else {
                            match status {
                                Ok(status) => ShellState::Exited(exit_code(status)),
                                Err(_) => ShellState::Exited(-1),
                            }
                        };
                        // What the shell left running in its group goes with it once nobody
                        // can stop it any more: the group is released only when it is empty.
                        if killpg(Pid::from_raw(pgid), None).is_err() {
                            crate::process_guard::release(pgid);
                        }
                        watched.finish_sandbox();
                        output.flush();
                        let _ = tx.send(state);
                    }
                    read = reader.read(&mut buf), if !eof => match read {
                        Ok(0) | Err(_) => eof = true,
                        Ok(n) => output.push(&buf[..n]),
                    },
                }
            }
            output.flush();
        });
        if let Ok(mut shells) = self.shells.lock() {
            shells.push(Arc::clone(&shell));
        }
        shell
    }
}

impl Drop for BackgroundShells {
    fn drop(&mut self) {
        let shells = match self.shells.get_mut() {
            Ok(shells) => std::mem::take(shells),
            Err(poisoned) => std::mem::take(poisoned.into_inner()),
        };
        for shell in shells {
            // Running, or ended but with processes left in its group: the session is over.
            let _ = killpg(Pid::from_raw(shell.pgid), Signal::SIGKILL);
            crate::process_guard::release(shell.pgid);
            shell.finish_sandbox();
            // Nobody can read it any more.
            shell.output.remove();
            crate::process_guard::forget_file(&shell.output_path);
        }
    }
}

/// Read what is in the pipe now, without waiting for more.
fn drain(
    reader: &mut tokio::net::unix::pipe::Receiver,
    buf: &mut [u8],
    output: &CappedOutput,
    eof: &mut bool,
) {
    while !*eof {
        match reader.try_read(buf) {
            Ok(0) => *eof = true,
            Ok(n) => output.push(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
            Err(_) => *eof = true,
        }
    }
}

/// The exit code, or 128 + the signal number when a signal ended the shell (as shells report).
pub(crate) fn exit_code(status: std::process::ExitStatus) -> i32 {
    match (
        status.code(),
        std::os::unix::process::ExitStatusExt::signal(&status),
    ) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        (None, None) => -1,
    }
}

/// A new id: `b` and eight base-36 characters.
pub(crate) fn new_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut x = RandomState::new().hash_one((n, std::process::id(), Instant::now()));
    let mut id = String::from("b");
    for _ in 0..8 {
        let d = (x % 36) as u32;
        x /= 36;
        id.push(char::from_digit(d, 36).unwrap_or('0'));
    }
    id
}

/// The directory for output files: `$TMPDIR/skiff-<uid>/tasks`, private to the user.
pub(crate) fn output_dir() -> std::io::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let uid = nix::unistd::getuid();
    let base = std::env::temp_dir().join(format!("skiff-{uid}"));
    let dir = base.join("tasks");
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)?;
    // Refuse a directory someone else made for us to write into.
    let meta = std::fs::symlink_metadata(&base)?;
    if !meta.is_dir() || std::os::unix::fs::MetadataExt::uid(&meta) != uid.as_raw() {
        return Err(std::io::Error::other(format!(
            "{} is not a directory owned by this user",
            base.display()
        )));
    }
    let _ = std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o700));
    Ok(dir)
}

/// Create the output file for `id` (new, private).
pub(crate) fn create_output(dir: &Path, id: &str) -> std::io::Result<Arc<CappedOutput>> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = dir.join(format!("{id}.output"));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_CLOEXEC)
        .mode(0o600)
        .open(&path)?;
    Ok(Arc::new(CappedOutput::new(path, file)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_distinct_and_shaped() {
        let a = new_id();
        let b = new_id();
        assert_ne!(a, b);
        assert_eq!(a.len(), 9);
        assert!(a.starts_with('b'));
        assert!(a.chars().all(|c| c.is_ascii_alphanumeric()));
    }

    #[test]
    fn state_words() {
        assert_eq!(ShellState::Running.word(), "running");
        assert_eq!(ShellState::Exited(0).word(), "completed");
        assert_eq!(ShellState::Exited(2).word(), "failed");
        assert_eq!(ShellState::Killed.word(), "killed");
    }

    #[test]
    fn exit_codes() {
        assert_eq!(
            exit_code(std::os::unix::process::ExitStatusExt::from_raw(3 << 8)),
            3
        );
        assert_eq!(
            exit_code(std::os::unix::process::ExitStatusExt::from_raw(9)),
            137
        );
    }
}
