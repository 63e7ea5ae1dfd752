//! Styles as escape sequences: the terminal UI writes its cells and the lines it commits to the
//! scrollback itself, so that only what changed is written. Without colour (`NO_COLOR`) the
//! colours are left out and bold, dim, italic and reverse kept.

use ratatui_core::style::{Color, Modifier, Style};
use ratatui_core::text::Line;

/// A resolved style: what a cell shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pen {
    /// Foreground.
    pub fg: Option<Color>,
    /// Background.
    pub bg: Option<Color>,
    /// Bold, dim, italic, …
    pub modifier: Modifier,
}

impl Pen {
    /// The pen a style asks for.
    pub fn of(style: Style) -> Self {
        Self {
            fg: style.fg.filter(|c| *c != Color::Reset),
            bg: style.bg.filter(|c| *c != Color::Reset),
            modifier: style.add_modifier - style.sub_modifier,
        }
    }
}

/// Appends escape sequences to a byte buffer, tracking the current pen so a style is only
/// written when it changes.
#[derive(Debug)]
pub struct Painter {
    color: bool,
    pen: Pen,
}

impl Painter {
    /// A painter starting from the terminal's default style.
    pub fn new(color: bool) -> Self {
        Self {
            color,
            pen: Pen::default(),
        }
    }

    /// Switch to `pen` (nothing written when it is the current one).
    pub fn set(&mut self, out: &mut Vec<u8>, pen: Pen) {
        let pen = if self.color {
            pen
        } else {
            Pen {
                fg: None,
                bg: None,
                modifier: pen.modifier,
            }
        };
        if pen == self.pen {
            return;
        }
        let mut seq = String::from("\x1b[0");
        for (flag, code) in [
            (Modifier::BOLD, ";1"),
            (Modifier::DIM, ";2"),
            (Modifier::ITALIC, ";3"),
            (Modifier::UNDERLINED, ";4"),
            (Modifier::REVERSED, ";7"),
            (Modifier::CROSSED_OUT, ";9"),
        ] {
            if pen.modifier.contains(flag) {
                seq.push_str(code);
            }
        }
        if let Some(fg) = pen.fg {
            seq.push_str(&color_code(fg, false));
        }
        if let Some(bg) = pen.bg {
            seq.push_str(&color_code(bg, true));
        }
        seq.push('m');
        out.extend_from_slice(seq.as_bytes());
        self.pen = pen;
    }

    /// Back to the terminal's default style.
    pub fn reset(&mut self, out: &mut Vec<u8>) {
        if self.pen != Pen::default() {
            out.extend_from_slice(b"\x1b[0m");
            self.pen = Pen::default();
        }
    }

    /// Write a line's spans (no newline); the style is reset at its end.
    pub fn line(&mut self, out: &mut Vec<u8>, line: &Line<'_>) {
        for span in &line.spans {
            self.set(out, Pen::of(line.style.patch(span.style)));
            out.extend_from_slice(sanitize(&span.content).as_bytes());
        }
        self.reset(out);
    }
}

/// Text without control characters (a model's or a tool's text must not move the cursor).
pub fn sanitize(s: &str) -> std::borrow::Cow<'_, str> {
    if s.chars().any(char::is_control) {
        std::borrow::Cow::Owned(
            s.chars()
                .map(|c| match c {
                    '\t' => ' ',
                    c if c.is_control() => '\u{fffd}',
                    c => c,
                })
                .collect(),
        )
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

/// `;38;…` (or `;48;…` for a background) for a colour.
fn color_code(c: Color, bg: bool) -> String {
    let base = if bg { 40 } else { 30 };
    let bright = if bg { 100 } else { 90 };
    match c {
        Color::Reset => String::new(),
        Color::Black => format!(";{base}"),
        Color::Red => format!(";{}", base + 1),
        Color::Green => format!(";{}", base + 2),
        Color::Yellow => format!(";{}", base + 3),
        Color::Blue => format!(";{}", base + 4),
        Color::Magenta => format!(";{}", base + 5),
        Color::Cyan => format!(";{}", base + 6),
        Color::Gray => format!(";{}", base + 7),
        Color::DarkGray => format!(";{bright}"),
        Color::LightRed => format!(";{}", bright + 1),
        Color::LightGreen => format!(";{}", bright + 2),
        Color::LightYellow => format!(";{}", bright + 3),
        Color::LightBlue => format!(";{}", bright + 4),
        Color::LightMagenta => format!(";{}", bright + 5),
        Color::LightCyan => format!(";{}", bright + 6),
        Color::White => format!(";{}", bright + 7),
        Color::Indexed(i) => format!(";{};5;{i}", base + 8),
        Color::Rgb(r, g, b) => format!(";{};2;{r};{g};{b}", base + 8),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui_core::text::Span;

    #[test]
    fn styles_are_written_once_and_reset_at_the_end() {
        let line = Line::from(vec![
            Span::styled("a", Style::new().fg(Color::Red)),
            Span::styled("b", Style::new().fg(Color::Red)),
            Span::raw("c"),
        ]);
        let mut out = Vec::new();
        Painter::new(true).line(&mut out, &line);
        assert_eq!(String::from_utf8(out).unwrap(), "\x1b[0;31mab\x1b[0mc");
        let mut out = Vec::new();
        Painter::new(false).line(&mut out, &line);
        assert_eq!(String::from_utf8(out).unwrap(), "abc");
    }

    #[test]
    fn control_characters_are_neutralised() {
        assert_eq!(sanitize("a\x1b[2Jb\tc"), "a\u{fffd}[2Jb c");
    }
}
