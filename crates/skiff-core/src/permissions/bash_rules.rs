//! The engine's decision on a Bash call. Deny rules first: a part matching one, or reading or
//! writing a path a Read/Edit deny rule covers, denies the call. Then what cannot be known: a
//! part computed at run time that a deny or ask rule could match, a path computed at run time
//! where path rules exist, a recursive read where Read deny rules exist — all ask, even when
//! every Bash command is allowed (the sandbox's auto-allow) or in `bypassPermissions`. Then ask
//! rules. Then allow: every part allowed by a rule, by only reading inside the workspace, or
//! (in `acceptEdits`) by changing only files inside it; a part computed at run time is never
//! allowed this way.

use serde_json::Value;

use super::command_line::{self, Part, PathUse};
use super::engine::{PermissionEngine, Verdict};
use super::rule::RuleKind;
use super::{PermissionMode, PermissionQuery, RuleSet};
use skiff_tools::commands::{self, Kind};

/// What a path is used for, which names the rules that cover it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    /// Read rules (and Read deny rules only).
    Read,
    /// Edit rules, and Read deny rules (a file one may not read may not be written either).
    Write,
}

impl Access {
    fn tool(self) -> &'static str {
        match self {
            Self::Read => "Read",
            Self::Write => "Write",
        }
    }
}

impl PermissionEngine {
    /// The verdict on a Bash call.
    pub(super) fn bash(&self, rules: &RuleSet, q: &PermissionQuery<'_>) -> Verdict {
        let command = q.input.get("command").and_then(Value::as_str).unwrap_or("");
        if Self::input_rules(rules, RuleKind::Deny, q) {
            return Verdict::Deny(bash_denied(command));
        }
        let parts = match command_line::analyze(command, self.workspace()) {
            Ok(parts) => parts,
            Err(_) => return self.opaque(rules, q, command),
        };
        // Deny: anything certain.
        for part in &parts {
            if part
                .texts
                .iter()
                .any(|t| rules_match_command(rules, RuleKind::Deny, t))
                || rules_cover_spelling(rules, RuleKind::Deny, &part.argv)
            {
                return Verdict::Deny(bash_denied(&part.text()));
            }
            let reads = part.reads.iter().chain(&part.trees);
            let writes = part.writes.iter().chain(&part.tree_writes);
            if reads
                .clone()
                .any(|p| path_rule(rules, RuleKind::Deny, Access::Read, p))
                || writes
                    .clone()
                    .any(|p| path_rule(rules, RuleKind::Deny, Access::Write, p))
            {
                return Verdict::Deny(bash_denied(&part.text()));
            }
        }
        // What cannot be known, that a deny or ask rule could cover; then ask rules.
        // A line that changes directory or git's environment may run git on another
        // repository than the workspace's.
        let moves = parts.iter().any(|p| {
            p.cd || !p.safe_env
                || p.argv.first().is_some_and(|w| {
                    matches!(
                        w.as_str(),
                        "export" | "declare" | "typeset" | "local" | "readonly"
                    )
                })
        });
        let uncertain = parts.iter().any(|p| self.uncertain(rules, p))
            || (parts.len() > 1
                && parts.iter().any(makes_links)
                && has_path_rules(rules, &[RuleKind::Deny, RuleKind::Ask]))
            || parts
                .iter()
                .any(|p| self.reveals_covered_history(rules, p, moves));
        let asked = Self::input_rules(rules, RuleKind::Ask, q)
            || parts.iter().any(|p| {
                p.texts
                    .iter()
                    .any(|t| rules_match_command(rules, RuleKind::Ask, t))
                    || rules_cover_spelling(rules, RuleKind::Ask, &p.argv)
                    || p.reads
                        .iter()
                        .chain(&p.trees)
                        .any(|u| path_rule(rules, RuleKind::Ask, Access::Read, u))
                    || p.writes
                        .iter()
                        .chain(&p.tree_writes)
                        .any(|u| path_rule(rules, RuleKind::Ask, Access::Write, u))
            });
        if asked {
            return Verdict::AskRule;
        }
        if uncertain {
            // Plan mode refuses what it cannot vouch for; other modes ask, bypass included.
            return if q.mode == PermissionMode::Plan {
                Verdict::NotAllowed
            } else {
                Verdict::AskRule
            };
        }
        if all_bash_allowed(rules) && q.mode != PermissionMode::Plan {
            return Verdict::Allow;
        }
        if parts.iter().all(|p| self.part_allowed(rules, p, q.mode)) {
            Verdict::Allow
        } else {
            Verdict::NotAllowed
        }
    }

