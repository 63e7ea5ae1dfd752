//! The command that runs a project's tests, guessed from the names in its top directory (and
//! the test targets or scripts of a `Makefile` or `package.json` there), for
//! `--compact-prompt`. Asked "the tests fail, find the bug and fix it", Qwen2.5-Coder-1.5B
//! never ran the tests in most benchmark runs: it searched `test.sh` for "error" and then
//! changed it. The environment block names the command, and the first call in such a task is
//! held to a run of it ([`holds_to_tests`]; told the command and held to
//! Bash, the model still wrote `bash -c 'test.sh'`), so the model sees the failure the tests
//! print, which names the code to fix.

use std::path::Path;

/// Largest `Makefile` or `package.json` read for its test target or script, in bytes.
const MAX_READ: u64 = 64 * 1024;

/// Shell scripts that run a project's tests, by name.
const SCRIPTS: [&str; 6] = [
    "test.sh",
    "tests.sh",
    "run_tests.sh",
    "run-tests.sh",
    "runtests.sh",
    "check.sh",
];

/// The command that runs the tests of the project in `dir`, whose top-level entry `names`
/// were read (directories ending `/`): a `Makefile`'s `test` or `check` target, a test script
/// ([`SCRIPTS`]), then the convention of the project's manifest (`cargo test`, `go test ./...`,
/// the package manager's `test` for a `package.json` with a test script, `python -m pytest`,
/// …). `None` when nothing names one.
pub(crate) fn detect(dir: &Path, names: &[String]) -> Option<String> {
    let has = |name: &str| names.iter().any(|n| n == name);
    if let Some(makefile) = ["GNUmakefile", "makefile", "Makefile"]
        .into_iter()
        .find(|m| has(m))
        && let Some(target) = read_small(&dir.join(makefile)).and_then(|m| make_target(&m))
    {
        return Some(format!("make {target}"));
    }
    if let Some(script) = SCRIPTS.into_iter().find(|s| has(s)) {
        return Some(format!("bash {script}"));
    }
    if has("Cargo.toml") {
        return Some("cargo test".to_owned());
    }
    if has("go.mod") {
        return Some("go test ./...".to_owned());
    }
    if has("package.json")
        && read_small(&dir.join("package.json")).is_some_and(|p| has_test_script(&p))
    {
        let runner = if has("pnpm-lock.yaml") {
            "pnpm"
        } else if has("yarn.lock") {
            "yarn"
        } else if has("bun.lock") || has("bun.lockb") {
            "bun run"
        } else {
            "npm"
        };
        return Some(format!("{runner} test"));
    }
    let python = [
        "pytest.ini",
        "conftest.py",
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "tox.ini",
    ];
    if python.into_iter().any(has) {
        return Some("python -m pytest".to_owned());
    }
    let manifests = [
        ("mix.exs", "mix test"),
        ("deno.json", "deno test"),
        ("pom.xml", "mvn test"),
        ("gradlew", "./gradlew test"),
        ("build.gradle", "gradle test"),
        ("build.gradle.kts", "gradle test"),
        ("Rakefile", "rake test"),
    ];
    manifests
        .into_iter()
        .find(|(m, _)| has(m))
        .map(|(_, command)| command.to_owned())
}

