//! The walk over rable's syntax tree that collects the simple commands of a command line.

use rable::{Node, NodeKind};

use super::word::{self, Position, Word};
use super::{Assignment, Redirect, RedirectOp, SimpleCommand};

/// Deepest nesting analysed (substitutions within substitutions...).
const MAX_DEPTH: usize = 64;

/// Where the walk is.
#[derive(Debug, Clone, Copy, Default)]
struct Ctx {
    depth: usize,
    in_loop: bool,
    background: bool,
    subshell: bool,
}

impl Ctx {
    fn deeper(self) -> Result<Self, String> {
        if self.depth >= MAX_DEPTH {
            return Err("the command nests too deeply".into());
        }
        Ok(Self {
            depth: self.depth + 1,
            ..self
        })
    }

    fn looping(self) -> Self {
        Self {
            in_loop: true,
            ..self
        }
    }

    fn sub(self) -> Self {
        Self {
            subshell: true,
            ..self
        }
    }
}

pub(super) fn commands(command: &str) -> Result<Vec<SimpleCommand>, String> {
    let nodes =
        rable::parse(command, false).map_err(|e| format!("the command does not parse: {e}"))?;
    let mut out = Vec::new();
    for node in &nodes {
        walk(node, &mut out, Ctx::default())?;
    }
    Ok(out)
}

fn walk(node: &Node, out: &mut Vec<SimpleCommand>, ctx: Ctx) -> Result<(), String> {
    let ctx = ctx.deeper()?;
    match &node.kind {
        NodeKind::Command {
            assignments,
            words,
            redirects,
        } => simple(assignments, words, redirects, out, ctx),
        // Every command of a pipeline runs in a subshell of its own.
        NodeKind::Pipeline { commands, .. } => {
            let ctx = if commands.len() > 1 { ctx.sub() } else { ctx };
            commands.iter().try_for_each(|c| walk(c, out, ctx))
        }
        NodeKind::List { items } => items.iter().try_for_each(|i| {
            let background = i.operator == Some(rable::ListOperator::Background);
            walk(
                &i.command,
                out,
                Ctx {
                    background: ctx.background || background,
                    subshell: ctx.subshell || background,
                    ..ctx
                },
            )
        }),
        NodeKind::If {
            condition,
            then_body,
            else_body,
            redirects,
        } => {
            walk(condition, out, ctx)?;
            walk(then_body, out, ctx)?;
            if let Some(e) = else_body {
                walk(e, out, ctx)?;
            }
            compound_redirects(redirects, out, ctx)
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
            walk(condition, out, ctx.looping())?;
            walk(body, out, ctx.looping())?;
            compound_redirects(redirects, out, ctx)
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
            // The loop words can hold substitutions: what they run runs once, before the loop.
            for w in words.iter().flatten() {
                word_value(w, Position::Argument, out, ctx)?;
            }
            walk(body, out, ctx.looping())?;
            compound_redirects(redirects, out, ctx)
        }
        NodeKind::ForArith {
            init,
            cond,
            incr,
            body,
            redirects,
        } => {
            for expr in [init, cond, incr] {
                arithmetic(expr, out, ctx)?;
            }
            walk(body, out, ctx.looping())?;
            compound_redirects(redirects, out, ctx)
        }
        NodeKind::ArithmeticCommand {
            raw_content,
            redirects,
            ..
        } => {
            arithmetic(raw_content, out, ctx)?;
            compound_redirects(redirects, out, ctx)
        }
        NodeKind::Case {
            word: subject,
            patterns,
            redirects,
        } => {
            word_value(subject, Position::Argument, out, ctx)?;
            for p in patterns {
                for pattern in &p.patterns {
                    word_value(pattern, Position::Argument, out, ctx)?;
                }
                if let Some(body) = &p.body {
                    walk(body, out, ctx)?;
                }
            }
            compound_redirects(redirects, out, ctx)
        }
        NodeKind::Subshell { body, redirects } => {
            walk(body, out, ctx.sub())?;
            compound_redirects(redirects, out, ctx)
        }
        NodeKind::BraceGroup { body, redirects } => {
            walk(body, out, ctx)?;
            compound_redirects(redirects, out, ctx)
        }
        NodeKind::Coproc { command, .. } => walk(command, out, ctx.sub()),
        NodeKind::Negation { pipeline } | NodeKind::Time { pipeline, .. } => {
            walk(pipeline, out, ctx)
        }
        NodeKind::Function { .. } => {
            Err("the command defines a shell function, whose body runs later".into())
        }
        NodeKind::Empty | NodeKind::Comment { .. } => Ok(()),
        NodeKind::ConditionalExpr { body, redirects } => {
            conditional(body, out, ctx)?;
            compound_redirects(redirects, out, ctx)
        }
        other => Err(format!(
            "the command uses a construct the permission check does not analyse ({})",
            kind_name(other)
        )),
    }
}

