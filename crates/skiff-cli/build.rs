//! Release links on Linux with glibc, each where the toolchain takes it (probed, not assumed):
//! - a position-dependent executable (`-no-pie`): a position-independent one is relocated by
//!   the loader at every start, and those writes copy every page of its 0.8 MB of pointer
//!   tables (`.data.rel.ro`): about 1 ms and 0.8 MiB of private memory before `main`, on every
//!   run (`skiff --version` 2.0–2.6 ms as PIE, 1.0–1.4 ms without, on a 2-core VM). Its
//!   libraries, stack, heap and mappings are still placed at random; only the executable's
//!   own image is at a fixed address, as Go builds its executables by default. Set
//!   `SKIFF_BUILD_PIE=1` to build a position-independent executable (a distribution whose
//!   policy requires one);
//! - packed relative relocations (`-z pack-relative-relocs`, DT_RELR) when the executable is
//!   position-independent: its 1.1 MB of `.rela.dyn` becomes a few kilobytes (an older linker
//!   or glibc, before 2.36, links and runs without it);
//! - the functions of everyday use first in `.text` (`--symbol-ordering-file`, with LLD, the
//!   linker rustc uses on x86-64 Linux since 1.90): the kernel maps a binary 64 KiB at a time
//!   around each page touched, so this code, spread over the whole binary, mapped most of it.
//!   `hot-symbols.txt` is written by `scripts/hot-symbols.py`; a name it lists that the build
//!   does not have (another toolchain, changed code) is skipped;
//! - identical code folding (`--icf=all`, LLD): functions whose machine code came out the same
//!   (generic code instantiated for types of one layout, mostly) are kept once; 136 KB less
//!   stripped binary, no change at run time. Rust gives function addresses no uniqueness
//!   guarantee, so folding them breaks nothing it promises.

use std::path::Path;
use std::process::Command;

/// Set (to anything but `0`) to build position-independent executables.
const PIE_VAR: &str = "SKIFF_BUILD_PIE";

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=hot-symbols.txt");
    println!("cargo::rerun-if-env-changed={PIE_VAR}");
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
    let pie = !matches!(var(PIE_VAR).as_str(), "" | "0");
    if !pie && rustc_links(&out, "nopie", "-no-pie", None) {
        println!("cargo::rustc-link-arg-bins=-no-pie");
    } else if relr_works(&out) {
        println!("cargo::rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    if rustc_links(&out, "icf", "-Wl,--icf=all", None) {
        println!("cargo::rustc-link-arg-bins=-Wl,--icf=all");
    }
    let order = Path::new(&var("CARGO_MANIFEST_DIR")).join("hot-symbols.txt");
    if order.is_file() && rustc_links(&out, "order", "-Wl,--symbol-ordering-file=", Some("main\n"))
    {
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

/// Whether rustc, with this build's flags and linker, links a program given `link_arg` (with
/// the path of a file holding `list` appended, when given), and the program then runs.
fn rustc_links(dir: &Path, name: &str, link_arg: &str, list: Option<&str>) -> bool {
    let (src, exe) = (dir.join(format!("{name}.rs")), dir.join(name));
    if std::fs::write(&src, "fn main() {}\n").is_err() {
        return false;
    }
    let mut arg = format!("link-arg={link_arg}");
    if let Some(list) = list {
        let path = dir.join(format!("{name}.txt"));
        if std::fs::write(&path, list).is_err() {
            return false;
        }
        arg.push_str(&path.display().to_string());
    }
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let mut cmd = Command::new(rustc);
    cmd.arg(&src).arg("-o").arg(&exe).arg("-C").arg(arg);
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    cmd.args(flags.split('\x1f').filter(|f| !f.is_empty()));
    if let Some(linker) = std::env::var_os("RUSTC_LINKER") {
        let mut arg = std::ffi::OsString::from("linker=");
        arg.push(linker);
        cmd.arg("-C").arg(arg);
    }
    cmd.output().is_ok_and(|o| o.status.success())
        && Command::new(&exe).status().is_ok_and(|s| s.success())
}
