//! Print mode (`skiff -p`): run one prompt through the agent loop and write the events in the
//! chosen output format. SIGINT interrupts the run (exit 130).

use std::io::Write;
use std::process::ExitCode;

use futures::StreamExt;
use skiff_core::Agent;

use crate::args::Args;
use crate::output::OutputWriter;

/// Run `prompt` and return the process exit code.
pub async fn run_print(
    agent: &mut Agent,
    args: &Args,
    prompt: String,
    out: impl Write,
) -> anyhow::Result<ExitCode> {
    let mut writer = OutputWriter::new(
        args.output_format,
        args.verbose,
        args.include_partial_messages,
        out,
    );
    let mut run = agent.run(prompt);
    let interrupt = run.interrupt_handle();
    let sigint = tokio::spawn({
        let interrupt = interrupt.clone();
        async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                interrupt.cancel();
            }
        }
    });
    while let Some(ev) = run.next().await {
        if let Err(e) = writer.event(ev) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                // The reader went away (e.g. `| head`): stop the run cleanly.
                run.interrupt();
                continue;
            }
            return Err(e.into());
        }
    }
    sigint.abort();
    let is_error = run.result().is_none_or(|r| r.is_error);
    drop(run);
    match writer.finish() {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => return Err(e.into()),
        _ => {}
    }
    Ok(if interrupt.is_cancelled() {
        ExitCode::from(130)
    } else if is_error {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
