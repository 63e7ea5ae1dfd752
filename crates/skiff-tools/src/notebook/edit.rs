//! The NotebookEdit tool: replace, insert or delete one cell of a Jupyter notebook, with
//! Claude Code's schema, checks and result texts (`Updated cell <id> with <source>`,
//! `Inserted cell <id> with <source>`, `Deleted cell <id>`), the read-before-write rule, an
//! atomic write that keeps the rest of the notebook as it was, and the change log.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Notebook, NotebookError, is_notebook, new_cell, new_cell_id, source_value};
use crate::context::ToolContext;
use crate::tool::{ToolOutput, TypedTool};
use crate::write::{Existing, commit_change, load_for_change};

/// A cell's type. (Variants without doc comments: schemars would turn those into a `oneOf`
/// of descriptions, and Claude Code's schema is a plain `enum`.)
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CellType {
    Code,
    Markdown,
}

impl CellType {
    fn as_str(self) -> &'static str {
        match self {
            Self::Code => "code",
            Self::Markdown => "markdown",
        }
    }
}

/// What to do with the cell: replace its source (the default), insert a new cell after it
/// (at the start without one), or delete it.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EditMode {
    #[default]
    Replace,
    Insert,
    Delete,
}

impl EditMode {
    fn as_str(self) -> &'static str {
        match self {
            Self::Replace => "replace",
            Self::Insert => "insert",
            Self::Delete => "delete",
        }
    }
}

/// Input of the NotebookEdit tool (Claude Code's schema).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NotebookEditInput {
    /// The absolute path to the Jupyter notebook file to edit (must be absolute, not relative)
    pub notebook_path: String,
    /// The ID of the cell to edit (or `cell-N`, its 0-based index). When inserting a new
    /// cell, the new cell is inserted after the cell with this ID, or at the beginning if
    /// not specified.
    pub cell_id: Option<String>,
    /// The new source for the cell
    pub new_source: String,
    /// The type of the cell (code or markdown). If not specified, it defaults to the current
    /// cell type. If using edit_mode=insert, this is required.
    pub cell_type: Option<CellType>,
    /// The type of edit to make (replace, insert, delete). Defaults to replace.
    pub edit_mode: Option<EditMode>,
}

/// The NotebookEdit tool.
#[derive(Debug, Default)]
pub struct NotebookEditTool;

#[async_trait]
impl TypedTool for NotebookEditTool {
    type Input = NotebookEditInput;
    const NAME: &'static str = "NotebookEdit";
    const SCHEMA: Option<&'static str> = Some(skiff_protocol::compact_json!(include_str!(
        "../schemas/NotebookEdit.json"
    )));

    fn description(&self) -> &str {
        "Replace, insert or delete one cell of a Jupyter notebook (.ipynb). `cell_id` is the \
         cell's id as Read shows it (`<cell id=\"…\">`), or `cell-N` for the cell at 0-based \
         index N. edit_mode=replace (default) replaces the cell's source (a code cell's outputs \
         are cleared); edit_mode=insert adds a new cell after `cell_id` (at the start without \
         one) and needs `cell_type`; edit_mode=delete removes the cell. Read the notebook \
         first in this session. Use this, not Edit or Write, for notebooks."
    }

    fn is_read_only(&self) -> bool {
        false
    }

    async fn check(&self, input: &NotebookEditInput, ctx: &ToolContext) -> Result<(), ToolOutput> {
        let path = ctx
            .guard
            .resolve(&input.notebook_path)
            .map_err(|e| ToolOutput::tool_use_error(e.to_string()))?;
        if !path.exists() {
            return Err(ToolOutput::tool_use_error("Notebook file does not exist."));
        }
        load_for_change(
            &path,
            &input.notebook_path,
            crate::write::OnRefusal::Plain,
            ctx,
        )
        .await
        .map(|_| ())
    }

    async fn run(&self, input: NotebookEditInput, ctx: &ToolContext) -> ToolOutput {
        let path = match ctx.guard.resolve(&input.notebook_path) {
            Ok(p) => p,
            Err(e) => return ToolOutput::tool_use_error(e.to_string()),
        };
        let mode = input.edit_mode.unwrap_or_default();
        if !path.exists() {
            return ToolOutput::tool_use_error("Notebook file does not exist.");
        }
        if !is_notebook(&path) {
            return ToolOutput::tool_use_error(
                "File must be a Jupyter notebook (.ipynb file). For editing other file types, \
                 use the Edit tool.",
            );
        }
        if mode == EditMode::Insert && input.cell_type.is_none() {
            return ToolOutput::tool_use_error(
                "Cell type is required when using edit_mode=insert.",
            );
        }
        let original = match load_for_change(
            &path,
            &input.notebook_path,
            crate::write::OnRefusal::Plain,
            ctx,
        )
        .await
        {
            Ok(Existing::File(text)) => text,
            Ok(Existing::Missing) => {
                return ToolOutput::tool_use_error("Notebook file does not exist.");
            }
            Err(out) => return out,
        };
        let mut notebook = match Notebook::parse(&original) {
            Ok(nb) => nb,
            Err(NotebookError::NotJson(_)) => {
                return ToolOutput::tool_use_error("Notebook is not valid JSON.");
            }
            Err(NotebookError::NotNotebook(why)) => {
                return ToolOutput::tool_use_error(format!(
                    "The file is not a notebook NotebookEdit can change: {why}."
                ));
            }
        };
        let edited = match apply(&mut notebook, &input, mode) {
            Ok(e) => e,
            Err(msg) => return ToolOutput::tool_use_error(msg),
        };
        let updated = notebook.to_text();
        if let Err(out) =
            commit_change(&path, &input.notebook_path, Some(&original), &updated, ctx).await
        {
            return out;
        }
        let text = match mode {
            EditMode::Replace => format!("Updated cell {} with {}", edited.id, input.new_source),
            EditMode::Insert => format!("Inserted cell {} with {}", edited.id, input.new_source),
            EditMode::Delete => format!("Deleted cell {}", edited.id),
        };
        ToolOutput::text(text).with_structured(json!({
            "new_source": input.new_source, "cell_type": edited.cell_type,
            "language": notebook.language(), "edit_mode": mode.as_str(), "cell_id": edited.id,
            "error": "", "notebook_path": path.display().to_string(),
            "original_file": original, "updated_file": updated,
        }))
    }
}

