//! skiff's agent runtime: an [`Agent`] is built from a configuration, a model provider, tools
//! and seams, then [`Agent::spawn`]s a [`Session`]: one task that owns the conversation and
//! drives the model through the agent loop (stream the answer, run the tools it asks for, feed
//! the results back, repeat). Clients send it [`Op`]s — user messages (queued while a turn
//! runs), interrupts, model and permission-mode switches, compaction, answers to its requests —
//! and read its [`Event`]s: the stream-json frames of [`skiff_protocol::sdk`], and requests such
//! as tool approvals, which any client can answer with [`Op::Reply`].
//!
//! A runnable example of the simple path, [`Session::run`]: an offline scripted model asks for
//! one tool call, the loop runs the real `Write` tool in a temp workspace, and the run ends with
//! a result frame. With `AnthropicProvider::new(AnthropicConfig::from_env()?)` instead, the same
//! code talks to Claude.
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
//! let agent = Agent::new(AgentConfig::default(), Arc::new(model), ToolRegistry::with_builtins(), ctx);
//! let mut session = agent.spawn();
//!
//! let mut run = session.run("Create hello.txt");
//! let _interrupt = run.interrupt_handle(); // .interrupt() it, e.g. on Ctrl-C
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
//! drop(run);
//! assert_eq!(std::fs::read_to_string(workspace.path().join("hello.txt"))?, "hi\n");
//! session.shutdown().await;
//! # Ok(()) }
//! ```

mod act_nudge;
mod agent;
mod budget;
pub mod commands;
pub mod compaction;
mod config;
pub mod context;
mod context_env;
mod context_measure;
pub mod context_usage;
pub mod conversation;
mod core;
pub mod cost;
pub mod deferred;
pub use deferred::tool_search;
pub mod dispatch;
pub mod event;
mod fallback;
pub mod frames;
pub mod hooks;
pub mod late_tools;
mod live;
pub mod loop_guard;
pub mod mcp;
pub mod memory;
mod model_call;
mod overflow;
mod permission_mode;
pub mod permissions;
pub mod prompt;
pub mod reasoning;
pub mod request;
pub mod requests;
mod runaway;
pub mod session;
pub mod side_calls;
pub mod store;
pub mod structured;
pub mod subagent;
mod test_command;
mod test_edits;
mod test_failures;
pub mod tokens;
pub mod transcript;
pub mod trim;
mod turn_io;
mod turn_loop;
mod user_shell;
pub mod web_search;

pub use agent::Agent;
pub use compaction::{
    CompactError, CompactReport, CompactTrigger, CompactionConfig, CompactionStrategy,
    CompactionThreshold,
};
pub use config::{AgentConfig, DeltaMode};
pub use conversation::Conversation;
pub use event::{Answer, ApprovalAnswer, ApprovalRequest, Event, Request, RequestId, RequestKind};
pub use late_tools::{ArrivedTools, LateTools};
pub use permissions::PermissionMode;
pub use reasoning::{Reasoning, ThinkingMode};
pub use session::{Op, Run, Session, SessionEnded, SessionHandle, Status, UserInput};
pub use turn_loop::{COMPAT_VERSION, CONTINUE_PROMPT, SKIFF_VERSION, STOP_HOOK_FEEDBACK};
