//! The session's MCP servers: connected in the background from the moment the agent is built,
//! their tools handed to the session before its first request, their statuses kept for `/mcp`.

use std::path::Path;
use std::sync::{Arc, Mutex};

use skiff_core::{ArrivedTools, LateTools};
use skiff_mcp::{ConfigProblem, McpOptions, McpTool, ServerConfig, ServerReport, ServerStatus};
use skiff_protocol::sdk::McpServerStatus;

/// What the front end can ask about the servers.
#[derive(Debug, Clone, Default)]
pub struct McpHandle {
    reports: Arc<Mutex<Option<Vec<ServerReport>>>>,
    configured: usize,
    names: Vec<String>,
}

impl McpHandle {
    /// The configured servers' names.
    pub fn names(&self) -> Vec<String> {
        self.names.clone()
    }

    /// The reports, once the servers have connected (`None` while they are connecting).
    pub fn reports(&self) -> Option<Vec<ServerReport>> {
        self.reports.lock().ok().and_then(|r| r.clone())
    }

    /// `/mcp`: one line per server.
    pub fn describe(&self) -> String {
        if self.configured == 0 {
            return "No MCP servers configured. Add one with `skiff mcp add NAME -- COMMAND ARGS…` \
                    or in .mcp.json."
                .to_owned();
        }
        let Some(reports) = self.reports() else {
            return format!(
                "{} MCP server(s) connecting (they finish before the first request)",
                self.configured
            );
        };
        let mut out = String::from("MCP servers:\n");
        for r in reports {
            let detail = match &r.status {
                ServerStatus::Connected { tools } => {
                    let info = r
                        .server_info
                        .as_ref()
                        .map(|(n, v)| format!(" ({n} {v})"))
                        .unwrap_or_default();
                    format!("✓ connected, {tools} tool(s){info}")
                }
                ServerStatus::Failed(e) => format!("✗ failed: {e}"),
                ServerStatus::NeedsAuth(e) => format!("△ needs authentication: {e}"),
                ServerStatus::Pending => "… connecting".to_owned(),
                ServerStatus::Disabled => "○ disabled".to_owned(),
            };
            out.push_str(&format!("  {} [{}]  {detail}\n", r.name, r.scope.as_str()));
            for t in &r.tools {
                out.push_str(&format!("      {t}\n"));
            }
        }
        out
    }
}

/// Start connecting `servers` (problems are reported as failed). Tools for which `removed`
/// says yes (deny rules) are not offered to the model. Nothing starts when there are no
/// servers.
pub fn start(
    servers: Vec<ServerConfig>,
    problems: Vec<ConfigProblem>,
    cwd: &Path,
    removed: impl Fn(&str) -> bool + Send + 'static,
    sdk: Option<std::sync::Arc<dyn skiff_mcp::SdkChannel>>,
    env: skiff_tools::ExtraEnv,
) -> (Option<LateTools>, McpHandle) {
    let handle = McpHandle {
        reports: Arc::default(),
        configured: servers.len() + problems.len(),
        names: servers
            .iter()
            .map(|s| s.name.clone())
            .chain(problems.iter().map(|p| p.name.clone()))
            .collect(),
    };
    if handle.configured == 0 {
        return (None, handle);
    }
    let mut options = McpOptions::new(cwd, |k| std::env::var(k).ok());
    options.sdk = sdk;
    options.env = env.vars().iter().cloned().collect();
    let reports = Arc::clone(&handle.reports);
    let future = async move {
        let connected = skiff_mcp::connect_all(servers, problems, options).await;
        let failed: Vec<&ServerReport> = connected
            .reports
            .iter()
            .filter(|r| r.status.error().is_some())
            .collect();
        for r in failed {
            eprintln!(
                "Warning: MCP server \"{}\" is not connected: {}",
                r.name,
                r.status.error().unwrap_or_default()
            );
        }
        let tools = McpTool::all(&connected)
            .into_iter()
            .filter(|t| !removed(t.name()))
            .collect();
        let statuses = connected.reports.iter().map(status_of).collect();
        if let Ok(mut slot) = reports.lock() {
            *slot = Some(connected.reports);
        }
        ArrivedTools {
            tools,
            servers: statuses,
        }
    };
    (Some(LateTools::new(in_background(future))), handle)
}

/// Run the connections on a thread of their own, so they progress while skiff sets up and,
/// in the REPL, while the user types (the session's runtime is idle then). The thread keeps
/// its runtime alive for the connections' tasks until skiff exits.
fn in_background(
    future: impl std::future::Future<Output = ArrivedTools> + Send + 'static,
) -> impl std::future::Future<Output = ArrivedTools> + Send + 'static {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name("skiff-mcp".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot start the MCP runtime");
                    return;
                }
            };
            runtime.block_on(async move {
                let _ = tx.send(future.await);
                std::future::pending::<()>().await;
            });
        });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "cannot start the MCP thread");
    }
    async move { rx.await.unwrap_or_default() }
}

fn status_of(r: &ServerReport) -> McpServerStatus {
    McpServerStatus {
        name: r.name.clone(),
        status: r.status.as_str().to_owned(),
        source: Some(r.scope.as_str().to_owned()),
        error: r.status.error().map(str::to_owned),
    }
}
