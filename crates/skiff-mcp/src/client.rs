//! Connecting to MCP servers with rmcp: stdio child processes and streamable HTTP, all servers
//! at once under one startup timeout; a server that dies is connected again on its next call.

// Roots (deprecated by SEP-2577 in the newest protocol) are what Claude Code still advertises
// with protocol 2025-11-25, and what the filesystem server uses.
#![allow(deprecated)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use futures::future::join_all;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig,
    GetPromptRequestParams, GetPromptResult, Implementation, JsonObject, ListRootsResult,
    ProtocolVersion, ReadResourceRequestParams, ReadResourceResult, Root, RootsCapabilities,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ErrorData, Peer, RoleClient, ServiceError, ServiceExt};
use tokio::io::AsyncBufReadExt;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use crate::config::{ConfigProblem, Scope, ServerConfig, Transport};
use crate::offer::{ListedTool, Offer, ServerState, fetch_offer};
pub use crate::sdk::SdkChannel;
use crate::sdk::SdkTransport;
use crate::stdio::StdioTransport;
use crate::watch::Watched;

/// Claude Code's default startup timeout (`MCP_TIMEOUT`, ms).
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// Default time limit of one tool call, prompt or resource read (`MCP_TOOL_TIMEOUT`, ms): ten
/// minutes, as long as the longest Bash command may run.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(600);
pub use crate::line_limit::DEFAULT_MAX_MESSAGE_BYTES;
/// The protocol version skiff asks for in `initialize`, as Claude Code does.
pub const PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion::V_2025_11_25;
/// Longest stderr line logged from a server (the rest is cut).
const MAX_STDERR_LINE: usize = 2000;

/// How servers are reached and for how long skiff waits.
#[derive(Debug, Clone)]
pub struct McpOptions {
    /// The workspace: stdio servers start there, and it is the root skiff reports.
    pub cwd: PathBuf,
    /// Startup timeout of each server (`MCP_TIMEOUT`), unless its entry sets `timeout`.
    pub startup_timeout: Duration,
    /// Timeout of one tool call (`MCP_TOOL_TIMEOUT`; [`DEFAULT_TOOL_TIMEOUT`] by default;
    /// `None`: no limit).
    pub tool_timeout: Option<Duration>,
    /// Largest message a server may send (`SKIFF_MCP_MAX_MESSAGE_BYTES`): a larger answer
    /// fails its call with an error saying so.
    pub max_message_bytes: usize,
    /// Extra environment for stdio servers, under the entry's own `env`.
    pub env: BTreeMap<String, String>,
    /// How to reach an Agent SDK host's in-process servers (`type: "sdk"`), when there is one.
    pub sdk: Option<Arc<dyn SdkChannel>>,
}

impl McpOptions {
    /// Options for a workspace, timeouts from `MCP_TIMEOUT` / `MCP_TOOL_TIMEOUT` (ms) and the
    /// message limit from `SKIFF_MCP_MAX_MESSAGE_BYTES` as looked up by `var`.
    pub fn new(cwd: impl Into<PathBuf>, var: impl Fn(&str) -> Option<String>) -> Self {
        let ms = |name: &str| {
            var(name)
                .and_then(|v| v.trim().parse::<u64>().ok())
                .filter(|&n| n > 0)
                .map(Duration::from_millis)
        };
        Self {
            cwd: cwd.into(),
            startup_timeout: ms("MCP_TIMEOUT").unwrap_or(DEFAULT_STARTUP_TIMEOUT),
            tool_timeout: Some(ms("MCP_TOOL_TIMEOUT").unwrap_or(DEFAULT_TOOL_TIMEOUT)),
            max_message_bytes: var("SKIFF_MCP_MAX_MESSAGE_BYTES")
                .and_then(|v| v.trim().parse::<usize>().ok())
                .filter(|&n| n >= 1024)
                .unwrap_or(DEFAULT_MAX_MESSAGE_BYTES),
            env: BTreeMap::new(),
            sdk: None,
        }
    }
}

