//! Moving the viewport's rows on the terminal instead of writing them again, as curses does:
//! when the viewport grows (a new row of the streamed answer), rows are inserted where the
//! frames differ, so the composer and status line below move down with one escape sequence;
//! when it shrinks, rows are deleted; and when text scrolls inside it (a paragraph longer
//! than the viewport), the band of rows is scrolled. This module only decides, on the
//! viewport's buffers (area at 0,0); `screen` writes the sequences.

use ratatui_core::buffer::{Buffer, Cell};
use ratatui_core::layout::Rect;

/// Row `r` of `b`.
fn row(b: &Buffer, r: u16) -> &[Cell] {
    let w = usize::from(b.area.width);
    let start = usize::from(r) * w;
    b.content.get(start..start + w).unwrap_or(&[])
}

/// What keeping row `r` of `b` saves: its cells that are not blank.
fn weight(b: &Buffer, r: u16) -> usize {
    row(b, r).iter().filter(|c| c.symbol() != " ").count()
}

/// What putting row `r` of `a` where row `t` of `b` is saves: the cells that are the same and
/// not blank.
fn alike(a: &Buffer, r: u16, b: &Buffer, t: u16) -> usize {
    row(a, r)
        .iter()
        .zip(row(b, t))
        .filter(|(x, y)| x == y && x.symbol() != " ")
        .count()
}

/// Where to insert `next.height - old.height` blank rows into `old` so that most of it lines
/// up with `next` (the index in `old`; the last of the best, so rows stay where they are).
pub fn best_insert(old: &Buffer, next: &Buffer) -> u16 {
    let h0 = old.area.height;
    let d = next.area.height.saturating_sub(h0);
    // score(k) = rows before k kept in place + rows from k moved down by d.
    let same: Vec<usize> = (0..h0).map(|r| alike(old, r, next, r)).collect();
    let moved: Vec<usize> = (0..h0).map(|r| alike(old, r, next, r + d)).collect();
    let mut best = (0, h0);
    let mut before = 0;
    let mut after: usize = moved.iter().sum();
    for k in 0..=h0 {
        let score = before + after;
        if score >= best.0 {
            best = (score, k);
        }
        if k < h0 {
            before += same[usize::from(k)];
            after -= moved[usize::from(k)];
        }
    }
    best.1
}

/// Where to delete `old.height - next.height` rows from `old` so that the rest lines up with
/// `next` best (the index in `old` of the first deleted row).
pub fn best_delete(old: &Buffer, next: &Buffer) -> u16 {
    let h1 = next.area.height;
    let d = old.area.height.saturating_sub(h1);
    let same: Vec<usize> = (0..h1).map(|r| alike(old, r, next, r)).collect();
    let moved: Vec<usize> = (0..h1).map(|r| alike(old, r + d, next, r)).collect();
    let mut best = (0, h1);
    let mut before = 0;
    let mut after: usize = moved.iter().sum();
    for k in 0..=h1 {
        let score = before + after;
        if score >= best.0 {
            best = (score, k);
        }
        if k < h1 {
            before += same[usize::from(k)];
            after -= moved[usize::from(k)];
        }
    }
    best.1
}

/// `old` with `d` blank rows inserted at row `k`.
pub fn inserted(old: &Buffer, k: u16, d: u16) -> Buffer {
    let area = Rect::new(0, 0, old.area.width, old.area.height + d);
    let mut out = Buffer::empty(area);
    for r in 0..old.area.height {
        let to = if r < k { r } else { r + d };
        copy_row(old, r, &mut out, to);
    }
    out
}

/// `old` without its rows `k..k + d`.
pub fn deleted(old: &Buffer, k: u16, d: u16) -> Buffer {
    let area = Rect::new(0, 0, old.area.width, old.area.height.saturating_sub(d));
    let mut out = Buffer::empty(area);
    for r in 0..area.height {
        let from = if r < k { r } else { r + d };
        copy_row(old, from, &mut out, r);
    }
    out
}

