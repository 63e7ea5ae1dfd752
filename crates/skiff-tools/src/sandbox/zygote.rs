//! The zygote: one helper per session that starts every sandboxed command by forking.
//!
//! Starting a helper per command costs an `exec` (on a VM whose CPUID traps, glibc's start-up
//! alone is a third of a millisecond) and a new network namespace (0.4 ms to create, more to
//! tear down). The zygote pays both once: skiff starts `HELPER __sandbox --zygote --network
//! POLICY` (H) with a Unix socket as [`FD_VAR`] and its lifeline; H creates the session's user
//! namespace (and, unless the network is allowed, a network namespace with the loopback up) and
//! a PID namespace, and forks the zygote proper (Z), PID 1 of that namespace; H only waits for
//! Z. Z says it is ready, and then for each request creates a PID namespace for its next child
//! (`unshare(CLONE_NEWPID)`), forks the command's PID 1 (C) and enters its own PID namespace
//! again (`setns`, allowed because the session's user namespace owns it): C is already PID 1
//! and does what a fresh helper's PID 1 does from there on
//! ([`super::namespaces::init_in_zygote_child`]): a mount and IPC namespace of its own, the
//! mounts, Landlock and the relay, then the command. No process stands between Z and C (a
//! helper per command needs one more fork, exit and wait: about 0.4 ms a call). Commands the
//! zygote starts share the session's loopback (calls running side by side reach each other's
//! servers); a plan that forwards host ports gets a network namespace of its own (two at once
//! could not bind the same port). Background commands still start a helper of their own (the
//! background registry stops them by process group), which joins the session's user and
//! network namespaces ([`super::JOIN_VAR`]): their servers are reached by the other commands.
//!
//! Containment is the fresh helper's: C is confined exactly as a fresh helper's PID 1, before
//! the command starts. C holds nothing of the zygote's: the socket, the signal descriptor, the
//! PID namespace descriptor and the other commands' pipes are closed first thing, and the
//! command's output descriptor is the only one it keeps. C dies with Z (`PR_SET_PDEATHSIG`, and
//! a pipe from Z whose end of file it watches), Z dies with H (`PR_SET_PDEATHSIG`) and ends when
//! skiff's end of the socket closes (skiff gone), and every C still watches skiff's lifeline.
//! When Z ends, the kernel ends every process of its PID namespace, the commands' included.
//!
//! The socket, skiff → zygote: a header of 12 bytes (kind, payload length, both `u32` little
//! endian, then 4 zero bytes) sent for a run with the command's output descriptor and the write
//! end of a pipe of skiff's own (`SCM_RIGHTS`), then the payload: the request id (`u64`), then
//! for a run NUL-terminated entries, each tagged by its first byte: `C` the working directory,
//! `A` an argument after `__sandbox`, `E` a `NAME=value` of the command's environment. Zygote →
//! skiff: [`READY`] once, then 12 bytes per ended request: its id and its raw wait status
//! (`i32`). C writes the command's exit code on skiff's pipe too, first: skiff waits on that
//! pipe beside the command's output, so the end of a command reaches it with one wake-up
//! instead of three (the zygote, skiff's reader of the socket, then its runtime); the zygote's
//! reply stands for a C that ended without a word (killed, or refused the command).
//!
//! C says on a pipe of its own when the command has started ([`STARTED`], one byte), and the
//! request ends when C says so on the same pipe: once the shell has ended, C ends every
//! other process of its namespace, waits until none is left and closes its copy of the output,
//! then writes the shell's exit code (`i32`, [`super::namespaces`]'s `report_end`). C's own
//! exit (the teardown of its namespaces) then runs beside skiff's next steps instead of before
//! them. A C that ends without saying so (killed, or refused to start the command) is reported
//! by its wait status when it is reaped.
//!
//! A spare: the zygote keeps one command's PID 1 forked ahead (S), with what every command's
//! PID 1 sets up first and the same for every plan already done ([`super::namespaces::prepare`]:
//! a new session, mount and IPC namespaces, a private `/proc` and `/dev`). S says on a socket
//! of its own whether that worked, then waits on it. A run request is handed to a ready S (the
//! same bytes, the output descriptor with them); S then does the rest exactly as a freshly
//! forked C does: the plan's mounts, the relay, Landlock, the command. What S prepared depends
//! on nothing the plan names and on no host file but the device nodes, so it cannot go stale
//! while S waits. Once ready, S also builds the plan of the last command a spare could run, when
//! the one before had the same ([`super::armed`]: its mounts and relay, and Landlock and the
//! capabilities when no command waits yet), and uses that build when the command's plan is the
//! same and every path it mounted on is still in place; else the command starts from a fresh
//! fork ([`STALE`] on S's report pipe). A command whose directory or plan names a path under
//! `/dev` or `/proc` (which
//! a fresh C opens before covering them) is started by a fresh fork instead, as is any
//! request that comes while S is not ready or while S runs another command. The next S is
//! forked once the command the last one was handed has started (C's [`STARTED`]; or once that
//! C has ended without starting it), so its set-up runs beside that command and while the model
//! answers, not on the next call's path (`sandbox_bench`, 2 cores: the sandbox's added cost per
//! call fell from 1.4–1.75 ms to 1.0–1.2 ms). Forked at the hand-over instead, it ran beside
//! the handed spare's own set-up, and both were slower for it (the hand-over to the command's
//! start took about 0.08 ms longer). Forking it only once the command had ended was no quicker
//! in a 50-turn session (3.26 against 3.22 ms a Bash turn) and slower for calls back to back
//! (1.4–1.5 ms). A spare that fails or dies before
//! it is used ends spares for the session: each command then starts from a fresh fork, as
//! before.
//!
//! `unsafe` here: `fork` while the zygote is single-threaded (it never starts a thread), so the
//! child may run Rust code; `OwnedFd::from_raw_fd` on a descriptor the kernel just passed
//! (`SCM_RIGHTS`).
#![allow(unsafe_code)]

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::{IoSlice, IoSliceMut, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStringExt;
use std::os::unix::net::UnixStream;
use std::process::ExitCode;

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sched::{CloneFlags, unshare};
use nix::sys::signal::{SigSet, SigmaskHow, Signal, kill, sigprocmask};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::socket::{ControlMessageOwned, MsgFlags, recvmsg};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::{ForkResult, Pid, fork, getgid, getuid};

use super::armed::{self, Armed, NotArmed, blank_token};
use super::namespaces::{
    Prepared, Reports, STARTED, fail, init_in_zygote_child, loopback_up, map_ids, prepare, wait_for,
};
use super::plan::Plan;
use super::request::HelperRequest;
use super::{NetworkPolicy, SETUP_FAILED};

/// The argument after `__sandbox` that makes the helper a zygote.
pub(super) const ARG: &str = "--zygote";
/// The variable naming the zygote's end of its socket.
pub(super) const FD_VAR: &str = "SKIFF_ZYGOTE_FD";
/// The byte the zygote sends once its namespaces are set up.
pub(super) const READY: u8 = b'Z';
/// Request kinds.
pub(super) const RUN: u32 = 1;
pub(super) const KILL: u32 = 2;
/// The header's and a reply's size.
pub(super) const HEADER: usize = 12;
/// The largest payload the zygote reads (a command, its environment and plan).
pub(super) const MAX_PAYLOAD: usize = 64 << 20;
/// What a spare says once its set-up is done: ready, or failed (it then exits).
const SPARE_READY: u8 = b'R';
const SPARE_FAILED: u8 = b'F';
/// After [`SPARE_READY`]: the last command's plan is built ahead and the spare restricted for
/// it ([`super::armed`]); it can run no other.
const SPARE_ARMED: u8 = b'A';
/// What a spare says on its report pipe instead of [`STARTED`] when the plan it built is no
/// longer in place: the zygote starts the command from a fresh fork.
const STALE: u8 = b'X';

/// `HELPER __sandbox --zygote --network POLICY`: serve run requests until skiff's end of the
/// socket closes. Exits [`SETUP_FAILED`] when the namespaces cannot be set up (nothing is run).
pub(super) fn serve(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let args: Vec<OsString> = args.into_iter().collect();
    let network: NetworkPolicy = match args.as_slice() {
        [flag, policy] if flag == "--network" => {
            match policy.to_str().map(str::parse::<NetworkPolicy>) {
                Some(Ok(p)) => p,
                _ => return fail("--network needs allow, proxy or deny"),
            }
        }
        _ => return fail("usage: __sandbox --zygote --network POLICY"),
    };
    if super::flag_var(super::SIMULATE_NO_NAMESPACES_VAR) {
        return fail(&format!(
            "namespaces are not available (simulated by {})",
            super::SIMULATE_NO_NAMESPACES_VAR
        ));
    }
    let Some(socket) = super::lifeline::inherited(FD_VAR, libc::S_IFSOCK).map(UnixStream::from)
    else {
        return fail(&format!("{FD_VAR} names no socket"));
    };
    let lifeline = super::lifeline::take();
    let shared_net = network != NetworkPolicy::Allow;
    // A PID namespace for the zygote's children: the zygote proper is its PID 1 (forked below),
    // so that it can give each command a PID namespace of its own and enter its own again
    // afterwards (the session's user namespace owns it), with no process in between.
    let mut flags = CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWPID;
    if shared_net {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    let (uid, gid) = (getuid(), getgid());
    if let Err(e) = unshare(flags) {
        return fail(&format!("cannot create namespaces (unshare: {e})"));
    }
    if let Err(e) = map_ids(uid.as_raw(), gid.as_raw()) {
        return fail(&format!("cannot map the user in its namespace: {e}"));
    }
    if shared_net && let Err(e) = loopback_up() {
        return fail(&e);
    }
    // SAFETY: the zygote is single-threaded (see the module docs).
    match unsafe { fork() } {
        Err(e) => return fail(&format!("cannot fork: {e}")),
        Ok(ForkResult::Parent { child }) => {
            // Only the zygote holds the socket: skiff sees its end of file when the zygote ends.
            drop(socket);
            drop(lifeline);
            return ExitCode::from(wait_for(child));
        }
        Ok(ForkResult::Child) => {}
    }
    // Dies with the process skiff started (skiff's socket also ends when skiff does).
    if nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).is_err() {
        return ExitCode::from(SETUP_FAILED);
    }
    let own_pid_namespace = match std::fs::File::open("/proc/self/ns/pid") {
        Ok(f) => OwnedFd::from(f),
        Err(e) => return fail(&format!("cannot open the zygote's PID namespace: {e}")),
    };
    let mut chld = SigSet::empty();
    chld.add(Signal::SIGCHLD);
    if let Err(e) = sigprocmask(SigmaskHow::SIG_BLOCK, Some(&chld), None) {
        return fail(&format!("sigprocmask: {e}"));
    }
    let signals = match SignalFd::with_flags(&chld, SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK)
    {
        Ok(s) => s,
        Err(e) => return fail(&format!("signalfd: {e}")),
    };
    let mut zygote = Zygote {
        socket,
        signals,
        lifeline,
        shared_net,
        own_pid_namespace,
        running: HashMap::new(),
        spare: None,
        spares: !super::flag_var(super::NO_SPARE_VAR),
        handed: None,
        last_plan: None,
        plan_repeats: false,
        ahead: std::env::var_os(super::AHEAD_VAR).map_or(AheadMode::Sealed, |v| match v.to_str() {
            Some("off") => AheadMode::Off,
            Some("mounts") => AheadMode::Mounts,
            _ => AheadMode::Sealed,
        }),
        respare: false,
    };
    if zygote.socket.write_all(&[READY]).is_err() {
        return ExitCode::from(SETUP_FAILED);
    }
    if zygote.make_spare() {
        zygote.serve();
    }
    // skiff is gone: so is everything it started here.
    for pid in zygote
        .running
        .keys()
        .chain(zygote.spare.as_ref().map(|s| &s.pid))
    {
        let _ = kill(*pid, Signal::SIGKILL);
    }
    ExitCode::SUCCESS
}

struct Zygote {
    socket: UnixStream,
    signals: SignalFd,
    lifeline: Option<OwnedFd>,
    shared_net: bool,
    /// The zygote's own PID namespace, entered again after each command's is created.
    own_pid_namespace: OwnedFd,
    /// Children not reaped yet, by pid.
    running: HashMap<Pid, Child>,
    /// The next command's PID 1, forked ahead (see the module docs).
    spare: Option<Spare>,
    /// Whether spares are made (not after one failed, nor with [`super::NO_SPARE_VAR`] set).
    spares: bool,
    /// The spare last handed a command, until that command has started: the next spare is
    /// forked then (see the module docs).
    handed: Option<Pid>,
    /// The `--plan` of the last command a spare could run, and whether the one before had the
    /// same (the token aside): the next spare then builds it ahead ([`super::armed`]). Plans
    /// that keep changing (sockets coming and going in the temp directories) would waste each
    /// build, and a command whose plan is not the one built starts from a fresh fork.
    last_plan: Option<LastPlan>,
    plan_repeats: bool,
    /// How much a spare builds ahead ([`super::AHEAD_VAR`]).
    ahead: AheadMode,
    /// The next child forked becomes [`Zygote::handed`]: a spare was given up for its command.
    respare: bool,
}

/// A command's PID 1 forked ahead, waiting for its command.
struct Spare {
    pid: Pid,
    /// The zygote's end of the spare's socket: [`SPARE_READY`] comes on it, the command goes.
    socket: UnixStream,
    /// As [`Child::alive`].
    alive: std::io::PipeWriter,
    /// As [`Child::report`].
    report: std::io::PipeReader,
    /// Whether the spare said it is ready.
    ready: bool,
    /// The plan the spare builds (its token blank), and whether it said it is sealed for it
    /// ([`SPARE_ARMED`]).
    plan: Option<String>,
    armed: bool,
}

/// A command's PID 1 the zygote started.
struct Child {
    /// The request id.
    id: u64,
    /// The pipe whose end of file tells the child that the zygote is gone.
    alive: std::io::PipeWriter,
    /// Where the child says its command started ([`STARTED`]), then its exit code; `None` once
    /// read (or ended).
    report: Option<std::io::PipeReader>,
    /// Whether the child said its command started.
    started: bool,
    /// Whether skiff has been told the request ended.
    told: bool,
    /// The request, kept until the spare it was handed to has started it (a spare may say the
    /// plan it built is stale instead: the request then starts from a fresh fork).
    run: Option<Run>,
}

/// The `--plan` of the last command a spare could run, as given and with its token blank.
struct LastPlan {
    arg: String,
    blank: String,
}

/// How much a spare builds ahead ([`super::AHEAD_VAR`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AheadMode {
    Off,
    /// The mounts and the relay; Landlock and the capabilities wait for the command.
    Mounts,
    Sealed,
}

