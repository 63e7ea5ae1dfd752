//! What a shell command line would run: every simple command of it — through lists (`;`,
//! `&&`, `||`, newlines, `&`), pipelines, subshells, groups, `if`/`while`/`for`/`case` bodies
//! and patterns, arithmetic, here-documents, and command and process substitutions — parsed
//! with a real bash parser (`rable`), never by splitting strings. Each word is expanded as far
//! as it can be known before the command runs ([`Word`]). A command line that does not parse,
//! or that defines functions, is [`Shell::Opaque`]: what it runs cannot be known.
//!
//! This is the one shell analysis of skiff: the permission engine, the read-only classifier
//! (which decides which Bash calls run concurrently) and read-only agents all use it.

pub mod expand;
mod walk;
pub mod word;

pub use word::{Position, Word};

/// `NAME=value` before a command (or alone).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    /// The variable (for `a[i]=v`, the whole `a[i]`).
    pub name: String,
    /// The value.
    pub value: Word,
}

/// What a redirection does with its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectOp {
    /// `<`: reads the file.
    Read,
    /// `>`, `>|`, `&>`, `>&` to a file: writes (creates or truncates) it.
    Write,
    /// `>>`, `&>>`: appends to (creates) it.
    Append,
    /// `<>`: opens it for reading and writing (creates it).
    ReadWrite,
    /// `<<<` word: data for stdin, no file.
    HereString,
    /// `<<` document: data for stdin, no file.
    HereDoc,
    /// `2>&1`, `<&0`, `>&-`: copies or closes a descriptor.
    Descriptor,
}

/// One redirection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// What it does.
    pub op: RedirectOp,
    /// The file (or here-string, or descriptor) it names.
    pub target: Word,
}

impl Redirect {
    /// Whether the redirection writes a file.
    pub fn writes(&self) -> bool {
        matches!(
            self.op,
            RedirectOp::Write | RedirectOp::Append | RedirectOp::ReadWrite
        )
    }

    /// Whether the redirection reads a file.
    pub fn reads(&self) -> bool {
        matches!(self.op, RedirectOp::Read | RedirectOp::ReadWrite)
    }
}

/// One simple command of a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// Assignments before the command (or the whole command when it has no words).
    pub assignments: Vec<Assignment>,
    /// The words: the command name and its arguments.
    pub words: Vec<Word>,
    /// Its redirections (those of enclosing compound commands are separate commands without
    /// words).
    pub redirects: Vec<Redirect>,
    /// Why running it can execute code the text does not show (arithmetic on variables,
    /// `(( … ))`), if it can.
    pub runs_code: Option<String>,
    /// It is in a loop body, or runs a loop's condition: it may run any number of times.
    pub in_loop: bool,
    /// It runs in the background (`&`): the command line does not wait for it.
    pub background: bool,
    /// It runs in a subshell (`( … )`, `$( … )`, a pipeline's command, `&`): a `cd` in it
    /// does not change the directory of what follows it.
    pub subshell: bool,
}

impl SimpleCommand {
    /// The words' texts joined by single spaces (what permission rules are matched against).
    pub fn text(&self) -> String {
        join(&self.words)
    }

    /// The words quoted so that a shell reads them back as they are.
    pub fn quoted(&self) -> String {
        self.words
            .iter()
            .map(|w| quote(&w.text))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The words' texts.
    pub fn argv(&self) -> Vec<String> {
        self.words.iter().map(|w| w.text.clone()).collect()
    }

    /// Whether some word, assignment or redirection target is computed at run time.
    pub fn dynamic(&self) -> bool {
        self.words.iter().any(Word::is_dynamic)
            || self.assignments.iter().any(|a| a.value.is_dynamic())
            || self.redirects.iter().any(|r| r.target.is_dynamic())
    }

    /// Files written by redirections (their targets).
    pub fn writes(&self) -> impl Iterator<Item = &Word> {
        self.redirects
            .iter()
            .filter(|r| r.writes())
            .map(|r| &r.target)
    }
}

fn join(words: &[Word]) -> String {
    let mut out = String::new();
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(&w.text);
    }
    out
}

/// A command line, analysed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shell {
    /// Every simple command it runs (substitutions first, then the command that uses them),
    /// in order.
    Commands(Vec<SimpleCommand>),
    /// It could not be analysed (a syntax error, a function definition, a construct the
    /// analysis does not know): whatever it runs is unknown.
    Opaque(String),
}

/// Analyse a command line.
pub fn analyze(command: &str) -> Shell {
    match walk::commands(command) {
        Ok(c) => Shell::Commands(c),
        Err(why) => Shell::Opaque(why),
    }
}

/// Variables that change which program runs or how the shell reads what follows: a command
/// that sets them is not what it seems.
pub fn unsafe_variable(name: &str) -> bool {
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
            | "MANPAGER"
            | "EDITOR"
            | "VISUAL"
            | "BROWSER"
            | "LESSOPEN"
            | "LESSCLOSE"
            | "PYTHONSTARTUP"
            | "PYTHONPATH"
            | "NODE_OPTIONS"
            | "PERL5OPT"
            | "RUBYOPT"
            | "EXECIGNORE"
            | "FIGNORE"
            | "POSIXLY_CORRECT"
            | "TMPDIR"
            | "SSH_ASKPASS"
            | "SUDO_ASKPASS"
            // Where programs read their configuration, which can name programs to run (git's
            // `filter.*.clean` in `$XDG_CONFIG_HOME/git/config`, with `git diff` run).
            | "XDG_CONFIG_HOME"
            | "XDG_CONFIG_DIRS"
            | "XDG_DATA_HOME"
            | "XDG_DATA_DIRS"
            | "PYTHONHOME"
            | "RUSTFLAGS"
            | "RUSTDOCFLAGS"
            | "RUSTC"
            | "RUSTDOC"
            | "RUSTC_WRAPPER"
            | "RUSTC_WORKSPACE_WRAPPER"
            | "CARGO_HOME"
            | "CARGO_ENCODED_RUSTFLAGS"
    ) || name.starts_with("LD_")
        // npm reads any setting from `npm_config_*` (any case): `node-options`, `script-shell`.
        || name.to_ascii_lowercase().starts_with("npm_config_")
        // cargo's settings: a runner or wrapper is a program to run.
        || (name.starts_with("CARGO_") && (name.ends_with("_RUNNER") || name.ends_with("_WRAPPER") || name.ends_with("_LINKER")))
        || name.starts_with("DYLD_")
        || name.starts_with("GIT_")
        || name.starts_with("BASH_")
        || name.starts_with("RIPGREP_")
        || name.contains('[')
}

/// Quote a word for a POSIX shell (single quotes unless it is plain).
pub fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '-' | '_' | '.' | '/' | ':' | '=' | ',' | '+' | '@' | '%')
        });
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests;