/// What an edit touched.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Edited {
    /// The cell's id as the result names it.
    id: String,
    /// Its type after the edit.
    cell_type: String,
}

/// Change the notebook in memory; the error is the model-facing text.
fn apply(nb: &mut Notebook, input: &NotebookEditInput, mode: EditMode) -> Result<Edited, String> {
    let target = match &input.cell_id {
        Some(id) => Some(nb.find(id)?),
        None if mode == EditMode::Insert => None,
        None => return Err("Cell ID must be specified when not inserting a new cell.".into()),
    };
    let ids = nb.has_cell_ids();
    // New sources take the notebook's usual form: nbformat writes lists of lines.
    let lines_form = nb
        .cells()
        .iter()
        .any(|c| c.get("source").is_some_and(Value::is_array))
        || nb.cells().is_empty();
    match mode {
        EditMode::Insert => {
            let at = target.map_or(0, |i| i + 1);
            let cell_type = input.cell_type.unwrap_or(CellType::Code).as_str();
            let id = ids.then(|| new_cell_id(nb));
            let cell = new_cell(
                cell_type,
                id.clone(),
                source_value(&input.new_source, lines_form),
            );
            let cells = nb.cells_mut().ok_or("The notebook has no cells list.")?;
            cells.insert(at, cell);
            Ok(Edited {
                id: id.unwrap_or_else(|| format!("cell-{at}")),
                cell_type: cell_type.to_owned(),
            })
        }
        EditMode::Delete => {
            let i = target.ok_or("Cell ID must be specified when not inserting a new cell.")?;
            let cells = nb.cells_mut().ok_or("The notebook has no cells list.")?;
            let cell = cells.remove(i);
            Ok(Edited {
                id: input.cell_id.clone().unwrap_or_default(),
                cell_type: cell
                    .get("cell_type")
                    .and_then(Value::as_str)
                    .unwrap_or("code")
                    .to_owned(),
            })
        }
        EditMode::Replace => {
            let i = target.ok_or("Cell ID must be specified when not inserting a new cell.")?;
            let cells = nb.cells_mut().ok_or("The notebook has no cells list.")?;
            let Some(Value::Object(cell)) = cells.get_mut(i) else {
                return Err(format!("Cell {i} of the notebook is not an object."));
            };
            let as_lines = cell.get("source").is_some_and(Value::is_array);
            cell.insert("source".into(), source_value(&input.new_source, as_lines));
            let old_type = cell
                .get("cell_type")
                .and_then(Value::as_str)
                .unwrap_or("code")
                .to_owned();
            let new_type = input
                .cell_type
                .map_or(old_type.clone(), |t| t.as_str().to_owned());
            if new_type == "code" {
                // New code: its old outputs no longer belong to it.
                cell.insert("execution_count".into(), Value::Null);
                cell.insert("outputs".into(), Value::Array(Vec::new()));
            } else {
                cell.remove("execution_count");
                cell.remove("outputs");
            }
            cell.insert("cell_type".into(), Value::String(new_type.clone()));
            Ok(Edited {
                id: input.cell_id.clone().unwrap_or_default(),
                cell_type: new_type,
            })
        }
    }
}
