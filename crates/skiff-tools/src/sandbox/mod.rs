//! The Bash tool's sandbox: what contains the commands skiff runs without asking.
//!
//! Commands start through a small helper — `skiff-sandbox` beside skiff, or skiff itself
//! re-executed as `skiff __sandbox …` — that confines itself and then runs the shell; skiff's
//! own process is never restricted. On Linux, in layers (see [`helper`]):
//!
//! - **Namespaces** ([`namespaces`]): a mount, PID and IPC namespace of its own per command, in
//!   a user and network namespace of the session's (created once by the session's [`zygote`],
//!   which forks each command's helper; a helper started per command makes its own). Inside, the files that make programs run later (git config and hooks, agent
//!   and editor settings, shell start-up files: [`protected`](crate::protected)) are read-only
//!   mounts; the user's secrets ([`paths::default_deny_read`], `sandbox.filesystem.denyRead`,
//!   `Read(…)` deny rules) and the Unix sockets skiff knows of are covered by empty mounts
//!   (and no socket the sandbox did not make can be connected to: [`sockets`]);
//!   `/proc` is private and `/dev` holds only the usual pseudo-devices; every process of the
//!   command dies when its first process (the helper, PID 1 inside) ends, and that one dies
//!   with skiff. The only way out of the network namespace is skiff's proxy ([`proxy`]),
//!   reached over a Unix socket by a relay inside ([`relay`]), which lets through the domains
//!   the user allowed and asks about the others.
//! - **Landlock** (filesystem writes: the workspace roots, the temp directories, the device
//!   files) and, where namespaces are missing, a **seccomp** filter for `--sandbox-network
//!   deny` ([`landlock`]).
//!
//! Only where every layer is in force do commands run without approval
//! ([`SandboxStatus::contained`]); where namespaces are unavailable, commands still run under
//! Landlock but are asked about.

#[cfg(target_os = "linux")]
mod armed;
mod domains;
mod helper;
mod journal;
mod landlock;
#[cfg(target_os = "linux")]
pub(crate) mod lifeline;
#[cfg(target_os = "linux")]
mod namespaces;
pub mod paths;
mod plan;
mod probe;
pub mod proxy;
mod relay;
mod request;
mod runtime;
pub mod socket_dirs;
#[cfg(target_os = "linux")]
mod sockets;
mod status;
#[cfg(target_os = "linux")]
mod unix_diag;
#[cfg(target_os = "linux")]
mod zygote;
#[cfg(target_os = "linux")]
pub(crate) mod zygote_client;

pub use domains::{DomainPattern, DomainRules};
pub use helper::{connect_main, helper_main};
pub use plan::Plan;
pub use probe::{NamespaceSupport, Probe, ProbeCache};
pub use proxy::{NetworkAnswer, NetworkApprover, NetworkRequest};
pub use relay::CONNECT_ARG;
pub use runtime::{CallRequest, PreparedCall, SandboxRuntime, SandboxSettings};
pub use status::{SandboxPolicy, SandboxStatus};

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

/// The first argument that makes skiff act as the sandbox helper.
pub const HELPER_ARG: &str = "__sandbox";

/// The variable that makes Landlock look unavailable (a test hook).
pub const SIMULATE_UNSUPPORTED_VAR: &str = "SKIFF_SANDBOX_SIMULATE_UNSUPPORTED";

/// The variable that makes namespaces look unavailable (a test hook).
pub const SIMULATE_NO_NAMESPACES_VAR: &str = "SKIFF_SANDBOX_SIMULATE_NO_NAMESPACES";

/// The variable that holds the namespace probe back until the file it names exists (a test
/// hook: what must not wait for the probe goes on meanwhile; the probe's own time limit still
/// applies).
pub const PROBE_AFTER_VAR: &str = "SKIFF_SANDBOX_PROBE_AFTER";

/// The variable that makes every sandboxed command start a helper of its own instead of asking
/// the session's zygote (for comparison, and a way around a zygote that misbehaves).
pub const NO_ZYGOTE_VAR: &str = "SKIFF_SANDBOX_NO_ZYGOTE";

