//! The terminal UI, as codex-rs's TUI is built: an inline viewport at the bottom of the
//! terminal (no alternate screen), finished output in the terminal's own scrollback (so
//! search, copy and scroll are the terminal's), the live part redrawn in place. A client of
//! the session actor like every other front end.
//!
//! Dumb terminals (`TERM=dumb`) get the line REPL instead (also with `SKIFF_TUI=off`), and a
//! non-terminal stdin or stdout the print mode, as before.

mod app;
mod approve;
mod composer;
mod files;
mod input;
mod keys;
mod layout;
mod moves;
mod picker;
mod recap;
mod screen;
mod status;
mod ui;

#[cfg(test)]
mod tests;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use crossterm::event::{
    DisableBracketedPaste, EnableBracketedPaste, KeyboardEnhancementFlags,
    PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::{execute, terminal};
use tokio::sync::mpsc;

use self::app::{App, Parts};
use self::screen::Screen;
use self::ui::Ui;
use crate::front::history::History;

/// What the terminal sends the app.
pub enum Input {
    /// A key, a paste, a focus change.
    Term(crossterm::event::Event),
    /// The terminal was resized; its cursor (parked at the viewport's top) is now on this row,
    /// when the terminal answered.
    Resized {
        /// Columns.
        cols: u16,
        /// Rows.
        rows: u16,
        /// The cursor's row.
        cursor: Option<u16>,
    },
}

/// Whether the terminal can show the UI: `TERM` set and not `dumb`, and the UI not turned off
/// (`SKIFF_TUI=off`).
pub fn supported() -> bool {
    let off = std::env::var("SKIFF_TUI").is_ok_and(|v| {
        matches!(
            v.to_ascii_lowercase().as_str(),
            "0" | "off" | "false" | "no"
        )
    });
    !off && std::env::var("TERM").is_ok_and(|t| !t.is_empty() && t != "dumb")
}

/// Whether to use colours: no `NO_COLOR`.
fn use_color() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Puts the terminal back as it was, also when the UI fails or panics.
struct TerminalGuard {
    enhanced: bool,
}

impl TerminalGuard {
    fn enter() -> std::io::Result<Self> {
        terminal::enable_raw_mode()?;
        let mut out = std::io::stdout();
        let _ = execute!(out, EnableBracketedPaste);
        // The terminal's cursor stays hidden (the composer draws its own; see `screen`).
        let _ = out.write_all(b"\x1b[?25l");
        // Shift+Enter and Esc told apart where the terminal can (kitty's protocol).
        let enhanced = matches!(terminal::supports_keyboard_enhancement(), Ok(true))
            && execute!(
                out,
                PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
            )
            .is_ok();
        Ok(Self { enhanced })
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore(self.enhanced);
    }
}

fn restore(enhanced: bool) {
    let mut out = std::io::stdout();
    if enhanced {
        let _ = execute!(out, PopKeyboardEnhancementFlags);
    }
    let _ = execute!(out, DisableBracketedPaste);
    let _ = out.write_all(b"\x1b[r\x1b[0m\x1b[?25h");
    let _ = out.flush();
    let _ = terminal::disable_raw_mode();
}

/// Run the terminal UI until the user leaves.
pub fn run_tui(
    rt: &tokio::runtime::Runtime,
    args: &crate::args::Args,
    built: skiff_config::Assembled,
    history: Option<PathBuf>,
    status_command: Option<String>,
) -> anyhow::Result<ExitCode> {
    let skiff_config::Assembled {
        agent,
        engine,
        cwd,
        local,
        sandbox,
        mcp,
        warnings,
        ..
    } = built;
    let guard = TerminalGuard::enter()?;
    let previous_hook = std::panic::take_hook();
    let enhanced = guard.enhanced;
    std::panic::set_hook(Box::new(move |info| {
        restore(enhanced);
        previous_hook(info);
    }));
    let (cols, rows) = terminal::size().unwrap_or((80, 24));
    // Start where the cursor is (the scrollback above stays as it is).
    let top = crossterm::cursor::position().map_or(rows.saturating_sub(1), |(_, y)| y);
    let color = use_color();
    let mut ui = Ui::new(cols, History::load(history));
    ui.note(&format!(
        "skiff {} · {} · {}",
        env!("CARGO_PKG_VERSION"),
        agent.config().model,
        cwd.display()
    ));
    ui.note("/ commands · @ files · ! shell · shift+tab modes · esc interrupts · ctrl+d exits");
    for w in warnings {
        ui.note(&w);
    }
    let custom = Arc::clone(&agent.config().commands);
    let screen = Screen::new(std::io::stdout(), color, (cols, rows), top);
    let parts = Parts {
        args: args.clone(),
        cwd,
        engine,
        sandbox,
        mcp,
        custom,
        local,
        status_command,
    };
    // The terminal's events, read by a thread of their own (crossterm reads block). After a
    // resize the same thread asks the terminal where its cursor is now (the reader is its own
    // then), which is where the viewport starts.
    let (tx, keys) = mpsc::unbounded_channel();
    std::thread::Builder::new()
        .name("skiff-keys".into())
        .spawn(move || {
            while let Ok(ev) = crossterm::event::read() {
                let input = match ev {
                    crossterm::event::Event::Resize(cols, rows) => {
                        let cursor = crossterm::cursor::position().ok().map(|(_, y)| y);
                        Input::Resized { cols, rows, cursor }
                    }
                    ev => Input::Term(ev),
                };
                if tx.send(input).is_err() {
                    break;
                }
            }
        })?;
    let first_prompt = args.prompt.clone();
    let outcome = rt.block_on(async move {
        let app = App::new(ui, screen, agent, parts);
        app.run(keys, first_prompt).await
    });
    drop(guard);
    outcome
}
