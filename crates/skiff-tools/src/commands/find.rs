//! `find`: its starting points, and its expression read token by token. `-exec`, `-execdir`,
//! `-ok`, `-okdir` run commands (given to deny and ask rules as they are), `-delete` removes
//! files (it counts as `rm -r` of the starting points), `-fprint*` and `-fls` write files. A
//! token `find` does not have is unknown.

use super::{Effects, Kind};

/// Tests and actions without an argument.
const FLAGS: &[&str] = &[
    "-print",
    "-print0",
    "-ls",
    "-prune",
    "-quit",
    "-true",
    "-false",
    "-empty",
    "-readable",
    "-writable",
    "-executable",
    "-nouser",
    "-nogroup",
    "-depth",
    "-d",
    "-mount",
    "-xdev",
    "-noleaf",
    "-follow",
    "-daystart",
    "-ignore_readdir_race",
    "-noignore_readdir_race",
    "-warn",
    "-nowarn",
    "-a",
    "-and",
    "-o",
    "-or",
    "-not",
    "!",
    "(",
    ")",
    ",",
    "-help",
    "--help",
    "-version",
    "--version",
];

/// Tests and options with one argument that is not a file.
const WITH_VALUE: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-lname",
    "-ilname",
    "-type",
    "-xtype",
    "-size",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-used",
    "-perm",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-links",
    "-inum",
    "-maxdepth",
    "-mindepth",
    "-fstype",
    "-context",
    "-printf",
    "-regextype",
];

/// Tests whose argument is a file whose metadata is read.
const WITH_FILE: &[&str] = &["-newer", "-anewer", "-cnewer", "-samefile", "-files0-from"];

/// What `find ARGS` does.
pub(super) fn effects(args: &[String]) -> Effects {
    let mut e = Effects::new(Kind::ReadOnly);
    let mut i = 0;
    // Leading options: `-H`, `-L`, `-P`, `-D debugopts`, `-Olevel`.
    while let Some(a) = args.get(i) {
        match a.as_str() {
            "-H" | "-L" | "-P" => i += 1,
            "-D" => i += 2,
            o if o.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    let mut starts = Vec::new();
    while let Some(a) = args.get(i) {
        if a.starts_with('-') || matches!(a.as_str(), "(" | "!" | ")" | ",") {
            break;
        }
        starts.push(a.clone());
        i += 1;
    }
    if starts.is_empty() {
        starts.push(".".to_owned());
    }
    e.reads.extend(starts.iter().cloned());
    let mut unknown: Option<String> = None;
    while let Some(a) = args.get(i) {
        i += 1;
        let tok = a.as_str();
        if FLAGS.contains(&tok) {
            continue;
        }
        if WITH_VALUE.contains(&tok) {
            i += 1;
            continue;
        }
        if WITH_FILE.contains(&tok) || tok.starts_with("-newer") {
            if let Some(f) = args.get(i) {
                e.reads.push(f.clone());
            }
            i += 1;
            continue;
        }
        match tok {
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let cmd: Vec<String> = args[i.min(args.len())..]
                    .iter()
                    .take_while(|w| *w != ";" && *w != "+")
                    .cloned()
                    .collect();
                i += cmd.len() + 1;
                if !cmd.is_empty() {
                    e.runs.push(cmd);
                }
                unknown.get_or_insert_with(|| format!("find {tok} runs a command"));
            }
            "-delete" => {
                let mut rm = vec!["rm".to_owned(), "-r".to_owned()];
                rm.extend(starts.iter().cloned());
                e.runs.push(rm);
                e.tree_writes.extend(starts.iter().cloned());
                e.writes.extend(starts.iter().cloned());
                if e.kind == Kind::ReadOnly {
                    e.kind = Kind::Edits;
                }
                unknown.get_or_insert_with(|| "find -delete removes files".into());
            }
            "-fprint" | "-fprint0" | "-fls" => {
                if let Some(f) = args.get(i) {
                    e.writes.push(f.clone());
                }
                i += 1;
                unknown.get_or_insert_with(|| format!("find {tok} writes a file"));
            }
            "-fprintf" => {
                if let Some(f) = args.get(i) {
                    e.writes.push(f.clone());
                }
                i += 2;
                unknown.get_or_insert_with(|| "find -fprintf writes a file".into());
            }
            other => {
                return Effects::unknown(format!("find: {other} is not a test skiff knows"));
            }
        }
    }
    if let Some(why) = unknown {
        e.kind = Kind::Unknown;
        e.why = Some(why);
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn plain_searches_only_read() {
        for a in [
            ". -name *.rs -type f",
            "src -maxdepth 2 ( -name a -o -name b ) -print",
            "-L . -newer Cargo.toml",
            "",
        ] {
            let e = effects(&args(a));
            assert_eq!(e.kind, Kind::ReadOnly, "{a}: {e:?}");
        }
        assert_eq!(effects(&args("-L . -newer x")).reads, [".", "x"]);
    }

    #[test]
    fn commands_writes_and_unknown_tokens_are_not_harmless() {
        let e = effects(&args(". -exec rm {} ;"));
        assert_eq!(e.kind, Kind::Unknown);
        assert_eq!(e.runs, [args("rm {}")]);
        let e = effects(&args("a b -delete"));
        assert_eq!(e.kind, Kind::Unknown);
        assert_eq!(e.runs, [args("rm -r a b")]);
        for a in [
            ". -fprint out",
            ". -fprintf out %p",
            ". -fls out",
            ". -frobnicate",
        ] {
            assert_eq!(effects(&args(a)).kind, Kind::Unknown, "{a}");
        }
        assert_eq!(effects(&args(". -fprint out")).writes, ["out"]);
    }
}
