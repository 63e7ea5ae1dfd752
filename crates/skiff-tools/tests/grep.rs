//! Grep on real temp directories: every output mode and flag, Claude Code's texts, pagination,
//! ignore files, binary files, errors, and the input schema against Claude Code's.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use skiff_tools::glob::GlobTool;
use skiff_tools::grep::GrepTool;
use skiff_tools::{Tool, ToolContext, ToolOutput, Typed};
use tokio_util::sync::CancellationToken;

struct Ws {
    _dir: tempfile::TempDir,
    ctx: ToolContext,
}

impl Ws {
    /// The workspace of the captured Claude Code runs: `src/a.txt` with four lines.
    fn new() -> Self {
        let ws = Self::empty();
        ws.file(
            "src/a.txt",
            "line ONE\n\tindented two\nline three dup\nline three dup\n",
        );
        ws
    }
    fn empty() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(dir.path()).unwrap();
        Self { _dir: dir, ctx }
    }
    fn file(&self, rel: &str, content: &str) {
        self.bytes(rel, content.as_bytes());
    }
    fn bytes(&self, rel: &str, content: &[u8]) {
        let p = self.ctx.root().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }
    fn mtime(&self, rel: &str, secs: u64) {
        set_mtime(&self.ctx.root().join(rel), secs);
    }
    async fn grep(&self, input: Value) -> ToolOutput {
        Typed::new(GrepTool).call(input, &self.ctx).await
    }
    async fn ok(&self, input: Value) -> String {
        let out = self.grep(input.clone()).await;
        assert!(!out.is_error, "{input}: {}", out.text_content());
        out.text_content()
    }
    async fn err(&self, input: Value) -> String {
        let out = self.grep(input.clone()).await;
        assert!(out.is_error, "{input} should fail: {}", out.text_content());
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

/// A tree with several files for mode and flag tests.
fn code_ws() -> Ws {
    let ws = Ws::empty();
    ws.file(
        "src/main.rs",
        "fn main() {\n    let x = compute();\n    println!(\"{x}\");\n}\n",
    );
    ws.file(
        "src/lib.rs",
        "pub fn compute() -> u32 {\n    42\n}\n\npub fn other() {}\n",
    );
    ws.file("web/app.ts", "export function compute() { return 1 }\n");
    ws.file("web/view.tsx", "const View = () => compute();\n");
    ws.file("web/util.js", "module.exports = { compute };\n");
    ws.file("README.md", "Call compute() to compute.\n");
    ws
}

// --- Claude Code's observed texts -----------------------------------------------------------

#[tokio::test]
async fn files_with_matches_is_the_default() {
    let ws = Ws::new();
    let out = ws.grep(json!({"pattern": "line"})).await;
    assert!(!out.is_error);
    assert_eq!(out.text_content(), "Found 1 file\nsrc/a.txt");
    assert_eq!(
        out.structured.unwrap(),
        json!({"mode": "files_with_matches", "filenames": ["src/a.txt"], "numFiles": 1,
               "totalFiles": 1})
    );
}

#[tokio::test]
async fn content_mode_has_path_line_text() {
    let ws = Ws::new();
    let out = ws
        .grep(json!({"pattern": "line", "output_mode": "content", "-n": true}))
        .await;
    let want = "src/a.txt:1:line ONE\nsrc/a.txt:3:line three dup\nsrc/a.txt:4:line three dup";
    assert_eq!(out.text_content(), want);
    let s = out.structured.unwrap();
    assert_eq!(s["mode"], "content");
    assert_eq!(s["content"], want);
    assert_eq!(s["numLines"], 3);
    assert_eq!(s["filenames"], json!([]));
    // Line numbers are on by default.
    assert_eq!(
        ws.ok(json!({"pattern": "three", "output_mode": "content"}))
            .await,
        "src/a.txt:3:line three dup\nsrc/a.txt:4:line three dup"
    );
}

#[tokio::test]
async fn count_mode_totals() {
    let ws = Ws::new();
    let out = ws
        .grep(json!({"pattern": "line", "output_mode": "count"}))
        .await;
    assert_eq!(
        out.text_content(),
        "src/a.txt:3\n\nFound 3 total occurrences across 1 file."
    );
    assert_eq!(
        out.structured.unwrap(),
        json!({"mode": "count", "numFiles": 1, "filenames": [], "content": "src/a.txt:3",
               "numMatches": 3})
    );
    ws.file("src/b.txt", "one line\n");
    assert_eq!(
        ws.ok(json!({"pattern": "ONE", "output_mode": "count"}))
            .await,
        "src/a.txt:1\n\nFound 1 total occurrence across 1 file."
    );
    assert_eq!(
        ws.ok(json!({"pattern": "line", "output_mode": "count"}))
            .await,
        "src/a.txt:3\nsrc/b.txt:1\n\nFound 4 total occurrences across 2 files."
    );
}

#[tokio::test]
async fn no_match_texts() {
    let ws = Ws::new();
    let out = ws.grep(json!({"pattern": "zzzznomatch"})).await;
    assert!(!out.is_error);
    assert_eq!(out.text_content(), "No files found");
    assert_eq!(
        out.structured.unwrap(),
        json!({"mode": "files_with_matches", "filenames": [], "numFiles": 0, "totalFiles": 0})
    );
    for mode in ["content", "count"] {
        assert_eq!(
            ws.ok(json!({"pattern": "zzzznomatch", "output_mode": mode}))
                .await,
            "No matches found"
        );
    }
}

// --- flags ------------------------------------------------------------------------------------

#[tokio::test]
async fn files_sorted_newest_first_then_by_path() {
    let ws = code_ws();
    for (f, t) in [
        ("src/main.rs", 3_000),
        ("src/lib.rs", 1_000),
        ("web/app.ts", 2_000),
        ("web/view.tsx", 2_000),
        ("web/util.js", 5_000),
        ("README.md", 4_000),
    ] {
        ws.mtime(f, t);
    }
    assert_eq!(
        ws.ok(json!({"pattern": "compute"})).await,
        "Found 6 files\nweb/util.js\nREADME.md\nsrc/main.rs\nweb/app.ts\nweb/view.tsx\nsrc/lib.rs"
    );
}

#[tokio::test]
async fn case_insensitive() {
    let ws = Ws::new();
    assert_eq!(
        ws.ok(json!({"pattern": "one", "output_mode": "content"}))
            .await,
        "No matches found"
    );
    assert_eq!(
        ws.ok(json!({"pattern": "one", "output_mode": "content", "-i": true}))
            .await,
        "src/a.txt:1:line ONE"
    );
}

#[tokio::test]
async fn line_numbers_can_be_turned_off() {
    let ws = Ws::new();
    assert_eq!(
        ws.ok(json!({"pattern": "three", "output_mode": "content", "-n": false}))
            .await,
        "src/a.txt:line three dup\nsrc/a.txt:line three dup"
    );
    assert_eq!(
        ws.ok(json!({"pattern": "ONE", "output_mode": "content", "-n": false, "-A": 1}))
            .await,
        "src/a.txt:line ONE\nsrc/a.txt-\tindented two"
    );
}

#[tokio::test]
async fn context_lines_and_separators() {
    let ws = Ws::empty();
    ws.file("f.txt", "a\nb\nHIT1\nc\nd\ne\nf\nHIT2\ng\n");
    ws.file("g.txt", "HIT3\nz\n");
    let after = ws
        .ok(json!({"pattern": "HIT", "output_mode": "content", "-A": 1}))
        .await;
    assert_eq!(
        after,
        "f.txt:3:HIT1\nf.txt-4-c\n--\nf.txt:8:HIT2\nf.txt-9-g\n--\ng.txt:1:HIT3\ng.txt-2-z"
    );
    let before = ws
        .ok(json!({"pattern": "HIT[12]", "output_mode": "content", "-B": 2}))
        .await;
    assert_eq!(
        before,
        "f.txt-1-a\nf.txt-2-b\nf.txt:3:HIT1\n--\nf.txt-6-e\nf.txt-7-f\nf.txt:8:HIT2"
    );
    let want_c2 = "f.txt-1-a\nf.txt-2-b\nf.txt:3:HIT1\nf.txt-4-c\nf.txt-5-d\nf.txt-6-e\n\
                   f.txt-7-f\nf.txt:8:HIT2\nf.txt-9-g";
    for key in ["-C", "context"] {
        assert_eq!(
            ws.ok(json!({"pattern": "HIT[12]", "output_mode": "content", key: 2}))
                .await,
            want_c2,
            "{key}"
        );
    }
    // -A/-B win over -C, as in ripgrep.
    assert_eq!(
        ws.ok(json!({"pattern": "HIT1", "output_mode": "content", "-C": 2, "-A": 0}))
            .await,
        "f.txt-1-a\nf.txt-2-b\nf.txt:3:HIT1"
    );
    // Context does not change the other modes.
    assert_eq!(
        ws.ok(json!({"pattern": "HIT", "output_mode": "count", "-C": 3}))
            .await,
        "f.txt:2\ng.txt:1\n\nFound 3 total occurrences across 2 files."
    );
}

#[tokio::test]
async fn only_matching() {
    let ws = Ws::empty();
    ws.file("v.txt", "x = 1.2.3 and 4.5.6\nnone here\nv 7.8.9\n");
    assert_eq!(
        ws.ok(json!({"pattern": r"\d\.\d\.\d", "output_mode": "content", "-o": true}))
            .await,
        "v.txt:1:1.2.3\nv.txt:1:4.5.6\nv.txt:3:7.8.9"
    );
    assert_eq!(
        ws.ok(
            json!({"pattern": r"\d\.\d\.\d", "output_mode": "content", "-o": true,
                     "-n": false})
        )
        .await,
        "v.txt:1.2.3\nv.txt:4.5.6\nv.txt:7.8.9"
    );
}

#[tokio::test]
async fn head_limit_and_offset_paginate() {
    let ws = Ws::empty();
    for i in 0..12 {
        ws.file(&format!("f{i:02}.txt"), "needle\nneedle\n");
        ws.mtime(&format!("f{i:02}.txt"), 1_000 + i);
    }
    // files: newest first, limited to 5 after skipping 2.
    let out = ws
        .grep(json!({"pattern": "needle", "head_limit": 5, "offset": 2}))
        .await;
    let text = out.text_content();
    assert!(
        text.starts_with("Found 12 files\nf09.txt\nf08.txt\nf07.txt\nf06.txt\nf05.txt\n\n["),
        "{text}"
    );
    assert!(text.contains("limit: 5, offset: 2"), "{text}");
    assert!(text.contains("offset: 7"), "{text}");
    let s = out.structured.unwrap();
    assert_eq!(s["numFiles"], 5);
    assert_eq!(s["totalFiles"], 12);
    assert_eq!(s["appliedLimit"], 5);
    assert_eq!(s["appliedOffset"], 2);

    // The last page has no notice.
    let last = ws
        .ok(json!({"pattern": "needle", "head_limit": 5, "offset": 10}))
        .await;
    assert_eq!(last, "Found 12 files\nf01.txt\nf00.txt");

    // content: 24 lines, default limit would show all; head_limit 3 shows three lines.
    let content = ws
        .ok(
            json!({"pattern": "needle", "output_mode": "content", "head_limit": 3,
                   "offset": 1}),
        )
        .await;
    assert!(
        content.starts_with("f00.txt:2:needle\nf01.txt:1:needle\nf01.txt:2:needle\n\n["),
        "{content}"
    );
    assert!(content.contains("20 more lines"), "{content}");

    // count: entries are files.
    let count = ws
        .ok(json!({"pattern": "needle", "output_mode": "count", "head_limit": 2}))
        .await;
    assert!(
        count.starts_with(
            "f00.txt:2\nf01.txt:2\n\nFound 24 total occurrences across 12 files.\n\n["
        ),
        "{count}"
    );

    // 0 means no limit; past the end says so.
    let all = ws
        .ok(json!({"pattern": "needle", "output_mode": "content", "head_limit": 0}))
        .await;
    assert_eq!(all.lines().count(), 24);
    let past = ws.ok(json!({"pattern": "needle", "offset": 50})).await;
    assert!(past.contains("past the end"), "{past}");
}

#[tokio::test]
async fn default_head_limit_is_250() {
    let ws = Ws::empty();
    ws.file("big.txt", &"hit\n".repeat(300));
    let out = ws
        .grep(json!({"pattern": "hit", "output_mode": "content"}))
        .await;
    let text = out.text_content();
    assert_eq!(
        text.lines().filter(|l| l.starts_with("big.txt:")).count(),
        250
    );
    assert!(text.contains("limit: 250, offset: 0"), "{text}");
    assert!(text.contains("50 more lines"), "{text}");
    assert_eq!(out.structured.unwrap()["totalLines"], 300);
}

#[tokio::test]
async fn multiline_matches_span_lines() {
    let ws = Ws::empty();
    ws.file("s.rs", "struct Foo {\n    a: u32,\n}\nstruct Bar;\n");
    assert_eq!(
        ws.ok(json!({"pattern": r"Foo \{.*?\}", "output_mode": "content"}))
            .await,
        "No matches found"
    );
    assert_eq!(
        ws.ok(json!({"pattern": r"Foo \{.*?\}", "output_mode": "content", "multiline": true}))
            .await,
        "s.rs:1:struct Foo {\ns.rs:2:    a: u32,\ns.rs:3:}"
    );
    assert_eq!(
        ws.ok(json!({"pattern": r"a: u32,\n\}", "multiline": true}))
            .await,
        "Found 1 file\ns.rs"
    );
    // Adjacent multi-line matches: as `rg -U --multiline-dotall` (-o and -c).
    ws.file("t.rs", "struct Foo {\n    a: u32,\n}\nx Foo { y }\n");
    assert_eq!(
        ws.ok(
            json!({"pattern": r"Foo \{.*?\}", "output_mode": "content", "multiline": true,
                     "-o": true, "path": "t.rs"})
        )
        .await,
        "t.rs:1:Foo {\nt.rs:2:    a: u32,\nt.rs:3:}\nt.rs:4:Foo { y }"
    );
    assert_eq!(
        ws.ok(
            json!({"pattern": r"Foo \{.*?\}", "output_mode": "count", "multiline": true,
                     "path": "t.rs"})
        )
        .await,
        "t.rs:2\n\nFound 2 total occurrences across 1 file."
    );
    // Without multiline, a literal \n is refused with a hint.
    let e = ws.err(json!({"pattern": r"u32,\n\}"})).await;
    assert!(e.contains("multiline: true"), "{e}");
}

#[tokio::test]
async fn glob_filter() {
    let ws = code_ws();
    let names = |text: String| {
        let mut v: Vec<String> = text.lines().skip(1).map(str::to_owned).collect();
        v.sort();
        v
    };
    assert_eq!(
        names(ws.ok(json!({"pattern": "compute", "glob": "*.rs"})).await),
        ["src/lib.rs", "src/main.rs"]
    );
    assert_eq!(
        names(
            ws.ok(json!({"pattern": "compute", "glob": "*.{ts,tsx}"}))
                .await
        ),
        ["web/app.ts", "web/view.tsx"]
    );
    assert_eq!(
        names(
            ws.ok(json!({"pattern": "compute", "glob": "*.js,*.md"}))
                .await
        ),
        ["README.md", "web/util.js"]
    );
    assert_eq!(
        names(
            ws.ok(json!({"pattern": "compute", "glob": "*.rs *.md"}))
                .await
        ),
        ["README.md", "src/lib.rs", "src/main.rs"]
    );
    assert_eq!(
        names(
            ws.ok(json!({"pattern": "compute", "glob": "!web/**"}))
                .await
        ),
        ["README.md", "src/lib.rs", "src/main.rs"]
    );
    assert_eq!(
        names(ws.ok(json!({"pattern": "compute", "glob": "src/**"})).await),
        ["src/lib.rs", "src/main.rs"]
    );
}

#[tokio::test]
async fn type_filter() {
    let ws = code_ws();
    assert_eq!(
        ws.ok(json!({"pattern": "compute", "type": "js"})).await,
        "Found 1 file\nweb/util.js"
    );
    let ts = ws.ok(json!({"pattern": "compute", "type": "ts"})).await;
    assert!(ts.starts_with("Found 2 files"), "{ts}");
    assert!(ts.contains("web/view.tsx") && ts.contains("web/app.ts"));
    let e = ws
        .err(json!({"pattern": "compute", "type": "nosuchtype"}))
        .await;
    assert!(
        e.starts_with("<tool_use_error>Unknown file type `nosuchtype`"),
        "{e}"
    );
}

#[tokio::test]
async fn path_may_be_a_file_or_a_directory() {
    let ws = code_ws();
    assert_eq!(
        ws.ok(json!({"pattern": "compute", "path": "src/lib.rs", "output_mode": "content"}))
            .await,
        "src/lib.rs:1:pub fn compute() -> u32 {"
    );
    assert_eq!(
        ws.ok(json!({"pattern": "compute", "path": "src/main.rs", "output_mode": "count"}))
            .await,
        "src/main.rs:1\n\nFound 1 total occurrence across 1 file."
    );
    let abs = ws.ctx.root().join("web");
    let web = ws
        .ok(json!({"pattern": "compute", "path": abs.to_str().unwrap(), "output_mode": "count"}))
        .await;
    assert_eq!(
        web,
        "web/app.ts:1\nweb/util.js:1\nweb/view.tsx:1\n\nFound 3 total occurrences across 3 files."
    );
    let e = ws
        .err(json!({"pattern": "x", "path": "nope/missing"}))
        .await;
    assert!(
        e.starts_with(
            "<tool_use_error>Path does not exist: nope/missing\nThe nearest existing directory, ., holds: "
        ),
        "{e}"
    );
}

#[tokio::test]
async fn gitignore_and_hidden_files_are_skipped() {
    let ws = Ws::empty();
    ws.file(".gitignore", "target/\n*.log\n");
    ws.file("src/a.rs", "needle\n");
    ws.file("target/debug/out.rs", "needle\n");
    ws.file("run.log", "needle\n");
    ws.file(".hidden/h.rs", "needle\n");
    ws.file(".env", "needle\n");
    ws.file("sub/.ignore", "skipme.rs\n");
    ws.file("sub/skipme.rs", "needle\n");
    ws.file("sub/keep.rs", "needle\n");
    // Honoured without a .git directory too.
    let want = "Found 2 files\nsrc/a.rs\nsub/keep.rs";
    ws.mtime("src/a.rs", 2_000);
    ws.mtime("sub/keep.rs", 1_000);
    assert_eq!(ws.ok(json!({"pattern": "needle"})).await, want);
    std::fs::create_dir(ws.ctx.root().join(".git")).unwrap();
    ws.file(".git/config", "needle\n");
    assert_eq!(ws.ok(json!({"pattern": "needle"})).await, want);
    // An ignored directory given explicitly is searched, as with rg.
    assert_eq!(
        ws.ok(json!({"pattern": "needle", "path": "target"})).await,
        "Found 1 file\ntarget/debug/out.rs"
    );
}

#[tokio::test]
async fn binary_files_are_skipped() {
    let ws = Ws::empty();
    ws.file("text.txt", "needle\n");
    ws.bytes("blob.bin", b"needle\n\x00\x01\x02needle\n");
    assert_eq!(
        ws.ok(json!({"pattern": "needle", "output_mode": "count"}))
            .await,
        "text.txt:1\n\nFound 1 total occurrence across 1 file."
    );
    assert_eq!(
        ws.ok(json!({"pattern": "needle"})).await,
        "Found 1 file\ntext.txt"
    );
    assert_eq!(
        ws.ok(json!({"pattern": "needle", "output_mode": "content"}))
            .await,
        "text.txt:1:needle"
    );
}

#[tokio::test]
async fn non_utf8_and_crlf_lines() {
    let ws = Ws::empty();
    ws.bytes("latin1.txt", b"caf\xe9 needle\r\nplain\r\n");
    assert_eq!(
        ws.ok(json!({"pattern": "needle", "output_mode": "content"}))
            .await,
        "latin1.txt:1:caf\u{fffd} needle"
    );
}

// --- errors -----------------------------------------------------------------------------------

#[tokio::test]
async fn invalid_regex_is_a_tool_use_error() {
    let ws = Ws::new();
    let e = ws.err(json!({"pattern": "fn (unclosed"})).await;
    assert!(
        e.starts_with("<tool_use_error>Invalid regular expression `fn (unclosed`"),
        "{e}"
    );
    assert!(e.contains("unclosed group"), "{e}");
}

#[tokio::test]
async fn paths_outside_the_workspace_are_rejected() {
    let ws = Ws::new();
    for p in ["/etc", "../", "/"] {
        let e = ws.err(json!({"pattern": "root", "path": p})).await;
        assert!(e.contains("outside the workspace"), "{p}: {e}");
        assert!(e.starts_with("<tool_use_error>"));
    }
}

#[tokio::test]
async fn invalid_input_is_reported_like_claude_code() {
    let ws = Ws::new();
    let e = ws.err(json!({"pattern": "x", "-A": "2"})).await;
    assert_eq!(
        e,
        "<tool_use_error>InputValidationError: Grep failed due to the following issue:\nThe \
         parameter `-A` type is expected as `number` but provided as `string`</tool_use_error>"
    );
    let e = ws
        .err(json!({"pattern": "x", "output_mode": "lines"}))
        .await;
    assert!(e.contains("must be one of"), "{e}");
    let e = ws.err(json!({"pattern": "x", "-w": true})).await;
    assert!(e.contains("unexpected parameter `-w`"), "{e}");
}

#[tokio::test]
async fn cancelled_search_stops() {
    let ws = code_ws();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let ctx = ws.ctx.with_cancel(cancel);
    let out = Typed::new(GrepTool)
        .call(json!({"pattern": "compute"}), &ctx)
        .await;
    assert!(out.is_error);
    assert!(out.text_content().contains("cancelled"));
}

#[tokio::test]
async fn is_read_only_and_concurrency_safe() {
    let grep = Typed::new(GrepTool);
    assert_eq!(grep.name(), "Grep");
    assert!(grep.is_read_only());
    assert!(grep.is_concurrency_safe(&json!({"pattern": "x"})));
    assert!(!grep.description().is_empty());
}

// --- schemas ----------------------------------------------------------------------------------

/// `(name, type)` of every property and the sorted `required` list of a schema.
fn shape(schema: &Value) -> (Vec<(String, Value)>, Vec<String>) {
    let mut props: Vec<(String, Value)> = schema["properties"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v["type"].clone()))
        .collect();
    props.sort_by(|a, b| a.0.cmp(&b.0));
    let mut required: Vec<String> = schema["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().to_owned())
        .collect();
    required.sort();
    (props, required)
}

#[test]
fn schemas_match_claude_code() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/claude-code/builtin_tool_input_schemas.json");
    let all: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let theirs = |name: &str| {
        all.as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()["input_schema"]
            .clone()
    };
    let grep = Typed::new(GrepTool).input_schema().clone();
    let glob = Typed::new(GlobTool).input_schema().clone();
    for (ours, name) in [(&grep, "Grep"), (&glob, "Glob")] {
        let cc = theirs(name);
        assert_eq!(shape(ours), shape(&cc), "{name}: {ours:#}");
        assert_eq!(ours["type"], "object");
        assert_eq!(ours["additionalProperties"], false);
        for (k, v) in ours["properties"].as_object().unwrap() {
            assert!(
                v["description"].as_str().is_some_and(|d| !d.is_empty()),
                "{name}.{k} has no description"
            );
        }
    }
    assert_eq!(
        grep["properties"]["output_mode"]["enum"],
        theirs("Grep")["properties"]["output_mode"]["enum"]
    );
}
