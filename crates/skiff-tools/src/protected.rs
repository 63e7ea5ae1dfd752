//! Files that make programs run later, outside the sandbox — git's config and hooks, agent and
//! editor settings, shell start-up files — and what happens to them around a sandboxed
//! command: those that exist are read-only mounts inside the sandbox ([`scan`]); those that do
//! not exist cannot be kept from being created by a mount, so what a command created among
//! them is moved away when the command ends (and, should skiff die first, at its next start:
//! [`crate::sandbox`]'s journal), and git configuration it created keeps everything but the
//! settings that name programs ([`sweep`]).

use std::path::{Path, PathBuf};

use crate::presence::{Kind, Round};

/// Paths (relative to a workspace root) that are read-only inside the sandbox when they exist,
/// and moved away after the command when it created them. `.git/…` entries are handled with
/// the `.git` directory (see [`scan`]).
pub const PROTECTED: &[&str] = &[
    ".gitmodules",
    ".gitconfig",
    ".claude",
    ".skiff",
    ".mcp.json",
    ".vscode",
    ".idea",
    ".zed",
    ".husky",
    ".devcontainer",
    ".envrc",
    ".pre-commit-config.yaml",
    "lefthook.yml",
    ".ripgreprc",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".config/fish",
    ".config/git",
];

/// Inside a `.git` directory: read-only when they exist (moved away when a command makes
/// them). `commondir` names the directory git takes the config, hooks and objects from: one
/// written into `.git` makes the user's next `git status` read a config the command wrote.
const GIT_READ_ONLY: &[&str] = &["config", "config.worktree", "hooks", "info", "commondir"];

/// Inside a `.git` directory: the to-do lists of a rebase or cherry-pick in progress, whose
/// `exec` lines the user's `git rebase --continue` runs. A command may write them (its own
/// rebase stopping at a conflict is routine), but `exec` lines it put there are removed.
const GIT_TODO: &[&str] = &["rebase-merge/git-rebase-todo", "sequencer/todo"];

/// How deep `.git/modules` is searched for nested submodules.
const MODULE_DEPTH: usize = 6;

/// What the sandbox does with a root's protected paths.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Protected {
    /// Bound onto themselves so they cannot be renamed or removed (the `.git` directory).
    pub pin: Vec<PathBuf>,
    /// Existing protected paths: read-only.
    pub read_only: Vec<PathBuf>,
    /// Protected paths that do not exist: checked after the command.
    pub absent: Vec<PathBuf>,
    /// git configuration files that may appear and must then name no program (new
    /// submodules' and worktrees' configs), with the hooks directories beside them.
    pub git_watch: Vec<PathBuf>,
    /// The `.git` of each populated gitlink (a submodule's, or an embedded repository's) as it
    /// was: one that is new after the command (made, or put there by renaming a directory
    /// above it) is cleaned like a new repository.
    pub nested: Vec<Nested>,
}

/// A gitlink's `.git` (directory or file) and the inode it was before the command.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Nested {
    /// `root/<gitlink>/.git`.
    pub git: PathBuf,
    /// Its device before the command.
    pub dev: u64,
    /// Its inode before the command.
    pub ino: u64,
}

