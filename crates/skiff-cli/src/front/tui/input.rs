//! Keys and pastes: what each does to the UI, and what the app must do about it
//! ([`Intent`]). Esc interrupts (twice: rewind, or clear what is typed); Shift+Tab cycles the
//! permission mode; Ctrl-C clears, interrupts, or (twice) exits; Ctrl-D exits; Ctrl-L redraws;
//! Ctrl-R searches the history; Ctrl-T shows or hides the todo list; Ctrl-O shows thinking.

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::keys::{edit, is_newline};
use super::picker::{Picked, PickerKind};
use super::ui::{Menu, MenuKind, Overlay, Ui};
use crate::front::history::Search;

/// How soon a second Esc or Ctrl-C counts as a double press.
const DOUBLE_PRESS: Duration = Duration::from_millis(1500);

/// What the app must do.
#[derive(Debug)]
pub enum Intent {
    /// Send this prompt, run this command or (with a leading `!`) this shell command.
    Submit(String),
    /// Stop the running turn.
    Interrupt,
    /// Switch to the next permission mode.
    CycleMode,
    /// Leave.
    Exit,
    /// Draw everything again.
    Redraw,
    /// An approval was answered.
    Answer(super::approve::Decision),
    /// A picker's entry was picked.
    Pick(PickerKind, String),
    /// Open the rewind list.
    Rewind,
    /// Rank the workspace's paths for this `@` query.
    Files(String),
}

impl Ui {
    /// A paste (bracketed): into the composer, or the input that has the keys.
    pub fn paste(&mut self, text: &str) {
        self.dirty = true;
        match &mut self.overlay {
            Overlay::Search(s, _) => s.query.push_str(text),
            Overlay::Approval(_) | Overlay::Picker(_) => {}
            _ => {
                self.composer.paste(text);
                self.history.reset_walk();
            }
        }
    }

