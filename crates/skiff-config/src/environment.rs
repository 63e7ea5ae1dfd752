//! The process environment a session is configured from, read once: the variables (with the
//! credentials a front end keeps aside), the user's home, skiff's home (`SKIFF_HOME`, or
//! `~/.skiff`) and Claude Code's directory (`CLAUDE_CONFIG_DIR`, or `~/.claude`).

use std::collections::HashMap;
use std::path::PathBuf;

/// A snapshot of the environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Environment {
    vars: HashMap<String, String>,
}

impl Environment {
    /// This process's environment (variables whose name and value are UTF-8).
    pub fn from_process() -> Self {
        Self::from_vars(
            std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
                .collect(),
        )
    }

    /// An environment of these variables (a front end's snapshot, or a test's).
    pub fn from_vars(vars: HashMap<String, String>) -> Self {
        Self { vars }
    }

    /// All variables.
    pub fn vars(&self) -> &HashMap<String, String> {
        &self.vars
    }

    /// A variable, when set and not empty.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// The user's home directory (`HOME`).
    pub fn home(&self) -> Option<PathBuf> {
        self.get("HOME").map(PathBuf::from)
    }

    /// skiff's home: `SKIFF_HOME`, or `~/.skiff`.
    pub fn skiff_home(&self) -> Option<PathBuf> {
        self.get("SKIFF_HOME")
            .map(PathBuf::from)
            .or_else(|| self.home().map(|h| h.join(".skiff")))
    }

    /// Claude Code's directory: `CLAUDE_CONFIG_DIR`, or `~/.claude`.
    pub fn claude_dir(&self) -> Option<PathBuf> {
        self.get("CLAUDE_CONFIG_DIR")
            .map(PathBuf::from)
            .or_else(|| self.home().map(|h| h.join(".claude")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn homes_resolve_once_from_the_variables() {
        let env = |pairs: &[(&str, &str)]| {
            Environment::from_vars(
                pairs
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            )
        };
        let e = env(&[("HOME", "/h")]);
        assert_eq!(e.skiff_home(), Some(PathBuf::from("/h/.skiff")));
        assert_eq!(e.claude_dir(), Some(PathBuf::from("/h/.claude")));
        let e = env(&[
            ("HOME", "/h"),
            ("SKIFF_HOME", "/s"),
            ("CLAUDE_CONFIG_DIR", ""),
        ]);
        assert_eq!(e.skiff_home(), Some(PathBuf::from("/s")));
        assert_eq!(e.claude_dir(), Some(PathBuf::from("/h/.claude")));
        assert_eq!(env(&[]).skiff_home(), None);
    }
}
