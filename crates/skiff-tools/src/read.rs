//! The Read tool: numbered lines (`N<TAB>line`), offset/limit, partial views of large files,
//! images as image blocks, clear messages for binary files, directories and missing files.

use async_trait::async_trait;
use base64::Engine;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use skiff_protocol::{ContentBlock, ImageBlock, ImageSource};

use crate::context::ToolContext;
use crate::tool::{ToolOutput, TypedTool};
use crate::truncate::group;

/// Largest file Read loads at all.
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// Largest image sent to the model (the API's limit is 5 MB of base64 per image).
const MAX_IMAGE_BYTES: u64 = 3_750_000;

/// Input of the Read tool.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadInput {
    /// Absolute, or relative to the workspace root.
    pub file_path: String,
    /// First line (1-based).
    #[schemars(range(min = 0))]
    pub offset: Option<u64>,
    /// Number of lines (default 2000).
    #[schemars(range(min = 1))]
    pub limit: Option<u64>,
    /// PDF page range, e.g. "1-5" (PDFs are not supported yet).
    pub pages: Option<String>,
    /// Read a whole file past the size limit.
    pub allow_large: Option<bool>,
}

/// The Read tool.
#[derive(Debug, Default)]
pub struct ReadTool;

/// The text Claude Code answers for a missing file.
pub fn missing_file(ctx: &ToolContext) -> String {
    format!(
        "File does not exist. Note: your current working directory is {}.",
        ctx.root().display()
    )
}

/// [`missing_file`] for `path`, with what exists near it (the nearest existing directory's
/// entries, the closest existing paths), so the model can pick a real path.
pub async fn missing_file_help(ctx: &ToolContext, path: &std::path::Path) -> String {
    let help = crate::near_paths::missing_path_help_async(&ctx.guard, path).await;
    format!("{}{help}", missing_file(ctx))
}

#[async_trait]
impl TypedTool for ReadTool {
    type Input = ReadInput;
    const NAME: &'static str = "Read";
    const SCHEMA: Option<&'static str> = Some(skiff_protocol::compact_json!(include_str!(
        "schemas/Read.json"
    )));

    fn description(&self) -> &str {
        "Read a file: lines numbered from 1 as `N<TAB>line`, up to 2000 unless `offset` and \
         `limit` pick a part. Images (png, jpeg, gif, webp) come back as images. Read a file \
         before editing it; list directories with Glob or LS."
    }

    fn is_read_only(&self) -> bool {
        true
    }

    async fn run(&self, input: ReadInput, ctx: &ToolContext) -> ToolOutput {
        let path = match ctx.guard.resolve_existing(&input.file_path) {
            Ok(p) => p,
            Err(e) => return ToolOutput::tool_use_error(e.to_string()),
        };
        if input.limit == Some(0) {
            return ToolOutput::tool_use_error("limit must be greater than 0");
        }
        let meta = match tokio::fs::metadata(&path).await {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return ToolOutput::error(missing_file_help(ctx, &path).await);
            }
            Err(e) => return ToolOutput::error(format!("Cannot read {}: {e}", input.file_path)),
        };
        if meta.is_dir() {
            return ToolOutput::error(format!(
                "{} is a directory, not a file. Use LS or Glob to list its contents.",
                input.file_path
            ));
        }
        if meta.len() > MAX_FILE_BYTES {
            return ToolOutput::error(format!(
                "{} is too large to read ({} bytes). Use Grep to search it, or Bash with head, \
                 tail or sed -n to look at parts of it.",
                input.file_path,
                group(meta.len() as usize)
            ));
        }
        if let Some(kind) = crate::fs_safe::special_kind(&meta.file_type()) {
            return ToolOutput::error(format!(
                "{} is {kind}, not a regular file; Read reads regular files only.",
                input.file_path
            ));
        }
        let guard = std::sync::Arc::clone(&ctx.guard);
        let target = path.clone();
        let read = tokio::task::spawn_blocking(move || {
            crate::fs_safe::read_regular(&target, &guard, MAX_FILE_BYTES)
        })
        .await;
        let (bytes, meta) = match read {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => {
                return ToolOutput::error(format!("Cannot read {}: {e}", input.file_path));
            }
            Err(e) => return ToolOutput::error(format!("Cannot read {}: {e}", input.file_path)),
        };
        if let Some(media_type) = image_type(&bytes) {
            return image(&input.file_path, media_type, &bytes);
        }
        if is_pdf(&bytes) {
            return ToolOutput::error(format!(
                "{} is a PDF; reading PDFs is not supported yet. Use Bash (e.g. pdftotext) to \
                 extract its text.",
                input.file_path
            ));
        }
        if looks_binary(&bytes) {
            return ToolOutput::error(format!(
                "{} appears to be a binary file ({} bytes); Read shows text only. Use Bash (for \
                 example `file` or `xxd | head`) to inspect it.",
                input.file_path,
                group(bytes.len())
            ));
        }
        // An editor's buffer, unsaved changes included, when the front end holds the files.
        let bytes =
            crate::file_access::current_text(ctx.file_access.as_deref(), &path, bytes).await;
        if crate::notebook::is_notebook(&path) {
            return crate::notebook::render::read_notebook(
                &input.file_path,
                &path,
                &bytes,
                &meta,
                ctx,
            );
        }
        ctx.files.record(&path, &bytes, &meta);
        render_text(&input, &path, &bytes, meta.len(), ctx)
    }
}

