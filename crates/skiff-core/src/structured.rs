//! Structured outputs (`--json-schema`, the Agent SDKs' `output_format`): the `StructuredOutput`
//! tool whose input schema is the caller's schema, as Claude Code offers it. Its input is
//! validated with the `boon` crate (drafts 4 to 2020-12; a fifth of `jsonschema`'s size in the
//! binary); a mismatch goes back to the model as a tool error naming each problem, a valid call
//! ends the run with the input as the result's `structured_output`. The turn loop bounds the
//! attempts ([`Attempts`]).

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
    validator: Arc<Compiled>,
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
        let validator = Compiled::new(&schema)?;
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
    /// whole input), joined with ", " (the messages are boon's words).
    pub fn check(&self, instance: &Value) -> Result<(), String> {
        let Err(error) = self
            .validator
            .schemas
            .validate(instance, self.validator.index)
        else {
            return Ok(());
        };
        let mut problems = Vec::new();
        collect_problems(&error, &mut problems);
        Err(problems.join(", "))
    }
}

/// A compiled schema.
struct Compiled {
    schemas: boon::Schemas,
    index: boon::SchemaIndex,
}

/// Where the caller's schema is filed while it is compiled (it names no file).
const SCHEMA_URL: &str = "urn:skiff:structured-output";

impl Compiled {
    fn new(schema: &Value) -> Result<Self, SchemaError> {
        let mut compiler = boon::Compiler::new();
        // No `$ref` leaves the schema: a loader without schemes refuses `file:` (boon's default
        // would read local files) and the network. The drafts' metaschemas are built in.
        compiler.use_loader(Box::new(boon::SchemeUrlLoader::new()));
        let invalid = |e: boon::CompileError| SchemaError::Invalid(format!("{e:#}"));
        compiler
            .add_resource(SCHEMA_URL, schema.clone())
            .map_err(invalid)?;
        let mut schemas = boon::Schemas::new();
        let index = compiler
            .compile(SCHEMA_URL, &mut schemas)
            .map_err(invalid)?;
        Ok(Self { schemas, index })
    }
}

/// Each problem of a failed validation as `path: message` (`root` for the whole input), at
/// most [`MAX_MESSAGES`] of [`MAX_MESSAGE_CHARS`] each. Errors that only group others
/// (a `$ref`, an `allOf`) give their causes; the others are reported as they are (an `anyOf`
/// that nothing matched is one problem, not one per branch).
fn collect_problems(error: &boon::ValidationError<'_, '_>, out: &mut Vec<String>) {
    use boon::ErrorKind;
    if out.len() >= MAX_MESSAGES {
        return;
    }
    let groups = matches!(
        error.kind,
        ErrorKind::Group
            | ErrorKind::Schema { .. }
            | ErrorKind::Reference { .. }
            | ErrorKind::AllOf
    );
    if groups && !error.causes.is_empty() {
        for cause in &error.causes {
            collect_problems(cause, out);
        }
        return;
    }
    let path = error.instance_location.to_string();
    let path = if path.is_empty() { "root" } else { &path };
    out.push(
        format!("{path}: {}", error.kind)
            .chars()
            .take(MAX_MESSAGE_CHARS)
            .collect(),
    );
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

    #[test]
    fn refs_stay_inside_the_schema() {
        let dir = tempfile::tempdir().unwrap();
        let other = dir.path().join("other.json");
        std::fs::write(&other, r#"{"type": "string"}"#).unwrap();
        let url = format!("file://{}", other.display());
        let outside = json!({"type": "object", "properties": {"a": {"$ref": url}}});
        let Err(SchemaError::Invalid(e)) = OutputSchema::new(outside) else {
            panic!("a file $ref was loaded")
        };
        assert!(e.contains("other.json"), "{e}");
        let web =
            json!({"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}});
        assert!(matches!(
            OutputSchema::new(web),
            Err(SchemaError::Invalid(_))
        ));
        // References inside the schema and the drafts' metaschemas work.
        let inside = OutputSchema::new(json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "definitions": {"n": {"type": "integer", "minimum": 1}},
            "properties": {"n": {"$ref": "#/definitions/n"}}
        }))
        .unwrap();
        assert!(inside.check(&json!({"n": 2})).is_ok());
        let e = inside.check(&json!({"n": 0})).unwrap_err();
        assert!(e.starts_with("/n: ") && e.contains(">=1"), "{e}");
    }

    #[test]
    fn each_problem_is_reported_once_and_bounded() {
        let s = OutputSchema::new(json!({
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": {"type": "object", "required": ["id"]}},
                "kind": {"anyOf": [{"type": "integer"}, {"enum": ["a", "b"]}]}
            }
        }))
        .unwrap();
        let e = s
            .check(&json!({"items": [{"id": 1}, {}, {}], "kind": "c"}))
            .unwrap_err();
        let problems: Vec<&str> = e.split(", /").collect();
        assert_eq!(problems.len(), 3, "{e}");
        assert!(e.contains("/items/1: ") && e.contains("/items/2: "), "{e}");
        assert!(e.contains("/kind: anyOf failed"), "{e}");
        let many: serde_json::Map<String, Value> =
            (0..50).map(|i| (format!("p{i}"), json!(1))).collect();
        let strict = OutputSchema::new(json!({
            "type": "object",
            "additionalProperties": false,
            "patternProperties": {"^p": {"type": "string", "maxLength": 1}}
        }))
        .unwrap();
        let e = strict.check(&Value::Object(many)).unwrap_err();
        assert_eq!(e.matches(": want string").count(), MAX_MESSAGES, "{e}");
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
