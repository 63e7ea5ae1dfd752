//! The live viewport, top to bottom: the streaming thinking and answer, running tool calls, the
//! todo list, the spinner, queued messages, then the composer (or an approval, a picker, a
//! history search), the completion menu and the status line. When it does not fit, the live
//! part gives way first (its last rows stay).

use std::time::Duration;

use ratatui_core::buffer::Buffer;
use ratatui_core::layout::Position;
use ratatui_core::style::{Color, Modifier, Style};
use ratatui_core::text::{Line, Span};

use super::ui::{Overlay, Ui, call_line, dim, todo_lines};
use crate::term::wrap::wrap_line;

/// Spinner frames.
const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// How long a notice stays.
const NOTICE_FOR: Duration = Duration::from_secs(3);

/// Completion menu rows.
const MENU_ROWS: usize = 8;

/// A laid-out viewport.
#[derive(Debug, Default)]
pub struct Frame {
    /// Its rows, each fitting the width.
    pub lines: Vec<Line<'static>>,
    /// The cursor (row, column), when shown.
    pub cursor: Option<(u16, u16)>,
}

impl Frame {
    /// Rows it takes.
    pub fn height(&self) -> u16 {
        u16::try_from(self.lines.len()).unwrap_or(u16::MAX).max(1)
    }

    /// Draw it into `buf` (whose area is the viewport); where the cursor goes.
    pub fn paint(&self, buf: &mut Buffer) -> Option<Position> {
        let area = *buf.area();
        for (i, line) in self.lines.iter().enumerate() {
            let Ok(row) = u16::try_from(i) else { break };
            if row >= area.height {
                break;
            }
            buf.set_line(area.x, area.y + row, line, area.width);
        }
        self.cursor
            .map(|(r, c)| Position::new(area.x + c.min(area.width.saturating_sub(1)), area.y + r))
    }
}

