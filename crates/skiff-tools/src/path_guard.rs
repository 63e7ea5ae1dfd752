//! The workspace path guard: every path a tool touches must resolve inside the workspace root
//! or an extra allowed directory (`--add-dir`), after `..` and symlinks are resolved.

use std::io;
use std::path::{Component, Path, PathBuf};

/// A path a tool may not use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// Empty path.
    #[error("the path is empty")]
    Empty,
    /// The path contains a NUL byte.
    #[error("the path contains a NUL byte")]
    Nul,
    /// The path resolves outside every allowed directory.
    #[error(
        "the path `{path}` is outside the workspace ({root}); only files under the workspace \
         (or directories added with --add-dir) can be used"
    )]
    Outside {
        /// The path as given.
        path: String,
        /// The workspace root.
        root: String,
    },
    /// Too many levels of symbolic links.
    #[error("the path `{0}` has too many levels of symbolic links")]
    SymlinkLoop(String),
}

/// Paths the search tools leave out of their walks (files that Read deny rules cover).
#[derive(Clone)]
pub struct HiddenPaths(std::sync::Arc<dyn Fn(&Path) -> bool + Send + Sync>);

impl HiddenPaths {
    /// Hide the paths for which `f` is true.
    pub fn new(f: impl Fn(&Path) -> bool + Send + Sync + 'static) -> Self {
        Self(std::sync::Arc::new(f))
    }
}

impl std::fmt::Debug for HiddenPaths {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HiddenPaths(..)")
    }
}

/// Resolves tool paths against the workspace root and rejects anything outside the allowed
/// directories.
#[derive(Debug, Clone)]
pub struct PathGuard {
    root: PathBuf,
    allowed: Vec<PathBuf>,
    /// Other spellings of allowed directories (a symlink the session was started through).
    aliases: Vec<PathBuf>,
    hidden: Option<HiddenPaths>,
}

impl PathGuard {
    /// A guard for `root` (must exist) plus `extra` allowed directories.
    pub fn new(root: impl AsRef<Path>, extra: &[PathBuf]) -> io::Result<Self> {
        let root = std::fs::canonicalize(root.as_ref())?;
        let mut allowed = vec![root.clone()];
        for dir in extra {
            let dir = if dir.is_absolute() {
                dir.clone()
            } else {
                root.join(dir)
            };
            allowed.push(std::fs::canonicalize(&dir)?);
        }
        Ok(Self {
            root,
            allowed,
            aliases: Vec::new(),
            hidden: None,
        })
    }

    /// Also accept paths spelled through these directories (`ws_link` when the session was
    /// started from a symlink to the workspace): each one that resolves to an allowed directory
    /// is kept; paths through it are then resolved and checked as any other.
    pub fn with_aliases(mut self, spellings: &[PathBuf]) -> Self {
        for spelling in spellings {
            let Some(lexical) = normalize(spelling).filter(|p| p.is_absolute()) else {
                continue;
            };
            if self.is_allowed(&lexical) || self.aliases.contains(&lexical) {
                continue;
            }
            if std::fs::canonicalize(&lexical).is_ok_and(|real| self.allowed.contains(&real)) {
                self.aliases.push(lexical);
            }
        }
        self
    }

    /// Also allow `dir`, a directory skiff creates itself when it first writes there (the
    /// session's tool-results directory): the symlinks of its existing part are resolved now,
    /// the rest is taken as given. The resolved directory, or `None` when `dir` is not an
    /// absolute path without `..` or its existing part loops.
    pub fn allow_dir_created_later(&mut self, dir: &Path) -> Option<PathBuf> {
        let lexical = normalize(dir).filter(|p| p.is_absolute())?;
        let real = resolve_links(&lexical, 0).ok()?;
        self.allowed.push(real.clone());
        Some(real)
    }

    /// Leave the paths `hidden` covers out of the search tools' walks.
    pub fn with_hidden(mut self, hidden: HiddenPaths) -> Self {
        self.hidden = Some(hidden);
        self
    }

    /// Whether a walk must skip this path (and, for a directory, what is in it).
    pub fn is_hidden(&self, path: &Path) -> bool {
        self.hidden.as_ref().is_some_and(|h| (h.0)(path))
    }

    /// The canonical workspace root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The canonical allowed directories (the root first).
    pub fn allowed_dirs(&self) -> &[PathBuf] {
        &self.allowed
    }

