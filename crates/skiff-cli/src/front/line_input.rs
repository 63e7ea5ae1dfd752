//! The line REPL's input: whole lines from standard input, edited by the terminal itself (its
//! line discipline: Backspace, Ctrl-W, Ctrl-U), so it works on any terminal — a dumb one, an
//! editor's shell buffer, a screen reader — and under `rlwrap` for history and line editing.
//! No escape sequences are written and no cursor position is asked for.
//!
//! A line ending in `\` continues on the next one ([`LineInput::entry`]). Ctrl-C at a
//! prompt (the terminal drops what was typed and sends SIGINT) is [`Line::Interrupted`]; end of
//! input (Ctrl-D on an empty line) is [`Line::End`].
//!
//! Lines are read by a thread of their own, one per request, and waited for on the runtime, so
//! that SIGINT can cut the wait short and the session goes on working meanwhile (an approval
//! is asked while other calls run); what is typed while the model works stays in the
//! terminal's buffer until the next prompt asks for it.

use std::io::{BufRead, Write};
use std::sync::mpsc::{Receiver, Sender, channel};

use futures::FutureExt;
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// What one read gave.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A line (for an entry, its continuation lines joined with newlines), without its end.
    Text(String),
    /// Ctrl-C while waiting for it.
    Interrupted,
    /// End of input.
    End,
}

/// What the reader thread reports.
enum Event {
    Line(String),
    End,
    Failed(std::io::Error),
}

/// Lines from standard input, one at a time.
pub struct LineInput {
    /// Ask the reader thread for a line (None once it has ended).
    ask: Option<Sender<()>>,
    events: UnboundedReceiver<Event>,
    /// A line was asked for and has not come yet (Ctrl-C leaves it outstanding).
    outstanding: bool,
    /// SIGINT, caught for the rest of the process (None, logged, if it could not be: Ctrl-C at
    /// a prompt then ends skiff, as it does any line-reading program).
    sigint: Option<Signal>,
    /// Where prompts go.
    out: Box<dyn Write>,
}

impl LineInput {
    /// Start reading standard input and catching SIGINT (a waiting prompt turns it into
    /// [`Line::Interrupted`]; during a turn the turn's own listener sees it).
    pub fn new(rt: &tokio::runtime::Runtime) -> Self {
        Self::with_io(
            rt,
            || Box::new(std::io::stdin().lock()),
            Box::new(std::io::stdout()),
        )
    }

    fn with_io(
        rt: &tokio::runtime::Runtime,
        reader: impl FnOnce() -> Box<dyn BufRead> + Send + 'static,
        out: Box<dyn Write>,
    ) -> Self {
        let (event_tx, events) = unbounded_channel();
        let (ask, asked) = channel::<()>();
        let lines = event_tx.clone();
        let spawned = std::thread::Builder::new()
            .name("repl-input".into())
            .spawn(move || read_lines(reader(), &asked, &lines));
        let ask = match spawned {
            Ok(_) => Some(ask),
            Err(e) => {
                let _ = event_tx.send(Event::Failed(e));
                None
            }
        };
        let sigint = {
            let _rt = rt.enter();
            signal(SignalKind::interrupt())
                .inspect_err(|e| tracing::warn!(error = %e, "cannot catch Ctrl-C at the prompt"))
                .ok()
        };
        Self {
            ask,
            events,
            outstanding: false,
            sigint,
            out,
        }
    }

    /// Print `prompt` and read one line.
    pub async fn line(&mut self, prompt: &str) -> std::io::Result<Line> {
        self.out.write_all(prompt.as_bytes())?;
        self.out.flush()?;
        if !self.outstanding {
            match &self.ask {
                Some(ask) if ask.send(()).is_ok() => self.outstanding = true,
                _ => return Ok(Line::End),
            }
        }
        // A Ctrl-C from before this prompt (it interrupted a turn) is not for it.
        if let Some(s) = self.sigint.as_mut() {
            while s.recv().now_or_never().is_some() {}
        }
        let sigint = async {
            match self.sigint.as_mut() {
                Some(s) => s.recv().await,
                None => std::future::pending().await,
            }
        };
        let event = tokio::select! {
            event = self.events.recv() => event,
            _ = sigint => return Ok(Line::Interrupted),
        };
        self.outstanding = false;
        match event {
            Some(Event::Line(line)) => Ok(Line::Text(line)),
            Some(Event::End) => Ok(Line::End),
            Some(Event::Failed(e)) => {
                self.ask = None;
                Err(e)
            }
            // The reader is gone: nothing more can come.
            None => Ok(Line::End),
        }
    }

