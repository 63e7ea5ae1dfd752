//! A list to pick one entry from (saved sessions for `/resume`, earlier messages for a rewind):
//! arrows or Ctrl-P/N move, typing filters, Enter picks, Esc closes.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui_core::style::{Modifier, Style};
use ratatui_core::text::{Line, Span};

/// What the picked entry is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PickerKind {
    /// Resume a saved session (the value is its id).
    Resume,
    /// Rewind to before a user message (the value is its index in the history).
    Rewind,
}

/// One entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// What is shown.
    pub label: String,
    /// Shown dim after the label.
    pub detail: String,
    /// What picking it gives.
    pub value: String,
}

/// A picker.
#[derive(Debug, Clone)]
pub struct Picker {
    /// What it is for.
    pub kind: PickerKind,
    title: String,
    items: Vec<Item>,
    filter: String,
    selected: usize,
}

/// How many entries are shown at a time.
const VISIBLE: usize = 8;

/// What a key did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Picked {
    /// Still picking.
    Open,
    /// Closed without a pick.
    Closed,
    /// This value was picked.
    Value(String),
}

impl Picker {
    /// A picker over `items`, the last one selected when `from_end`.
    pub fn new(kind: PickerKind, title: &str, items: Vec<Item>, from_end: bool) -> Self {
        let selected = if from_end {
            items.len().saturating_sub(1)
        } else {
            0
        };
        Self {
            kind,
            title: title.to_owned(),
            items,
            filter: String::new(),
            selected,
        }
    }

    fn visible(&self) -> Vec<&Item> {
        let f = self.filter.to_lowercase();
        self.items
            .iter()
            .filter(|i| f.is_empty() || i.label.to_lowercase().contains(&f))
            .collect()
    }

    /// Handle a key.
    pub fn key(&mut self, key: KeyEvent) -> Picked {
        let n = self.visible().len();
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => return Picked::Closed,
            KeyCode::Char('c') if ctrl => return Picked::Closed,
            KeyCode::Up => self.selected = self.selected.saturating_sub(1),
            KeyCode::Char('p') if ctrl => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down => self.selected = (self.selected + 1).min(n.saturating_sub(1)),
            KeyCode::Char('n') if ctrl => {
                self.selected = (self.selected + 1).min(n.saturating_sub(1));
            }
            KeyCode::Enter => {
                return match self.visible().get(self.selected) {
                    Some(item) => Picked::Value(item.value.clone()),
                    None => Picked::Closed,
                };
            }
            KeyCode::Backspace => {
                self.filter.pop();
                self.selected = 0;
            }
            KeyCode::Char(c) if !ctrl => {
                self.filter.push(c);
                self.selected = 0;
            }
            _ => {}
        }
        Picked::Open
    }

    /// The picker's lines.
    pub fn lines(&self) -> Vec<Line<'static>> {
        let dim = Style::new().add_modifier(Modifier::DIM);
        let mut out = vec![Line::from(vec![
            Span::styled(
                self.title.clone(),
                Style::new().add_modifier(Modifier::BOLD),
            ),
            Span::styled(
                if self.filter.is_empty() {
                    "  (type to filter · enter picks · esc closes)".to_owned()
                } else {
                    format!("  filter: {}", self.filter)
                },
                dim,
            ),
        ])];
        let items = self.visible();
        if items.is_empty() {
            out.push(Line::styled("  (nothing to pick)", dim));
            return out;
        }
        let start = self
            .selected
            .saturating_sub(VISIBLE - 1)
            .min(items.len().saturating_sub(VISIBLE));
        for (i, item) in items.iter().enumerate().skip(start).take(VISIBLE) {
            let selected = i == self.selected;
            let style = if selected {
                Style::new().add_modifier(Modifier::REVERSED)
            } else {
                Style::new()
            };
            out.push(Line::from(vec![
                Span::raw(if selected { "› " } else { "  " }),
                Span::styled(item.label.clone(), style),
                Span::styled(format!("  {}", item.detail), dim),
            ]));
        }
        if items.len() > VISIBLE {
            out.push(Line::styled(
                format!("  {} of {}", self.selected + 1, items.len()),
                dim,
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn filter_move_and_pick() {
        let items = ["alpha", "beta", "gamma"]
            .iter()
            .enumerate()
            .map(|(i, s)| Item {
                label: (*s).into(),
                detail: String::new(),
                value: i.to_string(),
            })
            .collect();
        let mut p = Picker::new(PickerKind::Rewind, "t", items, true);
        assert_eq!(p.key(key(KeyCode::Up)), Picked::Open);
        assert_eq!(p.key(key(KeyCode::Enter)), Picked::Value("1".into()));
        assert_eq!(p.key(key(KeyCode::Char('m'))), Picked::Open);
        assert_eq!(p.key(key(KeyCode::Enter)), Picked::Value("2".into()));
        assert_eq!(p.key(key(KeyCode::Esc)), Picked::Closed);
    }
}
