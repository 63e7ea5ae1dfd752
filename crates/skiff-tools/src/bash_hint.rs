//! A line after "command not found" that says what would have run: a script in the working
//! directory named without `./` or `bash`, the tool's name written as the command (`Bash
//! test.sh`, `Grep -n x *.sh`, also inside `bash -c '…'`), `python` where only `python3` is
//! installed. Small models send these and then
//! repeat them; the shell's message alone does not tell them what to do instead.

use std::path::Path;

/// skiff's own tools, which small models also write as shell commands (`Grep -n x *.sh`).
const TOOL_NAMES: &[&str] = &[
    "Read",
    "Write",
    "Edit",
    "MultiEdit",
    "Glob",
    "Grep",
    "LS",
    "WebFetch",
    "TodoWrite",
    "NotebookEdit",
    "Task",
];

/// The program the shell's message says was not found (`bash: line 1: Grep: command not
/// found`, `sh: 1: python: not found`).
fn missing_program(output: &str) -> Option<&str> {
    output.lines().find_map(|line| {
        let parts: Vec<&str> = line.split(": ").collect();
        let last = parts.iter().rposition(|p| {
            let p = p.trim_end();
            p == "command not found" || p == "not found"
        })?;
        let word = parts.get(last.checked_sub(1)?)?.trim();
        (!word.is_empty() && !word.contains(char::is_whitespace)).then_some(word)
    })
}

/// The hint for a command whose output says a program it runs was not found, if one helps.
pub(crate) fn not_found(
    command: &str,
    output: &str,
    cwd: &Path,
    path_var: Option<&str>,
) -> Option<String> {
    let word = missing_program(output)?;
    // What follows the program in the command, when the command starts with it.
    let rest = command
        .trim_start()
        .strip_prefix(word)
        .filter(|r| r.is_empty() || r.starts_with(char::is_whitespace))
        .map(str::trim);
    if matches!(word, "Bash" | "bash:" | "Shell" | "Terminal")
        && let Some(rest) = rest.filter(|r| !r.is_empty())
    {
        return Some(format!(
            "(`{word}` is not a command: the command is the rest. To run a script: `bash {rest}`.)"
        ));
    }
    if TOOL_NAMES.contains(&word) {
        let lower = word.to_ascii_lowercase();
        let shell = if on_path(&lower, path_var) {
            format!(", or the `{lower}` command (lower case) in Bash")
        } else {
            String::new()
        };
        return Some(format!(
            "({word} is one of your tools, not a shell command: call the {word} tool itself, \
             not through Bash{shell}.)"
        ));
    }
    if !word.contains('/') && cwd.join(word).is_file() {
        return Some(format!(
            "({word} is a file in the working directory, not a command on PATH: run it as \
             `bash {word}`, or `./{word}` if it is executable.)"
        ));
    }
    let alternative = match word {
        "python" => "python3",
        "pip" => "pip3",
        _ => return None,
    };
    let rest = rest.unwrap_or_default();
    on_path(alternative, path_var).then(|| {
        format!(
            "({word} is not installed here; {alternative} is: `{alternative}{}`.)",
            {
                if rest.is_empty() {
                    String::new()
                } else {
                    format!(" {rest}")
                }
            }
        )
    })
}

fn on_path(program: &str, path_var: Option<&str>) -> bool {
    path_var
        .unwrap_or_default()
        .split(':')
        .filter(|d| !d.is_empty())
        .any(|d| Path::new(d).join(program).is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_in_the_working_directory_is_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("test.sh"), "echo ok\n").unwrap();
        let hint = not_found(
            "test.sh",
            "/usr/bin/bash: line 1: test.sh: command not found",
            dir.path(),
            None,
        )
        .unwrap();
        assert!(hint.contains("`bash test.sh`"), "{hint}");
        assert!(not_found("test.sh", "ok", dir.path(), None).is_none());
        assert!(
            not_found(
                "nothere.sh",
                "bash: nothere.sh: command not found",
                dir.path(),
                None
            )
            .is_none()
        );
    }

    #[test]
    fn another_tool_written_as_a_command_even_inside_bash_c() {
        let dir = tempfile::tempdir().unwrap();
        let bin = tempfile::tempdir().unwrap();
        std::fs::write(bin.path().join("grep"), "").unwrap();
        let path = bin.path().display().to_string();
        let hint = not_found(
            "bash -c 'Grep -n \"fail\" *.sh'",
            "Exit code 127\nbash: line 1: Grep: command not found",
            dir.path(),
            Some(&path),
        )
        .unwrap();
        assert!(hint.contains("Grep is one of your tools"), "{hint}");
        assert!(hint.contains("the `grep` command (lower case)"), "{hint}");
        let hint = not_found("Read calc.sh", "sh: 1: Read: not found", dir.path(), None).unwrap();
        assert!(hint.contains("call the Read tool itself"), "{hint}");
        assert!(!hint.contains("lower case"), "{hint}");
        // A program that is simply missing gets nothing.
        assert_eq!(
            not_found(
                "cargo test",
                "bash: line 1: cargo: command not found",
                dir.path(),
                None
            ),
            None
        );
    }

    #[test]
    fn the_tool_name_as_a_command_and_python() {
        let dir = tempfile::tempdir().unwrap();
        let hint = not_found(
            "Bash test.sh",
            "bash: line 1: Bash: command not found",
            dir.path(),
            None,
        )
        .unwrap();
        assert!(hint.contains("`bash test.sh`"), "{hint}");
        let bin = tempfile::tempdir().unwrap();
        std::fs::write(bin.path().join("python3"), "").unwrap();
        let path = bin.path().display().to_string();
        let hint = not_found(
            "python -m pytest",
            "sh: 1: python: not found",
            dir.path(),
            Some(&path),
        )
        .unwrap();
        assert!(hint.contains("`python3 -m pytest`"), "{hint}");
        assert!(
            not_found(
                "python x.py",
                "python: command not found",
                dir.path(),
                Some("/nonexistent")
            )
            .is_none()
        );
    }
}
