//! Unix sockets the sandbox did not make stay out of reach, wherever they are (Linux).
//!
//! The mounts hide the sockets skiff knows of (ssh-agent, docker, tmux, X, `/run`), but a
//! pathname socket anywhere else the command can see — a password manager's agent in the home
//! directory, an application's socket, one made in `/tmp` after the command started — is
//! reached by its path from any network namespace, and Landlock cannot refuse `connect(2)` on
//! one. So PID 1 installs a seccomp filter on itself just before it starts the command (so on
//! everything started after, its own relay threads included):
//!
//! - `connect(2)` is handed to PID 1 (a user notification). PID 1 takes the caller's socket
//!   (`pidfd_getfd(2)`), copies the address, and connects the socket itself, to its copy, so no
//!   other thread of the command can change the address in between. A path is looked up once,
//!   as the caller would (from its working directory), and the socket file it leads to is
//!   connected to through that very lookup (`/proc/self/fd/N`) only when it is one of:
//!   listening in this sandbox's network namespace (a test suite's server, a database started
//!   inside: `sock_diag(7)` names the file and the path of each, and that path must lead to
//!   the file connected to: [`listening_here`]), named in `sandbox.network.allowUnixSockets`,
//!   or skiff's proxy (the relay's way out). Any other gets `EACCES` — a socket a process
//!   outside made in the workspace too (a process manager's control socket would run anything),
//!   and one moved there. Abstract sockets belong to the network namespace and pass.
//! - Unix sockets of other kinds than stream and seqpacket cannot be made: a datagram one
//!   (`SOCK_RAW` is made a datagram one) reaches a path by `sendto(2)` without connecting.
//! - Only the families that a network namespace contains can be made (Unix, IPv4, IPv6,
//!   netlink, packet, the kernel's crypto): no vsock (the VM's host), Bluetooth or CAN.
//! - `io_uring_setup(2)` fails (a ring's connect would pass the filter by).
//!
//! Where the filter cannot be installed because an outer one already hands calls to another
//! supervisor (skiff inside skiff's sandbox), the outer one goes on containing the command.
//!
//! `unsafe` here, and why it is sound: `seccomp(2)`, the `SECCOMP_IOCTL_NOTIF_*` ioctls,
//! `pidfd_open(2)`, `pidfd_getfd(2)`, `process_vm_readv(2)` and `connect(2)` are called with
//! structures that live on the stack (or in a `Vec`) for the call, of the kernel's layout (the
//! ioctl numbers encode the structure sizes, so a kernel whose structures differ refuses the
//! call instead of writing past them); every descriptor a call returns is owned at once.
#![allow(unsafe_code)]

use std::ffi::OsStr;
use std::io::Read;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A socket file's identity as the kernel's `sock_diag` names it: the device of its
/// filesystem (the kernel's encoding, `major << 20 | minor`) and its inode number's low 32
/// bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    dev: u32,
    ino: u32,
}

/// Which socket files the command may connect to besides those bound in its own network
/// namespace.
#[derive(Debug)]
struct Policy {
    /// The files of `allowUnixSockets`' sockets and of skiff's proxy ([`file_id`]), taken
    /// before the command started: a command cannot turn a listed path into a link to
    /// another socket.
    allowed: Vec<(u64, u64)>,
}

/// The filter installed on this process, and its listener: nothing answers its calls until a
/// [`Guard`] is made over it, so nothing here may connect meanwhile (PID 1 never does on its
/// own thread).
pub(super) struct Filter {
    listener: OwnedFd,
}

impl Filter {
    /// Install the filter on this thread (and so on what it starts from now on); `None` where
    /// an outer filter supervises already or the architecture is not one the filter knows
    /// (the mounts still hide the known sockets there). The thread must not gain privileges
    /// (`PR_SET_NO_NEW_PRIVS`, set by [`super::namespaces::restrict`]).
    pub(super) fn install() -> Result<Option<Self>, String> {
        let Some(program) = program() else {
            return Ok(None);
        };
        match install_filter(&program) {
            Ok(listener) => Ok(Some(Self { listener })),
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => Ok(None),
            Err(e) => Err(format!("cannot install the socket filter (seccomp): {e}")),
        }
    }
}

