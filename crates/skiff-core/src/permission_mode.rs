//! [`PermissionMode`]: how much runs without asking — a leaf every part of the session names
//! (events, frames, the permission engine).

use std::fmt;
use std::str::FromStr;

/// How much runs without asking (Claude Code's modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum PermissionMode {
    /// Rules decide; what no rule allows and is not read-only is asked.
    #[default]
    Default,
    /// File edits in the workspace run without asking.
    AcceptEdits,
    /// Read-only: nothing that changes the workspace runs.
    Plan,
    /// Everything runs without asking (deny rules still apply).
    BypassPermissions,
    /// Nothing is asked: what would be asked is denied.
    DontAsk,
}

impl PermissionMode {
    /// Every mode, in the order they are documented.
    pub const ALL: [Self; 5] = [
        Self::Default,
        Self::AcceptEdits,
        Self::Plan,
        Self::BypassPermissions,
        Self::DontAsk,
    ];

    /// How much runs without asking, for comparing modes: `plan` < `dontAsk` < `default` <
    /// `acceptEdits` < `bypassPermissions`.
    pub(crate) fn width(self) -> u8 {
        match self {
            Self::Plan => 0,
            Self::DontAsk => 1,
            Self::Default => 2,
            Self::AcceptEdits => 3,
            Self::BypassPermissions => 4,
        }
    }

    /// The mode of a subagent whose definition asks for `wanted`, under a parent in this mode:
    /// never wider than the parent's (plan stays plan); a parent's `bypassPermissions` is kept.
    pub fn for_child(self, wanted: Option<Self>) -> Self {
        match wanted {
            _ if self == Self::BypassPermissions => self,
            Some(m) if m.width() < self.width() => m,
            _ => self,
        }
    }

    /// The name Claude Code uses (`default`, `acceptEdits`, `plan`, `bypassPermissions`,
    /// `dontAsk`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::AcceptEdits => "acceptEdits",
            Self::Plan => "plan",
            Self::BypassPermissions => "bypassPermissions",
            Self::DontAsk => "dontAsk",
        }
    }
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for PermissionMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        if s.trim() == "manual" {
            return Ok(Self::Default);
        }
        Self::ALL
            .into_iter()
            .find(|m| m.as_str() == s.trim())
            .ok_or_else(|| {
                format!(
                    "invalid permission mode {s:?}: expected one of {}",
                    Self::ALL.map(Self::as_str).join(", ")
                )
            })
    }
}
