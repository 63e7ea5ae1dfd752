//! The namespace layer, run by the helper on itself (Linux).
//!
//! The helper (H) unshares a user, mount, PID, IPC and (unless the network is allowed) network
//! namespace, maps its own uid and gid, and forks. The child (C) is PID 1 of the new PID
//! namespace: it dies with H (`PR_SET_PDEATHSIG`, and a pipe whose end of file it watches) and
//! with skiff (its lifeline, [`super::lifeline`], inherited by H at fork),
//! starts a new session (no controlling terminal), builds the mount namespace the [`Mounts`]
//! plan describes (private `/proc`, a minimal `/dev`, protected paths read-only, secrets and
//! sockets covered), brings the loopback interface up and opens the relay's listeners, then
//! restricts itself for good (Landlock, every capability dropped, not dumpable) and starts the
//! command. It reaps every process of the namespace and exits with the command's status when
//! the command's shell ends — and the kernel then kills whatever the command left behind.
//! H waits for C and exits with its status; killing H (skiff's timeout, TaskStop, interrupt,
//! or skiff's own death through the process guard) kills C and so the whole namespace. C waits
//! in one `poll` loop (H's pipe, skiff's lifeline, SIGCHLD, the relay's listeners): it has no
//! thread until a connection comes. The zygote's children ([`super::zygote`]) start as PID 1
//! already and take it from the mount namespace on ([`init_in_zygote_child`]); when their
//! shell ends they end the rest of the namespace themselves and tell the zygote before exiting
//! ([`report_end`]).
//!
//! `unsafe` here, and why it is sound:
//! - `fork`: the helper is single-threaded when it forks (nothing before it starts a thread),
//!   so the child may go on running Rust code.
//! - `prctl(PR_CAPBSET_DROP)`, `prctl(PR_CAP_AMBIENT…)`, `capset`, `setpriority`,
//!   `close_range`, `fcntl(F_GETFD/F_SETFD)`: plain system calls on integers and on a header and
//!   data array that live on the stack for the call.
//! - `ioctl(SIOC[GS]IFFLAGS)`: on a socket this function owns, with a zeroed `ifreq` whose
//!   name is a NUL-terminated copy of `lo`.
#![allow(unsafe_code)]

