//! `--input-format stream-json`: the Agent SDKs' control protocol on stdin/stdout
//! (PROTOCOL.md §3). A client of the session actor like the REPL and `-p`: user messages from
//! stdin become turns (queued while one runs), frames go to stdout, the session's questions
//! (approvals, SDK hook callbacks) become `control_request`s and the host's answers come back
//! as `control_response`s; the host's own requests (`initialize`, `interrupt`,
//! `set_permission_mode`, …) are answered here. stdin EOF finishes the work and exits.

mod ask;
mod incoming;
mod initialize;
mod out;
mod sdk_servers;

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::{Value, json};
use skiff_core::permissions::{AskClient, PermissionEngine, not_granted};
use skiff_core::{
    Agent, Answer, ApprovalAnswer, ApprovalRequest, Event, Op, PermissionMode, Request, RequestId,
    RequestKind, Session, UserInput,
};
use skiff_protocol::control::{
    ControlFrame, ControlRequest, HookCallback, InterruptResponse, RewindFiles,
    RewindFilesResponse, SetModelResponse, SetPermissionModeResponse,
};
use skiff_protocol::sdk::SdkMessage;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

use crate::args::Args;
use incoming::{Incoming, parse_line};
use out::Out;
use sdk_servers::SdkServers;
use skiff_config::mcp::session::McpHandle;

/// What a request skiff sent the host was about.
enum Asked {
    Approval(ApprovalRequest),
    Callback,
}

/// The protocol's state.
struct Driver {
    out: Out,
    sdk: Arc<SdkServers>,
    agent: Option<Agent>,
    session: Option<Session>,
    engine: Arc<PermissionEngine>,
    mcp: Vec<McpHandle>,
    session_id: String,
    cwd: std::path::PathBuf,
    /// Requests sent to the host, by id, waiting for its answer.
    asked: HashMap<String, Asked>,
    /// Approvals go to the host (`--permission-prompt-tool stdio`).
    host_approves: bool,
    /// The host reads `session_state_changed` (CLAUDE_CODE_SDK_READS_SESSION_STATE).
    state_frames: bool,
    last_error: bool,
    /// stdin ended: the host can no longer answer, so its questions get the default answer.
    eof: bool,
    /// Custom commands and skills (`initialize.commands`).
    commands: Arc<skiff_core::commands::CommandSet>,
    /// Echo user messages back (`--replay-user-messages`).
    replay: bool,
    /// Every hook's frames (`--include-hook-events`); else SessionStart's only.
    hook_events: bool,
}

/// Run the protocol until stdin ends and the work is done.
pub async fn run_stream_json(args: Args) -> anyhow::Result<ExitCode> {
    let deltas = if args.include_partial_messages {
        skiff_core::DeltaMode::Frames
    } else {
        skiff_core::DeltaMode::Off
    };
    if let Ok(entry) = std::env::var("CLAUDE_CODE_ENTRYPOINT") {
        tracing::info!(entrypoint = %entry, "started by an Agent SDK");
    }
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    let out = Out { tx };
    let sdk = Arc::new(SdkServers::new(out.clone()));
    let built = crate::session::assemble(
        &args,
        deltas,
        Some(Arc::clone(&sdk) as Arc<dyn skiff_mcp::SdkChannel>),
        None,
    )?;
    let host_approves = args.permission_prompt_tool.as_deref() == Some("stdio");
    let mut agent = built.agent;
    if host_approves {
        agent = agent.with_approver(Arc::new(AskClient));
    }
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(mut line) = rx.recv().await {
            line.push('\n');
            if stdout.write_all(line.as_bytes()).await.is_err() || stdout.flush().await.is_err() {
                // The host is gone; keep draining so senders never block.
                while rx.recv().await.is_some() {}
                break;
            }
        }
    });
    let (in_tx, mut in_rx) = mpsc::unbounded_channel::<Incoming>();
    let reader = tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
        loop {
            match lines.next_line().await {
                Ok(Some(line)) => {
                    if let Some(msg) = parse_line(&line) {
                        let _ = in_tx.send(msg);
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    let _ = in_tx.send(Incoming::Bad(format!("reading stdin failed: {e}")));
                    break;
                }
            }
        }
        let _ = in_tx.send(Incoming::Eof);
    });
    let mut d = Driver {
        out,
        sdk,
        session_id: agent.config().session_id.clone(),
        cwd: agent.config().cwd.clone(),
        commands: Arc::clone(&agent.config().commands),
        replay: args.replay_user_messages,
        hook_events: args.include_hook_events,
        agent: Some(agent),
        session: None,
        engine: built.engine,
        mcp: vec![built.mcp],
        asked: HashMap::new(),
        host_approves,
        state_frames: std::env::var_os("CLAUDE_CODE_SDK_READS_SESSION_STATE").is_some(),
        last_error: false,
        eof: false,
    };
    let mut eof = false;
    loop {
        tokio::select! {
            msg = in_rx.recv(), if !eof => match msg.unwrap_or(Incoming::Eof) {
                Incoming::Eof => {
                    eof = true;
                    d.host_gone();
                    match d.session.as_mut() {
                        Some(s) => {
                            let _ = s.submit(Op::Shutdown);
                        }
                        None => break,
                    }
                }
                msg => d.incoming(msg),
            },
            ev = next_event(&mut d.session) => match ev {
                Some(ev) => d.event(ev),
                None => break,
            },
        }
    }
    reader.abort();
    if let Some(s) = d.session.take() {
        s.shutdown().await;
    }
    let code = if d.last_error {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    };
    drop(d);
    let _ = writer.await;
    Ok(code)
}

