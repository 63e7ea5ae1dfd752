//! Keeping credentials out of reach of the commands skiff runs.
//!
//! The environment skiff was started with is read once, first thing in `main`, into a private
//! snapshot that the settings read from. Then the values of the credential variables are wiped
//! in the process's original environment block (what `/proc/<pid>/environ` shows to anything
//! that can read it — a tool's `cat /proc/$PPID/environ`) and removed from the live
//! environment, and the process is made non-dumpable, so processes of the same user cannot
//! attach to it or read its memory. Children get none of them either (the tools also remove
//! them from every command's environment).

use std::collections::HashMap;
use std::ffi::{CStr, c_char};
use std::sync::OnceLock;

/// Variables whose values are credentials.
pub const SECRET_VARS: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_CUSTOM_HEADERS",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "OPENAI_API_KEY",
    "OPENROUTER_API_KEY",
    "SKIFF_API_KEY",
];

static SNAPSHOT: OnceLock<HashMap<String, String>> = OnceLock::new();

/// The environment skiff started with (credentials included), for the settings.
pub fn process_env() -> HashMap<String, String> {
    match SNAPSHOT.get() {
        Some(env) => env.clone(),
        None => live_env(),
    }
}

fn live_env() -> HashMap<String, String> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect()
}

pub use skiff_tools::bash::url_has_userinfo as has_userinfo;

/// Snapshot the environment, then wipe the credentials from it. Must run before any other
/// thread starts (first thing in `main`).
pub fn capture_and_scrub() {
    let env = live_env();
    let mut names: Vec<&str> = SECRET_VARS.to_vec();
    for var in ["ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"] {
        if env.get(var).is_some_and(|u| has_userinfo(u)) {
            names.push(var);
        }
    }
    let present: Vec<&str> = names.into_iter().filter(|n| env.contains_key(*n)).collect();
    let _ = SNAPSHOT.set(env);
    scrub(&present);
    make_non_dumpable();
}

#[allow(unsafe_code)]
unsafe extern "C" {
    static environ: *const *mut c_char;
}

/// Overwrite the values of `names` in the original environment block with NUL bytes, then
/// remove them from the live environment.
#[allow(unsafe_code)]
fn scrub(names: &[&str]) {
    if names.is_empty() {
        return;
    }
    // SAFETY: called from `main` before any other thread exists, so nothing reads or changes
    // the environment meanwhile. `environ` is a NULL-terminated array of NUL-terminated
    // strings owned by the process; each value is overwritten within its own length.
    unsafe {
        let mut p = environ;
        while !p.is_null() && !(*p).is_null() {
            let entry = *p;
            let bytes = CStr::from_ptr(entry).to_bytes();
            for name in names {
                let n = name.len();
                if bytes.len() > n && bytes.starts_with(name.as_bytes()) && bytes[n] == b'=' {
                    let value_len = bytes.len() - n - 1;
                    std::ptr::write_bytes(entry.add(n + 1), 0, value_len);
                }
            }
            p = p.add(1);
        }
        for name in names {
            std::env::remove_var(name);
        }
    }
}

/// Other processes of the user (a tool's command) may not ptrace skiff or read its memory.
#[allow(unsafe_code)]
fn make_non_dumpable() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(PR_SET_DUMPABLE, 0) only changes this process's dumpable flag.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn userinfo() {
        assert!(has_userinfo("https://user:pw@gw.example/v1"));
        assert!(!has_userinfo("https://gw.example/v1?x=a@b"));
        assert!(!has_userinfo("http://127.0.0.1:8080"));
    }
}
