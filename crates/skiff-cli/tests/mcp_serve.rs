//! `skiff mcp serve` driven by real MCP clients: rmcp's client (tools listed with their
//! schemas and hints, calls answered, the session's permission rules, mode, trust and
//! sandbox applied, what would need approval refused with a message), and the official MCP
//! inspector's CLI mode (`.ci/run` installs it, pinned, and runs that test, ignored by a plain
//! `cargo test`, with `-- --include-ignored`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

/// The tools `skiff mcp serve` offers.
const SERVED: &[&str] = &[
    "Bash",
    "Edit",
    "Glob",
    "Grep",
    "LS",
    "NotebookEdit",
    "Read",
    "TaskOutput",
    "TaskStop",
    "WebFetch",
    "Write",
];

struct Dirs {
    home: tempfile::TempDir,
    ws: tempfile::TempDir,
}

impl Dirs {
    fn new() -> Self {
        let d = Self {
            home: tempfile::tempdir().unwrap(),
            ws: tempfile::tempdir().unwrap(),
        };
        std::fs::write(d.ws().join("note.txt"), "hello from the workspace\n").unwrap();
        d
    }

    fn ws(&self) -> PathBuf {
        std::fs::canonicalize(self.ws.path()).unwrap()
    }

    fn command(&self, flags: &[&str]) -> tokio::process::Command {
        let mut c = tokio::process::Command::new(env!("CARGO_BIN_EXE_skiff"));
        c.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.home.path())
            .env("SKIFF_HOME", self.home.path().join(".skiff"))
            .current_dir(self.ws())
            .args(["mcp", "serve"])
            .args(flags);
        c
    }

    async fn client(&self, flags: &[&str]) -> RunningService<RoleClient, ()> {
        let transport = TokioChildProcess::new(self.command(flags)).unwrap();
        ().serve(transport).await.unwrap()
    }
}

async fn call(client: &RunningService<RoleClient, ()>, tool: &str, args: Value) -> CallToolResult {
    let Value::Object(args) = args else { panic!() };
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args))
        .await
        .unwrap()
}

