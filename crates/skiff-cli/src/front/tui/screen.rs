//! The inline viewport: the bottom rows of the terminal that the UI redraws in place (the live
//! answer, running tools, the composer, the status line), with everything finished written
//! above it into the terminal's own scrollback, as codex-rs's TUI does.
//!
//! Only what changed is written: each frame is diffed cell by cell against the last one. Lines
//! are committed to the scrollback by limiting the terminal's scroll region to the rows above
//! the viewport and writing them at its bottom, so the viewport itself is not rewritten and the
//! scrollback receives every line exactly once. The screen and the scrollback are never
//! cleared, except by `/clear`. Each update is wrapped in a synchronized-output block, so
//! terminals that support it show it at once.
//!
//! The terminal's own cursor stays hidden, parked at the viewport's top-left corner after every
//! update; the composer's cursor is drawn as a reversed cell. So after a resize, where the
//! terminal reports its cursor is where the viewport starts, whatever the terminal did to the
//! rows (reflowed them, pulled lines back from its scrollback, pushed some into it).

use std::io::Write;

use ratatui_core::buffer::Buffer;
use ratatui_core::layout::{Position, Rect};
use ratatui_core::style::{Color, Modifier};
use ratatui_core::text::Line;

use super::moves;
use crate::term::ansi::{Painter, Pen};

/// Begin / end a synchronized update (terminals that do not know it ignore it).
const SYNC_BEGIN: &[u8] = b"\x1b[?2026h";
const SYNC_END: &[u8] = b"\x1b[?2026l";

/// The terminal below the scrollback: a viewport of `area` that is redrawn in place.
pub struct Screen<W: Write> {
    out: W,
    color: bool,
    cols: u16,
    rows: u16,
    /// Where the viewport is on the screen.
    area: Rect,
    /// What the terminal shows in the viewport now, in the viewport's own coordinates (its
    /// area at 0,0: moving the viewport does not move the buffer).
    shown: Buffer,
    /// Bytes written to the terminal so far.
    written: u64,
}

impl<W: Write> Screen<W> {
    /// A viewport starting at row `top` of a `cols`×`rows` screen, empty until drawn.
    pub fn new(out: W, color: bool, (cols, rows): (u16, u16), top: u16) -> Self {
        let cols = cols.max(1);
        let rows = rows.max(1);
        let area = Rect::new(0, top.min(rows - 1), cols, 0);
        Self {
            out,
            color,
            cols,
            rows,
            area,
            shown: Buffer::empty(local(area)),
            written: 0,
        }
    }

    /// The screen's width.
    pub fn cols(&self) -> u16 {
        self.cols
    }

    /// Bytes written to the terminal so far.
    #[cfg(test)]
    pub fn written(&self) -> u64 {
        self.written
    }

    /// The writer (tests read what was written).
    #[cfg(test)]
    pub fn output(&self) -> &W {
        &self.out
    }

    /// The most rows the viewport may take: one row always stays for the scrollback.
    pub fn max_height(&self) -> u16 {
        self.rows.saturating_sub(1).max(1)
    }

    /// The terminal was resized to `cols`×`rows`; `cursor_row` is where the terminal says its
    /// cursor is now (the viewport's top, where it was parked), when it could be asked. The
    /// viewport is cleared there and drawn again from scratch on the next frame; the
    /// scrollback is left alone.
    pub fn resize(&mut self, cols: u16, rows: u16, cursor_row: Option<u16>) -> std::io::Result<()> {
        let was_bottom = self.area.bottom() >= self.rows;
        self.cols = cols.max(1);
        self.rows = rows.max(1);
        let height = self.area.height.min(self.max_height());
        let mut area = Rect::new(0, self.area.y, self.cols, height);
        match cursor_row {
            Some(y) => area.y = y,
            None if was_bottom => area.y = self.rows.saturating_sub(height),
            None => {}
        }
        area.y = area.y.min(self.rows - 1);
        if area.bottom() > self.rows {
            area.y = self.rows - height;
        }
        self.area = area;
        let mut buf = Vec::new();
        move_to(&mut buf, 0, area.y);
        buf.extend_from_slice(b"\x1b[J");
        self.shown = Buffer::empty(local(area));
        self.write(buf)
    }

    /// Forget what the viewport shows and clear it, so the next frame draws all of it (Ctrl-L).
    pub fn invalidate(&mut self) -> std::io::Result<()> {
        let mut buf = Vec::new();
        move_to(&mut buf, 0, self.area.y);
        buf.extend_from_slice(b"\x1b[J");
        self.shown = Buffer::empty(local(self.area));
        self.write(buf)
    }

