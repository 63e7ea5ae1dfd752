//! The permission engine: Claude Code's rules and modes.
//!
//! Order: deny rules → ask rules → plan mode → allow rules → the mode's defaults. A Bash
//! command is split into its simple commands with a real shell parser ([`super::shell`]): it is
//! denied if any part is denied, asks if any part asks, and runs without asking only if every
//! part is allowed (by a rule, because it only reads, or by the mode). Paths are matched in
//! both their lexical and their real (symlinks resolved) form, so `..`, `./`, absolute forms
//! and symlinks cannot dodge a deny rule.

use std::path::{Path, PathBuf};
use std::sync::RwLock;

use async_trait::async_trait;
use serde_json::Value;
use skiff_tools::bash_readonly::is_read_only_simple;
use skiff_tools::path_guard::path_forms;

use super::rule::{EDIT_TOOLS, READ_TOOLS, Rule, RuleKind};
use super::shell::{self, Shell, SimpleCommand};
use super::{PermissionChecker, PermissionDecision, PermissionMode, PermissionQuery};

/// The text a Read deny rule gives the model.
pub const READ_DENIED: &str = "<tool_use_error>File is in a directory that is denied by your permission settings.</tool_use_error>";

/// Tools that change nothing by themselves (their own calls are checked where they act).
const HARMLESS: &[&str] = &[
    "TodoWrite",
    "Task",
    "Agent",
    "BashOutput",
    "KillShell",
    "KillBash",
    "TaskOutput",
    "TaskStop",
    "ListMcpResourcesTool",
    "ReadMcpResourceTool",
];

/// Tools that only read, but read the network: what they reach is the user's call, so they
/// ask unless an allow rule covers the call (`WebFetch(domain:…)`), plan mode included.
const WEB_TOOLS: &[&str] = &["WebFetch", "WebSearch"];

/// Names and directories that are never changed without asking (except in
/// `bypassPermissions`): repository metadata, agent and editor settings, shell start-up files.
const PROTECTED_DIRS: &[&str] = &[".git", ".claude", ".skiff", ".vscode", ".idea", ".husky"];
const PROTECTED_FILES: &[&str] = &[
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

/// Commands that `acceptEdits` runs without asking when every path they name is inside the
/// working directories.
const FS_EDITS: &[&str] = &["mkdir", "touch", "rm", "rmdir", "mv", "cp", "sed"];

/// Read-only commands whose operands are files: their paths must be inside the working
/// directories to run without asking, and Read deny rules apply to them.
const FILE_READERS: &[&str] = &[
    "cat",
    "head",
    "tail",
    "wc",
    "grep",
    "rg",
    "find",
    "file",
    "stat",
    "du",
    "tree",
    "diff",
    "cmp",
    "sort",
    "uniq",
    "cut",
    "nl",
    "od",
    "hexdump",
    "md5sum",
    "sha256sum",
    "ls",
    "readlink",
    "realpath",
];

/// Variables a command prefix may not set if the command is to run without asking.
fn unsafe_variable(name: &str) -> bool {
    matches!(
        name,
        "PATH"
            | "IFS"
            | "BASH_ENV"
            | "ENV"
            | "PS4"
            | "PROMPT_COMMAND"
            | "SHELLOPTS"
            | "BASHOPTS"
            | "CDPATH"
            | "GLOBIGNORE"
            | "HOME"
            | "PAGER"
            | "GIT_PAGER"
            | "EDITOR"
            | "VISUAL"
            | "GIT_EXTERNAL_DIFF"
            | "GIT_SSH"
            | "GIT_SSH_COMMAND"
            | "GIT_EDITOR"
    ) || name.starts_with("LD_")
        || name.starts_with("DYLD_")
        || name.starts_with("GIT_")
        || name.starts_with("BASH_FUNC_")
}

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

    fn inside(&self, p: &Path) -> bool {
        self.dirs.iter().any(|d| p.starts_with(d))
    }

    /// A path inside a working directory that is protected (`.git`, `.claude`, rc files…).
    fn protected(&self, p: &Path) -> bool {
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
}

/// The rules of a session, by kind.
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    /// Allow rules.
    pub allow: Vec<Rule>,
    /// Ask rules.
    pub ask: Vec<Rule>,
    /// Deny rules.
    pub deny: Vec<Rule>,
}

