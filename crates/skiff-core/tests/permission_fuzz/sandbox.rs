//! A throwaway directory for one command line, run under real bash: every program on `PATH`
//! is a recorder that writes down how it was run (its directory, name and arguments) and does
//! nothing else (the wrappers `env`, `timeout`, `nice`, `nohup`, `xargs`, `stdbuf` and the
//! shells are real, so what they run is recorded too); a name not on `PATH` is recorded by
//! `command_not_found_handle`; and inotify reports every file bash opens, reads or writes.

#![allow(dead_code)]

use std::collections::HashMap;
use std::ffi::OsString;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, WatchDescriptor};

/// Programs that run for real (they only start other programs from `PATH`).
const REAL: &[&str] = &["bash", "env", "timeout", "nice", "nohup", "xargs", "stdbuf"];

/// Programs replaced by recorders.
pub const RECORDED: &[&str] = &[
    "rm", "cat", "ls", "git", "npm", "sed", "sort", "cp", "mv", "tee", "touch", "mkdir", "head",
    "tail", "grep", "wc", "diff", "find", "make", "uniq", "tree", "date", "rg", "file", "stat",
    "du", "curl", "unlink", "id", "cut", "tr", "sudo", "setsid", "x", "a", "b", "echo", "printf",
    "true", "false", "test", "sleep", "pwd", "python", "cargo", "readlink", "realpath", "basename",
    "dirname", "whoami", "uname", "nl", "od", "cmp", "chmod", "ln",
];

/// What one run did.
#[derive(Debug, Default)]
pub struct Observed {
    /// Programs run: (directory, name, arguments).
    pub runs: Vec<(PathBuf, String, Vec<String>)>,
    /// Files bash opened for reading (absolute, as the kernel reached them).
    pub reads: Vec<PathBuf>,
    /// Files bash created, changed, moved or removed.
    pub writes: Vec<PathBuf>,
    /// The command did not finish in time (a harness problem, reported as a failure).
    pub timed_out: bool,
}

/// The shared part of every run: the recorders.
pub struct Tools {
    _dir: tempfile::TempDir,
    /// Directory of the recorders (`PATH`).
    pub bin: PathBuf,
    /// A second `PATH` directory whose `ls` is really `rm` (what `PATH=…; ls` runs).
    pub bin2: PathBuf,
    /// Where the recorders write.
    pub log: PathBuf,
    /// The file bash reads at start (`BASH_ENV`): the `command_not_found_handle`.
    pub bash_env: PathBuf,
}

fn which(name: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!("the permission fuzzer needs `{name}` (bash, coreutils, findutils) on PATH")
        })
}

impl Tools {
    /// Write the recorders.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let base = std::fs::canonicalize(dir.path()).expect("canonical");
        let bin = base.join("bin");
        let bin2 = base.join("bin2");
        let log = base.join("log");
        for d in [&bin, &bin2, &log] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        let bash = which("bash");
        let recorder = |_name: &str, as_name: &str| {
            format!(
                "#!{}\nf='{}'/$BASHPID.$RANDOM$RANDOM\nprintf '%s\\0' \"$(builtin pwd -P)\" '{as_name}' \"$@\" > \"$f\"\n",
                bash.display(),
                log.display(),
            )
        };
        for name in RECORDED {
            let p = bin.join(name);
            std::fs::write(&p, recorder(name, name)).expect("write recorder");
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
        let trojan = bin2.join("ls");
        std::fs::write(&trojan, recorder("ls", "rm")).expect("write recorder");
        std::fs::set_permissions(&trojan, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        for name in REAL {
            symlink(which(name), bin.join(name)).expect("symlink");
        }
        symlink(&bash, bin.join("sh")).expect("symlink");
        let bash_env = base.join("bash_env");
        std::fs::write(
            &bash_env,
            format!(
                "command_not_found_handle() {{ printf '%s\\0' \"$(builtin pwd -P)\" \"$@\" > '{}'/nf.$BASHPID.$RANDOM$RANDOM; return 127; }}\n",
                log.display()
            ),
        )
        .expect("write bash_env");
        Self {
            _dir: dir,
            bin,
            bin2,
            log,
            bash_env,
        }
    }
}

/// The directory one command runs in: `root/a/b/ws` (the workspace), `root/a/b/outside`,
/// `root/home` (HOME).
pub struct Case {
    _dir: tempfile::TempDir,
    /// The throwaway root.
    pub root: PathBuf,
    /// The workspace (the command's directory).
    pub ws: PathBuf,
    /// A directory outside the workspace.
    pub outside: PathBuf,
    /// HOME.
    pub home: PathBuf,
}

impl Case {
    /// A fresh tree.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        let ws = root.join("a/b/ws");
        let outside = root.join("a/b/outside");
        let home = root.join("home");
        for d in [
            ws.join("sub"),
            ws.join(".git"),
            outside.join("deep"),
            home.clone(),
        ] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        for (p, text) in [
            (ws.join("a.txt"), "a\n"),
            (ws.join(".env"), "KEY=secret\n"),
            (ws.join("sub/x"), "x\n"),
            (ws.join(".git/config"), "[core]\n"),
            (ws.join("--output=out.txt"), "trap\n"),
            (ws.join("script"), "rm s\n"),
            (ws.join("list"), "l1\nl2\n"),
            (outside.join("secret"), "s\n"),
            (outside.join("deep/x"), "d\n"),
            (home.join("f"), "h\n"),
        ] {
            std::fs::write(p, text).expect("write");
        }
        symlink("../outside/deep", ws.join("lnk")).expect("symlink");
        symlink(".env", ws.join("innocent")).expect("symlink");
        Self {
            _dir: dir,
            root,
            ws,
            outside,
            home,
        }
    }

