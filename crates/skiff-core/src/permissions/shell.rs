//! What a shell command line would run, for permission checks: every simple command of it —
//! through lists (`;`, `&&`, `||`, newlines, `&`), pipelines, subshells, groups, `if`/`while`/
//! `for`/`case` bodies, and command and process substitutions — parsed with a real bash parser
//! (`rable`), never by splitting strings. A command line that does not parse, or that defines
//! functions, is [`Shell::Opaque`]: it can never be allowed without asking.

use rable::{Node, NodeKind};

/// One simple command of a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// `VAR=value` assignments before the command (quotes removed).
    pub assignments: Vec<String>,
    /// The words, quotes removed (`echo "a b"` → `["echo", "a b"]`).
    pub words: Vec<String>,
    /// Some word is computed when the command runs (`$VAR`, `$(…)`, backticks, `${…}`, `$((…))`):
    /// what runs cannot be known from the text.
    pub dynamic: bool,
    /// Files written by redirections (`> f`, `>> f`, `&> f`, `>| f`).
    pub writes: Vec<String>,
    /// Other redirections that are not plain reads or descriptor copies (here-documents
    /// feeding a program, `<>`).
    pub odd_redirects: bool,
}

impl SimpleCommand {
    /// The words joined by single spaces (what permission rules are matched against).
    pub fn text(&self) -> String {
        self.words.join(" ")
    }

    /// The words quoted so that a shell reads them back as they are.
    pub fn quoted(&self) -> String {
        self.words
            .iter()
            .map(|w| quote(w))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A command line, analysed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shell {
    /// Every simple command it runs (substitutions included), in order.
    Commands(Vec<SimpleCommand>),
    /// It could not be analysed (a syntax error, a function definition, a construct the
    /// analysis does not know): whatever it runs is unknown.
    Opaque(String),
}

/// Analyse a command line.
pub fn analyze(command: &str) -> Shell {
    let nodes = match rable::parse(command, false) {
        Ok(n) => n,
        Err(e) => return Shell::Opaque(format!("the command does not parse: {e}")),
    };
    let mut out = Vec::new();
    for node in &nodes {
        if let Err(why) = walk(node, &mut out, 0) {
            return Shell::Opaque(why);
        }
    }
    Shell::Commands(out)
}

/// Deepest nesting analysed (substitutions within substitutions...).
const MAX_DEPTH: usize = 64;

fn walk(node: &Node, out: &mut Vec<SimpleCommand>, depth: usize) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err("the command nests too deeply".into());
    }
    let d = depth + 1;
    match &node.kind {
        NodeKind::Command {
            assignments,
            words,
            redirects,
        } => simple(assignments, words, redirects, out, d),
        NodeKind::Pipeline { commands, .. } => commands.iter().try_for_each(|c| walk(c, out, d)),
        NodeKind::List { items } => items.iter().try_for_each(|i| walk(&i.command, out, d)),
        NodeKind::If {
            condition,
            then_body,
            else_body,
            redirects,
        } => {
            walk(condition, out, d)?;
            walk(then_body, out, d)?;
            if let Some(e) = else_body {
                walk(e, out, d)?;
            }
            compound_redirects(redirects, out, d)
        }
        NodeKind::While {
            condition,
            body,
            redirects,
        }
        | NodeKind::Until {
            condition,
            body,
            redirects,
        } => {
            walk(condition, out, d)?;
            walk(body, out, d)?;
            compound_redirects(redirects, out, d)
        }
        NodeKind::For {
            words,
            body,
            redirects,
            ..
        }
        | NodeKind::Select {
            words,
            body,
            redirects,
            ..
        } => {
            // The loop words can hold substitutions: analyse them as a pseudo-command.
            if let Some(words) = words {
                let mut pseudo = SimpleCommand::default_named("for");
                for w in words {
                    word(w, &mut pseudo, out, d)?;
                }
                // The loop variable makes the body's words dynamic in general.
                out.extend(substitutions_only(pseudo));
            }
            walk(body, out, d)?;
            compound_redirects(redirects, out, d)
        }
        NodeKind::ForArith {
            body, redirects, ..
        } => {
            walk(body, out, d)?;
            compound_redirects(redirects, out, d)
        }
        NodeKind::Case {
            word: subject,
            patterns,
            redirects,
        } => {
            let mut pseudo = SimpleCommand::default_named("case");
            word(subject, &mut pseudo, out, d)?;
            out.extend(substitutions_only(pseudo));
            for p in patterns {
                if let Some(body) = &p.body {
                    walk(body, out, d)?;
                }
            }
            compound_redirects(redirects, out, d)
        }
        NodeKind::Subshell { body, redirects } | NodeKind::BraceGroup { body, redirects } => {
            walk(body, out, d)?;
            compound_redirects(redirects, out, d)
        }
        NodeKind::Coproc { command, .. } => walk(command, out, d),
        NodeKind::Negation { pipeline } | NodeKind::Time { pipeline, .. } => walk(pipeline, out, d),
        NodeKind::Function { .. } => {
            Err("the command defines a shell function, whose body runs later".into())
        }
        NodeKind::Empty | NodeKind::Comment { .. } => Ok(()),
        // `[[ … ]]` only tests, unless something in it substitutes. (`(( … ))` stays opaque:
        // bash reads some of them as nested subshells.)
        NodeKind::ConditionalExpr { .. } => {
            let text = format!("{:?}", node.kind);
            if runs_something(&text) {
                Err("the command has a substitution inside [[ ]]".into())
            } else {
                Ok(())
            }
        }
        other => Err(format!(
            "the command uses a construct the permission check does not analyse ({})",
            kind_name(other)
        )),
    }
}