/// What a spare built ahead for its command ([`super::armed`]).
enum Ahead {
    Nothing,
    Built(Box<Armed>),
    /// Half of it: the spare can run no command.
    Dirty,
}

/// One request read from the socket.
enum Request {
    Run(Run),
    Kill { id: u64 },
}

/// A command to start: its id, output descriptor, directory, arguments after `__sandbox` and
/// environment; the request's payload as it came (what a spare is handed).
struct Run {
    id: u64,
    out: Option<OwnedFd>,
    /// skiff's pipe for the exit code (see the module docs).
    end: Option<OwnedFd>,
    cwd: OsString,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    payload: Vec<u8>,
}

impl Run {
    /// The descriptors sent with it: its output, then skiff's pipe for the exit code.
    fn fds(&self) -> Vec<BorrowedFd<'_>> {
        self.out
            .iter()
            .chain(self.end.iter())
            .map(AsFd::as_fd)
            .collect()
    }

    /// Whether a spare may run it: a spare's `/proc` and `/dev` are private already, so a
    /// command whose directory or plan names a path there starts from a fresh fork, which opens
    /// such paths before covering them. (A false alarm only costs the head start.)
    fn fits_a_spare(&self) -> bool {
        use std::os::unix::ffi::OsStrExt;
        let private = |p: &[u8]| p.starts_with(b"/dev") || p.starts_with(b"/proc");
        let named = |needle: &[u8]| self.payload.windows(needle.len()).any(|w| w == needle);
        self.out.is_some()
            && !private(self.cwd.as_bytes())
            && !named(b"\"/dev")
            && !named(b"\"/proc")
    }
}

