//! Permission rules in Claude Code's grammar: `Tool` or `Tool(specifier)`.
//!
//! | Tool(s) | Specifier |
//! |---|---|
//! | `Bash` | command pattern: exact, `*` wildcards anywhere, trailing ` *` at a word boundary, legacy `:*` |
//! | `Read`, `Edit` (`Write`, `NotebookEdit`) | gitignore-style path: `//abs`, `~/home`, `/settings-root`, `./cwd` or `relative` |
//! | `WebFetch` | `domain:host`, `domain:*.example.com`, `domain:*` |
//! | `mcp__server`, `mcp__server__tool`, `mcp__server__*` | none |
//! | `Task` / `Agent` | subagent type |
//! | any (deny/ask) | `param:value`, value with `*` |
//!
//! Path rules are compiled to absolute globs once, when the rule is read, so matching a call is
//! a glob match of the call's resolved paths.

use std::fmt;
use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};
use serde_json::Value;

/// Which list a rule is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RuleKind {
    /// Runs without asking.
    Allow,
    /// Always asks.
    Ask,
    /// Never runs.
    Deny,
}

impl RuleKind {
    /// `allow`, `ask`, `deny`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Ask => "ask",
            Self::Deny => "deny",
        }
    }
}

/// Where the relative forms of path rules are anchored.
#[derive(Debug, Clone)]
pub struct RuleOrigin {
    /// `/path` rules: the settings file's root (the project for project settings, `~/.claude`
    /// for user settings, the working directory for flags).
    pub root: PathBuf,
    /// `path` and `./path` rules: the working directory.
    pub cwd: PathBuf,
    /// `~/path` rules.
    pub home: Option<PathBuf>,
}

impl RuleOrigin {
    /// Rules given on the command line (or by a session): everything anchored at `cwd`.
    pub fn at(cwd: &Path) -> Self {
        Self {
            root: cwd.to_path_buf(),
            cwd: cwd.to_path_buf(),
            home: home_dir(),
        }
    }
}

/// The user's home directory, canonical when it exists.
pub fn home_dir() -> Option<PathBuf> {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    let home = PathBuf::from(home);
    Some(std::fs::canonicalize(&home).unwrap_or(home))
}

/// Which tools a rule's tool name covers.
#[derive(Debug, Clone)]
enum ToolPattern {
    /// One tool.
    Exact(String),
    /// Every tool of an MCP server (`mcp__server`, `mcp__server__*`).
    Server(String),
    /// A glob over tool names (`*`, `mcp__*`).
    Glob(String),
}

/// What a rule's specifier means.
#[derive(Debug, Clone)]
enum Spec {
    /// No specifier (or `*`): every call.
    Any,
    /// A Bash command pattern.
    Command(Wildcard),
    /// A path pattern (Read/Edit family).
    Path(PathPattern),
    /// `domain:…` of WebFetch.
    Domain(String),
    /// `param:value`.
    Param(String, Wildcard),
    /// Anything else: matched against the call's string inputs.
    Text(Wildcard),
}

/// A parsed permission rule.
#[derive(Debug, Clone)]
pub struct Rule {
    text: String,
    tool: ToolPattern,
    spec: Spec,
}

/// The tools whose path rules are `Read` rules.
pub const READ_TOOLS: &[&str] = &["Read", "Grep", "Glob", "LS", "NotebookRead"];
/// The tools whose path rules are `Edit` rules.
pub const EDIT_TOOLS: &[&str] = &["Edit", "Write", "NotebookEdit", "MultiEdit"];

/// Parameters of Bash that `param:value` rules may name (anything else with a colon is a
/// command pattern: `Bash(npm run test:*)`).
const BASH_PARAMS: &[&str] = &[
    "command",
    "timeout",
    "description",
    "run_in_background",
    "dangerouslyDisableSandbox",
];
/// Parameters of the path tools that `param:value` rules may name.
const PATH_PARAMS: &[&str] = &[
    "file_path",
    "notebook_path",
    "path",
    "pattern",
    "glob",
    "type",
    "output_mode",
    "offset",
    "limit",
    "content",
    "old_string",
    "new_string",
    "replace_all",
];