    /// Clear the screen and the scrollback (`/clear`); the viewport starts at the top again.
    pub fn clear_all(&mut self) -> std::io::Result<()> {
        self.area = Rect::new(0, 0, self.cols, 0);
        self.shown = Buffer::empty(local(self.area));
        self.write(b"\x1b[H\x1b[2J\x1b[3J".to_vec())
    }

    /// Commit lines to the scrollback above the viewport. Lines should fit the screen's width
    /// (see [`crate::term::wrap`]); a longer one is wrapped by the terminal.
    pub fn insert_history(&mut self, lines: &[Line<'_>]) -> std::io::Result<()> {
        if lines.is_empty() {
            return Ok(());
        }
        let cols = usize::from(self.cols);
        let rows: usize = lines
            .iter()
            .map(|l| crate::term::wrap::line_width(l).div_ceil(cols).max(1))
            .sum();
        let n = u16::try_from(rows).unwrap_or(u16::MAX);
        let mut buf = Vec::new();
        let old_top = self.area.y;
        // Room below the viewport: move it down first (the rows below it are empty).
        if self.area.bottom() < self.rows && self.area.height > 0 {
            let shift = n.min(self.rows - self.area.bottom());
            set_region(&mut buf, self.area.y, self.rows);
            move_to(&mut buf, 0, self.area.y);
            for _ in 0..shift {
                buf.extend_from_slice(b"\x1bM");
            }
            buf.extend_from_slice(b"\x1b[r");
            self.area.y += shift;
        } else if self.area.height == 0 {
            self.area.y = (self.area.y + n).min(self.rows - 1);
        }
        let mut painter = Painter::new(self.color);
        if self.area.y >= 2 {
            // Write at the bottom of the scroll region above the viewport; what scrolls off
            // its top goes to the scrollback.
            set_region(&mut buf, 0, self.area.y);
            if old_top == 0 {
                move_to(&mut buf, 0, 0);
            } else {
                move_to(&mut buf, 0, old_top - 1);
            }
            for (i, line) in lines.iter().enumerate() {
                if !(i == 0 && old_top == 0) {
                    buf.extend_from_slice(b"\r\n");
                }
                buf.extend_from_slice(b"\x1b[K");
                painter.line(&mut buf, line);
            }
            buf.extend_from_slice(b"\x1b[r");
        } else {
            // Too little room for a scroll region: write the lines where the viewport was and
            // draw it again below them.
            move_to(&mut buf, 0, old_top);
            buf.extend_from_slice(b"\x1b[J");
            let mut row = old_top;
            for line in lines {
                painter.line(&mut buf, line);
                buf.extend_from_slice(b"\r\n");
                let taken = crate::term::wrap::line_width(line).div_ceil(cols).max(1);
                row = (row + u16::try_from(taken).unwrap_or(u16::MAX)).min(self.rows - 1);
            }
            self.area.y = row;
            self.area.height = 0;
            self.shown = Buffer::empty(local(self.area));
        }
        self.write(buf)
    }

    /// Draw a frame `height` rows high: `render` fills the buffer (the viewport's, its area at
    /// 0,0) and says where the composer's cursor is (drawn reversed; None: no cursor). Rows
    /// that moved are moved on the terminal (see [`super::moves`]), then only the cells that
    /// changed are written.
    pub fn draw(
        &mut self,
        height: u16,
        render: impl FnOnce(&mut Buffer) -> Option<Position>,
    ) -> std::io::Result<()> {
        let height = height.clamp(1, self.max_height());
        let mut buf = Vec::new();
        let mut next = Buffer::empty(Rect::new(0, 0, self.cols, height));
        let cursor = render(&mut next).filter(|p| next.area.contains(*p));
        if let Some(cell) = cursor.and_then(|p| next.cell_mut(p)) {
            if cell.symbol().is_empty() {
                cell.set_symbol(" ");
            }
            cell.modifier.insert(Modifier::REVERSED);
        }
        self.fit(&next, &mut buf);
        // Text scrolling inside the viewport: scroll that band (never from the screen's top
        // row, whose lines would go to the scrollback).
        if let Some(shift) =
            moves::best_shift(&self.shown, &next).filter(|s| self.area.y + s.top > 0)
        {
            let top = self.area.y + shift.top;
            let bottom = self.area.y + shift.bottom + shift.by;
            set_region(&mut buf, top, bottom);
            move_to(&mut buf, 0, bottom - 1);
            buf.extend(std::iter::repeat_n(b'\n', usize::from(shift.by)));
            buf.extend_from_slice(b"\x1b[r");
            self.shown = moves::shifted(&self.shown, shift);
        }
        let top = self.area.y;
        let mut painter = Painter::new(self.color);
        let mut at: Option<(u16, u16)> = None;
        for (x, y, cell) in self.shown.diff(&next) {
            let y = y + top;
            match at {
                Some((ax, ay)) if ay == y && ax == x => {}
                // A short gap of unchanged cells: written again, cheaper than moving.
                Some((ax, ay)) if ay == y && ax < x && x - ax <= 4 => {
                    for gx in ax..x {
                        if let Some(c) = next.cell((gx, y - top)) {
                            if c.symbol().is_empty() {
                                continue;
                            }
                            painter.set(&mut buf, pen(c));
                            buf.extend_from_slice(
                                crate::term::ansi::sanitize(c.symbol()).as_bytes(),
                            );
                        }
                    }
                }
                _ => move_to(&mut buf, x, y),
            }
            painter.set(&mut buf, pen(cell));
            let symbol = crate::term::ansi::sanitize(cell.symbol());
            buf.extend_from_slice(symbol.as_bytes());
            let w = u16::try_from(crate::term::wrap::width(&symbol).max(1)).unwrap_or(1);
            at = Some((x + w, y));
        }
        painter.reset(&mut buf);
        self.shown = next;
        self.write(buf)
    }

    /// Make the viewport as high as `next`: rows are inserted where it grew (scrolling the
    /// lines above it into the scrollback when there is no room below) or deleted where it
    /// shrank, so that the rows kept line up with `next`.
    fn fit(&mut self, next: &Buffer, buf: &mut Vec<u8>) {
        let old = self.area;
        let height = next.area.height;
        if old.height == height && old.width == self.cols {
            return;
        }
        if old.width != self.cols || old.height == 0 {
            // Nothing to keep: place it (scrolling the screen if it goes past the bottom) and
            // clear it.
            let mut area = Rect::new(0, old.y, self.cols, height);
            if area.bottom() > self.rows {
                let up = area.bottom() - self.rows;
                move_to(buf, 0, self.rows - 1);
                buf.extend(std::iter::repeat_n(b'\n', usize::from(up)));
                area.y -= up;
            }
            move_to(buf, 0, area.y);
            buf.extend_from_slice(b"\x1b[J");
            self.area = area;
            self.shown = Buffer::empty(local(area));
            return;
        }
        if height > old.height {
            let d = height - old.height;
            let k = moves::best_insert(&self.shown, next);
            let room = self.rows.saturating_sub(old.bottom());
            let down = d.min(room);
            let up = d - down;
            if down > 0 {
                // IL: the rows from k move down into the empty rows below the viewport.
                move_to(buf, 0, old.y + k);
                buf.extend_from_slice(format!("\x1b[{down}L").as_bytes());
            }
            if up > 0 {
                // The rows above k (the scrollback's last lines, then the viewport's first
                // rows) move up; the top ones go to the scrollback.
                set_region(buf, 0, old.y + k);
                move_to(buf, 0, old.y + k - 1);
                buf.extend(std::iter::repeat_n(b'\n', usize::from(up)));
                buf.extend_from_slice(b"\x1b[r");
            }
            self.area = Rect::new(0, old.y - up, self.cols, height);
            self.shown = moves::inserted(&self.shown, k, d);
        } else {
            let d = old.height - height;
            let k = moves::best_delete(&self.shown, next);
            // DL: the rows below move up; blank rows come in at the bottom of the screen.
            move_to(buf, 0, old.y + k);
            buf.extend_from_slice(format!("\x1b[{d}M").as_bytes());
            self.area = Rect::new(0, old.y, self.cols, height);
            self.shown = moves::deleted(&self.shown, k, d);
        }
    }

    /// Leave the terminal clean: the viewport cleared, the cursor shown where it starts.
    pub fn leave(&mut self) -> std::io::Result<()> {
        let mut buf = Vec::new();
        move_to(&mut buf, 0, self.area.y);
        buf.extend_from_slice(b"\x1b[J\x1b[0m");
        self.area.height = 0;
        self.shown = Buffer::empty(local(self.area));
        self.write(buf)?;
        self.out.write_all(b"\x1b[?25h")?;
        self.out.flush()
    }

    /// Write an update, the cursor parked (hidden) at the viewport's top-left corner after it.
    fn write(&mut self, mut bytes: Vec<u8>) -> std::io::Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        move_to(&mut bytes, 0, self.area.y);
        // One write: another thread's query of the cursor (after a resize) lands before or
        // after an update, never inside it, so it finds the cursor parked.
        let mut all = Vec::with_capacity(bytes.len() + SYNC_BEGIN.len() + SYNC_END.len());
        all.extend_from_slice(SYNC_BEGIN);
        all.extend_from_slice(&bytes);
        all.extend_from_slice(SYNC_END);
        self.out.write_all(&all)?;
        self.out.flush()?;
        self.written += all.len() as u64;
        Ok(())
    }
}

