//! The `Tool` trait, its typed helper `TypedTool`, and `ToolOutput`.

use std::sync::OnceLock;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use skiff_protocol::InputSchema;

use crate::context::ToolContext;
use crate::{schema, validate};

pub use crate::output::ToolOutput;

/// A tool the model can call. Implementations never panic the loop: every failure is a
/// [`ToolOutput`] with `is_error` set.
#[async_trait]
pub trait Tool: Send + Sync {
    /// Name the model calls it by (case-sensitive; `Bash`, `Read`, `mcp__srv__tool`).
    fn name(&self) -> &str;
    /// Description sent to the model.
    fn description(&self) -> &str;
    /// JSON Schema of the input object.
    fn input_schema(&self) -> &Value;
    /// The schema for the tool's definition (a copy of [`Tool::input_schema`]); a tool that
    /// keeps its schema as text gives the text, which the definition keeps unparsed until
    /// something reads it (a request writes it as it is).
    fn definition_schema(&self) -> InputSchema {
        self.input_schema().clone().into()
    }
    /// Whether the tool never changes anything (used by permission modes).
    fn is_read_only(&self) -> bool;
    /// Whether this particular call may run at the same time as other safe calls.
    fn is_concurrency_safe(&self, input: &Value) -> bool {
        let _ = input;
        self.is_read_only()
    }
    /// Check a call before anyone is asked to approve it: a call that would fail anyway (input
    /// that does not fit the schema, an Edit of a file not read yet) fails now, with the result
    /// it would have had. Nothing is changed.
    async fn validate(&self, input: &Value, ctx: &ToolContext) -> Result<(), ToolOutput> {
        let _ = (input, ctx);
        Ok(())
    }
    /// Run the call.
    async fn call(&self, input: Value, ctx: &ToolContext) -> ToolOutput;
}

/// A tool with a typed input struct; wrap it in [`Typed`] to get a [`Tool`].
#[async_trait]
pub trait TypedTool: Send + Sync + 'static {
    /// The input, deserialised after validation against its schema.
    type Input: DeserializeOwned + JsonSchema + Send + Sync + 'static;
    /// Tool name.
    const NAME: &'static str;
    /// The input's schema as sent, rendered ahead of time ([`crate::schema::schema_for`] of
    /// `Input`, a pretty JSON file kept equal to the derived one by [`check_rendered_schema`]
    /// in the tool's tests) and compacted when skiff is built
    /// ([`skiff_protocol::compact_json!`]), so that start-up neither derives it (a third of a
    /// millisecond for the built-in tools) nor compacts it. `None`: derived when the tool is
    /// made.
    const SCHEMA: Option<&'static str> = None;
    /// Description sent to the model.
    fn description(&self) -> &str;
    /// Whether the tool never changes anything.
    fn is_read_only(&self) -> bool;
    /// Whether this call may run concurrently with other safe calls.
    fn is_concurrency_safe(&self, input: &Self::Input) -> bool {
        let _ = input;
        self.is_read_only()
    }
    /// Check valid input before approval (see [`Tool::validate`]); nothing is changed.
    async fn check(&self, input: &Self::Input, ctx: &ToolContext) -> Result<(), ToolOutput> {
        let _ = (input, ctx);
        Ok(())
    }
    /// Run the call with valid input.
    async fn run(&self, input: Self::Input, ctx: &ToolContext) -> ToolOutput;
}

/// Adapter from [`TypedTool`] to [`Tool`]: schema read from [`TypedTool::SCHEMA`] (or derived
/// once with schemars when there is none), input validated
/// (Claude Code's `InputValidationError` texts) and deserialised before `run`.
///
/// The schema is parsed when first needed (to validate a call), not when the tool is made:
/// a session's tool definitions are parsed from the text once each
/// ([`Tool::definition_schema`]), and most tools are never called.
pub struct Typed<T: TypedTool> {
    tool: T,
    schema: OnceLock<Value>,
}

impl<T: TypedTool> Typed<T> {
    /// Wrap a typed tool.
    pub fn new(tool: T) -> Self {
        Self {
            tool,
            schema: OnceLock::new(),
        }
    }

    /// The schema, parsed from [`TypedTool::SCHEMA`] (or derived) on first use.
    fn schema(&self) -> &Value {
        self.schema.get_or_init(Self::load_schema)
    }

