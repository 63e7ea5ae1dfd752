//! Print mode (`skiff -p`): a client of the session that sends one prompt and writes the events
//! in the chosen output format. SIGINT interrupts the run (exit 130); a reader that goes away
//! (`skiff -p … | head -1`) stops the run too, but is not an error (exit 0).

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use skiff_core::{Agent, Event};
use skiff_protocol::sdk::SdkMessage;

use crate::args::Args;
use crate::term::output::OutputWriter;

/// Run `prompt` and return the process exit code.
pub async fn run_print(
    agent: Agent,
    args: &Args,
    prompt: String,
    out: impl Write,
    terminal_width: Option<usize>,
) -> anyhow::Result<ExitCode> {
    let mut writer = OutputWriter::new(
        args.output_format,
        args.verbose,
        args.include_partial_messages,
        out,
        terminal_width,
    );
    let mut session = agent.spawn();
    session.send_message(prompt)?;
    let interrupted = Arc::new(AtomicBool::new(false));
    let sigint = tokio::spawn({
        let handle = session.handle();
        let interrupted = Arc::clone(&interrupted);
        async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                interrupted.store(true, Ordering::SeqCst);
                handle.interrupt();
            }
        }
    });
    let mut reader_gone = false;
    let mut is_error = true;
    while let Some(ev) = session.next_event().await {
        let result = match &ev {
            Event::Frame(SdkMessage::Result(r)) => Some(r.is_error),
            _ => None,
        };
        if let Event::Frame(frame) = &ev
            && crate::front::hook_events::withheld(frame, args.include_hook_events)
        {
            continue;
        }
        if !reader_gone && let Err(e) = writer.event(&ev) {
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                session.interrupt();
                session.shutdown().await;
                return Err(e.into());
            }
            // Nobody reads the output any more: stop working for them.
            tracing::info!("stdout was closed; stopping the run");
            reader_gone = true;
            session.interrupt();
        }
        if let Some(err) = result {
            is_error = err;
            break;
        }
    }
    sigint.abort();
    session.shutdown().await;
    if !reader_gone {
        match writer.finish() {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => return Err(e.into()),
            _ => {}
        }
    }
    Ok(if interrupted.load(Ordering::SeqCst) {
        ExitCode::from(130)
    } else if reader_gone || !is_error {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
