//! One shell word as bash expands it: the text after quote removal, where it stops being known
//! (the first piece computed when the command runs), the pathname-expansion pattern it forms,
//! and whether expanding it can run code (arithmetic on variables, `${x@P}`, subscripts).

/// A word of a command line, quotes removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The text with quotes and backslashes removed; computed pieces (`$x`, `$(…)`, `{a,b}`)
    /// are kept as written.
    pub text: String,
    /// Byte offset in `text` of the first piece computed when the command runs (a parameter,
    /// arithmetic, command or process substitution, `$'…'`, `$"…"`, brace expansion, a tilde
    /// prefix, backquotes); `None` when the whole word is known.
    pub dynamic_at: Option<usize>,
    /// The pathname-expansion pattern when the known word has unquoted `*`, `?` or `[`: glob
    /// syntax, with the quoted characters escaped by a backslash.
    pub glob: Option<String>,
    /// Why expanding the word may run commands by itself (bash evaluates variables' contents
    /// in arithmetic, array subscripts and `${x@P}`), if it may.
    pub runs_code: Option<&'static str>,
}

impl Word {
    /// A known, literal word.
    pub fn literal(text: &str) -> Self {
        Self {
            text: text.to_owned(),
            dynamic_at: None,
            glob: None,
            runs_code: None,
        }
    }

    /// Whether some of the word is computed when the command runs.
    pub fn is_dynamic(&self) -> bool {
        self.dynamic_at.is_some()
    }

    /// Whether bash passes the word on exactly as `text` (no expansion of any kind).
    pub fn is_static(&self) -> bool {
        self.dynamic_at.is_none() && self.glob.is_none()
    }

    /// Whether the word is one process substitution (`<(cmd)`, `>(cmd)`): bash passes a
    /// `/dev/fd/N` path for it.
    pub fn is_process_substitution(&self) -> bool {
        if self.dynamic_at != Some(0)
            || !(self.text.starts_with("<(") || self.text.starts_with(">("))
        {
            return false;
        }
        let mut depth = 0usize;
        for (i, c) in self.text.char_indices().skip(1) {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return i + 1 == self.text.len();
                    }
                }
                _ => {}
            }
        }
        false
    }

    /// The part of `text` known before the command runs.
    pub fn known_prefix(&self) -> &str {
        match self.dynamic_at {
            Some(at) => self.text.get(..at).unwrap_or(""),
            None => &self.text,
        }
    }
}

/// Where a word stands, which decides where a tilde is expanded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    /// A command word or argument.
    Argument,
    /// The value of `NAME=value` (a tilde after `=` or `:` is expanded).
    Assignment,
}

/// Scan a raw word (as written in the command line).
pub fn scan(raw: &str, position: Position) -> Word {
    let mut s = Scanner {
        chars: raw.chars().collect(),
        i: 0,
        text: String::with_capacity(raw.len()),
        glob: String::new(),
        has_glob: false,
        dynamic_at: None,
        runs_code: None,
    };
    s.run(position);
    Word {
        glob: (s.has_glob && s.dynamic_at.is_none()).then_some(s.glob),
        text: s.text,
        dynamic_at: s.dynamic_at,
        runs_code: s.runs_code,
    }
}

struct Scanner {
    chars: Vec<char>,
    i: usize,
    text: String,
    glob: String,
    has_glob: bool,
    dynamic_at: Option<usize>,
    runs_code: Option<&'static str>,
}

const GLOB_SPECIAL: &[char] = &['*', '?', '[', ']', '\\'];

impl Scanner {
    fn peek(&self, k: usize) -> Option<char> {
        self.chars.get(self.i + k).copied()
    }

    /// A character that stands for itself.
    fn literal(&mut self, c: char) {
        self.text.push(c);
        if GLOB_SPECIAL.contains(&c) {
            self.glob.push('\\');
        }
        self.glob.push(c);
    }

    /// A piece computed at run time, `len` characters long from `self.i`.
    fn dynamic(&mut self, len: usize) {
        if self.dynamic_at.is_none() {
            self.dynamic_at = Some(self.text.len());
        }
        let end = (self.i + len).min(self.chars.len());
        self.text.extend(&self.chars[self.i..end]);
        self.i = end;
    }

