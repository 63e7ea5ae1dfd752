//! Read, Write and Edit on real temp directories: Claude Code's texts, the read-before-write
//! rule, atomic writes, CRLF, images, binary files and change tracking.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::os::unix::fs::PermissionsExt;

use serde_json::{Value, json};
use skiff_protocol::{ContentBlock, ImageSource, ToolResultContent};
use skiff_tools::edit::EditTool;
use skiff_tools::read::ReadTool;
use skiff_tools::write::WriteTool;
use skiff_tools::{ChangeKind, Tool, ToolContext, ToolOutput, Typed};

struct Ws {
    _dir: tempfile::TempDir,
    ctx: ToolContext,
}

impl Ws {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(
            dir.path().join("src/a.txt"),
            "line one\n\tindented two\nline three dup\nline three dup\n",
        )
        .unwrap();
        let ctx = ToolContext::new(dir.path()).unwrap();
        Self { _dir: dir, ctx }
    }
    fn path(&self, rel: &str) -> std::path::PathBuf {
        self.ctx.root().join(rel)
    }
    async fn read(&self, input: Value) -> ToolOutput {
        Typed::new(ReadTool).call(input, &self.ctx).await
    }
    async fn write(&self, input: Value) -> ToolOutput {
        Typed::new(WriteTool).call(input, &self.ctx).await
    }
    async fn edit(&self, input: Value) -> ToolOutput {
        Typed::new(EditTool).call(input, &self.ctx).await
    }
}

fn text(o: &ToolOutput) -> String {
    o.text_content()
}

#[tokio::test]
async fn read_matches_claude_code_format() {
    let ws = Ws::new();
    let o = ws.read(json!({"file_path": "src/a.txt"})).await;
    assert!(!o.is_error);
    assert_eq!(
        text(&o),
        "1\tline one\n2\t\tindented two\n3\tline three dup\n4\tline three dup\n5\t"
    );
    let s = o.structured.unwrap();
    assert_eq!(s["file"]["numLines"], 5);
    assert_eq!(s["file"]["totalLines"], 5);
    assert_eq!(
        s["file"]["content"],
        "line one\n\tindented two\nline three dup\nline three dup\n"
    );

    let abs = ws.path("src/a.txt");
    let o = ws
        .read(json!({"file_path": abs.to_str().unwrap(), "offset": 2, "limit": 2}))
        .await;
    assert_eq!(text(&o), "2\t\tindented two\n3\tline three dup");
    assert_eq!(o.structured.unwrap()["file"]["startLine"], 2);
}

#[tokio::test]
async fn read_edge_cases_use_protocol_texts() {
    let ws = Ws::new();
    let root = ws.ctx.root().display().to_string();
    let o = ws.read(json!({"file_path": "nope.txt"})).await;
    assert!(o.is_error);
    // Claude Code's text, then what exists nearby so the model can pick a real path.
    assert_eq!(
        text(&o),
        format!(
            "File does not exist. Note: your current working directory is {root}.\n\
             The nearest existing directory, ., holds: src/"
        )
    );
    let o = ws.read(json!({"file_path": "src/a.md"})).await;
    assert!(
        text(&o).ends_with(
            "The nearest existing directory, src, holds: a.txt\nClosest existing paths: src/a.txt"
        ),
        "{}",
        text(&o)
    );
    let o = ws
        .read(json!({"file_path": "src/a.txt", "offset": 50}))
        .await;
    assert!(!o.is_error);
    assert_eq!(
        text(&o),
        "<system-reminder>Warning: the file exists but is shorter than the provided offset (50). The file has 5 lines.</system-reminder>"
    );
    std::fs::write(ws.path("empty.txt"), "").unwrap();
    let o = ws.read(json!({"file_path": "empty.txt"})).await;
    assert!(!o.is_error);
    assert!(text(&o).contains("contents are empty"));
    let o = ws.read(json!({"file_path": "src"})).await;
    assert!(o.is_error && text(&o).contains("is a directory"));
    std::fs::write(ws.path("bin.dat"), b"\x00\x01\x02binary\xff").unwrap();
    let o = ws.read(json!({"file_path": "bin.dat"})).await;
    assert!(
        o.is_error && text(&o).contains("binary file"),
        "{}",
        text(&o)
    );
    let o = ws.read(json!({"file_path": 5})).await;
    assert!(o.is_error);
    assert_eq!(
        text(&o),
        "<tool_use_error>InputValidationError: Read failed due to the following issue:\nThe parameter `file_path` type is expected as `string` but provided as `number`</tool_use_error>"
    );
    let o = ws.read(json!({"file_path": "../outside.txt"})).await;
    assert!(o.is_error && text(&o).contains("outside the workspace"));
}

