//! The ToolSearch tool (Claude Code's name and input): it loads deferred tools, whose names its
//! description lists, so that their definitions join the tools of the following requests.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use skiff_protocol::ToolDefinition;
use skiff_tools::{Tool, ToolContext, ToolOutput};

use super::DeferredTools;

/// The tool's name.
pub const TOOL_SEARCH: &str = "ToolSearch";

/// Tools a keyword query loads when `max_results` is not given.
const DEFAULT_RESULTS: usize = 5;

/// Loads deferred tools for one session.
pub struct ToolSearchTool {
    deferred: Arc<DeferredTools>,
    description: String,
    schema: Value,
}

impl ToolSearchTool {
    /// The tool over `deferred`, naming `names` (the deferred tools) in its description.
    pub fn new(deferred: Arc<DeferredTools>, names: &[&str]) -> Self {
        Self {
            deferred,
            description: format!(
                "Load deferred tools, named here without their parameters: {}. Query \
                 `select:A,B` loads those; keywords load the best matches (`+word` must be in \
                 the name). A loaded tool is callable from your next call on.",
                names.join(", ")
            ),
            schema: json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "max_results": {"type": "number", "default": DEFAULT_RESULTS}
                },
                "required": ["query"],
                "additionalProperties": false
            }),
        }
    }

    /// Its definition as sent.
    pub fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: TOOL_SEARCH.to_owned(),
            description: Some(self.description.clone()),
            input_schema: self.schema.clone().into(),
            cache_control: None,
            extra: Default::default(),
        }
    }
}

#[async_trait]
impl Tool for ToolSearchTool {
    fn name(&self) -> &str {
        TOOL_SEARCH
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> &Value {
        &self.schema
    }

    fn is_read_only(&self) -> bool {
        true
    }

    async fn call(&self, input: Value, _ctx: &ToolContext) -> ToolOutput {
        let Some(query) = input.get("query").and_then(Value::as_str) else {
            return ToolOutput::tool_use_error(
                "InputValidationError: ToolSearch failed due to the following issue:\nThe \
                 required parameter `query` is missing",
            );
        };
        let max = input
            .get("max_results")
            .and_then(Value::as_f64)
            .filter(|m| m.is_finite() && *m >= 1.0)
            .map_or(DEFAULT_RESULTS, |m| m.min(50.0) as usize);
        let (found, unknown) = self.deferred.find(query, max);
        let names: Vec<&str> = found.iter().map(|(n, _)| n.as_str()).collect();
        self.deferred.load(names.iter().copied());
        let mut out = String::new();
        if found.is_empty() {
            out.push_str(&format!("No deferred tool matches {query:?}."));
        } else {
            out.push_str(&format!(
                "Loaded {}: call them like your other tools.",
                names.join(", ")
            ));
            for (name, description) in &found {
                let first = description.lines().next().unwrap_or_default();
                out.push_str(&format!("\n- {name}: {first}"));
            }
        }
        if !unknown.is_empty() {
            out.push_str(&format!(
                "\nNot deferred tools: {} (a tool in your tool list needs no loading).",
                unknown.join(", ")
            ));
        }
        if found.is_empty() {
            out.push_str(&format!(
                "\nDeferred tools: {}.",
                self.deferred.names().join(", ")
            ));
        }
        ToolOutput::text(out)
    }
}
