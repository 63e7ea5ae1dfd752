//! One ACP session: a task that owns a skiff [`Session`] and serves it to the editor, off the
//! connection's dispatch loop. Prompts come in as [`Cmd`]s and run one at a time; the session's
//! events go out as `session/update`s; its approvals become `session/request_permission`s,
//! answered on their own tasks so a cancel or another request is never held up; each prompt is
//! answered with its stop reason once every update of its turn has been sent.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ConfigOptionUpdate, CurrentModeUpdate, RequestPermissionOutcome, RequestPermissionRequest,
    SessionId, SessionNotification, SessionUpdate, StopReason,
};
use agent_client_protocol::{Client, ErrorCode, RequestCancellationHandle};
use serde_json::json;
use skiff_core::permissions::{Destination, PermissionEngine, PermissionUpdate};
use skiff_core::{
    Answer, ApprovalAnswer, ApprovalRequest, CompactError, CompactReport, Event, Op,
    PermissionMode, RequestId, RequestKind, Session, SessionHandle, UserInput,
};
use skiff_protocol::sdk::{ResultMessage, ResultSubtype, SdkMessage};
use tokio::sync::{mpsc, oneshot};

use super::modes;
use super::permission::{self, Effect};
use super::prompt::Prompted;
use super::tools;
use super::updates::{Translator, agent_text};
use crate::front::commands::{self, Action};
use skiff_config::mcp::session::McpHandle;
use skiff_core::commands::CommandSet;

/// How a prompt ended, for its response.
pub type Outcome = Result<StopReason, agent_client_protocol::Error>;

/// What the protocol side asks of a session.
#[derive(Debug)]
pub enum Cmd {
    /// Run this prompt (after the ones before it) and answer with how it ended.
    Prompt(Prompted, oneshot::Sender<Outcome>),
    /// `session/cancel`: stop the running prompt; those waiting end as cancelled.
    Cancel,
    /// End the session (`session/close`, or the editor went away).
    Close,
    /// The editor's answer to a permission request.
    Answer {
        /// The session's request.
        id: RequestId,
        /// What the editor chose (`Err` when the request failed).
        outcome: Result<RequestPermissionOutcome, String>,
    },
}

/// The session's mode and model, as the editor last heard of them.
#[derive(Debug, Clone)]
pub struct State {
    /// Permission mode.
    pub mode: PermissionMode,
    /// Model id.
    pub model: String,
    /// Bash commands run without asking inside the sandbox (what the modes' descriptions say).
    pub sandboxed: bool,
}

impl State {
    /// The configuration options for this state.
    pub fn options(
        &self,
        models: &[String],
    ) -> Vec<agent_client_protocol::v1::schema::SessionConfigOption> {
        modes::config_options(self.mode, &self.model, models, self.sandboxed)
    }

    /// The `current_mode_update` and `config_option_update` that tell an editor of a mode.
    pub fn mode_updates(&self, models: &[String]) -> [SessionUpdate; 2] {
        [
            SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(self.mode.as_str())),
            SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(self.options(models))),
        ]
    }
}

/// What a session needs besides the skiff session.
pub struct Parts {
    /// The ACP session id (the skiff session id).
    pub id: SessionId,
    /// The connection to the editor.
    pub cx: ConnectionTo<Client>,
    /// The permission engine ("always" adds rules to it).
    pub engine: Arc<PermissionEngine>,
    /// The workspace.
    pub cwd: PathBuf,
    /// Mode and model, shared with the protocol side.
    pub state: Arc<Mutex<State>>,
    /// The models offered.
    pub models: Vec<String>,
    /// MCP servers, for `/mcp`.
    pub mcp: McpHandle,
    /// The Bash sandbox, for `/sandbox`.
    pub sandbox: skiff_config::SandboxText,
    /// The custom commands and skills (`/name args` prompts the session expands).
    pub custom: Arc<CommandSet>,
}

/// A permission request out with the editor.
struct Asked {
    request: ApprovalRequest,
    rule: String,
    rules: Vec<String>,
    cancel: RequestCancellationHandle,
}

