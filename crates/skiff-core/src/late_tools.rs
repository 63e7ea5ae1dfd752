//! Tools that arrive after the session starts: MCP servers connect while skiff sets up (and,
//! in the REPL, while the user types); the first turn waits for them, bounded by the servers'
//! own startup timeout, before it sends anything. A session without them waits for nothing.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use skiff_protocol::sdk::McpServerStatus;
use skiff_tools::Tool;

/// What arrived: the tools, and each server's status for `system/init`.
#[derive(Default)]
pub struct ArrivedTools {
    /// Tools to add (names already unique and allowed).
    pub tools: Vec<Arc<dyn Tool>>,
    /// Server statuses (`system/init.mcp_servers`).
    pub servers: Vec<McpServerStatus>,
    /// The connected servers, whose tools, instructions, prompts and resources follow their
    /// changes (their tools are offered besides `tools`).
    pub catalog: Option<Arc<dyn skiff_tools::McpCatalog>>,
}

enum Pending {
    Spawned(tokio::task::JoinHandle<ArrivedTools>),
    /// In a mutex only so that `LateTools` (and the session's core holding it) is `Sync`.
    Lazy(std::sync::Mutex<Pin<Box<dyn Future<Output = ArrivedTools> + Send>>>),
}

/// Tools on their way.
pub struct LateTools(Pending);

impl std::fmt::Debug for LateTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LateTools")
    }
}

impl LateTools {
    /// Tools that `future` yields. Inside a tokio runtime it starts at once (as a task);
    /// otherwise when the session first waits for it.
    pub fn new(future: impl Future<Output = ArrivedTools> + Send + 'static) -> Self {
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => Self(Pending::Spawned(handle.spawn(future))),
            Err(_) => Self(Pending::Lazy(std::sync::Mutex::new(Box::pin(future)))),
        }
    }

    /// Wait for them (a task that failed yields nothing, with a warning).
    pub async fn arrive(self) -> ArrivedTools {
        match self.0 {
            Pending::Spawned(task) => task.await.unwrap_or_else(|e| {
                tracing::warn!(error = %e, "connecting the MCP servers failed");
                ArrivedTools::default()
            }),
            Pending::Lazy(future) => {
                let future = future
                    .into_inner()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                future.await
            }
        }
    }
}
