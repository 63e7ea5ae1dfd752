//! The gitlinks of a repository's index: entries of mode 160000, a submodule's or an embedded
//! repository's directory. The user's `git status` looks inside each populated one (it runs
//! git there, which reads that repository's config), so what a sandboxed command can do to a
//! gitlink's `.git` matters as much as what it can do to the root's ([`crate::protected`]).
//!
//! Read straight from `.git/index` (versions 2 to 4, SHA-1 or SHA-256 names), without running
//! git; the answer is remembered for each index until the file changes (git replaces it on
//! every write, so its inode changes too).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::dir_stamp::Stamp;

/// Indexes larger than this are not read (a gitlink in one goes unseen).
const MAX_INDEX: u64 = 256 * 1024 * 1024;

/// One index's gitlinks, with the stamp and length of the file they were read from.
type Answer = (Stamp, u64, Vec<PathBuf>);

/// The answers so far, by index path.
static MEMO: Mutex<Option<HashMap<PathBuf, Answer>>> = Mutex::new(None);

/// The gitlinks (relative paths) in the index of the repository whose git directory is `git`.
pub fn of(git: &Path) -> Vec<PathBuf> {
    let index = git.join("index");
    let Ok(meta) = std::fs::symlink_metadata(&index) else {
        return Vec::new();
    };
    if !meta.is_file() || meta.len() > MAX_INDEX {
        return Vec::new();
    }
    let Some(stamp) = Stamp::of(&index) else {
        return Vec::new();
    };
    if let Ok(memo) = MEMO.lock()
        && let Some((s, len, links)) = memo.as_ref().and_then(|m| m.get(&index))
        && *s == stamp
        && *len == meta.len()
    {
        return links.clone();
    }
    let Ok(bytes) = std::fs::read(&index) else {
        return Vec::new();
    };
    let links: Vec<PathBuf> = [20, 32]
        .into_iter()
        .find_map(|hash| parse(&bytes, hash))
        .unwrap_or_default()
        .into_iter()
        .map(|name| {
            PathBuf::from(<std::ffi::OsString as std::os::unix::ffi::OsStringExt>::from_vec(name))
        })
        // Never a path that leaves the repository.
        .filter(|p| {
            p.components()
                .all(|c| matches!(c, std::path::Component::Normal(_)))
        })
        .collect();
    if let Ok(mut memo) = MEMO.lock() {
        memo.get_or_insert_with(HashMap::new)
            .insert(index, (stamp, meta.len(), links.clone()));
    }
    links
}

/// The gitlink names of an index whose object names are `hash` bytes long; `None` when the
/// bytes are not such an index.
fn parse(b: &[u8], hash: usize) -> Option<Vec<Vec<u8>>> {
    let u32_at = |i: usize| {
        b.get(i..i + 4)
            .map(|s| u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
    };
    if b.get(..4)? != b"DIRC" {
        return None;
    }
    let version = u32_at(4)?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = u32_at(8)?;
    let mut at = 12usize;
    let mut name: Vec<u8> = Vec::new();
    let mut out = Vec::new();
    for _ in 0..count {
        let start = at;
        let mode = u32_at(start + 24)?;
        at = start + 40 + hash;
        let flags = b
            .get(at..at + 2)
            .map(|s| u16::from_be_bytes([s[0], s[1]]))?;
        at += 2;
        if version >= 3 && flags & 0x4000 != 0 {
            at += 2;
        }
        // The entry's name: kept in `name` only for version 4 (the next name is made from
        // it); a slice of the index otherwise. Only gitlinks' names are copied out.
        let this: &[u8] = if version == 4 {
            // The number of bytes to drop from the previous name, then the rest of this one.
            let mut c = *b.get(at)?;
            at += 1;
            let mut strip = usize::from(c & 0x7f);
            while c & 0x80 != 0 {
                c = *b.get(at)?;
                at += 1;
                strip = strip.checked_add(1)?.checked_mul(128)? + usize::from(c & 0x7f);
            }
            let len = b.get(at..)?.iter().position(|&x| x == 0)?;
            let keep = name.len().checked_sub(strip)?;
            name.truncate(keep);
            name.extend_from_slice(&b[at..at + len]);
            at += len + 1;
            &name
        } else {
            let len = b.get(at..)?.iter().position(|&x| x == 0)?;
            let this = &b[at..at + len];
            // Padded with one to eight NULs to a multiple of eight from the entry's start.
            at = start + ((at - start + len + 8) & !7);
            this
        };
        if this.is_empty() || b.len() < at {
            return None;
        }
        if mode & 0o170000 == 0o160000 {
            out.push(this.to_vec());
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@e")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@e")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    #[test]
    fn gitlinks_are_read_from_every_index_version() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        for (path, text) in [("a.txt", "a"), ("deep/dir/b.txt", "b"), ("z.txt", "z")] {
            std::fs::create_dir_all(root.join(path).parent().unwrap()).unwrap();
            std::fs::write(root.join(path), text).unwrap();
        }
        for sub in ["deep/sub", "mod"] {
            let s = root.join(sub);
            std::fs::create_dir_all(&s).unwrap();
            git(&s, &["init", "-q"]);
            std::fs::write(s.join("f"), "f").unwrap();
            git(&s, &["add", "f"]);
            git(&s, &["commit", "-qm", "x"]);
        }
        git(root, &["add", "-A"]);
        let want = vec![PathBuf::from("deep/sub"), PathBuf::from("mod")];
        for version in ["2", "3", "4", "2"] {
            git(root, &["update-index", "--index-version", version]);
            assert_eq!(of(&root.join(".git")), want, "version {version}");
        }
        // Not an index: nothing.
        assert_eq!(parse(b"DIRC\0\0\0\x09", 20), None);
        assert_eq!(parse(b"garbage", 20), None);
        let mut cut = std::fs::read(root.join(".git/index")).unwrap();
        cut.truncate(40);
        assert_eq!(parse(&cut, 20), None);
    }
}