/// The filter's listener, kept by PID 1, which answers each call ([`Guard::serve`]).
pub(super) struct Guard {
    listener: Arc<OwnedFd>,
    policy: Arc<Policy>,
    /// Connects under way, each in a thread ([`MAX_PENDING`] at most).
    pending: Arc<std::sync::atomic::AtomicUsize>,
}

/// At most this many connects are under way at once (each a thread of PID 1 holding the
/// caller's socket; a non-blocking one's is over at once); more get `EAGAIN`, so a flood of
/// connects that never complete cannot take PID 1's descriptors from the relay.
const MAX_PENDING: usize = 256;

impl Guard {
    /// Install the filter on this thread ([`Filter::install`]) and guard it. `allowed` are the
    /// sockets named in `allowUnixSockets` (paths with no symbolic link on the way: skiff
    /// resolved them; one that is not a socket file reached without a link is left out),
    /// `proxy` skiff's proxy as the relay reaches it.
    pub(super) fn install(
        allowed: &[PathBuf],
        proxy: Option<&Path>,
    ) -> Result<Option<Self>, String> {
        Ok(Filter::install()?.map(|filter| Self::over(filter, allowed, proxy)))
    }

    /// The guard over a filter installed ahead ([`Filter::install`], in a spare built for the
    /// command's plan): the policy is taken now, as the command starts, as
    /// [`Guard::install`] takes it.
    pub(super) fn over(filter: Filter, allowed: &[PathBuf], proxy: Option<&Path>) -> Self {
        let mut ids: Vec<(u64, u64)> = allowed
            .iter()
            .filter_map(|p| open_without_links(p))
            .filter_map(|fd| socket_file_id(fd.as_fd()))
            .collect();
        ids.extend(
            proxy
                .and_then(|p| open_path(p).ok())
                .and_then(|fd| socket_file_id(fd.as_fd())),
        );
        Self {
            listener: Arc::new(filter.listener),
            policy: Arc::new(Policy { allowed: ids }),
            pending: Arc::default(),
        }
    }

    /// The descriptor to poll: readable when a call waits for an answer.
    pub(super) fn fd(&self) -> BorrowedFd<'_> {
        self.listener.as_fd()
    }

    /// Take the waiting call and answer it in a thread of its own (a blocking connect must not
    /// hold up PID 1's loop).
    pub(super) fn serve(&self) {
        // SAFETY: a zeroed seccomp_notif is a valid value (and what the ioctl requires).
        let mut notif: libc::seccomp_notif = unsafe { std::mem::zeroed() };
        // SAFETY: see the module docs.
        let got = unsafe {
            libc::ioctl(
                self.listener.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_RECV,
                &mut notif,
            )
        };
        if got != 0 {
            // The caller was killed meanwhile (ENOENT), or nothing was waiting after all.
            return;
        }
        // PID 1's own threads (the relay's, and those doing the command's connects here) run
        // this module's code: their calls go ahead as made. The caller waits in the call, so
        // its thread id is its own while it is listed here.
        if Path::new(&format!("/proc/self/task/{}", notif.pid)).exists() {
            let resp = libc::seccomp_notif_resp {
                id: notif.id,
                val: 0,
                error: 0,
                flags: libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32,
            };
            send(&self.listener, &resp);
            return;
        }
        // What can be answered without connecting (a path that leads nowhere, as glibc's
        // look-up of nscd's socket at every program's start does; a refusal) is answered here;
        // a connect, which may block, in a thread.
        match read_call(&notif, &self.policy) {
            Err(errno) => respond(&self.listener, notif.id, Err(errno)),
            Ok(call) => self.connect_in_thread(call, notif.id),
        }
    }

    /// Connect in a thread of its own ([`MAX_PENDING`] at most): a connect may block, and
    /// this thread cannot connect at all (its own calls come to itself).
    fn connect_in_thread(&self, call: Call, id: u64) {
        use std::sync::atomic::Ordering;
        if self.pending.fetch_add(1, Ordering::SeqCst) >= MAX_PENDING {
            self.pending.fetch_sub(1, Ordering::SeqCst);
            respond(&self.listener, id, Err(libc::EAGAIN));
            return;
        }
        let (listener, pending) = (Arc::clone(&self.listener), Arc::clone(&self.pending));
        let spawned = std::thread::Builder::new()
            .stack_size(64 * 1024)
            .spawn(move || {
                let result = call.take(id, &listener).and_then(Taken::connect);
                respond(&listener, id, result);
                pending.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            self.pending.fetch_sub(1, Ordering::SeqCst);
            respond(&self.listener, id, Err(libc::EAGAIN));
        }
    }
}

