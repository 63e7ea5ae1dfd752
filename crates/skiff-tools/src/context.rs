//! `ToolContext`: what a tool call can see: the workspace guard, session file states, the run's
//! change log, limits, and the cancellation token of this call.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::background::BackgroundShells;
use crate::changes::ChangeLog;
use crate::file_state::FileStates;
use crate::path_guard::PathGuard;
use crate::sandbox::SandboxConfig;
use crate::todo::list::TodoList;

/// Limits and knobs of the built-in tools.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolConfig {
    /// Bash timeout when the call gives none (120 s).
    pub bash_default_timeout: Duration,
    /// Largest Bash timeout a call may ask for (600 s).
    pub bash_max_timeout: Duration,
    /// Bash output kept (head and tail), in characters (30,000).
    pub bash_max_output_chars: usize,
    /// Environment variables never passed to commands (API keys and tokens).
    pub bash_env_remove: Vec<String>,
    /// The settings' `env`: set for commands under what skiff sets or removes itself.
    pub env: crate::extra_env::ExtraEnv,
    /// Read: default number of lines (2,000).
    pub read_max_lines: usize,
    /// Read: largest file read whole without offset/limit, in bytes (100 KB).
    pub read_max_bytes: u64,
    /// Glob: maximum results (100).
    pub glob_max_results: usize,
    /// LS: maximum entries (1,000).
    pub ls_max_entries: usize,
    /// The Bash tool's sandbox (see [`crate::sandbox`]); `None` runs commands directly.
    pub sandbox: Option<SandboxConfig>,
    /// WebFetch: limits, and the hosts it may fetch from private addresses.
    pub web_fetch: crate::web_fetch::config::WebFetchConfig,
}

impl Default for ToolConfig {
    fn default() -> Self {
        Self {
            bash_default_timeout: Duration::from_secs(120),
            bash_max_timeout: Duration::from_secs(600),
            bash_max_output_chars: 30_000,
            bash_env_remove: [
                "ANTHROPIC_API_KEY",
                "ANTHROPIC_AUTH_TOKEN",
                "ANTHROPIC_CUSTOM_HEADERS",
                "OPENAI_API_KEY",
                "OPENROUTER_API_KEY",
                "SKIFF_API_KEY",
                "CLAUDE_CODE_OAUTH_TOKEN",
            ]
            .map(String::from)
            .to_vec(),
            env: crate::extra_env::ExtraEnv::default(),
            read_max_lines: 2_000,
            read_max_bytes: 100 * 1024,
            glob_max_results: 100,
            ls_max_entries: 1_000,
            sandbox: None,
            web_fetch: crate::web_fetch::config::WebFetchConfig::default(),
        }
    }
}

/// Everything a tool call may use. Cheap to clone (shared parts are `Arc`s).
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// Path guard of the workspace.
    pub guard: Arc<PathGuard>,
    /// Read-before-write state of this session.
    pub files: Arc<FileStates>,
    /// Changes made in the current run.
    pub changes: Arc<ChangeLog>,
    /// Limits.
    pub config: Arc<ToolConfig>,
    /// Where Read, Write and Edit get and put text instead of the disk (an editor's buffers
    /// over ACP); `None` uses the disk.
    pub file_access: Option<Arc<dyn crate::file_access::FileAccess>>,
    /// The session's small model, for tools that ask a model a question of their own
    /// (WebFetch); `None`: such tools do without.
    pub side_model: Option<Arc<dyn crate::side_model::SideModel>>,
    /// Cancelled when the call must stop (interrupt, timeout of the run).
    pub cancel: CancellationToken,
    /// Background commands of this session (`Bash` with `run_in_background`).
    pub background: Arc<BackgroundShells>,
    /// Id of the `tool_use` block being answered (set per call by the loop).
    pub tool_use_id: Option<Arc<str>>,
    /// The session's todo list (`TodoWrite`).
    pub todos: Arc<TodoList>,
    /// Asks the user when a sandboxed command wants a host that is not allowed (the session's
    /// approval path); `None`: such hosts are refused.
    pub network_approver: Option<Arc<dyn crate::sandbox::NetworkApprover>>,
    /// Where a running command's output goes as it comes (set per call by the loop when the
    /// client shows it live); `None`: only the result.
    pub output: Option<crate::OutputTap>,
}

impl ToolContext {
    /// A context for the workspace at `root` (which must exist) with default limits.
    pub fn new(root: impl AsRef<Path>) -> std::io::Result<Self> {
        Self::with_dirs(root, &[], ToolConfig::default())
    }

    /// A context with extra allowed directories and the given limits.
    pub fn with_dirs(
        root: impl AsRef<Path>,
        extra_dirs: &[PathBuf],
        config: ToolConfig,
    ) -> std::io::Result<Self> {
        Ok(Self {
            guard: Arc::new(PathGuard::new(root, extra_dirs)?),
            files: Arc::default(),
            changes: Arc::default(),
            config: Arc::new(config),
            file_access: None,
            side_model: None,
            cancel: CancellationToken::new(),
            background: Arc::default(),
            tool_use_id: None,
            todos: Arc::default(),
            network_approver: None,
            output: None,
        })
    }

    /// The same context with another cancellation token (one per call).
    pub fn with_cancel(&self, cancel: CancellationToken) -> Self {
        Self {
            cancel,
            ..self.clone()
        }
    }

    /// The workspace root.
    pub fn root(&self) -> &Path {
        self.guard.root()
    }

    /// An optional `path` input of the search tools: the text as given (`.` when absent or
    /// empty) and the guarded path; a rejected path is the tool's error result.
    pub fn resolve_search_path(
        &self,
        path: Option<&str>,
    ) -> Result<(String, PathBuf), crate::output::ToolOutput> {
        let given = path.filter(|p| !p.is_empty()).unwrap_or(".").to_owned();
        match self.guard.resolve(&given) {
            Ok(p) => Ok((given, p)),
            Err(e) => Err(crate::output::ToolOutput::tool_use_error(e.to_string())),
        }
    }
}
