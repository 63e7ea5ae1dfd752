//! The paths a sandboxed command may not see: the user's secrets, skiff's own home, and the
//! Unix sockets that lead out of the sandbox (ssh-agent, docker, dbus, tmux, editors).

use std::path::{Path, PathBuf};

use super::socket_dirs::SocketDirs;

/// `/proc/self/fd/N`: a mount source or socket address for an fd opened before the mounts.
pub(super) fn fd_path(fd: &impl std::os::fd::AsRawFd) -> PathBuf {
    PathBuf::from(format!(
        "/proc/self/fd/{}",
        std::os::fd::AsRawFd::as_raw_fd(fd)
    ))
}

/// Secrets under the home directory that sandboxed commands cannot read (directories are
/// covered by an empty one, files by an empty file).
pub const DEFAULT_DENY_READ: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".config/gh",
    ".config/hub",
    ".config/gcloud",
    ".config/git/credentials",
    ".config/op",
    ".config/rclone",
    ".config/doctl",
    ".azure",
    ".kube",
    ".oci",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".yarnrc.yml",
    ".pypirc",
    ".gem/credentials",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".terraform.d/credentials.tfrc.json",
    ".vault-token",
    ".pgpass",
    ".my.cnf",
    ".s3cfg",
    ".boto",
    ".claude.json",
    ".claude/.credentials.json",
    ".local/share/keyrings",
    ".password-store",
    ".mozilla",
    ".thunderbird",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".config/microsoft-edge",
    ".config/vivaldi",
    "snap/firefox",
    "snap/chromium",
    ".var/app/org.mozilla.firefox",
    ".var/app/com.google.Chrome",
    "Library/Keychains",
    "Library/Application Support/Google/Chrome",
    "Library/Application Support/Firefox",
];

/// System files no command needs to read.
pub const SYSTEM_DENY_READ: &[&str] = &["/etc/shadow", "/etc/gshadow", "/etc/sudoers"];

/// What stays visible inside a hidden `~/.ssh` (public host keys: git over ssh checks them).
pub const SSH_EXPOSED: &[&str] = &[".ssh/known_hosts", ".ssh/known_hosts2"];

/// Variables naming sockets or agents outside the sandbox; not passed to sandboxed commands
/// (unless `sandbox.network.allowUnixSockets` names the socket).
pub const SOCKET_VARS: &[&str] = &[
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS",
    "DBUS_SYSTEM_BUS_ADDRESS",
    "DOCKER_HOST",
    "CONTAINER_HOST",
    "TMUX",
    "TMUX_PANE",
    "STY",
    "KITTY_LISTEN_ON",
    "WAYLAND_DISPLAY",
    "DISPLAY",
    "XAUTHORITY",
    "NVIM",
    "NVIM_LISTEN_ADDRESS",
    "VSCODE_IPC_HOOK",
    "VSCODE_IPC_HOOK_CLI",
    "VSCODE_GIT_IPC_HANDLE",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "XDG_RUNTIME_DIR",
];

/// Directories replaced by an empty one inside the sandbox: their sockets lead out.
pub const EMPTY_DIRS: &[&str] = &["/run", "/var/run"];

/// Sockets under the home directory that tools put there (docker desktop, colima, podman).
const HOME_SOCKETS: &[&str] = &[
    ".docker/run/docker.sock",
    ".docker/desktop/docker.sock",
    ".colima/default/docker.sock",
    ".rd/docker.sock",
    ".local/share/containers/podman/machine/podman.sock",
];

/// The absolute paths of the default deny list for this home directory.
pub fn default_deny_read(home: Option<&Path>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = SYSTEM_DENY_READ.iter().map(PathBuf::from).collect();
    if let Some(home) = home {
        out.extend(DEFAULT_DENY_READ.iter().map(|p| home.join(p)));
    }
    out
}

/// The socket a variable's value names: a path, `unix://PATH`, `unix:path=PATH,…` (dbus), or
/// `PATH,pid,…` (tmux).
pub fn socket_of(var: &str, value: &str) -> Option<PathBuf> {
    let value = value.trim();
    let path = if let Some(rest) = value.strip_prefix("unix://") {
        rest
    } else if let Some(rest) = value.strip_prefix("unix:") {
        rest.split([',', ';'])
            .find_map(|kv| kv.strip_prefix("path="))?
    } else if var == "TMUX" || var == "GPG_AGENT_INFO" {
        value.split([',', ':']).next()?
    } else {
        value
    };
    let path = PathBuf::from(path);
    path.is_absolute().then_some(path)
}