impl RuleSet {
    /// Add a rule to its list (allow rules with tool-name globs are ignored with a warning).
    pub fn push(&mut self, kind: RuleKind, rule: Rule) {
        match kind {
            RuleKind::Allow if !rule.allowable() => {
                tracing::warn!(rule = %rule, "allow rules cannot use tool-name wildcards; ignored");
            }
            RuleKind::Allow => self.allow.push(rule),
            RuleKind::Ask => self.ask.push(rule),
            RuleKind::Deny => self.deny.push(rule),
        }
    }

    fn list(&self, kind: RuleKind) -> &[Rule] {
        match kind {
            RuleKind::Allow => &self.allow,
            RuleKind::Ask => &self.ask,
            RuleKind::Deny => &self.deny,
        }
    }

    /// Tools that bare-name deny rules remove from the model's list.
    pub fn removed_tools(&self) -> Vec<String> {
        self.deny
            .iter()
            .filter_map(|r| r.bare_tool().map(str::to_owned))
            .collect()
    }

    /// Whether a deny rule without a specifier covers `tool` (by name, MCP server or glob):
    /// such a tool is not offered to the model at all.
    pub fn removes_tool(&self, tool: &str) -> bool {
        self.deny.iter().any(|r| r.removes(tool))
    }
}

/// Claude Code's permission rules and modes.
#[derive(Debug)]
pub struct PermissionEngine {
    rules: RwLock<RuleSet>,
    workspace: Workspace,
}

/// What one check found, before the mode turns "not allowed" into ask or deny.
enum Verdict {
    Allow,
    Deny(String),
    /// An ask rule matched: asked even in `bypassPermissions`.
    AskRule,
    /// Nothing allows it.
    NotAllowed,
}

impl PermissionEngine {
    /// An engine with these rules for this workspace.
    pub fn new(rules: RuleSet, workspace: Workspace) -> Self {
        Self {
            rules: RwLock::new(rules),
            workspace,
        }
    }

    /// The workspace the engine judges paths against.
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// A copy of the current rules.
    pub fn rules(&self) -> RuleSet {
        self.read().clone()
    }

    /// See [`RuleSet::removes_tool`].
    pub fn removes_tool(&self, tool: &str) -> bool {
        self.read().removes_tool(tool)
    }

