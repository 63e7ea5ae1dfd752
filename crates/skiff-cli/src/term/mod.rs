//! How sessions look on a terminal: what is shown of the events (`view`), the interactive
//! renderer, streamed markdown, and print mode's output formats.

pub mod ansi;
pub mod blocks;
pub mod diff;
pub mod highlight;
pub mod live;
pub mod markdown;
pub mod output;
pub mod render;
pub mod stream;
pub mod view;
pub mod wrap;
