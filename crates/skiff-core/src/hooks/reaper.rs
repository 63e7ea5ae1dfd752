//! A hook's processes end with the hook: the hook's shell runs below a small reaper process
//! (a fork of the spawned child, before it execs), which is a child subreaper
//! (`PR_SET_CHILD_SUBREAPER`): whatever the hook starts and leaves behind — even with `setsid`,
//! in another process group and session — becomes the reaper's child once its parent exits. When
//! the hook's shell exits (or the reaper is sent SIGTERM: the hook timed out), the reaper kills
//! the shell's process group and every child it has, again until none is left, then exits with
//! the shell's status.
//!
//! Where the reaper cannot be set up (no subreaper support, a failed fork), the hook runs as
//! before, alone in its process group.
//!
//! `unsafe` is needed for `pre_exec` and the raw system calls. The closure runs in the forked
//! child of a multi-threaded process, so it must only make async-signal-safe calls: it uses
//! `prctl`, `fork`, `setpgid`, `sigaction`, `waitpid`, `kill`, `open`, `read`, `close`,
//! `close_range`,
//! `raise` and `_exit` directly from `libc`, on stack buffers, and allocates nothing.
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the reaper's SIGTERM handler.
static TERMINATE: AtomicBool = AtomicBool::new(false);

/// Run `cmd` (already set to start its own process group) below a reaper.
pub(crate) fn below_reaper(cmd: &mut tokio::process::Command) {
    // SAFETY: `start_reaper` runs in the child between fork and exec and makes only
    // async-signal-safe calls (see the module documentation); it allocates nothing and takes
    // no lock.
    unsafe {
        cmd.pre_exec(|| {
            start_reaper();
            Ok(())
        });
    }
}

extern "C" fn on_term(_: libc::c_int) {
    TERMINATE.store(true, Ordering::SeqCst);
}

/// In the spawned child: become the subreaper, fork the hook's shell (which returns here and
/// goes on to exec), and stay behind as the reaper, which never returns.
fn start_reaper() {
    // SAFETY: plain system calls with valid arguments; see the module documentation.
    unsafe {
        if libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 {
            return;
        }
        let shell = libc::fork();
        if shell < 0 {
            let _ = libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
            return;
        }
        if shell == 0 {
            // The hook's shell: its own group (the reaper kills it whole), and it dies with the
            // reaper if the reaper is killed outright.
            libc::setpgid(0, 0);
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            return;
        }
        reap(shell)
    }
}

/// The reaper's life: wait for everything below it; once the shell is gone (or SIGTERM came),
/// kill what is left; exit as the shell did.
unsafe fn reap(shell: libc::pid_t) -> ! {
    // SAFETY: as above.
    unsafe {
        // The reaper never execs, so it still has every descriptor skiff had (close-on-exec
        // ones too, such as the write end of the hook's stdin): it closes them all, so that
        // nothing waits on a descriptor only the reaper holds.
        if libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32) != 0 {
            for fd in 0..65_536 {
                libc::close(fd);
            }
        }
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_term as *const () as usize;
        libc::sigemptyset(&mut action.sa_mask);
        // No SA_RESTART: a signal interrupts waitpid.
        action.sa_flags = 0;
        libc::sigaction(libc::SIGTERM, &action, std::ptr::null_mut());
        libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
        let mut status: libc::c_int = 0;
        let mut shell_status: Option<libc::c_int> = None;
        let mut ending = false;
        loop {
            if TERMINATE.load(Ordering::SeqCst) && !ending {
                ending = true;
                kill_below(shell);
            }
            let pid = libc::waitpid(-1, &mut status, 0);
            if pid == shell {
                shell_status = Some(status);
                ending = true;
                kill_below(shell);
            } else if pid > 0 {
                if ending {
                    kill_below(shell);
                }
            } else if *libc::__errno_location() != libc::EINTR {
                // ECHILD: nothing is left.
                break;
            }
        }
        match shell_status {
            Some(s) if libc::WIFEXITED(s) => libc::_exit(libc::WEXITSTATUS(s)),
            Some(s) if libc::WIFSIGNALED(s) => {
                let sig = libc::WTERMSIG(s);
                libc::signal(sig, libc::SIG_DFL);
                libc::raise(sig);
                libc::_exit(128 + sig)
            }
            _ => libc::_exit(128 + libc::SIGTERM),
        }
    }
}

/// SIGKILL the shell's process group and every process that is now the reaper's child.
unsafe fn kill_below(shell: libc::pid_t) {
    // SAFETY: as above; the buffer is on the stack and the path NUL-terminated.
    unsafe {
        libc::kill(-shell, libc::SIGKILL);
        let path = b"/proc/thread-self/children\0";
        let fd = libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return;
        }
        let mut buf = [0u8; 4096];
        let mut pid: libc::pid_t = 0;
        let mut digits = false;
        loop {
            let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
            if n <= 0 {
                break;
            }
            for &b in &buf[..n as usize] {
                if b.is_ascii_digit() {
                    pid = pid
                        .saturating_mul(10)
                        .saturating_add(libc::pid_t::from(b - b'0'));
                    digits = true;
                } else {
                    if digits && pid > 1 {
                        libc::kill(pid, libc::SIGKILL);
                    }
                    pid = 0;
                    digits = false;
                }
            }
        }
        if digits && pid > 1 {
            libc::kill(pid, libc::SIGKILL);
        }
        libc::close(fd);
    }
}
