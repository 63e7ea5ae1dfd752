//! The Grep tool: ripgrep's search (the `ignore` walker, `grep-regex`, `grep-searcher`) with
//! Claude Code's input schema, output modes, pagination and result texts.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use async_trait::async_trait;
use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::overrides::OverrideBuilder;
use ignore::types::TypesBuilder;
use ignore::{WalkBuilder, WalkState};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::context::ToolContext;
use crate::path_guard::PathGuard;
use crate::tool::{ToolOutput, TypedTool};

/// Entries shown when the call gives no `head_limit`.
pub const DEFAULT_HEAD_LIMIT: usize = 250;
/// Longest line shown in content mode, in characters; the rest is elided.
pub const MAX_LINE_CHARS: usize = 2_000;

/// What Grep reports. The variants carry plain comments: doc comments would turn the schema's
/// `enum` into a `oneOf`, which is not the shape Claude Code sends.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutputMode {
    // Matching lines as `path:line:text`.
    Content,
    // Paths of the files that match (the default).
    #[default]
    FilesWithMatches,
    // Matching lines per file as `path:count`.
    Count,
}

/// Input of the Grep tool.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepInput {
    /// Regex, e.g. `fn\s+\w+`; escape literal `{`, `(`, `.`.
    pub pattern: String,
    /// File or directory (default: the workspace root).
    pub path: Option<String>,
    /// Only files matching this glob, e.g. `*.{ts,tsx}`; `!` excludes.
    pub glob: Option<String>,
    /// What to show (default `files_with_matches`).
    pub output_mode: Option<OutputMode>,
    /// Lines before each match.
    #[serde(rename = "-B")]
    pub before: Option<f64>,
    /// Lines after each match.
    #[serde(rename = "-A")]
    pub after: Option<f64>,
    /// Lines around each match.
    #[serde(rename = "-C")]
    pub context_short: Option<f64>,
    /// Same as `-C`.
    pub context: Option<f64>,
    /// Line numbers (default true).
    #[serde(rename = "-n")]
    pub line_numbers: Option<bool>,
    /// Ignore case.
    #[serde(rename = "-i")]
    pub case_insensitive: Option<bool>,
    /// Only the matched parts of lines.
    #[serde(rename = "-o")]
    pub only_matching: Option<bool>,
    /// ripgrep file type, e.g. `rust`, `py`.
    #[serde(rename = "type")]
    pub file_type: Option<String>,
    /// At most this many lines or files (default 250, 0 = all).
    pub head_limit: Option<f64>,
    /// Skip this many first.
    pub offset: Option<f64>,
    /// Let matches span lines (`.` matches newlines).
    pub multiline: Option<bool>,
}

/// The Grep tool.
#[derive(Debug, Default)]
pub struct GrepTool;

#[async_trait]
impl TypedTool for GrepTool {
    type Input = GrepInput;
    const NAME: &'static str = "Grep";
    const SCHEMA: Option<&'static str> = Some(skiff_protocol::compact_json!(include_str!(
        "schemas/Grep.json"
    )));

    fn description(&self) -> &str {
        "Search file contents with a regex (ripgrep; ignored, hidden and binary files \
         skipped); use it rather than grep or rg in Bash. `output_mode`: `files_with_matches` \
         (default; newest first), `content` (`path:line:text`), `count`. At most 250 entries \
         unless `head_limit`; page with `offset`."
    }

    fn is_read_only(&self) -> bool {
        true
    }

    async fn run(&self, input: GrepInput, ctx: &ToolContext) -> ToolOutput {
        let (given, target) = match ctx.resolve_search_path(input.path.as_deref()) {
            Ok(r) => r,
            Err(out) => return out,
        };
        let is_dir = match tokio::fs::metadata(&target).await {
            Ok(m) => m.is_dir(),
            Err(_) => {
                let help = crate::near_paths::missing_path_help_async(&ctx.guard, &target).await;
                return ToolOutput::tool_use_error(format!("Path does not exist: {given}{help}"));
            }
        };
        let mode = input.output_mode.unwrap_or_default();
        let plan = match Plan::new(&input, mode, &target, is_dir) {
            Ok(p) => p,
            Err(msg) => return ToolOutput::tool_use_error(msg),
        };
        let guard = Arc::clone(&ctx.guard);
        let cancel = ctx.cancel.clone();
        let searched = tokio::task::spawn_blocking(move || plan.search(&guard, &cancel)).await;
        let mut hits = match searched {
            Ok(Some(hits)) => hits,
            Ok(None) => return ToolOutput::error("Grep was cancelled before it finished."),
            Err(e) => return ToolOutput::error(format!("Grep failed: {e}")),
        };
        let page = Page {
            offset: count_of(input.offset).unwrap_or(0),
            limit: match count_of(input.head_limit) {
                Some(0) => None,
                Some(n) => Some(n),
                None => Some(DEFAULT_HEAD_LIMIT),
            },
        };
        match mode {
            OutputMode::FilesWithMatches => {
                // Most recently modified first, then by path.
                hits.sort_by(|a, b| b.mtime.cmp(&a.mtime).then_with(|| by_path(a, b)));
                files_output(&hits, page)
            }
            OutputMode::Content => {
                hits.sort_by(by_path);
                content_output(hits, page, has_context(&input))
            }
            OutputMode::Count => {
                hits.sort_by(by_path);
                count_output(&hits, page)
            }
        }
    }
}

