//! Streaming markdown for the terminal, built on pulldown-cmark, with code blocks highlighted by
//! [`super::highlight`].
//!
//! Model text arrives in arbitrary chunks, while a terminal can only be written forward. The
//! stream therefore works line by line, so its output does not depend on where chunks split:
//!
//! - Incoming text is buffered until a newline completes a line. Every complete line is
//!   rendered at once; the unfinished last line is rendered by [`MarkdownStream::finish`].
//! - Outside code fences, the lines since the last blank line form a *block group*. When a
//!   line completes, the whole group is rendered again with pulldown-cmark and only the
//!   rendered lines not yet printed are emitted. Soft breaks render as newlines, so rendered
//!   lines follow source lines; each rendered line is tagged with the last source line it
//!   shows, and the lines tagged with the new source line are the ones printed. A blank line
//!   ends the group, which bounds the cost of rendering again.
//! - A later line may change how earlier lines would render (a setext underline, a link whose
//!   url is on the next line): what is printed stays printed, and text the change moves into
//!   an earlier line is printed again rather than lost. The one line that waits: a line with
//!   a `|` right after a line without one, which may be a table header, waits for the next
//!   line so that the header can be shown as one.
//! - Fenced code blocks are handled here, not by the parser: the fence lines are printed dim
//!   (so the code stays copyable with its fences), and each code line is highlighted by
//!   [`super::highlight`] as it completes, the highlighter carrying its state from line to
//!   line.
//!
//! Each rendered line carries its own styles and ends with a reset, so nothing leaks into
//! what the terminal prints next. Without colour the text passes through unchanged.

use std::fmt;
use std::ops::Range;

use super::highlight::{Highlighter, Kind};
use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, RefDefs, Tag, TagEnd};

const RESET: &str = "\x1b[0m";
const BOLD: &str = "\x1b[1m";
const DIM: &str = "\x1b[2m";
const ITALIC: &str = "\x1b[3m";
const UNDERLINE: &str = "\x1b[4m";
const STRIKE: &str = "\x1b[9m";
const CODE: &str = "\x1b[36m";
const HEADING: &str = "\x1b[1;4m";
/// No style of its own (superscript, subscript, image text): keeps the style stack balanced.
const PLAIN: &str = "";

/// Width of a horizontal rule, in columns.
const RULE_WIDTH: usize = 40;
/// Markdown extensions understood besides CommonMark.
const OPTIONS: Options = Options::ENABLE_STRIKETHROUGH
    .union(Options::ENABLE_TABLES)
    .union(Options::ENABLE_TASKLISTS);

// ---------------------------------------------------------------------------------------------
// The stream

/// Renders markdown chunks to terminal text.
#[derive(Debug)]
pub struct MarkdownStream {
    color: bool,
    /// Code colours as 24-bit escapes rather than the nearest of the xterm 256.
    truecolor: bool,
    /// The unfinished current line.
    partial: String,
    /// The block group being rendered (outside code fences).
    block: Block,
    /// The open code fence, if any.
    fence: Option<Fence>,
}

impl MarkdownStream {
    /// A renderer; without color the text passes through unchanged.
    pub fn new(color: bool) -> Self {
        let truecolor =
            color && std::env::var("COLORTERM").is_ok_and(|v| v == "truecolor" || v == "24bit");
        Self {
            color,
            truecolor,
            partial: String::new(),
            block: Block::default(),
            fence: None,
        }
    }

    /// Render a chunk; returns what to print now: the lines it completes.
    pub fn push(&mut self, chunk: &str) -> String {
        if !self.color {
            return chunk.to_owned();
        }
        let mut out = String::new();
        for piece in chunk.split_inclusive('\n') {
            match piece.strip_suffix('\n') {
                Some(end) => {
                    self.partial.push_str(end);
                    let line = std::mem::take(&mut self.partial);
                    self.line(&line, true, &mut out);
                }
                None => self.partial.push_str(piece),
            }
        }
        out
    }

    /// End of the text block: print the unfinished line and what waits, reset styles, and be
    /// ready for a new text block.
    pub fn finish(&mut self) -> String {
        if !self.color {
            return String::new();
        }
        let mut out = String::new();
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.line(&line, false, &mut out);
        }
        self.block.flush(&mut out);
        self.block = Block::default();
        if self.fence.take().is_some() {
            out.push_str(RESET);
        }
        out
    }

    /// One source line, `terminated` unless it is the unfinished last one.
    fn line(&mut self, line: &str, terminated: bool, out: &mut String) {
        let eol = if terminated { "\n" } else { "" };
        if let Some(fence) = &mut self.fence {
            if fence.is_closed_by(line) {
                self.fence = None;
                push_dim_line(out, line.trim_start(), eol);
            } else {
                fence.code_line(line, self.truecolor, out);
                out.push_str(eol);
            }
            return;
        }
        if let Some(fence) = Fence::open(line) {
            self.end_block(out);
            push_dim_line(out, line.trim_start(), eol);
            self.fence = Some(fence);
            return;
        }
        if line.trim().is_empty() {
            self.end_block(out);
            out.push_str(eol);
            return;
        }
        self.block.push_line(line, terminated, out);
    }

    /// Print what the block group still holds and start a new one.
    fn end_block(&mut self, out: &mut String) {
        self.block.flush(out);
        self.block = Block::default();
    }
}

fn push_dim_line(out: &mut String, text: &str, eol: &str) {
    out.push_str(DIM);
    out.push_str(text);
    out.push_str(RESET);
    out.push_str(eol);
}

// ---------------------------------------------------------------------------------------------
// Block groups: rendered again as each line completes

/// The source lines since the last blank line or fence, and how much of their rendering has
/// been printed.
#[derive(Debug, Default)]
struct Block {
    source: String,
    /// Source lines in the group.
    lines: usize,
    /// The first source line whose rendered lines are not printed yet.
    next: usize,
    /// Whether the last source line ended with a newline.
    terminated: bool,
    /// Whether the last source line, and the one before it, contain a `|`.
    last_pipe: bool,
    prev_pipe: bool,
    /// Whether a rendered line waits for the next source line (a possible table header).
    held: bool,
}