impl Rule {
    /// Parse a rule written in Claude Code's grammar.
    pub fn parse(text: &str, origin: &RuleOrigin) -> Result<Self, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("an empty permission rule".into());
        }
        let (name, inner) = match text.find('(') {
            Some(open) => {
                let Some(inner) = text[open + 1..].strip_suffix(')') else {
                    return Err(format!(
                        "the permission rule {text:?} has no closing parenthesis"
                    ));
                };
                (text[..open].trim(), Some(inner.trim()))
            }
            None => (text, None),
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '*' | '.'))
        {
            return Err(format!(
                "the permission rule {text:?} does not start with a tool name"
            ));
        }
        let tool = if name.contains('*') {
            match name.strip_suffix("__*") {
                Some(server) if is_server(server) => ToolPattern::Server(server.to_owned()),
                _ => ToolPattern::Glob(name.to_owned()),
            }
        } else if is_server(name) {
            ToolPattern::Server(name.to_owned())
        } else {
            ToolPattern::Exact(name.to_owned())
        };
        let spec = match inner {
            None | Some("" | "*") => Spec::Any,
            Some(spec) => parse_spec(name, spec, origin)?,
        };
        Ok(Self {
            text: text.to_owned(),
            tool,
            spec,
        })
    }

    /// The rule as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// A bare tool name (no specifier): such a deny rule removes the tool from the model's list.
    pub fn bare_tool(&self) -> Option<&str> {
        match (&self.tool, &self.spec) {
            (ToolPattern::Exact(t), Spec::Any) => Some(t),
            _ => None,
        }
    }

    /// Whether this rule, as a deny rule, takes `tool` away from the model: no specifier, and
    /// the name, server or glob covers it.
    pub fn removes(&self, tool: &str) -> bool {
        matches!(self.spec, Spec::Any) && self.names_tool(tool, RuleKind::Deny)
    }

    /// Whether the rule may be an allow rule: tool-name globs only after a literal
    /// `mcp__server__`.
    pub fn allowable(&self) -> bool {
        !matches!(self.tool, ToolPattern::Glob(_))
    }

    /// Whether the rule is about this tool at all (specifier not considered). `Read` path rules
    /// also cover the search tools and, for deny/ask, the edit tools.
    pub fn names_tool(&self, tool: &str, kind: RuleKind) -> bool {
        match &self.tool {
            ToolPattern::Exact(name) => {
                if name == tool {
                    return true;
                }
                if kind != RuleKind::Allow && is_cut_mcp_name(name, tool) {
                    return true;
                }
                let path_rule = matches!(self.spec, Spec::Path(_));
                match name.as_str() {
                    "Read" if path_rule => {
                        READ_TOOLS.contains(&tool)
                            || (kind != RuleKind::Allow && EDIT_TOOLS.contains(&tool))
                    }
                    "Read" => tool == "NotebookRead",
                    n if EDIT_TOOLS.contains(&n) => EDIT_TOOLS.contains(&tool),
                    "Task" | "Agent" => matches!(tool, "Task" | "Agent"),
                    _ => false,
                }
            }
            ToolPattern::Server(server) => tool
                .strip_prefix(server.as_str())
                .is_some_and(|rest| rest.starts_with("__") && rest.len() > 2),
            ToolPattern::Glob(pattern) => wildcard_match(pattern, tool),
        }
    }

    /// Whether the rule covers a Bash command (one simple command, wrappers stripped).
    pub fn matches_command(&self, command: &str) -> bool {
        match &self.spec {
            Spec::Any => true,
            Spec::Command(w) | Spec::Text(w) => w.matches(command),
            _ => false,
        }
    }

    /// A Bash command rule's pattern (`rm -rf *` for `Bash(rm -rf:*)`) and whether it also
    /// matches without its trailing ` *`.
    pub fn command_pattern(&self) -> Option<(&str, bool)> {
        match &self.spec {
            Spec::Command(w) => Some((&w.pattern, w.optional_tail)),
            _ => None,
        }
    }

    /// Whether the rule could cover some command whose text starts with `prefix` (the rest
    /// being computed at run time).
    pub fn could_match_command(&self, prefix: &str) -> bool {
        match &self.spec {
            Spec::Any => true,
            Spec::Command(w) | Spec::Text(w) => w.could_match_prefix(prefix),
            _ => false,
        }
    }

    /// Whether this is a Bash command rule (not a parameter rule).
    pub fn is_command_rule(&self) -> bool {
        matches!(self.spec, Spec::Any | Spec::Command(_) | Spec::Text(_))
    }

    /// Whether the rule covers a path (absolute, normalised).
    pub fn matches_path(&self, path: &Path) -> bool {
        match &self.spec {
            Spec::Any => true,
            Spec::Path(p) => p.matches(path),
            _ => false,
        }
    }

    /// The directory below which everything the rule covers lies: its path's literal head
    /// (`/` for a rule without a specifier); `None` for a rule of commands, domains or
    /// parameters.
    pub fn path_base(&self) -> Option<&Path> {
        match &self.spec {
            Spec::Any => Some(Path::new("/")),
            Spec::Path(p) => Some(&p.base),
            _ => None,
        }
    }

    /// Whether the rule has a path specifier.
    pub fn is_path_rule(&self) -> bool {
        matches!(self.spec, Spec::Path(_))
    }

    /// Whether the rule covers a call of a tool it names, judged on the input alone (Bash
    /// commands and paths are matched by the engine, which resolves them first).
    pub fn matches_input(&self, tool: &str, input: &Value) -> bool {
        match &self.spec {
            Spec::Any => true,
            Spec::Param(name, value) => input.get(name).is_some_and(|v| match v {
                Value::String(s) => value.matches(s),
                other => value.matches(&other.to_string()),
            }),
            Spec::Domain(domain) => input
                .get("url")
                .and_then(Value::as_str)
                .and_then(host_of)
                .is_some_and(|host| domain_matches(domain, &host)),
            Spec::Text(w) => match tool {
                "Task" | "Agent" => input
                    .get("subagent_type")
                    .and_then(Value::as_str)
                    .is_some_and(|t| w.matches(t)),
                _ => input
                    .as_object()
                    .is_some_and(|o| o.values().any(|v| v.as_str().is_some_and(|s| w.matches(s)))),
            },
            Spec::Command(_) | Spec::Path(_) => false,
        }
    }

    /// The host pattern of a `WebFetch(domain:…)` rule (`docs.rs`, `*.corp.example`, `*`).
    pub fn web_fetch_domain(&self) -> Option<&str> {
        match (&self.tool, &self.spec) {
            (ToolPattern::Exact(t), Spec::Domain(d)) if t == "WebFetch" => Some(d),
            _ => None,
        }
    }

    /// Whether the specifier is a parameter rule (`param:value`).
    pub fn is_param_rule(&self) -> bool {
        matches!(self.spec, Spec::Param(..))
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

fn is_server(name: &str) -> bool {
    name.strip_prefix("mcp__")
        .is_some_and(|rest| !rest.is_empty() && !rest.contains("__") && !rest.contains('*'))
}

fn parse_spec(tool: &str, spec: &str, origin: &RuleOrigin) -> Result<Spec, String> {
    if let Some((param, value)) = param_form(tool, spec) {
        return Ok(Spec::Param(param.to_owned(), Wildcard::new(value)));
    }
    Ok(match tool {
        "Bash" | "Monitor" => Spec::Command(Wildcard::command(spec)),
        "Read" | "Edit" | "Write" | "NotebookEdit" | "MultiEdit" | "Grep" | "Glob" | "LS"
        | "NotebookRead" => Spec::Path(PathPattern::new(spec, origin)?),
        "WebFetch" => match spec.strip_prefix("domain:") {
            Some(d) => Spec::Domain(
                d.trim()
                    .trim_start_matches('[')
                    .trim_end_matches(']')
                    .trim_end_matches('.')
                    .to_ascii_lowercase(),
            ),
            None => Spec::Text(Wildcard::new(spec)),
        },
        _ => Spec::Text(Wildcard::new(spec)),
    })
}

/// `name:value` where `name` is a parameter of the tool.
fn param_form<'a>(tool: &str, spec: &'a str) -> Option<(&'a str, &'a str)> {
    let (name, value) = spec.split_once(':')?;
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    let known = match tool {
        "Bash" | "Monitor" => BASH_PARAMS.contains(&name) && !spec.ends_with(":*"),
        "WebFetch" => name != "domain",
        t if READ_TOOLS.contains(&t) || EDIT_TOOLS.contains(&t) => PATH_PARAMS.contains(&name),
        _ => true,
    };
    known.then_some((name, value))
}

