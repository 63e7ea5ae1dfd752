//! The subcommands that are not a session: `config`, `mcp`, `sessions`, `batch`, `replay`.

pub mod batch;
pub mod config;
pub mod mcp;
pub mod replay;
pub mod sessions;
