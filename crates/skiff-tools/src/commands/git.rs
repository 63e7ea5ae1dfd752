//! `git`: the subcommands that only read, without the options that make them write a file or
//! run a program — in any spelling git accepts (it takes unique prefixes of long options:
//! `--out=f` is `--output=f`). Global options other than `--no-pager` are refused (`-c`, `-C`,
//! `--git-dir`, `--exec-path` change what runs or where). The operands are read: `git diff
//! --no-index ~/f /dev/null` (or outside a repository) reads any file.
//!
//! Repository configuration is not trusted either way: the Bash tool runs git through
//! [`crate::git_guard`], which turns off the programs `.git/config` can name.

use super::{Effects, Kind};

/// Subcommands that only read (some with extra checks below).
const READERS: &[&str] = &[
    "status",
    "diff",
    "log",
    "show",
    "branch",
    "rev-parse",
    "ls-files",
    "ls-tree",
    "rev-list",
    "show-ref",
    "merge-base",
    "blame",
    "grep",
    "describe",
    "remote",
    "cat-file",
];

/// Long options that write a file or run a program; a long option that is a prefix of one of
/// them is refused too (git reads `--out` as `--output`, `--show-sig` as `--show-signature`).
const DANGEROUS: &[&str] = &[
    "output",
    "ext-diff",
    "textconv",
    "filters",
    "show-signature",
    "open-files-in-pager",
    "exec",
    "upload-pack",
    "receive-pack",
    "config",
    "paginate",
];

/// What `git ARGS` does.
pub(super) fn effects(args: &[String]) -> Effects {
    let mut rest = args;
    while let Some((first, more)) = rest.split_first() {
        if first == "--no-pager" || first == "-P" {
            rest = more;
        } else {
            break;
        }
    }
    let Some((sub, rest)) = rest.split_first() else {
        return Effects::unknown("git without a subcommand");
    };
    if sub.starts_with('-') {
        return Effects::unknown(format!(
            "git {sub}: a global option that changes what git runs or where"
        ));
    }
    if !READERS.contains(&sub.as_str()) {
        return Effects::unknown(format!("git {sub} may change the repository"));
    }
    let mut e = Effects::new(Kind::ReadOnly);
    let mut options_done = false;
    let mut iter = rest.iter();
    while let Some(a) = iter.next() {
        if options_done || !a.starts_with('-') || a == "-" {
            e.reads.push(operand_path(sub, a).to_owned());
            continue;
        }
        if a == "--" {
            options_done = true;
            continue;
        }
        if let Some(long) = a.strip_prefix("--") {
            let name = long.split('=').next().unwrap_or(long);
            if !name.is_empty() && DANGEROUS.iter().any(|d| d.starts_with(name)) {
                return Effects::unknown(format!(
                    "git {sub} --{name} may write a file or run a program"
                ));
            }
            let value = long.split_once('=').map(|(_, v)| v);
            if matches!(name, "format" | "pretty") && value.is_some_and(|v| v.contains("%G")) {
                return Effects::unknown("git: a %G format checks signatures with a program");
            }
            if matches!(name, "format" | "pretty") && value.is_none() {
                // `--format FMT`: look at the value too.
                if let Some(v) = iter.next()
                    && v.contains("%G")
                {
                    return Effects::unknown("git: a %G format checks signatures with a program");
                }
            }
            if matches!(name, "contents" | "ignore-revs-file" | "no-index") {
                if name == "no-index" {
                    continue;
                }
                match value {
                    Some(v) => e.reads.push(v.to_owned()),
                    None => {
                        if let Some(v) = iter.next() {
                            e.reads.push(v.clone());
                        }
                    }
                }
            }
            continue;
        }
        // Short options: `grep -O` opens a pager program; `cat-file` only `-t -s -p -e`.
        if sub == "grep" && a.starts_with("-O") {
            return Effects::unknown("git grep -O runs a pager program");
        }
        if sub == "grep" && (a == "-f") {
            if let Some(v) = iter.next() {
                e.reads.push(v.clone());
            }
            continue;
        }
        if sub == "blame" && a == "-S" {
            if let Some(v) = iter.next() {
                e.reads.push(v.clone());
            }
            continue;
        }
        if sub == "cat-file" && !matches!(a.as_str(), "-t" | "-s" | "-p" | "-e") {
            return Effects::unknown(format!("git cat-file {a}"));
        }
    }
    match sub.as_str() {
        "branch" => {
            let listing = rest.iter().all(|a| {
                matches!(
                    a.as_str(),
                    "--list"
                        | "-l"
                        | "-a"
                        | "--all"
                        | "-r"
                        | "--remotes"
                        | "-v"
                        | "-vv"
                        | "--verbose"
                        | "--show-current"
                        | "--no-color"
                )
            });
            if !listing {
                return Effects::unknown("git branch may create, move or delete branches");
            }
            e.reads.clear();
        }
        "remote"
            if !rest
                .iter()
                .all(|a| matches!(a.as_str(), "-v" | "--verbose")) =>
        {
            return Effects::unknown("git remote may change the remotes");
        }
        // A whole-tree search: it reads every tracked (or, with --no-index, every) file.
        "grep" => e.trees.push(".".into()),
        _ => {}
    }
    e
}

