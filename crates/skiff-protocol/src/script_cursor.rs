//! The position in a script: which turn answers the next model call, and which of its faults
//! are still pending (one fault per attempt, then the answer, then the next turn; `repeat`
//! wraps). Shared by the mock server and the offline scripted provider.

use std::sync::Arc;

use crate::script::{Fault, Script, ScriptTurn};

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
        }
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
    fn empty_script_is_exhausted_even_when_repeating() {
        let mut c = ScriptCursor::new(Script {
            repeat: true,
            ..Script::default()
        });
        assert_eq!(kinds(&mut c, 1), ["X0"]);
    }
}
