#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Background commands: `Bash` with `run_in_background`, `TaskOutput`, `TaskStop`, their old
//! names, and the end of the session killing what still runs.

use std::path::Path;
use std::time::Duration;

use nix::sys::signal::kill;
use nix::unistd::Pid;
use serde_json::{Value, json};
use skiff_tools::{ToolContext, ToolOutput, ToolRegistry};
use tempfile::TempDir;

fn workspace() -> (TempDir, ToolContext, ToolRegistry) {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path()).unwrap();
    (dir, ctx, ToolRegistry::with_builtins())
}

async fn call(reg: &ToolRegistry, name: &str, input: Value, ctx: &ToolContext) -> ToolOutput {
    reg.call(name, input, ctx).await
}

/// The id from Claude Code's background text.
fn task_id(out: &ToolOutput) -> String {
    let text = out.text_content();
    let rest = text
        .strip_prefix("Command running in background with ID: ")
        .unwrap_or_else(|| panic!("unexpected text: {text}"));
    rest.split('.').next().unwrap().to_owned()
}

fn alive(pid: i32) -> bool {
    if kill(Pid::from_raw(pid), None).is_err() {
        return false;
    }
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(") ")
            .is_none_or(|(_, rest)| !rest.starts_with('Z'))
    })
}

async fn wait_for_file(path: &Path) -> String {
    for _ in 0..100 {
        if let Ok(text) = std::fs::read_to_string(path)
            && text.ends_with('\n')
        {
            return text;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{} never appeared", path.display());
}

async fn gone(pid: i32) -> bool {
    for _ in 0..100 {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

#[tokio::test]
async fn background_command_returns_at_once_and_output_is_read_later() {
    let (dir, ctx, reg) = workspace();
    let out = call(
        &reg,
        "Bash",
        json!({"command": "echo first; sleep 0.3; echo second >&2; exit 3", "run_in_background": true, "description": "two lines"}),
        &ctx,
    )
    .await;
    assert!(!out.is_error, "{}", out.text_content());
    let id = task_id(&out);
    assert!(out.text_content().contains("Output is being written to: "));
    assert_eq!(out.structured.as_ref().unwrap()["backgroundTaskId"], id);

    let waited = call(&reg, "TaskOutput", json!({"task_id": id}), &ctx).await;
    let text = waited.text_content();
    assert!(!waited.is_error);
    assert!(
        text.starts_with("<retrieval_status>success</retrieval_status>"),
        "{text}"
    );
    assert!(text.contains(&format!("<task_id>{id}</task_id>")));
    assert!(text.contains("<task_type>local_bash</task_type>"));
    assert!(text.contains("<status>failed</status>"), "{text}");
    assert!(text.contains("<exit_code>3</exit_code>"));
    assert!(
        text.contains("<output>\nfirst\nsecond\n</output>"),
        "{text}"
    );

    // Only new output the second time; the old name still works.
    let again = call(
        &reg,
        "BashOutput",
        json!({"bash_id": id, "block": false}),
        &ctx,
    )
    .await;
    assert!(!again.is_error, "{}", again.text_content());
    assert!(!again.text_content().contains("<output>"));
    // It ran in the workspace.
    drop(dir);
}

#[tokio::test]
async fn not_ready_timeout_and_stop() {
    let (dir, ctx, reg) = workspace();
    let pidfile = dir.path().join("pid");
    let out = call(
        &reg,
        "Bash",
        json!({"command": "echo $$ > pid; echo started; exec sleep 30", "run_in_background": true}),
        &ctx,
    )
    .await;
    let id = task_id(&out);
    let pid: i32 = wait_for_file(&pidfile).await.trim().parse().unwrap();

    let peek = call(
        &reg,
        "TaskOutput",
        json!({"task_id": id, "block": false}),
        &ctx,
    )
    .await;
    let text = peek.text_content();
    assert!(
        text.contains("<retrieval_status>not_ready</retrieval_status>"),
        "{text}"
    );
    assert!(text.contains("<status>running</status>"));
    assert!(!text.contains("<exit_code>"));

    let waited = call(
        &reg,
        "TaskOutput",
        json!({"task_id": id, "timeout": 100}),
        &ctx,
    )
    .await;
    assert!(
        waited
            .text_content()
            .contains("<retrieval_status>timeout</retrieval_status>")
    );

    let stopped = call(&reg, "TaskStop", json!({"task_id": id}), &ctx).await;
    assert!(!stopped.is_error, "{}", stopped.text_content());
    assert_eq!(
        stopped.text_content(),
        format!("Successfully stopped task: {id} (echo $$ > pid; echo started; exec sleep 30)")
    );
    assert!(gone(pid).await, "the command survived TaskStop");
    let after = call(&reg, "TaskOutput", json!({"task_id": id}), &ctx).await;
    assert!(after.text_content().contains("<status>killed</status>"));

    // Stopping twice, through the old name, is a clear error.
    let twice = call(&reg, "KillShell", json!({"shell_id": id}), &ctx).await;
    assert!(twice.is_error);
    assert!(
        twice
            .text_content()
            .contains("is not running (status: killed)")
    );
}

#[tokio::test]
async fn unknown_ids_are_errors() {
    let (_dir, ctx, reg) = workspace();
    for (tool, input) in [
        ("TaskOutput", json!({"task_id": "nope"})),
        ("TaskStop", json!({"task_id": "nope"})),
    ] {
        let out = call(&reg, tool, input, &ctx).await;
        assert!(out.is_error);
        assert_eq!(
            out.text_content(),
            "<tool_use_error>No task found with ID: nope</tool_use_error>"
        );
    }
    let out = call(&reg, "TaskStop", json!({}), &ctx).await;
    assert!(out.is_error);
}

#[tokio::test]
async fn the_end_of_the_session_kills_background_groups() {
    let (dir, ctx, reg) = workspace();
    // The shell starts a grandchild in the same group, then waits.
    call(
        &reg,
        "Bash",
        json!({"command": "sleep 30 & echo $! > pid; wait", "run_in_background": true}),
        &ctx,
    )
    .await;
    let pid: i32 = wait_for_file(&dir.path().join("pid"))
        .await
        .trim()
        .parse()
        .unwrap();
    assert!(alive(pid));
    assert_eq!(ctx.background.list().len(), 1);
    drop(reg);
    drop(ctx);
    assert!(gone(pid).await, "a background process outlived its session");
}

#[tokio::test]
async fn ended_commands_are_reported_once() {
    let (_dir, ctx, reg) = workspace();
    call(
        &reg,
        "Bash",
        json!({"command": "true", "run_in_background": true}),
        &ctx,
    )
    .await;
    let shell = ctx.background.list().pop().unwrap();
    shell
        .wait(
            Duration::from_secs(10),
            &tokio_util::sync::CancellationToken::new(),
        )
        .await;
    assert_eq!(ctx.background.take_ended().len(), 1);
    assert!(ctx.background.take_ended().is_empty());
}

#[test]
fn old_names_are_not_offered_to_the_model() {
    let reg = ToolRegistry::with_builtins();
    let names = reg.names();
    assert!(names.contains(&"TaskOutput".to_owned()));
    assert!(names.contains(&"TaskStop".to_owned()));
    assert!(!names.contains(&"BashOutput".to_owned()));
    assert!(reg.get("BashOutput").is_some());
    assert!(reg.definitions().iter().all(|d| d.name != "KillShell"));
}