/// Tell the kernel how the call went: `Ok` is a return value of 0, `Err` an errno.
fn respond(listener: &OwnedFd, id: u64, result: Result<(), i32>) {
    let resp = libc::seccomp_notif_resp {
        id,
        val: 0,
        error: match result {
            Ok(()) => 0,
            Err(errno) => -errno,
        },
        flags: 0,
    };
    send(listener, &resp);
}

fn send(listener: &OwnedFd, resp: &libc::seccomp_notif_resp) {
    // SAFETY: see the module docs. A failure means the caller is gone: nothing to tell.
    unsafe {
        libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_SEND, resp);
    }
}

fn last_errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// Own a descriptor a system call returned, or its errno.
fn owned(fd: libc::c_long) -> Result<OwnedFd, i32> {
    if fd < 0 {
        return Err(last_errno());
    }
    let raw = RawFd::try_from(fd).map_err(|_| libc::EBADF)?;
    // SAFETY: the kernel just returned this descriptor to this process; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// A `connect(2)` PID 1 will do for the caller: the caller's thread, its socket's
/// descriptor number there, the address it gave, and (for a socket file) the file it leads to,
/// already found permitted.
struct Call {
    tid: u32,
    fd: i32,
    addr: libc::sockaddr_storage,
    len: usize,
    target: Option<OwnedFd>,
}

/// Read the call the notification describes and decide on it, as the module docs say; its
/// errno when it fails or is refused before any connect.
fn read_call(n: &libc::seccomp_notif, policy: &Policy) -> Result<Call, i32> {
    let tid = n.pid;
    // Arguments as the kernel reads them: an int, a pointer, an int.
    let fd = n.data.args[0] as i32;
    let ptr = n.data.args[1];
    let len = n.data.args[2] as u32 as usize;
    if len > std::mem::size_of::<libc::sockaddr_storage>() {
        return Err(libc::EINVAL);
    }
    // SAFETY: a zeroed sockaddr_storage is a valid value.
    let mut addr: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    if len > 0 {
        let local = libc::iovec {
            iov_base: (&raw mut addr).cast(),
            iov_len: len,
        };
        let remote = libc::iovec {
            iov_base: ptr as usize as *mut libc::c_void,
            iov_len: len,
        };
        // SAFETY: see the module docs; `local` covers `addr`, which is at least `len` long.
        let read = unsafe { libc::process_vm_readv(tid as libc::pid_t, &local, 1, &remote, 1, 0) };
        if read < 0 {
            return Err(last_errno());
        }
        if read != len as isize {
            return Err(libc::EFAULT);
        }
    }
    let mut call = Call {
        tid,
        fd,
        addr,
        len,
        target: None,
    };
    let path_len = len.saturating_sub(std::mem::size_of::<libc::sa_family_t>());
    if i32::from(addr.ss_family) != libc::AF_UNIX || path_len == 0 {
        return Ok(call);
    }
    // SAFETY: a sockaddr_storage is large and aligned enough for a sockaddr_un.
    let un: &libc::sockaddr_un = unsafe { &*(&raw const addr).cast() };
    let bytes: Vec<u8> = un.sun_path[..path_len.min(un.sun_path.len())]
        .iter()
        .map(|&c| c as u8)
        .collect();
    // An abstract name (a leading NUL) belongs to the network namespace.
    if bytes.first().is_none_or(|&b| b == 0) {
        return Ok(call);
    }
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    let path = Path::new(OsStr::from_bytes(&bytes[..end]));
    // Only what the path needs is looked up (glibc tries nscd's socket at every program's
    // start: its answer, ENOENT, must come quickly).
    let cwd = path
        .is_relative()
        .then(|| std::fs::File::open(format!("/proc/{tid}/cwd")).ok())
        .flatten();
    let target = open_as_caller(path, tid, cwd.as_ref())?;
    if !policy.permits(target.as_fd(), cwd.as_ref()) {
        return Err(libc::EACCES);
    }
    call.target = Some(target);
    Ok(call)
}

/// A [`Call`] with the caller's socket in hand.
struct Taken {
    call: Call,
    socket: OwnedFd,
}

impl Taken {
    /// Connect the caller's socket (to the socket file found, or to the address as given);
    /// its errno on failure.
    fn connect(self) -> Result<(), i32> {
        match &self.call.target {
            Some(target) => connect_path(&self.socket, &super::paths::fd_path(target)),
            None => connect_with(&self.socket, &self.call.addr, self.call.len),
        }
    }
}

impl Call {
    /// Take the caller's socket; its errno on failure.
    fn take(self, id: u64, listener: &OwnedFd) -> Result<Taken, i32> {
        let tgid = thread_group(self.tid).ok_or(libc::ESRCH)?;
        // SAFETY: see the module docs.
        let pidfd = owned(unsafe { libc::syscall(libc::SYS_pidfd_open, tgid, 0) })?;
        // SAFETY: see the module docs.
        let socket =
            owned(unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), self.fd, 0) })?;
        // Only now is the caller known to be the one read: its thread still waits in the call,
        // so its process (and what was read of it) cannot be another's.
        let mut id = id;
        // SAFETY: see the module docs.
        if unsafe {
            libc::ioctl(
                listener.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_ID_VALID,
                &mut id,
            )
        } != 0
        {
            return Err(libc::EINTR);
        }
        Ok(Taken { call: self, socket })
    }
}

