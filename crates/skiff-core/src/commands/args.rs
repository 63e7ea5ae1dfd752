//! Argument substitution in a command or skill body, as Claude Code does it today:
//! `$ARGUMENTS` (everything after the name, as typed), `$ARGUMENTS[N]` and `$N` (0-based,
//! shell-style quoting: `$0` is the first argument), `$name` for names the `arguments`
//! frontmatter declares, `${CLAUDE_SESSION_ID}` and `${CLAUDE_SKILL_DIR}`. One backslash before
//! a placeholder keeps it literal. A body without `$ARGUMENTS` gets `ARGUMENTS: <args>` appended
//! when arguments were given, so the model always sees them.
//!
//! Inside a `` !`command` `` the values are shell-quoted ([`substitute_in_shell`]): what the
//! user typed stays data and never becomes a command of its own.

use std::sync::LazyLock;

use regex::{Captures, Regex};

#[allow(clippy::expect_used)]
static PLACEHOLDER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(\\*)\$(?:\{(CLAUDE_SESSION_ID|CLAUDE_SKILL_DIR)\}|ARGUMENTS\[(\d+)\]|(ARGUMENTS)|(\d+)|([A-Za-z_][A-Za-z0-9_]*))",
    )
    .expect("the placeholder pattern is valid")
});

/// What the placeholders of one invocation stand for.
#[derive(Debug, Clone, Default)]
pub struct Arguments<'a> {
    /// Everything after the command name, as typed (trimmed).
    pub raw: &'a str,
    /// Names of positional arguments (`arguments` frontmatter).
    pub names: &'a [String],
    /// The session id (`${CLAUDE_SESSION_ID}`).
    pub session_id: &'a str,
    /// The skill's directory (`${CLAUDE_SKILL_DIR}`), if any.
    pub skill_dir: Option<&'a str>,
}

/// Split arguments shell-style (`"hello world" second` is two); an unbalanced quote falls back
/// to splitting on whitespace.
pub fn split_args(raw: &str) -> Vec<String> {
    shlex::split(raw).unwrap_or_else(|| raw.split_whitespace().map(str::to_owned).collect())
}

/// Substitute the placeholders of `body`.
pub fn substitute(body: &str, args: &Arguments<'_>) -> String {
    let (out, saw_arguments) = substitute_part(body, args, false);
    append_arguments(out, args, saw_arguments)
}

/// When the body had no `$ARGUMENTS`, the arguments appended as `ARGUMENTS: <args>` (the
/// model always sees them).
pub fn append_arguments(mut out: String, args: &Arguments<'_>, saw_arguments: bool) -> String {
    let raw = args.raw.trim();
    if !saw_arguments && !raw.is_empty() {
        let trimmed = out.trim_end().len();
        out.truncate(trimmed);
        out.push_str("\n\nARGUMENTS: ");
        out.push_str(raw);
    }
    out
}

/// Substitute the placeholders of plain text (nothing appended); whether it used `$ARGUMENTS`.
pub fn substitute_text(text: &str, args: &Arguments<'_>) -> (String, bool) {
    substitute_part(text, args, false)
}

/// Substitute the placeholders of a `` !`command` ``'s command line: each value is quoted for
/// where it stands (bare, in single quotes or in double quotes), and `$ARGUMENTS` bare becomes
/// the arguments as separate words, each quoted. Returns the command line and whether it used
/// `$ARGUMENTS`.
pub fn substitute_in_shell(command: &str, args: &Arguments<'_>) -> (String, bool) {
    substitute_part(command, args, true)
}

/// Substitute the placeholders of `text` (quoted for a shell when `shell`); whether
/// `$ARGUMENTS` was used.
fn substitute_part(text: &str, args: &Arguments<'_>, shell: bool) -> (String, bool) {
    let raw = args.raw.trim();
    let positional = split_args(raw);
    let mut saw_arguments = false;
    let out = PLACEHOLDER.replace_all(text, |c: &Captures<'_>| {
        let whole = c.get(0).map_or("", |m| m.as_str());
        let slashes = c.get(1).map_or("", |m| m.as_str());
        let token = &whole[slashes.len()..];
        let value: Option<String> = if let Some(var) = c.get(2) {
            match var.as_str() {
                "CLAUDE_SESSION_ID" => Some(args.session_id.to_owned()),
                _ => args.skill_dir.map(str::to_owned),
            }
        } else if let Some(i) = c.get(3).or_else(|| c.get(5)) {
            i.as_str()
                .parse::<usize>()
                .ok()
                .and_then(|i| positional.get(i).cloned())
        } else if c.get(4).is_some() {
            Some(raw.to_owned())
        } else if let Some(name) = c.get(6) {
            match args.names.iter().position(|n| n == name.as_str()) {
                Some(i) => Some(positional.get(i).cloned().unwrap_or_default()),
                // Not a declared name: not a placeholder at all.
                None => return whole.to_owned(),
            }
        } else {
            None
        };
        if slashes.len() == 1 {
            // One backslash escapes the placeholder.
            return token.to_owned();
        }
        let all_arguments = c.get(4).is_some();
        if all_arguments {
            saw_arguments = true;
        }
        let Some(value) = value else {
            // An index with no argument stays as written.
            return whole.to_owned();
        };
        if !shell {
            return format!("{slashes}{value}");
        }
        let start = c.get(0).map_or(0, |m| m.start()) + slashes.len();
        let quoted = match shell_context(&text[..start]) {
            ShellContext::Bare if all_arguments => positional
                .iter()
                .map(|w| quote_word(w))
                .collect::<Vec<_>>()
                .join(" "),
            ShellContext::Bare => quote_word(&value),
            ShellContext::Single => value.replace('\'', "'\\''"),
            ShellContext::Double => escape_double(&value),
        };
        format!("{slashes}{quoted}")
    });
    (out.into_owned(), saw_arguments)
}