/// Component-wise path order (`a/b` before `a-b`), as `rg --sort path`.
fn by_path(a: &FileHit, b: &FileHit) -> std::cmp::Ordering {
    Path::new(&a.path).cmp(Path::new(&b.path))
}

/// A JSON number used as a count: negative values count as 0, fractions are dropped.
fn count_of(v: Option<f64>) -> Option<usize> {
    v.map(|n| {
        if n.is_finite() && n > 0.0 {
            n as usize
        } else {
            0
        }
    })
}

fn has_context(input: &GrepInput) -> bool {
    let (b, a) = context_of(input);
    b > 0 || a > 0
}

/// Lines of context (before, after): `-B`/`-A` win over `-C`/`context`, as in ripgrep.
fn context_of(input: &GrepInput) -> (usize, usize) {
    let both = count_of(input.context_short.or(input.context)).unwrap_or(0);
    (
        count_of(input.before).unwrap_or(both),
        count_of(input.after).unwrap_or(both),
    )
}

/// Split a `glob` argument the way Claude Code does before handing it to `rg -g`: on
/// whitespace, then on commas unless the piece uses braces.
pub fn split_globs(glob: &str) -> Vec<String> {
    let mut out = Vec::new();
    for raw in glob.split_whitespace() {
        if raw.contains('{') && raw.contains('}') {
            out.push(raw.to_owned());
        } else {
            out.extend(raw.split(',').filter(|g| !g.is_empty()).map(str::to_owned));
        }
    }
    out
}

/// Everything the blocking search needs.
struct Plan {
    target: PathBuf,
    walk: WalkBuilder,
    matcher: RegexMatcher,
    searcher: SearcherBuilder,
    render: Render,
}

/// How matches of one file are turned into text.
#[derive(Debug, Clone, Copy)]
struct Render {
    mode: OutputMode,
    line_numbers: bool,
    only_matching: bool,
}

impl Plan {
    fn new(
        input: &GrepInput,
        mode: OutputMode,
        target: &Path,
        is_dir: bool,
    ) -> Result<Self, String> {
        let multiline = input.multiline.unwrap_or(false);
        let mut rb = RegexMatcherBuilder::new();
        rb.case_insensitive(input.case_insensitive.unwrap_or(false))
            .multi_line(true)
            .unicode(true)
            .octal(false);
        if multiline {
            rb.dot_matches_new_line(true);
        } else {
            rb.line_terminator(Some(b'\n'));
        }
        let matcher = rb.build(&input.pattern).map_err(|e| {
            let mut msg = format!("Invalid regular expression `{}`: {e}", input.pattern);
            if !multiline && input.pattern.contains("\\n") {
                msg.push_str("\nSet `multiline: true` to match across lines.");
            }
            msg
        })?;

        let content = mode == OutputMode::Content;
        let (before, after) = if content { context_of(input) } else { (0, 0) };
        let mut searcher = SearcherBuilder::new();
        searcher
            .line_number(true)
            .multi_line(multiline)
            .before_context(before)
            .after_context(after)
            .binary_detection(BinaryDetection::quit(b'\x00'));

        let walk_root = if is_dir {
            target.to_path_buf()
        } else {
            target.parent().map(Path::to_path_buf).unwrap_or_default()
        };
        let mut walk = WalkBuilder::new(target);
        walk.standard_filters(true)
            .require_git(false)
            .follow_links(false)
            .add_custom_ignore_filename(".rgignore");
        if let Some(glob) = input.glob.as_deref().filter(|g| !g.trim().is_empty()) {
            let mut ob = OverrideBuilder::new(&walk_root);
            for g in split_globs(glob) {
                ob.add(&g)
                    .map_err(|e| format!("Invalid glob `{g}` in `glob`: {e}"))?;
            }
            walk.overrides(ob.build().map_err(|e| format!("Invalid `glob`: {e}"))?);
        }
        if let Some(t) = input.file_type.as_deref().filter(|t| !t.is_empty()) {
            let mut tb = TypesBuilder::new();
            tb.add_defaults().select(t);
            let types = tb.build().map_err(|e| {
                format!(
                    "Unknown file type `{t}` ({e}). Use a ripgrep type name such as rust, py, \
                     js, ts, go, java, c, cpp, md, json, or the `glob` parameter instead."
                )
            })?;
            walk.types(types);
        }
        Ok(Self {
            target: target.to_path_buf(),
            walk,
            matcher,
            searcher,
            render: Render {
                mode,
                line_numbers: input.line_numbers.unwrap_or(true),
                only_matching: input.only_matching.unwrap_or(false),
            },
        })
    }

