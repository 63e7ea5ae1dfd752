//! The tool registry: registration, lookup, allowed/disabled lists and the definitions sent to
//! the model in a stable order (stable bytes keep the prompt cache warm).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use skiff_protocol::ToolDefinition;

use crate::context::ToolContext;
use crate::tool::{Tool, ToolOutput};

/// A second tool with the same name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a tool named `{0}` is already registered")]
pub struct DuplicateTool(pub String);

/// Named tools. Definitions are ordered by name (built-ins and MCP tools alike).
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Arc<dyn Tool>>,
    /// Older names still answered (`BashOutput` → `TaskOutput`), never offered to the model.
    aliases: BTreeMap<String, Alias>,
}

/// An older name of a tool, and the input keys it used that the tool now calls otherwise.
#[derive(Debug, Clone)]
struct Alias {
    target: String,
    renames: &'static [(&'static str, &'static str)],
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.tools.keys()).finish()
    }
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// A registry holding the built-in tools (Bash, Edit, Glob, Grep, LS, Read, Write).
    pub fn with_builtins() -> Self {
        let mut r = Self::new();
        for t in crate::builtin_tools() {
            // Built-in names are distinct by construction.
            let _ = r.register(t);
        }
        r.register_alias("BashOutput", "TaskOutput", &[("bash_id", "task_id")]);
        r.register_alias("KillShell", "TaskStop", &[("shell_id", "task_id")]);
        r
    }

    /// Answer calls to `alias` with the tool `target`, renaming these input keys first.
    pub fn register_alias(
        &mut self,
        alias: &str,
        target: &str,
        renames: &'static [(&'static str, &'static str)],
    ) {
        self.aliases.insert(
            alias.to_owned(),
            Alias {
                target: target.to_owned(),
                renames,
            },
        );
    }

    /// Add a tool.
    pub fn register(&mut self, tool: Arc<dyn Tool>) -> Result<(), DuplicateTool> {
        let name = tool.name().to_owned();
        if self.tools.contains_key(&name) {
            return Err(DuplicateTool(name));
        }
        self.tools.insert(name, tool);
        Ok(())
    }

    /// Keep only the named tools (`--tools A,B`); names not registered are ignored.
    pub fn retain(&mut self, names: &[&str]) {
        self.tools.retain(|n, _| names.contains(&n.as_str()));
    }

    /// Remove a tool (`--disallowedTools Name`); returns whether it was present.
    pub fn disable(&mut self, name: &str) -> bool {
        self.tools.remove(name).is_some()
    }

    /// Look a tool up by name (or by an older name of it).
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.get(name).or_else(|| {
            self.aliases
                .get(name)
                .and_then(|alias| self.tools.get(&alias.target))
        })
    }

    /// Registered names, sorted.
    pub fn names(&self) -> Vec<String> {
        self.tools.keys().cloned().collect()
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The definitions sent to the model, sorted by name.
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.tools
            .values()
            .map(|t| ToolDefinition {
                name: t.name().to_owned(),
                description: Some(t.description().to_owned()),
                input_schema: t.definition_schema(),
                cache_control: None,
                extra: Default::default(),
            })
            .collect()
    }

    /// Call a tool by name; unknown names get Claude Code's error result.
    pub async fn call(&self, name: &str, input: Value, ctx: &ToolContext) -> ToolOutput {
        if let Some(t) = self.tools.get(name) {
            return t.call(input, ctx).await;
        }
        match self.aliases.get(name) {
            Some(alias) if self.tools.contains_key(&alias.target) => {
                let input = rename_keys(input, alias.renames);
                match self.tools.get(&alias.target) {
                    Some(t) => t.call(input, ctx).await,
                    None => self.unknown(name),
                }
            }
            _ => self.unknown(name),
        }
    }

    /// The registered name `name` most likely means: the same letters in another case.
    pub fn closest(&self, name: &str) -> Option<&str> {
        self.tools
            .keys()
            .find(|k| k.eq_ignore_ascii_case(name))
            .map(String::as_str)
    }

    /// Claude Code's result for an unknown tool, naming a close match when there is one.
    pub fn unknown(&self, name: &str) -> ToolOutput {
        match self.closest(name) {
            Some(near) => ToolOutput::tool_use_error(format!(
                "Error: No such tool available: {name}. Did you mean {near}? Tool names are case-sensitive."
            )),
            None => unknown_tool(name),
        }
    }
}

/// The input with `from` keys renamed to `to` (when `to` is not already there).
fn rename_keys(mut input: Value, renames: &[(&str, &str)]) -> Value {
    if let Value::Object(map) = &mut input {
        for (from, to) in renames {
            if !map.contains_key(*to)
                && let Some(v) = map.remove(*from)
            {
                map.insert((*to).to_owned(), v);
            }
        }
    }
    input
}

/// The result for a tool name that is not available.
pub fn unknown_tool(name: &str) -> ToolOutput {
    ToolOutput::tool_use_error(format!("Error: No such tool available: {name}"))
}
