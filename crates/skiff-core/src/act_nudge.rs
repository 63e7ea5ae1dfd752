//! Small models that describe the work instead of doing it. Asked "the tests fail, find the
//! bug and fix it", Qwen2.5-Coder-1.5B answered with a numbered plan, asked for "more
//! context", or said "let's start by reading test.sh" and stopped, in most runs, before it had
//! run or changed anything. With `--compact-prompt` (small local models), an answer that reads
//! like a plan, in a run that has not yet run or changed anything ([`acts`]), gets a reply
//! telling the model to act ([`ACT_NOW`]), at most [`MAX_NUDGES`] times a prompt; the run goes
//! on. A short answer (a greeting, a fact) ends the run as usual. (A softer reply that let the
//! model "give the final answer again" when done made it answer "Please provide the task".)
//! The reply restates the task (a model that lost it answered "Please provide the task"), and
//! a task that asks for a change gets it too when the model shows the fixed code instead of
//! editing the file ([`wants_action`]).

use skiff_protocol::{ContentBlock, Message, MessageContent, Role};

/// The reply to a plan.
pub(crate) const ACT_NOW: &str = "Do not describe a plan or ask me: use the tools now to do \
the task, one step at a time.";

/// Longest task restated in the reply, in characters (a longer one is still in the history).
const MAX_TASK: usize = 600;

/// The task the user gave: the latest user message of plain text that is not an earlier
/// reply of this module.
pub(crate) fn latest_task(history: &[Message]) -> Option<String> {
    history.iter().rev().find_map(|m| {
        let only_text = match &m.content {
            MessageContent::Text(_) => true,
            MessageContent::Blocks(b) => b.iter().all(|b| matches!(b, ContentBlock::Text(_))),
        };
        if m.role != Role::User || !only_text {
            return None;
        }
        let text = m.content.text();
        let text = text.trim();
        (!text.is_empty() && !text.starts_with(ACT_NOW)).then(|| text.to_owned())
    })
}

/// The reply to a plan: [`ACT_NOW`], then the `task` when it is short, so a small model that
/// lost it, and asks for it, has it again.
pub(crate) fn reply(task: Option<&str>) -> String {
    match task {
        Some(task) if task.chars().count() <= MAX_TASK => format!("{ACT_NOW}\nThe task: {task}"),
        _ => ACT_NOW.to_owned(),
    }
}

/// Whether `answer` (with no tool call) should be answered with [`reply`]: nothing at all, a
/// plan before anything ran or changed ([`is_a_plan`]), or, when the task asks for a change and
/// no file was changed yet, a plan or code shown (the fix written out for the user to apply)
/// even after commands ran.
pub(crate) fn wants_action(answer: &str, task: Option<&str>, actions: usize, edits: usize) -> bool {
    if answer.trim().is_empty() {
        return true;
    }
    let plan = is_a_plan(answer);
    (actions == 0 && plan)
        || (edits == 0 && task.is_some_and(asks_for_change) && (plan || announces(answer)))
}

/// Whether `answer` announces work anywhere in it ("I see the bug. I will edit the code"), not
/// only at its start.
fn announces(answer: &str) -> bool {
    INTENTS.iter().any(|i| answer.contains(i))
}

/// Verbs of a task that wants files changed, in lower case.
const CHANGE_VERBS: [&str; 16] = [
    "fix",
    "change",
    "add",
    "implement",
    "update",
    "edit",
    "write",
    "create",
    "refactor",
    "rename",
    "remove",
    "delete",
    "replace",
    "correct",
    "modify",
    "rewrite",
];

/// Words a question starts with, in lower case: "What does add do?" names a change verb and
/// asks for none.
const QUESTION_WORDS: [&str; 8] = [
    "what", "why", "how", "where", "which", "who", "when", "does",
];

/// Whether `task` asks for a change: one of [`CHANGE_VERBS`] as a word, in a task that is not a
/// question ([`QUESTION_WORDS`] first, a `?` last).
fn asks_for_change(task: &str) -> bool {
    let task = task.trim();
    let first = task
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or_default()
        .to_lowercase();
    if task.ends_with('?') && QUESTION_WORDS.contains(&first.as_str()) {
        return false;
    }
    task.split(|c: char| !c.is_alphanumeric())
        .any(|w| CHANGE_VERBS.iter().any(|v| w.eq_ignore_ascii_case(v)))
}

