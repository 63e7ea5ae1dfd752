//! From a response body to the text WebFetch works on: what kind of content it is, HTML to
//! Markdown (htmd, a turndown.js-style converter over html5ever, as Claude Code uses turndown),
//! and character-based slicing for `offset` paging.
//!
//! Hostile HTML is bounded: html5ever's tree building slows down quadratically with nesting
//! depth and htmd walks the tree recursively, so a page nested deeper than [`MAX_DEPTH`] is
//! reduced to its plain text instead, and the conversion runs on a thread of its own with a
//! large stack (a panic there is caught, not fatal).

use std::rc::Rc;

/// Nesting depth past which a page is read as plain text instead of converted.
pub const MAX_DEPTH: usize = 1_000;
/// Stack of the conversion thread.
const CONVERT_STACK: usize = 64 * 1024 * 1024;

/// What a response holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// HTML or XHTML: converted to Markdown.
    Html,
    /// Text (plain, Markdown, JSON, XML, JavaScript…): used as it is.
    Text,
    /// Anything else (images, PDFs, archives, executables): refused.
    Binary,
}

/// The kind of a body by its `content-type` (and by its bytes when there is none, or when a
/// "text" body holds NUL bytes).
pub fn kind_of(content_type: &str, body: &[u8]) -> Kind {
    let mime = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let declared = if mime.is_empty() {
        None
    } else if mime == "text/html" || mime == "application/xhtml+xml" {
        Some(Kind::Html)
    } else if mime.starts_with("text/")
        || mime.ends_with("+json")
        || mime.ends_with("+xml")
        || matches!(
            mime.as_str(),
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/x-javascript"
                | "application/ecmascript"
                | "application/x-www-form-urlencoded"
                | "application/yaml"
                | "application/x-yaml"
                | "application/toml"
                | "application/x-sh"
                | "application/sql"
                | "application/graphql"
        )
    {
        Some(Kind::Text)
    } else {
        Some(Kind::Binary)
    };
    match declared {
        Some(Kind::Binary) => Kind::Binary,
        _ if looks_binary(body) => Kind::Binary,
        Some(k) => k,
        None if looks_like_html(body) => Kind::Html,
        None => Kind::Text,
    }
}

/// NUL bytes, or mostly invalid UTF-8, in the first 8 KiB.
fn looks_binary(b: &[u8]) -> bool {
    let head = &b[..b.len().min(8192)];
    if head.contains(&0) {
        return true;
    }
    match std::str::from_utf8(head) {
        Ok(_) => false,
        Err(e) if e.error_len().is_none() => false,
        Err(_) => {
            let bad = String::from_utf8_lossy(head).matches('\u{FFFD}').count();
            bad * 10 > head.len().max(1)
        }
    }
}

fn looks_like_html(b: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&b[..b.len().min(1024)]).to_ascii_lowercase();
    let head = head.trim_start_matches('\u{feff}').trim_start();
    head.starts_with("<!doctype html") || head.starts_with("<html") || head.contains("<head")
}

/// HTML to Markdown, bounded as the module says. Blocking: call it off the async runtime.
pub fn html_to_markdown(html: &str) -> String {
    if estimated_depth(html) > MAX_DEPTH {
        return plain_text(html);
    }
    let owned = html.to_owned();
    let worker = std::thread::Builder::new()
        .name("skiff-html".into())
        .stack_size(CONVERT_STACK)
        .spawn(move || convert_tree(&owned));
    match worker.map(|h| h.join()) {
        Ok(Ok(Some(md))) => md,
        // Too deep once parsed, the converter panicked, or no thread could be started.
        _ => plain_text(html),
    }
}

fn convert_tree(html: &str) -> Option<String> {
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(vec![
            "script", "style", "noscript", "template", "iframe", "object", "embed", "svg",
            "canvas", "head",
        ])
        .build();
    let tree = converter.html_to_tree(html).ok()?;
    if tree_depth(&tree) > MAX_DEPTH {
        return None;
    }
    let mut md = converter.tree_to_markdown(&tree);
    if let Some(title) = title(html).filter(|t| !md.contains(t.as_str())) {
        md = format!("# {title}\n\n{md}");
    }
    Some(md)
}

