//! The session's slash commands: the REPL's built-in names (reserved in every front end) and
//! the custom commands and skills found for this workspace (project ones only when it is
//! trusted and `--setting-sources` includes `project`; user ones when it includes `user`).
//! Problems with the files are printed once, on stderr.

use std::path::Path;
use std::sync::Arc;

use skiff_core::commands::{CommandSet, DiscoverOptions, discover};
use skiff_core::memory::MemoryOptions;

use crate::args::Args;
use crate::settings::{Layer, Settings};

/// Find the commands and skills of this run, warnings on stderr.
pub fn load(args: &Args, settings: &Settings, cwd: &Path) -> Arc<CommandSet> {
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
        builtins: crate::commands::COMMANDS
            .iter()
            .map(|c| c.name.to_owned())
            .collect(),
    });
    for warning in &found.warnings {
        eprintln!("{warning}");
    }
    Arc::new(found.set)
}
