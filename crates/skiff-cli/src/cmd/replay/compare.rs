//! Comparing a replay with its recording: each tool result's text and error flag (after
//! volatile parts are normalised), the structured results of file edits, the files the edits
//! changed, and the number of model calls. The report says where the first divergence is, with
//! a unified diff.

use std::collections::{BTreeSet, HashMap};
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;
use serde_json::Value;
use skiff_protocol::recording::{RecordedResult, Recording};
use skiff_protocol::script::{Script, ScriptBlock};

use super::redact::Redactor;
use super::run::{Approval, Observed, ObservedResult, is_denial, is_interrupt};

/// Tools whose structured results (the patch) are compared too.
const FILE_TOOLS: &[&str] = &["Edit", "MultiEdit", "Write", "NotebookEdit"];

/// What makes two runs' texts differ without anything having changed.
#[derive(Debug, Clone)]
pub struct Normalizer {
    /// Paths replaced by a placeholder, longest first.
    paths: Vec<(String, &'static str)>,
    redactor: Redactor,
}

static VOLATILE: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    [
        (
            r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+\-]\d{2}:?\d{2})?",
            "<time>",
        ),
        (
            r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b",
            "<uuid>",
        ),
        (r"(/tmp|/var/tmp|/dev/shm)/[^\s/'\x22:]+", "$1/<tmp>"),
        (
            r"\b\d+(?:\.\d+)?\s?(?:ms|milliseconds|s|sec|seconds)\b",
            "<duration>",
        ),
        (
            r"(?i)((?:duration_?ms|durationms|total_?tokens|tool_?uses|elapsed)\W{0,3})\d+",
            "${1}<n>",
        ),
        (r"\bagentId: [0-9A-Za-z_\-]+", "agentId: <id>"),
        (r"\b[0-9a-f]{16}\b", "<id>"),
    ]
    .into_iter()
    .filter_map(|(p, r)| Some((Regex::new(p).ok()?, r)))
    .collect()
});

/// Background command ids: `b` and eight base-36 characters, one of them a digit.
static TASK_ID: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"\bb[0-9a-z]{8}\b").ok());

impl Normalizer {
    /// Normalise the recorded and the replay's workspace, the skiff home and the temp dir.
    pub fn new(recorded_cwd: &str, replay_cwd: &str, redactor: Redactor) -> Self {
        let mut paths: Vec<(String, &'static str)> = Vec::new();
        for p in [recorded_cwd, replay_cwd] {
            if p.len() > 1 {
                paths.push((p.trim_end_matches('/').to_owned(), "<cwd>"));
            }
        }
        if let Ok(home) = crate::session::skiff_home()
            && let Some(h) = home.to_str().filter(|h| h.len() > 1)
        {
            paths.push((h.to_owned(), "<skiff-home>"));
        }
        let tmp = std::env::temp_dir();
        if let Some(t) = tmp.to_str().filter(|t| t.len() > 1 && *t != "/tmp") {
            paths.push((t.trim_end_matches('/').to_owned(), "<tmpdir>"));
        }
        paths.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
        Self { paths, redactor }
    }

    /// `text` without secrets and volatile parts.
    pub fn text(&self, text: &str) -> String {
        let (mut out, _) = self.redactor.text(text);
        for (path, placeholder) in &self.paths {
            out = out.replace(path.as_str(), placeholder);
        }
        for (re, with) in VOLATILE.iter() {
            out = re.replace_all(&out, *with).into_owned();
        }
        if let Some(re) = TASK_ID.as_ref() {
            out = re
                .replace_all(&out, |c: &regex::Captures<'_>| {
                    let id = c.get(0).map_or("", |m| m.as_str());
                    if id.bytes().any(|b| b.is_ascii_digit()) {
                        "<task-id>".to_owned()
                    } else {
                        id.to_owned()
                    }
                })
                .into_owned();
        }
        out
    }

    fn json(&self, v: &Value) -> String {
        self.text(&serde_json::to_string_pretty(v).unwrap_or_default())
    }
}

