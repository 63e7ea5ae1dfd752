//! The fuzzer's command lines: the compound-command grammar of the engine's proptest (lists,
//! pipelines, subshells, groups, substitutions, conditionals, loops, `bash -c`) around simple
//! commands built from programs, arguments and redirections that include every dynamic form of
//! issue 31 (brace expansion, globs, `$'…'`, parameters, arithmetic, aliases, `exec -a`,
//! `eval`, `hash`, `source`, option spellings, `cd`, symlinks with `..`). `@ROOT@` stands for
//! the throwaway directory the command runs in.

#![allow(dead_code)]

use proptest::prelude::*;

/// Program words: names, paths and the dynamic spellings of a name.
const PROGRAMS: &[&str] = &[
    "rm",
    "cat",
    "ls",
    "git",
    "npm",
    "sed",
    "sort",
    "cp",
    "mv",
    "tee",
    "touch",
    "mkdir",
    "head",
    "grep",
    "wc",
    "diff",
    "find",
    "echo",
    "printf",
    "true",
    "make",
    "uniq",
    "tree",
    "date",
    "rg",
    "file",
    "stat",
    "du",
    "test",
    "curl",
    "unlink",
    "id",
    "cut",
    "tr",
    "env",
    "timeout 5",
    "nice -n 1",
    "nohup",
    "xargs",
    "xargs -0",
    "stdbuf -oL",
    "sudo",
    "setsid",
    "command",
    "{rm,-f,x}",
    "{cat,.env}",
    "$'\\x72m'",
    "r$'m'",
    "\"r\"m",
    "r\\m",
    "${X:-rm}",
    "$RM",
    "$(echo rm)",
    "`echo rm`",
    "exec -a x rm",
    "exec -a y cat",
    "command rm",
    "builtin echo",
    "@ROOT@/bin/rm",
    "@ROOT@/bin/r[m]",
    "@ROOT@/bin/c?t",
    "@ROOT@/bin/$P",
    "eval rm",
    "eval cat",
    "./script",
    ". ./script",
    "source ./script",
    "rm${IFS}-f",
    "c${Y}at",
    "{ls,-la}",
];

/// Arguments: paths inside and outside the workspace, through symlinks and `..`, globs,
/// options in every spelling, sed scripts, find expressions, dynamic words.
const ARGS: &[&str] = &[
    "x",
    "a.txt",
    ".env",
    "sub",
    "sub/x",
    "../outside/secret",
    "lnk/../secret",
    "lnk/x",
    ".e*",
    "*.txt",
    "*",
    "s*/x",
    "-f",
    "-r",
    "-rf",
    "-n",
    "-i",
    "-o",
    "-of",
    "-o f",
    "--output=f",
    "--out=f",
    "--o=f",
    "-t",
    "-tsub",
    "--target-directory=sub",
    "--target-directory=lnk",
    "--t=lnk",
    "lnk/../f",
    "'s/a/b/'",
    "'1e touch pwned'",
    "'s/a/b/w w.out'",
    "'s/x/y/e'",
    "-n '1p'",
    "-i.bak",
    "-e 's/a/b/'",
    "-delete",
    "-exec rm {} ';'",
    "-fprint f",
    "-name '*.txt'",
    "$X",
    "${IFS}",
    "~/f",
    "{a,b}",
    "\"$(cat .env)\"",
    "--show-signature",
    "--textconv",
    "--ext-diff",
    "--format=%G?",
    "status",
    "log",
    "diff",
    "show HEAD:.env",
    "push",
    "test",
    "run build",
    "-c core.pager=x",
    "--no-index ~/f /dev/null",
    "--from-file=.env",
    "--from=.env",
    "-f .env",
    "--files0-from=.env",
    "$'\\x2eenv'",
    "-5",
    "$((1+2))",
    "$((Z))",
    "\"$X\"",
    "'$X'",
    "sub/../.env",
    "innocent",
    "../b/ws/.env",
    "-- -rf",
    "@ROOT@/a/b/outside/secret",
    "@ROOT@/a/b/ws/.env",
    "-vPATH",
    "-v x",
];

/// Redirections, including reads and writes the engine must see.
const REDIRECTS: &[&str] = &[
    "> f",
    ">> sub/f",
    "< .env",
    "<> a.txt",
    "> lnk/../f",
    "2>&1",
    "> /dev/null",
    "<<< x",
    "> $F",
    "< ~/f",
    "< .e*",
    "> sub/*",
    "0< a.txt",
    "1<>w",
    "2> err",
    "&> all",
    "> a.txt",
    "< lnk/../secret",
    ">| g",
];

