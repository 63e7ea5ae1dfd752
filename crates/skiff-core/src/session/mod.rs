//! The session: one actor task owns the conversation and everything else of a session
//! ([`crate::Agent::spawn`] starts it); every client — the REPL, headless runs, the SDK
//! protocol, editors, library users — drives it through a [`Session`] handle: it sends [`Op`]s
//! and reads [`Event`]s. Questions to the client (approvals, callbacks) are [`Event::Request`]s
//! answered with [`Op::Reply`].
//!
//! [`Session::run`] is the simple path on top: send one prompt and get a stream of its
//! stream-json frames, ending with the `result` frame.

mod actor;

use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use skiff_protocol::sdk::{ResultMessage, ResultSubtype, SdkMessage};
use skiff_protocol::{JsonMap, Message, Usage};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

pub(crate) use actor::Command;
pub(crate) use actor::run as actor_run;

use crate::compaction::{CompactError, CompactReport};
use crate::cost::CostTracker;
pub use crate::event::UserInput;
use crate::event::{Answer, ApprovalAnswer, Event, RequestId, RequestKind};
use crate::permissions::PermissionMode;

/// An operation a client asks of the session.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Op {
    /// Work on this message: one turn, ending with one `result` frame. Sent while a turn runs,
    /// it is queued and runs next.
    UserMessage(UserInput),
    /// A user message delivered as written (the Agent SDKs' `client_composed`, their
    /// `verbatim_prompts` option): no slash command, MCP prompt or `@server:uri` mention in it
    /// is expanded. Otherwise as [`Op::UserMessage`].
    VerbatimMessage(UserInput),
    /// Stop the running turn (or compaction): the model stream stops, running tools are killed,
    /// unanswered tool calls get an "interrupted" result, pending requests are withdrawn.
    /// Queued messages still run.
    Interrupt,
    /// Use this model from the next request on.
    SetModel(String),
    /// Use this permission mode from the next tool call on.
    SetPermissionMode(PermissionMode),
    /// Change the rules or the mode (a client's "always allow", an SDK host's
    /// `updatedPermissions`, an approved plan's next mode), at once, even mid-turn: rules go to
    /// the session's [`crate::permissions::PermissionStore`] (saved where their destination
    /// says), the mode to the session. Hosts see `system/status` after a mode change and a
    /// notice for what was saved or could not be applied.
    UpdatePermissions(Vec<crate::permissions::PermissionUpdate>),
    /// Think with this budget from the next request on (`None` or 0: no thinking), the Agent
    /// SDKs' `set_max_thinking_tokens`.
    SetMaxThinkingTokens(Option<u32>),
    /// Summarise the conversation now, with optional focus instructions; ends with
    /// [`Event::Compacted`].
    Compact(Option<String>),
    /// Start a new conversation (same settings).
    Clear,
    /// The answer to an [`Event::Request`].
    Reply {
        /// The request's id.
        id: RequestId,
        /// The answer.
        answer: Answer,
    },
    /// Finish the running turn and everything queued, then end the session.
    Shutdown,
    /// Remember the files as they are when the work queued before this op is done, under
    /// this id (a user message's uuid), so that [`SessionHandle::rewind_files`] can put them
    /// back. Needs checkpoints on in the tool context's change log; ignored otherwise.
    Checkpoint(String),
    /// Go back to before message `n` of the history: only the first `n` messages are kept (a
    /// rewind to an earlier prompt, recorded in the transcript as a replacement so a resume
    /// continues from there). The files are put back separately
    /// ([`SessionHandle::rewind_files`]).
    Rewind(usize),
    /// Run a command the user typed (`!cmd`) with the Bash tool, through the same permission
    /// checks, approvals and hooks as the model's calls, and add it and its output to the
    /// conversation (`<bash-input>`, `<bash-stdout>`) without a model call; its `user` frame
    /// carries the output. Queued like a message while a turn runs.
    Shell(String),
}

