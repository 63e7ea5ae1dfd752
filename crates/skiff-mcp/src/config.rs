//! MCP server entries as Claude Code reads them (PROTOCOL.md §7).

use std::collections::BTreeMap;
use std::time::Duration;

/// Where a server entry came from. On a name clash the higher scope wins, whole entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// `~/.claude.json` top-level `mcpServers`, or `mcpServers` in user settings.
    User,
    /// `.mcp.json` in the workspace, or `mcpServers` in project settings.
    Project,
    /// `~/.claude.json` `projects[<dir>].mcpServers`, or `mcpServers` in local settings.
    Local,
    /// `--mcp-config` (Claude Code reports these with `source: "dynamic"`).
    Dynamic,
}

impl Scope {
    /// The name Claude Code uses (`user`, `project`, `local`, `dynamic`).
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Local => "local",
            Scope::Dynamic => "dynamic",
        }
    }
}

/// How to reach a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking newline-delimited JSON-RPC on stdio.
    Stdio {
        /// Program.
        command: String,
        /// Arguments.
        args: Vec<String>,
        /// Extra environment.
        env: BTreeMap<String, String>,
    },
    /// Streamable HTTP (`type: "http"`, alias `streamable-http`).
    Http {
        /// Endpoint.
        url: String,
        /// Headers sent with every request.
        headers: BTreeMap<String, String>,
    },
    /// Legacy HTTP+SSE (`type: "sse"`): tried as streamable HTTP.
    Sse {
        /// Endpoint.
        url: String,
        /// Headers sent with every request.
        headers: BTreeMap<String, String>,
    },
    /// An in-process server of an Agent SDK host (`type: "sdk"`), reached over the control
    /// protocol.
    Sdk,
}

/// One configured server, variables expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// Name (the `<server>` of `mcp__<server>__<tool>`).
    pub name: String,
    /// Where the entry came from.
    pub scope: Scope,
    /// How to reach it.
    pub transport: Transport,
    /// Per-server startup timeout (`timeout`, in ms, in the entry).
    pub timeout: Option<Duration>,
}

/// An entry that cannot be used: reported as a failed server, never fatal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigProblem {
    /// Server name.
    pub name: String,
    /// Where the entry came from.
    pub scope: Scope,
    /// What is wrong, for the user.
    pub message: String,
}
