//! Whether this machine gives sandboxed commands namespaces of their own, found out by running
//! the helper for real with a probe plan, in a thread of its own. Whoever needs the answer (the
//! session's init, the first Bash permission check, `/sandbox`, `skiff config`) waits for it.
//!
//! A yes is remembered ([`ProbeCache`], in skiff's home, which sandboxed commands cannot see)
//! for the same boot, user, helper binary and plan, so later sessions start without the 2–3 ms
//! the probe costs before their first request. A wrong memory cannot run anything uncontained:
//! the helper sets the namespaces up for every command and refuses to run it when it cannot
//! (and then the memory is forgotten, [`ProbeCache::forget`]).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use super::plan::{Mounts, Plan};
use super::{HELPER_ARG, NetworkPolicy, PROBE_AFTER_VAR, SIMULATE_NO_NAMESPACES_VAR, SandboxMode};

/// How long the probe may take before it counts as a failure.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Whether commands can get their own user, mount, PID, network and IPC namespaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NamespaceSupport {
    /// They can.
    Available,
    /// They cannot; why, in words.
    Unavailable(String),
}

/// The probe's answer, when it comes.
#[derive(Debug, Default)]
pub struct Probe {
    answer: Mutex<Option<NamespaceSupport>>,
    ready: Condvar,
    notify: tokio::sync::Notify,
}

impl Probe {
    /// An answer known already.
    pub fn known(answer: NamespaceSupport) -> Arc<Self> {
        let probe = Arc::new(Self::default());
        probe.set(answer);
        probe
    }

    /// Probe in a background thread with `helper`, for commands writing to `roots` under
    /// `fs` with `network`; no probe when `cache` remembers a yes for exactly this.
    pub fn start(
        helper: PathBuf,
        fs: SandboxMode,
        network: NetworkPolicy,
        roots: Vec<PathBuf>,
        cache: Option<ProbeCache>,
    ) -> Arc<Self> {
        if !super::flag_var(SIMULATE_NO_NAMESPACES_VAR)
            && cache.as_ref().is_some_and(ProbeCache::hit)
        {
            return Self::known(NamespaceSupport::Available);
        }
        let probe = Arc::new(Self::default());
        let setter = Arc::clone(&probe);
        let spawned = std::thread::Builder::new()
            .name("sandbox-probe".into())
            .spawn(move || {
                let answer = run_probe(&helper, fs, network, roots);
                if answer == NamespaceSupport::Available
                    && let Some(cache) = &cache
                {
                    cache.store();
                }
                setter.set(answer);
            });
        if let Err(e) = spawned {
            probe.set(NamespaceSupport::Unavailable(format!(
                "cannot start the probe: {e}"
            )));
        }
        probe
    }

    fn set(&self, answer: NamespaceSupport) {
        if let Ok(mut a) = self.answer.lock() {
            *a = Some(answer);
        }
        self.ready.notify_all();
        self.notify.notify_waiters();
    }

    /// The answer if it has come.
    pub fn get(&self) -> Option<NamespaceSupport> {
        self.answer.lock().ok().and_then(|a| a.clone())
    }

    /// Wait for the answer.
    pub async fn wait(&self) -> NamespaceSupport {
        loop {
            let notified = self.notify.notified();
            if let Some(a) = self.get() {
                return a;
            }
            notified.await;
        }
    }

    /// Wait for the answer, blocking this thread (not on the async runtime).
    pub fn wait_blocking(&self) -> NamespaceSupport {
        let Ok(mut guard) = self.answer.lock() else {
            return NamespaceSupport::Unavailable("the probe's state is poisoned".into());
        };
        loop {
            if let Some(a) = guard.clone() {
                return a;
            }
            match self.ready.wait_timeout(guard, PROBE_TIMEOUT) {
                Ok((g, _)) => guard = g,
                Err(_) => {
                    return NamespaceSupport::Unavailable("the probe's state is poisoned".into());
                }
            }
        }
    }
}

/// Run the helper with a probe plan: namespaces, a private `/proc` and `/dev`, an empty
/// `/run`, the loopback up, Landlock and the dropped privileges; then exit 0.
fn run_probe(
    helper: &PathBuf,
    fs: SandboxMode,
    network: NetworkPolicy,
    roots: Vec<PathBuf>,
) -> NamespaceSupport {
    if super::flag_var(SIMULATE_NO_NAMESPACES_VAR) {
        return NamespaceSupport::Unavailable(format!("simulated by {SIMULATE_NO_NAMESPACES_VAR}"));
    }
    if let Some(gate) = std::env::var_os(PROBE_AFTER_VAR) {
        let gate = PathBuf::from(gate);
        let started = std::time::Instant::now();
        while !gate.exists() {
            if started.elapsed() > PROBE_TIMEOUT {
                return NamespaceSupport::Unavailable(format!(
                    "{} did not appear ({PROBE_AFTER_VAR})",
                    gate.display()
                ));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    if !cfg!(target_os = "linux") {
        return NamespaceSupport::Unavailable("namespaces need Linux".into());
    }
    let plan = Plan {
        fs,
        write: roots,
        network,
        namespaces: Some(Mounts {
            empty: vec!["/run".into()],
            probe: true,
            ..Mounts::default()
        }),
    };
    let child = Command::new(helper)
        .arg(HELPER_ARG)
        .arg("--plan")
        .arg(plan.to_arg())
        .args(["--", "true"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            return NamespaceSupport::Unavailable(format!(
                "cannot run the sandbox helper {}: {e}",
                helper.display()
            ));
        }
    };
    let started = std::time::Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return NamespaceSupport::Available,
            Ok(Some(_)) => {
                let mut err = String::new();
                if let Some(mut e) = child.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut e, &mut err);
                }
                let why = err
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("the sandbox helper failed")
                    .trim()
                    .trim_start_matches("skiff sandbox: ")
                    .trim_end_matches("; the command was not run")
                    .to_owned();
                return NamespaceSupport::Unavailable(why);
            }
            Ok(None) if started.elapsed() < PROBE_TIMEOUT => {
                // Short naps: the answer usually comes within 2–3 ms, and the session waits.
                std::thread::sleep(Duration::from_micros(200));
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return NamespaceSupport::Unavailable("the probe timed out".into());
            }
            Err(e) => return NamespaceSupport::Unavailable(format!("the probe failed: {e}")),
        }
    }
}