    /// A key; what the app must do about it.
    pub fn key(&mut self, key: KeyEvent, cwd: &std::path::Path) -> Vec<Intent> {
        if key.kind == KeyEventKind::Release {
            return Vec::new();
        }
        self.dirty = true;
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        // What has the keys first.
        match &mut self.overlay {
            Overlay::Approval(menu) => {
                let key = if ctrl && key.code == KeyCode::Char('c') {
                    KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE)
                } else {
                    key
                };
                return match menu.key(key, cwd) {
                    Some(decision) => {
                        self.overlay = Overlay::None;
                        vec![Intent::Answer(decision)]
                    }
                    None => Vec::new(),
                };
            }
            Overlay::Picker(picker) => {
                let kind = picker.kind.clone();
                return match picker.key(key) {
                    Picked::Open => Vec::new(),
                    Picked::Closed => {
                        self.overlay = Overlay::None;
                        Vec::new()
                    }
                    Picked::Value(v) => {
                        self.overlay = Overlay::None;
                        vec![Intent::Pick(kind, v)]
                    }
                };
            }
            Overlay::Search(search, original) => {
                match key.code {
                    KeyCode::Char('r') if ctrl => {
                        search.found = self.history.search(&search.query, search.found);
                    }
                    KeyCode::Enter | KeyCode::Right | KeyCode::Left | KeyCode::End => {
                        if let Some(e) = search.found.and_then(|i| self.history.entries().get(i)) {
                            let e = e.clone();
                            self.composer.set_text(&e);
                        }
                        self.overlay = Overlay::None;
                    }
                    KeyCode::Esc => {
                        let original = std::mem::take(original);
                        self.composer.set_text(&original);
                        self.overlay = Overlay::None;
                    }
                    KeyCode::Char('c' | 'g') if ctrl => {
                        let original = std::mem::take(original);
                        self.composer.set_text(&original);
                        self.overlay = Overlay::None;
                    }
                    KeyCode::Backspace => {
                        search.query.pop();
                        search.found = self.history.search(&search.query, None);
                    }
                    KeyCode::Char(c) if !ctrl => {
                        search.query.push(c);
                        search.found = self.history.search(&search.query, None);
                    }
                    _ => {}
                }
                return Vec::new();
            }
            Overlay::Menu(menu) => {
                let n = menu.items.len();
                match key.code {
                    KeyCode::Up => {
                        menu.selected = (menu.selected + n.max(1) - 1) % n.max(1);
                        return Vec::new();
                    }
                    KeyCode::Down => {
                        menu.selected = (menu.selected + 1) % n.max(1);
                        return Vec::new();
                    }
                    KeyCode::Esc => {
                        self.overlay = Overlay::None;
                        return Vec::new();
                    }
                    KeyCode::Tab => {
                        self.complete();
                        return self.after_edit();
                    }
                    KeyCode::Enter if !is_newline(&key) => {
                        // A file is inserted; a command without arguments is sent at once.
                        let kind = menu.kind;
                        let Some((usage, _)) = menu.items.get(menu.selected).cloned() else {
                            self.overlay = Overlay::None;
                            return self.submit();
                        };
                        self.complete();
                        if kind == MenuKind::Commands && !usage.contains(' ') {
                            return self.submit();
                        }
                        return self.after_edit();
                    }
                    _ => {}
                }
            }
            Overlay::None => {}
        }
        match key.code {
            KeyCode::Char('c') if ctrl => return self.ctrl_c(),
            KeyCode::Char('d') if ctrl => {
                if self.composer.is_empty() {
                    return vec![Intent::Exit];
                }
                self.composer.delete();
                return self.after_edit();
            }
            KeyCode::Char('l') if ctrl => return vec![Intent::Redraw],
            KeyCode::Char('t') if ctrl => {
                self.todos_shown = !self.todos_shown;
                return Vec::new();
            }
            KeyCode::Char('o') if ctrl => {
                self.show_thinking = !self.show_thinking;
                self.notice = Some((
                    if self.show_thinking {
                        "Thinking is shown in full".to_owned()
                    } else {
                        "Thinking is folded".to_owned()
                    },
                    Instant::now(),
                ));
                return Vec::new();
            }
            KeyCode::Char('r') if ctrl => {
                let original = self.composer.text().to_owned();
                let found = self.history.search("", None);
                self.overlay = Overlay::Search(
                    Search {
                        query: String::new(),
                        found,
                    },
                    original,
                );
                return Vec::new();
            }
            KeyCode::BackTab => return vec![Intent::CycleMode],
            KeyCode::Tab if key.modifiers.contains(KeyModifiers::SHIFT) => {
                return vec![Intent::CycleMode];
            }
            KeyCode::Esc => return self.esc(),
            // `!` first: shell mode (the `!` is the prompt); Backspace on nothing leaves it.
            KeyCode::Char('!') if !ctrl && self.composer.is_empty() && !self.shell_mode => {
                self.shell_mode = true;
                self.overlay = Overlay::None;
                return Vec::new();
            }
            KeyCode::Backspace if self.composer.is_empty() && self.shell_mode => {
                self.shell_mode = false;
                return Vec::new();
            }
            KeyCode::Enter if !is_newline(&key) => {
                // A line ending in `\` continues on the next.
                if self.composer.text()[..self.composer.cursor()].ends_with('\\') {
                    self.composer.backspace();
                    self.composer.insert_char('\n');
                    return Vec::new();
                }
                return self.submit();
            }
            KeyCode::Up if self.composer.on_first_line() => {
                let current = self.composer.text().to_owned();
                if let Some(e) = self.history.older(&current) {
                    let e = e.to_owned();
                    self.composer.set_text(&e);
                }
                return Vec::new();
            }
            KeyCode::Down if self.composer.on_last_line() => {
                if let Some(e) = self.history.newer() {
                    self.composer.set_text(&e);
                }
                return Vec::new();
            }
            _ => {}
        }
        if edit(&mut self.composer, key) {
            self.history.reset_walk();
            return self.after_edit();
        }
        Vec::new()
    }

    fn ctrl_c(&mut self) -> Vec<Intent> {
        if !matches!(self.overlay, Overlay::None) {
            self.overlay = Overlay::None;
            return Vec::new();
        }
        if !self.composer.is_empty() || self.shell_mode {
            self.composer.clear();
            self.shell_mode = false;
            return Vec::new();
        }
        if self.busy.is_some() {
            return vec![Intent::Interrupt];
        }
        if self.ctrl_c_at.is_some_and(|t| t.elapsed() < DOUBLE_PRESS) {
            return vec![Intent::Exit];
        }
        self.ctrl_c_at = Some(Instant::now());
        self.notice = Some(("Press Ctrl-C again to exit".to_owned(), Instant::now()));
        Vec::new()
    }

    fn esc(&mut self) -> Vec<Intent> {
        if self.busy.is_some() {
            self.esc_at = None;
            return vec![Intent::Interrupt];
        }
        if self.shell_mode && self.composer.is_empty() {
            self.shell_mode = false;
            return Vec::new();
        }
        let double = self.esc_at.is_some_and(|t| t.elapsed() < DOUBLE_PRESS);
        if double {
            self.esc_at = None;
            if self.composer.is_empty() {
                return vec![Intent::Rewind];
            }
            self.composer.clear();
            return Vec::new();
        }
        self.esc_at = Some(Instant::now());
        let hint = if self.composer.is_empty() {
            "Esc again to rewind the conversation"
        } else {
            "Esc again to clear"
        };
        self.notice = Some((hint.to_owned(), Instant::now()));
        Vec::new()
    }

    fn submit(&mut self) -> Vec<Intent> {
        self.overlay = Overlay::None;
        let mut text = self.composer.take();
        if text.trim().is_empty() {
            return Vec::new();
        }
        if std::mem::take(&mut self.shell_mode) {
            text.insert(0, '!');
        }
        self.history.add(&text);
        vec![Intent::Submit(text)]
    }

    /// Put the menu's selected entry into the composer.
    fn complete(&mut self) {
        let Overlay::Menu(menu) = &self.overlay else {
            return;
        };
        let Some((value, _)) = menu.items.get(menu.selected).cloned() else {
            return;
        };
        match menu.kind {
            MenuKind::Commands => {
                let name = value.split_whitespace().next().unwrap_or(&value).to_owned();
                self.composer.set_text(&format!("{name} "));
            }
            MenuKind::Files => {
                if let Some((start, _)) = self.composer.at_token() {
                    let insert = if value.contains(' ') {
                        format!("@\"{value}\" ")
                    } else {
                        format!("@{value} ")
                    };
                    self.composer.replace_before_cursor(start, &insert);
                }
            }
        }
        self.overlay = Overlay::None;
    }

    /// After the composer changed: open, update or close the completion menus.
    pub fn after_edit(&mut self) -> Vec<Intent> {
        let text = self.composer.text();
        if let Some(name) = text
            .strip_prefix('/')
            .filter(|_| !self.shell_mode)
            .filter(|t| !t.contains(char::is_whitespace))
        {
            let name = name.to_lowercase();
            let mut items: Vec<(String, String)> = self
                .commands
                .iter()
                .filter(|(usage, _)| {
                    usage
                        .get(1..)
                        .unwrap_or("")
                        .to_lowercase()
                        .starts_with(&name)
                })
                .cloned()
                .collect();
            if items.is_empty() {
                items = self
                    .commands
                    .iter()
                    .filter(|(usage, _)| usage.to_lowercase().contains(&name))
                    .cloned()
                    .collect();
            }
            self.set_menu(MenuKind::Commands, items);
            return Vec::new();
        }
        if let Some((_, query)) = self.composer.at_token() {
            let query = query.trim_start_matches('"').to_owned();
            if !matches!(&self.overlay, Overlay::Menu(m) if m.kind == MenuKind::Files) {
                self.set_menu(MenuKind::Files, Vec::new());
            }
            return vec![Intent::Files(query)];
        }
        if matches!(self.overlay, Overlay::Menu(_)) {
            self.overlay = Overlay::None;
        }
        Vec::new()
    }

    /// Show file matches (the answer to [`Intent::Files`]), if the menu is still open.
    pub fn set_file_matches(&mut self, paths: Vec<String>) {
        if matches!(&self.overlay, Overlay::Menu(m) if m.kind == MenuKind::Files) {
            let items = paths.into_iter().map(|p| (p, String::new())).collect();
            self.set_menu(MenuKind::Files, items);
            self.dirty = true;
        }
    }

    fn set_menu(&mut self, kind: MenuKind, items: Vec<(String, String)>) {
        let selected = match &self.overlay {
            Overlay::Menu(m) if m.kind == kind => m.selected.min(items.len().saturating_sub(1)),
            _ => 0,
        };
        self.overlay = Overlay::Menu(Menu {
            kind,
            items,
            selected,
        });
    }
}
