//! Building an `Agent` from the command line and the environment: provider, tools, permissions,
//! system prompt and memory.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};
use skiff_core::memory::{MemoryOptions, load_memory_checked, memory_reminder};
use skiff_core::permissions::{
    PermissionEngine, Rule, RuleKind, RuleOrigin, RuleSet, Workspace, rule::home_dir,
};
use skiff_core::prompt::{EnvironmentInfo, SystemPromptOptions, build_system_prompt};
use skiff_core::{Agent, AgentConfig, DeltaMode, PermissionMode};
use skiff_tools::{SandboxStatus, ToolConfig, ToolContext, ToolRegistry};

use crate::args::Args;
use crate::settings::{Layer, Settings, Source};

/// Default model.
pub const DEFAULT_MODEL: &str = "claude-sonnet-4-5";
/// Default max turns in print mode.
pub const DEFAULT_MAX_TURNS: u32 = 100;

/// Build the agent for these arguments; `deltas` says how the front end wants the answer's
/// stream events.
pub fn build_agent(args: &Args, deltas: DeltaMode) -> anyhow::Result<Agent> {
    build(args, deltas).map(|b| b.agent)
}

/// What [`build`] makes.
pub struct BuiltAgent {
    /// The agent.
    pub agent: Agent,
    /// The permission engine it uses (front ends that add rules while the session runs keep it).
    pub engine: Arc<PermissionEngine>,
    /// The model runs on this machine (the REPL shows "local" instead of a cost).
    pub local: bool,
    /// What `/sandbox` shows: the Bash sandbox in force.
    pub sandbox: SandboxText,
    /// The MCP servers (`/mcp`).
    pub mcp: crate::mcp_session::McpHandle,
}

/// [`build_agent`], with the permission engine and what the front end shows of the provider.
pub fn build(args: &Args, deltas: DeltaMode) -> anyhow::Result<BuiltAgent> {
    build_with(args, deltas, None)
}

/// [`build`], with a way to reach an Agent SDK host's in-process MCP servers.
pub fn build_with(
    args: &Args,
    deltas: DeltaMode,
    sdk: Option<Arc<dyn skiff_mcp::SdkChannel>>,
) -> anyhow::Result<BuiltAgent> {
    build_with_files(args, deltas, sdk, None)
}

