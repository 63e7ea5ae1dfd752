//! The skiff binary as the CLI integration tests run it: an empty environment but `PATH`, with
//! `HOME` and `SKIFF_HOME` in a directory of the test's own, so that no user setting, key or
//! session of the machine running the tests leaks in.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

/// `bin` with an environment of `PATH`, `HOME=home` and `SKIFF_HOME=home/.skiff` only.
pub fn isolated(bin: impl AsRef<OsStr>, home: &Path) -> Command {
    let mut c = Command::new(bin);
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("SKIFF_HOME", home.join(".skiff"));
    c
}

/// [`isolated`] for the `skiff` binary of the crate whose tests expand it.
#[macro_export]
macro_rules! skiff_command {
    ($home:expr) => {
        $crate::cli::isolated(env!("CARGO_BIN_EXE_skiff"), $home)
    };
}
