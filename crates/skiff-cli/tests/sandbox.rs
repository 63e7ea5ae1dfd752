#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The Bash sandbox for real: `skiff __sandbox` (Landlock and seccomp on this kernel), the
//! Bash tool through it end to end (`skiff -p` with a scripted model), the fallback when
//! Landlock is missing (simulated with `SKIFF_SANDBOX_SIMULATE_UNSUPPORTED=1`), settings and
//! `skiff config`.
//!
//! The workspaces live under Cargo's target directory, not under /tmp: the temp directories
//! are writable inside the sandbox by design, so a "sibling outside the workspace" there would
//! prove nothing. Tests that need Landlock print a note and pass where the kernel lacks it —
//! unless `SKIFF_REQUIRE_SANDBOX=1` (set by `.ci/run`): then they fail.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use skiff_tools::sandbox::{LandlockSupport, TEMP_DIRS, landlock_support};

const SIMULATE: &str = "SKIFF_SANDBOX_SIMULATE_UNSUPPORTED";

/// A workspace `ws` and a sibling `outside`, in a directory no sandbox rule makes writable,
/// plus a temp HOME.
struct Env {
    _root: tempfile::TempDir,
    ws: PathBuf,
    outside: PathBuf,
    home: tempfile::TempDir,
}

impl Env {
    fn new() -> Self {
        let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let base = std::fs::canonicalize(root.path()).unwrap();
        let (ws, outside) = (base.join("ws"), base.join("outside"));
        std::fs::create_dir(&ws).unwrap();
        std::fs::create_dir(&outside).unwrap();
        Self {
            _root: root,
            ws,
            outside,
            home: tempfile::tempdir().unwrap(),
        }
    }