/// [`build_with`], with Read, Write and Edit going through `files` (an editor's buffers over
/// ACP) instead of the disk.
pub fn build_with_files(
    args: &Args,
    deltas: DeltaMode,
    sdk: Option<Arc<dyn skiff_mcp::SdkChannel>>,
    files: Option<Arc<dyn skiff_tools::FileAccess>>,
) -> anyhow::Result<BuiltAgent> {
    let cwd = match &args.cwd {
        Some(d) => d.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let cwd = match std::fs::canonicalize(&cwd) {
        Ok(c) if c.is_dir() => c,
        Ok(_) => {
            return Err(UsageError(format!("--cwd {}: not a directory", cwd.display())).into());
        }
        Err(e) => {
            return Err(UsageError(format!(
                "the workspace directory {} does not exist ({e})",
                cwd.display()
            ))
            .into());
        }
    };
    for dir in &args.add_dir {
        let full = cwd.join(dir);
        if !full.is_dir() {
            return Err(UsageError(format!(
                "--add-dir {}: not an existing directory",
                dir.display()
            ))
            .into());
        }
    }
    let settings = Settings::load(args, &cwd)?;
    for warning in &settings.trust_warnings {
        eprintln!("{warning}");
    }
    let sandbox = sandbox_status(&settings);
    if let Some(warning) = &sandbox.warning {
        eprintln!("{warning}");
    }
    let sandbox_runtime = if sandbox.applies() {
        let helper = sandbox_helper().context(
            "cannot find skiff's own executable to run the Bash sandbox (use --sandbox off)",
        )?;
        let mut roots = vec![cwd.clone()];
        roots.extend(extra_dirs(&settings));
        let runtime = skiff_tools::sandbox::SandboxRuntime::new(
            helper.clone(),
            &sandbox,
            runtime_settings(&settings, &cwd),
            roots,
            None,
        );
        for problem in runtime.problems() {
            eprintln!("Warning: {problem}");
        }
        Some((helper, runtime))
    } else {
        None
    };
    let sandbox_config = sandbox_runtime
        .as_ref()
        .and_then(|(helper, runtime)| sandbox.config(helper.clone(), Some(Arc::clone(runtime))));
    let model = skiff_llm::resolve_alias(&settings.model.value);

    let mut tools = ToolRegistry::with_builtins();
    // Custom slash commands and skills; the model loads skills with the Skill tool.
    let commands = crate::slash::load(args, &settings, &cwd);
    if let Some(skill) = skiff_core::commands::SkillTool::for_commands(Arc::clone(&commands)) {
        let _ = tools.register(skill);
    }
    // Task is added when the session starts (it needs the session's parts); it is offered
    // unless `--tools` leaves it out or a rule removes it.
    let mut offer_task = true;
    if let Some(list) = &args.tools {
        let names: Vec<&str> = list
            .iter()
            .map(|n| n.trim())
            .filter(|n| !n.is_empty())
            .collect();
        if names != ["default"] {
            offer_task = names.iter().any(|n| *n == "Task" || *n == "Agent");
            let mut keep = Vec::new();
            for name in names {
                if name == "Task" || name == "Agent" {
                    continue;
                }
                match tools.closest(name) {
                    Some(canonical) => keep.push(canonical.to_owned()),
                    None => {
                        let mut all = tools.names();
                        all.sort();
                        return Err(UsageError(format!(
                            "--tools: unknown tool {name:?}; the built-in tools are {} (or \"default\", or \"\" for none)",
                            all.join(", ")
                        ))
                        .into());
                    }
                }
            }
            let keep: Vec<&str> = keep.iter().map(String::as_str).collect();
            tools.retain(&keep);
        }
    }
    let backend = crate::provider::Backend::of(&settings);
    let built = crate::provider::build(&backend, &settings, args, &cwd)?;

    let mut rules = rule_set(&settings, &cwd);
    if sandbox_config.is_some() {
        // A call that asks to leave the sandbox always asks.
        match Rule::parse(
            "Bash(dangerouslyDisableSandbox:true)",
            &RuleOrigin::at(&cwd),
        ) {
            Ok(rule) => rules.push(RuleKind::Ask, rule),
            Err(e) => tracing::warn!(error = %e, "cannot add the sandbox's ask rule"),
        }
    }
    for name in rules.removed_tools() {
        if name == "Task" || name == "Agent" {
            offer_task = false;
        }
        tools.disable(&name);
    }
    let agents = if offer_task {
        crate::agents::load(args.agents.as_deref(), &cwd, settings.trusted)?
    } else {
        Vec::new()
    };

    let record = crate::sessions::run_record(
        args,
        &model,
        backend.name(),
        &settings.permissions.mode.value,
        settings.trusted,
        &cwd,
    );
    let session = crate::sessions::plan_session(args, &cwd, Some(record))?;
    let mut add_dirs = extra_dirs(&settings);
    // The model may Read/Grep the oversized tool results saved there.
    add_dirs.extend(session.tool_results_dir.clone());
    let extra_env = settings_env(&settings);
    let tool_config = ToolConfig {
        sandbox: sandbox_config,
        web_fetch: web_fetch_config(&settings, &rules),
        env: extra_env.clone(),
        ..ToolConfig::default()
    };
    let mut ctx = ToolContext::with_dirs(&cwd, &add_dirs, tool_config)
        .context("cannot open an --add-dir directory")?;
    let engine = Arc::new(PermissionEngine::new(
        rules,
        Workspace::new(&cwd, &add_dirs),
    ));
    // Grep, Glob and LS walks leave out what Read deny rules cover.
    let hidden = {
        let engine = Arc::clone(&engine);
        skiff_tools::HiddenPaths::new(move |p| engine.read_denied(p))
    };
    ctx.guard = Arc::new((*ctx.guard).clone().with_hidden(hidden));
    ctx.file_access = files;
    // The Agent SDKs' `enable_file_checkpointing`: keep what Write/Edit changed, so that
    // `rewind_files` can put it back.
    if std::env::var("CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING")
        .is_ok_and(|v| matches!(v.trim(), "1" | "true" | "yes"))
    {
        ctx.changes.enable_checkpoints();
    }
    // MCP servers start connecting now, in the background; the first turn waits for them.
    let servers = crate::mcp_config::session_servers(args, &settings, &cwd)?;
    for warning in &servers.warnings {
        eprintln!("{warning}");
    }
    let (late_tools, mcp) = {
        let engine = Arc::clone(&engine);
        crate::mcp_session::start(
            servers.servers,
            servers.problems,
            &cwd,
            move |tool| engine.removes_tool(tool),
            sdk,
            extra_env.clone(),
            commands.mcp(),
        )
    };

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
    let compact = settings.compact_prompt.value;
    let system_prompt = build_system_prompt(
        &SystemPromptOptions {
            replace,
            append,
            compact,
        },
        &env,
    );
    let mut memory_options = MemoryOptions::from_env();
    if !settings.trusted {
        let mut roots = vec![cwd.clone()];
        roots.extend(memory_options.user_dir.clone());
        roots.extend(memory_options.skiff_home.clone());
        memory_options.import_roots = Some(roots);
    }
    let (memory_files, skipped) = load_memory_checked(&cwd, &memory_options);
    for warning in skipped {
        eprintln!("{warning}");
    }
    let memory = memory_reminder(&memory_files);

    let mut config = AgentConfig {
        system_prompt,
        memory,
        max_turns: settings.max_turns.as_ref().map(|t| t.value),
        max_budget_usd: args.max_budget_usd,
        session_id: session.session_id.clone(),
        tool_results_dir: session.tool_results_dir.clone(),
        cwd: cwd.clone(),
        api_key_source: built.key_source.clone(),
        compact_tools: compact,
        context_window: settings.context_window.as_ref().map(|c| c.value),
        price: settings.pricing.as_ref().map(|p| {
            skiff_llm::custom_price(
                p.value.input_per_mtok,
                p.value.output_per_mtok,
                p.value.cache_read_per_mtok,
            )
        }),
        ..AgentConfig::default()
    };
    settings.apply_to(&mut config);
    config.small_model = settings.small_model.as_ref().map(|m| m.value.clone());
    if let Some(model) = crate::provider::default_model(&backend, &settings)? {
        config.model = model;
    }
    if let Some(cloud) = &built.cloud {
        // The cloud's ids (`us.anthropic.claude-…`, `claude-…@date`, deployment names), so
        // that `system/init`, costs and the small model's calls name what is invoked.
        config.model = cloud.map_model(&config.model);
        let small = config
            .small_model
            .as_deref()
            .map(skiff_llm::resolve_alias)
            .map_or_else(
                || cloud.summary().default_small_model,
                |m| cloud.map_model(&m),
            );
        config.small_model = Some(small);
        config.init_extra.insert(
            "cloud".into(),
            crate::config_cmd::cloud_json(&cloud.summary()),
        );
    }
    config.permission_mode = settings
        .permissions
        .mode
        .value
        .parse::<PermissionMode>()
        .map_err(|e| anyhow::anyhow!("{e} (from {})", settings.permissions.mode.source))?;
    refuse_bypass_as_root(config.permission_mode)?;
    config.deltas = deltas;
    config.commands = commands;
    config.agents = agents;

    apply_context_settings(&settings, &mut config);
    tracing::info!(
        model = %config.model,
        provider = %backend.name(),
        key_source = %config.api_key_source,
        cwd = %cwd.display(),
        sandbox = %sandbox.summary(),
        "agent configured"
    );
    // As Claude Code's sandbox mode: commands run without approval while the sandbox contains
    // them — which is known once the namespace probe answers (it runs in the background; the
    // first Bash call waits for it). Deny and ask rules (and plan mode) still apply.
    let checker: Arc<dyn skiff_core::permissions::PermissionChecker> = match &sandbox_runtime {
        Some((_, runtime)) if sandbox.enforced() && settings.sandbox.auto_allow_bash.value => {
            Arc::new(crate::sandbox_gate::SandboxGate::new(
                Arc::clone(&engine),
                Arc::clone(runtime.probe()),
                cwd.clone(),
            ))
        }
        _ => Arc::clone(&engine) as Arc<dyn skiff_core::permissions::PermissionChecker>,
    };
    // The init frame says which layers are in force: the probe's answer (it started with the
    // set-up above and has usually come by now).
    let shown_status = match &sandbox_runtime {
        Some((_, runtime)) => sandbox
            .clone()
            .with_namespaces(runtime.probe().wait_blocking()),
        None => sandbox.clone(),
    };
    config
        .init_extra
        .insert("sandbox".into(), shown_status.to_json());
    let mut agent = Agent::new(config, built.provider, tools, ctx)
        .with_session(session.store)
        .with_history(session.history)
        .with_permissions(checker);
    if let Some(hooks) = command_hooks(&settings, &cwd, extra_env) {
        agent = agent.with_hooks(hooks);
    }
    if let Some(late) = late_tools {
        agent = agent.with_late_tools(late);
    }
    let sandbox_text = SandboxText {
        status: sandbox,
        probe: sandbox_runtime.map(|(_, r)| Arc::clone(r.probe())),
        auto_allow: settings.sandbox.auto_allow_bash.value,
        cwd: cwd.clone(),
        domains: settings
            .sandbox
            .allowed_domains
            .iter()
            .map(|d| d.value.clone())
            .collect(),
    };
    Ok(BuiltAgent {
        mcp,
        agent,
        engine,
        local: backend.is_local(),
        sandbox: sandbox_text,
    })
}

/// What `/sandbox` shows, once the namespace probe has answered.
#[derive(Debug, Clone)]
pub struct SandboxText {
    status: SandboxStatus,
    probe: Option<Arc<skiff_tools::sandbox::Probe>>,
    auto_allow: bool,
    cwd: PathBuf,
    domains: Vec<String>,
}

impl std::fmt::Display for SandboxText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let status = match &self.probe {
            Some(p) => self.status.clone().with_namespaces(p.wait_blocking()),
            None => self.status.clone(),
        };
        f.write_str(&sandbox_description(
            &status,
            self.auto_allow,
            &self.cwd,
            &self.domains,
        ))
    }
}