impl Block {
    fn push_line(&mut self, line: &str, terminated: bool, out: &mut String) {
        self.source.push_str(line);
        if terminated {
            self.source.push('\n');
        }
        self.lines += 1;
        self.terminated = terminated;
        self.prev_pipe = self.last_pipe;
        self.last_pipe = line.contains('|');
        // The first line with a pipe may be a table header: the next line tells.
        let hold = terminated && self.last_pipe && !self.prev_pipe;
        self.emit(hold, out);
    }

    /// Print what still waits.
    fn flush(&mut self, out: &mut String) {
        if self.held {
            self.emit(false, out);
        }
    }

    /// Render the group and print the rendered lines of the source lines not printed yet;
    /// with `hold`, not those of the last source line.
    ///
    /// Each rendered line is tagged with the last source line it shows content from, so text
    /// that a later line moves into an earlier rendered line (a link whose url follows on the
    /// next line) is printed again rather than lost.
    fn emit(&mut self, hold: bool, out: &mut String) {
        let rendered = render(&self.source);
        let last = self.lines.saturating_sub(1);
        let end = if hold { last } else { self.lines };
        let count = rendered.len();
        for (i, (line, text)) in rendered.iter().enumerate() {
            if (self.next..end).contains(line) {
                out.push_str(text);
                if self.terminated || i + 1 < count {
                    out.push('\n');
                }
            }
        }
        self.next = self.next.max(end);
        self.held = hold && rendered.iter().any(|(line, _)| *line >= end);
    }
}

// ---------------------------------------------------------------------------------------------
// Code fences: highlighted line by line

/// An open fenced code block.
struct Fence {
    /// '`' or '~'.
    marker: char,
    /// Length of the opening marker run; the closing run is at least as long.
    len: usize,
    /// Indentation of the opening fence, removed from code lines.
    indent: usize,
    /// None for plain text (no language, or an unknown one).
    highlighter: Option<Highlighter>,
}

impl fmt::Debug for Fence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fence")
            .field("marker", &self.marker)
            .field("len", &self.len)
            .field("indent", &self.indent)
            .field("highlighted", &self.highlighter.is_some())
            .finish()
    }
}

impl Fence {
    /// The fence this line opens, if it is an opening fence.
    fn open(line: &str) -> Option<Self> {
        let (indent, marker, len, info) = parse_fence(line)?;
        if marker == '`' && info.contains('`') {
            // Inline code such as ```a```, not a fence.
            return None;
        }
        let highlighter = language(info).and_then(highlighter_for);
        Some(Self {
            marker,
            len,
            indent,
            highlighter,
        })
    }

    fn is_closed_by(&self, line: &str) -> bool {
        parse_fence(line).is_some_and(|(_, marker, len, info)| {
            marker == self.marker && len >= self.len && info.is_empty()
        })
    }

    /// Print a code line, without its newline.
    fn code_line(&mut self, line: &str, truecolor: bool, out: &mut String) {
        let code = strip_indent(line, self.indent);
        match &mut self.highlighter {
            Some(highlighter) => highlight(highlighter, code, truecolor, out),
            None => out.push_str(code),
        }
    }
}

/// A fence line's indentation, marker, marker length and (trimmed) info string.
fn parse_fence(line: &str) -> Option<(usize, char, usize, &str)> {
    let rest = line.trim_start_matches([' ', '\t']);
    let indent = line.len() - rest.len();
    let marker = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = rest.chars().take_while(|c| *c == marker).count();
    if len < 3 {
        return None;
    }
    // The marker is ASCII: its run is `len` bytes.
    Some((indent, marker, len, rest.get(len..)?.trim()))
}

/// The line without up to `indent` leading spaces or tabs.
fn strip_indent(line: &str, indent: usize) -> &str {
    let n = line
        .bytes()
        .take(indent)
        .take_while(|b| *b == b' ' || *b == b'\t')
        .count();
    line.get(n..).unwrap_or(line)
}

/// The language named by a fence's info string: `rust`, `rust,ignore`, `{.python}`.
fn language(info: &str) -> Option<&str> {
    info.split(|c: char| c.is_whitespace() || matches!(c, ',' | '{' | '}'))
        .map(|token| token.trim_start_matches('.'))
        .find(|token| !token.is_empty())
}

/// The highlighter for a fence's language; None for plain text and languages not known.
fn highlighter_for(language: &str) -> Option<Highlighter> {
    match language.to_ascii_lowercase().as_str() {
        "text" | "txt" | "plain" | "plaintext" | "output" | "log" => None,
        other => Highlighter::for_language(other),
    }
}

/// Highlight one code line (without its newline); the colours end with the line.
fn highlight(highlighter: &mut Highlighter, code: &str, truecolor: bool, out: &mut String) {
    let mut current = None;
    for (kind, text) in highlighter.line(code) {
        if current != Some(kind) {
            push_code_style(kind, truecolor, out);
            current = Some(kind);
        }
        out.push_str(text);
    }
    out.push_str(RESET);
}

/// One escape that resets, then sets the font style and the foreground colour (the terminal's
/// own background shows).
fn push_code_style(kind: Kind, truecolor: bool, out: &mut String) {
    let ((r, g, b), bold, italic) = kind.style();
    out.push_str("\x1b[0");
    if bold {
        out.push_str(";1");
    }
    if italic {
        out.push_str(";3");
    }
    let color = if truecolor {
        format!(";38;2;{r};{g};{b}m")
    } else {
        format!(";38;5;{}m", xterm256(r, g, b))
    };
    out.push_str(&color);
}

/// The xterm 256-colour index nearest to an RGB colour: from the 6×6×6 cube or the grey ramp.
fn xterm256(r: u8, g: u8, b: u8) -> u8 {
    const LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];
    let nearest = |v: u8| {
        LEVELS
            .iter()
            .enumerate()
            .min_by_key(|(_, level)| level.abs_diff(v))
            .map_or((0, 0), |(i, level)| (i as u8, *level))
    };
    let distance = |(r2, g2, b2): (u8, u8, u8)| {
        [(r, r2), (g, g2), (b, b2)]
            .iter()
            .map(|(a, b)| u32::from(a.abs_diff(*b)).pow(2))
            .sum::<u32>()
    };
    let ((ri, rl), (gi, gl), (bi, bl)) = (nearest(r), nearest(g), nearest(b));
    let cube = 16 + 36 * ri + 6 * gi + bi;
    // Greys 232..=255 run from 8 to 238 in steps of 10.
    let mean = (u16::from(r) + u16::from(g) + u16::from(b)) / 3;
    let step = (mean.saturating_sub(3) / 10).min(23) as u8;
    let grey = 8 + 10 * step;
    if distance((grey, grey, grey)) < distance((rl, gl, bl)) {
        232 + step
    } else {
        cube
    }
}