/// Where a server stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerStatus {
    /// Connected; it offers this many tools.
    Connected {
        /// Number of tools.
        tools: usize,
    },
    /// Could not connect, or the entry is unusable: the reason.
    Failed(String),
    /// The server wants authorization (HTTP 401/403): the reason.
    NeedsAuth(String),
    /// Not connected yet.
    Pending,
    /// Configured but turned off.
    Disabled,
}

impl ServerStatus {
    /// Claude Code's status word: `connected`, `failed`, `needs-auth`, `pending`, `disabled`.
    pub fn as_str(&self) -> &'static str {
        match self {
            ServerStatus::Connected { .. } => "connected",
            ServerStatus::Failed(_) => "failed",
            ServerStatus::NeedsAuth(_) => "needs-auth",
            ServerStatus::Pending => "pending",
            ServerStatus::Disabled => "disabled",
        }
    }

    /// The reason, for failed and needs-auth servers.
    pub fn error(&self) -> Option<&str> {
        match self {
            ServerStatus::Failed(e) | ServerStatus::NeedsAuth(e) => Some(e),
            _ => None,
        }
    }
}

/// What one server's connection attempt gave.
#[derive(Debug, Clone)]
pub struct ServerReport {
    /// Server name.
    pub name: String,
    /// Where its entry came from.
    pub scope: Scope,
    /// Its status.
    pub status: ServerStatus,
    /// `serverInfo` name and version, when connected.
    pub server_info: Option<(String, String)>,
    /// The skiff names of its tools (`mcp__server__tool`).
    pub tools: Vec<String>,
}

/// A failed tool call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// The call was interrupted (the server was sent `notifications/cancelled`).
    #[error("the call was interrupted")]
    Cancelled,
    /// No answer within `MCP_TOOL_TIMEOUT`.
    #[error("MCP server \"{server}\" did not answer within {ms} ms (MCP_TOOL_TIMEOUT)")]
    Timeout {
        /// Server name.
        server: String,
        /// The timeout, in milliseconds.
        ms: u128,
    },
    /// The server is gone (it will be started again on the next call).
    #[error(
        "MCP server \"{server}\" disconnected during the call ({reason}); it will be restarted on the next call"
    )]
    Disconnected {
        /// Server name.
        server: String,
        /// What the transport said.
        reason: String,
    },
    /// The server could not be (re)connected.
    #[error("MCP server \"{server}\" is not connected: {reason}")]
    NotConnected {
        /// Server name.
        server: String,
        /// Why.
        reason: String,
    },
    /// The server's answer was larger than the message limit.
    #[error(
        "MCP server \"{server}\" answered with {bytes} bytes, more than the {limit} bytes skiff accepts for one message (SKIFF_MCP_MAX_MESSAGE_BYTES); the call failed"
    )]
    TooLarge {
        /// Server name.
        server: String,
        /// The answer's size.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// The server answered with a JSON-RPC error.
    #[error("MCP server \"{server}\" returned an error: {message}")]
    Server {
        /// Server name.
        server: String,
        /// The error.
        message: String,
    },
}

/// skiff's side of the MCP session: answers `roots/list` with the workspace, and fetches a
/// list again as soon as the server says it changed.
#[derive(Debug, Clone)]
struct Client {
    roots: Vec<Root>,
    state: Arc<ServerState>,
}

impl ClientHandler for Client {
    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        Ok(ListRootsResult::new(self.roots.clone()))
    }

    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        self.state.refetch(&context.peer).await;
    }

    async fn on_prompt_list_changed(&self, context: NotificationContext<RoleClient>) {
        self.state.refetch(&context.peer).await;
    }

    async fn on_resource_list_changed(&self, context: NotificationContext<RoleClient>) {
        self.state.refetch(&context.peer).await;
    }

    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.roots = Some(RootsCapabilities::default());
        let mut info = ClientConfig::new(
            capabilities,
            Implementation::new("skiff", env!("CARGO_PKG_VERSION")),
        );
        info.protocol_version = PROTOCOL_VERSION;
        info
    }
}

