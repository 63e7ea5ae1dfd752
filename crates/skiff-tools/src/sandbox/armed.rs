//! A spare's sandbox made ahead (Linux): a zygote's spare ([`super::zygote`]) builds the plan of
//! the session's last command while it waits, when the two commands before had the same plan
//! (the proxy token aside): the plan's mounts, in the namespace [`prepare`] made, and the relay.
//! When no command is waiting by then, it also restricts itself for that plan (Landlock, every
//! capability dropped: it is *sealed*) and says so to the zygote, which then hands it only a
//! command with that plan; any other starts from a fresh fork.
//!
//! When the command comes, its plan is compared with the one built and each path the plan
//! names is looked up again; only when every one is still what the build found does the
//! command run in the build (the relay takes its token). Otherwise the spare, which cannot take
//! its mounts back, tells the zygote the build is stale and exits, and the zygote starts the
//! command from a fresh fork. A build that fails half way leaves the spare stale for any
//! command; one that fails before its first mount leaves it as it was.
//!
//! What the checks stand for. A mount sits on a path's dentry: when the host renames or
//! removes what a path named, the kernel detaches the mounts on it in every other namespace,
//! so the path then leads to another mount (or to nothing); a path that was absent and now
//! exists leads to something. Each path the plan names is therefore recorded once built (the
//! mount it leads to, its device and inode, or absent) and must lead to the same at hand-over.
//! A bind's source is another matter: its mount does not move when the source's path is
//! replaced, so each source (what is shown again inside hidden directories, skiff's proxy) is
//! looked up again in the host's view (`/` opened before the spare made its own namespace, so
//! lookups from it cross the host's mounts, not the spare's) and must still be the
//! file that was bound. Landlock's rules hold the inodes of the writable paths as opened, so
//! each of those must still be the directory it was. What [`prepare`] sets up does not depend
//! on the plan, and the command's directory is entered at hand-over.
//!
//! Armed only when the command's namespaces are the spare's: no network namespace of its own
//! (forwarded ports), not the namespace probe. The spare says it is ready before the build (a
//! command that comes meanwhile waits for the build, which is shorter than a fresh set-up).
//!
//! `unsafe` here: `statx` into a zeroed `libc::statx` that lives for the call, with a path
//! that is a NUL-terminated copy.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use nix::fcntl::{OFlag, open};
use nix::sched::CloneFlags;
use nix::sys::stat::Mode;

#[cfg(doc)]
use super::namespaces::prepare;
use super::namespaces::{Built, Prepared, Sources, build_mounts, command_namespaces, restrict};
use super::plan::{Mounts, Plan};
use super::relay::Relay;
use super::sockets::Filter;
use super::{NetworkPolicy, writable_paths};

/// The plan's sandbox, built ahead in a spare (see the module docs).
pub(super) struct Armed {
    /// The plan built, its proxy token blank (each command has its own).
    plan: Plan,
    /// Whether Landlock and the dropped capabilities are in force ([`Armed::seal`]).
    sealed: bool,
    /// `/` opened before the spare made its namespace: the host's view of a path (closed
    /// with the build, before the command runs).
    host_root: OwnedFd,
    /// What each path the plan names led to once built.
    built: Vec<(PathBuf, Option<Found>)>,
    /// What each source was when it was opened.
    sources: Opened,
    /// What each path Landlock lets the command write was when its rule was made.
    writable: Vec<(PathBuf, Option<Found>)>,
    relay: Option<Relay>,
    /// The socket filter, installed when sealed (its policy is taken when the command starts).
    filter: Option<Filter>,
}

/// The build is not the command's plan's, or no longer in place: the command must start
/// elsewhere (the spare cannot change its mounts any more).
#[derive(Debug)]
pub(super) struct Stale;

/// What a path leads to: the mount, the device and the inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Found {
    mount: u64,
    dev: u64,
    ino: u64,
}

/// A file's device and inode.
type FileId = (u64, u64);