/// The protected paths of one workspace root, as they are now (looked up in `round`).
pub fn scan(root: &Path, round: &Round<'_>) -> Protected {
    let mut out = Protected::default();
    for rel in PROTECTED {
        let path = root.join(rel);
        if round.exists(&path) {
            out.read_only.push(path);
        } else {
            out.absent.push(path);
        }
    }
    let git = root.join(".git");
    match round.kind(&git) {
        Kind::Dir => {
            out.pin.push(git.clone());
            for rel in GIT_READ_ONLY {
                let path = git.join(rel);
                if round.exists(&path) {
                    out.read_only.push(path);
                } else {
                    out.absent.push(path);
                }
            }
            let mut modules = Vec::new();
            let (submodules, worktrees) = (git.join("modules"), git.join("worktrees"));
            if round.exists(&submodules) {
                find_git_dirs(&submodules, MODULE_DEPTH, &mut modules);
            }
            if round.exists(&worktrees)
                && let Ok(entries) = std::fs::read_dir(&worktrees)
            {
                modules.extend(entries.flatten().map(|e| e.path()));
            }
            for dir in modules {
                for rel in ["config", "config.worktree", "hooks"] {
                    let path = dir.join(rel);
                    if exists(&path) {
                        out.read_only.push(path);
                    }
                }
                // A worktree's or submodule's own rebase (its `git rebase --continue`).
                seen_todo(&dir, &mut out);
            }
            out.git_watch.push(git.join("modules"));
            out.git_watch.push(git.join("worktrees"));
            out.git_watch.push(git.join("index"));
            seen_todo(&git, &mut out);
            for link in crate::gitlinks::of(&git) {
                let Some(dir) = inside(root, &link) else {
                    continue;
                };
                nested_git(&dir.join(".git"), &mut out);
            }
        }
        // A worktree's or submodule's `.git` file: it names the git directory.
        Kind::Other => out.read_only.push(git),
        Kind::Absent => out.absent.push(git),
    }
    out
}

/// `root/rel` where no directory on the way is a symbolic link (git does not look through one
/// for a gitlink either).
fn inside(root: &Path, rel: &Path) -> Option<PathBuf> {
    let mut dir = root.to_path_buf();
    for part in rel.components() {
        dir.push(part);
        if !std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
            return None;
        }
    }
    Some(dir)
}

impl Nested {
    /// `path` as it is now (`None` when it does not exist).
    fn of(path: &Path) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::symlink_metadata(path).ok()?;
        Some(Self {
            git: path.to_path_buf(),
            dev: meta.dev(),
            ino: meta.ino(),
        })
    }
}

/// Before a command: the to-do lists in the git directory `git` as they are (see
/// [`sweep_todo`]).
fn seen_todo(git: &Path, out: &mut Protected) {
    for rel in GIT_TODO {
        if let Some(n) = Nested::of(&git.join(rel)) {
            out.nested.push(n);
        }
    }
}

/// After a command: `exec` lines in a rebase's or cherry-pick's to-do list that is not the
/// one [`scan`] saw are removed (the original goes to `quarantine`).
fn sweep_todo(git: &Path, nested: &[Nested], quarantine: &Path, notes: &mut Vec<String>) {
    for rel in GIT_TODO {
        let path = git.join(rel);
        let Some(now) = Nested::of(&path) else {
            continue;
        };
        if nested.contains(&now) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let runs = |line: &str| matches!(line.split_whitespace().next(), Some("exec" | "x"));
        if !text.lines().any(runs) {
            continue;
        }
        let kept: String = text
            .lines()
            .filter(|l| !runs(l))
            .map(|l| format!("{l}\n"))
            .collect();
        let copy = quarantine_target(&path, quarantine);
        let _ = copy
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&copy, &text));
        match crate::atomic::write_atomic(&path, kept.as_bytes()) {
            Ok(()) => notes.push(format!(
                "{} (removed its exec lines; the original is in {})",
                path.display(),
                copy.display()
            )),
            Err(e) => notes.push(format!("{} (could not be cleaned: {e})", path.display())),
        }
    }
}

/// What [`scan`] does with a gitlink's `.git`: as with the root's, a directory is pinned with
/// its config and hooks read-only, a file is read-only, and one that does not exist is watched.
fn nested_git(git: &Path, out: &mut Protected) {
    let Some(seen) = Nested::of(git) else {
        out.absent.push(git.to_path_buf());
        return;
    };
    out.nested.push(seen);
    if !std::fs::symlink_metadata(git).is_ok_and(|m| m.is_dir()) {
        out.read_only.push(git.to_path_buf());
        return;
    }
    out.pin.push(git.to_path_buf());
    for rel in GIT_READ_ONLY {
        let path = git.join(rel);
        if exists(&path) {
            out.read_only.push(path);
        } else {
            out.absent.push(path);
        }
    }
    seen_todo(git, out);
}

