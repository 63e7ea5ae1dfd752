//! The Write tool: create or overwrite a whole file, atomically, after the read-before-write check.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::context::ToolContext;
use crate::patch::structured_patch;
use crate::tool::{ToolOutput, TypedTool};

/// Suffix Claude Code 2.1 appends to successful writes.
pub(crate) const STATE_CURRENT: &str =
    " (file state is current in your context \u{2014} no need to Read it back)";

/// Input of the Write tool.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteInput {
    /// Absolute, or relative to the workspace root.
    pub file_path: String,
    /// The file's complete content.
    pub content: String,
}

/// The Write tool.
#[derive(Debug, Default)]
pub struct WriteTool;

/// What is on disk at a path before a change.
pub(crate) enum Existing {
    /// Nothing there.
    Missing,
    /// A text file, already checked against the read-before-write rule.
    File(String),
}

/// What a read-before-write refusal shows of the file.
#[derive(Debug, Clone, Copy)]
pub(crate) enum OnRefusal<'a> {
    /// Only the refusal (notebooks: their JSON is not what Read shows).
    Plain,
    /// The file's text; for a large file the part around the nearest match of this text (an
    /// Edit's `old_string`), when given.
    Show(Option<&'a str>),
}

/// Load the current file for a change and apply the read-before-write rule.
pub(crate) async fn load_for_change(
    path: &std::path::Path,
    file_path: &str,
    on_refusal: OnRefusal<'_>,
    ctx: &ToolContext,
) -> Result<Existing, ToolOutput> {
    let meta = match tokio::fs::metadata(path).await {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Existing::Missing),
        Err(e) => return Err(ToolOutput::error(format!("Cannot access {file_path}: {e}"))),
    };
    if meta.is_dir() {
        return Err(ToolOutput::tool_use_error(format!(
            "{file_path} is a directory, not a file."
        )));
    }
    if let Some(kind) = crate::fs_safe::special_kind(&meta.file_type()) {
        return Err(ToolOutput::error(format!(
            "{file_path} is {kind}, not a regular file; Write and Edit change regular files only."
        )));
    }
    if let Err(why) = crate::fs_safe::check_writable(path) {
        return Err(ToolOutput::error(format!(
            "Cannot change {file_path}: {why}. It was left as it is; change its permissions \
             first if it should be edited."
        )));
    }
    let guard = std::sync::Arc::clone(&ctx.guard);
    let target = path.to_path_buf();
    let (bytes, meta) = tokio::task::spawn_blocking(move || {
        crate::fs_safe::read_regular(&target, &guard, u64::MAX)
    })
    .await
    .map_err(|e| ToolOutput::error(format!("Cannot read {file_path}: {e}")))?
    .map_err(|e| ToolOutput::error(format!("Cannot read {file_path}: {e}")))?;
    let bytes = crate::file_access::current_text(ctx.file_access.as_deref(), path, bytes).await;
    if let Err(stale) = ctx.files.check(path, &bytes, &meta) {
        return Err(match on_refusal {
            OnRefusal::Plain => ToolOutput::tool_use_error(stale.message()),
            OnRefusal::Show(near) => stale_with_content(stale, path, &bytes, &meta, near, ctx),
        });
    }
    String::from_utf8(bytes).map(Existing::File).map_err(|_| {
        ToolOutput::tool_use_error(format!(
            "{file_path} is not valid UTF-8 text; Write and Edit change text files only."
        ))
    })
}

/// The read-before-write refusal with the file's current text, so the model need not make a
/// Read call (small models often send the same refused call again instead): the whole file, or
/// for a large one its head and the part around `near`. What was shown counts as read when it
/// is the whole file or the part an Edit needs, so the next call can go through.
fn stale_with_content(
    stale: crate::file_state::Stale,
    path: &std::path::Path,
    bytes: &[u8],
    meta: &std::fs::Metadata,
    near: Option<&str>,
    ctx: &ToolContext,
) -> ToolOutput {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return ToolOutput::tool_use_error(stale.message());
    };
    let shown = crate::file_excerpt::excerpt(text, near);
    let counts_as_read = shown.whole || near.is_some();
    if counts_as_read {
        ctx.files.record(path, bytes, meta);
    }
    let what = if shown.whole {
        "Its current content"
    } else {
        "Part of its current content"
    };
    let next = match (counts_as_read, near.is_some()) {
        (true, true) => {
            "It counts as read now: send the Edit again, with old_string copied exactly from the lines above (without the line-number prefix)."
        }
        (true, false) => {
            "It counts as read now: send the Write again if it should still replace the whole file."
        }
        (false, _) => "Read the whole file (with offset and limit) before replacing it.",
    };
    ToolOutput::tool_use_error(format!(
        "{}\n{what} (lines as Read shows them):\n{}{next}",
        stale.message(),
        shown.text
    ))
}