    /// Add a rule while the session runs ("yes, and don't ask again").
    pub fn add_rule(&self, kind: RuleKind, rule: Rule) {
        match self.rules.write() {
            Ok(mut r) => r.push(kind, rule),
            Err(poisoned) => poisoned.into_inner().push(kind, rule),
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, RuleSet> {
        self.rules
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether a Read deny rule covers `path` (for the search tools' directory walks).
    pub fn read_denied(&self, path: &Path) -> bool {
        let rules = self.read();
        rules.deny.iter().any(|r| {
            r.is_path_rule() && r.names_tool("Read", RuleKind::Deny) && r.matches_path(path)
        })
    }

    /// Decide one call.
    pub fn decide(&self, q: &PermissionQuery<'_>) -> PermissionDecision {
        self.decide_in(&self.read(), q)
    }

    /// Decide one call with `grants` added to the allow rules (a command's `allowed-tools`).
    pub fn decide_with_grants(
        &self,
        q: &PermissionQuery<'_>,
        grants: &[Rule],
    ) -> PermissionDecision {
        if grants.is_empty() {
            return self.decide(q);
        }
        let mut rules = self.rules();
        for g in grants {
            rules.push(RuleKind::Allow, g.clone());
        }
        self.decide_in(&rules, q)
    }

    fn decide_in(&self, rules: &RuleSet, q: &PermissionQuery<'_>) -> PermissionDecision {
        let verdict = match q.tool {
            "Bash" => self.bash(rules, q),
            // Leaving plan mode is the user's call, whatever the rules say.
            "ExitPlanMode" if q.mode == PermissionMode::BypassPermissions => Verdict::Allow,
            "ExitPlanMode" => return self.ask(q),
            t if READ_TOOLS.contains(&t) || EDIT_TOOLS.contains(&t) => self.file_tool(rules, q),
            _ => self.other_tool(rules, q),
        };
        match verdict {
            Verdict::Allow => PermissionDecision::Allow,
            Verdict::Deny(message) => PermissionDecision::Deny { message },
            Verdict::AskRule => self.ask(q),
            Verdict::NotAllowed if q.mode == PermissionMode::BypassPermissions => {
                PermissionDecision::Allow
            }
            Verdict::NotAllowed if q.mode == PermissionMode::Plan => PermissionDecision::Deny {
                message: plan_denied(q.tool),
            },
            Verdict::NotAllowed => self.ask(q),
        }
    }

    fn ask(&self, q: &PermissionQuery<'_>) -> PermissionDecision {
        let message = self.not_granted(q);
        if q.mode == PermissionMode::DontAsk {
            PermissionDecision::Deny { message }
        } else {
            PermissionDecision::Ask { message }
        }
    }

    /// Claude Code's text for a call nobody granted.
    fn not_granted(&self, q: &PermissionQuery<'_>) -> String {
        if EDIT_TOOLS.contains(&q.tool)
            && let Some(path) = file_path(q.tool, q.input)
            && let Some((_, real)) = path_forms(&self.workspace.cwd, path)
        {
            return format!(
                "Claude requested permissions to write to {}, but you haven't granted it yet.",
                real.display()
            );
        }
        super::not_granted(q.tool)
    }

    /// Rules about the call judged on its input alone (parameter rules, domains, MCP, agents).
    fn input_rules(rules: &RuleSet, kind: RuleKind, q: &PermissionQuery<'_>) -> bool {
        rules.list(kind).iter().any(|r| {
            r.names_tool(q.tool, kind)
                && !r.is_path_rule()
                && (q.tool != "Bash" || !r.is_command_rule())
                && r.matches_input(q.tool, q.input)
        })
    }

    fn other_tool(&self, rules: &RuleSet, q: &PermissionQuery<'_>) -> Verdict {
        if Self::input_rules(rules, RuleKind::Deny, q) {
            return Verdict::Deny(format!("Permission to use {} has been denied.", q.tool));
        }
        if Self::input_rules(rules, RuleKind::Ask, q) {
            return Verdict::AskRule;
        }
        let web = WEB_TOOLS.contains(&q.tool);
        let harmless = HARMLESS.contains(&q.tool) || (q.read_only && !web);
        if q.mode == PermissionMode::Plan && !harmless && !web {
            return Verdict::Deny(plan_denied(q.tool));
        }
        let allowed = rules.allow.iter().any(|r| {
            r.names_tool(q.tool, RuleKind::Allow)
                && !r.is_param_rule()
                && r.matches_input(q.tool, q.input)
        });
        if allowed || harmless {
            Verdict::Allow
        } else if web && q.mode == PermissionMode::Plan {
            // Plan mode denies what is not allowed; a read of the web is asked instead.
            Verdict::AskRule
        } else {
            Verdict::NotAllowed
        }
    }

    fn file_tool(&self, rules: &RuleSet, q: &PermissionQuery<'_>) -> Verdict {
        let is_edit = EDIT_TOOLS.contains(&q.tool);
        if Self::input_rules(rules, RuleKind::Deny, q) {
            return Verdict::Deny(format!("Permission to use {} has been denied.", q.tool));
        }
        let given = file_path(q.tool, q.input).unwrap_or(".");
        // A path that cannot even be formed is refused by the tool itself.
        let forms = path_forms(&self.workspace.cwd, given);
        let matches = |kind: RuleKind| {
            forms.as_ref().is_some_and(|(lexical, real)| {
                rules.list(kind).iter().any(|r| {
                    r.is_path_rule()
                        && r.names_tool(q.tool, kind)
                        && (r.matches_path(lexical) || r.matches_path(real))
                })
            })
        };
        if matches(RuleKind::Deny) {
            let denied_by_read = forms.as_ref().is_some_and(|(l, r)| {
                rules.deny.iter().any(|rule| {
                    rule.is_path_rule()
                        && rule.names_tool("Read", RuleKind::Deny)
                        && (rule.matches_path(l) || rule.matches_path(r))
                })
            });
            return Verdict::Deny(if !is_edit || denied_by_read {
                READ_DENIED.to_owned()
            } else {
                format!("Permission to use {} has been denied.", q.tool)
            });
        }
        if matches(RuleKind::Ask) || Self::input_rules(rules, RuleKind::Ask, q) {
            return Verdict::AskRule;
        }
        if !is_edit {
            return Verdict::Allow;
        }
        if q.mode == PermissionMode::Plan {
            return Verdict::Deny(plan_denied(q.tool));
        }
        // Allow rules only ever match the real path: a symlink cannot borrow an allowed name.
        let allowed = forms.as_ref().is_some_and(|(_, real)| {
            rules.allow.iter().any(|r| {
                r.names_tool(q.tool, RuleKind::Allow) && !r.is_param_rule() && r.matches_path(real)
            })
        });
        if allowed {
            return Verdict::Allow;
        }
        let auto = q.mode == PermissionMode::AcceptEdits
            && forms.as_ref().is_some_and(|(lexical, real)| {
                self.workspace.inside(real)
                    && !self.workspace.protected(real)
                    && !self.workspace.protected(lexical)
            });
        if auto {
            Verdict::Allow
        } else {
            Verdict::NotAllowed
        }
    }

    fn bash(&self, rules: &RuleSet, q: &PermissionQuery<'_>) -> Verdict {
        let command = q.input.get("command").and_then(Value::as_str).unwrap_or("");
        if Self::input_rules(rules, RuleKind::Deny, q) {
            return Verdict::Deny(bash_denied(command));
        }
        let parts = match expand(command, 0) {
            Ok(parts) => parts,
            Err(_) => {
                // What it runs is unknown: match the deny and ask rules against the whole text,
                // and never allow it without asking (unless everything is allowed anyway).
                let text = command.trim();
                if rules_match_command(rules, RuleKind::Deny, text) {
                    return Verdict::Deny(bash_denied(command));
                }
                let has_rules = rules
                    .deny
                    .iter()
                    .chain(&rules.ask)
                    .any(|r| r.names_tool("Bash", RuleKind::Deny));
                if rules_match_command(rules, RuleKind::Ask, text)
                    || (q.mode == PermissionMode::BypassPermissions && has_rules)
                {
                    return Verdict::AskRule;
                }
                // `Bash` allowed outright: nothing to check the parts against.
                if all_bash_allowed(rules) && !has_rules && q.mode != PermissionMode::Plan {
                    return Verdict::Allow;
                }
                return Verdict::NotAllowed;
            }
        };
        // Deny: any part.
        for part in &parts {
            if part
                .deny_texts()
                .iter()
                .any(|t| rules_match_command(rules, RuleKind::Deny, t))
            {
                return Verdict::Deny(bash_denied(&part.text()));
            }
            if self.part_reads_denied(rules, part) {
                return Verdict::Deny(bash_denied(&part.text()));
            }
            if part
                .writes
                .iter()
                .any(|w| self.write_matches(rules, RuleKind::Deny, w))
            {
                return Verdict::Deny(bash_denied(&part.text()));
            }
        }
        if Self::input_rules(rules, RuleKind::Ask, q)
            || parts.iter().any(|p| {
                p.deny_texts()
                    .iter()
                    .any(|t| rules_match_command(rules, RuleKind::Ask, t))
                    || p.writes
                        .iter()
                        .any(|w| self.write_matches(rules, RuleKind::Ask, w))
            })
        {
            return Verdict::AskRule;
        }
        if all_bash_allowed(rules) && q.mode != PermissionMode::Plan {
            return Verdict::Allow;
        }
        let all = parts.iter().all(|p| self.part_allowed(rules, p, q.mode));
        if all {
            Verdict::Allow
        } else {
            Verdict::NotAllowed
        }
    }

    /// Whether one part runs without asking in this mode.
    fn part_allowed(&self, rules: &RuleSet, part: &Part, mode: PermissionMode) -> bool {
        let writes_ok = part
            .writes
            .iter()
            .all(|w| self.write_allowed(rules, w, mode));
        if !writes_ok {
            return false;
        }
        if part.words.is_empty() {
            // Only assignments.
            return part.safe_assignments;
        }
        if part.read_only(&self.workspace) {
            // A recursive search could read what a Read deny rule covers inside a directory:
            // with such rules, it asks.
            return !(part.searches_recursively() && has_read_deny_rules(rules));
        }
        if mode == PermissionMode::Plan {
            return false;
        }
        if part.argv0_dynamic {
            return false;
        }
        let by_rule = part.safe_assignments
            && rules.allow.iter().any(|r| {
                r.names_tool("Bash", RuleKind::Allow)
                    && r.is_command_rule()
                    && r.matches_command(&part.text())
            });
        by_rule || (mode == PermissionMode::AcceptEdits && self.fs_edit_inside(part))
    }

    /// `mkdir`, `touch`, `rm`, `rmdir`, `mv`, `cp`, `sed` on paths inside the working
    /// directories (none of them protected).
    fn fs_edit_inside(&self, part: &Part) -> bool {
        let Some(name) = part.words.first() else {
            return false;
        };
        if !FS_EDITS.contains(&name.as_str()) || part.dynamic || !part.safe_assignments {
            return false;
        }
        let operands = operands(name, &part.words[1..]);
        operands.iter().all(|arg| {
            path_forms(&self.workspace.cwd, arg).is_some_and(|(lexical, real)| {
                self.workspace.inside(&lexical)
                    && self.workspace.inside(&real)
                    && !self.workspace.protected(&lexical)
                    && !self.workspace.protected(&real)
            })
        })
    }

    /// A read-only command naming a file that a Read deny rule covers.
    fn part_reads_denied(&self, rules: &RuleSet, part: &Part) -> bool {
        let Some(name) = part.words.first() else {
            return false;
        };
        if !FILE_READERS.contains(&name.as_str()) && !FS_EDITS.contains(&name.as_str()) {
            return false;
        }
        part.words[1..]
            .iter()
            .filter(|a| !a.starts_with('-'))
            .filter_map(|a| path_forms(&self.workspace.cwd, a))
            .any(|(lexical, real)| {
                rules.deny.iter().any(|r| {
                    r.is_path_rule()
                        && r.names_tool("Read", RuleKind::Deny)
                        && (r.matches_path(&lexical) || r.matches_path(&real))
                })
            })
    }

    fn write_matches(&self, rules: &RuleSet, kind: RuleKind, target: &str) -> bool {
        if is_device_sink(target) {
            return false;
        }
        path_forms(&self.workspace.cwd, target).is_some_and(|(lexical, real)| {
            rules.list(kind).iter().any(|r| {
                r.is_path_rule()
                    && r.names_tool("Write", kind)
                    && (r.matches_path(&lexical) || r.matches_path(&real))
            })
        })
    }

    /// A redirection target is an Edit write.
    fn write_allowed(&self, rules: &RuleSet, target: &str, mode: PermissionMode) -> bool {
        if is_device_sink(target) {
            return true;
        }
        if mode == PermissionMode::Plan || target.contains('$') || target.contains('`') {
            return false;
        }
        let Some((lexical, real)) = path_forms(&self.workspace.cwd, target) else {
            return false;
        };
        if rules.allow.iter().any(|r| {
            r.is_path_rule() && r.names_tool("Write", RuleKind::Allow) && r.matches_path(&real)
        }) {
            return true;
        }
        mode == PermissionMode::AcceptEdits
            && self.workspace.inside(&real)
            && self.workspace.inside(&lexical)
            && !self.workspace.protected(&real)
            && !self.workspace.protected(&lexical)
    }
}

#[async_trait]
impl PermissionChecker for PermissionEngine {
    async fn check(&self, query: &PermissionQuery<'_>) -> PermissionDecision {
        self.decide(query)
    }

    async fn check_with_grants(
        &self,
        query: &PermissionQuery<'_>,
        grants: &[Rule],
    ) -> PermissionDecision {
        self.decide_with_grants(query, grants)
    }
}

/// A bare `Bash` (or `Bash(*)`) allow rule: every command, redirections included.
fn all_bash_allowed(rules: &RuleSet) -> bool {
    rules.allow.iter().any(|r| r.bare_tool() == Some("Bash"))
}

fn has_read_deny_rules(rules: &RuleSet) -> bool {
    rules
        .deny
        .iter()
        .any(|r| r.is_path_rule() && r.names_tool("Read", RuleKind::Deny))
}

fn rules_match_command(rules: &RuleSet, kind: RuleKind, text: &str) -> bool {
    rules
        .list(kind)
        .iter()
        .any(|r| r.names_tool("Bash", kind) && r.is_command_rule() && r.matches_command(text))
}

fn bash_denied(command: &str) -> String {
    format!(
        "Permission to use Bash with command {} has been denied.",
        command.trim()
    )
}

fn plan_denied(tool: &str) -> String {
    format!(
        "{tool} is not available in plan mode: only read-only tools and commands run until the \
         user approves a plan (present it with ExitPlanMode)."
    )
}

fn is_device_sink(target: &str) -> bool {
    matches!(target, "/dev/null" | "/dev/stdout" | "/dev/stderr")
        || target
            .strip_prefix("/dev/fd/")
            .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()))
}

/// The path a file tool works on.
fn file_path<'a>(tool: &str, input: &'a Value) -> Option<&'a str> {
    let field = match tool {
        "NotebookEdit" | "NotebookRead" => "notebook_path",
        "Grep" | "Glob" | "LS" => "path",
        _ => "file_path",
    };
    input
        .get(field)
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty())
}