/// `connect(2)` `socket` to the first `len` bytes of `addr` (a socket address structure).
fn connect_with<T>(socket: &OwnedFd, addr: &T, len: usize) -> Result<(), i32> {
    if len > std::mem::size_of::<T>() {
        return Err(libc::EINVAL);
    }
    // SAFETY: see the module docs; `addr` is valid for `len` bytes.
    let r = unsafe {
        libc::connect(
            socket.as_raw_fd(),
            std::ptr::from_ref(addr).cast(),
            len as libc::socklen_t,
        )
    };
    if r == 0 { Ok(()) } else { Err(last_errno()) }
}

/// The process a thread belongs to (`Tgid` in its status).
fn thread_group(tid: u32) -> Option<i32> {
    let mut status = String::new();
    std::fs::File::open(format!("/proc/{tid}/status"))
        .ok()?
        .read_to_string(&mut status)
        .ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse().ok())
}

/// Open (`O_PATH`) the socket file `path` names for the caller: a relative path from its
/// working directory, `/proc/self` as the caller's own.
fn open_as_caller(path: &Path, tid: u32, cwd: Option<&std::fs::File>) -> Result<OwnedFd, i32> {
    let own = |rest: &Path, base: String| PathBuf::from(base).join(rest);
    let path = if let Ok(rest) = path.strip_prefix("/proc/self") {
        let tgid = thread_group(tid).ok_or(libc::ESRCH)?;
        own(rest, format!("/proc/{tgid}"))
    } else if let Ok(rest) = path.strip_prefix("/proc/thread-self") {
        own(rest, format!("/proc/{tid}"))
    } else {
        path.to_path_buf()
    };
    let dir = match (path.is_relative(), cwd) {
        (false, _) => libc::AT_FDCWD,
        (true, Some(cwd)) => cwd.as_raw_fd(),
        (true, None) => return Err(libc::ENOENT),
    };
    let fd = open_at(dir, &path, 0)?;
    if stat(fd.as_fd())?.st_mode & libc::S_IFMT != libc::S_IFSOCK {
        // What the kernel says when the path is not a socket.
        return Err(libc::ECONNREFUSED);
    }
    Ok(fd)
}