/// Write `content` atomically, then update the file state and the change log.
pub(crate) async fn commit_change(
    path: &std::path::Path,
    file_path: &str,
    before: Option<&str>,
    content: &str,
    ctx: &ToolContext,
) -> Result<(), ToolOutput> {
    if let Some(access) = &ctx.file_access {
        return commit_through(access.as_ref(), path, file_path, before, content, ctx).await;
    }
    let target = path.to_path_buf();
    let bytes = content.as_bytes().to_vec();
    let guard = std::sync::Arc::clone(&ctx.guard);
    let written = tokio::task::spawn_blocking(move || {
        crate::atomic::write_atomic_within(&target, &bytes, &guard)?;
        std::fs::metadata(&target)
    })
    .await
    .map_err(|e| ToolOutput::error(format!("Writing {file_path} failed: {e}")))?;
    let meta = written.map_err(|e| ToolOutput::error(format!("Cannot write {file_path}: {e}")))?;
    ctx.files.record(path, content.as_bytes(), &meta);
    ctx.changes
        .record(path, &ctx.guard.display(path), before, content);
    Ok(())
}

/// [`commit_change`] through the front end that holds the files (an editor saves its buffer):
/// missing parent directories are made first, as a disk write does.
async fn commit_through(
    access: &dyn crate::file_access::FileAccess,
    path: &std::path::Path,
    file_path: &str,
    before: Option<&str>,
    content: &str,
    ctx: &ToolContext,
) -> Result<(), ToolOutput> {
    if let Some(parent) = path.parent() {
        tokio::fs::create_dir_all(parent)
            .await
            .map_err(|e| ToolOutput::error(format!("Cannot write {file_path}: {e}")))?;
    }
    access.write_text(path, content).await.map_err(|e| {
        ToolOutput::error(format!(
            "Writing {file_path} through the editor failed: {e}"
        ))
    })?;
    // Without the file on disk (an editor that has not saved it) the next change must Read it
    // again.
    if let Ok(meta) = tokio::fs::metadata(path).await {
        ctx.files.record(path, content.as_bytes(), &meta);
    }
    ctx.changes
        .record(path, &ctx.guard.display(path), before, content);
    Ok(())
}

#[async_trait]
impl TypedTool for WriteTool {
    type Input = WriteInput;
    const NAME: &'static str = "Write";
    const SCHEMA: Option<&'static str> = Some(skiff_protocol::compact_json!(include_str!(
        "schemas/Write.json"
    )));

    fn description(&self) -> &str {
        "Write a whole file, creating it (and missing directories) or replacing it; an \
         existing file must be Read first in this session. Prefer Edit for a part of a file."
    }

    fn is_read_only(&self) -> bool {
        false
    }

    async fn check(&self, input: &WriteInput, ctx: &ToolContext) -> Result<(), ToolOutput> {
        let path = ctx
            .guard
            .resolve(&input.file_path)
            .map_err(|e| ToolOutput::tool_use_error(e.to_string()))?;
        load_for_change(&path, &input.file_path, OnRefusal::Show(None), ctx)
            .await
            .map(|_| ())
    }

    async fn run(&self, input: WriteInput, ctx: &ToolContext) -> ToolOutput {
        let path = match ctx.guard.resolve(&input.file_path) {
            Ok(p) => p,
            Err(e) => return ToolOutput::tool_use_error(e.to_string()),
        };
        let before =
            match load_for_change(&path, &input.file_path, OnRefusal::Show(None), ctx).await {
                Ok(Existing::Missing) => None,
                Ok(Existing::File(s)) => Some(s),
                Err(out) => return out,
            };
        if let Err(out) = commit_change(
            &path,
            &input.file_path,
            before.as_deref(),
            &input.content,
            ctx,
        )
        .await
        {
            return out;
        }
        let (kind, text) = match &before {
            None => (
                "create",
                format!(
                    "File created successfully at: {}{STATE_CURRENT}",
                    input.file_path
                ),
            ),
            Some(_) => (
                "update",
                format!(
                    "The file {} has been updated successfully.{STATE_CURRENT}",
                    input.file_path
                ),
            ),
        };
        let patch = before
            .as_deref()
            .map(|b| structured_patch(b, &input.content))
            .unwrap_or_default();
        ToolOutput::text(text).with_structured(json!({
            "type": kind, "filePath": input.file_path, "content": input.content,
            "structuredPatch": patch, "originalFile": before, "userModified": false,
        }))
    }
}
