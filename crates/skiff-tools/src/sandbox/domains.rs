//! Which hosts sandboxed commands may reach through the proxy: `sandbox.network.allowedDomains`
//! (Claude Code's key), `WebFetch(domain:…)` allow rules, and what the user allowed during the
//! session.
//!
//! Entries: `example.com` (that host, any port), `*.example.com` (its subdomains), `*` (every
//! host), each optionally with `:PORT` (`localhost:5432`, `registry.npmjs.org:443`); IPv4 and
//! bracketed IPv6 literals (`127.0.0.1:8080`, `[::1]:3000`). Case and a trailing dot do not
//! matter; a scheme or path around an entry (`https://example.com/`) is dropped.

use std::collections::HashSet;
use std::net::IpAddr;
use std::sync::RwLock;

/// One allowed host (or host pattern), optionally on one port.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DomainPattern {
    host: HostPattern,
    port: Option<u16>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum HostPattern {
    /// `*`.
    Any,
    /// An exact host name or address.
    Exact(String),
    /// `*.example.com`: strict subdomains of `example.com`.
    Subdomains(String),
}

impl DomainPattern {
    /// Parse an entry; the error says what is wrong with it.
    pub fn parse(entry: &str) -> Result<Self, String> {
        let mut text = entry.trim();
        if let Some((_, rest)) = text.split_once("://") {
            text = rest;
        }
        let text = text.split(['/', '?', '#']).next().unwrap_or("");
        if text.is_empty() {
            return Err(format!("{entry:?} names no host"));
        }
        let (host, port) = split_host_port(text)
            .ok_or_else(|| format!("{entry:?}: the port must be a number from 1 to 65535"))?;
        let raw = host.trim().to_ascii_lowercase();
        let pattern = if raw == "*" {
            HostPattern::Any
        } else if let Some(base) = raw.strip_prefix("*.") {
            let base = normalize(base);
            valid_name(&base).ok_or_else(|| format!("{entry:?} is not a valid domain pattern"))?;
            HostPattern::Subdomains(base)
        } else {
            let host = normalize(host);
            if host.parse::<IpAddr>().is_err() && valid_name(&host).is_none() {
                return Err(format!("{entry:?} is not a valid host name"));
            }
            HostPattern::Exact(host)
        };
        Ok(Self {
            host: pattern,
            port,
        })
    }

    /// Whether it allows `host` (normalised) on `port`.
    pub fn matches(&self, host: &str, port: u16) -> bool {
        if self.port.is_some_and(|p| p != port) {
            return false;
        }
        match &self.host {
            HostPattern::Any => true,
            HostPattern::Exact(h) => h == host,
            HostPattern::Subdomains(base) => host
                .strip_suffix(base.as_str())
                .is_some_and(|prefix| prefix.ends_with('.') && prefix.len() > 1),
        }
    }

    /// The entry names this host itself (not through `*` or a subdomain pattern): only such
    /// entries reach the host's loopback or link-local addresses.
    pub fn names(&self, host: &str) -> bool {
        matches!(&self.host, HostPattern::Exact(h) if h == host)
    }

    /// `(host, port)` when the entry is a loopback host with a port: that port is forwarded
    /// into the sandbox's own loopback, so clients need no proxy support.
    pub fn forwarded_port(&self) -> Option<(String, u16)> {
        match (&self.host, self.port) {
            (HostPattern::Exact(h), Some(p)) if is_loopback_name(h) => Some((h.clone(), p)),
            _ => None,
        }
    }
}

impl std::fmt::Display for DomainPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.host {
            HostPattern::Any => f.write_str("*")?,
            HostPattern::Exact(h) if h.contains(':') => write!(f, "[{h}]")?,
            HostPattern::Exact(h) => f.write_str(h)?,
            HostPattern::Subdomains(b) => write!(f, "*.{b}")?,
        }
        match self.port {
            Some(p) => write!(f, ":{p}"),
            None => Ok(()),
        }
    }
}

/// `host[:port]`, `[v6]:port` or a bare IPv6 address.
fn split_host_port(text: &str) -> Option<(&str, Option<u16>)> {
    if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        return match after.strip_prefix(':') {
            Some(p) => Some((host, Some(port(p)?))),
            None if after.is_empty() => Some((host, None)),
            None => None,
        };
    }
    if text.matches(':').count() > 1 {
        // A bare IPv6 address.
        return Some((text, None));
    }
    match text.split_once(':') {
        Some((host, p)) => Some((host, Some(port(p)?))),
        None => Some((text, None)),
    }
}

fn port(text: &str) -> Option<u16> {
    text.parse::<u16>().ok().filter(|p| *p > 0)
}

