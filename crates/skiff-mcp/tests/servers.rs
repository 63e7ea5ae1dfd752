#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! skiff's MCP client against real servers: the reference servers from npm (installed by
//! `.ci/run` into `target/mcp-servers`), small misbehaving servers, and an in-process
//! streamable-HTTP server built with rmcp's server side.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skiff_mcp::{
    Connected, McpOptions, McpTool, Scope, ServerConfig, ServerStatus, Transport, connect_all,
};
use skiff_protocol::{ContentBlock, ToolResultContent};
use skiff_tools::{Tool, ToolContext};

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

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

fn stdio(name: &str, command: &str, args: &[&str]) -> ServerConfig {
    ServerConfig {
        name: name.into(),
        scope: Scope::Project,
        transport: Transport::Stdio {
            command: command.into(),
            args: args.iter().map(|s| (*s).to_owned()).collect(),
            env: BTreeMap::new(),
        },
        timeout: None,
    }
}

fn options(dir: &std::path::Path) -> McpOptions {
    let mut o = McpOptions::new(dir, |_| None);
    o.startup_timeout = Duration::from_secs(20);
    o
}

fn tool(connected: &Connected, name: &str) -> Arc<dyn Tool> {
    McpTool::all(connected)
        .into_iter()
        .find(|t| t.name() == name)
        .unwrap_or_else(|| panic!("no tool {name}; reports: {:?}", connected.reports))
}

fn node_available() -> bool {
    std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[tokio::test]
#[ignore = "needs the MCP reference servers (.ci/run installs them into target/mcp-servers); run with -- --include-ignored"]
async fn the_everything_server_lists_and_calls_tools() {
    let bin = npm_bin();
    let dir = tempfile::tempdir().unwrap();
    let server = stdio(
        "everything",
        bin.join("mcp-server-everything").to_str().unwrap(),
        &[],
    );
    let connected = connect_all(vec![server], Vec::new(), options(dir.path())).await;
    let report = &connected.reports[0];
    assert!(
        matches!(report.status, ServerStatus::Connected { tools } if tools > 5),
        "{report:?}"
    );
    assert!(
        report
            .tools
            .contains(&"mcp__everything__get-sum".to_owned())
    );
    assert_eq!(
        report.server_info.as_ref().unwrap().0,
        "mcp-servers/everything"
    );

    let ctx = ToolContext::new(dir.path()).unwrap();
    let echo = tool(&connected, "mcp__everything__echo");
    assert!(echo.is_concurrency_safe(&json!({})), "readOnlyHint");
    assert!(!echo.is_read_only(), "hints never skip permissions");
    assert_eq!(echo.input_schema()["type"], "object");
    let out = echo.call(json!({"message": "hi there"}), &ctx).await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(out.text_content(), "Echo: hi there");

    let sum = tool(&connected, "mcp__everything__get-sum");
    let out = sum.call(json!({"a": 2, "b": 3}), &ctx).await;
    assert!(out.text_content().contains('5'), "{out:?}");

    let image = tool(&connected, "mcp__everything__get-tiny-image");
    let out = image.call(json!({}), &ctx).await;
    let ToolResultContent::Blocks(blocks) = &out.content else {
        panic!("{out:?}")
    };
    assert!(
        blocks.iter().any(|b| matches!(b, ContentBlock::Image(_))),
        "{blocks:?}"
    );

    // Invalid arguments come back as an error result, not a failure of the loop.
    let out = sum.call(json!({"a": "x"}), &ctx).await;
    assert!(out.is_error, "{out:?}");
    let out = sum.call(json!([1, 2]), &ctx).await;
    assert!(out.is_error && out.text_content().contains("expects an object"));

    // Resource links and embedded resources arrive as text.
    let links = tool(&connected, "mcp__everything__get-resource-links");
    let out = links.call(json!({"count": 2}), &ctx).await;
    assert!(out.text_content().contains("[Resource link:"), "{out:?}");
    let structured = tool(&connected, "mcp__everything__get-structured-content");
    let out = structured.call(json!({"location": "Chicago"}), &ctx).await;
    assert!(!out.is_error && !out.text_content().is_empty(), "{out:?}");
}

#[tokio::test]
#[ignore = "needs the MCP reference servers (.ci/run installs them into target/mcp-servers); run with -- --include-ignored"]
async fn the_filesystem_server_reads_a_workspace_file() {
    let bin = npm_bin();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("notes.txt"), "alpha\nbeta\n").unwrap();
    let server = stdio(
        "fs",
        bin.join("mcp-server-filesystem").to_str().unwrap(),
        &[root.to_str().unwrap()],
    );
    let connected = connect_all(vec![server], Vec::new(), options(&root)).await;
    let read = tool(&connected, "mcp__fs__read_text_file");
    let ctx = ToolContext::new(&root).unwrap();
    let out = read
        .call(
            json!({"path": root.join("notes.txt").to_str().unwrap()}),
            &ctx,
        )
        .await;
    assert!(!out.is_error, "{out:?}");
    assert!(out.text_content().contains("alpha\nbeta"), "{out:?}");
    // Outside the allowed directory: the server's error comes back as is_error.
    let out = read.call(json!({"path": "/etc/passwd"}), &ctx).await;
    assert!(out.is_error, "{out:?}");
}

