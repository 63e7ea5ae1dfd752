//! The task file: one JSON task per line, checked line by line so one bad line becomes an error
//! result naming it while the other tasks run.

use std::collections::HashSet;
use std::path::Path;

use serde::Deserialize;

/// One task of the file, as written.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Task {
    /// Unique id; names the task's work directory and its result.
    pub id: String,
    /// A local git repository (path) or a git URL.
    pub repo: String,
    /// Branch, tag or commit to start from (default: the repository's HEAD).
    #[serde(default, rename = "ref")]
    pub git_ref: Option<String>,
    /// The prompt.
    pub prompt: String,
    /// Model id or alias.
    #[serde(default)]
    pub model: Option<String>,
    /// Maximum model calls.
    #[serde(default, alias = "maxTurns")]
    pub max_turns: Option<u32>,
    /// Stop once the estimated cost reaches this many USD.
    #[serde(
        default,
        alias = "maxBudgetUsd",
        alias = "budget_usd",
        alias = "budget"
    )]
    pub max_budget_usd: Option<f64>,
    /// Wall-clock limit of the run in seconds.
    #[serde(default, alias = "timeout", alias = "timeoutSecs")]
    pub timeout_secs: Option<f64>,
    /// Permission mode (default, acceptEdits, plan, bypassPermissions, dontAsk).
    #[serde(default, alias = "permissionMode")]
    pub permission_mode: Option<String>,
    /// Permission rules allowed without asking.
    #[serde(default, alias = "allowedTools")]
    pub allowed_tools: Vec<String>,
    /// Permission rules denied.
    #[serde(default, alias = "disallowedTools")]
    pub disallowed_tools: Vec<String>,
    /// Extra settings: a JSON object, or a file path / JSON string as `--settings` takes.
    #[serde(default)]
    pub settings: Option<serde_json::Value>,
    /// Any other skiff flags for this task (e.g. `["--provider", "script", "--script", "s.json"]`).
    #[serde(default)]
    pub args: Vec<String>,
}

/// A line of the task file that is not a usable task.
#[derive(Debug, Clone, PartialEq)]
pub struct BadLine {
    /// 1-based line number.
    pub line: usize,
    /// The task's id when the line had a readable one.
    pub id: Option<String>,
    /// What is wrong.
    pub message: String,
}

/// One non-blank line of the task file: its position and either a task or what is wrong.
#[derive(Debug, Clone)]
pub struct Entry {
    /// 0-based index among the non-blank lines (a Kubernetes Indexed Job's completion index).
    pub index: usize,
    /// 1-based line number in the file.
    pub line: usize,
    /// The task, or why the line is not one.
    pub task: Result<Task, BadLine>,
}

impl Entry {
    /// The key of this entry in the results file: the task id, or `line N` when it has none.
    pub fn key(&self) -> String {
        match &self.task {
            Ok(t) => t.id.clone(),
            Err(b) => match &b.id {
                Some(id) => id.clone(),
                None => line_key(b.line),
            },
        }
    }
}

/// The results-file key of a line without a readable id.
pub fn line_key(line: usize) -> String {
    format!("line {line}")
}

/// Read and check the task file.
pub fn load(path: &Path) -> anyhow::Result<Vec<Entry>> {
    let bytes = std::fs::read(path)
        .map_err(|e| anyhow::anyhow!("cannot read the task file {}: {e}", path.display()))?;
    Ok(parse(&String::from_utf8_lossy(&bytes)))
}

/// Parse the task file's text: blank lines are skipped; ids must be unique.
pub fn parse(text: &str) -> Vec<Entry> {
    let mut seen = HashSet::new();
    let mut entries = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = n + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let task = parse_line(raw, line).and_then(|t| {
            if seen.insert(t.id.clone()) {
                Ok(t)
            } else {
                Err(BadLine {
                    line,
                    id: None,
                    message: format!("duplicate task id {:?} (ids must be unique)", t.id),
                })
            }
        });
        entries.push(Entry {
            index: entries.len(),
            line,
            task,
        });
    }
    entries
}