    /// A command line that cannot be analysed: only a deny rule matching its whole text is
    /// certain; any other deny or ask rule could match what it runs.
    fn opaque(&self, rules: &RuleSet, q: &PermissionQuery<'_>, command: &str) -> Verdict {
        let text = command.trim();
        if rules_match_command(rules, RuleKind::Deny, text) {
            return Verdict::Deny(bash_denied(command));
        }
        if has_bash_rules(rules) || has_path_rules(rules, &[RuleKind::Deny, RuleKind::Ask]) {
            return if q.mode == PermissionMode::Plan {
                Verdict::NotAllowed
            } else {
                Verdict::AskRule
            };
        }
        if all_bash_allowed(rules) && q.mode != PermissionMode::Plan {
            return Verdict::Allow;
        }
        Verdict::NotAllowed
    }

    /// Whether a deny or ask rule could cover what the part does, though it cannot be known
    /// before it runs.
    fn uncertain(&self, rules: &RuleSet, part: &Part) -> bool {
        let command_rules = |prefix: &str| {
            rules.deny.iter().chain(&rules.ask).any(|r| {
                r.names_tool("Bash", RuleKind::Deny)
                    && r.is_command_rule()
                    && r.could_match_command(prefix)
            })
        };
        if part.program_unknown && command_rules("") {
            return true;
        }
        if let Some(prefix) = &part.known_prefix {
            let mut prefixes = vec![prefix.clone()];
            match prefix.split_once(' ') {
                // `/usr/bin/rm $X`: rules name the program by its name.
                Some((first, rest)) if first.contains('/') => {
                    let base = first.rsplit('/').next().unwrap_or(first);
                    prefixes.push(format!("{base} {rest}"));
                }
                // `/usr/bin/$X`: any program.
                None if prefix.contains('/') => prefixes.push(String::new()),
                _ => {}
            }
            if prefixes.iter().any(|p| command_rules(p)) {
                return true;
            }
        }
        if part.maybe.iter().any(|t| {
            rules_match_command(rules, RuleKind::Deny, t)
                || rules_match_command(rules, RuleKind::Ask, t)
        }) {
            return true;
        }
        let read_rules = has_access_rules(rules, Access::Read);
        let write_rules = has_access_rules(rules, Access::Write);
        if read_rules && part.reads.iter().chain(&part.trees).any(|p| p.unknown) {
            return true;
        }
        if write_rules
            && part
                .writes
                .iter()
                .chain(&part.tree_writes)
                .any(|p| p.unknown)
        {
            return true;
        }
        // A recursive read may reach what a Read deny rule covers inside the directory.
        if !part.trees.is_empty() && has_read_deny_rules(rules) {
            return true;
        }
        // A recursive change may reach what a deny or ask rule covers inside the directory.
        if write_rules
            && part
                .tree_writes
                .iter()
                .any(|t| tree_has_rule_paths(rules, t))
        {
            return true;
        }
        // A program skiff does not know, naming a file a rule covers, may read or write it.
        if part.kind == Kind::Unknown && !part.check_only && (read_rules || write_rules) {
            let names_covered = part.argv.iter().skip(1).any(|a| {
                let operand = a.split_once('=').map_or(a.as_str(), |(_, v)| v);
                [a.as_str(), operand].iter().any(|w| {
                    let u = command_line_path(self, w);
                    path_rule(rules, RuleKind::Deny, Access::Read, &u)
                        || path_rule(rules, RuleKind::Deny, Access::Write, &u)
                        || path_rule(rules, RuleKind::Ask, Access::Read, &u)
                        || path_rule(rules, RuleKind::Ask, Access::Write, &u)
                })
            });
            if names_covered {
                return true;
            }
        }
        false
    }