/// What a source path was when opened for a build (`None`: absent).
type Opened = Vec<(PathBuf, Option<FileId>)>;

/// `/`, opened before the spare's namespace is made: the host's view of a path ever after.
pub(super) fn host_root() -> nix::Result<OwnedFd> {
    open(
        "/",
        OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
}

/// Why a build ahead was not made.
pub(super) enum NotArmed {
    /// Nothing was changed: the spare goes on without.
    Skipped(String),
    /// Part of the plan was mounted: the spare must run no command (each is stale).
    Dirty(String),
}

/// Whether a spare can build `plan` ahead: only when the command needs no namespace but the
/// spare's own mount and IPC namespaces.
pub(super) fn armable(plan: &Plan, shared_net: bool) -> bool {
    let Some(mounts) = &plan.namespaces else {
        return false;
    };
    let own = CloneFlags::CLONE_NEWNS | CloneFlags::CLONE_NEWIPC;
    !mounts.probe && (command_namespaces(plan, mounts, shared_net) - own).is_empty()
}

/// Build `plan` in the namespace [`prepare`] made (see the module docs); `host_root` is `/`
/// opened before that (the host's view of a path). `None` when the plan cannot be built ahead
/// ([`armable`]).
pub(super) fn arm(
    plan: &Plan,
    shared_net: bool,
    prepared: &Prepared,
    host_root: OwnedFd,
) -> Result<Option<Armed>, NotArmed> {
    let Some(mounts) = plan
        .namespaces
        .as_ref()
        .filter(|_| armable(plan, shared_net))
    else {
        return Ok(None);
    };
    let null = prepared
        .null()
        .try_clone()
        .map_err(|e| NotArmed::Skipped(format!("/dev/null: {e}")))?;
    let mut sources = Sources::open(mounts, null).map_err(NotArmed::Skipped)?;
    // Each path shown again, as opened (absent: not shown, and must stay absent).
    let mut opened: Opened = mounts
        .expose
        .iter()
        .map(|path| {
            let fd = sources.expose.iter().find(|(p, ..)| p == path);
            (path.clone(), fd.and_then(|(_, fd, _)| identity(fd)))
        })
        .collect();
    if let (Some(proxy), Some(fd)) = (&mounts.proxy, &sources.proxy) {
        opened.push((proxy.socket.clone(), identity(fd)));
    }
    build_mounts(mounts, &sources).map_err(NotArmed::Dirty)?;
    let relay = match (&mounts.proxy, sources.proxy.take()) {
        (Some(proxy), Some(socket)) => {
            Some(Relay::bind(proxy, socket, false).map_err(NotArmed::Dirty)?)
        }
        _ => None,
    };
    Ok(Some(Armed {
        plan: without_token(plan),
        sealed: false,
        built: named(mounts)
            .map(|p| (p.to_path_buf(), lookup(None, p)))
            .collect(),
        writable: writable_paths(plan.fs, &plan.write)
            .into_iter()
            .map(|p| {
                let found = lookup(None, &p);
                (p, found)
            })
            .collect(),
        host_root,
        sources: opened,
        relay,
        filter: None,
    }))
}

impl Armed {
    /// Restrict the spare for good (Landlock, every capability dropped): from here on it can
    /// only run this plan. An error leaves it unfit to run any command.
    ///
    /// The socket filter is installed too (its installation, a JIT compilation, takes about
    /// 0.1 ms of the command's start otherwise): from here on nothing may connect on this
    /// thread until the command's PID 1 guards it.
    pub(super) fn seal(&mut self) -> Result<(), String> {
        restrict(&self.plan)?;
        self.sealed = true;
        if self.plan.network != NetworkPolicy::Allow {
            self.filter = Filter::install()?;
        }
        Ok(())
    }

    /// The command's plan has come: use the build ([`Prepared::built`] set) when it is this
    /// plan's and still in place.
    pub(super) fn settle(mut self, plan: &Plan, prepared: &mut Prepared) -> Result<(), Stale> {
        if !self.fits(plan) {
            return Err(Stale);
        }
        if let (Some(relay), Some(proxy)) = (
            self.relay.as_mut(),
            plan.namespaces.as_ref().and_then(|m| m.proxy.as_ref()),
        ) {
            relay.set_token(&proxy.token);
        }
        prepared.built = Some(Built {
            relay: self.relay,
            sealed: self.sealed,
            filter: self.filter,
        });
        Ok(())
    }

    /// Whether the build is `plan`'s and every path still leads where it did.
    fn fits(&self, plan: &Plan) -> bool {
        without_token(plan) == self.plan
            && [&self.built, &self.writable]
                .into_iter()
                .flatten()
                .all(|(p, found)| lookup(None, p) == *found)
            && self
                .sources
                .iter()
                .all(|(p, id)| lookup(Some(&self.host_root), p).map(|f| (f.dev, f.ino)) == *id)
    }
}

/// A `--plan` argument with its proxy token blank: what the zygote compares with the plan a
/// spare built (serialised the same way each time; the token is hex).
pub(super) fn blank_token(arg: &str) -> std::borrow::Cow<'_, str> {
    const KEY: &str = "\"token\":\"";
    let Some(start) = arg.find(KEY).map(|i| i + KEY.len()) else {
        return arg.into();
    };
    match arg[start..].find('"') {
        Some(len) => format!("{}{}", &arg[..start], &arg[start + len..]).into(),
        None => arg.into(),
    }
}

