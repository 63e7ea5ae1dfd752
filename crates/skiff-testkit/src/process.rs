//! For benchmarks: the `skiff-mock` binary as a separate process ([`MockProcess`]), so the
//! mock's work is not measured with the client's, and small helpers the benchmark programs
//! share (environment knobs, peak memory).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use skiff_protocol::script::Script;

/// A `skiff-mock` process serving a script on an ephemeral port; killed when dropped.
#[derive(Debug)]
pub struct MockProcess {
    child: Child,
    url: String,
}

impl MockProcess {
    /// Write `script` to `dir/<name>.json` and serve it with the `skiff-mock` binary at `bin`;
    /// returns once it listens.
    pub fn start(bin: &Path, script: &Script, dir: &Path, name: &str) -> std::io::Result<Self> {
        let path = dir.join(format!("{name}.json"));
        std::fs::write(&path, serde_json::to_vec(script)?)?;
        let mut child = Command::new(bin)
            .arg("--script")
            .arg(&path)
            .arg("--idle-exit")
            .arg("300")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let mut line = String::new();
        if let Some(stdout) = child.stdout.take() {
            BufReader::new(stdout).read_line(&mut line)?;
        }
        match line.trim().strip_prefix("listening on ") {
            Some(url) => Ok(Self {
                url: url.to_owned(),
                child,
            }),
            None => {
                let _ = child.kill();
                let _ = child.wait();
                Err(std::io::Error::other(format!(
                    "unexpected skiff-mock output: {line:?}"
                )))
            }
        }
    }

    /// The base URL.
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for MockProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The environment variable `name` parsed, or `default` when unset or unparsable.
pub fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Peak resident set size of this process in KiB (Linux `VmHWM`; `None` elsewhere).
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}