async fn next_event(session: &mut Option<Session>) -> Option<Event> {
    match session {
        Some(s) => s.next_event().await,
        None => std::future::pending().await,
    }
}

impl Driver {
    fn session(&mut self) -> &mut Session {
        if self.session.is_none()
            && let Some(agent) = self.agent.take()
        {
            self.session = Some(agent.spawn());
        }
        #[allow(clippy::expect_used)]
        self.session
            .as_mut()
            .expect("the agent is spawned on first use")
    }

    fn incoming(&mut self, msg: Incoming) {
        match msg {
            Incoming::User(input, uuid, message, verbatim) => {
                let uuid = uuid.unwrap_or_else(skiff_core::frames::new_uuid);
                if self.replay {
                    self.out.send(&json!({
                        "type": "user", "message": message, "parent_tool_use_id": null,
                        "session_id": self.session_id, "uuid": uuid, "isReplay": true,
                    }));
                }
                // The host composed it: delivered as written, no command dispatched.
                if verbatim {
                    let _ = self.session().submit(Op::Checkpoint(uuid));
                    if self.session().send_verbatim(input).is_err() {
                        self.system_error("the session has ended; the message was dropped");
                    }
                    return;
                }
                // `/compact [focus]`: compact now, after the work queued before it (a
                // `compact_boundary` frame reports it; a failure is a system error frame).
                if let UserInput::Text(text) = &input
                    && let Some(rest) = text.trim().strip_prefix("/compact")
                    && (rest.is_empty() || rest.starts_with(char::is_whitespace))
                {
                    let focus = Some(rest.trim().to_owned()).filter(|f| !f.is_empty());
                    if self.session().submit(Op::Compact(focus)).is_err() {
                        self.system_error("the session has ended; /compact was dropped");
                    }
                    return;
                }
                // `/clear`: a new conversation, after the work queued before it.
                if let UserInput::Text(text) = &input
                    && text.trim() == "/clear"
                {
                    if self.session().submit(Op::Clear).is_err() {
                        self.system_error("the session has ended; /clear was dropped");
                    }
                    return;
                }
                // The files as they are when this message's turn starts: `rewind_files` with
                // its uuid puts them back.
                let _ = self.session().submit(Op::Checkpoint(uuid));
                if self.session().send_message(input).is_err() {
                    self.system_error("the session has ended; the message was dropped");
                }
            }
            Incoming::Control { id, request } => self.control(&id, request),
            Incoming::Response { id, answer } => self.response(&id, answer),
            Incoming::Cancel => {}
            Incoming::Refused(reply) => self.out.frame(&reply),
            Incoming::Bad(why) => {
                tracing::warn!(%why, "bad input line");
                self.system_error(&format!("skipped an input line: {why}"));
            }
            Incoming::Eof => {}
        }
    }

