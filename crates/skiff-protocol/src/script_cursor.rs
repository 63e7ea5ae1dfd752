//! The position in a script: which turn answers the next model call, and which of its faults
//! are still pending (one fault per attempt, then the answer, then the next turn; `repeat`
//! wraps). Shared by the mock server and the offline scripted provider.

use std::collections::HashMap;
use std::sync::Arc;

use crate::script::{Fault, Script, ScriptBlock, ScriptTurn};
use crate::{ContentBlock, RequestView, Role};

/// What the next `/v1/messages` request gets.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// A failed attempt: the current turn's next pending fault.
    Fault {
        /// The turn the fault belongs to (its index in the script).
        turn: usize,
        /// The serial the turn's answer will have (see [`Step::Answer`]).
        serial: usize,
        /// The fault to serve.
        fault: Fault,
        /// The turn whose events a mid-stream fault sends.
        script_turn: Arc<ScriptTurn>,
    },
    /// The current turn's successful response; the cursor has moved to the next turn.
    Answer {
        /// The turn's index in the script.
        turn: usize,
        /// How many successful responses were served before this one (unique across wraps).
        serial: usize,
        /// The turn itself.
        script_turn: Arc<ScriptTurn>,
    },
    /// No turn is left (and the script does not repeat).
    Exhausted {
        /// How many turns the script has.
        turns: usize,
    },
}

/// Walks a script's turns, serving each turn's faults one per request before its answer.
#[derive(Debug)]
pub struct ScriptCursor {
    model: Option<String>,
    repeat: bool,
    turns: Vec<Arc<ScriptTurn>>,
    turn: usize,
    faults_served: usize,
    answers: usize,
    /// Set when some turn belongs to a subagent's thread (see [`ScriptTurn::thread`]).
    threads: Option<Threads>,
}

/// The turns of each thread (None: the main conversation), served in order.
#[derive(Debug, Default)]
struct Threads {
    queues: HashMap<Option<String>, Queue>,
    /// The prompt of each Task call of the script, with the call's id: a request whose first
    /// message is that prompt comes from that call's subagent.
    prompts: Vec<(String, String)>,
}

#[derive(Debug, Default)]
struct Queue {
    turns: Vec<usize>,
    next: usize,
    faults_served: usize,
}

impl Threads {
    fn of(turns: &[Arc<ScriptTurn>]) -> Option<Self> {
        if turns.iter().all(|t| t.thread.is_none()) {
            return None;
        }
        let mut threads = Self::default();
        for (i, turn) in turns.iter().enumerate() {
            threads
                .queues
                .entry(turn.thread.clone())
                .or_default()
                .turns
                .push(i);
            for block in &turn.content {
                if let ScriptBlock::ToolUse {
                    id: Some(id),
                    name,
                    input,
                } = block
                    && (name == "Task" || name == "Agent")
                    && let Some(prompt) = input.get("prompt").and_then(|p| p.as_str())
                {
                    threads.prompts.push((prompt.to_owned(), id.clone()));
                }
            }
        }
        Some(threads)
    }
}

impl ScriptCursor {
    /// A cursor at the start of `script`.
    pub fn new(script: Script) -> Self {
        Self {
            model: script.model,
            repeat: script.repeat,
            turns: script.turns.into_iter().map(Arc::new).collect(),
            turn: 0,
            faults_served: 0,
            answers: 0,
            threads: None,
        }
        .with_threads()
    }

    fn with_threads(mut self) -> Self {
        self.threads = Threads::of(&self.turns);
        self
    }

    /// Which thread a request belongs to: a subagent's (the id of the Task call that started
    /// it) when the script has threads, the request offers no Task tool (subagents have none)
    /// and its first message holds that call's prompt; else the main conversation (None).
    pub fn thread_of(&self, request: &RequestView<'_>) -> Option<String> {
        self.thread_for(
            request.tools.iter().map(|t| t.name.as_str()),
            request.messages.first(),
        )
    }

    /// Whether some turn belongs to a subagent's thread.
    pub fn has_threads(&self) -> bool {
        self.threads.is_some()
    }