impl Zygote {
    /// Until the socket ends (or fails).
    fn serve(&mut self) {
        loop {
            let (socket_ready, signal_ready, spare_said, reports) = {
                let reporting: Vec<(Pid, BorrowedFd<'_>)> = self
                    .running
                    .iter()
                    .filter_map(|(pid, c)| c.report.as_ref().map(|r| (*pid, r.as_fd())))
                    .collect();
                // A spare not ready yet is heard on its socket.
                let waiting = self.spare.as_ref().filter(|s| !s.ready || !s.armed);
                let mut fds = vec![
                    PollFd::new(self.socket.as_fd(), PollFlags::POLLIN),
                    PollFd::new(self.signals.as_fd(), PollFlags::POLLIN),
                ];
                let spare_at = waiting.map(|s| {
                    fds.push(PollFd::new(s.socket.as_fd(), PollFlags::POLLIN));
                    fds.len() - 1
                });
                let first_report = fds.len();
                fds.extend(
                    reporting
                        .iter()
                        .map(|(_, fd)| PollFd::new(*fd, PollFlags::POLLIN)),
                );
                match poll(&mut fds, PollTimeout::NONE) {
                    Ok(_) => {}
                    Err(nix::errno::Errno::EINTR) => continue,
                    Err(_) => return,
                }
                let ready = |fd: &PollFd| fd.revents().is_some_and(|r| !r.is_empty());
                let reports: Vec<Pid> = reporting
                    .iter()
                    .zip(&fds[first_report..])
                    .filter(|(_, fd)| ready(fd))
                    .map(|((pid, _), _)| *pid)
                    .collect();
                let spare_said = spare_at.is_some_and(|i| ready(&fds[i]));
                (ready(&fds[0]), ready(&fds[1]), spare_said, reports)
            };
            if spare_said {
                self.hear_spare();
            }
            for pid in reports {
                if !self.read_report(pid) {
                    return;
                }
            }
            if signal_ready && !self.reap() {
                return;
            }
            if socket_ready {
                match self.read_request() {
                    Ok(Some(Request::Run(run))) => {
                        if !self.start(run) {
                            return;
                        }
                    }
                    Ok(Some(Request::Kill { id })) => {
                        for (pid, _) in self.running.iter().filter(|(_, c)| c.id == id) {
                            let _ = kill(*pid, Signal::SIGKILL);
                        }
                    }
                    Ok(None) | Err(_) => return,
                }
            }
        }
    }

    /// Reap every ended child and tell skiff; false when skiff can no longer be told.
    fn reap(&mut self) -> bool {
        while self.signals.read_signal().ok().flatten().is_some() {}
        loop {
            let (pid, status) = match waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::Exited(pid, code)) => (pid, exited(code)),
                Ok(WaitStatus::Signaled(pid, sig, core)) => {
                    (pid, sig as i32 | if core { 0x80 } else { 0 })
                }
                Ok(WaitStatus::StillAlive) | Err(_) => return true,
                Ok(_) => continue,
            };
            if self.spare.as_ref().is_some_and(|s| s.pid == pid) {
                // A spare ended before it was used: no more of them this session.
                self.spare = None;
                self.spares = false;
            }
            if let Some(child) = self.running.remove(&pid)
                && !child.told
                && !self.reply(child.id, status)
            {
                return false;
            }
            if !self.handed_started(pid) {
                return false;
            }
        }
    }

    /// Read what child `pid` reports: that its command started (the next spare is forked once
    /// the one last handed a command says so), then its command's exit code, told to skiff at
    /// once; false when skiff can no longer be told or no more commands can be started here.
    /// End of file (the child ended without a word) leaves the request to [`Zygote::reap`].
    fn read_report(&mut self, pid: Pid) -> bool {
        let Some(child) = self.running.get_mut(&pid) else {
            return true;
        };
        let Some(mut report) = child.report.take() else {
            return true;
        };
        if !child.started {
            let mut said = [0u8; 1];
            if !matches!(report.read(&mut said), Ok(1)) {
                return true;
            }
            if said[0] == STALE
                && let Some(run) = child.run.take()
            {
                // The spare's build was stale: it exits; the command starts afresh, and the
                // next spare once it has started.
                child.told = true;
                if self.handed == Some(pid) {
                    self.handed = None;
                    self.respare = true;
                }
                return self.fork_for(run);
            }
            if said[0] != STARTED {
                return true;
            }
            child.started = true;
            child.run = None;
            child.report = Some(report);
            return self.handed_started(pid);
        }
        let mut code = [0u8; 4];
        // Four bytes in one write to a pipe arrive whole (under PIPE_BUF).
        if report.read_exact(&mut code).is_err() {
            return true;
        }
        child.told = true;
        let id = child.id;
        self.reply(id, exited(i32::from_le_bytes(code)))
    }

    /// Child `pid` started its command or ended: when it is the spare last handed a command,
    /// the next spare is forked now; false when no more commands can be started here.
    fn handed_started(&mut self, pid: Pid) -> bool {
        if self.handed != Some(pid) {
            return true;
        }
        self.handed = None;
        self.make_spare()
    }

    /// Tell skiff request `id` ended with the raw wait `status`; false when it cannot be told.
    fn reply(&mut self, id: u64, status: i32) -> bool {
        let mut reply = [0u8; HEADER];
        reply[..8].copy_from_slice(&id.to_le_bytes());
        reply[8..].copy_from_slice(&status.to_le_bytes());
        self.socket.write_all(&reply).is_ok()
    }

    /// The next request; `None` at end of file.
    fn read_request(&mut self) -> std::io::Result<Option<Request>> {
        read_request(&self.socket)
    }

    /// Start `run`: handed to the spare when one is ready and fits, else in a fresh fork;
    /// false when skiff can no longer be told or no more commands can be started here.
    fn start(&mut self, run: Run) -> bool {
        // Read once the command is on its way: the next spare builds this plan ahead.
        let plan = run.fits_a_spare().then(|| plan_arg(&run.args)).flatten();
        let run = match self.hand_over(run) {
            Ok(pid) => {
                self.handed = Some(pid);
                self.remember(plan);
                return true;
            }
            Err(run) => run,
        };
        let started = self.fork_for(run);
        self.remember(plan);
        started
    }

    /// The plan the next spare builds ahead, if any (see [`Zygote::last_plan`]).
    fn plan_to_build(&self) -> Option<&LastPlan> {
        self.last_plan
            .as_ref()
            .filter(|_| self.plan_repeats && self.ahead != AheadMode::Off)
    }

    /// Keep the plan of the command just started for the next spare (see [`super::armed`]).
    fn remember(&mut self, plan: Option<OsString>) {
        if let Some(plan) = plan.and_then(|p| p.into_string().ok()) {
            let blank = blank_token(&plan).into_owned();
            self.plan_repeats = self.last_plan.as_ref().is_some_and(|l| l.blank == blank);
            self.last_plan = Some(LastPlan { arg: plan, blank });
        }
    }

    /// Hand `run` to the ready spare (its pid); the request back when there is none or it
    /// cannot take it.
    fn hand_over(&mut self, run: Run) -> Result<Pid, Run> {
        if !(run.fits_a_spare() && self.spare.as_ref().is_some_and(|s| s.ready)) {
            return Err(run);
        }
        let Some(spare) = self.spare.take() else {
            return Err(run);
        };
        if spare.armed {
            let plan = plan_arg(&run.args).and_then(|p| p.into_string().ok());
            if plan.as_deref().map(blank_token).as_deref() != spare.plan.as_deref() {
                // Built for another plan, and restricted for it: the next spare is forked once
                // this command has started.
                let _ = kill(spare.pid, Signal::SIGKILL);
                self.respare = true;
                return Err(run);
            }
        }
        if send(&spare.socket, RUN, &run.payload, &run.fds()).is_err() {
            // Gone meanwhile (its end is reaped later): no more spares this session.
            let _ = kill(spare.pid, Signal::SIGKILL);
            self.spares = false;
            return Err(run);
        }
        // The spare has what it needs: its socket goes. The request (and the zygote's copy of
        // the output) is kept until the command has started: the spare may find the plan it
        // built stale instead.
        let pid = spare.pid;
        self.running.insert(
            pid,
            Child {
                id: run.id,
                alive: spare.alive,
                report: Some(spare.report),
                started: false,
                told: false,
                run: Some(run),
            },
        );
        Ok(pid)
    }

    /// A spare not ready yet said something: ready, or it failed (no more spares then).
    fn hear_spare(&mut self) {
        let Some(spare) = self.spare.as_mut() else {
            return;
        };
        let mut said = [0u8; 1];
        match (&spare.socket).read(&mut said) {
            Ok(1) if said[0] == SPARE_READY => {
                spare.ready = true;
                return;
            }
            Ok(1) if said[0] == SPARE_ARMED && spare.ready => {
                spare.armed = true;
                return;
            }
            _ => {}
        }
        // SPARE_FAILED, end of file or an error: it ends (and is reaped) without a command.
        let _ = kill(spare.pid, Signal::SIGKILL);
        self.spare = None;
        self.spares = false;
    }

    /// Fork the next command's PID 1 ahead (when spares are made and there is none); false
    /// when no more commands can be started here.
    fn make_spare(&mut self) -> bool {
        if !self.spares || self.spare.is_some() {
            return true;
        }
        let made = std::io::pipe().and_then(|alive| {
            let report = std::io::pipe()?;
            Ok((alive, report, UnixStream::pair()?))
        });
        let Ok(((watch, alive), (report, told), (mine, theirs))) = made else {
            self.spares = false;
            return true;
        };
        match self.fork_pid1() {
            Err((_, back)) => {
                self.spares = false;
                back
            }
            Ok((ForkResult::Child, _)) => {
                drop((alive, report, mine));
                let code = self.spare_main(theirs, watch, told);
                super::namespaces::exit_forked(code);
            }
            Ok((ForkResult::Parent { child }, back)) => {
                drop((watch, told, theirs));
                self.spare = Some(Spare {
                    pid: child,
                    socket: mine,
                    alive,
                    report,
                    ready: false,
                    plan: self.plan_to_build().map(|p| p.blank.clone()),
                    armed: false,
                });
                back
            }
        }
    }

    /// Fork a child that is PID 1 of a new PID namespace. Both the result and the error say
    /// whether the zygote is back in its own PID namespace afterwards: without it no command
    /// can be started here any more, and skiff falls back to a helper per command.
    fn fork_pid1(&self) -> Result<(ForkResult, bool), (String, bool)> {
        // The next child is PID 1 of a new PID namespace.
        unshare(CloneFlags::CLONE_NEWPID)
            .map_err(|e| (format!("cannot create namespaces (unshare: {e})"), true))?;
        // SAFETY: the zygote is single-threaded (see the module docs).
        let forked = unsafe { fork() };
        if let Ok(ForkResult::Child) = forked {
            return Ok((ForkResult::Child, true));
        }
        let back = nix::sched::setns(&self.own_pid_namespace, CloneFlags::CLONE_NEWPID).is_ok();
        forked
            .map(|parent| (parent, back))
            .map_err(|e| (format!("cannot fork: {e}"), back))
    }

    /// Fork the command's PID 1, in a PID namespace of its own; false when skiff can no longer
    /// be told or no more commands can be started here.
    fn fork_for(&mut self, run: Run) -> bool {
        let refuse = |zygote: &mut Self, run: Run, why: String| {
            if let Some(out) = run.out {
                let _ = writeln!(
                    std::fs::File::from(out),
                    "skiff sandbox: {why}; the command was not run"
                );
            }
            zygote.reply(run.id, i32::from(SETUP_FAILED) << 8)
        };
        let pipes = std::io::pipe().and_then(|alive| Ok((alive, std::io::pipe()?)));
        let ((watch, alive), (report, told)) = match pipes {
            Ok(p) => p,
            Err(e) => return refuse(self, run, format!("cannot create a pipe: {e}")),
        };
        match self.fork_pid1() {
            Ok((ForkResult::Child, _)) => {
                drop((alive, report));
                let lifeline = self.lifeline.as_ref().and_then(|l| l.try_clone().ok());
                self.close_inherited();
                let code = self.run_command(run, watch, told, lifeline, None, Ahead::Nothing);
                super::namespaces::exit_forked(code);
            }
            Ok((ForkResult::Parent { child }, back)) => {
                drop((watch, told));
                let started = Child {
                    id: run.id,
                    alive,
                    report: Some(report),
                    started: false,
                    told: false,
                    run: None,
                };
                self.running.insert(child, started);
                if std::mem::take(&mut self.respare) {
                    self.handed = Some(child);
                }
                back
            }
            // Not back in its own PID namespace: nothing more starts here.
            Err((why, back)) => back && refuse(self, run, why),
        }
    }

    /// In a forked PID 1: close the zygote's descriptors (its socket and signals first),
    /// those of its other children and spare, and unblock signals. Nothing the command runs may
    /// reach the zygote.
    fn close_inherited(&self) {
        let _ = nix::unistd::close(self.socket.as_raw_fd());
        let _ = nix::unistd::close(self.signals.as_raw_fd());
        let _ = nix::unistd::close(self.own_pid_namespace.as_raw_fd());
        for other in self.running.values() {
            let _ = nix::unistd::close(other.alive.as_raw_fd());
            if let Some(report) = &other.report {
                let _ = nix::unistd::close(report.as_raw_fd());
            }
            // A request kept until its spare has started it: its output and pipe are that
            // command's, and held here they would keep skiff from their end of file.
            if let Some(run) = &other.run {
                for fd in run.fds() {
                    let _ = nix::unistd::close(fd.as_raw_fd());
                }
            }
        }
        if let Some(spare) = &self.spare {
            for fd in [
                spare.socket.as_raw_fd(),
                spare.alive.as_raw_fd(),
                spare.report.as_raw_fd(),
            ] {
                let _ = nix::unistd::close(fd);
            }
        }
        if let Some(lifeline) = &self.lifeline {
            let _ = nix::unistd::close(lifeline.as_raw_fd());
        }
        let _ = sigprocmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None);
    }

    /// The spare's life (see the module docs): prepare, say so, wait for the command (or for
    /// the zygote or skiff to end), run it. Its exit code.
    fn spare_main(
        &self,
        socket: UnixStream,
        watch: std::io::PipeReader,
        report: std::io::PipeWriter,
    ) -> i32 {
        let lifeline = self.lifeline.as_ref().and_then(|l| l.try_clone().ok());
        self.close_inherited();
        // The host's view of paths, for a build ahead to be checked against.
        let host_root = armed::host_root().ok();
        let prepared = match prepare() {
            Ok(p) => p,
            Err(e) => {
                eprintln!("skiff sandbox: cannot prepare a command's namespaces ahead: {e}");
                let _ = (&socket).write_all(&[SPARE_FAILED]);
                return i32::from(SETUP_FAILED);
            }
        };
        if (&socket).write_all(&[SPARE_READY]).is_err() {
            return i32::from(SETUP_FAILED);
        }
        // The last command's plan, built ahead (see [`super::armed`]).
        let plan = self
            .plan_to_build()
            .and_then(|plan| Plan::from_arg(&plan.arg).ok());
        let mut ahead = match plan
            .zip(host_root)
            .map(|(plan, root)| armed::arm(&plan, self.shared_net, &prepared, root))
        {
            Some(Ok(Some(armed))) => Ahead::Built(Box::new(armed)),
            None | Some(Ok(None)) => Ahead::Nothing,
            Some(Err(NotArmed::Skipped(why))) => {
                eprintln!("skiff sandbox: the next command's mounts were not made ahead: {why}");
                Ahead::Nothing
            }
            Some(Err(NotArmed::Dirty(why))) => {
                eprintln!("skiff sandbox: the next command's mounts were not made ahead: {why}");
                Ahead::Dirty
            }
        };
        // Sealed only while no command waits (one that does is run unsealed, sooner); the
        // zygote then hands over only the plan built.
        let seal = self.ahead == AheadMode::Sealed;
        if let Ahead::Built(build) = &mut ahead
            && seal
            && matches!(
                poll(
                    &mut [PollFd::new(socket.as_fd(), PollFlags::POLLIN)],
                    PollTimeout::ZERO
                ),
                Ok(0)
            )
        {
            if let Err(why) = build.seal() {
                eprintln!("skiff sandbox: {why}");
                let _ = (&report).write_all(&[STALE]);
                return i32::from(SETUP_FAILED);
            }
            let _ = (&socket).write_all(&[SPARE_ARMED]);
        }
        loop {
            let mut fds = vec![
                PollFd::new(socket.as_fd(), PollFlags::POLLIN),
                PollFd::new(watch.as_fd(), PollFlags::POLLIN),
            ];
            if let Some(lifeline) = &lifeline {
                fds.push(PollFd::new(lifeline.as_fd(), PollFlags::POLLIN));
            }
            match poll(&mut fds, PollTimeout::NONE) {
                Ok(_) | Err(nix::errno::Errno::EINTR) => {}
                Err(_) => return i32::from(SETUP_FAILED),
            }
            let fired = |f: &PollFd<'_>| f.revents().is_some_and(|r| !r.is_empty());
            // The zygote or skiff is gone: nothing was run.
            if fds[1..].iter().any(fired) {
                return 137;
            }
            if fired(&fds[0]) {
                break;
            }
        }
        match read_request(&socket) {
            Ok(Some(Request::Run(run))) => {
                drop(socket);
                self.run_command(run, watch, report, lifeline, Some(prepared), ahead)
            }
            _ => i32::from(SETUP_FAILED),
        }
    }

    /// In the command's PID 1 (its inherited descriptors closed): take the command's
    /// descriptors and directory, and run it.
    fn run_command(
        &self,
        run: Run,
        watch: std::io::PipeReader,
        report: std::io::PipeWriter,
        lifeline: Option<OwnedFd>,
        mut prepared: Option<Prepared>,
        ahead: Ahead,
    ) -> i32 {
        let Run {
            out,
            end,
            cwd,
            args,
            env,
            ..
        } = run;
        let Some(out) = out else {
            return i32::from(SETUP_FAILED);
        };
        let stdio = || -> std::io::Result<()> {
            let null = std::fs::File::open("/dev/null")?;
            for (fd, target) in [
                (null.as_raw_fd(), 0),
                (out.as_raw_fd(), 1),
                (out.as_raw_fd(), 2),
            ] {
                // SAFETY: dup2 on descriptors this process owns; 0..=2 are replaced.
                if unsafe { libc::dup2(fd, target) } == -1 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        };
        if stdio().is_err() {
            return i32::from(SETUP_FAILED);
        }
        drop(out);
        let request = match HelperRequest::parse(args) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("skiff sandbox: {e}");
                return 2;
            }
        };
        // The sandbox built ahead, when it is this plan's and still in place; else the zygote
        // starts the command afresh.
        let stale = match (ahead, prepared.as_mut()) {
            (Ahead::Built(armed), Some(prepared)) => armed.settle(&request.plan, prepared).is_err(),
            (Ahead::Dirty, _) => true,
            _ => false,
        };
        if stale {
            let _ = (&report).write_all(&[STALE]);
            return i32::from(SETUP_FAILED);
        }
        if let Err(e) = std::env::set_current_dir(&cwd) {
            eprintln!(
                "skiff sandbox: cannot enter {}: {e}; the command was not run",
                std::path::Path::new(&cwd).display()
            );
            return i32::from(SETUP_FAILED);
        }
        // It dies with the zygote: `PR_SET_PDEATHSIG` and the end of file of `watch`, both
        // checked by PID 1's set-up before anything runs.
        init_in_zygote_child(
            &request.plan,
            &request.program,
            &request.args,
            watch,
            lifeline,
            self.shared_net,
            &env,
            Reports {
                zygote: report,
                skiff: end,
            },
            prepared,
        )
    }
}