#[tokio::test]
async fn large_files_get_a_partial_view_with_a_notice() {
    let ws = Ws::new();
    let big: String = (1..=30_000).map(|i| format!("line number {i}\n")).collect();
    assert!(big.len() > 100 * 1024);
    std::fs::write(ws.path("big.txt"), &big).unwrap();
    let o = ws.read(json!({"file_path": "big.txt"})).await;
    let t = text(&o);
    assert!(!o.is_error);
    assert!(t.starts_with("1\tline number 1\n"));
    assert!(t.contains("PARTIAL view"), "{}", &t[t.len() - 300..]);
    assert!(t.contains("offset=2001"), "2000 lines fit in 100 KB here");
    // Long lines: the byte cap stops earlier.
    let wide: String = (1..=500)
        .map(|i| format!("{i}:{}\n", "x".repeat(1000)))
        .collect();
    std::fs::write(ws.path("wide.txt"), &wide).unwrap();
    let t = text(&ws.read(json!({"file_path": "wide.txt"})).await);
    assert!(t.len() < 110 * 1024, "{}", t.len());
    assert!(t.contains("PARTIAL view: the file is"));
    // An explicit window is honoured without a notice.
    let t = text(
        &ws.read(json!({"file_path": "big.txt", "offset": 29_999, "limit": 5}))
            .await,
    );
    assert_eq!(
        t,
        "29999\tline number 29999\n30000\tline number 30000\n30001\t"
    );
    // Invalid UTF-8 is shown lossily.
    std::fs::write(ws.path("latin1.txt"), b"caf\xe9 au lait\n").unwrap();
    let t = text(&ws.read(json!({"file_path": "latin1.txt"})).await);
    assert!(t.starts_with("1\tcaf\u{FFFD} au lait"));
}

#[tokio::test]
async fn images_come_back_as_image_blocks() {
    let ws = Ws::new();
    let png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDRfake".to_vec();
    std::fs::write(ws.path("pic.png"), &png).unwrap();
    let o = ws.read(json!({"file_path": "pic.png"})).await;
    assert!(!o.is_error);
    let ToolResultContent::Blocks(b) = &o.content else {
        panic!()
    };
    let ContentBlock::Image(img) = &b[0] else {
        panic!()
    };
    let ImageSource::Base64 { media_type, data } = &img.source else {
        panic!()
    };
    assert_eq!(media_type, "image/png");
    assert!(!data.is_empty());
}

#[tokio::test]
async fn write_creates_and_requires_read_before_overwrite() {
    let ws = Ws::new();
    let o = ws
        .write(json!({"file_path": "deep/new/dir/new.txt", "content": "new file\n"}))
        .await;
    assert!(!o.is_error, "{}", text(&o));
    assert_eq!(
        text(&o),
        "File created successfully at: deep/new/dir/new.txt (file state is current in your context \u{2014} no need to Read it back)"
    );
    assert_eq!(o.structured.as_ref().unwrap()["type"], "create");
    assert_eq!(
        std::fs::read_to_string(ws.path("deep/new/dir/new.txt")).unwrap(),
        "new file\n"
    );

    let o = ws
        .write(json!({"file_path": "src/a.txt", "content": "x"}))
        .await;
    assert!(o.is_error);
    // The refusal shows the file (so a small model need not make a Read call), and the file
    // counts as read from then on.
    assert_eq!(
        text(&o),
        "<tool_use_error>File has not been read yet. Read it first before writing to it.\n\
         Its current content (lines as Read shows them):\n1\tline one\n2\t\tindented two\n\
         3\tline three dup\n4\tline three dup\nIt counts as read now: send the Write again if \
         it should still replace the whole file.</tool_use_error>"
    );
    std::fs::write(ws.path("src/a.txt"), "changed behind our back\n").unwrap();
    let o = ws
        .write(json!({"file_path": "src/a.txt", "content": "x"}))
        .await;
    assert_eq!(
        text(&o),
        "<tool_use_error>File has been unexpectedly modified. Read it again before attempting to write it.\n\
         Its current content (lines as Read shows them):\n1\tchanged behind our back\n\
         It counts as read now: send the Write again if it should still replace the whole file.</tool_use_error>"
    );
    ws.read(json!({"file_path": "src/a.txt"})).await;
    let o = ws
        .write(json!({"file_path": "src/a.txt", "content": "fresh\n"}))
        .await;
    assert!(!o.is_error);
    assert!(text(&o).starts_with("The file src/a.txt has been updated successfully."));
    // Own writes keep the state current: a second write needs no new Read.
    let o = ws
        .write(json!({"file_path": "src/a.txt", "content": "again\n"}))
        .await;
    assert!(!o.is_error, "{}", text(&o));
    let s = o.structured.unwrap();
    assert_eq!(s["type"], "update");
    assert_eq!(s["originalFile"], "fresh\n");
    assert_eq!(
        s["structuredPatch"][0]["lines"],
        json!(["-fresh", "+again"])
    );
}