/// One difference between the recording and the replay.
#[derive(Debug, Clone, Serialize)]
pub struct Divergence {
    /// `result`, `is_error`, `structured`, `missing`, `extra`, `model_calls` or `files`.
    pub kind: &'static str,
    /// The script turn (1-based) of the call; 0 when not about one call.
    pub turn: usize,
    /// The tool.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub tool: String,
    /// The call's id.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub tool_use_id: String,
    /// The Task call whose subagent made the call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_of: Option<String>,
    /// What it means, in a sentence.
    pub message: String,
    /// The recorded result (normalised).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// The replay's result (normalised).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual: Option<String>,
    /// A unified diff of expected vs actual.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub diff: String,
}

/// Counts of the comparison.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Counts {
    /// Recorded results compared.
    pub compared: usize,
    /// Equal after normalisation.
    pub matched: usize,
    /// Different.
    pub diverged: usize,
    /// Recorded but not produced.
    pub missing: usize,
    /// Produced but not recorded.
    pub extra: usize,
}

/// The whole report (`--json` prints it as is).
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Whether nothing diverged.
    pub ok: bool,
    /// The recorded session.
    pub session_id: String,
    /// The workspace of the replay.
    pub workspace: String,
    /// The commit the recording was made at, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded_commit: Option<String>,
    /// The workspace's commit now, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace_commit: Option<String>,
    /// Model calls: recorded and made.
    pub model_calls: ModelCalls,
    /// Tool results.
    pub results: Counts,
    /// The first divergence, if any.
    pub first_divergence: Option<Divergence>,
    /// All of them, in the recording's order.
    pub divergences: Vec<Divergence>,
    /// The permission prompts the replay answered as recorded.
    pub approvals: Vec<Approval>,
    /// Files changed by the edit tools.
    pub files_changed: FilesChanged,
    /// Errors of the replayed turns and other notes.
    pub warnings: Vec<String>,
}

/// Recorded and replayed model calls.
#[derive(Debug, Clone, Serialize)]
pub struct ModelCalls {
    /// In the recording.
    pub recorded: usize,
    /// In the replay.
    pub replayed: usize,
}

/// Files the edit tools changed.
#[derive(Debug, Clone, Serialize)]
pub struct FilesChanged {
    /// In the recording.
    pub recorded: Vec<String>,
    /// In the replay.
    pub replayed: Vec<String>,
}

/// A unified diff of two texts.
pub fn unified_diff(expected: &str, actual: &str) -> String {
    skiff_tools::patch::line_diff(expected, actual)
        .unified_diff()
        .context_radius(3)
        .header("recorded", "replay")
        .to_string()
}

/// What a differing result probably means, for the message.
fn meaning(expected: &RecordedResult, actual: &ObservedResult) -> &'static str {
    let hook = |t: &str| t.to_ascii_lowercase().contains("hook");
    if is_denial(&expected.content) != is_denial(&actual.content)
        && (expected.is_error || actual.is_error)
    {
        "a permission decision changed"
    } else if (hook(&actual.content) && actual.is_error)
        || (hook(&expected.content) && expected.is_error)
    {
        "a hook's outcome changed"
    } else if expected.is_error != actual.is_error {
        "the call's success changed"
    } else {
        "the result differs"
    }
}

