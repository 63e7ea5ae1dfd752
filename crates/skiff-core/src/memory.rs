//! Memory files loaded at startup (CLAUDE.md, `.claude/rules`, CLAUDE.local.md, AGENTS.md and
//! their `@path` imports, PROTOCOL §8) and the `<system-reminder>` text that carries them.
//!
//! Loading never fails: missing files are skipped silently, unreadable or non-UTF-8 files with a
//! `tracing` warning. Only the specific candidate paths of each directory are opened;
//! `.claude/rules` is listed only where it exists.
//!
//! What a repository can make skiff read is confined the way `@imports` are: a file is judged by
//! where the opened file really is (symlinks resolved), never a special file (`/proc`, `/sys`,
//! `/dev`, FIFOs, devices), and in an untrusted workspace a project or local file (`CLAUDE.md`,
//! `AGENTS.md`, `CLAUDE.local.md`, `.claude/rules/*.md`) must lie inside the directory it was
//! found in (or the workspace and the user's own directories); others are skipped with a
//! warning.

use skiff_protocol::ContentBlock;
use std::collections::HashSet;
use std::io::{ErrorKind, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

/// Largest part of a memory file that is loaded; longer files are cut with a note.
pub const MAX_MEMORY_FILE_BYTES: usize = 256 * 1024;

/// How many `@path` hops are followed from a memory file (an import of an import is 2 hops).
pub const MAX_IMPORT_DEPTH: usize = 4;

/// First paragraph of the memory reminder (as observed in Claude Code).
const REMINDER_HEADER: &str = "Codebase and user instructions are shown below. Be sure to \
adhere to these instructions. IMPORTANT: These instructions OVERRIDE any default behavior and \
you MUST follow them exactly as written.";

/// Appended to the content of a file cut at [`MAX_MEMORY_FILE_BYTES`].
const TRUNCATION_NOTE: &str =
    "[skiff: this file is larger than 256 KB; only its first 256 KB were loaded.]";

/// One loaded memory file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryFile {
    /// Absolute path (lexically normalized, symlinks not resolved).
    pub path: PathBuf,
    /// Where the file comes from; decides the label shown to the model.
    pub label: MemoryLabel,
    /// Text after stripping HTML block comments (and frontmatter for rules files).
    pub content: String,
}

/// The kind of a memory file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemoryLabel {
    /// The user's own files (`~/.claude/CLAUDE.md`, `~/.skiff/CLAUDE.md`, their rules, and the
    /// managed policy file).
    User,
    /// Files of the project (`CLAUDE.md`, `.claude/CLAUDE.md`, `.claude/rules`, `AGENTS.md`).
    Project,
    /// `CLAUDE.local.md`: the user's private project notes.
    Local,
}

impl MemoryLabel {
    /// The label text the model sees after the file path.
    pub fn label_text(self) -> &'static str {
        match self {
            Self::User => "user's private global instructions for all projects",
            Self::Project => "project instructions, checked into the codebase",
            Self::Local => "user's private project instructions, not checked in",
        }
    }
}

/// Where memory is looked for and which kinds load.
///
/// `Default` loads everything, with no user directories and the platform's managed file;
/// [`MemoryOptions::from_env`] fills the directories from the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryOptions {
    /// Claude Code's user directory (`~/.claude`): its `CLAUDE.md` and `rules/**/*.md`.
    pub user_dir: Option<PathBuf>,
    /// skiff's home (`~/.skiff`): its `CLAUDE.md` and `rules/**/*.md`, loaded after `user_dir`'s.
    pub skiff_home: Option<PathBuf>,
    /// The managed (organization policy) memory file, loaded first when it exists, labelled
    /// [`MemoryLabel::User`], whatever the `load_*` switches say. `None` skips it.
    pub managed_file: Option<PathBuf>,
    /// Home directory for `@~/…` imports; `None` reads the `HOME` environment variable.
    pub home_dir: Option<PathBuf>,
    /// Load the user directories' files.
    pub load_user: bool,
    /// Load `CLAUDE.md`, `.claude/CLAUDE.md`, `.claude/rules` and `AGENTS.md` from root to cwd.
    pub load_project: bool,
    /// Load `CLAUDE.local.md` from root to cwd.
    pub load_local: bool,
    /// Load a directory's `AGENTS.md` when it has neither `CLAUDE.md` nor `.claude/CLAUDE.md`.
    pub agents_md: bool,
    /// `Some(dirs)`: `@imports` may only name files inside these directories (an untrusted
    /// workspace: the workspace and the user's own skiff / Claude directories); others are
    /// skipped with a warning. `None`: any file the user can read.
    pub import_roots: Option<Vec<PathBuf>>,
}

