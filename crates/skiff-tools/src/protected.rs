//! Files that make programs run later, outside the sandbox: git hooks and config, Claude
//! Code's and skiff's settings (hooks, MCP servers), `.mcp.json`. The Landlock sandbox cannot
//! keep them read-only inside a writable workspace, so a sandboxed command that runs without
//! approval is bracketed by a [`Snapshot`]: what it changed among them is put back and
//! reported. Background commands are checked when they end and when the session ends.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// git's config: only the settings that name programs are guarded (a command may well set a
/// remote, a branch's upstream or the user name).
const GIT_CONFIG: &str = ".git/config";

/// Single files, relative to each workspace root.
const FILES: &[&str] = &[
    GIT_CONFIG,
    ".mcp.json",
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".skiff/settings.json",
    ".skiff/settings.local.json",
];

/// Directories whose files are all protected (one level; hooks are flat).
const DIRS: &[&str] = &[".git/hooks", ".claude/hooks", ".skiff/hooks"];

/// Larger files are not copied (a protected file is small; a huge one is left alone).
const MAX_BYTES: u64 = 1024 * 1024;

/// The protected files of some roots as they were: content, or absent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    files: BTreeMap<PathBuf, Option<Vec<u8>>>,
    dirs: Vec<PathBuf>,
}

impl Snapshot {
    /// Read the protected files under `roots` (the workspace and its extra directories).
    pub fn take(roots: &[PathBuf]) -> Self {
        let mut snap = Self::default();
        for root in roots {
            for rel in FILES {
                let path = root.join(rel);
                let content = read_small(&path);
                snap.files.insert(path, content);
            }
            for rel in DIRS {
                let dir = root.join(rel);
                if let Ok(entries) = std::fs::read_dir(&dir) {
                    for entry in entries.flatten() {
                        let path = entry.path();
                        let content = read_small(&path);
                        snap.files.insert(path, content);
                    }
                }
                snap.dirs.push(dir);
            }
        }
        snap
    }

    /// Put back every protected file that changed since the snapshot (a new one is removed)
    /// and return the paths put back, or the problems met doing it.
    pub fn restore(&self) -> Vec<String> {
        let mut notes = Vec::new();
        let mut now: BTreeMap<PathBuf, Option<Vec<u8>>> = BTreeMap::new();
        for path in self.files.keys() {
            now.insert(path.clone(), read_small(path));
        }
        for dir in &self.dirs {
            if let Ok(entries) = std::fs::read_dir(dir) {
                for entry in entries.flatten() {
                    let path = entry.path();
                    if !self.files.contains_key(&path) {
                        now.insert(path.clone(), read_small(&path));
                    }
                }
            }
        }
        for (path, current) in now {
            let before = self.files.get(&path).cloned().flatten();
            if current == before && is_plain_or_absent(&path) {
                continue;
            }
            if path.ends_with(GIT_CONFIG)
                && is_plain_or_absent(&path)
                && program_settings(before.as_deref()) == program_settings(current.as_deref())
            {
                continue;
            }
            let result = match &before {
                Some(bytes) => replace(&path, bytes),
                None => remove(&path),
            };
            match result {
                Ok(()) => notes.push(path.display().to_string()),
                Err(e) => notes.push(format!("{} (could not be put back: {e})", path.display())),
            }
        }
        notes
    }
}

/// The settings of a git config file that make git run a program (or read another config
/// file), as `section.key=value` lines in order.
fn program_settings(config: Option<&[u8]>) -> Vec<String> {
    const KEYS: &[&str] = &[
        "fsmonitor",
        "hookspath",
        "sshcommand",
        "pager",
        "editor",
        "askpass",
        "textconv",
        "external",
        "command",
        "clean",
        "smudge",
        "process",
        "helper",
        "program",
        "path",
        "showsignature",
        "gitproxy",
        "uploadpack",
        "receivepack",
    ];
    let Some(config) = config else {
        return Vec::new();
    };
    let text = String::from_utf8_lossy(config);
    let mut section = String::new();
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            section = line.to_ascii_lowercase();
            continue;
        }
        let key = line
            .split(['=', ' ', '\t'])
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        let is_alias_program = section.starts_with("[alias") && line.contains("!");
        let is_include = section.starts_with("[include");
        if KEYS.contains(&key.as_str()) || is_alias_program || is_include {
            out.push(format!("{section}{line}"));
        }
    }
    out
}

