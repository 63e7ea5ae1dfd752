//! Whether paths exist, remembered for each directory while it provably holds the same names.
//!
//! Before and after every sandboxed command skiff looks up some hundred paths: the protected
//! paths of each workspace root before (what becomes read-only) and after (what the command
//! created, [`crate::protected`]), the secrets under the home directory that are hidden and the
//! paths shown again ([`crate::sandbox`]). Almost all of them sit in a handful of directories
//! that do not change from one command to the next. A [`Round`] takes each such directory's
//! [stamp](crate::dir_stamp) once (one `stat`), and where the stamp is the one the remembered
//! answers were found under, the answers hold: a name can only appear, go or change its type
//! by an entry being added, removed or renamed, which changes the directory's times, and
//! nothing can set a change time back. What is not provable is looked up every time:
//!
//! - a directory changed less than [`crate::dir_stamp::SETTLED`] before the round (the kernel's
//!   times tick coarsely: a name added in the same tick as the stamp could leave it unchanged);
//! - a directory on a file system not known to keep directory times this way (network and FUSE
//!   file systems, overlays): only ext4, XFS, Btrfs, F2FS and tmpfs are trusted;
//! - a path whose directory cannot be told (`..` or `.` at the end, a trailing `/`, the root,
//!   a relative path of one component).
//!
//! Answers found during a round are recorded under the stamp the round took before looking:
//! whatever changes after the stamp was taken changes the stamp the next round sees. A
//! directory that is not there (or is not a directory) holds nothing: its names are absent
//! without a lookup of their own.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use crate::dir_stamp::Stamp;

/// At most this many answers are remembered (about 100 bytes each); past it they are forgotten
/// and found again.
const MAX_NAMES: usize = 4096;

/// What a path is, as `lstat` tells (a symbolic link is `Other`, whatever it leads to).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Nothing by that name.
    Absent,
    /// A directory.
    Dir,
    /// Anything else: a file, a symbolic link, a socket, a device.
    Other,
}

impl Kind {
    fn of(path: &Path) -> Self {
        match std::fs::symlink_metadata(path) {
            Ok(m) if m.is_dir() => Self::Dir,
            Ok(_) => Self::Other,
            Err(_) => Self::Absent,
        }
    }
}

/// The answers found in one directory, under the stamp they were found with.
#[derive(Debug)]
struct Listing {
    stamp: Stamp,
    names: HashMap<OsString, Kind>,
}

/// The memo: answers by directory, and which devices' file systems are trusted.
#[derive(Debug)]
pub struct Presence {
    dirs: Mutex<HashMap<PathBuf, Listing>>,
    trusted: Mutex<HashMap<u64, bool>>,
    settle: Duration,
    lookups: AtomicU64,
    /// Directories looked up with `stat` (their stamps).
    dir_lookups: AtomicU64,
}

impl Default for Presence {
    fn default() -> Self {
        Self::with_settle(crate::dir_stamp::SETTLED)
    }
}

impl Presence {
    /// A memo whose directories must have been unchanged for `settle` (tests use less).
    pub fn with_settle(settle: Duration) -> Self {
        Self {
            dirs: Mutex::default(),
            trusted: Mutex::default(),
            settle,
            lookups: AtomicU64::new(0),
            dir_lookups: AtomicU64::new(0),
        }
    }

    /// A round of lookups: each directory's stamp is taken once, at its first lookup.
    pub fn round(&self) -> Round<'_> {
        Round {
            presence: Some(self),
            settled: SystemTime::now()
                .checked_sub(self.settle)
                .unwrap_or(SystemTime::UNIX_EPOCH),
            dirs: RefCell::default(),
        }
    }

    /// Paths looked up with `lstat` so far (not answered from the memo).
    pub fn lookups(&self) -> u64 {
        self.lookups.load(Ordering::Relaxed)
    }

    /// Whether directory times on `stamp`'s device are kept as the module docs say.
    fn trusts(&self, dir: &Path, stamp: &Stamp) -> bool {
        let Ok(mut trusted) = self.trusted.lock() else {
            return false;
        };
        *trusted
            .entry(stamp.dev())
            .or_insert_with(|| local_file_system(dir))
    }
}

/// One round of lookups (see [`Presence::round`]), or lookups that remember nothing
/// ([`Round::uncached`]).
#[derive(Debug)]
pub struct Round<'a> {
    presence: Option<&'a Presence>,
    /// Directories changed after this are not trusted.
    settled: SystemTime,
    /// Each directory as found at its first lookup in this round.
    dirs: RefCell<HashMap<PathBuf, Dir>>,
}

