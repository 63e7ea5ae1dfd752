//! Change tracking (the seeds' CodeChange list): every file Write and Edit created or modified
//! in a run, with a unified diff against its content before the first change; and, when
//! checkpoints are on, a journal of every change so the files can be put back as they were at
//! a checkpoint (the Agent SDKs' `rewind_files`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::Serialize;

/// Whether the run created the file or modified an existing one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    /// The file did not exist before the run.
    Created,
    /// The file existed and was changed.
    Modified,
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CodeChange {
    /// Path relative to the workspace root (absolute when outside it).
    pub path: String,
    /// Created or modified.
    pub kind: ChangeKind,
    /// Unified diff from the content before the run's first change to the current content.
    pub diff: String,
}

#[derive(Debug)]
struct Entry {
    display: String,
    original: Option<String>,
    current: String,
}

/// The change list of a run. Shared by Write and Edit through the tool context.
#[derive(Debug, Default)]
pub struct ChangeLog {
    entries: Mutex<BTreeMap<PathBuf, Entry>>,
    /// Every change in order, with the content before it (`None`: checkpoints are off).
    journal: Mutex<Option<Vec<Step>>>,
    /// Named checkpoints (user message uuids): positions in the journal.
    marks: Mutex<std::collections::HashMap<String, usize>>,
}

/// One change of the journal.
#[derive(Debug)]
struct Step {
    path: PathBuf,
    before: Option<String>,
}

/// What a rewind changed (or would change, on a dry run).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RewindReport {
    /// The files put back (absolute paths), sorted.
    pub files_changed: Vec<PathBuf>,
    /// Lines added by putting them back.
    pub insertions: usize,
    /// Lines removed by putting them back.
    pub deletions: usize,
}

impl ChangeLog {
    /// Record that `path` (shown as `display`) went from `before` (None: did not exist) to `after`.
    pub fn record(&self, path: &Path, display: &str, before: Option<&str>, after: &str) {
        crate::protected::record_own_write(path);
        if let Some(journal) = self
            .journal
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
        {
            journal.push(Step {
                path: path.to_path_buf(),
                before: before.map(str::to_owned),
            });
        }
        let mut map = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(path.to_path_buf())
            .and_modify(|e| e.current = after.to_owned())
            .or_insert_with(|| Entry {
                display: display.to_owned(),
                original: before.map(str::to_owned),
                current: after.to_owned(),
            });
    }

    /// The changes so far, sorted by path. A file changed back to its original is left out.
    pub fn changes(&self) -> Vec<CodeChange> {
        let map = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        map.values()
            .filter(|e| e.original.as_deref() != Some(e.current.as_str()))
            .map(|e| CodeChange {
                path: e.display.clone(),
                kind: if e.original.is_some() {
                    ChangeKind::Modified
                } else {
                    ChangeKind::Created
                },
                diff: unified_diff(&e.display, e.original.as_deref(), &e.current),
            })
            .collect()
    }

    /// Take the changes and start a new run.
    pub fn take(&self) -> Vec<CodeChange> {
        let out = self.changes();
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        out
    }
}

impl ChangeLog {
    /// Keep a journal of every change from now on, so files can be rewound to checkpoints.
    pub fn enable_checkpoints(&self) {
        let mut journal = self.journal.lock().unwrap_or_else(|e| e.into_inner());
        if journal.is_none() {
            *journal = Some(Vec::new());
        }
    }

    /// A checkpoint: the point in the journal that [`Self::rewind`] can go back to (`None`
    /// when checkpoints are off).
    pub fn checkpoint(&self) -> Option<usize> {
        self.journal
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(Vec::len)
    }

    /// Name the current checkpoint `id` (a message's uuid); nothing when checkpoints are off.
    pub fn mark(&self, id: &str) {
        if let Some(pos) = self.checkpoint() {
            self.marks
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(id.to_owned(), pos);
        }
    }

    /// [`Self::rewind`] to the checkpoint named `id`. Checkpoints named after it are
    /// forgotten when the rewind is done.
    pub fn rewind_to(&self, id: &str, dry_run: bool) -> Result<RewindReport, String> {
        if self.checkpoint().is_none() {
            return Err("file checkpointing is not enabled".to_owned());
        }
        let mark = self
            .marks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .copied()
            .ok_or_else(|| format!("no file checkpoint found for message {id}"))?;
        let report = self.rewind(mark, dry_run)?;
        if !dry_run {
            self.marks
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .retain(|_, m| *m <= mark);
        }
        Ok(report)
    }