/// `[[ … ]]`: only tests, but its words can substitute, its arithmetic operators evaluate
/// variables as expressions and `-v` evaluates array subscripts.
fn conditional(node: &Node, out: &mut Vec<SimpleCommand>, ctx: Ctx) -> Result<(), String> {
    let ctx = ctx.deeper()?;
    match &node.kind {
        NodeKind::UnaryTest { op, operand } => {
            if matches!(op.as_str(), "-v" | "-R") {
                out.push(pseudo("[[", Some("`[[ -v` evaluates an array subscript")));
            }
            conditional(operand, out, ctx)
        }
        NodeKind::BinaryTest { op, left, right } => {
            if matches!(op.as_str(), "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge") {
                let numeric = |n: &Node| match &n.kind {
                    NodeKind::CondTerm { value, .. } => {
                        !value.is_empty()
                            && value
                                .trim_start_matches(['-', '+'])
                                .chars()
                                .all(|c| c.is_ascii_digit())
                    }
                    _ => false,
                };
                if !(numeric(left) && numeric(right)) {
                    out.push(pseudo(
                        "[[",
                        Some("`[[` arithmetic evaluates variables as expressions"),
                    ));
                }
            }
            conditional(left, out, ctx)?;
            conditional(right, out, ctx)
        }
        NodeKind::CondAnd { left, right } | NodeKind::CondOr { left, right } => {
            conditional(left, out, ctx)?;
            conditional(right, out, ctx)
        }
        NodeKind::CondNot { operand } => conditional(operand, out, ctx),
        NodeKind::CondParen { inner } => conditional(inner, out, ctx),
        NodeKind::CondTerm { value, .. } => {
            let scanned = word::scan(value, Position::Argument);
            if let Some(why) = scanned.runs_code {
                out.push(pseudo("[[", Some(why)));
            }
            nested(value, out, ctx)
        }
        NodeKind::Word { .. } => word_value(node, Position::Argument, out, ctx).map(|_| ()),
        _ => {
            let text = format!("{:?}", node.kind);
            if runs_something(&text) {
                Err("the command has a substitution inside [[ ]]".into())
            } else {
                Ok(())
            }
        }
    }
}

/// Arithmetic text (`(( … ))`, `for (( … ))`): variables in it are evaluated as expressions,
/// and substitutions in it run.
fn arithmetic(text: &str, out: &mut Vec<SimpleCommand>, ctx: Ctx) -> Result<(), String> {
    let scanned = word::scan(&format!("$(({text}))"), Position::Argument);
    if let Some(why) = scanned.runs_code {
        out.push(pseudo("((", Some(why)));
    }
    nested(text, out, ctx)
}

fn pseudo(name: &str, runs_code: Option<&str>) -> SimpleCommand {
    SimpleCommand {
        assignments: Vec::new(),
        words: vec![Word::literal(name)],
        redirects: Vec::new(),
        runs_code: runs_code.map(str::to_owned),
        in_loop: false,
        background: false,
        subshell: false,
    }
}

