//! The command line of a task's child `skiff -p`: the batch's fixed flags, the global flags
//! the batch was given, the flags after `--` for every task, then the task's own overrides
//! (which replace a batch-wide flag of the same name). Checked with skiff's own parser before
//! anything runs.

use std::ffi::OsString;
use std::path::Path;

use clap::{ArgAction, CommandFactory, Parser};

use super::task::Task;
use crate::args::Args;

/// Flags the batch sets itself (a task or `--` may not).
const RESERVED: &[&str] = &[
    "-p",
    "--print",
    "--output-format",
    "--input-format",
    "--cwd",
    "-r",
    "--resume",
    "-c",
    "--continue",
    "--fork-session",
    "--replay-user-messages",
    "--permission-prompt-tool",
];

/// The child's arguments (without the program) for `task` in `dir`.
pub fn child_args(
    global: &Args,
    batch_flags: &[String],
    task: &Task,
    dir: &Path,
) -> Result<Vec<OsString>, String> {
    check_reserved(batch_flags, "the flags after --")?;
    check_reserved(&task.args, "the task's `args`")?;
    let mut own: Vec<String> = Vec::new();
    if let Some(m) = &task.model {
        own.extend(["--model".into(), m.clone()]);
    }
    if let Some(t) = task.max_turns {
        own.extend(["--max-turns".into(), t.to_string()]);
    }
    if let Some(b) = task.max_budget_usd {
        own.extend(["--max-budget-usd".into(), b.to_string()]);
    }
    if let Some(m) = &task.permission_mode {
        own.extend(["--permission-mode".into(), m.clone()]);
    }
    for r in &task.allowed_tools {
        own.push(format!("--allowedTools={r}"));
    }
    for r in &task.disallowed_tools {
        own.push(format!("--disallowedTools={r}"));
    }
    match &task.settings {
        Some(serde_json::Value::String(s)) => own.extend(["--settings".into(), s.clone()]),
        Some(v) => own.extend(["--settings".into(), v.to_string()]),
        None => {}
    }
    own.extend(task.args.iter().cloned());

    let mut globals: Vec<String> = Vec::new();
    if let Some(p) = &global.provider {
        globals.extend(["--provider".into(), p.clone()]);
    }
    if let Some(u) = &global.base_url {
        globals.extend(["--base-url".into(), u.clone()]);
    }
    if let Some(s) = &global.settings {
        globals.extend(["--settings".into(), s.clone()]);
    }
    if global.trust {
        globals.push("--trust".into());
    }
    let later: Vec<String> = batch_flags.iter().chain(own.iter()).cloned().collect();
    let mut shared = without_overridden(&globals, &later);
    shared.extend(without_overridden(batch_flags, &own));

    let mut argv: Vec<OsString> = ["-p", "--output-format", "stream-json", "--verbose", "--cwd"]
        .iter()
        .map(OsString::from)
        .collect();
    argv.push(dir.as_os_str().to_owned());
    argv.extend(shared.into_iter().map(OsString::from));
    argv.extend(own.into_iter().map(OsString::from));
    validate(&argv)?;
    Ok(argv)
}

fn check_reserved(flags: &[String], what: &str) -> Result<(), String> {
    for f in flags {
        let name = f.split('=').next().unwrap_or(f);
        if RESERVED.contains(&name) {
            return Err(format!(
                "{what} may not contain {name} (skiff batch sets it for every task)"
            ));
        }
    }
    Ok(())
}

/// How skiff's parser treats the flag `name` (`--x` or `-x`): (known, takes a value, repeatable).
fn flag_kind(name: &str) -> (bool, bool, bool) {
    let cmd = Args::command();
    let found = cmd.get_arguments().find(|a| {
        if let Some(long) = name.strip_prefix("--") {
            a.get_long() == Some(long) || a.get_all_aliases().is_some_and(|al| al.contains(&long))
        } else if let Some(short) = name.strip_prefix('-') {
            let mut cs = short.chars();
            matches!((cs.next(), cs.next()), (Some(c), None) if a.get_short() == Some(c))
        } else {
            false
        }
    });
    match found {
        Some(a) => {
            let action = a.get_action();
            let repeatable = matches!(action, ArgAction::Append | ArgAction::Count);
            (true, action.takes_values(), repeatable)
        }
        None => (false, false, false),
    }
}