/// The operands (non-option words) of a file command; `sed`'s script is not a path.
fn operands<'a>(name: &str, args: &'a [String]) -> Vec<&'a String> {
    let mut out = Vec::new();
    let mut options_done = false;
    let mut sed_script_given = name != "sed";
    let mut skip_next = false;
    for a in args {
        if skip_next {
            skip_next = false;
            continue;
        }
        if !options_done && a == "--" {
            options_done = true;
            continue;
        }
        if !options_done && a.starts_with('-') && a.len() > 1 {
            if name == "sed"
                && (a == "-e"
                    || a == "-f"
                    || a.starts_with("--expression")
                    || a.starts_with("--file"))
            {
                sed_script_given = true;
                skip_next = a == "-e" || a == "-f";
            }
            // `cp -t DIR`, `mv -t DIR`, `mkdir -m MODE`.
            if matches!(a.as_str(), "-t" | "-m" | "-S") {
                if a == "-t" {
                    // The target directory is an operand too.
                } else {
                    skip_next = true;
                }
            }
            continue;
        }
        if !sed_script_given {
            sed_script_given = true;
            continue;
        }
        out.push(a);
    }
    out
}

/// One simple command after wrappers are removed.
#[derive(Debug, Clone)]
struct Part {
    words: Vec<String>,
    /// Deny/ask rules are also matched with `sudo` removed and `/bin/rm` as `rm`.
    alt: Vec<String>,
    dynamic: bool,
    argv0_dynamic: bool,
    safe_assignments: bool,
    writes: Vec<String>,
}