impl SimpleCommand {
    fn default_named(name: &str) -> Self {
        Self {
            assignments: Vec::new(),
            words: vec![name.to_owned()],
            dynamic: false,
            writes: Vec::new(),
            odd_redirects: false,
        }
    }
}

/// A pseudo-command only matters for what its words run: nothing of its own.
fn substitutions_only(_pseudo: SimpleCommand) -> Option<SimpleCommand> {
    None
}

fn simple(
    assignments: &[Node],
    words: &[Node],
    redirects: &[Node],
    out: &mut Vec<SimpleCommand>,
    depth: usize,
) -> Result<(), String> {
    let mut cmd = SimpleCommand {
        assignments: Vec::new(),
        words: Vec::new(),
        dynamic: false,
        writes: Vec::new(),
        odd_redirects: false,
    };
    // Substitutions run before the command: collect them first, the command after.
    let mut inner = Vec::new();
    for a in assignments {
        let (text, dynamic) = word_value(a, &mut inner, depth)?;
        cmd.dynamic |= dynamic;
        cmd.assignments.push(text);
    }
    let mut leading = true;
    for w in words {
        let (text, dynamic) = word_value(w, &mut inner, depth)?;
        cmd.dynamic |= dynamic;
        // rable leaves `VAR=value` before the name among the words.
        if leading && is_assignment(&text) {
            cmd.assignments.push(text);
            continue;
        }
        leading = false;
        cmd.words.push(text);
    }
    for r in redirects {
        redirect(r, &mut cmd, &mut inner, depth)?;
    }
    out.extend(inner);
    out.push(cmd);
    Ok(())
}

/// Redirections on a compound command (`( … ) > f`): recorded on a pseudo-command that writes.
fn compound_redirects(
    redirects: &[Node],
    out: &mut Vec<SimpleCommand>,
    depth: usize,
) -> Result<(), String> {
    if redirects.is_empty() {
        return Ok(());
    }
    let mut pseudo = SimpleCommand::default_named(":");
    let mut inner = Vec::new();
    for r in redirects {
        redirect(r, &mut pseudo, &mut inner, depth)?;
    }
    out.extend(inner);
    if !pseudo.writes.is_empty() || pseudo.odd_redirects {
        out.push(pseudo);
    }
    Ok(())
}

fn word(
    node: &Node,
    cmd: &mut SimpleCommand,
    out: &mut Vec<SimpleCommand>,
    depth: usize,
) -> Result<(), String> {
    let (text, dynamic) = word_value(node, out, depth)?;
    cmd.dynamic |= dynamic;
    cmd.words.push(text);
    Ok(())
}

fn redirect(
    node: &Node,
    cmd: &mut SimpleCommand,
    out: &mut Vec<SimpleCommand>,
    depth: usize,
) -> Result<(), String> {
    match &node.kind {
        NodeKind::Redirect { op, target, .. } => {
            let (target_text, dynamic) = word_value(target, out, depth)?;
            match op.as_str() {
                ">" | ">>" | ">|" | "&>" | "&>>" => {
                    cmd.dynamic |= dynamic;
                    cmd.writes.push(target_text);
                }
                "<" => cmd.dynamic |= dynamic,
                // Descriptor copies and closes: `2>&1`, `>&2`, `<&0`, `>&-`.
                ">&" | "<&" if is_descriptor(&target_text) => {}
                // `>& file` writes both streams to a file.
                ">&" => {
                    cmd.dynamic |= dynamic;
                    cmd.writes.push(target_text);
                }
                _ => cmd.odd_redirects = true,
            }
            Ok(())
        }
        NodeKind::HereDoc { .. } => {
            // The document is data for the command's stdin; the command decides what it means.
            cmd.odd_redirects = true;
            Ok(())
        }
        other => Err(format!(
            "the command uses a redirection the permission check does not analyse ({})",
            kind_name(other)
        )),
    }
}