/// After a command, the gitlinks in `git`'s index: a `.git` that is not the one [`scan`] saw
/// is cleaned like a repository the command made (a directory), or moved away (a file that
/// does not lead into the root's `.git/modules`).
fn sweep_gitlinks(
    git: &Path,
    absent: &[PathBuf],
    nested: &[Nested],
    quarantine: &Path,
    notes: &mut Vec<String>,
) {
    use std::os::unix::fs::MetadataExt;
    let Some(root) = git.parent() else {
        return;
    };
    for link in crate::gitlinks::of(git) {
        let Some(dir) = inside(root, &link) else {
            continue;
        };
        let sub = dir.join(".git");
        if absent.contains(&sub) {
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(&sub) else {
            continue;
        };
        let seen = nested
            .iter()
            .any(|n| n.git == sub && n.dev == meta.dev() && n.ino == meta.ino());
        if meta.is_dir() {
            sweep_todo(&sub, nested, quarantine, notes);
        }
        if seen {
            continue;
        }
        if meta.is_dir() {
            clean_git_dir(&sub, quarantine, notes);
        } else if !leads_into(&sub, &git.join("modules")) {
            match move_away(&sub, quarantine) {
                Ok(to) => notes.push(format!("{} (moved to {})", sub.display(), to.display())),
                Err(e) => notes.push(format!("{} (could not be moved away: {e})", sub.display())),
            }
        }
    }
}

/// Whether the `.git` file `file` names a git directory inside `modules`.
fn leads_into(file: &Path, modules: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(file) else {
        return false;
    };
    let Some(target) = text.trim().strip_prefix("gitdir:").map(str::trim) else {
        return false;
    };
    let base = file.parent().unwrap_or(Path::new("/"));
    match (
        std::fs::canonicalize(base.join(target)),
        std::fs::canonicalize(modules),
    ) {
        (Ok(t), Ok(m)) => t.starts_with(m),
        _ => false,
    }
}

fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// The git directories under `.git/modules` (each has a `HEAD`), nested ones too.
fn find_git_dirs(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if depth == 0 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        if path.join("HEAD").is_file() {
            out.push(path.clone());
            find_git_dirs(&path.join("modules"), depth - 1, out);
        } else {
            find_git_dirs(&path, depth - 1, out);
        }
    }
}

/// Paths skiff itself wrote in this process (settings saved by an approval, files written by
/// the Edit and Write tools): a command's sweep leaves them alone.
static OWN_WRITES: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Remember that skiff itself wrote `path` (see [`sweep`]).
pub fn record_own_write(path: &Path) {
    if let Ok(mut own) = OWN_WRITES.lock()
        && !own.iter().any(|p| p == path)
    {
        own.push(path.to_path_buf());
    }
}

/// Whether skiff itself wrote `path` or something under it.
fn own_write(path: &Path) -> bool {
    OWN_WRITES
        .lock()
        .is_ok_and(|own| own.iter().any(|p| p == path || p.starts_with(path)))
}

