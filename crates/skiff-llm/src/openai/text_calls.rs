//! Tool calls written as text. Small local models often answer a tool call with a JSON object
//! (bare, in a ```json fence, or in `<tool_call>…</tool_call>` as Qwen and Hermes templates
//! do) instead of a real `tool_calls` entry. A call is recognised only when it names a tool of
//! the request and carries an arguments object.

use serde_json::{Map, Value};

/// A call found in text.
#[derive(Debug, Clone, PartialEq)]
pub struct TextCall {
    /// The tool's name as the request spells it.
    pub name: String,
    /// Its arguments.
    pub arguments: Map<String, Value>,
}

/// The calls in `text` naming one of `known`, and the text around them (trimmed); `None` when
/// there is none. Tags, fences and bare JSON first; then any JSON object in the text that is a
/// call (small models also wrap calls in `<tools>`, `<function>` or a ```bash fence).
pub fn find(text: &str, known: &[String]) -> Option<(String, Vec<TextCall>)> {
    let (rest, calls) = framed(text, known)
        .or_else(|| embedded(text, known))
        .or_else(|| attributed(text, known))?;
    // The same call written twice in one answer (small models repeat their lists) runs once.
    let mut unique: Vec<TextCall> = Vec::with_capacity(calls.len());
    for call in calls {
        if !unique.contains(&call) {
            unique.push(call);
        }
    }
    Some((rest, unique))
}

/// Whether `text` may hold a call [`find`] would see (a JSON object, or a tag).
pub fn may_hold_call(text: &str) -> bool {
    text.contains('{') || text.contains('<')
}

/// Calls written as tags with attributes: `<tools/Bash command="bash test.sh" />`,
/// `<Read file_path="calc.sh"/>` (a small model invented this form). The name must be a known
/// tool's, with at least one attribute; values are strings, or numbers and booleans when they
/// read as one; `&quot;`, `&apos;`, `&lt;`, `&gt;` and `&amp;` are decoded.
fn attributed(text: &str, known: &[String]) -> Option<(String, Vec<TextCall>)> {
    if text.len() > EMBEDDED_MAX {
        return None;
    }
    let (mut calls, mut rest, mut pos) = (Vec::new(), String::new(), 0);
    while let Some(start) = text[pos..].find('<').map(|i| pos + i) {
        match attributed_call(&text[start + 1..], known) {
            Some((call, len)) => {
                rest.push_str(&text[pos..start]);
                calls.push(call);
                pos = start + 1 + len;
            }
            None => {
                rest.push_str(&text[pos..=start]);
                pos = start + 1;
            }
        }
    }
    rest.push_str(&text[pos..]);
    (!calls.is_empty()).then(|| (rest.trim().to_owned(), calls))
}

/// One attributed call at the start of `tag` (just after its `<`): the call and the bytes it
/// takes up to and including its `>`.
fn attributed_call(tag: &str, known: &[String]) -> Option<(TextCall, usize)> {
    let body = ["tools/", "tool/", "function="]
        .iter()
        .find_map(|p| tag.strip_prefix(p))
        .unwrap_or(tag);
    let offset = tag.len() - body.len();
    let name_len = body
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(body.len());
    let name = known
        .iter()
        .find(|k| k.eq_ignore_ascii_case(&body[..name_len]))?
        .clone();
    let mut arguments = Map::new();
    let mut at = name_len;
    loop {
        let trimmed = body[at..].trim_start();
        at = body.len() - trimmed.len();
        if let Some(end) = trimmed
            .strip_prefix("/>")
            .map(|_| 2)
            .or_else(|| trimmed.strip_prefix('>').map(|_| 1))
        {
            return (!arguments.is_empty())
                .then_some((TextCall { name, arguments }, offset + at + end));
        }
        let key_len = trimmed.find('=')?;
        let key = &trimmed[..key_len];
        if key.is_empty()
            || !key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return None;
        }
        let value = &trimmed[key_len + 1..];
        let quote = value.chars().next().filter(|q| *q == '"' || *q == '\'')?;
        let close = value[1..].find(quote)?;
        let raw = decode_entities(&value[1..1 + close]);
        let parsed = match serde_json::from_str::<Value>(&raw) {
            Ok(v @ (Value::Number(_) | Value::Bool(_))) => v,
            _ => Value::String(raw),
        };
        arguments.insert(key.to_owned(), parsed);
        at += key_len + 1 + close + 2;
    }
}

