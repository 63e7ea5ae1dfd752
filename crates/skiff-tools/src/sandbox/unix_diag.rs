//! The listening Unix sockets of this network namespace, asked of the kernel's socket
//! diagnostics (`sock_diag(7)`, `NETLINK_SOCK_DIAG`, as `ss -xl` asks): only listening sockets
//! are reported, each with the path it was bound by and the file it is bound to.
//!
//! Two readers: the sandbox's socket guard ([`super::sockets`]: whether a command may connect
//! to a socket file) and the paths covered in the sandbox ([`super::paths`]: the socket
//! directories a host process listens in). The latter read `/proc/net/unix` before, which
//! lists every Unix socket, connected ones included, as text: on a desktop with a couple of
//! thousand sockets (the session bus, a browser, editors) some 200 KB formatted and read before
//! each sandboxed command more than 2 seconds after the last scan, that is each one at a
//! model's pace (0.74 ms with 2,000 sockets, 2.2 ms with 4,000 on a 2-core VM), where the
//! diagnostics answer with the few dozen listening ones (0.04 ms). An answer that is malformed
//! or refused is an error, never a partial list; one the kernel says was interrupted
//! (`NLM_F_DUMP_INTR`: the sockets changed while it listed them) is asked again.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use nix::sys::socket::{
    AddressFamily, MsgFlags, SockFlag, SockProtocol, SockType, recv, send, socket,
};

/// `SOCK_DIAG_BY_FAMILY`.
const SOCK_DIAG_BY_FAMILY: u16 = 20;
/// `NLM_F_REQUEST | NLM_F_DUMP` (`NLM_F_ROOT | NLM_F_MATCH`).
const REQUEST_DUMP: u16 = 0x0001 | 0x0300;
/// `NLM_F_DUMP_INTR`: the sockets changed while the kernel listed them.
const DUMP_INTERRUPTED: u16 = 0x0010;
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
/// `TCP_LISTEN`, the state of a listening Unix socket.
const LISTEN: u32 = 10;
/// `UDIAG_SHOW_NAME | UDIAG_SHOW_VFS`: each socket's address and the file it is bound to.
const SHOW_NAME_AND_FILE: u32 = 0x0000_0001 | 0x0000_0002;
/// `UNIX_DIAG_NAME` and `UNIX_DIAG_VFS`, the attributes carrying them.
const ATTR_NAME: u16 = 0;
const ATTR_FILE: u16 = 1;
/// `nlmsghdr` and `unix_diag_msg`.
const HEADER: usize = 16;
const DIAG_MSG: usize = 16;

/// A listening Unix socket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Listening {
    /// The path it was bound by, as given (relative to the binder's directory when relative);
    /// `None` for an abstract or unnamed socket.
    pub(super) name: Option<PathBuf>,
    /// The file it is bound to: its filesystem (the kernel's `major << 20 | minor`) and the
    /// low 32 bits of its inode number (`UNIX_DIAG_VFS`).
    pub(super) file: Option<(u32, u32)>,
    /// The socket's own inode (`socket:[N]` in `/proc/PID/fd`).
    pub(super) socket: u32,
}

/// The listening Unix sockets of this process's network namespace. A dump the kernel says
/// was interrupted is asked again (at most [`ATTEMPTS`] times in all).
pub(super) fn listening() -> std::io::Result<Vec<Listening>> {
    asked_again_when_interrupted(dump)
}

/// `ask()`, again while it fails with `ErrorKind::Interrupted`, [`ATTEMPTS`] times at most.
fn asked_again_when_interrupted<T>(
    mut ask: impl FnMut() -> std::io::Result<T>,
) -> std::io::Result<T> {
    for _ in 1..ATTEMPTS {
        match ask() {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            done => return done,
        }
    }
    ask()
}

/// How many times [`listening`] asks.
const ATTEMPTS: usize = 3;

/// One dump of the listening Unix sockets; an interrupted one is `ErrorKind::Interrupted`.
fn dump() -> std::io::Result<Vec<Listening>> {
    let fd = socket(
        AddressFamily::Netlink,
        SockType::Datagram,
        SockFlag::SOCK_CLOEXEC,
        SockProtocol::NetlinkSockDiag,
    )?;
    let request = request();
    if send(fd.as_raw_fd(), &request, MsgFlags::empty())? != request.len() {
        return Err(std::io::Error::other(
            "sock_diag: the request was cut short",
        ));
    }
    let mut out = Vec::new();
    let mut buf = vec![0u8; 32 * 1024];
    loop {
        let n = recv(fd.as_raw_fd(), &mut buf, MsgFlags::empty())?;
        let batch = buf.get(..n).and_then(|data| read_messages(data, &mut out));
        match batch {
            Some(Batch::More) if n > 0 => {}
            Some(Batch::Done) => return Ok(out),
            Some(Batch::Interrupted) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::Interrupted,
                    "sock_diag: the sockets changed during the dump",
                ));
            }
            _ => return Err(std::io::Error::other("sock_diag: no complete answer")),
        }
    }
}