use std::ffi::OsString;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use nix::fcntl::{OFlag, open};
use nix::mount::{MsFlags, mount};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sched::{CloneFlags, unshare};
use nix::sys::signal::{SigSet, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::stat::Mode;
use nix::sys::statvfs::{FsFlags, statvfs};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::{ForkResult, Pid, fork, getgid, getuid, setsid};

use super::paths::fd_path;
use super::plan::{Mounts, Plan};
use super::{NetworkPolicy, SETUP_FAILED, SandboxMode, writable_paths};

/// What a command's PID 1 started by the zygote says on its report pipe once the command has
/// started (its exit code follows when it ends; see [`super::zygote`]).
pub(super) const STARTED: u8 = b'S';

/// Device nodes the sandbox's `/dev` gets from the host's.
const DEV_NODES: &[&str] = &["null", "zero", "full", "random", "urandom", "tty"];

/// Run `program` in the namespaces `plan` describes; returns the exit status for the helper.
pub(super) fn run(plan: &Plan, program: &OsString, args: &[OsString]) -> ExitCode {
    // Taken first: skiff's lifeline, whose end of file means skiff is gone.
    let lifeline = super::lifeline::take();
    let Some(mounts) = &plan.namespaces else {
        return fail("no namespace plan");
    };
    let joined = match join_session(plan, mounts) {
        Ok(joined) => joined,
        Err(e) => return fail(&e),
    };
    let flags = if joined {
        CloneFlags::CLONE_NEWPID | command_namespaces(plan, mounts, true)
    } else {
        CloneFlags::CLONE_NEWUSER
            | CloneFlags::CLONE_NEWPID
            | command_namespaces(plan, mounts, false)
    };
    let (uid, gid) = (getuid(), getgid());
    if let Err(e) = unshare(flags) {
        return fail(&format!("cannot create namespaces (unshare: {e})"));
    }
    if !joined && let Err(e) = map_ids(uid.as_raw(), gid.as_raw()) {
        return fail(&format!("cannot map the user in its namespace: {e}"));
    }
    let (watch, alive) = match std::io::pipe() {
        Ok(p) => p,
        Err(e) => return fail(&format!("cannot create a pipe: {e}")),
    };
    // SAFETY: single-threaded here (see the module docs).
    match unsafe { fork() } {
        Err(e) => fail(&format!("cannot fork: {e}")),
        Ok(ForkResult::Parent { child }) => {
            drop(watch);
            drop(lifeline);
            let code = wait_for(child);
            drop(alive);
            ExitCode::from(code)
        }
        Ok(ForkResult::Child) => {
            drop(alive);
            let watch = Watch {
                helper: watch,
                skiff: lifeline,
            };
            let new_net = flags.contains(CloneFlags::CLONE_NEWNET);
            let command = Command {
                program,
                args,
                env: None,
            };
            exit_forked(init(plan, mounts, watch, &command, new_net, None, None));
        }
    }
}

/// Enter the session's user and network namespaces when skiff named them
/// ([`super::JOIN_VAR`]) and the command needs no network namespace of its own (the host's
/// network, or forwarded ports); whether it did. A name that does not fit (the zygote gone,
/// its pid another process's) joins nothing; a join half done is an error (the command would
/// otherwise run in the host's network).
fn join_session(plan: &Plan, mounts: &Mounts) -> Result<bool, String> {
    use std::os::unix::fs::MetadataExt;
    let Some(spec) = std::env::var_os(super::JOIN_VAR) else {
        return Ok(false);
    };
    let forwards = mounts.proxy.as_ref().is_some_and(|p| !p.forward.is_empty());
    if plan.network == NetworkPolicy::Allow || forwards {
        return Ok(false);
    }
    let spec = spec.to_string_lossy().into_owned();
    let mut parts = spec.split(':').map(str::parse::<u64>);
    let (Some(Ok(pid)), Some(Ok(user)), Some(Ok(net))) = (parts.next(), parts.next(), parts.next())
    else {
        return Ok(false);
    };
    let open = |ns: &str, ino: u64| {
        std::fs::File::open(format!("/proc/{pid}/ns/{ns}"))
            .ok()
            .filter(|f| f.metadata().is_ok_and(|m| m.ino() == ino))
    };
    let (Some(user), Some(net)) = (open("user", user), open("net", net)) else {
        return Ok(false);
    };
    if nix::sched::setns(&user, CloneFlags::CLONE_NEWUSER).is_err() {
        return Ok(false);
    }
    nix::sched::setns(&net, CloneFlags::CLONE_NEWNET)
        .map_err(|e| format!("cannot enter the session's network namespace: {e}"))?;
    Ok(true)
}

/// Where a zygote's command's PID 1 says how its command went.
pub(super) struct Reports {
    /// To the zygote: [`STARTED`], then the exit code (`i32`, little endian).
    pub(super) zygote: std::io::PipeWriter,
    /// To skiff, when its request came with a pipe: the exit code alone, told first (see
    /// [`super::zygote`]).
    pub(super) skiff: Option<OwnedFd>,
}

/// In a child of the zygote ([`super::zygote`]) that is already PID 1 of a PID namespace of its
/// own, in the session's user namespace (and, when `shared_net`, its private network
/// namespace): create the mount and IPC namespaces (and a network namespace when the session's
/// cannot be shared) and become the command's PID 1, the command getting exactly `env`. `helper`
/// is the pipe whose end of file means the zygote is gone; `report` where the command's exit
/// code is told the moment it is known (see [`report_end`]); `prepared` what a
/// spare set up before the command was known ([`prepare`]). The exit code.
#[allow(clippy::too_many_arguments)]
pub(super) fn init_in_zygote_child(
    plan: &Plan,
    program: &OsString,
    args: &[OsString],
    helper: std::io::PipeReader,
    lifeline: Option<OwnedFd>,
    shared_net: bool,
    env: &[(OsString, OsString)],
    report: Reports,
    prepared: Option<Prepared>,
) -> i32 {
    let fail = |why: &str| i32::from(refused(why));
    let Some(mounts) = &plan.namespaces else {
        return fail("no namespace plan");
    };
    if plan.network == NetworkPolicy::Allow && shared_net {
        return fail("the host's network was asked for in a private network namespace");
    }
    let mut flags = command_namespaces(plan, mounts, shared_net);
    let new_net = flags.contains(CloneFlags::CLONE_NEWNET);
    if prepared.is_some() {
        flags.remove(CloneFlags::CLONE_NEWNS | CloneFlags::CLONE_NEWIPC);
    }
    if !flags.is_empty()
        && let Err(e) = unshare(flags)
    {
        return fail(&format!("cannot create namespaces (unshare: {e})"));
    }
    let watch = Watch {
        helper,
        skiff: lifeline,
    };
    let command = Command {
        program,
        args,
        env: Some(env),
    };
    init(
        plan,
        mounts,
        watch,
        &command,
        new_net,
        Some(report),
        prepared,
    )
}

/// What the PID 1 of a zygote's spare ([`super::zygote`]) has set up before its command is
/// known: what every command's PID 1 sets up first and the same for every plan.
pub(super) struct Prepared {
    /// The host's `/dev/null`, opened before the private `/dev` covered it (what hides files).
    null: OwnedFd,
    /// The plan's mounts, made ahead for it ([`super::armed`]): only the rest is set up.
    pub(super) built: Option<Built>,
}

impl Prepared {
    /// The host's `/dev/null`, opened before the private `/dev` covered it.
    pub(super) fn null(&self) -> &OwnedFd {
        &self.null
    }
}

/// What [`super::armed`] made ahead in a spare's namespace for the command's plan: its mounts
/// are in place, its relay (when the plan has one) is listening, and (when sealed) Landlock
/// and the dropped capabilities are in force already.
pub(super) struct Built {
    pub(super) relay: Option<super::relay::Relay>,
    /// Whether Landlock and the dropped capabilities are in force already.
    pub(super) sealed: bool,
    /// The socket filter, installed with the seal (the plan's network is not allowed).
    pub(super) filter: Option<super::sockets::Filter>,
}

/// In a spare, before its command is known: die with the zygote, a new session, mount and IPC
/// namespaces of its own, a private `/proc` and `/dev`, an empty capability bounding set
/// ([`drop_exec_capabilities`]). Nothing here depends on the command's plan or on the host's
/// files but the device nodes, so nothing of it can go stale while the spare waits; what the
/// plan names (hidden, read-only and shown paths, the relay, Landlock) is set up once the
/// command has come, as for a fresh PID 1, unless [`super::armed`] built the same plan's
/// mounts and relay ahead ([`Prepared::built`]).
pub(super) fn prepare() -> Result<Prepared, String> {
    nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
        .map_err(|e| format!("prctl(PR_SET_PDEATHSIG): {e}"))?;
    setsid().map_err(|e| format!("setsid: {e}"))?;
    unshare(CloneFlags::CLONE_NEWNS | CloneFlags::CLONE_NEWIPC)
        .map_err(|e| format!("cannot create namespaces (unshare: {e})"))?;
    let (null, dev) = open_devices()?;
    build_static(&dev)?;
    drop_exec_capabilities();
    Ok(Prepared { null, built: None })
}

/// The command PID 1 starts: its program and arguments, and its whole environment when given
/// (else PID 1's own, less the lifeline variable).
struct Command<'a> {
    program: &'a OsString,
    args: &'a [OsString],
    env: Option<&'a [(OsString, OsString)]>,
}

