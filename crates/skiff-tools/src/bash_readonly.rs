//! A conservative classifier of read-only shell commands: `true` only when every simple command
//! of a list/pipeline is an allow-listed reader and nothing writes files, substitutes commands
//! or runs in the background. Anything it does not understand counts as not read-only.

/// Commands that only read, with no arguments that make them write or run other programs
/// (those are checked per command in [`args_ok`]).
///
/// None of them runs a program named by configuration in the working directory or by the
/// environment a repository controls: `find` loses `-exec`/`-ok`/`-delete`/`-fprint*`; `sort`
/// loses `-o` and `--compress-program`; `rg` loses `--pre` (its config file comes from
/// `RIPGREP_CONFIG_PATH` in the user's own environment, never from the workspace); `file`
/// reads magic *data* and loses `-C`; `tree` loses `-o`; `env` and `date` only print; `diff`
/// and `cmp` run no helper; `git` runs through skiff's wrapper (`git_guard`), which switches
/// off fsmonitor, external diff, textconv, signature checking, pagers and attribute drivers.
/// Pagers (`less`, `more`, `man`) are deliberately absent: `LESSOPEN` and friends run programs.
const READERS: &[&str] = &[
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "grep",
    "rg",
    "find",
    "echo",
    "printf",
    "pwd",
    "which",
    "file",
    "stat",
    "du",
    "df",
    "tree",
    "sleep",
    "true",
    "false",
    "date",
    "env",
    "uname",
    "whoami",
    "id",
    "diff",
    "cmp",
    "sort",
    "uniq",
    "cut",
    "tr",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "test",
    "[",
    "nl",
    "od",
    "hexdump",
    "md5sum",
    "sha256sum",
    "git",
];

/// Git subcommands that only read (some get extra checks in [`git_ok`]).
const GIT_READERS: &[&str] = &[
    "status",
    "diff",
    "log",
    "show",
    "branch",
    "rev-parse",
    "ls-files",
    "blame",
    "grep",
    "describe",
    "remote",
];

/// Whether `cmd` is recognisably read-only (safe to run alongside other read-only tool calls).
pub fn is_read_only_command(cmd: &str) -> bool {
    let Some(tokens) = tokenize(cmd) else {
        return false;
    };
    let mut commands: Vec<Vec<String>> = vec![Vec::new()];
    let mut iter = tokens.into_iter().peekable();
    while let Some(token) = iter.next() {
        match token {
            Token::Word(w) => {
                if let Some(current) = commands.last_mut() {
                    current.push(w);
                }
            }
            Token::Separator => commands.push(Vec::new()),
            Token::Redirect(op) => {
                let ok = match op {
                    // `2>&1`, `>&2`, `<&0`, `>&-`: duplicating or closing descriptors.
                    Redirect::Dup(target) => {
                        target == "-" || target.chars().all(|c| c.is_ascii_digit())
                    }
                    // Writing: only to /dev/null.
                    Redirect::Write => {
                        matches!(iter.next(), Some(Token::Word(w)) if w == "/dev/null")
                    }
                    // Reading a file is fine; it needs a target.
                    Redirect::Read => matches!(iter.next(), Some(Token::Word(_))),
                };
                if !ok {
                    return false;
                }
            }
        }
    }
    let mut any = false;
    for words in &commands {
        if words.is_empty() {
            continue;
        }
        any = true;
        if !simple_command_ok(words) {
            return false;
        }
    }
    any
}

/// Whether one simple command (its words, quotes removed, no redirections) only reads.
pub fn is_read_only_simple(words: &[String]) -> bool {
    !words.is_empty() && simple_command_ok(words)
}

