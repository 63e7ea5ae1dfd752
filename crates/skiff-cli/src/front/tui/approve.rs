//! The approval menu: what the call would do (a coloured diff with the file's line numbers for
//! edits, the command for Bash), then yes / yes and don't ask again for the rule that will be
//! saved / no, and tell skiff what to do instead. Answerable with the arrows and Enter, the
//! option's number or its letter; Esc says no and stops the turn.
//!
//! "Don't ask again" uses the same seam as the line REPL (`front/repl.rs`, `ask`): the rule
//! `approval::suggested_rule` offers, added to the engine and saved by `approval::persist_*`.

use std::path::Path;
use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui_core::style::{Modifier, Style};
use ratatui_core::text::{Line, Span};
use serde_json::Value;
use skiff_core::permissions::{PermissionEngine, Rule, RuleKind, RuleOrigin};
use skiff_core::{Answer, ApprovalAnswer, ApprovalRequest, PermissionMode, RequestId};

use super::composer::Composer;
use crate::front::approval;
use crate::term::diff;

/// What kind of question it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A tool call.
    Tool,
    /// The model's plan, to leave plan mode.
    Plan,
    /// A sandboxed command's network access.
    Network,
}

/// One choice of the menu.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Choice {
    Yes,
    /// Plan: yes, switching to this mode.
    YesMode(PermissionMode),
    Always,
    No,
}

/// How the user answered.
#[derive(Debug)]
pub struct Decision {
    /// The request answered.
    pub id: RequestId,
    /// The answer for the session.
    pub answer: Answer,
    /// What to tell the user (a rule saved, or not).
    pub notes: Vec<String>,
    /// The permission mode the session switches to (a plan accepted).
    pub mode: Option<PermissionMode>,
    /// One line for the scrollback: the call and what was answered.
    pub record: Line<'static>,
}

/// An approval being asked.
pub struct ApprovalMenu {
    id: RequestId,
    request: ApprovalRequest,
    kind: Kind,
    title: String,
    body: Vec<Line<'static>>,
    /// The rule (or allowed-domains entry) "don't ask again" saves.
    rule: String,
    options: Vec<(Choice, String, char)>,
    selected: usize,
    /// Typing what to do instead (after choosing no).
    feedback: Option<Composer>,
    /// The plan (markdown) of an ExitPlanMode request, rendered to the width it is shown at.
    plan: Option<String>,
}

