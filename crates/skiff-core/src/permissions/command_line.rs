//! A Bash command line as the permission engine sees it: every command it runs ([`Part`]),
//! wrappers removed, `sh -c`/`eval` scripts opened, globs expanded against the file system,
//! the files each one reads and writes (from [`skiff_tools::commands`]) resolved in every form
//! they can be reached by — relative to each directory a `cd` may have left the shell in, with
//! `..` after a symlink climbing from the link's target as the kernel does — and everything that
//! cannot be known before the command runs marked as such.

use skiff_tools::commands::{self, Effects, Kind, wrappers};
use skiff_tools::shell::{self, RedirectOp, Shell, SimpleCommand, Word};

use super::command_paths::{Cwds, change_dir, expand_glob, path_use, word_paths};
pub use super::command_paths::{PathUse, is_device_sink};
use super::workspace::Workspace;

/// One command a command line runs.
#[derive(Debug, Clone)]
pub struct Part {
    /// The words that run, wrappers removed, globs expanded (computed words as written).
    pub argv: Vec<String>,
    /// Texts deny and ask rules are matched against: the words joined, and alternatives that
    /// run the same program (`rm x` for `/bin/rm x` and for `sudo rm x`).
    pub texts: Vec<String>,
    /// Texts the command may run (a later word of a command skiff does not know: `setsid rm x`):
    /// a deny rule matching one asks.
    pub maybe: Vec<String>,
    /// When some of the command is computed at run time: the part of its text known before.
    pub known_prefix: Option<String>,
    /// Which program runs is not known (a computed command word, a line that defines aliases or
    /// changes `PATH`, an uncertain wrapper).
    pub program_unknown: bool,
    /// What the command is known to do.
    pub kind: Kind,
    /// Why it is not known harmless.
    pub why: Option<String>,
    /// Files it reads.
    pub reads: Vec<PathUse>,
    /// Directories it reads all the way down.
    pub trees: Vec<PathUse>,
    /// Files it writes (by its redirections and by itself).
    pub writes: Vec<PathUse>,
    /// Files its redirections write: the shell writes them whatever allows the command.
    pub redirect_writes: Vec<PathUse>,
    /// Directories it changes with everything in them.
    pub tree_writes: Vec<PathUse>,
    /// Its assignments and environment change nothing that matters.
    pub safe_env: bool,
    /// Only deny and ask rules apply to it (a command another command runs: `find -exec`).
    pub check_only: bool,
    /// A `cd`: harmless when its target is a known directory inside the workspace.
    pub cd: bool,
    /// Glob words as written, which bash passes as they are when its matching differs.
    pub unexpanded: Vec<String>,
}

impl Part {
    /// The words joined by single spaces.
    pub fn text(&self) -> String {
        self.argv.join(" ")
    }

    /// Whether some word is computed at run time.
    pub fn dynamic(&self) -> bool {
        self.known_prefix.is_some()
    }
}

/// Deepest `sh -c` / `eval` nesting analysed.
const MAX_NESTING: usize = 8;

/// Every command `command` runs, or why that cannot be known.
pub fn analyze(command: &str, ws: &Workspace) -> Result<Vec<Part>, String> {
    let mut cwds = Cwds::Known(vec![ws.cwd.clone()]);
    let mut parts = Vec::new();
    let mut taint = None;
    expand(command, 0, &mut cwds, &mut parts, &mut taint)?;
    if let Some(why) = taint {
        for p in &mut parts {
            p.program_unknown = true;
            p.known_prefix = Some(String::new());
            p.why.get_or_insert_with(|| why.clone());
        }
    }
    Ok(parts)
}

fn expand(
    command: &str,
    depth: usize,
    cwds: &mut Cwds,
    out: &mut Vec<Part>,
    taint: &mut Option<String>,
) -> Result<(), String> {
    if depth > MAX_NESTING {
        return Err("the command nests shells too deeply".into());
    }
    let commands = match shell::analyze(command) {
        Shell::Commands(c) => c,
        Shell::Opaque(why) => return Err(why),
    };
    for cmd in &commands {
        one(cmd, depth, cwds, out, taint)?;
    }
    Ok(())
}

