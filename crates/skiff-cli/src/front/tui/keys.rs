//! Keys that edit text, shared by the composer and the other inputs (approval feedback):
//! Emacs-style bindings as a shell's line editor has them.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::composer::Composer;

/// Whether Enter with these modifiers inserts a newline (Shift+Enter, Alt+Enter) instead of
/// sending.
pub fn is_newline(key: &KeyEvent) -> bool {
    key.code == KeyCode::Enter
        && key
            .modifiers
            .intersects(KeyModifiers::SHIFT | KeyModifiers::ALT)
        || (key.code == KeyCode::Char('j') && key.modifiers == KeyModifiers::CONTROL)
}

/// Apply an editing key; returns whether it was one.
pub fn edit(c: &mut Composer, key: KeyEvent) -> bool {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    match key.code {
        _ if is_newline(&key) => c.insert_char('\n'),
        KeyCode::Char('a') if ctrl => c.home(),
        KeyCode::Char('e') if ctrl => c.end(),
        KeyCode::Char('b') if ctrl => c.left(),
        KeyCode::Char('f') if ctrl => c.right(),
        KeyCode::Char('b') if alt => c.word_left(),
        KeyCode::Char('f') if alt => c.word_right(),
        KeyCode::Char('k') if ctrl => c.kill_to_end(),
        KeyCode::Char('u') if ctrl => c.kill_to_start(),
        KeyCode::Char('w') if ctrl => c.kill_word(),
        KeyCode::Backspace if alt || ctrl => c.kill_word(),
        KeyCode::Char('h') if ctrl => c.backspace(),
        KeyCode::Char('y') if ctrl => c.yank(),
        KeyCode::Char(ch) if !ctrl => c.insert_char(ch),
        KeyCode::Backspace => c.backspace(),
        KeyCode::Delete => c.delete(),
        KeyCode::Left if ctrl || alt => c.word_left(),
        KeyCode::Right if ctrl || alt => c.word_right(),
        KeyCode::Left => c.left(),
        KeyCode::Right => c.right(),
        KeyCode::Home => c.home(),
        KeyCode::End => c.end(),
        KeyCode::Up => c.up(),
        KeyCode::Down => c.down(),
        KeyCode::Tab => c.insert_str("    "),
        _ => return false,
    }
    true
}
