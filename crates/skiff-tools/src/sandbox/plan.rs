//! What the helper is asked to do for one command, computed by skiff (which knows the
//! workspace, the settings and the session) and handed to the helper as JSON
//! (`__sandbox --plan JSON -- PROGRAM …`). The helper only carries it out.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{NetworkPolicy, SandboxMode};

/// One command's sandbox.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Plan {
    /// Landlock: `off`, `workspace-write` or `read-only`.
    #[serde(with = "as_name")]
    pub fs: SandboxMode,
    /// Where `workspace-write` allows writes (the workspace roots; the temp directories and
    /// device files are added by the helper).
    #[serde(default)]
    pub write: Vec<PathBuf>,
    /// The network policy.
    #[serde(with = "as_name")]
    pub network: NetworkPolicy,
    /// The namespace layer; `None` runs under Landlock (and seccomp) only.
    #[serde(default)]
    pub namespaces: Option<Mounts>,
}

/// The namespace layer: what the mount namespace shows, and the way out of the network one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Mounts {
    /// Bound onto themselves (writable), so they cannot be renamed or removed: the `.git`
    /// directory, whose config and hooks are read-only inside it.
    #[serde(default)]
    pub pin: Vec<PathBuf>,
    /// Existing files and directories made read-only.
    #[serde(default)]
    pub read_only: Vec<PathBuf>,
    /// Covered: a directory by an empty read-only directory, anything else by an empty file
    /// (secrets, Unix sockets outside the workspace).
    #[serde(default)]
    pub hide: Vec<PathBuf>,
    /// Shown again, read-only, inside a hidden directory (`~/.ssh/known_hosts`, skiff's git
    /// wrapper, an allowed socket).
    #[serde(default)]
    pub expose: Vec<PathBuf>,
    /// Directories replaced by an empty writable one (`/run`, whose sockets lead outside).
    #[serde(default)]
    pub empty: Vec<PathBuf>,
    /// Sockets outside the sandbox its commands may connect to
    /// (`sandbox.network.allowUnixSockets`; see [`super::sockets`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sockets: Vec<PathBuf>,
    /// The way out of the network namespace (`network: proxy`).
    #[serde(default)]
    pub proxy: Option<ProxyPlan>,
    /// Set up everything, run nothing (the namespace probe).
    #[serde(default)]
    pub probe: bool,
}

/// The relay inside the network namespace and the proxy it leads to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProxyPlan {
    /// skiff's proxy, a Unix socket outside the sandbox.
    pub socket: PathBuf,
    /// Names this command to the proxy (first line of each connection).
    pub token: String,
    /// Host loopback ports forwarded into the sandbox's own loopback (`localhost:5432` in
    /// `allowedDomains`): the relay listens on `127.0.0.1:PORT` inside and asks the proxy for
    /// `HOST:PORT`.
    #[serde(default)]
    pub forward: Vec<Forward>,
    /// The helper program, for git's ssh ProxyCommand (`HELPER __connect %h %p`).
    pub connect: PathBuf,
}

/// One forwarded port.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Forward {
    /// The host the proxy connects to.
    pub host: String,
    /// The port, the same inside and outside.
    pub port: u16,
}

impl Plan {
    /// The plan as the helper's `--plan` argument.
    pub fn to_arg(&self) -> String {
        // Serialising plain data cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Read a `--plan` argument.
    pub fn from_arg(text: &str) -> Result<Self, String> {
        serde_json::from_str(text).map_err(|e| format!("invalid --plan: {e}"))
    }
}

/// Serde for the setting enums by their names.
mod as_name {
    use std::fmt::Display;
    use std::str::FromStr;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<T: Display, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(v)
    }

    pub(super) fn deserialize<'de, T, D>(d: D) -> Result<T, D::Error>
    where
        T: FromStr<Err = String>,
        D: Deserializer<'de>,
    {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_round_trip() {
        let plan = Plan {
            fs: SandboxMode::WorkspaceWrite,
            write: vec!["/w".into()],
            network: NetworkPolicy::Proxy,
            namespaces: Some(Mounts {
                pin: vec!["/w/.git".into()],
                read_only: vec!["/w/.git/config".into()],
                hide: vec!["/home/u/.ssh".into()],
                expose: vec!["/home/u/.ssh/known_hosts".into()],
                empty: vec!["/run".into()],
                sockets: vec!["/run/user/1000/agent.sock".into()],
                proxy: Some(ProxyPlan {
                    socket: "/tmp/p.sock".into(),
                    token: "t".into(),
                    forward: vec![Forward {
                        host: "localhost".into(),
                        port: 5432,
                    }],
                    connect: "/bin/skiff-sandbox".into(),
                }),
                probe: false,
            }),
        };
        let arg = plan.to_arg();
        assert!(
            arg.contains("\"workspace-write\"") && arg.contains("\"proxy\""),
            "{arg}"
        );
        assert_eq!(Plan::from_arg(&arg), Ok(plan));
        assert!(Plan::from_arg(r#"{"fs":"nope","network":"deny"}"#).is_err());
        assert!(Plan::from_arg(r#"{"fs":"off","network":"deny","bogus":1}"#).is_err());
    }
}