/// Sockets that lead out of the sandbox, outside `/run` (which is emptied as a whole): those
/// the environment names, those tools keep under the home directory, and the sockets (and
/// directories of sockets) directly in the temp directories. Bounded: at most `max` entries
/// of each temp directory are looked at. `dirs` remembers which directories hold sockets from
/// one scan to the next (see [`SocketDirs`]); `settled`: directories changed after it are not
/// remembered (now less [`super::socket_dirs::SETTLED`]).
pub fn outside_sockets(
    home: Option<&Path>,
    temp_dirs: &[PathBuf],
    max: usize,
    dirs: &mut SocketDirs,
    settled: std::time::SystemTime,
) -> Vec<PathBuf> {
    use std::os::unix::fs::FileTypeExt;
    let mut out = Vec::new();
    for var in SOCKET_VARS {
        if let Some(value) = std::env::var_os(var)
            && let Some(path) = socket_of(var, &value.to_string_lossy())
            && std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_socket())
        {
            out.push(path);
        }
    }
    if let Some(home) = home {
        for rel in HOME_SOCKETS {
            let path = home.join(rel);
            if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_socket()) {
                out.push(path);
            }
        }
    }
    // The temp directories themselves are listed every time (their entries come and go); a
    // directory in them is looked into only when what was read for it last time changed.
    let mut subdirs = Vec::new();
    let mut loose = Vec::new();
    for dir in temp_dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.flatten().take(max) {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_socket() {
                loose.push(entry.path());
            } else if kind.is_dir() {
                // A directory of sockets (ssh-XXXX, tmux-UID, .X11-unix): covered whole
                // while a host process listens on one of them (below).
                subdirs.push(entry.path());
            }
        }
    }
    // A socket file directly in a temp directory, or a directory holding sockets, is covered
    // only while a process of this network namespace (the host's) listens on it, or on one in
    // it: a covered path cannot be bound again or removed inside, which broke a server whose
    // socket a killed run left behind, and a socket a sandboxed server made (the session's
    // namespace) is its own, as is the directory a test suite made for its servers. The
    // sandbox's socket guard refuses connecting to the others anyway.
    let holding = dirs.holding_sockets(&subdirs, 64, settled);
    if !loose.is_empty() || !holding.is_empty() {
        let listening = listening_paths();
        out.extend(loose.into_iter().filter(|p| listening.contains(p)));
        out.extend(
            holding
                .into_iter()
                .filter(|dir| listening.iter().any(|p| p.starts_with(dir))),
        );
    }
    out.sort();
    out.dedup();
    out
}

/// The paths of the Unix sockets listening in this process's network namespace: from the
/// kernel's socket diagnostics (see [`super::unix_diag`]), else from `/proc/net/unix`.
fn listening_paths() -> std::collections::HashSet<PathBuf> {
    #[cfg(target_os = "linux")]
    if let Some(paths) = super::unix_diag::listening_paths() {
        return paths;
    }
    listening_paths_in_proc()
}

/// [`listening_paths`] from `/proc/net/unix` (the flag `__SO_ACCEPTCON`, the path as bound).
fn listening_paths_in_proc() -> std::collections::HashSet<PathBuf> {
    const ACCEPTING: u32 = 0x0001_0000;
    let Ok(table) = std::fs::read_to_string("/proc/net/unix") else {
        return std::collections::HashSet::new();
    };
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let (flags, path) = unix_table_line(line)?;
            (flags & ACCEPTING != 0 && path.starts_with('/')).then(|| PathBuf::from(path))
        })
        .collect()
}