/// `plan` with its proxy token blank.
fn without_token(plan: &Plan) -> Plan {
    let mut plan = plan.clone();
    if let Some(proxy) = plan.namespaces.as_mut().and_then(|m| m.proxy.as_mut()) {
        proxy.token.clear();
    }
    plan
}

/// Every path the plan mounts on.
fn named(mounts: &Mounts) -> impl Iterator<Item = &Path> {
    [
        &mounts.empty,
        &mounts.pin,
        &mounts.read_only,
        &mounts.hide,
        &mounts.expose,
    ]
    .into_iter()
    .flatten()
    .map(PathBuf::as_path)
}

/// The device and inode of an open file.
fn identity(fd: &OwnedFd) -> Option<FileId> {
    statx(fd.as_fd().as_raw_fd(), c"", libc::AT_EMPTY_PATH).map(|f| (f.dev, f.ino))
}

/// What `path` (absolute) leads to, following links as a mount does: in this namespace, or
/// from `root` (the host's view before the build).
fn lookup(root: Option<&OwnedFd>, path: &Path) -> Option<Found> {
    let bytes = path.as_os_str().as_bytes();
    let (dir, rel) = match root {
        Some(root) => (root.as_raw_fd(), bytes.strip_prefix(b"/").unwrap_or(bytes)),
        None => (libc::AT_FDCWD, bytes),
    };
    let rel: &[u8] = if rel.is_empty() { b"." } else { rel };
    let c = CString::new(rel).ok()?;
    statx(dir, &c, 0)
}

fn statx(dir: i32, path: &std::ffi::CStr, flags: i32) -> Option<Found> {
    // SAFETY: a zeroed statx is a valid value of a plain C struct; it and `path` live for
    // the call.
    let mut buf: libc::statx = unsafe { std::mem::zeroed() };
    let mask = libc::STATX_INO | libc::STATX_MNT_ID;
    // SAFETY: as above.
    let r = unsafe { libc::statx(dir, path.as_ptr(), flags, mask, &mut buf) };
    if r != 0 || buf.stx_mask & libc::STATX_MNT_ID == 0 {
        return None;
    }
    Some(Found {
        mount: buf.stx_mnt_id,
        dev: (u64::from(buf.stx_dev_major) << 32) | u64::from(buf.stx_dev_minor),
        ino: buf.stx_ino,
    })
}
