//! The front ends: each is a client of the session actor — the terminal UI (and the line
//! REPL for dumb terminals and `SKIFF_TUI=off`), print mode
//! (`-p`), the Agent SDKs' stdin control protocol, and editors over ACP.

pub mod acp;
pub mod approval;
pub mod commands;
pub mod headless;
pub mod history;
pub mod hook_events;
pub mod line_input;
pub mod repl;
pub mod sdk_options;
pub mod stdio;
pub mod tui;