/// Connect `socket` to the socket file at `path` (a `/proc/self/fd/N` link).
fn connect_path(socket: &OwnedFd, path: &Path) -> Result<(), i32> {
    // SAFETY: a zeroed sockaddr_un is a valid value.
    let mut un: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    un.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let bytes = path.as_os_str().as_bytes();
    if bytes.len() >= un.sun_path.len() {
        return Err(libc::ENAMETOOLONG);
    }
    for (dst, src) in un.sun_path.iter_mut().zip(bytes) {
        *dst = *src as libc::c_char;
    }
    let len = std::mem::size_of::<libc::sa_family_t>() + bytes.len() + 1;
    connect_with(socket, &un, len)
}

impl Policy {
    /// Whether the socket file `target` (an `O_PATH` descriptor) may be connected to; `cwd`
    /// is the caller's working directory.
    fn permits(&self, target: BorrowedFd<'_>, cwd: Option<&std::fs::File>) -> bool {
        let Some(file) = file_id(target) else {
            return false;
        };
        self.allowed.contains(&file) || listening_here(target, file, cwd)
    }
}

/// A file's device and inode as `stat` gives them (the whole inode number, and on Btrfs the
/// subvolume's own device).
fn file_id(fd: BorrowedFd<'_>) -> Option<(u64, u64)> {
    stat(fd).ok().map(|st| (st.st_dev, st.st_ino))
}

/// `fstat(2)` of `fd`, or its errno.
fn stat(fd: BorrowedFd<'_>) -> Result<libc::stat, i32> {
    // SAFETY: a zeroed stat is a valid value; fstat fills it.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a plain system call on a descriptor borrowed for it.
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return Err(last_errno());
    }
    Ok(st)
}

/// `openat(2)` of `path` from `dir` with `O_PATH`, `O_CLOEXEC` and `flags`, or its errno.
fn open_at(dir: RawFd, path: &Path, flags: i32) -> Result<OwnedFd, i32> {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(|_| libc::EINVAL)?;
    // SAFETY: a plain system call on a NUL-terminated path that lives for the call.
    let fd = unsafe { libc::openat(dir, c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC | flags) };
    owned(libc::c_long::from(fd))
}

/// `O_PATH` of `path` (symbolic links followed).
fn open_path(path: &Path) -> std::io::Result<OwnedFd> {
    open_at(libc::AT_FDCWD, path, 0).map_err(std::io::Error::from_raw_os_error)
}

/// [`file_id`] of a socket file.
fn socket_file_id(fd: BorrowedFd<'_>) -> Option<(u64, u64)> {
    let st = stat(fd).ok()?;
    (st.st_mode & libc::S_IFMT == libc::S_IFSOCK).then_some((st.st_dev, st.st_ino))
}

/// `O_PATH` of `path`, refused where a symbolic link is on the way (`openat2(2)`,
/// `RESOLVE_NO_SYMLINKS`).
fn open_without_links(path: &Path) -> Option<OwnedFd> {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: a zeroed open_how is a valid value (no flags, no mode, no restriction).
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (libc::O_PATH | libc::O_CLOEXEC) as u64;
    how.resolve = libc::RESOLVE_NO_SYMLINKS;
    // SAFETY: `c` and `how` live for the call; the size is `how`'s.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            c.as_ptr(),
            &raw const how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    owned(fd).ok()
}

