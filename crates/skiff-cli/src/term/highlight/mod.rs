//! Syntax highlighting for code blocks and diffs: lexical, line by line, with no tables to load.
//!
//! Each language is a [`Spec`] (its comment markers, quotes, keywords, types and constants);
//! one lexer reads a line into tokens of a [`Kind`] and carries what a line leaves open (a
//! block comment, a string) to the next line, so a code block streamed a line at a time is
//! coloured as it would be whole. A few languages have their own line readers on top of it:
//! diffs, HTML/XML, YAML, TOML/INI and Markdown. This is the fidelity of highlight.js (the
//! highlighter Claude Code uses): keywords, strings, comments, numbers, types, calls,
//! attributes and tags, not a parse.
//!
//! Why not syntect (which skiff used before): with its pure-Rust regex engine, the first line
//! of each language compiled that language's regular expressions, 40–290 ms (Markdown's took
//! 286 ms, C++'s 173 ms) and 5–15 MB that stayed for the session (85 MB after 14 languages), a
//! further line took 0.05–1 ms, and its syntax and theme sets were 0.4 MB of the binary. This
//! reader takes microseconds a line, keeps a few bytes of state, and needs no set-up.
//!
//! Tokens split the line only at ASCII bytes (every byte of a multi-byte character counts as
//! part of a word), so every token is whole UTF-8 and the tokens always put the line back
//! together exactly.

mod languages;

use languages::{SPECS, Spec, VALUES};

/// What a token is, and so its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Plain,
    Keyword,
    Type,
    Function,
    String,
    Number,
    Comment,
    Constant,
    Attribute,
    Tag,
    Property,
    Variable,
    Heading,
    Inserted,
    Deleted,
    Meta,
}

impl Kind {
    /// Foreground colour and bold, italic: base16-ocean's dark palette.
    pub(crate) fn style(self) -> ((u8, u8, u8), bool, bool) {
        const FG: (u8, u8, u8) = (0xc0, 0xc5, 0xce);
        const RED: (u8, u8, u8) = (0xbf, 0x61, 0x6a);
        const ORANGE: (u8, u8, u8) = (0xd0, 0x87, 0x70);
        const YELLOW: (u8, u8, u8) = (0xeb, 0xcb, 0x8b);
        const GREEN: (u8, u8, u8) = (0xa3, 0xbe, 0x8c);
        const CYAN: (u8, u8, u8) = (0x96, 0xb5, 0xb4);
        const BLUE: (u8, u8, u8) = (0x8f, 0xa1, 0xb3);
        const PURPLE: (u8, u8, u8) = (0xb4, 0x8e, 0xad);
        const GREY: (u8, u8, u8) = (0x65, 0x73, 0x7e);
        match self {
            Kind::Plain => (FG, false, false),
            Kind::Keyword => (PURPLE, false, false),
            Kind::Type => (YELLOW, false, false),
            Kind::Function => (BLUE, false, false),
            Kind::String | Kind::Inserted => (GREEN, false, false),
            Kind::Number | Kind::Constant => (ORANGE, false, false),
            Kind::Comment => (GREY, false, true),
            Kind::Attribute => (CYAN, false, false),
            Kind::Tag | Kind::Variable | Kind::Deleted | Kind::Property => (RED, false, false),
            Kind::Heading => (BLUE, true, false),
            Kind::Meta => (CYAN, true, false),
        }
    }
}

/// A highlighter for one code block: its language and what the last line left open.
#[derive(Debug, Clone)]
pub(crate) struct Highlighter {
    syntax: Syntax,
    open: Open,
}

/// What a line left open for the next one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    Nothing,
    /// A block comment, with its nesting depth (Rust's nest).
    Comment(u32),
    /// A string, ended by this delimiter; `escapes`: a backslash escapes the next byte.
    Str {
        end: &'static str,
        escapes: bool,
    },
    /// Inside an HTML/XML tag (its attributes span lines).
    Tag,
    /// An HTML/XML comment.
    MarkupComment,
}

#[derive(Debug, Clone, Copy)]
enum Syntax {
    Code(&'static Spec),
    Diff,
    Markup,
    Yaml,
    Toml,
    Markdown,
}

impl Highlighter {
    /// The highlighter for a language named as fences and file names name it (`rust`, `rs`,
    /// `py`, `c++`, `Dockerfile`); None for plain text and languages not known.
    pub(crate) fn for_language(name: &str) -> Option<Self> {
        let name = name.to_ascii_lowercase();
        let syntax = match name.as_str() {
            "diff" | "patch" | "udiff" => Syntax::Diff,
            "html" | "htm" | "xhtml" | "xml" | "svg" | "plist" | "xsd" | "xsl" | "vue"
            | "svelte" | "jsx-html" => Syntax::Markup,
            "yaml" | "yml" => Syntax::Yaml,
            "toml" | "ini" | "cfg" | "conf" | "editorconfig" | "properties" | "gitconfig" => {
                Syntax::Toml
            }
            "md" | "markdown" | "mdx" => Syntax::Markdown,
            other => Syntax::Code(
                SPECS
                    .iter()
                    .find(|s| s.names.split_ascii_whitespace().any(|n| n == other))?,
            ),
        };
        Some(Self {
            syntax,
            open: Open::Nothing,
        })
    }

