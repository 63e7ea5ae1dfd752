//! The session's MCP servers: connected in the background from the moment the agent is built,
//! handed to the session (as a [`Catalog`]: tools, instructions, prompts, resources, which
//! follow the servers' changes) before its first request, their statuses kept for `/mcp`.

use std::path::Path;
use std::sync::{Arc, Mutex};

use skiff_core::commands::McpPrompts;
use skiff_core::{ArrivedTools, LateTools};
use skiff_mcp::{Catalog, ConfigProblem, McpOptions, ServerConfig, ServerReport, ServerStatus};
use skiff_protocol::sdk::McpServerStatus;

/// What the front end can ask about the servers.
#[derive(Debug, Clone)]
pub struct McpHandle {
    reports: Arc<Mutex<Option<Vec<ServerReport>>>>,
    catalog: Arc<Mutex<Option<Arc<Catalog>>>>,
    connected: tokio::sync::watch::Receiver<bool>,
    configured: usize,
    names: Vec<String>,
}

impl Default for McpHandle {
    fn default() -> Self {
        Self {
            reports: Arc::default(),
            catalog: Arc::default(),
            connected: tokio::sync::watch::channel(true).1,
            configured: 0,
            names: Vec::new(),
        }
    }
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

    /// Whether every server has connected or failed.
    pub fn is_connected(&self) -> bool {
        *self.connected.borrow()
    }

    /// Resolves once every server has connected or failed (at once without servers).
    pub async fn connected(&self) {
        let mut rx = self.connected.clone();
        let _ = rx.wait_for(|done| *done).await;
    }

    /// `/mcp`: one line per server, and what each offers now.
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
        let catalog = self.catalog.lock().ok().and_then(|c| c.clone());
        let mut out = String::from("MCP servers:\n");
        for r in reports {
            let server = catalog
                .as_ref()
                .and_then(|c| c.servers().iter().find(|s| s.name() == r.name).cloned());
            let offer = server.map(|s| s.offer());
            let detail = match &r.status {
                ServerStatus::Connected { tools } => {
                    let info = r
                        .server_info
                        .as_ref()
                        .map(|(n, v)| format!(" ({n} {v})"))
                        .unwrap_or_default();
                    match &offer {
                        Some(o) => {
                            let mut what = format!("{} tool(s)", o.tools.len());
                            if o.has_prompts {
                                what.push_str(&format!(", {} prompt(s)", o.prompts.len()));
                            }
                            if o.has_resources {
                                what.push_str(&format!(", {} resource(s)", o.resources.len()));
                            }
                            if o.instructions
                                .as_deref()
                                .is_some_and(|i| !i.trim().is_empty())
                            {
                                what.push_str(", instructions");
                            }
                            format!("✓ connected, {what}{info}")
                        }
                        None => format!("✓ connected, {tools} tool(s){info}"),
                    }
                }
                ServerStatus::Failed(e) => format!("✗ failed: {e}"),
                ServerStatus::NeedsAuth(e) => format!("△ needs authentication: {e}"),
                ServerStatus::Pending => "… connecting".to_owned(),
                ServerStatus::Disabled => "○ disabled".to_owned(),
            };
            out.push_str(&format!("  {} [{}]  {detail}\n", r.name, r.scope.as_str()));
            match &offer {
                Some(o) => {
                    for t in &o.tools {
                        out.push_str(&format!(
                            "      {}\n",
                            skiff_mcp::tool_name(&r.name, &t.name)
                        ));
                    }
                    for p in &o.prompts {
                        out.push_str(&format!(
                            "      /{}\n",
                            skiff_mcp::tool_name(&r.name, &p.name)
                        ));
                    }
                    for res in &o.resources {
                        out.push_str(&format!("      @{}:{}\n", r.name, res.uri));
                    }
                }
                None => {
                    for t in &r.tools {
                        out.push_str(&format!("      {t}\n"));
                    }
                }
            }
        }
        out
    }
}

/// Start connecting `servers` (problems are reported as failed); stdio servers get `env` (the
/// settings' `env`) under their entry's own. Tools for which `removed` says yes (deny rules)
/// are not offered to the model. The servers' prompts become commands of `prompts` as soon as
/// they connect. Nothing starts when there are no servers.
pub fn start(
    servers: Vec<ServerConfig>,
    problems: Vec<ConfigProblem>,
    cwd: &Path,
    removed: impl Fn(&str) -> bool + Send + Sync + 'static,
    sdk: Option<std::sync::Arc<dyn skiff_mcp::SdkChannel>>,
    env: skiff_tools::ExtraEnv,
    prompts: &McpPrompts,
) -> (Option<LateTools>, McpHandle) {
    let (done, connected) = tokio::sync::watch::channel(false);
    let handle = McpHandle {
        reports: Arc::default(),
        catalog: Arc::default(),
        connected,
        configured: servers.len() + problems.len(),
        names: servers
            .iter()
            .map(|s| s.name.clone())
            .chain(problems.iter().map(|p| p.name.clone()))
            .collect(),
    };
    if handle.configured == 0 {
        let _ = done.send(true);
        return (None, handle);
    }
    let mut options = McpOptions::new(cwd, |k| std::env::var(k).ok());
    options.sdk = sdk;
    options.env = env.vars().iter().cloned().collect();
    let reports = Arc::clone(&handle.reports);
    let shown = Arc::clone(&handle.catalog);
    let prompts = prompts.clone();
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
        let catalog = Arc::new(Catalog::new(&connected, Arc::new(removed)));
        for w in catalog.name_warnings() {
            eprintln!("{w}");
        }
        prompts.attach(Arc::clone(&catalog) as Arc<dyn skiff_tools::McpCatalog>);
        let statuses = connected.reports.iter().map(status_of).collect();
        if let Ok(mut slot) = reports.lock() {
            *slot = Some(connected.reports);
        }
        if let Ok(mut slot) = shown.lock() {
            *slot = Some(Arc::clone(&catalog));
        }
        let _ = done.send(true);
        ArrivedTools {
            tools: Vec::new(),
            servers: statuses,
            catalog: Some(catalog),
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