/// After a command: what it created among `absent` paths is moved into `quarantine` (git
/// directories and configs are kept, without the settings that name programs and without
/// hooks); new configs under `git_watch` are cleaned the same way. `keep` says which paths
/// skiff's own tools wrote with the user's approval (left alone). Paths are looked up in
/// `round`, taken after the command ended. The notes say what was done.
pub fn sweep(
    absent: &[PathBuf],
    git_watch: &[PathBuf],
    known: &[PathBuf],
    nested: &[Nested],
    quarantine: &Path,
    keep: &dyn Fn(&Path) -> bool,
    round: &Round<'_>,
) -> Vec<String> {
    let mut notes = Vec::new();
    for path in absent {
        if !round.exists(path) || keep(path) || own_write(path) {
            continue;
        }
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let in_git = path
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|p| p == ".git");
        if name == ".git" && std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
            clean_git_dir(path, quarantine, &mut notes);
        } else if in_git && (name == "config" || name == "config.worktree") {
            clean_git_config(path, quarantine, &mut notes);
        } else if in_git && name == "hooks" {
            clean_hooks(path, quarantine, &mut notes);
        } else {
            match move_away(path, quarantine) {
                Ok(to) => notes.push(format!("{} (moved to {})", path.display(), to.display())),
                Err(e) => notes.push(format!("{} (could not be moved away: {e})", path.display())),
            }
        }
    }
    for dir in git_watch {
        if !round.exists(dir) {
            continue;
        }
        if dir.ends_with("index") {
            if let Some(git) = dir.parent() {
                sweep_gitlinks(git, absent, nested, quarantine, &mut notes);
                sweep_todo(git, nested, quarantine, &mut notes);
            }
            continue;
        }
        let mut found = Vec::new();
        if dir.ends_with("worktrees") {
            if let Ok(entries) = std::fs::read_dir(dir) {
                found.extend(entries.flatten().map(|e| e.path()));
            }
        } else {
            find_git_dirs(dir, MODULE_DEPTH, &mut found);
        }
        for git_dir in found {
            for rel in ["config", "config.worktree"] {
                let path = git_dir.join(rel);
                if exists(&path) && !known.contains(&path) {
                    clean_git_config(&path, quarantine, &mut notes);
                }
            }
            let hooks = git_dir.join("hooks");
            if exists(&hooks) && !known.contains(&hooks) {
                clean_hooks(&hooks, quarantine, &mut notes);
            }
            sweep_todo(&git_dir, nested, quarantine, &mut notes);
        }
    }
    notes
}

/// A `.git` directory a command created: a repository is fine, programs in it are not.
fn clean_git_dir(git: &Path, quarantine: &Path, notes: &mut Vec<String>) {
    for rel in ["config", "config.worktree"] {
        let path = git.join(rel);
        if exists(&path) {
            clean_git_config(&path, quarantine, notes);
        }
    }
    clean_hooks(&git.join("hooks"), quarantine, notes);
    let mut modules = Vec::new();
    find_git_dirs(&git.join("modules"), MODULE_DEPTH, &mut modules);
    for dir in modules {
        clean_git_config(&dir.join("config"), quarantine, notes);
        clean_hooks(&dir.join("hooks"), quarantine, notes);
    }
}

/// Remove the settings that name programs from a git config file (a copy of the original
/// goes to quarantine); a symlink or special file is moved away whole.
fn clean_git_config(path: &Path, quarantine: &Path, notes: &mut Vec<String>) {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return;
    };
    if !meta.is_file() || meta.len() > 1024 * 1024 {
        if let Ok(to) = move_away(path, quarantine) {
            notes.push(format!("{} (moved to {})", path.display(), to.display()));
        }
        return;
    }
    let Ok(text) = std::fs::read_to_string(path) else {
        if let Ok(to) = move_away(path, quarantine) {
            notes.push(format!("{} (moved to {})", path.display(), to.display()));
        }
        return;
    };
    let (clean, removed) = strip_program_settings(&text);
    if removed.is_empty() {
        return;
    }
    let copy = quarantine_target(path, quarantine);
    let saved = copy
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&copy, &text));
    match crate::atomic::write_atomic(path, clean.as_bytes()) {
        Ok(()) => notes.push(format!(
            "{} (removed {}{})",
            path.display(),
            removed.join(", "),
            if saved.is_ok() {
                format!("; the original is in {}", copy.display())
            } else {
                String::new()
            }
        )),
        Err(e) => notes.push(format!("{} (could not be cleaned: {e})", path.display())),
    }
}