fn wrapped(lines: impl IntoIterator<Item = Line<'static>>, width: usize) -> Vec<Line<'static>> {
    lines
        .into_iter()
        .flat_map(|l| wrap_line(&l, width, &[]))
        .collect()
}

impl Ui {
    /// Lay out the viewport at most `max_height` rows high.
    pub fn layout(&self, max_height: u16) -> Frame {
        let width = usize::from(self.width.max(1));
        let mut live: Vec<Line<'static>> = Vec::new();
        if self.thinking.is_some() {
            live.push(Line::styled("✻ Thinking…", dim()));
            let rows = self.thinking_rows(3);
            live.extend(rows.into_iter().map(|r| {
                let mut spans = vec![Span::raw("  ")];
                spans.extend(r.spans);
                Line::from(spans).style(dim().add_modifier(Modifier::ITALIC))
            }));
        }
        live.extend(self.answer_rows(usize::from(max_height)));
        for r in &self.running {
            let indent = if r.nested { "    " } else { "" };
            let dot = if self.frame.is_multiple_of(2) {
                Color::Green
            } else {
                Color::DarkGray
            };
            let mut line = call_line(indent, &r.name, &r.summary, dot);
            let secs = r.started.elapsed().as_secs();
            if secs > 0 {
                line.spans.push(Span::styled(format!(" {secs}s"), dim()));
            }
            live.extend(wrap_line(&line, width, &[]));
        }
        let mut fixed: Vec<Line<'static>> = Vec::new();
        if self.todos_shown
            && self.busy.is_some()
            && self.todos.iter().any(|t| t.status != "completed")
        {
            fixed.extend(wrapped(todo_lines(&self.todos, "  "), width));
        }
        if let Some(b) = &self.busy {
            let label = if b.compacting {
                "Compacting the conversation".to_owned()
            } else if let Some(r) = self.running.last() {
                format!("Running {}", r.name)
            } else if self.answer_streaming() {
                "Writing".to_owned()
            } else {
                "Thinking".to_owned()
            };
            let secs = b.since.elapsed().as_secs();
            let tokens = b.streamed / 4;
            let mut detail = format!("{secs}s");
            if tokens > 0 {
                detail.push_str(&format!(
                    " · ↓ {} tokens",
                    skiff_tools::truncate::group(tokens)
                ));
            }
            detail.push_str(" · esc to interrupt");
            let frame = FRAMES[self.frame % FRAMES.len()];
            fixed.extend(wrap_line(
                &Line::from(vec![
                    Span::styled(format!("{frame} "), Style::new().fg(Color::Magenta)),
                    Span::styled(format!("{label}… "), Style::new().fg(Color::Magenta)),
                    Span::styled(format!("({detail})"), dim()),
                ]),
                width,
                &[],
            ));
        }
        for q in &self.queued {
            let first = q.lines().next().unwrap_or("");
            fixed.push(Line::from(vec![
                Span::styled("  ↳ queued: ", dim()),
                Span::raw(skiff_config::sessions::one_line(
                    first,
                    width.saturating_sub(14).max(1),
                )),
            ]));
        }
        if !live.is_empty() || !fixed.is_empty() {
            fixed.push(Line::default());
        }
        let mut cursor = None;
        let mut menu_lines: Vec<Line<'static>> = Vec::new();
        match &self.overlay {
            Overlay::Approval(menu) => {
                let (lines, c) = menu.lines(width);
                // The menu's rows after wrapping; the cursor row shifts with the rows before it.
                let mut rows = Vec::new();
                let mut cursor_row = None;
                for (i, l) in lines.into_iter().enumerate() {
                    if c.is_some_and(|(r, _)| usize::from(r) == i) {
                        cursor_row = Some(rows.len());
                    }
                    rows.extend(wrap_line(&l, width, &[]));
                }
                if let (Some((_, col)), Some(r)) = (c, cursor_row) {
                    cursor = Some((fixed.len() + r, col));
                }
                fixed.extend(rows);
            }
            Overlay::Picker(picker) => fixed.extend(wrapped(picker.lines(), width)),
            Overlay::Search(search, _) => {
                let found = search
                    .found
                    .and_then(|i| self.history.entries().get(i))
                    .map(|e| e.replace('\n', " ⏎ "))
                    .unwrap_or_default();
                let line = Line::from(vec![
                    Span::styled(format!("(reverse-i-search)`{}': ", search.query), dim()),
                    Span::raw(found),
                ]);
                let rows = wrap_line(&line, width, &[]);
                let prefix = 20 + crate::term::wrap::width(&search.query);
                cursor = Some((
                    fixed.len(),
                    u16::try_from(prefix.min(width.saturating_sub(1))).unwrap_or(0),
                ));
                fixed.extend(rows);
            }
            Overlay::Menu(_) | Overlay::None => {
                let shell = self.shell_mode;
                let rule_style = if shell {
                    Style::new().fg(Color::Magenta)
                } else {
                    dim()
                };
                fixed.push(Line::styled("─".repeat(width), rule_style));
                let prompt = if shell {
                    Span::styled(
                        "! ",
                        Style::new().fg(Color::Magenta).add_modifier(Modifier::BOLD),
                    )
                } else {
                    Span::styled("› ", Style::new().add_modifier(Modifier::BOLD))
                };
                let (lines, (r, c)) = self.composer.lines(width, prompt);
                cursor = Some((fixed.len() + usize::from(r), c));
                if self.composer.is_empty() {
                    let hint = if shell {
                        "a shell command (backspace leaves shell mode)"
                    } else if self.busy.is_some() {
                        "type to queue a message"
                    } else if width >= 50 {
                        "/ for commands · @ for files · ! for shell"
                    } else {
                        "/ commands · @ files · ! shell"
                    };
                    let mut l = lines.into_iter().next().unwrap_or_default();
                    if width > 30 {
                        l.spans.push(Span::styled(hint, dim()));
                    }
                    fixed.push(l);
                } else {
                    fixed.extend(lines);
                }
                fixed.push(Line::styled("─".repeat(width), rule_style));
                if let Overlay::Menu(menu) = &self.overlay {
                    menu_lines = menu_rows(menu, width);
                }
            }
        }
        fixed.extend(menu_lines);
        // The status line, or a notice for a moment.
        match self
            .notice
            .as_ref()
            .filter(|(_, at)| at.elapsed() < NOTICE_FOR)
        {
            Some((text, _)) => {
                fixed.push(Line::styled(text.clone(), Style::new().fg(Color::Yellow)))
            }
            None => fixed.push(self.status.line(width)),
        }
        // Fit: the live part gives way first, then the top of the rest.
        let max = usize::from(max_height.max(1));
        let room = max.saturating_sub(fixed.len());
        let skip = live.len().saturating_sub(room);
        let mut lines: Vec<Line<'static>> = live.into_iter().skip(skip).collect();
        let offset = lines.len();
        lines.extend(fixed);
        let cut = lines.len().saturating_sub(max);
        lines.drain(..cut);
        let cursor = cursor.and_then(|(r, c)| {
            let r = (offset + r).checked_sub(cut)?;
            Some((u16::try_from(r).ok()?, c))
        });
        Frame { lines, cursor }
    }
}

fn menu_rows(menu: &super::ui::Menu, width: usize) -> Vec<Line<'static>> {
    if menu.items.is_empty() {
        let text = match menu.kind {
            super::ui::MenuKind::Commands => "  (no matching command)",
            super::ui::MenuKind::Files => "  (no matching file)",
        };
        return vec![Line::styled(text, dim())];
    }
    let name_width = menu
        .items
        .iter()
        .map(|(n, _)| crate::term::wrap::width(n))
        .max()
        .unwrap_or(0)
        .min(width / 2);
    let start = menu
        .selected
        .saturating_sub(MENU_ROWS - 1)
        .min(menu.items.len().saturating_sub(MENU_ROWS));
    menu.items
        .iter()
        .enumerate()
        .skip(start)
        .take(MENU_ROWS)
        .map(|(i, (name, desc))| {
            let selected = i == menu.selected;
            let style = if selected {
                Style::new().add_modifier(Modifier::REVERSED)
            } else {
                Style::new()
            };
            let pad = name_width.saturating_sub(crate::term::wrap::width(name));
            let mut spans = vec![
                Span::raw("  "),
                Span::styled(name.clone(), style),
                Span::raw(" ".repeat(pad + 2)),
            ];
            let room = width.saturating_sub(name_width + 4);
            if room > 4 && !desc.is_empty() {
                spans.push(Span::styled(
                    skiff_config::sessions::one_line(desc, room - 1),
                    dim(),
                ));
            }
            let line = Line::from(spans);
            // One row each: cut what does not fit.
            wrap_line(&line, width, &[])
                .into_iter()
                .next()
                .unwrap_or_default()
        })
        .collect()
}
