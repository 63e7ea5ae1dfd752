//! WebFetch against a small HTTP server on 127.0.0.1: HTML to Markdown, the small model's
//! answer (and what happens without one), the address guard, redirects, the cache, paging,
//! and the failures a page can cause (time-outs, binary bodies, oversized bodies, errors).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use skiff_tools::web_fetch::{WebFetchConfig, WebFetchTool};
use skiff_tools::{SideModel, SideModelError, Tool, ToolConfig, ToolContext, ToolOutput, Typed};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// What the server answers on a path.
#[derive(Clone)]
enum Reply {
    /// Status, headers, body (with a Content-Length).
    Full(u16, Vec<(&'static str, String)>, Vec<u8>),
    /// 200 with this content type and body, no Content-Length (ends at close).
    Unsized(&'static str, Vec<u8>),
    /// Never answers.
    Hang,
}

fn html(body: &str) -> Reply {
    Reply::Full(
        200,
        vec![("Content-Type", "text/html; charset=utf-8".into())],
        body.as_bytes().to_vec(),
    )
}

fn redirect(code: u16, to: &str) -> Reply {
    Reply::Full(code, vec![("Location", to.to_owned())], Vec::new())
}

/// A one-connection-at-a-time HTTP/1.1 server that counts requests per path.
struct Server {
    port: u16,
    hits: Arc<Mutex<HashMap<String, usize>>>,
}

impl Server {
    async fn start(routes: Vec<(&'static str, Reply)>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let hits: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
        let routes: Arc<HashMap<&'static str, Reply>> = Arc::new(routes.into_iter().collect());
        let counter = Arc::clone(&hits);
        tokio::spawn(async move {
            loop {
                let Ok((mut sock, _)) = listener.accept().await else {
                    return;
                };
                let routes = Arc::clone(&routes);
                let counter = Arc::clone(&counter);
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut buf = [0u8; 1024];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match sock.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    let line = String::from_utf8_lossy(&head)
                        .lines()
                        .next()
                        .unwrap_or("")
                        .to_owned();
                    let path = line.split(' ').nth(1).unwrap_or("/").to_owned();
                    *counter.lock().unwrap().entry(path.clone()).or_default() += 1;
                    let reply = routes.get(path.as_str()).cloned().unwrap_or(Reply::Full(
                        404,
                        Vec::new(),
                        b"nope".to_vec(),
                    ));
                    let out = match reply {
                        Reply::Hang => {
                            tokio::time::sleep(Duration::from_secs(3600)).await;
                            return;
                        }
                        Reply::Full(code, headers, body) => {
                            let mut h = format!(
                                "HTTP/1.1 {code} X\r\nContent-Length: {}\r\nConnection: close\r\n",
                                body.len()
                            );
                            for (k, v) in headers {
                                h.push_str(&format!("{k}: {v}\r\n"));
                            }
                            h.push_str("\r\n");
                            [h.into_bytes(), body].concat()
                        }
                        Reply::Unsized(ct, body) => {
                            let h = format!(
                                "HTTP/1.1 200 OK\r\nContent-Type: {ct}\r\nConnection: close\r\n\r\n"
                            );
                            [h.into_bytes(), body].concat()
                        }
                    };
                    let _ = sock.write_all(&out).await;
                    let _ = sock.shutdown().await;
                });
            }
        });
        Self { port, hits }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn hits(&self, path: &str) -> usize {
        self.hits.lock().unwrap().get(path).copied().unwrap_or(0)
    }
}

/// A small model that answers with a fixed text and keeps what it was asked.
#[derive(Debug, Default)]
struct FakeModel {
    asked: Mutex<Vec<String>>,
    fail: bool,
}

#[async_trait]
impl SideModel for FakeModel {
    async fn answer(
        &self,
        system: &str,
        user: &str,
        _: CancellationToken,
    ) -> Result<String, SideModelError> {
        assert_eq!(system, "");
        self.asked.lock().unwrap().push(user.to_owned());
        if self.fail {
            return Err(SideModelError::Failed("model not found".into()));
        }
        Ok("The page says hello.".into())
    }
}

fn context(
    config: WebFetchConfig,
    model: Option<Arc<FakeModel>>,
) -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = ToolContext::with_dirs(
        dir.path(),
        &[],
        ToolConfig {
            web_fetch: config,
            ..ToolConfig::default()
        },
    )
    .unwrap();
    ctx.side_model = model.map(|m| m as Arc<dyn SideModel>);
    (dir, ctx)
}

/// Loopback allowed, as a `WebFetch(domain:127.0.0.1)` rule would.
fn local() -> WebFetchConfig {
    WebFetchConfig {
        allow_private_hosts: vec!["127.0.0.1".into(), "localhost".into()],
        ..WebFetchConfig::default()
    }
}

async fn fetch(ctx: &ToolContext, input: Value) -> ToolOutput {
    Typed::new(WebFetchTool).call(input, ctx).await
}

const PAGE: &str = "<html><head><title>Greeting</title><script>steal()</script></head>\
    <body><h1>Hello</h1><p>The answer is <b>42</b>.</p></body></html>";

#[tokio::test]
async fn a_page_is_converted_and_the_small_model_answers_the_prompt_over_it() {
    let server = Server::start(vec![("/page", html(PAGE))]).await;
    let model = Arc::new(FakeModel::default());
    let (_d, ctx) = context(local(), Some(Arc::clone(&model)));
    let out = fetch(
        &ctx,
        json!({"url": server.url("/page"), "prompt": "What is the answer?"}),
    )
    .await;
    assert!(!out.is_error, "{}", out.text_content());
    assert_eq!(out.text_content(), "The page says hello.");
    let asked = model.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert!(
        asked[0].contains("Web page content:\n---\n# Greeting\n\n# Hello\n\nThe answer is **42**."),
        "{}",
        asked[0]
    );
    assert!(asked[0].contains("What is the answer?"));
    assert!(!asked[0].contains("steal"));
    let s = out.structured.unwrap();
    assert_eq!(s["code"], 200);
    assert_eq!(s["codeText"], "OK");
    assert_eq!(s["bytes"], PAGE.len());
    assert_eq!(s["url"], server.url("/page"));
    assert_eq!(s["result"], "The page says hello.");
}

#[tokio::test]
async fn without_a_small_model_the_markdown_itself_comes_back_a_part_at_a_time() {
    let text = "word ".repeat(40); // 200 characters
    let server = Server::start(vec![(
        "/long",
        Reply::Full(
            200,
            vec![("Content-Type", "text/plain".into())],
            text.clone().into_bytes(),
        ),
    )])
    .await;
    let config = WebFetchConfig {
        raw_chars: 120,
        ..local()
    };
    let (_d, ctx) = context(config, None);
    let url = server.url("/long");
    let first = fetch(&ctx, json!({"url": url, "prompt": "x"})).await;
    let t = first.text_content();
    assert!(!first.is_error, "{t}");
    assert!(
        t.starts_with("[WebFetch note: no small model is available"),
        "{t}"
    );
    assert!(t.contains(&text[..120]));
    assert!(!t.contains(&text[..121]));
    assert!(
        t.ends_with("this page's text is 200 characters long and this result shows characters 0 to 120; the final 80 were not read — to read on, call WebFetch again with the same url and offset: 120.]"),
        "{t}"
    );
    let second = fetch(&ctx, json!({"url": url, "prompt": "x", "offset": 120})).await;
    let t = second.text_content();
    assert!(t.ends_with(&text[120..]), "{t}");
    assert!(!t.contains("to read on"), "{t}");
    let past = fetch(&ctx, json!({"url": url, "prompt": "x", "offset": 500})).await;
    assert_eq!(
        past.text_content(),
        "Nothing left to read from offset 500: this page's text is 200 characters long."
    );
    assert_eq!(
        server.hits("/long"),
        1,
        "the later calls came from the cache"
    );
}

#[tokio::test]
async fn a_failing_small_model_falls_back_to_the_page_text() {
    let server = Server::start(vec![("/p", html(PAGE))]).await;
    let model = Arc::new(FakeModel {
        fail: true,
        ..FakeModel::default()
    });
    let (_d, ctx) = context(local(), Some(model));
    let out = fetch(&ctx, json!({"url": server.url("/p"), "prompt": "x"})).await;
    let t = out.text_content();
    assert!(!out.is_error);
    assert!(
        t.contains("the small model could not answer the prompt (model not found)"),
        "{t}"
    );
    assert!(t.contains("The answer is **42**."), "{t}");
}

#[tokio::test]
async fn loopback_is_refused_unless_the_host_is_allowed() {
    let server = Server::start(vec![("/secret", html("<p>internal</p>"))]).await;
    let (_d, ctx) = context(WebFetchConfig::default(), None);
    for url in [
        server.url("/secret"),
        format!("http://[::1]:{}/secret", server.port),
        format!("http://2130706433:{}/secret", server.port),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
    ] {
        let out = fetch(&ctx, json!({"url": url, "prompt": "x"})).await;
        let t = out.text_content();
        assert!(out.is_error, "{url}: {t}");
        assert!(t.contains("non-public addresses are refused"), "{t}");
        assert!(t.contains("WebFetch(domain:"), "{t}");
    }
    let out = fetch(
        &ctx,
        json!({"url": format!("http://localhost:{}/secret", server.port), "prompt": "x"}),
    )
    .await;
    assert!(
        out.is_error && out.text_content().contains("without a dot"),
        "{}",
        out.text_content()
    );
    assert_eq!(server.hits("/secret"), 0, "nothing reached the server");
    // Allowed by name: fetched over plain http.
    let (_d, ok) = context(local(), None);
    let out = fetch(&ok, json!({"url": server.url("/secret"), "prompt": "x"})).await;
    assert!(!out.is_error, "{}", out.text_content());
    assert!(out.text_content().contains("internal"));
}

#[tokio::test]
async fn same_host_redirects_are_followed_and_cross_host_ones_reported() {
    let server = Server::start(vec![
        ("/old", redirect(301, "/new")),
        ("/new", html("<p>moved here</p>")),
        ("/away", redirect(302, "https://docs.example.com/guide")),
        ("/loop", redirect(307, "/loop")),
    ])
    .await;
    let config = WebFetchConfig {
        max_redirects: 3,
        ..local()
    };
    let (_d, ctx) = context(config, None);
    let out = fetch(&ctx, json!({"url": server.url("/old"), "prompt": "x"})).await;
    assert!(
        out.text_content().contains("moved here"),
        "{}",
        out.text_content()
    );
    let out = fetch(
        &ctx,
        json!({"url": server.url("/away"), "prompt": "Find the install steps", "offset": 7}),
    )
    .await;
    assert!(!out.is_error);
    assert_eq!(
        out.text_content(),
        format!(
            "REDIRECT DETECTED: The URL redirects to a different host.\n\nOriginal URL: {}\n\
             Redirect URL: https://docs.example.com/guide\nStatus: 302 Found\n\nTo complete your \
             request, I need to fetch content from the redirected URL. Please use WebFetch again \
             with these parameters:\n- url: \"https://docs.example.com/guide\"\n- prompt: \"Find \
             the install steps\"\n- offset: 7",
            server.url("/away")
        )
    );
    assert_eq!(out.structured.unwrap()["code"], 302);
    let out = fetch(&ctx, json!({"url": server.url("/loop"), "prompt": "x"})).await;
    assert!(out.is_error);
    assert_eq!(out.text_content(), "Too many redirects (exceeded 3)");
    assert_eq!(server.hits("/loop"), 4);
}

#[tokio::test]
async fn pages_are_cached_by_url() {
    let server = Server::start(vec![("/counted", html("<p>once</p>"))]).await;
    let (_d, ctx) = context(local(), None);
    let url = server.url("/counted");
    for _ in 0..3 {
        let out = fetch(&ctx, json!({"url": url, "prompt": "x"})).await;
        assert!(out.text_content().contains("once"));
    }
    assert_eq!(server.hits("/counted"), 1);
}

#[tokio::test]
async fn bodies_that_cannot_be_read_fail_clearly() {
    let big = vec![b'a'; 3000];
    let server = Server::start(vec![
        ("/hang", Reply::Hang),
        (
            "/logo.png",
            Reply::Full(
                200,
                vec![("Content-Type", "image/png".into())],
                b"\x89PNG\r\n\x1a\n....".to_vec(),
            ),
        ),
        (
            "/lying",
            Reply::Full(
                200,
                vec![("Content-Type", "text/plain".into())],
                b"MZ\0\0\x90binary".to_vec(),
            ),
        ),
        (
            "/big",
            Reply::Full(
                200,
                vec![("Content-Type", "text/plain".into())],
                big.clone(),
            ),
        ),
        ("/stream", Reply::Unsized("text/plain", big)),
        (
            "/gone",
            Reply::Full(410, vec![("Retry-After", "120".into())], b"gone".to_vec()),
        ),
    ])
    .await;
    let config = WebFetchConfig {
        timeout: Duration::from_millis(300),
        max_bytes: 1000,
        ..local()
    };
    let (_d, ctx) = context(config, None);
    let cases = [
        ("/hang", "timed out after 0.3 seconds"),
        (
            "/logo.png",
            "returned image/png content (12 bytes), which WebFetch cannot read",
        ),
        ("/lying", "returned text/plain content"),
        ("/big", "is larger than 1,000 bytes"),
        ("/stream", "is larger than 1,000 bytes"),
        (
            "/gone",
            "The server returned HTTP 410 Gone.\nRetry-After: 120\n\nThe response body was not retrieved.",
        ),
    ];
    for (path, expected) in cases {
        let out = fetch(&ctx, json!({"url": server.url(path), "prompt": "x"})).await;
        assert!(out.is_error, "{path}");
        assert!(
            out.text_content().contains(expected),
            "{path}: {}",
            out.text_content()
        );
    }
}

#[tokio::test]
async fn urls_that_cannot_be_fetched_are_input_errors() {
    let (_d, ctx) = context(WebFetchConfig::default(), None);
    let cases = [
        (
            "not a url",
            "Error: Invalid URL \"not a url\". The URL provided could not be parsed.",
        ),
        ("ftp://example.com/f", "http and https URLs only"),
        ("https://user:pw@example.com/", "user name or password"),
    ];
    for (url, expected) in cases {
        let out = fetch(&ctx, json!({"url": url, "prompt": "x"})).await;
        assert!(out.is_error);
        let t = out.text_content();
        assert!(
            t.starts_with("<tool_use_error>") && t.contains(expected),
            "{t}"
        );
    }
    let out = fetch(&ctx, json!({"url": "https://example.com"})).await;
    assert!(
        out.text_content()
            .contains("The required parameter `prompt` is missing")
    );
}

#[tokio::test]
async fn a_cancelled_fetch_stops() {
    let server = Server::start(vec![("/hang", Reply::Hang)]).await;
    let (_d, ctx) = context(local(), None);
    let cancel = CancellationToken::new();
    let ctx = ctx.with_cancel(cancel.clone());
    let url = server.url("/hang");
    let call = tokio::spawn(async move { fetch(&ctx, json!({"url": url, "prompt": "x"})).await });
    while server.hits("/hang") == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    cancel.cancel();
    let out = call.await.unwrap();
    assert!(out.is_error);
    assert!(
        out.text_content().contains("interrupted"),
        "{}",
        out.text_content()
    );
}