/// Compare the replay with the recording.
pub fn compare(
    script: &Script,
    recording: &Recording,
    observed: &Observed,
    norm: &Normalizer,
) -> (Vec<Divergence>, Counts, FilesChanged) {
    let actual: HashMap<&str, &ObservedResult> = observed
        .results
        .iter()
        .map(|r| (r.tool_use_id.as_str(), r))
        .collect();
    let mut divergences = Vec::new();
    let mut counts = Counts::default();
    for expected in &recording.results {
        counts.compared += 1;
        let base = |kind, message: String| Divergence {
            kind,
            turn: expected.turn,
            tool: expected.tool.clone(),
            tool_use_id: expected.tool_use_id.clone(),
            subagent_of: expected.thread.clone(),
            message,
            expected: None,
            actual: None,
            diff: String::new(),
        };
        let Some(got) = actual.get(expected.tool_use_id.as_str()) else {
            counts.missing += 1;
            let mut d = base(
                "missing",
                "the replay did not run this call (it stopped earlier or took another path)".into(),
            );
            d.expected = Some(norm.text(&expected.content));
            divergences.push(d);
            continue;
        };
        // Where exactly an interrupt lands (before the command started, or while it ran) is
        // timing, not behaviour.
        if is_interrupt(&expected.content, expected.structured.as_ref())
            && is_interrupt(&got.content, got.structured.as_ref())
        {
            counts.matched += 1;
            continue;
        }
        let (want, have) = (norm.text(&expected.content), norm.text(&got.content));
        if want != have || expected.is_error != got.is_error {
            counts.diverged += 1;
            let kind = if want == have { "is_error" } else { "result" };
            let mut message = meaning(expected, got).to_owned();
            if expected.is_error != got.is_error {
                message.push_str(&format!(
                    " (recorded is_error: {}, replay is_error: {})",
                    expected.is_error, got.is_error
                ));
            }
            let mut d = base(kind, message);
            d.diff = unified_diff(&want, &have);
            d.expected = Some(want);
            d.actual = Some(have);
            divergences.push(d);
            continue;
        }
        if FILE_TOOLS.contains(&expected.tool.as_str())
            && let (Some(want), Some(have)) = (&expected.structured, &got.structured)
        {
            let (want, have) = (norm.json(want), norm.json(have));
            if want != have {
                counts.diverged += 1;
                let mut d = base("structured", "the edit's patch differs".into());
                d.diff = unified_diff(&want, &have);
                d.expected = Some(want);
                d.actual = Some(have);
                divergences.push(d);
                continue;
            }
        }
        counts.matched += 1;
    }
    let recorded_ids: std::collections::HashSet<&str> = recording
        .results
        .iter()
        .map(|r| r.tool_use_id.as_str())
        .collect();
    for got in &observed.results {
        if !recorded_ids.contains(got.tool_use_id.as_str()) {
            counts.extra += 1;
            divergences.push(Divergence {
                kind: "extra",
                turn: turn_of(script, &got.tool_use_id),
                tool: tool_of(script, &got.tool_use_id),
                tool_use_id: got.tool_use_id.clone(),
                subagent_of: None,
                message: "the replay ran a call the recording has no result for".into(),
                expected: None,
                actual: Some(norm.text(&got.content)),
                diff: String::new(),
            });
        }
    }
    let files = FilesChanged {
        recorded: changed_files(
            script,
            recording
                .results
                .iter()
                .map(|r| (r.tool_use_id.as_str(), r.is_error)),
        ),
        replayed: changed_files(
            script,
            observed
                .results
                .iter()
                .map(|r| (r.tool_use_id.as_str(), r.is_error)),
        ),
    };
    if files.recorded != files.replayed {
        divergences.push(Divergence {
            kind: "files",
            turn: 0,
            tool: String::new(),
            tool_use_id: String::new(),
            subagent_of: None,
            message: "the edits changed other files".into(),
            diff: unified_diff(
                &(files.recorded.join("\n") + "\n"),
                &(files.replayed.join("\n") + "\n"),
            ),
            expected: Some(files.recorded.join("\n")),
            actual: Some(files.replayed.join("\n")),
        });
    }
    let recorded_calls = script.turns.len();
    if observed.exhausted || observed.model_calls != recorded_calls {
        let message = if observed.exhausted {
            format!("the replay asked the model for more than the {recorded_calls} recorded turns")
        } else {
            format!(
                "the replay made {} model calls; the recording has {recorded_calls}",
                observed.model_calls
            )
        };
        divergences.push(Divergence {
            kind: "model_calls",
            turn: observed.model_calls.min(recorded_calls) + 1,
            tool: String::new(),
            tool_use_id: String::new(),
            subagent_of: None,
            message,
            expected: None,
            actual: None,
            diff: String::new(),
        });
    }
    (divergences, counts, files)
}