/// Whether a socket of this network namespace (this sandbox's, or its session's) listens on
/// the socket file `target` (whose [`file_id`] is `file`). `sock_diag` names the file a
/// listener was bound to only by its filesystem and the low 32 bits of its inode, which can
/// be matched on purpose (Btrfs numbers each subvolume's inodes from 256); so the path the
/// listener was bound to must also lead (without following a final symbolic link) to that
/// very file — a relative one from the caller's working directory.
fn listening_here(target: BorrowedFd<'_>, file: (u64, u64), cwd: Option<&std::fs::File>) -> bool {
    let Some(id) = identity(target) else {
        return false;
    };
    let Ok(listeners) = bound_here() else {
        return false;
    };
    listeners.iter().filter(|l| l.id == id).any(|l| {
        let Some(name) = &l.name else {
            return false;
        };
        let leads_here =
            |dir: RawFd| open_no_follow(dir, name).and_then(|fd| file_id(fd.as_fd())) == Some(file);
        if !name.is_relative() {
            return leads_here(libc::AT_FDCWD);
        }
        // A relative name: from the caller's directory, else from the listening
        // process's (where it was bound, unless it moved since).
        cwd.is_some_and(|c| leads_here(c.as_raw_fd()))
            || owner_cwd(l.socket).is_some_and(|c| leads_here(c.as_raw_fd()))
    })
}

/// The working directory of a process of this PID namespace holding the socket whose own
/// inode is `socket`.
fn owner_cwd(socket: u32) -> Option<std::fs::File> {
    let link = format!("socket:[{socket}]");
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|p| {
        let pid = p.file_name();
        let pid = pid
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))?;
        let holds = std::fs::read_dir(format!("/proc/{pid}/fd"))
            .ok()?
            .flatten()
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|t| t.as_os_str() == link.as_str()));
        holds
            .then(|| std::fs::File::open(format!("/proc/{pid}/cwd")).ok())
            .flatten()
    })
}

/// `O_PATH` of `path` (from `dir`), a final symbolic link itself rather than what it names.
fn open_no_follow(dir: RawFd, path: &Path) -> Option<OwnedFd> {
    open_at(dir, path, libc::O_NOFOLLOW).ok()
}

/// The identity of the file `fd` is open on, as `sock_diag` would name it: the inode from the
/// descriptor's `fdinfo`, the device of its mount from `mountinfo` (a `stat` may report
/// another device: Btrfs subvolumes, overlayfs).
fn identity(fd: BorrowedFd<'_>) -> Option<Identity> {
    let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", fd.as_raw_fd())).ok()?;
    let field = |name: &str| {
        info.lines()
            .find_map(|l| l.strip_prefix(name))
            .map(str::trim)
    };
    let mnt_id = field("mnt_id:")?;
    let ino: u64 = match field("ino:") {
        Some(ino) => ino.parse().ok()?,
        None => stat(fd).ok()?.st_ino,
    };
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let dev = mountinfo.lines().find_map(|l| {
        let mut f = l.split(' ');
        (f.next()? == mnt_id).then_some(())?;
        let (major, minor) = f.nth(1)?.split_once(':')?;
        Some((major.parse::<u32>().ok()? << 20) | minor.parse::<u32>().ok()?)
    })?;
    Some(Identity {
        dev,
        ino: ino as u32,
    })
}

/// A socket listening in this network namespace: the file it was bound to ([`identity`]'s
/// form) and the path it was bound by.
#[derive(Debug)]
struct Listener {
    id: Identity,
    name: Option<PathBuf>,
    /// The socket's own inode (`socket:[N]` in `/proc/PID/fd`).
    socket: u32,
}

/// The sockets listening on a file in this process's network namespace (`sock_diag(7)`,
/// [`super::unix_diag`]).
fn bound_here() -> std::io::Result<Vec<Listener>> {
    Ok(super::unix_diag::listening()?
        .into_iter()
        .filter_map(|l| {
            let (dev, ino) = l.file?;
            Some(Listener {
                id: Identity { dev, ino },
                name: l.name,
                socket: l.socket,
            })
        })
        .collect())
}