impl Default for MemoryOptions {
    fn default() -> Self {
        Self {
            user_dir: None,
            skiff_home: None,
            managed_file: default_managed_file(),
            home_dir: None,
            load_user: true,
            load_project: true,
            load_local: true,
            agents_md: true,
            import_roots: None,
        }
    }
}

impl MemoryOptions {
    /// Everything on, with `user_dir` = `$CLAUDE_CONFIG_DIR` or `~/.claude`, `skiff_home` =
    /// `$SKIFF_HOME` or `~/.skiff`, and the home directory from `HOME`.
    pub fn from_env() -> Self {
        let home = home_from_env();
        let dir = |var: &str, name: &str| {
            std::env::var_os(var)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .or_else(|| home.as_ref().map(|h| h.join(name)))
        };
        Self {
            user_dir: dir("CLAUDE_CONFIG_DIR", ".claude"),
            skiff_home: dir("SKIFF_HOME", ".skiff"),
            home_dir: home.clone(),
            ..Self::default()
        }
    }
}

/// The platform's managed memory file (`/etc/claude-code/CLAUDE.md` on Linux).
pub fn default_managed_file() -> Option<PathBuf> {
    if cfg!(target_os = "macos") {
        Some(PathBuf::from(
            "/Library/Application Support/ClaudeCode/CLAUDE.md",
        ))
    } else if cfg!(windows) {
        Some(PathBuf::from(r"C:\Program Files\ClaudeCode\CLAUDE.md"))
    } else if cfg!(unix) {
        Some(PathBuf::from("/etc/claude-code/CLAUDE.md"))
    } else {
        None
    }
}

/// Loads the memory files for a session started in `cwd`, in the order they are shown:
///
/// 1. the managed file, if it exists;
/// 2. user files: `CLAUDE.md` then `rules/**/*.md` (sorted) of `user_dir`, then of `skiff_home`;
/// 3. for each directory from the filesystem root down to `cwd`: `CLAUDE.md`,
///    `.claude/CLAUDE.md`, `AGENTS.md` (only without either of those two), `.claude/rules/**/*.md`
///    (sorted; a leading frontmatter block is stripped and path scoping ignored), then
///    `CLAUDE.local.md`.
///
/// Each file's `@path` imports follow it directly (depth first, same label, up to
/// [`MAX_IMPORT_DEPTH`] hops). A file appears at most once; files empty after stripping HTML
/// block comments are left out (their imports too).
pub fn load_memory(cwd: &Path, opts: &MemoryOptions) -> Vec<MemoryFile> {
    load_memory_checked(cwd, opts).0
}

