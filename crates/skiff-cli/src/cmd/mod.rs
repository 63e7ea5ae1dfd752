//! The subcommands that are not a session: `config`, `mcp`, `plugin`, `sessions`, `batch`,
//! `replay`.

pub mod batch;
pub mod config;
pub mod mcp;
pub mod mcp_serve;
pub mod plugin;
pub mod replay;
pub mod sessions;
