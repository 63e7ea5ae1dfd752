//! The Bash tool's sandbox (Linux). Commands run through a small helper — skiff itself,
//! re-executed as `skiff __sandbox …` — that confines its own process and then execs the
//! command; skiff's own process is never restricted and no `unsafe` code is needed.
//!
//! - Filesystem, with Landlock: everything stays readable. `workspace-write` allows writes in
//!   the workspace roots (the workspace and its extra directories), the temp directories
//!   (`/tmp`, `/var/tmp`, `/dev/shm`, `$TMPDIR`) and the device files shells use
//!   ([`DEVICE_FILES`]); `read-only` allows writes to those device files only. A blocked write
//!   fails with EACCES ("Permission denied").
//! - Network, with a seccomp filter: `deny` makes `socket(2)` and `socketpair(2)` fail with
//!   EPERM ("Operation not permitted") for every address family but `AF_UNIX` (local tools that
//!   talk over Unix sockets keep working), and `io_uring_setup(2)` too (io_uring could open
//!   sockets behind the filter's back).
//!
//! Landlock needs Linux 5.13; file truncation is restricted from Linux 6.2 (Landlock ABI 3), so
//! older kernels get a partial sandbox. Test hook: `SKIFF_SANDBOX_SIMULATE_UNSUPPORTED=1` makes
//! [`landlock_support`] (and the helper) behave as if the kernel had no Landlock.
//!
//! Helper protocol: `HELPER __sandbox [--fs off|workspace-write|read-only] [--network
//! allow|deny] [--write DIR]... -- PROGRAM [ARG]...` (see [`helper_main`]).

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::str::FromStr;

/// The first argument that makes skiff act as the sandbox helper.
pub const HELPER_ARG: &str = "__sandbox";

/// The variable that makes Landlock look unavailable (a test hook).
pub const SIMULATE_UNSUPPORTED_VAR: &str = "SKIFF_SANDBOX_SIMULATE_UNSUPPORTED";

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
    /// No filesystem confinement.
    Off,
    /// Writes only in the workspace roots, the temp directories and the device files.
    #[default]
    WorkspaceWrite,
    /// No writes except to the device files.
    ReadOnly,
}

/// Network access of Bash commands (`sandbox.network`, `--sandbox-network`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NetworkPolicy {
    /// Commands may use the network.
    #[default]
    Allow,
    /// Commands may only use Unix sockets.
    Deny,
}

/// What happens when Landlock cannot enforce the requested mode (`sandbox.fallback`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SandboxFallback {
    /// Warn once and run commands without the filesystem sandbox.
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

fn simulate_unsupported() -> bool {
    std::env::var_os(SIMULATE_UNSUPPORTED_VAR).is_some_and(|v| !v.is_empty() && v != "0")
}

/// What the running kernel supports, asked without restricting anything (a ruleset is created
/// and closed). Honours [`SIMULATE_UNSUPPORTED_VAR`].
pub fn landlock_support() -> LandlockSupport {
    if simulate_unsupported() {
        return LandlockSupport::Unavailable;
    }
    linux::support()
}

/// The sandbox the configuration asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SandboxPolicy {
    /// Filesystem mode.
    pub mode: SandboxMode,
    /// Network policy.
    pub network: NetworkPolicy,
    /// What to do when Landlock cannot enforce `mode`.
    pub fallback: SandboxFallback,
    /// Nobody asked for a sandbox: `mode` and `fallback` are the built-in defaults. Where
    /// Landlock is unavailable the filesystem sandbox is then off, without a warning.
    pub implicit: bool,
}

/// The sandbox decided for this run: what Bash commands get, and what to tell the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxStatus {
    /// The filesystem mode asked for.
    pub requested: SandboxMode,
    /// The filesystem confinement commands get (`Off` when it cannot be enforced).
    pub filesystem: SandboxMode,
    /// The network policy commands get.
    pub network: NetworkPolicy,
    /// What the kernel supports.
    pub landlock: LandlockSupport,
    /// When set, every Bash call fails with this text (fallback `refuse`).
    pub refused: Option<String>,
    /// A warning to show once at start.
    pub warning: Option<String>,
}

impl SandboxStatus {
    /// Decide for this kernel.
    pub fn decide(policy: &SandboxPolicy) -> Self {
        Self::decide_with(policy, landlock_support())
    }

