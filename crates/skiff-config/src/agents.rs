//! The subagent types a session offers through the Task tool: the built-in ones, the enabled
//! plugins' (`plugin-name:agent`), the user's
//! (`~/.claude/agents`, `~/.skiff/agents`), the workspace's (`.claude/agents`,
//! `.skiff/agents`, only once the workspace is trusted) and `--agents` JSON; later sources
//! override earlier ones by name.

use std::path::{Path, PathBuf};

use crate::environment::Environment;
use crate::error::{ConfigError, Result};

use skiff_core::subagent::{
    AgentDefinition, builtin_agents, load_agents_dir, merge_agents, parse_agents_json,
};

/// The directories agent files are read from, lowest precedence first.
fn agent_dirs(cwd: &Path, trusted: bool, env: &Environment) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    dirs.extend(env.claude_dir().map(|d| d.join("agents")));
    dirs.extend(env.skiff_home().map(|d| d.join("agents")));
    if trusted {
        dirs.push(cwd.join(".claude").join("agents"));
        dirs.push(cwd.join(".skiff").join("agents"));
    }
    dirs
}

/// Every agent type for this session (the enabled plugins' `plugin_agents`, named
/// `plugin-name:agent`, above the built-in ones); warnings about unusable files go to
/// `warnings`.
pub fn load(
    flag: Option<&str>,
    cwd: &Path,
    trusted: bool,
    env: &Environment,
    plugin_agents: Vec<AgentDefinition>,
    warnings: &mut Vec<String>,
) -> Result<Vec<AgentDefinition>> {
    let mut layers = builtin_agents();
    layers.extend(plugin_agents);
    for dir in agent_dirs(cwd, trusted, env) {
        let (agents, problems) = load_agents_dir(&dir);
        warnings.extend(problems.into_iter().map(|w| format!("Warning: {w}")));
        layers.extend(agents);
    }
    if let Some(text) = flag.map(str::trim).filter(|t| !t.is_empty()) {
        let value: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| ConfigError::Usage(format!("--agents: not valid JSON ({e})")))?;
        let agents =
            parse_agents_json(&value).map_err(|e| ConfigError::Usage(format!("--agents: {e}")))?;
        layers.extend(agents);
    }
    Ok(merge_agents(layers))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// No home: only the built-in agents and the workspace's.
    fn env() -> Environment {
        Environment::default()
    }

    fn load(flag: Option<&str>, cwd: &Path, trusted: bool) -> Result<Vec<AgentDefinition>> {
        super::load(flag, cwd, trusted, &env(), Vec::new(), &mut Vec::new())
    }

    #[test]
    fn untrusted_workspaces_bring_no_agents() {
        let ws = tempfile::tempdir().unwrap();
        let dir = ws.path().join(".claude/agents");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("mine.md"), "---\ndescription: m\n---\nbody").unwrap();
        assert!(
            agent_dirs(ws.path(), false, &env())
                .iter()
                .all(|d| !d.starts_with(ws.path()))
        );
        let trusted = load(None, ws.path(), true).unwrap();
        assert!(trusted.iter().any(|a| a.name == "mine"));
    }

    #[test]
    fn agents_flag_errors_are_usage_errors() {
        let ws = tempfile::tempdir().unwrap();
        let bad = load(Some("{bad"), ws.path(), false).unwrap_err();
        assert!(bad.is_usage(), "{bad}");
        let bad = load(Some(r#"{"x": {"description": "d"}}"#), ws.path(), false).unwrap_err();
        assert!(bad.is_usage(), "{bad}");
        let a = load(
            Some(r#"{"x": {"description": "d", "prompt": "p"}}"#),
            ws.path(),
            false,
        )
        .unwrap();
        assert_eq!(a.last().unwrap().name, "x");
        assert_eq!(a.len(), 4);
    }
}