impl ApprovalMenu {
    /// The menu for a request.
    pub fn new(id: RequestId, request: ApprovalRequest, cwd: &Path) -> Self {
        let kind = match request.tool_name.as_str() {
            "ExitPlanMode" => Kind::Plan,
            t if t == skiff_core::permissions::network::NETWORK_TOOL => Kind::Network,
            _ => Kind::Tool,
        };
        let rule = approval::suggested_rule(&request, cwd);
        let s = |k: &str| request.input.get(k).and_then(Value::as_str);
        let (title, body, options) = match kind {
            Kind::Plan => {
                let body = Vec::new();
                (
                    "Ready to code? Here is the plan:".to_owned(),
                    body,
                    vec![
                        (
                            Choice::YesMode(PermissionMode::AcceptEdits),
                            "Yes, and auto-accept edits".to_owned(),
                            'y',
                        ),
                        (
                            Choice::YesMode(PermissionMode::Default),
                            "Yes, and manually approve edits".to_owned(),
                            'm',
                        ),
                        (Choice::No, "No, keep planning".to_owned(), 'n'),
                    ],
                )
            }
            Kind::Network => {
                let host = s("host").unwrap_or("?");
                let port = request
                    .input
                    .get("port")
                    .and_then(Value::as_u64)
                    .unwrap_or(0);
                let command = skiff_config::sessions::one_line(s("command").unwrap_or(""), 200);
                (
                    "Network access".to_owned(),
                    vec![
                        Line::from(format!("The sandboxed command `{command}`")),
                        Line::from(format!(
                            "wants to connect to {host}:{port}, which is not in sandbox.network.allowedDomains."
                        )),
                    ],
                    vec![
                        (Choice::Yes, "Yes, for this session".to_owned(), 'y'),
                        (
                            Choice::Always,
                            format!("Yes, and always allow {rule} (.claude/settings.local.json)"),
                            'a',
                        ),
                        (Choice::No, "No".to_owned(), 'n'),
                    ],
                )
            }
            Kind::Tool => {
                let title = match request.tool_name.as_str() {
                    "Bash" => "Bash command".to_owned(),
                    "Edit" | "MultiEdit" => "Edit file".to_owned(),
                    "Write" => "Write file".to_owned(),
                    "WebFetch" => "Fetch".to_owned(),
                    other => format!("Use {other}"),
                };
                (
                    title,
                    tool_body(&request, cwd),
                    vec![
                        (Choice::Yes, "Yes".to_owned(), 'y'),
                        (
                            Choice::Always,
                            format!("Yes, and don't ask again for {rule}"),
                            'a',
                        ),
                        (
                            Choice::No,
                            "No, and tell skiff what to do differently".to_owned(),
                            'n',
                        ),
                    ],
                )
            }
        };
        let plan = (kind == Kind::Plan).then(|| s("plan").unwrap_or("(no plan given)").to_owned());
        Self {
            id,
            request,
            kind,
            title,
            body,
            rule,
            options,
            selected: 0,
            feedback: None,
            plan,
        }
    }

    /// The request being asked.
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// A key; Some when it answers the request.
    pub fn key(
        &mut self,
        key: KeyEvent,
        engine: &Arc<PermissionEngine>,
        cwd: &Path,
    ) -> Option<Decision> {
        if let Some(fb) = &mut self.feedback {
            match key.code {
                KeyCode::Enter if !key.modifiers.contains(KeyModifiers::ALT) => {
                    let text = fb.take();
                    let text = text.trim();
                    let answer = if text.is_empty() {
                        self.no_answer()
                    } else {
                        Answer::Approval(approval::reject(Some(text)))
                    };
                    let what = if text.is_empty() {
                        "no".to_owned()
                    } else {
                        format!("no: {}", skiff_config::sessions::one_line(text, 60))
                    };
                    return Some(self.decision(answer, Vec::new(), None, &what));
                }
                KeyCode::Esc => self.feedback = None,
                _ => {
                    super::keys::edit(fb, key);
                }
            }
            return None;
        }
        let n = self.options.len();
        let choose = |i: usize| Some(i);
        let picked = match key.code {
            KeyCode::Up | KeyCode::Char('k') | KeyCode::BackTab => {
                self.selected = (self.selected + n - 1) % n;
                None
            }
            KeyCode::Down | KeyCode::Char('j') | KeyCode::Tab => {
                self.selected = (self.selected + 1) % n;
                None
            }
            KeyCode::Enter => choose(self.selected),
            KeyCode::Esc => {
                return Some(self.decision(self.no_answer(), Vec::new(), None, "no"));
            }
            KeyCode::Char(c) if c.is_ascii_digit() => {
                let i = (c as usize).wrapping_sub('1' as usize);
                (i < n).then_some(i)
            }
            KeyCode::Char(c) => {
                let c = c.to_ascii_lowercase();
                self.options.iter().position(|(_, _, k)| *k == c)
            }
            _ => None,
        }?;
        self.selected = picked;
        let (choice, _, _) = self.options[picked];
        match choice {
            Choice::Yes => Some(self.decision(
                Answer::Approval(ApprovalAnswer::allow()),
                Vec::new(),
                None,
                "yes",
            )),
            Choice::YesMode(mode) => {
                let plan = self
                    .request
                    .input
                    .get("plan")
                    .cloned()
                    .unwrap_or(Value::Null);
                let answer = Answer::Approval(ApprovalAnswer::Allow {
                    updated_input: Some(serde_json::json!({ "plan": plan, "mode": mode.as_str() })),
                });
                Some(self.decision(answer, Vec::new(), Some(mode), &format!("yes, {mode}")))
            }
            Choice::Always => {
                let notes = match self.kind {
                    Kind::Network => match approval::persist_allowed_domain(cwd, &self.rule) {
                        Ok(path) => vec![format!("Added {} to {}.", self.rule, path.display())],
                        Err(e) => vec![format!(
                            "Allowed {} for this session; not saved: {e:#}",
                            self.rule
                        )],
                    },
                    _ => always(engine, cwd, &self.rule),
                };
                let what = format!("yes, don't ask again for {}", self.rule);
                Some(self.decision(
                    Answer::Approval(ApprovalAnswer::allow()),
                    notes,
                    None,
                    &what,
                ))
            }
            Choice::No => {
                if self.kind == Kind::Network {
                    return Some(self.decision(self.no_answer(), Vec::new(), None, "no"));
                }
                self.feedback = Some(Composer::default());
                None
            }
        }
    }

