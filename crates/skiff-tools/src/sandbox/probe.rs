//! Whether this machine gives sandboxed commands namespaces of their own, found out once per
//! session by running the helper for real with a probe plan, in a thread of its own so that
//! nothing waits for it before the first model request. Whoever needs the answer (the first
//! Bash permission check, `/sandbox`, `skiff config`) waits for it then.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use super::plan::{Mounts, Plan};
use super::{HELPER_ARG, NetworkPolicy, SIMULATE_NO_NAMESPACES_VAR, SandboxMode};

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
    /// `fs` with `network`.
    pub fn start(
        helper: PathBuf,
        fs: SandboxMode,
        network: NetworkPolicy,
        roots: Vec<PathBuf>,
    ) -> Arc<Self> {
        let probe = Arc::new(Self::default());
        let setter = Arc::clone(&probe);
        let spawned = std::thread::Builder::new()
            .name("sandbox-probe".into())
            .spawn(move || setter.set(run_probe(&helper, fs, network, roots)));
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
                std::thread::sleep(Duration::from_millis(1));
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
