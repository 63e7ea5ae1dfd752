//! Variable lookup for the provider and the settings' environment layer: the real environment,
//! then the workspace `.env`, then `$SKIFF_HOME/.env`, then the settings files' `env` objects.
//! Nothing is written to the process environment.

#[allow(unused_imports)]
use crate::error::{ConfigError, Result, bail, invalid};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};

use super::{Source, Sourced};

/// Where a variable was set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvOrigin {
    /// The process environment.
    Process,
    /// A `.env` file.
    DotEnv(PathBuf),
    /// The `env` object of a settings file (or `--settings`).
    Settings(Box<Source>),
}

/// Variables by name with their origin, highest precedence already applied. Empty values count
/// as unset. `Debug` shows names only: values may be secrets.
#[derive(Clone, Default)]
pub struct EnvLookup {
    vars: HashMap<String, (String, EnvOrigin)>,
}

impl fmt::Debug for EnvLookup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<&String> = self.vars.keys().collect();
        names.sort();
        f.debug_struct("EnvLookup")
            .field("names", &names)
            .finish_non_exhaustive()
    }
}

impl EnvLookup {
    /// Build from the layers, each given lowest precedence first in the argument order reversed:
    /// `process` wins over `dotenvs` (in order: the first wins), which win over `settings_env`.
    pub fn build(
        process: &HashMap<String, String>,
        dotenvs: &[(PathBuf, HashMap<String, String>)],
        settings_env: &BTreeMap<String, Sourced<String>>,
    ) -> Self {
        let mut vars = HashMap::new();
        let mut put = |k: &str, v: &str, origin: EnvOrigin| {
            if !v.trim().is_empty() {
                vars.insert(k.to_owned(), (v.to_owned(), origin));
            }
        };
        for (k, v) in settings_env {
            put(k, &v.value, EnvOrigin::Settings(Box::new(v.source.clone())));
        }
        for (path, file) in dotenvs.iter().rev() {
            for (k, v) in file {
                put(k, v, EnvOrigin::DotEnv(path.clone()));
            }
        }
        for (k, v) in process {
            put(k, v, EnvOrigin::Process);
        }
        Self { vars }
    }

    /// The value of `key`, if set and non-empty.
    pub fn get(&self, key: &str) -> Option<String> {
        self.vars.get(key).map(|(v, _)| v.clone())
    }

    /// Where `key` was set.
    pub fn source(&self, key: &str) -> Option<Source> {
        self.vars.get(key).map(|(_, origin)| Source::Env {
            var: key.to_owned(),
            origin: origin.clone(),
        })
    }
}

/// Largest `.env` file read.
const MAX_DOTENV_BYTES: u64 = 1024 * 1024;

/// A parsed `.env` file: its variables, and a warning for each line that was skipped.
pub(super) struct DotEnv {
    pub vars: HashMap<String, String>,
    pub warnings: Vec<String>,
}

/// Read a `.env` file without touching the process environment; `None` when it does not
/// exist. Ordinary application files are accepted — `export`, spaces around `=`, unquoted
/// values with spaces, JSON values, single/double quotes (multi-line too), inline comments,
/// `MY-VAR` names, a BOM — and a line that still cannot be read is skipped with a warning that
/// names its number, never its text (it may hold a secret). Special files are not read.
pub(super) fn read_dotenv(path: &Path) -> Result<Option<DotEnv>> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if super::is_absent(&e) => return Ok(None),
        Err(e) => bail!("cannot read {}: {e}", path.display()),
    };
    if !meta.is_file() {
        return Ok(Some(DotEnv {
            vars: HashMap::new(),
            warnings: vec![format!(
                "Warning: {} is not a regular file; not read.",
                path.display()
            )],
        }));
    }
    let mut bytes = Vec::new();
    {
        use std::io::Read;
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .map_err(|e| invalid!("cannot read {}: {e}", path.display()))?;
        file.take(MAX_DOTENV_BYTES)
            .read_to_end(&mut bytes)
            .map_err(|e| invalid!("cannot read {}: {e}", path.display()))?;
    }
    let text = String::from_utf8_lossy(&bytes);
    let (vars, bad) = parse_dotenv(&text);
    let warnings = bad
        .into_iter()
        .map(|(line, why)| format!("Warning: {} line {line} skipped: {why}.", path.display()))
        .collect();
    tracing::debug!(path = %path.display(), count = vars.len(), "loaded .env file");
    Ok(Some(DotEnv { vars, warnings }))
}

