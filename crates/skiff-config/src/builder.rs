//! [`SessionBuilder`]: plain [`Overrides`] and an [`Environment`] in, a ready [`Agent`] out —
//! the workspace, its settings (trust applied), the sandbox, the tools, the provider, the
//! permission rules, the session's transcript, the MCP servers, the system prompt and memory,
//! in that order, each step a function of its own. Warnings come back for the front end to
//! show; nothing is printed.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use skiff_core::memory::{MemoryOptions, load_memory_checked, memory_reminder};
use skiff_core::permissions::{PermissionChecker, PermissionEngine, RuleSet, Workspace};
use skiff_core::prompt::{EnvironmentInfo, SystemPromptOptions, build_system_prompt};
use skiff_core::{Agent, AgentConfig, DeltaMode, PermissionMode};
use skiff_tools::{ToolConfig, ToolContext, ToolRegistry};

use crate::environment::Environment;
use crate::error::{ConfigError, Result};
use crate::mcp::session::McpHandle;
use crate::overrides::Overrides;
use crate::provider::{Backend, Built};
use crate::sandbox_setup::SessionSandbox;
use crate::sessions::SessionPlan;
use crate::settings::{Settings, Source};

pub use crate::sandbox_setup::SandboxText;

/// Default model.
pub const DEFAULT_MODEL: &str = "claude-sonnet-4-5";
/// Default max turns in print mode.
pub const DEFAULT_MAX_TURNS: u32 = 100;

/// A configured session, ready to run.
pub struct Assembled {
    /// The agent.
    pub agent: Agent,
    /// The permission engine it uses.
    pub engine: Arc<PermissionEngine>,
    /// The workspace, canonical.
    pub cwd: PathBuf,
    /// The model runs on this machine (no cost to show).
    pub local: bool,
    /// What `/sandbox` shows: the Bash sandbox in force.
    pub sandbox: SandboxText,
    /// The MCP servers (`/mcp`).
    pub mcp: McpHandle,
    /// The plugins loaded (`/plugin`).
    pub plugins: crate::plugins::SessionPlugins,
    /// What the user should be told (settings ignored in an untrusted workspace, unsupported
    /// sandbox layers, rules and hooks that do not parse, a resumed transcript's repairs, …).
    pub warnings: Vec<String>,
}

/// Builds a session from [`Overrides`] and an [`Environment`].
pub struct SessionBuilder {
    overrides: Overrides,
    env: Environment,
    deltas: DeltaMode,
    sdk: Option<Arc<dyn skiff_mcp::SdkChannel>>,
    files: Option<Arc<dyn skiff_tools::FileAccess>>,
    helper: Option<PathBuf>,
    builtins: Vec<String>,
    checkpoints: bool,
    late_warnings: Option<crate::sandbox_setup::LateWarnings>,
}

impl SessionBuilder {
    /// A builder for these overrides in this environment.
    pub fn new(overrides: Overrides, env: Environment) -> Self {
        Self {
            overrides,
            env,
            deltas: DeltaMode::default(),
            sdk: None,
            files: None,
            helper: None,
            builtins: Vec::new(),
            checkpoints: false,
            late_warnings: None,
        }
    }

    /// Do not wait for the sandbox's namespace probe while building: the session's first
    /// request goes out while it runs, and the `system/init` frame waits for its answer
    /// instead. A warning the answer brings goes to `warn` then (not to the build's warnings).
    /// A front end that shows the build's warnings before the user's first prompt (the
    /// terminal UI) has no need for this.
    pub fn late_warnings(mut self, warn: crate::sandbox_setup::LateWarnings) -> Self {
        self.late_warnings = Some(warn);
        self
    }

    /// Keep a journal of what Write and Edit change, so that the files can be rewound to a
    /// checkpoint (the terminal UI's rewind; the Agent SDKs turn it on with
    /// `CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING`).
    pub fn file_checkpoints(mut self, on: bool) -> Self {
        self.checkpoints = on;
        self
    }

