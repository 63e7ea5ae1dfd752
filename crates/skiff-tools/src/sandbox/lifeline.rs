//! skiff's lifeline: a pipe whose write end only skiff holds, for as long as it lives. Every
//! sandbox helper inherits the read end when it is forked, so the sandbox's PID 1 sees end of
//! file the moment skiff is gone, however it went (`kill -9`, a crash), and ends the whole
//! namespace. The process guard ([`crate::process_guard`]) hears of a process group only after
//! `spawn` returns; a skiff killed in that window left the command running. The lifeline has no
//! such window: the descriptor is there from the helper's first instruction.
//!
//! `unsafe` here, and why it is sound:
//! - `pre_exec` runs between fork and exec in the child; the closure only calls `fcntl` (an
//!   async-signal-safe system call) on an integer, allocating nothing and taking no lock.
//! - `BorrowedFd::borrow_raw` / `OwnedFd::from_raw_fd` in [`inherited`]: the number comes from
//!   a variable skiff sets to a descriptor it left open for the helper ([`FD_VAR`], the zygote's
//!   socket); it is checked to be open and of the expected type (`fstat`) before it is owned,
//!   and owned only once (each variable is read once, at the helper's start, and the sandboxed
//!   program never sees it).
#![allow(unsafe_code)]

use std::io::{PipeReader, PipeWriter};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::sync::OnceLock;

/// The variable that tells the helper which descriptor is the lifeline's read end.
pub const FD_VAR: &str = "SKIFF_LIFELINE_FD";

/// The pipe, created on first use; `None` when it could not be created (the process guard
/// still covers skiff's death, with its window).
static LIFELINE: OnceLock<Option<(PipeReader, PipeWriter)>> = OnceLock::new();

/// The read end's descriptor (close-on-exec in skiff itself).
fn read_end() -> Option<RawFd> {
    LIFELINE
        .get_or_init(|| match std::io::pipe() {
            Ok(pipe) => Some(pipe),
            Err(e) => {
                tracing::warn!(error = %e, "cannot create the sandbox's lifeline");
                None
            }
        })
        .as_ref()
        .map(|(reader, _)| reader.as_raw_fd())
}

/// Whether there is a lifeline to hand over (the pipe could be created).
pub(crate) fn available() -> bool {
    read_end().is_some()
}

/// Hand the lifeline to the helper `cmd` starts: the read end stays open across its exec (and
/// only its: skiff's copy is close-on-exec, so no other child inherits it) and [`FD_VAR`] names
/// it.
pub(crate) fn attach(cmd: &mut tokio::process::Command) {
    let Some(fd) = read_end() else {
        return;
    };
    cmd.env(FD_VAR, fd.to_string());
    // SAFETY: see the module docs; `fcntl(F_SETFD)` is async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            if libc::fcntl(fd, libc::F_SETFD, 0) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// In the helper: the lifeline skiff handed over, made close-on-exec again (the program the
/// sandbox runs never holds it). `None` when the variable is missing or names no open pipe.
pub(super) fn take() -> Option<OwnedFd> {
    inherited(FD_VAR, libc::S_IFIFO)
}

/// The descriptor the variable `var` names, if it is open and of file type `kind` (`S_IFIFO`,
/// `S_IFSOCK`), owned and made close-on-exec again. For descriptors skiff leaves open across a
/// helper's `exec` (the lifeline, the zygote's socket); to be taken once per process.
pub(super) fn inherited(var: &str, kind: libc::mode_t) -> Option<OwnedFd> {
    let fd: RawFd = std::env::var(var).ok()?.parse().ok()?;
    if fd <= 2 {
        return None;
    }
    // SAFETY: see the module docs; only used for `fstat` before ownership is taken.
    let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
    let stat = nix::sys::stat::fstat(borrowed).ok()?;
    if stat.st_mode & libc::S_IFMT != kind {
        return None;
    }
    // SAFETY: see the module docs: open, of the expected type, and owned nowhere else in this
    // process.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    nix::fcntl::fcntl(
        &owned,
        nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::FD_CLOEXEC),
    )
    .ok()?;
    Some(owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_read_end_is_close_on_exec_in_skiff() {
        let fd = read_end().unwrap();
        // SAFETY: the test only reads the flags of a descriptor this process owns.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
        assert_eq!(flags & libc::FD_CLOEXEC, libc::FD_CLOEXEC);
    }

    #[tokio::test]
    async fn only_the_attached_child_inherits_the_read_end() {
        let fd = read_end().unwrap();
        let probe = format!("test -e /proc/self/fd/{fd} && echo open || echo closed");
        let mut attached = tokio::process::Command::new("sh");
        attached.arg("-c").arg(&probe);
        attach(&mut attached);
        let out = attached.output().await.unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "open");
        let out = tokio::process::Command::new("sh")
            .arg("-c")
            .arg(&probe)
            .output()
            .await
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "closed");
    }
}