/// The next request on `socket`; `None` at end of file.
fn read_request(socket: &UnixStream) -> std::io::Result<Option<Request>> {
    let mut socket = socket;
    let mut header = [0u8; HEADER];
    let mut space = nix::cmsg_space!([RawFd; 2]);
    let (got, mut fds) = {
        let mut iov = [IoSliceMut::new(&mut header)];
        let msg = recvmsg::<()>(
            socket.as_raw_fd(),
            &mut iov,
            Some(&mut space),
            MsgFlags::MSG_CMSG_CLOEXEC,
        )?;
        let mut fds = Vec::new();
        for cmsg in msg.cmsgs()? {
            if let ControlMessageOwned::ScmRights(raw) = cmsg {
                for fd in raw {
                    // SAFETY: the kernel just installed this descriptor for us.
                    fds.push(unsafe { OwnedFd::from_raw_fd(fd) });
                }
            }
        }
        (msg.bytes, fds.into_iter())
    };
    // The output first, then skiff's pipe for the exit code; any more are closed.
    let (out, end) = (fds.next(), fds.next());
    if got == 0 {
        return Ok(None);
    }
    socket.read_exact(&mut header[got..])?;
    let kind = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
    let len = u32::from_le_bytes([header[4], header[5], header[6], header[7]]) as usize;
    if !(8..=MAX_PAYLOAD).contains(&len) {
        return Err(std::io::Error::other("bad request length"));
    }
    let mut payload = vec![0u8; len];
    socket.read_exact(&mut payload)?;
    let (id, rest) = payload.split_at(8);
    let id = u64::from_le_bytes(id.try_into().map_err(std::io::Error::other)?);
    if kind == KILL {
        return Ok(Some(Request::Kill { id }));
    }
    if kind != RUN {
        return Err(std::io::Error::other("unknown request"));
    }
    let (mut cwd, mut args, mut env) = (OsString::new(), Vec::new(), Vec::new());
    for entry in rest.split(|b| *b == 0).filter(|e| !e.is_empty()) {
        let value = entry[1..].to_vec();
        match entry[0] {
            b'C' => cwd = OsString::from_vec(value),
            b'A' => args.push(OsString::from_vec(value)),
            b'E' => {
                if let Some(eq) = value.iter().position(|b| *b == b'=') {
                    let mut name = value;
                    let value = name.split_off(eq + 1);
                    name.pop();
                    env.push((OsString::from_vec(name), OsString::from_vec(value)));
                }
            }
            _ => return Err(std::io::Error::other("unknown request entry")),
        }
    }
    Ok(Some(Request::Run(Run {
        id,
        out,
        end,
        cwd,
        args,
        env,
        payload,
    })))
}

