//! The host's in-process MCP servers, reached with `mcp_message` requests: skiff's MCP
//! client writes JSON-RPC, it travels to the host inside a `control_request`, and the host's
//! `mcp_response` comes back to the client.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};
use skiff_protocol::control::{ControlFrame, ControlRequest, McpMessage, McpMessageAnswer};
use tokio::sync::mpsc;

use super::out::Out;

/// The channel to the host's servers.
pub(super) struct SdkServers {
    out: Out,
    /// Requests in flight: their JSON-RPC id and where the reply goes.
    pending: Mutex<HashMap<String, (Value, mpsc::UnboundedSender<Value>)>>,
    next: AtomicU64,
}

impl SdkServers {
    /// Requests go out through `out`.
    pub(super) fn new(out: Out) -> Self {
        Self {
            out,
            pending: Mutex::default(),
            next: AtomicU64::new(1),
        }
    }

    /// Route the host's answer to an `mcp_message` request; `None` when it was one (handled),
    /// else the answer back for the other kinds of request.
    pub(super) fn resolve(
        &self,
        id: &str,
        answer: Result<Value, String>,
    ) -> Option<Result<Value, String>> {
        if !id.starts_with("mcp_") {
            return Some(answer);
        }
        let entry = self.pending.lock().ok().and_then(|mut p| p.remove(id));
        let Some((rpc_id, replies)) = entry else {
            // A notification's ack, or an unknown id.
            return None;
        };
        let reply = match answer.map(serde_json::from_value::<McpMessageAnswer>) {
            Ok(Ok(McpMessageAnswer {
                mcp_response: Some(reply),
                ..
            })) => reply,
            Ok(_) => json!({"jsonrpc": "2.0", "id": rpc_id, "error": {"code": -32603,
                "message": "the SDK host answered without mcp_response"}}),
            Err(e) => json!({"jsonrpc": "2.0", "id": rpc_id,
                "error": {"code": -32603, "message": e}}),
        };
        let _ = replies.send(reply);
        None
    }
}

impl skiff_mcp::SdkChannel for SdkServers {
    fn send(&self, server: &str, message: Value, replies: mpsc::UnboundedSender<Value>) {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let id = format!("mcp_{n}_{}", &skiff_core::frames::new_uuid()[..8]);
        if let Some(rpc_id) = message
            .get("id")
            .filter(|_| message.get("method").is_some())
            && let Ok(mut pending) = self.pending.lock()
        {
            pending.insert(id.clone(), (rpc_id.clone(), replies));
        }
        self.out.frame(&ControlFrame::request(
            id,
            ControlRequest::McpMessage(McpMessage {
                server_name: server.to_owned(),
                message,
                extra: Default::default(),
            }),
        ));
    }
}