    fn code(&mut self, why: &'static str) {
        self.runs_code.get_or_insert(why);
    }

    fn run(&mut self, position: Position) {
        let mut in_double = false;
        // A tilde prefix: at the start, or after `=`/`:` in an assignment (bash also expands
        // `name=~` in arguments; any unquoted `=~`/`:~` is taken as one).
        let mut tilde_ok = true;
        while let Some(c) = self.peek(0) {
            let tilde_here = tilde_ok;
            tilde_ok = false;
            match c {
                '\\' => match self.peek(1) {
                    Some('\n') => self.i += 2,
                    Some(n) if !in_double || matches!(n, '$' | '`' | '"' | '\\') => {
                        self.literal(n);
                        self.i += 2;
                    }
                    Some(_) => {
                        self.literal('\\');
                        self.i += 1;
                    }
                    None => {
                        self.literal('\\');
                        self.i += 1;
                    }
                },
                '\'' if !in_double => {
                    self.i += 1;
                    while let Some(c) = self.peek(0) {
                        self.i += 1;
                        if c == '\'' {
                            break;
                        }
                        self.literal(c);
                    }
                }
                '"' => {
                    in_double = !in_double;
                    self.i += 1;
                }
                '$' => self.dollar(in_double),
                '`' => {
                    let len = self.backquote_len();
                    self.dynamic(len);
                }
                '<' | '>' if !in_double && self.peek(1) == Some('(') => {
                    let len = self.group_len(1, '(', ')');
                    self.dynamic(len);
                }
                '*' | '?' if !in_double => {
                    self.has_glob = true;
                    self.text.push(c);
                    self.glob.push(c);
                    self.i += 1;
                }
                // A `[` opens a bracket expression only when a `]` follows in the word.
                '[' if !in_double && self.chars[self.i + 1..].contains(&']') => {
                    self.has_glob = true;
                    self.text.push(c);
                    self.glob.push(c);
                    self.i += 1;
                }
                ']' if !in_double && self.has_glob => {
                    self.text.push(c);
                    self.glob.push(c);
                    self.i += 1;
                }
                '{' if !in_double && self.brace_expansion_len().is_some() => {
                    let len = self.brace_expansion_len().unwrap_or(1);
                    self.dynamic(len);
                }
                '~' if !in_double && tilde_here => {
                    // `~`, `~/…`, `~user`, `~+`, `~-`: up to the first slash.
                    let mut len = 1;
                    while let Some(n) = self.peek(len) {
                        if n == '/' || (position == Position::Assignment && n == ':') {
                            break;
                        }
                        len += 1;
                    }
                    self.dynamic(len);
                }
                c => {
                    if !in_double && (c == '=' || (c == ':' && position == Position::Assignment)) {
                        tilde_ok = true;
                    }
                    self.literal(c);
                    self.i += 1;
                }
            }
        }
    }

    /// `$…` at `self.i`.
    fn dollar(&mut self, in_double: bool) {
        match self.peek(1) {
            Some('(') if self.peek(2) == Some('(') => {
                let len = self.group_len(1, '(', ')');
                let inner: String = self.chars
                    [self.i + 3..(self.i + len).saturating_sub(2).max(self.i + 3)]
                    .iter()
                    .collect();
                if has_name(&inner) {
                    self.code("arithmetic on a variable evaluates its contents");
                }
                self.dynamic(len);
            }
            Some('(') => {
                let len = self.group_len(1, '(', ')');
                self.dynamic(len);
            }
            Some('[') => {
                // `$[ … ]`: old arithmetic.
                let len = self.group_len(1, '[', ']');
                let inner: String = self.chars
                    [self.i + 2..(self.i + len).saturating_sub(1).max(self.i + 2)]
                    .iter()
                    .collect();
                if has_name(&inner) {
                    self.code("arithmetic on a variable evaluates its contents");
                }
                self.dynamic(len);
            }
            Some('{') => {
                let len = self.group_len(1, '{', '}');
                let inner: String = self.chars
                    [self.i + 2..(self.i + len).saturating_sub(1).max(self.i + 2)]
                    .iter()
                    .collect();
                if let Some(why) = braced_parameter_runs_code(&inner) {
                    self.code(why);
                }
                self.dynamic(len);
            }
            Some('\'') if !in_double => {
                // `$'…'`: ANSI-C quoting, `\'` does not end it.
                let mut len = 2;
                while let Some(c) = self.peek(len) {
                    len += 1;
                    if c == '\\' {
                        len += 1;
                    } else if c == '\'' {
                        break;
                    }
                }
                self.dynamic(len);
            }
            Some('"') if !in_double => {
                // `$"…"`: a locale string; the quote itself opens a double-quoted part.
                self.dynamic(1);
            }
            Some(n) if n.is_ascii_alphanumeric() || n == '_' => {
                let mut len = 2;
                if !n.is_ascii_digit() {
                    while self
                        .peek(len)
                        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                    {
                        len += 1;
                    }
                }
                self.dynamic(len);
            }
            Some('@' | '*' | '#' | '?' | '$' | '!' | '-') => self.dynamic(2),
            _ => {
                self.literal('$');
                self.i += 1;
            }
        }
    }