    fn system_error(&self, message: &str) {
        self.out.send(&json!({
            "type": "system", "subtype": "error", "error": message,
            "session_id": self.session_id, "uuid": skiff_core::frames::new_uuid(),
        }));
    }

    /// A request from the host.
    fn control(&mut self, id: &str, request: ControlRequest) {
        match request {
            ControlRequest::Initialize(init) => self.initialize(id, &init),
            ControlRequest::Interrupt(_) => {
                if let Some(s) = &self.session {
                    s.interrupt();
                }
                self.out.success(id, &InterruptResponse::default());
            }
            ControlRequest::SetPermissionMode(r) => match r.mode.parse::<PermissionMode>() {
                Ok(m) => {
                    let _ = self.session().handle().set_permission_mode(m);
                    // The session sends `system/status` with the mode.
                    self.out.success(
                        id,
                        &SetPermissionModeResponse {
                            mode: m.as_str().to_owned(),
                        },
                    );
                }
                Err(e) => self.out.error(id, &e.to_string()),
            },
            ControlRequest::SetModel(r) => {
                let model = match r.model.as_deref() {
                    None | Some("default") => skiff_config::DEFAULT_MODEL.to_owned(),
                    Some(m) => skiff_llm::resolve_alias(m),
                };
                let _ = self.session().handle().set_model(model.clone());
                self.out.success(id, &SetModelResponse { model });
            }
            ControlRequest::SetMaxThinkingTokens(r) => {
                let tokens = r.max_thinking_tokens.and_then(|n| u32::try_from(n).ok());
                let _ = self.session().handle().set_max_thinking_tokens(tokens);
                self.out.ack(id);
            }
            ControlRequest::GetContextUsage(_) => self.context_usage(id),
            ControlRequest::McpStatus(_) => {
                let status = self.mcp_status();
                self.out.success(id, &status);
            }
            ControlRequest::RewindFiles(r) => self.rewind_files(id, &r),
            // Requests only skiff sends, and subtypes this version does not know.
            other => self
                .out
                .frame(&ControlFrame::unsupported(id, other.subtype())),
        }
    }

    /// `get_context_usage`: what fills the context window, answered after the work queued
    /// before the request.
    fn context_usage(&mut self, id: &str) {
        let answer = self.session().handle().context_usage();
        let out = self.out.clone();
        let id = id.to_owned();
        tokio::spawn(async move {
            match answer {
                Ok(rx) => match rx.await {
                    Ok(usage) => out.success(&id, &usage),
                    Err(_) => out.error(&id, "the session has ended"),
                },
                Err(_) => out.error(&id, "the session has ended"),
            }
        });
    }

    /// `rewind_files`: the files back as they were at a user message (after the work queued
    /// before the request), answered when done.
    fn rewind_files(&mut self, id: &str, request: &RewindFiles) {
        let answer = self.session().handle().rewind_files(
            request.user_message_id.clone(),
            request.dry_run == Some(true),
        );
        let out = self.out.clone();
        let id = id.to_owned();
        let failed = |error: String| RewindFilesResponse {
            can_rewind: false,
            error: Some(error),
            ..Default::default()
        };
        tokio::spawn(async move {
            let response = match answer {
                Ok(rx) => match rx.await {
                    Ok(Ok(report)) => RewindFilesResponse {
                        can_rewind: true,
                        error: None,
                        files_changed: Some(
                            report
                                .files_changed
                                .iter()
                                .map(|p| p.display().to_string())
                                .collect(),
                        ),
                        insertions: Some(report.insertions as u64),
                        deletions: Some(report.deletions as u64),
                    },
                    Ok(Err(e)) => failed(e),
                    Err(_) => failed("the session has ended".to_owned()),
                },
                Err(_) => failed("the session has ended".to_owned()),
            };
            out.success(&id, &response);
        });
    }

