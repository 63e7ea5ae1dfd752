//! skiff-tools's integration tests, built as one test binary: each module below is a file of this
//! directory that was a test binary of its own (11 links of the whole dependency tree where
//! there is now one). One file's tests: `cargo test -p skiff-tools --test it <module>::`.
//!
//! `autotests = false` in Cargo.toml: a file of this directory that is not a module here is
//! not compiled, which `every_test_file_is_a_module` below catches.

mod background;
mod bash;
mod files;
mod glob_ls;
mod grep;
mod grep_vs_rg;
mod notebook;
mod path_guard_props;
mod registry;
mod sandbox;
mod web_fetch;

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