fn one(
    cmd: &SimpleCommand,
    depth: usize,
    cwds: &mut Cwds,
    out: &mut Vec<Part>,
    taint: &mut Option<String>,
) -> Result<(), String> {
    if let Some(why) = &cmd.runs_code {
        taint.get_or_insert_with(|| why.clone());
    }
    // Redirections: files read and written by the shell itself.
    let mut reads = Vec::new();
    let mut writes = Vec::new();
    for r in &cmd.redirects {
        match r.op {
            RedirectOp::Read => reads.extend(word_paths(&r.target, cwds)),
            RedirectOp::Write | RedirectOp::Append => writes.extend(word_paths(&r.target, cwds)),
            RedirectOp::ReadWrite => {
                let p = word_paths(&r.target, cwds);
                reads.extend(p.clone());
                writes.extend(p);
            }
            RedirectOp::HereString | RedirectOp::HereDoc | RedirectOp::Descriptor => {}
        }
    }
    let mut safe_env = true;
    let mut program_unknown = false;
    for a in &cmd.assignments {
        if !a.value.is_static() || shell::unsafe_variable(&a.name) {
            safe_env = false;
        }
        if changes_lookup(&a.name) {
            program_unknown = true;
        }
    }
    if cmd.words.is_empty() {
        // Assignments alone (they last for the rest of the line) or redirections alone.
        if cmd
            .assignments
            .iter()
            .any(|a| shell::unsafe_variable(&a.name))
        {
            taint.get_or_insert_with(|| {
                "the command sets a variable that changes how later commands run".into()
            });
        }
        out.push(Part {
            argv: Vec::new(),
            texts: Vec::new(),
            maybe: Vec::new(),
            known_prefix: None,
            program_unknown: false,
            kind: Kind::ReadOnly,
            why: None,
            reads,
            trees: Vec::new(),
            redirect_writes: writes.clone(),
            writes,
            tree_writes: Vec::new(),
            safe_env,
            check_only: false,
            cd: false,
            unexpanded: Vec::new(),
        });
        return Ok(());
    }
    let unwrapped = wrappers::unwrap(&cmd.words);
    for e in &unwrapped.env {
        let name = e.known_prefix().split('=').next().unwrap_or("");
        if !e.is_static() || shell::unsafe_variable(name) {
            safe_env = false;
        }
        if changes_lookup(name) || !e.is_static() {
            program_unknown = true;
        }
    }
    let mut why = None;
    if let Some(u) = &unwrapped.uncertain {
        program_unknown = true;
        why = Some(u.clone());
    }
    let words = unwrapped.words;
    // `sh -c SCRIPT`, `eval ARGS`: what runs is the script.
    if let Some(script) = inner_script(words) {
        let Some(script) = script else {
            return Err("the command runs a shell script computed at run time".into());
        };
        let before = out.len();
        let mut inner_cwds = cwds.clone();
        expand(&script, depth + 1, &mut inner_cwds, out, taint)?;
        // `eval` runs in this shell: a `cd` in it stays.
        if words[0].text == "eval" && out[before..].iter().any(|p| p.cd) {
            *cwds = Cwds::Unknown;
        }
        if !reads.is_empty() || !writes.is_empty() || !safe_env || program_unknown {
            for p in &mut out[before..] {
                p.safe_env &= safe_env;
                p.program_unknown |= program_unknown;
            }
            out.push(holder(reads, writes, safe_env));
        }
        return Ok(());
    }
    if let Some(why) = taints_line(words) {
        taint.get_or_insert_with(|| why.to_owned());
    }
    let mut part = part_of(words, cwds, unwrapped.more_args);
    part.reads.extend(reads);
    part.redirect_writes.extend(writes.iter().cloned());
    part.writes.extend(writes);
    part.safe_env &= safe_env;
    part.program_unknown |= program_unknown;
    if part.program_unknown {
        part.known_prefix.get_or_insert_with(String::new);
    }
    if let Some(w) = why {
        part.why = Some(w);
    }
    if unwrapped.chdir {
        // `env -C DIR CMD`: its relative paths are relative to somewhere else.
        for p in part
            .reads
            .iter_mut()
            .chain(&mut part.writes)
            .chain(&mut part.redirect_writes)
            .chain(&mut part.trees)
            .chain(&mut part.tree_writes)
        {
            p.unknown |= !p.written.starts_with('/');
        }
    }
    // `sudo CMD`: deny and ask rules see CMD as well.
    if let Some(inner) = wrappers::privileged(words) {
        let mut nested = part_of(inner, cwds, false);
        nested.check_only = true;
        part.texts.extend(nested.texts.iter().cloned());
        out.push(nested);
    }
    // `xargs` without a command runs `echo`.
    if words
        .first()
        .is_some_and(|w| w.is_static() && w.text.rsplit('/').next() == Some("xargs"))
    {
        let mut nested = part_of(&[Word::literal("echo")], cwds, true);
        nested.check_only = true;
        out.push(nested);
    }
    let is_cd = part.cd;
    let runs: Vec<Vec<String>> = commands::effects(&part.argv).runs;
    let in_loop = cmd.in_loop;
    let in_subshell = cmd.subshell;
    let cd_target = is_cd.then(|| words.get(1).cloned());
    out.push(part);
    // What the command runs in turn (`find -exec CMD`, `find -delete` as `rm`).
    for argv in runs {
        let words: Vec<Word> = argv
            .iter()
            .map(|a| {
                let mut w = Word::literal(a);
                if a.contains("{}") {
                    w.dynamic_at = a.find("{}");
                }
                w
            })
            .collect();
        let mut nested = part_of(&words, cwds, false);
        nested.check_only = true;
        out.push(nested);
    }
    if let Some(target) = cd_target {
        let wrote = out
            .iter()
            .any(|p| !p.writes.is_empty() || !p.tree_writes.is_empty() || p.kind == Kind::Unknown);
        // In a subshell the `cd` may or may not hold for what comes next (only inside it).
        change_dir(
            cwds,
            words[0].text.as_str(),
            target.as_ref(),
            in_loop,
            wrote || in_subshell,
        );
    }
    Ok(())
}