/// One simple command (words after redirections were removed).
fn simple_command_ok(words: &[String]) -> bool {
    let Some(name) = words.first() else {
        return true;
    };
    // `VAR=value cmd`: reject assignments (they can change how the command behaves).
    if is_assignment(name) {
        return false;
    }
    READERS.contains(&name.as_str()) && args_ok(name, &words[1..])
}

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((var, _)) => {
            !var.is_empty() && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

/// Per-command checks of arguments that would make an allow-listed command write or run code.
fn args_ok(name: &str, args: &[String]) -> bool {
    let has = |bad: &[&str]| args.iter().any(|a| bad.contains(&a.as_str()));
    let has_prefix = |prefix: &str| args.iter().any(|a| a.starts_with(prefix));
    match name {
        "find" => !has(&[
            "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf",
            "-fls",
        ]),
        // `sort -o FILE` writes; `--compress-program` runs a program.
        "sort" => !args.iter().any(|a| {
            a.starts_with("--output")
                || a.starts_with("--compress-program")
                || (a.starts_with('-') && !a.starts_with("--") && a.contains('o'))
        }),
        // `env CMD` runs CMD.
        "env" => args.is_empty(),
        // `date -s` sets the clock.
        "date" => !args.iter().any(|a| {
            a.starts_with("--set")
                || (a.starts_with('-') && !a.starts_with("--") && a.contains('s'))
        }),
        // `tree -o FILE` writes.
        "tree" => !args.iter().any(|a| a == "-o" || a.starts_with("-o")),
        // `uniq IN OUT` writes OUT: allow at most one operand.
        "uniq" => args.iter().filter(|a| !a.starts_with('-')).count() <= 1,
        // `rg --pre CMD` runs CMD on every file.
        "rg" => !has_prefix("--pre"),
        // `file -C` compiles a magic file.
        "file" => !(has(&["-C", "--compile"])),
        "git" => git_ok(args),
        _ => true,
    }
}

fn git_ok(args: &[String]) -> bool {
    // Global options (`-c`, `-C`, `--exec-path`, ...) can run code or change where git works:
    // only `--no-pager` is accepted before the subcommand.
    let args: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .skip_while(|a| *a == "--no-pager")
        .collect();
    let Some((sub, rest)) = args.split_first() else {
        return false;
    };
    if !GIT_READERS.contains(sub) {
        return false;
    }
    // `--output=FILE` (diff, log, show) writes a file; `--ext-diff` and `--textconv` may run
    // configured programs; `grep -O` opens a pager program.
    let writes = rest.iter().any(|a| {
        a.starts_with("--output")
            || a.starts_with("--ext-diff")
            || a.starts_with("--open-files-in-pager")
            || (*sub == "grep" && a.starts_with("-O"))
    });
    if writes {
        return false;
    }
    match *sub {
        "branch" => rest.iter().all(|a| {
            matches!(
                *a,
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
        }),
        "remote" => rest.iter().all(|a| matches!(*a, "-v" | "--verbose")),
        _ => true,
    }
}

#[derive(Debug, PartialEq)]
enum Redirect {
    /// `>`, `>>`, `&>`, `>|`: writes the following word.
    Write,
    /// `<`: reads the following word.
    Read,
    /// `>&N`, `<&N`: duplicates (or with `-`, closes) a descriptor.
    Dup(String),
}

#[derive(Debug, PartialEq)]
enum Token {
    Word(String),
    /// `;`, `&&`, `||`, `|`, `|&`, newline.
    Separator,
    Redirect(Redirect),
}

/// Split a command line into words (quotes removed), separators and redirections. `None` for
/// anything the classifier refuses outright: command or process substitution, here-documents,
/// background `&`, subshells, unbalanced quotes.
fn tokenize(cmd: &str) -> Option<Vec<Token>> {
    let chars: Vec<char> = cmd.chars().collect();
    let mut tokens = Vec::new();
    let mut word = String::new();
    // Whether the current word exists (an empty quoted string is still a word) and whether any
    // of it was quoted (a quoted `2` before `>` is not a descriptor number).
    let mut in_word = false;
    let mut quoted = false;
    let mut i = 0;
    let flush = |tokens: &mut Vec<Token>, word: &mut String, in_word: &mut bool, q: &mut bool| {
        if *in_word {
            tokens.push(Token::Word(std::mem::take(word)));
        }
        *in_word = false;
        *q = false;
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            '\'' => {
                let end = chars[i + 1..].iter().position(|&ch| ch == '\'')? + i + 1;
                word.extend(&chars[i + 1..end]);
                in_word = true;
                quoted = true;
                i = end + 1;
            }
            '"' => {
                i += 1;
                loop {
                    match *chars.get(i)? {
                        '"' => break,
                        '`' => return None,
                        '$' if chars.get(i + 1) == Some(&'(') => return None,
                        '\\' => {
                            word.push(*chars.get(i + 1)?);
                            i += 2;
                        }
                        ch => {
                            word.push(ch);
                            i += 1;
                        }
                    }
                }
                in_word = true;
                quoted = true;
                i += 1;
            }
            '\\' => {
                let escaped = next?;
                if escaped != '\n' {
                    word.push(escaped);
                    in_word = true;
                    quoted = true;
                }
                i += 2;
            }
            '`' | '(' | ')' => return None,
            '$' if next == Some('(') => return None,
            '#' if !in_word => {
                // Comment to the end of the line.
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            ' ' | '\t' => {
                flush(&mut tokens, &mut word, &mut in_word, &mut quoted);
                i += 1;
            }
            '\n' | ';' => {
                flush(&mut tokens, &mut word, &mut in_word, &mut quoted);
                tokens.push(Token::Separator);
                i += 1;
            }
            '|' => {
                flush(&mut tokens, &mut word, &mut in_word, &mut quoted);
                tokens.push(Token::Separator);
                // `||` and `|&` are one operator.
                i += if matches!(next, Some('|' | '&')) {
                    2
                } else {
                    1
                };
            }
            '&' => {
                flush(&mut tokens, &mut word, &mut in_word, &mut quoted);
                match next {
                    Some('&') => {
                        tokens.push(Token::Separator);
                        i += 2;
                    }
                    // `&>` / `&>>`: both streams to a file.
                    Some('>') => {
                        tokens.push(Token::Redirect(Redirect::Write));
                        i += 2;
                        if chars.get(i) == Some(&'>') {
                            i += 1;
                        }
                    }
                    // Background job.
                    _ => return None,
                }
            }
            '>' | '<' => {
                // A bare number right before the operator is the descriptor (`2>`), not a word.
                if in_word && !quoted && word.chars().all(|ch| ch.is_ascii_digit()) {
                    word.clear();
                    in_word = false;
                } else {
                    flush(&mut tokens, &mut word, &mut in_word, &mut quoted);
                }
                let (redirect, len) = redirect_at(&chars, i)?;
                i += len;
                if let Redirect::Dup(_) = redirect {
                    // The target follows directly (`>&2`) or after blanks (`>& 2`).
                    while matches!(chars.get(i), Some(' ' | '\t')) {
                        i += 1;
                    }
                    let start = i;
                    while i < chars.len() && !" \t\n;|&<>()".contains(chars[i]) {
                        i += 1;
                    }
                    let target: String = chars[start..i].iter().collect();
                    tokens.push(Token::Redirect(Redirect::Dup(target)));
                } else {
                    tokens.push(Token::Redirect(redirect));
                }
            }
            ch => {
                word.push(ch);
                in_word = true;
                i += 1;
            }
        }
    }
    flush(&mut tokens, &mut word, &mut in_word, &mut quoted);
    Some(tokens)
}

/// The redirection operator starting at `chars[i]` and its length; `None` for the ones the
/// classifier refuses (`<<` here-documents and here-strings, `<>` read-write, `>(`/`<(`).
fn redirect_at(chars: &[char], i: usize) -> Option<(Redirect, usize)> {
    let c = chars[i];
    let next = chars.get(i + 1).copied();
    match (c, next) {
        ('<', Some('<' | '>' | '(')) | ('>', Some('(')) => None,
        ('<', Some('&')) | ('>', Some('&')) => Some((Redirect::Dup(String::new()), 2)),
        ('<', _) => Some((Redirect::Read, 1)),
        ('>', Some('>' | '|')) => Some((Redirect::Write, 2)),
        _ => Some((Redirect::Write, 1)),
    }
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
