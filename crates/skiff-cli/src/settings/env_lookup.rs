//! Variable lookup for the provider and the settings' environment layer: the real environment,
//! then the workspace `.env`, then `$SKIFF_HOME/.env`, then the settings files' `env` objects.
//! Nothing is written to the process environment.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::bail;

use super::{Source, Sourced};

/// Where a variable was set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvOrigin {
    /// The process environment.
    Process,
    /// A `.env` file.
    DotEnv(PathBuf),
    /// The `env` object of a settings file (or `--settings`).
    Settings(Box<Source>),
}

/// Variables by name with their origin, highest precedence already applied. Empty values count
/// as unset. `Debug` shows names only: values may be secrets.
#[derive(Clone, Default)]
pub struct EnvLookup {
    vars: HashMap<String, (String, EnvOrigin)>,
}

impl fmt::Debug for EnvLookup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<&String> = self.vars.keys().collect();
        names.sort();
        f.debug_struct("EnvLookup")
            .field("names", &names)
            .finish_non_exhaustive()
    }
}

impl EnvLookup {
    /// Build from the layers, each given lowest precedence first in the argument order reversed:
    /// `process` wins over `dotenvs` (in order: the first wins), which win over `settings_env`.
    pub fn build(
        process: &HashMap<String, String>,
        dotenvs: &[(PathBuf, HashMap<String, String>)],
        settings_env: &BTreeMap<String, Sourced<String>>,
    ) -> Self {
        let mut vars = HashMap::new();
        let mut put = |k: &str, v: &str, origin: EnvOrigin| {
            if !v.trim().is_empty() {
                vars.insert(k.to_owned(), (v.to_owned(), origin));
            }
        };
        for (k, v) in settings_env {
            put(k, &v.value, EnvOrigin::Settings(Box::new(v.source.clone())));
        }
        for (path, file) in dotenvs.iter().rev() {
            for (k, v) in file {
                put(k, v, EnvOrigin::DotEnv(path.clone()));
            }
        }
        for (k, v) in process {
            put(k, v, EnvOrigin::Process);
        }
        Self { vars }
    }

    /// The value of `key`, if set and non-empty.
    pub fn get(&self, key: &str) -> Option<String> {
        self.vars.get(key).map(|(v, _)| v.clone())
    }

    /// Where `key` was set.
    pub fn source(&self, key: &str) -> Option<Source> {
        self.vars.get(key).map(|(_, origin)| Source::Env {
            var: key.to_owned(),
            origin: origin.clone(),
        })
    }
}

/// Parse a `.env` file without touching the process environment; `None` when it does not exist.
/// A bad line is reported by number only, never by content (it may hold a secret).
pub(super) fn read_dotenv(path: &Path) -> anyhow::Result<Option<HashMap<String, String>>> {
    let iter = match dotenvy::from_path_iter(path) {
        Ok(it) => it,
        Err(dotenvy::Error::Io(e)) if super::is_absent(&e) => return Ok(None),
        Err(e) => bail!("cannot read {}: {}", path.display(), describe(&e, path)),
    };
    let mut vars = HashMap::new();
    for item in iter {
        match item {
            Ok((k, v)) => {
                vars.insert(k, v);
            }
            Err(e) => bail!(
                "invalid .env file {}: {}. Fix or remove that line",
                path.display(),
                describe(&e, path)
            ),
        }
    }
    tracing::debug!(path = %path.display(), count = vars.len(), "loaded .env file");
    Ok(Some(vars))
}

/// A dotenvy error without the offending text.
fn describe(e: &dotenvy::Error, path: &Path) -> String {
    match e {
        dotenvy::Error::LineParse(line, _) => {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            match text.find(line.as_str()) {
                Some(at) => format!(
                    "line {} is not KEY=VALUE",
                    text[..at].matches('\n').count() + 1
                ),
                None => "a line is not KEY=VALUE".to_owned(),
            }
        }
        dotenvy::Error::Io(io) => io.to_string(),
        _ => "it could not be parsed".to_owned(),
    }
}