/// Subcommands that only name files, commits and refs, in any repository (options aside).
const NAMES_ONLY: &[&str] = &[
    "status",
    "branch",
    "rev-parse",
    "ls-files",
    "ls-tree",
    "rev-list",
    "show-ref",
    "merge-base",
    "describe",
    "remote",
    "log",
    "shortlog",
    "reflog",
    "whatchanged",
    "tag",
    "config",
    "count-objects",
    "for-each-ref",
    "symbolic-ref",
    "name-rev",
    "cherry",
    "version",
    "help",
    "init",
    "fetch",
    "gc",
    "prune",
    "fsck",
    "check-ignore",
    "check-attr",
];

/// Subcommands that write files' contents from history only where they were (the work tree
/// of the repository itself), or print them only with options looked for below.
const IN_PLACE: &[&str] = &[
    "add",
    "commit",
    "rm",
    "mv",
    "push",
    "pull",
    "switch",
    "checkout",
    "restore",
    "reset",
    "stash",
    "clean",
    "merge",
    "rebase",
    "cherry-pick",
    "revert",
    "worktree",
    "diff",
    "show",
    "cat-file",
    "blame",
    "annotate",
];

/// Whether `git ARGS` (global options dropped, aliases replaced) may print, or copy where
/// a path rule does not reach, what the repository's objects hold — a file's contents as
/// committed, staged or stashed, whatever paths its operands name: `git show`, `git log -p`,
/// `git diff`, `git grep`, `git archive`, `git clone . /tmp/x`, `git worktree add`,
/// `git cat-file -p BLOB`. A Read rule on a path cannot hold against these where the file is,
/// or once was, tracked. `other_repo`: the command may work on another repository than the
/// workspace's (`cd`, `-C`, `GIT_DIR`), where even a checkout writes the contents somewhere
/// no rule covers. Options that only name files or count lines (`--stat`, `--name-only`,
/// `-s`) keep `diff` and `show` quiet; an alias or a subcommand not listed may do anything.
pub fn reveals_contents(args: &[String], other_repo: bool) -> bool {
    let Some((sub, rest)) = args.split_first() else {
        return false;
    };
    let sub = sub.as_str();
    let in_place = IN_PLACE.contains(&sub) && !other_repo;
    if !NAMES_ONLY.contains(&sub) && !in_place {
        return true;
    }
    let options: Vec<&str> = rest
        .iter()
        .map(String::as_str)
        .take_while(|a| *a != "--")
        .filter(|a| a.starts_with('-') && *a != "-")
        .collect();
    // git takes a unique prefix of a long option.
    let long = |names: &[&str]| {
        options.iter().any(|o| {
            o.strip_prefix("--")
                .map(|l| l.split('=').next().unwrap_or(l))
                .is_some_and(|l| !l.is_empty() && names.iter().any(|n| n.starts_with(l)))
        })
    };
    let short = |letters: &[char]| {
        options
            .iter()
            .filter(|o| !o.starts_with("--"))
            .any(|o| o.chars().skip(1).any(|c| letters.contains(&c)))
    };
    // A patch, a word diff or a pickaxe search (which tells whether a text was ever there).
    let patch = || {
        long(&[
            "patch",
            "patch-with-raw",
            "patch-with-stat",
            "unified",
            "word-diff",
            "color-words",
            "function-context",
            "cc",
            "combined-all-paths",
            "full-diff",
            "binary",
            "pickaxe-regex",
            "pickaxe-all",
            "diff-merges",
            "remerge-diff",
            "dd",
            "check",
        ]) || short(&['p', 'u', 'U', 'L', 'S', 'G', 'W', 'c', 'm'])
    };
    match sub {
        // Patches by default: only a summary of names and counts is quiet, and only of
        // commits (`git show BLOB` prints the blob).
        "diff" | "show" => {
            let summary = long(&[
                "stat",
                "name-only",
                "name-status",
                "numstat",
                "shortstat",
                "no-patch",
                "dirstat",
                "summary",
                "quiet",
                "raw",
            ]) || options.contains(&"-s");
            let objects_named = sub == "show"
                && rest
                    .iter()
                    .take_while(|a| *a != "--")
                    .any(|a| !a.starts_with('-') && !is_head_commit(a));
            patch() || !summary || objects_named
        }
        // `-p` or a type prints an object; `-t`, `-s`, `-e` only its type, size or presence.
        "cat-file" => {
            options.is_empty() || !options.iter().all(|o| matches!(*o, "-t" | "-s" | "-e"))
        }
        // Every line of the file named: the operand is checked as a read.
        "blame" | "annotate" => false,
        "log" | "shortlog" | "reflog" | "whatchanged" => patch(),
        "stash" => rest.first().is_some_and(|a| a == "show") || long(&["patch"]) || short(&['p']),
        // Hunks to pick, or a message template with the staged diff in it (`commit -v`).
        "add" => long(&["interactive", "patch", "edit"]) || short(&['i', 'p', 'e']),
        "commit" => long(&["interactive", "patch", "edit", "verbose"]) || short(&['p', 'e', 'v']),
        "worktree" => !rest.first().is_some_and(|a| {
            matches!(
                a.as_str(),
                "list" | "prune" | "lock" | "unlock" | "remove" | "repair"
            )
        }),
        _ => false,
    }
}