/// The payload of a run request (see the module docs).
pub(super) fn run_payload(
    id: u64,
    cwd: &std::path::Path,
    args: &[OsString],
    env: &[(OsString, OsString)],
) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    let mut out = id.to_le_bytes().to_vec();
    let mut entry = |tag: u8, parts: &[&[u8]]| {
        out.push(tag);
        for p in parts {
            out.extend(p.iter().filter(|b| **b != 0));
        }
        out.push(0);
    };
    entry(b'C', &[cwd.as_os_str().as_bytes()]);
    for a in args {
        entry(b'A', &[a.as_bytes()]);
    }
    for (k, v) in env {
        if !k.is_empty() && !k.as_bytes().contains(&b'=') {
            entry(b'E', &[k.as_bytes(), b"=", v.as_bytes()]);
        }
    }
    out
}

/// The raw wait status of a process that exited with `code` (what skiff is told).
pub(super) fn exited(code: i32) -> i32 {
    (code & 0xff) << 8
}

/// The header of a request.
pub(super) fn header(kind: u32, payload_len: usize) -> [u8; HEADER] {
    let mut h = [0u8; HEADER];
    h[..4].copy_from_slice(&kind.to_le_bytes());
    h[4..8].copy_from_slice(&u32::try_from(payload_len).unwrap_or(u32::MAX).to_le_bytes());
    h
}

