//! What skiff keeps about plugins in its home, laid out as Claude Code lays out
//! `~/.claude/plugins`: `known_marketplaces.json` (name → source, where it is on disk),
//! `marketplaces/<name>/` (git marketplaces' clones), `cache/<marketplace>/<plugin>/<version>/`
//! (installed copies), `installed_plugins.json` (id → where the copy is, its version and
//! commit), `data/<plugin>-<marketplace>/` (a plugin's own data, kept across updates). Records
//! are written whole and renamed into place; copies are made in `.staging/` and renamed in.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::PluginId;
use super::source::MarketplaceSource;
use crate::error::{ConfigError, Result};

/// The most files one plugin or marketplace copy may hold.
const MAX_FILES: usize = 20_000;
/// The most bytes one copy may hold.
const MAX_BYTES: u64 = 512 * 1024 * 1024;

/// A marketplace skiff knows (`known_marketplaces.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KnownMarketplace {
    /// Where it comes from.
    pub source: MarketplaceSource,
    /// Its root on disk (the directory holding `.claude-plugin/`).
    pub install_location: PathBuf,
    /// When it was added or last updated.
    #[serde(default)]
    pub last_updated: Option<String>,
    /// The commit of a git marketplace's clone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

/// One installed copy (`installed_plugins.json`, version 2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InstallRecord {
    /// `user`: copies are the user's, whichever settings enable them.
    #[serde(default = "user_scope")]
    pub scope: String,
    /// The copy.
    pub install_path: PathBuf,
    /// The plugin's version.
    #[serde(default)]
    pub version: Option<String>,
    /// When it was first installed.
    #[serde(default)]
    pub installed_at: Option<String>,
    /// When it was last installed or updated.
    #[serde(default)]
    pub last_updated: Option<String>,
    /// The commit it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_commit_sha: Option<String>,
    /// Copied from a local directory (not a git repository).
    #[serde(default)]
    pub is_local: bool,
}

fn user_scope() -> String {
    "user".to_owned()
}

/// `installed_plugins.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Installed {
    /// The format's version (2).
    pub version: u32,
    /// Records by plugin id.
    pub plugins: BTreeMap<String, Vec<InstallRecord>>,
}

impl Installed {
    /// Read either of Claude Code's formats (version 1: one record per id; version 2: a list);
    /// records that do not parse are left out.
    pub fn from_value(v: &Value) -> Self {
        let mut out = Self {
            version: 2,
            plugins: BTreeMap::new(),
        };
        let Some(map) = v.get("plugins").and_then(Value::as_object) else {
            return out;
        };
        for (id, records) in map {
            let list: Vec<InstallRecord> = match records {
                Value::Array(items) => items
                    .iter()
                    .filter_map(|r| serde_json::from_value(r.clone()).ok())
                    .collect(),
                one => serde_json::from_value(one.clone()).into_iter().collect(),
            };
            if !list.is_empty() {
                out.plugins.insert(id.clone(), list);
            }
        }
        out
    }

    /// The record of `id`.
    pub fn get(&self, id: &str) -> Option<&InstallRecord> {
        self.plugins.get(id).and_then(|l| l.first())
    }
}

/// `$SKIFF_HOME/plugins`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginHome {
    dir: PathBuf,
}

impl PluginHome {
    /// The plugin home under skiff's home.
    pub fn new(skiff_home: &Path) -> Self {
        Self {
            dir: skiff_home.join("plugins"),
        }
    }

    /// The plugin home of `env` (an error without `SKIFF_HOME` or `HOME`).
    pub fn of(env: &crate::Environment) -> Result<Self> {
        env.skiff_home().map(|h| Self::new(&h)).ok_or_else(|| {
            ConfigError::invalid(
                "neither SKIFF_HOME nor HOME is set: skiff has no home for plugins",
            )
        })
    }

    /// `$SKIFF_HOME/plugins`.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where git marketplaces are cloned.
    pub fn marketplaces_dir(&self) -> PathBuf {
        self.dir.join("marketplaces")
    }

    /// Where a plugin's copies go.
    pub fn cache_dir(&self, id: &PluginId) -> PathBuf {
        self.dir.join("cache").join(&id.marketplace).join(&id.name)
    }

