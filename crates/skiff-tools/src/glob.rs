//! The Glob tool: files whose path matches a glob pattern, oldest modification first, capped,
//! with Claude Code's result texts. Ignore files are not honoured; `.git` is skipped.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Instant, SystemTime};

use async_trait::async_trait;
use globset::{GlobBuilder, GlobMatcher};
use ignore::{WalkBuilder, WalkState};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::context::ToolContext;
use crate::tool::{ToolOutput, TypedTool};

/// The line appended when results were capped (Claude Code's text).
pub const TRUNCATED_NOTICE: &str =
    "(Results are truncated. Consider using a more specific path or pattern.)";

/// Input of the Glob tool.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobInput {
    /// Glob under `path`; `*` stays within one directory.
    pub pattern: String,
    /// Directory to search (default: the workspace root).
    pub path: Option<String>,
}

/// The Glob tool.
#[derive(Debug, Default)]
pub struct GlobTool;

#[async_trait]
impl TypedTool for GlobTool {
    type Input = GlobInput;
    const NAME: &'static str = "Glob";
    const SCHEMA: Option<&'static str> = Some(skiff_protocol::compact_json!(include_str!(
        "schemas/Glob.json"
    )));

    fn description(&self) -> &str {
        "Find files by glob (`**/*.rs`, `src/**/*.{ts,tsx}`): paths relative to the workspace \
         root, least recently modified first, at most 100. Hidden files included, `.gitignore` \
         not applied, `.git` skipped."
    }

    fn is_read_only(&self) -> bool {
        true
    }

    async fn run(&self, input: GlobInput, ctx: &ToolContext) -> ToolOutput {
        let started = Instant::now();
        let (given, dir) = match ctx.resolve_search_path(input.path.as_deref()) {
            Ok(r) => r,
            Err(out) => return out,
        };
        match tokio::fs::metadata(&dir).await {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return ToolOutput::tool_use_error(format!(
                    "Path is not a directory: {given}. Pass a directory as `path`, or put the \
                     file name in `pattern`."
                ));
            }
            Err(_) => {
                let help = crate::near_paths::missing_path_help_async(&ctx.guard, &dir).await;
                return ToolOutput::tool_use_error(format!(
                    "Directory does not exist: {given}{help}"
                ));
            }
        }
        let (base, pattern) = match split_literal_prefix(&dir, &input.pattern) {
            Ok(split) => split,
            Err(e) => return ToolOutput::tool_use_error(e),
        };
        // The literal directories in front of the pattern narrow the walk; they must stay inside
        // the workspace like any other path.
        let base = if base == dir {
            base
        } else {
            match ctx.guard.resolve(&base.to_string_lossy()) {
                Ok(b) => b,
                Err(e) => return ToolOutput::tool_use_error(e.to_string()),
            }
        };
        let matcher = match GlobBuilder::new(&pattern).literal_separator(true).build() {
            Ok(g) => g.compile_matcher(),
            Err(e) => {
                return ToolOutput::tool_use_error(format!(
                    "Invalid glob pattern `{}`: {e}",
                    input.pattern
                ));
            }
        };

        let cancel = ctx.cancel.clone();
        let guard = std::sync::Arc::clone(&ctx.guard);
        let walked =
            tokio::task::spawn_blocking(move || find_matches(&base, &matcher, &guard, &cancel))
                .await;
        let mut found = match walked {
            Ok(Some(found)) => found,
            Ok(None) => return ToolOutput::error("Glob was cancelled before it finished."),
            Err(e) => return ToolOutput::error(format!("Glob failed: {e}")),
        };
        found.sort();
        let total = found.len();
        let truncated = total > ctx.config.glob_max_results;
        found.truncate(ctx.config.glob_max_results);
        let filenames: Vec<String> = found
            .iter()
            .map(|(_, path)| ctx.guard.display(path))
            .collect();

        let text = if filenames.is_empty() {
            "No files found".to_owned()
        } else if truncated {
            format!("{}\n{TRUNCATED_NOTICE}", filenames.join("\n"))
        } else {
            filenames.join("\n")
        };
        let structured = json!({
            "filenames": filenames,
            "durationMs": u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            "numFiles": filenames.len(),
            "truncated": truncated,
            "totalMatches": total,
            "countIsComplete": true,
        });
        ToolOutput::text(text).with_structured(structured)
    }
}