    /// The tokens of one line (without its newline), which put it back together exactly.
    pub(crate) fn line<'a>(&mut self, line: &'a str) -> Vec<(Kind, &'a str)> {
        let mut out = Tokens::new(line);
        match self.syntax {
            Syntax::Code(spec) => self.open = lex(spec, line, 0, self.open, &mut out),
            Syntax::Diff => diff_line(line, &mut out),
            Syntax::Markup => self.open = markup_line(line, self.open, &mut out),
            Syntax::Yaml => self.open = yaml_line(line, self.open, &mut out),
            Syntax::Toml => self.open = toml_line(line, self.open, &mut out),
            Syntax::Markdown => markdown_line(line, &mut out),
        }
        out.into_tokens()
    }
}

/// Tokens of a line as byte ranges, adjacent ones of the same kind merged.
struct Tokens<'a> {
    line: &'a str,
    ranges: Vec<(Kind, usize, usize)>,
}

impl<'a> Tokens<'a> {
    fn new(line: &'a str) -> Self {
        Self {
            line,
            ranges: Vec::new(),
        }
    }

    /// Push `from..to` as `kind` (nothing when empty). Callers cut only at ASCII bytes.
    fn push(&mut self, kind: Kind, from: usize, to: usize) {
        if from >= to {
            return;
        }
        match self.ranges.last_mut() {
            Some((last, _, end)) if *last == kind && *end == from => *end = to,
            _ => self.ranges.push((kind, from, to)),
        }
    }

    /// The tokens' text.
    fn into_tokens(self) -> Vec<(Kind, &'a str)> {
        let line = self.line;
        self.ranges
            .into_iter()
            .filter_map(|(kind, from, to)| Some((kind, line.get(from..to)?)))
            .collect()
    }
}

/// Whether byte `b` continues a word (every byte of a multi-byte character does).
fn word_byte(spec: &Spec, b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80 || (spec.dash_in_words && b == b'-')
}