    /// The answer for a plain no.
    fn no_answer(&self) -> Answer {
        match self.kind {
            Kind::Network => Answer::Approval(ApprovalAnswer::Deny {
                message: "The user did not allow the network access.".into(),
                interrupt: false,
            }),
            Kind::Plan => Answer::Approval(ApprovalAnswer::Deny {
                message: "The user doesn't want to proceed with this plan yet. Stay in plan mode and wait for the user.".into(),
                interrupt: true,
            }),
            Kind::Tool => Answer::Approval(approval::reject(None)),
        }
    }

    fn decision(
        &self,
        answer: Answer,
        notes: Vec<String>,
        mode: Option<PermissionMode>,
        what: &str,
    ) -> Decision {
        let call = format!(
            "{}({})",
            self.request.tool_name,
            crate::term::view::tool_summary(&self.request.tool_name, &self.request.input)
        );
        let record = Line::from(vec![
            Span::styled("  ? ", dim()),
            Span::raw(call),
            Span::styled(format!(" → {what}"), dim()),
        ]);
        Decision {
            id: self.id.clone(),
            answer,
            notes,
            mode,
            record,
        }
    }

    /// The menu's rows, each fitting `cols` columns (long lines wrap inside the box), and,
    /// while feedback is typed, the cursor (row, column) in them.
    pub fn lines(&self, cols: usize) -> (Vec<Line<'static>>, Option<(u16, u16)>) {
        let inner = cols.saturating_sub(2).max(1);
        let mut out = vec![Line::from(vec![
            Span::styled("╭─ ", dim()),
            Span::styled(
                self.title.clone(),
                Style::new().add_modifier(Modifier::BOLD),
            ),
        ])];
        let body = match &self.plan {
            Some(plan) => crate::term::blocks::render_markdown(plan, inner),
            None => self.body.clone(),
        };
        for l in &body {
            boxed(&mut out, l, inner, "    ");
        }
        if self.kind == Kind::Tool && !self.request.reason.is_empty() {
            boxed(
                &mut out,
                &Line::styled(self.request.reason.clone(), dim()),
                inner,
                "",
            );
        }
        let question = match self.kind {
            Kind::Plan => "Would you like to proceed?",
            Kind::Network => "Allow the connection?",
            Kind::Tool => "Do you want to proceed?",
        };
        boxed(&mut out, &Line::from(question), inner, "");
        for (i, (_, label, key)) in self.options.iter().enumerate() {
            let selected = i == self.selected;
            let marker = if selected { "› " } else { "  " };
            let style = if selected {
                Style::new().add_modifier(Modifier::BOLD | Modifier::REVERSED)
            } else {
                Style::new()
            };
            let line = Line::from(vec![
                Span::raw(marker),
                Span::styled(format!("{}. {label}", i + 1), style),
                Span::styled(format!(" ({key})"), dim()),
            ]);
            boxed(&mut out, &line, inner, "     ");
        }
        let mut cursor = None;
        if let Some(fb) = &self.feedback {
            boxed(
                &mut out,
                &Line::styled(
                    "Tell skiff what to do instead (Enter sends, empty for just no):",
                    dim(),
                ),
                inner,
                "",
            );
            let (lines, (r, c)) = fb.lines(cols, Span::styled("│ › ", dim()));
            cursor = Some((u16::try_from(out.len()).unwrap_or(0) + r, c));
            out.extend(lines);
        }
        out.push(Line::styled("╰─ esc: no, and stop", dim()));
        (out, cursor)
    }
}

