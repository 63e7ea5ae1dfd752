//! A directory's *stamp*: device, inode, mode, modification and change times. Adding, removing
//! or renaming an entry changes the directory's times, and no process can set a change time
//! back, so while a stamp taken now equals one taken before, the directory holds the same
//! names. The kernel's file times tick coarsely, so an entry added in the same tick as a stamp
//! was taken could leave the times as they were (git's "racy" index entries): a stamp is only
//! trusted once it is [`Stamp::settled`], unchanged since well before it was taken.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// How long a directory must have been unchanged for what was read in it to be remembered.
pub(crate) const SETTLED: Duration = Duration::from_secs(1);

/// What a directory was when it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    dev: u64,
    ino: u64,
    mode: u32,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    /// The stamp of `path` itself (a symbolic link's own, not its target's).
    pub(crate) fn of(path: &Path) -> Option<Self> {
        std::fs::symlink_metadata(path).ok().map(|m| Self::from(&m))
    }

    /// The device it is on.
    pub(crate) fn dev(&self) -> u64 {
        self.dev
    }

    /// Unchanged since before `settled`.
    pub(crate) fn settled(&self, settled: SystemTime) -> bool {
        let Ok(limit) = settled.duration_since(SystemTime::UNIX_EPOCH) else {
            return false;
        };
        let before = |(s, ns): (i64, i64)| {
            u64::try_from(s).is_ok_and(|s| {
                let at =
                    Duration::from_secs(s) + Duration::from_nanos(ns.clamp(0, 999_999_999) as u64);
                at < limit
            })
        };
        before(self.mtime) && before(self.ctime)
    }
}

impl From<&std::fs::Metadata> for Stamp {
    fn from(m: &std::fs::Metadata) -> Self {
        Self {
            dev: m.dev(),
            ino: m.ino(),
            mode: m.mode(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        }
    }
}
