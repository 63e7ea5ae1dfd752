//! skiff's agent runtime: [`Agent`] drives a model through the agent loop (stream the answer,
//! run the tools it asks for, feed the results back, repeat) and reports everything as one
//! stream of typed events, the stream-json frames of [`skiff_protocol::sdk`].
//!
//! A runnable example: an offline scripted model asks for one tool call, the loop runs the
//! real `Write` tool in a temp workspace, and the run ends with a result frame. With
//! `AnthropicProvider::new(AnthropicConfig::from_env()?)` instead, the same code talks to Claude.
//!
//! ```
//! use std::sync::Arc;
//! use futures::StreamExt;
//! use serde_json::json;
//! use skiff_core::{Agent, AgentConfig};
//! use skiff_llm::ScriptedProvider;
//! use skiff_protocol::script::{Script, ScriptTurn};
//! use skiff_protocol::sdk::SdkMessage;
//! use skiff_tools::{ToolContext, ToolRegistry};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let workspace = tempfile::tempdir()?;
//! let model = ScriptedProvider::new(Script {
//!     turns: vec![
//!         ScriptTurn::tool_use("Write", json!({"file_path": "hello.txt", "content": "hi\n"})),
//!         ScriptTurn::text("Created hello.txt."),
//!     ],
//!     ..Script::default()
//! });
//! let ctx = ToolContext::new(workspace.path())?;
//! let mut agent = Agent::new(AgentConfig::default(), Arc::new(model), ToolRegistry::with_builtins(), ctx);
//!
//! let mut run = agent.run("Create hello.txt");
//! let _interrupt = run.interrupt_handle(); // cancel() it to interrupt, e.g. on Ctrl-C
//! while let Some(event) = run.next().await {
//!     match event {
//!         SdkMessage::Assistant(a) => println!("model: {:?}", a.message.content),
//!         SdkMessage::Result(r) => {
//!             assert_eq!(r.result.as_deref(), Some("Created hello.txt."));
//!             assert_eq!(r.changes.len(), 1);
//!         }
//!         _ => {}
//!     }
//! }
//! assert_eq!(std::fs::read_to_string(workspace.path().join("hello.txt"))?, "hi\n");
//! # Ok(()) }
//! ```

mod agent;
pub mod compaction;
pub mod context;
pub mod cost;
pub mod dispatch;
pub mod frames;
pub mod hooks;
pub mod memory;
pub mod permissions;
pub mod prompt;
pub mod request;
mod run;
pub mod session;
pub mod tokens;
pub mod transcript;
pub mod trim;
pub mod turn;

pub use agent::{Agent, AgentConfig};
pub use compaction::{
    CompactError, CompactReport, CompactTrigger, CompactionConfig, CompactionStrategy,
    CompactionThreshold,
};
pub use run::{COMPAT_VERSION, Run};
