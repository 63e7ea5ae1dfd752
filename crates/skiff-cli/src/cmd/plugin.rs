//! `skiff plugin …` and the REPL's `/plugin …`: Claude Code's plugins and marketplaces
//! (`marketplace add|list|update|remove`, `install`, `uninstall`, `enable`, `disable`, `list`,
//! `validate`). Installing shows what the plugin adds — its hooks and MCP servers run
//! programs — and asks first (`--yes` does not). Changes take effect in new sessions.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use crate::args::{Args, MarketplaceCommand, PluginCommand};
use skiff_config::Environment;
use skiff_config::plugins::enable::PluginScope;
use skiff_config::plugins::marketplace::{MARKETPLACE, Marketplace};
use skiff_config::plugins::source::MarketplaceSource;
use skiff_config::plugins::store::PluginHome;
use skiff_config::plugins::{PluginId, install, load_plugin, registry, summary};

/// Asks the user a yes/no question; `Ok(false)` when the answer is no (or nobody answers).
pub type Confirm<'a> = &'a mut dyn FnMut(&str) -> anyhow::Result<bool>;

/// Run `skiff plugin …`, printing to stdout.
pub fn run_plugin(args: &Args, command: &PluginCommand) -> anyhow::Result<ExitCode> {
    let cwd = workspace(args)?;
    let env = crate::session::environment();
    let mut ask = ask_on_stdin;
    let (text, ok) = execute(args, &cwd, &env, command, &mut ask)?;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(anyhow::Error::new(e).context("writing to stdout"))
        }
        _ if !ok => Ok(ExitCode::FAILURE),
        _ => Ok(ExitCode::SUCCESS),
    }
}

/// `/plugin ARGS` in the REPL: the same commands (`/plugin` alone lists); errors become text.
pub fn repl_command(args: &Args, cwd: &Path, line: &str, confirm: Confirm<'_>) -> String {
    /// The words after `/plugin`.
    #[derive(Debug, Parser)]
    #[command(name = "/plugin", no_binary_name = true, disable_version_flag = true)]
    struct Line {
        #[command(subcommand)]
        action: Option<PluginCommand>,
    }
    let words: Vec<&str> = line.split_whitespace().collect();
    let action = match Line::try_parse_from(&words) {
        Ok(Line { action: Some(a) }) => a,
        Ok(Line { action: None }) => PluginCommand::List { available: false },
        Err(e) => return e.to_string().trim_end().to_owned(),
    };
    let env = crate::session::environment();
    match execute(args, cwd, &env, &action, confirm) {
        Ok((text, _)) => text.trim_end().to_owned(),
        Err(e) => format!("Error: {e:#}"),
    }
}