/// The namespaces each command gets of its own: mount and IPC, and network unless the host's
/// is allowed or the session's (`shared_net`) can be used. Forwarded ports are bound by each
/// command: two at once cannot share a namespace.
pub(super) fn command_namespaces(plan: &Plan, mounts: &Mounts, shared_net: bool) -> CloneFlags {
    let mut flags = CloneFlags::CLONE_NEWNS | CloneFlags::CLONE_NEWIPC;
    let forwards = mounts.proxy.as_ref().is_some_and(|p| !p.forward.is_empty());
    if plan.network != NetworkPolicy::Allow && (!shared_net || forwards) {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    flags
}

/// End a process forked from the helper or the zygote (a command's PID 1, a spare) with
/// `_exit`, not `exit`: the exit handlers, the stdio buffers and the loaded libraries' clean-up
/// are the parent's (a fork's `exit` would run them a second time, and flush whatever the
/// parent had buffered again), and touching them costs the child copy-on-write page faults
/// for nothing (about 10 a command). Whatever the child writes goes straight to its
/// descriptors (`eprintln!`, reports), so nothing of its own is lost.
pub(super) fn exit_forked(code: i32) -> ! {
    // SAFETY: `_exit` takes an integer and ends the process; it touches no memory of ours.
    unsafe { libc::_exit(code) }
}

/// Say why the command was not run; the helper's exit code for it.
fn refused(why: &str) -> u8 {
    eprintln!("skiff sandbox: {why}; the command was not run");
    SETUP_FAILED
}

pub(super) fn fail(why: &str) -> ExitCode {
    ExitCode::from(refused(why))
}

/// Wait for C; its exit code (128 + signal when a signal ended it).
pub(super) fn wait_for(child: Pid) -> u8 {
    loop {
        match waitpid(child, None) {
            Ok(WaitStatus::Exited(_, code)) => return code as u8,
            Ok(WaitStatus::Signaled(_, sig, _)) => return 128u8.wrapping_add(sig as u8),
            Ok(_) | Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => return SETUP_FAILED,
        }
    }
}

pub(super) fn map_ids(uid: u32, gid: u32) -> std::io::Result<()> {
    std::fs::write("/proc/self/setgroups", "deny")?;
    std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1\n"))?;
    std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1\n"))?;
    Ok(())
}

/// The host's device nodes the private `/dev` shows ([`DEV_NODES`]).
type Devices = Vec<(&'static str, OwnedFd)>;

pub(super) fn path_fd(p: &Path) -> nix::Result<OwnedFd> {
    open(p, OFlag::O_PATH | OFlag::O_CLOEXEC, Mode::empty())
}

/// The host's `/dev/null` and the device nodes the private `/dev` shows, opened before it
/// covers them.
fn open_devices() -> Result<(OwnedFd, Devices), String> {
    let null = path_fd(Path::new("/dev/null")).map_err(|e| format!("/dev/null: {e}"))?;
    let dev = DEV_NODES
        .iter()
        .filter_map(|n| path_fd(&Path::new("/dev").join(n)).ok().map(|fd| (*n, fd)))
        .collect();
    Ok((null, dev))
}

/// Files opened before the mounts that cover their paths (in the new mount namespace: a bind
/// mount's source must be in the caller's): the host's `/dev/null`, what is shown again inside
/// hidden directories, and skiff's proxy.
pub(super) struct Sources {
    null: OwnedFd,
    pub(super) expose: Vec<(PathBuf, OwnedFd, bool)>,
    pub(super) proxy: Option<OwnedFd>,
}

impl Sources {
    pub(super) fn open(mounts: &Mounts, null: OwnedFd) -> Result<Self, String> {
        let expose = mounts
            .expose
            .iter()
            .filter_map(|p| {
                let is_dir = std::fs::metadata(p).ok()?.is_dir();
                path_fd(p).ok().map(|fd| (p.clone(), fd, is_dir))
            })
            .collect();
        let proxy = match &mounts.proxy {
            Some(proxy) => Some(
                path_fd(&proxy.socket)
                    .map_err(|e| format!("skiff's proxy {}: {e}", proxy.socket.display()))?,
            ),
            None => None,
        };
        Ok(Self {
            null,
            expose,
            proxy,
        })
    }
}

/// What PID 1 watches: the pipe from the helper and skiff's lifeline (when skiff handed one
/// over). End of file on either means the command must end.
struct Watch {
    helper: std::io::PipeReader,
    skiff: Option<OwnedFd>,
}

impl Watch {
    /// The descriptors to poll.
    fn fds(&self) -> Vec<PollFd<'_>> {
        let mut fds = vec![PollFd::new(self.helper.as_fd(), PollFlags::POLLIN)];
        if let Some(skiff) = &self.skiff {
            fds.push(PollFd::new(skiff.as_fd(), PollFlags::POLLIN));
        }
        fds
    }

    /// Whether the helper or skiff is already gone (before C could ask to die with them).
    fn gone(&self) -> bool {
        matches!(poll(&mut self.fds(), PollTimeout::ZERO), Ok(n) if n > 0)
    }

    /// Whether a descriptor [`Watch::fds`] returned has an event (data or end of file).
    fn fired(fds: &[PollFd<'_>]) -> bool {
        fds.iter()
            .any(|f| f.revents().is_some_and(|r| !r.is_empty()))
    }
}

/// PID 1 of the sandbox: set up, start the command, reap; returns the exit code (told on
/// `report` first when there is one, see [`report_end`]).
#[allow(clippy::too_many_arguments)]
fn init(
    plan: &Plan,
    mounts: &Mounts,
    watch: Watch,
    command: &Command<'_>,
    new_net: bool,
    report: Option<Reports>,
    prepared: Option<Prepared>,
) -> i32 {
    let Command { program, args, env } = *command;
    type Setup = (Option<super::relay::Relay>, Option<super::sockets::Filter>);
    let setup = |prepared: Option<Prepared>| -> Result<Setup, String> {
        nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
            .map_err(|e| format!("prctl(PR_SET_PDEATHSIG): {e}"))?;
        if watch.gone() {
            return Err("skiff or the helper is gone".to_owned());
        }
        // Nothing done here reaches the host's mount namespace: a mount namespace created
        // with a new user namespace is less privileged, and the kernel has turned every
        // shared mount in it into a slave (mount_namespaces(7)), so no mount made here
        // propagates back (and making them private would cost a walk of every mount).
        // The relay a spare bound ahead, or skiff's proxy to bind one to.
        let (built_relay, proxy_socket, sealed, filter) = match prepared {
            Some(Prepared {
                built: Some(built), ..
            }) => (built.relay, None, built.sealed, built.filter),
            prepared => {
                let mut sources = match prepared {
                    Some(prepared) => Sources::open(mounts, prepared.null)?,
                    None => {
                        setsid().map_err(|e| format!("setsid: {e}"))?;
                        // Every source is opened before a mount can cover its path.
                        let (null, dev) = open_devices()?;
                        let sources = Sources::open(mounts, null)?;
                        build_static(&dev)?;
                        sources
                    }
                };
                build_mounts(mounts, &sources)?;
                (None, sources.proxy.take(), false, None)
            }
        };
        let relay = if plan.network == NetworkPolicy::Allow {
            None
        } else {
            // A network namespace shared with the session's other commands has it up already.
            if new_net {
                loopback_up()?;
            }
            match (&mounts.proxy, built_relay, proxy_socket) {
                (Some(_), Some(relay), _) => Some(relay),
                (Some(proxy), None, Some(socket)) => {
                    Some(super::relay::Relay::bind(proxy, socket, mounts.probe)?)
                }
                _ => None,
            }
        };
        if !sealed {
            restrict(plan)?;
        }
        Ok((relay, filter))
    };
    let (relay, filter) = match setup(prepared) {
        Ok(r) => r,
        Err(e) => return i32::from(refused(&e)),
    };
    if mounts.probe {
        return 0;
    }
    // SIGCHLD is read from a descriptor, polled with what else PID 1 waits for (blocked before
    // the shell starts, so no exit is missed; the shell starts with no signal blocked).
    let children = match block_sigchld() {
        Ok(fd) => fd,
        Err(e) => return i32::from(refused(&e)),
    };
    if let Err(e) = close_inherited_on_exec() {
        return i32::from(refused(&e));
    }
    // Last before the command starts: from here on this process's connects (the relay's) are
    // answered by its own loop too.
    let guard = if plan.network == NetworkPolicy::Allow {
        None
    } else {
        let proxy = relay.as_ref().map(|r| r.socket());
        let guard = match filter {
            Some(filter) => Ok(Some(super::sockets::Guard::over(
                filter,
                &mounts.sockets,
                proxy,
            ))),
            None => super::sockets::Guard::install(&mounts.sockets, proxy),
        };
        match guard {
            Ok(guard) => guard,
            Err(e) => return i32::from(refused(&e)),
        }
    };
    let mut command = std::process::Command::new(program);
    if let Some(env) = env {
        command.env_clear().envs(env.iter().map(|(k, v)| (k, v)));
    }
    command
        .args(args)
        .env_remove(super::lifeline::FD_VAR)
        .env_remove(super::JOIN_VAR);
    if let Some(relay) = &relay {
        command.envs(relay.environment());
    }
    let shell = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            eprintln!(
                "skiff sandbox: cannot run {}: {e}",
                Path::new(program).display()
            );
            return if e.kind() == std::io::ErrorKind::NotFound {
                127
            } else {
                126
            };
        }
    };
    if let Some(report) = &report {
        use std::io::Write;
        // The zygote forks the next spare now, beside the command rather than beside its
        // set-up (see [`super::zygote`]).
        let _ = (&report.zygote).write_all(&[STARTED]);
    }
    let shell_pid = Pid::from_raw(i32::try_from(shell.id()).unwrap_or(i32::MAX));
    let code = supervise(shell_pid, &watch, &children, relay.as_ref(), guard.as_ref());
    if let Some(report) = report {
        report_end(report, code);
    }
    code
}

