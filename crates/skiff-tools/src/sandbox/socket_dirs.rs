//! Which directories in the temp directories hold Unix sockets (`ssh-XXXX`, `tmux-UID`,
//! `.X11-unix`), remembered from one scan to the next.
//!
//! A scan reads each directory directly in a temp directory and, one level down, its
//! subdirectories: on a machine whose `/tmp` holds a few hundred directories that is over 500
//! directories read (about 4 ms) before a sandboxed command starts, again at every command more
//! than two seconds after the last scan (a model's turn takes longer). The answer for a
//! directory depends only on the listings read to find it, and a listing changes only with its
//! directory's modification time, so each answer is kept with the *stamps* (device, inode,
//! mode, modification and change times) of the directories read for it, taken before reading
//! them; while every stamp is unchanged the answer holds, checked with one `lstat` per directory
//! instead of a read. A directory changed less than [`SETTLED`] before the scan is not
//! remembered: the kernel's file times tick coarsely, so an entry added in the same tick as the
//! read could leave the time as it was (git's "racy" index entries).

use std::collections::HashMap;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::dir_stamp::Stamp;

/// How long a directory must have been unchanged for its answer to be kept.
pub(super) const SETTLED: Duration = crate::dir_stamp::SETTLED;

/// At most this many stamps are kept (about 100 bytes each); directories past it are read at
/// every scan, as before.
const MAX_STAMPS: usize = 16_384;

/// One directory's answer and the stamps it rests on.
#[derive(Debug)]
struct Known {
    holds: bool,
    stamps: Vec<(PathBuf, Stamp)>,
}

/// The answers of the last scan.
#[derive(Debug, Default)]
pub struct SocketDirs {
    known: HashMap<PathBuf, Known>,
    /// Directories read so far (for tests and benchmarks).
    reads: u64,
}

impl SocketDirs {
    /// Directories listed since this memo was made.
    pub fn reads(&self) -> u64 {
        self.reads
    }

    /// One scan: `dirs` (the directories directly in the temp directories) that hold a socket
    /// among their first `max` entries or, one level down, among the first 16 entries of a
    /// subdirectory. Answers for directories not named again are forgotten. A directory
    /// changed after `settled` is read but not remembered.
    pub fn holding_sockets(
        &mut self,
        dirs: &[PathBuf],
        max: usize,
        settled: SystemTime,
    ) -> Vec<PathBuf> {
        let mut known = HashMap::with_capacity(dirs.len().min(self.known.len() + 16));
        let mut stamps = 0usize;
        let mut out = Vec::new();
        for dir in dirs {
            let still = self.known.remove(dir).filter(|k| {
                k.stamps
                    .iter()
                    .all(|(path, stamp)| Stamp::of(path).as_ref() == Some(stamp))
            });
            let k = match still {
                Some(k) => k,
                None => {
                    let (holds, read) = self.holds_socket(dir, max);
                    Known {
                        holds,
                        stamps: read.unwrap_or_default(),
                    }
                }
            };
            if k.holds {
                out.push(dir.clone());
            }
            let keep = !k.stamps.is_empty()
                && stamps + k.stamps.len() <= MAX_STAMPS
                && k.stamps.iter().all(|(_, s)| s.settled(settled));
            if keep {
                stamps += k.stamps.len();
                known.insert(dir.clone(), k);
            }
        }
        self.known = known;
        out
    }

