//! Notebooks on disk: Read shows cells with their outputs as Claude Code does; NotebookEdit
//! replaces, inserts and deletes cells, keeps the rest of the file as it was, follows the
//! read-before-write rule, records the change, and refuses bad input clearly.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use serde_json::{Value, json};
use skiff_protocol::{ContentBlock, ToolResultContent};
use skiff_tools::notebook::edit::NotebookEditTool;
use skiff_tools::read::ReadTool;
use skiff_tools::{Tool, ToolContext, ToolOutput, Typed};

/// A 1x1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/// A notebook as Jupyter writes one: one-space indent, sorted keys, lists of lines, a final
/// newline.
fn sample() -> String {
    let nb = json!({
        "cells": [
            {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": ["# Analysis\n", "Some text"]},
            {"cell_type": "code", "execution_count": 3, "id": "calc", "metadata": {"tags": ["keep"]},
             "outputs": [
                {"name": "stdout", "output_type": "stream", "text": ["42\n"]},
                {"data": {"image/png": PNG, "text/plain": ["<Figure>"]}, "metadata": {}, "output_type": "display_data"}
             ],
             "source": ["x = 6 * 7\n", "print(x)"]},
            {"cell_type": "code", "execution_count": 4, "id": "boom", "metadata": {},
             "outputs": [{"ename": "ZeroDivisionError", "evalue": "division by zero", "output_type": "error",
                          "traceback": ["\u{1b}[0;31m---------\u{1b}[0m", "\u{1b}[0;31mZeroDivisionError\u{1b}[0m: division by zero"]}],
             "source": "1/0"}
        ],
        "metadata": {"kernelspec": {"display_name": "Python 3", "name": "python3"}, "language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5
    });
    let mut buf = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b" ");
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
    serde::Serialize::serialize(&nb, &mut ser).unwrap();
    String::from_utf8(buf).unwrap() + "\n"
}

struct Ws {
    _dir: tempfile::TempDir,
    ctx: ToolContext,
    nb: PathBuf,
}

fn workspace(text: &str) -> Ws {
    let dir = tempfile::tempdir().unwrap();
    let nb = dir.path().join("analysis.ipynb");
    std::fs::write(&nb, text).unwrap();
    let ctx = ToolContext::new(dir.path()).unwrap();
    Ws {
        nb: std::fs::canonicalize(&nb).unwrap(),
        _dir: dir,
        ctx,
    }
}

impl Ws {
    async fn read(&self) -> ToolOutput {
        Typed::new(ReadTool)
            .call(
                json!({"file_path": self.nb.display().to_string()}),
                &self.ctx,
            )
            .await
    }

    async fn edit(&self, mut input: Value) -> ToolOutput {
        input["notebook_path"] = json!(self.nb.display().to_string());
        Typed::new(NotebookEditTool).call(input, &self.ctx).await
    }

    fn doc(&self) -> Value {
        serde_json::from_str(&std::fs::read_to_string(&self.nb).unwrap()).unwrap()
    }
}

#[tokio::test]
async fn read_shows_cells_with_their_outputs() {
    let ws = workspace(&sample());
    let out = ws.read().await;
    assert!(!out.is_error, "{}", out.text_content());
    let ToolResultContent::Blocks(blocks) = &out.content else {
        panic!("blocks expected");
    };
    assert_eq!(blocks.len(), 3, "{blocks:?}");
    let ContentBlock::Text(first) = &blocks[0] else {
        panic!()
    };
    assert_eq!(
        first.text,
        "<cell id=\"intro\"><cell_type>markdown</cell_type># Analysis\nSome text</cell id=\"intro\">\n\
         <cell id=\"calc\">x = 6 * 7\nprint(x)</cell id=\"calc\">\n\n42\n\n\n<Figure>"
    );
    let ContentBlock::Image(img) = &blocks[1] else {
        panic!("an image block: {:?}", blocks[1])
    };
    assert!(
        matches!(&img.source, skiff_protocol::ImageSource::Base64 { media_type, data } if media_type == "image/png" && data == PNG)
    );
    let ContentBlock::Text(last) = &blocks[2] else {
        panic!()
    };
    assert_eq!(
        last.text,
        "<cell id=\"boom\">1/0</cell id=\"boom\">\n\nZeroDivisionError: division by zero\n---------\nZeroDivisionError: division by zero"
    );
    let s = out.structured.unwrap();
    assert_eq!(s["type"], "notebook");
    assert_eq!(s["file"]["cells"].as_array().unwrap().len(), 3);
    assert_eq!(s["file"]["cells"][1]["cell_id"], "calc");
    assert_eq!(s["file"]["cells"][1]["execution_count"], 3);
}

#[tokio::test]
async fn read_names_cells_without_ids_by_index_and_other_languages() {
    let nb = json!({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source": "fn main() {}", "execution_count": null},
                              {"cell_type": "raw", "metadata": {}, "source": "raw text"}],
                    "metadata": {"language_info": {"name": "rust"}}, "nbformat": 4, "nbformat_minor": 2});
    let ws = workspace(&nb.to_string());
    let out = ws.read().await;
    assert_eq!(
        out.text_content(),
        "<cell id=\"cell-0\"><language>rust</language>fn main() {}</cell id=\"cell-0\">\n\
         <cell id=\"cell-1\"><cell_type>raw</cell_type>raw text</cell id=\"cell-1\">"
    );
}

