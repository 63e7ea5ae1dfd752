//! Loop detection (opencode's doom-loop guard, made to help first): a model that sends the same
//! call with the same input and gets the same failure again is stuck. So is one that sends the
//! same search again and again and finds nothing each time while nothing changed in between (a
//! small model globbing `**/*.rs` thirty times in a project with no Rust), and one that sends the
//! same round of calls right after itself and gets the same answers: the same Glob 28 times, or
//! "Grep, Edit, Write" with its Write undoing its Edit. A search that found something is counted
//! only right after itself; a file read again (its content may have been trimmed from the
//! context) and a command run again are not counted. The third time, the result carries a short
//! note saying so and what to try instead (for a missing path, what the nearest existing
//! directory holds; for a command, what the working directory holds); the fifth time, the run
//! ends with its own error subtype — or, where a client can answer (the terminal, an SDK's
//! `can_use_tool`), the client is asked whether the run goes on.

use std::path::Path;

use serde_json::Value;
use skiff_protocol::{ContentBlock, ToolResultContent, ToolUseBlock};

use crate::dispatch::CallResult;

/// The repeat that earns the model a note.
pub const NOTE_AT: u32 = 3;
/// The repeat that ends the run (or asks the client).
pub const STOP_AT: u32 = 5;

/// Start of the note added to a repeated failure's result.
pub const LOOP_NOTE_START: &str = "<system-reminder>\nThis is the";

/// Searches: sent again with nothing changed in between, they answer the same.
const LOOKING_TOOLS: &[&str] = &["Glob", "Grep", "LS"];

/// Whether a search's answer says it found nothing (Glob's and Grep's texts, Claude Code's).
fn found_nothing(text: &str) -> bool {
    let text = text.trim();
    text.is_empty() || text.starts_with("No files found") || text.starts_with("No matches found")
}

/// One repeated call and how often in a row it got this same result.
#[derive(Debug)]
struct Failing {
    name: String,
    input: Value,
    failure: String,
    count: u32,
    /// A failure (else a search that again found nothing).
    failed: bool,
    /// Of `count`, how many came since anything but a look ran.
    recent: u32,
}

/// A call the guard stops the run for.
#[derive(Debug, Clone, PartialEq)]
pub struct Repeated {
    /// The tool.
    pub tool: String,
    /// Its input.
    pub input: Value,
    /// Its id in the last round.
    pub tool_use_id: String,
    /// How often it failed the same way (or answered the same).
    pub count: u32,
    /// It failed each time (else it was a look that answered the same each time).
    pub failed: bool,
}

impl Repeated {
    /// What happened each time.
    fn how(&self) -> &'static str {
        if self.failed {
            "it failed the same way each time"
        } else {
            "it got the same result each time, with nothing changed in between"
        }
    }

    /// The run's error text.
    pub fn message(&self) -> String {
        format!(
            "the model sent the same {} call {} times and {}; the run was stopped (input: {})",
            self.tool,
            self.count,
            self.how(),
            short_json(&self.input)
        )
    }
}

/// Per-run memory of failing calls.
#[derive(Debug, Default)]
pub(crate) struct LoopGuard {
    failing: Vec<Failing>,
    /// The last round of calls (names, inputs, result texts) that succeeded, and how often in
    /// a row it came back the same.
    round: Option<(Vec<RoundCall>, u32)>,
    /// How often in a row the last round's most repeated call (or the round itself) came back
    /// the same: 1 when nothing repeated.
    last_repeat: u32,
    /// The looking tools (Glob, Grep, LS) whose same call found nothing, or failed the same,
    /// twice or more since anything else ran, or whose round came back the same.
    repeated_tools: Vec<String>,
}

/// One call of a round as the guard compares it: tool, input, result text.
type RoundCall = (String, Value, String);

/// Tools whose calls are sent again to wait for something (polling): an identical answer is
/// the point.
const POLLING_TOOLS: &[&str] = &["TaskOutput", "BashOutput"];

/// Whether a round polls: a polling tool, or a command that sleeps.
fn polls(calls: &[ToolUseBlock]) -> bool {
    calls.iter().any(|c| {
        POLLING_TOOLS.contains(&c.name.as_str())
            || c.input
                .get("command")
                .and_then(Value::as_str)
                .is_some_and(|cmd| cmd.contains("sleep") || cmd.contains("wait"))
    })
}

