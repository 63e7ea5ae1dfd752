//! skiff's tools without a model, for `skiff mcp serve` (as `claude mcp serve`): the workspace,
//! its settings (trust applied), the sandbox, the permission rules and mode of a session, and
//! the built-in tools that make sense without a model and without a conversation. Every call
//! goes through the session's permission checker; what it would ask about is refused (an MCP
//! server has nobody to ask), with a message saying what to allow.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use skiff_core::PermissionMode;
use skiff_core::permissions::{PermissionChecker, PermissionDecision, PermissionQuery};
use skiff_mcp::serve::{CallGate, ToolServer};
use skiff_tools::ToolRegistry;

use crate::builder::{SessionBuilder, extra_dirs, permission_checker, tool_context, workspace};
use crate::error::{ConfigError, Result};
use crate::sandbox_setup::SessionSandbox;
use crate::settings::Settings;

/// The tools `skiff mcp serve` offers: those that need neither a model nor a conversation.
pub const SERVED_TOOLS: &[&str] = &[
    "Bash",
    "Edit",
    "Glob",
    "Grep",
    "LS",
    "NotebookEdit",
    "Read",
    "TaskOutput",
    "TaskStop",
    "WebFetch",
    "Write",
];

/// A configured tool server.
pub struct ToolHost {
    /// The server, ready to serve.
    pub server: ToolServer,
    /// The workspace, canonical.
    pub cwd: PathBuf,
    /// The permission mode calls are decided in.
    pub mode: PermissionMode,
    /// The tools offered.
    pub tools: Vec<String>,
}

/// The session's permission checker as the server's gate.
struct Gate {
    checker: Arc<dyn PermissionChecker>,
    mode: PermissionMode,
}

#[async_trait]
impl CallGate for Gate {
    async fn check(
        &self,
        tool: &str,
        input: &Value,
        read_only: bool,
    ) -> std::result::Result<(), String> {
        let query = PermissionQuery {
            tool,
            input,
            tool_use_id: "mcp",
            read_only,
            mode: self.mode,
        };
        match self.checker.check(&query).await {
            PermissionDecision::Allow => Ok(()),
            PermissionDecision::Deny { message } => Err(message),
            PermissionDecision::Ask { message } => Err(format!(
                "{message} `skiff mcp serve` cannot ask anyone for approval, so the call was \
                 refused. Allow it with a rule (permissions.allow in the settings, or \
                 --allowedTools \"{tool}\" when starting the server), or start the server in a \
                 permission mode that allows it (--permission-mode acceptEdits for edits in the \
                 workspace; the mode is {}).",
                self.mode
            )),
        }
    }
}

impl SessionBuilder {
    /// The MCP tool server of this configuration (no provider, no transcript, no MCP servers
    /// of its own, no hooks); warnings go to `warnings`.
    pub fn tool_server(self, warnings: &mut Vec<String>) -> Result<ToolHost> {
        let (o, env, helper) = self.into_parts();
        let cwd = workspace(&o)?;
        let settings = Settings::load(&o, &env, &cwd)?;
        warnings.extend(settings.trust_warnings.iter().cloned());
        let add_dirs = extra_dirs(&settings, warnings);
        let mut roots = vec![cwd.clone()];
        roots.extend(add_dirs.iter().cloned());
        let sandbox = SessionSandbox::new(&settings, &cwd, roots, helper.as_deref(), warnings)?;
        let mut tools = ToolRegistry::with_builtins();
        tools.retain(SERVED_TOOLS);
        if let Some(list) = &o.tools {
            let names: Vec<&str> = list
                .iter()
                .map(|n| n.trim())
                .filter(|n| !n.is_empty() && *n != "default")
                .collect();
            if !names.is_empty() {
                tools.retain(&names);
            }
        }
        let mut rules = crate::rules::rule_set(&settings, &cwd, warnings);
        sandbox.add_rules(&mut rules, &cwd);
        for name in rules.removed_tools() {
            tools.disable(&name);
        }
        let (ctx, engine, _) =
            tool_context(&cwd, add_dirs, None, &settings, rules, &sandbox, None, &env)?;
        let mode = settings
            .permissions
            .mode
            .value
            .parse::<PermissionMode>()
            .map_err(|e| {
                ConfigError::invalid(format!("{e} (from {})", settings.permissions.mode.source))
            })?;
        crate::rules::refuse_bypass_as_root(mode, &env)?;
        let _ = sandbox.probed_status(warnings);
        let checker = permission_checker(&settings, &sandbox, &engine, &cwd);
        let names = tools.names();
        let instructions = format!(
            "skiff's tools in the workspace {} (permission mode {mode}). Calls that would need \
             approval are refused: nobody can be asked over MCP.",
            cwd.display()
        );
        let server = ToolServer::new(tools, ctx, Arc::new(Gate { checker, mode }))
            .with_instructions(instructions);
        Ok(ToolHost {
            server,
            cwd,
            mode,
            tools: names,
        })
    }
}
