//! What a command does with its arguments, as far as skiff knows: which files it reads and
//! writes, which directory trees it reads, which commands it runs, and whether it is known to
//! do nothing else ([`Kind::ReadOnly`], [`Kind::Edits`]) or not ([`Kind::Unknown`]). Options
//! are read from tables as GNU `getopt_long` reads them ([`options`]); `find`, `sed` and `git`
//! have parsers of their own. Anything not understood is `Unknown`: never run without asking.

mod find;
mod git;
pub use git::reveals_contents as git_reveals_contents;
pub mod options;
mod sed;
mod table;
mod table_edits;
mod table_search;
pub mod wrappers;

use options::Parsed;

/// How much a command is known to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// It only reads (the files in [`Effects::reads`] and [`Effects::trees`]).
    ReadOnly,
    /// It changes files, only those in [`Effects::writes`] and [`Effects::tree_writes`].
    Edits,
    /// Anything: what it does is not known.
    Unknown,
}

/// What a command does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Effects {
    /// How much it is known to do.
    pub kind: Kind,
    /// Files (or directories, for their listing) it reads, as written.
    pub reads: Vec<String>,
    /// Directories whose files it reads, all the way down (`grep -r`, `rg`, `diff -r`).
    pub trees: Vec<String>,
    /// Files it creates, changes or removes.
    pub writes: Vec<String>,
    /// Directories it changes or removes with everything in them (`rm -r`, `mv dir`).
    pub tree_writes: Vec<String>,
    /// Commands it runs (`find -exec`), and what it amounts to (`find -delete` is `rm`), for
    /// deny and ask rules.
    pub runs: Vec<Vec<String>>,
    /// Why it is `Unknown`.
    pub why: Option<String>,
}

impl Effects {
    fn new(kind: Kind) -> Self {
        Self {
            kind,
            reads: Vec::new(),
            trees: Vec::new(),
            writes: Vec::new(),
            tree_writes: Vec::new(),
            runs: Vec::new(),
            why: None,
        }
    }

    /// Not known: it may do anything.
    pub fn unknown(why: impl Into<String>) -> Self {
        let mut e = Self::new(Kind::Unknown);
        e.why = Some(why.into());
        e
    }

    /// Whether the command is known to change nothing.
    pub fn read_only(&self) -> bool {
        self.kind == Kind::ReadOnly
    }

    fn read_operands(mut self, p: &Parsed) -> Self {
        self.reads
            .extend(p.operands.iter().filter(|o| *o != "-").cloned());
        self.option_files(p)
    }

    fn option_files(mut self, p: &Parsed) -> Self {
        self.reads.extend(p.read_values().map(str::to_owned));
        let writes: Vec<String> = p.write_values().map(str::to_owned).collect();
        if !writes.is_empty() {
            self.writes.extend(writes);
            if self.kind == Kind::ReadOnly {
                self.kind = Kind::Edits;
            }
        }
        self
    }
}

/// Commands whose arguments are only data, whatever they are (computed at run time included):
/// they run nothing, read and write no file.
pub fn data_only(name: &str) -> bool {
    matches!(name, "echo" | "true" | "false" | ":")
}

/// The name a command word runs by, for knowing what it does: only a bare name (`cat`); a path
/// (`/bin/cat`, `./cat`) is a program skiff does not vouch for.
pub fn program_name(word: &str) -> Option<&str> {
    (!word.contains('/')).then_some(word)
}

/// What `argv` (wrappers already removed) does.
pub fn effects(argv: &[String]) -> Effects {
    let Some((first, args)) = argv.split_first() else {
        return Effects::new(Kind::ReadOnly);
    };
    let Some(name) = program_name(first) else {
        return Effects::unknown(format!("{first} is a program skiff does not know"));
    };
    match name {
        "echo" | "true" | "false" | ":" => Effects::new(Kind::ReadOnly),
        // `printf -v VAR` assigns a variable (subscripts included, which run code).
        "printf" => {
            if args
                .first()
                .is_some_and(|a| a.starts_with("-v") || a == "--")
            {
                Effects::unknown("printf -v assigns a variable")
            } else {
                Effects::new(Kind::ReadOnly)
            }
        }
        // `test -v 'a[$(cmd)]'` evaluates a subscript.
        "test" | "[" => {
            if args.iter().any(|a| a == "-v" || a == "-R") {
                Effects::unknown("test -v evaluates array subscripts")
            } else {
                Effects::new(Kind::ReadOnly)
            }
        }
        "env" if args.is_empty() => Effects::new(Kind::ReadOnly),
        // A script run in this shell: what it does is not known, but it reads its file.
        "source" | "." => {
            let mut e = Effects::unknown(format!("{name} runs a shell script from a file"));
            e.reads.extend(args.first().cloned());
            e
        }
        "find" => find::effects(args),
        "sed" => sed::effects(args),
        "git" => git::effects(args),
        _ => match table::table(name) {
            Some(table) => match table.parse(args) {
                // `sort`/`wc`/`du --files0-from=-`: the files to read are named on stdin.
                Ok(parsed) if parsed.values(&["files0-from"]).any(|v| v == "-") => {
                    Effects::unknown(format!("{name} reads the files named on its input"))
                }
                Ok(parsed) => tabled(name, parsed),
                Err(why) => Effects::unknown(format!("{name}: {why}")),
            },
            None => Effects::unknown(format!("{name} is a program skiff does not know")),
        },
    }
}