/// The shell has ended with `code`: end every other process of the namespace and wait until
/// each is gone, let go of the command's output, and tell `code` on `report`, all before PID 1
/// itself exits. The kernel would end the others too when PID 1 exits, but only after tearing
/// down PID 1's own namespaces (the mount namespace waits for an RCU grace period, about
/// 0.4 ms), and only then would the zygote learn of it. Told here, skiff goes on (reads the
/// output to its end, sweeps the workspace) while that teardown runs: nothing of the command is
/// left but this process, which runs no more of the command's code.
///
/// `kill(-1)` from PID 1 reaches every other process of the namespace (nested ones included),
/// all of them the same user with no capabilities; a process forking at that moment either is
/// killed or has its fork fail (the kernel orders the two). Every orphan is re-parented to PID 1,
/// so once `waitpid` finds no child at all, no process of the command is left.
fn report_end(report: Reports, code: i32) {
    use std::io::Write;
    let _ = nix::sys::signal::kill(Pid::from_raw(-1), Signal::SIGKILL);
    // Until ECHILD: no child left, alive or not yet reaped.
    while let Ok(_) | Err(nix::errno::Errno::EINTR) =
        waitpid(Pid::from_raw(-1), Some(WaitPidFlag::__WALL))
    {}
    // The output's last writer in here: skiff reads to its end of file.
    for fd in [0, 1, 2] {
        let _ = nix::unistd::close(fd);
    }
    // skiff's first: it is what skiff waits on; the zygote's reply then finds it told.
    if let Some(skiff) = report.skiff {
        let _ = std::fs::File::from(skiff).write_all(&code.to_le_bytes());
    }
    let _ = (&report.zygote).write_all(&code.to_le_bytes());
    // What is left is this process's own exit (its namespaces' teardown, a few hundred
    // microseconds of CPU): at the lowest priority it runs beside skiff's next steps, not
    // before them (on 2 cores, 0.2-0.3 ms less per sandboxed call in `sandbox_bench` and in
    // a 50-turn session). Lowering one's own priority needs no privilege; the kernel's
    // fair scheduler still runs it, so the locks an exit takes are not held for long.
    // SAFETY: setpriority on this process, with integer arguments.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, 19);
    }
}

