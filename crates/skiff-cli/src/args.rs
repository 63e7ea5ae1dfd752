//! Command-line arguments of `skiff` (clap).

use clap::Parser;

/// skiff: an agentic coding assistant.
#[derive(Debug, Parser)]
#[command(name = "skiff", version, about, long_about = None)]
pub struct Args {
    /// The prompt. With -p it is answered once and skiff exits.
    pub prompt: Option<String>,

    /// Print mode: answer the prompt (argument or stdin) non-interactively and exit.
    #[arg(short = 'p', long = "print")]
    pub print: bool,

    /// Model id or alias (default claude-sonnet-4-5, or ANTHROPIC_MODEL).
    #[arg(long, env = "ANTHROPIC_MODEL")]
    pub model: Option<String>,

    /// Maximum output tokens per model call.
    #[arg(long, default_value_t = 8192)]
    pub max_tokens: u32,
}