/// [`load_memory`], and a warning for each import that was skipped (outside the allowed
/// directories of an untrusted workspace, or a special file).
pub fn load_memory_checked(cwd: &Path, opts: &MemoryOptions) -> (Vec<MemoryFile>, Vec<String>) {
    let cwd = normalize(&std::path::absolute(cwd).unwrap_or_else(|_| cwd.to_path_buf()));
    let roots = opts.import_roots.as_ref().map(|dirs| {
        dirs.iter()
            .map(|d| std::fs::canonicalize(d).unwrap_or_else(|_| normalize(d)))
            .collect()
    });
    let mut loader = Loader {
        home: opts.home_dir.clone().or_else(home_from_env),
        seen: HashSet::new(),
        out: Vec::new(),
        roots,
        skipped: Vec::new(),
    };

    if let Some(managed) = &opts.managed_file {
        loader.load(managed, MemoryLabel::User, Kind::Plain);
    }
    if opts.load_user {
        for dir in [&opts.user_dir, &opts.skiff_home].into_iter().flatten() {
            loader.load(&dir.join("CLAUDE.md"), MemoryLabel::User, Kind::Plain);
            loader.load_rules(&dir.join("rules"), MemoryLabel::User, None);
        }
    }
    if opts.load_project || opts.load_local {
        let dirs: Vec<&Path> = cwd.ancestors().collect();
        for dir in dirs.into_iter().rev() {
            if opts.load_project {
                loader.load_project_dir(dir, opts.agents_md);
            }
            if opts.load_local {
                let path = dir.join("CLAUDE.local.md");
                loader.load_found_in(dir, &path, MemoryLabel::Local, Kind::Plain);
            }
        }
    }
    (loader.out, loader.skipped)
}

/// Renders the memory files as the `<system-reminder>` text block sent before the first prompt,
/// one `Contents of <path> (<label>):` section per file; `None` when there are none.
pub fn memory_reminder(files: &[MemoryFile]) -> Option<String> {
    if files.is_empty() {
        return None;
    }
    let mut out = String::from("<system-reminder>\n");
    out.push_str(REMINDER_HEADER);
    for file in files {
        out.push_str(&format!(
            "\n\nContents of {} ({}):\n\n{}",
            file.path.display(),
            file.label.label_text(),
            file.content
        ));
    }
    out.push_str("\n</system-reminder>");
    Some(out)
}

/// How a file's text is prepared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// As is (minus HTML block comments).
    Plain,
    /// A rules file: a leading frontmatter block is stripped too.
    Rule,
}

/// The state of one [`load_memory`] call.
struct Loader {
    /// Home directory for `~` in imports.
    home: Option<PathBuf>,
    /// Canonical paths of the files read so far.
    seen: HashSet<PathBuf>,
    /// Files in order.
    out: Vec<MemoryFile>,
    /// Where imports may come from (`None`: anywhere).
    roots: Option<Vec<PathBuf>>,
    /// Warnings about skipped imports.
    skipped: Vec<String>,
}

impl Loader {
    /// One directory's project files; `CLAUDE.local.md` is left to the caller.
    fn load_project_dir(&mut self, dir: &Path, agents_md: bool) {
        let project = MemoryLabel::Project;
        let mut has_claude_md =
            self.load_found_in(dir, &dir.join("CLAUDE.md"), project, Kind::Plain);
        let dot_claude = dir.join(".claude");
        let has_dot_claude = dot_claude.is_dir();
        if has_dot_claude {
            let path = dot_claude.join("CLAUDE.md");
            has_claude_md |= self.load_found_in(dir, &path, project, Kind::Plain);
        }
        if agents_md && !has_claude_md {
            self.load_found_in(dir, &dir.join("AGENTS.md"), project, Kind::Plain);
        }
        if has_dot_claude {
            self.load_rules(&dot_claude.join("rules"), project, Some(dir));
        }
    }

    /// Every `*.md` below `rules_dir`, sorted by path; `found_in`: the project directory whose
    /// rules these are (confined as its other files), `None` for the user's own.
    fn load_rules(&mut self, rules_dir: &Path, label: MemoryLabel, found_in: Option<&Path>) {
        let mut files = Vec::new();
        collect_markdown(rules_dir, &mut files);
        files.sort();
        for file in files {
            match found_in {
                Some(dir) => self.load_found_in(dir, &file, label, Kind::Rule),
                None => self.load(&file, label, Kind::Rule),
            };
        }
    }

    /// Loads a top-level memory file of the user's own (no confinement) and its imports;
    /// returns whether the file exists.
    fn load(&mut self, path: &Path, label: MemoryLabel, kind: Kind) -> bool {
        self.load_at(path, label, kind, 0, None)
    }