/// The absolute paths the listening Unix sockets of this network namespace were bound by;
/// `None` when the kernel's diagnostics cannot say (the caller reads `/proc/net/unix`).
pub(super) fn listening_paths() -> Option<HashSet<PathBuf>> {
    let listening = listening().ok()?;
    Some(
        listening
            .into_iter()
            .filter_map(|l| l.name.filter(|n| n.is_absolute()))
            .collect(),
    )
}

/// A dump request for the listening Unix sockets with their names and files.
fn request() -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + 24);
    out.extend_from_slice(&((HEADER + 24) as u32).to_ne_bytes());
    out.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    out.extend_from_slice(&REQUEST_DUMP.to_ne_bytes());
    out.extend_from_slice(&1u32.to_ne_bytes()); // sequence number
    out.extend_from_slice(&0u32.to_ne_bytes()); // port id: the kernel fills it in
    // unix_diag_req: family, protocol, padding, states, inode, show, cookie.
    out.push(libc::AF_UNIX as u8);
    out.extend_from_slice(&[0, 0, 0]);
    out.extend_from_slice(&(1u32 << LISTEN).to_ne_bytes());
    out.extend_from_slice(&0u32.to_ne_bytes());
    out.extend_from_slice(&SHOW_NAME_AND_FILE.to_ne_bytes());
    out.extend_from_slice(&[0xff; 8]); // no cookie (INET_DIAG_NOCOOKIE)
    out
}

/// Whether a datagram of the answer was its last.
#[derive(Debug, PartialEq)]
enum Batch {
    More,
    Done,
    /// `NLM_F_DUMP_INTR`: the list may lack sockets; ask again.
    Interrupted,
}

/// The sockets in one datagram of the answer, added to `out`; `None` for an error or a
/// malformed message.
fn read_messages(mut data: &[u8], out: &mut Vec<Listening>) -> Option<Batch> {
    while data.len() >= HEADER {
        let len = u32_at(data, 0)? as usize;
        let kind = u16_at(data, 4)?;
        let flags = u16_at(data, 6)?;
        if len < HEADER || len > data.len() {
            return None;
        }
        if flags & DUMP_INTERRUPTED != 0 {
            return Some(Batch::Interrupted);
        }
        match kind {
            NLMSG_DONE => return Some(Batch::Done),
            NLMSG_ERROR => return None,
            SOCK_DIAG_BY_FAMILY => out.push(socket_of(data.get(HEADER..len)?)?),
            _ => {}
        }
        data = data.get(align(len).min(data.len())..)?;
    }
    Some(Batch::More)
}

/// One socket's message (`unix_diag_msg` then its attributes); `None` when malformed.
fn socket_of(body: &[u8]) -> Option<Listening> {
    let mut socket = Listening {
        name: None,
        file: None,
        socket: u32_at(body, 4)?,
    };
    let mut attrs = body.get(DIAG_MSG..)?;
    while attrs.len() >= 4 {
        let len = usize::from(u16_at(attrs, 0)?);
        let kind = u16_at(attrs, 2)?;
        if len < 4 || len > attrs.len() {
            return None;
        }
        let value = attrs.get(4..len)?;
        match kind {
            ATTR_NAME => {
                // The address as bound: a path ends with its NUL; an abstract name starts
                // with one (no path).
                let name = value.split(|&b| b == 0).next().unwrap_or_default();
                socket.name = (!name.is_empty()).then(|| PathBuf::from(OsStr::from_bytes(name)));
            }
            // unix_diag_vfs: the inode, then the device.
            ATTR_FILE => socket.file = Some((u32_at(value, 4)?, u32_at(value, 0)?)),
            _ => {}
        }
        attrs = attrs.get(align(len).min(attrs.len())..)?;
    }
    Some(socket)
}

fn align(len: usize) -> usize {
    (len + 3) & !3
}

fn u32_at(data: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(data.get(at..at + 4)?.try_into().ok()?))
}

