//! The YAML frontmatter of command and skill files (between `---` lines at the top), read as
//! Claude Code reads it: `description`, `argument-hint`, `allowed-tools`, `model`,
//! `disable-model-invocation`, `user-invocable`, `arguments` and a skill's `name`. Malformed
//! YAML never loses the body: the file keeps working with empty metadata and a warning.

use yaml_rust2::{Yaml, YamlLoader};

/// What the frontmatter says (every field optional).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Frontmatter {
    /// `name` (skills: the command name when valid).
    pub name: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// `argument-hint`, as shown after the command name (`[issue-number]`).
    pub argument_hint: Option<String>,
    /// `allowed-tools`: permission rules granted while the command runs.
    pub allowed_tools: Vec<String>,
    /// `model` for the turn that runs the command (`inherit` = none).
    pub model: Option<String>,
    /// `disable-model-invocation: true`: only the user can run it.
    pub disable_model_invocation: bool,
    /// `user-invocable: false`: only the model can load it (not a `/name` command).
    pub user_invocable: bool,
    /// `arguments`: names of positional arguments (`$name` placeholders).
    pub arguments: Vec<String>,
}

/// A file split into its frontmatter and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// The metadata (defaults when there is none or it is malformed).
    pub meta: Frontmatter,
    /// The Markdown after the frontmatter.
    pub body: String,
    /// Why the frontmatter was not (fully) understood.
    pub warning: Option<String>,
}

/// Split `text` into frontmatter and body and read the frontmatter.
pub fn parse(text: &str) -> Parsed {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let default_meta = Frontmatter {
        user_invocable: true,
        ..Frontmatter::default()
    };
    let Some((yaml, body)) = split(text) else {
        let warning = opened_but_not_closed(text)
            .then(|| "its frontmatter starts with --- but never ends with a --- line".to_owned());
        return Parsed {
            meta: default_meta,
            body: text.to_owned(),
            warning,
        };
    };
    let body = body.to_owned();
    if yaml.trim().is_empty() {
        return Parsed {
            meta: default_meta,
            body,
            warning: None,
        };
    }
    // Claude Code's own examples (`argument-hint: [pr-number] [priority]`) are not valid YAML;
    // like Claude Code, retry with the values quoted before giving up.
    let doc = load(yaml).or_else(|first| load(&quote_values(yaml)).map_err(|_| first));
    match doc {
        Ok(Yaml::Hash(map)) => {
            let (meta, warning) = read(&map);
            Parsed {
                meta,
                body,
                warning,
            }
        }
        Ok(Yaml::Null) => Parsed {
            meta: default_meta,
            body,
            warning: None,
        },
        Ok(_) => Parsed {
            meta: default_meta,
            body,
            warning: Some("its frontmatter is not a list of `key: value` lines".to_owned()),
        },
        Err(e) => Parsed {
            meta: default_meta,
            body,
            warning: Some(format!("its frontmatter is not valid YAML ({e})")),
        },
    }
}

/// The YAML between the first two `---` lines, and the body after them.
fn split(text: &str) -> Option<(&str, &str)> {
    let first_end = text.find('\n')?;
    if text[..first_end].trim_end() != "---" {
        return None;
    }
    let rest = &text[first_end + 1..];
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            let body = &rest[offset + line.len()..];
            return Some((&rest[..offset], body.strip_prefix('\n').unwrap_or(body)));
        }
        offset += line.len();
    }
    None
}

fn opened_but_not_closed(text: &str) -> bool {
    text.lines().next().is_some_and(|l| l.trim_end() == "---")
}

fn load(yaml: &str) -> Result<Yaml, String> {
    let mut docs = YamlLoader::load_from_str(yaml).map_err(|e| e.to_string())?;
    Ok(if docs.is_empty() {
        Yaml::Null
    } else {
        docs.swap_remove(0)
    })
}

