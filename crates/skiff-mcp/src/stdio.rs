//! A stdio server's transport: the child process (its own process group, killed when the
//! transport goes), newline-delimited JSON-RPC over its stdin and stdout, each message bounded
//! by [`crate::line_limit::LineLimit`].

use std::borrow::Cow;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::process::{Child, ChildStdin, ChildStdout};

use crate::line_limit::{ClosedReason, LineLimit};

/// How long a server may take to exit after its stdin is closed.
const EXIT_WAIT: Duration = Duration::from_secs(3);

/// A running stdio server.
pub(crate) struct StdioTransport {
    child: Child,
    transport: AsyncRwTransport<RoleClient, LineLimit<ChildStdout>, ChildStdin>,
}

impl StdioTransport {
    /// Talk to `child` (spawned with piped stdin and stdout), its messages at most `limit`
    /// bytes; `closed` receives the reason if the limit ends the connection.
    pub(crate) fn new(
        mut child: Child,
        limit: usize,
        closed: ClosedReason,
    ) -> std::io::Result<Self> {
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| std::io::Error::other("the server's stdout is not a pipe"))?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| std::io::Error::other("the server's stdin is not a pipe"))?;
        // The limit is LineLimit's; rmcp's own (which would drop a line silently) is off.
        let transport = AsyncRwTransport::new_client(LineLimit::new(stdout, limit, closed), stdin)
            .with_max_line_length(usize::MAX);
        Ok(Self { child, transport })
    }

    /// The server's process id (the leader of its process group).
    pub(crate) fn id(&self) -> Option<u32> {
        self.child.id()
    }
}

impl Transport<RoleClient> for StdioTransport {
    type Error = std::io::Error;

    fn name() -> Cow<'static, str> {
        "stdio".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.transport.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.transport.receive()
    }

    /// The MCP shutdown: stdin closed, a moment to exit, then killed.
    async fn close(&mut self) -> Result<(), Self::Error> {
        let closed = self.transport.close().await;
        if tokio::time::timeout(EXIT_WAIT, self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
        closed
    }
}