/// A snapshot of the session's state.
#[derive(Debug, Clone)]
pub struct Status {
    /// Session id.
    pub session_id: String,
    /// Model of the next request.
    pub model: String,
    /// Permission mode.
    pub permission_mode: PermissionMode,
    /// Messages in the history.
    pub messages: usize,
    /// Cost and usage so far.
    pub costs: CostTracker,
    /// Tools offered to the model.
    pub tools: Vec<String>,
    /// Background commands of the session (running and ended), oldest first.
    pub background: Vec<std::sync::Arc<skiff_tools::background::Shell>>,
}

/// The session ended (its task is gone), so the operation could not be done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the session has ended")]
pub struct SessionEnded;

/// Sends ops to a session from anywhere (a signal handler, another task). Cheap to clone.
/// User messages go through [`Session`], which reads their results.
#[derive(Debug, Clone)]
pub struct SessionHandle {
    commands: mpsc::UnboundedSender<Command>,
}

impl SessionHandle {
    fn send(&self, op: Op) -> Result<(), SessionEnded> {
        self.commands
            .send(Command::Op(op))
            .map_err(|_| SessionEnded)
    }

    /// Interrupt the running turn.
    pub fn interrupt(&self) {
        let _ = self.send(Op::Interrupt);
    }

    /// Switch the model from the next request on.
    pub fn set_model(&self, model: impl Into<String>) -> Result<(), SessionEnded> {
        self.send(Op::SetModel(model.into()))
    }

    /// Think with this budget from the next request on (`None` or 0: no thinking).
    pub fn set_max_thinking_tokens(&self, tokens: Option<u32>) -> Result<(), SessionEnded> {
        self.send(Op::SetMaxThinkingTokens(tokens))
    }

    /// Switch the permission mode from the next tool call on.
    pub fn set_permission_mode(&self, mode: PermissionMode) -> Result<(), SessionEnded> {
        self.send(Op::SetPermissionMode(mode))
    }

    /// Change rules or the mode (see [`Op::UpdatePermissions`]).
    pub fn update_permissions(
        &self,
        updates: Vec<crate::permissions::PermissionUpdate>,
    ) -> Result<(), SessionEnded> {
        self.send(Op::UpdatePermissions(updates))
    }

    /// Answer a request.
    pub fn reply(&self, id: RequestId, answer: Answer) -> Result<(), SessionEnded> {
        self.send(Op::Reply { id, answer })
    }

    /// What fills the context window (`get_context_usage`), after the work queued before. The
    /// answer arrives on the returned channel.
    pub fn context_usage(
        &self,
    ) -> Result<oneshot::Receiver<crate::context_usage::ContextUsage>, SessionEnded> {
        let (tx, rx) = oneshot::channel();
        self.commands
            .send(Command::ContextUsage(tx))
            .map_err(|_| SessionEnded)?;
        Ok(rx)
    }

    /// Put the files Write, Edit and NotebookEdit changed back as they were at checkpoint
    /// `id` (see [`Op::Checkpoint`]), after the work queued before; with `dry_run`, only say
    /// what would change. The answer arrives on the returned channel.
    pub fn rewind_files(
        &self,
        id: impl Into<String>,
        dry_run: bool,
    ) -> Result<oneshot::Receiver<Result<skiff_tools::changes::RewindReport, String>>, SessionEnded>
    {
        let (tx, rx) = oneshot::channel();
        self.commands
            .send(Command::Rewind {
                id: id.into(),
                dry_run,
                reply: tx,
            })
            .map_err(|_| SessionEnded)?;
        Ok(rx)
    }
}

/// A running session: send it ops, read its events.
pub struct Session {
    handle: SessionHandle,
    events: mpsc::UnboundedReceiver<Event>,
    task: Option<JoinHandle<()>>,
    session_id: String,
    /// User messages sent whose `result` frame was not read yet.
    unfinished: usize,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("session_id", &self.session_id)
            .field("unfinished", &self.unfinished)
            .finish_non_exhaustive()
    }
}

impl Session {
    pub(crate) fn new(
        commands: mpsc::UnboundedSender<Command>,
        events: mpsc::UnboundedReceiver<Event>,
        task: JoinHandle<()>,
        session_id: String,
    ) -> Self {
        Self {
            handle: SessionHandle { commands },
            events,
            task: Some(task),
            session_id,
            unfinished: 0,
        }
    }

    /// The session id.
    pub fn id(&self) -> &str {
        &self.session_id
    }