/// Quote the value of every top-level `key: value` line that is not quoted already (block
/// scalars and nested lists are left alone).
fn quote_values(yaml: &str) -> String {
    let mut out = String::with_capacity(yaml.len() + 16);
    for line in yaml.lines() {
        let quoted = line
            .split_once(':')
            .filter(|(key, _)| {
                !key.is_empty()
                    && !key.starts_with([' ', '\t', '-', '#'])
                    && key
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            })
            .and_then(|(key, value)| {
                let v = value.trim();
                needs_quotes(v).then(|| format!("{key}: '{}'", v.replace('\'', "''")))
            });
        out.push_str(quoted.as_deref().unwrap_or(line));
        out.push('\n');
    }
    out
}

/// Whether a plain value should be quoted for the retry: not empty, not quoted or a block
/// scalar already, not a YAML list (unless it is a row of `[hints]`).
fn needs_quotes(v: &str) -> bool {
    if v.is_empty() || v.starts_with(['"', '\'', '|', '>', '#', '&', '*', '!']) {
        return false;
    }
    if v.starts_with('[') {
        return v.contains("] [");
    }
    true
}

fn read(map: &yaml_rust2::yaml::Hash) -> (Frontmatter, Option<String>) {
    let mut meta = Frontmatter {
        user_invocable: true,
        ..Frontmatter::default()
    };
    let mut problems = Vec::new();
    for (key, value) in map {
        let Some(key) = key.as_str() else {
            continue;
        };
        match key {
            "name" => meta.name = scalar(value),
            "description" => meta.description = scalar(value).filter(|d| !d.trim().is_empty()),
            "argument-hint" => meta.argument_hint = hint(value),
            "allowed-tools" => meta.allowed_tools = list(value),
            "arguments" => meta.arguments = list(value),
            "model" => {
                meta.model = scalar(value).filter(|m| {
                    let m = m.trim();
                    !m.is_empty() && m != "inherit"
                });
            }
            "disable-model-invocation" => match boolean(value) {
                Some(b) => meta.disable_model_invocation = b,
                None => problems.push(format!("{key} is not true or false")),
            },
            "user-invocable" => match boolean(value) {
                Some(b) => meta.user_invocable = b,
                None => problems.push(format!("{key} is not true or false")),
            },
            _ => {}
        }
    }
    let warning = (!problems.is_empty()).then(|| problems.join("; "));
    (meta, warning)
}

