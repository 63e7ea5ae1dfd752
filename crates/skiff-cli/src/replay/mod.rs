//! Record and replay: `skiff sessions export ID --script` turns a saved session into a model
//! script; `skiff replay ID` runs it against the current skiff and reports divergences.

use std::process::ExitCode;

use crate::args::{Args, ReplayArgs, SessionsCommand};

/// `skiff sessions export …`.
pub fn run_sessions_command(_args: &Args, _action: &SessionsCommand) -> anyhow::Result<ExitCode> {
    anyhow::bail!("skiff sessions export is not available yet")
}

/// `skiff replay …`.
pub fn run_replay(_args: &Args, _replay: &ReplayArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("skiff replay is not available yet")
}
