//! Building an `Agent` from the command line and the environment: provider, tools, permissions,
//! system prompt and memory.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};
use skiff_core::memory::{MemoryOptions, load_memory, memory_reminder};
use skiff_core::permissions::{DenyRules, Rule};
use skiff_core::prompt::{EnvironmentInfo, SystemPromptOptions, build_system_prompt};
use skiff_core::{Agent, AgentConfig};
use skiff_llm::{AnthropicConfig, AnthropicProvider, Provider, ScriptedProvider};
use skiff_tools::{ToolConfig, ToolContext, ToolRegistry};

use crate::args::{Args, ProviderKind};

/// Default model.
pub const DEFAULT_MODEL: &str = "claude-sonnet-4-5";
/// Default max turns in print mode.
pub const DEFAULT_MAX_TURNS: u32 = 100;

/// Build the agent for these arguments.
pub fn build_agent(args: &Args) -> anyhow::Result<Agent> {
    let cwd = match &args.cwd {
        Some(d) => d.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let cwd = std::fs::canonicalize(&cwd)
        .with_context(|| format!("the workspace directory {} does not exist", cwd.display()))?;
    let model = skiff_llm::resolve_alias(args.model.as_deref().unwrap_or(DEFAULT_MODEL));

    let (provider, key_source): (Arc<dyn Provider>, String) = match args.provider {
        ProviderKind::Script => {
            let Some(path) = &args.script else {
                bail!("--provider script needs --script FILE");
            };
            (
                Arc::new(ScriptedProvider::from_file(path)?),
                "none".to_owned(),
            )
        }
        ProviderKind::Anthropic => {
            let cfg = AnthropicConfig::from_env()?;
            let source = cfg.credential.source_name().to_owned();
            (Arc::new(AnthropicProvider::new(cfg)?), source)
        }
    };

    let mut tools = ToolRegistry::with_builtins();
    if let Some(list) = &args.tools {
        let names: Vec<&str> = list.iter().map(String::as_str).collect();
        match names.as_slice() {
            ["default"] => {}
            _ => tools.retain(&names),
        }
    }
    let mut deny = Vec::new();
    for text in &args.disallowed_tools {
        let rule = Rule::parse(text);
        match rule.bare_tool() {
            Some(name) => {
                tools.disable(name);
            }
            None => deny.push(rule),
        }
    }

    let session = crate::sessions::plan_session(args, &cwd)?;
    let mut add_dirs: Vec<PathBuf> = args.add_dir.iter().map(|d| absolute(&cwd, d)).collect();
    // The model may Read/Grep the oversized tool results saved there.
    add_dirs.extend(session.tool_results_dir.clone());
    let ctx = ToolContext::with_dirs(&cwd, &add_dirs, ToolConfig::default())
        .context("cannot open an --add-dir directory")?;

    let replace = match (&args.system_prompt, &args.system_prompt_file) {
        (Some(p), _) => Some(p.clone()),
        (None, Some(f)) => Some(read_text(f, "--system-prompt-file")?),
        (None, None) => None,
    };
    let append = match (&args.append_system_prompt, &args.append_system_prompt_file) {
        (Some(a), Some(f)) => Some(format!(
            "{a}\n\n{}",
            read_text(f, "--append-system-prompt-file")?
        )),
        (Some(a), None) => Some(a.clone()),
        (None, Some(f)) => Some(read_text(f, "--append-system-prompt-file")?),
        (None, None) => None,
    };
    let env = EnvironmentInfo::detect(&cwd, &model);
    let system_prompt = build_system_prompt(&SystemPromptOptions { replace, append }, &env);
    let memory = memory_reminder(&load_memory(&cwd, &MemoryOptions::from_env()));

    let caching = !args.no_prompt_caching
        && std::env::var("DISABLE_PROMPT_CACHING").map_or(true, |v| v.is_empty() || v == "0");
    let permission_mode = if args.dangerously_skip_permissions {
        "bypassPermissions".to_owned()
    } else {
        args.permission_mode.clone()
    };
    let config = AgentConfig {
        model,
        max_tokens: args.max_tokens,
        system_prompt,
        memory,
        max_turns: args.max_turns,
        max_budget_usd: args.max_budget_usd,
        prompt_caching: caching,
        session_id: session.session_id.clone(),
        tool_results_dir: session.tool_results_dir.clone(),
        cwd: cwd.clone(),
        permission_mode,
        api_key_source: key_source,
        ..AgentConfig::default()
    };
    let mut agent = Agent::new(config, provider, tools, ctx)
        .with_session(session.store)
        .with_history(session.history);
    if !deny.is_empty() {
        agent = agent.with_permissions(Arc::new(DenyRules::new(deny)));
    }
    Ok(agent)
}

fn absolute(base: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}

fn read_text(path: &Path, flag: &str) -> anyhow::Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("{flag}: cannot read {}", path.display()))
}