fn simple(
    assignments: &[Node],
    words: &[Node],
    redirects: &[Node],
    out: &mut Vec<SimpleCommand>,
    ctx: Ctx,
) -> Result<(), String> {
    let mut cmd = SimpleCommand {
        assignments: Vec::new(),
        words: Vec::new(),
        redirects: Vec::new(),
        runs_code: None,
        in_loop: ctx.in_loop,
        background: ctx.background,
        subshell: ctx.subshell,
    };
    // Substitutions run before the command: collect them first, the command after.
    let mut inner = Vec::new();
    let mut leading = true;
    for node in assignments.iter().chain(words) {
        let raw = raw_value(node)?;
        // rable leaves `VAR=value` before the name among the words too.
        if leading && let Some((name, value)) = split_assignment(raw) {
            let value_word = word_value_of(node, value, Position::Assignment, &mut inner, ctx)?;
            if let Some(sub) = name.split_once('[').map(|(_, s)| s.trim_end_matches(']'))
                && !sub.chars().all(|c| c.is_ascii_digit())
            {
                cmd.runs_code
                    .get_or_insert_with(|| "an array subscript is arithmetic".into());
            }
            cmd.assignments.push(Assignment {
                name: name.to_owned(),
                value: value_word,
            });
            continue;
        }
        leading = false;
        let w = word_value(node, Position::Argument, &mut inner, ctx)?;
        cmd.words.push(w);
    }
    for r in redirects {
        redirect(r, &mut cmd, &mut inner, ctx)?;
    }
    for w in cmd
        .words
        .iter()
        .chain(cmd.assignments.iter().map(|a| &a.value))
        .chain(cmd.redirects.iter().map(|r| &r.target))
    {
        if let Some(why) = w.runs_code {
            cmd.runs_code.get_or_insert_with(|| why.to_owned());
        }
    }
    out.extend(inner);
    out.push(cmd);
    Ok(())
}

/// `NAME=value`, `NAME+=value`, `a[i]=value`: the name and the raw value.
fn split_assignment(raw: &str) -> Option<(&str, &str)> {
    let eq = raw.find('=')?;
    let name = raw[..eq].strip_suffix('+').unwrap_or(&raw[..eq]);
    let base = name.split('[').next().unwrap_or("");
    let subscript_ok = match name.find('[') {
        Some(open) => name.ends_with(']') && open > 0,
        None => true,
    };
    let ok = !base.is_empty()
        && !base.starts_with(|c: char| c.is_ascii_digit())
        && base.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && subscript_ok;
    ok.then(|| (name, &raw[eq + 1..]))
}

/// Redirections on a compound command (`( … ) > f`): a command without words that carries them.
fn compound_redirects(
    redirects: &[Node],
    out: &mut Vec<SimpleCommand>,
    ctx: Ctx,
) -> Result<(), String> {
    if redirects.is_empty() {
        return Ok(());
    }
    let mut holder = SimpleCommand {
        assignments: Vec::new(),
        words: Vec::new(),
        redirects: Vec::new(),
        runs_code: None,
        in_loop: ctx.in_loop,
        background: ctx.background,
        subshell: ctx.subshell,
    };
    let mut inner = Vec::new();
    for r in redirects {
        redirect(r, &mut holder, &mut inner, ctx)?;
    }
    out.extend(inner);
    out.push(holder);
    Ok(())
}

fn redirect(
    node: &Node,
    cmd: &mut SimpleCommand,
    out: &mut Vec<SimpleCommand>,
    ctx: Ctx,
) -> Result<(), String> {
    match &node.kind {
        NodeKind::Redirect { op, target, .. } => {
            let target = word_value(target, Position::Argument, out, ctx)?;
            let descriptor = target.text == "-"
                || (!target.text.is_empty()
                    && target.is_static()
                    && target.text.chars().all(|c| c.is_ascii_digit()));
            let op = match op.as_str() {
                ">" | ">|" | "&>" => RedirectOp::Write,
                ">>" | "&>>" => RedirectOp::Append,
                "<" => RedirectOp::Read,
                "<>" => RedirectOp::ReadWrite,
                "<<<" => RedirectOp::HereString,
                ">&" | "<&" if descriptor => RedirectOp::Descriptor,
                // `>& file` writes both streams to a file.
                ">&" => RedirectOp::Write,
                // `<& word` with a word that is not a descriptor: bash fails ("ambiguous
                // redirect"); a computed one may still be a descriptor.
                "<&" => RedirectOp::Descriptor,
                other => {
                    return Err(format!(
                        "the command uses a redirection the permission check does not know ({other})"
                    ));
                }
            };
            cmd.redirects.push(Redirect { op, target });
            Ok(())
        }
        NodeKind::HereDoc {
            content, quoted, ..
        } => {
            // An unquoted document is expanded like a double-quoted string: substitutions in
            // it run.
            if !quoted && runs_something(content) {
                let as_string = format!("\"{}\"", content.replace('"', "\\\""));
                nested(&as_string, out, ctx)?;
            }
            let text = if *quoted {
                Word::literal(content)
            } else {
                word::scan(
                    &format!("\"{}\"", content.replace('"', "\\\"")),
                    Position::Argument,
                )
            };
            cmd.redirects.push(Redirect {
                op: RedirectOp::HereDoc,
                target: text,
            });
            Ok(())
        }
        other => Err(format!(
            "the command uses a redirection the permission check does not analyse ({})",
            kind_name(other)
        )),
    }
}