/// Install `program` with a listener; its descriptor.
fn install_filter(program: &[libc::sock_filter]) -> std::io::Result<OwnedFd> {
    let prog = libc::sock_fprog {
        len: u16::try_from(program.len()).map_err(|_| std::io::Error::other("filter too long"))?,
        filter: program.as_ptr().cast_mut(),
    };
    // Killable only once PID 1 has the call: a signal cannot restart a connect PID 1 is doing.
    let mut flags =
        libc::SECCOMP_FILTER_FLAG_NEW_LISTENER | libc::SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
    loop {
        // SAFETY: see the module docs; `prog` and the program live for the call.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                flags,
                &raw const prog,
            )
        };
        match owned(fd) {
            Ok(fd) => return Ok(fd),
            // Before Linux 5.19.
            Err(libc::EINVAL) if flags & libc::SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV != 0 => {
                flags &= !libc::SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
            }
            Err(errno) => return Err(std::io::Error::from_raw_os_error(errno)),
        }
    }
}

/// The audit architecture of this build, where the filter knows its system call numbers.
fn audit_arch() -> Option<u32> {
    if cfg!(target_arch = "x86_64") {
        Some(0xC000_003E)
    } else if cfg!(target_arch = "aarch64") {
        Some(0xC000_00B7)
    } else {
        None
    }
}

