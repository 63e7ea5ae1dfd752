//! The session's slash commands: the REPL's built-in names (reserved in every front end) and
//! the custom commands and skills found for this workspace (project ones only when it is
//! trusted and `--setting-sources` includes `project`; user ones when it includes `user`) and
//! the enabled plugins' (`/plugin-name:command`).
//! Problems with the files come back as warnings.

use std::path::Path;
use std::sync::Arc;

use skiff_core::commands::{CommandSet, DiscoverOptions, PluginCommands, discover};
use skiff_core::memory::MemoryOptions;

use crate::overrides::Overrides;
use crate::settings::{Layer, Settings};

/// Find the commands and skills of this run (with the enabled plugins' `plugins`);
/// `builtins` are the front end's own command names (reserved); problems go to `warnings`.
pub fn load(
    args: &Overrides,
    settings: &Settings,
    cwd: &Path,
    builtins: &[String],
    plugins: Vec<PluginCommands>,
    warnings: &mut Vec<String>,
) -> Arc<CommandSet> {
    let started = std::time::Instant::now();
    let layers = match &args.setting_sources {
        Some(list) => Layer::parse_list(list).unwrap_or_default(),
        None => Layer::ALL.to_vec(),
    };
    let mut user_dirs = Vec::new();
    if layers.contains(&Layer::User) {
        user_dirs.extend(MemoryOptions::from_env().user_dir);
        user_dirs.extend(settings.skiff_home.clone());
    }
    let found = discover(&DiscoverOptions {
        cwd: cwd.to_path_buf(),
        trusted: settings.trusted,
        project: layers.contains(&Layer::Project),
        user_dirs,
        builtins: builtins.to_vec(),
        plugins,
    });
    warnings.extend(found.warnings.iter().cloned());
    tracing::debug!(
        commands = found.set.commands().len(),
        micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
        "commands and skills found"
    );
    Arc::new(found.set)
}
