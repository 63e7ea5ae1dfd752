//! Secrets out of exported recordings: the configured keys, the values of variables named like
//! keys, tokens and passwords, and common credential shapes become `[REDACTED]`. A replay puts
//! what it gets through the same redaction before comparing, so a redacted recording still
//! matches.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

/// What a secret is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// Shortest environment value taken for a secret (shorter ones would match everywhere).
const MIN_SECRET_LEN: usize = 8;

/// Credential shapes, found anywhere in a text (see [`super::secret_patterns`]).
static PATTERNS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    super::secret_patterns::TOKEN_PATTERNS
        .iter()
        .filter_map(|(_, p)| Regex::new(p).ok())
        .collect()
});

/// `Authorization: …`, `Proxy-Authorization: …`, `Cookie: …`, `Set-Cookie: …` and
/// `X-Api-Key: …`-like headers (in curl commands, logs, HTTP dumps, JSON): everything after
/// the name to the end of the line or quote; an auth scheme word is kept.
static HEADER: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r#"(?im)(\b(?:proxy-)?authorization|\b(?:set-)?cookie|\bx-[a-z\-]*(?:api-?key|token|auth)[a-z\-]*|\bapi-?key)(["']?\s*:\s*["']?)([^\r\n"']+)"#,
    )
    .ok()
});

/// `Authorization: Bearer …` and the like: the credential after the scheme.
static BEARER: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?i)\b(bearer|basic|token)\s+([A-Za-z0-9._~+/\-]{16,}=*)").ok());

/// Authorization schemes kept in front of a redacted credential.
const AUTH_SCHEMES: &[&str] = &[
    "bearer",
    "basic",
    "token",
    "digest",
    "bot",
    "negotiate",
    "apikey",
];

/// `https://user:password@host`: the password.
static URL_PASSWORD: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"([a-z][a-z0-9+.\-]*://[^\s:/@]+:)([^\s@/]+)(@)").ok());

/// `NAME=value`, `NAME: value`, `"name": "value"` where the name says it holds a secret
/// (keys, tokens, passwords, credentials, cookies, auth keys).
static ASSIGNMENT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)(["']?\b[A-Za-z0-9_.\-]*(?:api[_\-]?key|secret|token|passw(?:or)?d|credential|private[_\-]?key|access[_\-]?key|cookie|auth[_\-]?(?:key|code|header))[A-Za-z0-9_.\-]*["']?\s*[:=]\s*["']?)([^\s"',;`]{6,})"#,
    )
    .ok()
});

/// Whether an environment variable's name says it holds a secret.
pub fn is_secret_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    ["key", "token", "secret", "passw", "credential", "auth"]
        .iter()
        .any(|w| lower.contains(w))
        && !lower.contains("author")
        && !matches!(lower.as_str(), "keyboard" | "xauthority")
}

/// A redactor for the secrets of this environment.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// Exact values to remove, longest first.
    values: Vec<String>,
}

