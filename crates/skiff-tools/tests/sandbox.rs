#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The Bash tool with a sandbox configured: how commands reach the helper, refusals, the note on
//! failures, and how the sandbox is decided for a kernel. The helper here is a stand-in script
//! that records its arguments and execs the command; the real helper (skiff itself, with
//! Landlock and seccomp) is tested end to end in skiff-cli's `tests/sandbox.rs`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;
use skiff_tools::bash::BashTool;
use skiff_tools::sandbox::{
    HELPER_ARG, LandlockSupport, NamespaceSupport, NetworkPolicy, Plan, SandboxFallback,
    SandboxMode, SandboxPolicy, landlock_support, writable_paths,
};
use skiff_tools::{SandboxConfig, SandboxStatus, Tool, ToolConfig, ToolContext, ToolOutput, Typed};
use tempfile::TempDir;

/// A stand-in helper: logs its arguments (one a line) to `helper.log`, then execs what follows
/// `--`.
fn fake_helper(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("helper.sh");
    let log = dir.join("helper.log");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}'\nwhile [ \"$1\" != -- ]; do shift; done\nshift\nexec \"$@\"\n",
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

struct Setup {
    _dirs: TempDir,
    ws: PathBuf,
    extra: PathBuf,
    aux: PathBuf,
    ctx: ToolContext,
}

fn setup(sandbox: impl FnOnce(PathBuf) -> Option<SandboxConfig>) -> Setup {
    let dirs = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dirs.path()).unwrap();
    let (ws, extra, aux) = (root.join("ws"), root.join("extra"), root.join("aux"));
    for d in [&ws, &extra, &aux] {
        std::fs::create_dir(d).unwrap();
    }
    let config = ToolConfig {
        sandbox: sandbox(fake_helper(&aux)),
        ..ToolConfig::default()
    };
    let ctx = ToolContext::with_dirs(&ws, std::slice::from_ref(&extra), config).unwrap();
    Setup {
        _dirs: dirs,
        ws,
        extra,
        aux,
        ctx,
    }
}

fn config(helper: PathBuf) -> SandboxConfig {
    SandboxConfig {
        helper,
        filesystem: SandboxMode::WorkspaceWrite,
        network: NetworkPolicy::Deny,
        refused: None,
        runtime: None,
    }
}

async fn run(command: &str, ctx: &ToolContext) -> ToolOutput {
    Typed::new(BashTool)
        .call(json!({ "command": command }), ctx)
        .await
}

#[tokio::test]
async fn commands_go_through_the_helper_with_the_workspace_roots() {
    let s = setup(|h| Some(config(h)));
    let out = run("echo hi; pwd; echo $SKIFF", &s.ctx).await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(
        out.text_content(),
        format!("hi\n{}\n1", s.ws.display()),
        "same output, directory and environment as without the helper"
    );
    let log = std::fs::read_to_string(s.aux.join("helper.log")).unwrap();
    let args: Vec<&str> = log.lines().collect();
    assert_eq!(&args[..2], [HELPER_ARG, "--plan"], "{log}");
    let plan = Plan::from_arg(args[2]).unwrap();
    assert_eq!(plan.fs, SandboxMode::WorkspaceWrite);
    assert_eq!(plan.network, NetworkPolicy::Deny);
    assert_eq!(plan.write, [s.ws.clone(), s.extra.clone()]);
    assert!(plan.namespaces.is_none(), "no runtime: Landlock only");
    assert_eq!(args[3], "--");
    let shell = args[4];
    assert!(
        shell == "sh" || Path::new(shell).is_absolute(),
        "the shell: {shell}"
    );
    assert_eq!(&args[5..], ["-c", "echo hi; pwd; echo $SKIFF"]);
}

#[tokio::test]
async fn a_failure_that_looks_like_the_sandbox_gets_a_note() {
    let s = setup(|h| Some(config(h)));
    let out = run(
        "echo \"touch: cannot touch '../x': Permission denied\" >&2; exit 1",
        &s.ctx,
    )
    .await;
    assert!(out.is_error);
    assert_eq!(
        out.text_content(),
        "Exit code 1\ntouch: cannot touch '../x': Permission denied\n(skiff sandbox: writes \
         outside the workspace and temp directories are blocked; git hooks and config, \
         .claude/, .mcp.json, editor settings and shell start-up files are read-only; \
         network: denied)"
    );
    // Success, or a failure that says nothing of permissions: no note.
    let ok = run("echo 'Permission denied'", &s.ctx).await;
    assert_eq!(ok.text_content(), "Permission denied");
    let other = run("echo 'error: test failed'; exit 3", &s.ctx).await;
    assert_eq!(other.text_content(), "Exit code 3\nerror: test failed");
    // Without a sandbox: no note either.
    let plain = setup(|_| None);
    let out = run("echo 'Permission denied' >&2; exit 1", &plain.ctx).await;
    assert_eq!(out.text_content(), "Exit code 1\nPermission denied");
}