/// The workspace, canonical.
fn workspace(args: &Args) -> anyhow::Result<std::path::PathBuf> {
    let cwd = match &args.cwd {
        Some(d) => d.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    std::fs::canonicalize(&cwd)
        .with_context(|| format!("the workspace directory {} does not exist", cwd.display()))
}

/// Ask on stderr, read the answer from stdin (end of input is no).
fn ask_on_stdin(question: &str) -> anyhow::Result<bool> {
    use std::io::BufRead;
    let mut err = std::io::stderr().lock();
    write!(err, "{question} [y/N] ")?;
    err.flush()?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    Ok(matches!(
        line.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

/// Do `command`: the text to show, and whether everything was fine (`validate` of something
/// broken is not).
fn execute(
    args: &Args,
    cwd: &Path,
    env: &Environment,
    command: &PluginCommand,
    confirm: Confirm<'_>,
) -> anyhow::Result<(String, bool)> {
    if let PluginCommand::Validate { path } = command {
        return Ok(validate(&cwd.join(path)));
    }
    let home = PluginHome::of(env)?;
    let text = match command {
        PluginCommand::Marketplace { action } => marketplace(args, cwd, &home, env, action)?,
        PluginCommand::Install { plugin, scope, yes } => {
            suggest_marketplace(args, cwd, &home, plugin)?;
            let mut always = |_: &str| Ok(true);
            let confirm: Confirm<'_> = if *yes { &mut always } else { confirm };
            install_plugin(&home, cwd, env, plugin, (*scope).into(), confirm)?
        }
        PluginCommand::Uninstall { plugin, scope } => {
            let id = PluginId::parse(plugin)?;
            let scope: PluginScope = (*scope).into();
            let removed = install::uninstall(&home, &id, scope, cwd, env)?;
            let mut text = format!("Uninstalled {id}");
            match removed {
                Some(p) => {
                    let _ = write!(text, ": removed {}", p.display());
                }
                None => text.push_str(" (no copy of it was installed)"),
            }
            let _ = writeln!(
                text,
                " and its entry in {} ({} scope).",
                scope.file(cwd, env)?.display(),
                scope.name()
            );
            still_enabled(args, cwd, &id, &mut text);
            text
        }
        PluginCommand::Enable { plugin, scope } => {
            let id = PluginId::parse(plugin)?;
            if home.installed()?.get(&id.to_string()).is_none() && !claude_has(env, &id) {
                return Err(anyhow::Error::new(skiff_config::ConfigError::usage(
                    format!(
                        "plugin {id} is not installed; install it with `skiff plugin install {id}`"
                    ),
                )));
            }
            let scope: PluginScope = (*scope).into();
            let file = skiff_config::plugins::enable::set_enabled(
                scope,
                cwd,
                env,
                &id.to_string(),
                Some(true),
            )?;
            format!(
                "Enabled {id} in {} ({} scope). It loads in new sessions.\n",
                file.display(),
                scope.name()
            )
        }
        PluginCommand::Disable { plugin, scope } => {
            let id = PluginId::parse(plugin)?;
            let scope: PluginScope = (*scope).into();
            let file = skiff_config::plugins::enable::set_enabled(
                scope,
                cwd,
                env,
                &id.to_string(),
                Some(false),
            )?;
            let mut text = format!(
                "Disabled {id} in {} ({} scope). New sessions do without it.\n",
                file.display(),
                scope.name()
            );
            still_enabled(args, cwd, &id, &mut text);
            text
        }
        PluginCommand::List { available } => list(args, cwd, &home, *available)?,
        PluginCommand::Validate { .. } => String::new(),
    };
    Ok((text, true))
}

/// A marketplace that is not added but that the settings suggest (`extraKnownMarketplaces`,
/// as a team's `.claude/settings.json` does): an error saying how to add it.
fn suggest_marketplace(
    args: &Args,
    cwd: &Path,
    home: &PluginHome,
    plugin: &str,
) -> anyhow::Result<()> {
    let Some((_, marketplace)) = plugin.rsplit_once('@') else {
        return Ok(());
    };
    if home.known()?.contains_key(marketplace) {
        return Ok(());
    }
    let Ok(settings) = crate::session::settings(args, cwd) else {
        return Ok(());
    };
    let Some(entry) = settings.extra_marketplaces.get(marketplace) else {
        return Ok(());
    };
    let source = &entry.value["source"];
    let text = |k: &str| source.get(k).and_then(serde_json::Value::as_str);
    let to_add = text("repo")
        .or_else(|| text("url"))
        .or_else(|| text("path"))
        .map_or_else(|| "SOURCE".to_owned(), str::to_owned);
    Err(anyhow::Error::new(skiff_config::ConfigError::usage(
        format!(
            "marketplace {marketplace:?} is not added; {} suggests it: add it with `skiff plugin \
         marketplace add {to_add}`, then install {plugin}",
            entry.source
        ),
    )))
}

/// Whether Claude Code has a copy of `id` (`~/.claude/plugins/installed_plugins.json`).
fn claude_has(env: &Environment, id: &PluginId) -> bool {
    env.claude_dir()
        .map(|d| d.join("plugins").join("installed_plugins.json"))
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .is_some_and(|v| {
            skiff_config::plugins::store::Installed::from_value(&v)
                .get(&id.to_string())
                .is_some()
        })
}

/// A note when another settings file still turns `id` on here.
fn still_enabled(args: &Args, cwd: &Path, id: &PluginId, text: &mut String) {
    if let Ok(settings) = crate::session::settings(args, cwd)
        && let Some(on) = settings.enabled_plugins.get(&id.to_string())
        && on.value
    {
        let _ = writeln!(
            text,
            "Note: {} still enables it in this workspace ({id}: true).",
            on.source
        );
    }
}

/// `skiff plugin marketplace …`.
fn marketplace(
    args: &Args,
    cwd: &Path,
    home: &PluginHome,
    env: &Environment,
    action: &MarketplaceCommand,
) -> anyhow::Result<String> {
    Ok(match action {
        MarketplaceCommand::Add { source } => {
            let source = MarketplaceSource::parse(source, cwd)?;
            let shown = source.describe();
            let added = registry::add(home, source)?;
            let mut text = format!(
                "Added marketplace {:?} ({} plugin{}) from {shown}",
                added.name,
                added.plugins,
                if added.plugins == 1 { "" } else { "s" }
            );
            if let Some(c) = &added.commit {
                let _ = write!(text, " at commit {}", short(c));
            }
            let _ = writeln!(
                text,
                ".\nInstall one with `skiff plugin install NAME@{}` (`skiff plugin list --available` lists them).",
                added.name
            );
            text
        }
        MarketplaceCommand::List => {
            let all = registry::list(home)?;
            let mut text = String::new();
            if all.is_empty() {
                text.push_str(
                    "No marketplaces added. Add one with `skiff plugin marketplace add DIR|GIT-URL|OWNER/REPO`.\n",
                );
            } else {
                text.push_str("Marketplaces:\n");
            }
            for (name, (known, m)) in &all {
                let _ = write!(text, "  {name}  {}", known.source.describe());
                if let Some(c) = &known.commit {
                    let _ = write!(text, "  commit {}", short(c));
                }
                match m {
                    Ok(m) => {
                        let _ = writeln!(text, "  {} plugin(s)", m.plugins.len());
                    }
                    Err(e) => {
                        let _ = writeln!(text, "  cannot be read: {e}");
                    }
                }
            }
            if let Ok(settings) = crate::session::settings(args, cwd) {
                for (name, entry) in &settings.extra_marketplaces {
                    if all.contains_key(name) {
                        continue;
                    }
                    let _ = writeln!(
                        text,
                        "  {name}  suggested by {} (not added): {}",
                        entry.source,
                        entry
                            .value
                            .get("source")
                            .map_or_else(|| entry.value.to_string(), serde_json::Value::to_string)
                    );
                }
            }
            text
        }
        MarketplaceCommand::Update { name } => {
            let names: Vec<String> = match name {
                Some(n) => vec![n.clone()],
                None => home.known()?.into_keys().collect(),
            };
            let mut text = String::new();
            for n in names {
                let added = registry::update(home, &n)?;
                let _ = writeln!(
                    text,
                    "Updated marketplace {n:?}: {} plugin(s){}.",
                    added.plugins,
                    added
                        .commit
                        .as_deref()
                        .map(|c| format!(", commit {}", short(c)))
                        .unwrap_or_default()
                );
            }
            if text.is_empty() {
                text.push_str("No marketplaces added.\n");
            }
            text
        }
        MarketplaceCommand::Remove { name } => {
            let installed = registry::remove(home, name)?;
            let mut text = format!("Removed marketplace {name:?}.\n");
            for id in installed {
                let id = PluginId::parse(&id)?;
                install::uninstall(home, &id, PluginScope::User, cwd, env)?;
                let _ = writeln!(text, "Uninstalled {id}, which came from it.");
            }
            text
        }
    })
}

/// `skiff plugin install`: fetch, show, ask, keep.
fn install_plugin(
    home: &PluginHome,
    cwd: &Path,
    env: &Environment,
    text: &str,
    scope: PluginScope,
    confirm: Confirm<'_>,
) -> anyhow::Result<String> {
    let id = install::resolve_id(home, text)?;
    let prepared = install::prepare(home, &id)?;
    let mut shown = format!("{id}");
    if let Some(c) = &prepared.commit {
        let _ = write!(shown, " (commit {})", short(c));
    }
    let _ = write!(
        shown,
        ":\n  {}",
        summary::describe(&prepared.plugin).trim_end()
    );
    for link in &prepared.skipped_links {
        let _ = write!(
            shown,
            "\n  (left out: the symlink {link}, which leads outside the plugin)"
        );
    }
    let question = if summary::runs_programs(&prepared.plugin) {
        format!(
            "{shown}\nIts hooks and MCP servers run programs on this machine, with your \
             permissions, in every session where it is enabled.\nInstall {id}?"
        )
    } else {
        format!("{shown}\nInstall {id}?")
    };
    if !confirm(&question)? {
        return Err(anyhow::Error::new(skiff_config::ConfigError::usage(
            format!("{id} was not installed (answer y, or pass --yes)"),
        )));
    }
    let version = prepared.version.clone();
    let done = install::finish(home, prepared, scope, cwd, env)?;
    Ok(format!(
        "Installed {id}{} in {}.\nEnabled it in {} ({} scope). It loads in new sessions.\n",
        version.map(|v| format!(" {v}")).unwrap_or_default(),
        done.path.display(),
        done.settings.display(),
        scope.name()
    ))
}

/// `skiff plugin list`.
fn list(args: &Args, cwd: &Path, home: &PluginHome, available: bool) -> anyhow::Result<String> {
    let installed = home.installed()?;
    let settings = crate::session::settings(args, cwd).ok();
    let enabled = |id: &str| {
        settings
            .as_ref()
            .and_then(|s| s.enabled_plugins.get(id))
            .map(|e| (e.value, e.source.to_string()))
    };
    let mut text = String::new();
    if installed.plugins.is_empty() {
        text.push_str("No plugins installed.\n");
    } else {
        text.push_str("Installed plugins:\n");
    }
    for (id, records) in &installed.plugins {
        let Some(r) = records.first() else { continue };
        let _ = write!(text, "  {id}");
        if let Some(v) = &r.version {
            let _ = write!(text, "  {v}");
        }
        match &r.git_commit_sha {
            Some(c) => {
                let _ = write!(text, "  commit {}", short(c));
            }
            None => text.push_str("  local copy"),
        }
        match enabled(id) {
            Some((true, src)) => {
                let _ = write!(text, "  enabled ({src})");
            }
            Some((false, src)) => {
                let _ = write!(text, "  disabled ({src})");
            }
            None => text.push_str("  not enabled here"),
        }
        text.push('\n');
        let name = id.split('@').next().unwrap_or(id);
        match load_plugin(&r.install_path, name, id) {
            Ok(p) => {
                for line in summary::describe(&p).lines().skip(1) {
                    let _ = writeln!(text, "  {line}");
                }
            }
            Err(e) => {
                let _ = writeln!(text, "    cannot be loaded: {e}");
            }
        }
    }
    if let Some(s) = &settings {
        let missing: Vec<_> = s
            .enabled_plugins
            .iter()
            .filter(|(id, e)| e.value && installed.get(id).is_none())
            .collect();
        if !missing.is_empty() {
            text.push_str("Enabled here but not installed by skiff:\n");
            for (id, e) in missing {
                let _ = writeln!(
                    text,
                    "  {id}  ({})  install it with `skiff plugin install {id}`",
                    e.source
                );
            }
        }
    }
    if available {
        for (name, (_, m)) in registry::list(home)? {
            let _ = writeln!(text, "Marketplace {name}:");
            match m {
                Ok(m) => {
                    for (plugin, entry) in &m.plugins {
                        let id = format!("{plugin}@{name}");
                        let state = if installed.get(&id).is_some() {
                            "  (installed)"
                        } else {
                            ""
                        };
                        match entry {
                            Ok(e) => {
                                let _ = writeln!(
                                    text,
                                    "  {id}{}{state}",
                                    e.description
                                        .as_deref()
                                        .map(|d| format!("  {d}"))
                                        .unwrap_or_default()
                                );
                            }
                            Err(why) => {
                                let _ = writeln!(text, "  {id}  cannot be installed: {why}");
                            }
                        }
                    }
                }
                Err(e) => {
                    let _ = writeln!(text, "  cannot be read: {e}");
                }
            }
        }
    }
    Ok(text)
}

/// `skiff plugin validate PATH`: a marketplace's catalog and/or a plugin, checked.
fn validate(path: &Path) -> (String, bool) {
    let mut text = String::new();
    let mut ok = true;
    let is_marketplace = path.join(MARKETPLACE).exists();
    if is_marketplace {
        match Marketplace::read(path, None) {
            Ok(m) => {
                let _ = writeln!(
                    text,
                    "Marketplace {:?}: {} plugin(s).",
                    m.name,
                    m.plugins.len()
                );
                for (name, entry) in &m.plugins {
                    if let Err(why) = entry {
                        ok = false;
                        let _ = writeln!(text, "  {name}: {why}");
                    }
                }
            }
            Err(e) => {
                ok = false;
                let _ = writeln!(text, "Marketplace: {e}");
            }
        }
    }
    let is_plugin = path
        .join(skiff_config::plugins::manifest::MANIFEST)
        .exists();
    if is_plugin || !is_marketplace {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("plugin")
            .to_owned();
        match load_plugin(path, &name, &format!("{name}@inline")) {
            Ok(p) => {
                let _ = write!(text, "Plugin {}", summary::describe(&p));
                let (_, _, problems) = summary::command_names(&p);
                for w in p.warnings.iter().chain(&problems) {
                    let _ = writeln!(text, "  {w}");
                }
            }
            Err(e) => {
                ok = false;
                let _ = writeln!(text, "Plugin: {e}");
            }
        }
    }
    if ok {
        text.push_str("Valid.\n");
    }
    (text, ok)
}

/// A commit's first 12 characters.
fn short(commit: &str) -> String {
    commit.chars().take(12).collect()
}
