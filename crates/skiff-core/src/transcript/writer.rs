//! The transcript's file I/O, on a thread of its own so that neither writing nor `fsync` ever
//! blocks the session's runtime thread. The store sends whole lines; the thread appends each
//! with one `write_all`, closes a half line left by a crash or a failed write before the next
//! line, and syncs when asked. Dropping the [`Writer`] waits until everything sent is written
//! (to the kernel: a killed or crashed skiff loses nothing), but not for a sync still to come:
//! `fdatasync` of a new file and its directory took 1.9 ms on a 2-core VM, at the end of every
//! `skiff -p` run. Only an operating-system crash within the kernel's write-back delay after
//! skiff ended can lose those lines (Claude Code never syncs its transcripts).
//!
//! A sync asked for is done [`SYNC_DELAY`] later (those asked for meanwhile with it), not at
//! once: a process's exit waits for each of its threads still inside `fdatasync`, so a sync
//! started as a `skiff -p` run's last turn completes held up its exit by 0.5 to 0.9 ms
//! (measured). A session that goes on is synced a moment later; one that ends first leaves
//! the lines to the kernel's write-back, as above.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::create_private_dir;

/// How long after the first sync asked for (and not done yet) the thread syncs.
const SYNC_DELAY: Duration = Duration::from_millis(100);

enum Cmd {
    /// Append this line (ending in `\n`).
    Line(Vec<u8>),
    /// Make what was written durable.
    Sync,
    /// Answer once everything before is written and synced.
    Flush(mpsc::Sender<()>),
}

/// The handle of a transcript's writer thread.
pub(super) struct Writer {
    tx: Option<mpsc::Sender<Cmd>>,
    thread: Option<JoinHandle<()>>,
    /// Set when the writer is dropped: what is left is written, not synced.
    ending: Arc<AtomicBool>,
    /// Lines sent to the thread.
    sent: AtomicU64,
    /// Lines the thread has written (or failed to write).
    done: Arc<Progress>,
}

/// How many lines the thread has dealt with, and a way to wait for more.
#[derive(Default)]
struct Progress {
    lines: Mutex<u64>,
    changed: Condvar,
    /// Syncs done (the tests' view of them).
    syncs: AtomicU64,
}

impl Progress {
    fn advance(&self) {
        let mut n = self
            .lines
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *n += 1;
        self.changed.notify_all();
    }
}

impl Writer {
    /// Start the thread for `path` (the file is opened at the first line).
    pub(super) fn start(path: PathBuf) -> Self {
        Self::start_with_delay(path, SYNC_DELAY)
    }

    /// [`Writer::start`], syncing `delay` after a sync is asked for.
    fn start_with_delay(path: PathBuf, delay: Duration) -> Self {
        let (tx, rx) = mpsc::channel();
        let ending = Arc::new(AtomicBool::new(false));
        let done = Arc::new(Progress::default());
        let writer = FileWriter::new(path, Arc::clone(&ending), Arc::clone(&done), delay);
        let spawned = std::thread::Builder::new()
            .name("skiff-transcript".into())
            .spawn(move || writer.run(&rx));
        match spawned {
            Ok(thread) => Self {
                tx: Some(tx),
                thread: Some(thread),
                ending,
                sent: AtomicU64::new(0),
                done,
            },
            Err(e) => {
                tracing::warn!(error = %e, "cannot start the transcript writer; the session is not saved");
                Self {
                    tx: None,
                    thread: None,
                    ending,
                    sent: AtomicU64::new(0),
                    done,
                }
            }
        }
    }

