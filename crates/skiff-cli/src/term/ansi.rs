//! Styles as escape sequences: the terminal UI writes its cells and the lines it commits to the
//! scrollback itself, so that only what changed is written. Without colour (`NO_COLOR`) the
//! colours are left out and bold, dim, italic and reverse kept.

use ratatui_core::style::{Color, Modifier, Style};
use ratatui_core::text::{Line, Span};

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

/// A line of text with SGR escape sequences (colours, bold…) as styled spans, as a
/// `statusLine` command prints it; other escape sequences and control characters are dropped.
pub fn parse_sgr(text: &str) -> Line<'static> {
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut style = Style::new();
    let mut current = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            match c {
                '\t' => current.push(' '),
                c if c.is_control() => {}
                c => current.push(c),
            }
            continue;
        }
        match chars.next() {
            // CSI: parameters, then a final byte in @..~.
            Some('[') => {
                let mut params = String::new();
                let mut last = None;
                for p in chars.by_ref() {
                    if ('@'..='~').contains(&p) {
                        last = Some(p);
                        break;
                    }
                    params.push(p);
                }
                if last == Some('m') {
                    if !current.is_empty() {
                        spans.push(Span::styled(std::mem::take(&mut current), style));
                    }
                    style = apply_sgr(style, &params);
                }
            }
            // OSC (a title, a hyperlink): up to BEL or ESC \.
            Some(']') => {
                while let Some(p) = chars.next() {
                    if p == '\x07' {
                        break;
                    }
                    if p == '\x1b' {
                        chars.next_if_eq(&'\\');
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    if !current.is_empty() {
        spans.push(Span::styled(current, style));
    }
    Line::from(spans)
}

/// `style` after the SGR parameters `params` (`1;31`, `38;5;208`, `0`).
fn apply_sgr(mut style: Style, params: &str) -> Style {
    let codes: Vec<u32> = params
        .split([';', ':'])
        .map(|p| p.parse().unwrap_or(0))
        .collect();
    let mut i = 0;
    while i < codes.len() {
        let code = codes[i];
        match code {
            0 => style = Style::new(),
            1 => style = style.add_modifier(Modifier::BOLD),
            2 => style = style.add_modifier(Modifier::DIM),
            3 => style = style.add_modifier(Modifier::ITALIC),
            4 => style = style.add_modifier(Modifier::UNDERLINED),
            7 => style = style.add_modifier(Modifier::REVERSED),
            9 => style = style.add_modifier(Modifier::CROSSED_OUT),
            22 => style = style.remove_modifier(Modifier::BOLD | Modifier::DIM),
            23 => style = style.remove_modifier(Modifier::ITALIC),
            24 => style = style.remove_modifier(Modifier::UNDERLINED),
            27 => style = style.remove_modifier(Modifier::REVERSED),
            29 => style = style.remove_modifier(Modifier::CROSSED_OUT),
            30..=37 => style = style.fg(basic((code - 30) as u8, false)),
            90..=97 => style = style.fg(basic((code - 90) as u8, true)),
            39 => style = style.fg(Color::Reset),
            40..=47 => style = style.bg(basic((code - 40) as u8, false)),
            100..=107 => style = style.bg(basic((code - 100) as u8, true)),
            49 => style = style.bg(Color::Reset),
            38 | 48 => {
                let color = match codes.get(i + 1) {
                    Some(5) => {
                        let c = codes.get(i + 2).map(|n| Color::Indexed(*n as u8));
                        i += 2;
                        c
                    }
                    Some(2) => {
                        let c = match (codes.get(i + 2), codes.get(i + 3), codes.get(i + 4)) {
                            (Some(r), Some(g), Some(b)) => {
                                Some(Color::Rgb(*r as u8, *g as u8, *b as u8))
                            }
                            _ => None,
                        };
                        i += 4;
                        c
                    }
                    _ => None,
                };
                if let Some(c) = color {
                    style = if code == 38 { style.fg(c) } else { style.bg(c) };
                }
            }
            _ => {}
        }
        i += 1;
    }
    style
}

/// One of the 16 basic colours.
fn basic(n: u8, bright: bool) -> Color {
    match (n, bright) {
        (0, false) => Color::Black,
        (1, false) => Color::Red,
        (2, false) => Color::Green,
        (3, false) => Color::Yellow,
        (4, false) => Color::Blue,
        (5, false) => Color::Magenta,
        (6, false) => Color::Cyan,
        (7, false) => Color::Gray,
        (0, true) => Color::DarkGray,
        (1, true) => Color::LightRed,
        (2, true) => Color::LightGreen,
        (3, true) => Color::LightYellow,
        (4, true) => Color::LightBlue,
        (5, true) => Color::LightMagenta,
        (6, true) => Color::LightCyan,
        _ => Color::White,
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

    #[test]
    fn sgr_sequences_become_styles_and_the_rest_is_dropped() {
        let line = parse_sgr(
            "\x1b[1;32mgreen\x1b[0m plain \x1b[38;5;208morange\x1b[39m\x1b]8;;http://x\x07link\x1b]8;;\x07\x1b[2K\x07",
        );
        let texts: Vec<&str> = line.spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(texts, ["green", " plain ", "orange", "link"]);
        assert_eq!(
            line.spans[0].style,
            Style::new().fg(Color::Green).add_modifier(Modifier::BOLD)
        );
        assert_eq!(line.spans[1].style, Style::new());
        assert_eq!(line.spans[2].style.fg, Some(Color::Indexed(208)));
        assert_eq!(line.spans[3].style.fg, Some(Color::Reset));
    }
}