    /// A plugin's own data directory (`CLAUDE_PLUGIN_DATA`).
    pub fn data_dir(&self, id: &PluginId) -> PathBuf {
        self.dir
            .join("data")
            .join(format!("{}-{}", id.name, id.marketplace))
    }

    /// A new empty directory to build a copy in, removed when dropped unless kept.
    pub fn staging(&self) -> Result<Staging> {
        let dir = self
            .dir
            .join(".staging")
            .join(uuid::Uuid::new_v4().simple().to_string());
        std::fs::create_dir_all(&dir)
            .map_err(|e| ConfigError::io(format!("cannot create {}", dir.display()), e))?;
        Ok(Staging { dir: Some(dir) })
    }

    fn known_file(&self) -> PathBuf {
        self.dir.join("known_marketplaces.json")
    }

    fn installed_file(&self) -> PathBuf {
        self.dir.join("installed_plugins.json")
    }

    /// The known marketplaces by name.
    pub fn known(&self) -> Result<BTreeMap<String, KnownMarketplace>> {
        let path = self.known_file();
        match read_record(&path)? {
            None => Ok(BTreeMap::new()),
            Some(v) => serde_json::from_value(v).map_err(|e| {
                ConfigError::invalid(format!("{}: {e}; fix or remove the file", path.display()))
            }),
        }
    }

    /// Save the known marketplaces.
    pub fn save_known(&self, known: &BTreeMap<String, KnownMarketplace>) -> Result<()> {
        write_record(&self.known_file(), known)
    }

    /// The installed plugins.
    pub fn installed(&self) -> Result<Installed> {
        Ok(read_record(&self.installed_file())?
            .map(|v| Installed::from_value(&v))
            .unwrap_or_else(|| Installed {
                version: 2,
                plugins: BTreeMap::new(),
            }))
    }

    /// Save the installed plugins.
    pub fn save_installed(&self, installed: &Installed) -> Result<()> {
        write_record(&self.installed_file(), installed)
    }
}

/// A staging directory; removed on drop unless [`Staging::keep`] took it.
#[derive(Debug)]
pub struct Staging {
    dir: Option<PathBuf>,
}

impl Staging {
    /// The directory.
    pub fn path(&self) -> &Path {
        self.dir.as_deref().unwrap_or(Path::new(""))
    }

    /// Keep the directory (it was renamed into place).
    pub fn keep(mut self) -> PathBuf {
        self.dir.take().unwrap_or_default()
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if let Some(dir) = self.dir.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// A record file as JSON, `None` when missing.
fn read_record(path: &Path) -> Result<Option<Value>> {
    match std::fs::read_to_string(path) {
        Ok(t) if t.trim().is_empty() => Ok(None),
        Ok(t) => serde_json::from_str(&t).map(Some).map_err(|e| {
            ConfigError::invalid(format!(
                "{}: invalid JSON at line {}, column {}; fix or remove the file",
                path.display(),
                e.line(),
                e.column()
            ))
        }),
        Err(e) if crate::settings::is_absent(&e) => Ok(None),
        Err(e) => Err(ConfigError::read(path, e)),
    }
}

fn write_record<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value)
        .map_err(|e| ConfigError::invalid(format!("cannot write {}: {e}", path.display())))?;
    text.push('\n');
    skiff_tools::atomic::write_atomic(path, text.as_bytes())
        .map_err(|e| ConfigError::io(format!("cannot write {}", path.display()), e))
}

/// What a copy skipped.
#[derive(Debug, Default)]
pub struct Copied {
    /// Files copied.
    pub files: usize,
    /// Symlinks left out (they lead outside the tree, or are absolute), as relative paths.
    pub skipped_links: Vec<String>,
}

/// Copy the tree `src` into `dst` (which exists): regular files and directories, relative
/// symlinks that stay inside `src`; never `.git`, special files or links leading out. At most
/// 20,000 files and 512 MiB.
pub fn copy_tree(src: &Path, dst: &Path) -> Result<Copied> {
    let root = std::fs::canonicalize(src).map_err(|e| ConfigError::read(src, e))?;
    let mut copied = Copied::default();
    let mut bytes = 0u64;
    copy_dir(&root, &root, dst, &mut copied, &mut bytes)?;
    Ok(copied)
}

