//! MCP servers: which ones a session connects to (`.mcp.json`, settings, `--mcp-config`, with
//! trust and approval), editing the files that list them, and starting them for a session.

pub mod config;
pub mod files;
pub mod session;
