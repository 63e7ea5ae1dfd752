#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The servers as the session sees them ([`Catalog`]): instructions, prompts, resources and
//! lists that change, against skiff's own test server (`rich-server.js`) and the reference
//! `everything` server (installed by `.ci/run`).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use skiff_mcp::{Catalog, McpOptions, Scope, ServerConfig, Transport, connect_all};
use skiff_protocol::{ContentBlock, ToolResultContent};
use skiff_tools::{McpCatalog, McpPrompt, Tool, ToolContext};
use tokio_util::sync::CancellationToken;

/// node, or `None` (test skipped) where it is missing and not required.
fn node() -> Option<()> {
    let ok = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return Some(());
    }
    if std::env::var_os("SKIFF_REQUIRE_MCP_SERVERS").is_some() {
        panic!("node is needed for the MCP tests (.ci/run installs it)");
    }
    eprintln!("skipped: node is not installed");
    None
}

/// The npm servers' `.bin` directory; the tests using it are ignored unless asked for, and fail
/// when the servers are not installed.
fn npm_bin() -> PathBuf {
    let dir = std::env::var_os("SKIFF_MCP_TEST_SERVERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../target/mcp-servers/node_modules/.bin")
        });
    if dir.join("mcp-server-everything").exists() {
        return dir;
    }
    panic!(
        "the MCP reference servers are not installed in {} (.ci/run installs them)",
        dir.display()
    );
}

fn stdio(name: &str, command: &str, args: &[&str], env: &[(&str, &str)]) -> ServerConfig {
    ServerConfig {
        name: name.into(),
        scope: Scope::Project,
        transport: Transport::Stdio {
            command: command.into(),
            args: args.iter().map(|s| (*s).to_owned()).collect(),
            env: env
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect::<BTreeMap<_, _>>(),
        },
        timeout: None,
    }
}

fn rich(env: &[(&str, &str)]) -> ServerConfig {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rich-server.js");
    stdio("rich", "node", &[script.to_str().unwrap()], env)
}

async fn catalog(
    servers: Vec<ServerConfig>,
    dir: &std::path::Path,
    removed: &'static [&'static str],
) -> Catalog {
    let mut options = McpOptions::new(dir, |_| None);
    options.startup_timeout = Duration::from_secs(20);
    let connected = connect_all(servers, Vec::new(), options).await;
    for r in &connected.reports {
        assert!(r.status.error().is_none(), "{r:?}");
    }
    Catalog::new(&connected, Arc::new(move |t| removed.contains(&t)))
}

fn names(c: &Catalog) -> Vec<String> {
    c.tools().iter().map(|t| t.name().to_owned()).collect()
}

fn tool(c: &Catalog, name: &str) -> Arc<dyn Tool> {
    c.tools()
        .into_iter()
        .find(|t| t.name() == name)
        .unwrap_or_else(|| panic!("no tool {name} in {:?}", names(c)))
}

fn texts(blocks: &[ContentBlock]) -> Vec<String> {
    blocks
        .iter()
        .map(|b| match b {
            ContentBlock::Text(t) => t.text.clone(),
            other => format!("<{}>", other.type_name()),
        })
        .collect()
}

fn prompt(c: &Catalog, command: &str) -> McpPrompt {
    c.prompts()
        .into_iter()
        .find(|p| p.command == command)
        .unwrap_or_else(|| panic!("no prompt {command}"))
}

