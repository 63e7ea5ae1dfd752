//! What can go wrong while configuring a session, as a front end shows it: a mistake in the
//! request (a flag, an option: [`ConfigError::Usage`]), a bad file, setting or variable
//! ([`ConfigError::Invalid`]), or a file that cannot be read or written ([`ConfigError::Io`]).

use std::path::Path;

/// A configuration error; its text says what happened and what to do.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The request is wrong (a command line exits with status 2 for it).
    #[error("{0}")]
    Usage(String),
    /// A settings file, a setting, a variable or a referenced file is wrong.
    #[error("{0}")]
    Invalid(String),
    /// The workspace sets where the API key goes, and the user has not confirmed that host.
    #[error(transparent)]
    UnconfirmedBaseUrl(#[from] UnconfirmedBaseUrl),
    /// Reading or writing failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

impl ConfigError {
    /// A usage error.
    pub fn usage(text: impl Into<String>) -> Self {
        Self::Usage(text.into())
    }

    /// An invalid-configuration error.
    pub fn invalid(text: impl Into<String>) -> Self {
        Self::Invalid(text.into())
    }

    /// An I/O error while doing `what`.
    pub fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        Self::Io {
            what: what.into(),
            source,
        }
    }

    /// An I/O error about `path`: "cannot read PATH".
    pub fn read(path: &Path, source: std::io::Error) -> Self {
        Self::io(format!("cannot read {}", path.display()), source)
    }

    /// Whether this is a usage error.
    pub fn is_usage(&self) -> bool {
        matches!(self, Self::Usage(_))
    }
}

impl From<skiff_llm::ConfigError> for ConfigError {
    fn from(e: skiff_llm::ConfigError) -> Self {
        Self::Invalid(e.to_string())
    }
}

impl From<skiff_llm::LlmError> for ConfigError {
    fn from(e: skiff_llm::LlmError) -> Self {
        Self::Invalid(e.to_string())
    }
}

/// `ConfigError::Invalid(format!(…))`.
macro_rules! invalid {
    ($($t:tt)*) => { $crate::error::ConfigError::Invalid(format!($($t)*)) };
}
pub(crate) use invalid;

/// `return Err(ConfigError::Invalid(format!(…)))`.
macro_rules! bail {
    ($($t:tt)*) => { return Err($crate::error::ConfigError::Invalid(format!($($t)*))) };
}
pub(crate) use bail;

/// Results of this crate.
pub type Result<T, E = ConfigError> = std::result::Result<T, E>;

/// A base URL the workspace's own files set, while the key comes from elsewhere.
#[derive(Debug, thiserror::Error)]
#[error(
    "the workspace sets the API base URL (in {file}) to host {host}, but your API key comes from \
     elsewhere: skiff would send your key to {host}. If you trust that host, confirm with \
     --trust-base-url {host} (the REPL asks), or remove {var} from {file}"
)]
pub struct UnconfirmedBaseUrl {
    /// The host the key would go to.
    pub host: String,
    /// The workspace file that sets it.
    pub file: String,
    /// The variable or setting in it.
    pub var: &'static str,
}