/// The runtime's settings: allowed domains (with `WebFetch(domain:…)` allow rules), sockets,
/// and what commands cannot read (`sandbox.filesystem.denyRead` and `Read(…)` deny rules).
fn runtime_settings(settings: &Settings, cwd: &Path) -> skiff_tools::sandbox::SandboxSettings {
    let home = home_dir();
    let mut allowed_domains: Vec<String> = settings
        .sandbox
        .allowed_domains
        .iter()
        .map(|d| d.value.clone())
        .collect();
    for rule in &settings.permissions.allow {
        if let Some(domain) = rule
            .value
            .trim()
            .strip_prefix("WebFetch(domain:")
            .and_then(|r| r.strip_suffix(')'))
        {
            allowed_domains.push(domain.trim().to_owned());
        }
    }
    let expand = |p: &str| -> PathBuf {
        match (p.strip_prefix("~/"), &home) {
            (Some(rest), Some(h)) => h.join(rest),
            _ => cwd.join(p),
        }
    };
    let mut deny_read: Vec<String> = settings
        .sandbox
        .deny_read
        .iter()
        .map(|d| expand(d.value.trim()).to_string_lossy().into_owned())
        .collect();
    for rule in &settings.permissions.deny {
        if let Some(spec) = rule
            .value
            .trim()
            .strip_prefix("Read(")
            .and_then(|r| r.strip_suffix(')'))
        {
            deny_read.push(read_rule_pattern(spec.trim(), cwd, home.as_deref()));
        }
    }
    skiff_tools::sandbox::SandboxSettings {
        allowed_domains,
        allow_unix_sockets: settings
            .sandbox
            .allow_unix_sockets
            .iter()
            .map(|s| expand(s.value.trim()))
            .collect(),
        deny_read,
        home,
        skiff_home: settings.skiff_home.clone(),
    }
}

