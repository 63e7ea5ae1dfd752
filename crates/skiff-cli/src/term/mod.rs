//! How sessions look on a terminal: what is shown of the events (`view`), the interactive
//! renderer, streamed markdown, and print mode's output formats.

pub mod markdown;
pub mod output;
pub mod render;
pub mod view;
