//! Read of a notebook, as Claude Code shows one: each cell as
//! `<cell id="…">[<cell_type>…</cell_type>][<language>…</language>]source</cell id="…">`, its
//! outputs after it (text; small images as image blocks), adjacent text joined into one block.

use std::path::Path;

use serde_json::{Value, json};
use skiff_protocol::{ContentBlock, ImageBlock, ImageSource};

use super::{Notebook, NotebookError, join_text, source_text};
use crate::context::ToolContext;
use crate::tool::ToolOutput;
use crate::truncate::{group, truncate_middle};

/// Outputs of one cell longer than this (in characters of text) are replaced by a pointer.
const MAX_OUTPUT_CHARS: usize = 10_000;
/// Largest image output shown, in bytes of base64.
const MAX_IMAGE_B64: usize = 512 * 1024;
/// Most image data shown for a whole notebook, in bytes of base64.
const MAX_IMAGES_B64: usize = 3 * 1024 * 1024;

/// One output of a code cell, as shown.
#[derive(Debug, Clone, PartialEq)]
struct Output {
    kind: String,
    text: String,
    image: Option<(String, String)>,
}

/// Read's answer for a notebook file: the cells with their outputs, or a clear error for a
/// file that is not an nbformat 4 notebook. Records the file as read (for NotebookEdit).
pub fn read_notebook(
    file_path: &str,
    path: &Path,
    bytes: &[u8],
    meta: &std::fs::Metadata,
    ctx: &ToolContext,
) -> ToolOutput {
    let text = String::from_utf8_lossy(bytes);
    let notebook = match Notebook::parse(&text) {
        Ok(nb) => nb,
        Err(NotebookError::NotJson(e)) => {
            return ToolOutput::error(format!(
                "{file_path} is not a valid Jupyter notebook: it is not JSON ({e}). Use Bash \
                 (e.g. head) to look at its raw text."
            ));
        }
        Err(NotebookError::NotNotebook(why)) => {
            return ToolOutput::error(format!(
                "{file_path} is not a Jupyter notebook skiff can read: {why}."
            ));
        }
    };
    ctx.files.record(path, bytes, meta);
    let language = notebook.language();
    let mut blocks: Vec<ContentBlock> = Vec::new();
    let mut structured = Vec::new();
    let mut image_budget = MAX_IMAGES_B64;
    for (i, cell) in notebook.cells().iter().enumerate() {
        let id = cell
            .get("id")
            .and_then(Value::as_str)
            .map_or_else(|| format!("cell-{i}"), str::to_owned);
        let cell_type = cell
            .get("cell_type")
            .and_then(Value::as_str)
            .unwrap_or("code");
        let source = source_text(cell);
        let mut tags = String::new();
        if cell_type != "code" {
            tags.push_str(&format!("<cell_type>{cell_type}</cell_type>"));
        } else if language != "python" {
            tags.push_str(&format!("<language>{language}</language>"));
        }
        push_text(
            &mut blocks,
            format!("<cell id=\"{id}\">{tags}{source}</cell id=\"{id}\">"),
        );
        let outputs = if cell_type == "code" {
            outputs(cell, i, file_path)
        } else {
            Vec::new()
        };
        for o in &outputs {
            if !o.text.is_empty() {
                push_text(&mut blocks, format!("\n{}", o.text));
            }
            if let Some((media_type, data)) = &o.image {
                if data.len() <= MAX_IMAGE_B64 && data.len() <= image_budget {
                    image_budget -= data.len();
                    blocks.push(ContentBlock::Image(ImageBlock {
                        source: ImageSource::Base64 {
                            media_type: media_type.clone(),
                            data: data.clone(),
                        },
                        cache_control: None,
                    }));
                } else {
                    push_text(
                        &mut blocks,
                        format!(
                            "\n[{media_type} output of {} bytes (base64) not shown: too large]",
                            group(data.len())
                        ),
                    );
                }
            }
        }
        let mut entry = json!({"cellType": cell_type, "source": source, "cell_id": id});
        if cell_type == "code" {
            entry["language"] = json!(language);
            if let Some(n) = cell.get("execution_count").and_then(Value::as_u64) {
                entry["execution_count"] = json!(n);
            }
            if !outputs.is_empty() {
                entry["outputs"] = outputs
                    .iter()
                    .map(|o| {
                        let mut v = json!({"output_type": o.kind, "text": o.text});
                        if let Some((media_type, _)) = &o.image {
                            v["image"] = json!({"media_type": media_type});
                        }
                        v
                    })
                    .collect();
            }
        }
        structured.push(entry);
    }
    if blocks.is_empty() {
        blocks.push(ContentBlock::text(
            "<system-reminder>Warning: the notebook exists but has no cells.</system-reminder>",
        ));
    }
    ToolOutput::blocks(blocks).with_structured(json!({
        "type": "notebook",
        "file": {"filePath": path.display().to_string(), "cells": structured},
    }))
}

/// Append text, joined to the previous block when that is text too.
fn push_text(blocks: &mut Vec<ContentBlock>, text: String) {
    if let Some(ContentBlock::Text(last)) = blocks.last_mut() {
        last.text.push('\n');
        last.text.push_str(&text);
    } else {
        blocks.push(ContentBlock::text(text));
    }
}

/// The outputs of code cell `index`: text of streams, results and errors, and png/jpeg images.
/// Outputs whose text is too long are replaced by a pointer to them.
fn outputs(cell: &Value, index: usize, file_path: &str) -> Vec<Output> {
    let Some(list) = cell.get("outputs").and_then(Value::as_array) else {
        return Vec::new();
    };
    let shown: Vec<Output> = list.iter().filter_map(output).collect();
    let chars: usize = shown.iter().map(|o| o.text.chars().count()).sum();
    if chars > MAX_OUTPUT_CHARS {
        return vec![Output {
            kind: "stream".into(),
            text: format!(
                "Outputs are too large to include. Use Bash with: cat {file_path} | jq \
                 '.cells[{index}].outputs'"
            ),
            image: None,
        }];
    }
    shown
}

fn output(o: &Value) -> Option<Output> {
    let kind = o.get("output_type").and_then(Value::as_str)?.to_owned();
    let (text, image) = match kind.as_str() {
        "stream" => (join_text(o.get("text")), None),
        "execute_result" | "display_data" => {
            let data = o.get("data");
            let text = join_text(data.and_then(|d| d.get("text/plain")));
            let image = ["image/png", "image/jpeg"].iter().find_map(|t| {
                let b64 = join_text(data.and_then(|d| d.get(*t)));
                (!b64.is_empty()).then(|| {
                    let clean: String = b64.chars().filter(|c| !c.is_whitespace()).collect();
                    ((*t).to_owned(), clean)
                })
            });
            (text, image)
        }
        "error" => {
            let name = o.get("ename").and_then(Value::as_str).unwrap_or("Error");
            let value = o.get("evalue").and_then(Value::as_str).unwrap_or("");
            let trace: Vec<String> = o
                .get("traceback")
                .and_then(Value::as_array)
                .map(|t| t.iter().filter_map(Value::as_str).map(strip_ansi).collect())
                .unwrap_or_default();
            (format!("{name}: {value}\n{}", trace.join("\n")), None)
        }
        _ => return None,
    };
    Some(Output {
        kind,
        text: truncate_middle(&text, MAX_OUTPUT_CHARS * 3),
        image,
    })
}

/// Text without ANSI colour codes (tracebacks carry them).
fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_codes_are_stripped() {
        assert_eq!(
            strip_ansi("\u{1b}[0;31mValueError\u{1b}[0m: bad"),
            "ValueError: bad"
        );
    }
}