/// A part that only carries redirections (of a `sh -c` or `eval` whose script was opened).
fn holder(reads: Vec<PathUse>, writes: Vec<PathUse>, safe_env: bool) -> Part {
    Part {
        argv: Vec::new(),
        texts: Vec::new(),
        maybe: Vec::new(),
        known_prefix: None,
        program_unknown: false,
        kind: Kind::ReadOnly,
        why: None,
        reads,
        trees: Vec::new(),
        redirect_writes: writes.clone(),
        writes,
        tree_writes: Vec::new(),
        safe_env,
        check_only: false,
        cd: false,
        unexpanded: Vec::new(),
    }
}

/// Variables that change which program a command name runs.
fn changes_lookup(name: &str) -> bool {
    matches!(
        name,
        "PATH" | "BASH_ENV" | "ENV" | "SHELLOPTS" | "BASHOPTS" | "EXECIGNORE"
    ) || name.starts_with("BASH_FUNC_")
        || name.starts_with("LD_")
        || name.starts_with("DYLD_")
}

/// A command that changes what later commands of the line run: aliases, functions brought in
/// from files, shell options, the command hash, variables assigned by name (a subscript in a
/// name is arithmetic that can run code), traps.
fn taints_line(words: &[Word]) -> Option<&'static str> {
    let first = words.first()?;
    if !first.is_static() {
        return None;
    }
    let args = &words[1..];
    let any = |f: &dyn Fn(&Word) -> bool| args.iter().any(f);
    let names_unsafe = |w: &Word| {
        let name = w.known_prefix().split('=').next().unwrap_or("");
        !w.is_static() || shell::unsafe_variable(name) || name.contains('[')
    };
    match first.text.as_str() {
        "alias" | "unalias" => Some("the command defines aliases"),
        "shopt" => Some("the command changes shell options (aliases, globbing)"),
        "enable" => Some("the command enables or loads shell builtins"),
        "hash" => Some("the command changes which program a name runs"),
        "source" | "." => Some("the command runs a shell script from a file"),
        "trap" => Some("the command sets a trap, which runs a command later"),
        "fc" => Some("the command runs commands from the history"),
        "let" => Some("let evaluates variables as arithmetic"),
        "set" => {
            any(&|w: &Word| !harmless_set_option(w)).then_some("the command changes shell options")
        }
        "declare" | "typeset" | "local" | "export" | "readonly" => any(&|w: &Word| {
            w.text.starts_with("-f")
                || w.text.starts_with("-F")
                || w.text.starts_with('+')
                || (!w.text.starts_with('-') && names_unsafe(w))
        })
        .then_some("the command sets a variable or function that changes how commands run"),
        "read" | "mapfile" | "readarray" | "getopts" | "wait" | "unset" => any(&|w: &Word| {
            !w.is_static() || w.text.contains('[') || (!w.text.starts_with('-') && names_unsafe(w))
        })
        .then_some("the command assigns a variable by a name that can run code"),
        _ => None,
    }
}