/// One step of the filter, with jumps by name ([`assemble`]).
#[derive(Clone, Copy)]
enum Op {
    /// Load the 32-bit word at this offset of `seccomp_data`.
    Load(u32),
    And(u32),
    /// Jump to the label when the accumulator equals the value.
    JumpIfEq(u32, &'static str),
    /// Jump to the label when the accumulator has any of these bits.
    JumpIfAny(u32, &'static str),
    Return(u32),
    Label(&'static str),
}

/// The classic BPF of `ops`, labels resolved to forward jumps.
fn assemble(ops: &[Op]) -> Option<Vec<libc::sock_filter>> {
    let mut at = std::collections::HashMap::new();
    let mut n = 0usize;
    for op in ops {
        match op {
            Op::Label(name) => {
                at.insert(*name, n);
            }
            _ => n += 1,
        }
    }
    let insn = |code: u32, k: u32, jt: u8| libc::sock_filter {
        code: code as u16,
        jt,
        jf: 0,
        k,
    };
    let mut out = Vec::with_capacity(n);
    for op in ops {
        let here = out.len();
        let offset = |label: &str| u8::try_from(at.get(label)?.checked_sub(here + 1)?).ok();
        out.push(match *op {
            Op::Label(_) => continue,
            Op::Load(off) => insn(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, off, 0),
            Op::And(k) => insn(libc::BPF_ALU | libc::BPF_AND | libc::BPF_K, k, 0),
            Op::JumpIfEq(k, l) => insn(libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K, k, offset(l)?),
            Op::JumpIfAny(k, l) => {
                insn(libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K, k, offset(l)?)
            }
            Op::Return(k) => insn(libc::BPF_RET | libc::BPF_K, k, 0),
        });
    }
    Some(out)
}

/// The filter the module docs describe.
fn program() -> Option<Vec<libc::sock_filter>> {
    use Op::*;
    let arch = audit_arch()?;
    let errno = |e: i32| libc::SECCOMP_RET_ERRNO | (e as u32 & libc::SECCOMP_RET_DATA);
    let allow = libc::SECCOMP_RET_ALLOW;
    const NR: u32 = 0;
    const ARCH: u32 = 4;
    // The low word of an argument (little-endian).
    let arg = |i: u32| 16 + 8 * i;
    let nr = |n: libc::c_long| n as u32;
    let ops = [
        Load(ARCH),
        JumpIfEq(arch, "native"),
        Return(errno(libc::EPERM)),
        Label("native"),
        Load(NR),
        // x32 numbers (bit 30) under the x86_64 architecture.
        JumpIfAny(0x4000_0000, "deny"),
        JumpIfEq(nr(libc::SYS_connect), "notify"),
        JumpIfEq(nr(libc::SYS_io_uring_setup), "deny"),
        JumpIfEq(nr(libc::SYS_socket), "socket"),
        JumpIfEq(nr(libc::SYS_socketpair), "pair"),
        Return(allow),
        Label("socket"),
        Load(arg(0)),
        JumpIfEq(libc::AF_UNIX as u32, "unix"),
        JumpIfEq(libc::AF_INET as u32, "allow"),
        JumpIfEq(libc::AF_INET6 as u32, "allow"),
        JumpIfEq(libc::AF_NETLINK as u32, "allow"),
        JumpIfEq(libc::AF_PACKET as u32, "allow"),
        JumpIfEq(libc::AF_ALG as u32, "allow"),
        Return(errno(libc::EAFNOSUPPORT)),
        Label("pair"),
        Load(arg(0)),
        JumpIfEq(libc::AF_UNIX as u32, "unix"),
        Return(allow),
        // A Unix socket of a kind that connects before it sends: a datagram one (and a
        // `SOCK_RAW` one, which the kernel makes a datagram one) sends to any path.
        Label("unix"),
        Load(arg(1)),
        And(0xf),
        JumpIfEq(libc::SOCK_STREAM as u32, "allow"),
        JumpIfEq(libc::SOCK_SEQPACKET as u32, "allow"),
        Return(errno(libc::EPERM)),
        Label("allow"),
        Return(allow),
        Label("notify"),
        Return(libc::SECCOMP_RET_USER_NOTIF),
        Label("deny"),
        Return(errno(libc::EPERM)),
    ];
    assemble(&ops)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_assembles_with_every_jump_forward() {
        let Some(p) = program() else {
            return;
        };
        assert!(p.len() > 20 && p.len() < 64);
        let ret = (libc::BPF_RET | libc::BPF_K) as u16;
        assert_eq!(p.last().map(|i| i.code), Some(ret));
        for (i, insn) in p.iter().enumerate() {
            assert!(
                i + 1 + usize::from(insn.jt) < p.len() || insn.jt == 0,
                "jump past the end at {i}: {:?}",
                p.iter().map(|i| (i.code, i.jt, i.k)).collect::<Vec<_>>()
            );
        }
        // A label that is never defined makes no program.
        assert!(assemble(&[Op::JumpIfEq(1, "nowhere"), Op::Return(0)]).is_none());
    }

    #[test]
    fn a_listening_socket_is_permitted_by_its_file_and_the_path_it_was_bound_by() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let cwd = std::fs::File::open(&root).unwrap();
        let policy = Policy {
            allowed: Vec::new(),
        };
        let path = root.join("s");
        let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let fd = open_path(&path).unwrap();
        let id = identity(fd.as_fd()).unwrap();
        assert!(
            bound_here()
                .unwrap()
                .iter()
                .any(|l| l.id == id && l.name.as_deref() == Some(&*path))
        );
        assert!(policy.permits(fd.as_fd(), None));

        // A socket file nobody listens on any more is not.
        let gone = root.join("gone");
        drop(std::os::unix::net::UnixListener::bind(&gone).unwrap());
        let fd = open_path(&gone).unwrap();
        assert!(!policy.permits(fd.as_fd(), Some(&cwd)));

        // One put where a listener's file was (the listener's own file moved away): the
        // path leads to another file.
        std::fs::rename(&path, root.join("moved")).unwrap();
        std::fs::rename(&gone, &path).unwrap();
        let fd = open_path(&path).unwrap();
        assert!(!policy.permits(fd.as_fd(), Some(&cwd)));
        let fd = open_path(&root.join("moved")).unwrap();
        assert!(
            !policy.permits(fd.as_fd(), Some(&cwd)),
            "bound by another path"
        );

        // Named in allowUnixSockets: permitted, listening or not; reached through a link,
        // not taken.
        let fd = open_path(&path).unwrap();
        let named = Policy {
            allowed: open_without_links(&path)
                .and_then(|fd| socket_file_id(fd.as_fd()))
                .into_iter()
                .collect(),
        };
        assert_eq!(named.allowed.len(), 1);
        assert!(named.permits(fd.as_fd(), None));
        std::os::unix::fs::symlink(&path, root.join("link")).unwrap();
        assert!(open_without_links(&root.join("link")).is_none());
        assert!(open_without_links(&root.join("gone-too")).is_none());
    }
}
