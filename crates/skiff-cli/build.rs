//! Links the release binaries with packed relative relocations (`-z pack-relative-relocs`,
//! DT_RELR) where the toolchain and the C library take them: the binary's 1.1 MB of
//! `.rela.dyn` becomes a few kilobytes, and the loader reads that much less before `main`.
//! Probed, not assumed: an older linker or glibc (before 2.36) links and runs without it.

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let native = var("TARGET") == var("HOST");
    if var("CARGO_CFG_TARGET_OS") != "linux"
        || var("CARGO_CFG_TARGET_ENV") != "gnu"
        || !native
        || var("PROFILE") != "release"
    {
        return;
    }
    let out = std::env::var_os("OUT_DIR").map(std::path::PathBuf::from);
    if out.as_deref().is_some_and(relr_works) {
        println!("cargo::rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether `cc` links a program with packed relocations that then runs (the C library loads
/// it).
fn relr_works(dir: &Path) -> bool {
    let (src, exe) = (dir.join("relr.c"), dir.join("relr"));
    if std::fs::write(&src, "int main(void) { return 0; }\n").is_err() {
        return false;
    }
    let linked = Command::new("cc")
        .arg("-Wl,-z,pack-relative-relocs")
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .is_ok_and(|o| o.status.success());
    linked && Command::new(&exe).status().is_ok_and(|s| s.success())
}
