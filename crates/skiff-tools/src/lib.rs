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
pub mod edit;
pub mod exit_plan;
pub mod extra_env;
pub mod file_access;
pub mod file_excerpt;
pub mod file_state;
pub mod fs_safe;
pub mod git_guard;
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
pub use tool::{Tool, ToolOutput, Typed, TypedTool};
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
