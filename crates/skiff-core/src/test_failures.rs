//! Where the code a failing test names is defined, told with the first failed run. With
//! `--compact-prompt`, once a run of the project's tests failed in a task about failing tests,
//! Qwen2.5-Coder-1.5B went on to change `test.sh` in every benchmark run: the output
//! `FAIL add 2 3: expected 5, got -1` names the function `add` but not the file that defines
//! it, and the model did not look for it. So the result of such a run gets a note ([`note`])
//! naming the definitions, in files that are not tests, of the names on the output's failing
//! lines (found by [`skiff_tools::definitions`], which the loop guard uses for a test run that
//! keeps failing): `calc.sh:5: add() { echo $(( $1 - $2 )); }`.

use std::sync::Arc;

use skiff_tools::path_guard::PathGuard;

/// Whether `command` runs the project's tests (`test_command`, possibly with more around it).
pub(crate) fn runs_tests(command: &str, test_command: &str) -> bool {
    let test_command = test_command.trim();
    !test_command.is_empty() && command.contains(test_command)
}

/// The note for a failed run of the tests whose output is `output`: the definitions, in the
/// workspace's files that are not tests, of the names on the output's failing lines. `None`
/// when no failing line names code defined there.
pub(crate) async fn note(guard: &Arc<PathGuard>, output: &str) -> Option<String> {
    let names = skiff_tools::definitions::names_in_failure(output);
    if names.is_empty() {
        return None;
    }
    let found: Vec<String> = skiff_tools::definitions::find_async(guard, names)
        .await
        .into_iter()
        .filter(|d| !crate::test_edits::is_test_file(&d.path))
        .map(|d| format!("\n{}:{}: {}", d.path, d.line, d.text))
        .collect();
    if found.is_empty() {
        return None;
    }
    Some(format!(
        "Note: the failing tests name code defined here:{}\nThe tests are right unless the \
         failure says otherwise: Read that code and Edit it to fix the bug, then run the tests \
         again.",
        found.concat()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUTPUT: &str = "Exit code 1\nFAIL add 2 3: expected 5, got -1\nFAIL add -1 1: \
                          expected 0, got -2\nok   sub 7 4\n2 check(s) failed";

    #[tokio::test]
    async fn the_note_names_the_definition_outside_the_tests() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("calc.sh"),
            "# calc\n\nadd() { echo $(( $1 - $2 )); }\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("test.sh"), "add() { :; }\ncheck add\n").unwrap();
        let guard = Arc::new(PathGuard::new(dir.path(), &[]).unwrap());
        let note = note(&guard, OUTPUT).await.unwrap();
        assert!(
            note.starts_with(
                "Note: the failing tests name code defined here:\ncalc.sh:3: add() { echo $(( $1 - $2 )); }\n"
            ),
            "{note}"
        );
        assert!(!note.contains("test.sh"), "{note}");
        // Nothing failing, or nothing defined: no note.
        assert_eq!(super::note(&guard, "ok add 2 3").await, None);
        assert_eq!(super::note(&guard, "FAIL mul: expected 6").await, None);
    }

    #[test]
    fn the_test_command_within_a_longer_command() {
        assert!(runs_tests("bash test.sh", "bash test.sh"));
        assert!(runs_tests("cd /w && bash test.sh 2>&1", "bash test.sh"));
        assert!(!runs_tests("cat test.sh", "bash test.sh"));
        assert!(!runs_tests("ls", " "));
    }
}
