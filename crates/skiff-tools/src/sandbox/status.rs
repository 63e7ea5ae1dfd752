//! The sandbox decided for a run: what the configuration asks for ([`SandboxPolicy`]), what
//! this machine can enforce of it, and what to tell the user ([`SandboxStatus`]).

use super::{
    LandlockSupport, NamespaceSupport, NetworkPolicy, SandboxFallback, SandboxMode,
    landlock_support,
};

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
    /// The network policy asked for.
    pub network: NetworkPolicy,
    /// What the kernel supports.
    pub landlock: LandlockSupport,
    /// Whether commands get namespaces of their own; `None` while not known yet (the probe
    /// runs in the background) or when there is no sandbox.
    pub namespaces: Option<NamespaceSupport>,
    /// When set, every Bash call fails with this text (fallback `refuse`).
    pub refused: Option<String>,
    /// A warning to show once at start.
    pub warning: Option<String>,
}

impl SandboxStatus {
    /// Decide for this kernel (namespaces not known yet).
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
            namespaces: None,
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
                     is needed). Commands run WITHOUT the filesystem sandbox and are asked about \
                     (sandbox.fallback \"unsandboxed\"); set sandbox.fallback to \"refuse\" to \
                     refuse them instead."
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
                     files outside the workspace, so commands are asked about. Set \
                     sandbox.fallback to \"refuse\" to refuse commands instead."
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

    /// The same status once the namespace probe has answered.
    pub fn with_namespaces(mut self, namespaces: NamespaceSupport) -> Self {
        self.namespaces = Some(namespaces);
        self
    }

    /// Landlock enforces the filesystem mode fully (the layer under the namespaces).
    pub fn enforced(&self) -> bool {
        self.refused.is_none()
            && self.filesystem != SandboxMode::Off
            && self.landlock == LandlockSupport::Full
    }

    /// Every layer is in force, so commands may run without approval: Landlock fully
    /// enforced and namespaces available (as far as known: `None` is not contained).
    pub fn contained(&self) -> bool {
        self.enforced() && matches!(self.namespaces, Some(NamespaceSupport::Available))
    }

    /// Whether the Bash tool needs a [`SandboxConfig`]: commands go through the helper, or are
    /// refused.
    pub fn applies(&self) -> bool {
        self.filesystem != SandboxMode::Off
            || self.network == NetworkPolicy::Deny
            || self.refused.is_some()
    }

    /// The layers in force, in words: `namespaces + Landlock`, `Landlock only`, …
    pub fn layers(&self) -> String {
        if self.refused.is_some() {
            return "none (Bash commands are refused)".to_owned();
        }
        if self.filesystem == SandboxMode::Off && self.network != NetworkPolicy::Deny {
            return "none".to_owned();
        }
        let landlock = match (self.filesystem, self.landlock) {
            (SandboxMode::Off, _) => None,
            (_, LandlockSupport::Partial) => Some("Landlock (partial)"),
            _ => Some("Landlock"),
        };
        match (&self.namespaces, landlock) {
            (Some(NamespaceSupport::Available), Some(l)) => {
                format!("namespaces (user, mount, PID, network, IPC) + {l}")
            }
            (Some(NamespaceSupport::Available), None) => {
                "namespaces (user, mount, PID, network, IPC)".to_owned()
            }
            (_, Some(l)) if self.network == NetworkPolicy::Deny => format!("{l} + seccomp"),
            (_, Some(l)) => format!("{l} only"),
            (_, None) => "seccomp only".to_owned(),
        }
    }

    /// One line for the user: what commands get, and why when it differs from the request.
    pub fn summary(&self) -> String {
        let network = match (self.network, &self.namespaces) {
            (NetworkPolicy::Allow, _) => "network allowed",
            (NetworkPolicy::Proxy, Some(NamespaceSupport::Available)) => {
                "network through skiff's proxy (allowed domains; others asked)"
            }
            (NetworkPolicy::Proxy, _) => "network not filtered (no network namespace)",
            (NetworkPolicy::Deny, _) => "network denied",
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
            (_, mode) => format!("{mode} ({})", self.layers()),
        };
        let mut line = format!("{fs}; {network}");
        if let Some(NamespaceSupport::Unavailable(why)) = &self.namespaces
            && self.filesystem != SandboxMode::Off
        {
            line.push_str(&format!(
                "; namespaces unavailable ({why}), so commands are asked about"
            ));
        }
        line
    }

    /// The status as JSON (for a front end's init frame or status command): `mode` asked for,
    /// `filesystem` in effect, `network`, `landlock` support (`full`, `partial`,
    /// `unavailable`), `namespaces` (`available`, `unavailable`, `unknown`), `layers`,
    /// `enforced` (Landlock), `contained` (every layer: commands run without asking) and
    /// `refused`.
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({
            "mode": self.requested.as_str(),
            "filesystem": self.filesystem.as_str(),
            "network": self.network.as_str(),
            "landlock": self.landlock.as_str(),
            "namespaces": match &self.namespaces {
                Some(NamespaceSupport::Available) => "available",
                Some(NamespaceSupport::Unavailable(_)) => "unavailable",
                None => "unknown",
            },
            "layers": self.layers(),
            "enforced": self.enforced(),
            "contained": self.contained(),
            "refused": self.refused.is_some(),
        });
        if let (Some(NamespaceSupport::Unavailable(why)), Some(map)) =
            (&self.namespaces, v.as_object_mut())
        {
            map.insert("namespacesProblem".into(), why.clone().into());
        }
        v
    }

    fn landlock_problem(&self) -> &'static str {
        match self.landlock {
            LandlockSupport::Unavailable => "Landlock is not available",
            _ => "Landlock is only partially supported",
        }
    }
}
