//! Complete markdown blocks as styled, wrapped terminal lines for the terminal UI: paragraphs
//! word-wrapped, lists with hanging indents, block quotes, headings, code blocks highlighted by
//! [`crate::term::highlight`] (the fences kept, dim, so code stays copyable), and tables with aligned columns.
//! The streamed answer is rendered here one block at a time, once each block is complete
//! (see [`crate::term::stream`]).

use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui_core::style::{Color, Modifier, Style};
use ratatui_core::text::{Line, Span};

use crate::term::markdown::{CodeHighlighter, CodeRun, truecolor, xterm_index};
use crate::term::wrap::{line_width, width as text_width, wrap_line};

/// Markdown extensions understood besides CommonMark (as the line printer).
const OPTIONS: Options = Options::ENABLE_STRIKETHROUGH
    .union(Options::ENABLE_TABLES)
    .union(Options::ENABLE_TASKLISTS);

/// Style of inline code.
pub fn code_style() -> Style {
    Style::new().fg(Color::Cyan)
}

fn dim() -> Style {
    Style::new().add_modifier(Modifier::DIM)
}

/// Render markdown `source` (one or more complete blocks) to lines at most `width` columns
/// wide; code lines are left long (the terminal wraps them, so they copy as one line).
pub fn render_markdown(source: &str, width: usize) -> Vec<Line<'static>> {
    let mut r = Renderer::new(width.max(8));
    for event in Parser::new_ext(source, OPTIONS) {
        r.event(event);
    }
    r.flush();
    r.out
}

/// A code line highlighted (plain when `runs` is None), as spans.
pub fn code_spans(code: &str, runs: Option<Vec<CodeRun>>) -> Vec<Span<'static>> {
    let Some(runs) = runs else {
        return vec![Span::raw(code.to_owned())];
    };
    let tc = truecolor();
    runs.into_iter()
        .map(|run| {
            let (r, g, b) = run.rgb;
            let color = if tc {
                Color::Rgb(r, g, b)
            } else {
                Color::Indexed(xterm_index(r, g, b))
            };
            let mut style = Style::new().fg(color);
            if run.bold {
                style = style.add_modifier(Modifier::BOLD);
            }
            if run.italic {
                style = style.add_modifier(Modifier::ITALIC);
            }
            Span::styled(run.text, style)
        })
        .collect()
}

/// A list being rendered.
struct List {
    /// The next number (ordered lists).
    next: Option<u64>,
    /// Width of the current item's marker.
    marker_width: usize,
}

/// A table being collected.
struct Table {
    aligns: Vec<Alignment>,
    rows: Vec<Vec<Vec<Span<'static>>>>,
    row: Vec<Vec<Span<'static>>>,
    head_rows: usize,
}

/// A code block being collected.
struct Code {
    info: String,
    fenced: bool,
    text: String,
}

struct Renderer {
    width: usize,
    out: Vec<Line<'static>>,
    styles: Vec<Style>,
    spans: Vec<Span<'static>>,
    quote: usize,
    lists: Vec<List>,
    /// The marker of the item whose first line is next.
    marker: Option<String>,
    table: Option<Table>,
    code: Option<Code>,
    links: Vec<(String, usize)>,
    need_gap: bool,
}

