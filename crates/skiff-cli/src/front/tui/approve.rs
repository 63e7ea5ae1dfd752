//! The approval menu: what the call would do (a coloured diff with the file's line numbers for
//! edits, the command for Bash), then yes / yes and don't ask again for the rule that will be
//! saved / no, and tell skiff what to do instead. Answerable with the arrows and Enter, the
//! option's number or its letter; Esc says no and stops the turn.
//!
//! "Don't ask again" uses the same seam as the line REPL (`front/repl.rs`, `ask`): the rules
//! the engine suggests go to the session as a permission update, which adds them and saves
//! them (and reports where); an accepted plan's next mode is an update too.

use std::path::Path;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui_core::style::{Modifier, Style};
use ratatui_core::text::{Line, Span};
use serde_json::Value;
use skiff_core::permissions::{PermissionEngine, PermissionUpdate};
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
    /// What to tell the user (a domain saved, or not).
    pub notes: Vec<String>,
    /// Permission changes for the session, sent before the answer.
    pub updates: Vec<PermissionUpdate>,
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
    /// What "don't ask again" saves: the rules the engine suggests (or the allowed-domains
    /// entry), shown joined.
    rule: String,
    /// The rules themselves (tools).
    rules: Vec<String>,
    options: Vec<(Choice, String, char)>,
    selected: usize,
    /// Typing what to do instead (after choosing no).
    feedback: Option<Composer>,
    /// The plan (markdown) of an ExitPlanMode request, rendered to the width it is shown at.
    plan: Option<String>,
}

impl ApprovalMenu {
    /// The menu for a request.
    pub fn new(
        id: RequestId,
        request: ApprovalRequest,
        cwd: &Path,
        engine: &PermissionEngine,
    ) -> Self {
        let kind = match request.tool_name.as_str() {
            "ExitPlanMode" => Kind::Plan,
            t if t == skiff_core::permissions::network::NETWORK_TOOL => Kind::Network,
            _ => Kind::Tool,
        };
        let rules = match kind {
            Kind::Tool => {
                engine.suggest_rules(&request.tool_name, &request.input, PermissionMode::Default)
            }
            _ => Vec::new(),
        };
        let rule = match kind {
            Kind::Network => skiff_core::permissions::network::domain_entry(&request.input),
            _ => rules.join(", "),
        };
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
                let mut options = vec![(Choice::Yes, "Yes".to_owned(), 'y')];
                // Offered when there is a rule to save.
                if !rules.is_empty() {
                    options.push((
                        Choice::Always,
                        format!("Yes, and don't ask again for {rule}"),
                        'a',
                    ));
                }
                options.push((
                    Choice::No,
                    "No, and tell skiff what to do differently".to_owned(),
                    'n',
                ));
                (title, tool_body(&request, cwd), options)
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
            rules,
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
    pub fn key(&mut self, key: KeyEvent, cwd: &Path) -> Option<Decision> {
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
                // The next mode goes to the session (an update) before the answer.
                let mut d = self.decision(
                    Answer::Approval(ApprovalAnswer::allow()),
                    Vec::new(),
                    Some(mode),
                    &format!("yes, {mode}"),
                );
                d.updates.push(PermissionUpdate::mode(mode));
                Some(d)
            }
            Choice::Always => {
                let what = format!("yes, don't ask again for {}", self.rule);
                let allow = Answer::Approval(ApprovalAnswer::allow());
                if self.kind == Kind::Network {
                    let notes = match approval::persist_allowed_domain(cwd, &self.rule) {
                        Ok(path) => vec![format!("Added {} to {}.", self.rule, path.display())],
                        Err(e) => vec![format!(
                            "Allowed {} for this session; not saved: {e:#}",
                            self.rule
                        )],
                    };
                    return Some(self.decision(allow, notes, None, &what));
                }
                // Added and saved by the session (it reports where).
                let mut d = self.decision(allow, Vec::new(), None, &what);
                d.updates
                    .push(PermissionUpdate::allow_always(self.rules.clone()));
                Some(d)
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
            updates: Vec::new(),
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
