//! `skiff mcp serve`: skiff's own tools over MCP on stdin/stdout (as `claude mcp serve`), in
//! the workspace of `--cwd` (or the current directory) with its settings, permission rules,
//! mode and sandbox. What the configuration would ask about is refused. Warnings go to
//! stderr; stdout carries nothing but the protocol.

use std::process::ExitCode;

use anyhow::Context;

use crate::args::Args;

/// Run the server until the client closes stdin.
pub fn run_serve(args: &Args) -> anyhow::Result<ExitCode> {
    let mut warnings = Vec::new();
    let host =
        crate::session::builder_for(crate::session::overrides(args)).tool_server(&mut warnings);
    for w in &warnings {
        eprintln!("{w}");
    }
    let host = host?;
    tracing::info!(
        cwd = %host.cwd.display(),
        mode = %host.mode,
        tools = host.tools.len(),
        "serving skiff's tools over MCP"
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("could not start the async runtime")?;
    let served = runtime.block_on(skiff_mcp::serve::serve_io(
        host.server,
        (tokio::io::stdin(), tokio::io::stdout()),
    ));
    // A read of stdin still pending must not hold the exit.
    runtime.shutdown_background();
    served?;
    Ok(ExitCode::SUCCESS)
}
