//! The `bash` skiff runs commands with, found once per process.

/// The absolute path of `bash`, looked up in PATH once per process (a PATH search per call
/// costs several failed execs on machines with long PATHs); plain "bash" if not found.
pub(crate) fn path() -> &'static str {
    static SHELL: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SHELL.get_or_init(|| {
        std::env::var_os("PATH")
            .and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|dir| dir.join("bash"))
                    .find(|p| p.is_file())
                    .and_then(|p| p.to_str().map(str::to_owned))
            })
            .unwrap_or_else(|| "bash".to_owned())
    })
}