/// Lex `line[at..]` as `spec`, starting in `open`; what it leaves open for the next line.
fn lex<'a>(spec: &Spec, line: &'a str, mut at: usize, open: Open, out: &mut Tokens<'a>) -> Open {
    let bytes = line.as_bytes();
    let n = bytes.len();
    // What the last line left open.
    match open {
        Open::Comment(depth) => match block_comment_end(spec, bytes, at, depth) {
            (end, None) => {
                out.push(Kind::Comment, at, end);
                at = end;
            }
            (_, Some(depth)) => {
                out.push(Kind::Comment, at, n);
                return Open::Comment(depth);
            }
        },
        Open::Str { end, escapes } => match string_end(bytes, at, end, escapes) {
            Some(stop) => {
                out.push(Kind::String, at, stop);
                at = stop;
            }
            None => {
                out.push(Kind::String, at, n);
                return open;
            }
        },
        Open::Tag | Open::MarkupComment | Open::Nothing => {}
    }
    // The kind of the name a keyword such as `class` or `fn` declares.
    let mut declared = None;
    while at < n {
        let b = bytes[at];
        let rest = &bytes[at..];
        // Comments.
        if let Some((start, _)) = spec.block_comment
            && rest.starts_with(start.as_bytes())
        {
            match block_comment_end(spec, bytes, at + start.len(), 1) {
                (end, None) => {
                    out.push(Kind::Comment, at, end);
                    at = end;
                    continue;
                }
                (_, Some(depth)) => {
                    out.push(Kind::Comment, at, n);
                    return Open::Comment(depth);
                }
            }
        }
        if spec
            .line_comments
            .iter()
            .any(|c| rest.starts_with(c.as_bytes()))
            && (!spec.hash_needs_space
                || b != b'#'
                || at == 0
                || bytes[at - 1].is_ascii_whitespace()
                || bytes[at - 1] == b';')
        {
            out.push(Kind::Comment, at, n);
            return Open::Nothing;
        }
        // Rust: attributes, raw strings, lifetimes.
        if spec.rust {
            if b == b'#' && matches!(bytes.get(at + 1), Some(b'[') | Some(b'!')) {
                let end = bracket_end(bytes, at).unwrap_or(n);
                out.push(Kind::Attribute, at, end);
                at = end;
                continue;
            }
            if let Some((len, end)) = raw_string_start(rest) {
                match find(bytes, at + len, end.as_bytes()) {
                    Some(stop) => {
                        out.push(Kind::String, at, stop);
                        at = stop;
                        continue;
                    }
                    None => {
                        out.push(Kind::String, at, n);
                        return Open::Str {
                            end,
                            escapes: false,
                        };
                    }
                }
            }
            if b == b'\''
                && let Some(end) = lifetime_end(bytes, at)
            {
                out.push(Kind::Type, at, end);
                at = end;
                continue;
            }
        }
        // Strings, with a prefix such as Python's f"", Rust's b"".
        if spec.quotes.contains(&b) {
            let triple = spec.triple_quotes && rest.len() >= 3 && rest[1] == b && rest[2] == b;
            let (end, escapes) = delimiter(spec, b, triple);
            let from = at + if triple { 3 } else { 1 };
            match string_end(bytes, from, end, escapes) {
                Some(stop) => {
                    out.push(Kind::String, at, stop);
                    at = stop;
                }
                None => {
                    out.push(Kind::String, at, n);
                    return if spec.multiline_strings || triple {
                        Open::Str { end, escapes }
                    } else {
                        Open::Nothing
                    };
                }
            }
            continue;
        }
        // Variables.
        if spec.dollar_variables && b == b'$' {
            let end = dollar_end(bytes, at);
            if end > at + 1 {
                out.push(Kind::Variable, at, end);
                at = end;
                continue;
            }
        }
        if spec.at_attributes
            && b == b'@'
            && bytes.get(at + 1).is_some_and(|c| c.is_ascii_alphabetic())
        {
            let mut end = at + 1;
            while end < n && (word_byte(spec, bytes[end]) || bytes[end] == b'.') {
                end += 1;
            }
            out.push(Kind::Attribute, at, end);
            at = end;
            continue;
        }
        // Numbers.
        if b.is_ascii_digit() {
            let mut end = at + 1;
            while end < n {
                let c = bytes[end];
                let exponent_sign = (c == b'-' || c == b'+')
                    && matches!(bytes[end - 1], b'e' | b'E')
                    && !bytes[at..end].starts_with(b"0x");
                if c.is_ascii_alphanumeric()
                    || c == b'_'
                    || exponent_sign
                    || (c == b'.' && bytes.get(end + 1).is_some_and(u8::is_ascii_digit))
                {
                    end += 1;
                } else {
                    break;
                }
            }
            out.push(Kind::Number, at, end);
            at = end;
            continue;
        }
        // Words.
        if word_byte(spec, b)
            || (b == b'#'
                && !spec.hash_needs_space
                && bytes.get(at + 1).is_some_and(u8::is_ascii_alphabetic))
        {
            let mut end = at + 1;
            while end < n && word_byte(spec, bytes[end]) {
                end += 1;
            }
            // A string prefix: r"", b'', f"", rb"".
            if end < n
                && spec.quotes.contains(&bytes[end])
                && end - at <= 2
                && bytes[at..end].iter().all(|c| b"rbfuRBFU".contains(c))
                && !spec.rust
                && spec.triple_quotes
            {
                // Lexed with the quote on the next round, as one string.
                let quote_start = end;
                out.push(Kind::String, at, quote_start);
                at = quote_start;
                continue;
            }
            if spec.rust
                && end - at <= 2
                && end < n
                && bytes[end] == b'"'
                && matches!(&bytes[at..end], b"b" | b"c")
            {
                out.push(Kind::String, at, end);
                at = end;
                continue;
            }
            let word = line.get(at..end).unwrap_or("");
            let next = next_non_space(bytes, end);
            let kind = match (
                declared.take(),
                classify(spec, word, next, bytes.get(end).copied(), at, bytes),
            ) {
                (Some(declared), Kind::Plain | Kind::Function | Kind::Type) => declared,
                (_, kind) => kind,
            };
            if kind == Kind::Keyword {
                declared = declares(word);
            }
            out.push(kind, at, end);
            at = end;
            continue;
        }
        // Anything else: punctuation, operators, spaces.
        let mut end = at + 1;
        while end < n && bytes[end].is_ascii() && !is_token_start(spec, bytes, end) {
            end += 1;
        }
        if !bytes[at..end].iter().all(u8::is_ascii_whitespace) {
            declared = None;
        }
        out.push(Kind::Plain, at, end);
        at = end;
    }
    Open::Nothing
}

/// Whether a token other than punctuation may start at `at`.
fn is_token_start(spec: &Spec, bytes: &[u8], at: usize) -> bool {
    let b = bytes[at];
    word_byte(spec, b)
        || spec.quotes.contains(&b)
        || (spec.dollar_variables && b == b'$')
        || (spec.at_attributes && b == b'@')
        || b == b'#'
        || spec
            .line_comments
            .iter()
            .any(|c| bytes[at..].starts_with(c.as_bytes()))
        || spec
            .block_comment
            .is_some_and(|(s, _)| bytes[at..].starts_with(s.as_bytes()))
}

