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
