//! The host's `initialize` (its hooks, options and in-process MCP servers, applied before the
//! session starts) and `mcp_status`, answered with what the session is.

use std::sync::Arc;

use serde_json::Value;
use skiff_core::hooks::SdkHooks;
use skiff_protocol::control::{
    Account, Initialize, InitializeResponse, McpServerInfo, McpStatusResponse, ModelInfo,
    ServerInfo, ToolInfo,
};

use super::Driver;

impl Driver {
    /// `initialize`: install the host's hooks and options (first time only), answer with the
    /// session's commands, agents, models and mode, and start the session.
    pub(super) fn initialize(&mut self, id: &str, request: &Initialize) {
        let mut hooks_applied = true;
        match self.agent.take() {
            Some(agent) => {
                let (sdk, warnings) = SdkHooks::from_initialize(
                    request.hooks.as_ref().unwrap_or(&Default::default()),
                    agent.requester(),
                );
                for w in warnings {
                    eprintln!("Warning: {w}");
                }
                let mut agent = if sdk.is_empty() {
                    agent
                } else {
                    agent.add_hooks(Arc::new(sdk))
                };
                if let Some(late) = self.sdk_servers(request) {
                    agent = agent.with_late_tools(late);
                }
                if let Err(e) = crate::front::sdk_options::apply(&mut agent, request) {
                    self.agent = Some(agent);
                    self.out.error(id, &e);
                    return;
                }
                self.agent = Some(agent);
            }
            // A second initialize, or one after the first message: hooks cannot be added.
            None => hooks_applied = request.hooks.is_none(),
        }
        let config = self.agent.as_ref().map(skiff_core::Agent::config);
        let mode = config.map_or_else(
            || "default".to_owned(),
            |c| c.permission_mode.as_str().to_owned(),
        );
        let model = config.map(|c| c.model.clone()).unwrap_or_default();
        let api_key_source = config.map_or_else(|| "none".to_owned(), |c| c.api_key_source.clone());
        let api_provider = config
            .and_then(|c| c.init_extra.get("cloud"))
            .and_then(|c| c.get("provider"))
            .and_then(Value::as_str)
            .unwrap_or("firstParty")
            .to_owned();
        let agents = config
            .map(|c| crate::front::sdk_options::agents(&c.agents))
            .unwrap_or_default();
        let model_info = |value: &str, name: &str, description: String| ModelInfo {
            value: value.to_owned(),
            display_name: name.to_owned(),
            description,
            extra: Default::default(),
        };
        let response = InitializeResponse {
            commands: crate::front::sdk_options::commands(&self.commands),
            agents,
            output_style: "default".to_owned(),
            available_output_styles: vec!["default".to_owned()],
            models: vec![
                model_info("default", "Default", model),
                model_info("sonnet", "Sonnet", skiff_llm::resolve_alias("sonnet")),
                model_info("opus", "Opus", skiff_llm::resolve_alias("opus")),
                model_info("haiku", "Haiku", skiff_llm::resolve_alias("haiku")),
            ],
            account: Account {
                api_key_source: Some(api_key_source),
                api_provider: Some(api_provider),
                extra: Default::default(),
            },
            pid: Some(std::process::id()),
            claude_code_version: Some(skiff_core::COMPAT_VERSION.to_owned()),
            skiff_version: Some(skiff_core::SKIFF_VERSION.to_owned()),
            current_permission_mode: Some(mode),
            hooks_applied: Some(hooks_applied),
            hook_on_failure_supported: Some(true),
            extra: Default::default(),
        };
        self.out.success(id, &response);
        // The session starts now, so the first message is answered at once.
        let _ = self.session();
    }

    /// The TypeScript SDK names its in-process servers in `initialize.sdkMcpServers` (the
    /// Python SDK puts them in --mcp-config): connect those not configured already.
    fn sdk_servers(&mut self, request: &Initialize) -> Option<skiff_core::LateTools> {
        let known: Vec<String> = self.mcp.iter().flat_map(|m| m.names()).collect();
        let servers: Vec<skiff_mcp::ServerConfig> = request
            .sdk_mcp_servers
            .iter()
            .flatten()
            .filter(|n| !known.contains(n))
            .map(|name| skiff_mcp::ServerConfig {
                name: name.clone(),
                scope: skiff_mcp::Scope::Dynamic,
                transport: skiff_mcp::Transport::Sdk,
                timeout: None,
            })
            .collect();
        if servers.is_empty() {
            return None;
        }
        let engine = Arc::clone(&self.engine);
        let (late, handle) = skiff_config::mcp::session::start(
            servers,
            Vec::new(),
            &self.cwd,
            move |tool| engine.removes_tool(tool),
            Some(Arc::clone(&self.sdk) as Arc<dyn skiff_mcp::SdkChannel>),
            // In-process servers: no environment of their own.
            skiff_tools::ExtraEnv::default(),
            self.commands.mcp(),
        );
        self.mcp.push(handle);
        late
    }

    /// `mcp_status`: every server, its state, what it says it is, its tools.
    pub(super) fn mcp_status(&self) -> McpStatusResponse {
        let mcp_servers = self
            .mcp
            .iter()
            .flat_map(|m| m.reports().unwrap_or_default())
            .map(|r| McpServerInfo {
                name: r.name,
                status: r.status.as_str().to_owned(),
                scope: Some(r.scope.as_str().to_owned()),
                server_info: r
                    .server_info
                    .map(|(name, version)| ServerInfo { name, version }),
                error: r.status.error().map(str::to_owned),
                tools: r.tools.into_iter().map(|name| ToolInfo { name }).collect(),
                extra: Default::default(),
            })
            .collect();
        McpStatusResponse { mcp_servers }
    }
}