/// The variable by which skiff tells a helper started for a background command which
/// namespaces to join: the session's user and network namespaces, those of the zygote's first
/// process (`PID:USER_NS_INODE:NET_NS_INODE`), so that its servers are reached by the
/// session's other commands (and theirs by it) over the loopback and by their sockets.
pub(crate) const JOIN_VAR: &str = "SKIFF_SANDBOX_JOIN";

/// The variable that makes the session's zygote start every command from a fresh fork, none
/// from a spare forked ahead (for comparison, and a way around a spare that misbehaves).
pub const NO_SPARE_VAR: &str = "SKIFF_SANDBOX_NO_SPARE";

/// The variable that keeps a spare from building the last command's plan ahead
/// (`SKIFF_SANDBOX_AHEAD=off`), or from restricting itself for it ahead (`mounts`: Landlock
/// and the capabilities wait for the command). For comparison, and a way around a build that
/// misbehaves.
pub const AHEAD_VAR: &str = "SKIFF_SANDBOX_AHEAD";

/// Device files a sandboxed command may always write (shells redirect to them).
pub const DEVICE_FILES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// Temp directories writable in `workspace-write` mode (with `$TMPDIR`).
pub const TEMP_DIRS: &[&str] = &["/tmp", "/var/tmp", "/dev/shm"];

/// Exit status of the helper when it cannot set the sandbox up (the command did not run).
pub const SETUP_FAILED: u8 = 126;

/// Filesystem confinement of Bash commands (`sandbox.mode`, `--sandbox`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SandboxMode {
    /// No sandbox at all.
    Off,
    /// Writes only in the workspace roots, the temp directories and the device files.
    #[default]
    WorkspaceWrite,
    /// No writes except to the device files.
    ReadOnly,
}

/// Network access of sandboxed commands (`sandbox.network`, `--sandbox-network`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NetworkPolicy {
    /// Commands use the host's network, unfiltered.
    Allow,
    /// Only loopback inside the sandbox; outbound connections go through skiff's proxy, which
    /// lets through `sandbox.network.allowedDomains` and asks about the rest.
    #[default]
    Proxy,
    /// Only loopback inside the sandbox (and Unix sockets).
    Deny,
}

/// What happens when Landlock cannot enforce the requested mode (`sandbox.fallback`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SandboxFallback {
    /// Warn once and run commands without the filesystem sandbox (they are asked about).
    #[default]
    Unsandboxed,
    /// Bash calls fail with an explanation.
    Refuse,
}

macro_rules! names {
    ($ty:ty, $what:literal, $($variant:ident = $name:literal),+) => {
        impl $ty {
            /// The accepted names.
            pub const NAMES: &'static [&'static str] = &[$($name),+];

            /// The setting's name of this value.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $name),+
                }
            }
        }

        impl FromStr for $ty {
            type Err = String;

            fn from_str(s: &str) -> Result<Self, String> {
                match s.trim() {
                    $($name => Ok(Self::$variant),)+
                    other => Err(format!(
                        "unknown {} {other:?}; one of {}",
                        $what,
                        Self::NAMES.join(", ")
                    )),
                }
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

names!(
    SandboxMode,
    "sandbox mode",
    Off = "off",
    WorkspaceWrite = "workspace-write",
    ReadOnly = "read-only"
);
names!(
    NetworkPolicy,
    "sandbox network policy",
    Allow = "allow",
    Proxy = "proxy",
    Deny = "deny"
);
names!(
    SandboxFallback,
    "sandbox fallback",
    Unsandboxed = "unsandboxed",
    Refuse = "refuse"
);

/// What the running kernel's Landlock can do for the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LandlockSupport {
    /// Every restriction the sandbox uses is enforced (Landlock ABI 3 or later: Linux 6.2+).
    Full,
    /// Landlock works but cannot restrict file truncation (ABI 1 or 2: Linux 5.13 to 6.1).
    Partial,
    /// No Landlock: not built into the kernel, not enabled at boot, or not Linux.
    Unavailable,
}

impl LandlockSupport {
    /// `full`, `partial` or `unavailable`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Full => "full",
            Self::Partial => "partial",
            Self::Unavailable => "unavailable",
        }
    }
}