    /// Length of a balanced group opening at `self.i + start` (`(`…`)`), quotes respected.
    fn group_len(&self, start: usize, open: char, close: char) -> usize {
        let mut depth = 0usize;
        let mut k = start;
        let mut quote: Option<char> = None;
        while let Some(c) = self.peek(k) {
            k += 1;
            match quote {
                Some('\'') => {
                    if c == '\'' {
                        quote = None;
                    }
                }
                Some(_) => match c {
                    '\\' => k += 1,
                    '"' => quote = None,
                    _ => {}
                },
                None => match c {
                    '\\' => k += 1,
                    '\'' | '"' => quote = Some(c),
                    c if c == open => depth += 1,
                    c if c == close => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            return k;
                        }
                    }
                    _ => {}
                },
            }
        }
        k
    }

    fn backquote_len(&self) -> usize {
        let mut k = 1;
        while let Some(c) = self.peek(k) {
            k += 1;
            if c == '\\' {
                k += 1;
            } else if c == '`' {
                break;
            }
        }
        k
    }

    /// An unquoted `{…}` that bash brace-expands (a top-level `,` or `..` before its `}`).
    fn brace_expansion_len(&self) -> Option<usize> {
        let mut depth = 0usize;
        let mut k = 0;
        let mut expands = false;
        let mut quote: Option<char> = None;
        while let Some(c) = self.peek(k) {
            k += 1;
            match quote {
                Some('\'') => {
                    if c == '\'' {
                        quote = None;
                    }
                }
                Some(_) => match c {
                    '\\' => k += 1,
                    '"' => quote = None,
                    _ => {}
                },
                None => match c {
                    '\\' => k += 1,
                    '\'' | '"' => quote = Some(c),
                    '$' if self.peek(k) == Some('{') => {
                        // A parameter expansion inside: skip it.
                        k += self.group_len(k, '{', '}');
                    }
                    '{' => depth += 1,
                    '}' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            return expands.then_some(k);
                        }
                    }
                    ',' if depth == 1 => expands = true,
                    '.' if depth == 1 && self.peek(k) == Some('.') => expands = true,
                    _ => {}
                },
            }
        }
        None
    }
}

/// Whether text names a variable (arithmetic evaluates a variable's value as an expression,
/// array subscripts included, so `x='a[$(cmd)]'; echo $((x))` runs `cmd`).
fn has_name(text: &str) -> bool {
    let mut prev_digit_run = false;
    for c in text.chars() {
        if c.is_ascii_alphabetic() || c == '_' {
            // `0x1F`, `16#ff`, `2#101`: digits of a number, not names.
            if !prev_digit_run {
                return true;
            }
        } else {
            prev_digit_run = c.is_ascii_digit() || (prev_digit_run && c == '#');
            continue;
        }
    }
    false
}