/// The remembered yes of earlier probes: `SKIFF_HOME/sandbox/probe-ok`, one line per
/// (boot, user, helper binary, filesystem mode, network policy) that probed fine, the last
/// [`CACHE_LINES`] kept. Not per workspace: whether commands get namespaces is the machine's
/// answer, so a session in a new workspace does not wait for a probe before its first request
/// (a command whose sandbox then cannot be set up fails, and [`ProbeCache::forget`] makes the
/// next session probe again).
#[derive(Debug, Clone)]
pub struct ProbeCache {
    path: PathBuf,
    key: String,
}

/// Lines kept in the cache file.
const CACHE_LINES: usize = 16;

impl ProbeCache {
    /// The cache in `skiff_home` for probing `helper` in this mode; `None` when the boot or
    /// the helper cannot be identified (then every session probes).
    pub fn new(
        skiff_home: &Path,
        helper: &Path,
        fs: SandboxMode,
        network: NetworkPolicy,
    ) -> Option<Self> {
        use std::os::unix::fs::MetadataExt as _;
        let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
        let meta = std::fs::metadata(helper).ok()?;
        let key = format!(
            "{} uid={} helper={} ino={} size={} mtime={}.{} fs={fs:?} network={network:?}",
            boot.trim(),
            nix::unistd::geteuid(),
            helper.display(),
            meta.ino(),
            meta.size(),
            meta.mtime(),
            meta.mtime_nsec(),
        )
        .replace('\n', " ");
        Some(Self {
            path: Self::file(skiff_home),
            key,
        })
    }

    fn file(skiff_home: &Path) -> PathBuf {
        skiff_home.join("sandbox").join("probe-ok")
    }

    fn hit(&self) -> bool {
        std::fs::read_to_string(&self.path).is_ok_and(|t| t.lines().any(|l| l == self.key))
    }

    fn store(&self) {
        let old = std::fs::read_to_string(&self.path).unwrap_or_default();
        let mut lines: Vec<&str> = old.lines().filter(|l| *l != self.key).collect();
        lines.push(&self.key);
        let keep = &lines[lines.len().saturating_sub(CACHE_LINES)..];
        let tmp = self.path.with_extension("tmp");
        let written = self
            .path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&tmp, keep.join("\n") + "\n"))
            .and_then(|()| std::fs::rename(&tmp, &self.path));
        if let Err(e) = written {
            tracing::debug!(error = %e, "cannot remember the sandbox probe's answer");
        }
    }

    /// The helper could not set a command's sandbox up: what was remembered is forgotten, so
    /// the next session probes again.
    pub fn forget(skiff_home: &Path) {
        let _ = std::fs::remove_file(Self::file(skiff_home));
    }
}

#[cfg(test)]
mod cache_tests {
    use super::*;

    #[test]
    fn a_yes_is_remembered_for_the_same_helper_and_mode_in_any_workspace() {
        let home = tempfile::tempdir().unwrap();
        let helper = home.path().join("helper");
        std::fs::write(&helper, "v1").unwrap();
        let roots = [PathBuf::from("/w")];
        let cache = |network: NetworkPolicy| {
            ProbeCache::new(home.path(), &helper, SandboxMode::WorkspaceWrite, network).unwrap()
        };
        assert!(!cache(NetworkPolicy::Proxy).hit());
        cache(NetworkPolicy::Proxy).store();
        assert!(cache(NetworkPolicy::Proxy).hit());
        assert!(!cache(NetworkPolicy::Deny).hit());
        // Known at once: no probe runs (the helper here is not even a program).
        let probe = Probe::start(
            helper.clone(),
            SandboxMode::WorkspaceWrite,
            NetworkPolicy::Proxy,
            roots.to_vec(),
            Some(cache(NetworkPolicy::Proxy)),
        );
        assert_eq!(probe.get(), Some(NamespaceSupport::Available));
        // Another helper binary (rebuilt, upgraded) probes again.
        std::fs::write(&helper, "v2, longer").unwrap();
        assert!(!cache(NetworkPolicy::Proxy).hit());
        cache(NetworkPolicy::Proxy).store();
        ProbeCache::forget(home.path());
        assert!(!cache(NetworkPolicy::Proxy).hit());
    }
}
