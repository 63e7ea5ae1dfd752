//! Prompt history, shared by the terminal UI (Up and Down walk it, Ctrl-R searches it) and the
//! line REPL (which adds to it). Kept in `SKIFF_HOME/history`, one entry per line with newlines
//! written as `<\n>` (reedline's format, which earlier versions' line REPL wrote, so that
//! history carries over); at most [`MAX_ENTRIES`] are kept.

use std::path::PathBuf;

/// How many entries the file keeps.
pub const MAX_ENTRIES: usize = 1000;

/// The prompt history and where the Up/Down walk is.
#[derive(Debug, Default)]
pub struct History {
    entries: Vec<String>,
    path: Option<PathBuf>,
    /// Index into `entries` while walking (None: at the draft).
    pos: Option<usize>,
    /// What was typed before walking started.
    draft: String,
}

impl History {
    /// The history in `path` (read now; empty when missing or unreadable).
    pub fn load(path: Option<PathBuf>) -> Self {
        let entries = path
            .as_ref()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .map(|text| {
                text.lines()
                    .filter(|l| !l.is_empty())
                    .map(|l| l.replace("<\\n>", "\n"))
                    .collect()
            })
            .unwrap_or_default();
        Self {
            entries,
            path,
            pos: None,
            draft: String::new(),
        }
    }

    /// The entries, oldest first.
    pub fn entries(&self) -> &[String] {
        &self.entries
    }

    /// Add a sent prompt (not twice in a row) and append it to the file, off the runtime.
    pub fn add(&mut self, entry: &str) {
        self.pos = None;
        let entry = entry.trim();
        if entry.is_empty() || self.entries.last().is_some_and(|e| e == entry) {
            return;
        }
        self.entries.push(entry.to_owned());
        let Some(path) = self.path.clone() else {
            return;
        };
        let all = if self.entries.len() > MAX_ENTRIES {
            let cut = self.entries.len() - MAX_ENTRIES;
            self.entries.drain(..cut);
            Some(self.entries.clone())
        } else {
            None
        };
        let line = encode(entry);
        let write = move || {
            use std::io::Write;
            if let Some(dir) = path.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            let result = match all {
                // Too long: write the kept entries again.
                Some(all) => {
                    let text: String = all.iter().map(|e| format!("{}\n", encode(e))).collect();
                    std::fs::write(&path, text)
                }
                None => std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&path)
                    .and_then(|mut f| f.write_all(format!("{line}\n").as_bytes())),
            };
            if let Err(e) = result {
                tracing::warn!(error = %e, path = %path.display(), "cannot save the prompt history");
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => {
                rt.spawn_blocking(write);
            }
            Err(_) => write(),
        }
    }

    /// Up: the previous entry (`current` is what is typed, kept as the draft).
    pub fn older(&mut self, current: &str) -> Option<&str> {
        let next = match self.pos {
            None => {
                self.draft = current.to_owned();
                self.entries.len().checked_sub(1)?
            }
            Some(0) => return None,
            Some(i) => i - 1,
        };
        self.pos = Some(next);
        self.entries.get(next).map(String::as_str)
    }

    /// Down: the next entry, or back to the draft.
    pub fn newer(&mut self) -> Option<String> {
        let i = self.pos?;
        if i + 1 < self.entries.len() {
            self.pos = Some(i + 1);
            self.entries.get(i + 1).cloned()
        } else {
            self.pos = None;
            Some(std::mem::take(&mut self.draft))
        }
    }

    /// Stop walking (the text was edited or sent).
    pub fn reset_walk(&mut self) {
        self.pos = None;
    }

    /// Ctrl-R: the newest entry containing `query` older than entry `before` (all when None);
    /// its index.
    pub fn search(&self, query: &str, before: Option<usize>) -> Option<usize> {
        let end = before.unwrap_or(self.entries.len()).min(self.entries.len());
        let q = query.to_lowercase();
        self.entries[..end]
            .iter()
            .rposition(|e| e.to_lowercase().contains(&q))
    }
}

fn encode(entry: &str) -> String {
    entry.replace('\n', "<\\n>")
}

/// The Ctrl-R search being typed.
#[derive(Debug, Default, Clone)]
pub struct Search {
    /// What is searched for.
    pub query: String,
    /// The entry found (index into the history).
    pub found: Option<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walking_keeps_the_draft_and_the_file_keeps_newlines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history");
        std::fs::write(&path, "one\ntwo<\\n>lines\n").unwrap();
        let mut h = History::load(Some(path.clone()));
        assert_eq!(h.older("draft"), Some("two\nlines"));
        assert_eq!(h.older(""), Some("one"));
        assert_eq!(h.older(""), None);
        assert_eq!(h.newer().as_deref(), Some("two\nlines"));
        assert_eq!(h.newer().as_deref(), Some("draft"));
        h.add("three\nx");
        h.add("three\nx");
        assert_eq!(h.entries().len(), 3);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "one\ntwo<\\n>lines\nthree<\\n>x\n"
        );
        assert_eq!(h.search("O", None), Some(1));
        assert_eq!(h.search("o", Some(1)), Some(0));
        assert_eq!(h.search("zzz", None), None);
    }
}