#[tokio::test]
async fn instructions_prompts_and_resources_of_a_server() {
    let Some(()) = node() else { return };
    let dir = tempfile::tempdir().unwrap();
    let c = catalog(vec![rich(&[])], dir.path(), &[]).await;
    let cancel = CancellationToken::new();

    let instructions = c.instructions();
    assert_eq!(instructions.len(), 1);
    assert_eq!(instructions[0].server, "rich");
    assert!(instructions[0].text.starts_with("Greet Ada by name."));

    let review = prompt(&c, "mcp__rich__review");
    assert_eq!(review.name, "review");
    assert_eq!(review.description, "Review someone's work");
    assert_eq!(review.usage(), "<name> [focus]");
    let got = c
        .get_prompt(&review, vec![("name".into(), "Ada".into())], &cancel)
        .await
        .unwrap();
    assert_eq!(texts(&got), ["Review the work of Ada."]);
    let got = c
        .get_prompt(
            &review,
            vec![
                ("name".into(), "Ada".into()),
                ("focus".into(), "tests".into()),
            ],
            &cancel,
        )
        .await
        .unwrap();
    assert_eq!(
        texts(&got),
        ["Review the work of Ada with a focus on tests."]
    );
    let err = c.get_prompt(&review, vec![], &cancel).await.unwrap_err();
    assert!(err.contains("Missing required argument: name"), "{err}");
    let attached = c
        .get_prompt(&prompt(&c, "mcp__rich__attached"), vec![], &cancel)
        .await
        .unwrap();
    assert_eq!(
        texts(&attached),
        [
            "Look at this:",
            "<image>",
            "[Resource from memo://notes]\nAda: ship the parser on Friday."
        ]
    );
    let err = c
        .get_prompt(&prompt(&c, "mcp__rich__broken"), vec![], &cancel)
        .await
        .unwrap_err();
    assert!(err.contains("the prompt broke"), "{err}");

    // Resources: the two tools, and mentions.
    assert!(c.has_resources("rich") && !c.has_resources("other"));
    let all = names(&c);
    assert!(
        all.contains(&"ListMcpResourcesTool".to_owned())
            && all.contains(&"ReadMcpResourceTool".to_owned()),
        "{all:?}"
    );
    let notes = c
        .read_resource("rich", "memo://notes", 1000, &cancel)
        .await
        .unwrap();
    assert_eq!(
        texts(&notes),
        [
            "<mcp-resource server=\"rich\" uri=\"memo://notes\">\nAda: ship the parser on Friday.\n</mcp-resource>"
        ]
    );
    let err = c
        .read_resource("rich", "memo://nope", 1000, &cancel)
        .await
        .unwrap_err();
    assert!(err.contains("Resource not found"), "{err}");
    let big = c
        .read_resource("rich", "memo://big", 50, &cancel)
        .await
        .unwrap();
    assert!(
        texts(&big)[0].contains("[99950 more characters not shown]"),
        "{:?}",
        texts(&big)
    );
}

#[tokio::test]
async fn the_resource_tools_list_and_read_in_claude_codes_shapes() {
    let Some(()) = node() else { return };
    let dir = tempfile::tempdir().unwrap();
    let c = catalog(vec![rich(&[])], dir.path(), &[]).await;
    let ctx = ToolContext::new(dir.path()).unwrap();

    let list = tool(&c, "ListMcpResourcesTool");
    assert!(list.is_read_only());
    let schema = list.input_schema();
    assert_eq!(
        schema["properties"],
        json!({"server": {"type": "string", "description": "Optional server name to filter resources by"}})
    );
    assert_eq!(schema["additionalProperties"], false);
    assert!(schema.get("required").is_none(), "{schema}");
    let out = list.call(json!({}), &ctx).await;
    assert!(!out.is_error, "{out:?}");
    let listed: Value = serde_json::from_str(&out.text_content()).unwrap();
    assert_eq!(
        listed[0],
        json!({"uri": "memo://notes", "name": "notes", "description": "Meeting notes",
            "mimeType": "text/plain", "server": "rich"})
    );
    assert_eq!(listed.as_array().unwrap().len(), 4);
    let out = list.call(json!({"server": "nope"}), &ctx).await;
    assert!(out.is_error);
    assert_eq!(
        out.text_content(),
        "<tool_use_error>Server \"nope\" not found. Available servers: rich</tool_use_error>"
    );

    let read = tool(&c, "ReadMcpResourceTool");
    assert_eq!(read.input_schema()["required"], json!(["server", "uri"]));
    let out = read
        .call(json!({"server": "rich", "uri": "memo://notes"}), &ctx)
        .await;
    // Compared as JSON: key order depends on serde_json's features in the build.
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&out.text_content()).unwrap(),
        json!({"contents":[{"mimeType":"text/plain","text":"Ada: ship the parser on Friday.","uri":"memo://notes"}]})
    );
    let out = read
        .call(json!({"server": "rich", "uri": "memo://logo.png"}), &ctx)
        .await;
    let ToolResultContent::Blocks(blocks) = &out.content else {
        panic!("{out:?}")
    };
    assert!(matches!(blocks[1], ContentBlock::Image(_)), "{blocks:?}");
    let out = read
        .call(json!({"server": "rich", "uri": "memo://data.bin"}), &ctx)
        .await;
    assert!(
        out.text_content()
            .contains("[binary content, 4 bytes, not shown]"),
        "{out:?}"
    );
    let out = read
        .call(json!({"server": "rich", "uri": "memo://missing"}), &ctx)
        .await;
    assert!(out.is_error && out.text_content().contains("Resource not found"));
    let out = read.call(json!({"server": "rich"}), &ctx).await;
    assert!(out.is_error && out.text_content().contains("InputValidationError"));
}

