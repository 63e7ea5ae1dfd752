//! skiff's agent runtime: [`Agent`] drives a model through the agent loop (stream the answer,
//! run the tools it asks for, feed the results back, repeat) and reports everything as one
//! stream of typed events, the stream-json frames of [`skiff_protocol::sdk`].
//!
//! ```no_run
//! use std::sync::Arc;
//! use futures::StreamExt;
//! use skiff_core::{Agent, AgentConfig};
//! use skiff_llm::{AnthropicConfig, AnthropicProvider};
//! use skiff_protocol::sdk::SdkMessage;
//! use skiff_tools::{ToolContext, ToolRegistry};
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! let provider = AnthropicProvider::new(AnthropicConfig::from_env()?)?;
//! let ctx = ToolContext::new(".")?;
//! let mut agent = Agent::new(AgentConfig::default(), Arc::new(provider), ToolRegistry::with_builtins(), ctx);
//! let mut run = agent.run("List the Rust files in this project");
//! let stop = run.interrupt_handle(); // cancel() it to interrupt, e.g. on Ctrl-C
//! while let Some(event) = run.next().await {
//!     if let SdkMessage::Result(r) = &event {
//!         println!("{} (${:.4})", r.result.as_deref().unwrap_or("error"), r.total_cost_usd);
//!     }
//! }
//! # drop(stop); Ok(()) }
//! ```

mod agent;
pub mod cost;
pub mod dispatch;
pub mod frames;
pub mod hooks;
pub mod memory;
pub mod permissions;
pub mod prompt;
pub mod request;
mod run;
pub mod turn;

pub use agent::{Agent, AgentConfig};
pub use run::{COMPAT_VERSION, Run};