#[tokio::test]
async fn a_bad_command_a_silent_server_and_a_bad_entry_fail_without_failing_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let mut silent = stdio("silent", "sleep", &["600"]);
    silent.timeout = Some(Duration::from_millis(700));
    let missing = stdio("missing", "/nonexistent/skiff-mcp-server", &[]);
    let exits = stdio("exits", "sh", &["-c", "echo boom >&2; exit 3"]);
    let problem = skiff_mcp::ConfigProblem {
        name: "broken".into(),
        scope: Scope::User,
        message: "an entry with a url needs a type".into(),
    };
    let started = Instant::now();
    let connected = connect_all(
        vec![silent, missing, exits],
        vec![problem],
        options(dir.path()),
    )
    .await;
    // All at once: the silent server's timeout bounds the whole startup.
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let status = |n: &str| {
        connected
            .reports
            .iter()
            .find(|r| r.name == n)
            .unwrap()
            .status
            .clone()
    };
    let silent = status("silent");
    assert!(
        silent.error().unwrap().contains("within 700 ms"),
        "{silent:?}"
    );
    let missing = status("missing");
    assert!(
        missing
            .error()
            .unwrap()
            .contains("cannot start `/nonexistent/skiff-mcp-server`"),
        "{missing:?}"
    );
    assert_eq!(status("exits").as_str(), "failed");
    assert_eq!(
        status("broken"),
        ServerStatus::Failed("an entry with a url needs a type".into())
    );
    assert!(connected.servers.is_empty());
}

