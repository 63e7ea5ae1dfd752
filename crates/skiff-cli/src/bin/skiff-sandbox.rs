//! `skiff-sandbox __sandbox … -- PROGRAM …`: the Bash tool's sandbox helper on its own. It
//! confines itself (namespaces, Landlock, seccomp) and runs the program, as `skiff __sandbox`
//! does, but starts in a fraction of the time of the whole `skiff` binary, once per Bash call.
//! skiff uses it when it sits next to the `skiff` executable, and falls back to `skiff
//! __sandbox`. `skiff-sandbox __connect HOST PORT` is git's ssh ProxyCommand inside a sandbox.

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    match args.next() {
        Some(a) if a == skiff_tools::sandbox::HELPER_ARG => skiff_tools::sandbox::helper_main(args),
        Some(a) if a == skiff_tools::sandbox::CONNECT_ARG => {
            skiff_tools::sandbox::connect_main(args)
        }
        _ => {
            eprintln!(
                "skiff-sandbox is the Bash tool's sandbox helper; skiff runs it (usage: skiff-sandbox {} …)",
                skiff_tools::sandbox::HELPER_ARG
            );
            ExitCode::from(2)
        }
    }
}
