//! The record of sandboxed commands still running, so that what they created among protected
//! paths is undone even when skiff dies before they end (`kill -9`): each running command's
//! check list is in `SKIFF_HOME/sandbox/pending-<pid>-<n>.json` until it ends, and the next
//! skiff to start runs the checks of a process that is gone.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use serde::{Deserialize, Serialize};

/// What is checked after a command: the protected paths it could have created.
#[derive(Debug, Default, Clone)]
pub(super) struct Sweep {
    pub(super) absent: Vec<PathBuf>,
    pub(super) git_watch: Vec<PathBuf>,
    pub(super) known: Vec<PathBuf>,
}

/// `SKIFF_HOME/quarantine/<unix seconds>` (a temp directory without a home).
pub(super) fn quarantine_dir(skiff_home: Option<&Path>) -> PathBuf {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    match skiff_home {
        Some(h) => h.join("quarantine").join(stamp.to_string()),
        None => std::env::temp_dir().join(format!("skiff-quarantine-{stamp}")),
    }
}

/// One process's file.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Record {
    pid: u32,
    /// The process's start time (clock ticks after boot), so a reused pid is not mistaken.
    start: Option<u64>,
    calls: Vec<Call>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Call {
    absent: Vec<PathBuf>,
    git_watch: Vec<PathBuf>,
    known: Vec<PathBuf>,
}

/// The running commands of one session.
#[derive(Debug)]
pub(super) struct Journal {
    path: PathBuf,
    calls: Mutex<BTreeMap<u64, Call>>,
    next: AtomicU64,
    /// This process's start time, read at the first write.
    start: OnceLock<Option<u64>>,
}

impl Journal {
    /// A journal in `skiff_home` (the file is written when a command starts).
    pub(super) fn new(skiff_home: &Path) -> Self {
        static SESSIONS: AtomicU64 = AtomicU64::new(0);
        let n = SESSIONS.fetch_add(1, Ordering::Relaxed);
        Self {
            path: skiff_home
                .join("sandbox")
                .join(format!("pending-{}-{n}.json", std::process::id())),
            calls: Mutex::default(),
            next: AtomicU64::new(1),
            start: OnceLock::new(),
        }
    }

    /// A command starts: its checks are recorded until [`Journal::done`].
    pub(super) fn record(&self, sweep: &Sweep) -> u64 {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut calls) = self.calls.lock() {
            calls.insert(
                id,
                Call {
                    absent: sweep.absent.clone(),
                    git_watch: sweep.git_watch.clone(),
                    known: sweep.known.clone(),
                },
            );
            self.write(&calls);
        }
        id
    }

    /// The command ended (and was checked).
    pub(super) fn done(&self, id: u64) {
        if let Ok(mut calls) = self.calls.lock() {
            calls.remove(&id);
            self.write(&calls);
        }
    }

    fn write(&self, calls: &BTreeMap<u64, Call>) {
        if calls.is_empty() {
            let _ = std::fs::remove_file(&self.path);
            return;
        }
        let record = Record {
            pid: std::process::id(),
            start: *self.start.get_or_init(|| start_time(std::process::id())),
            calls: calls.values().cloned().collect(),
        };
        let Ok(text) = serde_json::to_vec(&record) else {
            return;
        };
        // Written and renamed into place, not synced: it guards against skiff dying, not the
        // machine, and a sync per command would cost more than the command.
        // The directory is made when it is missing (the first command, or removed since).
        let tmp = self.path.with_extension("json.tmp");
        let written = match std::fs::write(&tmp, &text) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => self
                .path
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| std::fs::write(&tmp, &text)),
            other => other,
        }
        .and_then(|()| std::fs::rename(&tmp, &self.path));
        if let Err(e) = written {
            tracing::warn!(error = %e, path = %self.path.display(), "cannot write the sandbox journal");
        }
    }

    /// The session ends: the checks of commands that never reported their end run now.
    pub(super) fn finish(&self) -> Vec<String> {
        let calls: Vec<Call> = self
            .calls
            .lock()
            .map(|mut c| std::mem::take(&mut *c).into_values().collect())
            .unwrap_or_default();
        let _ = std::fs::remove_file(&self.path);
        let home = self.path.parent().and_then(Path::parent);
        run(&calls, home)
    }

    /// Whether `SKIFF_HOME/sandbox` holds a record ([`Journal::sweep_stale`] has work).
    pub(super) fn any_pending(skiff_home: &Path) -> bool {
        std::fs::read_dir(skiff_home.join("sandbox")).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| is_record(&e.file_name().to_string_lossy()))
        })
    }

    /// At start: run the checks recorded by processes that are gone, and remove their files.
    pub(super) fn sweep_stale(skiff_home: &Path) -> Vec<String> {
        let dir = skiff_home.join("sandbox");
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Vec::new();
        };
        let mut notes = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if !is_record(&name) {
                continue;
            }
            let record: Record = match std::fs::read(&path)
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok())
            {
                Some(r) => r,
                None => {
                    let _ = std::fs::remove_file(&path);
                    continue;
                }
            };
            if alive(record.pid, record.start) {
                continue;
            }
            notes.extend(run(&record.calls, Some(skiff_home)));
            let _ = std::fs::remove_file(&path);
        }
        notes
    }
}