    /// The front end's own slash command names (`/help`, `/clear`, …): custom commands and
    /// skills cannot take them.
    pub fn reserved_commands(mut self, names: Vec<String>) -> Self {
        self.builtins = names;
        self
    }

    /// How the front end wants the answer's stream events.
    pub fn deltas(mut self, deltas: DeltaMode) -> Self {
        self.deltas = deltas;
        self
    }

    /// A way to reach an Agent SDK host's in-process MCP servers.
    pub fn sdk_channel(mut self, sdk: Option<Arc<dyn skiff_mcp::SdkChannel>>) -> Self {
        self.sdk = sdk;
        self
    }

    /// Read, Write and Edit go through `files` (an editor's buffers) instead of the disk.
    pub fn file_access(mut self, files: Option<Arc<dyn skiff_tools::FileAccess>>) -> Self {
        self.files = files;
        self
    }

    /// The Bash sandbox's helper program (a program that understands `__sandbox`: skiff,
    /// or `skiff-sandbox`); by default [`crate::sandbox_setup::default_helper`].
    pub fn sandbox_helper(mut self, helper: PathBuf) -> Self {
        self.helper = Some(helper);
        self
    }

    /// The overrides, the environment and the sandbox helper (for the tool server).
    pub(crate) fn into_parts(self) -> (Overrides, Environment, Option<PathBuf>) {
        (self.overrides, self.env, self.helper)
    }

    /// Build the session; its warnings are in [`Assembled::warnings`].
    pub fn build(self) -> Result<Assembled> {
        let mut warnings = Vec::new();
        let mut assembled = self.build_reporting(&mut warnings)?;
        assembled.warnings = warnings;
        Ok(assembled)
    }