fn u16_at(data: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(data.get(at..at + 2)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One `SOCK_DIAG_BY_FAMILY` message for socket `inode` bound by `name` to `file` (as the
    /// kernel lays it out).
    fn message(inode: u32, name: &[u8], file: Option<(u32, u32)>) -> Vec<u8> {
        let mut attrs = Vec::new();
        let mut attr = |kind: u16, value: &[u8]| {
            attrs.extend_from_slice(&((4 + value.len()) as u16).to_ne_bytes());
            attrs.extend_from_slice(&kind.to_ne_bytes());
            attrs.extend_from_slice(value);
            attrs.resize(align(attrs.len()), 0);
        };
        attr(ATTR_NAME, name);
        if let Some((dev, ino)) = file {
            let mut vfs = ino.to_ne_bytes().to_vec();
            vfs.extend_from_slice(&dev.to_ne_bytes());
            attr(ATTR_FILE, &vfs);
        }
        let len = HEADER + DIAG_MSG + attrs.len();
        let mut m = Vec::new();
        m.extend_from_slice(&(len as u32).to_ne_bytes());
        m.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
        m.extend_from_slice(&0x2u16.to_ne_bytes()); // NLM_F_MULTI
        m.extend_from_slice(&[0; 8]);
        m.extend_from_slice(&[libc::AF_UNIX as u8, 1, LISTEN as u8, 0]);
        m.extend_from_slice(&inode.to_ne_bytes());
        m.extend_from_slice(&[0; 8]);
        m.extend(attrs);
        m
    }

    fn done() -> Vec<u8> {
        let mut m = Vec::new();
        m.extend_from_slice(&20u32.to_ne_bytes());
        m.extend_from_slice(&NLMSG_DONE.to_ne_bytes());
        m.extend_from_slice(&[0; 14]);
        m
    }

    #[test]
    fn answers_are_read_into_sockets() {
        let mut data = message(7, b"/tmp/tmux-1000/default\0", Some((0x0080_0001, 42)));
        data.extend(message(8, b"\0abstract", None));
        data.extend(message(9, b"run/my app.sock\0", Some((3, 4))));
        let mut out = Vec::new();
        assert_eq!(read_messages(&data, &mut out), Some(Batch::More));
        assert_eq!(read_messages(&done(), &mut out), Some(Batch::Done));
        assert_eq!(
            out,
            [
                Listening {
                    name: Some("/tmp/tmux-1000/default".into()),
                    file: Some((0x0080_0001, 42)),
                    socket: 7
                },
                Listening {
                    name: None,
                    file: None,
                    socket: 8
                },
                Listening {
                    name: Some("run/my app.sock".into()),
                    file: Some((3, 4)),
                    socket: 9
                },
            ]
        );
    }

    #[test]
    fn malformed_or_refused_answers_are_errors_and_an_interrupted_one_is_said() {
        let mut out = Vec::new();
        // A length past the datagram.
        let mut data = message(1, b"/a\0", None);
        data.truncate(data.len() - 4);
        assert_eq!(read_messages(&data, &mut out), None);
        // An attribute longer than its message.
        let mut data = message(1, b"/a\0", None);
        let at = HEADER + DIAG_MSG;
        data[at..at + 2].copy_from_slice(&200u16.to_ne_bytes());
        assert_eq!(read_messages(&data, &mut out), None);
        // A file attribute too short for its fields.
        let mut data = message(1, b"/a\0", None);
        let mut short = Vec::new();
        short.extend_from_slice(&8u16.to_ne_bytes());
        short.extend_from_slice(&ATTR_FILE.to_ne_bytes());
        short.extend_from_slice(&[0; 4]);
        data.extend(short);
        let len = data.len() as u32;
        data[..4].copy_from_slice(&len.to_ne_bytes());
        assert_eq!(read_messages(&data, &mut out), None);
        // An error, and a dump the kernel says was interrupted.
        let mut data = done();
        data[4..6].copy_from_slice(&NLMSG_ERROR.to_ne_bytes());
        assert_eq!(read_messages(&data, &mut out), None);
        assert!(out.is_empty(), "{out:?}");
        let mut data = message(1, b"/a\0", None);
        data[6..8].copy_from_slice(&(0x2 | DUMP_INTERRUPTED).to_ne_bytes());
        assert_eq!(read_messages(&data, &mut out), Some(Batch::Interrupted));
    }

    #[test]
    fn an_interrupted_dump_is_asked_again_a_few_times() {
        use std::io::{Error, ErrorKind};
        let interrupted = || Error::new(ErrorKind::Interrupted, "changed");
        let mut calls = 0;
        let got = asked_again_when_interrupted(|| {
            calls += 1;
            if calls < ATTEMPTS {
                Err(interrupted())
            } else {
                Ok(calls)
            }
        });
        assert_eq!(got.ok(), Some(ATTEMPTS));
        let mut calls = 0;
        let got: std::io::Result<()> = asked_again_when_interrupted(|| {
            calls += 1;
            Err(interrupted())
        });
        assert_eq!(got.map_err(|e| e.kind()), Err(ErrorKind::Interrupted));
        assert_eq!(calls, ATTEMPTS);
        let mut calls = 0;
        let got: std::io::Result<()> = asked_again_when_interrupted(|| {
            calls += 1;
            Err(Error::other("refused"))
        });
        assert!(got.is_err());
        assert_eq!(calls, 1, "other errors are not asked again");
    }

    #[test]
    fn the_kernel_names_listening_sockets_and_not_the_others() {
        let dir = tempfile::tempdir().expect("temp dir");
        let listening_path = dir.path().join("listening.sock");
        let bound = dir.path().join("bound only.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&listening_path).expect("listen");
        let _datagram = std::os::unix::net::UnixDatagram::bind(&bound).expect("bind");
        let paths = listening_paths().expect("the kernel's Unix socket diagnostics answer");
        assert!(paths.contains(&listening_path), "{paths:?}");
        assert!(!paths.contains(&bound), "{paths:?}");
        let ours = listening()
            .expect("diagnostics")
            .into_iter()
            .find(|l| l.name.as_deref() == Some(listening_path.as_path()))
            .expect("the listener is reported");
        assert!(ours.file.is_some(), "{ours:?}");
        assert_ne!(ours.socket, 0);
    }
}