impl fmt::Display for LandlockSupport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Full => "Landlock supported",
            Self::Partial => {
                "Landlock partially supported (this kernel cannot restrict file truncation; Linux 6.2 can)"
            }
            Self::Unavailable => "Landlock not available in this kernel",
        })
    }
}

fn flag_var(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|v| !v.is_empty() && v != "0")
}

fn simulate_unsupported() -> bool {
    flag_var(SIMULATE_UNSUPPORTED_VAR)
}

/// What the running kernel supports, asked without restricting anything (a ruleset is created
/// and closed). Honours [`SIMULATE_UNSUPPORTED_VAR`].
pub fn landlock_support() -> LandlockSupport {
    if simulate_unsupported() {
        return LandlockSupport::Unavailable;
    }
    landlock::support()
}

/// How the Bash tool runs commands when a sandbox is configured (`ToolConfig::sandbox`).
#[derive(Debug, Clone)]
pub struct SandboxConfig {
    /// The program that understands `__sandbox` (`skiff-sandbox`, or skiff's own executable).
    pub helper: PathBuf,
    /// Filesystem confinement.
    pub filesystem: SandboxMode,
    /// Network policy.
    pub network: NetworkPolicy,
    /// When set, every Bash call fails with this text instead of running.
    pub refused: Option<String>,
    /// The session's sandbox state (namespaces, proxy, protected and secret paths); `None`
    /// runs commands under Landlock (and seccomp) only.
    pub runtime: Option<Arc<SandboxRuntime>>,
}

impl SandboxStatus {
    /// What the Bash tool needs, with `helper` as the helper program and `runtime` the
    /// session's sandbox state (namespaces); `None` when commands run directly.
    pub fn config(
        &self,
        helper: PathBuf,
        runtime: Option<Arc<SandboxRuntime>>,
    ) -> Option<SandboxConfig> {
        self.applies().then(|| SandboxConfig {
            helper,
            filesystem: self.filesystem,
            network: self.network,
            refused: self.refused.clone(),
            runtime,
        })
    }
}

impl PartialEq for SandboxConfig {
    fn eq(&self, other: &Self) -> bool {
        self.helper == other.helper
            && self.filesystem == other.filesystem
            && self.network == other.network
            && self.refused == other.refused
            && match (&self.runtime, &other.runtime) {
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                (None, None) => true,
                _ => false,
            }
    }
}

impl SandboxConfig {
    /// The line added to a failed command's result when its output looks like the sandbox
    /// stopped it.
    pub fn failure_note(&self, output: &str) -> Option<String> {
        let fs_blocked = self.filesystem != SandboxMode::Off
            && (output.contains("Permission denied")
                || output.contains("Read-only file system")
                || output.contains("Device or resource busy"));
        let net_blocked = self.network != NetworkPolicy::Allow
            && [
                "Operation not permitted",
                "Could not resolve host",
                "Temporary failure in name resolution",
                "Name or service not known",
                "Network is unreachable",
                "getaddrinfo",
                "Connection refused",
            ]
            .iter()
            .any(|t| output.contains(t));
        if !fs_blocked && !net_blocked {
            return None;
        }
        let fs = match self.filesystem {
            SandboxMode::Off => None,
            SandboxMode::WorkspaceWrite => Some(
                "writes outside the workspace and temp directories are blocked; git hooks and \
                 config, .claude/, .mcp.json, editor settings and shell start-up files are \
                 read-only",
            ),
            SandboxMode::ReadOnly => Some("all file writes are blocked (read-only mode)"),
        };
        let network = match self.network {
            NetworkPolicy::Allow => "network: allowed",
            NetworkPolicy::Proxy => {
                "network: only through skiff's proxy (HTTP_PROXY/HTTPS_PROXY/ALL_PROXY are set), \
                 to the domains in sandbox.network.allowedDomains"
            }
            NetworkPolicy::Deny => "network: denied",
        };
        Some(match fs {
            Some(fs) => format!("(skiff sandbox: {fs}; {network})"),
            None => format!("(skiff sandbox: {network})"),
        })
    }
}