#[tokio::test]
async fn write_keeps_permissions_and_follows_inside_symlinks_only() {
    let ws = Ws::new();
    let script = ws.path("run.sh");
    std::fs::write(&script, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o750)).unwrap();
    ws.read(json!({"file_path": "run.sh"})).await;
    let o = ws
        .write(json!({"file_path": "run.sh", "content": "#!/bin/sh\necho hi\n"}))
        .await;
    assert!(!o.is_error);
    let mode = std::fs::metadata(&script).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o750);

    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), ws.path("escape")).unwrap();
    let o = ws
        .write(json!({"file_path": "escape/pwned.txt", "content": "x"}))
        .await;
    assert!(o.is_error && text(&o).contains("outside the workspace"));
    assert!(!outside.path().join("pwned.txt").exists());
}

#[tokio::test]
async fn edit_texts_and_rules() {
    let ws = Ws::new();
    let o = ws
        .edit(json!({"file_path": "src/a.txt", "old_string": "line one", "new_string": "line ONE"}))
        .await;
    assert!(o.is_error);
    assert!(
        text(&o).starts_with(
            "<tool_use_error>File has not been read yet. Read it first before writing to it.\n\
             Its current content (lines as Read shows them):\n1\tline one\n"
        ),
        "{}",
        text(&o)
    );
    assert!(text(&o).contains("send the Edit again, with old_string copied exactly"));
    // The same Edit again goes through: the refusal showed the file.
    let o = ws
        .edit(json!({"file_path": "src/a.txt", "old_string": "line one", "new_string": "line ONE"}))
        .await;
    assert!(!o.is_error, "{}", text(&o));
    let o = ws
        .edit(json!({"file_path": "src/a.txt", "old_string": "line ONE", "new_string": "line one"}))
        .await;
    assert!(!o.is_error, "{}", text(&o));
    ws.read(json!({"file_path": "src/a.txt"})).await;
    let o = ws
        .edit(json!({"file_path": "src/a.txt", "old_string": "line three dup", "new_string": "x"}))
        .await;
    assert!(o.is_error);
    assert_eq!(
        text(&o),
        "<tool_use_error>Found 2 matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the instance.\nString: line three dup\nThe matches start on these lines:\n3\tline three dup\n4\tline three dup</tool_use_error>"
    );
    let o = ws
        .edit(json!({"file_path": "src/a.txt", "old_string": "nope", "new_string": "x"}))
        .await;
    assert_eq!(
        text(&o),
        "<tool_use_error>String to replace not found in file.\nString: nope\nThe file's current content (lines as Read shows them; copy old_string from it exactly, without the line numbers):\n1\tline one\n2\t\tindented two\n3\tline three dup\n4\tline three dup</tool_use_error>"
    );
    let o = ws
        .edit(json!({"file_path": "src/a.txt", "old_string": "same", "new_string": "same"}))
        .await;
    assert_eq!(
        text(&o),
        "<tool_use_error>No changes to make: old_string and new_string are exactly the same.</tool_use_error>"
    );
    let o = ws
        .edit(json!({"file_path": "src/a.txt", "old_string": "line one", "new_string": "line ONE"}))
        .await;
    assert!(!o.is_error);
    assert_eq!(
        text(&o),
        "The file src/a.txt has been updated successfully."
    );
    let s = o.structured.unwrap();
    assert_eq!(
        s["structuredPatch"],
        json!([{"oldStart":1,"oldLines":4,"newStart":1,"newLines":4,
            "lines":["-line one","+line ONE"," \tindented two"," line three dup"," line three dup"]}])
    );
    let o = ws
        .edit(json!({"file_path": "src/a.txt", "old_string": "dup", "new_string": "DUP", "replace_all": true}))
        .await;
    assert_eq!(
        text(&o),
        "The file src/a.txt has been updated. All occurrences were successfully replaced."
    );
    assert_eq!(
        std::fs::read_to_string(ws.path("src/a.txt")).unwrap(),
        "line ONE\n\tindented two\nline three DUP\nline three DUP\n"
    );
    let o = ws
        .edit(json!({"file_path": "missing.txt", "old_string": "a", "new_string": "b"}))
        .await;
    assert!(o.is_error && text(&o).starts_with("File does not exist."));
}