/// Characters that make a path component a pattern rather than a literal name.
fn is_literal(component: &str) -> bool {
    !component.contains(['*', '?', '[', ']', '{', '}', '\\', '!'])
}

/// Move the literal leading directories of `pattern` onto `dir` (`src/**/*.rs` in `.` becomes
/// `**/*.rs` in `./src`); an absolute pattern supplies its own directory. Returns the directory
/// to walk and the pattern relative to it.
fn split_literal_prefix(dir: &Path, pattern: &str) -> Result<(PathBuf, String), String> {
    let mut base = if pattern.starts_with('/') {
        PathBuf::from("/")
    } else {
        dir.to_path_buf()
    };
    let mut parts: Vec<&str> = pattern
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    if parts.is_empty() {
        return Err(format!("The glob pattern `{pattern}` names no files."));
    }
    let last = parts.len() - 1;
    let mut taken = 0;
    while taken < last && is_literal(parts[taken]) {
        base.push(parts[taken]);
        taken += 1;
    }
    if pattern.starts_with('/') && taken == 0 && !is_literal(parts[0]) {
        return Err(format!(
            "The glob pattern `{pattern}` starts at the filesystem root; use a pattern relative \
             to the workspace, or pass the directory as `path`."
        ));
    }
    let rest = parts.split_off(taken).join("/");
    Ok((base, rest))
}

/// Walk `base` (hidden files included, `.git` skipped, no ignore files) and return the files
/// matching `matcher` with their modification times; `None` if cancelled.
fn find_matches(
    base: &Path,
    matcher: &GlobMatcher,
    guard: &std::sync::Arc<crate::path_guard::PathGuard>,
    cancel: &CancellationToken,
) -> Option<Vec<(SystemTime, PathBuf)>> {
    if !base.is_dir() {
        return Some(Vec::new());
    }
    let found = Mutex::new(Vec::new());
    WalkBuilder::new(base)
        .standard_filters(false)
        .follow_links(false)
        .filter_entry({
            let guard = std::sync::Arc::clone(guard);
            move |e| e.file_name() != ".git" && !guard.is_hidden(e.path())
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
                if entry.depth() == 0 || entry.file_type().is_some_and(|t| t.is_dir()) {
                    return WalkState::Continue;
                }
                let path = entry.path();
                let Ok(rel) = path.strip_prefix(base) else {
                    return WalkState::Continue;
                };
                if !matcher.is_match(rel) {
                    return WalkState::Continue;
                }
                // A symlink counts when it leads to a file (a link to a directory is not a file).
                let meta = match std::fs::metadata(path) {
                    Ok(m) if m.is_dir() => return WalkState::Continue,
                    Ok(m) => Some(m),
                    Err(_) => entry.metadata().ok(),
                };
                let mtime = meta
                    .and_then(|m| m.modified().ok())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                match found.lock() {
                    Ok(mut f) => f.push((mtime, entry.into_path())),
                    Err(poisoned) => poisoned.into_inner().push((mtime, entry.into_path())),
                }
                WalkState::Continue
            })
        });
    if cancel.is_cancelled() {
        return None;
    }
    Some(found.into_inner().unwrap_or_else(|p| p.into_inner()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_prefix_moves_to_base() {
        let dir = Path::new("/ws");
        let (b, p) = split_literal_prefix(dir, "src/**/*.rs").unwrap();
        assert_eq!((b.as_path(), p.as_str()), (Path::new("/ws/src"), "**/*.rs"));
        let (b, p) = split_literal_prefix(dir, "./Cargo.toml").unwrap();
        assert_eq!((b.as_path(), p.as_str()), (Path::new("/ws"), "Cargo.toml"));
        let (b, p) = split_literal_prefix(dir, "a/b/c.txt").unwrap();
        assert_eq!((b.as_path(), p.as_str()), (Path::new("/ws/a/b"), "c.txt"));
        let (b, p) = split_literal_prefix(dir, "/abs/dir/*.md").unwrap();
        assert_eq!((b.as_path(), p.as_str()), (Path::new("/abs/dir"), "*.md"));
        let (b, p) = split_literal_prefix(dir, "{a,b}/x/*.md").unwrap();
        assert_eq!(
            (b.as_path(), p.as_str()),
            (Path::new("/ws"), "{a,b}/x/*.md")
        );
        assert!(split_literal_prefix(dir, "/**/*.rs").is_err());
        assert!(split_literal_prefix(dir, "").is_err());
    }
}
