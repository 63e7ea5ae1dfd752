//! A tool definition's input schema ([`InputSchema`]): JSON, kept as the compact text it came
//! as until something reads or changes it. A session offers a dozen built-in tools whose
//! schemas ship as text; building a tree for each only to write it into the first request
//! again was a fifth of what a one-turn run did before its request.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

/// A JSON Schema of a tool's input. Reads go through [`Deref`] to a [`Value`] (parsed from the
/// text on the first read); a change ([`DerefMut`]) drops the text, and the schema is written
/// from the value from then on. Written with serde_json, a schema still held as text comes out
/// as that text, which is what serde_json writes for the parsed value (see
/// [`InputSchema::from_json_text`]).
pub struct InputSchema {
    /// The compact JSON text, while it says what `value` says (dropped by a change).
    text: Option<Arc<RawValue>>,
    /// The schema: given, or parsed from `text` when first read.
    value: OnceLock<Value>,
}

impl InputSchema {
    /// A schema from JSON text, pretty or compact, not parsed until read. White space between
    /// tokens is dropped, so that it is written as serde_json writes the parsed value when the
    /// text is serde_json's own (its escapes and numbers; the built-in tools' schemas are
    /// rendered by it). Fails on text that is not one JSON value.
    pub fn from_json_text(text: &str) -> Result<Self, serde_json::Error> {
        Self::from_compact_json_text(compact(text))
    }

    /// A schema from JSON text that is compact already: [`compact_json!`](crate::compact_json)'s
    /// output, which compacts text known when skiff is built (the built-in tools' schemas), so
    /// that start-up only checks that it is JSON. Text that is not compact is kept as it is
    /// (white space and all). Fails on text that is not one JSON value.
    pub fn from_compact_json_text(text: impl Into<String>) -> Result<Self, serde_json::Error> {
        let raw = RawValue::from_string(text.into())?;
        Ok(Self {
            text: Some(Arc::from(raw)),
            value: OnceLock::new(),
        })
    }

    /// The schema as a JSON value (parsed from its text on the first call).
    pub fn value(&self) -> &Value {
        self.value.get_or_init(|| match &self.text {
            // The text was checked to be JSON when it was kept; nesting deeper than serde_json
            // parses is the one way this fails.
            Some(text) => serde_json::from_str(text.get()).unwrap_or_default(),
            None => Value::Null,
        })
    }

    /// The schema as a JSON value, owned.
    pub fn into_value(mut self) -> Value {
        self.value();
        self.value.take().unwrap_or_default()
    }

    /// Whether the schema is JSON `null` (no schema), without parsing it.
    pub fn is_null(&self) -> bool {
        match &self.text {
            Some(text) => text.get() == "null",
            None => self.value().is_null(),
        }
    }

    /// Whether the schema is a JSON object, without parsing it.
    pub fn is_object(&self) -> bool {
        match &self.text {
            Some(text) => text.get().starts_with('{'),
            None => self.value().is_object(),
        }
    }

    /// Whether the schema is still held as its text (nothing has changed it).
    pub fn is_text(&self) -> bool {
        self.text.is_some()
    }
}

/// `text` without the white space between its tokens (JSON's four: space, tab, line feed,
/// carriage return); strings are copied as they are.
fn compact(text: &str) -> String {
    let mut out = vec![0; text.len()];
    let len = compact_into(text.as_bytes(), &mut out);
    out.truncate(len);
    // Only ASCII bytes outside strings were left out, so the rest is still UTF-8.
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

/// JSON text `text` without the white space between its tokens, written into `out` as far as
/// it fits; returns the whole compact length (call it with an empty `out` to size one). Byte by
/// byte: everything it looks for is ASCII, which never occurs inside a longer UTF-8 sequence,
/// and strings (escapes included) are copied whole. A `const fn`, for
/// [`compact_json!`](crate::compact_json).
pub const fn compact_into(text: &[u8], out: &mut [u8]) -> usize {
    let mut len = 0;
    let mut in_string = false;
    let mut escaped = false;
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        let keep = if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            true
        } else {
            in_string = b == b'"';
            !matches!(b, b' ' | b'\t' | b'\n' | b'\r')
        };
        if keep {
            if len < out.len() {
                out[len] = b;
            }
            len += 1;
        }
        i += 1;
    }
    len
}

/// JSON text known when skiff is built (a `&'static str` constant expression, such as an
/// `include_str!` of a pretty schema file), compacted then: the compact `&'static str` that
/// [`InputSchema::from_json_text`] would make of it at run time, for
/// [`InputSchema::from_compact_json_text`].
#[macro_export]
macro_rules! compact_json {
    ($text:expr) => {{
        const TEXT: &str = $text;
        const LEN: usize = $crate::schema::compact_into(TEXT.as_bytes(), &mut []);
        const BYTES: [u8; LEN] = {
            let mut out = [0u8; LEN];
            $crate::schema::compact_into(TEXT.as_bytes(), &mut out);
            out
        };
        // Only ASCII bytes were left out, so this is UTF-8; the text as given otherwise.
        match ::core::str::from_utf8(&BYTES) {
            Ok(compact) => compact,
            Err(_) => TEXT,
        }
    }};
}

impl Deref for InputSchema {
    type Target = Value;

    fn deref(&self) -> &Value {
        self.value()
    }
}

impl DerefMut for InputSchema {
    fn deref_mut(&mut self) -> &mut Value {
        self.value();
        self.text = None;
        match self.value.get_mut() {
            Some(value) => value,
            None => unreachable!("InputSchema::value sets it"),
        }
    }
}

impl From<Value> for InputSchema {
    fn from(value: Value) -> Self {
        Self {
            text: None,
            value: OnceLock::from(value),
        }
    }
}

