//! MCP servers as skiff tools.
//!
//! - [`config`]: server entries as Claude Code reads them (`.mcp.json`, `mcpServers` in
//!   settings, `--mcp-config`), with `${VAR}` / `${VAR:-default}` expansion.
//! - [`client`]: connecting (stdio child processes and streamable HTTP, with rmcp), all servers
//!   at once under one startup timeout, each server's status.
//! - [`tool`]: a server's tool as a [`skiff_tools::Tool`] named `mcp__<server>__<tool>`.

pub mod client;
pub mod config;
pub mod tool;

pub use client::{
    CallError, Connected, ListedTool, McpOptions, SdkChannel, Server, ServerReport, ServerStatus,
    connect_all, probe,
};
pub use config::{ConfigProblem, Scope, ServerConfig, Transport};
pub use tool::{McpTool, tool_name};