/// A `*` wildcard pattern (`*` spans anything, spaces included).
#[derive(Debug, Clone)]
pub struct Wildcard {
    pattern: String,
    /// A trailing ` *`: also matches the text without the space and the rest (`ls *` matches
    /// `ls`, not `lsof`).
    optional_tail: bool,
}

impl Wildcard {
    /// A plain wildcard pattern.
    pub fn new(pattern: &str) -> Self {
        Self {
            pattern: pattern.to_owned(),
            optional_tail: false,
        }
    }

    /// A Bash command pattern: legacy `prefix:*` and trailing ` *` match at a word boundary.
    pub fn command(pattern: &str) -> Self {
        let trimmed = pattern.trim();
        if let Some(prefix) = trimmed.strip_suffix(":*") {
            return Self {
                pattern: format!("{} *", prefix.trim_end()),
                optional_tail: true,
            };
        }
        Self {
            pattern: trimmed.to_owned(),
            optional_tail: trimmed.ends_with(" *"),
        }
    }

    /// Whether some text starting with `prefix` matches: a `*` can take whatever follows the
    /// prefix, so only the literal start of the pattern must agree with it.
    pub fn could_match_prefix(&self, prefix: &str) -> bool {
        let agrees = |pattern: &str| match pattern.split_once('*') {
            None => pattern.starts_with(prefix),
            Some((head, _)) => head.starts_with(prefix) || prefix.starts_with(head),
        };
        agrees(&self.pattern)
            || (self.optional_tail && self.pattern.strip_suffix(" *").is_some_and(agrees))
    }