impl Part {
    fn text(&self) -> String {
        self.words.join(" ")
    }

    fn deny_texts(&self) -> Vec<String> {
        let mut out = vec![self.text()];
        out.extend(self.alt.iter().cloned());
        out
    }

    /// `rg`, or `grep` with a recursive option: it reads whole directory trees.
    fn searches_recursively(&self) -> bool {
        match self.words.first().map(String::as_str) {
            Some("rg") => true,
            Some("grep") => self.words[1..].iter().any(|a| {
                a == "--recursive"
                    || a == "--dereference-recursive"
                    || a.starts_with("--directories=recurse")
                    || (a.starts_with('-')
                        && !a.starts_with("--")
                        && (a.contains('r') || a.contains('R')))
            }),
            _ => false,
        }
    }

    /// Read-only by the classifier, naming only files inside the working directories.
    fn read_only(&self, ws: &Workspace) -> bool {
        if self.argv0_dynamic || !self.safe_assignments || !is_read_only_simple(&self.words) {
            return false;
        }
        let name = self.words[0].as_str();
        if !FILE_READERS.contains(&name) {
            return true;
        }
        if self.dynamic {
            return false;
        }
        self.words[1..]
            .iter()
            .filter(|a| !a.starts_with('-'))
            .all(|a| {
                path_forms(&ws.cwd, a)
                    .is_some_and(|(lexical, real)| ws.inside(&lexical) && ws.inside(&real))
            })
    }
}