/// Whether a call to `tool` changes a file (Edit, Write, NotebookEdit).
pub(crate) fn edits(tool: &str) -> bool {
    matches!(tool, "Edit" | "Write" | "NotebookEdit")
}

/// Replies to plans per prompt.
pub(crate) const MAX_NUDGES: u32 = 2;

/// The sampling temperature of a small model's requests (`--compact-prompt`) when none is
/// configured: Qwen2.5-Coder-1.5B at llama.cpp's default of 0.8 wrote commands with unclosed
/// quotes and edits of strings that were never there; at 0.2 its calls were well-formed.
pub(crate) const COMPACT_TEMPERATURE: f32 = 0.2;

/// The temperature of the request after a round that repeated a call answered the same
/// ([`crate::loop_guard::LoopGuard::repeating`]): at a low temperature a small model sends
/// the same call again and again, notes or not; sampled more freely, it tries another.
pub(crate) const REPEAT_TEMPERATURE: f32 = 1.0;

/// The temperature of a small model's next request: [`REPEAT_TEMPERATURE`] after a repeated
/// round, else the `configured` one or [`COMPACT_TEMPERATURE`].
pub(crate) fn temperature(configured: Option<f32>, repeating: bool) -> f32 {
    if repeating {
        REPEAT_TEMPERATURE
    } else {
        configured.unwrap_or(COMPACT_TEMPERATURE)
    }
}

/// Requests per prompt that make the model call a tool ([`forces_call`]). At 8, two of three
/// benchmark runs of Qwen2.5-Coder-1.5B used them all up before their first edit (one had just
/// been told the whole line to send) and then wrote plans until the nudges ran out.
pub(crate) const MAX_FORCED_CALLS: u32 = 16;

/// Whether the next request should make the model call a tool (`tool_choice` any) rather than
/// answer: the `task` asks for a change, no file was changed yet, and fewer than
/// [`MAX_FORCED_CALLS`] requests were forced. Asked to fix a bug, Qwen2.5-Coder-1.5B wrote
/// plans, or calls in made-up forms, in most answers; made to call (a local server holds it to
/// one well-formed call of an offered tool), it ran the tests or read the code. Once a file
/// changed, the model may answer again.
pub(crate) fn forces_call(task: Option<&str>, edits: usize, forced: u32) -> bool {
    edits == 0 && forced < MAX_FORCED_CALLS && task.is_some_and(asks_for_change)
}

/// Whether a call to `tool` runs or changes something (Bash, Edit, Write, NotebookEdit), as
/// opposed to looking (Read, Glob, Grep, LS, …).
pub(crate) fn acts(tool: &str) -> bool {
    matches!(tool, "Bash" | "Edit" | "Write" | "NotebookEdit")
}

/// Longest answer taken as an answer when it has no list or code block, in characters.
const SHORT_ANSWER: usize = 200;

/// What an answer that announces its next step starts with.
const INTENTS: [&str; 6] = ["I'll ", "I will ", "Let's ", "Let me ", "Next, I", "Now I"];

/// What an answer that hands the work back asks for ("Could you please provide more
/// context?"), in lower case.
const ASKS: [&str; 3] = ["please provide", "could you provide", "can you provide"];