    /// Resolve `input` (relative to the root, or absolute) to the path tools must use: absolute,
    /// normalised, with symlinks in its existing part resolved, inside an allowed directory.
    pub fn resolve(&self, input: &str) -> Result<PathBuf, PathError> {
        if input.is_empty() {
            return Err(PathError::Empty);
        }
        if input.contains('\0') {
            return Err(PathError::Nul);
        }
        let outside = || PathError::Outside {
            path: input.to_owned(),
            root: self.root.display().to_string(),
        };
        let joined = if Path::new(input).is_absolute() {
            PathBuf::from(input)
        } else {
            self.root.join(input)
        };
        let lexical = normalize(&joined).ok_or_else(outside)?;
        if !self.is_allowed(&lexical) && !self.aliases.iter().any(|a| lexical.starts_with(a)) {
            return Err(outside());
        }
        let real = resolve_links(&lexical, 0).map_err(|e| match e {
            LinkError::Loop => PathError::SymlinkLoop(input.to_owned()),
            LinkError::Escape => outside(),
        })?;
        if !self.is_allowed(&real) {
            return Err(outside());
        }
        Ok(real)
    }

    /// [`PathGuard::resolve`] for a file that must exist (Read, Edit): when `input` does not
    /// exist but starts with the workspace directory's own name (`project/calc.sh` asked in
    /// `…/project`, a small model's usual slip) and the rest does, the rest.
    pub fn resolve_existing(&self, input: &str) -> Result<PathBuf, PathError> {
        let path = self.resolve(input)?;
        if path.exists() || Path::new(input).is_absolute() {
            return Ok(path);
        }
        let mut parts = Path::new(input).components();
        let mut first = parts.next();
        while matches!(first, Some(std::path::Component::CurDir)) {
            first = parts.next();
        }
        let doubled = match (first, self.root.file_name()) {
            (Some(std::path::Component::Normal(first)), Some(name)) => first == name,
            _ => false,
        };
        let rest = parts.as_path();
        if doubled
            && !rest.as_os_str().is_empty()
            && let Some(found) = rest
                .to_str()
                .and_then(|r| self.resolve(r).ok())
                .filter(|p| p.is_file())
        {
            return Ok(found);
        }
        Ok(path)
    }

    /// `path` relative to the workspace root when it lies under it, else the absolute path.
    pub fn display(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
            Ok(rel) => rel.display().to_string(),
            Err(_) => path.display().to_string(),
        }
    }

    /// Whether an absolute, real path lies inside an allowed directory.
    pub fn contains(&self, p: &Path) -> bool {
        self.is_allowed(p)
    }

    fn is_allowed(&self, p: &Path) -> bool {
        self.allowed.iter().any(|a| p.starts_with(a))
    }
}

/// Both forms of `input` (relative to `base`, or absolute) that permission rules are matched
/// against: the lexical path (`.` and `..` applied, `//` collapsed) and the real one (symlinks
/// of its existing part resolved; the lexical one when they loop). `None` for an empty path, a
/// NUL byte, or `..` above `/`.
pub fn path_forms(base: &Path, input: &str) -> Option<(PathBuf, PathBuf)> {
    if input.is_empty() || input.contains('\0') {
        return None;
    }
    let joined = if Path::new(input).is_absolute() {
        PathBuf::from(input)
    } else {
        base.join(input)
    };
    let lexical = normalize(&joined)?;
    let real = resolve_links(&lexical, 0).unwrap_or_else(|_| lexical.clone());
    Some((lexical, real))
}

/// The path the kernel reaches for `input` from the directory `base`: each component looked up
/// in the directory reached so far, symbolic links followed where they are met, so `..` after a
/// link climbs from the link's target (`lnk/../f` is `<target's parent>/f`, not `f`). Components
/// that do not exist are taken as they are. `None` for an empty path, a NUL byte or a symlink
/// loop.
pub fn physical_path(base: &Path, input: &str) -> Option<PathBuf> {
    if input.is_empty() || input.contains('\0') {
        return None;
    }
    let mut pending: std::collections::VecDeque<std::ffi::OsString> =
        std::collections::VecDeque::new();
    let push_front = |pending: &mut std::collections::VecDeque<std::ffi::OsString>, p: &Path| {
        let parts: Vec<std::ffi::OsString> = p
            .components()
            .map(|c| match c {
                Component::RootDir => std::ffi::OsString::from("/"),
                other => other.as_os_str().to_os_string(),
            })
            .collect();
        for part in parts.into_iter().rev() {
            pending.push_front(part);
        }
    };
    if !Path::new(input).is_absolute() {
        push_front(&mut pending, Path::new(input));
        push_front(&mut pending, base);
    } else {
        push_front(&mut pending, Path::new(input));
    }
    let mut at = PathBuf::from("/");
    let mut links = 0;
    while let Some(part) = pending.pop_front() {
        match part.to_str() {
            Some("/") => at = PathBuf::from("/"),
            Some(".") | Some("") => {}
            Some("..") => {
                at.pop();
            }
            _ => {
                let next = at.join(&part);
                match std::fs::symlink_metadata(&next) {
                    Ok(m) if m.file_type().is_symlink() => {
                        links += 1;
                        if links > 40 {
                            return None;
                        }
                        let target = std::fs::read_link(&next).ok()?;
                        push_front(&mut pending, &target);
                    }
                    _ => at = next,
                }
            }
        }
    }
    Some(at)
}