/// Move every hook that is not one of git's `*.sample` files away.
fn clean_hooks(hooks: &Path, quarantine: &Path, notes: &mut Vec<String>) {
    match std::fs::symlink_metadata(hooks) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            if let Ok(to) = move_away(hooks, quarantine) {
                notes.push(format!("{} (moved to {})", hooks.display(), to.display()));
            }
            return;
        }
        Err(_) => return,
    }
    let Ok(entries) = std::fs::read_dir(hooks) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "sample")
            && entry.file_type().is_ok_and(|t| t.is_file())
        {
            continue;
        }
        match move_away(&path, quarantine) {
            Ok(to) => notes.push(format!("{} (moved to {})", path.display(), to.display())),
            Err(e) => notes.push(format!("{} (could not be moved away: {e})", path.display())),
        }
    }
}

/// Where `path` goes in `quarantine` (its absolute path below it).
fn quarantine_target(path: &Path, quarantine: &Path) -> PathBuf {
    let rel = path.strip_prefix("/").unwrap_or(path);
    quarantine.join(rel)
}

/// Move a file, symlink or directory into quarantine (copy and remove across filesystems).
fn move_away(path: &Path, quarantine: &Path) -> std::io::Result<PathBuf> {
    let to = quarantine_target(path, quarantine);
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let _ = remove(&to);
    match std::fs::rename(path, &to) {
        Ok(()) => Ok(to),
        Err(_) => {
            copy_tree(path, &to)?;
            remove(path)?;
            Ok(to)
        }
    }
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    let meta = std::fs::symlink_metadata(from)?;
    if meta.file_type().is_symlink() {
        std::os::unix::fs::symlink(std::fs::read_link(from)?, to)
    } else if meta.is_dir() {
        std::fs::create_dir_all(to)?;
        for entry in std::fs::read_dir(from)? {
            let entry = entry?;
            copy_tree(&entry.path(), &to.join(entry.file_name()))?;
        }
        Ok(())
    } else if meta.is_file() {
        std::fs::copy(from, to).map(|_| ())
    } else {
        // A socket or FIFO: nothing to keep.
        Ok(())
    }
}