fn is_descriptor(target: &str) -> bool {
    target == "-" || (!target.is_empty() && target.chars().all(|c| c.is_ascii_digit()))
}

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((var, _)) => {
            !var.is_empty()
                && !var.starts_with(|c: char| c.is_ascii_digit())
                && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

/// A word's value with quotes removed, and whether any of it is computed at run time. The
/// commands of substitutions in it are appended to `out`.
fn word_value(
    node: &Node,
    out: &mut Vec<SimpleCommand>,
    depth: usize,
) -> Result<(String, bool), String> {
    let NodeKind::Word { value, parts, .. } = &node.kind else {
        return Err(format!(
            "the command has a word the permission check does not analyse ({})",
            kind_name(&node.kind)
        ));
    };
    let mut dynamic = false;
    let mut found_substitution = false;
    for part in parts {
        match &part.kind {
            NodeKind::WordLiteral { .. } => {}
            NodeKind::CommandSubstitution { command, .. }
            | NodeKind::ProcessSubstitution { command, .. } => {
                dynamic = true;
                found_substitution = true;
                walk(command, out, depth + 1)?;
            }
            NodeKind::ParamExpansion { arg, .. } => {
                dynamic = true;
                // `${X:-$(cmd)}`: the argument can run commands too.
                if let Some(arg) = arg {
                    found_substitution |= runs_something(arg);
                    nested(arg, out, depth)?;
                }
            }
            _ => dynamic = true,
        }
    }
    // Deep inside substitutions the parser leaves some words unexpanded (their parts are one
    // literal): parse such a word again on its own, so nothing it runs is missed.
    if !found_substitution && runs_something(value) {
        nested(value, out, depth + 1)?;
    }
    // `$(( … ))` that is not plain arithmetic is a command substitution of a subshell to bash.
    if let Some(pos) = value.find("$((") {
        let rest = &value[pos + 3..];
        if !plain_arithmetic(rest) {
            return Err("the command has an arithmetic expansion that may run commands".into());
        }
    }
    let (text, unquoted_dynamic) = unquote(value);
    Ok((text, dynamic || unquoted_dynamic))
}

/// Text after `$((` that can only be arithmetic: operands (names, numbers, `$name`) always
/// separated by operators, no quotes or substitutions. Anything else could be read by bash as a
/// command substitution of a subshell.
fn plain_arithmetic(text: &str) -> bool {
    if runs_something(text) {
        return false;
    }
    let mut last_operand = false;
    let mut in_operand = false;
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '#') {
            if !in_operand && last_operand {
                return false;
            }
            in_operand = true;
        } else if c.is_ascii_whitespace() {
            if in_operand {
                last_operand = true;
                in_operand = false;
            }
        } else if "+-*/%()<>=!&|^~?:,[]".contains(c) {
            in_operand = false;
            last_operand = false;
        } else {
            return false;
        }
    }
    true
}

/// Whether text may hold a command or process substitution.
fn runs_something(text: &str) -> bool {
    text.contains("$(")
        || text.contains('`')
        || text.contains("<(")
        || text.contains(">(")
        || text.contains("Substitution")
}

/// Analyse text that may run commands (`$(…)` or backticks inside an expansion's argument).
fn nested(text: &str, out: &mut Vec<SimpleCommand>, depth: usize) -> Result<(), String> {
    if !runs_something(text) {
        return Ok(());
    }
    let probe = format!("echo {text}");
    let nodes = rable::parse(&probe, false)
        .map_err(|e| format!("an expansion in the command does not parse: {e}"))?;
    for n in &nodes {
        walk(n, out, depth + 1)?;
    }
    // The `echo` pseudo-command itself runs nothing.
    if let Some(pos) = out
        .iter()
        .rposition(|c| c.words.first().is_some_and(|w| w == "echo"))
    {
        out.remove(pos);
    }
    Ok(())
}

/// Remove quotes and backslashes from a raw word; `true` when some of it is expanded when the
/// command runs (`$…` or backticks outside single quotes).
fn unquote(raw: &str) -> (String, bool) {
    let mut out = String::with_capacity(raw.len());
    // An unquoted leading `~` is the home directory, known only when the command runs.
    let mut dynamic = raw.starts_with('~');
    let mut chars = raw.chars().peekable();
    let mut in_double = false;
    while let Some(c) = chars.next() {
        match c {
            '\'' if !in_double => {
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    out.push(c);
                }
            }
            '"' => in_double = !in_double,
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(n) if in_double && !matches!(n, '$' | '`' | '"' | '\\') => {
                    out.push('\\');
                    out.push(n);
                }
                Some(n) => out.push(n),
                None => out.push('\\'),
            },
            '$' | '`' => {
                dynamic = true;
                out.push(c);
            }
            c => out.push(c),
        }
    }
    (out, dynamic)
}

