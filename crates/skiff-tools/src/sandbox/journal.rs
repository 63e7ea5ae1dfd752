//! The record of sandboxed commands still running, so that what they created among protected
//! paths is undone even when skiff dies before they end (`kill -9`): each session's check list
//! is in `SKIFF_HOME/sandbox/pending-<pid>-<n>.json` from its first command until it ends, and
//! the next skiff to start runs the checks of a process that is gone.
//!
//! The file is made once and then rewritten in place, one `pwrite` when a command starts and
//! one when it ends, padded with spaces to the longest record written (JSON allows them), so
//! it never holds a shorter record's leftovers. Making, renaming and removing a file per
//! command cost about 0.2 ms a call on ext4 (a new inode each time); the record between
//! commands lists no calls. A reader may see a record half rewritten: it is then skipped while
//! the process the file is named after runs, never removed.

use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
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
    pub(super) nested: Vec<crate::protected::Nested>,
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
    #[serde(default)]
    nested: Vec<crate::protected::Nested>,
}

/// The running commands of one session.
#[derive(Debug)]
pub(super) struct Journal {
    path: PathBuf,
    state: Mutex<State>,
    next: AtomicU64,
    /// This process's start time, read at the first write.
    start: OnceLock<Option<u64>>,
}

/// The calls running and the file that lists them.
#[derive(Debug, Default)]
struct State {
    calls: BTreeMap<u64, Call>,
    /// The record, once a command has started (open for writing in place).
    file: Option<File>,
    /// The longest record written to `file`: shorter ones are padded to it.
    len: usize,
}

impl Journal {
    /// A journal in `skiff_home` (the file is made when the first command starts).
    pub(super) fn new(skiff_home: &Path) -> Self {
        static SESSIONS: AtomicU64 = AtomicU64::new(0);
        let n = SESSIONS.fetch_add(1, Ordering::Relaxed);
        Self {
            path: skiff_home
                .join("sandbox")
                .join(format!("pending-{}-{n}.json", std::process::id())),
            state: Mutex::default(),
            next: AtomicU64::new(1),
            start: OnceLock::new(),
        }
    }

    /// A command starts: its checks are recorded until [`Journal::done`].
    pub(super) fn record(&self, sweep: &Sweep) -> u64 {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut state) = self.state.lock() {
            state.calls.insert(
                id,
                Call {
                    absent: sweep.absent.clone(),
                    git_watch: sweep.git_watch.clone(),
                    known: sweep.known.clone(),
                    nested: sweep.nested.clone(),
                },
            );
            self.write(&mut state);
        }
        id
    }

    /// The command ended (and was checked).
    pub(super) fn done(&self, id: u64) {
        if let Ok(mut state) = self.state.lock()
            && state.calls.remove(&id).is_some()
        {
            self.write(&mut state);
        }
    }

    fn write(&self, state: &mut State) {
        if state.calls.is_empty() && state.file.is_none() {
            return;
        }
        let record = Record {
            pid: std::process::id(),
            start: *self.start.get_or_init(|| start_time(std::process::id())),
            calls: state.calls.values().cloned().collect(),
        };
        let Ok(mut text) = serde_json::to_vec(&record) else {
            return;
        };
        if let Err(e) = self.write_in_place(state, &mut text) {
            state.file = None;
            tracing::warn!(error = %e, path = %self.path.display(), "cannot write the sandbox journal");
        }
    }

    /// Write `text` over the record (made first when there is none, or when it was removed
    /// since: its directory too), padded to the longest record written.
    fn write_in_place(&self, state: &mut State, text: &mut Vec<u8>) -> std::io::Result<()> {
        // A file removed since (its link count is 0) is made again: a record nobody can find
        // guards nothing.
        if let Some(file) = &state.file
            && file
                .metadata()
                .is_ok_and(|m| std::os::unix::fs::MetadataExt::nlink(&m) == 0)
        {
            state.file = None;
        }
        let file = match state.file.take() {
            Some(file) => file,
            None => {
                state.len = 0;
                self.create()?
            }
        };
        let len = text.len();
        text.resize(len.max(state.len), b' ');
        let written = file.write_all_at(text, 0);
        state.len = state.len.max(len);
        state.file = Some(file);
        written
    }

    /// The record's file, empty (its directory made when it is missing: the first command,
    /// or removed since).
    fn create(&self) -> std::io::Result<File> {
        let open = || {
            std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(&self.path)
        };
        match open() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if let Some(dir) = self.path.parent() {
                    std::fs::create_dir_all(dir)?;
                }
                open()
            }
            other => other,
        }
    }

    /// The session ends: the checks of commands that never reported their end run now.
    pub(super) fn finish(&self) -> Vec<String> {
        let calls: Vec<Call> = self
            .state
            .lock()
            .map(|mut state| {
                state.file = None;
                std::mem::take(&mut state.calls).into_values().collect()
            })
            .unwrap_or_default();
        let _ = std::fs::remove_file(&self.path);
        let home = self.path.parent().and_then(Path::parent);
        run(&calls, home)
    }

    /// Whether `SKIFF_HOME/sandbox` holds a record of a process that is gone
    /// ([`Journal::sweep_stale`] has work). A running session's record stays there from its
    /// first command to its end.
    pub(super) fn any_pending(skiff_home: &Path) -> bool {
        std::fs::read_dir(skiff_home.join("sandbox")).is_ok_and(|entries| {
            entries.flatten().any(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                is_record(&name) && !matches!(read_record(&e.path(), &name), Stale::No)
            })
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
            match read_record(&path, &name) {
                Stale::No => continue,
                Stale::Unreadable => {}
                Stale::Yes(record) => notes.extend(run(&record.calls, Some(skiff_home))),
            }
            let _ = std::fs::remove_file(&path);
        }
        notes
    }
}

