//! skiff-core's integration tests, built as one test binary: each module below is a file of this
//! directory that was a test binary of its own (14 links of the whole dependency tree where
//! there is now one). One file's tests: `cargo test -p skiff-core --test it <module>::`.
//!
//! `autotests = false` in Cargo.toml: a file of this directory that is not a module here is
//! not compiled, which `every_test_file_is_a_module` below catches.

mod agent_loop;
mod commands;
mod context;
mod deferred_tools;
mod hooks;
mod memory;
#[path = "permission_fuzz/main.rs"]
mod permission_fuzz;
mod run_options;
mod served_model;
mod session;
mod small_models;
mod snapshots;
mod transcript;
mod user_ops;

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
