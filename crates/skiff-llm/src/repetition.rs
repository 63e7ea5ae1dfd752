//! Text that repeats itself without end. A small local model can fall into a loop inside one
//! answer ("Please note that I cannot run tests… Please note that I cannot run tests…") and write
//! until max_tokens: on 2 CPU cores, 8,192 tokens of it take 15 minutes. Once the end of the
//! text is one passage of at least [`MIN_PERIOD`] bytes said [`MIN_REPEATS`] times in a row,
//! over at least [`MIN_SPAN`] bytes, it is a runaway: skiff-core stops the call and keeps the
//! text up to the first repetition; the text-call holders here (text that may be a call written
//! as text is held back until the message ends) let such text through so that check sees it.

/// Shortest repeated passage, in bytes (shorter ones are rules, tables, padding).
const MIN_PERIOD: usize = 8;
/// Longest repeated passage looked for, in bytes.
const MAX_PERIOD: usize = 400;
/// Times in a row the passage must occur.
const MIN_REPEATS: usize = 5;
/// Fewest bytes the repetitions must cover.
const MIN_SPAN: usize = 800;
/// Bytes of new text between two checks.
const CHECK_EVERY: usize = 128;

/// Watches one answer's text as it grows.
#[derive(Debug, Default)]
pub struct Runaway {
    checked: usize,
}

impl Runaway {
    /// When `text` (the answer so far) ends in a runaway repetition: the length to keep (the
    /// text before the repetitions and the passage once).
    pub fn check(&mut self, text: &str) -> Option<usize> {
        if text.len() < self.checked + CHECK_EVERY {
            return None;
        }
        self.checked = text.len();
        repeated_tail(text.as_bytes())
    }
}

/// The length of `text` without all but the first of the repetitions its end consists of.
pub fn repeated_tail(text: &[u8]) -> Option<usize> {
    let n = text.len();
    for period in MIN_PERIOD..=MAX_PERIOD.min(n / MIN_REPEATS) {
        let unit = &text[n - period..];
        // A unit made of a shorter one ("--------") is a rule or padding, not a passage.
        if (1..MIN_PERIOD).any(|q| unit[q..] == unit[..period - q]) {
            continue;
        }
        let mut repeats = 1;
        while repeats * period + period <= n
            && &text[n - (repeats + 1) * period..n - repeats * period] == unit
        {
            repeats += 1;
        }
        if repeats >= MIN_REPEATS && repeats * period >= MIN_SPAN {
            return Some(n - (repeats - 1) * period);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_passage_said_again_and_again_is_cut_to_once() {
        let intro = "I cannot see the tests. ";
        let unit = "Please note that I cannot run tests or edit files in this repository. ";
        let text = format!("{intro}{}", unit.repeat(14));
        let keep = repeated_tail(text.as_bytes()).unwrap();
        // The end may fall inside a unit; what is kept is the intro and about one unit.
        assert!(keep <= intro.len() + 2 * unit.len(), "{keep}");
        assert!(text[..keep].starts_with(intro));
        // Checked as it grows.
        let mut watch = Runaway::default();
        let mut cut = None;
        for end in (1..=text.len()).step_by(7) {
            if let Some(k) = watch.check(&text[..end]) {
                cut = Some(k);
                break;
            }
        }
        assert!(cut.is_some());
    }

    #[test]
    fn ordinary_text_and_short_repetitions_go_on() {
        let prose: String = (0..200)
            .map(|i| format!("Line {i} says something. "))
            .collect();
        assert_eq!(repeated_tail(prose.as_bytes()), None);
        // A rule, a table of equal rows: short units, or not enough of them.
        assert_eq!(repeated_tail("-".repeat(2000).as_bytes()), None);
        let rows = "| a | b | c |\n".repeat(30);
        assert_eq!(repeated_tail(rows.as_bytes()), None);
        let para = "A paragraph said twice, long enough to be a real paragraph. ".repeat(3);
        assert_eq!(repeated_tail(para.as_bytes()), None);
    }
}