impl LoopGuard {
    /// Look at one round of calls and their results (in the same order): note the third
    /// repeat of a failure in its result; return the call repeated a fifth time, if any.
    pub(crate) async fn observe(
        &mut self,
        calls: &[ToolUseBlock],
        results: &mut [CallResult],
        ctx: &skiff_tools::ToolContext,
    ) -> Option<Repeated> {
        let mut stop = None;
        let mut counted = false;
        self.last_repeat = 1;
        self.repeated_tools.clear();
        for (i, (call, result)) in calls.iter().zip(results.iter_mut()).enumerate() {
            // StructuredOutput's attempts have their own bound ([`crate::structured`]); the
            // same call twice in one round counts once.
            if call.name == crate::structured::STRUCTURED_OUTPUT
                || calls[..i]
                    .iter()
                    .any(|c| c.name == call.name && c.input == call.input)
            {
                continue;
            }
            let looking = LOOKING_TOOLS.contains(&call.name.as_str());
            if !looking {
                // Something may have changed: a look may answer differently now.
                self.failing.retain(|f| f.failed);
                for f in &mut self.failing {
                    f.recent = 0;
                }
            }
            let failed = result.block.is_error == Some(true) && result.denial.is_none();
            let looked = looking
                && result.block.is_error != Some(true)
                && found_nothing(&result_text(&result.block.content));
            let at = self
                .failing
                .iter()
                .position(|f| f.name == call.name && f.input == call.input);
            if !failed && !looked {
                if let Some(i) = at {
                    self.failing.swap_remove(i);
                }
                continue;
            }
            let failure = result_text(&result.block.content);
            let count = match at {
                Some(i) if self.failing[i].failure == failure => {
                    self.failing[i].count += 1;
                    self.failing[i].recent += 1;
                    self.failing[i].count
                }
                Some(i) => {
                    self.failing[i].failure = failure.clone();
                    self.failing[i].count = 1;
                    self.failing[i].recent = 1;
                    self.failing[i].failed = failed;
                    1
                }
                None => {
                    self.failing.push(Failing {
                        name: call.name.clone(),
                        input: call.input.clone(),
                        failure: failure.clone(),
                        count: 1,
                        failed,
                        recent: 1,
                    });
                    1
                }
            };
            counted |= count >= NOTE_AT;
            self.last_repeat = self.last_repeat.max(count);
            if count >= STOP_AT {
                stop.get_or_insert(Repeated {
                    tool: call.name.clone(),
                    input: call.input.clone(),
                    tool_use_id: call.id.clone(),
                    count,
                    failed,
                });
            } else if count >= NOTE_AT {
                let hint = hint(call, &failure, ctx).await;
                append(&mut result.block.content, note(count, failed, &hint));
            }
        }
        // Looks that found nothing, or failed the same, twice or more since anything else ran
        // (a small model alternates Grep and Glob that both find nothing, or sends a Glob of a
        // file's path five times); not other failing calls (an Edit refused again is the right
        // tool with the wrong input).
        for f in &self.failing {
            if LOOKING_TOOLS.contains(&f.name.as_str())
                && f.recent >= 2
                && !self.repeated_tools.contains(&f.name)
            {
                self.repeated_tools.push(f.name.clone());
            }
        }
        // A whole round of calls sent again, right after itself, with the same inputs and
        // answered the same (a small model repeating "Grep, Edit, Write" with the same texts,
        // its Edit undoing its Write, or the same Glob 28 times): noted and then stopped like a
        // repeated failure. Only rounds that change a file or only look (a test suite run again
        // is fine), not when a call of the round was noted above already, and not polling.
        let changes = calls.iter().any(|c| crate::act_nudge::edits(&c.name));
        let looks = calls
            .iter()
            .all(|c| LOOKING_TOOLS.contains(&c.name.as_str()));
        if counted || !(changes || looks) || polls(calls) {
            self.round = None;
            return stop;
        }
        let sig: Vec<RoundCall> = calls
            .iter()
            .zip(results.iter())
            .map(|(c, r)| {
                (
                    c.name.clone(),
                    c.input.clone(),
                    result_text(&r.block.content),
                )
            })
            .collect();
        let count = match &mut self.round {
            Some((last, count)) if *last == sig => {
                *count += 1;
                *count
            }
            _ => {
                self.round = Some((sig, 1));
                1
            }
        };
        self.last_repeat = self.last_repeat.max(count);
        if count >= 2 && looks {
            for c in calls {
                if !self.repeated_tools.contains(&c.name) {
                    self.repeated_tools.push(c.name.clone());
                }
            }
        }
        if count >= STOP_AT {
            let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
            stop.get_or_insert(Repeated {
                tool: names.join(" + "),
                input: if calls.len() == 1 {
                    calls[0].input.clone()
                } else {
                    Value::Array(calls.iter().map(|c| c.input.clone()).collect())
                },
                tool_use_id: calls[calls.len() - 1].id.clone(),
                count,
                failed: false,
            });
        } else if count >= NOTE_AT
            && let Some(last) = results.last_mut()
        {
            let hint = if changes {
                "Change the input, use another tool, or, if the task is done, answer without \
                 calling a tool."
            } else {
                "You already have this result above: use it and take the next step (Read a \
                 file it names, run the tests with Bash, or Edit what is wrong)."
            };
            append(&mut last.block.content, note(count, false, hint));
        }
        stop
    }

