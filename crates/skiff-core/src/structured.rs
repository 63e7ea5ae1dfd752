//! Structured outputs (`--json-schema`, the Agent SDKs' `output_format`): the `StructuredOutput`
//! tool whose input schema is the caller's schema, as Claude Code offers it. Its input is
//! validated with the `jsonschema` crate; a mismatch goes back to the model as a tool error
//! naming each problem, a valid call ends the run with the input as the result's
//! `structured_output`. The turn loop bounds the attempts ([`Attempts`]).

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use skiff_tools::{Tool, ToolContext, ToolOutput};

/// The tool's name.
pub const STRUCTURED_OUTPUT: &str = "StructuredOutput";

/// The tool's description, Claude Code's words.
const DESCRIPTION: &str = "Use this tool to return your final response in the requested structured format. You MUST call this tool exactly once at the end of your response to provide the structured output.";

/// The result of a valid call.
pub const ACCEPTED: &str = "Structured output provided successfully";

/// What the model is told when it answers without calling the tool (once per prompt).
pub const ENFORCE: &str = "[structured-output-enforce] You MUST call the StructuredOutput tool to complete this request. Call this tool now.";

/// Failed attempts before the run ends with `error_max_structured_output_retries` (Claude
/// Code's default; MAX_STRUCTURED_OUTPUT_RETRIES changes it).
pub const DEFAULT_MAX_RETRIES: u32 = 5;

/// Messages of one validation are cut to this many characters each, and to this many.
const MAX_MESSAGE_CHARS: usize = 300;
const MAX_MESSAGES: usize = 20;

/// Why a schema cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// Not JSON.
    #[error("not valid JSON ({0})")]
    NotJson(String),
    /// JSON, but not a schema the validator accepts.
    #[error("not a valid JSON Schema ({0})")]
    Invalid(String),
    /// Not `type: "object"` at the root: the API takes only object tool inputs.
    #[error(
        "the root schema must declare \"type\": \"object\" (the API only accepts object tool inputs)"
    )]
    NotObject,
}

/// A checked JSON Schema for structured output.
#[derive(Clone)]
pub struct OutputSchema {
    schema: Value,
    validator: Arc<jsonschema::Validator>,
    max_attempts: u32,
}

impl std::fmt::Debug for OutputSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputSchema")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

impl PartialEq for OutputSchema {
    fn eq(&self, other: &Self) -> bool {
        self.schema == other.schema
    }
}

impl OutputSchema {
    /// A schema given as JSON text (`--json-schema`).
    pub fn parse(text: &str) -> Result<Self, SchemaError> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| SchemaError::NotJson(e.to_string()))?;
        Self::new(value)
    }

    /// A schema given as a JSON value (the SDKs' `initialize.jsonSchema`).
    pub fn new(schema: Value) -> Result<Self, SchemaError> {
        if schema.get("type").and_then(Value::as_str) != Some("object") {
            return Err(SchemaError::NotObject);
        }
        let validator =
            jsonschema::validator_for(&schema).map_err(|e| SchemaError::Invalid(e.to_string()))?;
        Ok(Self {
            schema,
            validator: Arc::new(validator),
            max_attempts: DEFAULT_MAX_RETRIES,
        })
    }

    /// Allow this many failed attempts (MAX_STRUCTURED_OUTPUT_RETRIES; at least 1).
    pub fn with_max_attempts(mut self, n: u32) -> Self {
        self.max_attempts = n.max(1);
        self
    }

    /// The failed attempts allowed before the run ends.
    pub fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The schema.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// `Ok` when `instance` matches; else each problem as `path: message` (`root` for the
    /// whole input), as Claude Code words them, joined with ", ".
    pub fn check(&self, instance: &Value) -> Result<(), String> {
        let problems: Vec<String> = self
            .validator
            .iter_errors(instance)
            .take(MAX_MESSAGES)
            .map(|e| {
                let path = e.instance_path().as_str();
                let path = if path.is_empty() { "root" } else { path };
                let text: String = format!("{path}: {e}")
                    .chars()
                    .take(MAX_MESSAGE_CHARS)
                    .collect();
                text
            })
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join(", "))
        }
    }
}

/// The `StructuredOutput` tool.
pub struct StructuredOutputTool {
    schema: OutputSchema,
}

impl StructuredOutputTool {
    /// The tool for `schema`.
    pub fn new(schema: OutputSchema) -> Self {
        Self { schema }
    }
}