    /// Decide for a kernel with `landlock` support.
    pub fn decide_with(policy: &SandboxPolicy, landlock: LandlockSupport) -> Self {
        let mut status = Self {
            requested: policy.mode,
            filesystem: policy.mode,
            network: policy.network,
            landlock,
            refused: None,
            warning: None,
        };
        if policy.mode == SandboxMode::Off || landlock == LandlockSupport::Full {
            return status;
        }
        let mode = policy.mode;
        let change = "set sandbox.mode to \"off\" (or --sandbox off) to run commands unsandboxed";
        match (landlock, policy.fallback) {
            (LandlockSupport::Unavailable, _) if policy.implicit => {
                status.filesystem = SandboxMode::Off;
            }
            (LandlockSupport::Unavailable, SandboxFallback::Unsandboxed) => {
                status.filesystem = SandboxMode::Off;
                status.warning = Some(format!(
                    "Warning: the Bash sandbox ({mode}) is not available: Landlock is not \
                     supported or not enabled in this kernel (Linux 5.13+ with Landlock enabled \
                     is needed). Commands run WITHOUT the filesystem sandbox (sandbox.fallback \
                     \"unsandboxed\"); set sandbox.fallback to \"refuse\" to refuse them instead."
                ));
            }
            (LandlockSupport::Unavailable, SandboxFallback::Refuse) => {
                status.filesystem = SandboxMode::Off;
                status.warning = Some(format!(
                    "Warning: the Bash sandbox ({mode}) is not available: Landlock is not \
                     supported or not enabled in this kernel. Bash commands will be refused \
                     (sandbox.fallback \"refuse\"); {change}."
                ));
                status.refused = Some(format!(
                    "The Bash tool is unavailable: the command sandbox ({mode}) cannot be \
                     enforced because this kernel does not support Landlock, and the sandbox \
                     fallback is \"refuse\". The command was not run. The user can {change}."
                ));
            }
            (_, SandboxFallback::Unsandboxed) => {
                status.warning = Some(format!(
                    "Warning: the Bash sandbox ({mode}) is only partially enforced: this \
                     kernel's Landlock (before Linux 6.2) cannot stop commands from truncating \
                     files outside the workspace. Set sandbox.fallback to \"refuse\" to refuse \
                     commands instead."
                ));
            }
            (_, SandboxFallback::Refuse) => {
                status.filesystem = SandboxMode::Off;
                status.warning = Some(format!(
                    "Warning: the Bash sandbox ({mode}) can only be partially enforced on this \
                     kernel (its Landlock cannot restrict file truncation; Linux 6.2 can). Bash \
                     commands will be refused (sandbox.fallback \"refuse\"); {change}."
                ));
                status.refused = Some(format!(
                    "The Bash tool is unavailable: the command sandbox ({mode}) can only be \
                     partially enforced on this kernel, and the sandbox fallback is \"refuse\". \
                     The command was not run. The user can {change}."
                ));
            }
        }
        status
    }

    /// The filesystem sandbox is on and fully enforced (then Bash may run without approval).
    pub fn enforced(&self) -> bool {
        self.refused.is_none()
            && self.filesystem != SandboxMode::Off
            && self.landlock == LandlockSupport::Full
    }

    /// Whether the Bash tool needs a [`SandboxConfig`]: commands go through the helper, or are
    /// refused.
    pub fn applies(&self) -> bool {
        self.filesystem != SandboxMode::Off
            || self.network == NetworkPolicy::Deny
            || self.refused.is_some()
    }

    /// What the Bash tool needs, with `helper` as the helper program; `None` when commands run
    /// directly (no sandbox at all).
    pub fn config(&self, helper: PathBuf) -> Option<SandboxConfig> {
        self.applies().then(|| SandboxConfig {
            helper,
            filesystem: self.filesystem,
            network: self.network,
            refused: self.refused.clone(),
            protect: false,
        })
    }

    /// One line for the user: what commands get, and why when it differs from the request.
    pub fn summary(&self) -> String {
        let network = match self.network {
            NetworkPolicy::Allow => "network allowed",
            NetworkPolicy::Deny => "network denied",
        };
        if self.refused.is_some() {
            return format!(
                "{} requested, but {}: Bash commands are refused (fallback \"refuse\")",
                self.requested,
                self.landlock_problem()
            );
        }
        let fs = match (self.requested, self.filesystem) {
            (SandboxMode::Off, _) => "off".to_owned(),
            (requested, SandboxMode::Off) => format!(
                "{requested} requested, but {}: commands run without the filesystem sandbox",
                self.landlock_problem()
            ),
            (_, mode) if self.landlock == LandlockSupport::Partial => {
                format!("{mode} (Landlock, partial: file truncation is not restricted)")
            }
            (_, mode) => format!("{mode} (Landlock)"),
        };
        format!("{fs}; {network}")
    }