#[tokio::test]
async fn a_server_that_dies_mid_call_is_an_error_result_then_restarted() {
    if !node_available() {
        eprintln!("skipped: node is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    let mut server = stdio("flaky", "node", &[&fixture("demo-server.js")]);
    if let Transport::Stdio { env, .. } = &mut server.transport {
        env.insert("STARTS_FILE".into(), starts.display().to_string());
    }
    let connected = connect_all(vec![server], Vec::new(), options(dir.path())).await;
    let ctx = ToolContext::new(dir.path()).unwrap();
    let ok = tool(&connected, "mcp__flaky__ok");
    let boom = tool(&connected, "mcp__flaky__boom");
    assert_eq!(ok.call(json!({}), &ctx).await.text_content(), "fine");
    let out = boom.call(json!({}), &ctx).await;
    assert!(out.is_error, "{out:?}");
    let text = out.text_content();
    assert!(
        text.contains("MCP server \"flaky\"") && text.contains("restarted"),
        "{text}"
    );
    // The next call starts the server again.
    let out = ok.call(json!({}), &ctx).await;
    assert_eq!(out.text_content(), "fine", "{out:?}");
    assert_eq!(std::fs::read_to_string(&starts).unwrap().lines().count(), 2);
}

#[tokio::test]
async fn an_interrupted_call_returns_at_once_and_tells_the_server() {
    if !node_available() {
        eprintln!("skipped: node is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let mut server = stdio("slow", "node", &[&fixture("demo-server.js")]);
    if let Transport::Stdio { env, .. } = &mut server.transport {
        env.insert("LOG_FILE".into(), log.display().to_string());
    }
    let connected = connect_all(vec![server], Vec::new(), options(dir.path())).await;
    let ctx = ToolContext::new(dir.path()).unwrap();
    let hang = tool(&connected, "mcp__slow__hang");
    let cancel = ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
    });
    let started = Instant::now();
    let out = hang.call(json!({}), &ctx).await;
    assert!(
        out.is_error && out.text_content().contains("Interrupted"),
        "{out:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(3));
    // The server hears about it.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.contains("notifications/cancelled") {
            break;
        }
        assert!(Instant::now() < deadline, "no cancellation seen: {text}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

mod http {
    use super::*;
    use rmcp::model::{
        CallToolRequestParams, CallToolResult, ListToolsResult, PaginatedRequestParams,
        ServerCapabilities,
    };
    use rmcp::service::RequestContext;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    use rmcp::{ErrorData, RoleServer, ServerHandler};

    #[derive(Clone)]
    struct Adder;

    impl ServerHandler for Adder {
        fn get_info(&self) -> rmcp::model::ServerConfig {
            let mut info = rmcp::model::ServerConfig::default();
            info.capabilities = ServerCapabilities::builder().enable_tools().build();
            info
        }

        async fn list_tools(
            &self,
            _request: Option<PaginatedRequestParams>,
            _context: RequestContext<RoleServer>,
        ) -> Result<ListToolsResult, ErrorData> {
            let schema = json!({
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"]
            });
            let Value::Object(schema) = schema else {
                unreachable!()
            };
            Ok(ListToolsResult::with_all_items(vec![
                rmcp::model::Tool::new("add", "Add two numbers", Arc::new(schema)),
            ]))
        }

        async fn call_tool(
            &self,
            request: CallToolRequestParams,
            _context: RequestContext<RoleServer>,
        ) -> Result<rmcp::model::CallToolResponse, ErrorData> {
            let args = request.arguments.unwrap_or_default();
            let n = |k: &str| args.get(k).and_then(Value::as_f64).unwrap_or(0.0);
            let sum = n("a") + n("b");
            Ok(rmcp::model::CallToolResponse::Complete(
                CallToolResult::success(vec![rmcp::model::ContentBlock::text(format!("{sum}"))]),
            ))
        }
    }

    /// A streamable-HTTP MCP server on 127.0.0.1 that requires `token` as a bearer token.
    async fn serve(token: &'static str) -> String {
        let service = StreamableHttpService::new(
            || Ok(Adder),
            Arc::new(LocalSessionManager::default()),
            StreamableHttpServerConfig::default(),
        );
        let app =
            axum::Router::new()
                .nest_service("/mcp", service)
                .layer(axum::middleware::from_fn(
                    move |req: axum::extract::Request, next: axum::middleware::Next| async move {
                        let ok = req
                            .headers()
                            .get("authorization")
                            .and_then(|v| v.to_str().ok())
                            == Some(&format!("Bearer {token}"));
                        if ok {
                            next.run(req).await
                        } else {
                            axum::response::IntoResponse::into_response((
                                axum::http::StatusCode::UNAUTHORIZED,
                                [("www-authenticate", "Bearer")],
                            ))
                        }
                    },
                ));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        format!("http://{addr}/mcp")
    }

    fn http(name: &str, url: &str, auth: Option<&str>) -> ServerConfig {
        let mut headers = BTreeMap::new();
        if let Some(a) = auth {
            headers.insert("Authorization".to_owned(), a.to_owned());
        }
        ServerConfig {
            name: name.into(),
            scope: Scope::Dynamic,
            transport: Transport::Http {
                url: url.into(),
                headers,
            },
            timeout: Some(Duration::from_secs(10)),
        }
    }

    #[tokio::test]
    async fn a_streamable_http_server_with_headers_and_one_without_authorization() {
        let url = serve("s3cret").await;
        let dir = tempfile::tempdir().unwrap();
        let connected = connect_all(
            vec![
                http("calc", &url, Some("Bearer s3cret")),
                http("locked", &url, None),
            ],
            Vec::new(),
            options(dir.path()),
        )
        .await;
        let calc = connected.reports.iter().find(|r| r.name == "calc").unwrap();
        assert_eq!(
            calc.status,
            ServerStatus::Connected { tools: 1 },
            "{calc:?}"
        );
        let locked = connected
            .reports
            .iter()
            .find(|r| r.name == "locked")
            .unwrap();
        assert_eq!(locked.status.as_str(), "needs-auth", "{locked:?}");

        let add = tool(&connected, "mcp__calc__add");
        let ctx = ToolContext::new(dir.path()).unwrap();
        let out = add.call(json!({"a": 2, "b": 3}), &ctx).await;
        assert_eq!(out.text_content(), "5", "{out:?}");
        assert_eq!(out.structured, Some(json!([{"type": "text", "text": "5"}])));
    }

    #[tokio::test]
    async fn an_sse_entry_is_tried_as_streamable_http_and_a_dead_url_fails_clearly() {
        let url = serve("t").await;
        let dir = tempfile::tempdir().unwrap();
        let mut sse = http("legacy", &url, Some("Bearer t"));
        sse.transport = match sse.transport {
            Transport::Http { url, headers } => Transport::Sse { url, headers },
            t => t,
        };
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let dead_url = format!("http://{}/mcp", listener.local_addr().unwrap());
        drop(listener);
        let mut dead = http("dead", &dead_url, None);
        dead.transport = match dead.transport {
            Transport::Http { url, headers } => Transport::Sse { url, headers },
            t => t,
        };
        dead.timeout = Some(Duration::from_secs(3));
        let connected = connect_all(vec![sse, dead], Vec::new(), options(dir.path())).await;
        let legacy = connected
            .reports
            .iter()
            .find(|r| r.name == "legacy")
            .unwrap();
        assert_eq!(
            legacy.status,
            ServerStatus::Connected { tools: 1 },
            "{legacy:?}"
        );
        let dead = connected.reports.iter().find(|r| r.name == "dead").unwrap();
        let err = dead.status.error().unwrap();
        assert!(
            err.contains("SSE servers are not supported") || err.contains("within"),
            "{err}"
        );
    }
}

#[tokio::test]
async fn mcp_tool_timeout_bounds_a_call() {
    if !node_available() {
        eprintln!("skipped: node is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = stdio("slow", "node", &[&fixture("demo-server.js")]);
    let mut opts = options(dir.path());
    opts.tool_timeout = Some(Duration::from_millis(300));
    let connected = connect_all(vec![server], Vec::new(), opts).await;
    let ctx = ToolContext::new(dir.path()).unwrap();
    let started = Instant::now();
    let out = tool(&connected, "mcp__slow__hang")
        .call(json!({}), &ctx)
        .await;
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(out.is_error, "{out:?}");
    assert!(
        out.text_content()
            .contains("within 300 ms (MCP_TOOL_TIMEOUT)"),
        "{}",
        out.text_content()
    );
    // The server is still usable afterwards.
    let out = tool(&connected, "mcp__slow__add")
        .call(json!({"a": 1, "b": 2}), &ctx)
        .await;
    assert_eq!(out.text_content(), "3");
}