    /// Loads a project or local memory file found in `dir`: in an untrusted workspace it must
    /// really lie inside `dir` or the allowed directories. Returns whether the file exists.
    fn load_found_in(&mut self, dir: &Path, path: &Path, label: MemoryLabel, kind: Kind) -> bool {
        // Most directories have none of the files looked for: no need to resolve `dir` then.
        if std::fs::symlink_metadata(path).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
        {
            return false;
        }
        let within = self.roots.as_ref().map(|roots| {
            let mut dirs = roots.clone();
            dirs.push(std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf()));
            dirs
        });
        self.load_at(path, label, kind, 0, within.as_deref())
    }

    /// Loads `path` found `depth` import hops away from a top-level file; `within`: the
    /// directories the opened file must really lie in (`None`: anywhere).
    fn load_at(
        &mut self,
        path: &Path,
        label: MemoryLabel,
        kind: Kind,
        depth: usize,
        within: Option<&[PathBuf]>,
    ) -> bool {
        let (raw, truncated, real) = match read_memory_text(path, within) {
            ReadOutcome::Missing => return false,
            ReadOutcome::Unusable => return true,
            ReadOutcome::Refused(why) => {
                tracing::warn!(path = %path.display(), why, "memory file skipped");
                self.skipped
                    .push(format!("Warning: {} was not read: {why}.", path.display()));
                return true;
            }
            ReadOutcome::Text {
                text,
                truncated,
                real,
            } => (text, truncated, real),
        };
        if !self.seen.insert(real) {
            return true;
        }
        let text = match kind {
            Kind::Plain => raw.as_str(),
            Kind::Rule => strip_frontmatter(&raw),
        };
        let text = strip_html_comments(text);
        let mut content = trim_blank_lines(&text).to_owned();
        if content.is_empty() {
            return true;
        }
        if truncated {
            content.push_str("\n\n");
            content.push_str(TRUNCATION_NOTE);
        }
        let imports = if depth < MAX_IMPORT_DEPTH {
            find_imports(&content)
        } else {
            Vec::new()
        };
        self.out.push(MemoryFile {
            path: path.to_path_buf(),
            label,
            content,
        });
        let base = path.parent().unwrap_or(path).to_path_buf();
        for import in imports {
            if let Some(target) = self.resolve_import(&import, &base)
                && self.import_allowed(&import, &target, path)
            {
                let roots = self.roots.clone();
                self.load_at(&target, label, Kind::Plain, depth + 1, roots.as_deref());
            }
        }
        true
    }

    /// Whether an import may be read: never a special file (`/proc`, `/sys`, `/dev`, anything
    /// not a regular file), and inside the allowed directories when they are limited.
    fn import_allowed(&mut self, import: &str, target: &Path, from: &Path) -> bool {
        let real = std::fs::canonicalize(target).unwrap_or_else(|_| target.to_path_buf());
        let special = ["/proc", "/sys", "/dev"]
            .iter()
            .any(|p| real.starts_with(p) || target.starts_with(p))
            || std::fs::metadata(&real).is_ok_and(|m| !m.is_file());
        let why = if special {
            "it is not a regular file"
        } else if self
            .roots
            .as_ref()
            .is_some_and(|roots| !roots.iter().any(|r| real.starts_with(r)))
        {
            "it is outside the workspace and this workspace is not trusted"
        } else {
            return true;
        };
        tracing::warn!(import, from = %from.display(), why, "memory import skipped");
        self.skipped.push(format!(
            "Warning: {} imports @{import}, which was not read: {why}.",
            from.display()
        ));
        false
    }

    /// The absolute path an `@import` names, relative to `base` (`~/` is the home directory).
    fn resolve_import(&self, import: &str, base: &Path) -> Option<PathBuf> {
        let path = if let Some(rest) = import.strip_prefix("~/") {
            self.home.as_ref()?.join(rest)
        } else if import.starts_with('~') {
            return None;
        } else {
            base.join(import)
        };
        Some(normalize(&path))
    }
}

/// What reading a candidate file gave.
enum ReadOutcome {
    /// No such file (or not a regular file).
    Missing,
    /// The file exists but cannot be used (warned about).
    Unusable,
    /// The file is somewhere it may not be read from: why (the user is told).
    Refused(String),
    /// The file's text, cut at [`MAX_MEMORY_FILE_BYTES`] when `truncated`; `real` is where the
    /// opened file really is.
    Text {
        text: String,
        truncated: bool,
        real: PathBuf,
    },
}

