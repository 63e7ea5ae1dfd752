//! An answer that repeats itself without end ([`skiff_llm::repetition`] says when): the call
//! stops, the answer keeps its text up to the first repetition, and the calls written as text
//! in what is kept are run ([`calls_in`]).

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
    // `find` gives each call once.
    let (rest, calls) = skiff_llm::openai::text_calls::find(text, &known)?;
    let blocks = calls
        .into_iter()
        .map(|call| skiff_protocol::ToolUseBlock {
            id: format!("toolu_{}", crate::frames::new_uuid().replace('-', "")),
            name: call.name,
            input: serde_json::Value::Object(call.arguments),
            cache_control: None,
        })
        .collect();
    Some((rest, blocks))
}

/// Watches one answer's text as it grows (the detection is skiff-llm's: the providers' text-call
/// holders use it too, to let a runaway they hold back through to this check).
pub(crate) type Runaway = skiff_llm::repetition::Runaway;

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
            input_schema: serde_json::json!({"type": "object"}).into(),
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
    fn floor_boundary_stays_on_a_character() {
        assert_eq!(floor_boundary("aé", 2), 1);
    }
}
