//! Claude Code's plugins, in its formats, so that published plugins and marketplaces work
//! unchanged: a plugin is a directory with an optional `.claude-plugin/plugin.json`
//! ([`manifest`]) and its components ([`components`]: `commands/`, `agents/`,
//! `skills/<name>/SKILL.md`, `hooks/hooks.json`, `.mcp.json`); a marketplace is a
//! `.claude-plugin/marketplace.json` listing plugins and where to get them ([`marketplace`]), in
//! a local directory or a git repository ([`source`], [`git`]). Marketplaces are added and
//! plugins installed — copied into skiff's home, pinned to the commit they came from — by
//! [`install`], with the records of [`store`]; which plugins are on is `enabledPlugins` of the
//! settings scopes Claude Code uses ([`enable`]); [`load`] gives a session the enabled
//! plugins' commands, skills, agents, hooks and MCP servers.

pub mod components;
pub mod enable;
pub mod git;
pub mod install;
pub mod load;
pub mod manifest;
pub mod marketplace;
pub mod registry;
pub mod source;
pub mod store;
pub mod summary;

use std::fmt;

use crate::error::{ConfigError, Result};

pub use components::{LoadedPlugin, load_plugin};
pub use load::{SessionPlugins, session_plugins};

/// The longest plugin or marketplace name.
const MAX_NAME: usize = 64;

/// Whether `name` can name a plugin or a marketplace: 1-64 ASCII letters, digits, `-`, `_`
/// and `.`, starting with a letter or digit (it becomes a directory name and the
/// `plugin-name:` of commands).
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && !name.contains("..")
}

/// The error for a name [`valid_name`] refuses.
pub(crate) fn check_name(name: &str, what: &str) -> Result<()> {
    if valid_name(name) {
        Ok(())
    } else {
        Err(ConfigError::invalid(format!(
            "{what} name {name:?} is not valid: use 1-{MAX_NAME} letters, digits, '-', '_' or \
             '.', starting with a letter or digit"
        )))
    }
}

/// A plugin as `enabledPlugins` and `skiff plugin` name it: `name@marketplace`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PluginId {
    /// The plugin's name in its marketplace.
    pub name: String,
    /// The marketplace's name.
    pub marketplace: String,
}

impl PluginId {
    /// Parse `name@marketplace`; both parts must be valid names.
    pub fn parse(text: &str) -> Result<Self> {
        let Some((name, marketplace)) = text.trim().rsplit_once('@') else {
            return Err(ConfigError::usage(format!(
                "{text:?} is not a plugin id: write it as NAME@MARKETPLACE"
            )));
        };
        check_name(name, "plugin").map_err(|e| ConfigError::usage(e.to_string()))?;
        check_name(marketplace, "marketplace").map_err(|e| ConfigError::usage(e.to_string()))?;
        Ok(Self {
            name: name.to_owned(),
            marketplace: marketplace.to_owned(),
        })
    }
}

impl fmt::Display for PluginId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.name, self.marketplace)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn names_are_safe_as_directories() {
        for good in ["demo", "code-review", "a1", "x.y", "under_score"] {
            assert!(valid_name(good), "{good}");
        }
        for bad in [
            "", ".", "..", "../x", "a/b", "-x", ".hidden", "a..b", "a b", "é", "a:b",
        ] {
            assert!(!valid_name(bad), "{bad}");
        }
        assert!(!valid_name(&"a".repeat(65)));
    }

    #[test]
    fn ids_are_name_at_marketplace() {
        let id = PluginId::parse("demo@local-mkt").unwrap();
        assert_eq!(
            (id.name.as_str(), id.marketplace.as_str()),
            ("demo", "local-mkt")
        );
        assert_eq!(id.to_string(), "demo@local-mkt");
        for bad in ["demo", "@m", "d@", "../x@m", "d@../m"] {
            assert!(PluginId::parse(bad).unwrap_err().is_usage(), "{bad}");
        }
    }
}