    /// Build the session, pushing warnings to `warnings` as they come — also those met before
    /// an error, which a front end shows with it ([`Assembled::warnings`] stays empty).
    pub fn build_reporting(self, warnings: &mut Vec<String>) -> Result<Assembled> {
        let o = &self.overrides;
        let cwd = workspace(o)?;
        let settings = Settings::load(o, &self.env, &cwd)?;
        warnings.extend(settings.trust_warnings.iter().cloned());
        let add_dirs = extra_dirs(&settings, warnings);
        let mut roots = vec![cwd.clone()];
        roots.extend(add_dirs.iter().cloned());
        let sandbox =
            SessionSandbox::new(&settings, &cwd, roots, self.helper.as_deref(), warnings)?;
        let mut tools = ToolRegistry::with_builtins();
        let plugins =
            crate::plugins::session_plugins(&settings, &o.plugin_dirs, &self.env, &cwd, warnings)?;
        let commands = crate::commands::load(
            o,
            &settings,
            &cwd,
            &self.builtins,
            plugins.commands(),
            warnings,
        );
        if let Some(skill) = skiff_core::commands::SkillTool::for_commands(Arc::clone(&commands)) {
            let _ = tools.register(skill);
        }
        let mut offer_task = choose_tools(o, &mut tools)?;
        if settings.compact_prompt.value && o.tools.is_none() {
            // Small models: the six core tools only (an explicit `--tools` list still wins).
            tools.retain(&skiff_core::request::COMPACT_TOOLS);
            offer_task = false;
        }
        let backend = Backend::of(&settings);
        let built = crate::provider::build(&backend, &settings, o, &cwd)?;
        let mut rules = crate::rules::rule_set(&settings, &cwd, warnings);
        sandbox.add_rules(&mut rules, &cwd);
        let mut search_removed = false;
        for name in rules.removed_tools() {
            if name == "Task" || name == "Agent" {
                offer_task = false;
            }
            search_removed |= name == skiff_core::tool_search::TOOL_SEARCH;
            tools.disable(&name);
        }
        let agents = if offer_task {
            crate::agents::load(
                o.agents.as_deref(),
                &cwd,
                settings.trusted,
                &self.env,
                plugins.agents(),
                warnings,
            )?
        } else {
            Vec::new()
        };
        let model = skiff_llm::resolve_alias(&settings.model.value);
        let record = crate::sessions::run_record(
            o,
            &model,
            backend.name(),
            &settings.permissions.mode.value,
            settings.trusted,
            &cwd,
        );
        let session = crate::sessions::plan_session(o, &self.env, &cwd, Some(record), warnings)?;
        let (mut ctx, engine, workspace_dirs) = tool_context(
            &cwd,
            add_dirs,
            session.tool_results_dir.clone(),
            &settings,
            rules,
            &sandbox,
            self.files,
            &self.env,
        )?;
        // Started through a symlink to the workspace: its paths are the workspace's too.
        ctx.guard = Arc::new(
            (*ctx.guard)
                .clone()
                .with_aliases(&workspace_spellings(o, &self.env)),
        );
        if self.checkpoints {
            ctx.changes.enable_checkpoints();
        }
        let mut servers = crate::mcp::config::session_servers(o, &settings, &self.env, &cwd)?;
        if !o.strict_mcp_config {
            plugins.add_servers(&mut servers, &settings, &self.env);
        }
        warnings.extend(servers.warnings.iter().cloned());
        let extra_env = crate::rules::settings_env(&settings);
        let (late_tools, mcp) = {
            let engine = Arc::clone(&engine);
            crate::mcp::session::start(
                servers.servers,
                servers.problems,
                &cwd,
                move |tool| engine.removes_tool(tool),
                self.sdk,
                extra_env.clone(),
                commands.mcp(),
            )
        };
        let mut config = agent_config(
            o, &self.env, &settings, &backend, &built, &session, &cwd, warnings,
        )?;
        config.deltas = self.deltas;
        config.defer_tools = crate::deferral::defer_policy(o, search_removed, &self.env);
        config.commands = commands;
        config.agents = agents;
        // As probed (the status alone does not know yet whether namespaces are available), or
        // once probed when the probe is still running and the front end does not wait for it.
        let late = self
            .late_warnings
            .clone()
            .and_then(|warn| sandbox.late_status(warn));
        let probed = match &late {
            Some(_) => sandbox.status.clone(),
            None => sandbox.probed_status(warnings),
        };
        config.init_extra.insert("sandbox".into(), probed.to_json());
        config.late_init = late;
        plugins.describe_in(&mut config.init_extra);
        tracing::info!(
            model = %config.model,
            provider = %backend.name(),
            key_source = %config.api_key_source,
            cwd = %cwd.display(),
            sandbox = %match &config.late_init {
                Some(_) => "being probed".to_owned(),
                None => probed.summary(),
            },
            dirs = workspace_dirs.len(),
            "agent configured"
        );
        let checker = permission_checker(&settings, &sandbox, &engine, &cwd);
        let sandbox_text = sandbox.text(&settings, &cwd);
        let store =
            crate::settings_writer::SettingsStore::new(Arc::clone(&engine), &cwd, self.env.home());
        let mut agent = Agent::new(config, built.provider, tools, ctx)
            .with_session(session.store)
            .with_history(session.history)
            .with_permissions(checker)
            .with_permission_store(Arc::new(store));
        if let Some(hooks) =
            crate::rules::command_hooks(&settings, &cwd, extra_env, &plugins, warnings)
        {
            agent = agent.with_hooks(hooks);
        }
        if let Some(late) = late_tools {
            agent = agent.with_late_tools(late);
        }
        Ok(Assembled {
            agent,
            engine,
            cwd,
            local: backend.is_local(),
            sandbox: sandbox_text,
            mcp,
            plugins,
            warnings: Vec::new(),
        })
    }
}

/// How the user spelled the workspace, when it may differ from its canonical path: `--cwd` as
/// given, else the shell's `PWD` (the directory skiff was started from, symlinks kept).
fn workspace_spellings(o: &Overrides, env: &Environment) -> Vec<PathBuf> {
    let here = std::env::current_dir().ok();
    match &o.cwd {
        Some(d) if d.is_absolute() => vec![d.clone()],
        Some(d) => here.map(|h| h.join(d)).into_iter().collect(),
        None => env.get("PWD").map(PathBuf::from).into_iter().collect(),
    }
}