/// Whether `answer` (with no tool call) describes work rather than reporting it: empty, with a
/// code block or a list, announcing a step ([`INTENTS`]), asking the user for what the tools
/// would find ([`ASKS`]), or longer than [`SHORT_ANSWER`].
pub(crate) fn is_a_plan(answer: &str) -> bool {
    let answer = answer.trim();
    let lower = answer.to_lowercase();
    answer.is_empty()
        || INTENTS.iter().any(|i| answer.starts_with(i))
        || ASKS.iter().any(|a| lower.contains(a))
        || answer.contains("```")
        || answer.starts_with("<tool")
        || answer.chars().count() > SHORT_ANSWER
        || answer.lines().any(|line| {
            let line = line.trim_start();
            line.starts_with("- ")
                || line.starts_with("* ")
                || line
                    .split_once(". ")
                    .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_that_names_a_change_verb_asks_for_none() {
        assert!(asks_for_change("The tests fail. Find the bug and fix it."));
        assert!(asks_for_change("Can you fix the add function?"));
        assert!(asks_for_change("add a --verbose flag"));
        assert!(!asks_for_change("What does add in calc.sh do?"));
        assert!(!asks_for_change("  How would I fix this? "));
        assert!(!asks_for_change("Where is add defined?"));
        assert!(!asks_for_change("Explain the code"));
        assert!(forces_call(Some("Fix add."), 0, 0));
        assert!(!forces_call(Some("Fix add."), 1, 0));
        assert!(!forces_call(Some("Fix add."), 0, MAX_FORCED_CALLS));
        assert!(!forces_call(Some("Why does add fail?"), 0, 0));
        assert!(!forces_call(None, 0, 0));
    }

    #[test]
    fn the_reply_restates_the_task_not_an_earlier_reply() {
        let user = |text: &str| Message::blocks(Role::User, vec![ContentBlock::text(text)]);
        let task = "The tests fail. Find the bug and fix it.";
        let first = reply(latest_task(&[user(task)]).as_deref());
        assert_eq!(first, format!("{ACT_NOW}\nThe task: {task}"));
        let history = [user(task), user(&first)];
        assert_eq!(latest_task(&history).as_deref(), Some(task));
        assert_eq!(latest_task(&[user(&first)]), None);
        assert_eq!(reply(None), ACT_NOW);
        assert_eq!(reply(Some(&"x".repeat(MAX_TASK + 1))), ACT_NOW);
    }

    #[test]
    fn code_shown_instead_of_a_change_asked_for_wants_action() {
        let fix = "Find the bug and fix it.";
        let code = "The bug is in add. Here is the corrected code:\n```c\nint add() {}\n```";
        // After the tests ran (1 action), no file changed: the fix was only shown.
        assert!(wants_action(code, Some(fix), 1, 0));
        assert!(!wants_action(code, Some(fix), 2, 1));
        // Nothing changed yet and the task wants a change: a long account is a plan too.
        let account = format!(
            "To fix the failures, I need to look at add. {}",
            "More. ".repeat(40)
        );
        assert!(wants_action(&account, Some(fix), 2, 0));
        assert!(!wants_action(&account, Some(fix), 2, 1));
        // Work announced after looking, with nothing changed yet.
        let later = "I see the code now. The issue is in add. I will edit the code to fix it.";
        assert!(wants_action(later, Some(fix), 2, 0));
        assert!(!wants_action(later, Some(fix), 2, 1));
        assert!(!wants_action(
            later,
            Some("What is wrong with this function?"),
            2,
            0
        ));
        // A question that wants an explanation is answered with code, and that is the answer.
        assert!(!wants_action(
            code,
            Some("How does this function work?"),
            1,
            0
        ));
        assert!(!wants_action(
            code,
            Some("Show me the prefix of fixtures"),
            1,
            0
        ));
        // A failed call wrapper is a plan.
        assert!(wants_action("<tools></tools>", Some(fix), 0, 0));
        assert!(edits("Write") && !edits("Bash"));
        // An empty answer is never the end of the work, whatever ran before.
        assert!(wants_action(" \n", Some(fix), 3, 1));
    }

    #[test]
    fn plans_are_told_apart_from_short_answers() {
        for plan in [
            "",
            "  \n",
            "To fix it:\n1. Run the tests.\n2. Read the failing file.",
            "Steps:\n- run the tests\n- fix the code",
            "Run this:\n```bash\nbash test.sh\n```",
            "Let's start by reading the `test.sh` file.",
            "I found no files with errors. Could you please provide more context?",
            &format!(
                "To find the bug I'll need to review the code. {}",
                "More. ".repeat(40)
            ),
        ] {
            assert!(is_a_plan(plan), "{plan:?}");
        }
        for answer in [
            "Hello! How can I help you today?",
            "4",
            "The file has 12 lines.",
            "Version 1.2. Released in May.",
        ] {
            assert!(!is_a_plan(answer), "{answer:?}");
        }
        assert!(acts("Edit") && acts("Bash") && !acts("Read") && !acts("Grep"));
    }
}