impl Round<'_> {
    /// Lookups without a memo: each one an `lstat`.
    pub fn uncached() -> Round<'static> {
        Round {
            presence: None,
            settled: SystemTime::UNIX_EPOCH,
            dirs: RefCell::default(),
        }
    }

    /// Whether `path` exists (a dangling symbolic link does).
    pub fn exists(&self, path: &Path) -> bool {
        self.kind(path) != Kind::Absent
    }

    /// Whether `path` is a directory (not a symbolic link to one).
    pub fn is_dir(&self, path: &Path) -> bool {
        self.kind(path) == Kind::Dir
    }

    /// What `path` is.
    pub fn kind(&self, path: &Path) -> Kind {
        let Some(presence) = self.presence else {
            return Kind::of(path);
        };
        let look = || {
            presence.lookups.fetch_add(1, Ordering::Relaxed);
            Kind::of(path)
        };
        // `a/` and `a/.` follow a symbolic link `a` and `a` has no directory in hand: looked up.
        let raw = path.as_os_str().as_encoded_bytes();
        let untellable = raw.ends_with(b"/") || raw.ends_with(b"/.");
        let (Some(dir), Some(name), false) = (path.parent(), path.file_name(), untellable) else {
            return look();
        };
        if dir.as_os_str().is_empty() {
            return look();
        }
        let stamp = match self.dir(presence, dir) {
            Dir::Missing => return Kind::Absent,
            Dir::Untrusted => return look(),
            Dir::Trusted(stamp) => stamp,
        };
        if let Ok(dirs) = presence.dirs.lock()
            && let Some(listing) = dirs.get(dir)
            && listing.stamp == stamp
            && let Some(kind) = listing.names.get(name)
        {
            return *kind;
        }
        // Looked up after the stamp was taken: recorded under it.
        let kind = look();
        if let Ok(mut dirs) = presence.dirs.lock() {
            if dirs.values().map(|l| l.names.len()).sum::<usize>() >= MAX_NAMES {
                dirs.clear();
            }
            let listing = dirs.entry(dir.to_path_buf()).or_insert_with(|| Listing {
                stamp,
                names: HashMap::new(),
            });
            if listing.stamp != stamp {
                listing.stamp = stamp;
                listing.names.clear();
            }
            listing.names.insert(name.to_os_string(), kind);
        }
        kind
    }

    /// What `dir` is this round (its stamp is taken once). A directory whose own directory this
    /// round has already found trusted is first asked of the memo: `~/.config/gcloud` needs no
    /// lookup while `~` has not changed since `.config` was found absent.
    fn dir(&self, presence: &Presence, dir: &Path) -> Dir {
        if let Some(known) = self.dirs.borrow().get(dir) {
            return *known;
        }
        let in_trusted = dir
            .parent()
            .is_some_and(|p| matches!(self.dirs.borrow().get(p), Some(Dir::Trusted(_))));
        let state = if in_trusted && self.kind(dir) == Kind::Absent {
            Dir::Missing
        } else {
            self.look_at_dir(presence, dir)
        };
        self.dirs.borrow_mut().insert(dir.to_path_buf(), state);
        state
    }

    /// `dir` looked up: its stamp when it can be trusted.
    fn look_at_dir(&self, presence: &Presence, dir: &Path) -> Dir {
        presence.dir_lookups.fetch_add(1, Ordering::Relaxed);
        match std::fs::metadata(dir) {
            Ok(m) if m.is_dir() => {
                let stamp = Stamp::from(&m);
                if stamp.settled(self.settled) && presence.trusts(dir, &stamp) {
                    Dir::Trusted(stamp)
                } else {
                    Dir::Untrusted
                }
            }
            Ok(_) => Dir::Missing,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                Dir::Missing
            }
            Err(_) => Dir::Untrusted,
        }
    }
}

/// A directory as a round found it.
#[derive(Debug, Clone, Copy)]
enum Dir {
    /// Not there, or not a directory: nothing is in it.
    Missing,
    /// Its stamp, settled, on a trusted file system.
    Trusted(Stamp),
    /// Its names are looked up every time.
    Untrusted,
}

/// Whether `dir` is on a local file system that updates a directory's change time whenever an
/// entry is added, removed or renamed.
#[cfg(target_os = "linux")]
fn local_file_system(dir: &Path) -> bool {
    use nix::sys::statfs::{
        BTRFS_SUPER_MAGIC, EXT4_SUPER_MAGIC, F2FS_SUPER_MAGIC, TMPFS_MAGIC, XFS_SUPER_MAGIC, statfs,
    };
    statfs(dir).is_ok_and(|fs| {
        let kind = fs.filesystem_type();
        [
            EXT4_SUPER_MAGIC,
            XFS_SUPER_MAGIC,
            BTRFS_SUPER_MAGIC,
            F2FS_SUPER_MAGIC,
            TMPFS_MAGIC,
        ]
        .contains(&kind)
    })
}