/// The workspace, canonical and a directory; every `--add-dir` must exist.
pub(crate) fn workspace(o: &Overrides) -> Result<PathBuf> {
    let cwd = match &o.cwd {
        Some(d) => d.clone(),
        None => std::env::current_dir()
            .map_err(|e| ConfigError::io("cannot read the current directory", e))?,
    };
    let cwd = match std::fs::canonicalize(&cwd) {
        Ok(c) if c.is_dir() => c,
        Ok(_) => {
            return Err(ConfigError::usage(format!(
                "--cwd {}: not a directory",
                cwd.display()
            )));
        }
        Err(e) => {
            return Err(ConfigError::usage(format!(
                "the workspace directory {} does not exist ({e})",
                cwd.display()
            )));
        }
    };
    for dir in &o.add_dirs {
        if !cwd.join(dir).is_dir() {
            return Err(ConfigError::usage(format!(
                "--add-dir {}: not an existing directory",
                dir.display()
            )));
        }
    }
    Ok(cwd)
}

/// `--tools`: keep only the named built-in tools. Whether Task is offered (it is added when the
/// session starts, for it needs the session's parts).
fn choose_tools(o: &Overrides, tools: &mut ToolRegistry) -> Result<bool> {
    let Some(list) = &o.tools else {
        return Ok(true);
    };
    let names: Vec<&str> = list
        .iter()
        .map(|n| n.trim())
        .filter(|n| !n.is_empty())
        .collect();
    if names == ["default"] {
        return Ok(true);
    }
    let offer_task = names.iter().any(|n| *n == "Task" || *n == "Agent");
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
                return Err(ConfigError::usage(format!(
                    "--tools: unknown tool {name:?}; the built-in tools are {} (or \"default\", or \"\" for none)",
                    all.join(", ")
                )));
            }
        }
    }
    let keep: Vec<&str> = keep.iter().map(String::as_str).collect();
    tools.retain(&keep);
    Ok(offer_task)
}

/// The tools' context (workspace, extra directories, sandbox, WebFetch's hosts, an editor's
/// buffers, checkpoints) and the permission engine over the same directories.
#[allow(clippy::too_many_arguments)]
pub(crate) fn tool_context(
    cwd: &Path,
    mut add_dirs: Vec<PathBuf>,
    tool_results_dir: Option<PathBuf>,
    settings: &Settings,
    rules: RuleSet,
    sandbox: &SessionSandbox,
    files: Option<Arc<dyn skiff_tools::FileAccess>>,
    env: &Environment,
) -> Result<(ToolContext, Arc<PermissionEngine>, Vec<PathBuf>)> {
    let tool_config = ToolConfig {
        sandbox: sandbox.config.clone(),
        web_fetch: crate::rules::web_fetch_config(settings, &rules),
        env: crate::rules::settings_env(settings),
        ..ToolConfig::default()
    };
    let mut ctx = ToolContext::with_dirs(cwd, &add_dirs, tool_config)
        .map_err(|e| ConfigError::io("cannot open an --add-dir directory", e))?;
    // The model may Read/Grep the oversized tool results saved there (created at the first).
    if let Some(dir) = tool_results_dir {
        let mut guard = (*ctx.guard).clone();
        add_dirs.extend(guard.allow_dir_created_later(&dir));
        ctx.guard = Arc::new(guard);
    }
    let engine = Arc::new(PermissionEngine::new(rules, Workspace::new(cwd, &add_dirs)));
    // Grep, Glob and LS walks leave out what Read deny rules cover.
    let hidden = {
        let engine = Arc::clone(&engine);
        skiff_tools::HiddenPaths::new(move |p| engine.read_denied(p))
    };
    ctx.guard = Arc::new((*ctx.guard).clone().with_hidden(hidden));
    ctx.file_access = files;
    // The Agent SDKs' `enable_file_checkpointing`: keep what Write/Edit changed, so that
    // `rewind_files` can put it back.
    if env
        .get("CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING")
        .is_some_and(|v| matches!(v.trim(), "1" | "true" | "yes"))
    {
        ctx.changes.enable_checkpoints();
    }
    Ok((ctx, engine, add_dirs))
}