    /// Whether a git part may print, or copy where no rule reaches, the committed contents of
    /// a file a Read deny or ask rule covers, which its operands need not name (`git show`,
    /// `git log -p`, `git diff`, `git archive`): the rule holds for the file, not for what
    /// the repository remembers of it. `moves`: the line may run git on another repository.
    fn reveals_covered_history(&self, rules: &RuleSet, part: &Part, moves: bool) -> bool {
        if part.argv.first().map(|w| w.rsplit('/').next().unwrap_or(w)) != Some("git")
            || !has_access_rules(rules, Access::Read)
        {
            return false;
        }
        let words = super::spelling::without_git_globals(&part.argv);
        // Global options other than these may name another repository or work tree (`-C`,
        // `--git-dir`, `-c core.worktree=…`).
        let mut other_repo = moves;
        let mut globals = part.argv[1..].iter();
        while let Some(g) = globals.next() {
            if !g.starts_with('-') {
                break;
            }
            match g.as_str() {
                "--no-pager" | "-P" | "--no-optional-locks" => {}
                "-c" if globals
                    .next()
                    .is_some_and(|kv| kv.to_ascii_lowercase().starts_with("alias.")) => {}
                _ => other_repo = true,
            }
        }
        let Some(args) = words.get(1..) else {
            return false;
        };
        if !commands::git_reveals_contents(args, other_repo) {
            return false;
        }
        let repo = (!other_repo).then(|| repository_root(&self.workspace().cwd));
        [RuleKind::Deny, RuleKind::Ask].iter().any(|kind| {
            rules.list(*kind).iter().any(|r| {
                r.names_tool("Read", *kind)
                    && r.path_base().is_some_and(|base| {
                        repo.as_ref()
                            .is_none_or(|root| base.starts_with(root) || root.starts_with(base))
                    })
            })
        })
    }

    /// Whether one part runs without asking in this mode.
    pub(super) fn part_allowed(&self, rules: &RuleSet, part: &Part, mode: PermissionMode) -> bool {
        if part.check_only {
            return true;
        }
        if part.program_unknown {
            return false;
        }
        let ws = self.workspace();
        let inside = |u: &PathUse| {
            u.is_device_sink() || (!u.unknown && u.forms.iter().all(|f| ws.inside(f)))
        };
        // What the shell itself writes must be allowed, whatever allows the command.
        if !part
            .redirect_writes
            .iter()
            .all(|w| self.write_allowed(rules, w, mode))
        {
            return false;
        }
        let edits_ok = || {
            part.writes
                .iter()
                .all(|w| self.write_allowed(rules, w, mode))
                && part
                    .tree_writes
                    .iter()
                    .all(|w| self.write_allowed(rules, w, mode) && !protected_tree(self, w))
        };
        let reads_inside = part.reads.iter().chain(&part.trees).all(inside);
        if part.argv.is_empty() {
            // Assignments or redirections alone.
            return part.safe_env && reads_inside && edits_ok();
        }
        if !reads_inside || !part.safe_env {
            return false;
        }
        let data_only = commands::program_name(&part.argv[0]).is_some_and(commands::data_only);
        let known = !part.dynamic() || data_only;
        let only_redirects = part.writes.len() == part.redirect_writes.len();
        if part.kind == Kind::ReadOnly && known && only_redirects && part.tree_writes.is_empty() {
            return true;
        }
        if mode == PermissionMode::Plan || part.dynamic() {
            return false;
        }
        let by_rule = rules.allow.iter().any(|r| {
            r.names_tool("Bash", RuleKind::Allow)
                && r.is_command_rule()
                && part.texts.first().is_some_and(|t| r.matches_command(t))
        });
        by_rule || (mode == PermissionMode::AcceptEdits && part.kind != Kind::Unknown && edits_ok())
    }

    /// A file a command writes: a device, a path a Write allow rule covers (in its real form),
    /// or in `acceptEdits` a path inside the workspace that is not protected.
    fn write_allowed(&self, rules: &RuleSet, target: &PathUse, mode: PermissionMode) -> bool {
        if target.is_device_sink() {
            return true;
        }
        if mode == PermissionMode::Plan || target.unknown || target.forms.is_empty() {
            return false;
        }
        let ws = self.workspace();
        let by_rule = target.forms.iter().all(|f| {
            rules.allow.iter().any(|r| {
                r.is_path_rule() && r.names_tool("Write", RuleKind::Allow) && r.matches_path(f)
            })
        });
        by_rule
            || (mode == PermissionMode::AcceptEdits
                && target
                    .forms
                    .iter()
                    .all(|f| ws.inside(f) && !ws.protected(f)))
    }
}

/// The path an argument names, from the working directory.
fn command_line_path(engine: &PermissionEngine, written: &str) -> PathUse {
    let cwd = &engine.workspace().cwd;
    let mut forms = Vec::new();
    if let Some((l, r)) = skiff_tools::path_guard::path_forms(cwd, written) {
        forms.push(l);
        forms.push(r);
    }
    if let Some(p) = skiff_tools::path_guard::physical_path(cwd, written) {
        forms.push(p);
    }
    PathUse {
        written: written.to_owned(),
        forms,
        unknown: false,
    }
}

fn protected_tree(engine: &PermissionEngine, t: &PathUse) -> bool {
    t.unknown || t.forms.iter().any(|f| engine.workspace().protected_tree(f))
}

