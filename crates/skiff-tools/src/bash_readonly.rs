//! Which Bash calls only read, for running them concurrently with other read-only tool calls:
//! `true` only when every simple command of the line — analysed by [`crate::shell`], the same
//! analysis the permission engine uses — is known to only read ([`crate::commands`]), with all
//! its words known before it runs (or only data, as `echo`'s), no redirection other than reads,
//! descriptor copies and `/dev/null`, nothing in the background and no process substitution.
//! Anything it does not understand counts as not read-only.

use crate::commands::{self, wrappers};
use crate::shell::{self, RedirectOp, Shell, SimpleCommand, Word};

/// Whether `cmd` is recognisably read-only (safe to run alongside other read-only tool calls).
pub fn is_read_only_command(cmd: &str) -> bool {
    let Shell::Commands(commands) = shell::analyze(cmd) else {
        return false;
    };
    !commands.is_empty() && commands.iter().all(simple_read_only)
}

fn simple_read_only(c: &SimpleCommand) -> bool {
    if c.runs_code.is_some() || c.background || !c.assignments.is_empty() {
        return false;
    }
    let redirects_ok = c.redirects.iter().all(|r| match r.op {
        RedirectOp::Read => !is_process_substitution(&r.target),
        RedirectOp::Descriptor => true,
        RedirectOp::Write | RedirectOp::Append => {
            r.target.is_static() && r.target.text == "/dev/null"
        }
        RedirectOp::ReadWrite | RedirectOp::HereString | RedirectOp::HereDoc => false,
    });
    redirects_ok && (c.words.is_empty() || words_read_only(&c.words))
}

fn is_process_substitution(w: &Word) -> bool {
    let t = &w.text[w.known_prefix().len()..];
    t.starts_with("<(") || t.starts_with(">(")
}

fn words_read_only(words: &[Word]) -> bool {
    let unwrapped = wrappers::unwrap(words);
    if unwrapped.uncertain.is_some() || unwrapped.more_args || !unwrapped.env.is_empty() {
        return false;
    }
    let words = unwrapped.words;
    let Some(first) = words.first() else {
        return false;
    };
    if !first.is_static() {
        return false;
    }
    if words.iter().any(is_process_substitution) {
        return false;
    }
    let data_only = commands::program_name(&first.text).is_some_and(commands::data_only);
    // A computed argument could be any option; a glob starting with a wildcard could match a
    // file named like one (`-ofile`).
    let args_known = words[1..].iter().all(|w| {
        w.dynamic_at.is_none()
            && w.glob
                .as_deref()
                .is_none_or(|g| !g.starts_with(['*', '?', '[']))
    });
    if !(data_only || args_known) {
        return false;
    }
    let argv: Vec<String> = words.iter().map(|w| w.text.clone()).collect();
    let effects = commands::effects(&argv);
    effects.read_only() && effects.writes.is_empty()
}

#[cfg(test)]
mod tests {
    use super::is_read_only_command as ro;

    #[test]
    fn read_only_commands() {
        for cmd in [
            "ls",
            "ls -la src",
            "cat Cargo.toml",
            "head -n 20 src/main.rs",
            "tail -5 log.txt",
            "wc -l src/*.rs",
            "grep -rn 'fn main' src",
            "rg -n TODO",
            "find . -name '*.rs' -type f",
            "echo hello",
            "printf '%s\\n' a b",
            "pwd",
            "which cargo",
            "git status",
            "git diff HEAD~1 -- src",
            "git log --oneline -n 5",
            "git show HEAD:README.md",
            "git branch",
            "git branch -a",
            "git branch --list",
            "git branch -v",
            "git remote -v",
            "git rev-parse --show-toplevel",
            "git ls-files | wc -l",
            "git --no-pager log -1",
            "git blame src/lib.rs",
            "ls && pwd",
            "false || echo fallback",
            "cat a; cat b",
            "cat a.txt | sort | uniq -c | sort -rn | head",
            "grep foo bar 2>&1",
            "ls missing 2>/dev/null",
            "ls >/dev/null",
            "ls > /dev/null 2>&1",
            "cat < input.txt",
            "echo 'a > b' \"c | d; e & f\"",
            "echo \"$HOME\"",
            "test -f Cargo.toml && echo yes",
            "[ -d src ] && ls src",
            "find src -name x -print",
            "sort -r file",
            "diff -u a b",
            "du -sh .",
            "stat -c %s file",
            "env",
            "date +%Y",
            "sha256sum Cargo.lock",
            "ls # rm -rf / in a comment",
            "ls \\\n -la",
            "sleep 1",
            "tree -L 2",
            "uniq -c file",
            "git grep -n foo",
            "ls |& cat",
        ] {
            assert!(ro(cmd), "expected read-only: {cmd}");
        }
    }

    #[test]
    fn not_read_only_commands() {
        for cmd in [
            "",
            "   ",
            "rm -rf target",
            "touch x",
            "mkdir d",
            "cargo build",
            "echo hi > out.txt",
            "echo hi >> out.txt",
            "ls 1>out",
            "ls 2>err.log",
            "ls &>all.log",
            "ls >| out",
            "ls >& out",
            "echo $(rm x)",
            "echo \"$(rm x)\"",
            "echo `rm x`",
            "echo \"`rm x`\"",
            "cat <(rm x)",
            "diff <(ls) <(ls a)",
            "ls | tee out.txt",
            "cat <<EOF\nhi\nEOF",
            "cat <<< hi",
            "cat <> file",
            "sleep 10 &",
            "sleep 10 & ls",
            "ls && rm x",
            "ls; rm x",
            "ls | xargs rm",
            "find . -name '*.o' -delete",
            "find . -exec rm {} \\;",
            "find . -execdir ls \\;",
            "find . -fprint out",
            "sort -o out in",
            "sort -uo out in",
            "sort --output=out in",
            "env rm x",
            "FOO=1 ls",
            "PATH=/tmp ls",
            "git commit -m x",
            "git push",
            "git checkout main",
            "git branch new-feature",
            "git branch -d old",
            "git branch -D old",
            "git branch -m a b",
            "git remote add origin url",
            "git remote remove origin",
            "git -c core.pager=evil log",
            "git -C /tmp status",
            "git diff --output=patch.diff",
            "git grep -Ovim foo",
            "git",
            "/bin/ls",
            "sudo ls",
            "(rm x)",
            "{ rm x; }",
            "echo 'unterminated",
            "echo \"unterminated",
            "rg --pre ./script foo",
            "date -s '2020-01-01'",
            "tree -o out.txt",
            "uniq in out",
            "bash -c ls",
            "sh script.sh",
            "python -c 'print(1)'",
            "sed -i s/a/b/ file",
            "ls\nrm x",
            "npm install",
        ] {
            assert!(!ro(cmd), "expected not read-only: {cmd:?}");
        }
    }
}