/// Directories whose files are never memory, whatever a link says: their "regular files" are
/// the kernel's (`/proc/self/environ`) or devices.
const SPECIAL_DIRS: [&str; 3] = ["/proc", "/sys", "/dev"];

/// Where an opened file really is: the kernel's name for the descriptor, else the canonical
/// path.
fn opened_path(file: &std::fs::File, path: &Path) -> PathBuf {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        if let Ok(real) = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
            && real.is_absolute()
        {
            return real;
        }
    }
    let _ = file;
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Reads at most [`MAX_MEMORY_FILE_BYTES`] of `path` as UTF-8 (a leading BOM is dropped). The
/// opened file is judged by where it really is: never under [`SPECIAL_DIRS`], and inside one of
/// `within` when given.
fn read_memory_text(path: &Path, within: Option<&[PathBuf]>) -> ReadOutcome {
    // Look before opening: opening a FIFO for reading waits for a writer.
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => {}
        Ok(_) => {
            tracing::warn!(path = %path.display(), "skipping memory file that is not a regular file");
            return ReadOutcome::Unusable;
        }
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
            return ReadOutcome::Missing;
        }
        Err(_) => {}
    }
    // Non-blocking, in case the file was swapped for a FIFO since.
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
    {
        Ok(file) => file,
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
            return ReadOutcome::Missing;
        }
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "skipping unreadable memory file");
            return ReadOutcome::Unusable;
        }
    };
    match file.metadata() {
        Ok(meta) if meta.is_file() => {}
        Ok(_) => return ReadOutcome::Missing,
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "skipping unreadable memory file");
            return ReadOutcome::Unusable;
        }
    }
    let real = opened_path(&file, path);
    if SPECIAL_DIRS.iter().any(|d| real.starts_with(d)) {
        return ReadOutcome::Refused(format!(
            "it leads to {}, which is not a regular file",
            real.display()
        ));
    }
    if let Some(dirs) = within
        && !dirs.iter().any(|d| real.starts_with(d))
    {
        return ReadOutcome::Refused(format!(
            "it leads to {}, outside the directory it is in, and this workspace is not trusted",
            real.display()
        ));
    }
    let mut bytes = Vec::new();
    let limit = u64::try_from(MAX_MEMORY_FILE_BYTES).unwrap_or(u64::MAX);
    if let Err(e) = file.take(limit.saturating_add(1)).read_to_end(&mut bytes) {
        tracing::warn!(path = %path.display(), error = %e, "skipping unreadable memory file");
        return ReadOutcome::Unusable;
    }
    let truncated = bytes.len() > MAX_MEMORY_FILE_BYTES;
    if truncated {
        bytes.truncate(MAX_MEMORY_FILE_BYTES);
        tracing::warn!(path = %path.display(), "memory file larger than 256 KB; truncated");
    }
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        // The cut may split a character: keep the whole characters before it.
        Err(e) if truncated && e.utf8_error().error_len().is_none() => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).unwrap_or_default()
        }
        Err(_) => {
            tracing::warn!(path = %path.display(), "skipping memory file that is not UTF-8");
            return ReadOutcome::Unusable;
        }
    };
    let text = match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_owned(),
        None => text,
    };
    ReadOutcome::Text {
        text,
        truncated,
        real,
    }
}

/// Collects the `*.md` files below `dir` (symlinked files are followed, symlinked directories
/// are not, so a link cycle cannot recurse).
fn collect_markdown(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => return,
        Err(e) => {
            tracing::warn!(path = %dir.display(), error = %e, "cannot list memory rules");
            return;
        }
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        if file_type.is_dir() {
            collect_markdown(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "md")
            && (file_type.is_file() || (file_type.is_symlink() && path.is_file()))
        {
            out.push(path);
        }
    }
}