/// The depth of the parsed tree, walked without recursion.
fn tree_depth(root: &Rc<htmd::Node>) -> usize {
    let mut max = 0;
    let mut stack = vec![(Rc::clone(root), 0usize)];
    while let Some((node, depth)) = stack.pop() {
        max = max.max(depth);
        if max > MAX_DEPTH {
            break;
        }
        for child in node.children.borrow().iter() {
            stack.push((Rc::clone(child), depth + 1));
        }
    }
    max
}

/// Elements that never have an end tag, or whose end tag is usually left out: they do not
/// deepen the estimate.
const SHALLOW: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr", "p", "li", "dt", "dd", "tr", "td", "th", "option", "param", "!doctype",
];

/// A cheap upper-bound-ish estimate of the nesting depth from the tags alone (opened minus
/// closed), so that a pathological page never reaches the parser.
fn estimated_depth(html: &str) -> usize {
    let bytes = html.as_bytes();
    let (mut depth, mut max) = (0usize, 0usize);
    let mut i = 0;
    while let Some(off) = bytes[i..].iter().position(|b| *b == b'<') {
        i += off + 1;
        let closing = bytes.get(i) == Some(&b'/');
        let start = if closing { i + 1 } else { i };
        let end = bytes[start..]
            .iter()
            .position(|b| !(b.is_ascii_alphanumeric() || *b == b'!' || *b == b'-'))
            .map_or(bytes.len(), |p| start + p);
        let name = html[start..end].to_ascii_lowercase();
        if name.is_empty() || name.starts_with("!--") || SHALLOW.contains(&name.as_str()) {
            continue;
        }
        let self_closing = bytes[end..]
            .iter()
            .position(|b| *b == b'>')
            .is_some_and(|p| p > 0 && bytes[end + p - 1] == b'/');
        if closing {
            depth = depth.saturating_sub(1);
        } else if !self_closing {
            depth += 1;
            max = max.max(depth);
        }
    }
    max
}

/// The document's `<title>`, if any.
fn title(html: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    let open = lower.find("<title")?;
    let start = open + lower[open..].find('>')? + 1;
    let end = start + lower[start..].find("</title")?;
    let t = decode_entities(html[start..end].trim());
    (!t.is_empty() && t.len() < 300).then_some(t)
}

/// Tags that start a new line in [`plain_text`].
const BLOCKS: &[&str] = &[
    "p",
    "div",
    "br",
    "li",
    "tr",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "pre",
    "section",
    "article",
    "table",
    "ul",
    "ol",
    "blockquote",
];

/// The text of an HTML page without its markup (scripts and styles left out), for pages too
/// deep to convert.
pub fn plain_text(html: &str) -> String {
    // ASCII lowercasing keeps every byte offset.
    let lower = html.to_ascii_lowercase();
    let mut out = String::with_capacity(html.len() / 2);
    let mut i = 0;
    while let Some(off) = html[i..].find('<') {
        let tag = i + off;
        out.push_str(&decode_entities(&html[i..tag]));
        let rest = &lower[tag + 1..];
        let name_end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '/'))
            .unwrap_or(rest.len());
        let name = &rest[..name_end];
        let resume = match ["script", "style"].into_iter().find(|t| name == *t) {
            Some(t) => lower[tag..]
                .find(&format!("</{t}"))
                .map_or(html.len(), |p| tag + p),
            None => tag,
        };
        let Some(close) = html.get(resume..).and_then(|r| r.find('>')) else {
            i = html.len();
            break;
        };
        if BLOCKS.contains(&name.trim_start_matches('/')) {
            out.push('\n');
        }
        i = resume + close + 1;
    }
    out.push_str(&decode_entities(&html[i.min(html.len())..]));
    let mut text = String::with_capacity(out.len());
    let mut blank = 0;
    for line in out.lines().map(str::trim) {
        if line.is_empty() {
            blank += 1;
            if blank > 1 || text.is_empty() {
                continue;
            }
        } else {
            blank = 0;
        }
        text.push_str(line);
        text.push('\n');
    }
    text.trim().to_owned()
}

fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_owned();
    }
    s.replace("&nbsp;", " ")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// Number of characters of `s`.
pub fn char_len(s: &str) -> usize {
    s.chars().count()
}

/// The characters of `s` from character `start` on, at most `max` of them.
pub fn char_slice(s: &str, start: usize, max: usize) -> &str {
    let begin = s.char_indices().nth(start).map_or(s.len(), |(i, _)| i);
    let rest = &s[begin..];
    let end = rest.char_indices().nth(max).map_or(rest.len(), |(i, _)| i);
    &rest[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_becomes_markdown_without_scripts_or_styles() {
        let html = r#"<!doctype html><html><head><title>The Page</title>
            <style>body{color:red}</style><script>var secret = 1;</script></head>
            <body><h1>Hello</h1><p>Some <b>bold</b> and <a href="/x">a link</a>.</p>
            <ul><li>one</li><li>two</li></ul><pre><code>let a = 1;</code></pre>
            <table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>
            <script>alert(2)</script></body></html>"#;
        let md = html_to_markdown(html);
        assert!(md.starts_with("# The Page\n\n# Hello"), "{md}");
        assert!(md.contains("Some **bold** and [a link](/x)."), "{md}");
        assert!(md.contains("*   one\n*   two"), "{md}");
        assert!(md.contains("```\nlet a = 1;\n```"), "{md}");
        assert!(md.contains("| a | b |"), "{md}");
        assert!(!md.contains("secret") && !md.contains("alert") && !md.contains("color"));
    }

    #[test]
    fn deeply_nested_html_is_read_as_text_without_overflowing() {
        let deep = format!(
            "{}deep text{}",
            "<div>".repeat(50_000),
            "</div>".repeat(50_000)
        );
        assert_eq!(html_to_markdown(&deep), "deep text");
        // Nesting the estimate undercounts (tables) is caught after parsing.
        let tables = format!("<p>{}inner", "<table><td>".repeat(400));
        assert!(html_to_markdown(&tables).contains("inner"));
    }

    #[test]
    fn plain_text_strips_markup_and_scripts() {
        let t =
            plain_text("<p>a &amp; b</p><script>x<y</script><style>z</style><div>c&nbsp;d</div>");
        assert_eq!(t, "a & b\n\nc d");
    }

    #[test]
    fn kinds_by_content_type_and_bytes() {
        assert_eq!(kind_of("text/html; charset=utf-8", b"<p>x"), Kind::Html);
        assert_eq!(kind_of("application/xhtml+xml", b"<p>x"), Kind::Html);
        assert_eq!(kind_of("text/markdown", b"# x"), Kind::Text);
        assert_eq!(kind_of("application/json", b"{}"), Kind::Text);
        assert_eq!(kind_of("application/vnd.api+json", b"{}"), Kind::Text);
        assert_eq!(kind_of("image/png", b"\x89PNG"), Kind::Binary);
        assert_eq!(kind_of("application/pdf", b"%PDF-1.4"), Kind::Binary);
        assert_eq!(kind_of("application/octet-stream", b"hello"), Kind::Binary);
        assert_eq!(kind_of("text/plain", b"a\0b"), Kind::Binary);
        assert_eq!(kind_of("", b"<!DOCTYPE html><p>x"), Kind::Html);
        assert_eq!(kind_of("", b"plain words"), Kind::Text);
        assert_eq!(kind_of("", &[0xff; 64]), Kind::Binary);
    }

    #[test]
    fn char_slices_respect_multibyte_characters() {
        let s = "héllo wörld";
        assert_eq!(char_len(s), 11);
        assert_eq!(char_slice(s, 1, 4), "éllo");
        assert_eq!(char_slice(s, 7, 100), "örld");
        assert_eq!(char_slice(s, 50, 3), "");
    }
}