/// The kind of a word, from its spelling and what follows it.
fn classify(
    spec: &Spec,
    word: &str,
    next: Option<u8>,
    right_after: Option<u8>,
    at: usize,
    bytes: &[u8],
) -> Kind {
    let listed = |list: &str| {
        let mut words = list.split_ascii_whitespace();
        if spec.case_insensitive {
            words.any(|k| k.eq_ignore_ascii_case(word))
        } else {
            words.any(|k| k == word)
        }
    };
    let after_dot = at > 0 && bytes[at - 1] == b'.';
    if !after_dot && listed(spec.keywords) {
        return Kind::Keyword;
    }
    if listed(spec.constants) {
        return Kind::Constant;
    }
    if listed(spec.types) {
        return Kind::Type;
    }
    if spec.rust && right_after == Some(b'!') && next != Some(b'=') {
        return Kind::Function;
    }
    if next == Some(b'(') {
        return Kind::Function;
    }
    let first = word.as_bytes().first().copied().unwrap_or(b'a');
    if spec.capitalized_types && first.is_ascii_uppercase() {
        // ALL_CAPS words are constants.
        return if word.len() > 1
            && word
                .bytes()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_')
        {
            Kind::Constant
        } else {
            Kind::Type
        };
    }
    Kind::Plain
}

/// The kind of the name declared by `keyword`, for the keywords that declare one.
fn declares(keyword: &str) -> Option<Kind> {
    match keyword {
        "class" | "struct" | "enum" | "trait" | "interface" | "union" | "record" | "protocol"
        | "object" | "module" | "defmodule" | "newtype" | "data" => Some(Kind::Type),
        "fn" | "def" | "defp" | "func" | "fun" | "function" | "sub" | "defn" => {
            Some(Kind::Function)
        }
        _ => None,
    }
}

/// The first byte after spaces from `at`.
fn next_non_space(bytes: &[u8], at: usize) -> Option<u8> {
    bytes
        .get(at..)?
        .iter()
        .copied()
        .find(|b| *b != b' ' && *b != b'\t')
}

/// The end delimiter of a string opened by `quote`, and whether backslashes escape in it.
fn delimiter(spec: &Spec, quote: u8, triple: bool) -> (&'static str, bool) {
    let shell_single = quote == b'\'' && spec.hash_needs_space && spec.dollar_variables;
    let end = match (quote, triple) {
        (b'"', true) => "\"\"\"",
        (b'\'', true) => "'''",
        (b'"', _) => "\"",
        (b'\'', _) => "'",
        _ => "`",
    };
    (end, !shell_single)
}

/// Where a string ends (after its closing delimiter), searching from `from`.
fn string_end(bytes: &[u8], from: usize, end: &str, escapes: bool) -> Option<usize> {
    let end = end.as_bytes();
    let mut i = from;
    while i < bytes.len() {
        if escapes && bytes[i] == b'\\' {
            i += 2;
            continue;
        }
        if bytes[i..].starts_with(end) {
            return Some(i + end.len());
        }
        i += 1;
    }
    None
}

/// Where a block comment ends (after its closing marker) searching from `from` at `depth`;
/// or the depth still open at the end of the line.
fn block_comment_end(
    spec: &Spec,
    bytes: &[u8],
    from: usize,
    mut depth: u32,
) -> (usize, Option<u32>) {
    let Some((start, end)) = spec.block_comment else {
        return (from, None);
    };
    let mut i = from;
    while i < bytes.len() {
        if bytes[i..].starts_with(end.as_bytes()) {
            depth = depth.saturating_sub(1);
            i += end.len();
            if depth == 0 {
                return (i, None);
            }
        } else if spec.nested_comments && bytes[i..].starts_with(start.as_bytes()) {
            depth = depth.saturating_add(1);
            i += start.len();
        } else {
            i += 1;
        }
    }
    (bytes.len(), Some(depth))
}

/// After `[` at or after `at`: the end of the matching `]` (strings not considered).
fn bracket_end(bytes: &[u8], at: usize) -> Option<usize> {
    let mut depth = 0u32;
    for (i, b) in bytes.iter().enumerate().skip(at) {
        match b {
            b'[' => depth += 1,
            b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// A Rust raw string at the start of `rest` (`r"`, `r#"`, `br##"`): the length of its
/// opening and its closing delimiter.
fn raw_string_start(rest: &[u8]) -> Option<(usize, &'static str)> {
    const ENDS: [&str; 4] = ["\"", "\"#", "\"##", "\"###"];
    let after_prefix = match rest {
        [b'r', ..] => 1,
        [b'b' | b'c', b'r', ..] => 2,
        _ => return None,
    };
    let hashes = rest[after_prefix..]
        .iter()
        .take_while(|b| **b == b'#')
        .count();
    (rest.get(after_prefix + hashes) == Some(&b'"') && hashes < ENDS.len())
        .then(|| (after_prefix + hashes + 1, ENDS[hashes]))
}

/// A Rust lifetime or label at `at` (`'a`, `'static`, not the char `'a'`): its end.
fn lifetime_end(bytes: &[u8], at: usize) -> Option<usize> {
    let first = *bytes.get(at + 1)?;
    if !(first.is_ascii_alphabetic() || first == b'_') {
        return None;
    }
    let mut end = at + 2;
    while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_') {
        end += 1;
    }
    (bytes.get(end) != Some(&b'\'')).then_some(end)
}

/// The end of a `$` variable at `at`: `$name`, `${...}`, `$(`-less specials `$1`, `$?`.
fn dollar_end(bytes: &[u8], at: usize) -> usize {
    match bytes.get(at + 1) {
        Some(b'{') => bytes[at..]
            .iter()
            .position(|b| *b == b'}')
            .map_or(bytes.len(), |p| at + p + 1),
        Some(c) if c.is_ascii_digit() || b"?#@*!$-".contains(c) => at + 2,
        Some(c) if c.is_ascii_alphabetic() || *c == b'_' => {
            let mut end = at + 2;
            while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_') {
                end += 1;
            }
            end
        }
        _ => at + 1,
    }
}

/// The position of `needle` in `bytes` from `from`.
fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    (from..bytes.len())
        .find(|i| bytes[*i..].starts_with(needle))
        .map(|i| i + needle.len())
}