type Service = RunningService<RoleClient, Client>;

/// A live connection; a stdio server's process group is signalled when it is dropped (the
/// leader is killed by `kill_on_drop`; this reaches what it started, e.g. `npx` → `node`).
struct Live {
    service: Service,
    pgid: Option<u32>,
    /// Why the message limit closed the connection, if it did.
    closed: crate::line_limit::ClosedReason,
}

impl Drop for Live {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(pgid) = self.pgid.and_then(|p| i32::try_from(p).ok()) {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pgid),
                nix::sys::signal::Signal::SIGTERM,
            );
        }
    }
}

/// A connected (or connectable) server, shared by its tools.
pub struct Server {
    config: ServerConfig,
    options: Arc<McpOptions>,
    live: Mutex<Option<Arc<Live>>>,
    state: Arc<ServerState>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("name", &self.config.name)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// The server's name.
    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// The connection, started again if the server died.
    async fn live(&self) -> Result<Arc<Live>, CallError> {
        let mut slot = self.live.lock().await;
        if let Some(s) = slot.as_ref()
            && !s.service.is_closed()
        {
            return Ok(Arc::clone(s));
        }
        tracing::info!(server = %self.config.name, "(re)connecting MCP server");
        let timeout = self.config.timeout.unwrap_or(self.options.startup_timeout);
        let service =
            match tokio::time::timeout(timeout, connect(&self.config, &self.options, &self.state))
                .await
            {
                Ok(Ok(s)) => {
                    // A restarted server may offer something else: its lists are fetched
                    // again before they are next used.
                    self.state.reconnected(s.service.peer_info().as_deref());
                    Arc::new(s)
                }
                Ok(Err(status)) => {
                    *slot = None;
                    return Err(CallError::NotConnected {
                        server: self.config.name.clone(),
                        reason: status.error().unwrap_or("not connected").to_owned(),
                    });
                }
                Err(_) => {
                    *slot = None;
                    return Err(CallError::NotConnected {
                        server: self.config.name.clone(),
                        reason: format!("no answer within {} s", timeout.as_secs()),
                    });
                }
            };
        *slot = Some(Arc::clone(&service));
        Ok(service)
    }

    /// Forget a connection that failed (only if it is still the current one).
    async fn drop_connection(&self, dead: &Arc<Live>) {
        let mut slot = self.live.lock().await;
        if slot.as_ref().is_some_and(|s| Arc::ptr_eq(s, dead)) {
            *slot = None;
        }
    }

