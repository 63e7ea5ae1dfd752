//! skiff-cli's integration tests, built as one test binary: each module below is a file of this
//! directory that was a test binary of its own (40 links of the whole dependency tree where
//! there is now one). One file's tests: `cargo test -p skiff-cli --test it <module>::`.
//!
//! `autotests = false` in Cargo.toml: a file of this directory that is not a module here is
//! not compiled, which `every_test_file_is_a_module` below catches.

mod acp;
mod agent_sdk;
mod batch;
mod cli;
mod clouds;
mod containment;
mod git_guard;
mod headless;
mod hooks;
mod hostile_mcp;
mod hostile_processes;
mod hostile_sessions;
mod hostile_workspace;
mod lean;
mod logging;
mod mcp;
mod mcp_config;
mod mcp_offer;
mod mcp_serve;
mod model_options;
mod permissions;
mod plugins;
mod prefix;
mod process_cleanup;
mod providers;
mod repl;
mod repl_plugin;
mod replay;
mod resume;
mod sandbox;
mod settings;
mod settings_env;
mod slash_commands;
mod snapshots;
mod stream_json_input;
mod subagents;
mod trust;
mod tui_tmux;
mod web_fetch;
mod web_search;

// Shared by the REPL tests.
#[path = "support/pty.rs"]
mod pty;

/// Each `*.rs` file (and each directory with a `main.rs`) of `tests/` is a module of this
/// binary: with `autotests = false` nothing else would build it.
#[test]
fn every_test_file_is_a_module() {
    let missing = skiff_testkit::test_layout::missing_test_modules(
        env!("CARGO_MANIFEST_DIR"),
        include_str!("it.rs"),
    )
    .unwrap();
    assert!(
        missing.is_empty(),
        "tests/it.rs does not build {missing:?}: add them as modules"
    );
}
