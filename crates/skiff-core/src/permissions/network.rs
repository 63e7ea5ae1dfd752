//! Network approvals for sandboxed commands: when a command's connection goes to a host that
//! is not allowed, the sandbox's proxy asks through the session's approval path — an approval
//! request for the pseudo-tool [`NETWORK_TOOL`] with `{host, port, command}`, answered by the
//! terminal, an Agent SDK host's `can_use_tool` or an editor's `session/request_permission`
//! like any other. In `bypassPermissions` the host is allowed, in `dontAsk` refused.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;
use skiff_tools::sandbox::{NetworkAnswer, NetworkApprover, NetworkRequest};

use super::{Approver, PermissionMode};
use crate::event::{ApprovalAnswer, ApprovalRequest};
use crate::requests::Requester;

/// The tool name of a network approval.
pub const NETWORK_TOOL: &str = "SandboxNetworkAccess";

/// Asks the session's approver about hosts for one call.
pub struct AskNetwork {
    /// The session's approver.
    pub approver: Arc<dyn Approver>,
    /// Its way to the client.
    pub requester: Requester,
    /// The session's mode when the call started.
    pub mode: PermissionMode,
    /// The Bash call's id.
    pub tool_use_id: String,
}

impl fmt::Debug for AskNetwork {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AskNetwork")
            .field("mode", &self.mode)
            .field("tool_use_id", &self.tool_use_id)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl NetworkApprover for AskNetwork {
    async fn approve(&self, request: NetworkRequest) -> NetworkAnswer {
        match self.mode {
            PermissionMode::BypassPermissions => return NetworkAnswer::Allow,
            PermissionMode::DontAsk => return NetworkAnswer::Deny,
            _ => {}
        }
        let NetworkRequest {
            host,
            port,
            command,
            ..
        } = request;
        let ask = ApprovalRequest {
            tool_name: NETWORK_TOOL.to_owned(),
            reason: format!(
                "The command wants to connect to {host}:{port}, which is not in \
                 sandbox.network.allowedDomains."
            ),
            input: json!({ "host": host, "port": port, "command": command }),
            tool_use_id: self.tool_use_id.clone(),
        };
        match self.approver.approve(ask, &self.requester).await {
            ApprovalAnswer::Allow { .. } => NetworkAnswer::Allow,
            ApprovalAnswer::Deny { .. } => NetworkAnswer::Deny,
        }
    }
}

/// The `sandbox.network.allowedDomains` entry "always allow" saves for a network request's
/// input (`{host, port}`): the host for a remote one, `host:port` for loopback (a test
/// suite's own server is allowed on its port only), IPv6 loopback in brackets.
pub fn domain_entry(input: &serde_json::Value) -> String {
    let host = input
        .get("host")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("")
        .to_owned();
    let port = input
        .get("port")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0);
    let loopback = host == "localhost"
        || host.ends_with(".localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    match (loopback, host.contains(':')) {
        (true, true) => format!("[{host}]:{port}"),
        (true, false) => format!("{host}:{port}"),
        (false, _) => host,
    }
}