#[async_trait]
impl Tool for StructuredOutputTool {
    fn name(&self) -> &str {
        STRUCTURED_OUTPUT
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> &Value {
        self.schema.schema()
    }

    fn is_read_only(&self) -> bool {
        true
    }

    async fn call(&self, input: Value, _ctx: &ToolContext) -> ToolOutput {
        match self.schema.check(&input) {
            Ok(()) => {
                let mut out = ToolOutput::text(ACCEPTED);
                out.structured = Some(input);
                out
            }
            Err(problems) => ToolOutput::tool_use_error(format!(
                "Output does not match required schema: {problems}"
            )),
        }
    }
}

/// How a turn with structured output is going: attempts that failed validation, whether the
/// model was told to call the tool, the last problem.
#[derive(Debug, Default)]
pub(crate) struct Attempts {
    failed: u32,
    last_error: Option<String>,
    enforced: bool,
}

/// What the turn loop does after a tool round or an answer.
#[derive(Debug, PartialEq)]
pub(crate) enum Next {
    /// Go on.
    Continue,
    /// The run is done: this is the structured output.
    Done(Value),
    /// Tell the model to call the tool, then go on.
    Enforce,
    /// The attempts are used up: the run ends with this error.
    GiveUp(String),
}

impl Attempts {
    /// After a tool round: `calls` are the round's `StructuredOutput` calls and their results
    /// (`Ok(input)` when valid, `Err(text)` when not); `max` failed attempts end the run.
    pub fn after_tools(&mut self, calls: Vec<Result<Value, String>>, max: u32) -> Next {
        for call in calls {
            match call {
                Ok(value) => return Next::Done(value),
                Err(e) => {
                    self.failed += 1;
                    self.last_error = Some(e);
                }
            }
        }
        if self.failed >= max {
            return Next::GiveUp(self.give_up_text());
        }
        Next::Continue
    }

    /// The model answered without calling the tool: tell it once, then give up.
    pub fn after_answer(&mut self) -> Next {
        if std::mem::replace(&mut self.enforced, true) {
            Next::GiveUp(match self.last_error {
                Some(_) => self.give_up_text(),
                None => "The model answered without calling the StructuredOutput tool, so no \
                         structured output was provided"
                    .to_owned(),
            })
        } else {
            Next::Enforce
        }
    }

    fn give_up_text(&self) -> String {
        let n = self.failed;
        match &self.last_error {
            Some(e) => format!(
                "Failed to provide valid structured output after {n} attempts \u{2014} last StructuredOutput error: {}",
                strip_wrapper(e)
            ),
            None => format!("Failed to provide valid structured output after {n} attempts"),
        }
    }
}

/// The text of a tool result.
pub fn result_text(content: &skiff_protocol::ToolResultContent) -> String {
    match content {
        skiff_protocol::ToolResultContent::Text(t) => t.clone(),
        skiff_protocol::ToolResultContent::Blocks(blocks) => blocks
            .iter()
            .filter_map(|b| match b {
                skiff_protocol::ContentBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect(),
    }
}

/// A tool error's text without its `<tool_use_error>` wrapper.
fn strip_wrapper(text: &str) -> &str {
    text.trim()
        .strip_prefix("<tool_use_error>")
        .and_then(|t| t.strip_suffix("</tool_use_error>"))
        .unwrap_or(text)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn schema() -> OutputSchema {
        OutputSchema::new(json!({
            "type": "object",
            "properties": {"answer": {"type": "integer"}, "why": {"type": "string"}},
            "required": ["answer"],
            "additionalProperties": false
        }))
        .unwrap()
    }

    #[test]
    fn schemas_are_checked() {
        assert!(matches!(
            OutputSchema::parse("{nope"),
            Err(SchemaError::NotJson(_))
        ));
        assert!(matches!(
            OutputSchema::parse(r#"{"type": "array"}"#),
            Err(SchemaError::NotObject)
        ));
        assert!(matches!(
            OutputSchema::parse(r#"{"type": "object", "minProperties": "many"}"#),
            Err(SchemaError::Invalid(_))
        ));
    }

    #[test]
    fn problems_name_the_path() {
        let s = schema();
        assert!(s.check(&json!({"answer": 4})).is_ok());
        let e = s.check(&json!({"answer": "four", "extra": 1})).unwrap_err();
        assert!(e.contains("/answer: "), "{e}");
        assert!(e.contains("root: "), "{e}");
        let e = s.check(&json!({})).unwrap_err();
        assert!(e.starts_with("root: ") && e.contains("answer"), "{e}");
    }

    #[tokio::test]
    async fn the_tool_accepts_or_explains() {
        let tool = StructuredOutputTool::new(schema());
        let ctx = ToolContext::new(std::env::temp_dir()).unwrap();
        let ok = tool.call(json!({"answer": 1}), &ctx).await;
        assert!(!ok.is_error);
        assert_eq!(ok.structured, Some(json!({"answer": 1})));
        let bad = tool.call(json!({"answer": 1.5}), &ctx).await;
        assert!(bad.is_error);
        let text = result_text(&bad.content);
        assert!(
            text.contains("Output does not match required schema: /answer: "),
            "{text}"
        );
    }

    #[test]
    fn attempts_are_bounded() {
        let mut a = Attempts::default();
        for _ in 0..DEFAULT_MAX_RETRIES - 1 {
            assert_eq!(
                a.after_tools(
                    vec![Err("<tool_use_error>bad</tool_use_error>".into())],
                    DEFAULT_MAX_RETRIES
                ),
                Next::Continue
            );
        }
        let Next::GiveUp(text) = a.after_tools(vec![Err("bad".into())], DEFAULT_MAX_RETRIES) else {
            panic!()
        };
        assert_eq!(
            text,
            "Failed to provide valid structured output after 5 attempts \u{2014} last StructuredOutput error: bad"
        );
        let mut a = Attempts::default();
        assert_eq!(
            a.after_tools(vec![Err("x".into()), Ok(json!({"answer": 2}))], 5),
            Next::Done(json!({"answer": 2}))
        );
        assert_eq!(a.after_answer(), Next::Enforce);
        assert!(matches!(a.after_answer(), Next::GiveUp(_)));
    }
}
