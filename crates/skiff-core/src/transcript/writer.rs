//! The transcript's file I/O, on a thread of its own so that neither writing nor `fsync` ever
//! blocks the session's runtime thread. The store sends whole lines; the thread appends each
//! with one `write_all`, closes a half line left by a crash or a failed write before the next
//! line, and syncs when asked. Dropping the [`Writer`] waits until everything sent is written
//! and synced.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;

use super::create_private_dir;

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
}

impl Writer {
    /// Start the thread for `path` (the file is opened at the first line).
    pub(super) fn start(path: PathBuf) -> Self {
        let (tx, rx) = mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("skiff-transcript".into())
            .spawn(move || FileWriter::new(path).run(&rx));
        match spawned {
            Ok(thread) => Self {
                tx: Some(tx),
                thread: Some(thread),
            },
            Err(e) => {
                tracing::warn!(error = %e, "cannot start the transcript writer; the session is not saved");
                Self {
                    tx: None,
                    thread: None,
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
        self.send(Cmd::Line(line));
    }

    /// Sync what was written (not waited for).
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
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(Cmd::Sync);
        }
        if let Some(thread) = self.thread.take()
            && thread.join().is_err()
        {
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
}

impl FileWriter {
    fn new(path: PathBuf) -> Self {
        Self {
            path,
            file: None,
            needs_newline: false,
            dirty: false,
            dir_unsynced: false,
            warned: false,
        }
    }

    fn run(mut self, rx: &mpsc::Receiver<Cmd>) {
        while let Ok(cmd) = rx.recv() {
            match cmd {
                Cmd::Line(line) => self.write(&line),
                Cmd::Sync => self.sync(),
                Cmd::Flush(done) => {
                    self.sync();
                    let _ = done.send(());
                }
            }
        }
        self.sync();
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