/// The pen a cell is drawn with.
fn pen(cell: &ratatui_core::buffer::Cell) -> Pen {
    Pen {
        fg: Some(cell.fg).filter(|c| *c != Color::Reset),
        bg: Some(cell.bg).filter(|c| *c != Color::Reset),
        modifier: cell.modifier,
    }
}

/// `area` at the origin: the viewport's own coordinates.
fn local(area: Rect) -> Rect {
    Rect::new(0, 0, area.width, area.height)
}

/// `CUP`: move the cursor to a 0-based column and row.
fn move_to(buf: &mut Vec<u8>, x: u16, y: u16) {
    buf.extend_from_slice(format!("\x1b[{};{}H", y + 1, x + 1).as_bytes());
}

/// `DECSTBM`: scroll only rows `top..bottom` (0-based, bottom exclusive).
fn set_region(buf: &mut Vec<u8>, top: u16, bottom: u16) {
    buf.extend_from_slice(format!("\x1b[{};{}r", top + 1, bottom).as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui_core::text::Line;

    fn nz(n: u16) -> std::num::NonZeroU16 {
        std::num::NonZeroU16::new(n).unwrap()
    }

    /// A screen over an in-memory terminal emulator.
    struct Term {
        screen: Screen<Vec<u8>>,
        parser: vt100::Parser,
        fed: usize,
    }

    impl Term {
        fn new(cols: u16, rows: u16, top: u16) -> Self {
            let mut parser = vt100::Parser::new(nz(rows), nz(cols), 1000);
            parser.process(format!("\x1b[{};1H", top + 1).as_bytes());
            Self {
                screen: Screen::new(Vec::new(), true, (cols, rows), top),
                parser,
                fed: 0,
            }
        }

        fn sync(&mut self) {
            let out = self.screen.output();
            self.parser.process(&out[self.fed..]);
            self.fed = out.len();
        }

        fn draw(&mut self, lines: &[&str]) {
            let lines: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
            self.screen
                .draw(lines.len() as u16, |buf| {
                    let area = *buf.area();
                    for (i, l) in lines.iter().enumerate() {
                        buf.set_string(
                            area.x,
                            area.y + i as u16,
                            l,
                            ratatui_core::style::Style::new(),
                        );
                    }
                    None
                })
                .unwrap();
            self.sync();
        }

        fn commit(&mut self, lines: &[&str]) {
            let lines: Vec<Line> = lines.iter().map(|s| Line::from(*s)).collect();
            self.screen.insert_history(&lines).unwrap();
            self.sync();
        }

        /// Every row: the scrollback, then the screen.
        fn all_rows(&mut self) -> Vec<String> {
            let rows = self.parser.screen().size().0;
            let mut out = Vec::new();
            let max = 1000;
            self.parser.screen_mut().set_scrollback(max);
            let back = self.parser.screen().scrollback();
            for i in (1..=back).rev() {
                self.parser.screen_mut().set_scrollback(i);
                out.push(
                    self.parser
                        .screen()
                        .rows(0, 200)
                        .next()
                        .unwrap_or_default()
                        .trim_end()
                        .to_owned(),
                );
            }
            self.parser.screen_mut().set_scrollback(0);
            for r in self
                .parser
                .screen()
                .rows(0, 200)
                .take(usize::from(rows.get()))
            {
                out.push(r.trim_end().to_owned());
            }
            out
        }
    }

    #[test]
    fn history_goes_above_the_viewport_once_and_in_order() {
        let mut t = Term::new(20, 6, 0);
        t.draw(&["> composer", "status"]);
        for i in 0..10 {
            t.commit(&[&format!("line {i}")]);
            t.draw(&[&format!("> typing {i}"), "status"]);
        }
        let rows = t.all_rows();
        let lines: Vec<&String> = rows.iter().filter(|r| r.starts_with("line ")).collect();
        assert_eq!(
            lines,
            (0..10)
                .map(|i| format!("line {i}"))
                .collect::<Vec<_>>()
                .iter()
                .collect::<Vec<_>>()
        );
        let n = rows.len();
        assert_eq!(rows[n - 2], "> typing 9");
        assert_eq!(rows[n - 1], "status");
    }

    #[test]
    fn a_viewport_that_grows_and_shrinks_leaves_no_trace() {
        let mut t = Term::new(20, 8, 2);
        t.draw(&["a"]);
        t.draw(&["a", "b", "c", "d", "e", "f", "g"]);
        t.draw(&["x"]);
        t.commit(&["done"]);
        t.draw(&["y"]);
        let rows: Vec<String> = t.all_rows().into_iter().filter(|r| !r.is_empty()).collect();
        assert_eq!(rows, ["done", "y"]);
    }

    #[test]
    fn an_unchanged_frame_writes_nothing() {
        let mut t = Term::new(20, 6, 0);
        t.draw(&["same", "status"]);
        let before = t.screen.written();
        t.draw(&["same", "status"]);
        assert_eq!(t.screen.written(), before);
        t.draw(&["samE", "status"]);
        let delta = t.screen.written() - before;
        assert!(delta < 40, "{delta} bytes for one changed cell");
    }

    #[test]
    fn resizing_keeps_the_history_and_redraws_the_viewport() {
        let mut t = Term::new(30, 8, 0);
        t.draw(&["view", "status"]);
        for i in 0..12 {
            t.commit(&[&format!("line {i}")]);
        }
        t.parser.set_size(nz(10), nz(24));
        let cursor = t.parser.screen().cursor_position().0;
        t.screen.resize(24, 10, Some(cursor)).unwrap();
        t.sync();
        t.draw(&["view", "status"]);
        let rows = t.all_rows();
        let lines: Vec<&String> = rows.iter().filter(|r| r.starts_with("line ")).collect();
        assert_eq!(lines.len(), 12, "{rows:?}");
        let n = rows.len();
        assert_eq!(rows[n - 1], "status");
    }

    /// The screen's rows where the viewport is.
    fn viewport_rows(t: &Term) -> Vec<String> {
        let area = t.screen.area;
        t.parser
            .screen()
            .rows(0, 200)
            .skip(usize::from(area.y))
            .take(usize::from(area.height))
            .map(|r| r.trim_end().to_owned())
            .collect()
    }

    #[test]
    fn streaming_turns_show_every_frame_and_commit_every_line_once() {
        for (cols, rows, top) in [(30, 12, 0), (30, 12, 9), (16, 6, 3)] {
            let mut t = Term::new(cols, rows, top);
            let mut committed = Vec::new();
            let mut written = Vec::new();
            for turn in 0..6 {
                let mut live: Vec<String> = Vec::new();
                // The answer grows row by row, past the viewport's height, then is committed.
                for i in 0..(3 + turn * 3) {
                    live.push(format!("t{turn} row {i}"));
                    let max = usize::from(t.screen.max_height());
                    let fixed = ["", "─── composer", "status line"];
                    let room = max.saturating_sub(fixed.len() + 1);
                    let start = live.len().saturating_sub(room);
                    let mut frame: Vec<&str> = live[start..].iter().map(String::as_str).collect();
                    let spinner = format!("spinner {i}");
                    frame.push(&spinner);
                    frame.extend(fixed);
                    t.draw(&frame);
                    assert_eq!(
                        viewport_rows(&t),
                        frame,
                        "{cols}x{rows}, turn {turn}, row {i}"
                    );
                    written.push(t.screen.written());
                }
                let lines: Vec<&str> = live.iter().map(String::as_str).collect();
                t.commit(&lines);
                committed.extend(live.clone());
                t.draw(&["", "─── composer", "status line"]);
                assert_eq!(viewport_rows(&t), ["", "─── composer", "status line"]);
            }
            let per_frame: Vec<u64> = written.windows(2).map(|w| w[1] - w[0]).collect();
            // Rows moved, not written again: a new row costs about itself (the frames after a
            // commit, once per turn, draw the rows of the new turn's first frame).
            let big = per_frame
                .iter()
                .filter(|b| **b > 4 * u64::from(cols))
                .count();
            assert!(big <= 6, "{cols}x{rows}: {per_frame:?}");
            let all = t.all_rows();
            let found: Vec<&String> = all.iter().filter(|r| r.starts_with('t')).collect();
            assert_eq!(
                found,
                committed.iter().collect::<Vec<_>>(),
                "{cols}x{rows}: {all:?}"
            );
        }
    }
}