    fn load_schema() -> Value {
        T::SCHEMA
            .and_then(|text| serde_json::from_str(text).ok())
            .unwrap_or_else(schema::schema_for::<T::Input>)
    }

    fn parse(&self, input: Value) -> Result<T::Input, String> {
        validate::validate(T::NAME, self.schema(), &input)?;
        serde_json::from_value(input).map_err(|e| {
            format!(
                "InputValidationError: {} failed due to the following issue:\n{e}",
                T::NAME
            )
        })
    }
}

#[async_trait]
impl<T: TypedTool> Tool for Typed<T> {
    fn name(&self) -> &str {
        T::NAME
    }

    fn description(&self) -> &str {
        self.tool.description()
    }

    fn input_schema(&self) -> &Value {
        self.schema()
    }

    fn definition_schema(&self) -> InputSchema {
        match T::SCHEMA.map(InputSchema::from_compact_json_text) {
            Some(Ok(schema)) => schema,
            _ => self.schema().clone().into(),
        }
    }

    fn is_read_only(&self) -> bool {
        self.tool.is_read_only()
    }

    fn is_concurrency_safe(&self, input: &Value) -> bool {
        // Invalid input fails before touching anything, so it is safe to run alongside others.
        match serde_json::from_value::<T::Input>(input.clone()) {
            Ok(i) => self.tool.is_concurrency_safe(&i),
            Err(_) => true,
        }
    }

    async fn validate(&self, input: &Value, ctx: &ToolContext) -> Result<(), ToolOutput> {
        match self.parse(input.clone()) {
            Ok(i) => self.tool.check(&i, ctx).await,
            Err(msg) => Err(ToolOutput::tool_use_error(msg)),
        }
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        match self.parse(input) {
            Ok(i) => self.tool.run(i, ctx).await,
            Err(msg) => ToolOutput::tool_use_error(msg),
        }
    }
}

/// The schema `T` ships rendered ([`TypedTool::SCHEMA`]) checked against the one derived from
/// `T::Input` now: the same text as [`schema::render`] gives (the same keys and values). The
/// file `T::SCHEMA` is included from is `src/schemas/NAME.json` in the crate at `crate_dir`
/// (its `CARGO_MANIFEST_DIR`). With [`schema::BLESS_VAR`]`=1` the file is written with the
/// derived schema instead. For the tests of the crates that define tools.
pub fn check_rendered_schema<T: TypedTool>(crate_dir: &str) -> Result<(), String> {
    let path = std::path::Path::new(crate_dir)
        .join("src/schemas")
        .join(format!("{}.json", T::NAME));
    let wanted = schema::render(&schema::schema_for::<T::Input>());
    if std::env::var(schema::BLESS_VAR).is_ok_and(|v| v == "1") {
        return std::fs::write(&path, wanted).map_err(|e| format!("{}: {e}", path.display()));
    }
    let Some(shipped) = T::SCHEMA else {
        return Err(format!("{} ships no rendered schema", T::NAME));
    };
    let file = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    // What the build made of the file: the derived schema's compact text.
    let compact = InputSchema::from_json_text(&wanted)
        .and_then(|schema| serde_json::to_string(&schema))
        .map_err(|e| format!("{}: {e}", T::NAME))?;
    if file != wanted || shipped != compact {
        return Err(format!(
            "{}'s rendered schema ({}) is not the one its input type derives; run \
             `{}=1 cargo test` to render it again",
            T::NAME,
            path.display(),
            schema::BLESS_VAR
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tool's definition takes its schema from the text it ships; the tool parses its own
    /// copy only when it validates a call, and both are the shipped schema.
    #[test]
    fn the_definition_keeps_the_schema_text_and_the_tool_parses_it_only_to_validate() {
        let tool = Typed::new(crate::glob::GlobTool);
        let shipped: Value = serde_json::from_str(crate::glob::GlobTool::SCHEMA.unwrap()).unwrap();
        let definition = tool.definition_schema();
        assert!(definition.is_text(), "parsed for the definition");
        assert!(
            tool.schema.get().is_none(),
            "parsed when the definition was made"
        );
        assert_eq!(
            serde_json::to_string(&definition).unwrap(),
            serde_json::to_string(&shipped).unwrap()
        );
        let err = tool.parse(serde_json::json!({"path": "."})).unwrap_err();
        assert!(err.contains("pattern"), "{err}");
        assert_eq!(tool.input_schema(), &shipped);
        assert_eq!(tool.definition_schema(), shipped);
    }
}
