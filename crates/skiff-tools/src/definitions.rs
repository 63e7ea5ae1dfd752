//! Where the names a failing command's output mentions are defined (`calc.sh:5: add() { …`),
//! so that a model that keeps re-running a failing test is pointed at the code to read instead.
//! A plain scan of the workspace's small text files for definition lines (`def NAME`,
//! `function NAME`, `fn NAME`, `NAME() {`, `const NAME = …`): no language server, bounded in files
//! and bytes (each and in all), hidden paths (Read deny rules) never read or named.

use std::path::Path;
use std::sync::Arc;

use crate::path_guard::PathGuard;

/// Names taken from a failure, at most.
const MAX_NAMES: usize = 8;
/// Definitions returned, at most.
const MAX_FOUND: usize = 3;
/// Files looked at, at most (a large repository is not scanned whole).
const MAX_FILES: usize = 2_000;
/// Files larger than this are skipped.
const MAX_FILE_BYTES: u64 = 256 * 1024;
/// Bytes read in all, at most (a repository of many large sources is not read whole).
const MAX_TOTAL_BYTES: u64 = 8 * 1024 * 1024;
/// A definition line is cut to this many characters.
const MAX_LINE_CHARS: usize = 120;

/// Words of test runners' and compilers' messages, never taken for a name.
const COMMON: &[&str] = &[
    "and",
    "assert",
    "assertion",
    "at",
    "but",
    "check",
    "checks",
    "code",
    "error",
    "errors",
    "exit",
    "expected",
    "fail",
    "failed",
    "failure",
    "failures",
    "false",
    "file",
    "for",
    "from",
    "got",
    "in",
    "is",
    "line",
    "none",
    "not",
    "null",
    "of",
    "ok",
    "on",
    "passed",
    "should",
    "test",
    "tests",
    "the",
    "to",
    "traceback",
    "true",
    "was",
    "with",
];

/// One definition: where (as the model writes paths), its line number and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    /// The file, relative to the workspace when inside it.
    pub path: String,
    /// Its line number, from 1.
    pub line: usize,
    /// The line, trimmed and cut to [`MAX_LINE_CHARS`] characters.
    pub text: String,
}

/// The identifiers of the lines of `output` that report a failure (`FAIL`, `Error`, `assert`,
/// `expected`, …), first seen first, without the runners' own words.
pub fn names_in_failure(output: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for line in output.lines() {
        let lower = line.to_ascii_lowercase();
        if !["fail", "error", "assert", "expected", "panicked"]
            .iter()
            .any(|w| lower.contains(w))
        {
            continue;
        }
        for word in line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            let starts_like_a_name = word
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
            if word.len() < 2
                || !starts_like_a_name
                || COMMON.contains(&word.to_ascii_lowercase().as_str())
                || names.iter().any(|n| n == word)
            {
                continue;
            }
            names.push(word.to_owned());
            if names.len() == MAX_NAMES {
                return names;
            }
        }
    }
    names
}

/// Whether `line` defines `name`.
fn defines(line: &str, name: &str) -> bool {
    let mut rest = line.trim_start();
    for prefix in [
        "export ",
        "pub(crate) ",
        "pub ",
        "async ",
        "static ",
        "public ",
        "private ",
        "local ",
    ] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest).trim_start();
    }
    let after =
        |s: &str| -> Option<char> { Some(s.strip_prefix(name)?.chars().next().unwrap_or(' ')) };
    let ends_name = |c: char| !(c.is_ascii_alphanumeric() || c == '_');
    for keyword in [
        "def ",
        "function ",
        "fn ",
        "func ",
        "sub ",
        "class ",
        "proc ",
    ] {
        if let Some(r) = rest.strip_prefix(keyword)
            && after(r.trim_start()).is_some_and(ends_name)
        {
            return true;
        }
    }
    for keyword in ["const ", "let ", "var "] {
        if let Some(r) = rest.strip_prefix(keyword)
            && let Some(r) = r.trim_start().strip_prefix(name)
            && r.trim_start().starts_with('=')
        {
            return true;
        }
    }
    // A shell function: `NAME() {` or `NAME () {`.
    rest.strip_prefix(name)
        .is_some_and(|r| r.trim_start().starts_with("()"))
}

