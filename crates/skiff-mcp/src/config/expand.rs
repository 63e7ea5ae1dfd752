//! `${VAR}` and `${VAR:-default}` in MCP server entries, as Claude Code expands them: a set
//! variable gives its value, an unset one its default; an unset one without a default stays as
//! written and is reported.

/// Expand `${VAR}` and `${VAR:-default}` in `text` with `lookup`. The names of unset variables
/// without a default are appended to `missing` (once each); those stay as written.
pub fn expand_vars(
    text: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
    missing: &mut Vec<String>,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            // No closing brace: the rest is literal.
            out.push_str(&rest[start..]);
            return out;
        };
        let inner = &after[..end];
        if inner.is_empty() {
            out.push_str("${}");
        } else {
            let (name, default) = match inner.split_once(":-") {
                Some((n, d)) => (n, Some(d)),
                None => (inner, None),
            };
            match (lookup(name), default) {
                (Some(value), _) => out.push_str(&value),
                (None, Some(d)) => out.push_str(d),
                (None, None) => {
                    if !missing.iter().any(|m| m == name) {
                        missing.push(name.to_owned());
                    }
                    out.push_str(&rest[start..start + 2 + end + 1]);
                }
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "HOME" => Some("/home/u".into()),
            "EMPTY" => Some(String::new()),
            "TOKEN" => Some("s3cr3t".into()),
            _ => None,
        }
    }

    fn run(text: &str) -> (String, Vec<String>) {
        let mut missing = Vec::new();
        let out = expand_vars(text, &env, &mut missing);
        (out, missing)
    }

    #[test]
    fn set_variables_and_defaults() {
        assert_eq!(run("${HOME}/bin").0, "/home/u/bin");
        assert_eq!(run("Bearer ${TOKEN}").0, "Bearer s3cr3t");
        assert_eq!(run("${NOPE:-fallback}").0, "fallback");
        assert_eq!(run("${HOME:-fallback}").0, "/home/u");
        assert_eq!(run("${NOPE:-}x").0, "x");
        assert_eq!(run("${EMPTY}|${EMPTY:-d}").0, "|");
        assert_eq!(run("${NOPE:-a:-b}").0, "a:-b");
        assert_eq!(run("${HOME}${TOKEN}").0, "/home/us3cr3t");
    }

    #[test]
    fn unset_variables_stay_literal_and_are_reported_once() {
        let (out, missing) = run("${A}-${B}-${A}");
        assert_eq!(out, "${A}-${B}-${A}");
        assert_eq!(missing, ["A", "B"]);
    }

    #[test]
    fn text_that_is_not_a_reference_is_kept() {
        assert_eq!(
            run("$HOME ${} $ {x} ${unclosed").0,
            "$HOME ${} $ {x} ${unclosed"
        );
        assert_eq!(run("no vars, ünïcode").0, "no vars, ünïcode");
        assert!(run("${}").1.is_empty());
    }
}
