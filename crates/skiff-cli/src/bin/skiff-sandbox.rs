//! `skiff-sandbox __sandbox … -- PROGRAM …`: the Bash tool's sandbox helper on its own. It
//! confines itself (Landlock, seccomp) and execs the program, as `skiff __sandbox` does, but
//! starts in a fraction of the time of the whole `skiff` binary, once per Bash call. skiff
//! uses it when it sits next to the `skiff` executable, and falls back to `skiff __sandbox`.

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    match args.next() {
        Some(a) if a == skiff_tools::sandbox::HELPER_ARG => skiff_tools::sandbox::helper_main(args),
        _ => {
            eprintln!(
                "skiff-sandbox is the Bash tool's sandbox helper; skiff runs it (usage: skiff-sandbox {} …)",
                skiff_tools::sandbox::HELPER_ARG
            );
            ExitCode::from(2)
        }
    }
}