/// The note appended to a command's result when protected files were put back.
pub fn restored_note(paths: &[String]) -> String {
    format!(
        "Note: this command changed files that make programs run outside the sandbox (git \
         hooks and config, agent settings, MCP configuration); skiff put them back: {}. Ask \
         the user to make such changes, or use the Edit and Write tools, which ask for approval.",
        paths.join(", ")
    )
}

/// The content of a regular file up to [`MAX_BYTES`]; `None` when absent. Symlinks and
/// other special files read as a marker so any change to them is seen.
fn read_small(path: &Path) -> Option<Vec<u8>> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.file_type().is_file() {
        return Some(format!("\0special:{:?}", meta.file_type()).into_bytes());
    }
    if meta.len() > MAX_BYTES {
        return Some(format!("\0large:{}", meta.len()).into_bytes());
    }
    std::fs::read(path).ok()
}

fn is_plain_or_absent(path: &Path) -> bool {
    std::fs::symlink_metadata(path).map_or(true, |m| m.file_type().is_file())
}

fn remove(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

fn replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if bytes.starts_with(b"\0special:") || bytes.starts_with(b"\0large:") {
        // It was a special or large file before: cannot rebuild it; report instead.
        return Err(std::io::Error::other("it was not a small regular file"));
    }
    // A symlink or directory planted in its place goes first.
    if std::fs::symlink_metadata(path).is_ok_and(|m| !m.file_type().is_file()) {
        remove(path)?;
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    crate::atomic::write_atomic(path, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn harmless_git_config_changes_stay() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join(".git/config"), "[core]\n\tbare = false\n").unwrap();
        let snap = Snapshot::take(std::slice::from_ref(&root));
        let harmless =
            "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = x\n[user]\n\tname = A\n";
        std::fs::write(root.join(".git/config"), harmless).unwrap();
        assert!(snap.restore().is_empty());
        assert_eq!(
            std::fs::read_to_string(root.join(".git/config")).unwrap(),
            harmless
        );
        for evil in [
            "[core]\n\tfsmonitor = ./x\n",
            "[core]\n\thooksPath = evil\n",
            "[alias]\n\tst = !sh -c evil\n",
            "[include]\n\tpath = ../evil\n",
            "[filter \"lfs\"]\n\tsmudge = evil\n",
        ] {
            std::fs::write(root.join(".git/config"), format!("{harmless}{evil}")).unwrap();
            let snap2 = Snapshot::take(std::slice::from_ref(&root));
            std::fs::write(root.join(".git/config"), harmless).unwrap();
            let snap3 = Snapshot::take(std::slice::from_ref(&root));
            std::fs::write(root.join(".git/config"), format!("{harmless}{evil}")).unwrap();
            assert_eq!(snap3.restore().len(), 1, "{evil}");
            assert_eq!(
                std::fs::read_to_string(root.join(".git/config")).unwrap(),
                harmless
            );
            drop(snap2);
        }
    }

    #[test]
    fn changes_to_protected_files_are_put_back() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
        std::fs::write(root.join(".git/hooks/pre-commit"), "#!/bin/sh\nexit 0\n").unwrap();
        let snap = Snapshot::take(std::slice::from_ref(&root));
        assert!(snap.restore().is_empty(), "nothing changed");

        std::fs::write(root.join(".git/config"), "[core]\nfsmonitor = evil\n").unwrap();
        std::fs::write(root.join(".git/hooks/post-checkout"), "evil").unwrap();
        std::fs::remove_file(root.join(".git/hooks/pre-commit")).unwrap();
        std::fs::create_dir_all(root.join(".claude")).unwrap();
        std::fs::write(root.join(".claude/settings.json"), "{\"hooks\":{}}").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", root.join(".mcp.json")).unwrap();
        std::fs::write(root.join("ordinary.txt"), "fine").unwrap();

        let mut notes = snap.restore();
        notes.sort();
        assert_eq!(notes.len(), 5, "{notes:?}");
        assert_eq!(
            std::fs::read_to_string(root.join(".git/config")).unwrap(),
            "[core]\n"
        );
        assert!(!root.join(".git/hooks/post-checkout").exists());
        assert!(root.join(".git/hooks/pre-commit").exists());
        assert!(!root.join(".claude/settings.json").exists());
        assert!(std::fs::symlink_metadata(root.join(".mcp.json")).is_err());
        assert!(root.join("ordinary.txt").exists());
        assert!(snap.restore().is_empty(), "all put back");
        assert!(restored_note(&notes).contains(".git/config"));
    }
}