fn copy_dir(
    root: &Path,
    dir: &Path,
    dst: &Path,
    copied: &mut Copied,
    bytes: &mut u64,
) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| ConfigError::read(dir, e))?;
    let mut entries: Vec<_> = entries.filter_map(std::result::Result::ok).collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        let name = entry.file_name();
        if name == ".git" {
            continue;
        }
        let from = entry.path();
        let to = dst.join(&name);
        let kind = entry.file_type().map_err(|e| ConfigError::read(&from, e))?;
        let rel = || {
            from.strip_prefix(root)
                .unwrap_or(&from)
                .display()
                .to_string()
        };
        if kind.is_symlink() {
            let target = std::fs::read_link(&from).map_err(|e| ConfigError::read(&from, e))?;
            let inside = !target.is_absolute()
                && std::fs::canonicalize(&from).is_ok_and(|real| real.starts_with(root));
            if inside {
                std::os::unix::fs::symlink(&target, &to)
                    .map_err(|e| ConfigError::io(format!("cannot create {}", to.display()), e))?;
            } else {
                copied.skipped_links.push(rel());
            }
        } else if kind.is_dir() {
            std::fs::create_dir(&to)
                .map_err(|e| ConfigError::io(format!("cannot create {}", to.display()), e))?;
            copy_dir(root, &from, &to, copied, bytes)?;
        } else if kind.is_file() {
            copied.files += 1;
            *bytes += entry.metadata().map(|m| m.len()).unwrap_or(0);
            if copied.files > MAX_FILES || *bytes > MAX_BYTES {
                return Err(ConfigError::invalid(format!(
                    "{} holds more than {MAX_FILES} files or {} MiB; not copied",
                    root.display(),
                    MAX_BYTES / (1024 * 1024)
                )));
            }
            std::fs::copy(&from, &to).map_err(|e| {
                ConfigError::io(
                    format!("cannot copy {} to {}", from.display(), to.display()),
                    e,
                )
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn both_installed_formats_read() {
        let v1 = json!({"version": 1, "plugins": {"a@m": {"version": "1.0.0",
            "installPath": "/c/a", "gitCommitSha": "abc", "isLocal": false}}});
        let i = Installed::from_value(&v1);
        assert_eq!(i.get("a@m").unwrap().install_path, PathBuf::from("/c/a"));
        let v2 = json!({"version": 2, "plugins": {"b@m": [{"scope": "project",
            "installPath": "/c/b"}], "bad@m": [{"nope": 1}]}});
        let i = Installed::from_value(&v2);
        assert_eq!(i.get("b@m").unwrap().scope, "project");
        assert!(i.get("bad@m").is_none());
    }

    #[test]
    fn copies_keep_inside_links_and_drop_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        std::fs::create_dir_all(src.join("a/.git")).unwrap();
        std::fs::write(src.join("a/f.txt"), "f").unwrap();
        std::fs::write(src.join("a/.git/config"), "x").unwrap();
        std::fs::write(dir.path().join("secret"), "s").unwrap();
        std::os::unix::fs::symlink("a/f.txt", src.join("inside")).unwrap();
        std::os::unix::fs::symlink("../secret", src.join("escape")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret"), src.join("abs")).unwrap();
        let dst = dir.path().join("dst");
        std::fs::create_dir(&dst).unwrap();
        let c = copy_tree(&src, &dst).unwrap();
        assert_eq!(c.files, 1);
        assert_eq!(c.skipped_links, ["abs", "escape"]);
        assert_eq!(std::fs::read_to_string(dst.join("inside")).unwrap(), "f");
        assert!(!dst.join("a/.git").exists() && !dst.join("escape").exists());
    }

    #[test]
    fn staging_is_removed_unless_kept() {
        let dir = tempfile::tempdir().unwrap();
        let home = PluginHome::new(dir.path());
        let s = home.staging().unwrap();
        let p = s.path().to_path_buf();
        assert!(p.is_dir());
        drop(s);
        assert!(!p.exists());
        let s = home.staging().unwrap();
        let kept = s.keep();
        assert!(kept.is_dir());
    }
}