/// Mark every descriptor above the standard streams close-on-exec: the command starts with its
/// input, output and error only. Whatever skiff itself was started with (a shell's `exec
/// 7>>file`, a socket of the program that started it) would otherwise reach the command, and
/// Landlock checks paths when they are opened, not descriptors already open. PID 1's own
/// descriptors stay open for it.
pub(super) fn close_inherited_on_exec() -> Result<(), String> {
    // SAFETY: see the module docs (a system call on integers).
    let done = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3_u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    if done == 0 {
        return Ok(());
    }
    // Before Linux 5.11: one by one, as this PID namespace's `/proc` lists them.
    let fds: Vec<i32> = std::fs::read_dir("/proc/self/fd")
        .map_err(|e| format!("cannot list the open descriptors: {e}"))?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .filter(|fd| *fd > 2)
        .collect();
    for fd in fds {
        // SAFETY: see the module docs; a descriptor closed meanwhile (the listing's own) fails
        // with EBADF, which is fine.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
        if flags >= 0 && unsafe { libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC) } < 0 {
            return Err(format!(
                "cannot close descriptor {fd} for the command: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    Ok(())
}

/// Block SIGCHLD and return a descriptor that reads it.
fn block_sigchld() -> Result<SignalFd, String> {
    let mut mask = SigSet::empty();
    mask.add(Signal::SIGCHLD);
    mask.thread_block()
        .map_err(|e| format!("cannot block SIGCHLD: {e}"))?;
    SignalFd::with_flags(&mask, SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK)
        .map_err(|e| format!("cannot read SIGCHLD: {e}"))
}

/// PID 1's one loop, no thread of its own: until the shell ends (its exit code), reap every
/// process of the namespace as it ends, pass the relay's connections on, answer the socket
/// filter's calls ([`super::sockets`]), and end everything
/// (exit 137) when the helper or skiff is gone (killed by skiff's timeout, or skiff died).
fn supervise(
    shell: Pid,
    watch: &Watch,
    children: &SignalFd,
    relay: Option<&super::relay::Relay>,
    guard: Option<&super::sockets::Guard>,
) -> i32 {
    loop {
        let mut fds = watch.fds();
        let watched = fds.len();
        fds.push(PollFd::new(children.as_fd(), PollFlags::POLLIN));
        if let Some(guard) = guard {
            fds.push(PollFd::new(guard.fd(), PollFlags::POLLIN));
        }
        let listeners = fds.len();
        if let Some(relay) = relay {
            fds.extend(
                relay
                    .listeners()
                    .map(|l| PollFd::new(l.as_fd(), PollFlags::POLLIN)),
            );
        }
        match poll(&mut fds, PollTimeout::NONE) {
            Ok(_) | Err(nix::errno::Errno::EINTR) => {}
            Err(_) => exit_forked(137),
        }
        if Watch::fired(&fds[..watched]) {
            exit_forked(137);
        }
        let exited = Watch::fired(&fds[watched..=watched]);
        let asked = guard.is_some() && Watch::fired(&fds[watched + 1..listeners]);
        let ready: Vec<usize> = fds[listeners..]
            .iter()
            .enumerate()
            .filter(|(_, f)| f.revents().is_some_and(|r| !r.is_empty()))
            .map(|(i, _)| i)
            .collect();
        drop(fds);
        if let Some(guard) = guard.filter(|_| asked) {
            guard.serve();
        }
        if let Some(relay) = relay {
            for index in ready {
                relay.accept(index);
            }
        }
        if exited {
            // Signals coalesce: drain the descriptor, then reap until nothing more has ended.
            while let Ok(Some(_)) = children.read_signal() {}
            if let Some(code) = reap(shell) {
                return code;
            }
        }
    }
}

/// Reap every process of the namespace that has ended; the shell's exit code once it has.
fn reap(shell: Pid) -> Option<i32> {
    loop {
        match waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::Exited(pid, code)) if pid == shell => return Some(code),
            Ok(WaitStatus::Signaled(pid, sig, _)) if pid == shell => {
                return Some(128 + sig as i32);
            }
            Ok(WaitStatus::StillAlive) => return None,
            Ok(_) | Err(nix::errno::Errno::EINTR) => {}
            // No child at all: the shell was reaped (it cannot be), so nothing is left to wait for.
            Err(_) => return Some(0),
        }
    }
}

fn mount_err(what: &str, path: &Path, e: nix::errno::Errno) -> String {
    format!("cannot {what} {}: {e}", path.display())
}

/// The part of the mount namespace every plan has: a private `/proc` (of this PID namespace)
/// and `/dev`.
fn build_static(dev: &Devices) -> Result<(), String> {
    let none: Option<&str> = None;
    mount(
        Some("proc"),
        "/proc",
        Some("proc"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
        none,
    )
    .map_err(|e| format!("cannot mount a private /proc: {e}"))?;
    build_dev(dev)
}

/// The rest of the mount namespace, as the plan says (after [`build_static`]): see the module
/// docs.
pub(super) fn build_mounts(mounts: &Mounts, sources: &Sources) -> Result<(), String> {
    let none: Option<&str> = None;
    let mut tmpfs_roots: Vec<PathBuf> = Vec::new();
    for dir in &mounts.empty {
        if !std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        mount(
            Some("tmpfs"),
            dir,
            Some("tmpfs"),
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
            Some("mode=0755,size=16m"),
        )
        .map_err(|e| mount_err("empty", dir, e))?;
        tmpfs_roots.push(dir.clone());
    }
    for path in &mounts.pin {
        match bind(path, path) {
            Err(nix::errno::Errno::ENOENT) => {}
            r => r.map_err(|e| mount_err("pin", path, e))?,
        }
    }
    for path in &mounts.read_only {
        match bind(path, path).and_then(|()| remount_read_only(path)) {
            Err(nix::errno::Errno::ENOENT) => {}
            r => r.map_err(|e| mount_err("make read-only", path, e))?,
        }
    }
    let null = fd_path(&sources.null);
    let mut hidden_dirs = Vec::new();
    for path in &mounts.hide {
        let Ok(meta) = std::fs::metadata(path) else {
            continue;
        };
        if meta.is_dir() {
            mount(
                Some("tmpfs"),
                path,
                Some("tmpfs"),
                MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
                Some("mode=0755,size=64k,nr_inodes=256"),
            )
            .map_err(|e| mount_err("hide", path, e))?;
            hidden_dirs.push(path.clone());
            tmpfs_roots.push(path.clone());
        } else {
            bind(&null, path)
                .and_then(|()| remount_read_only(path))
                .map_err(|e| mount_err("hide", path, e))?;
        }
    }
    for (path, fd, is_dir) in &sources.expose {
        // Mount points are only ever made inside the sandbox's own empty directories.
        if !tmpfs_roots.iter().any(|r| path.starts_with(r) && path != r) {
            continue;
        }
        make_mount_point(path, *is_dir).map_err(|e| format!("{}: {e}", path.display()))?;
        bind(&fd_path(fd), path)
            .and_then(|()| remount_read_only(path))
            .map_err(|e| mount_err("show", path, e))?;
    }
    for dir in hidden_dirs {
        mount(
            none,
            &dir,
            none,
            MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
            none,
        )
        .map_err(|e| mount_err("seal", &dir, e))?;
    }
    Ok(())
}

/// A minimal `/dev`: the usual pseudo-devices bound from the host's, a private `devpts`, a
/// private `/dev/shm`, the `fd` links; read-only but for those.
fn build_dev(devices: &Devices) -> Result<(), String> {
    let none: Option<&str> = None;
    let dev = Path::new("/dev");
    mount(
        Some("tmpfs"),
        dev,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC,
        Some("mode=0755,size=64k"),
    )
    .map_err(|e| mount_err("mount a private", dev, e))?;
    for (name, fd) in devices {
        let node = dev.join(name);
        std::fs::write(&node, b"").map_err(|e| format!("{}: {e}", node.display()))?;
        bind(&fd_path(fd), &node).map_err(|e| mount_err("bind", &node, e))?;
    }
    let pts = dev.join("pts");
    let shm = dev.join("shm");
    for dir in [&pts, &shm] {
        std::fs::create_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    mount(
        Some("devpts"),
        &pts,
        Some("devpts"),
        MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC,
        Some("newinstance,ptmxmode=0666,mode=620"),
    )
    .map_err(|e| mount_err("mount", &pts, e))?;
    mount(
        Some("tmpfs"),
        &shm,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some("mode=1777"),
    )
    .map_err(|e| mount_err("mount", &shm, e))?;
    for (link, target) in [
        ("ptmx", "pts/ptmx"),
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        std::os::unix::fs::symlink(target, dev.join(link))
            .map_err(|e| format!("/dev/{link}: {e}"))?;
    }
    mount(
        none,
        dev,
        none,
        MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC,
        Some("mode=0755,size=64k"),
    )
    .map_err(|e| mount_err("seal", dev, e))
}

fn bind(source: &Path, target: &Path) -> nix::Result<()> {
    let none: Option<&str> = None;
    mount(Some(source), target, none, MsFlags::MS_BIND, none)
}

/// Remount a bind mount read-only, keeping the flags the kernel locks (a mount copied from a
/// more privileged namespace cannot lose `nosuid`, `nodev`, `noexec` or its atime mode).
fn remount_read_only(target: &Path) -> nix::Result<()> {
    let none: Option<&str> = None;
    let current = statvfs(target)?.flags();
    let mut flags = MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY;
    for (fs, ms) in [
        (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
        (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ] {
        if current.contains(fs) {
            flags |= ms;
        }
    }
    mount(none, target, none, flags, none)
}

fn make_mount_point(path: &Path, is_dir: bool) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    if is_dir {
        std::fs::create_dir_all(path)
    } else if std::fs::symlink_metadata(path).is_err() {
        std::fs::write(path, b"")
    } else {
        Ok(())
    }
}

/// Restrict this process for good: Landlock as `plan` says, every capability dropped.
pub(super) fn restrict(plan: &Plan) -> Result<(), String> {
    if plan.fs != SandboxMode::Off {
        super::landlock::restrict_filesystem(&writable_paths(plan.fs, &plan.write))?;
    }
    drop_privileges()
}

/// Bring up `lo` in the new network namespace (it starts down).
pub(super) fn loopback_up() -> Result<(), String> {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0")
        .map_err(|e| format!("cannot open a socket to configure the loopback: {e}"))?;
    // SAFETY: a zeroed ifreq is a valid value of a plain C struct.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, src) in req.ifr_name.iter_mut().zip(b"lo\0") {
        *dst = *src as libc::c_char;
    }
    let fd = socket.as_raw_fd();
    // SAFETY: `fd` is our socket; `req` is a valid ifreq for the duration of each call.
    let got = unsafe { libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut req) };
    if got < 0 {
        return Err(format!(
            "cannot read the loopback's flags: {}",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: SIOCGIFFLAGS filled the flags member of the union.
    unsafe {
        req.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
    }
    // SAFETY: as above.
    let set = unsafe { libc::ioctl(fd, libc::SIOCSIFFLAGS, &req) };
    if set < 0 {
        return Err(format!(
            "cannot bring the loopback up: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// Whether [`drop_exec_capabilities`] has run in this process (a spare runs it ahead).
static EXEC_CAPABILITIES_DROPPED: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Empty the capability bounding set and the ambient set: nothing this process execs can gain
/// a capability. Its own (effective and permitted) capabilities stay, so a spare does this
/// before its command is known and still makes the plan's mounts afterwards; once per process
/// (41 `prctl` calls on this kernel, about 40 µs).
fn drop_exec_capabilities() {
    use std::sync::atomic::Ordering;
    if EXEC_CAPABILITIES_DROPPED.swap(true, Ordering::SeqCst) {
        return;
    }
    for cap in 0..=63 {
        // SAFETY: prctl with integer arguments. Capabilities are numbered from 0 without gaps:
        // EINVAL means past the kernel's last one.
        let r = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) };
        if r == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL) {
            break;
        }
    }
    // SAFETY: as above.
    unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
    }
}

/// Drop every capability for good (the bounding set too, so an exec as uid 0 gets none back)
/// and become undumpable (no other process of the sandbox may ptrace or read this one).
fn drop_privileges() -> Result<(), String> {
    drop_exec_capabilities();
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    let mut header = Header {
        version: VERSION_3,
        pid: 0,
    };
    let data = [Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: header and data are valid for the call; capset only reads data.
    let r = unsafe { libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) };
    if r != 0 {
        return Err(format!(
            "cannot drop capabilities: {}",
            std::io::Error::last_os_error()
        ));
    }
    nix::sys::prctl::set_no_new_privs().map_err(|e| format!("no_new_privs: {e}"))?;
    nix::sys::prctl::set_dumpable(false).map_err(|e| format!("PR_SET_DUMPABLE: {e}"))?;
    Ok(())
}
