//! Installing a plugin from an added marketplace, in two steps so that the user sees what it
//! adds before anything is kept: [`prepare`] fetches it (a directory of the marketplace, or a
//! git clone at the entry's `ref`/`sha`) into a staging directory, applies the entry's own
//! fields, and loads it — a plugin that does not load is refused; [`finish`] moves the copy
//! into `$SKIFF_HOME/plugins/cache/<marketplace>/<plugin>/<version>-<commit>/`, records it and
//! enables it in the chosen settings scope. [`uninstall`] undoes both.

use std::path::{Component, Path, PathBuf};

use super::components::{LoadedPlugin, load_plugin};
use super::enable::{PluginScope, set_enabled};
use super::manifest::{MANIFEST, Manifest};
use super::marketplace::{Entry, PluginSource};
use super::source::MarketplaceSource;
use super::store::{InstallRecord, PluginHome, Staging, copy_tree};
use super::{PluginId, git, registry};
use crate::environment::Environment;
use crate::error::{ConfigError, Result};

/// A plugin fetched and checked, waiting for the user's yes.
#[derive(Debug)]
pub struct Prepared {
    /// What it will be installed as.
    pub id: PluginId,
    /// The plugin as it will load.
    pub plugin: LoadedPlugin,
    /// The commit it came from.
    pub commit: Option<String>,
    /// Its version.
    pub version: Option<String>,
    /// Symlinks left out of the copy (they led outside the plugin).
    pub skipped_links: Vec<String>,
    is_local: bool,
    staging: Staging,
    copy: PathBuf,
}

/// A finished installation.
#[derive(Debug, Clone)]
pub struct Done {
    /// Where the copy is.
    pub path: PathBuf,
    /// The settings file that enables it.
    pub settings: PathBuf,
}

/// Which plugin `text` means: `name@marketplace`, or a name only one added marketplace lists.
pub fn resolve_id(home: &PluginHome, text: &str) -> Result<PluginId> {
    if text.contains('@') {
        return PluginId::parse(text);
    }
    super::check_name(text, "plugin").map_err(|e| ConfigError::usage(e.to_string()))?;
    let mut found = Vec::new();
    for (name, (_, m)) in registry::list(home)? {
        if m.is_ok_and(|m| m.plugins.iter().any(|(n, _)| n == text)) {
            found.push(name);
        }
    }
    match found.as_slice() {
        [one] => Ok(PluginId {
            name: text.to_owned(),
            marketplace: one.clone(),
        }),
        [] => Err(ConfigError::usage(format!(
            "no added marketplace lists a plugin called {text:?}; add its marketplace with \
             `skiff plugin marketplace add SOURCE`, then install NAME@MARKETPLACE"
        ))),
        many => Err(ConfigError::usage(format!(
            "{text:?} is in several marketplaces ({}); say which: {text}@{}",
            many.join(", "),
            many[0]
        ))),
    }
}

/// Fetch and check the plugin `id` (nothing is kept yet).
pub fn prepare(home: &PluginHome, id: &PluginId) -> Result<Prepared> {
    let (known, marketplace) = registry::open(home, &id.marketplace)?;
    let entry = marketplace.entry(&id.name)?.clone();
    let staging = home.staging()?;
    let copy = staging.path().join("plugin");
    std::fs::create_dir(&copy)
        .map_err(|e| ConfigError::io(format!("cannot create {}", copy.display()), e))?;
    let (commit, is_local, copied) = match &entry.source {
        PluginSource::Path(rel) => {
            let src = inside(&marketplace.root, rel, &entry.name)?;
            let copied = copy_tree(&src, &copy)?;
            let commit = known
                .commit
                .clone()
                .or_else(|| git::head_if_repository(&marketplace.root));
            let local = matches!(
                known.source,
                MarketplaceSource::Directory { .. } | MarketplaceSource::File { .. }
            );
            let is_local = local && commit.is_none();
            (commit, is_local, copied)
        }
        PluginSource::Git {
            url,
            git_ref,
            sha,
            subdir,
        } => {
            let clone = staging.path().join("clone");
            let commit = git::clone(url, git_ref.as_deref(), sha.as_deref(), &clone)?;
            if let Some(sha) = sha
                && !commit.eq_ignore_ascii_case(sha)
            {
                return Err(ConfigError::invalid(format!(
                    "{url}: checked out {commit}, not the commit {sha} the marketplace pins"
                )));
            }
            let src = match subdir {
                Some(sub) => inside(&clone, sub, &entry.name)?,
                None => clone.clone(),
            };
            let copied = copy_tree(&src, &copy)?;
            let _ = std::fs::remove_dir_all(&clone);
            (Some(commit), false, copied)
        }
    };
    apply_entry(&copy, &entry)?;
    let plugin = load_plugin(&copy, &entry.name, &id.to_string()).map_err(|e| {
        // Errors name the plugin's files as `<plugin>/…`, not the staging directory.
        let mut text = e.to_string();
        let real = std::fs::canonicalize(&copy).unwrap_or_else(|_| copy.clone());
        for dir in [&real, &copy] {
            text = text.replace(&dir.display().to_string(), &format!("<{}>", id.name));
        }
        ConfigError::invalid(format!("plugin {id} cannot be installed: {text}"))
    })?;
    let version = plugin
        .manifest
        .version
        .clone()
        .or_else(|| entry.version.clone());
    Ok(Prepared {
        id: id.clone(),
        plugin,
        commit,
        version,
        skipped_links: copied.skipped_links,
        is_local,
        staging,
        copy,
    })
}