/// Where a position in a shell command line is: bare, inside '…' or inside "…".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ShellContext {
    Bare,
    Single,
    Double,
}

/// The quoting in force at the end of `before` (a backslash escapes the next character outside
/// single quotes).
fn shell_context(before: &str) -> ShellContext {
    let mut state = ShellContext::Bare;
    let mut chars = before.chars();
    while let Some(ch) = chars.next() {
        state = match (state, ch) {
            (ShellContext::Bare | ShellContext::Double, '\\') => {
                chars.next();
                state
            }
            (ShellContext::Bare, '\'') => ShellContext::Single,
            (ShellContext::Bare, '"') => ShellContext::Double,
            (ShellContext::Single, '\'') | (ShellContext::Double, '"') => ShellContext::Bare,
            (s, _) => s,
        };
    }
    state
}

/// `word` as one shell word: as it is when it holds only characters no shell treats
/// specially, else in single quotes.
pub fn quote_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./=:,+@%^".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// `text` for the inside of double quotes: `\`, `"`, `$` and backquotes escaped.
fn escape_double(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        if matches!(ch, '\\' | '"' | '$' | '`') {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sub(body: &str, raw: &str) -> String {
        substitute(
            body,
            &Arguments {
                raw,
                session_id: "sess-1",
                ..Arguments::default()
            },
        )
    }

    #[test]
    fn arguments_is_the_whole_text() {
        assert_eq!(sub("Fix issue #$ARGUMENTS now", "42"), "Fix issue #42 now");
        assert_eq!(
            sub("Deploy $ARGUMENTS", "  staging --dry-run "),
            "Deploy staging --dry-run"
        );
        assert_eq!(sub("No args: [$ARGUMENTS]", ""), "No args: []");
        // What the user typed is not scanned again.
        assert_eq!(
            sub("Say $ARGUMENTS", "$0 ${CLAUDE_SESSION_ID}"),
            "Say $0 ${CLAUDE_SESSION_ID}"
        );
    }

    #[test]
    fn positional_arguments_are_zero_based_with_shell_quoting() {
        assert_eq!(
            sub(
                "Migrate $0 from $1 to $ARGUMENTS[2].",
                "\"Search Bar\" React Vue"
            ),
            "Migrate Search Bar from React to Vue.\n\nARGUMENTS: \"Search Bar\" React Vue"
        );
        // An index with no argument stays unchanged (so "$5" in prose survives).
        assert_eq!(
            sub("a=$0 b=$1 cost $100", "x"),
            "a=x b=$1 cost $100\n\nARGUMENTS: x"
        );
        // Unbalanced quotes fall back to whitespace splitting.
        assert_eq!(sub("$0|$1 $ARGUMENTS", "it's fine"), "it's|fine it's fine");
    }

    #[test]
    fn without_arguments_placeholder_the_arguments_are_appended() {
        assert_eq!(
            sub("Review the code.\n\n", "src/a.rs"),
            "Review the code.\n\nARGUMENTS: src/a.rs"
        );
        assert_eq!(sub("Review the code.", ""), "Review the code.");
    }

    #[test]
    fn named_arguments_and_session_variables() {
        let names = vec!["issue".to_owned(), "branch".to_owned()];
        let out = substitute(
            "Fix $issue on $branch ($other) in ${CLAUDE_SKILL_DIR} for ${CLAUDE_SESSION_ID}",
            &Arguments {
                raw: "7",
                names: &names,
                session_id: "s-9",
                skill_dir: Some("/skills/fix"),
            },
        );
        assert_eq!(
            out,
            "Fix 7 on  ($other) in /skills/fix for s-9\n\nARGUMENTS: 7"
        );
    }

    #[test]
    fn a_backslash_escapes_a_placeholder() {
        assert_eq!(
            sub(r"Price: \$1.00 and $ARGUMENTS", "x"),
            "Price: $1.00 and x"
        );
        assert_eq!(
            sub(r"Keep \$ARGUMENTS", "x"),
            "Keep $ARGUMENTS\n\nARGUMENTS: x"
        );
        assert_eq!(sub(r"Two \\$0", "x"), "Two \\\\x\n\nARGUMENTS: x");
    }

    fn shell(body: &str, raw: &str) -> String {
        substitute_in_shell(
            body,
            &Arguments {
                raw,
                ..Arguments::default()
            },
        )
        .0
    }

    #[test]
    fn in_a_shell_command_values_are_quoted_for_where_they_stand() {
        let hostile = "a; rm -rf ~ $(id) `id` \"b c\" it\\'s";
        assert_eq!(
            shell("git log $ARGUMENTS", hostile),
            "git log 'a;' rm -rf '~' '$(id)' '`id`' 'b c' 'it'\\''s'"
        );
        assert_eq!(
            shell("echo \"$ARGUMENTS\"", "x $(id) \"q\" \\ `y`"),
            "echo \"x \\$(id) \\\"q\\\" \\\\ \\`y\\`\""
        );
        assert_eq!(shell("echo '$ARGUMENTS'", "it's"), "echo 'it'\\''s'");
        assert_eq!(
            shell("echo $0 $1", "--oneline \"a b\""),
            "echo --oneline 'a b'"
        );
        assert_eq!(shell("echo $ARGUMENTS", ""), "echo ");
        // Escaped quotes do not open a quoted part.
        assert_eq!(shell("echo \\' $0", "$(id)"), "echo \\' '$(id)'");
        assert_eq!(quote_word(""), "''");
    }
}
