//! The `skiff` binary: argument parsing, agent set-up, then either the headless print mode
//! (`-p`, or when stdin/stdout is not a terminal) or the interactive REPL.

mod approval;
mod args;
mod commands;
mod config_cmd;
mod headless;
mod logging;
mod markdown;
mod output;
mod render;
mod repl;
mod sessions;
mod settings;
mod setup;
mod view;

use std::io::{IsTerminal, Read};
use std::process::ExitCode;

use clap::Parser;

use crate::args::{Args, InputFormat, OutputFormat};

fn main() -> ExitCode {
    let mut args = Args::parse();
    args.normalize();
    // Held until exit: dropping it flushes the log file.
    let _log = logging::init_from_args(&args);
    if !args.print && args.prompt.as_deref() == Some("config") {
        return report(config_cmd::run_config(&args));
    }
    if !args.print && args.prompt.as_deref() == Some("sessions") {
        return report(sessions::run_sessions(&args));
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("Error: could not start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let interactive =
        !args.print && std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let outcome = if interactive {
        repl_main(&runtime, &args)
    } else {
        runtime.block_on(run(args))
    };
    report(outcome)
}

/// Print a top-level error as one line and exit 1.
fn report(outcome: anyhow::Result<ExitCode>) -> ExitCode {
    match outcome {
        Ok(code) => code,
        Err(e) => {
            tracing::error!(error = %format!("{e:#}"), "exiting with an error");
            eprintln!("Error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn repl_main(runtime: &tokio::runtime::Runtime, args: &Args) -> anyhow::Result<ExitCode> {
    let (agent, engine) = setup::build(args, skiff_core::DeltaMode::Raw)?;
    let history = settings::skiff_home().map(|home| home.join("history"));
    repl::run_repl(runtime, args, agent, engine, history)
}

async fn run(mut args: Args) -> anyhow::Result<ExitCode> {
    // Print mode caps turns at 100 unless settings, SKIFF_MAX_TURNS or --max-turns say otherwise.
    args.default_max_turns = Some(setup::DEFAULT_MAX_TURNS);
    if args.input_format == InputFormat::StreamJson {
        eprintln!("Error: --input-format stream-json is not supported yet");
        return Ok(ExitCode::from(2));
    }
    if args.output_format == OutputFormat::StreamJson && args.print && !args.verbose {
        eprintln!("Error: When using --print, --output-format=stream-json requires --verbose");
        return Ok(ExitCode::FAILURE);
    }
    let prompt = match &args.prompt {
        Some(p) => p.clone(),
        None if !std::io::stdin().is_terminal() => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .map_err(|e| anyhow::anyhow!("reading the prompt from stdin: {e}"))?;
            s
        }
        None => {
            eprintln!(
                "Error: no prompt given. Usage: skiff -p \"your task\", or run skiff in a terminal"
            );
            return Ok(ExitCode::from(2));
        }
    };
    if prompt.trim().is_empty() {
        eprintln!("Error: the prompt is empty");
        return Ok(ExitCode::from(2));
    }
    let partial = args.include_partial_messages;
    let deltas = match args.output_format {
        // The answer is printed as it streams.
        OutputFormat::Text => skiff_core::DeltaMode::Raw,
        OutputFormat::StreamJson if partial => skiff_core::DeltaMode::Frames,
        OutputFormat::Json if partial && args.verbose => skiff_core::DeltaMode::Frames,
        _ => skiff_core::DeltaMode::Off,
    };
    let agent = setup::build_agent(&args, deltas)?;
    let terminal_width = if std::io::stdout().is_terminal() {
        render::terminal_size().map(|(w, _)| w)
    } else {
        None
    };
    let stdout = std::io::stdout().lock();
    headless::run_print(
        agent,
        &args,
        prompt,
        std::io::BufWriter::new(stdout),
        terminal_width,
    )
    .await
}
