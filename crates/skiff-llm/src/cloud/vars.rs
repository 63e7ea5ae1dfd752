//! The variables a cloud provider reads, captured once from the caller's lookup (the process
//! environment, or skiff's settings with their `.env` files and `env` objects), so that
//! nothing reads the process environment behind the caller's back.

use std::collections::HashMap;
use std::path::PathBuf;

/// A snapshot of named variables (empty values count as unset).
#[derive(Debug, Clone, Default)]
pub(crate) struct Vars {
    map: HashMap<String, String>,
}

impl Vars {
    /// Capture `names` from `get`.
    pub(crate) fn capture<'a>(
        get: &dyn Fn(&str) -> Option<String>,
        names: impl IntoIterator<Item = &'a str>,
    ) -> Self {
        let map = names
            .into_iter()
            .filter_map(|n| {
                get(n)
                    .map(|v| v.trim().to_owned())
                    .filter(|v| !v.is_empty())
                    .map(|v| (n.to_owned(), v))
            })
            .collect();
        Self { map }
    }

    /// From pairs (tests).
    #[cfg(test)]
    pub(crate) fn from_pairs(pairs: &[(&str, &str)]) -> Self {
        Self {
            map: pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        }
    }

    /// The value of `name`, when set.
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.map.get(name).map(String::as_str)
    }

    /// Whether `name` is set to a true value (`1`, `true`, `yes`, `on`).
    pub(crate) fn flag(&self, name: &str) -> bool {
        self.get(name).is_some_and(is_true)
    }

    /// `$HOME`.
    pub(crate) fn home(&self) -> Option<PathBuf> {
        self.get("HOME").map(PathBuf::from)
    }

    /// A path variable, or `default` under `$HOME`.
    pub(crate) fn path_or_home(&self, name: &str, default: &str) -> Option<PathBuf> {
        match self.get(name) {
            Some(p) => Some(expand_home(p, self.home())),
            None => self.home().map(|h| h.join(default)),
        }
    }
}

/// `~/x` with `$HOME`.
pub(crate) fn expand_home(path: &str, home: Option<PathBuf>) -> PathBuf {
    match (path.strip_prefix("~/"), home) {
        (Some(rest), Some(h)) => h.join(rest),
        _ => PathBuf::from(path),
    }
}

/// A yes value of a switch variable.
pub(crate) fn is_true(v: &str) -> bool {
    matches!(
        v.trim().to_ascii_lowercase().as_str(),
        "1" | "true" | "yes" | "on"
    )
}
