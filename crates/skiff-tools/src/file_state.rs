//! The read-before-write rule (PROTOCOL.md §4.3): which files were fully read in this session,
//! and whether they changed on disk since.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

/// What we knew about a file when it was last read or written.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    mtime: Option<SystemTime>,
    len: u64,
    hash: u64,
}

/// Why a write to an existing file is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stale {
    /// Never (fully) read in this session.
    NotRead,
    /// Changed on disk since it was read.
    Modified,
}

impl Stale {
    /// Claude Code's message for the model.
    pub fn message(self) -> &'static str {
        match self {
            Self::NotRead => "File has not been read yet. Read it first before writing to it.",
            Self::Modified => {
                "File has been unexpectedly modified. Read it again before attempting to write it."
            }
        }
    }
}

/// Session map of file stamps, shared by Read, Write and Edit.
#[derive(Debug, Default)]
pub struct FileStates {
    map: Mutex<HashMap<PathBuf, Stamp>>,
}

fn stamp(content: &[u8], meta: &std::fs::Metadata) -> Stamp {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    content.hash(&mut h);
    Stamp {
        mtime: meta.modified().ok(),
        len: meta.len(),
        hash: h.finish(),
    }
}

impl FileStates {
    /// Remember `path` as seen with `content` (after a full read or a write).
    pub fn record(&self, path: &Path, content: &[u8], meta: &std::fs::Metadata) {
        let s = stamp(content, meta);
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(path.to_path_buf(), s);
    }

    /// Whether `path`, now holding `content`, may be overwritten.
    pub fn check(
        &self,
        path: &Path,
        content: &[u8],
        meta: &std::fs::Metadata,
    ) -> Result<(), Stale> {
        let map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        let Some(seen) = map.get(path) else {
            return Err(Stale::NotRead);
        };
        let now = stamp(content, meta);
        // Same bytes means nothing to lose, even if the mtime moved (touch, checkout).
        if now.hash == seen.hash && now.len == seen.len {
            return Ok(());
        }
        Err(Stale::Modified)
    }

    /// Whether `path` was read or written in this session.
    pub fn contains(&self, path: &Path) -> bool {
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(path)
    }

    /// Forget everything (new conversation).
    pub fn clear(&self) {
        self.map.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}