/// The agent's configuration: system prompt, memory, limits, model (a cloud's ids), mode.
#[allow(clippy::too_many_arguments)]
fn agent_config(
    o: &Overrides,
    env: &Environment,
    settings: &Settings,
    backend: &Backend,
    built: &Built,
    session: &SessionPlan,
    cwd: &Path,
    warnings: &mut Vec<String>,
) -> Result<AgentConfig> {
    let model = skiff_llm::resolve_alias(&settings.model.value);
    // The model in use, as `system/init` and the prompt's environment name it (a preset's or
    // a cloud's id, not the default).
    let env_model = crate::provider::default_model(backend, settings)?.unwrap_or(model);
    let env_model = built
        .cloud
        .as_ref()
        .map_or_else(|| env_model.clone(), |c| c.map_model(&env_model));
    let compact = settings.compact_prompt.value;
    let env_info = if compact {
        EnvironmentInfo::detect(cwd, &env_model).with_listing()
    } else {
        EnvironmentInfo::detect(cwd, &env_model)
    };
    let system_prompt = build_system_prompt(
        &SystemPromptOptions {
            replace: system_prompt_text(o)?,
            append: appended_prompt_text(o)?,
            compact,
        },
        &env_info,
    );
    let (memory, memory_files) = memory(settings, cwd, warnings);
    let mut config = AgentConfig {
        system_prompt,
        memory,
        memory_files,
        max_turns: settings.max_turns.as_ref().map(|t| t.value),
        max_budget_usd: o.max_budget_usd,
        session_id: session.session_id.clone(),
        tool_results_dir: session.tool_results_dir.clone(),
        cwd: cwd.to_path_buf(),
        api_key_source: built.key_source.clone(),
        compact_tools: compact,
        test_command: env_info.test_command,
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
    if let Some(model) = crate::provider::default_model(backend, settings)? {
        config.model = model;
    }
    config.reasoning = crate::reasoning::reasoning(o, settings)?;
    config.fallback_model = crate::reasoning::fallback_model(o, &config.model)?;
    if let Some(text) = o.json_schema.as_deref().filter(|t| !t.trim().is_empty()) {
        config.json_schema = Some(
            skiff_core::structured::OutputSchema::parse(text)
                .map_err(|e| ConfigError::usage(format!("--json-schema: {e}")))?,
        );
    }
    if let Some(schema) = config.json_schema.take() {
        config.json_schema = Some(match structured_retries(settings) {
            Some(n) => schema.with_max_attempts(n),
            None => schema,
        });
    }
    if let Some(cloud) = &built.cloud {
        // The cloud's ids (`us.anthropic.claude-…`, `claude-…@date`, deployment names), so
        // that `system/init`, costs and the small model's calls name what is invoked.
        config.model = cloud.map_model(&config.model);
        config.fallback_model = config.fallback_model.map(|f| cloud.map_model(&f));
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
            crate::provider::cloud_json(&cloud.summary()),
        );
    }
    config.permission_mode = settings
        .permissions
        .mode
        .value
        .parse::<PermissionMode>()
        .map_err(|e| {
            ConfigError::invalid(format!("{e} (from {})", settings.permissions.mode.source))
        })?;
    crate::rules::refuse_bypass_as_root(config.permission_mode, env)?;
    apply_context_settings(settings, &mut config);
    Ok(config)
}

/// MAX_STRUCTURED_OUTPUT_RETRIES: the failed StructuredOutput attempts allowed.
pub fn structured_retries(settings: &Settings) -> Option<u32> {
    settings
        .lookup
        .get("MAX_STRUCTURED_OUTPUT_RETRIES")
        .and_then(|v| v.trim().parse::<u32>().ok())
        .filter(|n| *n > 0)
}