fn raw_value(node: &Node) -> Result<&str, String> {
    match &node.kind {
        NodeKind::Word { value, .. } => Ok(value),
        other => Err(format!(
            "the command has a word the permission check does not analyse ({})",
            kind_name(other)
        )),
    }
}

/// A word node, scanned; the commands of substitutions in it are appended to `out`.
fn word_value(
    node: &Node,
    position: Position,
    out: &mut Vec<SimpleCommand>,
    ctx: Ctx,
) -> Result<Word, String> {
    let raw = raw_value(node)?;
    word_value_of(node, raw, position, out, ctx)
}

/// `text` (all of the word node's raw value, or the value part of an assignment), scanned.
fn word_value_of(
    node: &Node,
    text: &str,
    position: Position,
    out: &mut Vec<SimpleCommand>,
    ctx: Ctx,
) -> Result<Word, String> {
    let NodeKind::Word { value, parts, .. } = &node.kind else {
        return Err("the command has a word the permission check does not analyse".into());
    };
    let mut found_substitution = false;
    for part in parts {
        match &part.kind {
            NodeKind::CommandSubstitution { command, .. }
            | NodeKind::ProcessSubstitution { command, .. } => {
                found_substitution = true;
                walk(command, out, ctx.sub())?;
            }
            NodeKind::ParamExpansion { arg: Some(arg), .. }
            | NodeKind::ParamIndirect { arg: Some(arg), .. } => {
                // `${X:-$(cmd)}`: the argument can run commands too.
                found_substitution |= runs_something(arg);
                nested(arg, out, ctx)?;
            }
            _ => {}
        }
    }
    // Deep inside substitutions the parser leaves some words unexpanded (their parts are one
    // literal): parse such a word again on its own, so nothing it runs is missed.
    if !found_substitution && runs_something(value) {
        nested(value, out, ctx)?;
    }
    // `$(( … ))` that is not plain arithmetic may be a command substitution of a subshell.
    let mut rest = value.as_str();
    while let Some(pos) = rest.find("$((") {
        rest = &rest[pos + 3..];
        if !plain_arithmetic(rest) {
            return Err("the command has an arithmetic expansion that may run commands".into());
        }
    }
    Ok(word::scan(text, position))
}

/// Text after `$((` that can only be arithmetic: operands (names, numbers, `$name`) always
/// separated by operators, no quotes or substitutions.
fn plain_arithmetic(text: &str) -> bool {
    let text = text.split("))").next().unwrap_or(text);
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
    // `$((` is arithmetic (non-plain arithmetic is refused in `word_value_of`).
    text.match_indices("$(")
        .any(|(i, _)| text.as_bytes().get(i + 2) != Some(&b'('))
        || text.contains('`')
        || text.contains("<(")
        || text.contains(">(")
        || text.contains("Substitution")
}

/// Analyse text that may run commands (`$(…)` or backquotes inside an expansion's argument,
/// a here-document, arithmetic).
fn nested(text: &str, out: &mut Vec<SimpleCommand>, ctx: Ctx) -> Result<(), String> {
    if !runs_something(text) {
        return Ok(());
    }
    let probe = format!(": {text}");
    let nodes = rable::parse(&probe, false)
        .map_err(|e| format!("an expansion in the command does not parse: {e}"))?;
    let mut found = Vec::new();
    for n in &nodes {
        walk(n, &mut found, ctx.sub())?;
    }
    // The `:` probe itself runs nothing.
    if let Some(pos) = found
        .iter()
        .rposition(|c| c.words.first().is_some_and(|w| w.text == ":"))
    {
        found.remove(pos);
    }
    out.extend(found);
    Ok(())
}

fn kind_name(kind: &NodeKind) -> String {
    let debug = format!("{kind:?}");
    debug
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or("?")
        .to_owned()
}
