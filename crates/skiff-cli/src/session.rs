//! The command line's way into `skiff-config`: the flags as [`Overrides`], the environment
//! skiff started with (credentials kept aside by `env_guard`), the REPL's command names
//! reserved, and the warnings printed on stderr.

use std::path::PathBuf;
use std::sync::Arc;

use skiff_config::{Assembled, Environment, Overrides, SessionBuilder, SessionOverrides};
use skiff_core::DeltaMode;

use crate::args::{Args, InputFormat};

/// A mistake on the command line that skiff-config does not see (a subcommand's own flags):
/// exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Whether an error is a usage error (exit code 2).
pub fn is_usage(e: &anyhow::Error) -> bool {
    e.downcast_ref::<UsageError>().is_some()
        || e.downcast_ref::<skiff_config::ConfigError>()
            .is_some_and(skiff_config::ConfigError::is_usage)
}

/// The environment skiff started with.
pub fn environment() -> Environment {
    Environment::from_vars(crate::env_guard::process_env())
}

/// `SKIFF_HOME`, or `~/.skiff`.
pub fn skiff_home() -> anyhow::Result<PathBuf> {
    environment().skiff_home().ok_or_else(|| {
        anyhow::anyhow!("neither SKIFF_HOME nor HOME is set: cannot tell where sessions are kept")
    })
}

/// The command line as overrides.
pub fn overrides(args: &Args) -> Overrides {
    Overrides {
        cwd: args.cwd.clone(),
        add_dirs: args.add_dir.clone(),
        settings: args.settings.clone(),
        setting_sources: args.setting_sources.clone(),
        trust: args.trust,
        model: args.model.clone(),
        max_tokens: args.max_tokens,
        max_turns: args.max_turns,
        default_max_turns: args.default_max_turns,
        max_budget_usd: args.max_budget_usd,
        provider: args.provider.clone(),
        base_url: args.base_url.clone(),
        trust_base_url: args.trust_base_url.clone(),
        script: args.script.clone(),
        compact_prompt: args.compact_prompt,
        no_prompt_caching: args.no_prompt_caching,
        permission_mode: args.permission_mode.clone(),
        dangerously_skip_permissions: args.dangerously_skip_permissions,
        permission_prompt_tool: args.permission_prompt_tool.clone(),
        allowed_tools: args.allowed_tools.clone(),
        disallowed_tools: args.disallowed_tools.clone(),
        tools: args.tools.clone(),
        sandbox: args.sandbox.clone(),
        sandbox_network: args.sandbox_network.clone(),
        mcp_config: args.mcp_config.clone(),
        mcp_servers: Vec::new(),
        strict_mcp_config: args.strict_mcp_config,
        agents: args.agents.clone(),
        plugin_dirs: args.plugin_dir.clone(),
        max_thinking_tokens: args.max_thinking_tokens,
        thinking: args.thinking.clone(),
        thinking_display: args.thinking_display.clone(),
        effort: args.effort.clone(),
        betas: args.betas.clone(),
        fallback_model: args.fallback_model.clone(),
        json_schema: args.json_schema.clone(),
        system_prompt: args.system_prompt.clone(),
        system_prompt_file: args.system_prompt_file.clone(),
        append_system_prompt: args.append_system_prompt.clone(),
        append_system_prompt_file: args.append_system_prompt_file.clone(),
        session: SessionOverrides {
            resume: args.resume.clone(),
            continue_latest: args.continue_session,
            fork: args.fork_session,
            session_id: args.session_id.clone(),
            no_persistence: args.no_session_persistence,
            headless: args.print || args.input_format == InputFormat::StreamJson,
        },
    }
}

/// The session builder for these overrides (the command line's, or an editor's session).
pub(crate) fn builder_for(overrides: Overrides) -> SessionBuilder {
    let builder = SessionBuilder::new(overrides, environment()).reserved_commands(
        crate::front::commands::COMMANDS
            .iter()
            .map(|c| c.name.to_owned())
            .collect(),
    );
    match sandbox_helper() {
        Some(helper) => builder.sandbox_helper(helper),
        None => builder,
    }
}

/// The sandbox helper: `skiff-sandbox` beside this executable (quicker to start, once per Bash
/// call), else skiff itself (`skiff __sandbox …`).
fn sandbox_helper() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    Some(
        exe.parent()
            .map(|dir| dir.join(skiff_config::sandbox_setup::HELPER_NAME))
            .filter(|p| p.is_file())
            .unwrap_or(exe),
    )
}

/// Build the session for this command line, printing its warnings on stderr.
pub fn assemble(
    args: &Args,
    deltas: DeltaMode,
    sdk: Option<Arc<dyn skiff_mcp::SdkChannel>>,
    files: Option<Arc<dyn skiff_tools::FileAccess>>,
) -> Result<Assembled, skiff_config::ConfigError> {
    assemble_overrides(overrides(args), deltas, sdk, files)
}

/// Build a session from overrides, printing its warnings on stderr.
pub fn assemble_overrides(
    overrides: Overrides,
    deltas: DeltaMode,
    sdk: Option<Arc<dyn skiff_mcp::SdkChannel>>,
    files: Option<Arc<dyn skiff_tools::FileAccess>>,
) -> Result<Assembled, skiff_config::ConfigError> {
    let mut warnings = Vec::new();
    let assembled = builder_for(overrides)
        .late_warnings(Arc::new(|warning: &str| eprintln!("{warning}")))
        .deltas(deltas)
        .sdk_channel(sdk)
        .file_access(files)
        .build_reporting(&mut warnings);
    for warning in &warnings {
        eprintln!("{warning}");
    }
    assembled
}

/// Build the terminal UI's session for this command line: answer deltas as they stream and
/// file checkpoints (for its rewind). Warnings go to `quiet` when given (the UI shows them in
/// its scrollback), else to stderr.
pub fn assemble_tui(
    args: &Args,
    quiet: Option<&mut Vec<String>>,
) -> Result<Assembled, skiff_config::ConfigError> {
    let mut warnings = Vec::new();
    let assembled = builder_for(overrides(args))
        .deltas(DeltaMode::Raw)
        .file_checkpoints(true)
        .build_reporting(&mut warnings);
    match quiet {
        Some(out) => out.extend(warnings),
        None => {
            for warning in &warnings {
                eprintln!("{warning}");
            }
        }
    }
    assembled
}

/// The settings for this command line in `cwd` (the canonical workspace).
pub fn settings(
    args: &Args,
    cwd: &std::path::Path,
) -> Result<skiff_config::Settings, skiff_config::ConfigError> {
    skiff_config::Settings::load(&overrides(args), &environment(), cwd)
}
