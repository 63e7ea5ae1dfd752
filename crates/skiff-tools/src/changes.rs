//! Change tracking (the seeds' CodeChange list): every file Write and Edit created or modified
//! in a run, with a unified diff against its content before the first change.

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
}

impl ChangeLog {
    /// Record that `path` (shown as `display`) went from `before` (None: did not exist) to `after`.
    pub fn record(&self, path: &Path, display: &str, before: Option<&str>, after: &str) {
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

/// A `git diff`-style unified diff with three lines of context.
pub fn unified_diff(display: &str, before: Option<&str>, after: &str) -> String {
    let old = before.unwrap_or("");
    let diff = similar::TextDiff::from_lines(old, after);
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