impl Redactor {
    /// Secrets from `env`: the credential variables skiff knows and every variable named like
    /// a key, token or password.
    pub fn from_env<'a>(env: impl IntoIterator<Item = (&'a String, &'a String)>) -> Self {
        let mut values: Vec<String> = env
            .into_iter()
            .filter(|(name, value)| {
                (crate::env_guard::SECRET_VARS.contains(&name.as_str()) || is_secret_name(name))
                    && value.trim().len() >= MIN_SECRET_LEN
            })
            .map(|(_, value)| value.trim().to_owned())
            .collect();
        values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        values.dedup();
        Self { values }
    }

    /// Also remove, everywhere, the values that `value`'s strings assign to names that say
    /// they hold secrets (`DEPLOY_TOKEN=…` in a tool result makes the token a secret in the
    /// model's answer too) and the passwords of URLs.
    pub fn learn(&mut self, value: &Value) {
        match value {
            Value::String(s) => {
                for (re, group) in [(ASSIGNMENT.as_ref(), 2), (URL_PASSWORD.as_ref(), 2)] {
                    let Some(re) = re else { continue };
                    for c in re.captures_iter(s) {
                        if let Some(v) = c.get(group).map(|m| m.as_str())
                            && v.len() >= MIN_SECRET_LEN
                            && !v.contains(REDACTED)
                        {
                            self.values.push(v.to_owned());
                        }
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| self.learn(v)),
            Value::Object(map) => map.values().for_each(|v| self.learn(v)),
            _ => {}
        }
        self.values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        self.values.dedup();
    }

    /// `text` with its secrets replaced; the count of replacements.
    pub fn text(&self, text: &str) -> (String, usize) {
        let mut out = text.to_owned();
        let mut count = 0;
        for v in &self.values {
            let n = out.matches(v.as_str()).count();
            if n > 0 {
                count += n;
                out = out.replace(v.as_str(), REDACTED);
            }
        }
        for re in PATTERNS.iter() {
            count += replace_all(&mut out, re, |_| REDACTED.to_owned());
        }
        if let Some(re) = HEADER.as_ref() {
            count += replace_all(&mut out, re, |c| {
                let value = c[3].trim();
                let scheme = value
                    .split_once(' ')
                    .map(|(s, _)| s)
                    .filter(|s| AUTH_SCHEMES.contains(&s.to_ascii_lowercase().as_str()));
                match scheme {
                    Some(s) => format!("{}{}{s} {REDACTED}", &c[1], &c[2]),
                    None => format!("{}{}{REDACTED}", &c[1], &c[2]),
                }
            });
        }
        if let Some(re) = BEARER.as_ref() {
            count += replace_all(&mut out, re, |c| format!("{} {REDACTED}", &c[1]));
        }
        if let Some(re) = URL_PASSWORD.as_ref() {
            count += replace_all(&mut out, re, |c| format!("{}{REDACTED}{}", &c[1], &c[3]));
        }
        if let Some(re) = ASSIGNMENT.as_ref() {
            count += replace_all(&mut out, re, |c| format!("{}{REDACTED}", &c[1]));
        }
        (out, count)
    }

    /// Redact every string in `value` (object keys stay); the count of replacements.
    pub fn json(&self, value: &mut Value) -> usize {
        match value {
            Value::String(s) => {
                let (new, n) = self.text(s);
                if n > 0 {
                    *s = new;
                }
                n
            }
            Value::Array(items) => items.iter_mut().map(|v| self.json(v)).sum(),
            Value::Object(map) => map.values_mut().map(|v| self.json(v)).sum(),
            _ => 0,
        }
    }
}

/// Replace each match of `re` not already redacted; the number replaced.
fn replace_all(
    text: &mut String,
    re: &Regex,
    with: impl Fn(&regex::Captures<'_>) -> String,
) -> usize {
    let mut count = 0;
    let new = re.replace_all(text, |c: &regex::Captures<'_>| {
        let whole = c.get(0).map_or("", |m| m.as_str());
        if whole.contains(REDACTED) {
            return whole.to_owned();
        }
        count += 1;
        with(c)
    });
    if count > 0 {
        *text = new.into_owned();
    }
    count
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use std::collections::HashMap;

    #[test]
    fn keys_variables_and_shapes_are_redacted() {
        let env: HashMap<String, String> = [
            ("ANTHROPIC_API_KEY", "my-configured-key-123456"),
            ("DB_PASSWORD", "hunter2hunter2"),
            ("HOME", "/home/someone"),
            ("SHORT_TOKEN", "abc"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let r = Redactor::from_env(&env);
        let text = "key my-configured-key-123456 and hunter2hunter2 at /home/someone\n\
            GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789\n\
            curl -H 'Authorization: Bearer abcdefghijklmnop123456' https://bob:pa55word@example.com/x\n\
            {\"api_key\": \"zzzzzzzzzz\", \"author\": \"Jane Doe\"}\n\
            AKIAABCDEFGHIJKLMNOP sk-ant-api03-aaaaaaaaaaaaaaaaaaaaaaaa";
        let (out, n) = r.text(text);
        for secret in [
            "my-configured-key",
            "hunter2",
            "ghp_",
            "abcdefghijklmnop123456",
            "pa55word",
            "zzzzzzzzzz",
            "AKIAABCDEFGHIJKLMNOP",
            "sk-ant-",
        ] {
            assert!(!out.contains(secret), "{secret} left in:\n{out}");
        }
        assert!(out.contains("/home/someone"), "{out}");
        assert!(out.contains("Jane Doe"), "{out}");
        assert!(
            out.contains("https://bob:[REDACTED]@example.com/x"),
            "{out}"
        );
        assert!(n >= 8, "{n}");
        // Idempotent: a redacted text stays as it is.
        let (again, n2) = r.text(&out);
        assert_eq!(again, out);
        assert_eq!(n2, 0);
    }

    #[test]
    fn json_strings_are_redacted_in_place() {
        let r = Redactor::default();
        let mut v = serde_json::json!({"a": ["x", "token: qwertyuiop123"], "n": 3});
        assert_eq!(r.json(&mut v), 1);
        assert_eq!(v["a"][1], "token: [REDACTED]");
    }

    #[test]
    fn provider_tokens_cookies_and_auth_headers_are_redacted() {
        let r = Redactor::default();
        let text = "npm token npm_0123456789abcdefghijABCDEFGHIJ012345\n\
            slack xoxb-123456789012-1234567890123-AbCdEfGhIjKl and xoxp-1234-5678-abcdefghij\n\
            gitlab glpat-abcdefghij0123456789 google AIzaSyA0123456789abcdefghijklmnopqrstu\n\
            stripe sk_live_0123456789abcdefABCDEF hf hf_abcdefghijklmnopqrstuvwxyzABCDEFGH\n\
            gh ghp_0123456789abcdefghijABCDEFGHIJ012345 github_pat_11ABCDEFG0123456789_abcdefghijklmnop\n\
            SESSION_COOKIE=s3ss10nc00k1e\n\
            curl -H 'Authorization: Bearer short1' -H \"Cookie: sid=abc123; theme=dark\"\n\
            authorization: token-without-a-scheme-at-all\n\
            X-Api-Key: k3yk3yk3y";
        let (out, _) = r.text(text);
        for secret in [
            "npm_0123",
            "xoxb-1234",
            "xoxp-1234",
            "glpat-abc",
            "AIzaSy",
            "sk_live_0",
            "hf_abc",
            "ghp_0123",
            "github_pat_11",
            "s3ss10nc00k1e",
            "short1",
            "sid=abc123",
            "token-without",
            "k3yk3yk3y",
        ] {
            assert!(!out.contains(secret), "{secret} left in:\n{out}");
        }
        assert!(out.contains("Authorization: Bearer [REDACTED]"), "{out}");
        let (again, n) = r.text(&out);
        assert_eq!((again.as_str(), n), (out.as_str(), 0));
    }
}