    /// A handle that sends ops from elsewhere (interrupt on Ctrl-C, answers from another task).
    pub fn handle(&self) -> SessionHandle {
        self.handle.clone()
    }

    /// Send an op. User messages are counted, so that [`Session::run`] knows which `result`
    /// frame is its own.
    pub fn submit(&mut self, op: Op) -> Result<(), SessionEnded> {
        let user = matches!(op, Op::UserMessage(_) | Op::VerbatimMessage(_));
        self.handle.send(op)?;
        if user {
            self.unfinished += 1;
        }
        Ok(())
    }

    /// Send a user message delivered as written ([`Op::VerbatimMessage`]).
    pub fn send_verbatim(&mut self, input: impl Into<UserInput>) -> Result<(), SessionEnded> {
        self.submit(Op::VerbatimMessage(input.into()))
    }

    /// Send a user message (queued if a turn runs).
    pub fn send_message(&mut self, input: impl Into<UserInput>) -> Result<(), SessionEnded> {
        self.submit(Op::UserMessage(input.into()))
    }

    /// Interrupt the running turn.
    pub fn interrupt(&self) {
        self.handle.interrupt();
    }

    /// Answer a request.
    pub fn reply(&self, id: RequestId, answer: Answer) -> Result<(), SessionEnded> {
        self.handle.reply(id, answer)
    }

    /// The next event; `None` once the session has ended.
    pub async fn next_event(&mut self) -> Option<Event> {
        let event = self.events.recv().await?;
        if let Event::Frame(SdkMessage::Result(_)) = &event {
            self.unfinished = self.unfinished.saturating_sub(1);
        }
        Some(event)
    }

    /// Send `prompt` and stream its frames until its `result` frame. Frames of earlier
    /// messages whose results were not read yet are skipped. Requests that arrive meanwhile are
    /// given the default answer (approvals denied, callbacks `{}`): clients that answer
    /// requests read [`Session::next_event`] instead. Dropping the [`Run`] before its end
    /// interrupts the turn.
    pub fn run(&mut self, prompt: impl Into<UserInput>) -> Run<'_> {
        let skip = self.unfinished;
        let sent = self.send_message(prompt).is_ok();
        Run {
            session: self,
            skip,
            done: !sent,
            result: None,
        }
    }

    /// A copy of the conversation so far (answered after the running turn, if any).
    pub async fn history(&self) -> Result<Vec<Message>, SessionEnded> {
        let (tx, rx) = oneshot::channel();
        self.handle
            .commands
            .send(Command::History(tx))
            .map_err(|_| SessionEnded)?;
        rx.await.map_err(|_| SessionEnded)
    }

    /// The session's state (answered after the running turn, if any).
    pub async fn status(&self) -> Result<Status, SessionEnded> {
        let (tx, rx) = oneshot::channel();
        self.handle
            .commands
            .send(Command::Status(tx))
            .map_err(|_| SessionEnded)?;
        rx.await.map_err(|_| SessionEnded)
    }

    /// Compact now (`/compact [focus]`); the events emitted meanwhile (`compact_boundary`,
    /// notices) are returned in [`CompactReport::events`]. On error the history is unchanged.
    /// [`Session::interrupt`] cancels it.
    pub async fn compact(&mut self, focus: Option<&str>) -> Result<CompactReport, CompactError> {
        if self.submit(Op::Compact(focus.map(str::to_owned))).is_err() {
            return Err(CompactError::Failed("the session has ended".into()));
        }
        let mut events = Vec::new();
        while let Some(event) = self.next_event().await {
            match event {
                Event::Compacted(outcome) => {
                    return outcome.map(|mut r| {
                        r.events = events;
                        r
                    });
                }
                Event::Frame(f) => events.push(f),
                Event::Request(r) => self.default_answer(r),
                _ => {}
            }
        }
        Err(CompactError::Failed("the session has ended".into()))
    }

    /// Finish the running turn and what is queued, then end the session and wait for it.
    pub async fn shutdown(mut self) {
        let _ = self.handle.send(Op::Shutdown);
        let Some(mut task) = self.task.take() else {
            return;
        };
        // Events still coming are read (and dropped) so the session never waits on them.
        let mut open = true;
        loop {
            tokio::select! {
                done = &mut task => {
                    if let Err(e) = done {
                        tracing::error!(error = %e, "the session task failed");
                    }
                    return;
                }
                ev = self.events.recv(), if open => open = ev.is_some(),
            }
        }
    }

    fn default_answer(&self, request: crate::event::Request) {
        let answer = match &request.kind {
            RequestKind::Approval(a) => {
                tracing::warn!(tool = %a.tool_name, "approval requested with no client to answer it; denied");
                Answer::Approval(ApprovalAnswer::deny(crate::permissions::not_granted(
                    &a.tool_name,
                )))
            }
            RequestKind::Callback { .. } => Answer::Json(serde_json::json!({})),
        };
        let _ = self.reply(request.id, answer);
    }
}

