//! skiff's tools: the [`Tool`] trait and [`ToolRegistry`], the workspace [`PathGuard`], the
//! built-in tools (Bash, Read, Write, Edit, Glob, Grep, LS) with Claude Code's names, schemas
//! and result texts, the Bash tool's sandbox, change tracking and the truncation helper.

pub mod atomic;
pub mod background;
pub mod background_output;
pub mod bash;
mod bash_binary;
mod bash_hint;
pub mod bash_readonly;
pub mod changes;
pub mod commands;
pub mod context;
pub mod definitions;
mod dir_stamp;
pub mod edit;
pub mod exit_plan;
pub mod extra_env;
pub mod file_access;
pub mod file_excerpt;
pub mod file_state;
pub mod fs_safe;
pub mod git_guard;
mod gitlinks;
pub mod glob;
pub mod grep;
pub mod ls;
pub mod mcp_catalog;
pub mod near_paths;
pub mod notebook;
pub mod output;
pub mod output_tap;
pub mod patch;
pub mod path_guard;
pub mod presence;
pub mod process_guard;
pub mod protected;
pub mod read;
pub mod registry;
pub mod sandbox;
pub mod schema;
pub mod shell;
pub mod side_model;
pub mod task_output;
pub mod tls;
pub mod todo;
pub mod tool;
pub mod truncate;
pub mod validate;
pub mod web_fetch;
pub mod web_search;
pub mod write;

use std::sync::Arc;

pub use changes::{ChangeKind, ChangeLog, CodeChange};
pub use context::{ToolConfig, ToolContext};
pub use extra_env::ExtraEnv;
pub use file_access::FileAccess;
pub use mcp_catalog::{McpCatalog, McpInstructions, McpPrompt, McpPromptArgument};
pub use output_tap::OutputTap;
pub use path_guard::{HiddenPaths, PathError, PathGuard};
pub use registry::{DuplicateTool, ToolRegistry, unknown_tool};
pub use sandbox::{SandboxConfig, SandboxStatus};
pub use side_model::{SideModel, SideModelError, SideUsage, WebSearchQuery};
pub use tool::{Tool, ToolOutput, Typed, TypedTool, check_rendered_schema};
pub use truncate::{DEFAULT_MAX_RESULT_CHARS, truncate_result};

/// The built-in tools, one instance each.
pub fn builtin_tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(Typed::new(bash::BashTool)),
        Arc::new(Typed::new(edit::EditTool)),
        Arc::new(Typed::new(exit_plan::ExitPlanModeTool)),
        Arc::new(Typed::new(glob::GlobTool)),
        Arc::new(Typed::new(grep::GrepTool)),
        Arc::new(Typed::new(ls::LsTool)),
        Arc::new(Typed::new(notebook::edit::NotebookEditTool)),
        Arc::new(Typed::new(read::ReadTool)),
        Arc::new(Typed::new(task_output::TaskOutputTool)),
        Arc::new(Typed::new(task_output::TaskStopTool)),
        Arc::new(Typed::new(todo::TodoWriteTool)),
        Arc::new(Typed::new(web_fetch::WebFetchTool)),
        Arc::new(Typed::new(web_search::WebSearchTool)),
        Arc::new(Typed::new(write::WriteTool)),
    ]
}

#[cfg(test)]
mod tests {
    use crate::check_rendered_schema;

    /// Each built-in tool ships its schema rendered; a change to an input type that is not
    /// rendered again fails here (and `SKIFF_BLESS_SCHEMAS=1` renders it).
    #[test]
    fn rendered_schemas_are_the_derived_ones() {
        use crate::TypedTool;
        fn check<T: TypedTool>(errors: &mut Vec<String>) {
            if let Err(e) = check_rendered_schema::<T>(env!("CARGO_MANIFEST_DIR")) {
                errors.push(e);
            }
        }
        let mut errors = Vec::new();
        check::<crate::bash::BashTool>(&mut errors);
        check::<crate::edit::EditTool>(&mut errors);
        check::<crate::exit_plan::ExitPlanModeTool>(&mut errors);
        check::<crate::glob::GlobTool>(&mut errors);
        check::<crate::grep::GrepTool>(&mut errors);
        check::<crate::ls::LsTool>(&mut errors);
        check::<crate::notebook::edit::NotebookEditTool>(&mut errors);
        check::<crate::read::ReadTool>(&mut errors);
        check::<crate::task_output::TaskOutputTool>(&mut errors);
        check::<crate::task_output::TaskStopTool>(&mut errors);
        check::<crate::todo::TodoWriteTool>(&mut errors);
        check::<crate::web_fetch::WebFetchTool>(&mut errors);
        check::<crate::web_search::WebSearchTool>(&mut errors);
        check::<crate::write::WriteTool>(&mut errors);
        assert!(errors.is_empty(), "{}", errors.join("\n"));
        // Every built-in tool is checked above, and each ships its schema.
        let names: Vec<String> = super::builtin_tools()
            .iter()
            .map(|t| t.name().to_owned())
            .collect();
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/schemas");
        for name in &names {
            let file = dir.join(format!("{name}.json"));
            assert!(file.is_file(), "{name} has no rendered schema");
        }
        assert_eq!(names.len(), 14, "a new built-in tool needs a check above");
    }
}