    /// Call one of the server's tools. Cancelling `cancel` abandons the call and sends the
    /// server `notifications/cancelled`.
    pub async fn call(
        &self,
        tool: &str,
        arguments: JsonObject,
        cancel: &CancellationToken,
    ) -> Result<CallToolResult, CallError> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = Some(arguments);
        self.request(cancel, |peer| async move { peer.call_tool(params).await })
            .await
    }

    /// `prompts/get` (bounded by `MCP_TOOL_TIMEOUT`, stopped by `cancel`).
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: JsonObject,
        cancel: &CancellationToken,
    ) -> Result<GetPromptResult, CallError> {
        let mut params = GetPromptRequestParams::new(name.to_owned());
        params.arguments = (!arguments.is_empty()).then_some(arguments);
        self.request(cancel, |peer| async move {
            match peer.get_prompt_once(params).await? {
                rmcp::model::GetPromptResponse::Complete(r) => Ok(r),
                // Input the server asks the user for (SEP-2322) is not supported.
                _ => Err(ServiceError::UnexpectedResponse),
            }
        })
        .await
    }

    /// `resources/read` (bounded by `MCP_TOOL_TIMEOUT`, stopped by `cancel`).
    pub async fn read_resource(
        &self,
        uri: &str,
        cancel: &CancellationToken,
    ) -> Result<ReadResourceResult, CallError> {
        let params = ReadResourceRequestParams::new(uri.to_owned());
        self.request(
            cancel,
            |peer| async move { peer.read_resource(params).await },
        )
        .await
    }

    /// What the server offers now (its lists as last fetched).
    pub fn offer(&self) -> Offer {
        self.state.offer()
    }

    /// Moves each time what the server offers changes.
    pub fn version(&self) -> u64 {
        self.state.version()
    }

    /// Fetch again the lists the server said changed, waiting for a fetch already under way.
    /// A server that is not connected now is left as it is.
    pub async fn refresh(&self) {
        let live = self.live.lock().await.clone();
        if let Some(live) = live
            && !live.service.is_closed()
        {
            self.state.refetch(live.service.peer()).await;
        }
    }

    /// One request to the server: connected (again) first; bounded by `MCP_TOOL_TIMEOUT`;
    /// cancelling `cancel` abandons it (the server is sent `notifications/cancelled`). A
    /// transport failure forgets the connection, so the next request starts the server again.
    async fn request<T, F, Fut>(&self, cancel: &CancellationToken, send: F) -> Result<T, CallError>
    where
        F: FnOnce(Peer<RoleClient>) -> Fut,
        Fut: std::future::Future<Output = Result<T, ServiceError>>,
    {
        let service = tokio::select! {
            s = self.live() => s?,
            () = cancel.cancelled() => return Err(CallError::Cancelled),
        };
        let request = send(service.service.peer().clone());
        let outcome = tokio::select! {
            r = maybe_timeout(self.options.tool_timeout, request) => r,
            // Dropping the request sends `notifications/cancelled`.
            () = cancel.cancelled() => return Err(CallError::Cancelled),
        };
        let server = self.config.name.clone();
        match outcome {
            None => Err(CallError::Timeout {
                server,
                ms: self.options.tool_timeout.map_or(0, |t| t.as_millis()),
            }),
            Some(Ok(result)) => Ok(result),
            Some(Err(ServiceError::McpError(e))) => {
                Err(too_large(&server, &e).unwrap_or(CallError::Server {
                    server,
                    message: e.message.to_string(),
                }))
            }
            Some(Err(ServiceError::UnexpectedResponse)) => Err(CallError::Server {
                server,
                message: "the server answered with something else than what was asked".into(),
            }),
            Some(Err(e)) => {
                self.drop_connection(&service).await;
                let reason = service
                    .closed
                    .lock()
                    .ok()
                    .and_then(|c| c.clone())
                    .unwrap_or_else(|| e.to_string());
                Err(CallError::Disconnected { server, reason })
            }
        }
    }

    /// Close the connection (stdio servers are stopped).
    pub async fn shutdown(&self) {
        let live = self.live.lock().await.take();
        if let Some(live) = live {
            live.service.cancellation_token().cancel();
        }
    }
}

/// The error skiff put in place of an answer over the message limit, as a [`CallError`].
fn too_large(server: &str, e: &ErrorData) -> Option<CallError> {
    let data = e.data.as_ref()?;
    if data.get("kind").and_then(serde_json::Value::as_str)
        != Some(crate::line_limit::TOO_LARGE_MARK)
    {
        return None;
    }
    let n = |k: &str| data.get(k).and_then(serde_json::Value::as_u64).unwrap_or(0);
    Some(CallError::TooLarge {
        server: server.to_owned(),
        bytes: n("bytes"),
        limit: n("limit"),
    })
}

async fn maybe_timeout<F: std::future::Future>(limit: Option<Duration>, f: F) -> Option<F::Output> {
    match limit {
        Some(d) => tokio::time::timeout(d, f).await.ok(),
        None => Some(f.await),
    }
}

/// Servers connected at startup: their reports, and the servers themselves (for their tools).
#[derive(Debug, Default)]
pub struct Connected {
    /// One report per configured server (problems included), in name order.
    pub reports: Vec<ServerReport>,
    /// Connected servers with their tools.
    pub servers: Vec<(Arc<Server>, Vec<ListedTool>)>,
}