fn text(r: &CallToolResult) -> String {
    serde_json::to_value(&r.content)
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn tools_are_listed_and_called_under_the_sessions_rules() {
    let d = Dirs::new();
    let client = d.client(&[]).await;
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "skiff");
    assert!(
        info.instructions
            .as_deref()
            .unwrap()
            .contains(&d.ws().display().to_string())
    );

    let tools = client.list_all_tools().await.unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort_unstable();
    assert_eq!(names, SERVED);
    let read = tools.iter().find(|t| t.name == "Read").unwrap();
    assert_eq!(read.input_schema["required"], json!(["file_path"]));
    assert_eq!(
        read.annotations.as_ref().unwrap().read_only_hint,
        Some(true)
    );
    let write = tools.iter().find(|t| t.name == "Write").unwrap();
    assert_eq!(
        write.annotations.as_ref().unwrap().read_only_hint,
        Some(false)
    );

    // Reading in the workspace needs no approval.
    let note = d.ws().join("note.txt");
    let r = call(&client, "Read", json!({"file_path": note})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    assert!(text(&r).contains("hello from the workspace"));

    // Writing would ask in the default mode: refused, saying what to allow.
    let made = d.ws().join("made.txt");
    let r = call(&client, "Write", json!({"file_path": made, "content": "x"})).await;
    assert_eq!(r.is_error, Some(true));
    let msg = text(&r);
    assert!(msg.contains("cannot ask anyone for approval"), "{msg}");
    assert!(msg.contains("--permission-mode acceptEdits"), "{msg}");
    assert!(!made.exists());

    // Bad input is the tool's own error; an unknown tool too.
    let r = call(&client, "Read", json!({})).await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("file_path"), "{}", text(&r));
    let r = call(&client, "Task", json!({"prompt": "x"})).await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("No such tool"), "{}", text(&r));

    // Grep and Glob walk the workspace.
    let r = call(
        &client,
        "Grep",
        json!({"pattern": "hello", "output_mode": "files_with_matches"}),
    )
    .await;
    assert!(text(&r).contains("note.txt"), "{}", text(&r));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn the_mode_and_the_rules_decide() {
    let d = Dirs::new();
    let client = d
        .client(&[
            "--permission-mode",
            "acceptEdits",
            "--disallowedTools",
            "Bash",
        ])
        .await;
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(!names.contains(&"Bash".to_owned()), "{names:?}");
    let made = d.ws().join("made.txt");
    let r = call(
        &client,
        "Write",
        json!({"file_path": made, "content": "written over MCP"}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(std::fs::read_to_string(&made).unwrap(), "written over MCP");
    let r = call(
        &client,
        "Edit",
        json!({"file_path": made, "old_string": "over", "new_string": "through"}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(
        std::fs::read_to_string(&made).unwrap(),
        "written through MCP"
    );
    // Outside the workspace still asks, so it is refused.
    let outside = d.home.path().join("outside.txt");
    let r = call(
        &client,
        "Write",
        json!({"file_path": outside, "content": "x"}),
    )
    .await;
    assert_eq!(r.is_error, Some(true));
    assert!(!outside.exists());
    client.cancel().await.unwrap();

    // A deny rule of the settings.
    let secret = d.ws().join("secret.txt");
    std::fs::write(&secret, "s3cret").unwrap();
    let client = d
        .client(&[
            "--settings",
            r#"{"permissions": {"deny": ["Read(./secret.txt)"]}}"#,
        ])
        .await;
    let r = call(&client, "Read", json!({"file_path": secret})).await;
    assert_eq!(r.is_error, Some(true));
    assert!(!text(&r).contains("s3cret"));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_untrusted_workspace_cannot_allow_itself_more() {
    let d = Dirs::new();
    std::fs::create_dir_all(d.ws().join(".claude")).unwrap();
    std::fs::write(
        d.ws().join(".claude/settings.json"),
        r#"{"permissions": {"allow": ["Write"]}}"#,
    )
    .unwrap();
    let made = d.ws().join("made.txt");
    let client = d.client(&[]).await;
    let r = call(&client, "Write", json!({"file_path": made, "content": "x"})).await;
    assert_eq!(r.is_error, Some(true), "{}", text(&r));
    assert!(!made.exists());
    client.cancel().await.unwrap();
    let client = d.client(&["--trust"]).await;
    let r = call(&client, "Write", json!({"file_path": made, "content": "x"})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn bash_runs_in_the_workspace() {
    let d = Dirs::new();
    let client = d.client(&["--permission-mode", "acceptEdits"]).await;
    let r = call(&client, "Bash", json!({"command": "cat note.txt && pwd"})).await;
    let out = text(&r);
    assert!(out.contains("hello from the workspace"), "{out}");
    assert!(out.contains(&d.ws().display().to_string()), "{out}");
    client.cancel().await.unwrap();
}

/// The MCP inspector's CLI (`npx @modelcontextprotocol/inspector --cli`), from the pinned
/// install `.ci/run` makes in target/mcp-servers; the test using it is ignored unless asked for,
/// and fails when it is missing.
fn inspector() -> PathBuf {
    let dir = std::env::var_os("SKIFF_MCP_TEST_SERVERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/mcp-servers/node_modules/.bin")
        });
    let bin = dir.join("mcp-inspector");
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if bin.exists() && node {
        return bin;
    }
    panic!(
        "the MCP inspector is needed at {} (and node): .ci/run installs it",
        bin.display()
    );
}

fn inspect(bin: &Path, d: &Dirs, method: &[&str]) -> Value {
    let out = Command::new(bin)
        .env("HOME", d.home.path())
        .env("SKIFF_HOME", d.home.path().join(".skiff"))
        .current_dir(d.ws())
        .arg("--cli")
        .arg(env!("CARGO_BIN_EXE_skiff"))
        .args(["mcp", "serve", "--cwd"])
        .arg(d.ws())
        .args(method)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stdout));
    })
}

#[test]
#[ignore = "needs the MCP inspector (.ci/run installs it into target/mcp-servers); run with -- --include-ignored"]
fn the_official_inspector_lists_and_calls_the_tools() {
    let bin = inspector();
    let d = Dirs::new();
    let listed = inspect(&bin, &d, &["--method", "tools/list"]);
    let mut names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, SERVED);
    let note = d.ws().join("note.txt");
    let called = inspect(
        &bin,
        &d,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "Read",
            "--tool-arg",
            &format!("file_path={}", note.display()),
        ],
    );
    assert_eq!(called["isError"], false, "{called}");
    assert!(
        called["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("hello from the workspace")
    );
}