/// `base` without the flags that `over` sets again (a flag that may repeat is kept).
fn without_overridden(base: &[String], over: &[String]) -> Vec<String> {
    let names: Vec<&str> = over
        .iter()
        .filter(|t| t.starts_with('-'))
        .map(|t| t.split('=').next().unwrap_or(t))
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < base.len() {
        let tok = &base[i];
        let name = tok.split('=').next().unwrap_or(tok);
        let (known, takes_value, repeatable) = flag_kind(name);
        let group_len = if known && takes_value && !tok.contains('=') && i + 1 < base.len() {
            2
        } else {
            1
        };
        if tok.starts_with('-') && names.contains(&name) && !repeatable {
            i += group_len;
            continue;
        }
        out.extend(base[i..(i + group_len).min(base.len())].iter().cloned());
        i += group_len;
    }
    out
}

/// The child command line must parse as skiff's own would, with no positional prompt.
fn validate(argv: &[OsString]) -> Result<(), String> {
    let all = std::iter::once(OsString::from("skiff")).chain(argv.iter().cloned());
    match Args::try_parse_from(all) {
        Ok(a) if a.prompt.is_some() || a.command.is_some() => Err(format!(
            "unexpected argument {:?} in the task's flags (the prompt goes in `prompt`)",
            a.prompt.unwrap_or_default()
        )),
        Ok(_) => Ok(()),
        Err(e) => {
            let msg = e.to_string();
            let first = msg.lines().next().unwrap_or("invalid flags").trim();
            Err(format!(
                "the task's flags are not valid: {}",
                first.trim_start_matches("error: ")
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    fn task(json: &str) -> Task {
        serde_json::from_str(json).unwrap()
    }

    fn global() -> Args {
        Args::try_parse_from(["skiff", "--provider", "anthropic", "--trust"]).unwrap()
    }

    fn strings(v: Vec<OsString>) -> Vec<String> {
        v.into_iter().map(|s| s.into_string().unwrap()).collect()
    }

    #[test]
    fn task_overrides_replace_batch_flags() {
        let t = task(
            r#"{"id":"a","repo":"r","prompt":"p","model":"opus","max_turns":4,
                "allowed_tools":["Bash(git:*)"],"settings":{"env":{"A":"1"}}}"#,
        );
        let flags: Vec<String> = [
            "--model",
            "haiku",
            "--allowedTools",
            "Edit",
            "--max-budget-usd=2",
        ]
        .map(String::from)
        .to_vec();
        let argv = strings(child_args(&global(), &flags, &t, Path::new("/w/a")).unwrap());
        let joined = argv.join(" ");
        assert!(joined.starts_with("-p --output-format stream-json --verbose --cwd /w/a"));
        assert!(!joined.contains("haiku"), "{joined}");
        assert!(joined.contains("--model opus"), "{joined}");
        assert!(joined.contains("--allowedTools Edit"), "{joined}");
        assert!(joined.contains("--allowedTools=Bash(git:*)"), "{joined}");
        assert!(joined.contains("--max-budget-usd=2"), "{joined}");
        assert!(joined.contains("--provider anthropic") && joined.contains("--trust"));
        assert!(
            joined.contains(r#"--settings {"env":{"A":"1"}}"#),
            "{joined}"
        );
    }

    #[test]
    fn bad_and_reserved_flags_are_errors() {
        let t = task(r#"{"id":"a","repo":"r","prompt":"p","args":["--no-such-flag"]}"#);
        let e = child_args(&global(), &[], &t, Path::new("/w")).unwrap_err();
        assert!(e.contains("--no-such-flag"), "{e}");
        let t = task(r#"{"id":"a","repo":"r","prompt":"p","args":["--cwd=/etc"]}"#);
        let e = child_args(&global(), &[], &t, Path::new("/w")).unwrap_err();
        assert!(e.contains("--cwd"), "{e}");
        let t = task(r#"{"id":"a","repo":"r","prompt":"p","args":["stray"]}"#);
        let e = child_args(&global(), &[], &t, Path::new("/w")).unwrap_err();
        assert!(e.contains("stray"), "{e}");
        let t = task(r#"{"id":"a","repo":"r","prompt":"p","permission_mode":"yolo"}"#);
        assert!(child_args(&global(), &[], &t, Path::new("/w")).is_err());
        let e = child_args(
            &global(),
            &["-p".into()],
            &task(r#"{"id":"a","repo":"r","prompt":"p"}"#),
            Path::new("/w"),
        )
        .unwrap_err();
        assert!(e.contains("after --"), "{e}");
    }
}