/// Effects of a command read against its table.
fn tabled(name: &str, p: Parsed) -> Effects {
    if let Some(bad) = p.forbidden() {
        return Effects::unknown(format!(
            "{name} {}{} may run a program or change files",
            if bad.name.len() == 1 { "-" } else { "--" },
            bad.name
        ));
    }
    let read_only = Effects::new(Kind::ReadOnly);
    match name {
        "tr" | "basename" | "dirname" | "which" | "sleep" | "whoami" | "uname" | "id" | "pwd" => {
            read_only.option_files(&p)
        }
        "date" => {
            if p.operands.iter().any(|o| !o.starts_with('+')) {
                Effects::unknown("date with an operand that is not +FORMAT sets the clock")
            } else {
                read_only.option_files(&p)
            }
        }
        "uniq" => {
            let mut e = read_only.option_files(&p);
            let mut ops = p.operands.iter();
            if let Some(input) = ops.next().filter(|o| *o != "-") {
                e.reads.push(input.clone());
            }
            if let Some(output) = ops.next() {
                e.writes.push(output.clone());
                e.kind = Kind::Edits;
            }
            if ops.next().is_some() {
                return Effects::unknown("uniq takes at most two operands");
            }
            e
        }
        "diff" => {
            let recursive = p.has(&["r", "recursive"]);
            let mut e = read_only.option_files(&p);
            for o in p.operands.iter().filter(|o| *o != "-") {
                if recursive {
                    e.trees.push(o.clone());
                }
                e.reads.push(o.clone());
            }
            e
        }
        "grep" | "egrep" | "fgrep" => grep(p, false),
        "rg" => grep(p, true),
        "mkdir" | "rmdir" | "touch" | "tee" => {
            let mut e = Effects::new(Kind::Edits).option_files(&p);
            e.writes.extend(p.operands.iter().cloned());
            e
        }
        "rm" => {
            let mut e = Effects::new(Kind::Edits).option_files(&p);
            if p.has(&["r", "R", "recursive"]) {
                e.tree_writes.extend(p.operands.iter().cloned());
            }
            e.writes.extend(p.operands.iter().cloned());
            e
        }
        "cp" | "mv" => copy_or_move(name, &p),
        _ => read_only.read_operands(&p),
    }
}

/// `grep` (recursive with `-r`) and `rg` (always recursive): the first operand is the pattern
/// unless one is given by option.
fn grep(p: Parsed, rg: bool) -> Effects {
    let mut e = Effects::new(Kind::ReadOnly).option_files(&p);
    let pattern_given =
        p.has(&["e", "f", "regexp", "file"]) || (rg && p.has(&["files", "type-list"]));
    let recursive = rg
        || p.has(&["r", "R", "recursive", "dereference-recursive"])
        || p.values(&["d", "directories"]).any(|v| v == "recurse");
    let mut operands = p.operands.iter();
    if !pattern_given {
        operands.next();
    }
    let files: Vec<&String> = operands.filter(|o| *o != "-").collect();
    if recursive && files.is_empty() {
        e.trees.push(".".into());
    }
    for f in files {
        if recursive {
            e.trees.push(f.clone());
        }
        e.reads.push(f.clone());
    }
    e
}

/// `cp SRC… DEST`, `cp -t DIR SRC…` (and `mv`): sources read (and, for `mv`, removed), the
/// destination written; into a directory, the file of each source's name there too.
fn copy_or_move(name: &str, p: &Parsed) -> Effects {
    let mut e = Effects::new(Kind::Edits);
    e.reads.extend(p.read_values().map(str::to_owned));
    let target_dirs: Vec<String> = p.write_values().map(str::to_owned).collect();
    let (sources, dest): (Vec<String>, Option<String>) = if target_dirs.is_empty() {
        match p.operands.split_last() {
            Some((last, rest)) if !rest.is_empty() => (rest.to_vec(), Some(last.clone())),
            _ => return Effects::unknown(format!("{name} needs a source and a destination")),
        }
    } else {
        (p.operands.clone(), None)
    };
    // `cp -s`/`-l` make links, not copies: what is later written through one (`cp -s
    // .git/config x; echo … >> x`) lands wherever it points, out of sight of the path checks.
    if name == "cp" && p.has(&["s", "symbolic-link", "l", "link"]) {
        return Effects::unknown("cp makes links, and what is written through them is not known");
    }
    if p.values(&["S", "suffix"]).any(|s| s.contains('/')) {
        return Effects::unknown(format!("{name}: a backup suffix with a slash"));
    }
    let recursive = name == "mv" || p.has(&["r", "R", "recursive", "a", "archive"]);
    let backups: Vec<String> = if p.has(&["b", "backup"]) {
        let suffix = p.values(&["S", "suffix"]).last().unwrap_or("~").to_owned();
        vec![suffix]
    } else {
        Vec::new()
    };
    let dests: Vec<String> = target_dirs.into_iter().chain(dest).collect();
    // `-T`: the destination is the target itself, never a directory to copy into.
    let no_target_dir = p.has(&["T", "no-target-directory"]);
    for src in &sources {
        if recursive {
            e.trees.push(src.clone());
        }
        e.reads.push(src.clone());
        if name == "mv" {
            e.writes.push(src.clone());
            e.tree_writes.push(src.clone());
        }
        let base = src.trim_end_matches('/').rsplit('/').next().unwrap_or(src);
        for d in dests.iter().filter(|_| !no_target_dir) {
            let inside = if p.has(&["parents"]) {
                format!("{}/{}", d.trim_end_matches('/'), src)
            } else {
                format!("{}/{base}", d.trim_end_matches('/'))
            };
            for suffix in &backups {
                e.writes.push(format!("{inside}{suffix}"));
                e.writes.push(format!("{d}{suffix}"));
            }
            if recursive {
                e.tree_writes.push(inside.clone());
            }
            e.writes.push(inside);
        }
    }
    for d in dests {
        if recursive && no_target_dir {
            e.tree_writes.push(d.clone());
        }
        e.writes.push(d);
    }
    e
}

#[cfg(test)]
mod tests;
