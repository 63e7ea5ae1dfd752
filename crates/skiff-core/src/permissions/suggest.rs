//! The allow rules "always allow" offers for a call, for every front end to show and save:
//! for a Bash command one rule per part that is not allowed yet, in Claude Code's prefix style
//! (`Bash(npm test:*)`, `Bash(git commit:*)`), plus `Edit(…)` for files its redirections write
//! — so that a compound command (`cd x && npm test`) is not asked again; for file edits the
//! file, for WebFetch the domain, the tool otherwise.

use std::path::Path;

use serde_json::Value;

use super::command_line::{self, Part};
use super::engine::PermissionEngine;
use super::rule::host_of;
use super::{PermissionMode, RuleSet};

/// Programs whose first argument does not say what they do (a script, a snippet): their rules
/// name the whole command, never a prefix.
const RUNS_ANYTHING: &[&str] = &[
    "sh", "bash", "zsh", "dash", "fish", "python", "python3", "node", "deno", "ruby", "perl",
    "php", "env", "sudo", "doas", "xargs", "exec", "eval", "ssh", "nohup", "timeout", "nice",
    "watch", "time", "command", "builtin",
];

/// Programs whose options decide whether they write, delete or run something: without a
/// subcommand their rules name the whole command (`Bash(sed -i s/a/b/ f)`, not `Bash(sed:*)`).
const BROAD: &[&str] = &[
    "rm", "rmdir", "mv", "cp", "ln", "chmod", "chown", "chgrp", "dd", "sed", "awk", "gawk", "find",
    "tee", "truncate", "shred", "curl", "wget", "git", "sort", "tar", "unzip", "zip", "rsync",
    "scp", "install", "kill", "pkill", "killall", "npx", "docker", "kubectl",
];

/// Subcommands after which one more word still names what runs (`npm run build`).
const SECOND_LEVEL: &[&str] = &["run", "exec", "compose", "x", "dlx", "workspace"];

impl PermissionEngine {
    /// The allow rules (as Claude Code writes them) that "always allow" saves for this call,
    /// in order, without duplicates; empty when no rule could cover it.
    pub fn suggest_rules(&self, tool: &str, input: &Value, mode: PermissionMode) -> Vec<String> {
        let s = |k: &str| input.get(k).and_then(Value::as_str);
        let cwd = &self.workspace().cwd;
        match tool {
            "Bash" => {
                let rules = self.rules();
                self.bash_rules(&rules, s("command").unwrap_or(""), mode)
            }
            "Edit" | "Write" | "MultiEdit" | "NotebookEdit" => {
                match s("file_path").or_else(|| s("notebook_path")) {
                    Some(p) => vec![edit_rule(cwd, p)],
                    None => vec!["Edit".to_owned()],
                }
            }
            "WebFetch" => match s("url").and_then(host_of) {
                Some(host) => vec![format!("WebFetch(domain:{host})")],
                None => vec!["WebFetch".to_owned()],
            },
            // A sandboxed command's host is saved in the sandbox's allowed domains
            // (`network::domain_entry`), never as a permission rule.
            super::network::NETWORK_TOOL => Vec::new(),
            other => vec![other.to_owned()],
        }
    }

    fn bash_rules(&self, rules: &RuleSet, command: &str, mode: PermissionMode) -> Vec<String> {
        let Ok(parts) = command_line::analyze(command, self.workspace()) else {
            return Vec::new();
        };
        let mut out: Vec<String> = Vec::new();
        let mut push = |r: String| {
            if !out.contains(&r) {
                out.push(r);
            }
        };
        for part in parts.iter().filter(|p| !p.check_only) {
            if self.part_allowed(rules, part, mode) {
                continue;
            }
            if !part.argv.is_empty()
                && !part.program_unknown
                && !part.dynamic()
                && part.safe_env
                && let Some(rule) = prefix_rule(part)
            {
                push(rule);
            }
            // What its redirections write needs an Edit rule of its own.
            for w in &part.redirect_writes {
                if w.is_device_sink() || w.unknown {
                    continue;
                }
                let written = w
                    .forms
                    .first()
                    .map_or(w.written.clone(), |f| f.display().to_string());
                push(edit_rule(&self.workspace().cwd, &written));
            }
        }
        out
    }
}

/// `Bash(npm test:*)` for `npm test --watch`, `Bash(git commit:*)` for `git commit -m x`,
/// `Bash(make:*)` for `make -j4`; the whole command for interpreters and paths
/// (`Bash(python x.py)`, `Bash(./build.sh --fast)`). `None` when the text cannot be a rule.
fn prefix_rule(part: &Part) -> Option<String> {
    let text = part.text();
    let name = part.argv[0].as_str();
    if name.contains('/') || RUNS_ANYTHING.contains(&name) {
        // `python -m pytest …`: the module says what runs.
        if name.starts_with("python")
            && part.argv.get(1).is_some_and(|a| a == "-m")
            && let Some(module) = part.argv.get(2).filter(|m| plain_word(m))
        {
            return Some(format!("Bash({name} -m {module}:*)"));
        }
        // A rule's text cannot hold parentheses or lines.
        return (!text.contains(['(', ')', '\n'])).then(|| format!("Bash({text})"));
    }
    let mut prefix = vec![name];
    let sub = part.argv.get(1).filter(|w| plain_word(w));
    if sub.is_none() && BROAD.contains(&name) {
        return (!text.contains(['(', ')', '\n'])).then(|| format!("Bash({text})"));
    }
    if let Some(sub) = sub {
        prefix.push(sub);
        if SECOND_LEVEL.contains(&sub.as_str())
            && let Some(third) = part.argv.get(2).filter(|w| plain_word(w))
        {
            prefix.push(third);
        }
    }
    Some(format!("Bash({}:*)", prefix.join(" ")))
}

/// A word that names a subcommand: not an option, a path, an assignment or a file.
fn plain_word(w: &str) -> bool {
    !w.is_empty()
        && !w.starts_with('-')
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '@'))
        && !w.contains("::")
}

/// `Edit(./rel)` for a path inside the working directory, `Edit(//abs)` otherwise.
fn edit_rule(cwd: &Path, p: &str) -> String {
    let abs = cwd.join(p);
    match abs.strip_prefix(cwd) {
        Ok(rel) => format!("Edit(./{})", rel.display()),
        Err(_) => format!("Edit(/{})", abs.display()),
    }
}

#[cfg(test)]
mod tests;
