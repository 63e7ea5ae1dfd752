//! Permission rules from the settings: the rule set of every layer and the flags, the hooks,
//! WebFetch's private hosts, and what saving an "always" answer writes.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use skiff_core::PermissionMode;
use skiff_core::permissions::{Rule, RuleKind, RuleOrigin, RuleSet};

use crate::environment::Environment;
use crate::error::{ConfigError, Result};
use crate::settings::{Layer, Settings, Source};

/// Whether this process runs as root.
fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// The permission rules of every settings layer and the flags, pooled. A rule that does not
/// parse is skipped with a warning naming where it came from.
pub fn rule_set(settings: &Settings, cwd: &Path, warnings: &mut Vec<String>) -> RuleSet {
    let home = settings.home.clone();
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
                Err(e) => warnings.push(format!(
                    "Warning: ignoring the {} rule {:?} ({}): {e}",
                    kind.as_str(),
                    text.value,
                    text.source
                )),
            }
        }
    }
    rules
}

/// Where `/path` rules of a settings file are anchored: the project root for project and local
/// settings (the directory holding `.claude/`), the settings directory for user settings.
pub fn rule_root(source: &Source, cwd: &Path) -> PathBuf {
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
pub fn refuse_bypass_as_root(mode: PermissionMode, env: &Environment) -> Result<()> {
    if mode != PermissionMode::BypassPermissions || !is_root() {
        return Ok(());
    }
    let sandbox = env.get("IS_SANDBOX") == Some("1")
        || Path::new("/.dockerenv").exists()
        || Path::new("/run/.containerenv").exists();
    if sandbox {
        return Ok(());
    }
    Err(ConfigError::usage(
        "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons \
         (set IS_SANDBOX=1 inside a sandbox)",
    ))
}

/// The settings' command hooks (every trusted layer's, merged; an untrusted workspace's were
/// dropped when the settings loaded) and the plugins' (each run with its plugin's
/// `CLAUDE_PLUGIN_ROOT`). `None` when there are none: no hook work at all.
pub fn command_hooks(
    settings: &Settings,
    cwd: &Path,
    env: skiff_tools::ExtraEnv,
    plugins: &crate::plugins::SessionPlugins,
    warnings: &mut Vec<String>,
) -> Option<Arc<skiff_core::hooks::CommandHooks>> {
    let groups = settings
        .hooks
        .iter()
        .flat_map(|(event, groups)| groups.iter().map(move |g| (event.clone(), g.value.clone())));
    let (mut hooks, errors) = skiff_core::hooks::CommandHooks::new(groups, cwd);
    warnings.extend(
        errors
            .into_iter()
            .map(|e| format!("Warning: ignoring a hook: {e}")),
    );
    for loaded in &plugins.plugins {
        let errors = hooks.add_groups(loaded.plugin.hooks.iter().cloned(), &loaded.env());
        warnings.extend(errors.into_iter().map(|e| {
            format!(
                "Warning: ignoring a hook of plugin {}: {e}",
                loaded.plugin.id
            )
        }));
    }
    (!hooks.is_empty()).then(|| Arc::new(hooks.with_env(env)))
}

/// The settings' `env` (every trusted layer's; an untrusted workspace's was dropped when the
/// settings loaded) for the commands skiff runs: Bash, hooks, MCP stdio servers. The secrets
/// skiff keeps out of tools are left out.
pub fn settings_env(settings: &Settings) -> skiff_tools::ExtraEnv {
    skiff_tools::ExtraEnv::new(
        settings
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.value.clone())),
        &skiff_tools::ToolConfig::default().bash_env_remove,
    )
}

/// WebFetch's limits and the hosts it may fetch from private addresses: the hosts of the
/// `WebFetch(domain:…)` allow rules (not `domain:*`, which allows every public host) and
/// `skiff.webFetch.allowPrivateHosts`.
pub fn web_fetch_config(
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