/// `set -e`, `set -o pipefail`, `set -- args`…: options that change nothing about what runs.
fn harmless_set_option(w: &Word) -> bool {
    if !w.is_static() {
        return false;
    }
    let t = w.text.as_str();
    if let Some(flags) = t.strip_prefix('-').or_else(|| t.strip_prefix('+')) {
        return flags.is_empty()
            || flags == "-"
            || flags.chars().all(|c| "euxvCfnbhmo".contains(c));
    }
    matches!(
        t,
        "errexit"
            | "nounset"
            | "xtrace"
            | "verbose"
            | "pipefail"
            | "noclobber"
            | "noglob"
            | "errtrace"
            | "functrace"
            | "noexec"
            | "notify"
            | "monitor"
            | "hashall"
    )
}

/// The script `sh -c SCRIPT …` or `eval ARGS…` runs; `Some(None)` when it is computed.
fn inner_script(words: &[Word]) -> Option<Option<String>> {
    let (first, rest) = words.split_first()?;
    if !first.is_static() {
        return None;
    }
    let base = first.text.rsplit('/').next().unwrap_or(&first.text);
    if base == "eval" {
        if rest.iter().any(|w| !w.is_static()) {
            return Some(None);
        }
        return Some(Some(
            rest.iter()
                .map(|w| w.text.as_str())
                .collect::<Vec<_>>()
                .join(" "),
        ));
    }
    if matches!(
        base,
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "mksh" | "ash" | "busybox"
    ) {
        let mut i = usize::from(base == "busybox");
        while let Some(w) = rest.get(i) {
            if !w.is_static() {
                return Some(None);
            }
            if w.text.starts_with('-') && !w.text.starts_with("--") && w.text.contains('c') {
                return Some(
                    rest.get(i + 1)
                        .map(|s| s.is_static().then(|| s.text.clone()))
                        .unwrap_or(None),
                );
            }
            if w.text.starts_with('-') || w.text.starts_with('+') {
                i += 1;
                continue;
            }
            break;
        }
    }
    None
}