    /// Whether the last round repeated a call (or a round) answered the same as before: the
    /// model is stuck, and more of the same sampling would repeat it again.
    pub(crate) fn repeating(&self) -> bool {
        self.last_repeat >= 2
    }

    /// The tools of the looks the last round repeated ([`LoopGuard::repeating`]): a small model
    /// made to call is made to call another tool next.
    pub(crate) fn repeated_tools(&self) -> &[String] {
        &self.repeated_tools
    }

    /// The client let the run go on after `repeated`: count that call from zero again.
    pub(crate) fn forgive(&mut self, repeated: &Repeated) {
        self.failing
            .retain(|f| !(f.name == repeated.tool && f.input == repeated.input));
        self.round = None;
    }
}

/// Where a client can answer (the terminal, an SDK's `can_use_tool`), ask it whether the run
/// goes on after `repeated`; without one (a headless run), it does not.
pub(crate) async fn client_lets_it_go_on(
    approver: &dyn crate::permissions::Approver,
    requester: &crate::requests::Requester,
    repeated: &Repeated,
) -> bool {
    if !approver.asks() {
        return false;
    }
    let request = crate::event::ApprovalRequest {
        tool_name: repeated.tool.clone(),
        input: repeated.input.clone(),
        tool_use_id: repeated.tool_use_id.clone(),
        reason: format!(
            "The model sent this same {} call {} times and {}. Allow it to go on (deny to stop \
             the run)?",
            repeated.tool,
            repeated.count,
            repeated.how()
        ),
    };
    matches!(
        approver.approve(request, requester).await,
        crate::event::ApprovalAnswer::Allow { .. }
    )
}

/// The note for the `count`th identical failure (or identical answer to a look).
fn note(count: u32, failed: bool, hint: &str) -> String {
    let nth = match count {
        3 => "third".to_owned(),
        4 => "fourth".to_owned(),
        n => format!("{n}th"),
    };
    let (what, again) = if failed {
        ("failed with this same error", "fail again")
    } else {
        ("returned this same result", "return it again")
    };
    format!(
        "{LOOP_NOTE_START} {nth} time this exact call {what}. Sending it again will {again}: do \
         something different. {hint}\nAfter {STOP_AT} identical results the run is \
         stopped.\n</system-reminder>"
    )
}

/// What to try instead, from the failure and the call.
async fn hint(call: &ToolUseBlock, failure: &str, ctx: &skiff_tools::ToolContext) -> String {
    let lower = failure.to_ascii_lowercase();
    if lower.contains("does not exist") || lower.contains("no such file") {
        let path = ["file_path", "path", "notebook_path"]
            .iter()
            .find_map(|k| call.input.get(*k).and_then(Value::as_str))
            .filter(|p| !p.is_empty())
            .unwrap_or(".");
        let listing = nearest_listing(ctx, path).await;
        return format!(
            "The path `{path}` does not exist.{listing} Use one of the paths that exist (LS or \
             Glob with a pattern such as `**/*` shows more)."
        );
    }
    if lower.starts_with("no files found") || lower.starts_with("no matches found") {
        let path = call
            .input
            .get("path")
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty())
            .unwrap_or(".");
        let listing = nearest_listing(ctx, path).await;
        return format!(
            "Nothing matches: the files you are looking for are not in this project.{listing} \
             Look at the files that exist (LS, or Glob with `**/*`) and work with those."
        );
    }
    if lower.contains("has not been read") {
        return "Read the file with the Read tool, then send the edit with old_string copied \
                from what Read shows."
            .to_owned();
    }
    if lower.contains("string to replace not found") {
        return "old_string must match the file's text exactly: Read the file again and copy \
                the lines (without the line-number prefix)."
            .to_owned();
    }
    if call.name == "Bash" {
        // A test run that keeps failing: point at the code its failures name.
        let names = skiff_tools::definitions::names_in_failure(failure);
        let found = skiff_tools::definitions::find_async(&ctx.guard, names).await;
        if !found.is_empty() {
            let shown: Vec<String> = found
                .iter()
                .map(|d| format!("{}:{}: `{}`", d.path, d.line, d.text))
                .collect();
            return format!(
                "The command runs and reports failures in the code it checks: running it again \
                 changes nothing until that code changes. Read the file that defines what \
                 failed, Edit the fix, then run the command once more. The failing names are \
                 defined at {}.",
                shown.join("; ")
            );
        }
        let listing = nearest_listing(ctx, ".").await;
        return format!(
            "Read the error output above and change the command, or fix what it reports, \
             before running it again; if the command or a file it needs is missing, check what \
             the project has.{listing}"
        );
    }
    "Change the input, use another tool, or, if the task is done, answer without calling a tool."
        .to_owned()
}

