//! MCP servers as skiff tools.
//!
//! - [`config`]: server entries as Claude Code reads them (`.mcp.json`, `mcpServers` in
//!   settings, `--mcp-config`), with `${VAR}` / `${VAR:-default}` expansion.
//! - [`client`]: connecting (stdio child processes and streamable HTTP, with rmcp), all servers
//!   at once under one startup timeout, each server's status.
//! - `line_limit`, `stdio`: a stdio server's transport, each message bounded (an answer over
//!   the limit fails its call instead of leaving it waiting).
//! - [`tool`]: a server's tool as a [`skiff_tools::Tool`] named `mcp__<server>__<tool>`.
//! - [`offer`]: what a server offers (tools, prompts, resources, instructions), fetched again
//!   when it says a list changed.
//! - [`catalog`]: the session's servers as one [`skiff_tools::McpCatalog`] (tools that change,
//!   instructions, prompts as slash commands, resources for `@server:uri` mentions), with
//!   [`resource_tools`]: `ListMcpResourcesTool` and `ReadMcpResourceTool`.
//! - [`serve`]: skiff's own tools served over MCP (`skiff mcp serve`).

pub mod catalog;
pub mod client;
pub mod config;
mod content;
mod line_limit;
mod naming;
pub mod offer;
pub mod resource_tools;
mod sdk;
pub mod serve;
mod stdio;
pub mod tool;
mod watch;

pub use catalog::{Catalog, ToolFilter};
pub use client::{
    CallError, Connected, McpOptions, SdkChannel, Server, ServerReport, ServerStatus, connect_all,
    probe,
};
pub use config::{ConfigProblem, Scope, ServerConfig, Transport};
pub use naming::{MAX_TOOL_NAME, is_valid_tool_name, tool_name};
pub use offer::ListedTool;
pub use tool::McpTool;