    /// Walk and search in parallel; the hits of every matching file, unordered. `None` when
    /// cancelled.
    fn search(&self, guard: &PathGuard, cancel: &CancellationToken) -> Option<Vec<FileHit>> {
        let hits = Mutex::new(Vec::new());
        let target_is_file = self.target.is_file();
        self.walk.build_parallel().run(|| {
            let hits = &hits;
            let mut searcher = self.searcher.build();
            let matcher = self.matcher.clone();
            let render = self.render;
            Box::new(move |entry| {
                if cancel.is_cancelled() {
                    return WalkState::Quit;
                }
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                if guard.is_hidden(entry.path()) {
                    return WalkState::Skip;
                }
                let is_file = entry.file_type().is_some_and(|t| t.is_file())
                    || (target_is_file && entry.depth() == 0);
                if !is_file {
                    return WalkState::Continue;
                }
                let display = guard.display(entry.path());
                let mut sink = FileSink::new(&matcher, &display, render);
                if searcher
                    .search_path(&matcher, entry.path(), &mut sink)
                    .is_err()
                    || sink.binary
                    || sink.count == 0
                {
                    return WalkState::Continue;
                }
                let mtime = match render.mode {
                    OutputMode::FilesWithMatches => entry
                        .metadata()
                        .ok()
                        .and_then(|m| m.modified().ok())
                        .unwrap_or(SystemTime::UNIX_EPOCH),
                    _ => SystemTime::UNIX_EPOCH,
                };
                let (count, lines) = (sink.count, sink.lines);
                let hit = FileHit {
                    path: display,
                    mtime,
                    count,
                    lines,
                };
                match hits.lock() {
                    Ok(mut h) => h.push(hit),
                    Err(poisoned) => poisoned.into_inner().push(hit),
                }
                WalkState::Continue
            })
        });
        if cancel.is_cancelled() {
            return None;
        }
        Some(hits.into_inner().unwrap_or_else(|p| p.into_inner()))
    }
}

/// The result of one file that matched.
#[derive(Debug)]
struct FileHit {
    /// Path as shown (relative to the workspace root).
    path: String,
    mtime: SystemTime,
    /// Matching lines (match blocks in multiline mode).
    count: u64,
    /// Rendered output lines (content mode).
    lines: Vec<String>,
}

/// Collects the matches of one file.
struct FileSink<'a> {
    matcher: &'a RegexMatcher,
    path: &'a str,
    render: Render,
    count: u64,
    lines: Vec<String>,
    binary: bool,
}

impl<'a> FileSink<'a> {
    fn new(matcher: &'a RegexMatcher, path: &'a str, render: Render) -> Self {
        Self {
            matcher,
            path,
            render,
            count: 0,
            lines: Vec::new(),
            binary: false,
        }
    }

    fn push(&mut self, sep: char, line_number: u64, text: &[u8]) {
        let text = show_line(text);
        let line = if self.render.line_numbers {
            format!("{}{sep}{line_number}{sep}{text}", self.path)
        } else {
            format!("{}{sep}{text}", self.path)
        };
        self.lines.push(line);
    }

    /// Number of matches of the pattern in a match block.
    fn matches_in(&self, mat: &SinkMatch<'_>) -> io::Result<u64> {
        let buffer = mat.buffer();
        let range = mat.bytes_range_in_buffer();
        let mut n = 0;
        self.matcher
            .find_iter_at(&buffer[..range.end], range.start, |_| {
                n += 1;
                true
            })
            .map_err(|e| io::Error::other(e.to_string()))?;
        Ok(n)
    }

