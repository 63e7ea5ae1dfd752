//! Glob and LS on real temp directories: patterns, ordering, caps, hidden and ignored files,
//! and errors.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use skiff_tools::glob::{GlobTool, TRUNCATED_NOTICE};
use skiff_tools::ls::LsTool;
use skiff_tools::{Tool, ToolConfig, ToolContext, ToolOutput, Typed};
use tokio_util::sync::CancellationToken;

struct Ws {
    _dir: tempfile::TempDir,
    ctx: ToolContext,
}

impl Ws {
    fn new() -> Self {
        Self::with_config(ToolConfig::default())
    }
    fn with_config(config: ToolConfig) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::with_dirs(dir.path(), &[], config).unwrap();
        Self { _dir: dir, ctx }
    }
    /// Create a file whose modification time is `secs` after the epoch.
    fn file(&self, rel: &str, secs: u64) {
        let p = self.ctx.root().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, rel).unwrap();
        set_mtime(&p, secs);
    }
    fn dir(&self, rel: &str) {
        std::fs::create_dir_all(self.ctx.root().join(rel)).unwrap();
    }
    async fn glob(&self, input: Value) -> ToolOutput {
        Typed::new(GlobTool).call(input, &self.ctx).await
    }
    async fn glob_ok(&self, input: Value) -> String {
        let out = self.glob(input.clone()).await;
        assert!(!out.is_error, "{input}: {}", out.text_content());
        out.text_content()
    }
    async fn ls(&self, input: Value) -> ToolOutput {
        Typed::new(LsTool).call(input, &self.ctx).await
    }
    async fn ls_ok(&self, input: Value) -> String {
        let out = self.ls(input.clone()).await;
        assert!(!out.is_error, "{input}: {}", out.text_content());
        out.text_content()
    }
}

fn set_mtime(path: &Path, secs: u64) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
        .unwrap();
}

fn rust_tree() -> Ws {
    let ws = Ws::new();
    ws.file("Cargo.toml", 100);
    ws.file("src/main.rs", 300);
    ws.file("src/lib.rs", 100);
    ws.file("src/util/mod.rs", 200);
    ws.file("src/util/deep/x.rs", 500);
    ws.file("tests/it.rs", 400);
    ws.file("README.md", 50);
    ws
}

// --- Glob ---------------------------------------------------------------------------------------

#[tokio::test]
async fn glob_double_star_oldest_first() {
    let ws = rust_tree();
    let out = ws.glob(json!({"pattern": "**/*.rs"})).await;
    assert!(!out.is_error);
    let want = [
        "src/lib.rs",
        "src/util/mod.rs",
        "src/main.rs",
        "tests/it.rs",
        "src/util/deep/x.rs",
    ];
    assert_eq!(out.text_content(), want.join("\n"));
    let s = out.structured.unwrap();
    assert_eq!(s["filenames"], json!(want));
    assert_eq!(s["numFiles"], 5);
    assert_eq!(s["truncated"], false);
    assert!(s["durationMs"].is_u64());
}

#[tokio::test]
async fn glob_ties_are_broken_by_path() {
    let ws = Ws::new();
    for name in ["c.txt", "a.txt", "b.txt"] {
        ws.file(name, 1_000);
    }
    ws.file("0.txt", 2_000);
    assert_eq!(
        ws.glob_ok(json!({"pattern": "*.txt"})).await,
        "a.txt\nb.txt\nc.txt\n0.txt"
    );
}

#[tokio::test]
async fn glob_star_stays_in_one_directory() {
    let ws = rust_tree();
    assert_eq!(
        ws.glob_ok(json!({"pattern": "*.rs"})).await,
        "No files found"
    );
    assert_eq!(
        ws.glob_ok(json!({"pattern": "*"})).await,
        "README.md\nCargo.toml"
    );
    assert_eq!(
        ws.glob_ok(json!({"pattern": "src/*.rs"})).await,
        "src/lib.rs\nsrc/main.rs"
    );
    assert_eq!(
        ws.glob_ok(json!({"pattern": "src/**/*.{rs,toml}"})).await,
        "src/lib.rs\nsrc/util/mod.rs\nsrc/main.rs\nsrc/util/deep/x.rs"
    );
    assert_eq!(
        ws.glob_ok(json!({"pattern": "Cargo.toml"})).await,
        "Cargo.toml"
    );
}

#[tokio::test]
async fn glob_path_parameter() {
    let ws = rust_tree();
    // Pattern relative to `path`; results relative to the workspace root.
    assert_eq!(
        ws.glob_ok(json!({"pattern": "*.rs", "path": "src/util"}))
            .await,
        "src/util/mod.rs"
    );
    let abs = ws.ctx.root().join("src");
    assert_eq!(
        ws.glob_ok(json!({"pattern": "**/mod.rs", "path": abs.to_str().unwrap()}))
            .await,
        "src/util/mod.rs"
    );
    // An absolute pattern inside the workspace works too.
    let pat = format!("{}/tests/*.rs", ws.ctx.root().display());
    assert_eq!(ws.glob_ok(json!({"pattern": pat})).await, "tests/it.rs");
}