fn decode_entities(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// Longest text searched for embedded calls, in bytes.
const EMBEDDED_MAX: usize = 32 * 1024;

/// The JSON objects in `text` that are calls, wherever they are; the rest of the text around
/// them.
fn embedded(text: &str, known: &[String]) -> Option<(String, Vec<TextCall>)> {
    if text.len() > EMBEDDED_MAX {
        return None;
    }
    let (mut calls, mut rest, mut pos) = (Vec::new(), String::new(), 0);
    while let Some(start) = text[pos..].find('{').map(|i| pos + i) {
        let mut values = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        let value = values.next().and_then(Result::ok);
        let named = value.as_ref().and_then(|v| match call_of(v, known) {
            Some(call) => Some((call, start)),
            None => named_before(&text[..start], v, known),
        });
        match named {
            Some((call, name_at)) => {
                let from = name_at.max(pos);
                rest.push_str(&text[pos..from]);
                calls.push(call);
                pos = start + values.byte_offset();
            }
            _ => {
                rest.push_str(&text[pos..=start]);
                pos = start + 1;
            }
        }
    }
    rest.push_str(&text[pos..]);
    (!calls.is_empty()).then(|| (rest.trim().to_owned(), calls))
}

/// Text allowed between a tool's name and its arguments object: quotes, tag and call
/// punctuation, and the word `arguments` or `parameters` (`<function=Bash>{…}`,
/// `<function name="Grep" arguments='{…}'/>`, `Read({…})`).
fn is_glue(between: &str) -> bool {
    let words = between.replace("arguments", "").replace("parameters", "");
    between.len() <= 24
        && words
            .chars()
            .all(|c| matches!(c, '"' | '\'' | '>' | '=' | '(' | ':' | ',') || c.is_whitespace())
}

/// An arguments object right after a known tool's name (`before` ends just before the
/// object): the call, and where its name's markup starts (`<function…`, or the name).
fn named_before(before: &str, args: &Value, known: &[String]) -> Option<(TextCall, usize)> {
    let arguments = args.as_object().filter(|a| !is_schema(a))?.clone();
    known.iter().find_map(|name| {
        let at = before.rfind(name.as_str())?;
        let boundary = before[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric() && c != '_');
        if !boundary || !is_glue(&before[at + name.len()..]) {
            return None;
        }
        let markup = before[..at]
            .rfind("<function")
            .filter(|m| before[*m..at].len() <= 16)
            .unwrap_or(at);
        Some((
            TextCall {
                name: name.clone(),
                arguments: arguments.clone(),
            },
            markup,
        ))
    })
}

fn framed(text: &str, known: &[String]) -> Option<(String, Vec<TextCall>)> {
    let mut calls = Vec::new();
    let mut rest = String::new();
    // <tool_call>…</tool_call> segments.
    if text.contains("<tool_call>") {
        let mut tail = text;
        while let Some(start) = tail.find("<tool_call>") {
            rest.push_str(&tail[..start]);
            let after = &tail[start + "<tool_call>".len()..];
            let (inner, next) = match after.find("</tool_call>") {
                Some(end) => (&after[..end], &after[end + "</tool_call>".len()..]),
                None => (after, ""),
            };
            let found = calls_in_json(inner.trim(), known);
            if found.is_empty() {
                rest.push_str(&tail[start..tail.len() - next.len()]);
            }
            calls.extend(found);
            tail = next;
        }
        rest.push_str(tail);
        return (!calls.is_empty()).then(|| (rest.trim().to_owned(), calls));
    }
    // ``` fences.
    if text.contains("```") {
        let mut tail = text;
        while let Some(start) = tail.find("```") {
            rest.push_str(&tail[..start]);
            let after = &tail[start + 3..];
            // The info string (json, tool_call, …) up to the end of the line.
            let body_start = after.find('\n').map_or(after.len(), |i| i + 1);
            let body = &after[body_start..];
            let (inner, next) = match body.find("```") {
                Some(end) => (&body[..end], &body[end + 3..]),
                None => (body, ""),
            };
            let found = calls_in_json(inner.trim(), known);
            if found.is_empty() {
                rest.push_str(&tail[start..tail.len() - next.len()]);
            }
            calls.extend(found);
            tail = next;
        }
        rest.push_str(tail);
        return (!calls.is_empty()).then(|| (rest.trim().to_owned(), calls));
    }
    let found = calls_in_json(text.trim(), known);
    (!found.is_empty()).then(|| (String::new(), found))
}

/// The calls in one JSON text: an object or an array of objects.
fn calls_in_json(text: &str, known: &[String]) -> Vec<TextCall> {
    let parsed = serde_json::from_str::<Value>(text).or_else(|e| {
        // `{{…}}`: the braces doubled, as a template's escaping taught some models.
        match text.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
            Some(inner) if inner.starts_with('{') => serde_json::from_str::<Value>(inner),
            _ => Err(e),
        }
    });
    let Ok(value) = parsed else {
        return Vec::new();
    };
    let items = match value {
        Value::Array(items) => items,
        other => vec![other],
    };
    let calls: Vec<TextCall> = items.iter().filter_map(|v| call_of(v, known)).collect();
    // All or nothing: a list with something else in it is not a list of calls.
    if calls.len() == items.len() {
        calls
    } else {
        Vec::new()
    }
}