/// Lower case, without a trailing dot or IPv6 brackets.
pub(super) fn normalize(host: &str) -> String {
    host.trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase()
}

fn valid_name(name: &str) -> Option<()> {
    let ok = !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        });
    ok.then_some(())
}

/// `localhost`, `*.localhost`, or a loopback address.
pub(super) fn is_loopback_name(host: &str) -> bool {
    host == "localhost"
        || host.ends_with(".localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The allowed hosts of a session: the configured entries and what the user allowed since.
#[derive(Debug, Default)]
pub struct DomainRules {
    patterns: RwLock<Vec<DomainPattern>>,
    granted: RwLock<HashSet<DomainPattern>>,
}

impl DomainRules {
    /// Rules from configured entries; invalid entries are left out and described.
    pub fn new<'a>(entries: impl IntoIterator<Item = &'a str>) -> (Self, Vec<String>) {
        let mut patterns = Vec::new();
        let mut problems = Vec::new();
        for entry in entries {
            match DomainPattern::parse(entry) {
                Ok(p) if !patterns.contains(&p) => patterns.push(p),
                Ok(_) => {}
                Err(e) => problems.push(format!("sandbox.network.allowedDomains: {e}")),
            }
        }
        let rules = Self {
            patterns: RwLock::new(patterns),
            granted: RwLock::default(),
        };
        (rules, problems)
    }

    /// The entry that allows `host:port`, if any (configured entries first).
    pub fn allowing(&self, host: &str, port: u16) -> Option<DomainPattern> {
        let host = normalize(host);
        let configured = self
            .patterns
            .read()
            .ok()
            .and_then(|p| p.iter().find(|p| p.matches(&host, port)).cloned());
        configured.or_else(|| {
            self.granted
                .read()
                .ok()
                .and_then(|g| g.iter().find(|p| p.matches(&host, port)).cloned())
        })
    }

    /// Allow `host` for the rest of the session (on `port` only for a loopback host).
    pub fn grant(&self, host: &str, port: u16) -> DomainPattern {
        let host = normalize(host);
        let pattern = DomainPattern {
            port: is_loopback_name(&host).then_some(port),
            host: HostPattern::Exact(host),
        };
        if let Ok(mut g) = self.granted.write() {
            g.insert(pattern.clone());
        }
        pattern
    }

    /// The loopback ports forwarded into the sandbox.
    pub fn forwards(&self) -> Vec<(String, u16)> {
        let mut out: Vec<(String, u16)> = self
            .patterns
            .read()
            .map(|p| p.iter().filter_map(DomainPattern::forwarded_port).collect())
            .unwrap_or_default();
        out.sort();
        out.dedup_by_key(|(_, port)| *port);
        out
    }

    /// The configured entries, as written back (for status output).
    pub fn entries(&self) -> Vec<String> {
        self.patterns
            .read()
            .map(|p| p.iter().map(ToString::to_string).collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_match_hosts_and_ports() {
        let p = |s: &str| DomainPattern::parse(s).unwrap();
        assert!(p("Example.COM.").matches("example.com", 443));
        assert!(p("example.com").matches("example.com", 22));
        assert!(!p("example.com").matches("www.example.com", 443));
        assert!(p("*.example.com").matches("a.b.example.com", 443));
        assert!(!p("*.example.com").matches("example.com", 443));
        assert!(!p("*.example.com").matches("badexample.com", 443));
        assert!(p("localhost:5432").matches("localhost", 5432));
        assert!(!p("localhost:5432").matches("localhost", 5433));
        assert!(p("[::1]:80").matches("::1", 80));
        assert!(p("https://registry.npmjs.org/pkg").matches("registry.npmjs.org", 443));
        assert!(p("*").matches("anything.test", 1));
        for bad in ["", "exa mple.com", "host:0", "host:99999", "*.", "[::1"] {
            assert!(DomainPattern::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn rules_grant_and_forward() {
        let (rules, problems) = DomainRules::new(["github.com", "localhost:5432", "bad host"]);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(rules.allowing("GitHub.com", 443).is_some());
        assert!(rules.allowing("evil.test", 443).is_none());
        rules.grant("evil.test", 443);
        assert!(rules.allowing("evil.test", 80).is_some());
        rules.grant("127.0.0.1", 8080);
        assert!(rules.allowing("127.0.0.1", 8080).is_some());
        assert!(rules.allowing("127.0.0.1", 8081).is_none());
        assert_eq!(rules.forwards(), vec![("localhost".to_owned(), 5432)]);
        assert!(
            rules
                .allowing("localhost", 5432)
                .is_some_and(|p| p.names("localhost"))
        );
    }
}
