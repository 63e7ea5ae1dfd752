//! The gitlinks of a repository's index: entries of mode 160000, a submodule's or an embedded
//! repository's directory. The user's `git status` looks inside each populated one (it runs
//! git there, which reads that repository's config), so what a sandboxed command can do to a
//! gitlink's `.git` matters as much as what it can do to the root's ([`crate::protected`]).
//!
//! Read straight from `.git/index` (versions 2 to 4, SHA-1 or SHA-256 names), without running
//! git; the answer is remembered for each index until the file changes (git replaces it on
//! every write, so its inode changes too). A split index (`core.splitIndex`, or `git
//! update-index --split-index`, which a command can run) keeps most entries in a shared index,
//! `sharedindex.<name>` beside it, named by the index's `link` extension: its gitlinks count
//! too, and so does each of its entries the index replaces with a gitlink (an entry without a
//! name, matched to the shared one by the extension's replace bitmap). Entries the split index
//! deletes from the shared one still count: one gitlink too many only protects a `.git` more.

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
        .find_map(|hash| Some((hash, parse(&bytes, hash)?)))
        .map(|(hash, parsed)| with_shared(git, hash, parsed))
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

/// What an index says of its gitlinks.
#[derive(Debug, Default, PartialEq, Eq)]
struct Parsed {
    /// The gitlinks' names.
    links: Vec<Vec<u8>>,
    /// For a split index: the shared index's name (hex), the positions in it of the entries
    /// this index replaces (its replace bitmap), and which of this index's entries without a
    /// name (the replacements, in order) are gitlinks.
    split: Option<Split>,
}

#[derive(Debug, Default, PartialEq, Eq)]
struct Split {
    shared: String,
    replaced: Vec<usize>,
    unnamed_gitlinks: Vec<bool>,
}

/// `parsed`'s gitlinks and, for a split index, the shared index's (see the module docs).
fn with_shared(git: &Path, hash: usize, parsed: Parsed) -> Vec<Vec<u8>> {
    let mut links = parsed.links;
    let Some(split) = parsed.split else {
        return links;
    };
    let path = git.join(format!("sharedindex.{}", split.shared));
    let readable =
        std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file() && m.len() <= MAX_INDEX);
    let Some(bytes) = readable.then(|| std::fs::read(&path).ok()).flatten() else {
        return links;
    };
    // The shared index's entries replaced by gitlinks of this one, by position.
    let mut replaced_by_gitlink = std::collections::HashSet::new();
    for (i, pos) in split.replaced.iter().enumerate() {
        if split.unnamed_gitlinks.get(i).copied().unwrap_or(false) {
            replaced_by_gitlink.insert(*pos);
        }
    }
    let shared = entries(&bytes, hash, |i, name, mode| {
        (mode & 0o170000 == 0o160000 || replaced_by_gitlink.contains(&i)) && !name.is_empty()
    });
    if let Some(shared) = shared {
        links.extend(shared.links);
    }
    links.sort();
    links.dedup();
    links
}

/// The gitlink names of an index whose object names are `hash` bytes long; `None` when the
/// bytes are not such an index.
fn parse(b: &[u8], hash: usize) -> Option<Parsed> {
    let mut unnamed_gitlinks = Vec::new();
    let mut parsed = entries(b, hash, |_, name, mode| {
        let gitlink = mode & 0o170000 == 0o160000;
        if name.is_empty() {
            unnamed_gitlinks.push(gitlink);
        }
        gitlink && !name.is_empty()
    })?;
    if let Some(split) = parsed.split.as_mut() {
        split.unnamed_gitlinks = unnamed_gitlinks;
    }
    Some(parsed)
}

/// The entries of an index whose object names are `hash` bytes long: the names `keep(position,
/// name, mode)` picks, and the `link` extension; `None` when the bytes are not such an index.
fn entries(
    b: &[u8],
    hash: usize,
    mut keep: impl FnMut(usize, &[u8], u32) -> bool,
) -> Option<Parsed> {
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
    for position in 0..count {
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
        // (A split index's replacements have no name.)
        if b.len() < at {
            return None;
        }
        if keep(usize::try_from(position).ok()?, this, mode) {
            out.push(this.to_vec());
        }
    }
    Some(Parsed {
        links: out,
        split: link_extension(b, at, hash),
    })
}

/// The `link` extension among the extensions from `at` (before the index's own hash): the
/// shared index's name when it has one, and the replace bitmap's positions.
fn link_extension(b: &[u8], mut at: usize, hash: usize) -> Option<Split> {
    let end = b.len().checked_sub(hash)?;
    while at + 8 <= end {
        let signature = b.get(at..at + 4)?;
        let size =
            usize::try_from(u32::from_be_bytes(b.get(at + 4..at + 8)?.try_into().ok()?)).ok()?;
        let data = b.get(at + 8..(at + 8).checked_add(size)?)?;
        at += 8 + size;
        if signature != b"link" {
            continue;
        }
        let name = data.get(..hash)?;
        if name.iter().all(|&x| x == 0) {
            return None;
        }
        let shared = name.iter().map(|x| format!("{x:02x}")).collect();
        // The delete bitmap, then the replace bitmap.
        let rest = data.get(hash..)?;
        let replaced = match ewah_len(rest) {
            Some(len) => rest.get(len..).and_then(ewah_positions).unwrap_or_default(),
            None => Vec::new(),
        };
        return Some(Split {
            shared,
            replaced,
            unnamed_gitlinks: Vec::new(),
        });
    }
    None
}