// ---------------------------------------------------------------------------------------------
// Languages with line readers of their own

fn diff_line<'a>(line: &'a str, out: &mut Tokens<'a>) {
    let kind = if line.starts_with("+++") || line.starts_with("---") {
        Kind::Meta
    } else if line.starts_with('+') || line.starts_with('>') {
        Kind::Inserted
    } else if line.starts_with('-') || line.starts_with('<') {
        Kind::Deleted
    } else if line.starts_with("@@") {
        Kind::Function
    } else if [
        "diff ",
        "index ",
        "new file",
        "deleted file",
        "similarity",
        "rename ",
        "Binary",
    ]
    .iter()
    .any(|p| line.starts_with(p))
    {
        Kind::Meta
    } else {
        Kind::Plain
    };
    out.push(kind, 0, line.len());
}

/// HTML and XML: tags, attributes, their values, comments and entities.
fn markup_line<'a>(line: &'a str, mut open: Open, out: &mut Tokens<'a>) -> Open {
    let bytes = line.as_bytes();
    let n = bytes.len();
    let mut at = 0;
    while at < n {
        match open {
            Open::MarkupComment => match find(bytes, at, b"-->") {
                Some(end) => {
                    out.push(Kind::Comment, at, end);
                    at = end;
                    open = Open::Nothing;
                }
                None => {
                    out.push(Kind::Comment, at, n);
                    return open;
                }
            },
            Open::Tag => {
                let b = bytes[at];
                if b == b'>' || bytes[at..].starts_with(b"/>") || bytes[at..].starts_with(b"?>") {
                    let end = at + if b == b'>' { 1 } else { 2 };
                    out.push(Kind::Tag, at, end);
                    at = end;
                    open = Open::Nothing;
                } else if b == b'"' || b == b'\'' {
                    let end = string_end(bytes, at + 1, if b == b'"' { "\"" } else { "'" }, false)
                        .unwrap_or(n);
                    out.push(Kind::String, at, end);
                    at = end;
                } else if b.is_ascii_alphabetic()
                    || b >= 0x80
                    || b == b'_'
                    || b == b':'
                    || b == b'@'
                {
                    let mut end = at + 1;
                    while end < n
                        && (bytes[end].is_ascii_alphanumeric()
                            || bytes[end] >= 0x80
                            || b"_-:.@".contains(&bytes[end]))
                    {
                        end += 1;
                    }
                    out.push(Kind::Attribute, at, end);
                    at = end;
                } else {
                    out.push(Kind::Plain, at, at + 1);
                    at += 1;
                }
            }
            _ => {
                let rest = &bytes[at..];
                if rest.starts_with(b"<!--") {
                    open = Open::MarkupComment;
                    out.push(Kind::Comment, at, at + 4);
                    at += 4;
                } else if rest.first() == Some(&b'<')
                    && rest
                        .get(1)
                        .is_some_and(|c| c.is_ascii_alphabetic() || b"/!?".contains(c))
                {
                    let mut end = at + 2;
                    while end < n
                        && (bytes[end].is_ascii_alphanumeric() || b"_-:.".contains(&bytes[end]))
                    {
                        end += 1;
                    }
                    out.push(Kind::Tag, at, end);
                    at = end;
                    open = Open::Tag;
                } else if rest.first() == Some(&b'&') {
                    let end = rest
                        .iter()
                        .take(12)
                        .position(|c| *c == b';')
                        .map_or(at + 1, |p| at + p + 1);
                    out.push(
                        if end > at + 1 {
                            Kind::Constant
                        } else {
                            Kind::Plain
                        },
                        at,
                        end,
                    );
                    at = end;
                } else {
                    let end = rest
                        .iter()
                        .skip(1)
                        .position(|c| *c == b'<' || *c == b'&')
                        .map_or(n, |p| at + 1 + p);
                    out.push(Kind::Plain, at, end);
                    at = end;
                }
            }
        }
    }
    open
}