/// Quote a word for a POSIX shell (single quotes unless it is plain).
pub fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '-' | '_' | '.' | '/' | ':' | '=' | ',' | '+' | '@' | '%')
        });
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

fn kind_name(kind: &NodeKind) -> String {
    let debug = format!("{kind:?}");
    debug
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or("?")
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(cmd: &str) -> Vec<Vec<String>> {
        match analyze(cmd) {
            Shell::Commands(c) => c.into_iter().map(|c| c.words).collect(),
            Shell::Opaque(why) => panic!("{cmd}: opaque: {why}"),
        }
    }

    #[test]
    fn lists_pipelines_subshells_and_substitutions_are_all_found() {
        let cases: &[(&str, &[&[&str]])] = &[
            ("true && rm x", &[&["true"], &["rm", "x"]]),
            ("echo; rm x", &[&["echo"], &["rm", "x"]]),
            ("(rm x)", &[&["rm", "x"]]),
            ("{ rm x; }", &[&["rm", "x"]]),
            ("a | b |& c", &[&["a"], &["b"], &["c"]]),
            ("a || b & c", &[&["a"], &["b"], &["c"]]),
            ("echo ok\nrm x", &[&["echo", "ok"], &["rm", "x"]]),
            (
                "ls $(rm -rf y)",
                &[&["rm", "-rf", "y"], &["ls", "$(rm -rf y)"]],
            ),
            ("echo `rm x`", &[&["rm", "x"], &["echo", "`rm x`"]]),
            ("cat <(rm x)", &[&["rm", "x"], &["cat", "<(rm x)"]]),
            ("if true; then rm x; fi", &[&["true"], &["rm", "x"]]),
            ("for f in $(ls); do rm $f; done", &[&["ls"], &["rm", "$f"]]),
            ("while false; do rm x; done", &[&["false"], &["rm", "x"]]),
            ("case $(id) in a) rm x;; esac", &[&["id"], &["rm", "x"]]),
            ("! rm x", &[&["rm", "x"]]),
            (
                "echo ${X:-$(rm y)}",
                &[&["rm", "y"], &["echo", "${X:-$(rm y)}"]],
            ),
        ];
        for (cmd, expected) in cases {
            let got = words(cmd);
            let expected: Vec<Vec<String>> = expected
                .iter()
                .map(|ws| ws.iter().map(|w| (*w).to_owned()).collect())
                .collect();
            assert_eq!(got, expected, "{cmd}");
        }
    }

    #[test]
    fn quotes_are_removed_and_expansions_are_dynamic() {
        let Shell::Commands(c) = analyze(r#"FOO=1 echo "a b" 'c d' e\ f"#) else {
            panic!()
        };
        assert_eq!(c[0].assignments, ["FOO=1"]);
        assert_eq!(c[0].words, ["echo", "a b", "c d", "e f"]);
        assert!(!c[0].dynamic);
        let Shell::Commands(c) = analyze("echo \"$HOME\" 'x$y'") else {
            panic!()
        };
        assert!(c[0].dynamic);
        let Shell::Commands(c) = analyze("echo 'x$y'") else {
            panic!()
        };
        assert!(!c[0].dynamic);
        assert_eq!(c[0].words, ["echo", "x$y"]);
    }

    #[test]
    fn redirections_that_write_are_recorded() {
        let Shell::Commands(c) = analyze("cmd > out.txt 2>&1 < in.txt") else {
            panic!()
        };
        assert_eq!(c[0].writes, ["out.txt"]);
        let Shell::Commands(c) = analyze("(echo a) >> log") else {
            panic!()
        };
        assert_eq!(c.last().unwrap().writes, ["log"]);
        let Shell::Commands(c) = analyze("cat <<EOF\nhi\nEOF") else {
            panic!()
        };
        assert!(c[0].odd_redirects);
    }

    #[test]
    fn what_cannot_be_analysed_is_opaque() {
        for cmd in [
            "echo 'unterminated",
            "f() { rm x; }; f",
            "echo \"$(",
            "if true; then",
        ] {
            assert!(matches!(analyze(cmd), Shell::Opaque(_)), "{cmd}");
        }
    }

    #[test]
    fn quoting_round_trips() {
        for w in ["plain", "a b", "it's", "", "$HOME", "x*y"] {
            let Shell::Commands(c) = analyze(&format!("echo {}", quote(w))) else {
                panic!()
            };
            assert_eq!(c[0].words[1], w);
        }
    }
}
