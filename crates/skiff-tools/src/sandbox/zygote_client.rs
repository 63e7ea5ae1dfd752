//! skiff's side of the zygote ([`super::zygote`]): started on a session's first sandboxed
//! command, then asked to run each one. When it cannot be started or has ended, the caller
//! starts a helper of its own, as before (the command is contained either way).
//!
//! `unsafe` here: `pre_exec` in the zygote's start, whose closure only calls `fcntl` (an
//! async-signal-safe system call) on an integer, allocating nothing and taking no lock.
#![allow(unsafe_code)]

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::{self, Read};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::oneshot;

use super::zygote::{self, FD_VAR, HEADER, KILL, READY, RUN};
use super::{HELPER_ARG, NetworkPolicy};

/// How long a starting zygote may take to say it is ready.
const READY_TIMEOUT: Duration = Duration::from_secs(5);

/// The session's zygote, started on first use.
#[derive(Debug)]
pub(crate) struct ZygoteClient {
    helper: PathBuf,
    network: NetworkPolicy,
    state: Mutex<State>,
}

#[derive(Debug)]
enum State {
    NotStarted,
    Up(Arc<Conn>),
    /// It could not be started, or ended: helpers of their own from now on.
    Off,
}

type Waiter = oneshot::Sender<io::Result<ExitStatus>>;

#[derive(Debug)]
struct Conn {
    socket: UnixStream,
    /// Held while one request is written (header, descriptor, payload).
    writing: Mutex<()>,
    pending: Mutex<HashMap<u64, Waiter>>,
    alive: AtomicBool,
    next: AtomicU64,
    /// The zygote process: killed and reaped when the session's runtime goes.
    process: Mutex<tokio::process::Child>,
    /// Its namespaces, for a background command's helper to join ([`super::JOIN_VAR`]).
    join: Option<String>,
}

impl Conn {
    /// A request could not be sent whole: the zygote may be waiting for the rest of it and
    /// can serve nothing more. It is killed (its commands with it); every waiter hears so.
    fn broken(&self) {
        self.alive.store(false, Ordering::SeqCst);
        let _ = lock(&self.process).start_kill();
    }
}

impl ZygoteClient {
    pub(crate) fn new(helper: PathBuf, network: NetworkPolicy) -> Self {
        let state = if super::flag_var(super::NO_ZYGOTE_VAR) {
            State::Off
        } else {
            State::NotStarted
        };
        Self {
            helper,
            network,
            state: Mutex::new(state),
        }
    }

    /// Run what `cmd` (the helper's command line, environment and directory, as it would be
    /// spawned) describes in the zygote, its output to `out`. `None` when there is no zygote:
    /// the command was not started, so the caller starts the helper itself.
    pub(crate) fn run(
        &self,
        cmd: &tokio::process::Command,
        out: &OwnedFd,
    ) -> Option<io::Result<ZygoteChild>> {
        let conn = self.conn()?;
        let cmd = cmd.as_std();
        let mut args = cmd.get_args();
        if args.next().is_none_or(|a| a != HELPER_ARG) {
            return None;
        }
        let args: Vec<OsString> = args.map(OsString::from).collect();
        let cwd = cmd.get_current_dir().map_or_else(
            || std::env::current_dir().unwrap_or_default(),
            PathBuf::from,
        );
        let env = final_env(cmd);
        let id = conn.next.fetch_add(1, Ordering::Relaxed);
        let payload = zygote::run_payload(id, &cwd, &args, &env);
        // The command's exit code comes on this pipe first (see [`zygote`]'s docs); without it
        // (no runtime to wait on it here), the zygote's reply alone tells.
        let (end, end_tx) = end_pipe().unzip();
        let (tx, rx) = oneshot::channel();
        lock(&conn.pending).insert(id, tx);
        let sent = {
            let fds: Vec<_> = std::iter::once(out.as_fd())
                .chain(end_tx.as_ref().map(AsFd::as_fd))
                .collect();
            let _writing = lock(&conn.writing);
            zygote::send(&conn.socket, RUN, &payload, &fds)
        };
        // Only the command's PID 1 writes on it: its end of file means that one is gone.
        drop(end_tx);
        if let Err(e) = sent {
            // Not started (the zygote reads a whole request before it forks).
            lock(&conn.pending).remove(&id);
            conn.broken();
            tracing::warn!(error = %e, "the sandbox's zygote is gone; starting helpers instead");
            *lock(&self.state) = State::Off;
            return None;
        }
        Some(Ok(ZygoteChild {
            id,
            conn,
            exit: Some(rx),
            end: end.map(EndPipe::new),
            status: None,
        }))
    }

