//! Deny and ask rules against other spellings of the same command. A rule names a command as
//! one spelling (`Bash(rm -rf:*)`, `Bash(git push:*)`); the same command can be written with
//! its options in another order or form (`rm -fr`, `rm -r -f`, `rm --recursive --force`) or
//! with git's global options before the subcommand (`git -C . push`, `git --no-pager push`,
//! `git -c alias.p=push p`). Here a rule's options are a set the command's must include, and
//! the rest of its words a pattern for the rest of the command's; git's global options are
//! dropped first. Used for deny and ask rules only: it can only make them match more.

use super::rule::wildcard_match;

/// Options that name the same thing for a program: (program, spelling, canonical spelling).
const ALIASES: &[(&str, &str, &str)] = &[
    ("rm", "-R", "-r"),
    ("rm", "--recursive", "-r"),
    ("rm", "--force", "-f"),
    ("rm", "--dir", "-d"),
    ("rm", "--verbose", "-v"),
    ("cp", "-R", "-r"),
    ("cp", "--recursive", "-r"),
    ("cp", "--force", "-f"),
    ("mv", "--force", "-f"),
    ("chmod", "--recursive", "-R"),
    ("chown", "--recursive", "-R"),
    ("chgrp", "--recursive", "-R"),
    ("git", "--force", "-f"),
];

/// git's options before the subcommand that take a value as the next word.
const GIT_VALUE_OPTIONS: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--config-env",
    "--super-prefix",
    "--exec-path",
];

/// A command's words taken apart: the program's name, its options (a set), the other words.
#[derive(Debug, PartialEq, Eq)]
struct Spelling {
    program: String,
    options: Vec<String>,
    operands: Vec<String>,
}

impl Spelling {
    fn new(words: &[String]) -> Option<Self> {
        let (first, rest) = words.split_first()?;
        let program = first.rsplit('/').next().unwrap_or(first).to_owned();
        let mut options = Vec::new();
        let mut operands = Vec::new();
        let mut ended = false;
        for word in rest {
            if ended || word == "*" || !word.starts_with('-') || word == "-" {
                operands.push(word.clone());
                continue;
            }
            if word == "--" {
                ended = true;
                operands.push(word.clone());
                continue;
            }
            let cluster = word.len() > 2
                && !word.starts_with("--")
                && word[1..].chars().all(|c| c.is_ascii_alphabetic());
            if cluster {
                options.extend(word[1..].chars().map(|c| format!("-{c}")));
            } else {
                options.push(word.clone());
            }
        }
        for option in &mut options {
            if let Some((_, _, canonical)) = ALIASES
                .iter()
                .find(|(p, spelling, _)| *p == program && spelling == option)
            {
                *option = (*canonical).to_owned();
            }
        }
        options.sort();
        options.dedup();
        Some(Self {
            program,
            options,
            operands,
        })
    }
}

/// `git`'s words with its global options dropped and an alias defined with `-c` replaced by
/// what it stands for; other commands as they are.
pub(super) fn without_git_globals(words: &[String]) -> Vec<String> {
    let is_git = words
        .first()
        .is_some_and(|w| w.rsplit('/').next() == Some("git"));
    if !is_git {
        return words.to_vec();
    }
    let mut aliases: Vec<(String, String)> = Vec::new();
    let mut i = 1;
    while let Some(word) = words.get(i) {
        if !word.starts_with('-') {
            break;
        }
        if GIT_VALUE_OPTIONS.contains(&word.as_str()) {
            if word == "-c"
                && let Some((key, value)) = words.get(i + 1).and_then(|v| v.split_once('='))
                && let Some(name) = key.to_ascii_lowercase().strip_prefix("alias.")
            {
                aliases.push((name.to_owned(), value.to_owned()));
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    let mut out = vec![words[0].clone()];
    let rest = words.get(i..).unwrap_or_default();
    if let Some((sub, tail)) = rest.split_first() {
        match aliases.iter().rev().find(|(name, _)| name == sub) {
            Some((_, value)) if !value.starts_with('!') => {
                out.extend(value.split_whitespace().map(str::to_owned));
            }
            _ => out.push(sub.clone()),
        }
        out.extend(tail.iter().cloned());
    }
    out
}

/// Whether the command pattern `pattern` (`rm -rf *`, `git push *`) covers the command `argv`
/// written in another spelling: the same program, every option of the pattern among the
/// command's, the pattern's other words matching the command's other words.
pub fn covers(pattern: &str, optional_tail: bool, argv: &[String]) -> bool {
    let pattern_words: Vec<String> = pattern.split_whitespace().map(str::to_owned).collect();
    let (Some(rule), Some(command)) = (
        Spelling::new(&without_git_globals(&pattern_words)),
        Spelling::new(&without_git_globals(argv)),
    ) else {
        return false;
    };
    if rule.program != command.program
        || rule.program.contains('*')
        || !rule.options.iter().all(|o| command.options.contains(o))
    {
        return false;
    }
    let operands = command.operands.join(" ");
    let wanted = rule.operands.join(" ");
    if wildcard_match(&wanted, &operands) {
        return true;
    }
    // `rm -rf:*` (`rm -rf *`) also covers `rm -rf` with nothing after it.
    optional_tail
        && wanted
            .strip_suffix('*')
            .map(str::trim_end)
            .is_some_and(|head| head.is_empty() || wildcard_match(head, &operands))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    fn rm_rf(cmd: &str) -> bool {
        covers("rm -rf *", true, &words(cmd))
    }

    #[test]
    fn options_in_any_order_or_form_are_the_same_options() {
        for cmd in [
            "rm -rf src",
            "rm -fr src",
            "rm -r -f src",
            "rm -Rf src",
            "rm --recursive --force src",
            "rm src -rf",
            "rm -rfv src",
            "rm -dfr src",
            "/bin/rm -f -R src",
            "rm -rf",
        ] {
            assert!(rm_rf(cmd), "{cmd}");
        }
        for cmd in [
            "rm -r src",
            "rm -f src",
            "rm src",
            "rmdir -rf src",
            "rm -- -rf",
        ] {
            assert!(!rm_rf(cmd), "{cmd}");
        }
    }

    #[test]
    fn git_global_options_and_inline_aliases_do_not_hide_the_subcommand() {
        let push = |cmd: &str| covers("git push *", true, &words(cmd));
        for cmd in [
            "git push origin main",
            "git --no-pager push origin",
            "git -C . push",
            "git -c color.ui=never push x",
            "git -c alias.zz=push zz origin",
            "git --git-dir .git --work-tree . push",
            "git -C /tmp -p push",
        ] {
            assert!(push(cmd), "{cmd}");
        }
        for cmd in [
            "git status",
            "git -C push status",
            "git -c alias.push=status status",
        ] {
            assert!(!push(cmd), "{cmd}");
        }
        assert!(covers(
            "git push --force *",
            true,
            &words("git -C . push origin main -f")
        ));
        assert!(!covers(
            "git push --force *",
            true,
            &words("git push origin")
        ));
    }

    #[test]
    fn operands_still_have_to_match() {
        assert!(covers("rm -rf /", false, &words("rm -fr /")));
        assert!(!covers("rm -rf /", false, &words("rm -fr /tmp")));
        assert!(covers(
            "npm run deploy",
            false,
            &words("npm --silent run deploy")
        ));
        assert!(!covers("npm run deploy", false, &words("npm run test")));
    }
}