/// One run of a highlighted code line: its text, colour and font style.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CodeRun {
    /// The text.
    pub text: String,
    /// Foreground colour (RGB).
    pub rgb: (u8, u8, u8),
    /// Bold.
    pub bold: bool,
    /// Italic.
    pub italic: bool,
}

/// Highlights a code block line by line, carrying the lexer's state (for the terminal UI,
/// which styles the runs itself).
pub(crate) struct CodeHighlighter(Option<Highlighter>);

/// Code lines longer than this (bytes) are not highlighted.
const MAX_HIGHLIGHTED_LINE: usize = 2000;

impl CodeHighlighter {
    /// A highlighter for a fence's info string; it passes text through when the language is
    /// not known.
    pub(crate) fn new(info: &str) -> Self {
        Self(language(info).and_then(highlighter_for))
    }

    /// The runs of one code line (without its newline); None when not highlighted.
    pub(crate) fn line(&mut self, code: &str) -> Option<Vec<CodeRun>> {
        // A huge line (minified code) is not worth colouring: it and the rest of the block
        // are shown plain.
        if code.len() > MAX_HIGHLIGHTED_LINE {
            self.0 = None;
        }
        let highlighter = self.0.as_mut()?;
        Some(
            highlighter
                .line(code)
                .into_iter()
                .map(|(kind, text)| {
                    let (rgb, bold, italic) = kind.style();
                    CodeRun {
                        text: text.to_owned(),
                        rgb,
                        bold,
                        italic,
                    }
                })
                .collect(),
        )
    }
}

/// The xterm 256-colour index nearest to an RGB colour (terminals without true colour).
pub(crate) fn xterm_index(r: u8, g: u8, b: u8) -> u8 {
    xterm256(r, g, b)
}

/// Whether the terminal says it shows 24-bit colour.
pub(crate) fn truecolor() -> bool {
    std::env::var("COLORTERM").is_ok_and(|v| v == "truecolor" || v == "24bit")
}

/// A fence line's marker, its length and info string, when `line` opens or closes a fence.
pub(crate) fn fence_of(line: &str) -> Option<(char, usize, &str)> {
    parse_fence(line).map(|(_, marker, len, info)| (marker, len, info))
}

// ---------------------------------------------------------------------------------------------
// Rendering a block group with pulldown-cmark

/// Render markdown to terminal lines (without newlines), each with the index of the last
/// source line it shows content from.
fn render(source: &str) -> Vec<(usize, String)> {
    render_with(source, 3)
}

fn render_with(source: &str, attempts: u8) -> Vec<(usize, String)> {
    let parser = Parser::new_ext(source, OPTIONS);
    if attempts > 0
        && let Some(escaped) = escape_reference_definitions(source, parser.reference_definitions())
    {
        return render_with(&escaped, attempts - 1);
    }
    let mut writer = Writer::new(source);
    for (event, range) in parser.into_offset_iter() {
        writer.event(event, range);
    }
    writer.finish()
}

/// The parser consumes link reference definitions (`[id]: url`), which would print nothing;
/// escaped, they print as the text they are (and `[text][id]` stays as written).
fn escape_reference_definitions(source: &str, defs: &RefDefs<'_>) -> Option<String> {
    let mut starts: Vec<usize> = defs.iter().map(|(_, def)| def.span.start).collect();
    if starts.is_empty() {
        return None;
    }
    starts.sort_unstable();
    starts.dedup();
    let mut escaped = String::with_capacity(source.len() + starts.len());
    let mut at = 0;
    for start in starts {
        escaped.push_str(source.get(at..start)?);
        escaped.push('\\');
        at = start;
    }
    escaped.push_str(source.get(at..)?);
    Some(escaped)
}

/// A container whose lines carry a prefix.
enum Container {
    /// `│ `
    Quote,
    /// A list item: its marker on its first line, as many spaces on the others.
    Item {
        marker: String,
        width: usize,
        /// The marker is not printed yet.
        pending: bool,
        /// Where the item starts in the source.
        start: usize,
    },
}

/// An open link or image.
struct Link {
    dest: String,
    title: String,
    /// Its text so far, to leave out a url that only repeats it.
    text: String,
    image: bool,
}

/// A code block inside a container (top-level fences are the stream's).
enum CodeBlock {
    Indented,
    Fenced(Range<usize>),
}

/// Turns pulldown-cmark events into terminal lines.
struct Writer<'s> {
    source: &'s str,
    /// Where the source's newlines are, to tell offsets' line numbers.
    newlines: Vec<usize>,
    /// Rendered lines, each with the last source line it shows content from.
    lines: Vec<(usize, String)>,
    line: String,
    /// The last source line shown so far (content is rendered in source order, mostly).
    source_line: usize,
    /// Whether the current line is started: its prefixes and styles written.
    started: bool,
    /// Active styles, outermost first, re-applied after each reset and on each line.
    styles: Vec<&'static str>,
    containers: Vec<Container>,
    /// For each open list, the next item's number; None for bullets.
    lists: Vec<Option<u64>>,
    links: Vec<Link>,
    code: Option<CodeBlock>,
    /// Where the current line's last inline content ended in the source (`usize::MAX`: none).
    pos: usize,
    /// Where the last block ended in the source: lines between two blocks in a container
    /// (`>` alone) print as empty lines of the container.
    last_end: usize,
    /// Cells printed in the current table row, and where the last one ended in the source.
    cells: usize,
    cell_end: usize,
}

impl<'s> Writer<'s> {
    fn new(source: &'s str) -> Self {
        Self {
            source,
            newlines: source.match_indices('\n').map(|(i, _)| i).collect(),
            lines: Vec::new(),
            line: String::new(),
            source_line: 0,
            started: false,
            styles: Vec::new(),
            containers: Vec::new(),
            lists: Vec::new(),
            links: Vec::new(),
            code: None,
            pos: usize::MAX,
            last_end: 0,
            cells: 0,
            cell_end: 0,
        }
    }

