//! WebFetch's limits and allowances, part of the tools' configuration.

use std::time::Duration;

/// Limits and allowances of WebFetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebFetchConfig {
    /// Hosts that may be private, loopback or link-local (exact names, `*.domain`; plain
    /// http is not upgraded for them).
    pub allow_private_hosts: Vec<String>,
    /// The whole fetch, redirects included (60 s).
    pub timeout: Duration,
    /// Largest response body (10 MB).
    pub max_bytes: usize,
    /// Characters of page text the small model is given per call (100,000).
    pub max_markdown_chars: usize,
    /// Characters of page text returned per call when there is no small model (36,000: a
    /// result under the default 40,000-character cap, so the paging note survives).
    pub raw_chars: usize,
    /// Same-host redirects followed (10).
    pub max_redirects: usize,
}

impl Default for WebFetchConfig {
    fn default() -> Self {
        Self {
            allow_private_hosts: Vec::new(),
            timeout: Duration::from_secs(60),
            max_bytes: 10 * 1024 * 1024,
            max_markdown_chars: 100_000,
            raw_chars: 36_000,
            max_redirects: 10,
        }
    }
}