#[tokio::test]
async fn edit_keeps_crlf() {
    let ws = Ws::new();
    std::fs::write(ws.path("win.txt"), "alpha\r\nbeta\r\ngamma\r\n").unwrap();
    ws.read(json!({"file_path": "win.txt"})).await;
    let o = ws
        .edit(json!({"file_path": "win.txt", "old_string": "alpha\nbeta", "new_string": "ALPHA\nBETA"}))
        .await;
    assert!(!o.is_error, "{}", text(&o));
    assert_eq!(
        std::fs::read(ws.path("win.txt")).unwrap(),
        b"ALPHA\r\nBETA\r\ngamma\r\n"
    );
}

#[tokio::test]
async fn changes_are_tracked_against_the_first_version() {
    let ws = Ws::new();
    ws.read(json!({"file_path": "src/a.txt"})).await;
    ws.edit(json!({"file_path": "src/a.txt", "old_string": "line one", "new_string": "first"}))
        .await;
    ws.edit(json!({"file_path": "src/a.txt", "old_string": "first", "new_string": "second"}))
        .await;
    ws.write(json!({"file_path": "notes.md", "content": "# notes\n"}))
        .await;
    let changes = ws.ctx.changes.changes();
    assert_eq!(changes.len(), 2);
    let a = changes.iter().find(|c| c.path == "src/a.txt").unwrap();
    assert_eq!(a.kind, ChangeKind::Modified);
    assert!(a.diff.contains("-line one\n+second\n"), "{}", a.diff);
    let n = changes.iter().find(|c| c.path == "notes.md").unwrap();
    assert_eq!(n.kind, ChangeKind::Created);
    assert!(n.diff.contains("+# notes"));
}

fn mkfifo(path: &std::path::Path) {
    let ok = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap()
        .success();
    assert!(ok, "mkfifo failed");
}

#[tokio::test]
async fn special_files_are_refused_without_blocking() {
    let ws = Ws::new();
    let fifo = ws.path("pipe");
    mkfifo(&fifo);
    let sock_path = ws.path("sock");
    let _sock = std::os::unix::net::UnixListener::bind(&sock_path).unwrap();
    let cases = [("pipe", "FIFO"), ("sock", "socket")];
    for (name, kind) in cases {
        let fut = async {
            let r = ws.read(json!({"file_path": name})).await;
            let w = ws.write(json!({"file_path": name, "content": "x"})).await;
            let e = ws
                .edit(json!({"file_path": name, "old_string": "a", "new_string": "b"}))
                .await;
            (r, w, e)
        };
        let (r, w, e) = tokio::time::timeout(std::time::Duration::from_secs(10), fut)
            .await
            .expect("a tool blocked on a special file");
        for out in [r, w, e] {
            assert!(out.is_error, "{name}: {}", text(&out));
            assert!(text(&out).contains(kind), "{name}: {}", text(&out));
        }
    }
    // The FIFO is still a FIFO (not replaced by a regular file).
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
}

#[tokio::test]
async fn a_device_reached_through_a_symlink_is_refused() {
    let ws = Ws::new();
    std::os::unix::fs::symlink("/dev/zero", ws.path("zero")).unwrap();
    // The guard refuses /dev (outside the workspace) already; the message is an error either way.
    let out = ws.read(json!({"file_path": "zero"})).await;
    assert!(out.is_error, "{}", text(&out));
}

#[tokio::test]
async fn write_and_edit_leave_a_read_only_file_alone() {
    let ws = Ws::new();
    let p = ws.path("locked.txt");
    std::fs::write(&p, "original\n").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o444)).unwrap();
    let r = ws.read(json!({"file_path": "locked.txt"})).await;
    assert!(!r.is_error);
    let w = ws
        .write(json!({"file_path": "locked.txt", "content": "replaced\n"}))
        .await;
    assert!(w.is_error && text(&w).contains("read-only"), "{}", text(&w));
    let e = ws
        .edit(json!({"file_path": "locked.txt", "old_string": "original", "new_string": "x"}))
        .await;
    assert!(e.is_error, "{}", text(&e));
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "original\n");
    assert_eq!(
        std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
        0o444
    );
}