/// The frames of one prompt, ending with its `result` frame (see [`Session::run`]).
pub struct Run<'a> {
    session: &'a mut Session,
    /// Results of earlier messages still to skip.
    skip: usize,
    done: bool,
    result: Option<ResultMessage>,
}

impl Run<'_> {
    /// A handle whose [`SessionHandle::interrupt`] stops this run from elsewhere (a signal
    /// handler, another task).
    pub fn interrupt_handle(&self) -> SessionHandle {
        self.session.handle()
    }

    /// Interrupt the run: the model stream stops, running tools are killed, unanswered tool
    /// calls get an "interrupted" result, and the run ends with an error result.
    pub fn interrupt(&self) {
        self.session.interrupt();
    }

    /// The result, once the stream has ended.
    pub fn result(&self) -> Option<&ResultMessage> {
        self.result.as_ref()
    }

    /// Drive the run to its end, discarding frames, and return the result.
    pub async fn finish(mut self) -> ResultMessage {
        use futures::StreamExt;
        while self.next().await.is_some() {}
        self.result.take().unwrap_or_else(ended_without_result)
    }
}

impl Stream for Run<'_> {
    type Item = SdkMessage;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<SdkMessage>> {
        let this = &mut *self;
        loop {
            if this.done {
                return Poll::Ready(None);
            }
            let event = match this.session.events.poll_recv(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => {
                    this.done = true;
                    return Poll::Ready(None);
                }
                Poll::Ready(Some(e)) => e,
            };
            match event {
                Event::Frame(SdkMessage::Result(r)) => {
                    this.session.unfinished = this.session.unfinished.saturating_sub(1);
                    if this.skip > 0 {
                        this.skip -= 1;
                        continue;
                    }
                    this.done = true;
                    this.result = Some(r.clone());
                    return Poll::Ready(Some(SdkMessage::Result(r)));
                }
                Event::Frame(f) if this.skip == 0 => return Poll::Ready(Some(f)),
                Event::Delta(ev) if this.skip == 0 => {
                    return Poll::Ready(Some(SdkMessage::StreamEvent(
                        skiff_protocol::sdk::StreamEventMessage {
                            event: ev,
                            session_id: this.session.session_id.clone(),
                            parent_tool_use_id: None,
                            uuid: String::new(),
                        },
                    )));
                }
                Event::Request(r) => this.session.default_answer(r),
                _ => {}
            }
        }
    }
}

impl Drop for Run<'_> {
    fn drop(&mut self) {
        if !self.done {
            // Nobody reads this turn any more: stop it (its frames are skipped by the next run).
            self.session.interrupt();
        }
    }
}

fn ended_without_result() -> ResultMessage {
    // The session always produces a result; this only exists to avoid a panic path.
    ResultMessage {
        subtype: ResultSubtype::ErrorDuringExecution,
        is_error: true,
        duration_ms: 0,
        duration_api_ms: 0,
        num_turns: 0,
        result: None,
        stop_reason: None,
        session_id: String::new(),
        uuid: crate::frames::new_uuid(),
        total_cost_usd: 0.0,
        usage: Usage::default(),
        model_usage: Default::default(),
        permission_denials: Vec::new(),
        errors: vec!["the session ended without a result".into()],
        api_error_status: None,
        terminal_reason: None,
        changes: Vec::new(),
        extra: JsonMap::new(),
    }
}