/// `text` without a leading `---` … `---` frontmatter block (unchanged when unterminated).
fn strip_frontmatter(text: &str) -> &str {
    let mut lines = text.split_inclusive('\n');
    if lines.next().map(str::trim_end) != Some("---") {
        return text;
    }
    let mut offset = text.find('\n').map_or(text.len(), |i| i + 1);
    for line in lines {
        offset += line.len();
        if line.trim_end() == "---" {
            return text.get(offset..).unwrap_or("");
        }
    }
    text
}

/// `text` without HTML block comments: a `<!--` opening a line (outside fenced code) up to the
/// next `-->`, possibly several lines on. Text after the `-->` on its line is kept; an
/// unterminated comment is kept as text.
fn strip_html_comments(text: &str) -> String {
    if !text.contains("<!--") {
        return text.to_owned();
    }
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out = String::with_capacity(text.len());
    let mut fences = Fences::default();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        if fences.code_line(line) {
            out.push_str(line);
            continue;
        }
        let body = line.trim_start_matches(' ');
        let indent = line.len() - body.len();
        if indent <= 3
            && body.starts_with("<!--")
            && let Some((end_line, end)) = find_comment_end(&lines, i - 1, indent + 4)
        {
            let rest = lines[end_line].get(end..).unwrap_or("");
            if !rest.trim().is_empty() {
                out.push_str(rest);
            }
            i = end_line + 1;
            continue;
        }
        out.push_str(line);
    }
    out
}

/// Where the comment opened on `lines[start]` ends: (line index, byte just past `-->`).
fn find_comment_end(lines: &[&str], start: usize, from: usize) -> Option<(usize, usize)> {
    let mut from = from;
    for (index, line) in lines.iter().enumerate().skip(start) {
        if let Some(pos) = line.get(from..).and_then(|rest| rest.find("-->")) {
            return Some((index, from + pos + 3));
        }
        from = 0;
    }
    None
}

/// `text` without leading blank lines and trailing whitespace.
fn trim_blank_lines(text: &str) -> &str {
    let text = text.trim_end();
    let first_visible = text.len() - text.trim_start().len();
    let line_start = text
        .get(..first_visible)
        .and_then(|lead| lead.rfind('\n'))
        .map_or(0, |i| i + 1);
    text.get(line_start..).unwrap_or(text)
}

/// Tracks fenced code blocks (```` ``` ```` or `~~~`, CommonMark rules) line by line.
#[derive(Debug, Default)]
struct Fences {
    /// The open fence: its character and length.
    open: Option<(u8, usize)>,
}

impl Fences {
    /// Feeds the next line; true when it belongs to a fenced code block (fence lines included).
    fn code_line(&mut self, line: &str) -> bool {
        let body = line.trim_start_matches(' ');
        let marker = if line.len() - body.len() <= 3 {
            fence_marker(body)
        } else {
            None
        };
        match (self.open, marker) {
            (None, Some((ch, len, info))) => {
                if ch == b'`' && info.contains('`') {
                    return false;
                }
                self.open = Some((ch, len));
                true
            }
            (None, None) => false,
            (Some((open_ch, open_len)), Some((ch, len, rest)))
                if ch == open_ch && len >= open_len && rest.trim().is_empty() =>
            {
                self.open = None;
                true
            }
            (Some(_), _) => true,
        }
    }
}

/// A fence at the start of `body`: (character, run length, rest of the line).
fn fence_marker(body: &str) -> Option<(u8, usize, &str)> {
    let ch = *body.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = body.bytes().take_while(|&b| b == ch).count();
    (len >= 3).then(|| (ch, len, body.get(len..).unwrap_or("")))
}

/// The `@path` imports of a memory file, in order: an `@` at the start of a line or after
/// whitespace, followed by a path, outside fenced code blocks and inline code spans. Trailing
/// sentence punctuation is not part of the path.
fn find_imports(text: &str) -> Vec<String> {
    let mut imports = Vec::new();
    let mut fences = Fences::default();
    for line in text.lines() {
        if !fences.code_line(line) && line.contains('@') {
            scan_line_imports(line, &mut imports);
        }
    }
    imports
}

