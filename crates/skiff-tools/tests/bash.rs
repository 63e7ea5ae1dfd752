#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Integration tests of the Bash tool against real processes in temp directories.

use std::path::Path;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};
use skiff_tools::bash::BashTool;
use skiff_tools::{Tool, ToolConfig, ToolContext, ToolOutput, Typed};
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

fn workspace() -> (TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path()).unwrap();
    (dir, ctx)
}

fn workspace_with(config: ToolConfig) -> (TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::with_dirs(dir.path(), &[], config).unwrap();
    (dir, ctx)
}

async fn bash(input: Value, ctx: &ToolContext) -> ToolOutput {
    Typed::new(BashTool).call(input, ctx).await
}

async fn run(command: &str, ctx: &ToolContext) -> ToolOutput {
    bash(json!({ "command": command }), ctx).await
}

/// Whether `pid` is a live process (a zombie waiting to be reaped counts as dead).
fn alive(pid: i32) -> bool {
    if kill(Pid::from_raw(pid), None).is_err() {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised command name.
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_none_or(|(_, rest)| !rest.starts_with('Z')),
        Err(_) => false,
    }
}

/// Wait (up to 10 s) for `pid` to be gone; kill signals are asynchronous.
async fn gone(pid: i32) -> bool {
    for _ in 0..100 {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

fn read_pid(path: &Path) -> i32 {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn schema_matches_claude_code() {
    let fixture: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../testdata/claude-code/builtin_tool_input_schemas.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let expected = fixture
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "Bash")
        .unwrap()["input_schema"]
        .clone();
    let tool = Typed::new(BashTool);
    let ours = serde_json::to_value(tool.input_schema()).unwrap();
    assert_eq!(tool.name(), "Bash");
    let props = |s: &Value| -> Vec<(String, Value)> {
        let mut v: Vec<(String, Value)> = s["properties"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, p)| (k.clone(), p["type"].clone()))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    };
    assert_eq!(props(&ours), props(&expected));
    assert_eq!(ours["required"], expected["required"]);
    assert_eq!(ours["type"], "object");
    assert_eq!(ours["additionalProperties"], false);
    for (name, _) in props(&ours) {
        let desc = ours["properties"][&name]["description"].as_str();
        assert!(
            desc.is_some_and(|d| !d.is_empty()),
            "no description: {name}"
        );
    }
    assert!(!tool.description().is_empty());
    assert!(!tool.is_read_only());
}

#[tokio::test]
async fn echo_and_structured_result() {
    let (_dir, ctx) = workspace();
    let out = run("echo hi", &ctx).await;
    assert!(!out.is_error);
    assert_eq!(out.text_content(), "hi");
    assert_eq!(
        out.structured,
        Some(json!({
            "stdout": "hi",
            "stderr": "",
            "interrupted": false,
            "isImage": false,
            "noOutputExpected": false,
        }))
    );
}

#[tokio::test]
async fn stdout_and_stderr_merged_in_order() {
    let (_dir, ctx) = workspace();
    let out = run("echo out; echo err >&2; echo out2", &ctx).await;
    assert!(!out.is_error);
    assert_eq!(out.text_content(), "out\nerr\nout2");
}

/// "command not found" for a script in the working directory says how to run it.
#[tokio::test]
async fn a_script_named_as_a_command_gets_a_hint() {
    let (dir, ctx) = workspace();
    std::fs::write(dir.path().join("test.sh"), "echo ok\n").unwrap();
    let out = run("test.sh", &ctx).await;
    assert!(out.is_error);
    let text = out.text_content();
    assert!(text.starts_with("Exit code 127\n"), "{text}");
    assert!(
        text.ends_with(
            "(test.sh is a file in the working directory, not a command on PATH: run it as `bash \
             test.sh`, or `./test.sh` if it is executable.)"
        ),
        "{text}"
    );
    let out = run("Bash test.sh", &ctx).await;
    assert!(out.text_content().contains("`bash test.sh`"), "{out:?}");
}

#[tokio::test]
async fn non_zero_exit_code() {
    let (_dir, ctx) = workspace();
    let out = run("echo partial; echo oops >&2; exit 3", &ctx).await;
    assert!(out.is_error);
    assert_eq!(out.text_content(), "Exit code 3\npartial\noops");
    assert_eq!(
        out.structured,
        Some(json!("Error: Exit code 3\npartial\noops"))
    );

    let out = run("exit 1", &ctx).await;
    assert!(out.is_error);
    assert_eq!(out.text_content(), "Exit code 1");
}

#[tokio::test]
async fn killed_by_signal_reports_128_plus_signal() {
    let (_dir, ctx) = workspace();
    let out = run("kill -9 $$", &ctx).await;
    assert!(out.is_error);
    assert_eq!(out.text_content(), "Exit code 137");
}

#[tokio::test]
async fn no_output() {
    let (_dir, ctx) = workspace();
    let out = run("true", &ctx).await;
    assert!(!out.is_error);
    assert_eq!(out.text_content(), "(Bash completed with no output)");
    assert_eq!(out.structured.unwrap()["stdout"], "");
}

#[tokio::test]
async fn stdin_is_empty() {
    let (_dir, ctx) = workspace();
    // `cat` would wait forever on a terminal or an open pipe.
    let out = run("cat; echo done", &ctx).await;
    assert_eq!(out.text_content(), "done");
}

#[tokio::test]
async fn runs_in_workspace_root() {
    let (dir, ctx) = workspace();
    std::fs::write(dir.path().join("marker.txt"), "x").unwrap();
    let out = run("pwd -P; ls", &ctx).await;
    let root = std::fs::canonicalize(dir.path()).unwrap();
    assert_eq!(
        out.text_content(),
        format!("{}\nmarker.txt", root.display())
    );
}

#[tokio::test]
async fn environment_filtered_and_marked() {
    let (_dir, ctx) = workspace_with(ToolConfig {
        bash_env_remove: vec!["HOME".into()],
        ..ToolConfig::default()
    });
    let out = run(r#"echo "[$HOME] [$SKIFF] [$CLAUDECODE]""#, &ctx).await;
    assert_eq!(out.text_content(), "[] [1] [1]");
}

#[tokio::test]
async fn the_settings_env_is_set_under_what_skiff_sets_and_never_sets_a_secret() {
    let config = ToolConfig::default();
    let env = skiff_tools::ExtraEnv::new(
        [
            ("SKIFF_TEST_FROM_SETTINGS", "from settings"),
            ("ANTHROPIC_API_KEY", "sk-from-settings"),
            ("SKIFF", "0"),
            ("ANTHROPIC_BASE_URL", "https://user:pw@gateway.example"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned())),
        &config.bash_env_remove,
    );
    let (_dir, ctx) = workspace_with(ToolConfig { env, ..config });
    let out = run(
        r#"echo "[$SKIFF_TEST_FROM_SETTINGS] [${ANTHROPIC_API_KEY-unset}] [$SKIFF] [${ANTHROPIC_BASE_URL-unset}]""#,
        &ctx,
    )
    .await;
    assert_eq!(
        out.text_content(),
        "[from settings] [unset] [1] [unset]",
        "{out:?}"
    );
}

/// A command's `SHELL` is its environment's, else the shell that runs it (an absolute path):
/// bash started without one looks the user up in the password database every time.
#[tokio::test]
async fn a_command_s_shell_variable_is_its_environment_s_else_the_shell_running_it() {
    let (_dir, ctx) = workspace();
    let out = run(r#"printf '%s|%s' "$SHELL" "$BASH""#, &ctx).await;
    let text = out.text_content();
    let (shell, bash) = text.split_once('|').unwrap();
    match std::env::var("SHELL") {
        Ok(own) if !own.is_empty() => assert_eq!(shell, own, "{out:?}"),
        _ => {
            assert!(shell.starts_with('/'), "{out:?}");
            assert_eq!(shell, bash, "the shell running the command: {out:?}");
        }
    }
    // The settings' `env` names one: that one.
    let config = ToolConfig::default();
    let env = skiff_tools::ExtraEnv::new(
        [("SHELL".to_owned(), "/opt/fish/bin/fish".to_owned())],
        &config.bash_env_remove,
    );
    let (_dir, ctx) = workspace_with(ToolConfig { env, ..config });
    let out = run(r#"printf '%s' "$SHELL""#, &ctx).await;
    assert_eq!(out.text_content(), "/opt/fish/bin/fish", "{out:?}");
}

#[tokio::test]
async fn invalid_utf8_is_shown_lossily() {
    let (_dir, ctx) = workspace();
    let out = run(r"printf '\xff\xfe abc'", &ctx).await;
    assert!(!out.is_error);
    assert_eq!(out.text_content(), "\u{fffd}\u{fffd} abc");
}

#[tokio::test]
async fn long_output_keeps_head_and_tail() {
    let (_dir, ctx) = workspace();
    let out = run("seq 1 300000", &ctx).await;
    assert!(!out.is_error);
    let text = out.text_content();
    assert!(text.starts_with("1\n2\n3\n"), "{}", &text[..50]);
    assert!(text.ends_with("299999\n300000"));
    assert!(text.contains(" characters omitted] ..."));
    assert!(text.chars().count() < 30_000 + 100);
}

#[tokio::test]
async fn huge_output_is_bounded_and_counted() {
    let (_dir, ctx) = workspace();
    // 2,000,000 characters: more than head + tail buffers, so the middle is dropped while
    // reading; the marker still counts it exactly.
    let out = run(
        "head -c 2000000 /dev/zero | tr '\\0' a; echo; echo END",
        &ctx,
    )
    .await;
    assert!(!out.is_error);
    let text = out.text_content();
    assert!(text.starts_with(&"a".repeat(15_000)));
    assert!(text.ends_with("aaaa\nEND"));
    // Total 2,000,004 characters after trimming (a×2,000,000, \n, E, N, D), 30,000 kept.
    assert!(
        text.contains("\n\n... [1,970,004 characters omitted] ...\n\n"),
        "{}",
        &text[14_990..15_060]
    );
    assert!(text.chars().count() < 30_100);
}

#[tokio::test]
async fn timeout_kills_the_whole_group() {
    let (dir, ctx) = workspace();
    let started = Instant::now();
    let out = bash(
        json!({
            "command": "sleep 30 & echo $! > bg.pid; echo $$ > sh.pid; \
                        echo before; sh -c 'echo $$ > fg.pid; exec sleep 30'",
            "timeout": 500,
        }),
        &ctx,
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(out.is_error);
    assert_eq!(out.text_content(), "before\nCommand timed out after 500ms");
    assert_eq!(
        out.structured,
        Some(json!("Error: before\nCommand timed out after 500ms"))
    );
    for file in ["bg.pid", "sh.pid", "fg.pid"] {
        let pid = read_pid(&dir.path().join(file));
        assert!(gone(pid).await, "{file}: process {pid} survived");
    }
}

#[tokio::test]
async fn timeout_clamped_to_max_and_default_used() {
    let (_dir, ctx) = workspace_with(ToolConfig {
        bash_default_timeout: Duration::from_millis(300),
        bash_max_timeout: Duration::from_millis(400),
        ..ToolConfig::default()
    });
    let out = bash(json!({ "command": "sleep 30", "timeout": 600000 }), &ctx).await;
    assert_eq!(out.text_content(), "Command timed out after 400ms");
    let out = run("sleep 30", &ctx).await;
    assert_eq!(out.text_content(), "Command timed out after 300ms");
    let out = bash(json!({ "command": "sleep 30", "timeout": 0 }), &ctx).await;
    assert_eq!(out.text_content(), "Command timed out after 300ms");
    let out = bash(json!({ "command": "echo quick", "timeout": 5000.5 }), &ctx).await;
    assert_eq!(out.text_content(), "quick");
}

#[tokio::test]
async fn cancellation_interrupts_promptly() {
    let (dir, ctx) = workspace();
    let token = CancellationToken::new();
    let ctx = ctx.with_cancel(token.clone());
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        token.cancel();
    });
    let started = Instant::now();
    let out = run("echo $$ > sh.pid; echo working; sleep 30", &ctx).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(out.is_error);
    assert_eq!(out.text_content(), "working\n[Command interrupted]");
    let structured = out.structured.unwrap();
    assert_eq!(structured["interrupted"], true);
    assert_eq!(structured["stdout"], "working");
    assert!(gone(read_pid(&dir.path().join("sh.pid"))).await);
}

#[tokio::test]
async fn dropping_a_running_call_kills_its_processes() {
    let (dir, ctx) = workspace();
    let pid_file = dir.path().join("sh.pid");
    let child_file = dir.path().join("child.pid");
    let call = run(
        "echo $$ > sh.pid; sleep 30 & echo $! > child.pid; wait",
        &ctx,
    );
    // Poll the call until both processes exist, then drop it mid-run.
    let dropped = tokio::time::timeout(Duration::from_secs(10), async {
        tokio::pin!(call);
        loop {
            tokio::select! {
                _ = &mut call => panic!("the command ended by itself"),
                () = tokio::time::sleep(Duration::from_millis(50)) => {
                    if child_file.exists() && std::fs::metadata(&child_file).unwrap().len() > 0 {
                        return;
                    }
                }
            }
        }
    })
    .await;
    assert!(dropped.is_ok(), "the command never started");
    assert!(
        gone(read_pid(&pid_file)).await,
        "the shell outlived the dropped call"
    );
    assert!(
        gone(read_pid(&child_file)).await,
        "its child outlived the dropped call"
    );
}

#[tokio::test]
async fn already_cancelled_call_does_not_run() {
    let (dir, ctx) = workspace();
    let token = CancellationToken::new();
    token.cancel();
    let out = run("touch ran", &ctx.with_cancel(token)).await;
    assert!(out.is_error);
    assert_eq!(out.text_content(), "[Command interrupted]");
    assert_eq!(out.structured.unwrap()["interrupted"], true);
    assert!(!dir.path().join("ran").exists());
}

#[tokio::test]
async fn background_child_does_not_hold_the_call() {
    let (dir, ctx) = workspace();
    let started = Instant::now();
    let out = run("sleep 5 & echo $! > bg.pid; echo started", &ctx).await;
    assert!(started.elapsed() < Duration::from_secs(4));
    assert!(!out.is_error);
    assert_eq!(out.text_content(), "started");
    // Left running, as Claude Code leaves it; clean up here.
    let pid = read_pid(&dir.path().join("bg.pid"));
    assert!(alive(pid));
    let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
}

#[tokio::test]
async fn background_child_can_keep_writing_after_the_call() {
    let (dir, ctx) = workspace();
    // The background job writes to the (still drained) pipe after the call returned; it must
    // not die of SIGPIPE before writing its marker file.
    let out = run(
        "sh -c 'sleep 1; echo late; echo late >&2; echo ok > after.txt' & echo started",
        &ctx,
    )
    .await;
    assert_eq!(out.text_content(), "started");
    let marker = dir.path().join("after.txt");
    let mut found = false;
    for _ in 0..100 {
        if marker.exists() {
            found = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(found, "the background job did not finish");
}

#[tokio::test]
async fn invalid_input_is_a_validation_error() {
    let (_dir, ctx) = workspace();
    let out = bash(json!({ "command": 5 }), &ctx).await;
    assert!(out.is_error);
    let text = out.text_content();
    assert!(text.starts_with("<tool_use_error>InputValidationError: Bash failed"));
    assert!(text.contains("`command`"), "{text}");

    let out = bash(json!({ "command": "ls", "bogus": 1 }), &ctx).await;
    assert!(out.is_error);
    assert!(out.text_content().contains("InputValidationError"));
}

#[tokio::test]
async fn optional_fields_accepted() {
    let (_dir, ctx) = workspace();
    let out = bash(
        json!({
            "command": "echo ok",
            "description": "Print ok",
            "run_in_background": false,
            "dangerouslyDisableSandbox": true,
        }),
        &ctx,
    )
    .await;
    assert_eq!(out.text_content(), "ok");
}

#[tokio::test]
async fn missing_workspace_is_an_error_not_a_panic() {
    let (dir, ctx) = workspace();
    std::fs::remove_dir_all(dir.path()).unwrap();
    let out = run("echo hi", &ctx).await;
    assert!(out.is_error);
    assert!(
        out.text_content().contains("not available"),
        "{}",
        out.text_content()
    );
}

#[test]
fn concurrency_safety_follows_the_classifier() {
    let tool = Typed::new(BashTool);
    assert!(tool.is_concurrency_safe(&json!({ "command": "ls -la && git status" })));
    assert!(tool.is_concurrency_safe(&json!({ "command": "cat a | grep b 2>&1" })));
    assert!(!tool.is_concurrency_safe(&json!({ "command": "rm -rf target" })));
    assert!(!tool.is_concurrency_safe(&json!({ "command": "echo x > f" })));
    assert!(!tool.is_concurrency_safe(&json!({ "command": "ls", "run_in_background": true })));
}