#[tokio::test]
async fn refused_commands_do_not_run() {
    let s = setup(|h| {
        Some(SandboxConfig {
            refused: Some("The Bash tool is unavailable: no sandbox.".into()),
            ..config(h)
        })
    });
    let out = run("touch made", &s.ctx).await;
    assert!(out.is_error);
    assert_eq!(
        out.text_content(),
        "The Bash tool is unavailable: no sandbox."
    );
    assert!(!s.ws.join("made").exists());
    assert!(!s.aux.join("helper.log").exists(), "the helper ran");
}

#[tokio::test]
async fn a_missing_helper_is_an_error_not_an_unsandboxed_run() {
    let s = setup(|h| Some(config(h.with_file_name("no-such-helper"))));
    let out = run("touch made", &s.ctx).await;
    assert!(out.is_error);
    let text = out.text_content();
    assert!(
        text.starts_with("Cannot start the sandbox helper") && text.contains("no-such-helper"),
        "{text}"
    );
    assert!(!s.ws.join("made").exists());
}

#[tokio::test]
async fn the_timeout_kills_the_command_behind_the_helper() {
    let s = setup(|h| Some(config(h)));
    let started = Instant::now();
    let out = Typed::new(BashTool)
        .call(
            json!({"command": "echo before; sleep 30", "timeout": 300}),
            &s.ctx,
        )
        .await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(out.is_error);
    assert_eq!(out.text_content(), "before\nCommand timed out after 300ms");
}

fn policy(mode: SandboxMode, fallback: SandboxFallback, implicit: bool) -> SandboxPolicy {
    SandboxPolicy {
        mode,
        network: NetworkPolicy::Allow,
        fallback,
        implicit,
    }
}

#[test]
fn this_kernels_landlock_support() {
    // Informational: the real sandbox tests (skiff-cli) skip where it is not Full.
    println!("landlock on this kernel: {:?}", landlock_support());
}

#[test]
fn writable_paths_by_mode() {
    let roots = [PathBuf::from("/w")];
    assert!(writable_paths(SandboxMode::Off, &roots).is_empty());
    let ro = writable_paths(SandboxMode::ReadOnly, &roots);
    assert!(ro.contains(&PathBuf::from("/dev/null")));
    assert!(!ro.contains(&PathBuf::from("/w")) && !ro.contains(&PathBuf::from("/tmp")));
    let ww = writable_paths(SandboxMode::WorkspaceWrite, &roots);
    for p in ["/w", "/tmp", "/var/tmp", "/dev/null", "/dev/pts"] {
        assert!(ww.contains(&PathBuf::from(p)), "{p}");
    }
}

#[test]
fn full_support_enforces_the_requested_mode() {
    let s = SandboxStatus::decide_with(
        &policy(SandboxMode::WorkspaceWrite, SandboxFallback::Refuse, true),
        LandlockSupport::Full,
    );
    assert!(s.enforced() && s.warning.is_none() && s.refused.is_none());
    assert!(!s.contained(), "namespaces not known yet: not contained");
    assert_eq!(
        s.summary(),
        "workspace-write (Landlock only); network allowed"
    );
    assert_eq!(
        s.to_json(),
        json!({"mode": "workspace-write", "filesystem": "workspace-write", "network": "allow",
               "landlock": "full", "namespaces": "unknown", "layers": "Landlock only",
               "enforced": true, "contained": false, "refused": false})
    );
    let ns = s.clone().with_namespaces(NamespaceSupport::Available);
    assert!(ns.contained());
    assert_eq!(
        ns.summary(),
        "workspace-write (namespaces (user, mount, PID, network, IPC) + Landlock); network allowed"
    );
    let no_ns = s
        .clone()
        .with_namespaces(NamespaceSupport::Unavailable("unshare: EPERM".into()));
    assert!(!no_ns.contained() && no_ns.enforced());
    assert!(
        no_ns.summary().contains("asked about"),
        "{}",
        no_ns.summary()
    );
    assert_eq!(no_ns.to_json()["namespacesProblem"], "unshare: EPERM");
    let config = s.config("/bin/skiff".into(), None).unwrap();
    assert_eq!(config.filesystem, SandboxMode::WorkspaceWrite);
    // Off with the network allowed: no helper at all.
    let off = SandboxStatus::decide_with(
        &policy(SandboxMode::Off, SandboxFallback::Refuse, false),
        LandlockSupport::Unavailable,
    );
    assert!(!off.enforced() && off.config("/x".into(), None).is_none());
    assert_eq!(off.summary(), "off; network allowed");
    // Off with the network denied: the helper, for seccomp only.
    let net = SandboxStatus::decide_with(
        &SandboxPolicy {
            network: NetworkPolicy::Deny,
            ..policy(SandboxMode::Off, SandboxFallback::Unsandboxed, false)
        },
        LandlockSupport::Unavailable,
    );
    assert!(!net.enforced() && net.warning.is_none());
    let config = net.config("/x".into(), None).unwrap();
    assert_eq!(
        (config.filesystem, config.network),
        (SandboxMode::Off, NetworkPolicy::Deny)
    );
    assert_eq!(net.summary(), "off; network denied");
}

