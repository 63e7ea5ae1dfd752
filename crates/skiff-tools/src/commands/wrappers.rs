//! Commands that run another command as it is: `timeout 5 CMD`, `nice -n 1 CMD`, `nohup`,
//! `time`, `stdbuf`, `env VAR=x CMD`, `command`, `builtin`, `exec -a NAME CMD`, `xargs CMD`.
//! What runs is the inner command; a wrapper word computed at run time, or an option skiff does
//! not know, leaves what runs uncertain. `sudo`/`doas` are not transparent (the command runs
//! with other privileges): [`privileged`] gives the command under them.

use crate::shell::Word;

/// A command with its wrappers removed.
#[derive(Debug, Clone, Default)]
pub struct Unwrapped<'a> {
    /// The command that runs in the end.
    pub words: &'a [Word],
    /// `NAME=value` words `env` gives it.
    pub env: Vec<&'a Word>,
    /// Why what runs is not certain (a computed wrapper word, an option skiff does not know,
    /// `env -S`), if it is not.
    pub uncertain: Option<String>,
    /// `env -C DIR`: it runs in another directory.
    pub chdir: bool,
    /// `xargs`: arguments read at run time are added.
    pub more_args: bool,
    /// The wrappers removed, outermost first.
    pub wrappers: Vec<&'a str>,
}

/// Options of a wrapper: (name, takes a value). Long options may be given as `--name=value`.
type Spec = &'static [(&'static str, bool)];

const TIMEOUT: Spec = &[
    ("-s", true),
    ("--signal", true),
    ("-k", true),
    ("--kill-after", true),
    ("--foreground", false),
    ("--preserve-status", false),
    ("-v", false),
    ("--verbose", false),
];
const NICE: Spec = &[("-n", true), ("--adjustment", true)];
const STDBUF: Spec = &[
    ("-i", true),
    ("-o", true),
    ("-e", true),
    ("--input", true),
    ("--output", true),
    ("--error", true),
];
const TIME: Spec = &[("-p", false), ("--portability", false)];
const EXEC: Spec = &[("-c", false), ("-l", false), ("-a", true)];
const COMMAND: Spec = &[("-p", false)];
const ENV: Spec = &[
    ("-i", false),
    ("--ignore-environment", false),
    ("-0", false),
    ("--null", false),
    ("-u", true),
    ("--unset", true),
    ("-C", true),
    ("--chdir", true),
    ("-v", false),
    ("--debug", false),
];
const XARGS: Spec = &[
    ("-0", false),
    ("--null", false),
    ("-a", true),
    ("--arg-file", true),
    ("-d", true),
    ("--delimiter", true),
    ("-E", true),
    ("--eof", true),
    ("-I", true),
    ("--replace", true),
    ("-L", true),
    ("--max-lines", true),
    ("-n", true),
    ("--max-args", true),
    ("-P", true),
    ("--max-procs", true),
    ("-r", false),
    ("--no-run-if-empty", false),
    ("-s", true),
    ("--max-chars", true),
    ("-t", false),
    ("--verbose", false),
    ("-x", false),
    ("--exit", false),
    ("-p", false),
    ("--interactive", false),
];

/// Remove the wrappers in front of `words`.
pub fn unwrap(words: &[Word]) -> Unwrapped<'_> {
    let mut out = Unwrapped {
        words,
        ..Unwrapped::default()
    };
    loop {
        let Some((first, rest)) = out.words.split_first() else {
            return out;
        };
        if first.is_dynamic() || first.glob.is_some() {
            return out;
        }
        let name = first.text.as_str();
        let base = name.rsplit('/').next().unwrap_or(name);
        let spec: Spec = match base {
            "nohup" | "builtin" => &[],
            "command" => {
                // `command -v x` only looks a name up: it is the command itself.
                if rest
                    .first()
                    .is_some_and(|a| a.text.starts_with("-v") || a.text.starts_with("-V"))
                {
                    return out;
                }
                COMMAND
            }
            "exec" => EXEC,
            "time" => TIME,
            "nice" => NICE,
            "timeout" => TIMEOUT,
            "stdbuf" => STDBUF,
            "env" => ENV,
            "xargs" => XARGS,
            _ => return out,
        };
        let (after, env_words) = match skip_options(base, rest, spec, &mut out) {
            Some(x) => x,
            None => return out,
        };
        let mut after = after;
        if base == "timeout" {
            // The duration.
            match after.split_first() {
                Some((d, r)) => {
                    if d.is_dynamic() {
                        out.uncertain
                            .get_or_insert_with(|| "the timeout is computed at run time".into());
                    }
                    after = r;
                }
                None => return out,
            }
        }
        if after.is_empty() {
            // `env` alone prints the environment; `nohup` alone fails: nothing to unwrap.
            return out;
        }
        out.env.extend(env_words);
        out.wrappers.push(name_of(first));
        if name.contains('/') {
            // `./timeout 5 rm x`: the wrapper is a program at a path, not the system's.
            out.uncertain
                .get_or_insert_with(|| format!("{name} is a program at a path"));
        }
        if base == "xargs" {
            out.more_args = true;
        }
        out.words = after;
    }
}

fn name_of(w: &Word) -> &str {
    &w.text
}