/// A band of rows that moved up: rows `top..bottom` of `next` are rows `top + by..bottom + by`
/// of the old frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shift {
    /// First row of the band (in the new frame).
    pub top: u16,
    /// End of the rows that moved (in the new frame).
    pub bottom: u16,
    /// Rows it moved up by.
    pub by: u16,
}

/// The band of rows of `old` (same size as `next`) that moved up the most usefully, if
/// scrolling it saves writing at least two rows.
pub fn best_shift(old: &Buffer, next: &Buffer) -> Option<Shift> {
    let h = old.area.height;
    if next.area != old.area || h < 3 {
        return None;
    }
    let mut best: Option<(usize, Shift)> = None;
    for by in 1..=(h / 2).min(8) {
        let mut run_start = None;
        let mut saved = 0;
        for r in 0..=(h - by) {
            let moved = r < h - by
                && row(next, r) == row(old, r + by)
                && row(next, r) != row(old, r)
                && weight(next, r) > 0;
            match (moved, run_start) {
                (true, None) => {
                    run_start = Some(r);
                    saved = weight(next, r);
                }
                (true, Some(_)) => saved += weight(next, r),
                (false, Some(top)) => {
                    run_start = None;
                    let shift = Shift { top, bottom: r, by };
                    if r - top >= 2 && best.is_none_or(|(s, _)| saved > s) {
                        best = Some((saved, shift));
                    }
                }
                (false, None) => {}
            }
        }
    }
    best.map(|(_, s)| s)
}

/// `old` after the band of `shift` scrolled up: its rows moved, the rows it leaves blank.
pub fn shifted(old: &Buffer, shift: Shift) -> Buffer {
    let mut out = old.clone();
    let Shift { top, bottom, by } = shift;
    for r in top..bottom {
        copy_row(old, r + by, &mut out, r);
    }
    for r in bottom..(bottom + by).min(old.area.height) {
        for c in 0..old.area.width {
            if let Some(cell) = out.cell_mut((c, r)) {
                cell.reset();
            }
        }
    }
    out
}

fn copy_row(from: &Buffer, r: u16, to: &mut Buffer, t: u16) {
    for c in 0..from.area.width.min(to.area.width) {
        if let (Some(src), Some(dst)) = (from.cell((c, r)), to.cell_mut((c, t))) {
            *dst = src.clone();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buf(rows: &[&str]) -> Buffer {
        let mut b = Buffer::empty(Rect::new(0, 0, 10, rows.len() as u16));
        for (i, r) in rows.iter().enumerate() {
            b.set_string(0, i as u16, r, ratatui_core::style::Style::new());
        }
        b
    }

    #[test]
    fn rows_are_inserted_where_the_live_part_grew() {
        let old = buf(&["answer 1", "spinner", "composer", "status"]);
        let next = buf(&["answer 1", "answer 2", "spinner", "composer", "status"]);
        let k = best_insert(&old, &next);
        assert_eq!(k, 1);
        let moved = inserted(&old, k, 1);
        assert_eq!(row(&moved, 2), row(&next, 2));
        assert_eq!(row(&moved, 4), row(&next, 4));
    }

    #[test]
    fn rows_are_deleted_where_the_live_part_shrank() {
        let old = buf(&["answer 1", "answer 2", "spinner", "composer", "status"]);
        let next = buf(&["spinner", "composer", "status"]);
        let k = best_delete(&old, &next);
        assert_eq!(k, 0);
        assert_eq!(deleted(&old, k, 2), next);
    }

    #[test]
    fn text_scrolling_inside_the_viewport_is_a_shift() {
        let old = buf(&["row 1", "row 2", "row 3", "row 4", "spinner", "status"]);
        let next = buf(&["row 2", "row 3", "row 4", "row 5", "spinner", "status"]);
        let s = best_shift(&old, &next).unwrap();
        assert_eq!(
            s,
            Shift {
                top: 0,
                bottom: 3,
                by: 1
            }
        );
        let moved = shifted(&old, s);
        assert_eq!(row(&moved, 2), row(&next, 2));
        assert_eq!(weight(&moved, 3), 0);
        assert_eq!(row(&moved, 4), row(&next, 4));
        // Nothing moved: no shift.
        assert_eq!(best_shift(&next, &next), None);
    }
}