/// Deepest `sh -c` / `eval` nesting analysed.
const MAX_NESTING: usize = 8;

/// The parts a command line runs, wrappers removed and `sh -c` / `eval` scripts opened.
fn expand(command: &str, depth: usize) -> Result<Vec<Part>, String> {
    if depth > MAX_NESTING {
        return Err("the command nests shells too deeply".into());
    }
    let commands = match shell::analyze(command) {
        Shell::Commands(c) => c,
        Shell::Opaque(why) => return Err(why),
    };
    let mut out = Vec::new();
    for cmd in commands {
        expand_one(cmd, depth, &mut out)?;
    }
    Ok(out)
}

fn expand_one(cmd: SimpleCommand, depth: usize, out: &mut Vec<Part>) -> Result<(), String> {
    let mut safe_assignments = cmd.assignments.iter().all(|a| {
        a.split_once('=')
            .is_some_and(|(n, v)| !unsafe_variable(n) && !v.contains('$') && !v.contains('`'))
    });
    let (words, env_assignments) = strip_wrappers(&cmd.words);
    if env_assignments
        .iter()
        .any(|a| a.split_once('=').is_none_or(|(n, _)| unsafe_variable(n)))
    {
        safe_assignments = false;
    }
    let words: Vec<String> = words.to_vec();
    let argv0_dynamic = words
        .first()
        .is_some_and(|w| w.contains('$') || w.contains('`'));
    // `sh -c SCRIPT`, `eval ARGS`: what runs is the script.
    if let Some(script) = inner_script(&words) {
        if cmd.dynamic {
            return Err("the command runs a shell script computed at run time".into());
        }
        let inner = expand(&script, depth + 1)?;
        out.extend(inner);
        if !cmd.writes.is_empty() {
            out.push(Part {
                words: Vec::new(),
                alt: Vec::new(),
                dynamic: false,
                argv0_dynamic: false,
                safe_assignments: true,
                writes: cmd.writes,
            });
        }
        return Ok(());
    }
    let mut alt = Vec::new();
    if let Some(first) = words.first()
        && first.contains('/')
        && let Some(base) = first.rsplit('/').next()
    {
        let mut w = words.clone();
        w[0] = base.to_owned();
        alt.push(w.join(" "));
    }
    if let Some(rest) = strip_privilege(&words) {
        alt.push(rest.join(" "));
        if let Some(first) = rest.first()
            && let Some(base) = first.rsplit('/').next()
        {
            let mut w = rest.to_vec();
            w[0] = base.to_owned();
            alt.push(w.join(" "));
        }
    }
    // `find … -exec CMD … ;` runs CMD.
    if words
        .first()
        .is_some_and(|w| w == "find" || w.ends_with("/find"))
    {
        let mut iter = words
            .iter()
            .skip_while(|w| !matches!(w.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir"));
        if iter.next().is_some() {
            let inner: Vec<&String> = iter.take_while(|w| *w != ";" && *w != "+").collect();
            if !inner.is_empty() {
                alt.push(
                    inner
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(" "),
                );
            }
        }
    }
    // `xargs [opts] CMD`: CMD runs with more arguments.
    if words.first().is_some_and(|w| w == "xargs")
        && let Some(pos) = words[1..].iter().position(|w| !w.starts_with('-'))
    {
        alt.push(words[1 + pos..].join(" "));
    }
    out.push(Part {
        words,
        alt,
        dynamic: cmd.dynamic,
        argv0_dynamic,
        safe_assignments,
        writes: cmd.writes,
    });
    Ok(())
}

/// The script of `sh -c SCRIPT …` or `eval ARGS…`.
fn inner_script(words: &[String]) -> Option<String> {
    let (first, rest) = words.split_first()?;
    let base = first.rsplit('/').next().unwrap_or(first);
    if base == "eval" {
        return Some(rest.join(" "));
    }
    if matches!(
        base,
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "mksh" | "ash" | "busybox"
    ) {
        let mut i = 0;
        if base == "busybox" {
            i = 1;
        }
        while let Some(w) = rest.get(i) {
            if w.starts_with('-') && !w.starts_with("--") && w.ends_with('c') {
                return rest.get(i + 1).cloned();
            }
            if w.starts_with('-') {
                i += 1;
                continue;
            }
            break;
        }
    }
    None
}

/// Remove `timeout`, `time`, `nice`, `nohup`, `stdbuf`, `command`, `builtin`, `noglob`, `exec`,
/// bare `xargs` and `env` (whose `VAR=value` words are returned) from the front.
fn strip_wrappers(words: &[String]) -> (&[String], Vec<String>) {
    let mut w = words;
    let mut assignments = Vec::new();
    loop {
        let Some((first, rest)) = w.split_first() else {
            return (w, assignments);
        };
        let next = match first.as_str() {
            "nohup" | "builtin" | "noglob" | "exec" => rest,
            "time" => skip_options(rest, &[]),
            "command" => {
                // `command -v x` only looks a name up: keep it as it is.
                if rest.first().is_some_and(|a| a == "-v" || a == "-V") {
                    return (w, assignments);
                }
                skip_options(rest, &[])
            }
            "nice" => skip_options(rest, &["-n"]),
            "stdbuf" => skip_options(rest, &["-i", "-o", "-e"]),
            "timeout" => {
                let after = skip_options(rest, &["-s", "-k"]);
                // The duration.
                after.split_first().map_or(after, |(_, r)| r)
            }
            "xargs" if rest.first().is_some_and(|a| !a.starts_with('-')) => rest,
            "env" => {
                let mut r = rest;
                loop {
                    match r.split_first() {
                        Some((a, more)) if a == "-u" => {
                            r = more.split_first().map_or(more, |(_, m)| m);
                        }
                        Some((a, more)) if a.starts_with('-') => {
                            // `-i`, `-0`, `--ignore-environment`: nothing runs differently
                            // for permission purposes; `-S` splits a string into a command.
                            if a == "-S" || a.starts_with("--split-string") {
                                return (w, vec!["-S".into()]);
                            }
                            r = more;
                        }
                        Some((a, more)) if a.contains('=') => {
                            assignments.push(a.clone());
                            r = more;
                        }
                        _ => break,
                    }
                }
                r
            }
            _ => return (w, assignments),
        };
        if next.is_empty() {
            return (w, assignments);
        }
        w = next;
    }
}

fn skip_options<'a>(mut words: &'a [String], with_value: &[&str]) -> &'a [String] {
    while let Some((first, rest)) = words.split_first() {
        if first == "--" {
            return rest;
        }
        if !first.starts_with('-') || first.len() == 1 {
            break;
        }
        words = if with_value.contains(&first.as_str()) {
            rest.split_first().map_or(rest, |(_, r)| r)
        } else {
            rest
        };
    }
    words
}

/// The command under `sudo` / `doas` (options skipped).
fn strip_privilege(words: &[String]) -> Option<&[String]> {
    let (first, rest) = words.split_first()?;
    if !matches!(first.as_str(), "sudo" | "doas") {
        return None;
    }
    let rest = skip_options(
        rest,
        &["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T"],
    );
    (!rest.is_empty()).then_some(rest)
}

#[cfg(test)]
mod tests;