/// A line of `/proc/net/unix`: its flags and its path, the rest of the line after the seven
/// fields before it (a path may hold spaces).
fn unix_table_line(line: &str) -> Option<(u32, &str)> {
    let mut rest = line;
    let mut flags = None;
    for field in 0..7 {
        rest = rest.trim_start_matches(' ');
        let end = rest.find(' ').unwrap_or(rest.len());
        if field == 3 {
            flags = u32::from_str_radix(&rest[..end], 16).ok();
        }
        rest = &rest[end..];
    }
    Some((flags?, rest.strip_prefix(' ')?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn the_kernel_s_diagnostics_and_the_socket_table_agree() {
        let dir = tempfile::tempdir().expect("temp dir");
        let _listeners: Vec<_> = ["a.sock", "with space.sock", "b.sock"]
            .iter()
            .map(|n| std::os::unix::net::UnixListener::bind(dir.path().join(n)).expect("bind"))
            .collect();
        let _bound = std::os::unix::net::UnixDatagram::bind(dir.path().join("dgram.sock"));
        let ours = |paths: std::collections::HashSet<PathBuf>| {
            let mut v: Vec<PathBuf> = paths
                .into_iter()
                .filter(|p| p.starts_with(dir.path()))
                .collect();
            v.sort();
            v
        };
        let diag = ours(super::super::unix_diag::listening_paths().expect("diagnostics"));
        assert_eq!(diag.len(), 3, "{diag:?}");
        assert_eq!(diag, ours(listening_paths_in_proc()));
    }

    #[test]
    fn the_unix_socket_table_is_read_with_paths_holding_spaces() {
        let line =
            "0000000013f034a6: 00000002 00000000 00010000 0001 01    31825 /tmp/my app/run.sock";
        assert_eq!(
            unix_table_line(line),
            Some((0x0001_0000, "/tmp/my app/run.sock"))
        );
        assert_eq!(
            unix_table_line("000000005b295b3a: 00000003 00000000 00000000 0001 03 125876"),
            None
        );
        assert_eq!(unix_table_line("garbage"), None);
        // A listener bound in a directory whose name has a space is found.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("my app.sock");
        let _l = std::os::unix::net::UnixListener::bind(&path).unwrap();
        assert!(listening_paths().contains(&path));
    }

    #[test]
    fn sockets_named_by_variables() {
        assert_eq!(
            socket_of("DOCKER_HOST", "unix:///var/run/docker.sock"),
            Some("/var/run/docker.sock".into())
        );
        assert_eq!(
            socket_of(
                "DBUS_SESSION_BUS_ADDRESS",
                "unix:path=/run/user/1000/bus,guid=x"
            ),
            Some("/run/user/1000/bus".into())
        );
        assert_eq!(
            socket_of("TMUX", "/tmp/tmux-1000/default,1234,0"),
            Some("/tmp/tmux-1000/default".into())
        );
        assert_eq!(socket_of("DOCKER_HOST", "tcp://1.2.3.4:2375"), None);
        assert_eq!(socket_of("DISPLAY", ":0"), None);
    }

    #[test]
    fn sockets_in_temp_directories_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let scan = || {
            outside_sockets(
                None,
                &[dir.path().to_path_buf()],
                100,
                &mut SocketDirs::default(),
                std::time::SystemTime::now(),
            )
        };
        let agent_dir = dir.path().join("ssh-abc");
        std::fs::create_dir(&agent_dir).unwrap();
        let _agent = std::os::unix::net::UnixListener::bind(agent_dir.join("agent.1")).unwrap();
        let _top = std::os::unix::net::UnixListener::bind(dir.path().join("top.sock")).unwrap();
        std::fs::create_dir(dir.path().join("plain")).unwrap();
        std::fs::write(dir.path().join("plain/file"), "x").unwrap();
        let found = scan();
        assert!(found.contains(&agent_dir), "{found:?}");
        assert!(found.contains(&dir.path().join("top.sock")), "{found:?}");
        assert!(!found.contains(&dir.path().join("plain")), "{found:?}");
        // A socket file nobody listens on (a killed server's) is not covered.
        drop(std::os::unix::net::UnixListener::bind(dir.path().join("stale.sock")).unwrap());
        let found = scan();
        assert!(found.contains(&dir.path().join("top.sock")), "{found:?}");
        assert!(!found.contains(&dir.path().join("stale.sock")), "{found:?}");
        // Nor a directory whose sockets nobody listens on; one with a listener one level
        // down is.
        let stale_dir = dir.path().join("suite-tmp");
        std::fs::create_dir_all(stale_dir.join("run")).unwrap();
        drop(std::os::unix::net::UnixListener::bind(stale_dir.join("run/server.sock")).unwrap());
        let live_dir = dir.path().join("tmux-1000");
        std::fs::create_dir_all(live_dir.join("x")).unwrap();
        let _live = std::os::unix::net::UnixListener::bind(live_dir.join("x/default")).unwrap();
        let found = scan();
        assert!(found.contains(&agent_dir), "{found:?}");
        assert!(found.contains(&live_dir), "{found:?}");
        assert!(!found.contains(&stale_dir), "{found:?}");
        drop(_agent);
        let found = scan();
        assert!(!found.contains(&agent_dir), "{found:?}");
    }
}