/// A file's text when it is a regular file of at most [`MAX_READ`] bytes. A symbolic link is
/// not followed: a repository's `Makefile` linked to a file elsewhere (the user's keys, a FIFO
/// that never ends) is not read.
fn read_small(path: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_READ {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

/// The `test` (else `check`) target a makefile defines (a line starting `test:`).
fn make_target(makefile: &str) -> Option<&'static str> {
    let defines = |target: &str| {
        makefile.lines().any(|l| {
            l.strip_prefix(target)
                .is_some_and(|rest| rest.trim_start().starts_with(':') && !rest.contains(":="))
        })
    };
    ["test", "check"].into_iter().find(|t| defines(t))
}

/// Whether a `package.json` has a `test` script other than `npm init`'s placeholder.
fn has_test_script(package: &str) -> bool {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(package) else {
        return false;
    };
    value
        .pointer("/scripts/test")
        .and_then(serde_json::Value::as_str)
        .is_some_and(|s| !s.trim().is_empty() && !s.contains("no test specified"))
}

/// Requests, at the start of a run, held to a call of Bash by [`holds_to_tests`].
pub(crate) const TEST_RUN_CALLS: u32 = 2;

/// Whether the next forced call ([`crate::act_nudge::forces_call`]), in a project whose test command is known,
/// should be a run of the tests (a call of Bash with that command, where the server can be
/// held to it): the `task` is about failing tests
/// ([`crate::test_edits::about_failing_tests`]), nothing ran or changed yet in this run, and
/// fewer than [`TEST_RUN_CALLS`] requests were forced. Qwen2.5-Coder-1.5B, asked to fix
/// failing tests, searched and changed the tests without ever running them in most benchmark
/// runs; held to Bash alone, it wrote `bash -c 'test.sh'` in each of three runs. The failure
/// the tests print names the code to fix.
pub(crate) fn holds_to_tests(task: Option<&str>, actions: usize, forced: u32) -> bool {
    actions == 0
        && forced < TEST_RUN_CALLS
        && task.is_some_and(crate::test_edits::about_failing_tests)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detect_in(files: &[(&str, &str)]) -> Option<String> {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        let names: Vec<String> = files.iter().map(|(n, _)| (*n).to_owned()).collect();
        detect(dir.path(), &names)
    }

    #[test]
    fn the_conventions_of_each_kind_of_project() {
        assert_eq!(
            detect_in(&[("calc.sh", ""), ("test.sh", ""), ("README.md", "")]).as_deref(),
            Some("bash test.sh")
        );
        assert_eq!(
            detect_in(&[("Cargo.toml", "")]).as_deref(),
            Some("cargo test")
        );
        assert_eq!(
            detect_in(&[("go.mod", "")]).as_deref(),
            Some("go test ./...")
        );
        assert_eq!(
            detect_in(&[("pyproject.toml", "")]).as_deref(),
            Some("python -m pytest")
        );
        assert_eq!(detect_in(&[("pom.xml", "")]).as_deref(), Some("mvn test"));
        assert_eq!(detect_in(&[("README.md", ""), ("main.c", "")]), None);
    }

    #[test]
    fn a_makefile_counts_only_with_a_test_target() {
        let make = "all: build\n\ntest: build\n\t./run\n";
        assert_eq!(
            detect_in(&[("Makefile", make), ("Cargo.toml", "")]).as_deref(),
            Some("make test")
        );
        let check = "CHECK := x\ncheck:\n\t./run\n";
        assert_eq!(
            detect_in(&[("Makefile", check)]).as_deref(),
            Some("make check")
        );
        // A variable named like a target, or no target: the manifest decides.
        let none = "test := 1\nall:\n\tcc x.c\n";
        assert_eq!(
            detect_in(&[("Makefile", none), ("Cargo.toml", "")]).as_deref(),
            Some("cargo test")
        );
    }

    #[test]
    fn a_package_needs_a_real_test_script() {
        let real = r#"{"scripts": {"test": "vitest run"}}"#;
        assert_eq!(
            detect_in(&[("package.json", real)]).as_deref(),
            Some("npm test")
        );
        assert_eq!(
            detect_in(&[("package.json", real), ("pnpm-lock.yaml", "")]).as_deref(),
            Some("pnpm test")
        );
        let placeholder = r#"{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}"#;
        assert_eq!(detect_in(&[("package.json", placeholder)]), None);
        assert_eq!(detect_in(&[("package.json", "not json")]), None);
    }

    #[test]
    fn a_directory_or_huge_file_named_like_a_manifest_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("Makefile")).unwrap();
        std::fs::write(dir.path().join("test.sh"), "").unwrap();
        let names = ["Makefile".to_owned(), "test.sh".to_owned()];
        assert_eq!(detect(dir.path(), &names).as_deref(), Some("bash test.sh"));
        let big = format!("test:\n{}", "#".repeat(MAX_READ as usize));
        std::fs::remove_dir(dir.path().join("Makefile")).unwrap();
        std::fs::write(dir.path().join("Makefile"), big).unwrap();
        assert_eq!(detect(dir.path(), &names).as_deref(), Some("bash test.sh"));
    }

    #[cfg(unix)]
    #[test]
    fn a_makefile_linked_out_of_the_project_or_to_a_fifo_is_not_read() {
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("id_rsa");
        std::fs::write(&secret, "test:\n\tcat key\n").unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(&secret, dir.path().join("Makefile")).unwrap();
        let names = ["Makefile".to_owned(), "Cargo.toml".to_owned()];
        assert_eq!(detect(dir.path(), &names).as_deref(), Some("cargo test"));
        let fifo = dir.path().join("package.json");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let names = ["package.json".to_owned()];
        assert_eq!(detect(dir.path(), &names), None);
    }
}