    /// Whether the whole text matches.
    pub fn matches(&self, text: &str) -> bool {
        if wildcard_match(&self.pattern, text) {
            return true;
        }
        self.optional_tail
            && self
                .pattern
                .strip_suffix(" *")
                .is_some_and(|head| wildcard_match(head, text))
    }
}

/// Longest tool name the API accepts; an MCP tool's `mcp__<server>__<tool>` longer than that
/// is offered cut to it: its first 55 characters, `_` and eight hex digits of a hash
/// (`skiff_mcp::tool_name`).
const MAX_TOOL_NAME: usize = 64;

/// Whether `tool` is the cut form of the MCP tool `name` (longer than the API allows). A deny or
/// ask rule written with the tool's full name covers the name the model calls it by; an allow
/// rule does not (two tools whose names share their first 55 characters have the same cut
/// head).
fn is_cut_mcp_name(name: &str, tool: &str) -> bool {
    const HEAD: usize = MAX_TOOL_NAME - 9;
    name.starts_with("mcp__")
        && name.len() > MAX_TOOL_NAME
        && tool.len() == MAX_TOOL_NAME
        && name.get(..HEAD) == tool.get(..HEAD)
        && tool.get(HEAD..HEAD + 1) == Some("_")
        && tool
            .get(HEAD + 1..)
            .is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Whole-text match of a pattern where `*` matches any run of characters.
pub fn wildcard_match(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let Some(first) = parts.next() else {
        return text.is_empty();
    };
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        // No `*` at all: exact.
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// A compiled gitignore-style path pattern, anchored to an absolute directory.
#[derive(Debug, Clone)]
pub struct PathPattern {
    matcher: GlobMatcher,
    /// The directory everything matched lies in: the anchor and the pattern's literal head.
    base: PathBuf,
}

impl PathPattern {
    /// Compile `spec` with the origin's anchors.
    pub fn new(spec: &str, origin: &RuleOrigin) -> Result<Self, String> {
        let spec = spec.trim();
        let (root, pattern, anchored): (PathBuf, &str, bool) =
            if let Some(rest) = spec.strip_prefix("//") {
                (PathBuf::from("/"), rest, true)
            } else if spec == "~" || spec.starts_with("~/") {
                let Some(home) = &origin.home else {
                    return Err(format!(
                        "the path rule {spec:?} needs a home directory (HOME is not set)"
                    ));
                };
                (home.clone(), spec[1..].trim_start_matches('/'), true)
            } else if let Some(rest) = spec.strip_prefix('/') {
                (origin.root.clone(), rest, true)
            } else if let Some(rest) = spec.strip_prefix("./") {
                (origin.cwd.clone(), rest, true)
            } else {
                // gitignore: a pattern with a slash before its end is relative to the anchor;
                // one without matches at any depth below it.
                let anchored = spec.trim_end_matches('/').contains('/');
                (origin.cwd.clone(), spec, anchored)
            };
        let pattern = pattern.trim_start_matches("./").trim_end_matches('/');
        let mut glob = globset::escape(&root.to_string_lossy());
        if !glob.ends_with('/') {
            glob.push('/');
        }
        if !anchored && !pattern.starts_with("**") {
            glob.push_str("**/");
        }
        glob.push_str(if pattern.is_empty() { "**" } else { pattern });
        let mut base = root;
        if anchored {
            let mut words: Vec<&str> = pattern.split('/').collect();
            words.pop(); // the last word may name a file
            for word in words {
                if word.is_empty() || word.contains(['*', '?', '[', '{', '\\']) {
                    break;
                }
                base.push(word);
            }
        }
        let matcher = GlobBuilder::new(&glob)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| format!("the path rule {spec:?} is not a valid pattern: {e}"))?
            .compile_matcher();
        Ok(Self { matcher, base })
    }

    /// Whether the path, or a directory it is in, matches.
    pub fn matches(&self, path: &Path) -> bool {
        path.ancestors()
            .take_while(|p| p.parent().is_some())
            .any(|p| self.matcher.is_match(p))
    }
}

/// The host of a URL as WebFetch's URL parser (WHATWG's rules, the `url` crate) reads it, so a
/// rule is matched against the host that is really fetched (`https://a.com\@b.com/` fetches
/// a.com, `http://2130706433/` is 127.0.0.1): lowercase, without a trailing dot or IPv6
/// brackets; `None` for text that is not an absolute URL with a host.
pub fn host_of(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url.trim()).ok()?;
    let host = match parsed.host()? {
        url::Host::Domain(d) => d.to_owned(),
        url::Host::Ipv4(a) => a.to_string(),
        url::Host::Ipv6(a) => a.to_string(),
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    (!host.is_empty()).then_some(host)
}

fn domain_matches(pattern: &str, host: &str) -> bool {
    if pattern == "*" {
        return true;
    }
    match pattern.strip_prefix("*.") {
        Some(base) => host.ends_with(&format!(".{base}")),
        None => host == pattern,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn origin() -> RuleOrigin {
        RuleOrigin {
            root: PathBuf::from("/proj"),
            cwd: PathBuf::from("/proj/sub"),
            home: Some(PathBuf::from("/home/u")),
        }
    }

    fn rule(text: &str) -> Rule {
        Rule::parse(text, &origin()).unwrap()
    }

    #[test]
    fn deny_rules_without_a_specifier_remove_tools_by_name_server_or_glob() {
        assert!(rule("mcp__demo").removes("mcp__demo__add"));
        assert!(rule("mcp__demo__*").removes("mcp__demo__add"));
        assert!(!rule("mcp__demo").removes("mcp__demos__add"));
        assert!(rule("mcp__demo__add").removes("mcp__demo__add"));
        assert!(!rule("mcp__demo__add").removes("mcp__demo__sub"));
        assert!(rule("Bash").removes("Bash"));
        assert!(!rule("Bash(rm:*)").removes("Bash"));
    }

    /// An MCP tool whose full name is longer than the API allows is offered cut
    /// (`skiff_mcp::tool_name`); a deny or ask rule with the full name still covers it.
    #[test]
    fn rules_with_a_long_mcp_name_cover_its_cut_form() {
        let full = "mcp__srv__delete_everything_in_the_production_database_right_now_please";
        let cut = "mcp__srv__delete_everything_in_the_production_database__4bd23d76";
        assert_eq!(cut.len(), MAX_TOOL_NAME);
        assert!(rule(full).removes(cut));
        assert!(rule(full).names_tool(cut, RuleKind::Ask));
        assert!(!rule(full).names_tool(cut, RuleKind::Allow));
        let other = "mcp__srv__delete_everything_in_the_production_databasX__4bd23d76";
        assert!(!rule(full).removes(other));
        assert!(
            !rule(full).removes("mcp__srv__delete_everything_in_the_production_database__4bd23d7g")
        );
        assert!(!rule("mcp__srv__short").removes("mcp__srv__shor"));
    }

    #[test]
    fn bash_patterns() {
        let cases = [
            ("Bash(npm run test:*)", "npm run test", true),
            ("Bash(npm run test:*)", "npm run test --watch", true),
            ("Bash(npm run test:*)", "npm run testx", false),
            ("Bash(ls *)", "ls", true),
            ("Bash(ls *)", "ls -la", true),
            ("Bash(ls *)", "lsof", false),
            ("Bash(ls*)", "lsof", true),
            ("Bash(git * main)", "git push origin main", true),
            ("Bash(git * main)", "git push origin dev", false),
            ("Bash(* --version)", "node --version", true),
            ("Bash(npm test)", "npm test", true),
            ("Bash(npm test)", "npm test x", false),
            ("Bash(rm:*)", "rm -rf /", true),
            ("Bash(rm:*)", "rmdir x", false),
            ("Bash", "anything at all", true),
            ("Bash(*)", "anything", true),
        ];
        for (r, cmd, expected) in cases {
            assert_eq!(rule(r).matches_command(cmd), expected, "{r} vs {cmd}");
        }
    }

    #[test]
    fn rules_that_could_match_a_computed_command() {
        let cases = [
            ("Bash(rm:*)", "", true),
            ("Bash(rm:*)", "r", true),
            ("Bash(rm:*)", "rm", true),
            ("Bash(rm:*)", "rm -f ", true),
            ("Bash(rm:*)", "ls ", false),
            ("Bash(rm:*)", "rmdir ", false),
            ("Bash(git push *)", "git ", true),
            ("Bash(git push *)", "git status ", false),
            ("Bash(npm test)", "npm t", true),
            ("Bash(npm test)", "npm test x", false),
            ("Bash(* --version)", "anything ", true),
            ("Bash", "x", true),
        ];
        for (r, prefix, expected) in cases {
            assert_eq!(
                rule(r).could_match_command(prefix),
                expected,
                "{r} vs {prefix:?}"
            );
        }
    }

    #[test]
    fn param_rules_and_legacy_prefix_are_told_apart() {
        let r = rule("Bash(run_in_background:true)");
        assert!(r.is_param_rule());
        assert!(r.matches_input("Bash", &json!({"command":"x","run_in_background":true})));
        assert!(!r.matches_input("Bash", &json!({"command":"x"})));
        assert!(!rule("Bash(git:*)").is_param_rule());
        let w = rule("WebFetch(url:*internal*)");
        assert!(w.matches_input("WebFetch", &json!({"url":"http://internal.x"})));
    }

    #[test]
    fn path_anchors() {
        let cases = [
            ("Read(./.env)", "/proj/sub/.env", true),
            ("Read(./.env)", "/proj/sub/a/.env", false),
            ("Read(.env)", "/proj/sub/a/.env", true),
            ("Read(.env)", "/proj/.env", false),
            ("Read(/.env)", "/proj/.env", true),
            ("Read(//etc/passwd)", "/etc/passwd", true),
            ("Read(~/.ssh/**)", "/home/u/.ssh/id_rsa", true),
            ("Read(~/.ssh)", "/home/u/.ssh/id_rsa", true),
            ("Read(./secrets/**)", "/proj/sub/secrets/a/b.pem", true),
            ("Read(./secrets/*)", "/proj/sub/secrets/a/b.pem", true),
            ("Read(./secrets/*.pem)", "/proj/sub/secrets/a/b.pem", false),
            ("Read(*.pem)", "/proj/sub/x/y/z.pem", true),
            ("Edit(src/**/*.rs)", "/proj/sub/src/a/b.rs", true),
            ("Edit(src/**/*.rs)", "/proj/sub/lib/src/b.rs", false),
            ("Read(./**)", "/proj/sub/anything", true),
            ("Read(./**)", "/proj/other", false),
        ];
        for (r, path, expected) in cases {
            assert_eq!(
                rule(r).matches_path(Path::new(path)),
                expected,
                "{r} vs {path}"
            );
        }
    }

    #[test]
    fn tool_families() {
        assert!(rule("Read(./x)").names_tool("Grep", RuleKind::Deny));
        assert!(rule("Read(./x)").names_tool("Write", RuleKind::Deny));
        assert!(!rule("Read(./x)").names_tool("Write", RuleKind::Allow));
        assert!(rule("Edit(./x)").names_tool("Write", RuleKind::Allow));
        assert!(rule("Edit(./x)").names_tool("NotebookEdit", RuleKind::Allow));
        assert!(!rule("Edit(./x)").names_tool("Read", RuleKind::Deny));
        assert!(rule("mcp__fs").names_tool("mcp__fs__read", RuleKind::Allow));
        assert!(rule("mcp__fs__*").names_tool("mcp__fs__read", RuleKind::Allow));
        assert!(!rule("mcp__fs").names_tool("mcp__fsx__read", RuleKind::Allow));
        assert!(rule("mcp__fs__read").names_tool("mcp__fs__read", RuleKind::Allow));
        assert!(!rule("mcp__fs__read").names_tool("mcp__fs__write", RuleKind::Allow));
        assert!(rule("mcp__*").names_tool("mcp__a__b", RuleKind::Deny));
        assert!(!rule("mcp__*").allowable());
        assert!(rule("mcp__a__*").allowable());
    }

    #[test]
    fn web_fetch_domains() {
        let input = |u: &str| json!({"url": u, "prompt": "x"});
        assert!(
            rule("WebFetch(domain:Example.com)")
                .matches_input("WebFetch", &input("https://example.COM/a"))
        );
        assert!(
            !rule("WebFetch(domain:example.com)")
                .matches_input("WebFetch", &input("https://example.com.evil.io/"))
        );
        assert!(
            rule("WebFetch(domain:*.example.com)")
                .matches_input("WebFetch", &input("https://docs.example.com/"))
        );
        assert!(
            !rule("WebFetch(domain:example.com)")
                .matches_input("WebFetch", &input("https://user@evil.io/?example.com"))
        );
        assert!(rule("WebFetch(domain:*)").matches_input("WebFetch", &input("http://x")));
    }

    #[test]
    fn web_fetch_domains_see_the_host_that_is_fetched() {
        let input = |u: &str| json!({"url": u, "prompt": "x"});
        let example = rule("WebFetch(domain:example.com)");
        let cases = [
            // Userinfo and backslash tricks: the real host is the one after `@`, or before `\`.
            ("https://example.com@evil.io/", false),
            ("https://example.com:443@evil.io/", false),
            ("https://evil.io\\@example.com/", false),
            ("https://evil.io#@example.com/", false),
            ("https://evil.io?@example.com/", false),
            // Case, a trailing dot, a port and percent-encoding do not change the host.
            ("https://EXAMPLE.com./docs", true),
            ("https://example.com:8443/", true),
            ("https://ex%61mple.com/", true),
            // Subdomains need `*.`.
            ("https://sub.example.com/", false),
            ("https://notexample.com/", false),
            ("example.com/no-scheme", false),
        ];
        for (url, expected) in cases {
            assert_eq!(
                example.matches_input("WebFetch", &input(url)),
                expected,
                "{url}"
            );
        }
        let subs = rule("WebFetch(domain:*.example.com)");
        assert!(subs.matches_input("WebFetch", &input("https://a.b.EXAMPLE.com/")));
        assert!(!subs.matches_input("WebFetch", &input("https://example.com/")));
        assert!(!subs.matches_input("WebFetch", &input("https://evilexample.com/")));
        // IP literals in any spelling, IPv6 with or without brackets in the rule.
        let lo = rule("WebFetch(domain:127.0.0.1)");
        assert!(lo.matches_input("WebFetch", &input("http://2130706433:8080/")));
        assert!(lo.matches_input("WebFetch", &input("http://0x7f.0.0.1/")));
        for r in ["WebFetch(domain:[::1])", "WebFetch(domain:::1)"] {
            assert!(
                rule(r).matches_input("WebFetch", &input("http://[::1]:3000/")),
                "{r}"
            );
        }
        assert_eq!(
            rule("WebFetch(domain:Docs.RS.)").web_fetch_domain(),
            Some("docs.rs")
        );
        assert_eq!(rule("WebFetch").web_fetch_domain(), None);
        assert_eq!(rule("Read(./x)").web_fetch_domain(), None);
    }

    #[test]
    fn bad_rules_are_errors() {
        for bad in ["", "Bash(ls", "(x)", "Bad Name"] {
            assert!(Rule::parse(bad, &origin()).is_err(), "{bad}");
        }
    }

    #[test]
    fn agent_rules() {
        let r = rule("Task(Explore)");
        assert!(r.names_tool("Agent", RuleKind::Deny));
        assert!(r.matches_input("Task", &json!({"subagent_type":"Explore"})));
        assert!(!r.matches_input("Task", &json!({"subagent_type":"Plan"})));
    }
}
