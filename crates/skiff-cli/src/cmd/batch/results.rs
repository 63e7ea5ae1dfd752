//! A task's result line and the results file: appended one line per finished task; reading it
//! back tells which tasks are done (resume).

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::worktree::Change;

/// How a task ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The agent finished its answer.
    Success,
    /// It could not run or ended with an error (a bad line, a clone that failed, an API error).
    Error,
    /// It ran past its time limit and was stopped.
    Timeout,
    /// It reached its budget (`max_budget_usd`).
    Budget,
    /// It reached its turn limit (`max_turns`).
    MaxTurns,
    /// The batch was interrupted (Ctrl-C, SIGTERM) while it ran; a rerun runs it again.
    Interrupted,
    /// The agent finished, but some of its tool calls were denied (no approval in a batch, a
    /// deny rule, a hook): what it was asked may not be done (`permission_denials` says what).
    PermissionDenied,
}

impl Status {
    /// The word used in the results file and the progress lines.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Success => "success",
            Status::Error => "error",
            Status::Timeout => "timeout",
            Status::Budget => "budget",
            Status::MaxTurns => "max_turns",
            Status::Interrupted => "interrupted",
            Status::PermissionDenied => "permission_denied",
        }
    }

    /// The status of a child's stream-json `result` frame subtype.
    pub fn from_subtype(subtype: &str) -> Status {
        match subtype {
            "success" => Status::Success,
            "error_max_turns" => Status::MaxTurns,
            "error_max_budget_usd" => Status::Budget,
            _ => Status::Error,
        }
    }
}

/// One line of the results file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskResult {
    /// The task's id (null for a line without a readable one).
    pub id: Option<String>,
    /// 0-based index of the task among the file's non-blank lines.
    pub index: usize,
    /// 1-based line number in the task file.
    pub line: usize,
    /// How it ended.
    pub status: Status,
    /// What went wrong, when something did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The agent's final text.
    #[serde(default)]
    pub result: Option<String>,
    /// Per changed file, its diff.
    #[serde(default)]
    pub changes: Vec<Change>,
    /// `git diff` of the checkout against the start commit (new files included).
    #[serde(default)]
    pub diff: String,
    /// Whether `diff` or a file's diff was cut.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub diff_truncated: bool,
    /// Estimated cost in USD.
    #[serde(default)]
    pub total_cost_usd: f64,
    /// Token usage (the API's `usage` shape).
    #[serde(default)]
    pub usage: serde_json::Value,
    /// Model calls made.
    #[serde(default)]
    pub num_turns: u64,
    /// The tool calls that were denied (the result frame's `permission_denials`: tool name,
    /// call id and input).
    #[serde(default)]
    pub permission_denials: Vec<serde_json::Value>,
    /// Wall time of the task (set-up, run and diff) in milliseconds.
    #[serde(default)]
    pub duration_ms: u64,
    /// The child session's id.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The session's transcript file.
    #[serde(default)]
    pub transcript: Option<PathBuf>,
    /// The task's checkout.
    #[serde(default)]
    pub worktree: Option<PathBuf>,
    /// The repository as given (any `user:password@` removed).
    #[serde(default)]
    pub repo: Option<String>,
    /// The ref as given.
    #[serde(default, rename = "ref")]
    pub git_ref: Option<String>,
    /// The commit the checkout started from.
    #[serde(default)]
    pub base_commit: Option<String>,
}

impl TaskResult {
    /// A result with only the identifying fields and a status.
    pub fn bare(id: Option<String>, index: usize, line: usize, status: Status) -> Self {
        TaskResult {
            id,
            index,
            line,
            status,
            error: None,
            result: None,
            changes: Vec::new(),
            diff: String::new(),
            diff_truncated: false,
            total_cost_usd: 0.0,
            usage: serde_json::Value::Null,
            num_turns: 0,
            permission_denials: Vec::new(),
            duration_ms: 0,
            session_id: None,
            transcript: None,
            worktree: None,
            repo: None,
            git_ref: None,
            base_commit: None,
        }
    }