/// Parse `.env` text: the variables, and `(line number, reason)` for each skipped line.
pub(super) fn parse_dotenv(text: &str) -> (HashMap<String, String>, Vec<(usize, &'static str)>) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines: Vec<&str> = text.lines().collect();
    let mut vars = HashMap::new();
    let mut bad = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let number = i + 1;
        let line = lines[i].trim();
        i += 1;
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").map_or(line, str::trim_start);
        let Some((key, rest)) = line.split_once('=') else {
            bad.push((number, "not KEY=VALUE"));
            continue;
        };
        let key = key.trim();
        let key_ok = !key.is_empty()
            && !key.starts_with(|c: char| c.is_ascii_digit())
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if !key_ok {
            bad.push((number, "the name is not a variable name"));
            continue;
        }
        let rest = rest.trim_start();
        let value = match rest.chars().next() {
            Some(q @ ('"' | '\'')) => {
                // Quoted: up to the closing quote, which may be on a later line.
                let mut body = rest[1..].to_owned();
                let mut closed = closing_quote(&body, q);
                while closed.is_none() && i < lines.len() {
                    body.push('\n');
                    body.push_str(lines[i]);
                    i += 1;
                    closed = closing_quote(&body, q);
                }
                let Some(end) = closed else {
                    bad.push((number, "a quote is not closed"));
                    continue;
                };
                let inner = &body[..end];
                if q == '"' {
                    unescape(inner)
                } else {
                    inner.to_owned()
                }
            }
            _ => {
                // Unquoted: up to an inline ` #` comment.
                let v = match rest.find(" #").or_else(|| rest.find("\t#")) {
                    Some(at) => &rest[..at],
                    None => rest,
                };
                v.trim_end().to_owned()
            }
        };
        vars.insert(key.to_owned(), value);
    }
    (vars, bad)
}

fn closing_quote(body: &str, q: char) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in body.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' && q == '"' {
            escaped = true;
        } else if c == q {
            return Some(i);
        }
    }
    None
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_application_env_files_parse() {
        let text = "\u{feff}# comment\n\
            export A=1\n\
            B = spaced value  # trailing comment\n\
            JSON={\"a\": [1, 2], \"b\": \"x y\"}\n\
            MY-VAR=dash\n\
            Q=\"quoted # not a comment\\n2\"\n\
            S='single $NOT'\n\
            MULTI=\"line1\nline2\"\n\
            EMPTY=\n\
            this line is garbage\n\
            1BAD=x\n\
            OPEN=\"never closed\n";
        let (vars, bad) = parse_dotenv(text);
        assert_eq!(vars["A"], "1");
        assert_eq!(vars["B"], "spaced value");
        assert_eq!(vars["JSON"], r#"{"a": [1, 2], "b": "x y"}"#);
        assert_eq!(vars["MY-VAR"], "dash");
        assert_eq!(vars["Q"], "quoted # not a comment\n2");
        assert_eq!(vars["S"], "single $NOT");
        assert_eq!(vars["MULTI"], "line1\nline2");
        assert_eq!(vars["EMPTY"], "");
        assert_eq!(
            bad,
            [
                (11, "not KEY=VALUE"),
                (12, "the name is not a variable name"),
                (13, "a quote is not closed")
            ]
        );
    }
}