fn call_of(value: &Value, known: &[String]) -> Option<TextCall> {
    let obj = value.as_object()?;
    let function = obj.get("function");
    let name = obj
        .get("name")
        .or_else(|| obj.get("tool"))
        .or_else(|| obj.get("tool_name"))
        .or_else(|| function.and_then(|f| f.get("name")))
        .or(function)?
        .as_str()?;
    let name = known.iter().find(|k| k.eq_ignore_ascii_case(name))?.clone();
    let args = obj
        .get("arguments")
        .or_else(|| obj.get("parameters"))
        .or_else(|| obj.get("args"))
        .or_else(|| obj.get("input"))
        .or_else(|| function.and_then(|f| f.get("arguments")))?;
    let arguments = match args {
        Value::Object(m) => m.clone(),
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(m)) => m,
            _ => return None,
        },
        _ => return None,
    };
    (!is_schema(&arguments)).then_some(TextCall { name, arguments })
}

/// Whether `args` is a JSON schema rather than arguments: a small model that echoes the tool
/// definitions (`{"name": "Read", "parameters": {"type": "object", "properties": …}}`) is not
/// calling them.
fn is_schema(args: &Map<String, Value>) -> bool {
    args.get("type").and_then(Value::as_str) == Some("object")
        && args.get("properties").is_some_and(Value::is_object)
}

