//! An answer that repeats itself without end. A small local model can fall into a loop inside
//! one answer ("Please note that I cannot run tests… Please note that I cannot run tests…")
//! and write until max_tokens: on 2 CPU cores, 8,192 tokens of it take 15 minutes. Once the
//! end of the answer's text is one passage of at least [`MIN_PERIOD`] characters said
//! [`MIN_REPEATS`] times in a row, over at least [`MIN_SPAN`] characters, the call stops and
//! the answer keeps its text up to the first repetition.

/// The tool calls written as text in the part of a runaway answer that is kept (a small model
/// that writes the same calls over and over: the stream is stopped before it ends, so the
/// provider never looked for them), each once, with the rest of the text; `None` when there is
/// none or no tool is offered.
pub(crate) fn calls_in(
    text: &str,
    tools: &[skiff_protocol::ToolDefinition],
) -> Option<(String, Vec<skiff_protocol::ToolUseBlock>)> {
    if tools.is_empty() {
        return None;
    }
    let known: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
    let (rest, calls) = skiff_llm::openai::text_calls::find(text, &known)?;
    let mut blocks: Vec<skiff_protocol::ToolUseBlock> = Vec::new();
    for call in calls {
        let input = serde_json::Value::Object(call.arguments);
        if blocks
            .iter()
            .any(|b| b.name == call.name && b.input == input)
        {
            continue;
        }
        blocks.push(skiff_protocol::ToolUseBlock {
            id: format!("toolu_{}", crate::frames::new_uuid().replace('-', "")),
            name: call.name,
            input,
            cache_control: None,
        });
    }
    Some((rest, blocks))
}

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
pub(crate) struct Runaway {
    checked: usize,
}

impl Runaway {
    /// When `text` (the answer so far) ends in a runaway repetition: the length to keep (the
    /// text before the repetitions and the passage once).
    pub(crate) fn check(&mut self, text: &str) -> Option<usize> {
        if text.len() < self.checked + CHECK_EVERY {
            return None;
        }
        self.checked = text.len();
        repeated_tail(text.as_bytes())
    }
}

/// The length of `text` without all but the first of the repetitions its end consists of.
fn repeated_tail(text: &[u8]) -> Option<usize> {
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

/// The longest prefix of `text` no longer than `len` bytes that ends on a character boundary.
pub(crate) fn floor_boundary(text: &str, mut len: usize) -> usize {
    while len > 0 && !text.is_char_boundary(len) {
        len -= 1;
    }
    len
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_in_the_kept_text_are_taken_once() {
        let tool = |name: &str| skiff_protocol::ToolDefinition {
            name: name.into(),
            description: None,
            input_schema: serde_json::json!({"type": "object"}),
            cache_control: None,
            extra: Default::default(),
        };
        let tools = [tool("Grep"), tool("Bash")];
        let grep = r#"<tools>{"name": "Grep", "arguments": {"pattern": "fail"}}</tools>"#;
        let bash = r#"<tools>{"name": "Bash", "arguments": {"command": "bash test.sh"}}</tools>"#;
        let text = format!("{grep}\n{bash}\n{grep}\n<tools>{{\"name\": \"Grep\", \"argu");
        let (rest, calls) = calls_in(&text, &tools).unwrap();
        let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["Grep", "Bash"]);
        assert_eq!(
            calls[1].input,
            serde_json::json!({"command": "bash test.sh"})
        );
        assert!(calls[0].id.starts_with("toolu_") && calls[0].id != calls[1].id);
        assert!(!rest.contains("bash test.sh"), "{rest}");
        assert_eq!(calls_in(&text, &[]), None);
        assert_eq!(calls_in("just prose, again and again", &tools), None);
    }

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
        assert_eq!(floor_boundary("aé", 2), 1);
    }
}