/// The definitions of `names` in the workspace's text files, in the order of `names`, at most
/// [`MAX_FOUND`]. Walks the disk: call it off the async runtime ([`find_async`]).
pub fn find(guard: &PathGuard, names: &[String]) -> Vec<Definition> {
    if names.is_empty() {
        return Vec::new();
    }
    let root = guard.root();
    let mut found: Vec<(usize, Definition)> = Vec::new();
    let mut budget = MAX_TOTAL_BYTES;
    let walk = ignore::WalkBuilder::new(root).max_depth(Some(6)).build();
    for entry in walk.filter_map(Result::ok).take(MAX_FILES) {
        let path = entry.path();
        let size = entry.metadata().map_or(u64::MAX, |m| m.len());
        if !entry.file_type().is_some_and(|t| t.is_file())
            || guard.is_hidden(path)
            || size > MAX_FILE_BYTES
        {
            continue;
        }
        if size > budget {
            break;
        }
        budget -= size;
        let Ok(bytes) = std::fs::read(path) else {
            continue;
        };
        if bytes.contains(&0) {
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        for (number, line) in text.lines().enumerate() {
            if let Some(rank) = names.iter().position(|n| defines(line, n)) {
                found.push((rank, definition(guard, path, number + 1, line)));
            }
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.path.cmp(&b.1.path)));
    found.into_iter().take(MAX_FOUND).map(|(_, d)| d).collect()
}

fn definition(guard: &PathGuard, path: &Path, line: usize, text: &str) -> Definition {
    let text = text.trim();
    let mut shown: String = text.chars().take(MAX_LINE_CHARS).collect();
    if shown.len() < text.len() {
        shown.push('…');
    }
    Definition {
        path: guard.display(path),
        line,
        text: shown,
    }
}

/// [`find`] on a blocking thread.
pub async fn find_async(guard: &Arc<PathGuard>, names: Vec<String>) -> Vec<Definition> {
    let guard = Arc::clone(guard);
    tokio::task::spawn_blocking(move || find(&guard, &names))
        .await
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_the_failing_lines_only() {
        let out = "Exit code 1\nFAIL add 2 3: expected 5, got -1\nok   sub 7 4\n\
                   AssertionError: total_price() returned 3\n2 check(s) failed";
        assert_eq!(
            names_in_failure(out),
            ["add", "AssertionError", "total_price", "returned"]
        );
    }

    #[test]
    fn definition_lines_of_several_languages() {
        for line in [
            "add() { echo $(( $1 - $2 )); }",
            "add () {",
            "def add(a, b):",
            "    def add(self, a, b):",
            "function add(a, b) {",
            "export function add(a, b) {",
            "pub fn add(a: i32) -> i32 {",
            "pub(crate) async fn add() {}",
            "func add(a, b int) int {",
            "const add = (a, b) => a - b;",
            "class add:",
        ] {
            assert!(defines(line, "add"), "{line}");
        }
        for line in [
            "check add 2 3 5",
            "result = add(2, 3)",
            "return add(a, b)",
            "def adder(a):",
            "fn add_one() {}",
            "addition() {",
            "# add() is broken",
        ] {
            assert!(!defines(line, "add"), "{line}");
        }
    }

    #[test]
    fn finds_the_definition_not_the_uses() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::write(
            root.join("calc.sh"),
            "#!/usr/bin/env bash\n# calc\nsub() { echo $(( $1 - $2 )); }\n\nadd() { echo $(( $1 - $2 )); }\n",
        )
        .unwrap();
        std::fs::write(root.join("test.sh"), "check add 2 3 5\ncheck sub 7 4 3\n").unwrap();
        std::fs::write(root.join("blob.bin"), b"add() {\0}").unwrap();
        let guard = PathGuard::new(&root, &[]).unwrap();
        let names = names_in_failure("FAIL add 2 3: expected 5, got -1");
        assert_eq!(
            find(&guard, &names),
            [Definition {
                path: "calc.sh".into(),
                line: 5,
                text: "add() { echo $(( $1 - $2 )); }".into()
            }]
        );
        assert!(find(&guard, &[]).is_empty());
    }
}
