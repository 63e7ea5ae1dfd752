//! The Landlock and seccomp layers, applied by the helper to itself before the command runs:
//! writes only where [`super::writable_paths`] says, and for `--sandbox-network deny` without a
//! network namespace a seccomp filter that makes `socket(2)` and `socketpair(2)` fail with
//! EPERM for every family but `AF_UNIX` (and `io_uring_setup(2)`, which could open sockets
//! behind the filter's back).

pub(super) use imp::{deny_network, restrict_filesystem, support};

#[cfg(target_os = "linux")]
mod imp {
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    use landlock::{
        ABI, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreatedAttr,
        RulesetStatus, path_beneath_rules,
    };
    use seccompiler::{
        BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
        SeccompRule, TargetArch,
    };

    use super::super::LandlockSupport;

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

    /// What this kernel's Landlock supports.
    pub(in super::super) fn support() -> LandlockSupport {
        if creates(ABI_FULL) {
            LandlockSupport::Full
        } else if creates(ABI::V1) {
            LandlockSupport::Partial
        } else {
            LandlockSupport::Unavailable
        }
    }

    /// Restrict this thread (and what it execs) to writing `writable` only; no_new_privs is set.
    pub(in super::super) fn restrict_filesystem(writable: &[PathBuf]) -> Result<(), String> {
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

    /// The seccomp filter of `--network deny` without a network namespace.
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
    pub(in super::super) fn deny_network() -> Result<(), String> {
        let program =
            network_filter().map_err(|e| format!("cannot build the network filter: {e}"))?;
        seccompiler::apply_filter(&program)
            .map_err(|e| format!("cannot install the network filter (seccomp): {e}"))
    }

    #[cfg(test)]
    #[test]
    fn the_network_filter_compiles() {
        assert!(network_filter().is_ok_and(|p| !p.is_empty()));
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use std::path::PathBuf;

    use super::super::LandlockSupport;

    pub(in super::super) fn support() -> LandlockSupport {
        LandlockSupport::Unavailable
    }

    pub(in super::super) fn restrict_filesystem(_: &[PathBuf]) -> Result<(), String> {
        Err("the filesystem sandbox needs Linux (Landlock)".to_owned())
    }

    pub(in super::super) fn deny_network() -> Result<(), String> {
        Err("network denial needs Linux (seccomp)".to_owned())
    }
}