fn parse_line(raw: &str, line: usize) -> Result<Task, BadLine> {
    let bad = |id: Option<String>, message: String| BadLine { line, id, message };
    let value: serde_json::Value = serde_json::from_str(raw)
        .map_err(|e| bad(None, format!("line {line} is not valid JSON: {e}")))?;
    let id = value
        .get("id")
        .and_then(|v| v.as_str())
        .filter(|id| valid_id(id).is_ok())
        .map(str::to_owned);
    let task: Task = serde_json::from_value(value)
        .map_err(|e| bad(id.clone(), format!("line {line} is not a valid task: {e}")))?;
    valid_id(&task.id).map_err(|m| bad(None, format!("line {line}: {m}")))?;
    check(&task).map_err(|m| bad(id, format!("line {line}: {m}")))?;
    Ok(task)
}

/// An id must be usable as one directory name: 1–100 ASCII letters, digits, `-`, `_`, `.`,
/// not starting with `.` or `-`.
pub fn valid_id(id: &str) -> Result<(), String> {
    let ok = !id.is_empty()
        && id.len() <= 100
        && !id.starts_with('.')
        && !id.starts_with('-')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "task id {id:?} is not allowed: use 1-100 letters, digits, '-', '_' or '.', not starting with '.' or '-'"
        ))
    }
}

fn check(task: &Task) -> Result<(), String> {
    if task.repo.trim().is_empty() {
        return Err("`repo` is empty".into());
    }
    if task.repo.starts_with('-') {
        return Err(format!("`repo` {:?} may not start with '-'", task.repo));
    }
    if let Some(r) = &task.git_ref
        && (r.is_empty() || r.starts_with('-') || r.chars().any(char::is_control))
    {
        return Err(format!("`ref` {r:?} is not a usable git ref"));
    }
    if task.prompt.trim().is_empty() {
        return Err("`prompt` is empty".into());
    }
    if let Some(t) = task.timeout_secs
        && !(t.is_finite() && t > 0.0 && t <= 7.0 * 86_400.0)
    {
        return Err(format!(
            "`timeout_secs` {t} must be a positive number of seconds"
        ));
    }
    if let Some(b) = task.max_budget_usd
        && !(b.is_finite() && b > 0.0)
    {
        return Err(format!("`max_budget_usd` {b} must be a positive number"));
    }
    if let Some(s) = &task.settings
        && !(s.is_object() || s.is_string())
    {
        return Err("`settings` must be a JSON object, a file path or a JSON string".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    #[test]
    fn parses_tasks_and_reports_bad_lines_by_number() {
        let text = concat!(
            r#"{"id":"a","repo":"/r","prompt":"p","maxTurns":3,"allowed_tools":["Edit"]}"#,
            "\n\n",
            "{not json\n",
            r#"{"id":"../x","repo":"/r","prompt":"p"}"#,
            "\n",
            r#"{"id":"a","repo":"/r","prompt":"again"}"#,
            "\n",
            r#"{"id":"b","repo":"/r","prompt":"p","colour":"red"}"#,
            "\n",
            r#"{"id":"c","repo":"-oops","prompt":"p"}"#,
            "\n",
        );
        let entries = parse(text);
        assert_eq!(entries.len(), 6);
        let a = entries[0].task.as_ref().unwrap();
        assert_eq!(a.max_turns, Some(3));
        assert_eq!(a.allowed_tools, vec!["Edit".to_string()]);
        let bad: Vec<&BadLine> = entries[1..]
            .iter()
            .map(|e| e.task.as_ref().unwrap_err())
            .collect();
        assert_eq!(bad[0].line, 3);
        assert!(bad[0].message.contains("line 3"), "{}", bad[0].message);
        assert!(bad[1].message.contains("not allowed"), "{}", bad[1].message);
        assert_eq!(entries[2].key(), "line 4");
        assert!(bad[2].message.contains("duplicate"), "{}", bad[2].message);
        assert!(bad[3].message.contains("colour"), "{}", bad[3].message);
        assert_eq!(bad[3].id.as_deref(), Some("b"));
        assert!(bad[4].message.contains("'-'"), "{}", bad[4].message);
        assert_eq!(entries[5].index, 5);
        assert_eq!(entries[5].line, 7);
    }

    #[test]
    fn ids_are_directory_names() {
        for bad in ["", ".", "..", "../x", "a/b", "-x", ".hidden", "a b", "é"] {
            assert!(valid_id(bad).is_err(), "{bad}");
        }
        for good in ["a", "task-1", "T_2.v3"] {
            assert!(valid_id(good).is_ok(), "{good}");
        }
    }
}