/// A directory `rel` of `root` (the marketplace, a clone): relative, no `..`, existing, not
/// through a symlink leading out.
fn inside(root: &Path, rel: &str, plugin: &str) -> Result<PathBuf> {
    let bad =
        |what: &str| ConfigError::invalid(format!("plugin {plugin:?}: its source {rel:?} {what}"));
    let p = Path::new(rel);
    if p.is_absolute()
        || p.components()
            .any(|c| matches!(c, Component::ParentDir | Component::Prefix(_)))
    {
        return Err(bad("leaves the marketplace's directory"));
    }
    let root = std::fs::canonicalize(root).map_err(|e| ConfigError::read(root, e))?;
    let real = std::fs::canonicalize(root.join(p)).map_err(|_| bad("does not exist"))?;
    if !real.starts_with(&root) {
        return Err(bad("leaves the marketplace's directory through a symlink"));
    }
    if !real.is_dir() {
        return Err(bad("is not a directory"));
    }
    Ok(real)
}

/// A marketplace entry with its own plugin fields: with `strict` (the default) they add to the
/// plugin's `plugin.json`; without, they are its manifest. Written into the copy.
fn apply_entry(copy: &Path, entry: &Entry) -> Result<()> {
    let Some(overlay) = &entry.manifest else {
        return Ok(());
    };
    let file = copy.join(MANIFEST);
    let mut manifest = if entry.strict && file.exists() {
        let mut own = Manifest::read(copy, &entry.name)?;
        own.commands.extend(overlay.commands.iter().cloned());
        own.agents.extend(overlay.agents.iter().cloned());
        own.skills.extend(overlay.skills.iter().cloned());
        own.hooks.extend(overlay.hooks.iter().cloned());
        own.mcp_servers.extend(overlay.mcp_servers.iter().cloned());
        own
    } else {
        overlay.clone()
    };
    if manifest.version.is_none() {
        manifest.version.clone_from(&entry.version);
    }
    let text = serde_json::to_string_pretty(&manifest.to_json())
        .map_err(|e| ConfigError::invalid(format!("cannot write the manifest: {e}")))?;
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| ConfigError::io(format!("cannot create {}", dir.display()), e))?;
    }
    // The copy is ours: a link there is replaced, never written through.
    let _ = std::fs::remove_file(&file);
    std::fs::write(&file, text)
        .map_err(|e| ConfigError::io(format!("cannot write {}", file.display()), e))
}

/// A directory name made of a version: what is not a letter, digit, `.`, `-` or `_` becomes
/// `_`.
fn version_dir(version: Option<&str>, commit: Option<&str>) -> String {
    let v: String = version
        .unwrap_or("0.0.0")
        .chars()
        .take(40)
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let v = v.trim_start_matches('.');
    let v = if v.is_empty() { "0.0.0" } else { v };
    match commit {
        Some(c) => format!(
            "{v}-{}",
            c.chars()
                .filter(char::is_ascii_alphanumeric)
                .take(12)
                .collect::<String>()
        ),
        None => format!(
            "{v}-local-{}",
            &uuid::Uuid::new_v4().simple().to_string()[..8]
        ),
    }
}

