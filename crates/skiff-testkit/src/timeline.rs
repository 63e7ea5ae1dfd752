//! When each request arrived and each streamed answer ended
//! ([`crate::MockServerBuilder::timeline`], `skiff-mock --timeline FILE`): what a benchmark needs
//! to measure a client's own time between an answer and its next request, free of the server's
//! delays and of its timers' slack.
//!
//! One line per event, written as it happens: nanoseconds since the server started, then
//! `request METHOD PATH` when a request's head has arrived, or `answered` when a streamed answer
//! has been written to its end.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

/// The file the events go to, and the server's start.
#[derive(Debug)]
pub(crate) struct Timeline {
    start: Instant,
    file: Mutex<File>,
}

impl Timeline {
    /// A timeline written to `path` (created, or emptied); the error names the file.
    pub(crate) fn create(path: &Path) -> io::Result<Self> {
        let file = File::create(path).map_err(|e| {
            io::Error::new(e.kind(), format!("timeline file {}: {e}", path.display()))
        })?;
        Ok(Self {
            start: Instant::now(),
            file: Mutex::new(file),
        })
    }

    /// Note that `what` happened now. A failed write loses the line; the server goes on.
    pub(crate) fn note(&self, what: &str) {
        let line = format!("{} {what}\n", self.start.elapsed().as_nanos());
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        // One write a line (an unbuffered `writeln!` makes four).
        let _ = file.write_all(line.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_written_in_order_with_their_times() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("timeline");
        let timeline = Timeline::create(&path).unwrap();
        timeline.note("request POST /v1/messages");
        timeline.note("answered");
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<(u128, &str)> = text
            .lines()
            .map(|l| {
                let (nanos, what) = l.split_once(' ').unwrap();
                (nanos.parse().unwrap(), what)
            })
            .collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(lines[0].1, "request POST /v1/messages");
        assert_eq!(lines[1].1, "answered");
        assert!(lines[0].0 <= lines[1].0, "{text}");
    }
}