/// Lexical normalisation of an absolute path: drop `.`, apply `..`. `None` if `..` climbs
/// above the filesystem root.
fn normalize(p: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Prefix(_) | Component::RootDir => out.push(c.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() || out.as_os_str().is_empty() {
                    return None;
                }
            }
            Component::Normal(n) => out.push(n),
        }
    }
    Some(out)
}

enum LinkError {
    Loop,
    Escape,
}

/// Canonicalise the deepest existing ancestor of `p` and re-attach the missing tail. A dangling
/// symlink on the way is followed by hand, so creating a file through it is covered too.
fn resolve_links(p: &Path, depth: usize) -> Result<PathBuf, LinkError> {
    if depth > 40 {
        return Err(LinkError::Loop);
    }
    let mut existing = p.to_path_buf();
    let mut tail: Vec<std::ffi::OsString> = Vec::new();
    loop {
        match std::fs::canonicalize(&existing) {
            Ok(mut c) => {
                for part in tail.iter().rev() {
                    c.push(part);
                }
                return Ok(c);
            }
            Err(e) => {
                let is_link = std::fs::symlink_metadata(&existing)
                    .map(|m| m.file_type().is_symlink())
                    .unwrap_or(false);
                if is_link {
                    if e.raw_os_error() == Some(nix::libc::ELOOP) {
                        return Err(LinkError::Loop);
                    }
                    // Dangling link: follow its target by hand.
                    let target = std::fs::read_link(&existing).map_err(|_| LinkError::Escape)?;
                    let base = existing.parent().map(Path::to_path_buf).unwrap_or_default();
                    let mut next = normalize(&base.join(target)).ok_or(LinkError::Escape)?;
                    for part in tail.iter().rev() {
                        next.push(part);
                    }
                    return resolve_links(&next, depth + 1);
                }
                let (Some(name), Some(parent)) = (existing.file_name(), existing.parent()) else {
                    return Err(LinkError::Escape);
                };
                tail.push(name.to_os_string());
                existing = parent.to_path_buf();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_path_that_repeats_the_workspace_name_finds_the_existing_file() {
        let (_dir, guard, _) = farm();
        let root = guard.root().to_path_buf();
        let real = root.join("src/a.rs");
        for asked in ["ws/src/a.rs", "./ws/src/a.rs"] {
            assert_eq!(guard.resolve_existing(asked).unwrap(), real, "{asked}");
        }
        // Not when the path exists as asked, names something missing either way, or is
        // absolute; and never outside the workspace.
        std::fs::create_dir_all(root.join("ws/src")).unwrap();
        std::fs::write(root.join("ws/src/a.rs"), "inner").unwrap();
        assert_eq!(
            guard.resolve_existing("ws/src/a.rs").unwrap(),
            root.join("ws/src/a.rs")
        );
        assert_eq!(
            guard.resolve_existing("ws/src/none.rs").unwrap(),
            root.join("ws/src/none.rs")
        );
        assert_eq!(guard.resolve_existing("src/a.rs").unwrap(), real);
        assert!(guard.resolve_existing("ws/../../outside/secret").is_err());
    }

    fn farm() -> (tempfile::TempDir, PathGuard, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(root.join("src/a.rs"), "a").unwrap();
        std::fs::write(outside.join("secret"), "s").unwrap();
        symlink(&outside, root.join("out_link")).unwrap();
        symlink(root.join("src"), root.join("in_link")).unwrap();
        symlink(outside.join("nothing_yet"), root.join("dangling_out")).unwrap();
        symlink("src/new.rs", root.join("dangling_in")).unwrap();
        let guard = PathGuard::new(&root, &[]).unwrap();
        (dir, guard, outside)
    }

    #[test]
    fn accepts_inside_paths() {
        let (_d, g, _) = farm();
        let root = g.root().to_path_buf();
        assert_eq!(g.resolve("src/a.rs").unwrap(), root.join("src/a.rs"));
        assert_eq!(
            g.resolve("./src/../src/a.rs").unwrap(),
            root.join("src/a.rs")
        );
        assert_eq!(
            g.resolve(root.join("src/a.rs").to_str().unwrap()).unwrap(),
            root.join("src/a.rs")
        );
        assert_eq!(
            g.resolve("new/dir/file.txt").unwrap(),
            root.join("new/dir/file.txt")
        );
        assert_eq!(g.resolve("in_link/a.rs").unwrap(), root.join("src/a.rs"));
        assert_eq!(g.resolve("dangling_in").unwrap(), root.join("src/new.rs"));
        assert_eq!(g.resolve(".").unwrap(), root);
    }

    #[test]
    fn physical_paths_climb_from_link_targets() {
        let (_d, g, outside) = farm();
        let root = g.root().to_path_buf();
        let outside = std::fs::canonicalize(outside).unwrap();
        std::fs::create_dir_all(outside.join("deep")).unwrap();
        symlink(outside.join("deep"), root.join("deep_link")).unwrap();
        assert_eq!(
            physical_path(&root, "deep_link/../secret"),
            Some(outside.join("secret"))
        );
        assert_eq!(
            physical_path(&root, "src/../src/a.rs"),
            Some(root.join("src/a.rs"))
        );
        assert_eq!(physical_path(&root, "out_link/x"), Some(outside.join("x")));
        assert_eq!(
            physical_path(&root, "/etc/../etc"),
            Some(PathBuf::from("/etc"))
        );
        assert_eq!(physical_path(&root, "new/../b"), Some(root.join("b")));
        symlink("loop2", root.join("loop1")).unwrap();
        symlink("loop1", root.join("loop2")).unwrap();
        assert_eq!(physical_path(&root, "loop1/x"), None);
    }

    #[test]
    fn rejects_escapes() {
        let (_d, g, outside) = farm();
        for p in [
            "../outside/secret",
            "src/../../outside/secret",
            "/etc/passwd",
            "out_link/secret",
            "out_link/new_file",
            "dangling_out",
            "in_link/../../outside/secret",
            "/",
            "../../../../../../../../..",
        ] {
            let e = g.resolve(p).unwrap_err();
            assert!(matches!(e, PathError::Outside { .. }), "{p}: {e:?}");
            assert!(e.to_string().contains("outside the workspace"));
        }
        assert!(g.resolve(outside.join("secret").to_str().unwrap()).is_err());
        assert_eq!(g.resolve("a\0b"), Err(PathError::Nul));
        assert_eq!(g.resolve(""), Err(PathError::Empty));
    }

    #[test]
    fn extra_dirs_are_allowed() {
        let (d, _, outside) = farm();
        let g = PathGuard::new(d.path().join("ws"), std::slice::from_ref(&outside)).unwrap();
        assert!(g.resolve(outside.join("secret").to_str().unwrap()).is_ok());
        assert!(g.resolve("out_link/secret").is_ok());
    }

    #[test]
    fn symlink_loops_are_errors() {
        let (_d, g, _) = farm();
        symlink(g.root().join("loop_b"), g.root().join("loop_a")).unwrap();
        symlink(g.root().join("loop_a"), g.root().join("loop_b")).unwrap();
        assert!(g.resolve("loop_a/x").is_err());
    }

    #[test]
    fn a_symlink_to_the_workspace_is_another_spelling_of_it() {
        let (d, g, outside) = farm();
        let link = d.path().join("ws_link");
        symlink(g.root(), &link).unwrap();
        let elsewhere = d.path().join("elsewhere");
        symlink(&outside, &elsewhere).unwrap();
        let through = link.join("src/a.rs");
        assert!(g.resolve(through.to_str().unwrap()).is_err());
        let g = g.with_aliases(&[link.clone(), elsewhere.clone(), PathBuf::from("relative")]);
        assert_eq!(
            g.resolve(through.to_str().unwrap()).unwrap(),
            g.root().join("src/a.rs")
        );
        // A link to elsewhere is no alias, and a path through the alias still may not leave.
        assert!(
            g.resolve(elsewhere.join("secret").to_str().unwrap())
                .is_err()
        );
        assert!(
            g.resolve(link.join("out_link/secret").to_str().unwrap())
                .is_err()
        );
        assert!(
            g.resolve(link.join("../outside/secret").to_str().unwrap())
                .is_err()
        );
    }
}