/// Whether a file name in `SKIFF_HOME/sandbox` is a journal record.
fn is_record(name: &str) -> bool {
    name.starts_with("pending-") && name.ends_with(".json")
}

fn run(calls: &[Call], skiff_home: Option<&Path>) -> Vec<String> {
    let quarantine = quarantine_dir(skiff_home);
    let mut notes = Vec::new();
    for call in calls {
        notes.extend(crate::protected::sweep(
            &call.absent,
            &call.git_watch,
            &call.known,
            &quarantine,
            &|_| false,
        ));
    }
    notes
}

/// Whether process `pid` (started at `start`) still runs.
fn alive(pid: u32, start: Option<u64>) -> bool {
    if pid == std::process::id() {
        return true;
    }
    match (start_time(pid), start) {
        (Some(now), Some(then)) => now == then,
        (Some(_), None) => true,
        (None, _) => false,
    }
}

/// A process's start time from `/proc/PID/stat` (field 22).
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = stat.rsplit_once(')')?.1;
    after.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_of_dead_processes_are_swept() {
        let home = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let journal = Journal::new(home.path());
        let sweep = Sweep {
            absent: vec![ws.path().join(".envrc")],
            ..Sweep::default()
        };
        let id = journal.record(&sweep);
        assert!(journal.path.exists());
        // This process is alive: nothing happens.
        std::fs::write(ws.path().join(".envrc"), "evil").unwrap();
        assert!(Journal::sweep_stale(home.path()).is_empty());
        // Pretend the file came from a dead process.
        let text = std::fs::read_to_string(&journal.path).unwrap();
        let mut record: Record = serde_json::from_str(&text).unwrap();
        record.pid = u32::MAX - 1;
        std::fs::write(
            home.path().join("sandbox/pending-dead.json"),
            serde_json::to_vec(&record).unwrap(),
        )
        .unwrap();
        let notes = Journal::sweep_stale(home.path());
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(!ws.path().join(".envrc").exists());
        assert!(!home.path().join("sandbox/pending-dead.json").exists());
        journal.done(id);
        assert!(!journal.path.exists());
    }

    #[test]
    fn only_a_record_makes_a_sweep_worth_starting() {
        let home = tempfile::tempdir().unwrap();
        // No directory yet, then an empty one, then only a half-written record.
        assert!(!Journal::any_pending(home.path()));
        let dir = home.path().join("sandbox");
        std::fs::create_dir(&dir).unwrap();
        assert!(!Journal::any_pending(home.path()));
        std::fs::write(dir.join("pending-1-0.json.tmp"), "{").unwrap();
        std::fs::write(dir.join("probe-ok"), "").unwrap();
        assert!(!Journal::any_pending(home.path()));
        std::fs::write(dir.join("pending-1-0.json"), "{}").unwrap();
        assert!(Journal::any_pending(home.path()));
    }

    #[test]
    fn a_removed_directory_is_made_again_at_the_next_command() {
        let home = tempfile::tempdir().unwrap();
        let journal = Journal::new(home.path());
        let first = journal.record(&Sweep::default());
        assert!(journal.path.exists());
        std::fs::remove_dir_all(home.path().join("sandbox")).unwrap();
        let second = journal.record(&Sweep::default());
        let record: Record =
            serde_json::from_str(&std::fs::read_to_string(&journal.path).unwrap()).unwrap();
        assert_eq!(record.calls.len(), 2);
        assert_eq!(record.pid, std::process::id());
        assert_eq!(record.start, start_time(std::process::id()));
        assert!(record.start.is_some());
        journal.done(first);
        journal.done(second);
        assert!(!journal.path.exists());
    }
}
