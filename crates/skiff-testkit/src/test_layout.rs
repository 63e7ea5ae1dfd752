//! The layout of skiff's integration tests: each crate builds its `tests/` as one test binary,
//! `tests/it.rs`, each file of `tests/` a module of it (`autotests = false` in its Cargo.toml).
//! A file left out of `it.rs` would never be compiled; [`missing_test_modules`] finds them.

use std::path::Path;

/// The files of `manifest_dir/tests` that `root` (the text of `tests/it.rs`) does not declare
/// as modules: each `NAME.rs` needs a `mod NAME;` line, each directory with a `main.rs` a
/// `#[path = "NAME/main.rs"]` line before its `mod NAME;`. Other directories (shared helpers,
/// fixtures, snapshots) are not test files.
pub fn missing_test_modules(manifest_dir: &str, root: &str) -> std::io::Result<Vec<String>> {
    let dir = Path::new(manifest_dir).join("tests");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir)? {
        let path = entry?.path();
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
    missing.sort();
    Ok(missing)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_or_directory_left_out_is_missing() {
        let dir = tempfile::tempdir().unwrap();
        let tests = dir.path().join("tests");
        std::fs::create_dir_all(tests.join("fuzz")).unwrap();
        std::fs::create_dir_all(tests.join("support")).unwrap();
        for file in ["it.rs", "a.rs", "b.rs", "fuzz/main.rs", "support/pty.rs"] {
            std::fs::write(tests.join(file), "").unwrap();
        }
        let root = dir.path().to_str().unwrap();
        let all = "//! x\n\nmod a;\nmod b;\n#[path = \"fuzz/main.rs\"]\nmod fuzz;\n";
        assert!(missing_test_modules(root, all).unwrap().is_empty());
        let without = "//! x\n\nmod a;\nmod fuzz;\n";
        assert_eq!(
            missing_test_modules(root, without).unwrap(),
            ["b.rs", "fuzz"]
        );
    }
}