/// A scalar as text (numbers and booleans too).
fn scalar(v: &Yaml) -> Option<String> {
    match v {
        Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
        Yaml::Integer(i) => Some(i.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

/// `argument-hint: [issue-number]` is a one-element YAML list; shown as written.
fn hint(v: &Yaml) -> Option<String> {
    match v {
        Yaml::Array(items) => {
            let parts: Vec<String> = items
                .iter()
                .filter_map(scalar)
                .map(|s| format!("[{s}]"))
                .collect();
            (!parts.is_empty()).then(|| parts.join(" "))
        }
        other => scalar(other).filter(|s| !s.trim().is_empty()),
    }
}

/// `yes`/`no`/`on`/`off`/`1`/`0` as well as YAML booleans, in any case.
fn boolean(v: &Yaml) -> Option<bool> {
    match v {
        Yaml::Boolean(b) => Some(*b),
        Yaml::Integer(1) => Some(true),
        Yaml::Integer(0) => Some(false),
        Yaml::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" | "1" => Some(true),
            "false" | "no" | "off" | "0" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// A YAML list, or a string separated by commas or spaces (outside parentheses, so
/// `Bash(git add:*)` stays whole).
fn list(v: &Yaml) -> Vec<String> {
    match v {
        Yaml::Array(items) => items
            .iter()
            .filter_map(scalar)
            .flat_map(|s| split_list(&s))
            .collect(),
        other => scalar(other).map(|s| split_list(&s)).unwrap_or_default(),
    }
}

/// Split `Read, Grep Bash(git add:*)` into its items.
pub fn split_list(text: &str) -> Vec<String> {
    let text = text.trim();
    let text = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .unwrap_or(text);
    let mut items = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => {
                depth += 1;
                current.push(c);
            }
            ')' => {
                depth = depth.saturating_sub(1);
                current.push(c);
            }
            ',' if depth == 0 => items.push(std::mem::take(&mut current)),
            c if c.is_whitespace() && depth == 0 => items.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    items.push(current);
    items
        .into_iter()
        .map(|s| s.trim().trim_matches(['"', '\'']).to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_claude_codes_fields() {
        let p = parse(
            "---\ndescription: Fix an issue\nargument-hint: [issue-number]\nallowed-tools: Bash(git add:*), Read\nmodel: haiku\ndisable-model-invocation: yes\n---\nFix #$ARGUMENTS\n",
        );
        assert_eq!(p.warning, None);
        assert_eq!(p.body, "Fix #$ARGUMENTS\n");
        assert_eq!(p.meta.description.as_deref(), Some("Fix an issue"));
        assert_eq!(p.meta.argument_hint.as_deref(), Some("[issue-number]"));
        assert_eq!(p.meta.allowed_tools, ["Bash(git add:*)", "Read"]);
        assert_eq!(p.meta.model.as_deref(), Some("haiku"));
        assert!(p.meta.disable_model_invocation);
        assert!(p.meta.user_invocable);
    }

    #[test]
    fn lists_may_be_yaml_lists_or_space_separated() {
        let p = parse(
            "---\nallowed-tools:\n  - Read\n  - Bash(npm run *)\narguments: issue branch\n---\nx",
        );
        assert_eq!(p.meta.allowed_tools, ["Read", "Bash(npm run *)"]);
        assert_eq!(p.meta.arguments, ["issue", "branch"]);
        assert_eq!(split_list("[Read, Grep]"), ["Read", "Grep"]);
    }

    #[test]
    fn claude_codes_unquoted_examples_still_parse() {
        let p = parse(
            "---\nargument-hint: [pr-number] [priority] [assignee]\ndescription: Review: a PR\n---\nbody",
        );
        assert_eq!(p.warning, None);
        assert_eq!(
            p.meta.argument_hint.as_deref(),
            Some("[pr-number] [priority] [assignee]")
        );
        assert_eq!(p.meta.description.as_deref(), Some("Review: a PR"));
    }

    #[test]
    fn malformed_frontmatter_keeps_the_body_and_warns() {
        let p = parse("---\ndescription: [unclosed\n  - : :\n---\nStill works $ARGUMENTS\n");
        assert!(
            p.warning.as_deref().unwrap().contains("not valid YAML"),
            "{p:?}"
        );
        assert_eq!(p.body, "Still works $ARGUMENTS\n");
        assert_eq!(p.meta.description, None);

        let open = parse("---\ndescription: x\nno end");
        assert!(open.warning.unwrap().contains("never ends"));
        assert!(open.body.contains("no end"));

        let bad_bool = parse("---\ndisable-model-invocation: maybe\n---\nb");
        assert!(
            bad_bool
                .warning
                .unwrap()
                .contains("disable-model-invocation")
        );
        assert!(!bad_bool.meta.disable_model_invocation);
    }

    #[test]
    fn no_frontmatter_is_all_body() {
        let p = parse("Just a prompt\n---\nwith a rule\n");
        assert_eq!(p.warning, None);
        assert_eq!(p.body, "Just a prompt\n---\nwith a rule\n");
        assert!(p.meta.user_invocable);
        let crlf = parse("---\r\ndescription: d\r\n---\r\nbody\r\n");
        assert_eq!(crlf.meta.description.as_deref(), Some("d"));
        assert_eq!(crlf.body, "body\r\n");
    }

    #[test]
    fn inherit_is_no_model_and_user_invocable_can_be_off() {
        let p = parse("---\nmodel: inherit\nuser-invocable: false\n---\n");
        assert_eq!(p.meta.model, None);
        assert!(!p.meta.user_invocable);
    }
}