/// The part for one command's words (wrappers already removed).
fn part_of(words: &[Word], cwds: &Cwds, more_args: bool) -> Part {
    // A process substitution is a `/dev/fd/N` path to the program (its commands are parts of
    // their own).
    let fd = Word::literal("/dev/fd/63");
    let words: Vec<&Word> = words
        .iter()
        .map(|w| if w.is_process_substitution() { &fd } else { w })
        .collect();
    // The words as bash passes them: globs expanded (where the directory is known).
    let mut argv: Vec<String> = Vec::with_capacity(words.len());
    let mut known_prefix: Option<String> = None;
    let mut unexpanded = Vec::new();
    for w in &words {
        // The known start of the command as bash passes it (globs expanded).
        if known_prefix.is_none() && w.is_dynamic() {
            let mut p = argv.join(" ");
            if !argv.is_empty() {
                p.push(' ');
            }
            p.push_str(w.known_prefix());
            known_prefix = Some(p);
        }
        match (&w.glob, w.is_dynamic()) {
            (Some(pattern), false) => match expand_glob(pattern, cwds) {
                Some(matches) if !matches.is_empty() => {
                    argv.extend(matches);
                    unexpanded.push(w.text.clone());
                }
                Some(_) => argv.push(w.text.clone()),
                None => {
                    // Too many matches, or the directory is not known: what the word becomes
                    // is not known.
                    if known_prefix.is_none() {
                        let mut p = argv.join(" ");
                        if !argv.is_empty() {
                            p.push(' ');
                        }
                        known_prefix = Some(p);
                    }
                    argv.push(w.text.clone());
                }
            },
            _ => argv.push(w.text.clone()),
        }
    }
    let prefix = match &known_prefix {
        Some(p) => p.clone(),
        None => argv.join(" "),
    };
    if more_args && known_prefix.is_none() {
        known_prefix = Some(format!("{prefix} "));
    }
    let program_unknown = words.first().is_some_and(|w| w.is_dynamic());
    let name = argv.first().cloned().unwrap_or_default();
    let base = name.rsplit('/').next().unwrap_or(&name).to_owned();
    let mut texts = vec![argv.join(" ")];
    if name.contains('/') && !program_unknown {
        let mut alt = argv.clone();
        alt[0] = base.clone();
        texts.push(alt.join(" "));
    }
    let data_only = commands::program_name(&name).is_some_and(commands::data_only);
    let mut effects_unknown_paths: Vec<PathUse> = Vec::new();
    let mut may_write = false;
    let args_dynamic = more_args || words[1..].iter().any(|w| w.is_dynamic());
    let mut effects: Effects = if program_unknown {
        Effects::unknown("the command is computed at run time")
    } else {
        commands::effects(&argv)
    };
    // A computed argument could be any option and name any file.
    let known_command = effects.kind != Kind::Unknown;
    if args_dynamic && !data_only && known_command {
        effects.why = Some("an argument is computed at run time".into());
        let unknown = PathUse {
            written: prefix.clone(),
            forms: Vec::new(),
            unknown: true,
        };
        effects_unknown_paths = vec![unknown];
        may_write = effects.kind == Kind::Edits;
        effects.kind = Kind::Unknown;
    }
    // Later words of a command skiff does not know may be a command it runs.
    let mut maybe = Vec::new();
    if effects.kind == Kind::Unknown && !program_unknown {
        let known: Vec<&Word> = words[1..]
            .iter()
            .copied()
            .take_while(|w| w.is_static())
            .collect();
        for i in 0..known.len() {
            if known[i].text.starts_with('-') {
                continue;
            }
            let tail: Vec<&str> = known[i..].iter().map(|w| w.text.as_str()).collect();
            maybe.push(tail.join(" "));
            if let Some(b) = known[i]
                .text
                .rsplit('/')
                .next()
                .filter(|b| *b != known[i].text)
            {
                let mut alt: Vec<&str> = tail.clone();
                alt[0] = b;
                maybe.push(alt.join(" "));
            }
        }
    }
    let dynamic_operand =
        |p: &str| -> bool { words.iter().any(|w| w.is_dynamic() && w.text.contains(p)) };
    let to_paths = |list: &[String]| -> Vec<PathUse> {
        list.iter()
            .filter(|p| p.as_str() != "-")
            .map(|p| {
                let mut u = path_use(p, cwds);
                if dynamic_operand(p) {
                    u.unknown = true;
                }
                u
            })
            .collect()
    };
    // `cd DIR`: it reads nothing, but where it goes must be known and inside.
    let cd = matches!(base.as_str(), "cd" | "pushd") && !program_unknown;
    let mut reads = to_paths(&effects.reads);
    if cd {
        match words.get(1) {
            Some(t) if t.is_static() && words.len() == 2 => reads.push(path_use(&t.text, cwds)),
            _ => reads.push(PathUse {
                written: words
                    .get(1)
                    .map(|w| w.text.clone())
                    .unwrap_or_else(|| "~".into()),
                forms: Vec::new(),
                unknown: true,
            }),
        }
    }
    let mut trees = to_paths(&effects.trees);
    let mut tree_writes = to_paths(&effects.tree_writes);
    let mut writes = to_paths(&effects.writes);
    if may_write {
        writes.extend(effects_unknown_paths.iter().cloned());
    }
    reads.extend(effects_unknown_paths);
    trees.dedup();
    tree_writes.dedup();
    writes.dedup();
    Part {
        texts,
        maybe,
        known_prefix,
        program_unknown,
        kind: if cd { Kind::ReadOnly } else { effects.kind },
        why: effects.why,
        reads,
        trees,
        writes,
        redirect_writes: Vec::new(),
        tree_writes,
        safe_env: true,
        check_only: false,
        cd,
        unexpanded,
        argv,
    }
}