/// What the running prompt is.
#[derive(Debug, PartialEq, Eq)]
enum Running {
    Turn,
    Compact,
}

/// The prompt being worked on.
struct Active {
    running: Running,
    done: oneshot::Sender<Outcome>,
    cancelled: bool,
}

/// The task's state.
struct Pump {
    parts: Parts,
    session: Session,
    handle: SessionHandle,
    rx: mpsc::UnboundedReceiver<Cmd>,
    /// For the permission tasks' answers (weak: the task ends when the protocol side lets go).
    tx: mpsc::WeakUnboundedSender<Cmd>,
    translator: Translator,
    queue: VecDeque<(Prompted, oneshot::Sender<Outcome>)>,
    active: Option<Active>,
    asked: HashMap<RequestId, Asked>,
    /// The MCP prompts the editor was last told of (their commands).
    advertised: Vec<String>,
    /// The MCP servers have connected (their prompts were offered then).
    mcp_ready: bool,
}

/// Start serving `session`; commands go to the returned sender, and the task ends (shutting
/// the session down) when every sender is gone.
pub fn spawn(
    parts: Parts,
    session: Session,
) -> (mpsc::UnboundedSender<Cmd>, tokio::task::JoinHandle<()>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let pump = Pump {
        translator: Translator::new(parts.cwd.clone()),
        handle: session.handle(),
        parts,
        session,
        rx,
        tx: tx.downgrade(),
        queue: VecDeque::new(),
        active: None,
        asked: HashMap::new(),
        advertised: Vec::new(),
        mcp_ready: false,
    };
    (tx, tokio::spawn(pump.run()))
}

/// How a turn's result ends its prompt: a client's cancel is `cancelled`; max turns and
/// max tokens have their reasons; a rejected call that stopped the turn ends it normally; an
/// API or execution error is an error response.
pub fn stop_of(r: &ResultMessage, cancelled: bool) -> Outcome {
    if cancelled {
        return Ok(StopReason::Cancelled);
    }
    let error = || {
        agent_client_protocol::Error::new(
            ErrorCode::INTERNAL_ERROR,
            crate::term::view::result_error(r),
        )
    };
    match &r.subtype {
        ResultSubtype::ErrorMaxTurns => Ok(StopReason::MaxTurnRequests),
        ResultSubtype::ErrorMaxBudgetUsd => Ok(StopReason::EndTurn),
        ResultSubtype::Success if r.is_error => Err(error()),
        ResultSubtype::Success => Ok(match r.stop_reason.as_deref() {
            Some("max_tokens") => StopReason::MaxTokens,
            Some("refusal") => StopReason::Refusal,
            _ => StopReason::EndTurn,
        }),
        _ if r
            .terminal_reason
            .as_deref()
            .is_some_and(|t| t.starts_with("aborted")) =>
        {
            Ok(StopReason::EndTurn)
        }
        _ => Err(error()),
    }
}

impl Pump {
    async fn run(mut self) {
        loop {
            while self.active.is_none() {
                let Some((what, done)) = self.queue.pop_front() else {
                    break;
                };
                self.start(what, done).await;
            }
            let mcp = self.parts.mcp.clone();
            tokio::select! {
                cmd = self.rx.recv() => match cmd {
                    Some(Cmd::Close) | None => break,
                    Some(cmd) => self.command(cmd),
                },
                ev = self.session.next_event() => match ev {
                    Some(ev) => self.event(ev),
                    None => break,
                },
                () = mcp.connected(), if !self.mcp_ready => {
                    self.mcp_ready = true;
                    self.offer_mcp_prompts();
                }
            }
        }
        self.handle.interrupt();
        let ended = || {
            Err(agent_client_protocol::Error::new(
                ErrorCode::INTERNAL_ERROR,
                "the session has ended",
            ))
        };
        if let Some(active) = self.active.take() {
            let _ = active.done.send(ended());
        }
        for (_, done) in self.queue.drain(..) {
            let _ = done.send(ended());
        }
        self.session.shutdown().await;
    }