/// Whole commands that change what the rest of the line runs, or run code some other way.
const SPECIALS: &[&str] = &[
    "alias x=rm",
    "shopt -s expand_aliases",
    "hash -p @ROOT@/bin/rm ls",
    "PATH=@ROOT@/bin2",
    "trap 'rm x' EXIT",
    "set -e",
    "set -o pipefail",
    "IFS=/",
    "RM=rm",
    "X=-rf",
    "Y=a",
    "read 'a[$(rm y)]' <<< 1",
    "printf -v 'a[$(rm y)]' x",
    "z='a[$(rm y)]'; echo $((z))",
    "w='$(rm y)'; echo ${w@P}",
    "declare -f",
    "export PATH=.",
    "unset X",
    "let q=1",
    "cat <<EOF\n$(rm h)\nEOF",
    "cat <<'EOF'\n$(rm h)\nEOF",
    "f() { rm x; }; f",
    "(( n = 1 ))",
    "[[ -v x ]]",
    "[[ $X == y ]]",
    "case $X in x) rm c;; esac",
    "for ((i=0; i<1; i++)); do rm i; done",
    "env -S 'rm x'",
    "echo ${X:-$(rm d)}",
];

/// Directories a `cd` may go to.
const CDS: &[&str] = &[
    "sub", "..", "lnk", "../..", "$D", "~", "-", "sub/..", "lnk/..",
];

fn pick(list: &'static [&'static str]) -> impl Strategy<Value = String> {
    proptest::sample::select(list).prop_map(str::to_owned)
}

/// One simple command: an optional assignment, a program, up to four arguments, up to two
/// redirections.
pub fn simple() -> impl Strategy<Value = String> {
    (
        proptest::option::weighted(0.15, pick(&["X=1", "RM=rm", "PATH=@ROOT@/bin", "A=1 B=2"])),
        pick(PROGRAMS),
        proptest::collection::vec(pick(ARGS), 0..4),
        proptest::collection::vec(pick(REDIRECTS), 0..2),
    )
        .prop_map(|(assign, program, args, redirects)| {
            let mut words: Vec<String> = Vec::new();
            words.extend(assign);
            words.push(program);
            words.extend(args);
            words.extend(redirects);
            words.join(" ")
        })
}

fn leaf() -> BoxedStrategy<String> {
    prop_oneof![
        8 => simple(),
        2 => pick(SPECIALS),
        1 => pick(CDS).prop_map(|d| format!("cd {d}")),
    ]
    .boxed()
}

/// A command line: leaves joined by operators and nested in every compound form.
pub fn command() -> impl Strategy<Value = String> {
    leaf().prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            (
                inner.clone(),
                inner.clone(),
                pick(&[" && ", " || ", "; ", " | ", " |& ", " & ", "\n"]),
            )
                .prop_map(|(a, b, op)| format!("{a}{op}{b}")),
            inner.clone().prop_map(|i| format!("({i})")),
            inner.clone().prop_map(|i| format!("{{ {i}; }}")),
            inner.clone().prop_map(|i| format!("echo $({i})")),
            inner.clone().prop_map(|i| format!("cat <({i})")),
            inner.clone().prop_map(|i| format!("if true; then {i}; fi")),
            inner
                .clone()
                .prop_map(|i| format!("for a in 1 2; do {i}; done")),
            inner
                .clone()
                .prop_map(|i| format!("while false; do {i}; done")),
            inner.clone().prop_map(|i| format!("! {i}")),
            inner.clone().prop_map(|i| format!("bash -c {}", quote(&i))),
            inner.clone().prop_map(|i| format!("eval {}", quote(&i))),
            inner.clone().prop_map(|i| format!("{i} > /dev/null 2>&1")),
            (pick(CDS), inner.clone()).prop_map(|(d, i)| format!("cd {d} && {i}")),
            (pick(CDS), inner.clone()).prop_map(|(d, i)| format!("cd {d}; {i}")),
            inner
                .clone()
                .prop_map(|i| format!("case x in x) {i};; esac")),
            inner.prop_map(|i| format!("X=$({i}) true")),
        ]
    })
}

/// Quote a word for bash (single quotes).
pub fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// A reproducible corpus of `n` command lines (for the benchmark).
pub fn corpus(n: usize) -> Vec<String> {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = command();
    (0..n)
        .filter_map(|_| strategy.new_tree(&mut runner).ok().map(|t| t.current()))
        .collect()
}