    /// Whether one of the first `max` entries of `dir` (or of its subdirectories, one level
    /// down) is a socket, and the stamps of the directories read to tell, each taken before
    /// the directory was read (`None` when one could not be taken: the answer is not kept).
    fn holds_socket(&mut self, dir: &Path, max: usize) -> (bool, Option<Vec<(PathBuf, Stamp)>>) {
        let mut read = Some(Vec::new());
        let mut list = |path: &Path| {
            match (Stamp::of(path), read.as_mut()) {
                (Some(s), Some(read)) => read.push((path.to_path_buf(), s)),
                _ => read = None,
            }
            self.reads += 1;
            std::fs::read_dir(path).ok()
        };
        let Some(entries) = list(dir) else {
            return (false, read);
        };
        let mut sub = Vec::new();
        for e in entries.flatten().take(max) {
            match e.file_type() {
                Ok(t) if t.is_socket() => return (true, read),
                Ok(t) if t.is_dir() => sub.push(e.path()),
                _ => {}
            }
        }
        for path in sub {
            if let Some(inner) = list(&path)
                && inner
                    .flatten()
                    .take(16)
                    .any(|i| i.file_type().is_ok_and(|t| t.is_socket()))
            {
                return (true, read);
            }
        }
        (false, read)
    }

    #[cfg(test)]
    fn remembered(&self) -> usize {
        self.known.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixListener;

    fn later() -> SystemTime {
        SystemTime::now() + Duration::from_secs(3600)
    }

    fn subdirs(root: &Path) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = std::fs::read_dir(root)
            .unwrap()
            .flatten()
            .filter(|e| e.file_type().unwrap().is_dir())
            .map(|e| e.path())
            .collect();
        out.sort();
        out
    }

    #[test]
    fn answers_are_kept_while_nothing_read_for_them_changed() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        for d in ["a", "b/inner", "c", "ssh-x"] {
            std::fs::create_dir_all(r.join(d)).unwrap();
        }
        std::fs::write(r.join("a/file"), "x").unwrap();
        let _agent = UnixListener::bind(r.join("ssh-x/agent.1")).unwrap();
        let mut memo = SocketDirs::default();
        // As if everything had settled long ago: every answer is kept.
        let first = memo.holding_sockets(&subdirs(r), 64, later());
        assert_eq!(first, vec![r.join("ssh-x")]);
        assert_eq!(memo.reads(), 5);
        assert_eq!(memo.remembered(), 4);
        let again = memo.holding_sockets(&subdirs(r), 64, later());
        assert_eq!(again, first);
        assert_eq!(memo.reads(), 5, "nothing read again");

        // A socket appears one level down: only that directory is read again.
        let _deep = UnixListener::bind(r.join("b/inner/s")).unwrap();
        let found = memo.holding_sockets(&subdirs(r), 64, later());
        assert_eq!(found, vec![r.join("b"), r.join("ssh-x")]);
        assert_eq!(memo.reads(), 7);
        // The agent goes, a socket appears directly in `c`, `a` is replaced by a socket dir.
        drop(_agent);
        std::fs::remove_file(r.join("ssh-x/agent.1")).unwrap();
        let _c = UnixListener::bind(r.join("c/sock")).unwrap();
        std::fs::remove_dir_all(r.join("a")).unwrap();
        std::fs::create_dir(r.join("a")).unwrap();
        let _a = UnixListener::bind(r.join("a/sock")).unwrap();
        let found = memo.holding_sockets(&subdirs(r), 64, later());
        assert_eq!(found, vec![r.join("a"), r.join("b"), r.join("c")]);
        // Forgotten when no longer named.
        memo.holding_sockets(&[r.join("c")], 64, later());
        assert_eq!(memo.remembered(), 1);
    }

    #[test]
    fn directories_changed_just_before_the_scan_are_read_every_time() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("fresh")).unwrap();
        let mut memo = SocketDirs::default();
        let dirs = subdirs(root.path());
        // Made a moment ago: not settled a second before now.
        assert!(
            memo.holding_sockets(&dirs, 64, SystemTime::now() - SETTLED)
                .is_empty()
        );
        assert_eq!(memo.remembered(), 0);
        memo.holding_sockets(&dirs, 64, SystemTime::now() - SETTLED);
        assert_eq!(memo.reads(), 2);
    }

    #[test]
    fn an_unreadable_directory_is_not_remembered() {
        let mut memo = SocketDirs::default();
        let gone = PathBuf::from("/nonexistent-skiff-socket-dir");
        assert!(memo.holding_sockets(&[gone], 64, later()).is_empty());
        assert_eq!(memo.remembered(), 0);
    }
}
