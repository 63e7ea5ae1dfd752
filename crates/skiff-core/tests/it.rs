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
    let root = include_str!("it.rs");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let module = if path.is_dir() && path.join("main.rs").is_file() {
            format!("#[path = \"{name}/main.rs\"]\nmod {name};")
        } else if let Some(stem) = name.strip_suffix(".rs").filter(|s| *s != "it") {
            format!("mod {stem};")
        } else {
            continue;
        };
        if !root.contains(&format!("\n{module}\n")) {
            missing.push(name.to_owned());
        }
    }
    assert!(
        missing.is_empty(),
        "tests/it.rs does not build {missing:?}: add them as modules"
    );
}
