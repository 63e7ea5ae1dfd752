//! The LS tool: a recursive listing of a directory (`.gitignore` honoured, `.git` skipped),
//! one path per line relative to the workspace root, directories marked with a trailing `/`.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use async_trait::async_trait;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use ignore::{WalkBuilder, WalkState};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::context::ToolContext;
use crate::tool::{ToolOutput, TypedTool};

/// Input of the LS tool.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LsInput {
    /// Directory (default: the workspace root).
    pub path: Option<String>,
    /// Glob patterns to skip, e.g. `*.log`.
    pub ignore: Option<Vec<String>>,
}

/// The LS tool.
#[derive(Debug, Default)]
pub struct LsTool;

#[async_trait]
impl TypedTool for LsTool {
    type Input = LsInput;
    const NAME: &'static str = "LS";
    const SCHEMA: Option<&'static str> = Some(skiff_protocol::compact_json!(include_str!(
        "schemas/LS.json"
    )));

    fn description(&self) -> &str {
        "List a directory recursively, one path per line relative to the workspace root \
         (directories end in `/`). Ignored files and `.git` left out; at most 1000 entries."
    }

    fn is_read_only(&self) -> bool {
        true
    }

    async fn run(&self, input: LsInput, ctx: &ToolContext) -> ToolOutput {
        let (given, dir) = match ctx.resolve_search_path(input.path.as_deref()) {
            Ok(r) => r,
            Err(out) => return out,
        };
        match tokio::fs::metadata(&dir).await {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return ToolOutput::tool_use_error(format!(
                    "{given} is a file, not a directory. Use Read to view a file."
                ));
            }
            Err(_) => {
                let help = crate::near_paths::missing_path_help_async(&ctx.guard, &dir).await;
                return ToolOutput::tool_use_error(format!(
                    "Directory does not exist: {given}{help}"
                ));
            }
        }
        // The walk skips what it cannot read; a directory that cannot be read at all is an
        // error, not an empty listing.
        if let Err(e) = std::fs::read_dir(&dir) {
            return ToolOutput::error(format!("Cannot list {given}: {e}"));
        }
        let skip = match ignore_set(input.ignore.as_deref().unwrap_or_default()) {
            Ok(s) => s,
            Err(e) => return ToolOutput::tool_use_error(e),
        };

        let cancel = ctx.cancel.clone();
        let walk_dir = dir.clone();
        let guard = std::sync::Arc::clone(&ctx.guard);
        let walked =
            tokio::task::spawn_blocking(move || list(&walk_dir, skip, &guard, &cancel)).await;
        let mut entries = match walked {
            Ok(Some(e)) => e,
            Ok(None) => return ToolOutput::error("LS was cancelled before it finished."),
            Err(e) => return ToolOutput::error(format!("LS failed: {e}")),
        };
        if entries.is_empty() {
            let truly_empty = std::fs::read_dir(&dir)
                .map(|mut d| d.next().is_none())
                .unwrap_or(true);
            let text = if truly_empty {
                "(empty directory)"
            } else {
                "(no entries to list: everything in this directory is ignored)"
            };
            return ToolOutput::text(text)
                .with_structured(json!({"path": given, "numEntries": 0, "truncated": false}));
        }
        // Component-wise order keeps every directory right before its contents.
        entries.sort();
        let total = entries.len();
        let cap = ctx.config.ls_max_entries;
        let truncated = total > cap;
        entries.truncate(cap);
        let mut text = entries
            .iter()
            .map(|(path, is_dir)| {
                let mut shown = ctx.guard.display(path);
                if *is_dir {
                    shown.push('/');
                }
                shown
            })
            .collect::<Vec<_>>()
            .join("\n");
        if truncated {
            text.push_str(&format!(
                "\n(Listing capped at {cap} entries; {} more entries are not shown. List a more \
                 specific path, or use Glob with a pattern to find the files you need.)",
                total - cap
            ));
        }
        ToolOutput::text(text).with_structured(json!({
            "path": given,
            "numEntries": total,
            "truncated": truncated,
        }))
    }
}

/// The `ignore` patterns as one set (`*` does not cross `/`).
fn ignore_set(patterns: &[String]) -> Result<GlobSet, String> {
    let mut set = GlobSetBuilder::new();
    for p in patterns {
        let p = p.trim_end_matches('/');
        if p.is_empty() {
            continue;
        }
        let glob = GlobBuilder::new(p)
            .literal_separator(true)
            .build()
            .map_err(|e| format!("Invalid pattern `{p}` in `ignore`: {e}"))?;
        set.add(glob);
    }
    set.build()
        .map_err(|e| format!("Invalid `ignore` patterns: {e}"))
}

/// Every entry under `dir` (not `dir` itself) with whether it is a directory; `None` if
/// cancelled.
fn list(
    dir: &Path,
    skip: GlobSet,
    guard: &std::sync::Arc<crate::path_guard::PathGuard>,
    cancel: &CancellationToken,
) -> Option<Vec<(PathBuf, bool)>> {
    let found = Mutex::new(Vec::new());
    let base = dir.to_path_buf();
    let guard = std::sync::Arc::clone(guard);
    WalkBuilder::new(dir)
        .standard_filters(true)
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(move |e| {
            if e.file_name() == ".git" || (e.depth() > 0 && guard.is_hidden(e.path())) {
                return false;
            }
            if skip.is_empty() || e.depth() == 0 {
                return true;
            }
            let rel = e.path().strip_prefix(&base).unwrap_or(e.path());
            !(skip.is_match(e.file_name()) || skip.is_match(rel))
        })
        .build_parallel()
        .run(|| {
            let found = &found;
            Box::new(move |entry| {
                if cancel.is_cancelled() {
                    return WalkState::Quit;
                }
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                if entry.depth() == 0 {
                    return WalkState::Continue;
                }
                let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
                match found.lock() {
                    Ok(mut f) => f.push((entry.into_path(), is_dir)),
                    Err(poisoned) => poisoned.into_inner().push((entry.into_path(), is_dir)),
                }
                WalkState::Continue
            })
        });
    if cancel.is_cancelled() {
        return None;
    }
    Some(found.into_inner().unwrap_or_else(|p| p.into_inner()))
}