/// What a record in `SKIFF_HOME/sandbox` is.
enum Stale {
    /// Its process runs (or, unreadable, the process the file is named after runs: a record
    /// being rewritten).
    No,
    /// Its process is gone: its checks are due.
    Yes(Record),
    /// Unreadable, and no process of the name's pid runs.
    Unreadable,
}

fn read_record(path: &Path, name: &str) -> Stale {
    match std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice::<Record>(&b).ok())
    {
        Some(r) if alive(r.pid, r.start) => Stale::No,
        Some(r) => Stale::Yes(r),
        None if name_pid(name).is_some_and(|pid| alive(pid, None)) => Stale::No,
        None => Stale::Unreadable,
    }
}

/// The pid a record's file is named after (`pending-<pid>-<n>.json`).
fn name_pid(name: &str) -> Option<u32> {
    name.strip_prefix("pending-")?
        .split('-')
        .next()?
        .parse()
        .ok()
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
            &call.nested,
            &quarantine,
            &|_| false,
            &crate::presence::Round::uncached(),
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
        assert!(read(&journal.path).calls.is_empty());
        assert!(journal.finish().is_empty());
        assert!(!journal.path.exists());
    }

    fn read(path: &Path) -> Record {
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    }

    #[test]
    fn the_record_is_rewritten_in_place_and_a_shorter_one_is_padded() {
        let home = tempfile::tempdir().unwrap();
        let journal = Journal::new(home.path());
        let long = Sweep {
            absent: vec![PathBuf::from("/w/").join("x".repeat(300))],
            ..Sweep::default()
        };
        let short = Sweep {
            absent: vec![PathBuf::from("/w/.envrc")],
            ..Sweep::default()
        };
        let a = journal.record(&long);
        let inode = |p: &Path| std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(p).unwrap());
        let first = inode(&journal.path);
        let b = journal.record(&short);
        let longest = std::fs::metadata(&journal.path).unwrap().len();
        journal.done(a);
        // The same file, as long as the longest record, holding only the running call.
        assert_eq!(inode(&journal.path), first);
        assert_eq!(std::fs::metadata(&journal.path).unwrap().len(), longest);
        assert_eq!(read(&journal.path).calls.len(), 1);
        assert_eq!(read(&journal.path).calls[0].absent, short.absent);
        journal.done(b);
        assert_eq!(inode(&journal.path), first);
        assert!(read(&journal.path).calls.is_empty());
        let mode = std::fs::metadata(&journal.path).unwrap().permissions();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
            0o600
        );
    }

    #[test]
    fn a_record_being_rewritten_is_left_alone_while_its_process_runs() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("sandbox");
        std::fs::create_dir(&dir).unwrap();
        // Half a record, named after this (running) process: neither due nor removed.
        let live = dir.join(format!("pending-{}-7.json", std::process::id()));
        std::fs::write(&live, "{\"pid\":1,\"calls\":[{\"abs").unwrap();
        assert!(!Journal::any_pending(home.path()));
        assert!(Journal::sweep_stale(home.path()).is_empty());
        assert!(live.exists());
        // Half a record of a process that is gone: removed.
        let dead = dir.join(format!("pending-{}-0.json", u32::MAX - 1));
        std::fs::write(&dead, "{\"pid\":").unwrap();
        assert!(Journal::any_pending(home.path()));
        assert!(Journal::sweep_stale(home.path()).is_empty());
        assert!(!dead.exists());
        assert!(live.exists());
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
        // A record of a running process (this one) is not a stale one.
        let own = Journal::new(home.path());
        let id = own.record(&Sweep::default());
        assert!(!Journal::any_pending(home.path()));
        own.done(id);
        assert!(!Journal::any_pending(home.path()));
        std::fs::write(dir.join(format!("pending-{}-0.json", u32::MAX - 1)), "{}").unwrap();
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
        assert!(read(&journal.path).calls.is_empty());
    }
}