/// Whether a path rule of this kind covers the path, in any of its forms.
fn path_rule(rules: &RuleSet, kind: RuleKind, access: Access, p: &PathUse) -> bool {
    if p.is_device_sink() {
        return false;
    }
    rules.list(kind).iter().any(|r| {
        r.is_path_rule()
            && r.names_tool(access.tool(), kind)
            && p.forms.iter().any(|f| r.matches_path(f))
    })
}

/// Whether some path under the directory is covered by a deny or ask path rule for writes
/// (looked for in at most a few thousand entries; more counts as covered).
fn tree_has_rule_paths(rules: &RuleSet, t: &PathUse) -> bool {
    if t.unknown {
        return true;
    }
    let covered =
        |p: &std::path::Path| {
            rules.deny.iter().chain(&rules.ask).any(|r| {
                r.is_path_rule() && r.names_tool("Write", RuleKind::Deny) && r.matches_path(p)
            })
        };
    let mut budget = 4096usize;
    let mut stack: Vec<std::path::PathBuf> = t.forms.clone();
    while let Some(dir) = stack.pop() {
        if covered(&dir) {
            return true;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            budget = match budget.checked_sub(1) {
                Some(b) => b,
                None => return true,
            };
            let path = e.path();
            if covered(&path) {
                return true;
            }
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(path);
            }
        }
    }
    false
}

/// A bare `Bash` (or `Bash(*)`) allow rule: every command, redirections included.
pub(super) fn all_bash_allowed(rules: &RuleSet) -> bool {
    rules.allow.iter().any(|r| r.bare_tool() == Some("Bash"))
}

fn has_read_deny_rules(rules: &RuleSet) -> bool {
    rules
        .deny
        .iter()
        .any(|r| r.is_path_rule() && r.names_tool("Read", RuleKind::Deny))
}

fn has_access_rules(rules: &RuleSet, access: Access) -> bool {
    [RuleKind::Deny, RuleKind::Ask].iter().any(|kind| {
        rules
            .list(*kind)
            .iter()
            .any(|r| r.is_path_rule() && r.names_tool(access.tool(), *kind))
    })
}

fn has_path_rules(rules: &RuleSet, kinds: &[RuleKind]) -> bool {
    kinds.iter().any(|kind| {
        rules.list(*kind).iter().any(|r| {
            r.is_path_rule() && (r.names_tool("Read", *kind) || r.names_tool("Write", *kind))
        })
    })
}

/// Whether any deny or ask rule is about Bash commands.
fn has_bash_rules(rules: &RuleSet) -> bool {
    rules
        .deny
        .iter()
        .chain(&rules.ask)
        .any(|r| r.names_tool("Bash", RuleKind::Deny) && r.is_command_rule())
}

pub(super) fn rules_match_command(rules: &RuleSet, kind: RuleKind, text: &str) -> bool {
    rules
        .list(kind)
        .iter()
        .any(|r| r.names_tool("Bash", kind) && r.is_command_rule() && r.matches_command(text))
}

/// The work tree of the repository `cwd` is in (the nearest directory with a `.git`), or
/// `cwd` itself outside one.
fn repository_root(cwd: &std::path::Path) -> std::path::PathBuf {
    cwd.ancestors()
        .find(|d| d.join(".git").symlink_metadata().is_ok())
        .unwrap_or(cwd)
        .to_path_buf()
}

/// Whether a part makes links (`ln`, `link`, `cp -s`/`-l`): a later part of the same line
/// that reads or writes through one reaches a path the checks, made before the line runs, did
/// not see (`ln -s secrets d && cat d/key`).
fn makes_links(part: &Part) -> bool {
    let name = part
        .argv
        .first()
        .map_or("", |n| n.rsplit('/').next().unwrap_or(n));
    match name {
        "ln" | "link" => true,
        "cp" => part.argv[1..].iter().any(|a| {
            matches!(a.as_str(), "--symbolic-link" | "--link")
                || (a.starts_with('-') && !a.starts_with("--") && a.contains(['s', 'l']))
        }),
        _ => false,
    }
}

/// Whether a Bash command rule of `kind` covers `argv` in another spelling of the same command
/// (see [`super::spelling`]).
fn rules_cover_spelling(rules: &RuleSet, kind: RuleKind, argv: &[String]) -> bool {
    rules
        .list(kind)
        .iter()
        .filter(|r| r.names_tool("Bash", kind))
        .filter_map(|r| r.command_pattern())
        .any(|(pattern, tail)| super::spelling::covers(pattern, tail, argv))
}

pub(super) fn bash_denied(command: &str) -> String {
    format!(
        "Permission to use Bash with command {} has been denied.",
        command.trim()
    )
}
