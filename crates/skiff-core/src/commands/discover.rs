//! Finding command and skill files. Project files (`.claude/` and `.skiff/` in the workspace)
//! are read only from a workspace the user trusts, and never through a symlink that leaves it;
//! user files come from `~/.claude` (or `$CLAUDE_CONFIG_DIR`) and `$SKIFF_HOME`; plugins'
//! files from their directories (never through a symlink that leaves them), named
//! `plugin-name:command`, with `${CLAUDE_PLUGIN_ROOT}` in their bodies replaced by the plugin's
//! directory. On a name clash the user's beat the project's, the project's beat plugins', a skill beats a command, `.skiff` beats `.claude`, and
//! a front end's built-in command beats them all — each time with a warning. Files that cannot
//! be used (binary, not UTF-8, unreadable) are skipped with a warning naming them; huge ones are
//! cut.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::frontmatter;
use super::{CommandKind, CommandSet, CustomCommand, Scope};

/// At most this much of a command file is used.
pub const MAX_FILE_BYTES: usize = 256 * 1024;
/// At most this many files are read from one directory tree.
const MAX_FILES: usize = 1000;
/// Command directories are searched this deep.
const MAX_DEPTH: usize = 8;
/// Descriptions taken from a body's first line are cut to this many characters.
const MAX_DERIVED_DESCRIPTION: usize = 250;

/// Where to look.
#[derive(Debug, Clone, Default)]
pub struct DiscoverOptions {
    /// The workspace (canonical).
    pub cwd: PathBuf,
    /// The user trusts the workspace: its own command and skill files may be used.
    pub trusted: bool,
    /// Look in the workspace (`--setting-sources` may leave `project` out).
    pub project: bool,
    /// User directories, lowest precedence first (`~/.claude`, then `$SKIFF_HOME`).
    pub user_dirs: Vec<PathBuf>,
    /// Built-in command names of the front end: reserved.
    pub builtins: Vec<String>,
    /// The enabled plugins' commands and skills.
    pub plugins: Vec<PluginCommands>,
}

/// Where one plugin's commands and skills are (paths already checked to be inside `root`).
#[derive(Debug, Clone, Default)]
pub struct PluginCommands {
    /// The plugin's name: its commands are `/<name>:<command>`.
    pub name: String,
    /// The plugin's directory (canonical): files are read only from inside it.
    pub root: PathBuf,
    /// Command directories (searched like `.claude/commands`) and single `.md` files.
    pub commands: Vec<PathBuf>,
    /// Skill directories: each holds `<skill>/SKILL.md`, or is one skill's directory.
    pub skills: Vec<PathBuf>,
}

/// What discovery found.
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    /// The commands and skills.
    pub set: CommandSet,
    /// Warnings for the user, one line each (`Warning: …`).
    pub warnings: Vec<String>,
}

/// One directory (or a plugin's single file or skill) to search.
struct Root {
    dir: PathBuf,
    kind: CommandKind,
    scope: Scope,
    /// A plugin's name, put before each name found (`demo:hello`).
    prefix: Option<String>,
    /// Files must resolve inside this directory (the workspace, a plugin's root).
    confine: Option<PathBuf>,
}