/// `line` wrapped to `inner` columns (rows after the first indented by `indent`), each row
/// after the box's left edge.
fn boxed(out: &mut Vec<Line<'static>>, line: &Line<'static>, inner: usize, indent: &str) {
    let indent = [Span::raw(indent.to_owned())];
    for row in crate::term::wrap::wrap_line(line, inner, &indent) {
        let mut spans = vec![Span::styled("│ ", dim())];
        spans.extend(row.spans);
        out.push(Line::from(spans));
    }
}

/// "Don't ask again": the rule added to the session's engine and saved in
/// `.skiff/settings.local.json` (as the line REPL does). Returns what to tell the user.
pub fn always(engine: &Arc<PermissionEngine>, cwd: &Path, rule: &str) -> Vec<String> {
    let mut notes = Vec::new();
    match Rule::parse(rule, &RuleOrigin::at(cwd)) {
        Ok(r) => engine.add_rule(RuleKind::Allow, r),
        Err(e) => notes.push(format!("(cannot add the rule {rule}: {e})")),
    }
    match approval::persist_allow_rule(cwd, rule) {
        Ok(path) => notes.push(format!("Added {rule} to {}.", path.display())),
        Err(e) => notes.push(format!("Allowed {rule} for this session; not saved: {e:#}")),
    }
    notes
}

fn dim() -> Style {
    Style::new().add_modifier(Modifier::DIM)
}

/// What a tool call would do: a diff for edits, the command for Bash, the input otherwise.
fn tool_body(a: &ApprovalRequest, cwd: &Path) -> Vec<Line<'static>> {
    let s = |k: &str| a.input.get(k).and_then(Value::as_str);
    match a.tool_name.as_str() {
        "Edit" | "Write" => {
            let path = s("file_path").unwrap_or("?").to_owned();
            match diff::preview(&a.tool_name, &a.input, cwd) {
                Some(d) => {
                    let mut out = vec![Line::from(vec![
                        Span::styled(path, Style::new().add_modifier(Modifier::BOLD)),
                        Span::styled(format!("  {}", d.summary()), dim()),
                    ])];
                    out.extend(diff::diff_lines(&d, "", 24));
                    out
                }
                None => vec![Line::from(path)],
            }
        }
        "Bash" => {
            let mut out: Vec<Line<'static>> = s("command")
                .unwrap_or("")
                .lines()
                .take(12)
                .map(|l| Line::from(format!("  {l}")))
                .collect();
            if let Some(d) = s("description") {
                out.push(Line::styled(d.to_owned(), dim()));
            }
            out
        }
        _ => {
            let mut out = vec![Line::from(format!(
                "{}({})",
                a.tool_name,
                crate::term::view::tool_summary(&a.tool_name, &a.input)
            ))];
            if let Some(obj) = a.input.as_object() {
                for (k, v) in obj.iter().take(8) {
                    let v = match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    out.push(Line::styled(
                        format!("  {k}: {}", skiff_config::sessions::one_line(&v, 120)),
                        dim(),
                    ));
                }
            }
            out
        }
    }
}