/// `--system-prompt` or `--system-prompt-file`.
fn system_prompt_text(o: &Overrides) -> Result<Option<String>> {
    Ok(match (&o.system_prompt, &o.system_prompt_file) {
        (Some(p), _) => Some(p.clone()),
        (None, Some(f)) => Some(read_text(f, "--system-prompt-file")?),
        (None, None) => None,
    })
}

/// `--append-system-prompt` and `--append-system-prompt-file`.
fn appended_prompt_text(o: &Overrides) -> Result<Option<String>> {
    Ok(
        match (&o.append_system_prompt, &o.append_system_prompt_file) {
            (Some(a), Some(f)) => Some(format!(
                "{a}\n\n{}",
                read_text(f, "--append-system-prompt-file")?
            )),
            (Some(a), None) => Some(a.clone()),
            (None, Some(f)) => Some(read_text(f, "--append-system-prompt-file")?),
            (None, None) => None,
        },
    )
}

/// CLAUDE.md and its relatives as the memory reminder, and what each file weighs; an untrusted
/// workspace's imports stay inside it (and the user's own directories).
fn memory(
    settings: &Settings,
    cwd: &Path,
    warnings: &mut Vec<String>,
) -> (Option<String>, Vec<skiff_core::context_usage::MemoryUsage>) {
    let mut memory_options = MemoryOptions::from_env();
    if !settings.trusted {
        let mut roots = vec![cwd.to_path_buf()];
        roots.extend(memory_options.user_dir.clone());
        roots.extend(memory_options.skiff_home.clone());
        memory_options.import_roots = Some(roots);
    }
    let (memory_files, skipped) = load_memory_checked(cwd, &memory_options);
    warnings.extend(skipped);
    let usage = memory_files
        .iter()
        .map(|f| skiff_core::context_usage::MemoryUsage {
            path: f.path.display().to_string(),
            kind: format!("{:?}", f.label),
            tokens: skiff_core::tokens::estimate_bytes(f.content.len()),
        })
        .collect();
    (memory_reminder(&memory_files), usage)
}

/// As Claude Code's sandbox mode: commands run without approval while the sandbox contains
/// them — known once the namespace probe answers (it runs in the background; the first Bash
/// call waits for it). Deny and ask rules (and plan mode) still apply.
pub(crate) fn permission_checker(
    settings: &Settings,
    sandbox: &SessionSandbox,
    engine: &Arc<PermissionEngine>,
    cwd: &Path,
) -> Arc<dyn PermissionChecker> {
    match &sandbox.runtime {
        Some((_, runtime))
            if sandbox.status.enforced() && settings.sandbox.auto_allow_bash.value =>
        {
            Arc::new(crate::sandbox_gate::SandboxGate::new(
                Arc::clone(engine),
                Arc::clone(runtime.probe()),
                cwd.to_path_buf(),
            ))
        }
        _ => Arc::clone(engine) as Arc<dyn PermissionChecker>,
    }
}

/// Extra directories: `--add-dir` ones must exist (checked with the workspace); settings ones
/// that don't exist are skipped with a warning so one stale entry does not block every run.
pub(crate) fn extra_dirs(settings: &Settings, warnings: &mut Vec<String>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in &settings.permissions.additional_directories {
        if matches!(dir.source, Source::Flag(_)) || dir.value.is_dir() {
            out.push(dir.value.clone());
        } else {
            warnings.push(format!(
                "Warning: ignoring additionalDirectories entry {} ({}): not a directory",
                dir.value.display(),
                dir.source
            ));
        }
    }
    out
}

fn read_text(path: &Path, flag: &str) -> Result<String> {
    std::fs::read_to_string(path)
        .map_err(|e| ConfigError::io(format!("{flag}: cannot read {}", path.display()), e))
}

/// Map the `skiff.compaction` and `skiff.maxConversationMessages` settings onto the agent.
fn apply_context_settings(settings: &Settings, config: &mut AgentConfig) {
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