/// The length of the EWAH bitmap (git's `ewah_io.c` format) at the start of `b`.
fn ewah_len(b: &[u8]) -> Option<usize> {
    let words = usize::try_from(u32::from_be_bytes(b.get(4..8)?.try_into().ok()?)).ok()?;
    let len = words.checked_mul(8)?.checked_add(12)?;
    (b.len() >= len).then_some(len)
}

/// The positions set in the EWAH bitmap at the start of `b`: a bit count, a word count, the
/// 64-bit words (each run-length word, bit 0 the running bit, the next 32 bits the number of
/// clean words of that bit, the top 31 the number of literal words after it), all big endian.
fn ewah_positions(b: &[u8]) -> Option<Vec<usize>> {
    /// At most this many positions (an index has at most a few million entries).
    const MAX: usize = 1 << 24;
    let bits = usize::try_from(u32::from_be_bytes(b.get(..4)?.try_into().ok()?)).ok()?;
    let len = ewah_len(b)?;
    let word = |i: usize| -> Option<u64> {
        Some(u64::from_be_bytes(
            b.get(8 + i * 8..16 + i * 8)?.try_into().ok()?,
        ))
    };
    let count = (len - 12) / 8;
    let mut out = Vec::new();
    let (mut i, mut pos) = (0usize, 0usize);
    while i < count {
        let rlw = word(i)?;
        let run = usize::try_from((rlw >> 1) & 0xffff_ffff).ok()?;
        let literals = usize::try_from(rlw >> 33).ok()?;
        let run_bits = run.checked_mul(64)?;
        if rlw & 1 == 1 {
            let upto = pos.checked_add(run_bits)?.min(bits);
            if upto.saturating_sub(pos) > MAX.saturating_sub(out.len()) {
                return None;
            }
            out.extend(pos..upto);
        }
        pos = pos.checked_add(run_bits)?;
        for k in 1..=literals {
            let lit = word(i.checked_add(k)?)?;
            for bit in 0..64 {
                if lit >> bit & 1 == 1 && pos + bit < bits {
                    out.push(pos + bit);
                }
            }
            pos = pos.checked_add(64)?;
            if out.len() > MAX {
                return None;
            }
        }
        i = i.checked_add(1 + literals)?;
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

    fn embedded_repo(root: &Path, sub: &str) {
        let s = root.join(sub);
        std::fs::create_dir_all(&s).unwrap();
        git(&s, &["init", "-q"]);
        std::fs::write(s.join("f"), sub).unwrap();
        git(&s, &["add", "f"]);
        git(&s, &["commit", "-qm", "x"]);
    }

    /// A command can split the index (`git update-index --split-index`): the gitlinks then
    /// live in the shared index, and one that replaces a shared entry has no name of its own.
    #[test]
    fn gitlinks_of_a_split_index_are_read_from_its_shared_index() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        std::fs::write(root.join("a.txt"), "a").unwrap();
        std::fs::write(root.join("later"), "a file for now").unwrap();
        embedded_repo(root, "mod");
        git(root, &["add", "-A"]);
        git(root, &["commit", "-qm", "x"]);
        git(root, &["update-index", "--split-index"]);
        let shared = std::fs::read_dir(root.join(".git"))
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("sharedindex."))
            .count();
        assert_eq!(shared, 1, "git wrote no shared index");
        let main = std::fs::read(root.join(".git/index")).unwrap();
        let parsed = parse(&main, 20).unwrap();
        assert!(parsed.links.is_empty(), "{parsed:?}");
        assert!(parsed.split.is_some(), "{parsed:?}");
        assert_eq!(of(&root.join(".git")), vec![PathBuf::from("mod")]);
        // A new embedded repository added to the split index, and a file of the shared index
        // replaced by one at the same path.
        embedded_repo(root, "new");
        std::fs::remove_file(root.join("later")).unwrap();
        embedded_repo(root, "later");
        git(root, &["add", "new", "later"]);
        let want = ["later", "mod", "new"].map(PathBuf::from).to_vec();
        let mut got = of(&root.join(".git"));
        got.sort();
        assert_eq!(got, want);
        // And after the new entries are moved into a new shared index.
        git(root, &["update-index", "--split-index"]);
        let mut got = of(&root.join(".git"));
        got.sort();
        assert_eq!(got, want);
    }

    #[test]
    fn ewah_bitmaps_decode() {
        // 70 bits: a run of one clean word of ones (bits 0..64), then one literal word with
        // bits 1 and 5 (64 + 1, 64 + 5).
        let mut b = Vec::new();
        b.extend_from_slice(&70u32.to_be_bytes());
        b.extend_from_slice(&2u32.to_be_bytes());
        let rlw: u64 = 1 | (1 << 1) | (1 << 33);
        b.extend_from_slice(&rlw.to_be_bytes());
        b.extend_from_slice(&0b10_0010u64.to_be_bytes());
        b.extend_from_slice(&0u32.to_be_bytes());
        let mut want: Vec<usize> = (0..64).collect();
        want.extend([65, 69]);
        assert_eq!(ewah_positions(&b), Some(want));
        assert_eq!(ewah_len(&b), Some(b.len()));
        // Cut short, or a hostile run length: no answer, no panic.
        assert_eq!(ewah_positions(&b[..20]), None);
        let mut huge = b.clone();
        huge[..4].copy_from_slice(&u32::MAX.to_be_bytes());
        huge[8..16].copy_from_slice(&(1u64 | (0xffff_ffff << 1)).to_be_bytes());
        assert_eq!(ewah_positions(&huge), None);
    }
}