    /// Print `prompt` and read an entry: lines ending in `\` continue on the next line (after a
    /// `... ` prompt), joined with newlines. Ctrl-C or end of input drops what was read.
    pub async fn entry(&mut self, prompt: &str) -> std::io::Result<Line> {
        let mut entry = String::new();
        let mut prompt = prompt;
        loop {
            match self.line(prompt).await? {
                Line::Text(line) => match line.strip_suffix('\\') {
                    Some(head) => {
                        entry.push_str(head);
                        entry.push('\n');
                        prompt = "... ";
                    }
                    None => {
                        entry.push_str(&line);
                        return Ok(Line::Text(entry));
                    }
                },
                other => return Ok(other),
            }
        }
    }
}

/// The reader thread: a line for each request, until the requests stop or the input fails. A
/// terminal's end of input (Ctrl-D) is not final: the next request reads again.
fn read_lines(mut input: Box<dyn BufRead>, asked: &Receiver<()>, events: &UnboundedSender<Event>) {
    while asked.recv().is_ok() {
        let mut line = Vec::new();
        let event = loop {
            match input.read_until(b'\n', &mut line) {
                Ok(0) if line.is_empty() => break Event::End,
                Ok(_) => {
                    while matches!(line.last(), Some(b'\n' | b'\r')) {
                        line.pop();
                    }
                    break Event::Line(String::from_utf8_lossy(&line).into_owned());
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => break Event::Failed(e),
            }
        };
        let failed = matches!(event, Event::Failed(_));
        if events.send(event).is_err() || failed {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn input(rt: &tokio::runtime::Runtime, text: &'static [u8]) -> LineInput {
        LineInput::with_io(
            rt,
            move || Box::new(std::io::Cursor::new(text)),
            Box::new(std::io::sink()),
        )
    }

    #[test]
    fn lines_entries_with_continuations_and_the_end() {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let mut lines = input(&rt, b"one\r\ntwo \\\nthree\\\nfour\nlast \xff");
        rt.block_on(async {
            assert_eq!(lines.line("> ").await.unwrap(), Line::Text("one".into()));
            assert_eq!(
                lines.entry("> ").await.unwrap(),
                Line::Text("two \nthree\nfour".into())
            );
            // Invalid UTF-8 is replaced, not an error; a last line without its end counts.
            assert_eq!(
                lines.entry("> ").await.unwrap(),
                Line::Text("last \u{fffd}".into())
            );
            assert_eq!(lines.entry("> ").await.unwrap(), Line::End);
            assert_eq!(lines.line("> ").await.unwrap(), Line::End);
        });
    }

    #[test]
    fn an_entry_cut_by_the_end_of_input_is_dropped() {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let mut lines = input(&rt, b"half \\\n");
        assert_eq!(rt.block_on(lines.entry("> ")).unwrap(), Line::End);
    }

    #[test]
    fn a_failing_input_is_an_error_then_the_end() {
        struct Broken;
        impl std::io::Read for Broken {
            fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("gone"))
            }
        }
        let rt = tokio::runtime::Runtime::new().unwrap();
        let mut lines = LineInput::with_io(
            &rt,
            || Box::new(std::io::BufReader::new(Broken)),
            Box::new(std::io::sink()),
        );
        assert_eq!(
            rt.block_on(lines.line("> ")).unwrap_err().to_string(),
            "gone"
        );
        assert_eq!(rt.block_on(lines.line("> ")).unwrap(), Line::End);
    }
}