    /// The status as JSON (for a front end's init frame or status command): `mode` asked for,
    /// `filesystem` in effect, `network`, `landlock` support (`full`, `partial`,
    /// `unavailable`), `enforced` and `refused`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "mode": self.requested.as_str(),
            "filesystem": self.filesystem.as_str(),
            "network": self.network.as_str(),
            "landlock": self.landlock.as_str(),
            "enforced": self.enforced(),
            "refused": self.refused.is_some(),
        })
    }

    fn landlock_problem(&self) -> &'static str {
        match self.landlock {
            LandlockSupport::Unavailable => "Landlock is not available",
            _ => "Landlock is only partially supported",
        }
    }
}

/// How the Bash tool runs commands when a sandbox is configured (`ToolConfig::sandbox`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxConfig {
    /// The program that understands `__sandbox` (skiff's own executable).
    pub helper: PathBuf,
    /// Filesystem confinement.
    pub filesystem: SandboxMode,
    /// Network policy.
    pub network: NetworkPolicy,
    /// When set, every Bash call fails with this text instead of running.
    pub refused: Option<String>,
    /// Commands run without approval: what they change among the files that make programs
    /// run outside the sandbox is put back (see [`crate::protected`]).
    pub protect: bool,
}

impl SandboxConfig {
    /// The helper's arguments up to and including `--`, for a workspace with these roots (the
    /// workspace first, then its extra directories); the shell and its arguments follow.
    pub fn helper_args(&self, roots: &[PathBuf]) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec![
            HELPER_ARG.into(),
            "--fs".into(),
            self.filesystem.as_str().into(),
            "--network".into(),
            self.network.as_str().into(),
        ];
        if self.filesystem == SandboxMode::WorkspaceWrite {
            for root in roots {
                args.push("--write".into());
                args.push(root.into());
            }
        }
        args.push("--".into());
        args
    }

    /// The line added to a failed command's result when its output looks like the sandbox
    /// stopped it.
    pub fn failure_note(&self, output: &str) -> Option<String> {
        let fs_blocked = self.filesystem != SandboxMode::Off
            && (output.contains("Permission denied") || output.contains("Read-only file system"));
        let net_blocked = self.network == NetworkPolicy::Deny
            && [
                "Operation not permitted",
                "Permission denied",
                "Could not resolve host",
                "Temporary failure in name resolution",
                "Network is unreachable",
                "getaddrinfo",
            ]
            .iter()
            .any(|t| output.contains(t));
        if !fs_blocked && !net_blocked {
            return None;
        }
        let fs = match self.filesystem {
            SandboxMode::Off => None,
            SandboxMode::WorkspaceWrite => {
                Some("writes outside the workspace and temp directories are blocked")
            }
            SandboxMode::ReadOnly => Some("all file writes are blocked (read-only mode)"),
        };
        let network = match self.network {
            NetworkPolicy::Allow => "network: allowed",
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
        out.extend(TEMP_DIRS.iter().map(PathBuf::from));
        if let Some(tmp) = std::env::var_os("TMPDIR").map(PathBuf::from)
            && tmp.is_absolute()
        {
            out.push(tmp);
        }
    }
    out
}

/// What the helper was asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
struct HelperRequest {
    filesystem: SandboxMode,
    network: NetworkPolicy,
    write: Vec<PathBuf>,
    program: OsString,
    args: Vec<OsString>,
}

