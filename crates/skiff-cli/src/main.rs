//! The `skiff` binary: argument parsing, configuration from the environment, and the
//! headless print mode. (The agent loop and the REPL arrive in later crates/modules.)

mod args;
mod headless;

use std::io::{IsTerminal, Read};
use std::process::ExitCode;

use clap::Parser;
use skiff_llm::{AnthropicConfig, AnthropicProvider, CancellationToken, LlmError};

use crate::args::Args;

/// Default model.
const DEFAULT_MODEL: &str = "claude-sonnet-4-5";

fn main() -> ExitCode {
    let args = Args::parse();
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
    let prompt = match args.prompt {
        Some(p) => p,
        None if !std::io::stdin().is_terminal() => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .map_err(|e| anyhow::anyhow!("reading the prompt from stdin: {e}"))?;
            s
        }
        None => {
            eprintln!(
                "Error: no prompt given. Usage: skiff -p \"your question\" (the interactive REPL is not built yet)"
            );
            return Ok(ExitCode::from(2));
        }
    };
    if prompt.trim().is_empty() {
        eprintln!("Error: the prompt is empty");
        return Ok(ExitCode::from(2));
    }
    let config = AnthropicConfig::from_env()?;
    let provider = AnthropicProvider::new(config)?;
    let model = args.model.unwrap_or_else(|| DEFAULT_MODEL.to_owned());

    let cancel = CancellationToken::new();
    let on_signal = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_signal.cancel();
        }
    });
    let mut stdout = std::io::stdout().lock();
    match headless::run_print(
        &provider,
        &model,
        args.max_tokens,
        prompt,
        cancel,
        &mut stdout,
    )
    .await
    {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) if matches!(e.downcast_ref::<LlmError>(), Some(LlmError::Cancelled)) => {
            eprintln!("Interrupted");
            Ok(ExitCode::from(130))
        }
        Err(e) => Err(e),
    }
}
