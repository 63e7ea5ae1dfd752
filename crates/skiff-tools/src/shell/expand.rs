//! Pathname expansion as bash does it, for permission checks: a glob word (`.e*`,
//! `/usr/bin/r[m]`, `src/*/x.rs`) becomes the paths it matches in the file system now. It errs
//! towards more matches (names starting with a dot always match; `.*` also yields `.` and `..`)
//! and gives up (`None`) past [`MAX_MATCHES`].

use std::path::{Path, PathBuf};

/// Most paths one glob word is expanded to before the check gives up.
pub const MAX_MATCHES: usize = 512;

/// The paths `pattern` (glob syntax, quoted characters escaped with `\`) matches from `cwd`,
/// as bash would pass them (relative patterns give relative paths); empty when nothing
/// matches (bash then passes the word as it is). `None` when there are too many.
pub fn expand(cwd: &Path, pattern: &str) -> Option<Vec<String>> {
    let absolute = pattern.starts_with('/');
    let mut found: Vec<(PathBuf, String)> = vec![(
        if absolute {
            PathBuf::from("/")
        } else {
            cwd.to_path_buf()
        },
        if absolute {
            "/".to_owned()
        } else {
            String::new()
        },
    )];
    let components: Vec<&str> = pattern.split('/').filter(|c| !c.is_empty()).collect();
    let last = components.len().saturating_sub(1);
    for (n, comp) in components.iter().enumerate() {
        let mut next = Vec::new();
        let sep = |shown: &str| {
            if shown.is_empty() || shown.ends_with('/') {
                String::new()
            } else {
                "/".to_owned()
            }
        };
        if !has_glob(comp) {
            let lit = unescape(comp);
            for (dir, shown) in found {
                let path = dir.join(&lit);
                // Only directories lead further; the last component must exist.
                let keep = if n == last {
                    std::fs::symlink_metadata(&path).is_ok()
                } else {
                    path.is_dir()
                };
                if keep {
                    next.push((path, format!("{shown}{}{lit}", sep(&shown))));
                }
            }
        } else {
            for (dir, shown) in found {
                let Ok(entries) = std::fs::read_dir(&dir) else {
                    continue;
                };
                // A name that is not UTF-8 cannot be checked: give up rather than miss it.
                let mut names = Vec::new();
                for entry in entries.filter_map(Result::ok) {
                    names.push(entry.file_name().into_string().ok()?);
                }
                if comp.starts_with('.') {
                    names.push(".".into());
                    names.push("..".into());
                }
                for name in names {
                    if matches(comp, &name) {
                        let path = dir.join(&name);
                        if n != last && !path.is_dir() {
                            continue;
                        }
                        next.push((path, format!("{shown}{}{name}", sep(&shown))));
                        if next.len() > MAX_MATCHES {
                            return None;
                        }
                    }
                }
            }
        }
        found = next;
        if found.is_empty() {
            return Some(Vec::new());
        }
    }
    let mut out: Vec<String> = found
        .into_iter()
        .map(|(_, shown)| {
            if pattern.ends_with('/') {
                format!("{shown}/")
            } else {
                shown
            }
        })
        .collect();
    out.sort();
    Some(out)
}

/// Whether a pattern component has an unescaped `*`, `?` or `[`.
fn has_glob(comp: &str) -> bool {
    let mut chars = comp.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '*' | '?' | '[' => return true,
            _ => {}
        }
    }
    false
}

