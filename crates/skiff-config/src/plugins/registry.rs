//! The marketplaces the user added (`skiff plugin marketplace add|list|update|remove`): a
//! local one is read where it is; a git one is cloned into `$SKIFF_HOME/plugins/marketplaces/`
//! (checked before it is kept), and its commit recorded. Removing a marketplace uninstalls the
//! plugins installed from it, as Claude Code does.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::git;
use super::marketplace::Marketplace;
use super::source::MarketplaceSource;
use super::store::{KnownMarketplace, PluginHome};
use crate::error::{ConfigError, Result};

/// A marketplace just added or updated.
#[derive(Debug, Clone)]
pub struct Added {
    /// Its name.
    pub name: String,
    /// How many plugins it lists.
    pub plugins: usize,
    /// Where it is on disk.
    pub location: PathBuf,
    /// Its commit (git marketplaces, local ones kept in git).
    pub commit: Option<String>,
}

/// The root and file of a local marketplace source.
fn local_root(source: &MarketplaceSource) -> Option<(PathBuf, Option<PathBuf>)> {
    match source {
        MarketplaceSource::Directory { path } => Some((path.clone(), None)),
        MarketplaceSource::File { path } => {
            let parent = path.parent().unwrap_or(Path::new("/"));
            let root = if parent.file_name().is_some_and(|n| n == ".claude-plugin") {
                parent.parent().unwrap_or(parent)
            } else {
                parent
            };
            Some((root.to_path_buf(), Some(path.clone())))
        }
        MarketplaceSource::Git { .. } | MarketplaceSource::Github { .. } => None,
    }
}

/// Read the marketplace `known` records.
pub fn read(known: &KnownMarketplace) -> Result<Marketplace> {
    match local_root(&known.source) {
        Some((root, file)) => Marketplace::read(&root, file.as_deref()),
        None => Marketplace::read(&known.install_location, None),
    }
}

/// The marketplace called `name`, read.
pub fn open(home: &PluginHome, name: &str) -> Result<(KnownMarketplace, Marketplace)> {
    let known = home.known()?;
    let Some(k) = known.get(name) else {
        return Err(ConfigError::usage(format!(
            "no marketplace called {name:?} has been added{}; add it with `skiff plugin \
             marketplace add SOURCE`",
            if known.is_empty() {
                String::new()
            } else {
                format!(
                    " (added: {})",
                    known.keys().cloned().collect::<Vec<_>>().join(", ")
                )
            }
        )));
    };
    let m = read(k)?;
    Ok((k.clone(), m))
}

/// Add the marketplace at `source`.
pub fn add(home: &PluginHome, source: MarketplaceSource) -> Result<Added> {
    let mut known = home.known()?;
    let (marketplace, location, commit, _staging) = match local_root(&source) {
        Some((root, file)) => {
            let m = Marketplace::read(&root, file.as_deref())?;
            let commit = git::head_if_repository(&m.root);
            let location = m.root.clone();
            (m, location, commit, None)
        }
        None => {
            let (url, git_ref) = source.git().unwrap_or_default();
            let staging = home.staging()?;
            let clone = staging.path().join("repo");
            let commit = git::clone(&url, git_ref.as_deref(), None, &clone)?;
            let m = Marketplace::read(&clone, None)?;
            let dest = home.marketplaces_dir().join(&m.name);
            if !known.contains_key(&m.name) && dest.exists() {
                // A clone left by an interrupted add.
                let _ = std::fs::remove_dir_all(&dest);
            }
            (m, dest, Some(commit), Some((staging, clone)))
        }
    };
    if let Some(old) = known.get(&marketplace.name) {
        return Err(ConfigError::usage(format!(
            "a marketplace called {:?} is already added (from {}); update it with `skiff plugin \
             marketplace update {}`, or remove it first",
            marketplace.name,
            old.source.describe(),
            marketplace.name
        )));
    }
    if let Some((_, clone)) = &_staging {
        std::fs::create_dir_all(home.marketplaces_dir()).map_err(|e| {
            ConfigError::io(
                format!("cannot create {}", home.marketplaces_dir().display()),
                e,
            )
        })?;
        std::fs::rename(clone, &location)
            .map_err(|e| ConfigError::io(format!("cannot create {}", location.display()), e))?;
    }
    known.insert(
        marketplace.name.clone(),
        KnownMarketplace {
            source,
            install_location: location.clone(),
            last_updated: Some(skiff_core::frames::now_iso()),
            commit: commit.clone(),
        },
    );
    home.save_known(&known)?;
    Ok(Added {
        name: marketplace.name,
        plugins: marketplace.plugins.len(),
        location,
        commit,
    })
}

/// Bring a git marketplace's clone to its newest commit (a local marketplace is read again),
/// and check the catalog.
pub fn update(home: &PluginHome, name: &str) -> Result<Added> {
    let mut known = home.known()?;
    let (k, _) = open(home, name)?;
    let commit = match k.source.git() {
        Some((_, git_ref)) => Some(git::update(&k.install_location, git_ref.as_deref())?),
        None => local_root(&k.source).and_then(|(root, _)| git::head_if_repository(&root)),
    };
    let m = read(&k).map_err(|e| {
        ConfigError::invalid(format!(
            "after updating, marketplace {name:?} is not valid: {e}"
        ))
    })?;
    if let Some(rec) = known.get_mut(name) {
        rec.last_updated = Some(skiff_core::frames::now_iso());
        rec.commit = commit.clone();
    }
    home.save_known(&known)?;
    Ok(Added {
        name: name.to_owned(),
        plugins: m.plugins.len(),
        location: k.install_location,
        commit,
    })
}

/// Forget the marketplace `name` (its clone is deleted); returns the ids of its plugins that
/// were installed, which the caller uninstalls.
pub fn remove(home: &PluginHome, name: &str) -> Result<Vec<String>> {
    let mut known = home.known()?;
    let Some(k) = known.remove(name) else {
        return Err(ConfigError::usage(format!(
            "no marketplace called {name:?} has been added"
        )));
    };
    home.save_known(&known)?;
    if k.install_location.starts_with(home.marketplaces_dir()) {
        let _ = std::fs::remove_dir_all(&k.install_location);
    }
    let suffix = format!("@{name}");
    Ok(home
        .installed()?
        .plugins
        .keys()
        .filter(|id| id.ends_with(&suffix))
        .cloned()
        .collect())
}

/// Every added marketplace with its catalog (or why it cannot be read).
pub fn list(
    home: &PluginHome,
) -> Result<BTreeMap<String, (KnownMarketplace, Result<Marketplace>)>> {
    Ok(home
        .known()?
        .into_iter()
        .map(|(name, k)| {
            let m = read(&k);
            (name, (k, m))
        })
        .collect())
}