#[tokio::test]
async fn lists_follow_the_servers_notifications_and_only_real_changes_count() {
    let Some(()) = node() else { return };
    let dir = tempfile::tempdir().unwrap();
    let c = catalog(vec![rich(&[])], dir.path(), &["mcp__rich__lock"]).await;
    let ctx = ToolContext::new(dir.path()).unwrap();
    assert!(!names(&c).contains(&"mcp__rich__secret".to_owned()));
    assert!(
        !names(&c).contains(&"mcp__rich__lock".to_owned()),
        "removed by a rule"
    );

    // A notification that changes nothing: the same generation.
    let before = c.generation();
    let out = tool(&c, "mcp__rich__touch").call(json!({}), &ctx).await;
    assert_eq!(out.text_content(), "touched");
    c.refresh().await;
    assert_eq!(c.generation(), before);

    // The call answers after the server announced the new tool: the next refresh has it.
    let out = tool(&c, "mcp__rich__unlock").call(json!({}), &ctx).await;
    assert_eq!(out.text_content(), "unlocked");
    c.refresh().await;
    assert_ne!(c.generation(), before);
    let secret = tool(&c, "mcp__rich__secret");
    assert_eq!(
        secret.call(json!({}), &ctx).await.text_content(),
        "the secret is 42"
    );

    // Prompts and resources too.
    let g = c.generation();
    tool(&c, "mcp__rich__add_prompt")
        .call(json!({}), &ctx)
        .await;
    c.refresh().await;
    assert_ne!(c.generation(), g);
    assert!(c.prompts().iter().any(|p| p.command == "mcp__rich__later"));
    tool(&c, "mcp__rich__add_resource")
        .call(json!({}), &ctx)
        .await;
    c.refresh().await;
    let listed = tool(&c, "ListMcpResourcesTool")
        .call(json!({"server": "rich"}), &ctx)
        .await;
    assert!(listed.text_content().contains("memo://added"), "{listed:?}");
}

#[tokio::test]
async fn a_restarted_server_is_listed_again() {
    let Some(()) = node() else { return };
    let dir = tempfile::tempdir().unwrap();
    let c = catalog(vec![rich(&[])], dir.path(), &[]).await;
    let ctx = ToolContext::new(dir.path()).unwrap();
    tool(&c, "mcp__rich__unlock").call(json!({}), &ctx).await;
    c.refresh().await;
    let secret = tool(&c, "mcp__rich__secret");
    // Kill the server; the next call starts it again, without `secret`.
    c.servers()[0].shutdown().await;
    let out = tool(&c, "mcp__rich__env")
        .call(json!({"name": "NOPE"}), &ctx)
        .await;
    assert_eq!(out.text_content(), "NOPE is unset");
    c.refresh().await;
    assert!(!names(&c).contains(&"mcp__rich__secret".to_owned()));
    let out = secret.call(json!({}), &ctx).await;
    assert!(out.is_error, "{out:?}");
}

#[tokio::test]
#[ignore = "needs the MCP reference servers (.ci/run installs them into target/mcp-servers); run with -- --include-ignored"]
async fn the_everything_server_gives_instructions_prompts_and_changing_resources() {
    let bin = npm_bin();
    let dir = tempfile::tempdir().unwrap();
    let server = stdio(
        "everything",
        bin.join("mcp-server-everything").to_str().unwrap(),
        &[],
        &[],
    );
    let c = catalog(vec![server], dir.path(), &[]).await;
    let ctx = ToolContext::new(dir.path()).unwrap();
    let cancel = CancellationToken::new();

    let instructions = c.instructions();
    assert!(
        instructions[0]
            .text
            .contains("Server instructions are working!"),
        "{instructions:?}"
    );

    let args = prompt(&c, "mcp__everything__args-prompt");
    assert_eq!(args.usage(), "<city> [state]");
    let got = c
        .get_prompt(&args, vec![("city".into(), "Paris".into())], &cancel)
        .await
        .unwrap();
    assert_eq!(texts(&got), ["What's weather in Paris?"]);

    let listed = tool(&c, "ListMcpResourcesTool")
        .call(json!({"server": "everything"}), &ctx)
        .await;
    let listed: Value = serde_json::from_str(&listed.text_content()).unwrap();
    let doc = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "features.md")
        .unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(doc["server"], "everything");
    let uri = doc["uri"].as_str().unwrap();
    let read = c
        .read_resource("everything", uri, 100_000, &cancel)
        .await
        .unwrap();
    assert!(texts(&read)[0].contains("Everything Server - Features"));

    // A tool that registers a session resource: resources/list_changed, then the new entry.
    let out = tool(&c, "mcp__everything__gzip-file-as-resource")
        .call(
            json!({"name": "hello.gz", "data": "data:text/plain;base64,aGVsbG8=", "outputType": "resourceLink"}),
            &ctx,
        )
        .await;
    assert!(!out.is_error, "{out:?}");
    c.refresh().await;
    let listed = tool(&c, "ListMcpResourcesTool")
        .call(json!({}), &ctx)
        .await
        .text_content();
    assert!(
        listed.contains("demo://resource/session/hello.gz"),
        "{listed}"
    );
}
