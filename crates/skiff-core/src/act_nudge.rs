//! Small models that describe the work instead of doing it. Asked "the tests fail, find the
//! bug and fix it", Qwen2.5-Coder-1.5B answered with a numbered plan, asked for "more
//! context", or said "let's start by reading test.sh" and stopped, in most runs, before it had
//! run or changed anything. With `--compact-prompt` (small local models), an answer that reads
//! like a plan, in a run that has not yet run or changed anything ([`acts`]), gets a reply
//! telling the model to act ([`ACT_NOW`]), at most [`MAX_NUDGES`] times a prompt; the run goes
//! on. A short answer (a greeting, a fact) ends the run as usual. (A softer reply that let the
//! model "give the final answer again" when done made it answer "Please provide the task".)

/// The reply to a plan.
pub(crate) const ACT_NOW: &str = "Do not describe a plan or ask me: use the tools now to do \
the task, one step at a time.";

/// Replies to plans per prompt.
pub(crate) const MAX_NUDGES: u32 = 2;

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
