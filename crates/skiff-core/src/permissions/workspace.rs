//! Where tools may work, and which paths in it are never changed without asking.

use std::path::{Path, PathBuf};

/// Names and directories that are never changed without asking (except in
/// `bypassPermissions`): repository metadata, agent and editor settings, shell start-up files.
pub(crate) const PROTECTED_DIRS: &[&str] =
    &[".git", ".claude", ".skiff", ".vscode", ".idea", ".husky"];
pub(crate) const PROTECTED_FILES: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".mcp.json",
    ".claude.json",
    ".gitconfig",
    ".gitmodules",
    ".envrc",
    ".npmrc",
];

/// Where tools may work.
#[derive(Debug, Clone)]
pub struct Workspace {
    /// The working directory (canonical).
    pub cwd: PathBuf,
    /// Every working directory, the first being `cwd` (canonical).
    pub dirs: Vec<PathBuf>,
}

impl Workspace {
    /// A workspace of `cwd` and extra directories (canonicalised when they exist).
    pub fn new(cwd: &Path, extra: &[PathBuf]) -> Self {
        let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let cwd = canon(cwd);
        let mut dirs = vec![cwd.clone()];
        dirs.extend(extra.iter().map(|d| canon(&cwd.join(d))));
        Self { cwd, dirs }
    }

    /// Whether an absolute path lies inside a working directory.
    pub fn inside(&self, p: &Path) -> bool {
        self.dirs.iter().any(|d| p.starts_with(d))
    }

    /// A path inside a working directory that is protected (`.git`, `.claude`, rc files…).
    pub fn protected(&self, p: &Path) -> bool {
        let rel = self
            .dirs
            .iter()
            .find_map(|d| p.strip_prefix(d).ok())
            .unwrap_or(p);
        let parts: Vec<&str> = rel
            .components()
            .filter_map(|c| c.as_os_str().to_str())
            .collect();
        for (i, part) in parts.iter().enumerate() {
            if PROTECTED_DIRS.contains(part) {
                let worktree = *part == ".claude" && parts.get(i + 1) == Some(&"worktrees");
                if !worktree {
                    return true;
                }
            }
        }
        parts.last().is_some_and(|f| PROTECTED_FILES.contains(f))
    }

    /// Whether changing the directory `p` with everything in it (`rm -r`, `mv`, `cp -r` into
    /// it) touches something protected: `p` is protected, is a working directory or above one,
    /// or holds a protected name directly.
    pub fn protected_tree(&self, p: &Path) -> bool {
        if self.protected(p) || self.dirs.iter().any(|d| d.starts_with(p)) {
            return true;
        }
        PROTECTED_DIRS
            .iter()
            .chain(PROTECTED_FILES)
            .any(|name| std::fs::symlink_metadata(p.join(name)).is_ok())
    }
}