/// Adds the imports of one line outside code spans to `out`.
fn scan_line_imports(line: &str, out: &mut Vec<String>) {
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'`' => {
                let run = bytes[i..].iter().take_while(|&&b| b == b'`').count();
                i = match closing_backticks(bytes, i + run, run) {
                    Some(end) => end,
                    None => i + run,
                };
            }
            b'@' if i == 0 || bytes[i - 1].is_ascii_whitespace() => {
                let start = i + 1;
                let end = bytes[start..]
                    .iter()
                    .position(u8::is_ascii_whitespace)
                    .map_or(bytes.len(), |p| start + p);
                let token = line.get(start..end).unwrap_or("");
                let token =
                    token.trim_end_matches(['.', ',', ';', ':', '!', '?', ')', ']', '"', '\'']);
                if is_import_path(token) {
                    out.push(token.to_owned());
                }
                i = end;
            }
            _ => i += 1,
        }
    }
}

/// Index just past the next run of exactly `run` backticks at or after `from`.
fn closing_backticks(bytes: &[u8], from: usize, run: usize) -> Option<usize> {
    let mut j = from;
    while j < bytes.len() {
        if bytes[j] == b'`' {
            let len = bytes[j..].iter().take_while(|&&b| b == b'`').count();
            if len == run {
                return Some(j + len);
            }
            j += len;
        } else {
            j += 1;
        }
    }
    None
}

/// Whether an `@` token looks like a file path (not a mention of `@@`, a URL or a lone `~`).
fn is_import_path(token: &str) -> bool {
    let Some(first) = token.chars().next() else {
        return false;
    };
    (first.is_alphanumeric() || matches!(first, '.' | '/' | '~' | '_' | '-'))
        && !token.contains("://")
        && !token.contains('`')
        && token != "~"
}