/// YAML: keys, then the value as [`VALUES`]; `---` and `...` document markers.
fn yaml_line<'a>(line: &'a str, open: Open, out: &mut Tokens<'a>) -> Open {
    if open != Open::Nothing {
        return lex(&VALUES, line, 0, open, out);
    }
    let bytes = line.as_bytes();
    if line == "---" || line == "..." || line.starts_with("--- ") || line.starts_with("%") {
        out.push(Kind::Meta, 0, line.len());
        return Open::Nothing;
    }
    // Indentation and list markers.
    let mut at = 0;
    loop {
        while at < bytes.len() && bytes[at] == b' ' {
            at += 1;
        }
        if bytes.get(at) == Some(&b'-') && matches!(bytes.get(at + 1), None | Some(b' ')) {
            at += 1;
        } else {
            break;
        }
    }
    out.push(Kind::Plain, 0, at);
    // A key: up to ": " or a final ':' (not in a comment, not a quoted or flow value).
    if !matches!(
        bytes.get(at),
        Some(b'#' | b'"' | b'\'' | b'[' | b'{' | b'|' | b'>') | None
    ) {
        let key_end = (at..bytes.len()).find(|i| {
            bytes[*i] == b':' && matches!(bytes.get(i + 1), None | Some(b' '))
                || bytes[*i] == b'#' && bytes[i - 1] == b' '
        });
        if let Some(end) = key_end.filter(|e| bytes[*e] == b':') {
            out.push(Kind::Property, at, end);
            at = end;
        }
    }
    lex(&VALUES, line, at, Open::Nothing, out)
}

/// TOML and INI: `[sections]`, `key =`, then the value as [`VALUES`].
fn toml_line<'a>(line: &'a str, open: Open, out: &mut Tokens<'a>) -> Open {
    if open != Open::Nothing {
        return lex(&VALUES, line, 0, open, out);
    }
    let trimmed = line.trim_start();
    let at = line.len() - trimmed.len();
    out.push(Kind::Plain, 0, at);
    if trimmed.starts_with('[') {
        let end = bracket_end(line.as_bytes(), at).unwrap_or(line.len());
        out.push(Kind::Heading, at, end);
        return lex(&VALUES, line, end, Open::Nothing, out);
    }
    if trimmed.starts_with(';') {
        out.push(Kind::Comment, at, line.len());
        return Open::Nothing;
    }
    let bytes = line.as_bytes();
    let key_end = (at..bytes.len()).find(|i| matches!(bytes[*i], b'=' | b'"' | b'\'' | b'#'));
    match key_end {
        Some(end) if bytes[end] == b'=' && !trimmed.starts_with('#') => {
            out.push(Kind::Property, at, end);
            lex(&VALUES, line, end, Open::Nothing, out)
        }
        _ => lex(&VALUES, line, at, Open::Nothing, out),
    }
}