fn unescape(comp: &str) -> String {
    let mut out = String::with_capacity(comp.len());
    let mut chars = comp.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether `name` matches one pattern component (`*`, `?`, `[…]` with ranges, `!`/`^` and
/// classes; `\x` is `x`).
pub fn matches(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    match_from(&p, &n)
}

fn match_from(p: &[char], n: &[char]) -> bool {
    let (mut pi, mut ni) = (0, 0);
    // Where to resume after the last `*`.
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        let step = match p.get(pi) {
            Some('*') => {
                star = Some((pi + 1, ni));
                pi += 1;
                continue;
            }
            Some('?') => Some(1),
            Some('[') => match bracket(&p[pi..], n[ni]) {
                Some((true, len)) => Some(len),
                Some((false, _)) => None,
                // No closing `]`: a literal `[`.
                None => (n[ni] == '[').then_some(1),
            },
            Some('\\') => match p.get(pi + 1) {
                Some(c) if *c == n[ni] => Some(2),
                Some(_) => None,
                None => (n[ni] == '\\').then_some(1),
            },
            Some(c) => (*c == n[ni]).then_some(1),
            None => None,
        };
        match step {
            Some(len) => {
                pi += len;
                ni += 1;
            }
            None => match star {
                Some((sp, sn)) => {
                    pi = sp;
                    ni = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// A bracket expression at the start of `p`: whether `c` is in it, and its length; `None` when
/// it does not close.
fn bracket(p: &[char], c: char) -> Option<(bool, usize)> {
    let mut i = 1;
    let negate = matches!(p.get(i), Some('!' | '^'));
    if negate {
        i += 1;
    }
    let mut hit = false;
    let mut first = true;
    loop {
        let ch = *p.get(i)?;
        if ch == ']' && !first {
            return Some((hit != negate, i + 1));
        }
        first = false;
        if ch == '[' && p.get(i + 1) == Some(&':') {
            let rest: String = p[i + 2..].iter().collect();
            let end = rest.find(":]")?;
            let class = &rest[..end];
            hit |= in_class(class, c);
            i += 2 + end + 2;
            continue;
        }
        if ch == '[' && matches!(p.get(i + 1), Some('.' | '=')) {
            // Collating symbols and equivalence classes: taken to match anything.
            let kind = p[i + 1];
            let rest: String = p[i + 2..].iter().collect();
            let end = rest.find(&format!("{kind}]"))?;
            hit = true;
            i += 2 + end + 2;
            continue;
        }
        let (lo, after) = if ch == '\\' {
            (*p.get(i + 1)?, i + 2)
        } else {
            (ch, i + 1)
        };
        if p.get(after) == Some(&'-') && p.get(after + 1).is_some_and(|e| *e != ']') {
            let hi_at = after + 1;
            let (hi, end) = if p[hi_at] == '\\' {
                (*p.get(hi_at + 1)?, hi_at + 2)
            } else {
                (p[hi_at], hi_at + 1)
            };
            hit |= lo <= c && c <= hi;
            i = end;
        } else {
            hit |= lo == c;
            i = after;
        }
    }
}

fn in_class(class: &str, c: char) -> bool {
    match class {
        "alpha" => c.is_alphabetic(),
        "digit" => c.is_ascii_digit(),
        "alnum" => c.is_alphanumeric(),
        "upper" => c.is_uppercase(),
        "lower" => c.is_lowercase(),
        "space" => c.is_whitespace(),
        "blank" => c == ' ' || c == '\t',
        "punct" => c.is_ascii_punctuation(),
        "xdigit" => c.is_ascii_hexdigit(),
        "cntrl" => c.is_control(),
        "print" => !c.is_control(),
        "graph" => !c.is_control() && !c.is_whitespace(),
        // An unknown class: taken to match.
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_match_as_bash_does() {
        for (p, n, m) in [
            ("*", "a", true),
            ("*", ".env", true),
            (".e*", ".env", true),
            ("r[m]", "rm", true),
            ("r[!m]", "rm", false),
            ("r[a-z]", "rm", true),
            ("[[:alpha:]]m", "rm", true),
            ("?m", "rm", true),
            ("a\\*", "a*", true),
            ("a\\*", "ab", false),
            ("*.rs", "main.rs", true),
            ("*.rs", "main.rsx", false),
            ("a*b*c", "axxbyyc", true),
            ("[]]", "]", true),
            ("[", "[", true),
        ] {
            assert_eq!(matches(p, n), m, "{p} vs {n}");
        }
    }

    #[test]
    fn words_expand_against_the_file_system() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join(".env"), "").unwrap();
        std::fs::write(d.join("a.txt"), "").unwrap();
        std::fs::create_dir_all(d.join("src/x")).unwrap();
        std::fs::write(d.join("src/x/m.rs"), "").unwrap();
        assert_eq!(expand(d, ".e*").unwrap(), [".env"]);
        assert_eq!(expand(d, "*.txt").unwrap(), ["a.txt"]);
        assert_eq!(expand(d, "src/*/m.rs").unwrap(), ["src/x/m.rs"]);
        assert_eq!(expand(d, "nothing*").unwrap(), Vec::<String>::new());
        let abs = format!("{}/*.txt", d.display());
        assert_eq!(expand(d, &abs).unwrap(), [format!("{}/a.txt", d.display())]);
        assert!(expand(d, ".*").unwrap().contains(&"..".to_owned()));
    }
}
