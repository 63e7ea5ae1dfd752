//! The `skiff` binary: argument parsing, agent set-up and the headless print mode.
//! (The interactive REPL arrives with the REPL issue.)

mod args;
mod headless;
mod output;
mod setup;

use std::io::{IsTerminal, Read};
use std::process::ExitCode;

use clap::Parser;

use crate::args::{Args, InputFormat, OutputFormat};

fn main() -> ExitCode {
    let mut args = Args::parse();
    args.normalize();
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
    match runtime.block_on(run(args)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("Error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> anyhow::Result<ExitCode> {
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
                "Error: no prompt given. Usage: skiff -p \"your task\" (the interactive REPL is not built yet)"
            );
            return Ok(ExitCode::from(2));
        }
    };
    if prompt.trim().is_empty() {
        eprintln!("Error: the prompt is empty");
        return Ok(ExitCode::from(2));
    }
    let mut agent = setup::build_agent(&args)?;
    let stdout = std::io::stdout().lock();
    headless::run_print(&mut agent, &args, prompt, std::io::BufWriter::new(stdout)).await
}