/// Connect every server at once; each gets its own startup timeout. Entries that could not be
/// used are reported as failed. Never fails as a whole.
pub async fn connect_all(
    configs: Vec<ServerConfig>,
    problems: Vec<ConfigProblem>,
    options: McpOptions,
) -> Connected {
    let options = Arc::new(options);
    let attempts = configs.into_iter().map(|config| {
        let options = Arc::clone(&options);
        async move { start(config, options).await }
    });
    let mut out = Connected::default();
    for (report, server) in join_all(attempts).await {
        out.reports.push(report);
        out.servers.extend(server);
    }
    for p in problems {
        out.reports.push(ServerReport {
            name: p.name,
            scope: p.scope,
            status: ServerStatus::Failed(p.message),
            server_info: None,
            tools: Vec::new(),
        });
    }
    out.reports.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// Connect each server (stdio servers start in `cwd`) and report its status (`skiff mcp
/// list`); the connections are closed again.
pub async fn probe(
    servers: &[ServerConfig],
    cwd: &std::path::Path,
    timeout: Duration,
) -> Vec<(String, ServerStatus)> {
    let mut options = McpOptions::new(cwd, |_| None);
    options.startup_timeout = timeout;
    let connected = connect_all(servers.to_vec(), Vec::new(), options).await;
    for (server, _) in &connected.servers {
        server.shutdown().await;
    }
    connected
        .reports
        .into_iter()
        .map(|r| (r.name, r.status))
        .collect()
}

async fn start(
    config: ServerConfig,
    options: Arc<McpOptions>,
) -> (ServerReport, Option<(Arc<Server>, Vec<ListedTool>)>) {
    let name = config.name.clone();
    let scope = config.scope;
    let timeout = config.timeout.unwrap_or(options.startup_timeout);
    let started = std::time::Instant::now();
    let state = Arc::new(ServerState::new(&name, timeout));
    let attempt = async {
        let service = connect(&config, &options, &state).await?;
        let info = service.service.peer_info();
        let offer = fetch_offer(&name, service.service.peer(), info.as_deref())
            .await
            .map_err(|e| ServerStatus::Failed(format!("connected, but {e}")))?;
        Ok::<_, ServerStatus>((service, offer))
    };
    let failed = |status: ServerStatus| {
        tracing::warn!(server = %name, status = status.as_str(), error = status.error().unwrap_or(""), "MCP server not connected");
        (
            ServerReport {
                name: name.clone(),
                scope,
                status,
                server_info: None,
                tools: Vec::new(),
            },
            None,
        )
    };
    let (service, offer) = match tokio::time::timeout(timeout, attempt).await {
        Ok(Ok(ok)) => ok,
        Ok(Err(status)) => return failed(status),
        Err(_) => {
            return failed(ServerStatus::Failed(format!(
                "did not finish connecting within {} ms (MCP_TIMEOUT)",
                timeout.as_millis()
            )));
        }
    };
    let server_info = service
        .service
        .peer_info()
        .and_then(|i| i.server_info.clone())
        .map(|i| (i.name, i.version));
    let tools = offer.tools.clone();
    tracing::info!(
        server = %name,
        tools = tools.len(),
        prompts = offer.prompts.len(),
        resources = offer.resources.len(),
        instructions = offer.instructions.as_ref().map_or(0, String::len),
        ms = started.elapsed().as_millis() as u64,
        "MCP server connected"
    );
    state.set(offer);
    let report = ServerReport {
        name: name.clone(),
        scope,
        status: ServerStatus::Connected { tools: tools.len() },
        server_info,
        tools: tools
            .iter()
            .map(|t| crate::naming::tool_name(&name, &t.name))
            .collect(),
    };
    let server = Arc::new(Server {
        config,
        options,
        live: Mutex::new(Some(Arc::new(service))),
        state,
    });
    (report, Some((server, tools)))
}

/// Start the transport and run the `initialize` handshake.
async fn connect(
    config: &ServerConfig,
    options: &McpOptions,
    state: &Arc<ServerState>,
) -> Result<Live, ServerStatus> {
    let client = Client {
        roots: vec![Root::new(file_uri(&options.cwd))],
        state: Arc::clone(state),
    };
    let stale = Arc::clone(&state.stale);
    let closed = crate::line_limit::ClosedReason::default();
    match &config.transport {
        Transport::Stdio { command, args, env } => {
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(args)
                .envs(&options.env)
                .envs(env)
                .current_dir(&options.cwd)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .kill_on_drop(true);
            #[cfg(unix)]
            cmd.process_group(0);
            let mut child = cmd
                .spawn()
                .map_err(|e| ServerStatus::Failed(format!("cannot start `{command}`: {e}")))?;
            if let Some(stderr) = child.stderr.take() {
                tokio::spawn(log_stderr(config.name.clone(), stderr));
            }
            let transport =
                StdioTransport::new(child, options.max_message_bytes, Arc::clone(&closed))
                    .map_err(|e| ServerStatus::Failed(format!("cannot start `{command}`: {e}")))?;
            let pgid = transport.id();
            let service = client
                .serve(Watched::new(transport, stale))
                .await
                .map_err(|e| {
                    ServerStatus::Failed(format!("initialize failed: {}", describe_init_error(&e)))
                })?;
            Ok(Live {
                service,
                pgid,
                closed,
            })
        }
        Transport::Http { url, headers } => connect_http(
            client,
            url,
            headers,
            false,
            options.max_message_bytes,
            stale,
        )
        .await
        .map(|service| Live {
            service,
            pgid: None,
            closed,
        }),
        Transport::Sse { url, headers } => {
            connect_http(client, url, headers, true, options.max_message_bytes, stale)
                .await
                .map(|service| Live {
                    service,
                    pgid: None,
                    closed,
                })
        }
        Transport::Sdk => {
            let Some(channel) = options.sdk.clone() else {
                return Err(ServerStatus::Failed(
                    "SDK servers are reached only through an Agent SDK host (--input-format stream-json)"
                        .into(),
                ));
            };
            let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
            let transport = SdkTransport {
                server: config.name.clone(),
                channel,
                tx,
                rx,
            };
            let service = client
                .serve(Watched::new(transport, stale))
                .await
                .map_err(|e| {
                    ServerStatus::Failed(format!("initialize failed: {}", describe_init_error(&e)))
                })?;
            Ok(Live {
                service,
                pgid: None,
                closed,
            })
        }
    }
}

async fn connect_http(
    client: Client,
    url: &str,
    headers: &BTreeMap<String, String>,
    sse: bool,
    max_message_bytes: usize,
    stale: Arc<crate::watch::Stale>,
) -> Result<Service, ServerStatus> {
    let mut custom = std::collections::HashMap::new();
    for (k, v) in headers {
        let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
            .map_err(|_| ServerStatus::Failed(format!("invalid header name {k:?}")))?;
        let value = reqwest::header::HeaderValue::from_str(v)
            .map_err(|_| ServerStatus::Failed(format!("invalid value for header {k}")))?;
        custom.insert(name, value);
    }
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    config.custom_headers = custom;
    config.max_sse_event_size = max_message_bytes;
    skiff_tools::tls::install_crypto_provider();
    let http = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| ServerStatus::Failed(format!("cannot build the HTTP client: {e}")))?;
    let transport = StreamableHttpClientTransport::with_client(http, config);
    // Messages name the server without its query and user info (where credentials go; the
    // transport's own errors quote the whole URL).
    let shown = url_for_messages(url);
    client.serve(Watched::new(transport, stale)).await.map_err(|e| {
        if e.is_authorization_required() {
            return ServerStatus::NeedsAuth(format!(
                "the server at {shown} requires authorization (set an Authorization header in its entry)"
            ));
        }
        let reason = describe_init_error(&e).replace(url, &shown);
        if sse {
            ServerStatus::Failed(format!(
                "SSE servers are not supported; tried {shown} as streamable HTTP: {reason}"
            ))
        } else {
            ServerStatus::Failed(format!("cannot connect to {shown}: {reason}"))
        }
    })
}

