//! Kill the process groups skiff started even when skiff itself is killed (`kill -9`, a crash),
//! when its own clean-up never runs.
//!
//! A small guard process (a bash loop, so no extra binary is needed) is started on first use, in
//! its own process group and deaf to terminal signals. skiff tells it on a pipe which groups are
//! live (`+PGID` / `-PGID` lines). The kernel closes the pipe when skiff exits in any way; on
//! that end of file the guard SIGKILLs every group still registered, then exits. Registering
//! is one small write, so foreground commands use it too.

use std::io::Write;
use std::os::unix::process::CommandExt as _;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock};

/// The guard's program: keeps the live groups (and files to remove) in associative arrays;
/// at EOF kills the groups, then removes the files.
const GUARD_SCRIPT: &str = r#"trap '' HUP INT QUIT TERM PIPE
declare -A live files
while IFS= read -r line; do
  case $line in
    +F*) files[${line#+F}]=1 ;;
    -F*) unset "files[${line#-F}]" ;;
    +*) live[${line#+}]=1 ;;
    -*) unset "live[${line#-}]" ;;
  esac
done
for pgid in "${!live[@]}"; do kill -KILL -- "-$pgid" 2>/dev/null; done
for f in "${!files[@]}"; do rm -f -- "$f"; done
"#;

/// The write end of the guard's pipe; `None` when the guard could not start.
static GUARD: OnceLock<Option<Mutex<ChildStdin>>> = OnceLock::new();

fn guard() -> Option<&'static Mutex<ChildStdin>> {
    GUARD
        .get_or_init(|| match start() {
            Ok(stdin) => Some(Mutex::new(stdin)),
            Err(e) => {
                tracing::warn!(error = %e, "cannot start the process guard; commands may outlive a killed skiff");
                None
            }
        })
        .as_ref()
}

fn start() -> std::io::Result<ChildStdin> {
    // bash as the Bash tool found it (one PATH search per process, not one per start).
    let mut child = Command::new(crate::bash_binary::path())
        .arg("-c")
        .arg(GUARD_SCRIPT)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .current_dir("/")
        .process_group(0)
        .spawn()?;
    // The guard lives as long as this process; its exit status is never collected (it exits
    // only after skiff is gone).
    child
        .stdin
        .take()
        .ok_or_else(|| std::io::Error::other("the guard has no stdin"))
}

fn send(line: &str) {
    if let Some(guard) = guard()
        && let Ok(mut stdin) = guard.lock()
    {
        // A guard that died cannot help any more; the command still runs.
        let _ = stdin.write_all(line.as_bytes());
    }
}

/// Kill this process group if skiff dies before [`release`] is called for it.
pub fn watch(pgid: i32) {
    if pgid > 1 {
        send(&format!("+{pgid}\n"));
    }
}

/// Remove this file when skiff exits, however it exits (a background command's output). Paths
/// with a newline cannot be registered (and are not).
pub fn delete_at_exit(path: &std::path::Path) {
    if let Some(p) = path.to_str().filter(|p| !p.contains('\n') && !p.is_empty()) {
        send(&format!("+F{p}\n"));
    }
}

/// The file is gone: the guard forgets it.
pub fn forget_file(path: &std::path::Path) {
    if GUARD.get().is_some()
        && let Some(p) = path.to_str().filter(|p| !p.contains('\n') && !p.is_empty())
    {
        send(&format!("-F{p}\n"));
    }
}

/// The group is gone (or handed over): the guard forgets it.
pub fn release(pgid: i32) {
    if pgid > 1 && GUARD.get().is_some() {
        send(&format!("-{pgid}\n"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_is_valid_bash() {
        let status = Command::new("bash")
            .arg("-n")
            .arg("-c")
            .arg(GUARD_SCRIPT)
            .status()
            .unwrap();
        assert!(status.success());
    }

    #[test]
    fn eof_kills_registered_groups_only() {
        // Two groups: one registered, one registered then released.
        let mut kept = Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        let mut released = Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        let mut guard = Command::new("bash")
            .arg("-c")
            .arg(GUARD_SCRIPT)
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = guard.stdin.take().unwrap();
        let (k, r) = (kept.id(), released.id());
        write!(stdin, "+{k}\n+{r}\n-{r}\n").unwrap();
        drop(stdin);
        assert!(guard.wait().unwrap().success());
        let status = kept.wait().unwrap();
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(9)
        );
        assert!(
            released.try_wait().unwrap().is_none(),
            "released group was killed"
        );
        released.kill().unwrap();
        released.wait().unwrap();
    }
}