    fn notify(&self, update: SessionUpdate) {
        let note = SessionNotification::new(self.parts.id.clone(), update);
        if let Err(e) = self.parts.cx.send_notification(note) {
            tracing::debug!(error = %e, "cannot send a session update");
        }
    }

    fn state(&self) -> State {
        match self.parts.state.lock() {
            Ok(s) => s.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    fn set_state(&self, f: impl FnOnce(&mut State)) {
        match self.parts.state.lock() {
            Ok(mut s) => f(&mut s),
            Err(p) => f(&mut p.into_inner()),
        }
    }

    /// Tell the editor the mode changed (skiff changed it: an approved plan, a slash command).
    fn mode_changed(&self, mode: PermissionMode) {
        self.set_state(|s| s.mode = mode);
        for update in self.state().mode_updates(&self.parts.models) {
            self.notify(update);
        }
    }

    fn options_changed(&self) {
        let st = self.state();
        self.notify(SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(
            st.options(&self.parts.models),
        )));
    }

    /// Start a prompt (the session is idle).
    async fn start(&mut self, what: Prompted, done: oneshot::Sender<Outcome>) {
        match what {
            Prompted::Message(input) => self.send(input, done),
            Prompted::Command(line) => self.slash(line, done).await,
        }
    }

    fn send(&mut self, input: UserInput, done: oneshot::Sender<Outcome>) {
        if self.session.send_message(input).is_err() {
            let _ = done.send(Err(agent_client_protocol::Error::new(
                ErrorCode::INTERNAL_ERROR,
                "the session has ended",
            )));
            return;
        }
        self.active = Some(Active {
            running: Running::Turn,
            done,
            cancelled: false,
        });
    }

    fn command(&mut self, cmd: Cmd) {
        match cmd {
            Cmd::Prompt(what, done) => self.queue.push_back((what, done)),
            Cmd::Cancel => {
                for (_, done) in self.queue.drain(..) {
                    let _ = done.send(Ok(StopReason::Cancelled));
                }
                if let Some(active) = &mut self.active {
                    active.cancelled = true;
                    self.handle.interrupt();
                }
            }
            Cmd::Answer { id, outcome } => self.answered(id, outcome),
            Cmd::Close => {}
        }
    }

    fn event(&mut self, ev: Event) {
        match ev {
            Event::Request(r) => match r.kind {
                RequestKind::Approval(a) => self.ask(r.id, a),
                _ => {
                    let _ = self.handle.reply(r.id, Answer::Json(json!({})));
                }
            },
            Event::RequestCancelled(id) => {
                if let Some(asked) = self.asked.remove(&id)
                    && let Err(e) = asked.cancel.cancel()
                {
                    tracing::debug!(error = %e, "cannot cancel a permission request");
                }
            }
            Event::Frame(SdkMessage::Result(r)) => self.turn_ended(&r),
            // The editor chose it already when it answered the plan's question.
            Event::ModeChanged(mode) if self.state().mode != mode => self.mode_changed(mode),
            Event::ModeChanged(_) => {}
            Event::Compacted(outcome) => self.compacted(outcome),
            ev => {
                for update in self.translator.event(&ev) {
                    self.notify(update);
                }
            }
        }
    }

    /// Tell the editor the commands again when the MCP servers' prompts changed.
    fn offer_mcp_prompts(&mut self) {
        let now: Vec<String> = self
            .parts
            .custom
            .mcp()
            .list()
            .into_iter()
            .map(|p| p.command)
            .collect();
        if now != self.advertised {
            self.advertised = now;
            self.notify(super::slash::available_commands(&self.parts.custom));
        }
    }

    fn turn_ended(&mut self, r: &ResultMessage) {
        if let Some(update) = self.translator.usage_update(r, &self.state().model) {
            self.notify(update);
        }
        self.offer_mcp_prompts();
        let Some(active) = self.active.take_if(|a| a.running == Running::Turn) else {
            return;
        };
        if r.subtype == ResultSubtype::ErrorMaxBudgetUsd {
            self.notify(agent_text(&crate::term::view::result_error(r)));
        }
        let _ = active.done.send(stop_of(r, active.cancelled));
    }

    fn compacted(&mut self, outcome: Result<CompactReport, CompactError>) {
        let text = match outcome {
            Ok(r) => format!(
                "Compacted the conversation: {} messages → {} (about {} → {} tokens).",
                r.messages_before, r.messages_after, r.pre_tokens, r.post_tokens
            ),
            Err(e) => format!("Not compacted: {e}."),
        };
        self.notify(agent_text(&text));
        if let Some(active) = self.active.take_if(|a| a.running == Running::Compact) {
            let stop = if active.cancelled {
                StopReason::Cancelled
            } else {
                StopReason::EndTurn
            };
            let _ = active.done.send(Ok(stop));
        }
    }

    /// Ask the editor about a call, on a task of its own.
    fn ask(&mut self, id: RequestId, request: ApprovalRequest) {
        let rules = self.parts.engine.suggest_rules(
            &request.tool_name,
            &request.input,
            PermissionMode::Default,
        );
        // Shown as one choice; "always" saves each rule.
        let rule = if request.tool_name == skiff_core::permissions::network::NETWORK_TOOL {
            skiff_core::permissions::network::domain_entry(&request.input)
        } else if rules.is_empty() {
            request.tool_name.clone()
        } else {
            rules.join(", ")
        };
        let call = tools::asked(
            &request.tool_use_id,
            &request.tool_name,
            &request.input,
            &self.parts.cwd,
        );
        let ask = RequestPermissionRequest::new(
            self.parts.id.clone(),
            call,
            permission::options(&request, &rule),
        );
        let sent = self.parts.cx.send_request(ask);
        let cancel = sent.cancellation_handle();
        let Some(tx) = self.tx.upgrade() else {
            return;
        };
        let answer_id = id.clone();
        tokio::spawn(async move {
            let outcome = sent
                .block_task()
                .await
                .map(|r| r.outcome)
                .map_err(|e| e.to_string());
            let _ = tx.send(Cmd::Answer {
                id: answer_id,
                outcome,
            });
        });
        self.asked.insert(
            id,
            Asked {
                request,
                rule,
                rules,
                cancel,
            },
        );
    }

    fn answered(&mut self, id: RequestId, outcome: Result<RequestPermissionOutcome, String>) {
        let Some(asked) = self.asked.remove(&id) else {
            return;
        };
        let (answer, effect) = permission::answer(&asked.request, &asked.rule, outcome);
        match effect {
            Effect::None => {}
            // "Always": the session adds the rules and saves them in the local settings.
            Effect::Rule(kind, _) => {
                let _ = self
                    .handle
                    .update_permissions(vec![PermissionUpdate::AddRules {
                        rules: asked.rules.clone(),
                        behavior: kind,
                        destination: Destination::LocalSettings,
                    }]);
            }
            // The plan's next mode reaches the session before the answer.
            Effect::Mode(mode) => {
                let _ = self
                    .handle
                    .update_permissions(vec![PermissionUpdate::mode(mode)]);
                self.mode_changed(mode);
            }
            Effect::Domain(entry) => {
                if let Err(e) =
                    crate::front::approval::persist_allowed_domain(&self.parts.cwd, &entry)
                {
                    tracing::warn!(error = %format!("{e:#}"), "cannot save the allowed domain");
                }
            }
        }
        let allowed = matches!(answer, ApprovalAnswer::Allow { .. });
        let _ = self.handle.reply(id, Answer::Approval(answer));
        if allowed && let Some(update) = self.translator.running(&asked.request.tool_use_id) {
            self.notify(update);
        }
    }

    /// A slash command (the session is idle, so its status is answered at once).
    async fn slash(&mut self, line: String, done: oneshot::Sender<Outcome>) {
        if commands::needs_mcp(&line) {
            self.parts.mcp.connected().await;
        }
        if line.trim() == "/help" {
            self.notify(agent_text(&super::slash::help(&self.parts.custom)));
            let _ = done.send(Ok(StopReason::EndTurn));
            return;
        }
        let Ok(status) = self.session.status().await else {
            let _ = done.send(Err(agent_client_protocol::Error::new(
                ErrorCode::INTERNAL_ERROR,
                "the session has ended",
            )));
            return;
        };
        let text = match commands::dispatch_with(&status, &line, &self.parts.custom) {
            // A custom command or skill: the session expands it.
            None => return self.send(UserInput::Text(line), done),
            Some(Action::Output(text)) => text,
            Some(Action::Exit) => "Close the session in the editor to end it.".to_owned(),
            Some(Action::Resume(_)) => {
                "Open a saved session from the editor's list of past sessions.".to_owned()
            }
            Some(Action::Clear) => {
                let _ = self.session.submit(Op::Clear);
                self.translator.clear();
                "Started a new conversation.".to_owned()
            }
            Some(Action::SetModel(model, text)) => {
                let _ = self.handle.set_model(model.clone());
                self.set_state(|s| s.model = model);
                self.options_changed();
                text
            }
            Some(Action::SetMode(mode)) => {
                let _ = self.handle.set_permission_mode(mode);
                self.mode_changed(mode);
                format!("Permission mode set to {mode}.")
            }
            Some(Action::Permissions) => {
                crate::front::repl::permissions_text(status.permission_mode, &self.parts.engine)
            }
            Some(Action::Sandbox) => self.parts.sandbox.to_string(),
            Some(Action::Mcp) => self.parts.mcp.describe(),
            Some(Action::Plugin(_)) => "Manage plugins in a terminal with `skiff plugin …` \
                 (install, enable, disable, marketplace add); they load in new sessions."
                .to_owned(),
            Some(Action::Todos) => {
                "The todo list is the plan the editor shows as the model updates it.".to_owned()
            }
            Some(Action::Compact(focus)) => {
                if self.session.submit(Op::Compact(focus)).is_ok() {
                    self.active = Some(Active {
                        running: Running::Compact,
                        done,
                        cancelled: false,
                    });
                } else {
                    let _ = done.send(Err(agent_client_protocol::Error::new(
                        ErrorCode::INTERNAL_ERROR,
                        "the session has ended",
                    )));
                }
                return;
            }
        };
        self.notify(agent_text(&text));
        let _ = done.send(Ok(StopReason::EndTurn));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use serde_json::{Value, json};

    use super::*;

    fn result(v: Value) -> ResultMessage {
        let mut base = json!({"type": "result", "subtype": "success", "is_error": false,
            "duration_ms": 1, "duration_api_ms": 1, "num_turns": 1, "session_id": "s",
            "uuid": "u", "total_cost_usd": 0.0, "usage": {"input_tokens": 1, "output_tokens": 1},
            "modelUsage": {}, "permission_denials": []});
        for (k, val) in v.as_object().unwrap() {
            base[k] = val.clone();
        }
        serde_json::from_value(base).unwrap()
    }

    #[test]
    fn stop_reasons() {
        assert_eq!(
            stop_of(&result(json!({"stop_reason": "end_turn"})), false).unwrap(),
            StopReason::EndTurn
        );
        assert_eq!(
            stop_of(&result(json!({"stop_reason": "max_tokens"})), false).unwrap(),
            StopReason::MaxTokens
        );
        assert_eq!(
            stop_of(
                &result(json!({"subtype": "error_max_turns", "is_error": true})),
                false
            )
            .unwrap(),
            StopReason::MaxTurnRequests
        );
        let interrupted = result(
            json!({"subtype": "error_during_execution", "is_error": true,
            "terminal_reason": "aborted_tools", "errors": ["Interrupted by user"]}),
        );
        assert_eq!(stop_of(&interrupted, true).unwrap(), StopReason::Cancelled);
        assert_eq!(stop_of(&interrupted, false).unwrap(), StopReason::EndTurn);
        let api = result(
            json!({"is_error": true, "result": "API Error: 401 invalid x-api-key",
            "errors": ["API Error: 401 invalid x-api-key"]}),
        );
        let e = stop_of(&api, false).unwrap_err();
        assert_eq!(e.code, ErrorCode::INTERNAL_ERROR);
        assert!(e.message.contains("401"), "{e}");
    }
}