/// Find the commands and skills.
pub fn discover(opts: &DiscoverOptions) -> Discovery {
    let mut warnings = Vec::new();
    let mut roots = Vec::new();
    let project_roots: Vec<Root> = [".claude", ".skiff"]
        .iter()
        .flat_map(|base| {
            [
                ("commands", CommandKind::Command),
                ("skills", CommandKind::Skill),
            ]
            .map(|(sub, kind)| Root {
                dir: opts.cwd.join(base).join(sub),
                kind,
                scope: Scope::Project,
                prefix: None,
                confine: None,
            })
        })
        .collect();
    if opts.project {
        if opts.trusted {
            roots.extend(project_roots);
        } else {
            let present: Vec<String> = project_roots
                .iter()
                .filter(|r| r.dir.is_dir())
                .map(|r| display(&r.dir, opts))
                .collect();
            if !present.is_empty() {
                warnings.push(format!(
                    "Warning: ignoring the commands and skills in {}: this workspace is not \
                     trusted. Trust it in the REPL, or run with --trust (or \
                     SKIFF_TRUST_WORKSPACE=1), to use them.",
                    present.join(", ")
                ));
            }
        }
    }
    for dir in &opts.user_dirs {
        for (sub, kind) in [
            ("commands", CommandKind::Command),
            ("skills", CommandKind::Skill),
        ] {
            roots.push(Root {
                dir: dir.join(sub),
                kind,
                scope: Scope::User,
                prefix: None,
                confine: None,
            });
        }
    }
    for plugin in &opts.plugins {
        let paths = plugin
            .commands
            .iter()
            .map(|p| (p, CommandKind::Command))
            .chain(plugin.skills.iter().map(|p| (p, CommandKind::Skill)));
        for (dir, kind) in paths {
            roots.push(Root {
                dir: dir.clone(),
                kind,
                scope: Scope::Plugin,
                prefix: Some(plugin.name.clone()),
                confine: Some(plugin.root.clone()),
            });
        }
    }
    // Lowest precedence first: plugins' commands and skills, project commands, project skills,
    // user commands, user skills.
    roots.sort_by_key(|r| (r.scope, r.kind == CommandKind::Skill));
    let workspace = std::fs::canonicalize(&opts.cwd).unwrap_or_else(|_| opts.cwd.clone());
    let mut found: BTreeMap<String, CustomCommand> = BTreeMap::new();
    for root in &roots {
        let entries = match root.kind {
            // A plugin may name one command file.
            CommandKind::Command if root.prefix.is_some() && root.dir.is_file() => {
                single_command(&root.dir)
            }
            // A plugin may name one skill's directory.
            CommandKind::Skill if root.prefix.is_some() && root.dir.join("SKILL.md").is_file() => {
                single_skill(&root.dir)
            }
            _ if !root.dir.is_dir() => continue,
            CommandKind::Command => command_files(&root.dir),
            CommandKind::Skill => skill_files(&root.dir),
        };
        let confine = match root.scope {
            Scope::Project => Some(workspace.as_path()),
            _ => root.confine.as_deref(),
        };
        for (name, path, dir) in entries {
            let Some(cmd) = load(root, name, path, dir, confine, opts, &mut warnings) else {
                continue;
            };
            if let Some(old) = found.get(&cmd.name) {
                warnings.push(format!(
                    "Warning: /{} of {} is overridden by {}",
                    cmd.name,
                    display(&old.path, opts),
                    display(&cmd.path, opts)
                ));
            }
            found.insert(cmd.name.clone(), cmd);
        }
    }
    for builtin in &opts.builtins {
        if let Some(cmd) = found.remove(builtin) {
            warnings.push(format!(
                "Warning: {} is not used: /{builtin} is a built-in command",
                display(&cmd.path, opts)
            ));
        }
    }
    Discovery {
        set: CommandSet::new(opts.builtins.clone(), found.into_values().collect()),
        warnings,
    }
}

/// A path as warnings show it: relative to the workspace when inside it.
fn display(path: &Path, opts: &DiscoverOptions) -> String {
    path.strip_prefix(&opts.cwd)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// `<root>/**/<name>.md`, named `dir:sub:name`, sorted.
fn command_files(root: &Path) -> Vec<(String, PathBuf, Option<PathBuf>)> {
    let mut out = Vec::new();
    walk(root, &mut Vec::new(), 0, &mut out);
    out.sort();
    out.into_iter()
        .map(|(name, path)| (name, path, None))
        .collect()
}

fn walk(dir: &Path, prefix: &mut Vec<String>, depth: usize, out: &mut Vec<(String, PathBuf)>) {
    if depth > MAX_DEPTH || out.len() >= MAX_FILES {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        if out.len() >= MAX_FILES {
            return;
        }
        let path = entry.path();
        let Some(file_name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        if file_name.starts_with('.') {
            continue;
        }
        if path.is_dir() {
            prefix.push(file_name);
            walk(&path, prefix, depth + 1, out);
            prefix.pop();
        } else if let Some(stem) = file_name.strip_suffix(".md") {
            let mut parts = prefix.clone();
            parts.push(stem.to_owned());
            out.push((parts.join(":"), path));
        }
    }
}

/// A plugin's single command file, named after its stem.
fn single_command(file: &Path) -> Vec<(String, PathBuf, Option<PathBuf>)> {
    file.file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".md"))
        .map(|stem| (stem.to_owned(), file.to_path_buf(), None))
        .into_iter()
        .collect()
}

/// A plugin's single skill directory, named after it.
fn single_skill(dir: &Path) -> Vec<(String, PathBuf, Option<PathBuf>)> {
    dir.file_name()
        .and_then(|n| n.to_str())
        .map(|name| {
            (
                name.to_owned(),
                dir.join("SKILL.md"),
                Some(dir.to_path_buf()),
            )
        })
        .into_iter()
        .collect()
}

/// `<root>/<name>/SKILL.md`, sorted.
fn skill_files(root: &Path) -> Vec<(String, PathBuf, Option<PathBuf>)> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut out: Vec<(String, PathBuf, Option<PathBuf>)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_owned();
            let dir = e.path();
            let file = dir.join("SKILL.md");
            (!name.starts_with('.') && file.is_file()).then_some((name, file, Some(dir)))
        })
        .take(MAX_FILES)
        .collect();
    out.sort();
    out
}