    /// [`Self::thread_of`] from a request's tool names and first message.
    pub fn thread_for<'a>(
        &self,
        mut tools: impl Iterator<Item = &'a str>,
        first: Option<&crate::Message>,
    ) -> Option<String> {
        let threads = self.threads.as_ref()?;
        if tools.any(|t| t == "Task" || t == "Agent") {
            return None;
        }
        let first = first.filter(|m| m.role == Role::User)?;
        let blocks = first.content.to_blocks();
        threads.prompts.iter().find_map(|(prompt, id)| {
            blocks
                .iter()
                .any(|b| matches!(b, ContentBlock::Text(t) if t.text == *prompt))
                .then(|| id.clone())
        })
    }

    /// What the next request of `thread` gets (see [`Self::thread_of`]), and advance. Without
    /// threads in the script this is [`Self::next_step`].
    pub fn next_step_in(&mut self, thread: Option<&str>) -> Step {
        let total = self.turns.len();
        let Some(threads) = self.threads.as_mut() else {
            return self.next_step();
        };
        let Some(queue) = threads.queues.get_mut(&thread.map(str::to_owned)) else {
            return Step::Exhausted { turns: total };
        };
        let Some(turn) = queue
            .turns
            .get(queue.next)
            .and_then(|&i| Some((i, self.turns.get(i)?)))
        else {
            return Step::Exhausted { turns: total };
        };
        let (index, turn) = turn;
        if let Some(fault) = turn.faults.get(queue.faults_served) {
            queue.faults_served += 1;
            return Step::Fault {
                turn: index,
                serial: self.answers,
                fault: fault.clone(),
                script_turn: Arc::clone(turn),
            };
        }
        queue.next += 1;
        queue.faults_served = 0;
        let step = Step::Answer {
            turn: index,
            serial: self.answers,
            script_turn: Arc::clone(turn),
        };
        self.answers += 1;
        step
    }

    /// The model name the script forces, if any.
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// Decide what the next request gets and advance.
    pub fn next_step(&mut self) -> Step {
        if self.turn >= self.turns.len() {
            if self.repeat && !self.turns.is_empty() {
                self.turn = 0;
                self.faults_served = 0;
            } else {
                return Step::Exhausted {
                    turns: self.turns.len(),
                };
            }
        }
        let index = self.turn;
        let Some(turn) = self.turns.get(index) else {
            return Step::Exhausted {
                turns: self.turns.len(),
            };
        };
        if let Some(fault) = turn.faults.get(self.faults_served) {
            self.faults_served += 1;
            return Step::Fault {
                turn: index,
                serial: self.answers,
                fault: fault.clone(),
                script_turn: Arc::clone(turn),
            };
        }
        let step = Step::Answer {
            turn: index,
            serial: self.answers,
            script_turn: Arc::clone(turn),
        };
        self.turn += 1;
        self.faults_served = 0;
        self.answers += 1;
        step
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fault() -> Fault {
        Fault::Status {
            status: 529,
            retry_after: None,
            retry_after_ms: None,
            message: None,
        }
    }

    fn kinds(cursor: &mut ScriptCursor, n: usize) -> Vec<String> {
        (0..n)
            .map(|_| match cursor.next_step() {
                Step::Fault { turn, .. } => format!("F{turn}"),
                Step::Answer { turn, serial, .. } => format!("A{turn}/{serial}"),
                Step::Exhausted { turns } => format!("X{turns}"),
            })
            .collect()
    }

    #[test]
    fn faults_precede_each_answer_then_exhausts() {
        let script = Script {
            turns: vec![
                ScriptTurn::text("a")
                    .with_fault(fault())
                    .with_fault(fault()),
                ScriptTurn::text("b"),
            ],
            ..Script::default()
        };
        let mut c = ScriptCursor::new(script);
        assert_eq!(kinds(&mut c, 5), ["F0", "F0", "A0/0", "A1/1", "X2"]);
    }

    #[test]
    fn repeat_wraps_with_faults_again() {
        let script = Script {
            repeat: true,
            turns: vec![
                ScriptTurn::text("a").with_fault(fault()),
                ScriptTurn::text("b"),
            ],
            ..Script::default()
        };
        let mut c = ScriptCursor::new(script);
        assert_eq!(
            kinds(&mut c, 6),
            ["F0", "A0/0", "A1/1", "F0", "A0/2", "A1/3"]
        );
    }

    #[test]
    #[allow(clippy::unwrap_used)]
    fn subagent_threads_get_their_own_turns_in_order() {
        use crate::{Message, ToolDefinition};
        let task = |id: &str, prompt: &str| ScriptBlock::ToolUse {
            id: Some(id.into()),
            name: "Task".into(),
            input: serde_json::json!({"prompt": prompt, "description": "d", "subagent_type": "x"}),
        };
        let in_thread = |t: ScriptTurn, id: &str| ScriptTurn {
            thread: Some(id.into()),
            ..t
        };
        let script = Script {
            turns: vec![
                ScriptTurn {
                    content: vec![task("t1", "look left"), task("t2", "look right")],
                    ..ScriptTurn::default()
                },
                in_thread(ScriptTurn::text("left 1"), "t1"),
                in_thread(ScriptTurn::text("right 1"), "t2"),
                in_thread(ScriptTurn::text("left 2"), "t1"),
                ScriptTurn::text("main 2"),
            ],
            ..Script::default()
        };
        let mut c = ScriptCursor::new(script);
        let tools: [ToolDefinition; 1] =
            [serde_json::from_value(serde_json::json!({"name": "Task"})).unwrap()];
        let request = |messages: &[Message], with_task: bool| {
            let mut view = RequestView::new("m", 10, messages);
            if with_task {
                view.tools = &tools;
            }
            c.thread_of(&view)
        };
        let main = [Message::user_text("look left")];
        assert_eq!(
            request(&main, true),
            None,
            "the main conversation offers Task"
        );
        let left = [Message::user_text("look left")];
        let right = [Message::user_text("look right")];
        let other = [Message::user_text("hello")];
        assert_eq!(request(&left, false).as_deref(), Some("t1"));
        assert_eq!(request(&right, false).as_deref(), Some("t2"));
        assert_eq!(request(&other, false), None);
        let text = |step: Step| match step {
            Step::Answer { script_turn, .. } => match &script_turn.content[0] {
                ScriptBlock::Text { text } => text.clone(),
                ScriptBlock::ToolUse { name, .. } => name.clone(),
                ScriptBlock::Thinking { .. } => "thinking".into(),
                _ => "server tool".into(),
            },
            other => format!("{other:?}"),
        };
        assert_eq!(text(c.next_step_in(None)), "Task");
        assert_eq!(text(c.next_step_in(Some("t2"))), "right 1");
        assert_eq!(text(c.next_step_in(Some("t1"))), "left 1");
        assert_eq!(text(c.next_step_in(Some("t1"))), "left 2");
        assert!(matches!(
            c.next_step_in(Some("t2")),
            Step::Exhausted { turns: 5 }
        ));
        assert_eq!(text(c.next_step_in(None)), "main 2");
    }

    #[test]
    fn empty_script_is_exhausted_even_when_repeating() {
        let mut c = ScriptCursor::new(Script {
            repeat: true,
            ..Script::default()
        });
        assert_eq!(kinds(&mut c, 1), ["X0"]);
    }
}