impl HelperRequest {
    fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Self, String> {
        let mut args = args.into_iter();
        let mut filesystem = SandboxMode::Off;
        let mut network = NetworkPolicy::Allow;
        let mut write = Vec::new();
        let text = |v: Option<OsString>, flag: &str| -> Result<String, String> {
            v.and_then(|v| v.into_string().ok())
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        loop {
            let Some(arg) = args.next() else {
                return Err("missing `-- PROGRAM [ARG]...`".to_owned());
            };
            match arg.to_str() {
                Some("--") => break,
                Some("--fs") => filesystem = text(args.next(), "--fs")?.parse()?,
                Some("--network") => network = text(args.next(), "--network")?.parse()?,
                Some("--write") => {
                    let dir = args.next().ok_or("--write needs a directory")?;
                    write.push(PathBuf::from(dir));
                }
                _ => return Err(format!("unknown argument {arg:?}")),
            }
        }
        let program = args.next().ok_or("missing the program to run after `--`")?;
        Ok(Self {
            filesystem,
            network,
            write,
            program,
            args: args.collect(),
        })
    }
}

/// The helper: confine this process as the arguments say (see the module docs), then exec the
/// program. Returns only on failure: 2 for bad arguments, [`SETUP_FAILED`] when the sandbox
/// cannot be set up (the program is not run), 127/126 when the program cannot be executed.
/// `args` are the arguments after `__sandbox`. Must run while the process has one thread.
pub fn helper_main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let request = match HelperRequest::parse(args) {
        Ok(r) => r,
        Err(e) => {
            eprintln!(
                "skiff sandbox: {e}\nusage: skiff {HELPER_ARG} [--fs off|workspace-write|read-only] \
                 [--network allow|deny] [--write DIR]... -- PROGRAM [ARG]..."
            );
            return ExitCode::from(2);
        }
    };
    if let Err(e) = confine(&request) {
        eprintln!("skiff sandbox: {e}; the command was not run");
        return ExitCode::from(SETUP_FAILED);
    }
    let error = linux::exec(&request.program, &request.args);
    eprintln!(
        "skiff sandbox: cannot run {}: {error}",
        Path::new(&request.program).display()
    );
    ExitCode::from(if error.kind() == std::io::ErrorKind::NotFound {
        127
    } else {
        126
    })
}

fn confine(request: &HelperRequest) -> Result<(), String> {
    if request.filesystem != SandboxMode::Off {
        if simulate_unsupported() {
            return Err(format!(
                "Landlock is not available (simulated by {SIMULATE_UNSUPPORTED_VAR})"
            ));
        }
        let paths = writable_paths(request.filesystem, &request.write);
        linux::restrict_filesystem(&paths)?;
    }
    if request.network == NetworkPolicy::Deny {
        linux::deny_network()?;
    }
    Ok(())
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::BTreeMap;
    use std::ffi::OsString;
    use std::os::unix::process::CommandExt;
    use std::path::PathBuf;

    use landlock::{
        ABI, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreatedAttr,
        RulesetStatus, path_beneath_rules,
    };
    use seccompiler::{
        BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
        SeccompRule, TargetArch,
    };

    use super::LandlockSupport;

    /// The Landlock ABI whose write rights the sandbox handles (3 adds truncation).
    const ABI_FULL: ABI = ABI::V3;

    /// Whether a ruleset handling the write rights of `abi` can be created.
    fn creates(abi: ABI) -> bool {
        Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessFs::from_write(abi))
            .and_then(|r| r.create())
            .is_ok()
    }

    pub(super) fn support() -> LandlockSupport {
        if creates(ABI_FULL) {
            LandlockSupport::Full
        } else if creates(ABI::V1) {
            LandlockSupport::Partial
        } else {
            LandlockSupport::Unavailable
        }
    }

    /// Restrict this thread (and what it execs) to writing `writable` only; no_new_privs is set.
    pub(super) fn restrict_filesystem(writable: &[PathBuf]) -> Result<(), String> {
        let write = AccessFs::from_write(ABI_FULL);
        let status = Ruleset::default()
            .handle_access(write)
            .and_then(|r| r.create())
            .and_then(|r| r.add_rules(path_beneath_rules(writable, write)))
            .and_then(|r| r.restrict_self())
            .map_err(|e| format!("cannot set up the Landlock sandbox: {e}"))?;
        if status.ruleset == RulesetStatus::NotEnforced {
            return Err("Landlock is not available in this kernel".to_owned());
        }
        Ok(())
    }

    /// The seccomp filter of `--network deny`.
    fn network_filter() -> Result<BpfProgram, String> {
        let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|_| {
            format!(
                "network denial is not supported on {}",
                std::env::consts::ARCH
            )
        })?;
        let not_unix = || {
            SeccompCondition::new(
                0,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Ne,
                libc::AF_UNIX as u64,
            )
            .and_then(|c| SeccompRule::new(vec![c]))
        };
        let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
        let mut numbers = vec![
            (libc::SYS_socket, true),
            (libc::SYS_socketpair, true),
            (libc::SYS_io_uring_setup, false),
        ];
        // The x32 ABI numbers the same calls with bit 30 set, under the x86_64 audit arch.
        if cfg!(target_arch = "x86_64") {
            let x32: Vec<(i64, bool)> = numbers
                .iter()
                .map(|&(nr, domain)| (nr | 0x4000_0000, domain))
                .collect();
            numbers.extend(x32);
        }
        for (nr, by_domain) in numbers {
            // An empty rule list matches every call of that number.
            let list = if by_domain {
                vec![not_unix().map_err(|e| e.to_string())?]
            } else {
                Vec::new()
            };
            rules.insert(nr, list);
        }
        let filter = SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(libc::EPERM as u32),
            arch,
        )
        .map_err(|e| e.to_string())?;
        BpfProgram::try_from(filter).map_err(|e| e.to_string())
    }

    /// Install the network filter on this thread (sets no_new_privs).
    pub(super) fn deny_network() -> Result<(), String> {
        let program =
            network_filter().map_err(|e| format!("cannot build the network filter: {e}"))?;
        seccompiler::apply_filter(&program)
            .map_err(|e| format!("cannot install the network filter (seccomp): {e}"))
    }

    /// Replace this process with the program; returns only on failure.
    pub(super) fn exec(program: &OsString, args: &[OsString]) -> std::io::Error {
        std::process::Command::new(program).args(args).exec()
    }

    #[cfg(test)]
    #[test]
    fn the_network_filter_compiles() {
        assert!(network_filter().is_ok_and(|p| !p.is_empty()));
    }
}

