//! skiff's own tools served over MCP (`skiff mcp serve`, as `claude mcp serve`): the tools of
//! a [`ToolRegistry`] listed with their schemas and called in a [`ToolContext`], each call first
//! put to a [`CallGate`] — the session's permission rules and mode. Nobody can be asked over
//! MCP, so a call that would need approval is refused with a message saying what to allow.

use std::sync::Arc;

use async_trait::async_trait;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock as McpBlock,
    Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Tool as McpTool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use skiff_protocol::{ContentBlock, ImageSource, ToolResultContent};
use skiff_tools::{ToolContext, ToolOutput, ToolRegistry};
use tokio_util::sync::CancellationToken;

/// Decides whether a call may run.
#[async_trait]
pub trait CallGate: Send + Sync {
    /// `Ok(())` to run the call; `Err(message)` to refuse it with `message`.
    async fn check(&self, tool: &str, input: &Value, read_only: bool) -> Result<(), String>;
}

/// The server: the tools, their context, the gate.
#[derive(Clone)]
pub struct ToolServer {
    tools: Arc<ToolRegistry>,
    ctx: ToolContext,
    gate: Arc<dyn CallGate>,
    instructions: Option<String>,
}

impl ToolServer {
    /// Serve `tools` in `ctx`, each call put to `gate` first.
    pub fn new(tools: ToolRegistry, ctx: ToolContext, gate: Arc<dyn CallGate>) -> Self {
        Self {
            tools: Arc::new(tools),
            ctx,
            gate,
            instructions: None,
        }
    }

    /// Instructions for the client (the workspace, what is allowed).
    pub fn with_instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// The tools as MCP lists them.
    fn listed(&self) -> Vec<McpTool> {
        self.tools
            .names()
            .into_iter()
            .filter_map(|name| {
                let tool = self.tools.get(&name)?;
                let schema = match tool.input_schema() {
                    Value::Object(m) => m.clone(),
                    _ => serde_json::Map::new(),
                };
                let annotations = ToolAnnotations::new().read_only(tool.is_read_only());
                Some(
                    McpTool::new(name, tool.description().to_owned(), Arc::new(schema))
                        .with_annotations(annotations),
                )
            })
            .collect()
    }

    /// One call: the gate, then the tool.
    async fn call(&self, name: &str, input: Value, cancel: CancellationToken) -> CallToolResult {
        let Some(tool) = self.tools.get(name) else {
            return result(self.tools.unknown(name));
        };
        let tool = Arc::clone(tool);
        if let Err(out) = tool.validate(&input, &self.ctx).await {
            return result(out);
        }
        if let Err(message) = self.gate.check(name, &input, tool.is_read_only()).await {
            return CallToolResult::error(vec![McpBlock::text(message)]);
        }
        let ctx = self.ctx.with_cancel(cancel);
        result(self.tools.call(name, input, &ctx).await)
    }
}

/// A tool's output as an MCP result: text and images, `isError` kept.
fn result(out: ToolOutput) -> CallToolResult {
    let blocks = match out.content {
        ToolResultContent::Text(t) => vec![McpBlock::text(t)],
        ToolResultContent::Blocks(blocks) => blocks
            .into_iter()
            .filter_map(|b| match b {
                ContentBlock::Text(t) => Some(McpBlock::text(t.text)),
                ContentBlock::Image(i) => match i.source {
                    ImageSource::Base64 { media_type, data } => {
                        Some(McpBlock::image(data, media_type))
                    }
                    ImageSource::Url { url } => Some(McpBlock::text(format!("[image: {url}]"))),
                    ImageSource::Unknown(_) => None,
                },
                _ => None,
            })
            .collect(),
    };
    let mut r = if out.is_error {
        CallToolResult::error(blocks)
    } else {
        CallToolResult::success(blocks)
    };
    if !out.is_error {
        r.structured_content = out.structured.filter(Value::is_object);
    }
    r
}

impl ServerHandler for ToolServer {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::default();
        info.capabilities = ServerCapabilities::builder().enable_tools().build();
        let mut implementation = Implementation::from_build_env();
        implementation.name = "skiff".to_owned();
        implementation.version = env!("CARGO_PKG_VERSION").to_owned();
        info.server_info = implementation;
        info.instructions.clone_from(&self.instructions);
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.listed()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let input = Value::Object(request.arguments.unwrap_or_default());
        let cancel = context.ct.clone();
        Ok(CallToolResponse::Complete(
            self.call(&request.name, input, cancel).await,
        ))
    }
}

/// Why serving stopped early.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The client did not complete the MCP handshake.
    #[error("the MCP handshake failed: {0}")]
    Handshake(String),
    /// The server's task failed.
    #[error("the MCP server stopped: {0}")]
    Stopped(String),
}

/// Serve on any byte stream pair (a test's duplex pipe, stdin/stdout) until it closes.
pub async fn serve_io<R, W>(server: ToolServer, io: (R, W)) -> Result<(), ServeError>
where
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let running = server
        .serve(io)
        .await
        .map_err(|e| ServeError::Handshake(e.to_string()))?;
    running
        .waiting()
        .await
        .map(|_| ())
        .map_err(|e| ServeError::Stopped(e.to_string()))
}