/// `url` without user info, query and fragment (`https://h/mcp?…`), for messages.
fn url_for_messages(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let end = rest.find(['?', '#']).unwrap_or(rest.len());
    let (authority_path, tail) = rest.split_at(end);
    let authority_path = match authority_path.split_once('/') {
        Some((auth, path)) => {
            let host = auth.rsplit_once('@').map_or(auth, |(_, h)| h);
            format!("{host}/{path}")
        }
        None => authority_path
            .rsplit_once('@')
            .map_or(authority_path, |(_, h)| h)
            .to_owned(),
    };
    let elided = if tail.is_empty() { "" } else { "?…" };
    if scheme.is_empty() {
        format!("{authority_path}{elided}")
    } else {
        format!("{scheme}://{authority_path}{elided}")
    }
}

/// An initialize error with its causes (rmcp's top-level text is terse).
fn describe_init_error(e: &rmcp::service::ClientInitializeError) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let part = s.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = s.source();
    }
    if text.contains("connection closed") || text.contains("Transport closed") {
        text.push_str(" (the server exited or closed its stdout; see the log for its stderr)");
    }
    text
}

/// Log a server's stderr, line by line (never to the terminal).
async fn log_stderr(server: String, stderr: tokio::process::ChildStderr) {
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    loop {
        match lines.next_line().await {
            Ok(Some(mut line)) => {
                if line.len() > MAX_STDERR_LINE {
                    let mut cut = MAX_STDERR_LINE;
                    while !line.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    line.truncate(cut);
                    line.push('…');
                }
                tracing::info!(target: "skiff::mcp::stderr", server = %server, "{line}");
            }
            Ok(None) => break,
            // Not UTF-8 or a read error: stop logging, the server keeps running.
            Err(e) => {
                tracing::debug!(server = %server, error = %e, "stopped reading the server's stderr");
                break;
            }
        }
    }
}