fn remove(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Whether a git config entry makes git run a program or read another file (`section` and
/// `key` lower case, `value` as written).
fn names_program(section: &str, key: &str, value: &str) -> bool {
    const KEYS: &[&str] = &[
        "fsmonitor",
        "hookspath",
        "sshcommand",
        "editor",
        "askpass",
        "pager",
        "textconv",
        "external",
        "command",
        "driver",
        "clean",
        "smudge",
        "process",
        "helper",
        "program",
        "difffilter",
        "defaultkeycommand",
        "allowedsignersfile",
        "gitproxy",
        "uploadpack",
        "receivepack",
        "packobjectshook",
        "templatedir",
        "showsignature",
        "alternaterefscommand",
        "worktree",
        "vcs",
    ];
    let program_value = value.trim_start().starts_with('!');
    // `ext::CMD` URLs run CMD on fetch and push; `protocol.*.allow` lets them.
    let ext_url = value
        .trim_start()
        .trim_start_matches('"')
        .starts_with("ext::");
    match section {
        "pager" | "include" | "includeif" | "protocol" | "url" => true,
        "remote" if ext_url => true,
        "alias" => program_value,
        "submodule" => key == "update" && program_value,
        "browser" | "man" | "difftool" | "mergetool" => matches!(key, "cmd" | "path"),
        _ => KEYS.contains(&key),
    }
}

/// A git config file without the entries that name programs, and those entries
/// (`section.key`).
pub fn strip_program_settings(text: &str) -> (String, Vec<String>) {
    let mut out = String::with_capacity(text.len());
    let mut removed = Vec::new();
    let mut section = String::new();
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix('[') {
            let head = rest.split(']').next().unwrap_or("");
            let name = head.split(['"', ' ', '.']).next().unwrap_or(head);
            section = name.trim().to_ascii_lowercase();
            // `[section] key = value` on one line.
            let after = rest.split_once(']').map_or("", |(_, a)| a).trim();
            if !after.is_empty() && entry_names_program(&section, after) {
                removed.push(format!("{section}.{}", key_of(after)));
                out.push_str(&format!("[{head}]\n"));
                continue;
            }
            out.push_str(line);
            continue;
        }
        if !trimmed.is_empty()
            && !trimmed.starts_with('#')
            && !trimmed.starts_with(';')
            && entry_names_program(&section, trimmed)
        {
            removed.push(format!("{section}.{}", key_of(trimmed)));
            continue;
        }
        out.push_str(line);
    }
    (out, removed)
}

fn key_of(entry: &str) -> String {
    entry
        .split(['=', ' ', '\t'])
        .next()
        .unwrap_or("")
        .to_ascii_lowercase()
}

fn entry_names_program(section: &str, entry: &str) -> bool {
    let key = key_of(entry);
    let value = entry.split_once('=').map_or("", |(_, v)| v);
    names_program(section, &key, value)
}

/// The settings of a git config file that name programs (`section.key`), for tests and notes.
pub fn program_settings(text: &str) -> Vec<String> {
    strip_program_settings(text).1
}

/// The note added to a command's result when protected paths it created were moved away.
pub fn swept_note(notes: &[String]) -> String {
    format!(
        "Note: this command created files that would make programs run outside the sandbox \
         (git hooks or config, agent or editor settings, shell start-up files); skiff undid \
         that: {}. Ask the user to make such changes, or use the Edit and Write tools, which \
         ask for approval.",
        notes.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_settings_are_found_and_stripped() {
        let harmless = "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = x\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[user]\n\tname = A\n[branch \"main\"]\n\tremote = origin\n[alias]\n\tst = status\n[submodule \"s\"]\n\tupdate = rebase\n";
        assert_eq!(program_settings(harmless), Vec::<String>::new());
        for (evil, key) in [
            ("[core]\n\tfsmonitor = ./x\n", "core.fsmonitor"),
            ("[core]\n\thooksPath = evil\n", "core.hookspath"),
            ("[alias]\n\tst = !sh -c evil\n", "alias.st"),
            ("[include]\n\tpath = ../evil\n", "include.path"),
            (
                "[includeIf \"gitdir:/\"]\n\tpath = ../evil\n",
                "includeif.path",
            ),
            ("[filter \"lfs\"]\n\tsmudge = evil\n", "filter.smudge"),
            ("[pager]\n\tstatus = evil\n", "pager.status"),
            ("[merge \"x\"]\n\tdriver = evil %A\n", "merge.driver"),
            ("[mergetool \"x\"]\n\tcmd = evil\n", "mergetool.cmd"),
            ("[difftool \"x\"]\n\tcmd = evil\n", "difftool.cmd"),
            (
                "[interactive]\n\tdiffFilter = evil\n",
                "interactive.difffilter",
            ),
            ("[submodule \"s\"]\n\tupdate = !evil\n", "submodule.update"),
            (
                "[gpg \"ssh\"]\n\tdefaultKeyCommand = evil\n",
                "gpg.defaultkeycommand",
            ),
            ("[core] sshCommand = evil\n", "core.sshcommand"),
            ("[protocol \"ext\"]\n\tallow = always\n", "protocol.allow"),
            (
                "[remote \"o\"]\n\turl = \"ext::sh -c evil\"\n",
                "remote.url",
            ),
            (
                "[url \"ext::sh -c evil\"]\n\tinsteadOf = https://x\n",
                "url.insteadof",
            ),
            (
                "[core]\n\talternateRefsCommand = evil\n",
                "core.alternaterefscommand",
            ),
        ] {
            let text = format!("{harmless}{evil}");
            let (clean, removed) = strip_program_settings(&text);
            assert_eq!(removed, vec![key.to_owned()], "{evil}");
            assert!(clean.starts_with(harmless), "{clean}");
            assert!(program_settings(&clean).is_empty(), "{clean}");
        }
    }

    #[test]
    fn scan_finds_what_to_protect() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
        std::fs::create_dir_all(root.join(".git/modules/sub/hooks")).unwrap();
        std::fs::write(root.join(".git/modules/sub/HEAD"), "ref: x\n").unwrap();
        std::fs::write(root.join(".git/modules/sub/config"), "[core]\n").unwrap();
        std::fs::create_dir(root.join(".claude")).unwrap();
        let p = scan(root, &Round::uncached());
        let presence = crate::presence::Presence::with_settle(std::time::Duration::ZERO);
        assert_eq!(scan(root, &presence.round()), p);
        assert_eq!(scan(root, &presence.round()), p, "answered from the memo");
        assert_eq!(p.pin, vec![root.join(".git")]);
        for path in [
            ".git/config",
            ".git/hooks",
            ".git/modules/sub/config",
            ".git/modules/sub/hooks",
            ".claude",
        ] {
            assert!(p.read_only.contains(&root.join(path)), "{path}: {p:?}");
        }
        for path in [
            ".envrc",
            ".mcp.json",
            ".git/config.worktree",
            ".git/commondir",
            ".vscode",
        ] {
            assert!(p.absent.contains(&root.join(path)), "{path}: {p:?}");
        }
    }

    #[test]
    fn sweep_moves_created_paths_and_cleans_git() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        let q = dir.path().join("quarantine");
        std::fs::create_dir_all(&root).unwrap();
        // A workspace unchanged for a while: its lookups are answered from the memo, which
        // must still see what the command created.
        std::thread::sleep(std::time::Duration::from_millis(25));
        let presence = crate::presence::Presence::with_settle(std::time::Duration::from_millis(10));
        let before = scan(&root, &presence.round());
        let looked = presence.lookups();
        assert_eq!(scan(&root, &presence.round()), before);
        assert_eq!(
            presence.lookups(),
            looked,
            "the second scan was answered from the memo"
        );
        assert!(before.absent.contains(&root.join(".git")));
        // A command creates a repository with a planted fsmonitor and hook, and agent settings.
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::write(
            root.join(".git/config"),
            "[core]\n\tbare = false\n\tfsmonitor = evil\n",
        )
        .unwrap();
        std::fs::write(root.join(".git/hooks/pre-commit"), "evil").unwrap();
        std::fs::write(root.join(".git/hooks/pre-commit.sample"), "ok").unwrap();
        std::fs::create_dir_all(root.join(".claude/commands")).unwrap();
        std::fs::write(root.join(".claude/commands/x.md"), "evil").unwrap();
        std::fs::write(root.join(".envrc"), "evil").unwrap();
        std::fs::write(root.join(".mcp.json"), "{}").unwrap();
        let keep_mcp = |p: &Path| p.ends_with(".mcp.json");
        let notes = sweep(
            &before.absent,
            &before.git_watch,
            &before.read_only,
            &before.nested,
            &q,
            &keep_mcp,
            &presence.round(),
        );
        assert_eq!(
            std::fs::read_to_string(root.join(".git/config")).unwrap(),
            "[core]\n\tbare = false\n"
        );
        assert!(!root.join(".git/hooks/pre-commit").exists());
        assert!(root.join(".git/hooks/pre-commit.sample").exists());
        assert!(!root.join(".claude").exists() && !root.join(".envrc").exists());
        assert!(root.join(".mcp.json").exists(), "kept: written by a tool");
        assert!(
            q.join(root.strip_prefix("/").unwrap())
                .join(".envrc")
                .exists()
        );
        assert_eq!(notes.len(), 4, "{notes:?}");
        assert!(swept_note(&notes).contains(".envrc"));
    }
}