#[tokio::test]
async fn glob_caps_at_100_with_notice() {
    let ws = Ws::new();
    for i in 0..150 {
        ws.file(&format!("d/f{i:03}.txt"), 10_000 - i);
    }
    let out = ws.glob(json!({"pattern": "**/*.txt"})).await;
    let text = out.text_content();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 101);
    assert_eq!(lines[0], "d/f149.txt", "oldest first");
    assert_eq!(lines[99], "d/f050.txt");
    assert_eq!(lines[100], TRUNCATED_NOTICE);
    assert_eq!(
        TRUNCATED_NOTICE,
        "(Results are truncated. Consider using a more specific path or pattern.)"
    );
    let s = out.structured.unwrap();
    assert_eq!(s["numFiles"], 100);
    assert_eq!(s["truncated"], true);
    assert_eq!(s["totalMatches"], 150);
    // Exactly at the cap: no notice.
    let ws = Ws::new();
    for i in 0..100 {
        ws.file(&format!("f{i:03}.txt"), 1);
    }
    let text = ws.glob_ok(json!({"pattern": "*.txt"})).await;
    assert_eq!(text.lines().count(), 100);
    assert!(!text.contains("truncated"));
}

#[tokio::test]
async fn glob_no_files_found() {
    let ws = rust_tree();
    let out = ws.glob(json!({"pattern": "nomatch*"})).await;
    assert!(!out.is_error);
    assert_eq!(out.text_content(), "No files found");
    let s = out.structured.unwrap();
    assert_eq!(s["filenames"], json!([]));
    assert_eq!(s["numFiles"], 0);
    assert_eq!(s["truncated"], false);
    assert_eq!(
        ws.glob_ok(json!({"pattern": "missing_dir/**/*.rs"})).await,
        "No files found"
    );
}

#[tokio::test]
async fn glob_includes_hidden_and_ignored_but_not_git() {
    let ws = Ws::new();
    ws.file(".gitignore", 1);
    std::fs::write(ws.ctx.root().join(".gitignore"), "build/\n").unwrap();
    ws.file(".github/workflows/ci.yml", 2);
    ws.file(".env.yml", 3);
    ws.file("build/out.yml", 4);
    ws.file(".git/config.yml", 5);
    ws.file("sub/.git/x.yml", 6);
    assert_eq!(
        ws.glob_ok(json!({"pattern": "**/*.yml"})).await,
        ".github/workflows/ci.yml\n.env.yml\nbuild/out.yml"
    );
}

#[tokio::test]
async fn glob_directories_are_not_results() {
    let ws = Ws::new();
    ws.dir("src.d/inner");
    ws.file("src.d/inner/f.d", 1);
    assert_eq!(
        ws.glob_ok(json!({"pattern": "**/*.d"})).await,
        "src.d/inner/f.d"
    );
}

#[tokio::test]
async fn glob_errors() {
    let ws = rust_tree();
    for p in ["/etc", "..", "../../tmp"] {
        let out = ws.glob(json!({"pattern": "*", "path": p})).await;
        assert!(out.is_error, "{p}");
        assert!(
            out.text_content().contains("outside the workspace"),
            "{p}: {}",
            out.text_content()
        );
    }
    let out = ws.glob(json!({"pattern": "../**/*"})).await;
    assert!(out.is_error);
    assert!(out.text_content().contains("outside the workspace"));
    let out = ws.glob(json!({"pattern": "/etc/*"})).await;
    assert!(out.is_error);

    let out = ws.glob(json!({"pattern": "*", "path": "nope"})).await;
    assert!(out.is_error);
    // What exists instead, so a model does not send the same call again.
    let text = out.text_content();
    assert!(
        text.starts_with("<tool_use_error>Directory does not exist: nope\nThe nearest existing directory, ., holds: "),
        "{text}"
    );
    assert!(text.contains("src/"), "{text}");
    let out = ws.glob(json!({"pattern": "*", "path": "Cargo.toml"})).await;
    assert!(out.is_error);
    assert!(out.text_content().contains("not a directory"));
    let out = ws.glob(json!({"pattern": "src/[a-"})).await;
    assert!(out.is_error);
    assert!(out.text_content().contains("Invalid glob pattern"));
    let out = ws.glob(json!({"path": "src"})).await;
    assert!(out.is_error);
    assert!(
        out.text_content()
            .contains("The required parameter `pattern` is missing")
    );
}

#[tokio::test]
async fn glob_cancelled() {
    let ws = rust_tree();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let out = Typed::new(GlobTool)
        .call(json!({"pattern": "**/*"}), &ws.ctx.with_cancel(cancel))
        .await;
    assert!(out.is_error);
    assert!(out.text_content().contains("cancelled"));
}