/// " The nearest existing directory, D, holds: …" for `path` (or the workspace root).
async fn nearest_listing(ctx: &skiff_tools::ToolContext, path: &str) -> String {
    let guard = std::sync::Arc::clone(&ctx.guard);
    let path = path.to_owned();
    tokio::task::spawn_blocking(move || {
        let resolved = guard.resolve(&path).ok()?;
        let dir = if resolved.is_dir() {
            resolved
        } else {
            skiff_tools::near_paths::nearest_existing_dir(&guard, &resolved)?
        };
        let entries = skiff_tools::near_paths::listing(&guard, &dir);
        let shown = guard.display(Path::new(&dir));
        Some(if entries.is_empty() {
            format!(" The directory {shown} is empty.")
        } else {
            format!(
                " The nearest existing directory, {shown}, holds: {}.",
                entries.join(", ")
            )
        })
    })
    .await
    .ok()
    .flatten()
    .unwrap_or_default()
}

/// The text of a result (its text blocks, one per line), for comparing failures.
pub(crate) fn result_text(content: &Option<ToolResultContent>) -> String {
    match content {
        None => String::new(),
        Some(ToolResultContent::Text(t)) => t.clone(),
        Some(ToolResultContent::Blocks(blocks)) => blocks
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// Add `text` to a result's content.
pub(crate) fn append(content: &mut Option<ToolResultContent>, text: String) {
    match content {
        None => *content = Some(ToolResultContent::Text(text)),
        Some(ToolResultContent::Text(t)) => {
            t.push('\n');
            t.push_str(&text);
        }
        Some(ToolResultContent::Blocks(blocks)) => blocks.push(ContentBlock::text(text)),
    }
}

/// `v` as JSON, cut to 200 characters.
fn short_json(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() <= 200 {
        s
    } else {
        format!("{}…", s.chars().take(200).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use skiff_protocol::ToolResultBlock;

    fn call(input: Value) -> ToolUseBlock {
        ToolUseBlock {
            id: "t".into(),
            name: "Glob".into(),
            input,
            cache_control: None,
        }
    }

    fn failed(text: &str) -> CallResult {
        CallResult {
            block: ToolResultBlock::text("t", text, true),
            structured: None,
            denial: None,
        }
    }

    #[tokio::test]
    async fn a_test_run_failing_again_and_again_points_at_the_failing_code() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("calc.sh"),
            "# calc\nadd() { echo $(( $1 - $2 )); }\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("test.sh"), "check add 2 3 5\n").unwrap();
        let ctx = skiff_tools::ToolContext::new(dir.path()).unwrap();
        let mut guard = LoopGuard::default();
        let c = [ToolUseBlock {
            name: "Bash".into(),
            ..call(json!({"command": "./test.sh"}))
        }];
        let output = "Exit code 1\nFAIL add 2 3: expected 5, got -1\n1 check(s) failed";
        for n in 1..=NOTE_AT {
            let mut r = [failed(output)];
            assert_eq!(guard.observe(&c, &mut r, &ctx).await, None);
            let text = result_text(&r[0].block.content);
            if n == NOTE_AT {
                assert!(
                    text.contains("defined at calc.sh:2: `add() { echo $(( $1 - $2 )); }`"),
                    "{text}"
                );
                assert!(!text.contains("test.sh:"), "{text}");
            }
        }
    }

    #[tokio::test]
    async fn the_third_identical_failure_is_noted_and_the_fifth_stops() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("test.sh"), "").unwrap();
        let ctx = skiff_tools::ToolContext::new(dir.path()).unwrap();
        let mut guard = LoopGuard::default();
        let c = [call(json!({"pattern": "fail", "path": "tests"}))];
        for n in 1..=4 {
            let mut r = [failed("Directory does not exist: tests")];
            assert_eq!(guard.observe(&c, &mut r, &ctx).await, None);
            let text = result_text(&r[0].block.content);
            assert_eq!(text.contains(LOOP_NOTE_START), n >= NOTE_AT, "{n}: {text}");
            if n == NOTE_AT {
                assert!(text.contains("third time"), "{text}");
                assert!(
                    text.contains("The nearest existing directory, ., holds: test.sh"),
                    "{text}"
                );
            }
        }
        let mut r = [failed("Directory does not exist: tests")];
        let stop = guard.observe(&c, &mut r, &ctx).await.unwrap();
        assert_eq!(stop.count, STOP_AT);
        assert!(stop.message().contains("same Glob call 5 times"));
    }

    #[tokio::test]
    async fn the_same_call_twice_in_one_round_counts_once() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = skiff_tools::ToolContext::new(dir.path()).unwrap();
        let mut guard = LoopGuard::default();
        let c = call(json!({"pattern": "fail", "path": "tests"}));
        let round = [c.clone(), c];
        for _ in 1..NOTE_AT {
            let mut r = [
                failed("Directory does not exist: tests"),
                failed("Directory does not exist: tests"),
            ];
            assert_eq!(guard.observe(&round, &mut r, &ctx).await, None);
            assert!(!result_text(&r[0].block.content).contains(LOOP_NOTE_START));
            assert!(!result_text(&r[1].block.content).contains(LOOP_NOTE_START));
        }
    }

    fn named(name: &str, input: Value) -> ToolUseBlock {
        ToolUseBlock {
            name: name.into(),
            ..call(input)
        }
    }

    #[tokio::test]
    async fn the_same_round_answered_the_same_is_noted_then_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = skiff_tools::ToolContext::new(dir.path()).unwrap();
        let mut guard = LoopGuard::default();
        let round = [
            named("Read", json!({"file_path": "calc.sh"})),
            named(
                "Edit",
                json!({"file_path": "calc.sh", "old_string": "a", "new_string": "b"}),
            ),
            named("Write", json!({"file_path": "calc.sh", "content": "a"})),
        ];
        let results = || {
            [
                answered("1\ta"),
                answered("The file calc.sh has been updated."),
                answered("The file calc.sh has been updated successfully."),
            ]
        };
        for n in 1..STOP_AT {
            let mut r = results();
            assert_eq!(guard.observe(&round, &mut r, &ctx).await, None);
            let last = result_text(&r[2].block.content);
            assert_eq!(last.contains(LOOP_NOTE_START), n >= NOTE_AT, "{n}: {last}");
            assert!(!result_text(&r[0].block.content).contains(LOOP_NOTE_START));
        }
        let stop = guard.observe(&round, &mut results(), &ctx).await.unwrap();
        assert_eq!(stop.tool, "Read + Edit + Write");
        assert!(
            stop.message()
                .contains("same Read + Edit + Write call 5 times")
        );
        // The same search right after itself, answered the same, is a loop too.
        let mut guard = LoopGuard::default();
        let glob = [call(json!({"pattern": "**/*"}))];
        for n in 1..STOP_AT {
            let mut r = [answered("README.md\ncalc.sh\ntest.sh")];
            assert_eq!(guard.observe(&glob, &mut r, &ctx).await, None);
            let text = result_text(&r[0].block.content);
            assert_eq!(
                text.contains("You already have this result"),
                n >= NOTE_AT,
                "{text}"
            );
        }
        let mut r = [answered("README.md\ncalc.sh\ntest.sh")];
        assert!(guard.observe(&glob, &mut r, &ctx).await.is_some());
        // A different answer starts the count again; a file read again is not counted (its
        // content may have been trimmed); polling never is.
        let mut guard = LoopGuard::default();
        for n in 0..6 {
            let mut r = results();
            r[0] = answered(&format!("1\t{n}"));
            assert_eq!(guard.observe(&round, &mut r, &ctx).await, None);
        }
        for _ in 0..6 {
            let mut r = [answered("1\ta")];
            assert_eq!(guard.observe(&round[..1], &mut r, &ctx).await, None);
        }
        let poll = [
            named(
                "Bash",
                json!({"command": "sleep 5; curl -s localhost:3000"}),
            ),
            round[2].clone(),
        ];
        for _ in 0..6 {
            let mut r = [answered("still starting"), answered("updated")];
            assert_eq!(guard.observe(&poll, &mut r, &ctx).await, None);
            assert!(!result_text(&r[0].block.content).contains(LOOP_NOTE_START));
        }
    }

    fn answered(text: &str) -> CallResult {
        CallResult {
            block: ToolResultBlock::text("t", text, false),
            structured: None,
            denial: None,
        }
    }

    #[tokio::test]
    async fn the_same_look_answered_the_same_is_noted_then_stopped() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("calc.sh"), "").unwrap();
        let ctx = skiff_tools::ToolContext::new(dir.path()).unwrap();
        let mut guard = LoopGuard::default();
        let c = [call(json!({"pattern": "**/*.rs"}))];
        for n in 1..STOP_AT {
            let mut r = [answered("No files found")];
            assert_eq!(guard.observe(&c, &mut r, &ctx).await, None);
            let text = result_text(&r[0].block.content);
            assert_eq!(text.contains(LOOP_NOTE_START), n >= NOTE_AT, "{n}: {text}");
            if n == NOTE_AT {
                assert!(text.contains("returned this same result"), "{text}");
                assert!(text.contains("holds: calc.sh"), "{text}");
            }
        }
        let mut r = [answered("No files found")];
        let stop = guard.observe(&c, &mut r, &ctx).await.unwrap();
        assert!(
            stop.message().contains("same result each time"),
            "{}",
            stop.message()
        );
    }

    #[tokio::test]
    async fn a_change_in_between_lets_a_look_be_repeated() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = skiff_tools::ToolContext::new(dir.path()).unwrap();
        let mut guard = LoopGuard::default();
        let look = [call(json!({"pattern": "*.sh"}))];
        let edit = [ToolUseBlock {
            id: "e".into(),
            name: "Edit".into(),
            input: json!({"file_path": "a.sh"}),
            cache_control: None,
        }];
        for _ in 0..10 {
            for _ in 0..2 {
                let mut r = [answered("No files found")];
                assert_eq!(guard.observe(&look, &mut r, &ctx).await, None);
                assert!(!result_text(&r[0].block.content).contains(LOOP_NOTE_START));
            }
            let mut r = [answered("The file a.sh has been updated.")];
            assert_eq!(guard.observe(&edit, &mut r, &ctx).await, None);
        }
        // A search that finds something, and a file read again (its content may have been
        // trimmed from the context), are not counted.
        let read = [ToolUseBlock {
            id: "r".into(),
            name: "Read".into(),
            input: json!({"file_path": "a.sh"}),
            cache_control: None,
        }];
        for _ in 0..10 {
            let mut r = [answered("a.sh")];
            assert_eq!(guard.observe(&look, &mut r, &ctx).await, None);
            let mut r = [answered("     1\techo hi")];
            assert_eq!(guard.observe(&read, &mut r, &ctx).await, None);
            assert!(!result_text(&r[0].block.content).contains(LOOP_NOTE_START));
        }
        // Bash commands that succeed are not looks: a test suite run again and again is fine.
        let run = [ToolUseBlock {
            id: "b".into(),
            name: "Bash".into(),
            input: json!({"command": "bash test.sh"}),
            cache_control: None,
        }];
        for _ in 0..10 {
            let mut r = [answered("ok")];
            assert_eq!(guard.observe(&run, &mut r, &ctx).await, None);
        }
    }

    #[tokio::test]
    async fn a_success_or_another_failure_starts_the_count_again() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = skiff_tools::ToolContext::new(dir.path()).unwrap();
        let mut guard = LoopGuard::default();
        let c = [call(json!({"pattern": "x"}))];
        for round in 0..12 {
            let mut r = [match round % 3 {
                2 => CallResult {
                    block: ToolResultBlock::text("t", "ok", false),
                    structured: None,
                    denial: None,
                },
                1 => failed("other error"),
                _ => failed("error"),
            }];
            assert_eq!(guard.observe(&c, &mut r, &ctx).await, None);
            assert!(!result_text(&r[0].block.content).contains(LOOP_NOTE_START));
        }
    }
}
