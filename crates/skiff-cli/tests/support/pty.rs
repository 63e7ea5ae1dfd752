//! Driving skiff's line REPL in a pseudo-terminal as a terminal would: the line editor asks for
//! the cursor position (`ESC [ 6 n`) when it paints a prompt and after each line, and waits up
//! to two seconds for each answer. [`expect`] answers every query it reads on the way to the
//! text it waits for, so a test waits for skiff, not for those timeouts (repl.rs's 4 tests
//! took 69 s answering only the first query of each prompt).

use expectrl::{Regex, Session};

/// The line editor's cursor-position query.
const QUERY: &str = "\x1b[6n";
/// A terminal's answer to it: the cursor at row 1, column 1.
const ANSWER: &str = "\x1b[1;1R";

/// Wait for `text` in skiff's output, answering the cursor-position queries before it.
pub fn expect(s: &mut Session, text: &str) -> Result<(), expectrl::Error> {
    // Anchored, so that only the first query or `text` matches: expectrl consumes the output up
    // to the last match it is given, and would swallow what came between.
    let pattern = format!("(?s)^.*?({}|{})", regex::escape(QUERY), regex::escape(text));
    loop {
        let found = s.expect(Regex(pattern.as_str()))?;
        if found.get(1) == Some(text.as_bytes()) {
            return Ok(());
        }
        s.send(ANSWER)?;
    }
}
