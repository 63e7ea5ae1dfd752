//! Claude Code's configuration as a library, for every front end of skiff and for programs that
//! embed it: settings layers (user, project, local, `--settings`) with trust, provider
//! construction, MCP server configuration and editing, agents, custom commands and skills,
//! sessions (new, resumed, forked), and the [`SessionBuilder`] that turns plain
//! [`Overrides`] and an [`Environment`] into a ready [`skiff_core::Agent`]. No command-line
//! parsing and no printing: what a front end should show comes back as warnings.
//!
//! ```no_run
//! # fn main() -> Result<(), skiff_config::ConfigError> {
//! use skiff_config::{Environment, Overrides, SessionBuilder};
//! let assembled = SessionBuilder::new(Overrides::default(), Environment::from_process()).build()?;
//! for warning in &assembled.warnings {
//!     eprintln!("{warning}");
//! }
//! let agent = assembled.agent;
//! # drop(agent);
//! # Ok(())
//! # }
//! ```

pub mod agents;
pub mod builder;
pub mod commands;
mod deferral;
pub mod environment;
pub mod error;
pub mod json_doc;
pub mod mcp;
pub mod overrides;
pub mod plugins;
pub mod provider;
pub mod reasoning;
pub mod rules;
pub mod sandbox_gate;
pub mod sandbox_setup;
pub mod sessions;
pub mod settings;
pub mod settings_writer;
#[cfg(test)]
mod test_argv;
pub mod tool_host;
pub mod trust;

pub use builder::{Assembled, DEFAULT_MAX_TURNS, DEFAULT_MODEL, SandboxText, SessionBuilder};
pub use environment::Environment;
pub use error::ConfigError;
pub use overrides::{Overrides, SessionOverrides};
pub use settings::Settings;