impl Default for InputSchema {
    /// No schema (`null`).
    fn default() -> Self {
        Value::Null.into()
    }
}

impl Clone for InputSchema {
    fn clone(&self) -> Self {
        Self {
            text: self.text.clone(),
            value: self.value.clone(),
        }
    }
}

impl PartialEq for InputSchema {
    fn eq(&self, other: &Self) -> bool {
        match (&self.text, &other.text) {
            (Some(a), Some(b)) if a.get() == b.get() => true,
            _ => self.value() == other.value(),
        }
    }
}

impl PartialEq<Value> for InputSchema {
    fn eq(&self, other: &Value) -> bool {
        self.value() == other
    }
}

impl fmt::Debug for InputSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.text, self.value.get()) {
            (Some(text), None) => f.write_str(text.get()),
            _ => self.value().fmt(f),
        }
    }
}

impl Serialize for InputSchema {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.text {
            Some(text) => text.serialize(serializer),
            None => self.value().serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for InputSchema {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(Self::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const PRETTY: &str = "{\n  \"properties\": {\n    \"a b\": {\n      \"description\": \
                          \"Say \\\"hi\\\" \\\\ then\\n go: { } [ ]\",\n      \"type\": \
                          \"string\"\n    },\n    \"n\": { \"maximum\": 600000, \"minimum\": \
                          -1.5 }\n  },\n  \"required\": [ \"a b\" ],\n  \"type\": \"object\"\n}\n";

    #[test]
    fn text_is_written_as_serde_json_writes_the_parsed_value() {
        let schema = InputSchema::from_json_text(PRETTY).unwrap();
        let parsed: Value = serde_json::from_str(PRETTY).unwrap();
        assert_eq!(
            serde_json::to_string(&schema).unwrap(),
            serde_json::to_string(&parsed).unwrap()
        );
        assert!(schema.is_text() && schema.is_object() && !schema.is_null());
        // Read without being changed: still written from the text, and equal to the value.
        assert_eq!(schema["required"], json!(["a b"]));
        assert!(schema.is_text());
        assert_eq!(schema, parsed);
        assert_eq!(serde_json::to_value(&schema).unwrap(), parsed);
    }

    #[test]
    fn a_change_drops_the_text() {
        let mut schema = InputSchema::from_json_text(PRETTY).unwrap();
        let before = schema.clone();
        schema["properties"]
            .as_object_mut()
            .unwrap()
            .remove("n")
            .unwrap();
        assert!(!schema.is_text());
        let written: Value =
            serde_json::from_str(&serde_json::to_string(&schema).unwrap()).unwrap();
        assert!(written["properties"].get("n").is_none());
        assert_ne!(schema, before);
        // The copy taken before still has the text and all of it.
        assert!(before.is_text() && before["properties"].get("n").is_some());
    }

    #[test]
    fn compact_keeps_strings_whole() {
        let text = "{ \"\" : \" \",\r\n \"a\\\\\" : [ \"é ✓ \\\" x\" ,\t1 ] }";
        assert_eq!(compact(text), "{\"\":\" \",\"a\\\\\":[\"é ✓ \\\" x\",1]}");
        let parsed: Value = serde_json::from_str(text).unwrap();
        assert_eq!(compact(text), serde_json::to_string(&parsed).unwrap());
    }

    #[test]
    fn text_compacted_when_built_is_the_text_compacted_at_run_time() {
        const BUILT: &str = crate::compact_json!(PRETTY);
        assert_eq!(BUILT, compact(PRETTY));
        let schema = InputSchema::from_compact_json_text(BUILT).unwrap();
        assert_eq!(schema, InputSchema::from_json_text(PRETTY).unwrap());
        assert_eq!(serde_json::to_string(&schema).unwrap(), BUILT);
        // An unterminated string is copied to the end, as at run time.
        const CUT: &str = crate::compact_json!("{ \"a\" : \"b \\\" c");
        assert_eq!(CUT, compact("{ \"a\" : \"b \\\" c"));
        assert_eq!(CUT, "{\"a\":\"b \\\" c");
    }

    #[test]
    fn compacting_into_a_short_buffer_gives_the_whole_length() {
        let mut out = [0u8; 4];
        assert_eq!(compact_into(b"{ \"ab\" : 1 }", &mut out), 8);
        assert_eq!(&out, b"{\"ab");
        assert_eq!(compact_into(b" \t\r\n", &mut []), 0);
    }

    #[test]
    fn compact_text_is_still_checked_to_be_json() {
        assert!(InputSchema::from_compact_json_text("{\"a\":").is_err());
        assert!(InputSchema::from_compact_json_text(String::from("[1,2]")).is_ok());
    }

    #[test]
    fn text_that_is_not_json_is_refused() {
        assert!(InputSchema::from_json_text("{\"a\": ").is_err());
        assert!(InputSchema::from_json_text("{} {}").is_err());
        assert!(InputSchema::from_json_text("").is_err());
    }

    #[test]
    fn values_and_texts_compare_by_what_they_say() {
        let text = InputSchema::from_json_text("{\"type\": \"object\"}").unwrap();
        let value = InputSchema::from(json!({"type": "object"}));
        assert_eq!(text, value);
        assert_eq!(value, text);
        assert!(InputSchema::default().is_null());
        assert!(InputSchema::from_json_text(" null ").unwrap().is_null());
        assert!(!InputSchema::from_json_text("[1]").unwrap().is_object());
        let back: InputSchema = serde_json::from_str("{\"type\":\"object\"}").unwrap();
        assert_eq!(back, text);
        assert_eq!(text.into_value(), json!({"type": "object"}));
    }
}