    fn finish(mut self) -> Vec<(usize, String)> {
        self.close_line();
        self.lines
    }

    fn event(&mut self, event: Event<'_>, range: Range<usize>) {
        self.marker_line(range.start);
        match event {
            Event::Start(tag) => self.start(tag, range),
            Event::End(tag) => self.end(tag, range),
            Event::Text(text) => self.inline(range, |w| w.text(&text)),
            Event::Code(code) => {
                let raw = self.raw(&range);
                self.inline(range, |w| w.code_span(&code, raw));
            }
            Event::Html(text)
            | Event::InlineHtml(text)
            | Event::InlineMath(text)
            | Event::DisplayMath(text)
            | Event::FootnoteReference(text) => self.inline(range, |w| w.text(&text)),
            Event::TaskListMarker(done) => {
                self.last_end = range.end;
                self.inline(range, |w| {
                    w.start_line();
                    w.line.push_str(if done { "[x] " } else { "[ ] " });
                });
            }
            Event::SoftBreak | Event::HardBreak => {
                self.mark(range.start);
                self.break_line();
                self.pos = range.end;
            }
            Event::Rule => {
                self.block_start(range.start);
                self.mark(range.start);
                self.start_line();
                self.dim(&"─".repeat(RULE_WIDTH));
                self.block_end(range.end);
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>, range: Range<usize>) {
        match tag {
            Tag::Paragraph
            | Tag::HtmlBlock
            | Tag::Table(_)
            | Tag::MetadataBlock(_)
            | Tag::FootnoteDefinition(_)
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition => self.block_start(range.start),
            Tag::Heading { .. } => {
                self.block_start(range.start);
                self.push_style(HEADING);
            }
            Tag::CodeBlock(kind) => self.code_block_start(kind, range),
            Tag::BlockQuote(_) => {
                self.close_line();
                self.containers.push(Container::Quote);
                self.last_end = range.start;
            }
            Tag::List(start) => {
                self.close_line();
                self.lists.push(start);
            }
            Tag::Item => self.item_start(range.start),
            Tag::TableHead => {
                self.row_start(range.start);
                self.push_style(BOLD);
            }
            Tag::TableRow => self.row_start(range.start),
            Tag::TableCell => {
                self.start_line();
                if self.cells > 0 {
                    self.dim(" │ ");
                }
                self.cells += 1;
            }
            Tag::Emphasis => self.push_style(ITALIC),
            Tag::Strong => self.push_style(BOLD),
            Tag::Strikethrough => self.push_style(STRIKE),
            Tag::Superscript | Tag::Subscript => self.push_style(PLAIN),
            Tag::Link {
                dest_url, title, ..
            } => {
                self.links.push(Link {
                    dest: dest_url.to_string(),
                    title: title.to_string(),
                    text: String::new(),
                    image: false,
                });
                self.push_style(UNDERLINE);
            }
            Tag::Image {
                dest_url, title, ..
            } => {
                self.links.push(Link {
                    dest: dest_url.to_string(),
                    title: title.to_string(),
                    text: String::new(),
                    image: true,
                });
                self.push_style(PLAIN);
            }
        }
    }

    fn end(&mut self, tag: TagEnd, range: Range<usize>) {
        match tag {
            TagEnd::Paragraph
            | TagEnd::HtmlBlock
            | TagEnd::Table
            | TagEnd::MetadataBlock(_)
            | TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition => self.block_end(range.end),
            TagEnd::Heading(_) => {
                if !self.started {
                    // An empty heading (`#`) prints as written.
                    let raw = self.raw(&range).trim();
                    self.mark(range.start);
                    self.start_line();
                    self.line.push_str(raw);
                }
                self.block_end(range.end);
                self.pop_style();
            }
            TagEnd::CodeBlock => self.code_block_end(range),
            TagEnd::BlockQuote(_) => {
                self.close_line();
                self.containers.pop();
            }
            TagEnd::List(_) => {
                self.close_line();
                self.lists.pop();
            }
            TagEnd::Item => self.item_end(range),
            TagEnd::TableHead => {
                self.row_end(range.end);
                self.close_line();
                self.pop_style();
            }
            TagEnd::TableRow => {
                self.row_end(range.end);
                self.close_line();
            }
            TagEnd::TableCell => self.cell_end = range.end,
            TagEnd::Emphasis
            | TagEnd::Strong
            | TagEnd::Strikethrough
            | TagEnd::Superscript
            | TagEnd::Subscript => self.pop_style(),
            TagEnd::Link | TagEnd::Image => {
                self.pop_style();
                self.link_end(range);
            }
        }
    }

    // --- Blocks

    fn block_start(&mut self, start: usize) {
        self.close_line();
        self.gap(start);
    }

    fn block_end(&mut self, end: usize) {
        self.close_line();
        self.last_end = end;
    }

    /// Print the source between the last block and this one. Its lines are blank but for
    /// container markers (`>` alone), and print as empty lines; text there, which the parser
    /// dropped (a task marker before a table), prints as written.
    fn gap(&mut self, start: usize) {
        let gap = self.source.get(self.last_end..start).unwrap_or("");
        let at_line_start = self.last_end == 0
            || self
                .source
                .get(..self.last_end)
                .is_some_and(|s| s.ends_with('\n'));
        // It prints with the block that follows: before that, it did not show.
        self.mark(start);
        let pieces = gap.split('\n').count();
        for (i, piece) in gap.split('\n').enumerate() {
            let text = without_markers(piece);
            if !text.is_empty() {
                self.start_line();
                self.line.push_str(text);
                self.line.push(' ');
            }
            if i + 1 < pieces {
                if i == 0 && !at_line_start {
                    // The end of the last block's own line.
                    self.close_line();
                } else {
                    self.break_line();
                }
            }
        }
    }

    fn code_block_start(&mut self, kind: CodeBlockKind<'_>, range: Range<usize>) {
        self.block_start(range.start);
        match kind {
            CodeBlockKind::Indented => self.code = Some(CodeBlock::Indented),
            CodeBlockKind::Fenced(_) => {
                let opening = self.raw(&range).lines().next().unwrap_or("").trim();
                self.mark(range.start);
                self.start_line();
                self.dim(opening);
                self.close_line();
                self.code = Some(CodeBlock::Fenced(range));
            }
        }
    }

    fn code_block_end(&mut self, range: Range<usize>) {
        self.close_line();
        if let Some(CodeBlock::Fenced(fenced)) = self.code.take()
            && let Some(closing) = closing_fence(self.raw(&fenced))
        {
            self.mark(fenced.end.saturating_sub(1));
            self.start_line();
            self.dim(closing);
            self.close_line();
        }
        self.last_end = range.end;
    }

    fn item_start(&mut self, start: usize) {
        self.close_line();
        let bullet = match self.lists.last_mut() {
            Some(Some(number)) => {
                let bullet = format!("{number}. ");
                *number = number.saturating_add(1);
                bullet
            }
            _ => "• ".to_owned(),
        };
        // Top-level items are indented by two spaces, nested ones by their parent's text.
        let nested = self
            .containers
            .iter()
            .any(|c| matches!(c, Container::Item { .. }));
        let marker = if nested {
            bullet
        } else {
            format!("  {bullet}")
        };
        self.containers.push(Container::Item {
            width: marker.chars().count(),
            marker,
            pending: true,
            start,
        });
        self.last_end = start;
    }

    /// An item whose content starts on a later line (`-` alone, then the text indented)
    /// prints its marker on a line of its own, as in the source.
    fn marker_line(&mut self, at: usize) {
        let pending = self.containers.iter().find_map(|c| match c {
            Container::Item {
                pending: true,
                start,
                ..
            } => Some(*start),
            _ => None,
        });
        if let Some(start) = pending
            && self.source.get(start..at).is_some_and(|s| s.contains('\n'))
        {
            self.break_line();
        }
    }

    fn item_end(&mut self, range: Range<usize>) {
        let empty = matches!(
            self.containers.last(),
            Some(Container::Item { pending: true, .. })
        );
        if empty {
            // An empty item (`*` alone) prints as written.
            let raw = self.raw(&range).lines().next().unwrap_or("").trim();
            if let Some(Container::Item { marker, .. }) = self.containers.last_mut() {
                let indent = marker.len() - marker.trim_start().len();
                *marker = format!("{}{raw}", " ".repeat(indent));
            }
            self.mark(range.start);
            self.start_line();
        }
        self.close_line();
        self.containers.pop();
    }

    fn row_start(&mut self, start: usize) {
        self.close_line();
        self.cells = 0;
        self.cell_end = start;
    }

    /// The parser drops the cells beyond the header's count: print them as written.
    fn row_end(&mut self, end: usize) {
        let rest = self.source.get(self.cell_end..end).unwrap_or("");
        if !rest.trim().trim_matches('|').trim().is_empty() {
            self.mark(end.saturating_sub(1));
        }
        for cell in rest.split('|').map(str::trim).filter(|c| !c.is_empty()) {
            self.start_line();
            if self.cells > 0 {
                self.dim(" │ ");
            }
            self.cells += 1;
            self.line.push_str(cell);
        }
    }

    // --- Inline

    fn text(&mut self, text: &str) {
        if let Some(link) = self.links.last_mut() {
            link.text.push_str(text);
        }
        let indent = match self.code {
            Some(CodeBlock::Indented) => "    ",
            _ => "",
        };
        let first = self.source_line;
        for (i, segment) in text.split('\n').enumerate() {
            if i > 0 {
                self.break_line();
                self.reach(first + i);
            }
            if !segment.is_empty() {
                if !self.started {
                    self.start_line();
                    self.line.push_str(indent);
                }
                self.line.push_str(segment);
            }
        }
    }

    /// Inline content at `range`. Content from a later source line than the last goes on a
    /// new line even where the parser has no break (after a task marker, say), so that rendered
    /// lines keep following source lines.
    fn inline(&mut self, range: Range<usize>, write: impl FnOnce(&mut Self)) {
        if self
            .source
            .get(self.pos..range.start)
            .is_some_and(|gap| gap.contains('\n'))
        {
            self.end_line();
        }
        self.mark(range.start);
        write(self);
        self.mark(range.end.saturating_sub(1).max(range.start));
        self.pos = range.end;
    }

    /// The current line shows source at `offset`.
    fn mark(&mut self, offset: usize) {
        self.reach(self.newlines.partition_point(|n| *n < offset));
    }

    /// The current line shows source line `line` (or the last, if beyond).
    fn reach(&mut self, line: usize) {
        let last = if self.source.ends_with('\n') {
            self.newlines.len().saturating_sub(1)
        } else {
            self.newlines.len()
        };
        self.source_line = self.source_line.max(line.min(last));
    }

    fn code_span(&mut self, code: &str, raw: &str) {
        self.push_style(CODE);
        if raw.contains('\n') {
            // The parser joins the lines of a code span with spaces; keep them as lines, as the
            // stream printed them (without their indentation and quote markers).
            let ticks = raw.len() - raw.trim_start_matches('`').len();
            let inner = raw
                .get(ticks..raw.len().saturating_sub(ticks))
                .unwrap_or(code);
            let quoted = self
                .containers
                .iter()
                .any(|c| matches!(c, Container::Quote));
            let first = self.source_line;
            for (i, line) in inner.split('\n').enumerate() {
                if i > 0 {
                    self.break_line();
                    self.reach(first + i);
                    let line = line
                        .trim_start_matches(|c: char| c.is_whitespace() || (quoted && c == '>'));
                    self.text(line.trim_start());
                } else {
                    self.text(line);
                }
            }
        } else {
            self.text(code);
        }
        self.pop_style();
    }

    /// After a link's text, its url (and title) dim, unless the text is the url.
    fn link_end(&mut self, range: Range<usize>) {
        let Some(link) = self.links.pop() else {
            return;
        };
        let repeats =
            link.dest == link.text || link.dest.strip_prefix("mailto:") == Some(link.text.as_str());
        let dest = if link.image || !repeats {
            link.dest
        } else {
            String::new()
        };
        let title = if link.title.is_empty() {
            String::new()
        } else {
            format!("\"{}\"", link.title.replace(['\r', '\n'], " "))
        };
        let shown: Vec<&str> = [dest.as_str(), title.as_str()]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect();
        if !shown.is_empty() {
            // Where the url is on a later line than the text, so is the suffix.
            let suffix = format!(" ({})", shown.join(" "));
            self.inline(range.end..range.end, |w| {
                w.start_line();
                w.dim(&suffix);
            });
        }
    }

    // --- Lines and styles

    /// Begin the current line if needed: container prefixes, then the active styles.
    fn start_line(&mut self) {
        if self.started {
            return;
        }
        self.started = true;
        for container in &mut self.containers {
            match container {
                Container::Quote => {
                    self.line.push_str(DIM);
                    self.line.push_str("│ ");
                    self.line.push_str(RESET);
                }
                Container::Item {
                    marker,
                    width,
                    pending,
                    ..
                } => {
                    if *pending {
                        self.line.push_str(marker);
                        *pending = false;
                    } else {
                        self.line.push_str(&" ".repeat(*width));
                    }
                }
            }
        }
        for style in &self.styles {
            self.line.push_str(style);
        }
    }

    /// End the current line (resetting its styles).
    fn end_line(&mut self) {
        if self.styles.iter().any(|s| !s.is_empty()) {
            self.line.push_str(RESET);
        }
        self.lines
            .push((self.source_line, std::mem::take(&mut self.line)));
        self.started = false;
        self.pos = usize::MAX;
    }

    fn close_line(&mut self) {
        if self.started {
            self.end_line();
        }
    }

    /// A line break: the current line ends, even if empty.
    fn break_line(&mut self) {
        self.start_line();
        self.end_line();
    }

    fn push_style(&mut self, style: &'static str) {
        self.styles.push(style);
        if self.started {
            self.line.push_str(style);
        }
    }

    fn pop_style(&mut self) {
        self.styles.pop();
        if self.started {
            self.line.push_str(RESET);
            self.restore();
        }
    }

    /// Dim text on the started line; the active styles continue after it.
    fn dim(&mut self, text: &str) {
        self.line.push_str(DIM);
        self.line.push_str(text);
        self.line.push_str(RESET);
        self.restore();
    }

    /// Re-apply the active styles after a reset.
    fn restore(&mut self) {
        for style in &self.styles {
            self.line.push_str(style);
        }
    }

    fn raw(&self, range: &Range<usize>) -> &'s str {
        self.source.get(range.clone()).unwrap_or("")
    }
}

/// A line of source without its leading container markers: quote markers, list bullets and
/// numbers.
fn without_markers(line: &str) -> &str {
    let mut rest = line.trim();
    loop {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let after = if let Some(after) = rest.strip_prefix('>') {
            after
        } else if let Some(after) = rest.strip_prefix(['-', '+', '*']) {
            after
        } else if (1..=9).contains(&digits)
            && let Some(after) = rest.get(digits..).and_then(|r| r.strip_prefix(['.', ')']))
        {
            after
        } else {
            return rest;
        };
        if !after.is_empty() && !after.starts_with([' ', '\t']) && !after.starts_with('>') {
            return rest;
        }
        rest = after.trim_start();
    }
}

/// The closing fence of a fenced code block's source, if it has one.
fn closing_fence(raw: &str) -> Option<&str> {
    let mut lines = raw.lines();
    let (_, marker, len, _) = parse_fence(lines.next()?)?;
    let last = lines
        .next_back()?
        .trim_start_matches(|c: char| c.is_whitespace() || c == '>')
        .trim_end();
    let (_, closing_marker, closing_len, info) = parse_fence(last)?;
    (closing_marker == marker && closing_len >= len && info.is_empty()).then_some(last)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn render_chunks(chunks: &[&str]) -> String {
        let mut m = MarkdownStream::new(true);
        let mut s: String = chunks.iter().map(|c| m.push(c)).collect();
        s.push_str(&m.finish());
        s
    }

    fn render_text(text: &str) -> String {
        render_chunks(&[text])
    }

    fn render_chars(text: &str) -> String {
        let chars: Vec<String> = text.chars().map(String::from).collect();
        let refs: Vec<&str> = chars.iter().map(String::as_str).collect();
        render_chunks(&refs)
    }

    /// A small deterministic generator (no extra dependency).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            self.0 >> 33
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// The text split at random char boundaries.
    fn render_random_split(text: &str, rng: &mut Rng) -> String {
        let chars: Vec<char> = text.chars().collect();
        let mut chunks = Vec::new();
        let mut at = 0;
        while at < chars.len() {
            let n = 1 + rng.below(7);
            let end = (at + n).min(chars.len());
            chunks.push(chars[at..end].iter().collect::<String>());
            at = end;
        }
        let refs: Vec<&str> = chunks.iter().map(String::as_str).collect();
        render_chunks(&refs)
    }

    fn strip(s: &str) -> String {
        let mut out = String::new();
        let mut esc = false;
        for c in s.chars() {
            match (esc, c) {
                (false, '\x1b') => esc = true,
                (true, 'm') => esc = false,
                (true, _) => {}
                (false, c) => out.push(c),
            }
        }
        out
    }

    fn plain(text: &str) -> String {
        strip(&render_text(text))
    }

    #[test]
    fn styles_and_structure() {
        let s = render_text("# Title\nSome `code` and **bold**, *it* and ~~gone~~.\n- item\n");
        assert!(s.contains(&format!("{HEADING}Title{RESET}")), "{s:?}");
        assert!(s.contains(&format!("{CODE}code{RESET}")), "{s:?}");
        assert!(s.contains(&format!("{BOLD}bold{RESET}")), "{s:?}");
        assert!(s.contains(&format!("{ITALIC}it{RESET}")), "{s:?}");
        assert!(s.contains(&format!("{STRIKE}gone{RESET}")), "{s:?}");
        assert_eq!(
            strip(&s),
            "Title\nSome code and bold, it and gone.\n  • item\n"
        );
    }

    #[test]
    fn block_structure() {
        let text = "- a
  - b
    - c
- [x] done
- [ ] todo

3. three
4. four

> quoted **text**
> more
>
> second paragraph

---
| h1 | h2 |
|----|----|
| x  | y  |

next <span>html</span> and ![logo](img.png) and [docs](http://d) and <http://auto>
";
        let expected = "  • a
    • b
      • c
  • [x] done
  • [ ] todo

  3. three
  4. four

│ quoted text
│ more
│ 
│ second paragraph

────────────────────────────────────────
h1 │ h2
x │ y

next <span>html</span> and logo (img.png) and docs (http://d) and http://auto
";
        assert_eq!(plain(text), expected);
    }

    #[test]
    fn table_header_is_bold_and_waits_for_the_next_line() {
        let mut m = MarkdownStream::new(true);
        assert_eq!(m.push("| a | b |\n"), "", "a possible header waits");
        let head = m.push("|---|---|\n");
        assert!(head.starts_with(BOLD), "{head:?}");
        assert_eq!(strip(&head), "a │ b\n");
        assert_eq!(strip(&m.push("| 1 | 2 | 3 |\n")), "1 │ 2 │ 3\n");
        assert_eq!(m.finish(), "");
        // A lone line with a pipe is printed at the end of the text.
        let mut m = MarkdownStream::new(true);
        assert_eq!(m.push("a | b\n"), "");
        assert_eq!(strip(&m.finish()), "a | b\n");
    }

    #[test]
    fn nested_styles_are_restored_after_an_inner_reset() {
        let s = render_text("# Use `cargo` here\n**bold `c` still bold**\n");
        assert!(
            s.contains(&format!("{HEADING}Use {CODE}cargo{RESET}{HEADING} here")),
            "{s:?}"
        );
        assert!(
            s.contains(&format!("{BOLD}bold {CODE}c{RESET}{BOLD} still bold")),
            "{s:?}"
        );
        // Styles run across soft breaks and are re-applied on each line.
        assert_eq!(
            render("*one\ntwo*\n"),
            [
                (0, format!("{ITALIC}one{RESET}")),
                (1, format!("{ITALIC}two{RESET}"))
            ]
        );
    }

    #[test]
    fn links_show_their_url_unless_it_is_the_text() {
        assert_eq!(plain("[a](http://x)\n"), "a (http://x)\n");
        assert_eq!(plain("[http://x](http://x)\n"), "http://x\n");
        assert_eq!(plain("<a@b.c>\n"), "a@b.c\n");
        assert_eq!(plain("[a](u \"t\")\n"), "a (u \"t\")\n");
        let s = render_text("[a](http://x)\n");
        assert!(s.contains(&format!("{UNDERLINE}a{RESET}{DIM} (http://x){RESET}")));
    }

    #[test]
    fn text_is_never_lost() {
        for (text, expected) in [
            ("2 * 3 = 6", "2 * 3 = 6"),
            ("a * b", "a * b"),
            ("*", "  *"),
            ("-", "  -"),
            ("1.", "  1."),
            ("**", "**"),
            ("#", "#"),
            ("##", "##"),
            ("unmatched ` backtick", "unmatched ` backtick"),
            ("``` not a fence ` here", "``` not a fence ` here"),
            ("<tag>", "<tag>"),
            ("x_y_z", "x_y_z"),
            // Link reference definitions print as written.
            ("[id]: http://x", "[id]: http://x"),
            ("> [q]: http://y", "│ [q]: http://y"),
        ] {
            assert_eq!(
                plain(&format!("{text}\n")),
                format!("{expected}\n"),
                "{text:?}"
            );
        }
        // A task marker before a table (which the parser drops).
        assert_eq!(
            plain("- [x] |---|---|\n  |---|---|\n"),
            "  • [x] \n    --- │ ---\n"
        );
        // Cells beyond the header's count.
        assert_eq!(
            plain("| a | b |\n|---|---|\n| 1 | 2 | 3 |\n"),
            "a │ b\n1 │ 2 │ 3\n"
        );
    }

    #[test]
    fn later_lines_that_change_earlier_ones() {
        // Printed lines stay; the underline shows nothing more.
        assert_eq!(plain("Title\n===\nnext\n"), "Title\nnext\n");
        // A link's url on the next line: the suffix prints with that line.
        assert_eq!(
            plain("see [a](\nhttp://x) end\n"),
            "see [a](\n (http://x) end\n"
        );
        // A code span over two lines keeps them.
        assert_eq!(plain("a `b\nc` d\n"), "a `b\nc d\n");
        // An item's text on the line after its marker.
        assert_eq!(plain("-\n  text\n"), "  -\n    text\n");
    }

    #[test]
    fn hard_breaks_are_newlines() {
        assert_eq!(plain("a  \nb\n"), "a\nb\n");
        assert_eq!(plain("a<br>b\n"), "a<br>b\n");
    }

    #[test]
    fn blank_lines_pass_through() {
        assert_eq!(plain("a\n\n\nb\n"), "a\n\n\nb\n");
        assert_eq!(plain("a\n   \nb"), "a\n\nb");
    }

    #[test]
    fn chunk_boundaries_do_not_matter() {
        let text = "## Plan\n1. read `src/lib.rs`\n2. then **this**\n```rust\nfn main() { let x = 2 * 3; }\n```\n> note **this**\n* star item\n  * nested\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n  ~~~py\n  print('hi')\n  ~~~\nend";
        let whole = render_text(text);
        assert_eq!(render_chars(text), whole);
        let mut rng = Rng(7);
        for _ in 0..20 {
            assert_eq!(render_random_split(text, &mut rng), whole);
        }
        let plain = strip(&whole);
        assert!(plain.contains("fn main() { let x = 2 * 3; }"), "{plain}");
        assert!(plain.contains("  • star item\n    • nested"), "{plain}");
        assert!(plain.contains("│ note this"), "{plain}");
        assert!(
            plain.contains("  1. read src/lib.rs\n  2. then this"),
            "{plain}"
        );
        assert!(plain.contains("~~~py\nprint('hi')\n~~~"), "{plain}");
        assert!(plain.ends_with("\nend"), "{plain}");
    }

    #[test]
    fn lines_are_emitted_as_soon_as_complete() {
        let mut m = MarkdownStream::new(true);
        assert_eq!(m.push("Hel"), "");
        assert!(m.push("lo\n").contains("Hello"));
        assert!(m.push("- item\n").contains("item"));
        assert!(m.push("# Head\n").contains("Head"));
        assert!(m.push("```rust\n").contains("```rust"));
        assert!(m.push("let x = 1;\n").contains("let"));
        assert!(m.push("```\nabc").contains("```"));
        assert_eq!(strip(&m.finish()), "abc");
        let mut m = MarkdownStream::new(true);
        assert!(m.push("Hello\n").contains("Hello"));
    }

    #[test]
    fn code_blocks_are_highlighted() {
        let s = render_text("```rust\nfn main() {}\n```\n");
        assert!(s.contains(";38;5;") || s.contains(";38;2;"), "{s:?}");
        assert_eq!(strip(&s), "```rust\nfn main() {}\n```\n");
        assert!(s.starts_with(&format!("{DIM}```rust{RESET}\n")), "{s:?}");
        // Each code line ends with a reset.
        assert!(s.contains(&format!("{RESET}\n{DIM}```{RESET}\n")), "{s:?}");
        let prose = render_text("fn main() {}\n");
        assert!(!prose.contains("38;"), "{prose:?}");
    }

    #[test]
    fn truecolor_uses_24_bit_escapes() {
        let mut m = MarkdownStream::new(true);
        m.truecolor = true;
        let s = m.push("```py\nx = 1\n```\n");
        assert!(s.contains(";38;2;"), "{s:?}");
        assert!(!s.contains(";38;5;"), "{s:?}");
    }

    #[test]
    fn unknown_language_is_printed_verbatim() {
        let text = "```nosuchlang\nsome <code> *x* `y`\n```\n";
        let s = render_text(text);
        assert!(!s.contains("38;"), "{s:?}");
        assert_eq!(strip(&s), text);
        let s = render_text("~~~\n  indented *x*\n~~~\n");
        assert_eq!(strip(&s), "~~~\n  indented *x*\n~~~\n");
    }

    #[test]
    fn fence_indentation_is_stripped() {
        let s = plain("- step\n  ```sh\n  cargo build\n    nested\n  ```\n- next\n");
        assert_eq!(s, "  • step\n```sh\ncargo build\n  nested\n```\n  • next\n");
    }

    #[test]
    fn unclosed_fence_is_reset_at_finish() {
        let mut m = MarkdownStream::new(true);
        let mut s = m.push("```rust\nlet s = \"open");
        s.push_str(&m.finish());
        assert!(s.ends_with(RESET), "{s:?}");
        assert_eq!(strip(&s), "```rust\nlet s = \"open");
        // The stream is ready for a new text block.
        assert_eq!(strip(&m.push("**b**\n")), "b\n");
    }

    #[test]
    fn code_inside_a_quote_keeps_its_fences() {
        assert_eq!(plain("> ```\n> code\n"), "│ ```\n│ code\n");
        assert_eq!(plain("> ```\n> code\n> ```\n"), "│ ```\n│ code\n│ ```\n");
        assert_eq!(plain("    indented\n"), "    indented\n");
    }

    #[test]
    fn without_color_text_passes_through() {
        let mut m = MarkdownStream::new(false);
        assert_eq!(m.push("# a `b`"), "# a `b`");
        assert_eq!(m.push("\n```rust\nx\n"), "\n```rust\nx\n");
        assert_eq!(m.finish(), "");
    }

    #[test]
    fn xterm_colours() {
        assert_eq!(xterm256(0, 0, 0), 16);
        assert_eq!(xterm256(255, 255, 255), 231);
        assert_eq!(xterm256(255, 0, 0), 196);
        assert_eq!(xterm256(128, 128, 128), 244);
        assert_eq!(xterm256(0, 95, 135), 24);
    }

    #[test]
    fn languages() {
        assert_eq!(language("rust,ignore"), Some("rust"));
        assert_eq!(language("{.python}"), Some("python"));
        assert_eq!(language(""), None);
        assert!(highlighter_for("text").is_none());
        for token in [
            "rust", "py", "js", "ts", "sh", "bash", "json", "yaml", "diff", "C++", "golang",
        ] {
            assert!(highlighter_for(token).is_some(), "{token}");
        }
    }

    /// The letters of `text`, in order, are a subsequence of those of `out`.
    fn letters_kept(text: &str, out: &str) -> bool {
        let mut out = out.chars().filter(char::is_ascii_alphabetic);
        text.chars()
            .filter(char::is_ascii_alphabetic)
            .all(|c| out.any(|o| o == c))
    }

    /// Random markdown-ish text: no panic, the same output however it is split, and every
    /// letter of the input in the output, in order (markers may go, letters may not).
    #[test]
    fn fuzz_no_panic_no_lost_text() {
        #[rustfmt::skip]
        const PIECES: &[&str] = &[
            "a", "b", "x", "Yz", "1", "2.", " ", " ", "  ", "    ", "\t", "\n", "\n", "\n\n",
            "*", "**", "_", "`", "```", "~~~", "~", "#", "# ", ">", "> ", "-", "- ", "+ ", "1. ",
            "1) ", "[", "]", "(", ")", "!", "|", "---", "===", "\\", "<", "/", ":", "\"", "'",
            "é", "│", "[ ] ", "[x] ", "http://u", "<b>", "<!--", "-->", "<div>", "</div>",
            "[a](b)", "![i](u)", "`c`", "\n```rust\n", "\n~~~py\n", "\n| a | b |\n",
            "|---|---|\n", "\n- ", "\n  - ", "\n> ", "\n# ",
        ];
        let mut rng = Rng(42);
        for _ in 0..800 {
            let len = rng.below(60);
            let text: String = (0..len).map(|_| PIECES[rng.below(PIECES.len())]).collect();
            let whole = render_text(&text);
            assert_eq!(render_random_split(&text, &mut rng), whole, "{text:?}");
            let out = strip(&whole);
            assert!(letters_kept(&text, &out), "{text:?} -> {out:?}");
            let mut m = MarkdownStream::new(false);
            assert_eq!(m.push(&text) + &m.finish(), text);
        }
    }

    #[test]
    fn a_huge_code_line_is_not_highlighted() {
        let mut h = CodeHighlighter::new("rust");
        assert!(h.line("fn main() {}").is_some());
        assert!(h.line(&"x".repeat(MAX_HIGHLIGHTED_LINE + 1)).is_none());
        // Nor the rest of the block.
        assert!(h.line("fn main() {}").is_none());
    }
}