/// Markdown: headings, list markers, quotes, `code` and emphasis markers.
fn markdown_line<'a>(line: &'a str, out: &mut Tokens<'a>) {
    let trimmed = line.trim_start();
    let at = line.len() - trimmed.len();
    if trimmed.starts_with('#') {
        out.push(Kind::Plain, 0, at);
        out.push(Kind::Heading, at, line.len());
        return;
    }
    if trimmed.starts_with('>') {
        out.push(Kind::Plain, 0, at);
        out.push(Kind::Comment, at, line.len());
        return;
    }
    let bytes = line.as_bytes();
    let mut i = 0;
    let mut start = 0;
    // A list marker.
    if let Some(first) = bytes.get(at)
        && (b"-*+".contains(first) && bytes.get(at + 1) == Some(&b' '))
    {
        out.push(Kind::Plain, 0, at);
        out.push(Kind::Keyword, at, at + 1);
        i = at + 1;
        start = i;
    }
    while i < bytes.len() {
        if bytes[i] == b'`'
            && let Some(end) = bytes[i + 1..].iter().position(|b| *b == b'`')
        {
            out.push(Kind::Plain, start, i);
            out.push(Kind::String, i, i + end + 2);
            i += end + 2;
            start = i;
        } else if bytes[i..].starts_with(b"**") || bytes[i..].starts_with(b"__") {
            out.push(Kind::Plain, start, i);
            out.push(Kind::Keyword, i, i + 2);
            i += 2;
            start = i;
        } else {
            i += 1;
        }
    }
    out.push(Kind::Plain, start, bytes.len());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(lang: &str, lines: &[&str]) -> Vec<Vec<(Kind, String)>> {
        let mut h = Highlighter::for_language(lang).expect(lang);
        lines
            .iter()
            .map(|l| {
                let tokens = h.line(l);
                assert_eq!(tokens.iter().map(|t| t.1).collect::<String>(), *l);
                tokens.into_iter().map(|(k, t)| (k, t.to_owned())).collect()
            })
            .collect()
    }

    fn kind_of(tokens: &[(Kind, String)], text: &str) -> Option<Kind> {
        tokens.iter().find(|t| t.1.trim() == text).map(|t| t.0)
    }

    #[test]
    fn rust_line() {
        let t = &kinds(
            "rust",
            &[
                "pub fn main() -> Result<u8, Error> { let s = \"a\\\"b\"; println!(\"{s}\"); 42 } // end",
            ],
        )[0];
        assert_eq!(kind_of(t, "pub"), Some(Kind::Keyword));
        assert_eq!(kind_of(t, "main"), Some(Kind::Function));
        assert_eq!(kind_of(t, "Result"), Some(Kind::Type));
        assert_eq!(kind_of(t, "u8"), Some(Kind::Type));
        assert_eq!(kind_of(t, "\"a\\\"b\""), Some(Kind::String));
        assert_eq!(kind_of(t, "println"), Some(Kind::Function));
        assert_eq!(kind_of(t, "42"), Some(Kind::Number));
        assert_eq!(kind_of(t, "// end"), Some(Kind::Comment));
    }

    #[test]
    fn rust_lifetimes_chars_raw_strings_and_attributes() {
        let t = &kinds(
            "rs",
            &["#[derive(Debug)] fn f<'a>(x: &'a str) -> char { let c = 'x'; r#\"raw \"q\"\"#; c }"],
        )[0];
        assert_eq!(kind_of(t, "#[derive(Debug)]"), Some(Kind::Attribute));
        assert_eq!(kind_of(t, "'a"), Some(Kind::Type));
        assert_eq!(kind_of(t, "'x'"), Some(Kind::String));
        assert_eq!(kind_of(t, "r#\"raw \"q\"\"#"), Some(Kind::String));
    }

    #[test]
    fn block_comments_and_strings_carry_over_lines() {
        let t = kinds(
            "rust",
            &[
                "a /* one /* nested */",
                "still */ b",
                "let s = \"open",
                "closed\"; x",
            ],
        );
        assert_eq!(t[0].last().map(|x| x.0), Some(Kind::Comment));
        assert_eq!(t[1][0], (Kind::Comment, "still */".to_owned()));
        assert_eq!(t[1].last().map(|x| x.0), Some(Kind::Plain));
        assert_eq!(t[2].last(), Some(&(Kind::String, "\"open".to_owned())));
        assert_eq!(t[3][0], (Kind::String, "closed\"".to_owned()));
        let t = kinds("py", &["x = \"\"\"doc", "more", "end\"\"\" # c"]);
        assert_eq!(t[1], vec![(Kind::String, "more".to_owned())]);
        assert_eq!(t[2].last(), Some(&(Kind::Comment, "# c".to_owned())));
    }

    #[test]
    fn python_shell_and_others() {
        let t = &kinds(
            "python",
            &["@dataclass def f(self, x=None): return f\"{x}\" + 1.5e-3"],
        )[0];
        assert_eq!(kind_of(t, "@dataclass"), Some(Kind::Attribute));
        assert_eq!(kind_of(t, "def"), Some(Kind::Keyword));
        assert_eq!(kind_of(t, "None"), Some(Kind::Constant));
        assert_eq!(kind_of(t, "1.5e-3"), Some(Kind::Number));
        // A declared name: a class is a type even when called, a function after `def`.
        let t = &kinds("py", &["class Config(Base): pass"])[0];
        assert_eq!(kind_of(t, "Config"), Some(Kind::Type));
        let t = &kinds("go", &["func (s *Server) Run() error {"])[0];
        // The receiver `s` is not the function declared.
        let functions: Vec<&str> = t
            .iter()
            .filter(|x| x.0 == Kind::Function)
            .map(|x| x.1.as_str())
            .collect();
        assert_eq!(functions, ["Run"]);
        let t = &kinds(
            "sh",
            &["for f in *.rs; do echo \"$f\" ${#x} $1 'it''s' # done"],
        )[0];
        assert_eq!(kind_of(t, "for"), Some(Kind::Keyword));
        assert_eq!(kind_of(t, "${#x}"), Some(Kind::Variable));
        assert_eq!(kind_of(t, "$1"), Some(Kind::Variable));
        assert_eq!(kind_of(t, "# done"), Some(Kind::Comment));
        let t = &kinds("sql", &["SELECT id FROM t WHERE x = 'a' -- c"])[0];
        assert_eq!(kind_of(t, "SELECT"), Some(Kind::Keyword));
        assert_eq!(kind_of(t, "-- c"), Some(Kind::Comment));
        let t = &kinds("json", &["{\"a\": [1, true, null]}"])[0];
        assert_eq!(kind_of(t, "true"), Some(Kind::Constant));
        assert_eq!(kind_of(t, "1"), Some(Kind::Number));
        for lang in [
            "go",
            "c",
            "cpp",
            "java",
            "ts",
            "rb",
            "php",
            "lua",
            "hs",
            "css",
            "Dockerfile",
            "make",
            "zig",
            "kotlin",
        ] {
            assert!(Highlighter::for_language(lang).is_some(), "{lang}");
        }
        assert!(Highlighter::for_language("nosuchlang").is_none());
        let t = kinds(
            "ocaml",
            &["let rec f x = (* a (* nested *)", "still *) x + 1"],
        );
        assert_eq!(kind_of(&t[0], "let"), Some(Kind::Keyword));
        assert_eq!(t[1][0], (Kind::Comment, "still *)".to_owned()));
        let t = &kinds(
            "ps1",
            &["Get-ChildItem $env:PATH -Recurse | Where-Object { $_ -EQ 1 } # c"],
        )[0];
        assert_eq!(kind_of(t, "-EQ"), Some(Kind::Keyword));
        assert_eq!(kind_of(t, "# c"), Some(Kind::Comment));
    }

    #[test]
    fn markup_yaml_toml_diff_markdown() {
        let t = kinds(
            "html",
            &["<a href=\"x\" class='y'>t &amp; <!-- c", "--> <br/>"],
        );
        assert_eq!(kind_of(&t[0], "<a"), Some(Kind::Tag));
        assert_eq!(kind_of(&t[0], "href"), Some(Kind::Attribute));
        assert_eq!(kind_of(&t[0], "\"x\""), Some(Kind::String));
        assert_eq!(kind_of(&t[0], "&amp;"), Some(Kind::Constant));
        assert_eq!(t[1][0], (Kind::Comment, "-->".to_owned()));
        let t = kinds("yaml", &["---", "name: skiff # c", "  - key: 'v'", "list:"]);
        assert_eq!(t[0], vec![(Kind::Meta, "---".to_owned())]);
        assert_eq!(kind_of(&t[1], "name"), Some(Kind::Property));
        assert_eq!(kind_of(&t[1], "# c"), Some(Kind::Comment));
        assert_eq!(kind_of(&t[2], "key"), Some(Kind::Property));
        assert_eq!(kind_of(&t[2], "'v'"), Some(Kind::String));
        assert_eq!(kind_of(&t[3], "list"), Some(Kind::Property));
        let t = kinds("toml", &["[package]", "name = \"skiff\" # c", "opt = true"]);
        assert_eq!(t[0], vec![(Kind::Heading, "[package]".to_owned())]);
        assert_eq!(kind_of(&t[1], "name"), Some(Kind::Property));
        assert_eq!(kind_of(&t[2], "true"), Some(Kind::Constant));
        let t = kinds(
            "diff",
            &["--- a/x", "+added", "-removed", "@@ -1 +1 @@", " same"],
        );
        assert_eq!(
            t.iter().map(|l| l[0].0).collect::<Vec<_>>(),
            [
                Kind::Meta,
                Kind::Inserted,
                Kind::Deleted,
                Kind::Function,
                Kind::Plain
            ]
        );
        let t = kinds("md", &["# Title", "- a `code` **b**"]);
        assert_eq!(t[0], vec![(Kind::Heading, "# Title".to_owned())]);
        assert_eq!(kind_of(&t[1], "`code`"), Some(Kind::String));
    }

    /// Random lines of code-like bytes and non-ASCII text, in every language: the tokens put
    /// each line back together, and nothing panics.
    #[test]
    fn tokens_always_rebuild_the_line() {
        const PIECES: &[&str] = &[
            "\"", "'", "`", "\\", "/*", "*/", "//", "#", "--", "<!--", "-->", "<a ", ">", "/>",
            "$", "${", "}", "@", "r#\"", "\"#", "'a", "1.5e-3", "0x1F", "fn", "def", "é", "日本",
            "🦀", " ", "\t", ":", "=", "[", "]", "(", ")", "---", "+", "-", "&amp;", "\"\"\"",
            "'''", "x", "Name", "{-", "-}", "--[[", "]]", ";", "%", "*", "**", "_", "#[", "b\"",
        ];
        let langs = [
            "rust", "py", "js", "json", "sh", "go", "c", "cpp", "java", "rb", "php", "lua", "sql",
            "hs", "ex", "css", "docker", "make", "perl", "r", "clj", "zig", "nix", "diff", "html",
            "yaml", "toml", "md", "ocaml", "ps1",
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for lang in langs {
            let mut h = Highlighter::for_language(lang).expect(lang);
            for _ in 0..300 {
                let len = next(14);
                let line: String = (0..len).map(|_| PIECES[next(PIECES.len())]).collect();
                let tokens = h.line(&line);
                assert_eq!(
                    tokens.iter().map(|t| t.1).collect::<String>(),
                    line,
                    "{lang}: {line:?}"
                );
                assert!(tokens.iter().all(|t| !t.1.is_empty()), "{lang}: {line:?}");
            }
        }
    }
}