    /// Every directory of the tree (for the watches).
    fn dirs(&self) -> Vec<PathBuf> {
        let mut out = vec![self.root.clone()];
        let mut i = 0;
        while i < out.len() {
            if let Ok(entries) = std::fs::read_dir(&out[i]) {
                for e in entries.flatten() {
                    if e.file_type().is_ok_and(|t| t.is_dir()) {
                        out.push(e.path());
                    }
                }
            }
            i += 1;
        }
        out
    }

    /// Run `command` under bash here and report what it did.
    pub fn run(&self, tools: &Tools, command: &str) -> Observed {
        for entry in std::fs::read_dir(&tools.log).expect("log dir").flatten() {
            let _ = std::fs::remove_file(entry.path());
        }
        let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC)
            .expect("inotify (the fuzzer needs Linux inotify)");
        let mut watched: HashMap<WatchDescriptor, PathBuf> = HashMap::new();
        for d in self.dirs() {
            let wd = inotify
                .add_watch(
                    &d,
                    AddWatchFlags::IN_ALL_EVENTS | AddWatchFlags::IN_DONT_FOLLOW,
                )
                .expect("add watch");
            watched.insert(wd, d);
        }
        let mut child = Command::new(tools.bin.join("bash"));
        child
            .arg("-c")
            .arg(command)
            .current_dir(&self.ws)
            .env_clear()
            .env("PATH", &tools.bin)
            .env("HOME", &self.home)
            .env("BASH_ENV", &tools.bash_env)
            .env("LC_ALL", "C")
            .env("X", "x")
            .env("F", "f")
            .env("D", "sub")
            .env("P", "rm")
            .env("RM", "rm")
            .env("CMD", "rm x")
            .env("TMPDIR", tools.log.parent().unwrap_or(Path::new("/tmp")))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        let mut child = child.spawn().expect("spawn bash");
        let pgid = nix::unistd::Pid::from_raw(child.id() as i32);
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut timed_out = false;
        // Wait for bash, then for every process it left in its group (background jobs).
        loop {
            if child.try_wait().expect("wait").is_some() {
                break;
            }
            if Instant::now() > deadline {
                timed_out = true;
                let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
                let _ = child.wait();
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        while nix::sys::signal::killpg(pgid, None).is_ok() {
            if Instant::now() > deadline {
                timed_out = true;
                let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let mut obs = Observed {
            timed_out,
            ..Observed::default()
        };
        loop {
            let events = match inotify.read_events() {
                Ok(e) => e,
                Err(nix::errno::Errno::EAGAIN) => break,
                Err(e) => panic!("reading inotify events: {e}"),
            };
            for ev in events {
                assert!(
                    !ev.mask.contains(AddWatchFlags::IN_Q_OVERFLOW),
                    "inotify queue overflow"
                );
                let (Some(dir), Some(name)) = (watched.get(&ev.wd), ev.name.as_ref()) else {
                    continue;
                };
                let path = dir.join(name);
                let is_dir = ev.mask.contains(AddWatchFlags::IN_ISDIR);
                let write = AddWatchFlags::IN_CLOSE_WRITE
                    | AddWatchFlags::IN_MODIFY
                    | AddWatchFlags::IN_CREATE
                    | AddWatchFlags::IN_DELETE
                    | AddWatchFlags::IN_MOVED_FROM
                    | AddWatchFlags::IN_MOVED_TO
                    | AddWatchFlags::IN_ATTRIB;
                if ev.mask.intersects(write) {
                    obs.writes.push(path);
                } else if !is_dir
                    && ev
                        .mask
                        .intersects(AddWatchFlags::IN_CLOSE_NOWRITE | AddWatchFlags::IN_ACCESS)
                {
                    obs.reads.push(path);
                }
            }
        }
        obs.writes.sort();
        obs.writes.dedup();
        obs.reads.sort();
        obs.reads.dedup();
        for entry in std::fs::read_dir(&tools.log).expect("log dir").flatten() {
            let bytes = std::fs::read(entry.path()).expect("read log");
            let mut fields: Vec<String> = bytes
                .split(|b| *b == 0)
                .map(|f| String::from_utf8_lossy(f).into_owned())
                .collect();
            // `printf '%s\0'` ends every field with a NUL.
            fields.pop();
            if fields.len() < 2 {
                continue;
            }
            let dir = PathBuf::from(fields.remove(0));
            let name = fields.remove(0);
            obs.runs.push((dir, name, fields));
        }
        obs
    }
}

/// `OsString` to `String` for messages.
pub fn lossy(s: &OsString) -> String {
    s.to_string_lossy().into_owned()
}
