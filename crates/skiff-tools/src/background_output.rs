//! The output of a background command, bounded: the command writes into a pipe, skiff copies
//! it into the output file up to [`HEAD_BYTES`]; past that only the last [`TAIL_BYTES`] are
//! kept (in memory, written after the head with a line saying what was left out, at most once
//! a second and whenever it is read). So a command that never stops printing (`yes`) costs at
//! most `HEAD_BYTES + TAIL_BYTES` of disk, as foreground output keeps its head and tail.
//!
//! Readers ([`CappedOutput::read_new`]) see the output as a stream of positions: what a
//! previous read returned is not returned again, and what was left out is counted as skipped.

use std::collections::VecDeque;
use std::io::{Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The beginning of the output that is kept in the file.
pub const HEAD_BYTES: u64 = 4 * 1024 * 1024;
/// The end of the output that is kept once the output is longer than [`HEAD_BYTES`].
pub const TAIL_BYTES: usize = 4 * 1024 * 1024;
/// How often the file is brought up to date while output is being left out.
const FLUSH_EVERY: Duration = Duration::from_secs(1);

/// A background command's output file, bounded.
#[derive(Debug)]
pub struct CappedOutput {
    path: PathBuf,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    file: std::fs::File,
    /// Bytes of output so far.
    total: u64,
    /// Bytes of the head in the file (at most [`HEAD_BYTES`]).
    head: u64,
    /// The last bytes past the head (at most [`TAIL_BYTES`]).
    tail: VecDeque<u8>,
    /// The file does not show the tail as it is now.
    stale: bool,
    /// When the file was last brought up to date.
    flushed: Instant,
    /// Where the reader is (a position in the output).
    read: u64,
}

impl CappedOutput {
    /// Output going to `file` (new and empty) at `path`.
    pub fn new(path: PathBuf, file: std::fs::File) -> Self {
        Self {
            path,
            state: Mutex::new(State {
                file,
                total: 0,
                head: 0,
                tail: VecDeque::new(),
                stale: false,
                flushed: Instant::now(),
                read: 0,
            }),
        }
    }

    /// The output file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Add output.
    pub fn push(&self, mut bytes: &[u8]) {
        let Ok(mut s) = self.state.lock() else {
            return;
        };
        if s.head < HEAD_BYTES && s.tail.is_empty() {
            let room = usize::try_from(HEAD_BYTES - s.head).unwrap_or(usize::MAX);
            let n = room.min(bytes.len());
            let at = s.head;
            if let Err(e) = s.file.write_all_at(&bytes[..n], at) {
                tracing::warn!(path = %self.path.display(), error = %e, "cannot write background output");
            }
            s.head += n as u64;
            s.total += n as u64;
            bytes = &bytes[n..];
        }
        if bytes.is_empty() {
            return;
        }
        s.total += bytes.len() as u64;
        s.tail.extend(bytes);
        let extra = s.tail.len().saturating_sub(TAIL_BYTES);
        s.tail.drain(..extra);
        s.stale = true;
        if s.flushed.elapsed() >= FLUSH_EVERY {
            flush(&mut s, &self.path);
        }
    }

    /// Bring the file up to date (head, the line about what was left out, tail).
    pub fn flush(&self) {
        if let Ok(mut s) = self.state.lock() {
            flush(&mut s, &self.path);
        }
    }

    /// The output since the last call, at most the last `max_bytes` of it (lossily decoded),
    /// and how many bytes of it are not returned (too many, or left out of the file).
    pub fn read_new(&self, max_bytes: u64) -> std::io::Result<(String, u64)> {
        let mut s = self
            .state
            .lock()
            .map_err(|_| std::io::Error::other("output state poisoned"))?;
        flush(&mut s, &self.path);
        let from = s.read;
        let to = s.total;
        s.read = to;
        let start = from.max(to.saturating_sub(max_bytes));
        let mut skipped = start - from;
        let mut out = Vec::new();
        // The part in the head.
        if start < s.head {
            let len = usize::try_from(s.head - start).unwrap_or(usize::MAX);
            let mut buf = vec![0; len];
            s.file.read_exact_at(&mut buf, start)?;
            out.extend_from_slice(&buf);
        }
        // The part past the head: what the tail still holds.
        let tail_start = to - s.tail.len() as u64;
        let from_tail = start.max(s.head).max(tail_start);
        let left_out = from_tail - start.max(s.head);
        if left_out > 0 && to > s.head {
            skipped += left_out;
            out.extend_from_slice(omitted_line(left_out).as_bytes());
        }
        let skip_in_tail = usize::try_from(from_tail - tail_start).unwrap_or(usize::MAX);
        out.extend(s.tail.iter().skip(skip_in_tail));
        Ok((String::from_utf8_lossy(&out).into_owned(), skipped))
    }

    /// Remove the file (the session is over).
    pub fn remove(&self) {
        match std::fs::remove_file(&self.path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                tracing::warn!(path = %self.path.display(), error = %e, "cannot remove background output")
            }
        }
    }
}