/// A `Read(…)` rule's path as an absolute pattern, anchored as the rule is (`//abs`, `~/…`,
/// `/…` and `./…` from the workspace, a bare name at any depth below it).
fn read_rule_pattern(spec: &str, cwd: &Path, home: Option<&Path>) -> String {
    let joined = if let Some(rest) = spec.strip_prefix("//") {
        PathBuf::from("/").join(rest)
    } else if let (Some(rest), Some(home)) = (spec.strip_prefix("~/"), home) {
        home.join(rest)
    } else if let Some(rest) = spec.strip_prefix('/').or_else(|| spec.strip_prefix("./")) {
        cwd.join(rest)
    } else if spec.trim_end_matches('/').contains('/') {
        cwd.join(spec)
    } else {
        cwd.join("**").join(spec)
    };
    joined.to_string_lossy().into_owned()
}

/// `/sandbox`: the sandbox in force, the layers this machine gives it, whether Bash still asks,
/// where commands may write, and which hosts they may reach.
fn sandbox_description(
    status: &SandboxStatus,
    auto_allow: bool,
    cwd: &Path,
    domains: &[String],
) -> String {
    let auto = status.contained() && auto_allow;
    let mut text = format!(
        "Bash sandbox: {}
layers: {}
this kernel: {}
Bash commands {}",
        status.summary(),
        status.layers(),
        status.landlock,
        if auto {
            "run without asking (the sandbox contains them; deny and ask rules still apply)"
        } else {
            "ask for approval as usual"
        }
    );
    if status.enforced() {
        text.push_str(&format!(
            "
writable: {} and its extra directories, temp directories (git config and hooks, .claude/, \
             .mcp.json, editor settings and shell start-up files stay read-only)",
            cwd.display()
        ));
    }
    if status.network == skiff_tools::sandbox::NetworkPolicy::Proxy {
        text.push_str(&format!(
            "
allowed domains: {} (others are asked about; add one with \"sandbox\": {{\"network\": \
             {{\"allowedDomains\": [\"example.com\"]}}}} in .claude/settings.local.json)",
            if domains.is_empty() {
                "none".to_owned()
            } else {
                domains.join(", ")
            }
        ));
    }
    text
}

/// The Bash sandbox these settings ask for, as this kernel can enforce it (what `skiff config`
/// shows and what the REPL's `/sandbox` and the init frame can report).
pub fn sandbox_status(settings: &Settings) -> SandboxStatus {
    SandboxStatus::decide(&settings.sandbox.policy())
}

/// [`sandbox_status`] with the namespace probe run (and waited for) here.
pub fn sandbox_status_probed(settings: &Settings) -> SandboxStatus {
    let status = sandbox_status(settings);
    if !status.applies() || status.filesystem == skiff_tools::sandbox::SandboxMode::Off {
        return status;
    }
    let Some(helper) = sandbox_helper() else {
        return status;
    };
    let probe = skiff_tools::sandbox::Probe::start(
        helper,
        status.filesystem,
        status.network,
        vec![settings.cwd.clone()],
    );
    let ns = probe.wait_blocking();
    status.with_namespaces(ns)
}

/// The sandbox helper: the small `skiff-sandbox` beside skiff when it is there (quicker to
/// start, once per Bash call), else skiff itself (`skiff __sandbox …`).
fn sandbox_helper() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    Some(
        exe.parent()
            .map(|dir| dir.join("skiff-sandbox"))
            .filter(|p| p.is_file())
            .unwrap_or(exe),
    )
}