    /// What a background command's helper needs to join the session's namespaces
    /// ([`super::JOIN_VAR`]); the zygote is started for it if it is not running yet.
    pub(crate) fn join_spec(&self) -> Option<String> {
        self.conn()?.join.clone()
    }

    /// The running zygote, started now if this is the first command.
    fn conn(&self) -> Option<Arc<Conn>> {
        let mut state = lock(&self.state);
        match &*state {
            State::Up(conn) if conn.alive.load(Ordering::SeqCst) => return Some(Arc::clone(conn)),
            State::Up(_) | State::Off => {
                *state = State::Off;
                return None;
            }
            State::NotStarted => {}
        }
        match self.start() {
            Ok(conn) => {
                *state = State::Up(Arc::clone(&conn));
                Some(conn)
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot start the sandbox's zygote; starting helpers instead");
                *state = State::Off;
                None
            }
        }
    }

    fn start(&self) -> io::Result<Arc<Conn>> {
        let (ours, theirs) = UnixStream::pair()?;
        let fd = theirs.as_raw_fd();
        let mut cmd = tokio::process::Command::new(&self.helper);
        cmd.arg(HELPER_ARG)
            .arg(zygote::ARG)
            .arg("--network")
            .arg(self.network.to_string())
            .env(FD_VAR, fd.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        super::lifeline::attach(&mut cmd);
        // SAFETY: see the module docs; `fcntl(F_SETFD)` is async-signal-safe.
        unsafe {
            cmd.pre_exec(move || {
                if libc::fcntl(fd, libc::F_SETFD, 0) == -1 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let process = cmd.spawn()?;
        drop(theirs);
        let pid = process
            .id()
            .filter(|_| self.network != NetworkPolicy::Allow);
        let mut ready = [0u8; 1];
        ours.set_read_timeout(Some(READY_TIMEOUT))?;
        (&ours).read_exact(&mut ready)?;
        if ready[0] != READY {
            return Err(io::Error::other("the zygote did not say it was ready"));
        }
        ours.set_read_timeout(None)?;
        // Taken now that the zygote is ready, so they are the session's, not skiff's.
        let join = pid.and_then(|pid| {
            use std::os::unix::fs::MetadataExt;
            let ino = |ns: &str| std::fs::metadata(format!("/proc/{pid}/ns/{ns}")).ok();
            Some(format!(
                "{pid}:{}:{}",
                ino("user")?.ino(),
                ino("net")?.ino()
            ))
        });
        // A zygote that stops reading (stopped, stuck) must not hold a Bash call forever.
        ours.set_write_timeout(Some(READY_TIMEOUT))?;
        let reader = ours.try_clone()?;
        let conn = Arc::new(Conn {
            socket: ours,
            writing: Mutex::new(()),
            pending: Mutex::new(HashMap::new()),
            alive: AtomicBool::new(true),
            next: AtomicU64::new(1),
            join,
            process: Mutex::new(process),
        });
        let weak = Arc::downgrade(&conn);
        std::thread::Builder::new()
            .name("sandbox-zygote".into())
            .spawn(move || read_replies(reader, &weak))?;
        Ok(conn)
    }
}

/// Until the zygote ends: each reply to its waiter. Then every waiter hears it ended.
fn read_replies(mut socket: UnixStream, conn: &std::sync::Weak<Conn>) {
    let mut reply = [0u8; HEADER];
    while socket.read_exact(&mut reply).is_ok() {
        let Some(conn) = conn.upgrade() else {
            return;
        };
        let (id, status) = reply.split_at(8);
        let id = u64::from_le_bytes(id.try_into().unwrap_or_default());
        let status = i32::from_le_bytes(status[..4].try_into().unwrap_or_default());
        if let Some(waiter) = lock(&conn.pending).remove(&id) {
            let _ = waiter.send(Ok(ExitStatus::from_raw(status)));
        }
    }
    if let Some(conn) = conn.upgrade() {
        conn.alive.store(false, Ordering::SeqCst);
        for (_, waiter) in lock(&conn.pending).drain() {
            let _ = waiter.send(Err(io::Error::other(
                "the sandbox's helper ended before the command did",
            )));
        }
    }
}

/// A pipe for a command's exit code: the read end registered with the runtime, the write end
/// for the command's PID 1 (non-blocking too: four bytes into an empty pipe never wait). Made
/// with its flags in one call, not checked and set afterwards. `None` outside a runtime.
fn end_pipe() -> Option<(tokio::net::unix::pipe::Receiver, OwnedFd)> {
    use nix::fcntl::OFlag;
    tokio::runtime::Handle::try_current().ok()?;
    let (rx, tx) = nix::unistd::pipe2(OFlag::O_CLOEXEC | OFlag::O_NONBLOCK).ok()?;
    // The read end of a new pipe, non-blocking: what `from_owned_fd_unchecked` asks for.
    let rx = tokio::net::unix::pipe::Receiver::from_owned_fd_unchecked(rx).ok()?;
    Some((rx, tx))
}

/// skiff's environment as `cmd` changes it: what the command gets.
fn final_env(cmd: &std::process::Command) -> Vec<(OsString, OsString)> {
    let mut env: std::collections::BTreeMap<OsString, OsString> = std::env::vars_os().collect();
    for (name, value) in cmd.get_envs() {
        match value {
            Some(v) => env.insert(name.to_owned(), v.to_owned()),
            None => env.remove(name),
        };
    }
    env.remove(std::ffi::OsStr::new(super::lifeline::FD_VAR));
    env.remove(std::ffi::OsStr::new(FD_VAR));
    env.into_iter().collect()
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A command the zygote runs: its helper's exit status, or killed on request or when dropped
/// before it ended.
#[derive(Debug)]
pub(crate) struct ZygoteChild {
    id: u64,
    conn: Arc<Conn>,
    exit: Option<oneshot::Receiver<io::Result<ExitStatus>>>,
    /// Where the command's PID 1 writes its exit code; `None` once it said nothing (then the
    /// zygote's reply tells).
    end: Option<EndPipe>,
    status: Option<ExitStatus>,
}

/// The read end of a command's exit-code pipe, and what came on it so far.
#[derive(Debug)]
struct EndPipe {
    pipe: tokio::net::unix::pipe::Receiver,
    code: [u8; 4],
    got: usize,
}

impl EndPipe {
    fn new(pipe: tokio::net::unix::pipe::Receiver) -> Self {
        Self {
            pipe,
            code: [0; 4],
            got: 0,
        }
    }

    /// The exit code, once all of it came; `None` at end of file first (or on an error).
    /// Cancel-safe: what came is kept.
    async fn code(&mut self) -> Option<i32> {
        use tokio::io::AsyncReadExt;
        while self.got < self.code.len() {
            match self.pipe.read(&mut self.code[self.got..]).await {
                Ok(0) | Err(_) => return None,
                Ok(n) => self.got += n,
            }
        }
        Some(i32::from_le_bytes(self.code))
    }
}

impl ZygoteChild {
    /// Wait for the helper to end (cancel-safe).
    pub(crate) async fn wait(&mut self) -> io::Result<ExitStatus> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        let ended = || io::Error::other("the sandbox's helper ended before the command did");
        // A receiver must not be polled again once it has answered.
        let Some(exit) = self.exit.as_mut() else {
            return Err(ended());
        };
        let answer = match self.end.as_mut() {
            Some(end) => tokio::select! {
                biased;
                code = end.code() => match code {
                    // Told before the zygote's reply (which then finds no waiter): everything
                    // of the command has ended, so there is nothing left to kill.
                    Some(code) => {
                        lock(&self.conn.pending).remove(&self.id);
                        Ok(Ok(ExitStatus::from_raw(zygote::exited(code))))
                    }
                    None => {
                        // It ended without a word: the zygote says how.
                        self.end = None;
                        exit.await
                    }
                },
                answer = &mut *exit => answer,
            },
            None => exit.await,
        };
        self.exit = None;
        self.end = None;
        let status = answer.map_err(|_| ended())??;
        self.status = Some(status);
        Ok(status)
    }

    /// Kill the helper, and with it the command's namespace.
    pub(crate) fn kill(&self) {
        if self.exit.is_none() || !self.conn.alive.load(Ordering::SeqCst) {
            return;
        }
        let _writing = lock(&self.conn.writing);
        if zygote::send(&self.conn.socket, KILL, &self.id.to_le_bytes(), &[]).is_err() {
            self.conn.broken();
        }
    }
}

impl Drop for ZygoteChild {
    fn drop(&mut self) {
        self.kill();
    }
}