    /// skiff with a clean environment (temp HOME, no user settings), in the workspace.
    fn skiff(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_skiff"));
        c.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.home.path())
            .env("SKIFF_HOME", self.home.path().join(".skiff"))
            .current_dir(&self.ws);
        // The helper allows writes in $TMPDIR, where the tests' own temp files are.
        if let Some(tmp) = std::env::var_os("TMPDIR") {
            c.env("TMPDIR", tmp);
        }
        c
    }

    /// `skiff __sandbox FLAGS -- bash -c COMMAND`.
    fn helper(&self, flags: &[&str], command: &str) -> Output {
        self.skiff()
            .arg("__sandbox")
            .args(flags)
            .args(["--", "bash", "-c", command])
            .output()
            .unwrap()
    }

    /// `skiff -p` with a scripted model making these Bash calls; the stream-json frames.
    fn run(
        &self,
        commands: &[&str],
        flags: &[&str],
        vars: &[(&str, &str)],
    ) -> (Output, Vec<Value>) {
        let mut turns: Vec<Value> = commands
            .iter()
            .enumerate()
            .map(|(i, c)| {
                json!({"content": [{"type": "tool_use", "id": format!("toolu_{i:02}"),
                                    "name": "Bash", "input": {"command": c}}]})
            })
            .collect();
        turns.push(json!({"content": [{"type": "text", "text": "done"}]}));
        let script = self.home.path().join("script.json");
        std::fs::write(&script, json!({ "turns": turns }).to_string()).unwrap();
        let out = self
            .skiff()
            .args(["-p", "go", "--output-format", "stream-json", "--verbose"])
            .arg("--script")
            .arg(&script)
            .args(flags)
            .envs(vars.iter().copied())
            .output()
            .unwrap();
        let frames = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        (out, frames)
    }

    fn config(&self, flags: &[&str], vars: &[(&str, &str)]) -> String {
        let out = self
            .skiff()
            .arg("config")
            .args(flags)
            .envs(vars.iter().copied())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Whether this kernel enforces the sandbox fully and the test directory is outside the temp
/// directories; otherwise a note says why the test does nothing.
fn enforced(env: &Env) -> bool {
    let support = landlock_support();
    if support != LandlockSupport::Full {
        assert!(
            std::env::var("SKIFF_REQUIRE_SANDBOX").as_deref() != Ok("1"),
            "SKIFF_REQUIRE_SANDBOX=1 but this kernel's Landlock support is {support:?}"
        );
        eprintln!("note: skipped: this kernel's Landlock support is {support:?}");
        return false;
    }
    let tmpdir = std::env::var_os("TMPDIR").map(PathBuf::from);
    let temp = TEMP_DIRS.iter().map(PathBuf::from).chain(tmpdir);
    for dir in temp {
        if let Ok(dir) = std::fs::canonicalize(dir)
            && env.outside.starts_with(&dir)
        {
            eprintln!(
                "note: skipped: the target directory is under the temp directory {}",
                dir.display()
            );
            return false;
        }
    }
    true
}

/// The tool results in call order: (is_error, text).
fn results(frames: &[Value]) -> Vec<(bool, String)> {
    frames
        .iter()
        .filter(|f| f["type"] == "user")
        .flat_map(|f| {
            f["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter(|b| b["type"] == "tool_result")
        .map(|b| {
            let text = match &b["content"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (b["is_error"] == true, text)
        })
        .collect()
}

/// The line of `skiff config` output for `key`.
fn line<'a>(config: &'a str, key: &str) -> &'a str {
    config
        .lines()
        .find(|l| l.starts_with(&format!("{key} = ")))
        .unwrap_or_else(|| panic!("no {key} in:\n{config}"))
}

#[test]
fn the_helper_confines_writes_to_the_workspace_and_temp_directories() {
    let env = Env::new();
    if !enforced(&env) {
        return;
    }
    let ws = env.ws.display().to_string();
    let tmp = tempfile::tempdir().unwrap();
    let in_tmp = tmp.path().join("scratch");
    let out = env.helper(
        &["--fs", "workspace-write", "--write", &ws],
        &format!(
            "touch inside && echo made-inside; echo x > {} && echo made-in-tmp; \
             echo quiet > /dev/null && echo devnull-ok; touch ../outside/escaped; \
             echo x > ../outside/also; mkdir ../outside/dir; echo done",
            in_tmp.display()
        ),
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        stdout, "made-inside\nmade-in-tmp\ndevnull-ok\ndone\n",
        "{stderr}"
    );
    assert!(
        stderr.contains("touch: cannot touch '../outside/escaped': Permission denied"),
        "{stderr}"
    );
    assert!(
        stderr.contains("../outside/also: Permission denied"),
        "{stderr}"
    );
    assert!(env.ws.join("inside").exists() && in_tmp.exists());
    assert_eq!(
        std::fs::read_dir(&env.outside).unwrap().count(),
        0,
        "something was written outside the workspace"
    );
    // Reading stays allowed everywhere.
    std::fs::write(env.outside.join("readme"), "outside text\n").unwrap();
    let out = env.helper(
        &["--fs", "workspace-write", "--write", &ws],
        "cat ../outside/readme",
    );
    assert_eq!(text(&out.stdout), "outside text\n");
}

#[test]
fn read_only_blocks_every_write_but_the_device_files() {
    let env = Env::new();
    if !enforced(&env) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = env.helper(
        &["--fs", "read-only", "--write", &env.ws.display().to_string()],
        &format!(
            "touch inside; touch {}/scratch; echo x > /dev/null && echo devnull-ok; cat /etc/hostname >/dev/null && echo read-ok",
            tmp.path().display()
        ),
    );
    let stderr = text(&out.stderr);
    assert_eq!(text(&out.stdout), "devnull-ok\nread-ok\n", "{stderr}");
    assert_eq!(stderr.matches("Permission denied").count(), 2, "{stderr}");
    assert!(!env.ws.join("inside").exists());
    assert!(!tmp.path().join("scratch").exists());
}

#[test]
fn network_deny_stops_tcp_but_not_unix_sockets() {
    let env = Env::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    let allowed = env.helper(&["--network", "allow"], &connect);
    assert_eq!(
        text(&allowed.stdout),
        "connected\n",
        "{}",
        text(&allowed.stderr)
    );
    let denied = env.helper(&["--network", "deny"], &connect);
    assert!(!denied.status.success());
    assert_eq!(text(&denied.stdout), "");
    let stderr = text(&denied.stderr);
    assert!(stderr.contains("Operation not permitted"), "{stderr}");
    // Unix sockets keep working (python3, when the machine has it).
    let python = "import socket; a, b = socket.socketpair(); a.send(b'unix ok'); \
                  print(b.recv(7).decode()); socket.socket(socket.AF_UNIX).close()";
    let has_python = Command::new("python3").arg("-V").output().is_ok();
    if has_python {
        let out = env
            .skiff()
            .args([
                "__sandbox",
                "--network",
                "deny",
                "--",
                "python3",
                "-c",
                python,
            ])
            .output()
            .unwrap();
        assert_eq!(text(&out.stdout), "unix ok\n", "{}", text(&out.stderr));
    }
    // Both at once.
    if enforced(&env) {
        let out = env.helper(
            &[
                "--fs",
                "workspace-write",
                "--write",
                &env.ws.display().to_string(),
                "--network",
                "deny",
            ],
            &format!("{connect}; touch ok"),
        );
        assert!(text(&out.stderr).contains("Operation not permitted"));
        assert!(env.ws.join("ok").exists());
    }
}

#[test]
fn the_helper_refuses_rather_than_running_unconfined() {
    let env = Env::new();
    let out = env
        .skiff()
        .env(SIMULATE, "1")
        .args([
            "__sandbox",
            "--fs",
            "workspace-write",
            "--",
            "touch",
            "made",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(126));
    assert!(
        text(&out.stderr).contains("Landlock is not available"),
        "{}",
        text(&out.stderr)
    );
    assert!(!env.ws.join("made").exists());
    let bad = env
        .skiff()
        .args(["__sandbox", "--fs", "nope", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad.stderr).contains("unknown sandbox mode"));
    let missing = env
        .skiff()
        .args(["__sandbox", "--", "no-such-program-x"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(127));
}

#[test]
fn a_sandboxed_bash_call_end_to_end() {
    let env = Env::new();
    if !enforced(&env) {
        return;
    }
    // `--sandbox` given by the user: Bash runs without approval, inside the sandbox.
    let (out, frames) = env.run(
        &["touch ../outside/escaped", "touch inside && echo made"],
        &["--sandbox", "workspace-write"],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let res = results(&frames);
    assert_eq!(res.len(), 2, "{frames:?}");
    let (is_error, failed) = &res[0];
    assert!(is_error, "{failed}");
    assert_eq!(
        failed,
        "Exit code 1\ntouch: cannot touch '../outside/escaped': Permission denied\n\
         (skiff sandbox: writes outside the workspace and temp directories are blocked; git \
         hooks and config, .claude/, .mcp.json, editor settings and shell start-up files are \
         read-only; network: only through skiff's proxy (HTTP_PROXY/HTTPS_PROXY/ALL_PROXY are \
         set), to the domains in sandbox.network.allowedDomains)"
    );
    assert_eq!(res[1], (false, "made".to_owned()));
    assert!(!env.outside.join("escaped").exists());
    assert!(env.ws.join("inside").exists());
    // The init frame says which sandbox is in force.
    let init = frames.iter().find(|f| f["subtype"] == "init").unwrap();
    assert_eq!(init["sandbox"]["filesystem"], "workspace-write", "{init}");
    assert_eq!(init["sandbox"]["enforced"], true);
    assert_eq!(init["sandbox"]["network"], "proxy");
    assert_eq!(init["sandbox"]["namespaces"], "available", "{init}");
    assert_eq!(init["sandbox"]["contained"], true);
    assert_eq!(
        init["sandbox"]["layers"],
        "namespaces (user, mount, PID, network, IPC) + Landlock"
    );
    assert!(
        !text(&out.stderr).contains("Warning"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn network_denied_end_to_end() {
    let env = Env::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (_, frames) = env.run(
        &[&format!("exec 3<>/dev/tcp/127.0.0.1/{port}")],
        &[
            "--sandbox",
            "off",
            "--sandbox-network",
            "deny",
            "--allowedTools",
            "Bash",
        ],
        &[],
    );
    let res = results(&frames);
    assert!(res[0].0, "{res:?}");
    assert!(
        res[0].1.contains("Operation not permitted")
            && res[0].1.ends_with("(skiff sandbox: network: denied)"),
        "{res:?}"
    );
}

#[test]
fn the_default_sandbox_runs_commands_without_approval_where_it_is_enforced() {
    let env = Env::new();
    // The sandbox is on by default where Landlock works, and then Bash needs no approval.
    let (out, frames) = env.run(&["touch made"], &[], &[]);
    assert!(out.status.success());
    let init = frames.iter().find(|f| f["subtype"] == "init").unwrap();
    if init["sandbox"]["enforced"] == true {
        assert!(!results(&frames)[0].0, "{:?}", results(&frames));
        assert!(env.ws.join("made").exists());
    } else {
        assert_eq!(
            results(&frames)[0],
            (
                true,
                "Claude requested permissions to use Bash, but you haven't granted it yet.".into()
            )
        );
    }
    // Deny rules still hold.
    let (_, frames) = env.run(
        &["touch denied"],
        &["--disallowedTools", "Bash(touch:*)"],
        &[],
    );
    assert!(results(&frames)[0].0);
    assert!(!env.ws.join("denied").exists());
    // Turned off by the setting, commands ask again.
    let (_, frames) = env.run(
        &["touch asked"],
        &[
            "--settings",
            r#"{"sandbox": {"autoAllowBashIfSandboxed": false}}"#,
        ],
        &[],
    );
    assert!(results(&frames)[0].0);
    assert!(!env.ws.join("asked").exists());
    // Allowed by a rule, the command runs in the default sandbox.
    if enforced(&env) {
        let (_, frames) = env.run(
            &["touch ../outside/x; touch here"],
            &["--allowedTools", "Bash"],
            &[],
        );
        let res = results(&frames);
        // The last command succeeded, so the call did; the blocked write shows in its output.
        assert!(
            !res[0].0 && res[0].1.contains("Permission denied"),
            "{res:?}"
        );
        assert!(env.ws.join("here").exists() && !env.outside.join("x").exists());
    }
}

#[test]
fn an_allow_list_of_bash_patterns_is_an_allow_list_in_the_sandbox_too() {
    let env = Env::new();
    // As an Agent SDK's `allowed_tools=["Bash(echo:*)"]` without can_use_tool: a command
    // outside the list is denied (headless), the sandbox's auto-allow notwithstanding.
    let (out, frames) = env.run(
        &["touch notallowed.txt", "echo allowed"],
        &["--allowedTools", "Bash(echo:*)"],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let res = results(&frames);
    assert_eq!(res.len(), 2, "{res:?}");
    assert!(res[0].0, "{res:?}");
    assert!(!env.ws.join("notallowed.txt").exists());
    assert_eq!(res[1], (false, "allowed".to_owned()));
    let result = frames.iter().find(|f| f["type"] == "result").unwrap();
    assert_eq!(result["permission_denials"][0]["tool_name"], "Bash");
    // A setting that turns auto-allow on explicitly wins, where the sandbox is enforced.
    let (_, frames) = env.run(
        &["touch sandboxed.txt"],
        &[
            "--allowedTools",
            "Bash(echo:*)",
            "--settings",
            r#"{"sandbox": {"autoAllowBashIfSandboxed": true}}"#,
        ],
        &[],
    );
    let init = frames.iter().find(|f| f["subtype"] == "init").unwrap();
    if init["sandbox"]["enforced"] == true {
        assert!(!results(&frames)[0].0, "{:?}", results(&frames));
        assert!(env.ws.join("sandboxed.txt").exists());
    }
}

#[test]
fn without_landlock_skiff_warns_once_and_runs_unsandboxed() {
    let env = Env::new();
    let vars = [(SIMULATE, "1")];
    let (out, frames) = env.run(
        &["touch ../outside/unsandboxed"],
        &["--sandbox", "workspace-write", "--allowedTools", "Bash"],
        &vars,
    );
    let stderr = text(&out.stderr);
    assert_eq!(
        stderr.matches("Warning: the Bash sandbox").count(),
        1,
        "{stderr}"
    );
    assert!(
        stderr.contains("WITHOUT the filesystem sandbox"),
        "{stderr}"
    );
    assert!(!results(&frames)[0].0, "{frames:?}");
    assert!(env.outside.join("unsandboxed").exists());
    // Without Landlock, a sandbox that is only the default goes off without a word.
    let (out, _) = env.run(&["true"], &["--allowedTools", "Bash"], &vars);
    assert!(
        !text(&out.stderr).contains("Warning"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn without_landlock_the_refuse_fallback_fails_bash_calls() {
    let env = Env::new();
    let settings = r#"{"sandbox": {"mode": "workspace-write", "fallback": "refuse"}}"#;
    let (out, frames) = env.run(
        &["touch made"],
        &["--settings", settings, "--allowedTools", "Bash"],
        &[(SIMULATE, "1")],
    );
    assert!(out.status.success());
    let stderr = text(&out.stderr);
    assert!(stderr.contains("Bash commands will be refused"), "{stderr}");
    let (is_error, message) = &results(&frames)[0];
    assert!(is_error);
    assert!(
        message.starts_with(
            "The Bash tool is unavailable: the command sandbox (workspace-write) cannot be enforced"
        ),
        "{message}"
    );
    assert!(!env.ws.join("made").exists());
}

#[test]
fn config_shows_the_sandbox_and_where_it_came_from() {
    let env = Env::new();
    let out = env.config(&[], &[]);
    let mode = line(&out, "sandbox.mode");
    assert!(
        mode.starts_with("sandbox.mode = \"workspace-write\"  (default)"),
        "{mode}"
    );
    match landlock_support() {
        LandlockSupport::Full => {
            assert!(
                mode.contains(
                    "[in effect: workspace-write (namespaces (user, mount, PID, network, IPC) + \
                     Landlock); network through skiff's proxy (allowed domains; others asked)]"
                ),
                "{mode}"
            );
            let layers = line(&out, "sandbox.layers");
            assert!(
                layers.starts_with(
                    "sandbox.layers = \"namespaces (user, mount, PID, network, IPC) + Landlock\""
                ) && layers.ends_with("[namespaces: available]"),
                "{layers}"
            );
        }
        _ => assert!(mode.contains("in effect:"), "{mode}"),
    }
    assert_eq!(
        line(&out, "sandbox.network"),
        "sandbox.network = \"proxy\"  (default)"
    );
    assert!(line(&out, "sandbox.fallback").contains("[this kernel: Landlock"));
    assert!(
        line(&out, "sandbox.autoAllowBashIfSandboxed")
            .starts_with("sandbox.autoAllowBashIfSandboxed = true  (default)"),
        "{out}"
    );
    let out = env.config(
        &["--sandbox", "read-only", "--sandbox-network", "deny"],
        &[],
    );
    assert!(
        line(&out, "sandbox.mode").starts_with("sandbox.mode = \"read-only\"  (flag --sandbox)")
    );
    assert_eq!(
        line(&out, "sandbox.network"),
        "sandbox.network = \"deny\"  (flag --sandbox-network)"
    );
    let auto = line(&out, "sandbox.autoAllowBashIfSandboxed");
    assert!(
        auto.starts_with("sandbox.autoAllowBashIfSandboxed = true  (default)"),
        "{auto}"
    );
    // Unavailable: the mode line says what happens instead.
    let out = env.config(&["--sandbox", "read-only"], &[(SIMULATE, "1")]);
    assert!(
        line(&out, "sandbox.mode").contains(
            "[in effect: read-only requested, but Landlock is not available: commands run without the filesystem sandbox; network not filtered (no network namespace)]"
        ),
        "{out}"
    );
    assert!(line(&out, "sandbox.autoAllowBashIfSandboxed").contains("no effect"));
    // Environment variables and Claude Code's `enabled`.
    let out = env.config(&[], &[("SKIFF_SANDBOX", "off")]);
    assert!(line(&out, "sandbox.mode").starts_with("sandbox.mode = \"off\"  (env SKIFF_SANDBOX)"));
    let out = env.config(&["--settings", r#"{"sandbox": {"enabled": false}}"#], &[]);
    assert!(
        line(&out, "sandbox.mode")
            .starts_with("sandbox.mode = \"off\"  (--settings (inline JSON))")
    );
    let out = env.config(
        &["--settings", r#"{"sandbox": {"enabled": false, "mode": "read-only", "network": {"allowUnixSockets": ["/run/x.sock"], "allowedDomains": ["github.com"], "httpProxyPort": 1}, "filesystem": {"denyRead": ["~/secrets"]}}}"#],
        &[],
    );
    assert!(line(&out, "sandbox.mode").starts_with("sandbox.mode = \"read-only\""));
    assert!(
        line(&out, "sandbox.network.allowedDomains")
            .starts_with("sandbox.network.allowedDomains = \"github.com\""),
        "{out}"
    );
    assert!(
        line(&out, "sandbox.network.allowUnixSockets")
            .starts_with("sandbox.network.allowUnixSockets = \"/run/x.sock\""),
        "{out}"
    );
    assert!(
        line(&out, "sandbox.filesystem.denyRead")
            .starts_with("sandbox.filesystem.denyRead = \"~/secrets\""),
        "{out}"
    );
    assert!(
        out.contains("ignored = \"sandbox.network.httpProxyPort\""),
        "{out}"
    );
    // A bad value names the key and the file.
    let bad = env
        .skiff()
        .args(["config", "--settings", r#"{"sandbox": {"mode": "full"}}"#])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(
        text(&bad.stderr)
            .contains("`sandbox.mode` must be one of \"off\", \"workspace-write\", \"read-only\""),
        "{}",
        text(&bad.stderr)
    );
}

fn write_project_settings(ws: &Path, json: &str) {
    std::fs::create_dir_all(ws.join(".claude")).unwrap();
    std::fs::write(ws.join(".claude/settings.json"), json).unwrap();
}

#[test]
fn an_untrusted_workspace_cannot_weaken_the_sandbox() {
    let env = Env::new();
    write_project_settings(
        &env.ws,
        r#"{"sandbox": {"mode": "off", "network": "allow", "fallback": "unsandboxed",
                        "autoAllowBashIfSandboxed": true, "enabled": false}}"#,
    );
    let out = env.config(&["--sandbox-network", "deny"], &[]);
    assert!(
        line(&out, "sandbox.mode").starts_with("sandbox.mode = \"workspace-write\"  (default)"),
        "{out}"
    );
    assert!(line(&out, "sandbox.network").starts_with("sandbox.network = \"deny\"  (flag"));
    assert!(
        line(&out, "sandbox.autoAllowBashIfSandboxed")
            .starts_with("sandbox.autoAllowBashIfSandboxed = true  (default)")
    );
    // Every key the file tried to set is named (in the file's order, or sorted: serde_json's
    // maps keep insertion order when a dependency turns `preserve_order` on).
    let warning = out
        .lines()
        .find(|l| l.starts_with("# Warning: ignoring sandbox."))
        .unwrap_or_else(|| panic!("no warning: {out}"));
    for key in [
        "sandbox.autoAllowBashIfSandboxed",
        "sandbox.enabled",
        "sandbox.fallback",
        "sandbox.mode",
        "sandbox.network",
    ] {
        assert!(warning.contains(key), "{key} not in {warning}");
    }
    // Making it stricter is fine.
    write_project_settings(
        &env.ws,
        r#"{"sandbox": {"mode": "read-only", "network": "deny"}}"#,
    );
    let out = env.config(&[], &[]);
    assert!(line(&out, "sandbox.mode").starts_with("sandbox.mode = \"read-only\"  (project:"));
    assert!(line(&out, "sandbox.network").starts_with("sandbox.network = \"deny\"  (project:"));
    assert!(
        line(&out, "sandbox.autoAllowBashIfSandboxed")
            .starts_with("sandbox.autoAllowBashIfSandboxed = true  (default)")
    );
    // Trusted, the workspace's choice stands.
    write_project_settings(&env.ws, r#"{"sandbox": {"mode": "off"}}"#);
    let out = env.config(&["--trust"], &[]);
    assert!(
        line(&out, "sandbox.mode").starts_with("sandbox.mode = \"off\"  (project:"),
        "{out}"
    );
    write_project_settings(&env.ws, r#"{"sandbox": {"mode": "read-only"}}"#);
    let out = env.config(&["--trust"], &[]);
    assert!(
        line(&out, "sandbox.autoAllowBashIfSandboxed")
            .starts_with("sandbox.autoAllowBashIfSandboxed = true  (default)")
    );
}

/// The first request does not wait for the namespace probe (held here until the model has
/// been asked, through `SKIFF_SANDBOX_PROBE_AFTER`, in a home where no earlier probe's answer
/// is remembered): the `system/init` frame waits for the answer instead, and still comes
/// first, with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_request_does_not_wait_for_the_namespace_probe() {
    use std::time::{Duration, Instant};
    let env = Env::new();
    let server = skiff_testkit::MockServer::builder()
        .turn(skiff_protocol::script::ScriptTurn::text("hello"))
        .start()
        .await
        .unwrap();
    let gate = env.home.path().join("probe-may-start");
    let mut child = env
        .skiff()
        .args(["-p", "go", "--output-format", "stream-json", "--verbose"])
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("ANTHROPIC_BASE_URL", server.url())
        .env(skiff_tools::sandbox::PROBE_AFTER_VAR, &gate)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while server.request_count() == 0 {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("skiff ended before asking the model: {status}");
        }
        assert!(
            Instant::now() < deadline,
            "no request while the probe was held"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    std::fs::write(&gate, "").unwrap();
    let out = tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let frames: Vec<Value> = text(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert_eq!(frames[0]["subtype"], "init", "{frames:?}");
    let namespaces = &frames[0]["sandbox"]["namespaces"];
    if std::env::var("SKIFF_REQUIRE_SANDBOX").as_deref() == Ok("1") {
        assert_eq!(namespaces, "available", "the probe's answer: {}", frames[0]);
    } else {
        assert!(
            namespaces == "available" || namespaces == "unavailable",
            "the probe's answer, not unknown: {}",
            frames[0]
        );
    }
    let result = frames.last().unwrap();
    assert_eq!(result["type"], "result", "{frames:?}");
    assert_eq!(result["result"], "hello");
    assert_eq!(frames.iter().filter(|f| f["subtype"] == "init").count(), 1);
}