/// The words after a wrapper's options (and, for `env`, its `NAME=value` words); `None` when
/// nothing follows.
fn skip_options<'a>(
    base: &str,
    mut rest: &'a [Word],
    spec: Spec,
    out: &mut Unwrapped<'_>,
) -> Option<(&'a [Word], Vec<&'a Word>)> {
    let mut env = Vec::new();
    loop {
        let (a, more) = rest.split_first()?;
        if a.is_dynamic() || a.glob.is_some() {
            if a.text.starts_with('-') || a.known_prefix().is_empty() {
                out.uncertain
                    .get_or_insert_with(|| format!("{base}: an option computed at run time"));
            }
            if base == "env" && a.known_prefix().contains('=') {
                env.push(a);
                rest = more;
                continue;
            }
            return Some((rest, env));
        }
        let text = a.text.as_str();
        if text == "--" {
            return Some((more, env));
        }
        if base == "env" && !text.starts_with('-') && text.contains('=') {
            env.push(a);
            rest = more;
            continue;
        }
        if base == "nice" && text.len() > 1 && text[1..].chars().all(|c| c.is_ascii_digit()) {
            // `nice -5 CMD`.
            rest = more;
            continue;
        }
        if !text.starts_with('-') || text == "-" {
            return Some((rest, env));
        }
        if base == "env"
            && (text == "-S"
                || text.starts_with("--split-string")
                || (text.starts_with("-S") && text.len() > 2))
        {
            out.uncertain
                .get_or_insert_with(|| "env -S splits a string into a command".into());
            return Some((more, env));
        }
        let (name, attached) = match text.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v)),
            _ => (text, None),
        };
        let mut needs_value = false;
        if name.starts_with("--") {
            let Some((_, takes_value)) = spec.iter().find(|(n, _)| *n == name) else {
                out.uncertain
                    .get_or_insert_with(|| format!("{base} {text}: an option skiff does not know"));
                return Some((more, env));
            };
            needs_value = *takes_value && attached.is_none();
            if base == "env" && name == "--chdir" {
                out.chdir = true;
            }
        } else {
            // A cluster of short options (`-cl`); one that takes a value ends it, with the
            // value attached (`-n5`) or in the next word.
            for (pos, c) in name.char_indices().skip(1) {
                let flag = format!("-{c}");
                let Some((_, takes_value)) = spec.iter().find(|(n, _)| *n == flag) else {
                    out.uncertain.get_or_insert_with(|| {
                        format!("{base} {text}: an option skiff does not know")
                    });
                    return Some((more, env));
                };
                if base == "env" && c == 'C' {
                    out.chdir = true;
                }
                if *takes_value {
                    needs_value = pos + c.len_utf8() == name.len();
                    break;
                }
            }
        }
        rest = if needs_value {
            more.split_first().map_or(more, |(_, r)| r)
        } else {
            more
        };
    }
}

/// The command `sudo`/`doas` runs (their options skipped); `None` for anything else.
pub fn privileged(words: &[Word]) -> Option<&[Word]> {
    let (first, rest) = words.split_first()?;
    let base = first.text.rsplit('/').next().unwrap_or(&first.text);
    if !matches!(base, "sudo" | "doas") {
        return None;
    }
    let with_value = ["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T"];
    let mut rest = rest;
    while let Some((a, more)) = rest.split_first() {
        if a.text == "--" {
            rest = more;
            break;
        }
        if !a.text.starts_with('-') || a.text.len() == 1 {
            break;
        }
        rest = if with_value.contains(&a.text.as_str()) {
            more.split_first().map_or(more, |(_, r)| r)
        } else {
            more
        };
    }
    (!rest.is_empty()).then_some(rest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::{Shell, analyze};

    fn words(cmd: &str) -> Vec<Word> {
        match analyze(cmd) {
            Shell::Commands(mut c) => c.remove(0).words,
            Shell::Opaque(w) => panic!("{w}"),
        }
    }

    fn inner(cmd: &str) -> (Vec<String>, bool) {
        let w = words(cmd);
        let u = unwrap(&w);
        (
            u.words.iter().map(|w| w.text.clone()).collect(),
            u.uncertain.is_some(),
        )
    }

    #[test]
    fn wrappers_are_removed() {
        for (cmd, expected) in [
            ("timeout 5 rm x", "rm x"),
            ("timeout -s KILL -k 2 5 rm x", "rm x"),
            ("timeout --signal=KILL 5 rm x", "rm x"),
            ("nice -n 5 rm x", "rm x"),
            ("nice -5 rm x", "rm x"),
            ("nohup rm x", "rm x"),
            ("time -p rm x", "rm x"),
            ("stdbuf -oL rm x", "rm x"),
            ("env A=1 -u B rm x", "rm x"),
            ("env -i A=1 rm x", "rm x"),
            ("command rm x", "rm x"),
            ("builtin echo x", "echo x"),
            ("exec -a name rm -f x", "rm -f x"),
            ("exec -cl rm x", "rm x"),
            ("xargs -0 -n1 rm", "rm"),
            ("nohup timeout 5 env A=1 rm x", "rm x"),
            ("command -v rm", "command -v rm"),
            ("env", "env"),
        ] {
            assert_eq!(
                inner(cmd),
                (expected.split(' ').map(str::to_owned).collect(), false),
                "{cmd}"
            );
        }
    }

    #[test]
    fn what_is_not_known_is_uncertain() {
        for cmd in [
            "env -S 'rm x'",
            "timeout --frob 5 rm",
            "env $X rm x",
            "nice $N rm x",
        ] {
            assert!(inner(cmd).1, "{cmd}");
        }
        let w = words("sudo -u root rm x");
        assert_eq!(privileged(&w).map(|w| w[0].text.as_str()), Some("rm"));
    }
}
