//! Driving skiff's line REPL in a pseudo-terminal as a terminal would. The REPL reads lines in
//! the terminal's cooked mode and asks nothing of the terminal, so that it works on one that
//! answers nothing (a dumb terminal, an editor's shell buffer): [`expect`] fails when a
//! cursor-position query (`ESC [ 6 n`, what a line editor asks at each prompt) comes before the
//! text it waits for.

use expectrl::{Regex, Session};

/// A line editor's cursor-position query.
const QUERY: &str = "\x1b[6n";

/// Wait for `text` in skiff's output; an error if a cursor-position query comes first.
pub fn expect(s: &mut Session, text: &str) -> Result<(), expectrl::Error> {
    // Anchored, so that only the first query or `text` matches: expectrl consumes the output up
    // to the last match it is given, and would swallow what came between.
    let pattern = format!("(?s)^.*?({}|{})", regex::escape(QUERY), regex::escape(text));
    let found = s.expect(Regex(pattern.as_str()))?;
    if found.get(1) == Some(text.as_bytes()) {
        return Ok(());
    }
    Err(expectrl::Error::Other {
        message: format!(
            "the line REPL asked the terminal for the cursor position before {text:?}: {:?}",
            String::from_utf8_lossy(found.as_bytes())
        ),
        err: "terminal query".into(),
    })
}