/// `path` with `.` removed and `..` applied lexically (no file-system access).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push(component);
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// The home directory from `HOME` (or `USERPROFILE` on Windows).
fn home_from_env() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .or_else(|| std::env::var_os("USERPROFILE"))
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The memory block of the first user message, if it has one: a text block equal to the
/// configured memory, or one that starts like a memory reminder.
pub fn is_memory_block(block: &ContentBlock, memory: Option<&str>) -> bool {
    const MEMORY_START: &str = "<system-reminder>\nCodebase and user instructions are shown below.";
    match block {
        ContentBlock::Text(t) => {
            memory == Some(t.text.as_str()) || t.text.starts_with(MEMORY_START)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imports_are_found_outside_code() {
        let text = "See @a.md and @docs/style.md.\n@~/x.md, (@nope.md) mail a@b.com\n\
                    `@span.md` ``@double.md `` @./a/b.md\n```\n@fenced.md\n```\n~~~~\n@t.md\n~~~\n\
                    ~~~~\n@after.md";
        assert_eq!(
            find_imports(text),
            ["a.md", "docs/style.md", "~/x.md", "./a/b.md", "after.md"]
        );
    }

    #[test]
    fn unmatched_backtick_is_literal() {
        assert_eq!(find_imports("a ` b @c.md"), ["c.md"]);
        assert_eq!(find_imports("```x`y\n@c.md"), ["c.md"]);
    }

    #[test]
    fn comments_are_stripped() {
        let text = "a\n<!-- one -->\nb\n  <!-- multi\nline --> tail\n```\n<!-- kept -->\n```\nc <!-- inline -->\n<!-- open";
        assert_eq!(
            strip_html_comments(text),
            "a\nb\n tail\n```\n<!-- kept -->\n```\nc <!-- inline -->\n<!-- open"
        );
    }

    #[test]
    fn frontmatter_is_stripped() {
        assert_eq!(strip_frontmatter("---\npaths: x\n---\nbody\n"), "body\n");
        assert_eq!(strip_frontmatter("---\nno end\n"), "---\nno end\n");
        assert_eq!(strip_frontmatter("body\n---\n"), "body\n---\n");
    }

    #[test]
    fn blank_lines_trimmed() {
        assert_eq!(trim_blank_lines("\n\n  x\ny\n\n"), "  x\ny");
        assert_eq!(trim_blank_lines(" \n"), "");
    }

    #[test]
    fn paths_normalize() {
        assert_eq!(
            normalize(Path::new("/a/./b/../c.md")),
            PathBuf::from("/a/c.md")
        );
    }
}

#[cfg(test)]
mod import_safety {
    use super::*;

    fn opts(roots: Option<Vec<PathBuf>>) -> MemoryOptions {
        MemoryOptions {
            managed_file: None,
            load_user: false,
            import_roots: roots,
            ..MemoryOptions::default()
        }
    }

    fn setup() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let ws = base.join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        std::fs::write(base.join("outside/secret"), "TOP SECRET").unwrap();
        std::fs::write(ws.join("inside.md"), "inside text").unwrap();
        std::fs::write(
            ws.join("CLAUDE.md"),
            "rules\n@inside.md\n@../outside/secret\n@/proc/self/environ\n",
        )
        .unwrap();
        (dir, ws)
    }

    #[test]
    fn an_untrusted_workspace_imports_only_from_inside_and_never_special_files() {
        let (_dir, ws) = setup();
        let (files, skipped) = load_memory_checked(&ws, &opts(Some(vec![ws.clone()])));
        let text: String = files.iter().map(|f| f.content.clone()).collect();
        assert!(text.contains("inside text"));
        assert!(!text.contains("TOP SECRET"));
        assert!(!text.contains("PATH="));
        assert_eq!(skipped.len(), 2, "{skipped:?}");
        assert!(skipped[0].contains("../outside/secret") && skipped[0].contains("not trusted"));
        assert!(skipped[1].contains("/proc/self/environ"));
    }

    #[test]
    fn a_trusted_workspace_imports_outside_but_still_no_special_files() {
        let (_dir, ws) = setup();
        let (files, skipped) = load_memory_checked(&ws, &opts(None));
        let text: String = files.iter().map(|f| f.content.clone()).collect();
        assert!(text.contains("TOP SECRET"));
        assert!(!text.contains("PATH="));
        assert_eq!(skipped.len(), 1, "{skipped:?}");
    }

    #[test]
    fn project_files_that_link_out_of_an_untrusted_workspace_are_skipped() {
        let (_dir, ws) = setup();
        std::fs::remove_file(ws.join("CLAUDE.md")).unwrap();
        std::os::unix::fs::symlink("../outside/secret", ws.join("CLAUDE.md")).unwrap();
        std::os::unix::fs::symlink("/proc/self/environ", ws.join("CLAUDE.local.md")).unwrap();
        std::fs::create_dir_all(ws.join(".claude/rules")).unwrap();
        std::os::unix::fs::symlink("../../inside.md", ws.join(".claude/rules/ok.md")).unwrap();
        let (files, skipped) = load_memory_checked(&ws, &opts(Some(vec![ws.clone()])));
        let text: String = files.iter().map(|f| f.content.clone()).collect();
        assert!(
            !text.contains("TOP SECRET") && !text.contains("PATH="),
            "{text}"
        );
        assert!(text.contains("inside text"), "{text}");
        assert_eq!(skipped.len(), 2, "{skipped:?}");
        // Trusted: the link out is followed, /proc never.
        let (files, skipped) = load_memory_checked(&ws, &opts(None));
        let text: String = files.iter().map(|f| f.content.clone()).collect();
        assert!(
            text.contains("TOP SECRET") && !text.contains("PATH="),
            "{text}"
        );
        assert_eq!(skipped.len(), 1, "{skipped:?}");
    }

    #[test]
    fn a_fifo_claude_md_does_not_block() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("CLAUDE.md");
        let c = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        #[allow(unsafe_code)]
        let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
        assert_eq!(rc, 0);
        let (tx, rx) = std::sync::mpsc::channel();
        let d = dir.path().to_path_buf();
        std::thread::spawn(move || {
            let _ = tx.send(load_memory_checked(&d, &opts(None)).0.len());
        });
        let n = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("loading memory blocked on a FIFO");
        assert_eq!(n, 0);
    }
}