impl Renderer {
    fn new(width: usize) -> Self {
        Self {
            width,
            out: Vec::new(),
            styles: vec![Style::new()],
            spans: Vec::new(),
            quote: 0,
            lists: Vec::new(),
            marker: None,
            table: None,
            code: None,
            links: Vec::new(),
            need_gap: false,
        }
    }

    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or_default()
    }

    fn push_style(&mut self, add: Style) {
        let s = self.style().patch(add);
        self.styles.push(s);
    }

    fn pop_style(&mut self) {
        if self.styles.len() > 1 {
            self.styles.pop();
        }
    }

    /// The prefix of a line: quote bars, list indentation, and the item marker on an item's
    /// first line.
    fn prefix(&mut self, first: bool) -> Vec<Span<'static>> {
        let mut p = Vec::new();
        for _ in 0..self.quote {
            p.push(Span::styled("│ ", dim()));
        }
        let depth = self.lists.len();
        for (i, list) in self.lists.iter().enumerate() {
            if i + 1 == depth {
                match self.marker.as_ref().filter(|_| first) {
                    Some(m) => p.push(Span::styled(m.clone(), dim())),
                    None => p.push(Span::raw(" ".repeat(list.marker_width))),
                }
            } else {
                p.push(Span::raw(" ".repeat(list.marker_width)));
            }
        }
        if first {
            self.marker = None;
        }
        p
    }

    /// A blank line between blocks (inside quotes, with their bars).
    fn gap(&mut self) {
        if self.need_gap && !self.out.is_empty() {
            let mut p = Vec::new();
            for _ in 0..self.quote {
                p.push(Span::styled("│", dim()));
            }
            self.out.push(Line::from(p));
        }
        self.need_gap = false;
    }

    /// Emit the inline content collected so far as wrapped lines.
    fn flush(&mut self) {
        if self.spans.is_empty() && self.marker.is_none() {
            return;
        }
        let spans = std::mem::take(&mut self.spans);
        let first = self.prefix(true);
        let rest = self.prefix(false);
        let prefix_width = first.iter().map(|s| text_width(&s.content)).sum::<usize>();
        let room = self.width.saturating_sub(prefix_width).max(4);
        for (i, row) in wrap_line(&Line::from(spans), room, &[])
            .into_iter()
            .enumerate()
        {
            let mut line = if i == 0 { first.clone() } else { rest.clone() };
            line.extend(row.spans);
            self.out.push(Line::from(line));
        }
    }

    fn text(&mut self, text: &str) {
        if let Some(code) = &mut self.code {
            code.text.push_str(text);
            return;
        }
        let style = self.style();
        self.spans.push(Span::styled(text.to_owned(), style));
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => self.text(&t),
            Event::Code(t) => {
                let style = self.style().patch(code_style());
                self.spans.push(Span::styled(t.to_string(), style));
            }
            Event::Html(t) | Event::InlineHtml(t) => {
                if self.code.is_some() {
                    self.text(&t);
                } else {
                    for (i, piece) in t.split('\n').enumerate() {
                        if i > 0 {
                            self.flush();
                        }
                        if !piece.is_empty() {
                            self.text(piece);
                        }
                    }
                }
            }
            Event::SoftBreak => self.text(" "),
            Event::HardBreak => self.flush(),
            Event::Rule => {
                self.flush();
                self.gap();
                let n = self.width.min(60);
                self.out.push(Line::styled("─".repeat(n), dim()));
                self.need_gap = true;
            }
            Event::TaskListMarker(done) => {
                let mark = if done { "☑ " } else { "☐ " };
                self.spans.push(Span::raw(mark));
            }
            Event::FootnoteReference(t) => self.text(&format!("[{t}]")),
            _ => {}
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.gap(),
            Tag::Heading { level, .. } => {
                self.flush();
                self.gap();
                let mut s = Style::new().add_modifier(Modifier::BOLD);
                if matches!(level, HeadingLevel::H1 | HeadingLevel::H2) {
                    s = s.add_modifier(Modifier::UNDERLINED);
                }
                self.push_style(s);
            }
            Tag::BlockQuote(_) => {
                self.flush();
                self.gap();
                self.quote += 1;
                self.push_style(Style::new().add_modifier(Modifier::ITALIC));
            }
            Tag::CodeBlock(kind) => {
                self.flush();
                self.gap();
                let (info, fenced) = match kind {
                    CodeBlockKind::Fenced(info) => (info.to_string(), true),
                    CodeBlockKind::Indented => (String::new(), false),
                };
                self.code = Some(Code {
                    info,
                    fenced,
                    text: String::new(),
                });
            }
            Tag::List(start) => {
                self.flush();
                if self.lists.is_empty() {
                    self.gap();
                }
                self.lists.push(List {
                    next: start,
                    marker_width: 2,
                });
            }
            Tag::Item => {
                self.flush();
                let depth = self.lists.len();
                if let Some(list) = self.lists.last_mut() {
                    let marker = match &mut list.next {
                        Some(n) => {
                            let m = format!("{n}. ");
                            *n += 1;
                            m
                        }
                        None => match depth {
                            1 => "• ".to_owned(),
                            2 => "◦ ".to_owned(),
                            _ => "▪ ".to_owned(),
                        },
                    };
                    list.marker_width = text_width(&marker);
                    self.marker = Some(marker);
                }
            }
            Tag::Table(aligns) => {
                self.flush();
                self.gap();
                self.table = Some(Table {
                    aligns,
                    rows: Vec::new(),
                    row: Vec::new(),
                    head_rows: 0,
                });
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(t) = &mut self.table {
                    t.row.clear();
                }
            }
            Tag::TableCell => self.spans.clear(),
            Tag::Emphasis => self.push_style(Style::new().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(Style::new().add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => {
                self.push_style(Style::new().add_modifier(Modifier::CROSSED_OUT));
            }
            Tag::Link { dest_url, .. } => {
                self.links.push((dest_url.to_string(), self.spans.len()));
                self.push_style(Style::new().add_modifier(Modifier::UNDERLINED));
            }
            Tag::Image { dest_url, .. } => {
                self.links.push((dest_url.to_string(), self.spans.len()));
                self.spans.push(Span::styled("[image: ", dim()));
                self.push_style(Style::new());
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush();
                self.need_gap = true;
            }
            TagEnd::Heading(_) => {
                self.flush();
                self.pop_style();
                self.need_gap = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.quote = self.quote.saturating_sub(1);
                self.pop_style();
                self.need_gap = true;
            }
            TagEnd::CodeBlock => {
                if let Some(code) = self.code.take() {
                    self.code_block(code);
                }
                self.need_gap = true;
            }
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
                if self.lists.is_empty() {
                    self.need_gap = true;
                }
            }
            TagEnd::Item => self.flush(),
            TagEnd::TableCell => {
                let cell = std::mem::take(&mut self.spans);
                if let Some(t) = &mut self.table {
                    t.row.push(cell);
                }
            }
            TagEnd::TableHead => {
                if let Some(t) = &mut self.table {
                    let row = std::mem::take(&mut t.row);
                    t.rows.push(row);
                    t.head_rows = t.rows.len();
                }
            }
            TagEnd::TableRow => {
                if let Some(t) = &mut self.table {
                    let row = std::mem::take(&mut t.row);
                    t.rows.push(row);
                }
            }
            TagEnd::Table => {
                if let Some(t) = self.table.take() {
                    self.render_table(t);
                }
                self.need_gap = true;
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => self.pop_style(),
            TagEnd::Link => {
                self.pop_style();
                if let Some((url, at)) = self.links.pop() {
                    let text: String = self.spans[at.min(self.spans.len())..]
                        .iter()
                        .map(|s| s.content.as_ref())
                        .collect();
                    let bare = url.strip_prefix("mailto:").unwrap_or(&url);
                    if !url.is_empty() && text != url && text != bare {
                        self.spans.push(Span::styled(format!(" ({url})"), dim()));
                    }
                }
            }
            TagEnd::Image => {
                self.pop_style();
                if let Some((url, _)) = self.links.pop() {
                    self.spans.push(Span::styled(format!("]({url})"), dim()));
                }
            }
            _ => {}
        }
    }

    fn code_block(&mut self, code: Code) {
        let prefix = self.prefix(false);
        let line_with = |prefix: &[Span<'static>], body: Vec<Span<'static>>| {
            let mut spans = prefix.to_vec();
            spans.extend(body);
            Line::from(spans)
        };
        if code.fenced {
            let fence = format!("```{}", code.info);
            self.out
                .push(line_with(&prefix, vec![Span::styled(fence, dim())]));
        }
        let mut highlighter = CodeHighlighter::new(&code.info);
        let indent = if code.fenced { "" } else { "    " };
        let text = code.text.strip_suffix('\n').unwrap_or(&code.text);
        if !text.is_empty() || code.fenced {
            for line in text.split('\n') {
                let line = line.strip_suffix('\r').unwrap_or(line);
                let mut body = vec![Span::raw(indent)];
                body.extend(code_spans(line, highlighter.line(line)));
                self.out.push(line_with(&prefix, body));
            }
        }
        if code.fenced {
            self.out
                .push(line_with(&prefix, vec![Span::styled("```", dim())]));
        }
    }

    fn render_table(&mut self, t: Table) {
        let prefix = self.prefix(false);
        let prefix_width: usize = prefix.iter().map(|s| text_width(&s.content)).sum();
        let room = self.width.saturating_sub(prefix_width);
        let lines = table_lines(&t, room);
        for l in lines {
            let mut spans = prefix.clone();
            spans.extend(l.spans);
            self.out.push(Line::from(spans));
        }
    }
}

/// A table's lines at most `room` columns wide: box-drawn, columns as wide as their widest
/// cell, narrowed (cells wrapping) when the table does not fit.
fn table_lines(t: &Table, room: usize) -> Vec<Line<'static>> {
    let ncols = t.rows.iter().map(Vec::len).max().unwrap_or(0);
    if ncols == 0 {
        return Vec::new();
    }
    let cell_width =
        |c: &Vec<Span<'static>>| c.iter().map(|s| text_width(&s.content)).sum::<usize>();
    let mut widths = vec![1usize; ncols];
    for row in &t.rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell_width(cell));
        }
    }
    // Borders: "│ " before each cell, " │" after the last, " │ " between: 3 per column + 1.
    let chrome = 3 * ncols + 1;
    if room < chrome + 3 * ncols {
        // Too narrow for columns: one line per row, cells separated by bars.
        return t
            .rows
            .iter()
            .flat_map(|row| {
                let mut spans = Vec::new();
                for (i, cell) in row.iter().enumerate() {
                    if i > 0 {
                        spans.push(Span::styled(" │ ", dim()));
                    }
                    spans.extend(cell.iter().cloned());
                }
                wrap_line(&Line::from(spans), room.max(4), &[])
            })
            .collect();
    }
    let budget = room - chrome;
    while widths.iter().sum::<usize>() > budget {
        // Narrow the widest column by one.
        let Some((i, _)) = widths.iter().enumerate().max_by_key(|(_, w)| **w) else {
            break;
        };
        if widths[i] <= 3 {
            break;
        }
        widths[i] -= 1;
    }
    let border = |left: &str, mid: &str, right: &str| {
        let mut s = String::from(left);
        for (i, w) in widths.iter().enumerate() {
            if i > 0 {
                s.push_str(mid);
            }
            s.push_str(&"─".repeat(w + 2));
        }
        s.push_str(right);
        Line::styled(s, dim())
    };
    let mut out = vec![border("┌", "┬", "┐")];
    for (r, row) in t.rows.iter().enumerate() {
        if r > 0 && r == t.head_rows {
            out.push(border("├", "┼", "┤"));
        }
        let header = r < t.head_rows;
        let cells: Vec<Vec<Line<'static>>> = (0..ncols)
            .map(|i| {
                let spans = row.get(i).cloned().unwrap_or_default();
                let spans = if header {
                    spans
                        .into_iter()
                        .map(|s| {
                            let st = s.style.add_modifier(Modifier::BOLD);
                            s.style(st)
                        })
                        .collect()
                } else {
                    spans
                };
                wrap_line(&Line::from(spans), widths[i], &[])
            })
            .collect();
        let height = cells.iter().map(Vec::len).max().unwrap_or(1);
        for k in 0..height {
            let mut spans = vec![Span::styled("│ ", dim())];
            for (i, cell) in cells.iter().enumerate() {
                if i > 0 {
                    spans.push(Span::styled(" │ ", dim()));
                }
                let line = cell.get(k).cloned().unwrap_or_default();
                let pad = widths[i].saturating_sub(line_width(&line));
                let align = t.aligns.get(i).copied().unwrap_or(Alignment::None);
                let (before, after) = match align {
                    Alignment::Right => (pad, 0),
                    Alignment::Center => (pad / 2, pad - pad / 2),
                    _ => (0, pad),
                };
                if before > 0 {
                    spans.push(Span::raw(" ".repeat(before)));
                }
                spans.extend(line.spans);
                if after > 0 {
                    spans.push(Span::raw(" ".repeat(after)));
                }
            }
            spans.push(Span::styled(" │", dim()));
            out.push(Line::from(spans));
        }
    }
    out.push(border("└", "┴", "┘"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::wrap::plain;

    fn text(source: &str, width: usize) -> Vec<String> {
        render_markdown(source, width).iter().map(plain).collect()
    }

    #[test]
    fn paragraphs_wrap_and_are_separated() {
        assert_eq!(
            text("one two three four five\n\nsix", 12),
            ["one two", "three four", "five", "", "six"]
        );
    }

    #[test]
    fn tables_are_aligned() {
        let t = text(
            "| name | n |\n|:-----|--:|\n| a | 1 |\n| longer name | 22 |\n",
            80,
        );
        assert_eq!(
            t,
            [
                "┌─────────────┬────┐",
                "│ name        │  n │",
                "├─────────────┼────┤",
                "│ a           │  1 │",
                "│ longer name │ 22 │",
                "└─────────────┴────┘",
            ]
        );
        // Narrow: cells wrap inside their columns and no row is wider than the screen.
        let t = render_markdown(
            "| a | b |\n|---|---|\n| some long words here | and more words there |\n",
            30,
        );
        for l in &t {
            assert!(line_width(l) <= 30, "{:?}", plain(l));
        }
    }

    #[test]
    fn lists_hang_and_number() {
        let t = text("1. first item is long\n2. second\n   - nested\n", 14);
        assert_eq!(
            t,
            ["1. first item", "   is long", "2. second", "   • nested"]
                .iter()
                .map(|s| s.replace('•', "◦"))
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn code_blocks_keep_their_fences_and_lines() {
        let t = text("```rust\nfn main() {}\n    let x = 1;\n```\n", 10);
        assert_eq!(t, ["```rust", "fn main() {}", "    let x = 1;", "```"]);
    }

    #[test]
    fn inline_styles_and_links() {
        let lines = render_markdown("a **b** `c` [d](http://x)", 80);
        assert_eq!(plain(&lines[0]), "a b c d (http://x)");
        let bold = lines[0].spans.iter().find(|s| s.content == "b").unwrap();
        assert!(bold.style.add_modifier.contains(Modifier::BOLD));
        let code = lines[0].spans.iter().find(|s| s.content == "c").unwrap();
        assert_eq!(code.style.fg, Some(Color::Cyan));
    }

    #[test]
    fn quotes_and_headings() {
        assert_eq!(
            text("# Title\n\n> quoted text", 40),
            ["Title", "", "│ quoted text"]
        );
    }
}