#[cfg(not(target_os = "linux"))]
mod linux {
    use std::ffi::OsString;
    use std::os::unix::process::CommandExt;
    use std::path::PathBuf;

    use super::LandlockSupport;

    pub(super) fn support() -> LandlockSupport {
        LandlockSupport::Unavailable
    }

    pub(super) fn restrict_filesystem(_: &[PathBuf]) -> Result<(), String> {
        Err("the filesystem sandbox needs Linux (Landlock)".to_owned())
    }

    pub(super) fn deny_network() -> Result<(), String> {
        Err("network denial needs Linux (seccomp)".to_owned())
    }

    pub(super) fn exec(program: &OsString, args: &[OsString]) -> std::io::Error {
        std::process::Command::new(program).args(args).exec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(words: &[&str]) -> Vec<OsString> {
        words.iter().map(OsString::from).collect()
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
        assert_eq!("refuse".parse(), Ok(SandboxFallback::Refuse));
        let err = "none".parse::<SandboxMode>().unwrap_err();
        assert!(err.contains("off, workspace-write, read-only"), "{err}");
    }

    #[test]
    fn helper_requests_parse() {
        let r = HelperRequest::parse(os(&[
            "--fs",
            "workspace-write",
            "--network",
            "deny",
            "--write",
            "/w",
            "--write",
            "/x",
            "--",
            "bash",
            "-c",
            "echo --fs",
        ]))
        .unwrap();
        assert_eq!(r.filesystem, SandboxMode::WorkspaceWrite);
        assert_eq!(r.network, NetworkPolicy::Deny);
        assert_eq!(r.write, [PathBuf::from("/w"), PathBuf::from("/x")]);
        assert_eq!(r.program, "bash");
        assert_eq!(r.args, os(&["-c", "echo --fs"]));
        for bad in [
            &["--fs", "nope", "--", "true"][..],
            &["--fs"],
            &["--bogus", "--", "true"],
            &["--fs", "off"],
            &["--"],
        ] {
            assert!(HelperRequest::parse(os(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn helper_args_round_trip() {
        let config = SandboxConfig {
            helper: "/bin/skiff".into(),
            filesystem: SandboxMode::WorkspaceWrite,
            network: NetworkPolicy::Deny,
            refused: None,
            protect: false,
        };
        let roots = [PathBuf::from("/w"), PathBuf::from("/extra dir")];
        let mut args = config.helper_args(&roots);
        assert_eq!(args[0], HELPER_ARG);
        args.extend(os(&["bash", "-c", "true"]));
        let r = HelperRequest::parse(args.into_iter().skip(1)).unwrap();
        assert_eq!(r.write, roots);
        assert_eq!(
            (r.filesystem, r.network),
            (config.filesystem, config.network)
        );
        // Read-only passes no writable roots.
        let ro = SandboxConfig {
            filesystem: SandboxMode::ReadOnly,
            ..config
        };
        assert!(!ro.helper_args(&roots).contains(&OsString::from("--write")));
    }
}
