//! A line after "command not found" that says what would have run: a script in the working
//! directory named without `./` or `bash`, the tool's name written as the command (`Bash
//! test.sh`), `python` where only `python3` is installed. Small models send these and then
//! repeat them; the shell's message alone does not tell them what to do instead.

use std::path::Path;

/// The hint for a command whose output says its first word was not found, if one helps.
pub(crate) fn not_found(
    command: &str,
    output: &str,
    cwd: &Path,
    path_var: Option<&str>,
) -> Option<String> {
    let word = command.split_whitespace().next()?;
    if !output.contains(&format!("{word}: command not found"))
        && !output.contains(&format!("{word}: not found"))
    {
        return None;
    }
    let rest = command.trim_start()[word.len()..].trim();
    if matches!(word, "Bash" | "bash:" | "Shell" | "Terminal") && !rest.is_empty() {
        return Some(format!(
            "(`{word}` is not a command: the command is the rest. To run a script: `bash {rest}`.)"
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