/// The paths a command may write under `mode`: the device files, and for `workspace-write` the
/// given roots and the temp directories (`$TMPDIR` included).
pub fn writable_paths(mode: SandboxMode, roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    if mode == SandboxMode::Off {
        return out;
    }
    out.extend(DEVICE_FILES.iter().map(PathBuf::from));
    if mode == SandboxMode::WorkspaceWrite {
        out.extend(roots.iter().cloned());
        out.extend(temp_dirs());
    }
    out
}

/// The temp directories: [`TEMP_DIRS`] and `$TMPDIR` (when absolute and not one of them).
pub fn temp_dirs() -> Vec<PathBuf> {
    temp_dirs_with(std::env::var_os("TMPDIR"))
}

/// [`temp_dirs`] for a given `$TMPDIR`. A `$TMPDIR` that names one of [`TEMP_DIRS`] (`/tmp/`,
/// or a link to it) is not listed twice: each would otherwise be scanned and granted twice.
fn temp_dirs_with(tmpdir: Option<std::ffi::OsString>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = TEMP_DIRS.iter().map(PathBuf::from).collect();
    let Some(tmp) = tmpdir.map(PathBuf::from).filter(|t| t.is_absolute()) else {
        return out;
    };
    // `Path`'s equality compares components: `/tmp/` and `//tmp` are `/tmp`.
    if out.contains(&tmp) {
        return out;
    }
    use std::os::unix::fs::MetadataExt;
    let id = |p: &Path| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
    if let Some(this) = id(&tmp)
        && out.iter().any(|known| id(known) == Some(this))
    {
        return out;
    }
    out.push(tmp);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tmpdir_naming_a_temp_directory_is_listed_once() {
        let base: Vec<PathBuf> = TEMP_DIRS.iter().map(PathBuf::from).collect();
        assert_eq!(temp_dirs_with(None), base);
        assert_eq!(temp_dirs_with(Some("/tmp/".into())), base);
        assert_eq!(temp_dirs_with(Some("//var/tmp".into())), base);
        assert_eq!(temp_dirs_with(Some("relative/tmp".into())), base);
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("tmp-link");
        std::os::unix::fs::symlink("/tmp", &link).unwrap();
        assert_eq!(temp_dirs_with(Some(link.clone().into())), base);
        let own = dir.path().join("own");
        std::fs::create_dir(&own).unwrap();
        let mut with_own = base.clone();
        with_own.push(own.clone());
        assert_eq!(temp_dirs_with(Some(own.into())), with_own);
        // A `$TMPDIR` that does not exist (yet) is still listed.
        let missing = dir.path().join("missing");
        let mut with_missing = base;
        with_missing.push(missing.clone());
        assert_eq!(temp_dirs_with(Some(missing.into())), with_missing);
    }

    #[test]
    fn names_round_trip() {
        for name in SandboxMode::NAMES {
            assert_eq!(
                name.parse::<SandboxMode>().map(SandboxMode::as_str),
                Ok(*name)
            );
        }
        assert_eq!("deny".parse(), Ok(NetworkPolicy::Deny));
        assert_eq!("proxy".parse(), Ok(NetworkPolicy::Proxy));
        assert_eq!(NetworkPolicy::default(), NetworkPolicy::Proxy);
        assert_eq!("refuse".parse(), Ok(SandboxFallback::Refuse));
        let err = "none".parse::<SandboxMode>().unwrap_err();
        assert!(err.contains("off, workspace-write, read-only"), "{err}");
    }
}
