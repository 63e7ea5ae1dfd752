//! Small models that make failing tests pass by changing the tests. Asked "the tests fail,
//! find the bug and fix it", Qwen2.5-Coder-1.5B changed `test.sh` (the expected value, the
//! call, the test's name) in most failed benchmark runs and then answered: the first change
//! of a file ended the forced calls ([`crate::act_nudge::forces_call`]). With
//! `--compact-prompt`, a change to a test file ([`is_test_file`]) in a task about failing tests
//! ([`about_failing_tests`]) that does not name that file gets a note with its result
//! ([`note`]): fix the code under test, and how to undo this change (for an Edit, the exact
//! call, which a small model copies as offered). It does not count as the change the task
//! asked for, so the calls go on. The change itself stands: a test can be wrong, and the note
//! says so.

use serde_json::Value;

/// Words that make a task about tests one about tests that fail (lower case).
const FAILING: [&str; 6] = ["fail", "pass", "bug", "broken", "error", "fix"];

/// Whether `task` is about failing tests: it speaks of tests ("test", "tests", "testing", …)
/// and of failing, passing, a bug or a fix.
pub(crate) fn about_failing_tests(task: &str) -> bool {
    let lower = task.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    words.iter().any(|w| w.starts_with("test"))
        && words
            .iter()
            .any(|w| FAILING.iter().any(|f| w.starts_with(f)))
}

/// Whether `path` is a test file by the usual conventions: a file named `test…` or
/// `…_test.ext`, `…_spec.ext`, `….test.ext`, `….spec.ext`, or one under a `test`, `tests`,
/// `spec`, `__tests__` or `testdata` directory.
pub(crate) fn is_test_file(path: &str) -> bool {
    let lower = path.to_lowercase();
    let mut parts: Vec<&str> = lower.split(['/', '\\']).filter(|p| !p.is_empty()).collect();
    let Some(name) = parts.pop() else {
        return false;
    };
    if parts
        .iter()
        .any(|d| matches!(*d, "test" | "tests" | "spec" | "__tests__" | "testdata"))
    {
        return true;
    }
    let stem = name.split('.').next().unwrap_or_default();
    stem.starts_with("test")
        || stem.ends_with("_test")
        || stem.ends_with("_spec")
        || stem.ends_with("-test")
        || name.contains(".test.")
        || name.contains(".spec.")
}

/// The note for a successful `tool` call with `input` that changed a file, in a run whose
/// `task` is this: `None` unless it changed a test file in a task about failing tests that
/// does not name the file (a task that names it asks for that change).
pub(crate) fn note(tool: &str, input: &Value, task: &str) -> Option<String> {
    let path = input
        .get("file_path")
        .or_else(|| input.get("notebook_path"))?
        .as_str()?;
    if !crate::act_nudge::edits(tool) || !is_test_file(path) || !about_failing_tests(task) {
        return None;
    }
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    if task.contains(name) {
        return None;
    }
    let mut note = format!(
        "Note: {name} is a test. The task is to make the tests pass by fixing the code they \
         test, not by changing the tests (unless the test itself is wrong)."
    );
    let swapped = (tool == "Edit")
        .then(|| {
            let old = input.get("old_string")?.as_str()?;
            let new = input.get("new_string")?.as_str()?;
            let all = input.get("replace_all").and_then(Value::as_bool) == Some(true);
            (!all && !new.is_empty()).then(
                || serde_json::json!({"file_path": path, "old_string": new, "new_string": old}),
            )
        })
        .flatten();
    if let Some(undo) = swapped {
        note.push_str(&format!(" To undo this change: Edit {undo}."));
    }
    note.push_str(
        " Then run the tests with Bash, Read the code the failure names and Edit that code.",
    );
    Some(note)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const TASK: &str = "The tests fail. Find the bug and fix it.";

    #[test]
    fn test_files_by_the_usual_conventions() {
        for path in [
            "test.sh",
            "/w/test_calc.py",
            "src/calc_test.go",
            "lib/calc.test.ts",
            "app/user.spec.js",
            "tests/integration.rs",
            "pkg/__tests__/x.js",
            "/w/spec/models/user_spec.rb",
            "TestCalc.java",
        ] {
            assert!(is_test_file(path), "{path}");
        }
        for path in [
            "calc.sh",
            "src/main.rs",
            "README.md",
            "/w/contest/entry.py",
            "latest.txt",
            "",
        ] {
            assert!(!is_test_file(path), "{path}");
        }
    }

    #[test]
    fn tasks_about_failing_tests() {
        assert!(about_failing_tests(TASK));
        assert!(about_failing_tests("make the test suite pass"));
        assert!(about_failing_tests("Testing is broken, fix it"));
        assert!(!about_failing_tests("Add a test for mul"));
        assert!(!about_failing_tests("Fix the bug in calc.sh"));
        assert!(!about_failing_tests("contest results are wrong, fix them"));
    }

    #[test]
    fn an_edit_of_a_test_offers_its_undo_and_the_way_to_the_fix() {
        let input = json!({
            "file_path": "/w/test.sh",
            "old_string": "check \"add 2 3\" 5",
            "new_string": "check \"add 2 3\" -1",
        });
        let note = note("Edit", &input, TASK).expect("a note");
        assert!(note.starts_with("Note: test.sh is a test."), "{note}");
        let undo = json!({
            "file_path": "/w/test.sh",
            "old_string": "check \"add 2 3\" -1",
            "new_string": "check \"add 2 3\" 5",
        });
        assert!(
            note.contains(&format!("To undo this change: Edit {undo}.")),
            "{note}"
        );
        assert!(note.ends_with("Edit that code."), "{note}");
    }

    #[test]
    fn no_note_where_the_change_of_a_test_is_what_was_asked_or_not_a_test() {
        let edit = json!({"file_path": "/w/test.sh", "old_string": "a", "new_string": "b"});
        // The task names the file.
        assert_eq!(
            note("Edit", &edit, "test.sh fails: fix the typo in test.sh"),
            None
        );
        // Not a task about failing tests.
        assert_eq!(
            note("Edit", &edit, "Add a check for mul to the tests"),
            None
        );
        // Not a test file, not a change.
        let code = json!({"file_path": "/w/calc.sh", "old_string": "-", "new_string": "+"});
        assert_eq!(note("Edit", &code, TASK), None);
        assert_eq!(
            note("Read", &json!({"file_path": "/w/test.sh"}), TASK),
            None
        );
        // A Write has no undo to offer, only the way to the fix.
        let write = json!({"file_path": "/w/test.sh", "content": "echo ok"});
        let note = note("Write", &write, TASK).expect("a note");
        assert!(!note.contains("undo"), "{note}");
        // An Edit of all occurrences or to nothing: no undo either (it would not restore).
        let all = json!({"file_path": "/w/test.sh", "old_string": "a", "new_string": "b",
                         "replace_all": true});
        assert!(
            !super::note("Edit", &all, TASK)
                .unwrap_or_default()
                .contains("undo")
        );
    }
}
