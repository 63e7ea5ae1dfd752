//! Release links on Linux with glibc, each where the toolchain takes it (probed, not assumed):
//! - packed relative relocations (`-z pack-relative-relocs`, DT_RELR): the binary's 1.1 MB of
//!   `.rela.dyn` becomes a few kilobytes, and the loader reads that much less before `main`
//!   (an older linker or glibc, before 2.36, links and runs without it);
//! - the functions of everyday use first in `.text` (`--symbol-ordering-file`, with LLD, the
//!   linker rustc uses on x86-64 Linux since 1.90): the kernel maps a binary 64 KiB at a time
//!   around each page touched, so this code, spread over the whole binary, mapped most of it.
//!   `hot-symbols.txt` is written by `scripts/hot-symbols.py`; a name it lists that the build
//!   does not have (another toolchain, changed code) is skipped.

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=hot-symbols.txt");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let native = var("TARGET") == var("HOST");
    if var("CARGO_CFG_TARGET_OS") != "linux"
        || var("CARGO_CFG_TARGET_ENV") != "gnu"
        || !native
        || var("PROFILE") != "release"
    {
        return;
    }
    let Some(out) = std::env::var_os("OUT_DIR").map(std::path::PathBuf::from) else {
        return;
    };
    if relr_works(&out) {
        println!("cargo::rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    let order = Path::new(&var("CARGO_MANIFEST_DIR")).join("hot-symbols.txt");
    if order.is_file() && ordering_works(&out) {
        println!(
            "cargo::rustc-link-arg-bin=skiff=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo::rustc-link-arg-bin=skiff=-Wl,--no-warn-symbol-ordering");
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

/// Whether rustc, with this build's flags and linker, links a program given a symbol
/// ordering file (LLD takes one; GNU ld stops at the option).
fn ordering_works(dir: &Path) -> bool {
    let (src, list, exe) = (
        dir.join("order.rs"),
        dir.join("order.txt"),
        dir.join("order"),
    );
    if std::fs::write(&src, "fn main() {}\n").is_err() || std::fs::write(&list, "main\n").is_err() {
        return false;
    }
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let mut cmd = Command::new(rustc);
    cmd.arg(&src).arg("-o").arg(&exe).arg("-C").arg(format!(
        "link-arg=-Wl,--symbol-ordering-file={}",
        list.display()
    ));
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    cmd.args(flags.split('\x1f').filter(|f| !f.is_empty()));
    if let Some(linker) = std::env::var_os("RUSTC_LINKER") {
        let mut arg = std::ffi::OsString::from("linker=");
        arg.push(linker);
        cmd.arg("-C").arg(arg);
    }
    cmd.output().is_ok_and(|o| o.status.success())
}