    /// Put every file changed since checkpoint `mark` back as it was then (a file created
    /// since is removed). With `dry_run`, only say what would change. Files are restored even
    /// if something else (a command) changed them since.
    pub fn rewind(&self, mark: usize, dry_run: bool) -> Result<RewindReport, String> {
        let mut journal = self.journal.lock().unwrap_or_else(|e| e.into_inner());
        let Some(steps) = journal.as_mut() else {
            return Err("file checkpointing is not enabled".to_owned());
        };
        if mark > steps.len() {
            return Err("the checkpoint is not in this session's change journal".to_owned());
        }
        // The oldest `before` of each file since the mark is what it was at the mark.
        let mut targets: BTreeMap<PathBuf, Option<String>> = BTreeMap::new();
        for step in &steps[mark..] {
            targets
                .entry(step.path.clone())
                .or_insert_with(|| step.before.clone());
        }
        let mut report = RewindReport::default();
        for (path, target) in &targets {
            let now = match std::fs::read(path) {
                Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
            };
            if now == *target {
                continue;
            }
            let diff = crate::patch::line_diff(
                now.as_deref().unwrap_or(""),
                target.as_deref().unwrap_or(""),
            );
            for change in diff.iter_all_changes() {
                match change.tag() {
                    similar::ChangeTag::Insert => report.insertions += 1,
                    similar::ChangeTag::Delete => report.deletions += 1,
                    similar::ChangeTag::Equal => {}
                }
            }
            report.files_changed.push(path.clone());
        }
        if dry_run {
            return Ok(report);
        }
        for path in &report.files_changed {
            let result = match targets.get(path).cloned().flatten() {
                Some(content) => crate::atomic::write_atomic(path, content.as_bytes()),
                None => std::fs::remove_file(path),
            };
            result.map_err(|e| format!("cannot restore {}: {e}", path.display()))?;
        }
        steps.truncate(mark);
        let mut map = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        for (path, target) in targets {
            let back_to_original = map
                .get(&path)
                .is_some_and(|e| e.original.as_deref() == target.as_deref());
            if back_to_original {
                map.remove(&path);
            } else if let Some(entry) = map.get_mut(&path) {
                entry.current = target.unwrap_or_default();
            }
        }
        Ok(report)
    }
}

/// A `git diff`-style unified diff with three lines of context.
pub fn unified_diff(display: &str, before: Option<&str>, after: &str) -> String {
    let old = before.unwrap_or("");
    let diff = crate::patch::line_diff(old, after);
    let from = if before.is_some() {
        format!("a/{display}")
    } else {
        "/dev/null".to_owned()
    };
    diff.unified_diff()
        .context_radius(3)
        .header(&from, &format!("b/{display}"))
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewind_puts_files_back_and_removes_created_ones() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.txt");
        let b = dir.path().join("b.txt");
        let log = ChangeLog::default();
        assert!(log.checkpoint().is_none());
        assert!(log.rewind(0, true).is_err());
        log.enable_checkpoints();
        std::fs::write(&a, "one\n").unwrap();
        let start = log.checkpoint().unwrap();
        std::fs::write(&a, "one\ntwo\n").unwrap();
        log.record(&a, "a.txt", Some("one\n"), "one\ntwo\n");
        let middle = log.checkpoint().unwrap();
        std::fs::write(&b, "new\n").unwrap();
        log.record(&b, "b.txt", None, "new\n");
        std::fs::write(&a, "one\ntwo\nthree\n").unwrap();
        log.record(&a, "a.txt", Some("one\ntwo\n"), "one\ntwo\nthree\n");

        let dry = log.rewind(middle, true).unwrap();
        assert_eq!(dry.files_changed, vec![a.clone(), b.clone()]);
        assert_eq!((dry.insertions, dry.deletions), (0, 2));
        assert!(b.exists(), "a dry run changes nothing");

        let done = log.rewind(middle, false).unwrap();
        assert_eq!(done, dry);
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "one\ntwo\n");
        assert!(!b.exists());
        assert!(log.rewind(start + 5, false).is_err());
        log.rewind(start, false).unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "one\n");
        assert!(log.changes().is_empty());
    }

    #[test]
    fn named_checkpoints() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.txt");
        let log = ChangeLog::default();
        log.mark("early");
        assert!(
            log.rewind_to("early", false)
                .unwrap_err()
                .contains("not enabled")
        );
        log.enable_checkpoints();
        log.mark("m1");
        std::fs::write(&a, "x\n").unwrap();
        log.record(&a, "a.txt", None, "x\n");
        log.mark("m2");
        assert!(
            log.rewind_to("nope", false)
                .unwrap_err()
                .contains("no file checkpoint")
        );
        assert!(log.rewind_to("m2", false).unwrap().files_changed.is_empty());
        assert_eq!(
            log.rewind_to("m1", false).unwrap().files_changed,
            vec![a.clone()]
        );
        assert!(!a.exists());
        assert!(
            log.rewind_to("m2", true).is_err(),
            "later checkpoints are forgotten"
        );
    }

    #[test]
    fn first_original_is_kept_and_created_vs_modified() {
        let log = ChangeLog::default();
        log.record(
            Path::new("/w/a.txt"),
            "a.txt",
            Some("one\ntwo\n"),
            "one\n2\n",
        );
        log.record(Path::new("/w/a.txt"), "a.txt", Some("one\n2\n"), "1\n2\n");
        log.record(Path::new("/w/new.txt"), "new.txt", None, "hello\n");
        log.record(Path::new("/w/same.txt"), "same.txt", Some("x\n"), "y\n");
        log.record(Path::new("/w/same.txt"), "same.txt", Some("y\n"), "x\n");
        let c = log.changes();
        assert_eq!(c.len(), 2, "{c:?}");
        assert_eq!(c[0].path, "a.txt");
        assert_eq!(c[0].kind, ChangeKind::Modified);
        assert!(
            c[0].diff.contains("--- a/a.txt\n+++ b/a.txt\n"),
            "{}",
            c[0].diff
        );
        assert!(c[0].diff.contains("-one\n-two\n+1\n+2\n"), "{}", c[0].diff);
        assert_eq!(c[1].kind, ChangeKind::Created);
        assert!(c[1].diff.contains("--- /dev/null") && c[1].diff.contains("+hello"));
        assert_eq!(log.take().len(), 2);
        assert!(log.changes().is_empty());
    }
}