    fn send(&self, cmd: Cmd) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(cmd);
        }
    }

    /// Append a line.
    pub(super) fn line(&self, line: Vec<u8>) {
        if self.tx.is_some() {
            self.sent.fetch_add(1, Ordering::SeqCst);
        }
        self.send(Cmd::Line(line));
    }

    /// Sync what was written, [`SYNC_DELAY`] from now (not waited for).
    pub(super) fn sync(&self) {
        self.send(Cmd::Sync);
    }

    /// Wait until everything sent so far is written and synced.
    pub(super) fn flush(&self) {
        let (tx, rx) = mpsc::channel();
        self.send(Cmd::Flush(tx));
        let _ = rx.recv();
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.ending.store(true, Ordering::SeqCst);
        drop(self.tx.take());
        let Some(thread) = self.thread.take() else {
            return;
        };
        // Every line written: the thread may still be in a sync, which nobody waits for.
        let sent = self.sent.load(Ordering::SeqCst);
        let mut lines = self
            .done
            .lines
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        while *lines < sent && !thread.is_finished() {
            lines = match self
                .done
                .changed
                .wait_timeout(lines, std::time::Duration::from_millis(50))
            {
                Ok((l, _)) => l,
                Err(e) => e.into_inner().0,
            };
        }
        drop(lines);
        if thread.is_finished() && thread.join().is_err() {
            tracing::error!("the transcript writer panicked");
        }
    }
}

/// The thread's side: the open file and what is known about its end.
struct FileWriter {
    path: PathBuf,
    file: Option<File>,
    /// The file may end in a half line: start the next write with `\n`.
    needs_newline: bool,
    /// Lines written since the last sync.
    dirty: bool,
    /// The file was created here: sync its directory once too.
    dir_unsynced: bool,
    /// An I/O error was already reported.
    warned: bool,
    /// The writer was dropped: write what is left, sync nothing more.
    ending: Arc<AtomicBool>,
    /// Counts the lines dealt with.
    done: Arc<Progress>,
    /// How long a sync asked for waits.
    delay: Duration,
}

impl FileWriter {
    fn new(path: PathBuf, ending: Arc<AtomicBool>, done: Arc<Progress>, delay: Duration) -> Self {
        Self {
            path,
            file: None,
            needs_newline: false,
            dirty: false,
            dir_unsynced: false,
            warned: false,
            ending,
            done,
            delay,
        }
    }