/// Read one file into a command; `None` (with a warning) when it cannot be used.
fn load(
    root: &Root,
    name: String,
    path: PathBuf,
    dir: Option<PathBuf>,
    confine: Option<&Path>,
    opts: &DiscoverOptions,
    warnings: &mut Vec<String>,
) -> Option<CustomCommand> {
    let shown = display(&path, opts);
    if let Some(workspace) = confine {
        match std::fs::canonicalize(&path) {
            Ok(real) if real.starts_with(workspace) => {}
            Ok(_) => {
                let outside = match root.scope {
                    Scope::Plugin => "the plugin's directory",
                    _ => "the workspace",
                };
                warnings.push(format!(
                    "Warning: skipping {shown}: it is a symlink to a file outside {outside}"
                ));
                return None;
            }
            Err(e) => {
                warnings.push(format!("Warning: skipping {shown}: {e}"));
                return None;
            }
        }
    }
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => {
            warnings.push(format!("Warning: skipping {shown}: cannot read it ({e})"));
            return None;
        }
    };
    let text = match text_of(&bytes) {
        Ok(t) => t,
        Err(why) => {
            warnings.push(format!("Warning: skipping {shown}: {why}"));
            return None;
        }
    };
    if bytes.len() > MAX_FILE_BYTES {
        warnings.push(format!(
            "Warning: {shown} is {} bytes; only its first {} KiB are used",
            bytes.len(),
            MAX_FILE_BYTES / 1024
        ));
    }
    let parsed = frontmatter::parse(&text);
    if let Some(problem) = &parsed.warning {
        warnings.push(format!(
            "Warning: {shown}: {problem}; it is used with its body alone"
        ));
    }
    let meta = parsed.meta;
    let name = match (root.kind, &meta.name) {
        (CommandKind::Skill, Some(n)) if valid_name(n) => n.clone(),
        (CommandKind::Skill, Some(n)) => {
            warnings.push(format!(
                "Warning: {shown}: the name {n:?} is not a command name; /{name} is used"
            ));
            name
        }
        _ => name,
    };
    if !valid_name(&name) {
        warnings.push(format!(
            "Warning: skipping {shown}: /{name} is not a command name (no spaces or slashes)"
        ));
        return None;
    }
    let name = match &root.prefix {
        Some(plugin) => format!("{plugin}:{name}"),
        None => name,
    };
    let mut body = parsed.body;
    if let (Some(_), Some(dir)) = (&root.prefix, &root.confine) {
        body = body.replace("${CLAUDE_PLUGIN_ROOT}", &dir.display().to_string());
    }
    let has_description = meta.description.is_some();
    let description = meta
        .description
        .clone()
        .unwrap_or_else(|| first_line(&body));
    Some(CustomCommand {
        name,
        kind: root.kind,
        scope: root.scope,
        path,
        dir,
        description,
        has_description,
        argument_hint: meta.argument_hint,
        allowed_tools: meta.allowed_tools,
        model: meta.model,
        disable_model_invocation: meta.disable_model_invocation,
        user_invocable: meta.user_invocable,
        argument_names: meta.arguments,
        body,
    })
}

/// The file's text, cut to [`MAX_FILE_BYTES`]; binary or non-UTF-8 files are refused.
fn text_of(bytes: &[u8]) -> Result<String, String> {
    let head = &bytes[..bytes.len().min(MAX_FILE_BYTES)];
    if head.contains(&0) {
        return Err("it is a binary file".into());
    }
    match std::str::from_utf8(head) {
        Ok(t) => Ok(t.to_owned()),
        // Cut in the middle of a character by the cap: keep what is whole.
        Err(e) if bytes.len() > MAX_FILE_BYTES && e.error_len().is_none() => {
            Ok(String::from_utf8_lossy(&head[..e.valid_up_to()]).into_owned())
        }
        Err(_) => Err("it is not UTF-8 text".into()),
    }
}

/// A name a user can type after `/`.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && !name.contains('/')
        && !name.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// The first non-empty line of a body, without Markdown heading marks.
fn first_line(body: &str) -> String {
    let line = body
        .lines()
        .map(|l| l.trim().trim_start_matches('#').trim())
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut out: String = line.chars().take(MAX_DERIVED_DESCRIPTION).collect();
    if line.chars().count() > MAX_DERIVED_DESCRIPTION {
        out.push('…');
    }
    out
}

#[cfg(test)]
#[path = "discover_tests.rs"]
mod tests;