#[cfg(not(target_os = "linux"))]
fn local_file_system(_dir: &Path) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Long enough for the kernel's coarse clock to have ticked (HZ 100 at the least).
    fn tick() {
        std::thread::sleep(Duration::from_millis(25));
    }

    #[test]
    fn an_unchanged_directory_is_answered_from_the_memo_and_a_change_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("present"), "").unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        let paths = [root.join("present"), root.join("sub"), root.join("absent")];
        tick();
        let presence = Presence::with_settle(Duration::from_millis(10));
        if !local_file_system(root) {
            panic!(
                "the temp directory is not on a file system the memo trusts (ext4, XFS, Btrfs, F2FS, tmpfs)"
            );
        }
        let kinds = |presence: &Presence| -> Vec<Kind> {
            let round = presence.round();
            paths.iter().map(|p| round.kind(p)).collect()
        };
        assert_eq!(kinds(&presence), [Kind::Other, Kind::Dir, Kind::Absent]);
        assert_eq!(presence.lookups(), 3);
        assert_eq!(kinds(&presence), [Kind::Other, Kind::Dir, Kind::Absent]);
        assert_eq!(presence.lookups(), 3, "the second round looked nothing up");

        // Each change of the directory's names is seen by the next round, once settled...
        tick();
        std::fs::write(root.join("absent"), "").unwrap();
        tick();
        assert_eq!(kinds(&presence), [Kind::Other, Kind::Dir, Kind::Other]);
        tick();
        std::fs::remove_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub"), "").unwrap();
        std::fs::remove_file(root.join("present")).unwrap();
        tick();
        assert_eq!(kinds(&presence), [Kind::Absent, Kind::Other, Kind::Other]);
        // ...and at once, before it is settled: looked up, not remembered.
        std::fs::rename(root.join("absent"), root.join("present")).unwrap();
        let before = presence.lookups();
        assert_eq!(kinds(&presence), [Kind::Other, Kind::Other, Kind::Absent]);
        assert_eq!(presence.lookups(), before + 3);
    }

    #[test]
    fn a_directory_replaced_by_another_is_looked_up_again() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        std::fs::create_dir(&a).unwrap();
        std::fs::create_dir(&b).unwrap();
        std::fs::write(b.join("secret"), "").unwrap();
        tick();
        let presence = Presence::with_settle(Duration::from_millis(10));
        assert!(!presence.round().exists(&a.join("secret")));
        // `a` is now the other directory (a rename over it leaves `a`'s own times alone).
        std::fs::remove_dir(&a).unwrap();
        std::fs::rename(&b, &a).unwrap();
        tick();
        assert!(presence.round().exists(&a.join("secret")));
    }

    #[test]
    fn uncached_rounds_and_untellable_paths_are_looked_up() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "").unwrap();
        assert!(Round::uncached().exists(&file));
        assert!(!Round::uncached().exists(&dir.path().join("g")));
        let presence = Presence::with_settle(Duration::ZERO);
        let round = presence.round();
        assert!(round.is_dir(Path::new("/")));
        assert!(round.is_dir(&dir.path().join("..")));
        assert_eq!(presence.lookups(), 2);
        // A name relative to the current directory, and a symbolic link to a directory named
        // with `/.` (which follows it): looked up as they are.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(dir.path(), &link).unwrap();
        assert_eq!(round.kind(&link), Kind::Other);
        assert_eq!(round.kind(&link.join(".")), Kind::Dir);
        let cwd = std::env::current_dir().unwrap();
        let first = std::fs::read_dir(&cwd).unwrap().flatten().next().unwrap();
        assert!(round.exists(Path::new(&first.file_name())));
        let before = presence.lookups();
        // Nothing is in a directory that is not there, or in a file: only the directory itself
        // is looked up, once.
        assert!(!round.exists(&dir.path().join("missing/x")));
        assert!(!round.exists(&file.join("x")));
        assert!(!round.exists(&dir.path().join("missing/y")));
        assert_eq!(presence.lookups(), before + 2);
    }

    #[test]
    fn a_missing_directory_is_remembered_by_its_own_until_that_one_changes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("marker"), "").unwrap();
        let target = root.join("config/gcloud");
        tick();
        let presence = Presence::with_settle(Duration::from_millis(10));
        // As skiff looks up the secrets of a home: a name in it first, then deeper ones.
        let exists = || {
            let round = presence.round();
            assert_eq!(round.kind(&root.join("marker")), Kind::Other);
            round.exists(&target)
        };
        assert!(!exists());
        let (first, dirs) = (
            presence.lookups(),
            presence.dir_lookups.load(Ordering::Relaxed),
        );
        assert!(!exists());
        assert_eq!(presence.lookups(), first);
        assert_eq!(
            presence.dir_lookups.load(Ordering::Relaxed),
            dirs + 1,
            "only the home's stamp was taken again: `config` was remembered absent"
        );
        tick();
        std::fs::create_dir_all(&target).unwrap();
        assert!(exists(), "a directory made since is seen at once");
        tick();
        assert!(exists());
    }
}