// --- LS -----------------------------------------------------------------------------------------

#[tokio::test]
async fn ls_lists_recursively_sorted_by_path() {
    let ws = rust_tree();
    ws.dir("empty_dir");
    ws.file(".github/ci.yml", 1);
    ws.file("src-extra.txt", 1);
    assert_eq!(
        ws.ls_ok(json!({})).await,
        [
            ".github/",
            ".github/ci.yml",
            "Cargo.toml",
            "README.md",
            "empty_dir/",
            "src/",
            "src/lib.rs",
            "src/main.rs",
            "src/util/",
            "src/util/deep/",
            "src/util/deep/x.rs",
            "src/util/mod.rs",
            "src-extra.txt",
            "tests/",
            "tests/it.rs",
        ]
        .join("\n")
    );
    // A sub-directory, by relative or absolute path; paths stay relative to the root.
    let want = "src/util/deep/\nsrc/util/deep/x.rs\nsrc/util/mod.rs";
    assert_eq!(ws.ls_ok(json!({"path": "src/util"})).await, want);
    let abs = ws.ctx.root().join("src/util");
    assert_eq!(ws.ls_ok(json!({"path": abs.to_str().unwrap()})).await, want);
}

#[tokio::test]
async fn ls_honours_gitignore_and_skips_git() {
    let ws = Ws::new();
    std::fs::write(ws.ctx.root().join(".gitignore"), "target/\n*.log\n").unwrap();
    ws.file("target/debug/bin", 1);
    ws.file("app.log", 1);
    ws.file("src/a.rs", 1);
    ws.file(".git/HEAD", 1);
    assert_eq!(ws.ls_ok(json!({})).await, ".gitignore\nsrc/\nsrc/a.rs");
}

#[tokio::test]
async fn ls_ignore_patterns() {
    let ws = rust_tree();
    ws.file("node_modules/pkg/index.js", 1);
    ws.file("src/gen/out.rs", 1);
    let text = ws
        .ls_ok(json!({"ignore": ["node_modules", "*.md", "src/util/**", "gen/"]}))
        .await;
    assert_eq!(
        text,
        "Cargo.toml\nsrc/\nsrc/lib.rs\nsrc/main.rs\nsrc/util/\ntests/\ntests/it.rs"
    );
    let out = ws.ls(json!({"ignore": ["[z-"]})).await;
    assert!(out.is_error);
}

#[tokio::test]
async fn ls_caps_with_notice() {
    let ws = Ws::with_config(ToolConfig {
        ls_max_entries: 10,
        ..ToolConfig::default()
    });
    for i in 0..25 {
        ws.file(&format!("f{i:02}.txt"), 1);
    }
    let out = ws.ls(json!({})).await;
    let text = out.text_content();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 11, "{text}");
    assert_eq!(lines[0], "f00.txt");
    assert_eq!(lines[9], "f09.txt");
    assert!(lines[10].contains("15 more entries"), "{text}");
    assert!(lines[10].contains("Glob"), "{text}");
    let s = out.structured.unwrap();
    assert_eq!(s["truncated"], true);
    assert_eq!(s["numEntries"], 25);
}

#[tokio::test]
async fn ls_empty_and_error_cases() {
    let ws = rust_tree();
    ws.dir("empty");
    assert_eq!(
        ws.ls_ok(json!({"path": "empty"})).await,
        "(empty directory)"
    );
    ws.file("ign/only.log", 1);
    let text = ws.ls_ok(json!({"path": "ign", "ignore": ["*.log"]})).await;
    assert!(text.contains("ignored"), "{text}");

    let out = ws.ls(json!({"path": "Cargo.toml"})).await;
    assert!(out.is_error);
    assert!(out.text_content().contains("is a file, not a directory"));
    let out = ws.ls(json!({"path": "missing"})).await;
    assert!(out.is_error);
    assert!(
        out.text_content()
            .contains("Directory does not exist: missing")
    );
    let out = ws.ls(json!({"path": "/etc"})).await;
    assert!(out.is_error);
    assert!(out.text_content().contains("outside the workspace"));
    let out = ws.ls(json!({"path": "x", "recursive": true})).await;
    assert!(out.is_error);
    assert!(out.text_content().contains("unexpected parameter"));
}

#[tokio::test]
async fn tools_are_read_only() {
    let glob = Typed::new(GlobTool);
    let ls = Typed::new(LsTool);
    assert_eq!((glob.name(), ls.name()), ("Glob", "LS"));
    assert!(glob.is_read_only() && ls.is_read_only());
    assert!(glob.is_concurrency_safe(&json!({"pattern": "*"})));
    let schema = ls.input_schema();
    assert_eq!(schema["properties"]["path"]["type"], "string");
    assert_eq!(schema["properties"]["ignore"]["type"], "array");
    assert_eq!(schema["properties"]["ignore"]["items"]["type"], "string");
    assert_eq!(schema["required"].as_array().map_or(0, Vec::len), 0);
}