/// `HEAD`, `@`, `HEAD~2`, `HEAD^`: always a commit.
fn is_head_commit(rev: &str) -> bool {
    let rest = rev
        .strip_prefix("HEAD")
        .or_else(|| rev.strip_prefix('@'))
        .unwrap_or(rev);
    rest.len() < rev.len() && rest.chars().all(|c| matches!(c, '~' | '^' | '0'..='9'))
}

/// The file an operand reads: `REV:PATH` reads PATH (from history) for `show` and `cat-file`.
fn operand_path<'a>(sub: &str, operand: &'a str) -> &'a str {
    if matches!(sub, "show" | "cat-file")
        && let Some((_, path)) = operand.split_once(':')
        && !path.is_empty()
    {
        return path;
    }
    operand
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(s: &str) -> Effects {
        let args: Vec<String> = s.split_whitespace().map(str::to_owned).collect();
        effects(&args)
    }

    #[test]
    fn reading_subcommands() {
        for s in [
            "status",
            "status --porcelain -b",
            "diff HEAD~1 -- src",
            "log --oneline -n 5",
            "log --format=%H%n%an",
            "show HEAD:README.md",
            "--no-pager log -1",
            "branch -a",
            "remote -v",
            "grep -n foo",
            "blame src/lib.rs",
            "diff --no-textconv",
            "log --no-ext-diff",
        ] {
            assert_eq!(git(s).kind, Kind::ReadOnly, "{s}");
        }
        assert_eq!(git("show HEAD:.env").reads, [".env"]);
        assert_eq!(
            git("diff --no-index /a/f /dev/null").reads,
            ["/a/f", "/dev/null"]
        );
    }

    #[test]
    fn programs_and_files_in_any_spelling_are_refused() {
        for s in [
            "log --show-signature",
            "log --show-sig",
            "show --textconv HEAD",
            "diff --textc",
            "diff --ext-diff",
            "diff --ext",
            "diff --output=x",
            "log --out=x",
            "log --format=%G?",
            "log --pretty=format:%GG",
            "log --format %GS",
            "grep -Ovim foo",
            "grep --open-files foo",
            "cat-file --textconv HEAD:x",
            "-c core.pager=evil log",
            "-C /tmp status",
            "--git-dir=/x log",
            "commit -m x",
            "branch new",
            "remote add x y",
            "",
        ] {
            assert_eq!(git(s).kind, Kind::Unknown, "{s}");
        }
    }
}
