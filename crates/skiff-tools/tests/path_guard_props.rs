//! Property tests of the path guard over generated paths and a symlink farm: whatever path the
//! guard accepts, creating a file through it never puts anything outside the workspace.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use skiff_tools::PathGuard;

struct Farm {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
    guard: PathGuard,
}

fn farm() -> Farm {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("ws");
    let outside = base.join("outside");
    for d in ["a/b/c", "src", "nested/deeper"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    std::fs::create_dir_all(outside.join("sub")).unwrap();
    symlink(&outside, root.join("to_out")).unwrap();
    symlink("../../..", root.join("a/b/up3")).unwrap();
    symlink("../outside", root.join("rel_out")).unwrap();
    symlink(root.join("src"), root.join("to_src")).unwrap();
    symlink("nested/deeper", root.join("to_nested")).unwrap();
    symlink(outside.join("missing"), root.join("dangling_out")).unwrap();
    symlink("src/not_yet", root.join("dangling_in")).unwrap();
    symlink("/", root.join("a/slash")).unwrap();
    symlink("/tmp", root.join("nested/tmp")).unwrap();
    let guard = PathGuard::new(&root, &[]).unwrap();
    Farm {
        _dir: dir,
        root,
        outside,
        guard,
    }
}

fn component() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("..".to_owned()),
        Just(".".to_owned()),
        Just("a".to_owned()),
        Just("b".to_owned()),
        Just("c".to_owned()),
        Just("src".to_owned()),
        Just("to_out".to_owned()),
        Just("up3".to_owned()),
        Just("rel_out".to_owned()),
        Just("to_src".to_owned()),
        Just("to_nested".to_owned()),
        Just("dangling_out".to_owned()),
        Just("dangling_in".to_owned()),
        Just("slash".to_owned()),
        Just("tmp".to_owned()),
        Just("outside".to_owned()),
        Just("new".to_owned()),
        Just("".to_owned()),
    ]
}

fn count_entries(p: &Path) -> usize {
    std::fs::read_dir(p)
        .map(|rd| {
            rd.flatten()
                .map(|e| {
                    let is_dir = e.file_type().map(|t| t.is_dir()).unwrap_or(false);
                    1 + if is_dir { count_entries(&e.path()) } else { 0 }
                })
                .sum()
        })
        .unwrap_or(0)
}

/// Paths relative to the root, absolute inside it, absolute outside it, and from `/`.
fn inputs() -> impl Strategy<Value = Vec<(u8, Vec<String>)>> {
    proptest::collection::vec(
        (0u8..4, proptest::collection::vec(component(), 0..7)),
        1..24,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Whatever the guard accepts resolves under the root, and writing a file there really
    /// lands under the root: the outside directory never gains an entry.
    #[test]
    fn accepted_paths_never_escape(paths in inputs()) {
        let f = farm();
        let before = count_entries(&f.outside);
        for (prefix, parts) in paths {
            let rel = parts.join("/");
            let input = match prefix {
                0 => rel,
                1 => format!("{}/{rel}", f.root.display()),
                2 => format!("{}/{rel}", f.outside.display()),
                _ => format!("/{rel}"),
            };
            let Ok(resolved) = f.guard.resolve(&input) else { continue };
            prop_assert!(resolved.starts_with(&f.root), "{} -> {}", input, resolved.display());
            if resolved.exists() {
                let real = std::fs::canonicalize(&resolved).unwrap();
                prop_assert!(real.starts_with(&f.root), "{} really is {}", input, real.display());
                continue;
            }
            if let Some(parent) = resolved.parent()
                && std::fs::create_dir_all(parent).is_ok() && std::fs::write(&resolved, b"x").is_ok() {
                    let real = std::fs::canonicalize(&resolved).unwrap();
                    prop_assert!(real.starts_with(&f.root), "{} landed at {}", input, real.display());
                }
        }
        prop_assert_eq!(count_entries(&f.outside), before, "something was created outside");
    }
}

#[test]
fn outside_dir_stays_untouched_for_known_escapes() {
    let f = farm();
    for p in [
        "to_out/x",
        "a/b/up3/outside/x",
        "rel_out/x",
        "dangling_out",
        "a/slash/etc/passwd",
        "nested/tmp/x",
        "../outside/x",
        "src/../../outside/x",
    ] {
        assert!(f.guard.resolve(p).is_err(), "{p} accepted");
    }
    assert!(
        f.guard
            .resolve("to_src/new.rs")
            .unwrap()
            .starts_with(f.root.join("src"))
    );
    assert!(
        f.guard
            .resolve("dangling_in")
            .unwrap()
            .starts_with(f.root.join("src"))
    );
}