#[test]
fn unavailable_landlock_falls_back() {
    // The built-in default goes quietly off.
    let quiet = SandboxStatus::decide_with(
        &policy(
            SandboxMode::WorkspaceWrite,
            SandboxFallback::Unsandboxed,
            true,
        ),
        LandlockSupport::Unavailable,
    );
    assert!(quiet.warning.is_none() && quiet.refused.is_none());
    assert_eq!(quiet.filesystem, SandboxMode::Off);
    assert!(quiet.config("/x".into(), None).is_none());
    // Asked for: one warning, commands unsandboxed.
    let warned = SandboxStatus::decide_with(
        &policy(SandboxMode::ReadOnly, SandboxFallback::Unsandboxed, false),
        LandlockSupport::Unavailable,
    );
    let w = warned.warning.clone().unwrap();
    assert!(w.contains("read-only") && w.contains("WITHOUT"), "{w}");
    assert!(!warned.enforced() && warned.refused.is_none());
    assert!(warned.config("/x".into(), None).is_none());
    assert!(
        warned.summary().contains("without the filesystem sandbox"),
        "{}",
        warned.summary()
    );
    // Refuse: the tool gets the refusal.
    let refused = SandboxStatus::decide_with(
        &policy(SandboxMode::WorkspaceWrite, SandboxFallback::Refuse, false),
        LandlockSupport::Unavailable,
    );
    assert!(refused.warning.as_deref().unwrap().contains("refused"));
    let config = refused.config("/x".into(), None).unwrap();
    assert!(config.refused.unwrap().contains("was not run"));
}

#[test]
fn partial_landlock_warns_or_refuses() {
    let partial = SandboxStatus::decide_with(
        &policy(
            SandboxMode::WorkspaceWrite,
            SandboxFallback::Unsandboxed,
            true,
        ),
        LandlockSupport::Partial,
    );
    assert_eq!(partial.filesystem, SandboxMode::WorkspaceWrite);
    assert!(partial.warning.as_deref().unwrap().contains("partially"));
    assert!(
        !partial.enforced(),
        "no approval-free Bash on a partial sandbox"
    );
    assert!(partial.summary().contains("partial"));
    let refused = SandboxStatus::decide_with(
        &policy(SandboxMode::WorkspaceWrite, SandboxFallback::Refuse, false),
        LandlockSupport::Partial,
    );
    assert!(refused.refused.is_some() && !refused.enforced());
}

#[test]
fn failure_notes_by_mode() {
    let both = config("/x".into());
    assert!(both.failure_note("error: 2 tests failed").is_none());
    let net_only = SandboxConfig {
        filesystem: SandboxMode::Off,
        ..both.clone()
    };
    assert_eq!(
        net_only
            .failure_note("bash: socket: Operation not permitted")
            .as_deref(),
        Some("(skiff sandbox: network: denied)")
    );
    let fs_only = SandboxConfig {
        network: NetworkPolicy::Allow,
        ..both.clone()
    };
    assert!(
        fs_only
            .failure_note("curl: (6) Could not resolve host")
            .is_none()
    );
    assert_eq!(
        fs_only
            .failure_note("sh: 1: cannot create /etc/x: Read-only file system")
            .as_deref(),
        Some(
            "(skiff sandbox: writes outside the workspace and temp directories are blocked; git \
             hooks and config, .claude/, .mcp.json, editor settings and shell start-up files are \
             read-only; network: allowed)"
        )
    );
    let read_only = SandboxConfig {
        filesystem: SandboxMode::ReadOnly,
        ..both
    };
    assert_eq!(
        read_only.failure_note("Permission denied").as_deref(),
        Some("(skiff sandbox: all file writes are blocked (read-only mode); network: denied)")
    );
}
