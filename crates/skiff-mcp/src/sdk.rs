//! An Agent SDK host's in-process MCP servers (`type: "sdk"`), reached over its control channel
//! (`mcp_message` requests) as an rmcp transport.

use std::sync::Arc;

use rmcp::RoleClient;

/// Reaches the in-process MCP servers of an Agent SDK host over its control channel
/// (`mcp_message` requests).
pub trait SdkChannel: Send + Sync {
    /// Send one JSON-RPC message to the host's server `server`. When it is a request, the
    /// host's JSON-RPC reply is delivered to `replies`.
    fn send(
        &self,
        server: &str,
        message: serde_json::Value,
        replies: tokio::sync::mpsc::UnboundedSender<serde_json::Value>,
    );
}

impl std::fmt::Debug for dyn SdkChannel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SdkChannel")
    }
}

/// An rmcp transport over an [`SdkChannel`].
pub(crate) struct SdkTransport {
    pub(crate) server: String,
    pub(crate) channel: Arc<dyn SdkChannel>,
    pub(crate) tx: tokio::sync::mpsc::UnboundedSender<serde_json::Value>,
    pub(crate) rx: tokio::sync::mpsc::UnboundedReceiver<serde_json::Value>,
}

impl rmcp::transport::Transport<RoleClient> for SdkTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: rmcp::service::TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let sent = serde_json::to_value(&item)
            .map(|v| self.channel.send(&self.server, v, self.tx.clone()))
            .map_err(std::io::Error::other);
        std::future::ready(sent)
    }

    async fn receive(&mut self) -> Option<rmcp::service::RxJsonRpcMessage<RoleClient>> {
        loop {
            let v = self.rx.recv().await?;
            match serde_json::from_value(v) {
                Ok(m) => return Some(m),
                Err(e) => {
                    tracing::warn!(server = %self.server, error = %e, "unreadable message from an SDK server")
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}