fn render_text(
    input: &ReadInput,
    path: &std::path::Path,
    bytes: &[u8],
    size: u64,
    ctx: &ToolContext,
) -> ToolOutput {
    let text = String::from_utf8_lossy(bytes);
    let file_path = path.display().to_string();
    if text.is_empty() {
        return ToolOutput::text(
            "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>",
        )
        .with_structured(json!({"type":"text","file":{"filePath":file_path,"content":"",
            "numLines":0,"startLine":1,"totalLines":0}}));
    }
    let lines: Vec<&str> = text.split('\n').collect();
    let total = lines.len();
    let start = input.offset.unwrap_or(1).max(1) as usize;
    if start > total {
        return ToolOutput::text(format!(
            "<system-reminder>Warning: the file exists but is shorter than the provided offset \
             ({start}). The file has {total} lines.</system-reminder>"
        ));
    }
    let explicit = input.offset.is_some() || input.limit.is_some();
    let limit = input
        .limit
        .map_or(ctx.config.read_max_lines, |l| l as usize);
    // A whole-file read of a large file, or any read whose output would be huge, stops at the
    // byte cap; the notice tells the model how to continue.
    let byte_cap = if input.allow_large == Some(true) {
        usize::MAX
    } else {
        ctx.config.read_max_bytes as usize
    };
    let mut out = String::new();
    let mut raw = String::new();
    let mut shown = 0usize;
    for (i, line) in lines.iter().enumerate().skip(start - 1).take(limit) {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if shown > 0 && out.len() + line.len() > byte_cap {
            break;
        }
        if shown > 0 {
            out.push('\n');
            raw.push('\n');
        }
        out.push_str(&(i + 1).to_string());
        out.push('\t');
        out.push_str(line);
        raw.push_str(line);
        shown += 1;
    }
    let last = start + shown - 1;
    let cut_by_size = last < total && shown < limit;
    let cut_by_lines = last < total && !explicit && shown == limit;
    if cut_by_size || cut_by_lines {
        let why = if cut_by_size {
            format!("the file is {} bytes", group(size as usize))
        } else {
            format!("the file has {} lines", group(total))
        };
        out.push_str(&format!(
            "\n\n<system-reminder>PARTIAL view: {why}; showing lines {start}-{last} of {total}. \
             To read more, call Read again with offset={} (and a limit), or use Grep to find the \
             part you need.</system-reminder>",
            last + 1
        ));
    }
    ToolOutput::text(out).with_structured(json!({"type":"text","file":{
        "filePath": file_path, "content": raw, "numLines": shown, "startLine": start,
        "totalLines": total}}))
}

fn image(file_path: &str, media_type: &str, bytes: &[u8]) -> ToolOutput {
    if bytes.len() as u64 > MAX_IMAGE_BYTES {
        return ToolOutput::error(format!(
            "{file_path} is an image of {} bytes, larger than the {} bytes that can be sent to \
             the model. Resize it first (e.g. with Bash and ImageMagick).",
            group(bytes.len()),
            group(MAX_IMAGE_BYTES as usize)
        ));
    }
    let data = base64::engine::general_purpose::STANDARD.encode(bytes);
    ToolOutput::blocks(vec![ContentBlock::Image(ImageBlock {
        source: ImageSource::Base64 {
            media_type: media_type.to_owned(),
            data,
        },
        cache_control: None,
    })])
    .with_structured(
        json!({"type":"image","file":{"filePath":file_path,"type":media_type,
        "originalSize":bytes.len()}}),
    )
}

/// The media type of a png/jpeg/gif/webp by its magic bytes.
fn image_type(b: &[u8]) -> Option<&'static str> {
    if b.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if b.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if b.starts_with(b"GIF87a") || b.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if b.len() >= 12 && &b[..4] == b"RIFF" && &b[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

fn is_pdf(b: &[u8]) -> bool {
    b.starts_with(b"%PDF-")
}

/// Binary when the first 8 KiB hold a NUL byte, or mostly invalid UTF-8.
fn looks_binary(b: &[u8]) -> bool {
    let head = &b[..b.len().min(8192)];
    if head.contains(&0) {
        return true;
    }
    match std::str::from_utf8(head) {
        Ok(_) => false,
        Err(e) => {
            // A multi-byte character cut at the 8 KiB boundary is fine.
            if e.error_len().is_none() {
                return false;
            }
            let bad = String::from_utf8_lossy(head).matches('\u{FFFD}').count();
            bad * 10 > head.len().max(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_detection() {
        assert!(looks_binary(b"abc\0def"));
        assert!(!looks_binary("héllo".as_bytes()));
        assert!(
            !looks_binary(b"latin1 caf\xe9 once"),
            "a stray invalid byte is still text"
        );
        assert!(looks_binary(&[0xff; 100]));
        assert_eq!(image_type(b"\x89PNG\r\n\x1a\nrest"), Some("image/png"));
        assert_eq!(image_type(b"RIFF1234WEBPVP8 "), Some("image/webp"));
        assert_eq!(image_type(b"text"), None);
    }
}