    /// The host's answer to one of skiff's requests.
    fn response(&mut self, id: &str, answer: Result<Value, String>) {
        let answer = match self.sdk.resolve(id, answer) {
            None => return,
            Some(a) => a,
        };
        let Some(asked) = self.asked.remove(id) else {
            tracing::debug!(%id, "an answer to no pending request; ignored");
            return;
        };
        let answer = match asked {
            Asked::Approval(request) => {
                let (answer, updates) = ask::read_answer(&request, answer);
                // Rules and mode changes for the rest of the session, applied (and saved where
                // their destination says) by the session before the call runs.
                if let Some(s) = &self.session
                    && !updates.is_empty()
                {
                    let _ = s.handle().update_permissions(updates);
                }
                Answer::Approval(answer)
            }
            Asked::Callback => Answer::Json(answer.unwrap_or_else(|e| {
                tracing::warn!(error = %e, "an SDK hook callback failed");
                json!({})
            })),
        };
        if let Some(s) = &self.session {
            let _ = s.reply(RequestId(id.to_owned()), answer);
        }
    }

    /// Something the session reports.
    fn event(&mut self, ev: Event) {
        match ev {
            Event::Frame(frame) => {
                if let SdkMessage::Result(r) = &frame {
                    self.last_error = r.is_error;
                }
                if !crate::front::hook_events::withheld(&frame, self.hook_events) {
                    self.out.send(&frame);
                }
            }
            Event::Request(r) => self.request(r),
            // As Claude Code reports a mode change: a status frame carrying the mode.
            // The session's own `system/status` frame reports it.
            Event::ModeChanged(_) => {}
            Event::Compacted(Err(e)) => {
                self.system_error(&format!("/compact failed: {e}"));
            }
            Event::RequestCancelled(id) if self.asked.remove(&id.0).is_some() => {
                self.out.frame(&ControlFrame::cancel(id.0));
            }
            Event::Running | Event::Idle if self.state_frames => {
                let state = if matches!(ev, Event::Running) {
                    "running"
                } else {
                    "idle"
                };
                self.out.send(&json!({
                    "type": "system", "subtype": "session_state_changed", "state": state,
                    "sdk_host_only": true, "uuid": skiff_core::frames::new_uuid(),
                    "session_id": self.session_id,
                }));
            }
            _ => {}
        }
    }

    /// stdin ended: pending questions get the default answer, and so will later ones.
    fn host_gone(&mut self) {
        self.eof = true;
        for (id, asked) in std::mem::take(&mut self.asked) {
            let answer = match asked {
                Asked::Approval(a) => unanswered(&a),
                Asked::Callback => Answer::Json(json!({})),
            };
            if let Some(s) = &self.session {
                let _ = s.reply(RequestId(id), answer);
            }
        }
    }

    fn request(&mut self, r: Request) {
        if self.eof {
            let answer = match &r.kind {
                RequestKind::Approval(a) => unanswered(a),
                _ => Answer::Json(json!({})),
            };
            if let Some(s) = &self.session {
                let _ = s.reply(r.id, answer);
            }
            return;
        }
        match r.kind {
            RequestKind::Approval(a) => {
                if !self.host_approves {
                    if let Some(s) = &self.session {
                        let _ = s.reply(r.id, unanswered(&a));
                    }
                    return;
                }
                let request = ask::can_use_tool(&a, &self.engine, &self.cwd);
                self.out.frame(&ControlFrame::request(
                    r.id.0.clone(),
                    ControlRequest::CanUseTool(Box::new(request)),
                ));
                self.asked.insert(r.id.0, Asked::Approval(a));
            }
            RequestKind::Callback {
                callback_id,
                input,
                tool_use_id,
            } => {
                let tool_use_id = tool_use_id.unwrap_or_else(skiff_core::frames::new_uuid);
                self.out.frame(&ControlFrame::request(
                    r.id.0.clone(),
                    ControlRequest::HookCallback(HookCallback {
                        callback_id,
                        input,
                        tool_use_id: Some(tool_use_id),
                        extra: Default::default(),
                    }),
                ));
                self.asked.insert(r.id.0, Asked::Callback);
            }
            _ => {
                tracing::warn!("a request kind the SDK protocol cannot carry; answered empty");
                if let Some(s) = &self.session {
                    let _ = s.reply(r.id, Answer::Json(json!({})));
                }
            }
        }
    }
}

/// The answer to an approval nobody can give (no prompt tool, or the host is gone): denied,
/// with the reason the rules gave, as `-p` without a prompt tool does.
fn unanswered(a: &ApprovalRequest) -> Answer {
    Answer::Approval(ApprovalAnswer::deny(if a.reason.is_empty() {
        not_granted(&a.tool_name)
    } else {
        a.reason.clone()
    }))
}