#[tokio::test]
async fn read_points_to_outputs_too_large_to_show() {
    let nb = json!({"cells": [{"cell_type": "code", "execution_count": 1, "id": "big", "metadata": {},
                               "outputs": [{"name": "stdout", "output_type": "stream", "text": "x".repeat(20_000)}],
                               "source": "print('x' * 20000)"}],
                    "metadata": {}, "nbformat": 4, "nbformat_minor": 5});
    let ws = workspace(&nb.to_string());
    let t = ws.read().await.text_content();
    assert!(
        t.contains("Outputs are too large to include. Use Bash with: cat "),
        "{t}"
    );
    assert!(t.contains("| jq '.cells[0].outputs'"), "{t}");
    assert!(t.len() < 1_000);
}

#[tokio::test]
async fn read_of_a_bad_notebook_is_a_clear_error() {
    let ws = workspace("{\"cells\": [");
    let out = ws.read().await;
    assert!(out.is_error);
    assert!(
        out.text_content()
            .contains("is not a valid Jupyter notebook: it is not JSON")
    );
    let ws = workspace(r#"{"nbformat": 3, "nbformat_minor": 0, "worksheets": []}"#);
    let out = ws.read().await;
    assert!(out.is_error);
    assert!(
        out.text_content().contains("nbformat 3"),
        "{}",
        out.text_content()
    );
}

#[tokio::test]
async fn replace_keeps_the_rest_of_the_notebook_and_clears_outputs() {
    let original = sample();
    let ws = workspace(&original);
    ws.read().await;
    let out = ws
        .edit(json!({"cell_id": "calc", "new_source": "x = 7 * 6\nprint(x)\n"}))
        .await;
    assert!(!out.is_error, "{}", out.text_content());
    assert_eq!(
        out.text_content(),
        "Updated cell calc with x = 7 * 6\nprint(x)\n"
    );
    let after = std::fs::read_to_string(&ws.nb).unwrap();
    let doc = ws.doc();
    let cell = &doc["cells"][1];
    assert_eq!(cell["source"], json!(["x = 7 * 6\n", "print(x)\n"]));
    assert_eq!(cell["outputs"], json!([]));
    assert_eq!(cell["execution_count"], Value::Null);
    assert_eq!(cell["metadata"], json!({"tags": ["keep"]}));
    // Everything else is byte for byte as it was: only the edited cell's lines differ.
    let before: Vec<&str> = original.lines().collect();
    let now: Vec<&str> = after.lines().collect();
    assert_eq!(before[..13], now[..13]);
    assert_eq!(before[before.len() - 12..], now[now.len() - 12..]);
    assert!(after.ends_with("}\n"));
    let s = out.structured.unwrap();
    assert_eq!(s["edit_mode"], "replace");
    assert_eq!(s["cell_type"], "code");
    assert_eq!(s["original_file"], original);
    // The change log has it, and a second edit needs no new Read.
    let changes = ws.ctx.changes.changes();
    assert_eq!(changes.len(), 1);
    assert!(
        changes[0].diff.contains("+    \"x = 7 * 6\\n\","),
        "{}",
        changes[0].diff
    );
    let again = ws
        .edit(json!({"cell_id": "cell-2", "new_source": "1/1"}))
        .await;
    assert_eq!(again.text_content(), "Updated cell cell-2 with 1/1");
    assert_eq!(ws.doc()["cells"][2]["source"], "1/1");
}

#[tokio::test]
async fn replace_may_change_the_cell_type() {
    let ws = workspace(&sample());
    ws.read().await;
    let out = ws
        .edit(json!({"cell_id": "calc", "new_source": "Now prose", "cell_type": "markdown"}))
        .await;
    assert!(!out.is_error, "{}", out.text_content());
    let cell = &ws.doc()["cells"][1];
    assert_eq!(cell["cell_type"], "markdown");
    assert!(cell.get("outputs").is_none() && cell.get("execution_count").is_none());
    let out = ws
        .edit(json!({"cell_id": "intro", "new_source": "print(1)", "cell_type": "code"}))
        .await;
    assert!(!out.is_error);
    let cell = &ws.doc()["cells"][0];
    assert_eq!(cell["outputs"], json!([]));
    assert_eq!(cell["execution_count"], Value::Null);
}

#[tokio::test]
async fn insert_after_a_cell_or_at_the_start_and_delete() {
    let ws = workspace(&sample());
    ws.read().await;
    let out = ws
        .edit(json!({"cell_id": "intro", "new_source": "## Method", "cell_type": "markdown", "edit_mode": "insert"}))
        .await;
    assert!(!out.is_error, "{}", out.text_content());
    let doc = ws.doc();
    let new = &doc["cells"][1];
    let id = new["id"].as_str().unwrap();
    assert!(
        id.len() == 8 && id.bytes().all(|b| b.is_ascii_hexdigit()),
        "{id}"
    );
    assert_eq!(
        out.text_content(),
        format!("Inserted cell {id} with ## Method")
    );
    assert_eq!(
        new,
        &json!({"cell_type": "markdown", "id": id, "metadata": {}, "source": ["## Method"]})
    );
    assert_eq!(doc["cells"].as_array().unwrap().len(), 4);

    let out = ws
        .edit(json!({"new_source": "import os", "cell_type": "code", "edit_mode": "insert"}))
        .await;
    assert!(!out.is_error);
    let first = &ws.doc()["cells"][0];
    assert_eq!(first["source"], json!(["import os"]));
    assert_eq!(first["outputs"], json!([]));
    assert_eq!(first["execution_count"], Value::Null);

    let out = ws
        .edit(json!({"cell_id": "boom", "new_source": "", "edit_mode": "delete"}))
        .await;
    assert_eq!(out.text_content(), "Deleted cell boom");
    let ids: Vec<String> = ws.doc()["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids.len(), 4);
    assert!(!ids.contains(&"boom".to_owned()));
}

#[tokio::test]
async fn old_notebooks_without_ids_get_no_ids() {
    let nb = json!({"cells": [{"cell_type": "markdown", "metadata": {}, "source": "a"}],
                    "metadata": {}, "nbformat": 4, "nbformat_minor": 2});
    let ws = workspace(&nb.to_string());
    ws.read().await;
    let out = ws
        .edit(json!({"cell_id": "cell-0", "new_source": "b", "cell_type": "markdown", "edit_mode": "insert"}))
        .await;
    assert_eq!(out.text_content(), "Inserted cell cell-1 with b");
    let doc = ws.doc();
    assert!(doc["cells"][1].get("id").is_none());
    // A file on one line stays on one line.
    assert!(!std::fs::read_to_string(&ws.nb).unwrap().contains('\n'));
}

#[tokio::test]
async fn bad_edits_are_refused_and_change_nothing() {
    let original = sample();
    let ws = workspace(&original);
    let out = ws.edit(json!({"cell_id": "calc", "new_source": "x"})).await;
    assert_eq!(
        out.text_content(),
        "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>"
    );
    ws.read().await;
    let cases = [
        (
            json!({"cell_id": "nope", "new_source": "x"}),
            "Cell with ID \"nope\" not found in notebook.",
        ),
        (
            json!({"cell_id": "cell-9", "new_source": "x"}),
            "Cell with index 9 does not exist in notebook.",
        ),
        (
            json!({"new_source": "x"}),
            "Cell ID must be specified when not inserting a new cell.",
        ),
        (
            json!({"new_source": "x", "edit_mode": "delete"}),
            "Cell ID must be specified when not inserting a new cell.",
        ),
        (
            json!({"cell_id": "calc", "new_source": "x", "edit_mode": "insert"}),
            "Cell type is required when using edit_mode=insert.",
        ),
        (
            json!({"cell_id": "calc", "new_source": "x", "edit_mode": "append"}),
            "`edit_mode` must be one of",
        ),
        (
            json!({"cell_id": "calc", "new_source": "x", "cell_type": "raw"}),
            "`cell_type` must be one of",
        ),
    ];
    for (input, expected) in cases {
        let out = ws.edit(input.clone()).await;
        assert!(out.is_error, "{input}");
        assert!(
            out.text_content().contains(expected),
            "{input}: {}",
            out.text_content()
        );
    }
    assert_eq!(std::fs::read_to_string(&ws.nb).unwrap(), original);
    assert!(ws.ctx.changes.changes().is_empty());

    // Changed on disk since the Read.
    std::fs::write(&ws.nb, original.replace("Some text", "Other text")).unwrap();
    let out = ws.edit(json!({"cell_id": "calc", "new_source": "x"})).await;
    assert!(
        out.text_content()
            .contains("File has been unexpectedly modified"),
        "{}",
        out.text_content()
    );
}

#[tokio::test]
async fn files_that_are_not_notebooks_are_refused() {
    let ws = workspace("{\"cells\": [");
    // A file that fails to parse can still be "read" as text by a Bash cat; mark it read.
    let meta = std::fs::metadata(&ws.nb).unwrap();
    ws.ctx.files.record(&ws.nb, b"{\"cells\": [", &meta);
    let out = ws.edit(json!({"cell_id": "a", "new_source": "x"})).await;
    assert_eq!(
        out.text_content(),
        "<tool_use_error>Notebook is not valid JSON.</tool_use_error>"
    );

    let dir = ws.nb.parent().unwrap();
    let txt = dir.join("notes.txt");
    std::fs::write(&txt, "hi").unwrap();
    let out = Typed::new(NotebookEditTool)
        .call(
            json!({"notebook_path": txt.display().to_string(), "cell_id": "a", "new_source": "x"}),
            &ws.ctx,
        )
        .await;
    assert!(
        out.text_content()
            .contains("File must be a Jupyter notebook (.ipynb file).")
    );
    let out = Typed::new(NotebookEditTool)
        .call(json!({"notebook_path": dir.join("missing.ipynb").display().to_string(), "cell_id": "a", "new_source": "x"}), &ws.ctx)
        .await;
    assert_eq!(
        out.text_content(),
        "<tool_use_error>Notebook file does not exist.</tool_use_error>"
    );
}