fn calls(script: &Script) -> impl Iterator<Item = (usize, &str, &str, &Value)> {
    script.turns.iter().enumerate().flat_map(|(i, t)| {
        t.content.iter().filter_map(move |b| match b {
            ScriptBlock::ToolUse {
                id: Some(id),
                name,
                input,
            } => Some((i + 1, id.as_str(), name.as_str(), input)),
            _ => None,
        })
    })
}

fn turn_of(script: &Script, id: &str) -> usize {
    calls(script).find(|c| c.1 == id).map_or(0, |c| c.0)
}

fn tool_of(script: &Script, id: &str) -> String {
    calls(script)
        .find(|c| c.1 == id)
        .map_or_else(String::new, |c| c.2.to_owned())
}

/// The files of the successful edit calls among `results` (id, is_error).
fn changed_files<'a>(
    script: &Script,
    results: impl Iterator<Item = (&'a str, bool)>,
) -> Vec<String> {
    let ok: std::collections::HashSet<&str> =
        results.filter(|(_, err)| !err).map(|(id, _)| id).collect();
    let files: BTreeSet<String> = calls(script)
        .filter(|(_, id, name, _)| FILE_TOOLS.contains(name) && ok.contains(id))
        .filter_map(|(_, _, _, input)| {
            input
                .get("file_path")
                .or_else(|| input.get("notebook_path"))
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .collect();
    files.into_iter().collect()
}

/// The report as text.
pub fn render(report: &Report) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Replayed session {} in {}: {} of {} model calls, {} tool results.",
        report.session_id,
        report.workspace,
        report.model_calls.replayed,
        report.model_calls.recorded,
        report.results.compared
    );
    if let (Some(rec), Some(now)) = (&report.recorded_commit, &report.workspace_commit)
        && rec != now
    {
        let _ = writeln!(
            out,
            "Note: recorded at commit {rec}; the workspace is at {now}."
        );
    }
    for w in &report.warnings {
        let _ = writeln!(out, "Note: {w}");
    }
    match &report.first_divergence {
        None => {
            let _ = writeln!(out, "No divergence.");
        }
        Some(d) => {
            let _ = writeln!(out, "\nFirst divergence: {}", describe(d));
            if !d.diff.is_empty() {
                out.push_str(&d.diff);
                if !d.diff.ends_with('\n') {
                    out.push('\n');
                }
            } else if let Some(e) = &d.expected {
                let _ = writeln!(out, "recorded:\n{e}");
            }
            if report.divergences.len() > 1 {
                let _ = writeln!(out, "\nAlso:");
                for other in &report.divergences[1..] {
                    let _ = writeln!(out, "  {}", describe(other));
                }
            }
        }
    }
    let r = &report.results;
    let _ = writeln!(
        out,
        "\nSummary: {} tool results compared: {} matched, {} diverged, {} missing, {} extra; {} of {} model calls; files changed: {}.",
        r.compared,
        r.matched,
        r.diverged,
        r.missing,
        r.extra,
        report.model_calls.replayed,
        report.model_calls.recorded,
        if report.files_changed.replayed.is_empty() {
            "none".to_owned()
        } else {
            report.files_changed.replayed.join(", ")
        }
    );
    out
}

fn describe(d: &Divergence) -> String {
    let mut s = String::new();
    if d.turn > 0 {
        s.push_str(&format!("turn {}", d.turn));
    }
    if !d.tool.is_empty() {
        s.push_str(&format!(", {} ({})", d.tool, d.tool_use_id));
    }
    if let Some(task) = &d.subagent_of {
        s.push_str(&format!(", in the subagent of {task}"));
    }
    if !s.is_empty() {
        s.push_str(": ");
    }
    s.push_str(&d.message);
    s
}