/// `file://` URI of a directory.
fn file_uri(path: &std::path::Path) -> String {
    let mut uri = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                uri.push(char::from(b));
            }
            _ => uri.push_str(&format!("%{b:02X}")),
        }
    }
    uri
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_in_messages_lose_credentials() {
        assert_eq!(
            url_for_messages("https://u:p@h:8/mcp?key=s#f"),
            "https://h:8/mcp?…"
        );
        assert_eq!(url_for_messages("http://h"), "http://h");
    }

    #[test]
    fn file_uris_escape_what_needs_it() {
        assert_eq!(
            file_uri(std::path::Path::new("/tmp/a b/ü")),
            "file:///tmp/a%20b/%C3%BC"
        );
    }

    #[test]
    fn timeouts_come_from_the_environment() {
        let o = McpOptions::new("/", |k| match k {
            "MCP_TIMEOUT" => Some("1500".into()),
            "MCP_TOOL_TIMEOUT" => Some("bogus".into()),
            _ => None,
        });
        assert_eq!(o.startup_timeout, Duration::from_millis(1500));
        // A call always has a time limit: a bad value leaves the default.
        assert_eq!(o.tool_timeout, Some(DEFAULT_TOOL_TIMEOUT));
        let d = McpOptions::new("/", |_| None);
        assert_eq!(d.startup_timeout, DEFAULT_STARTUP_TIMEOUT);
        assert_eq!(d.tool_timeout, Some(DEFAULT_TOOL_TIMEOUT));
        assert_eq!(d.max_message_bytes, DEFAULT_MAX_MESSAGE_BYTES);
        let m = McpOptions::new("/", |k| {
            (k == "SKIFF_MCP_MAX_MESSAGE_BYTES").then(|| "2000000".to_owned())
        });
        assert_eq!(m.max_message_bytes, 2_000_000);
    }
}