/// Send a request with its descriptors (none, or a run's output and pipe for the exit code).
pub(super) fn send(
    socket: &UnixStream,
    kind: u32,
    payload: &[u8],
    fds: &[BorrowedFd<'_>],
) -> std::io::Result<()> {
    use nix::sys::socket::{ControlMessage, sendmsg};
    let head = header(kind, payload.len());
    let raw: Vec<RawFd> = fds.iter().map(AsRawFd::as_raw_fd).collect();
    let cmsgs: Vec<ControlMessage<'_>> = if raw.is_empty() {
        Vec::new()
    } else {
        vec![ControlMessage::ScmRights(&raw)]
    };
    let mut sent = 0;
    while sent == 0 {
        match sendmsg::<()>(
            socket.as_raw_fd(),
            &[IoSlice::new(&head)],
            &cmsgs,
            MsgFlags::MSG_NOSIGNAL,
            None,
        ) {
            Ok(n) => sent = n,
            Err(nix::errno::Errno::EINTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    let mut rest = &head[sent..];
    let mut socket = socket;
    socket.write_all(rest)?;
    rest = payload;
    socket.write_all(rest)
}

/// The `--plan` argument of a request's arguments, as given.
fn plan_arg(args: &[OsString]) -> Option<OsString> {
    let at = args.iter().position(|a| a == "--plan")?;
    args.get(at + 1).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_entries_drop_nul_and_bad_names() {
        let p = run_payload(
            7,
            std::path::Path::new("/w"),
            &["--".into(), "a\0b".into()],
            &[
                ("A".into(), "1=2".into()),
                ("B=C".into(), "x".into()),
                ("".into(), "y".into()),
            ],
        );
        assert_eq!(&p[..8], &7u64.to_le_bytes());
        assert_eq!(&p[8..], b"C/w\0A--\0Aab\0EA=1=2\0");
    }

    fn run(cwd: &str, plan: &str, out: bool) -> Run {
        let payload = run_payload(1, std::path::Path::new(cwd), &[plan.into()], &[]);
        Run {
            id: 1,
            out: out.then(|| OwnedFd::from(std::fs::File::open("/dev/null").unwrap())),
            end: None,
            cwd: cwd.into(),
            args: vec![plan.into()],
            env: Vec::new(),
            payload,
        }
    }

    #[test]
    fn a_spare_runs_no_command_that_names_proc_or_dev() {
        let plan = r#"{"hide":["/home/u/.ssh"],"expose":["/home/u/.ssh/known_hosts"]}"#;
        assert!(run("/w", plan, true).fits_a_spare());
        // No output descriptor: a fresh fork refuses it with the usual message.
        assert!(!run("/w", plan, false).fits_a_spare());
        assert!(!run("/proc/self", plan, true).fits_a_spare());
        assert!(!run("/dev/shm/w", plan, true).fits_a_spare());
        assert!(!run("/w", r#"{"expose":["/dev/shm/x"]}"#, true).fits_a_spare());
        assert!(!run("/w", r#"{"write":["/proc/sys"]}"#, true).fits_a_spare());
    }
}
