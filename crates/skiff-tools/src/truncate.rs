//! The truncation helper: any tool result longer than the limit is cut on a character boundary
//! and gets `[OUTPUT TRUNCATED: Showing X of Y characters from TOOL]`.

/// Default maximum characters of one tool result.
pub const DEFAULT_MAX_RESULT_CHARS: usize = 40_000;

/// `text` cut to `max_chars` characters plus the notice, or `None` when it fits.
pub fn truncate_result(text: &str, max_chars: usize, tool: &str) -> Option<String> {
    // Fast path: byte length bounds the character count.
    if text.len() <= max_chars {
        return None;
    }
    let total = text.chars().count();
    if total <= max_chars {
        return None;
    }
    let cut = text
        .char_indices()
        .nth(max_chars)
        .map_or(text.len(), |(i, _)| i);
    Some(format!(
        "{}\n\n[OUTPUT TRUNCATED: Showing {} of {} characters from {tool}]",
        &text[..cut],
        group(max_chars),
        group(total)
    ))
}

/// Keep the first and last parts of `text` within `max_chars` characters, with a marker
/// saying how many characters were left out in between (used for command output, where the
/// end usually matters as much as the start).
pub fn truncate_middle(text: &str, max_chars: usize) -> String {
    let total = text.chars().count();
    if total <= max_chars {
        return text.to_owned();
    }
    let head = max_chars / 2;
    let tail = max_chars - head;
    let head_end = text.char_indices().nth(head).map_or(text.len(), |(i, _)| i);
    let tail_start = text
        .char_indices()
        .nth(total - tail)
        .map_or(text.len(), |(i, _)| i);
    let omitted = total - head - tail;
    format!(
        "{}\n\n... [{} characters omitted] ...\n\n{}",
        &text[..head_end],
        group(omitted),
        &text[tail_start..]
    )
}

/// `40000` → `40,000`.
pub fn group(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notice_and_boundaries() {
        assert_eq!(truncate_result("short", 10, "Bash"), None);
        let s = "é".repeat(50_000);
        let t = truncate_result(&s, 40_000, "Bash").unwrap();
        assert!(t.starts_with(&"é".repeat(40_000)));
        assert!(t.ends_with("[OUTPUT TRUNCATED: Showing 40,000 of 50,000 characters from Bash]"));
        // Byte length over the limit but characters within it: not truncated.
        assert_eq!(truncate_result(&"é".repeat(30), 40, "Read"), None);
    }

    #[test]
    fn middle_keeps_head_and_tail() {
        let s: String = (0..1000)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        let t = truncate_middle(&s, 100);
        assert!(t.starts_with(&s[..50]));
        assert!(t.ends_with(&s[950..]));
        assert!(t.contains("[900 characters omitted]"));
        assert_eq!(truncate_middle("abc", 100), "abc");
    }

    #[test]
    fn grouping() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(group(1234567), "1,234,567");
    }
}