/// What inside `${…}` can run code: a subscript or offset that is not a plain number (both are
/// arithmetic), indirection (`${!x}`), prompt expansion (`${x@P}`), assignment to a variable
/// that changes how later commands run (`${PATH:=…}`).
fn braced_parameter_runs_code(inner: &str) -> Option<&'static str> {
    let body = inner
        .strip_prefix('#')
        .filter(|b| !b.is_empty())
        .unwrap_or(inner);
    if body.starts_with('!') && body.len() > 1 {
        return Some("indirect expansion evaluates a name computed at run time");
    }
    let name_len = body
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_'))
        .map_or(body.len(), |(i, _)| i);
    let name_len = if name_len == 0 {
        // Special parameters: `${@}`, `${#}`, `${?}`, `${-}`…
        body.chars().next().map_or(0, char::len_utf8)
    } else {
        name_len
    };
    let (name, rest) = body.split_at(name_len.min(body.len()));
    if let Some(sub) = rest.strip_prefix('[') {
        let index = sub.split(']').next().unwrap_or("");
        let plain = index == "@"
            || index == "*"
            || (!index.is_empty() && index.chars().all(|c| c.is_ascii_digit() || c == '-'));
        if !plain {
            return Some("an array subscript is arithmetic and evaluates variables");
        }
    }
    let rest = rest
        .strip_prefix('[')
        .map_or(rest, |r| r.split_once(']').map_or("", |(_, after)| after));
    if rest.starts_with("@P") {
        return Some("prompt expansion runs command substitutions");
    }
    if let Some(after) = rest.strip_prefix(':')
        && !after.starts_with(['-', '=', '+', '?'])
    {
        // `${x:offset:length}`: both are arithmetic.
        let plain = after
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, ':' | ' ' | '-' | '(' | ')'));
        if !plain {
            return Some("a substring offset is arithmetic and evaluates variables");
        }
    }
    if (rest.starts_with(":=") || rest.starts_with('=')) && crate::shell::unsafe_variable(name) {
        return Some("the expansion assigns a variable that changes how commands run");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(raw: &str) -> Word {
        scan(raw, Position::Argument)
    }

    #[test]
    fn quotes_and_escapes_are_removed() {
        assert_eq!(w("'a b'").text, "a b");
        assert_eq!(w(r#""a\"b""#).text, "a\"b");
        assert_eq!(w(r#""a\xb""#).text, "a\\xb");
        assert_eq!(w(r"r\m").text, "rm");
        assert!(w("'$x'").is_static());
        assert!(w(r"\$x").is_static());
        assert!(w(r"'*'").is_static());
        assert!(w(r"\*").is_static());
    }

    #[test]
    fn dynamic_pieces_are_found() {
        for (raw, prefix) in [
            ("$x", ""),
            ("a$x", "a"),
            ("\"a$x\"", "a"),
            ("rm${IFS}-f", "rm"),
            ("$'\\x72m'", ""),
            ("$\"rm\"", ""),
            ("{rm,-f,x}", ""),
            ("a{b..d}", "a"),
            ("~/f", ""),
            ("--file=~/f", "--file="),
            ("`id`", ""),
            ("$(id)", ""),
            ("x<(ls)", "x"),
            ("$((1+2))", ""),
        ] {
            let word = w(raw);
            assert_eq!(
                word.dynamic_at.map(|_| word.known_prefix()),
                Some(prefix),
                "{raw}"
            );
        }
        for raw in ["{}", "a{b}c", "'{a,b}'", "\\{a,b}", "x~y", "a,b", "$", "a$"] {
            assert!(!w(raw).is_dynamic(), "{raw}");
        }
    }

    #[test]
    fn globs_keep_quoted_characters_escaped() {
        assert_eq!(w("/usr/bin/r[m]").glob.as_deref(), Some("/usr/bin/r[m]"));
        assert_eq!(w(".e*").glob.as_deref(), Some(".e*"));
        assert_eq!(w("'a*'b*").glob.as_deref(), Some("a\\*b*"));
        assert_eq!(w("\"*\"").glob, None);
        assert_eq!(w("$x*").glob, None);
    }

    #[test]
    fn expansions_that_evaluate_code_are_flagged() {
        for raw in [
            "$((x))",
            "$((x+1))",
            "$[x]",
            "${a[i]}",
            "${y:x}",
            "${!x}",
            "${x@P}",
            "${PATH:=/tmp}",
        ] {
            assert!(w(raw).runs_code.is_some(), "{raw}");
        }
        for raw in [
            "$((1+2))",
            "$((0x1f))",
            "${a[0]}",
            "${a[@]}",
            "${x:-y}",
            "${#x}",
            "${x:1:2}",
            "$x",
        ] {
            assert!(w(raw).runs_code.is_none(), "{raw}");
        }
    }
}