    fn run(mut self, rx: &mpsc::Receiver<Cmd>) {
        // When the sync asked for is due.
        let mut due: Option<Instant> = None;
        loop {
            let received = match due {
                None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
                Some(at) => rx.recv_timeout(at.saturating_duration_since(Instant::now())),
            };
            let cmd = match received {
                Ok(cmd) => cmd,
                Err(RecvTimeoutError::Timeout) => {
                    due = None;
                    if !self.ending.load(Ordering::SeqCst) {
                        self.sync();
                    }
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => break,
            };
            match cmd {
                Cmd::Line(line) => {
                    self.write(&line);
                    self.done.advance();
                }
                // (When due, a writer that is ending by then syncs nothing.)
                Cmd::Sync => {
                    due.get_or_insert_with(|| Instant::now() + self.delay);
                }
                Cmd::Flush(done) => {
                    due = None;
                    self.sync();
                    let _ = done.send(());
                }
            }
        }
    }

    fn warn(&mut self, what: &str, e: &std::io::Error) {
        if self.warned {
            tracing::debug!(path = %self.path.display(), error = %e, "session transcript: {what}");
        } else {
            self.warned = true;
            tracing::warn!(
                path = %self.path.display(),
                error = %e,
                "session transcript: {what}; the session may not be resumable (further errors are logged at debug level)"
            );
        }
    }

    /// Open (creating it 0600, its directory 0700) the file if needed; false if impossible.
    fn ensure_open(&mut self) -> bool {
        if self.file.is_some() {
            return true;
        }
        match open(&self.path) {
            Ok((file, existed, half_line)) => {
                self.file = Some(file);
                self.dir_unsynced = !existed;
                self.needs_newline |= half_line;
                true
            }
            Err(e) => {
                self.warn("cannot open the file", &e);
                false
            }
        }
    }

    fn write(&mut self, line: &[u8]) {
        if !self.ensure_open() {
            return;
        }
        let Some(file) = self.file.as_mut() else {
            return;
        };
        let result = if self.needs_newline {
            // One write for the closing newline and the line, so a crash splits nothing more.
            let mut buf = Vec::with_capacity(line.len() + 1);
            buf.push(b'\n');
            buf.extend_from_slice(line);
            file.write_all(&buf)
        } else {
            file.write_all(line)
        };
        match result {
            Ok(()) => {
                self.needs_newline = false;
                self.dirty = true;
            }
            Err(e) => {
                // Part of the line may be in the file: close it before the next one.
                self.needs_newline = true;
                self.warn("cannot write a message", &e);
            }
        }
    }

    fn sync(&mut self) {
        if !self.dirty {
            return;
        }
        let Some(file) = self.file.as_ref() else {
            return;
        };
        if let Err(e) = file.sync_data() {
            self.warn("cannot sync the file", &e);
            return;
        }
        self.done.syncs.fetch_add(1, Ordering::SeqCst);
        self.dirty = false;
        if self.dir_unsynced {
            self.dir_unsynced = false;
            if let Some(dir) = self.path.parent() {
                // Makes the new file's directory entry durable too; best effort.
                if let Err(e) = File::open(dir).and_then(|d| d.sync_all()) {
                    tracing::debug!(error = %e, "session transcript: cannot sync the directory");
                }
            }
        }
    }
}

/// Open `path` for appending: (file, existed before, ends in a half line).
fn open(path: &Path) -> std::io::Result<(File, bool, bool)> {
    if let Some(dir) = path.parent() {
        create_private_dir(dir)?;
    }
    let existed = path.exists();
    let mut opts = OpenOptions::new();
    opts.read(true).append(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut file = opts.open(path)?;
    let len = file.metadata()?.len();
    let mut half_line = false;
    if len > 0 {
        let mut last = [0u8; 1];
        file.seek(SeekFrom::Start(len - 1))?;
        file.read_exact(&mut last)?;
        half_line = last[0] != b'\n';
    }
    Ok((file, existed, half_line))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Dropping the writer returns only once every line sent is in the file, even with syncs
    /// queued between them (which it does not wait for).
    #[test]
    fn drop_leaves_every_line_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("t.jsonl");
        for round in 0..20 {
            let writer = Writer::start(path.clone());
            for i in 0..50 {
                writer.line(format!("{{\"round\":{round},\"i\":{i}}}\n").into_bytes());
                if i % 10 == 0 {
                    writer.sync();
                }
            }
            drop(writer);
            let text = std::fs::read_to_string(&path).unwrap();
            assert_eq!(text.lines().count(), (round + 1) * 50, "round {round}");
        }
    }

    /// A sync waits: a writer dropped before it is due (a `skiff -p` run ending right after its
    /// turn) leaves it undone, so that the process's exit does not wait for it; a flush syncs
    /// at once.
    #[test]
    fn a_sync_is_done_later_and_not_at_all_once_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let writer = Writer::start_with_delay(path.clone(), Duration::from_secs(600));
        let progress = Arc::clone(&writer.done);
        let wait_for = |n: u64| {
            let deadline = Instant::now() + Duration::from_secs(20);
            while *progress.lines.lock().unwrap() < n && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(1));
            }
            assert_eq!(*progress.lines.lock().unwrap(), n);
        };
        writer.line(b"{\"a\":1}\n".to_vec());
        writer.sync();
        wait_for(1);
        // Time for a sync done at once; the next line is written after it.
        std::thread::sleep(Duration::from_millis(50));
        writer.line(b"{\"a\":2}\n".to_vec());
        wait_for(2);
        drop(writer);
        assert_eq!(progress.syncs.load(Ordering::SeqCst), 0);
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 2);

        let writer = Writer::start_with_delay(path.clone(), Duration::from_secs(600));
        writer.line(b"{\"b\":2}\n".to_vec());
        writer.sync();
        writer.flush();
        assert_eq!(writer.done.syncs.load(Ordering::SeqCst), 1);
        drop(writer);

        // Due: done once for every sync asked for meanwhile, without a flush.
        let writer = Writer::start_with_delay(path.clone(), Duration::from_millis(20));
        for i in 0..5 {
            writer.line(format!("{{\"c\":{i}}}\n").into_bytes());
            writer.sync();
        }
        let deadline = Instant::now() + Duration::from_secs(20);
        while writer.done.syncs.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(writer.done.syncs.load(Ordering::SeqCst) >= 1);
        drop(writer);
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 8);
    }
}