/// The permission rules of every settings layer and the flags, pooled. A rule that does not
/// parse is skipped with a warning naming where it came from.
fn rule_set(settings: &Settings, cwd: &Path) -> RuleSet {
    let home = home_dir();
    let mut rules = RuleSet::default();
    let p = &settings.permissions;
    for (kind, list) in [
        (RuleKind::Deny, &p.deny),
        (RuleKind::Ask, &p.ask),
        (RuleKind::Allow, &p.allow),
    ] {
        for text in list {
            let origin = RuleOrigin {
                root: rule_root(&text.source, cwd),
                cwd: cwd.to_path_buf(),
                home: home.clone(),
            };
            match Rule::parse(&text.value, &origin) {
                Ok(rule) => rules.push(kind, rule),
                Err(e) => eprintln!(
                    "Warning: ignoring the {} rule {:?} ({}): {e}",
                    kind.as_str(),
                    text.value,
                    text.source
                ),
            }
        }
    }
    rules
}

/// Where `/path` rules of a settings file are anchored: the project root for project and local
/// settings (the directory holding `.claude/`), the settings directory for user settings.
fn rule_root(source: &Source, cwd: &Path) -> PathBuf {
    match source {
        Source::File {
            layer: Layer::User,
            path,
        } => path
            .parent()
            .map_or_else(|| cwd.to_path_buf(), Path::to_path_buf),
        Source::File { path, .. } => path
            .parent()
            .and_then(Path::parent)
            .map_or_else(|| cwd.to_path_buf(), Path::to_path_buf),
        _ => cwd.to_path_buf(),
    }
}

/// `bypassPermissions` runs everything without asking: refused for root outside a recognised
/// sandbox (a container, or `IS_SANDBOX=1`), as Claude Code does.
fn refuse_bypass_as_root(mode: PermissionMode) -> anyhow::Result<()> {
    if mode != PermissionMode::BypassPermissions || !nix::unistd::geteuid().is_root() {
        return Ok(());
    }
    let sandbox = std::env::var("IS_SANDBOX").is_ok_and(|v| v == "1")
        || Path::new("/.dockerenv").exists()
        || Path::new("/run/.containerenv").exists();
    if sandbox {
        return Ok(());
    }
    bail!(
        "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons \
         (set IS_SANDBOX=1 inside a sandbox)"
    )
}