/// Keep a prepared plugin: move its copy into the cache, record it, enable it in `scope`.
pub fn finish(
    home: &PluginHome,
    prepared: Prepared,
    scope: PluginScope,
    cwd: &Path,
    env: &Environment,
) -> Result<Done> {
    let id = prepared.id.to_string();
    // The settings file must take the entry: checked before anything is kept.
    let settings_file = scope.file(cwd, env)?;
    crate::mcp::config::read_doc(&settings_file).map_err(|e| {
        ConfigError::invalid(format!("{e}; {id} was not installed (fix the file first)"))
    })?;
    let cache = home.cache_dir(&prepared.id);
    std::fs::create_dir_all(&cache)
        .map_err(|e| ConfigError::io(format!("cannot create {}", cache.display()), e))?;
    let target = cache.join(version_dir(
        prepared.version.as_deref(),
        prepared.commit.as_deref(),
    ));
    if target.exists() {
        std::fs::remove_dir_all(&target)
            .map_err(|e| ConfigError::io(format!("cannot replace {}", target.display()), e))?;
    }
    std::fs::rename(&prepared.copy, &target)
        .map_err(|e| ConfigError::io(format!("cannot create {}", target.display()), e))?;
    drop(prepared.staging);
    let mut installed = home.installed()?;
    let now = skiff_core::frames::now_iso();
    let old = installed.get(&id).cloned();
    installed.plugins.insert(
        id.clone(),
        vec![InstallRecord {
            scope: "user".into(),
            install_path: target.clone(),
            version: prepared.version.clone(),
            installed_at: Some(
                old.as_ref()
                    .and_then(|o| o.installed_at.clone())
                    .unwrap_or_else(|| now.clone()),
            ),
            last_updated: Some(now),
            git_commit_sha: prepared.commit.clone(),
            is_local: prepared.is_local,
        }],
    );
    home.save_installed(&installed)?;
    if let Some(old) = old
        && old.install_path != target
        && old.install_path.starts_with(home.dir())
    {
        let _ = std::fs::remove_dir_all(&old.install_path);
    }
    let data = home.data_dir(&prepared.id);
    std::fs::create_dir_all(&data)
        .map_err(|e| ConfigError::io(format!("cannot create {}", data.display()), e))?;
    let settings = set_enabled(scope, cwd, env, &id, Some(true))?;
    Ok(Done {
        path: target,
        settings,
    })
}

/// Remove the installed copy of `id` and its entry in `scope`'s settings. An error when it is
/// neither installed nor named there.
pub fn uninstall(
    home: &PluginHome,
    id: &PluginId,
    scope: PluginScope,
    cwd: &Path,
    env: &Environment,
) -> Result<Option<PathBuf>> {
    let key = id.to_string();
    let mut installed = home.installed()?;
    let record = installed.plugins.remove(&key);
    let file = scope.file(cwd, env)?;
    let named = crate::mcp::config::read_doc(&file)
        .ok()
        .flatten()
        .and_then(|d| d.get(super::enable::KEY).and_then(|m| m.get(&key)).cloned())
        .is_some();
    if record.is_none() && !named {
        return Err(ConfigError::usage(format!(
            "plugin {key} is not installed (see `skiff plugin list`)"
        )));
    }
    if record.is_some() {
        home.save_installed(&installed)?;
    }
    let removed = record
        .and_then(|r| r.into_iter().next())
        .map(|r| r.install_path)
        .filter(|p| p.starts_with(home.dir()));
    if let Some(p) = &removed {
        let _ = std::fs::remove_dir_all(p);
        if let Some(parent) = p.parent() {
            // The plugin's directory under the cache, when it holds nothing else.
            let _ = std::fs::remove_dir(parent);
        }
    }
    if named {
        set_enabled(scope, cwd, env, &key, None)?;
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn version_directories_are_safe_names() {
        assert_eq!(
            version_dir(Some("1.2.0"), Some("abcdef0123456789")),
            "1.2.0-abcdef012345"
        );
        assert_eq!(version_dir(Some("../../x"), Some("ab")), "_.._x-ab");
        assert_eq!(version_dir(Some("..."), Some("ab")), "0.0.0-ab");
        assert!(version_dir(None, None).starts_with("0.0.0-local-"));
    }
}