    fn push_only_matching(&mut self, mat: &SinkMatch<'_>) -> io::Result<()> {
        let buffer = mat.buffer();
        let range = mat.bytes_range_in_buffer();
        let first = mat.line_number().unwrap_or(0);
        let mut parts: Vec<(u64, std::ops::Range<usize>)> = Vec::new();
        self.matcher
            .find_iter_at(&buffer[..range.end], range.start, |m| {
                if !m.is_empty() {
                    let skipped = newlines(&buffer[range.start..m.start()]);
                    parts.push((first + skipped, m.start()..m.end()));
                }
                true
            })
            .map_err(|e| io::Error::other(e.to_string()))?;
        for (line_number, r) in parts {
            for (i, piece) in buffer[r].split(|b| *b == b'\n').enumerate() {
                if !piece.is_empty() {
                    self.push(':', line_number + i as u64, piece);
                }
            }
        }
        Ok(())
    }
}

impl Sink for FileSink<'_> {
    type Error = io::Error;

    fn matched(&mut self, searcher: &Searcher, mat: &SinkMatch<'_>) -> io::Result<bool> {
        match self.render.mode {
            OutputMode::FilesWithMatches => {
                self.count += 1;
                return Ok(false);
            }
            // One block may hold several matches in multiline mode; rg counts each of them.
            OutputMode::Count if searcher.multi_line_with_matcher(self.matcher) => {
                self.count += self.matches_in(mat)?.max(1);
            }
            OutputMode::Count => self.count += 1,
            OutputMode::Content => {
                self.count += 1;
                if self.render.only_matching {
                    self.push_only_matching(mat)?;
                } else {
                    let first = mat.line_number().unwrap_or(0);
                    for (i, line) in mat.bytes().split_inclusive(|b| *b == b'\n').enumerate() {
                        self.push(':', first + i as u64, line);
                    }
                }
            }
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> io::Result<bool> {
        if self.render.mode == OutputMode::Content {
            self.push('-', ctx.line_number().unwrap_or(0), ctx.bytes());
        }
        Ok(true)
    }

    fn context_break(&mut self, _: &Searcher) -> io::Result<bool> {
        if self.render.mode == OutputMode::Content {
            self.lines.push("--".to_owned());
        }
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> io::Result<bool> {
        self.binary = true;
        self.lines.clear();
        Ok(false)
    }
}

fn newlines(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|b| **b == b'\n').count() as u64
}

/// One line of a file as shown: terminator removed, invalid UTF-8 replaced, very long lines
/// shortened.
fn show_line(bytes: &[u8]) -> String {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    let text = String::from_utf8_lossy(bytes);
    match text.char_indices().nth(MAX_LINE_CHARS) {
        Some((cut, _)) => format!(
            "{} [... {} more characters]",
            &text[..cut],
            text[cut..].chars().count()
        ),
        None => text.into_owned(),
    }
}

/// `offset` and `head_limit` of a call.
#[derive(Debug, Clone, Copy)]
struct Page {
    offset: usize,
    /// `None`: unlimited.
    limit: Option<usize>,
}

impl Page {
    /// The slice of `items` shown, and whether entries after it were left out.
    fn apply<T>(self, items: &[T]) -> (&[T], bool) {
        let start = self.offset.min(items.len());
        let end = match self.limit {
            Some(l) => start.saturating_add(l).min(items.len()),
            None => items.len(),
        };
        (&items[start..end], end < items.len())
    }

    /// The line telling the model that results were cut and how to see the rest.
    fn notice(self, total: usize, shown: usize, what: &str) -> Option<String> {
        let end = self.offset.saturating_add(shown);
        if end < total {
            let limit = self.limit.unwrap_or(0);
            Some(format!(
                "[Showing results with pagination = limit: {limit}, offset: {}; {} more {what} \
                 not shown. Call again with offset: {end} for the next page, or narrow the \
                 search.]",
                self.offset,
                total - end,
            ))
        } else if self.offset > 0 && shown == 0 && total > 0 {
            Some(format!(
                "[offset {} is past the end of the results: there are {total} {what}.]",
                self.offset
            ))
        } else {
            None
        }
    }

    /// Pagination fields of the structured result, when pagination changed what was shown.
    fn structured(self, cut: bool, out: &mut Value) {
        if cut {
            out["appliedLimit"] = json!(self.limit.unwrap_or(0));
        }
        if cut || self.offset > 0 {
            out["appliedOffset"] = json!(self.offset);
        }
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn files_output(hits: &[FileHit], page: Page) -> ToolOutput {
    let all: Vec<&str> = hits.iter().map(|h| h.path.as_str()).collect();
    let (shown, cut) = page.apply(&all);
    let mut structured = json!({
        "mode": "files_with_matches",
        "filenames": shown,
        "numFiles": shown.len(),
        "totalFiles": all.len(),
    });
    page.structured(cut, &mut structured);
    let mut text = if all.is_empty() {
        "No files found".to_owned()
    } else {
        let mut t = format!("Found {}", plural(all.len(), "file", "files"));
        for p in shown {
            t.push('\n');
            t.push_str(p);
        }
        t
    };
    if let Some(n) = page.notice(all.len(), shown.len(), "files") {
        text.push_str("\n\n");
        text.push_str(&n);
    }
    ToolOutput::text(text).with_structured(structured)
}

fn content_output(hits: Vec<FileHit>, page: Page, with_context: bool) -> ToolOutput {
    let num_files = hits.len();
    let mut lines: Vec<String> = Vec::new();
    for hit in hits {
        if with_context && !lines.is_empty() {
            lines.push("--".to_owned());
        }
        lines.extend(hit.lines);
    }
    let (mut shown, cut) = page.apply(&lines);
    // A page never starts or ends with a group separator.
    while let [first, rest @ ..] = shown {
        if first != "--" {
            break;
        }
        shown = rest;
    }
    while let [rest @ .., last] = shown {
        if last != "--" {
            break;
        }
        shown = rest;
    }
    let content = shown.join("\n");
    let mut structured = json!({
        "mode": "content",
        "numFiles": num_files,
        "filenames": [],
        "content": content,
        "numLines": shown.len(),
        "totalLines": lines.len(),
    });
    page.structured(cut, &mut structured);
    let mut text = if lines.is_empty() {
        "No matches found".to_owned()
    } else {
        content
    };
    if let Some(n) = page.notice(lines.len(), shown.len(), "lines") {
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(&n);
    }
    ToolOutput::text(text).with_structured(structured)
}

fn count_output(hits: &[FileHit], page: Page) -> ToolOutput {
    let entries: Vec<String> = hits
        .iter()
        .map(|h| format!("{}:{}", h.path, h.count))
        .collect();
    let total: u64 = hits.iter().map(|h| h.count).sum();
    let (shown, cut) = page.apply(&entries);
    let content = shown.join("\n");
    let mut structured = json!({
        "mode": "count",
        "numFiles": hits.len(),
        "filenames": [],
        "content": content,
        "numMatches": total,
    });
    page.structured(cut, &mut structured);
    let mut text = if hits.is_empty() {
        "No matches found".to_owned()
    } else {
        format!(
            "{content}\n\nFound {} across {}.",
            plural(
                usize::try_from(total).unwrap_or(usize::MAX),
                "total occurrence",
                "total occurrences"
            ),
            plural(hits.len(), "file", "files"),
        )
    };
    if let Some(n) = page.notice(entries.len(), shown.len(), "files") {
        text.push_str("\n\n");
        text.push_str(&n);
    }
    ToolOutput::text(text).with_structured(structured)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_split_like_claude_code() {
        assert_eq!(split_globs("*.rs"), ["*.rs"]);
        assert_eq!(split_globs("*.{ts,tsx}"), ["*.{ts,tsx}"]);
        assert_eq!(split_globs("*.ts,*.js  *.md"), ["*.ts", "*.js", "*.md"]);
        assert_eq!(split_globs("!vendor/** *.go"), ["!vendor/**", "*.go"]);
        assert!(split_globs("  ").is_empty());
    }

    #[test]
    fn counts_from_json_numbers() {
        assert_eq!(count_of(Some(3.0)), Some(3));
        assert_eq!(count_of(Some(2.7)), Some(2));
        assert_eq!(count_of(Some(-1.0)), Some(0));
        assert_eq!(count_of(None), None);
    }

    #[test]
    fn pages() {
        let items = [1, 2, 3, 4, 5];
        let p = Page {
            offset: 1,
            limit: Some(2),
        };
        assert_eq!(p.apply(&items), (&items[1..3], true));
        assert!(p.notice(5, 2, "files").unwrap().contains("offset: 3"));
        let all = Page {
            offset: 0,
            limit: None,
        };
        assert_eq!(all.apply(&items), (&items[..], false));
        assert_eq!(all.notice(5, 5, "files"), None);
        let past = Page {
            offset: 9,
            limit: Some(2),
        };
        assert_eq!(past.apply(&items).0.len(), 0);
        assert!(past.notice(5, 0, "files").unwrap().contains("past the end"));
    }

    #[test]
    fn long_lines_are_shortened() {
        let long = "x".repeat(MAX_LINE_CHARS + 5);
        let shown = show_line(long.as_bytes());
        assert!(shown.ends_with("[... 5 more characters]"));
        assert_eq!(show_line(b"abc\r\n"), "abc");
    }
}