/// Whether text that starts like this may still turn out to be a call written as text (and
/// should be held back until the answer is complete).
pub fn may_be_call(text: &str) -> bool {
    let t = text.trim_start();
    ["{", "[{", "```", "<tool_call>"]
        .iter()
        .any(|m| t.starts_with(m) || (m.starts_with(t) && !t.is_empty()))
        || (t.starts_with('[') && t[1..].trim_start().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn known() -> Vec<String> {
        vec!["Bash".into(), "Read".into()]
    }

    #[test]
    fn calls_written_as_tags_with_attributes() {
        let text = "```bash\n<tools/Bash command=\"sh ./test.sh\" />\n<tools/Read file_path='calc.sh' limit=\"20\"/>\n```\nChanges: none";
        let (rest, calls) = find(text, &known()).unwrap();
        assert_eq!(calls.len(), 2, "{calls:?}");
        assert_eq!(calls[0].name, "Bash");
        assert_eq!(calls[0].arguments["command"], "sh ./test.sh");
        assert_eq!(calls[1].name, "Read");
        assert_eq!(calls[1].arguments["file_path"], "calc.sh");
        assert_eq!(calls[1].arguments["limit"], 20);
        assert!(
            rest.ends_with("Changes: none") && !rest.contains("tools/"),
            "{rest}"
        );
        let (_, calls) = find(
            "<bash command=\"echo &quot;hi&quot; &amp;&amp; ls\">",
            &known(),
        )
        .unwrap();
        assert_eq!(calls[0].arguments["command"], "echo \"hi\" && ls");
        // Tags that are not calls: unknown names, no attributes, HTML.
        for text in [
            "<Write file_path=\"a\"/>",
            "<Bash/>",
            "<b>bold</b>",
            "a < b and c > d",
            "<Read file_path=\"x",
        ] {
            assert_eq!(find(text, &known()), None, "{text}");
        }
    }

    #[test]
    fn bare_fenced_and_tagged_calls() {
        let (rest, calls) = find(
            r#"{"name": "bash", "arguments": {"command": "ls"}}"#,
            &known(),
        )
        .unwrap();
        assert_eq!(rest, "");
        assert_eq!(calls[0].name, "Bash");
        assert_eq!(calls[0].arguments["command"], "ls");

        let text = "I will run it.\n```json\n{\"name\": \"Read\", \"parameters\": {\"file_path\": \"a.rs\"}}\n```\n";
        let (rest, calls) = find(text, &known()).unwrap();
        assert_eq!(rest, "I will run it.");
        assert_eq!(calls[0].name, "Read");

        let text = "<tool_call>\n{\"name\": \"Bash\", \"arguments\": \"{\\\"command\\\": \\\"pwd\\\"}\"}\n</tool_call>\n<tool_call>{\"function\": {\"name\": \"Read\", \"arguments\": {\"file_path\": \"x\"}}}</tool_call>";
        let (_, calls) = find(text, &known()).unwrap();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].arguments["command"], "pwd");
        assert_eq!(calls[1].name, "Read");
    }

    #[test]
    fn doubled_braces_are_a_call() {
        let (_, calls) = find(
            r#"{{"name": "Bash", "arguments": {"command": "ls"}}}"#,
            &known(),
        )
        .unwrap();
        assert_eq!(calls[0].name, "Bash");
        assert_eq!(calls[0].arguments["command"], "ls");
    }

    #[test]
    fn calls_in_other_wrappers_are_found_anywhere() {
        let text = "Here:\n```bash\n<tools>\n  {\"name\": \"Read\", \"arguments\": {\"file_path\": \"README.md\"}}\n</tools>\n<tools>{\"name\": \"Bash\", \"arguments\": {\"command\": \"ls {a,b}\"}}</tools>\n```";
        let (rest, calls) = find(text, &known()).unwrap();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].arguments["file_path"], "README.md");
        assert_eq!(calls[1].arguments["command"], "ls {a,b}");
        assert!(rest.starts_with("Here:"), "{rest}");
        assert!(!rest.contains("README.md"), "{rest}");
    }

    #[test]
    fn a_name_then_its_arguments_is_a_call() {
        for text in [
            "<function=Bash>{\"command\": \"bash test.sh\"}</function>",
            "<tools>\n  <function name=\"Bash\" arguments='{\"command\": \"bash test.sh\"}'/>\n</tools>",
            "Running it: Bash({\"command\": \"bash test.sh\"})",
        ] {
            let (rest, calls) = find(text, &known()).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(calls.len(), 1, "{text}");
            assert_eq!(calls[0].name, "Bash");
            assert_eq!(calls[0].arguments["command"], "bash test.sh");
            assert!(!rest.contains("command"), "{rest}");
        }
        // A name in prose far from an object, or part of a longer word, is not a call.
        for text in [
            "Use Bash to run things; settings look like {\"command\": \"x\"}",
            "MyBash({\"command\": \"x\"})",
        ] {
            assert_eq!(find(text, &known()), None, "{text}");
        }
    }

    #[test]
    fn not_calls() {
        for text in [
            r#"{"name": "Nope", "arguments": {}}"#,
            r#"{"name": "Bash"}"#,
            r#"{"result": 3}"#,
            "```rust\nfn main() {}\n```",
            "plain answer",
            "{not json",
            "Use {\"name\": \"Bash\"} { or } {}",
            "a map {\"a\": 1} and {{\"b\": 2}}",
            // The tool definitions echoed back.
            r#"<tools>{"type": "function", "function": {"name": "Read", "description": "Read a file.", "parameters": {"type": "object", "properties": {"file_path": {"type": "string"}}}}}</tools>"#,
            r#"{"name": "Bash", "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}"#,
        ] {
            assert_eq!(find(text, &known()), None, "{text}");
        }
        let _ = json!({});
    }

    #[test]
    fn hold_back_only_what_may_be_a_call() {
        for t in [
            "{",
            "  {\"na",
            "`",
            "``",
            "```json",
            "<",
            "<tool",
            "<tool_call>{",
            "[",
        ] {
            assert!(may_be_call(t), "{t}");
        }
        for t in ["Hello", "I will", "<b>", "- item", "[link](x)"] {
            assert!(!may_be_call(t), "{t}");
        }
    }
}