/// The line that stands for output left out.
fn omitted_line(bytes: u64) -> String {
    format!(
        "\n[skiff: {bytes} bytes of output left out here; background output keeps its first {} MB and last {} MB]\n",
        HEAD_BYTES / (1024 * 1024),
        TAIL_BYTES / (1024 * 1024)
    )
}

fn flush(s: &mut State, path: &Path) {
    if !s.stale {
        return;
    }
    let left_out = s.total - s.head - s.tail.len() as u64;
    let mut text = omitted_line(left_out).into_bytes();
    let (a, b) = s.tail.as_slices();
    text.extend_from_slice(a);
    text.extend_from_slice(b);
    let head = s.head;
    let written = s
        .file
        .set_len(head)
        .and_then(|()| s.file.seek(SeekFrom::Start(head)).map(drop))
        .and_then(|()| s.file.write_all(&text));
    if let Err(e) = written {
        tracing::warn!(path = %path.display(), error = %e, "cannot write background output");
    }
    s.stale = false;
    s.flushed = Instant::now();
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn output() -> (tempfile::TempDir, CappedOutput) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.output");
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .unwrap();
        (dir, CappedOutput::new(path, file))
    }

    #[test]
    fn small_output_is_kept_whole_and_read_once() {
        let (_d, o) = output();
        o.push(b"hello ");
        o.push(b"world\n");
        assert_eq!(o.read_new(1000).unwrap(), ("hello world\n".into(), 0));
        assert_eq!(o.read_new(1000).unwrap(), (String::new(), 0));
        o.push(b"more");
        assert_eq!(o.read_new(2).unwrap(), ("re".into(), 2));
        assert_eq!(std::fs::read(o.path()).unwrap(), b"hello world\nmore");
    }

    #[test]
    fn endless_output_keeps_the_head_and_the_tail() {
        let (_d, o) = output();
        let chunk = vec![b'y'; 1024 * 1024];
        o.push(b"FIRST LINE\n");
        for _ in 0..20 {
            o.push(&chunk);
        }
        o.push(b"\nLAST LINE\n");
        o.flush();
        let len = std::fs::metadata(o.path()).unwrap().len();
        assert!(len <= HEAD_BYTES + TAIL_BYTES as u64 + 200, "{len}");
        let text = std::fs::read(o.path()).unwrap();
        assert!(text.starts_with(b"FIRST LINE\n"));
        assert!(text.ends_with(b"\nLAST LINE\n"));
        let (read, skipped) = o.read_new(u64::MAX).unwrap();
        assert!(read.starts_with("FIRST LINE\n") && read.ends_with("LAST LINE\n"));
        assert!(read.contains("bytes of output left out here"), "no notice");
        assert!(skipped > 10 * 1024 * 1024, "{skipped}");
    }
}