pub use crate::provider::UnconfirmedBaseUrl;

/// The settings' command hooks (every trusted layer's, merged; an untrusted workspace's were
/// dropped when the settings loaded). `None` when there are none: no hook work at all.
fn command_hooks(
    settings: &Settings,
    cwd: &Path,
    env: skiff_tools::ExtraEnv,
) -> Option<Arc<skiff_core::hooks::CommandHooks>> {
    let groups = settings
        .hooks
        .iter()
        .flat_map(|(event, groups)| groups.iter().map(move |g| (event.clone(), g.value.clone())));
    let (hooks, errors) = skiff_core::hooks::CommandHooks::new(groups, cwd);
    for e in errors {
        eprintln!("Warning: ignoring a hook: {e}");
    }
    (!hooks.is_empty()).then(|| Arc::new(hooks.with_env(env)))
}

/// The settings' `env` (every trusted layer's; an untrusted workspace's was dropped when the
/// settings loaded) for the commands skiff runs: Bash, hooks, MCP stdio servers. The secrets
/// skiff keeps out of tools are left out.
fn settings_env(settings: &Settings) -> skiff_tools::ExtraEnv {
    skiff_tools::ExtraEnv::new(
        settings
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.value.clone())),
        &ToolConfig::default().bash_env_remove,
    )
}

/// A mistake on the command line: exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// WebFetch's limits and the hosts it may fetch from private addresses: the hosts of the
/// `WebFetch(domain:…)` allow rules (not `domain:*`, which allows every public host) and
/// `skiff.webFetch.allowPrivateHosts`.
fn web_fetch_config(
    settings: &Settings,
    rules: &RuleSet,
) -> skiff_tools::web_fetch::WebFetchConfig {
    let mut hosts: Vec<String> = rules
        .allow
        .iter()
        .filter_map(|r| r.web_fetch_domain())
        .filter(|d| *d != "*")
        .map(str::to_owned)
        .collect();
    hosts.extend(
        settings
            .web_fetch_private_hosts
            .iter()
            .map(|h| h.value.clone()),
    );
    skiff_tools::web_fetch::WebFetchConfig {
        allow_private_hosts: hosts,
        ..Default::default()
    }
}

/// Extra directories: `--add-dir` ones must exist (error later); settings ones that don't
/// exist are skipped with a warning so one stale entry does not block every run.
fn extra_dirs(settings: &Settings) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in &settings.permissions.additional_directories {
        if matches!(dir.source, Source::Flag(_)) || dir.value.is_dir() {
            out.push(dir.value.clone());
        } else {
            tracing::warn!(dir = %dir.value.display(), source = %dir.source, "additional directory does not exist");
            eprintln!(
                "Warning: ignoring additionalDirectories entry {} ({}): not a directory",
                dir.value.display(),
                dir.source
            );
        }
    }
    out
}

fn read_text(path: &Path, flag: &str) -> anyhow::Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("{flag}: cannot read {}", path.display()))
}

/// Map the `skiff.compaction` and `skiff.maxConversationMessages` settings onto the agent.
fn apply_context_settings(settings: &crate::settings::Settings, config: &mut AgentConfig) {
    use crate::settings::{CompactionStrategy as S, CompactionThreshold as T};
    use skiff_core::compaction::{CompactionStrategy, CompactionThreshold};
    if let Some(n) = &settings.max_conversation_messages {
        config.max_messages = Some(n.value);
    }
    let c = &settings.compaction;
    if let Some(s) = &c.strategy {
        config.compaction.strategy = match s.value {
            S::Summarize => CompactionStrategy::Summarize,
            S::Trim => CompactionStrategy::TrimOnly,
            S::Off => CompactionStrategy::Off,
        };
    }
    if let Some(t) = &c.threshold {
        config.compaction.threshold = match t.value {
            T::Percent(p) => CompactionThreshold::Percent(p.clamp(1.0, 100.0).round() as u8),
            T::Tokens(n) => CompactionThreshold::Tokens(n),
        };
    }
    if let Some(k) = &c.keep_recent {
        config.compaction.keep_recent = k.value;
    }
}