    /// The key of this result (matches `Entry::key`).
    pub fn key(&self) -> String {
        match &self.id {
            Some(id) => id.clone(),
            None => super::task::line_key(self.line),
        }
    }

    /// One JSON line (no newline).
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| {
            format!(r#"{{"id":null,"status":"error","error":"cannot encode the result: {e}"}}"#)
        })
    }
}

/// The keys of the tasks already finished in the results file at `path` (the last line of a
/// key wins; `interrupted` ones are not finished). A missing file has none; unreadable lines
/// (a torn last line) are skipped with a warning.
pub fn finished(path: &Path) -> anyhow::Result<HashMap<String, Status>> {
    let text = match std::fs::read(path) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashMap::new()),
        Err(e) => anyhow::bail!("cannot read the results file {}: {e}", path.display()),
    };
    let mut out = HashMap::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            eprintln!(
                "skiff batch: warning: {} line {} is not JSON; ignored",
                path.display(),
                n + 1
            );
            continue;
        };
        let key = match v.get("id").and_then(|i| i.as_str()) {
            Some(id) => id.to_owned(),
            None => match v.get("line").and_then(serde_json::Value::as_u64) {
                Some(l) => super::task::line_key(l as usize),
                None => continue,
            },
        };
        let status = v
            .get("status")
            .cloned()
            .and_then(|s| serde_json::from_value::<Status>(s).ok())
            .unwrap_or(Status::Error);
        if status == Status::Interrupted {
            out.remove(&key);
        } else {
            out.insert(key, status);
        }
    }
    Ok(out)
}

/// The results file, open for appending.
pub struct ResultsFile {
    file: std::fs::File,
    path: PathBuf,
}

impl ResultsFile {
    /// Open (create) `path` for appending; a torn last line gets its newline first.
    pub fn open(path: &Path) -> anyhow::Result<Self> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", parent.display()))?;
        }
        let needs_newline = std::fs::read(path)
            .map(|b| b.last().is_some_and(|c| *c != b'\n'))
            .unwrap_or(false);
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| anyhow::anyhow!("cannot open the results file {}: {e}", path.display()))?;
        if needs_newline {
            file.write_all(b"\n")?;
        }
        Ok(ResultsFile {
            file,
            path: path.to_owned(),
        })
    }

    /// Append one result line (one write, flushed).
    pub fn append(&mut self, result: &TaskResult) -> anyhow::Result<()> {
        let mut line = result.to_line();
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.flush())
            .map_err(|e| anyhow::anyhow!("cannot write to {}: {e}", self.path.display()))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    #[test]
    fn finished_keys_skip_interrupted_and_torn_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        std::fs::write(
            &path,
            concat!(
                r#"{"id":"a","line":1,"status":"success"}"#,
                "\n",
                r#"{"id":"b","line":2,"status":"interrupted"}"#,
                "\n",
                r#"{"id":null,"line":3,"status":"error"}"#,
                "\n",
                r#"{"id":"c","line":4,"status":"success"}"#,
                "\n",
                r#"{"id":"c","line":4,"status":"interrupted"}"#,
                "\n",
                r#"{"id":"d","li"#,
            ),
        )
        .unwrap();
        let done = finished(&path).unwrap();
        assert_eq!(done.get("a"), Some(&Status::Success));
        assert_eq!(done.get("line 3"), Some(&Status::Error));
        assert!(!done.contains_key("b") && !done.contains_key("c") && !done.contains_key("d"));
        let mut f = ResultsFile::open(&path).unwrap();
        f.append(&TaskResult::bare(Some("e".into()), 4, 5, Status::Timeout))
            .unwrap();
        let done = finished(&path).unwrap();
        assert_eq!(done.get("e"), Some(&Status::Timeout));
        assert!(finished(&dir.path().join("none")).unwrap().is_empty());
    }
}
