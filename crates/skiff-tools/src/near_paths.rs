//! What to say when a path does not exist, so that a model can correct itself instead of
//! sending the same call again: the nearest existing directory and what it holds, and the
//! workspace's paths whose names come closest to the missing one. Hidden paths (Read deny
//! rules) are never named; nothing outside the workspace roots is listed.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::path_guard::PathGuard;

/// Entries of a directory listed at most.
const MAX_LISTED: usize = 30;
/// Similar paths named at most.
const MAX_SIMILAR: usize = 5;
/// Entries the similarity walk looks at, at most (a large repository is not walked whole).
const MAX_WALKED: usize = 20_000;

/// The help for a missing `path` (resolved, absolute), as lines to add to the error: the nearest
/// existing directory's entries and the closest existing paths. Empty when there is nothing
/// useful to say. Walks the disk: call it off the async runtime ([`missing_path_help_async`]).
pub fn missing_path_help(guard: &PathGuard, path: &Path) -> String {
    let mut out = String::new();
    if let Some(dir) = nearest_existing_dir(guard, path) {
        let entries = listing(guard, &dir);
        let shown = guard.display(&dir);
        if entries.is_empty() {
            out.push_str(&format!(
                "\nThe nearest existing directory, {shown}, is empty."
            ));
        } else {
            out.push_str(&format!(
                "\nThe nearest existing directory, {shown}, holds: {}",
                entries.join(", ")
            ));
        }
    }
    let similar = similar_paths(guard, path);
    if !similar.is_empty() {
        out.push_str(&format!("\nClosest existing paths: {}", similar.join(", ")));
    }
    out
}

/// [`missing_path_help`] on a blocking thread.
pub async fn missing_path_help_async(guard: &Arc<PathGuard>, path: &Path) -> String {
    let guard = Arc::clone(guard);
    let path = path.to_path_buf();
    tokio::task::spawn_blocking(move || missing_path_help(&guard, &path))
        .await
        .unwrap_or_default()
}

/// The nearest ancestor of `path` that is an existing directory inside the workspace.
pub fn nearest_existing_dir(guard: &PathGuard, path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .skip(1)
        .find(|d| guard.contains(d) && d.is_dir() && !guard.is_hidden(d))
        .map(Path::to_path_buf)
}

/// The entries of `dir`, directories with a trailing `/`, sorted, at most [`MAX_LISTED`] (then
/// how many more).
pub fn listing(guard: &PathGuard, dir: &Path) -> Vec<String> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = read
        .filter_map(Result::ok)
        .filter(|e| !guard.is_hidden(&e.path()))
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                format!("{name}/")
            } else {
                name
            }
        })
        .filter(|n| n != ".git/")
        .collect();
    names.sort();
    if names.len() > MAX_LISTED {
        let more = names.len() - MAX_LISTED;
        names.truncate(MAX_LISTED);
        names.push(format!("… ({more} more)"));
    }
    names
}

/// Workspace paths (relative, as the model writes them) whose last component comes closest to
/// the missing path's, best first.
pub fn similar_paths(guard: &PathGuard, path: &Path) -> Vec<String> {
    let Some(wanted) = path.file_name().map(|n| n.to_string_lossy().to_lowercase()) else {
        return Vec::new();
    };
    let root = guard.root();
    let mut scored: Vec<(u32, String)> = Vec::new();
    let walk = ignore::WalkBuilder::new(root)
        .max_depth(Some(8))
        .hidden(true)
        .build();
    for entry in walk.filter_map(Result::ok).take(MAX_WALKED) {
        let p = entry.path();
        if p == root || guard.is_hidden(p) {
            continue;
        }
        let Some(name) = p.file_name().map(|n| n.to_string_lossy().to_lowercase()) else {
            continue;
        };
        let score = similarity(&wanted, &name);
        if score >= 50 {
            let mut shown = guard.display(p);
            if entry.file_type().is_some_and(|t| t.is_dir()) {
                shown.push('/');
            }
            scored.push((score, shown));
        }
    }
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.len().cmp(&b.1.len())));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored
        .into_iter()
        .take(MAX_SIMILAR)
        .map(|(_, p)| p)
        .collect()
}

/// How alike two names are, 0–100: equal 100; one the other's stem (`test` / `test.sh`,
/// `tests` / `test.sh`) 90; else the Dice coefficient of their character bigrams.
fn similarity(a: &str, b: &str) -> u32 {
    if a == b {
        return 100;
    }
    let stem = |s: &str| -> String {
        let s = s.split('.').next().unwrap_or(s);
        s.strip_suffix('s').unwrap_or(s).to_owned()
    };
    let (sa, sb) = (stem(a), stem(b));
    if !sa.is_empty() && sa == sb {
        return 90;
    }
    // Names are compared without their extensions (`nope.txt` is not like `a.txt`).
    let bigrams = |s: &str| -> Vec<(char, char)> {
        let s = s.split('.').next().unwrap_or(s);
        let chars: Vec<char> = s.chars().collect();
        chars.windows(2).map(|w| (w[0], w[1])).collect()
    };
    let (ba, mut bb) = (bigrams(a), bigrams(b));
    if ba.is_empty() || bb.is_empty() {
        return 0;
    }
    let total = ba.len() + bb.len();
    let mut common = 0;
    for g in &ba {
        if let Some(i) = bb.iter().position(|h| h == g) {
            bb.swap_remove(i);
            common += 1;
        }
    }
    (200 * common / total) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_alike() {
        assert_eq!(similarity("calc.sh", "calc.sh"), 100);
        assert_eq!(similarity("tests", "test.sh"), 90);
        assert!(similarity("calc.py", "calc.sh") >= 50);
        assert!(similarity("readme", "cargo.toml") < 50);
        assert!(similarity("nope.txt", "a.txt") < 50);
        assert!(similarity("calculator", "calc.sh") < 90);
    }

    #[test]
    fn the_nearest_directory_and_similar_paths_are_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src/util")).unwrap();
        std::fs::write(dir.path().join("src/calc.sh"), "").unwrap();
        std::fs::write(dir.path().join("test.sh"), "").unwrap();
        let guard = PathGuard::new(dir.path(), &[]).unwrap();
        let root = guard.root().to_path_buf();
        let help = missing_path_help(&guard, &root.join("src/lib/calc.rs"));
        assert!(
            help.contains("The nearest existing directory, src, holds: calc.sh, util/"),
            "{help}"
        );
        assert!(
            help.contains("Closest existing paths: src/calc.sh"),
            "{help}"
        );
        let help = missing_path_help(&guard, &root.join("tests"));
        assert!(
            help.contains("The nearest existing directory, ., holds: src/, test.sh"),
            "{help}"
        );
        assert!(help.contains("Closest existing paths: test.sh"), "{help}");
    }
}
