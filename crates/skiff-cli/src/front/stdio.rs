//! `--input-format stream-json`: the Agent SDKs' control protocol on stdin/stdout
//! (PROTOCOL.md §3). A client of the session actor like the REPL and `-p`: user messages from
//! stdin become turns (queued while one runs), frames go to stdout, the session's questions
//! (approvals, SDK hook callbacks) become `control_request`s and the host's answers come back
//! as `control_response`s; the host's own requests (`initialize`, `interrupt`,
//! `set_permission_mode`, …) are answered here. stdin EOF finishes the work and exits.

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use skiff_core::hooks::SdkHooks;
use skiff_core::permissions::{AskClient, PermissionEngine, PermissionUpdate, not_granted};
use skiff_core::{
    Agent, Answer, ApprovalAnswer, ApprovalRequest, Event, Op, PermissionMode, Request, RequestId,
    RequestKind, Session, UserInput,
};
use skiff_protocol::ContentBlock;
use skiff_protocol::sdk::SdkMessage;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

use crate::args::Args;
use skiff_config::mcp::session::McpHandle;

/// One line of stdin, understood.
#[derive(Debug)]
enum Incoming {
    /// A user message: its content, its `uuid` when the host gave one, the message object
    /// (echoed with `--replay-user-messages`), and whether it is delivered as written
    /// (`client_composed`: the SDKs' `verbatim_prompts`).
    User(UserInput, Option<String>, Value, bool),
    Control {
        id: String,
        request: Value,
    },
    Response {
        id: String,
        answer: Result<Value, String>,
    },
    Cancel,
    Bad(String),
    Eof,
}

/// Parse one stdin line (blank lines are `None`).
fn parse_line(line: &str) -> Option<Incoming> {
    let line = line.trim();
    if line.is_empty() {
        return None;
    }
    let v: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => return Some(Incoming::Bad(format!("not JSON: {e}"))),
    };
    let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
    Some(match kind {
        "user" => match user_input(&v) {
            Ok(input) => Incoming::User(
                input,
                v.get("uuid").and_then(Value::as_str).map(str::to_owned),
                v.get("message").cloned().unwrap_or(Value::Null),
                v.get("client_composed").and_then(Value::as_bool) == Some(true),
            ),
            Err(e) => Incoming::Bad(e),
        },
        "control_request" => match (
            v.get("request_id").and_then(Value::as_str),
            v.get("request"),
        ) {
            (Some(id), Some(request)) if request.is_object() => Incoming::Control {
                id: id.to_owned(),
                request: request.clone(),
            },
            _ => Incoming::Bad("a control_request needs request_id and request".into()),
        },
        "control_response" => {
            let r = v.get("response").unwrap_or(&Value::Null);
            let Some(id) = r.get("request_id").and_then(Value::as_str) else {
                return Some(Incoming::Bad(
                    "a control_response needs response.request_id".into(),
                ));
            };
            let answer = if r.get("subtype").and_then(Value::as_str) == Some("error") {
                Err(r
                    .get("error")
                    .and_then(Value::as_str)
                    .unwrap_or("error")
                    .to_owned())
            } else {
                Ok(r.get("response").cloned().unwrap_or_else(|| json!({})))
            };
            Incoming::Response {
                id: id.to_owned(),
                answer,
            }
        }
        "control_cancel_request" => Incoming::Cancel,
        other => Incoming::Bad(format!("unknown message type {other:?}")),
    })
}

/// A `user` message's content: a string, or content blocks (text, images, documents).
fn user_input(v: &Value) -> Result<UserInput, String> {
    let content = v
        .get("message")
        .and_then(|m| m.get("content"))
        .ok_or("a user message needs message.content")?;
    match content {
        Value::String(s) => Ok(UserInput::Text(s.clone())),
        Value::Array(_) => serde_json::from_value::<Vec<ContentBlock>>(content.clone())
            .map(UserInput::Blocks)
            .map_err(|e| format!("invalid content blocks in a user message: {e}")),
        _ => Err("message.content must be a string or an array of content blocks".into()),
    }
}

/// Frames to stdout, one JSON line each, in order.
#[derive(Clone)]
struct Out {
    tx: mpsc::UnboundedSender<String>,
}

impl Out {
    fn send(&self, v: &impl serde::Serialize) {
        match serde_json::to_string(v) {
            Ok(line) => {
                let _ = self.tx.send(line);
            }
            Err(e) => tracing::error!(error = %e, "cannot serialize a frame"),
        }
    }

    fn success(&self, id: &str, response: Value) {
        self.send(&json!({"type": "control_response", "response": {
            "subtype": "success", "request_id": id, "response": response}}));
    }

    fn error(&self, id: &str, error: &str, code: Option<&str>) {
        let mut r = json!({"subtype": "error", "request_id": id, "error": error});
        if let Some(c) = code {
            r["error_code"] = json!(c);
        }
        self.send(&json!({"type": "control_response", "response": r}));
    }
}

/// The host's in-process MCP servers, reached with `mcp_message` requests.
struct SdkServers {
    out: Out,
    /// Requests in flight: their JSON-RPC id and where the reply goes.
    pending: Mutex<HashMap<String, (Value, mpsc::UnboundedSender<Value>)>>,
    next: AtomicU64,
}

impl skiff_mcp::SdkChannel for SdkServers {
    fn send(&self, server: &str, message: Value, replies: mpsc::UnboundedSender<Value>) {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let id = format!("mcp_{n}_{}", &skiff_core::frames::new_uuid()[..8]);
        if let Some(rpc_id) = message
            .get("id")
            .filter(|_| message.get("method").is_some())
            && let Ok(mut pending) = self.pending.lock()
        {
            pending.insert(id.clone(), (rpc_id.clone(), replies));
        }
        self.out
            .send(&json!({"type": "control_request", "request_id": id,
            "request": {"subtype": "mcp_message", "server_name": server, "message": message}}));
    }
}

impl SdkServers {
    /// Route the host's answer to an `mcp_message` request; `None` when it was one (handled),
    /// else the answer back for the other kinds of request.
    fn resolve(&self, id: &str, answer: Result<Value, String>) -> Option<Result<Value, String>> {
        if !id.starts_with("mcp_") {
            return Some(answer);
        }
        let entry = self.pending.lock().ok().and_then(|mut p| p.remove(id));
        let Some((rpc_id, replies)) = entry else {
            // A notification's ack, or an unknown id.
            return None;
        };
        let reply = match answer {
            Ok(v) => v.get("mcp_response").cloned().unwrap_or_else(|| {
                json!({"jsonrpc": "2.0", "id": rpc_id, "error": {"code": -32603,
                    "message": "the SDK host answered without mcp_response"}})
            }),
            Err(e) => json!({"jsonrpc": "2.0", "id": rpc_id,
                "error": {"code": -32603, "message": e}}),
        };
        let _ = replies.send(reply);
        None
    }
}

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
    let sdk = Arc::new(SdkServers {
        out: out.clone(),
        pending: Mutex::default(),
        next: AtomicU64::new(1),
    });
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
            Incoming::Control { id, request } => self.control(&id, &request),
            Incoming::Response { id, answer } => self.response(&id, answer),
            Incoming::Cancel => {}
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
    fn control(&mut self, id: &str, request: &Value) {
        let subtype = request.get("subtype").and_then(Value::as_str).unwrap_or("");
        match subtype {
            "initialize" => self.initialize(id, request),
            "interrupt" => {
                if let Some(s) = &self.session {
                    s.interrupt();
                }
                self.out.success(id, json!({"still_queued": []}));
            }
            "set_permission_mode" => {
                let mode = request.get("mode").and_then(Value::as_str).unwrap_or("");
                match mode.parse::<PermissionMode>() {
                    Ok(m) => {
                        let _ = self.session().handle().set_permission_mode(m);
                        // The session sends `system/status` with the mode.
                        self.out.success(id, json!({"mode": m.as_str()}));
                    }
                    Err(e) => self.out.error(id, &e.to_string(), None),
                }
            }
            "set_model" => {
                let model = match request.get("model").and_then(Value::as_str) {
                    None | Some("default") => skiff_config::DEFAULT_MODEL.to_owned(),
                    Some(m) => skiff_llm::resolve_alias(m),
                };
                let _ = self.session().handle().set_model(model.clone());
                self.out.success(id, json!({"model": model}));
            }
            "set_max_thinking_tokens" => {
                let tokens = request
                    .get("max_thinking_tokens")
                    .and_then(Value::as_u64)
                    .and_then(|n| u32::try_from(n).ok());
                let _ = self.session().handle().set_max_thinking_tokens(tokens);
                self.out.success(id, json!({}));
            }
            "get_context_usage" => self.context_usage(id),
            "mcp_status" => {
                let servers = self.mcp_status();
                self.out.success(id, json!({"mcpServers": servers}));
            }
            "rewind_files" => self.rewind_files(id, request),
            other => self.out.error(
                id,
                &format!("Unsupported control request subtype: {other}"),
                Some("unsupported_request"),
            ),
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
                    Ok(usage) => match serde_json::to_value(&usage) {
                        Ok(v) => out.success(&id, v),
                        Err(e) => out.error(&id, &e.to_string(), None),
                    },
                    Err(_) => out.error(&id, "the session has ended", None),
                },
                Err(_) => out.error(&id, "the session has ended", None),
            }
        });
    }

    /// `rewind_files`: the files back as they were at a user message (after the work queued
    /// before the request), answered when done.
    fn rewind_files(&mut self, id: &str, request: &Value) {
        let Some(message) = request.get("user_message_id").and_then(Value::as_str) else {
            self.out
                .error(id, "rewind_files needs a user_message_id", None);
            return;
        };
        let dry_run = request.get("dry_run").and_then(Value::as_bool) == Some(true);
        let answer = self.session().handle().rewind_files(message, dry_run);
        let out = self.out.clone();
        let id = id.to_owned();
        tokio::spawn(async move {
            let response = match answer {
                Ok(rx) => match rx.await {
                    Ok(Ok(report)) => json!({
                        "canRewind": true,
                        "filesChanged": report.files_changed,
                        "insertions": report.insertions,
                        "deletions": report.deletions,
                    }),
                    Ok(Err(e)) => json!({"canRewind": false, "error": e}),
                    Err(_) => json!({"canRewind": false, "error": "the session has ended"}),
                },
                Err(_) => json!({"canRewind": false, "error": "the session has ended"}),
            };
            out.success(&id, response);
        });
    }

    fn initialize(&mut self, id: &str, request: &Value) {
        let mut hooks_applied = true;
        let hooks = request.get("hooks").cloned().unwrap_or(Value::Null);
        match self.agent.take() {
            Some(agent) => {
                let (sdk, warnings) = SdkHooks::from_initialize(&hooks, agent.requester());
                for w in warnings {
                    eprintln!("Warning: {w}");
                }
                let mut agent = if sdk.is_empty() {
                    agent
                } else {
                    agent.add_hooks(Arc::new(sdk))
                };
                if let Some(late) = self.sdk_servers(request) {
                    agent = agent.with_late_tools(late);
                }
                if let Err(e) = crate::front::sdk_options::apply(&mut agent, request) {
                    self.agent = Some(agent);
                    self.out.error(id, &e, None);
                    return;
                }
                self.agent = Some(agent);
            }
            // A second initialize, or one after the first message: hooks cannot be added.
            None => hooks_applied = hooks.is_null(),
        }
        let mode = self
            .agent
            .as_ref()
            .map(|a| a.config().permission_mode.as_str().to_owned())
            .unwrap_or_else(|| "default".to_owned());
        let model = self
            .agent
            .as_ref()
            .map(|a| a.config().model.clone())
            .unwrap_or_default();
        let api_key_source = self
            .agent
            .as_ref()
            .map(|a| a.config().api_key_source.clone())
            .unwrap_or_else(|| "none".to_owned());
        let api_provider = self
            .agent
            .as_ref()
            .and_then(|a| a.config().init_extra.get("cloud"))
            .and_then(|c| c.get("provider"))
            .and_then(Value::as_str)
            .unwrap_or("firstParty")
            .to_owned();
        let commands = crate::front::sdk_options::commands(&self.commands);
        let agents = self
            .agent
            .as_ref()
            .map(|a| crate::front::sdk_options::agents(&a.config().agents))
            .unwrap_or_default();
        self.out.success(
            id,
            json!({
                "commands": commands,
                "agents": agents,
                "output_style": "default",
                "available_output_styles": ["default"],
                "models": [
                    {"value": "default", "displayName": "Default", "description": model},
                    {"value": "sonnet", "displayName": "Sonnet", "description": skiff_llm::resolve_alias("sonnet")},
                    {"value": "opus", "displayName": "Opus", "description": skiff_llm::resolve_alias("opus")},
                    {"value": "haiku", "displayName": "Haiku", "description": skiff_llm::resolve_alias("haiku")},
                ],
                "account": {"apiKeySource": api_key_source, "apiProvider": api_provider},
                "pid": std::process::id(),
                "claude_code_version": skiff_core::COMPAT_VERSION,
                "skiff_version": skiff_core::SKIFF_VERSION,
                "current_permission_mode": mode,
                "hooks_applied": hooks_applied,
                "hook_on_failure_supported": true,
            }),
        );
        // The session starts now, so the first message is answered at once.
        let _ = self.session();
    }

    /// The TypeScript SDK names its in-process servers in `initialize.sdkMcpServers` (the
    /// Python SDK puts them in --mcp-config): connect those not configured already.
    fn sdk_servers(&mut self, request: &Value) -> Option<skiff_core::LateTools> {
        let known: Vec<String> = self.mcp.iter().flat_map(|m| m.names()).collect();
        let servers: Vec<skiff_mcp::ServerConfig> = request
            .get("sdkMcpServers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|n| !known.iter().any(|k| k == n))
            .map(|name| skiff_mcp::ServerConfig {
                name: name.to_owned(),
                scope: skiff_mcp::Scope::Dynamic,
                transport: skiff_mcp::Transport::Sdk,
                timeout: None,
            })
            .collect();
        if servers.is_empty() {
            return None;
        }
        let engine = Arc::clone(&self.engine);
        let (late, handle) = skiff_config::mcp::session::start(
            servers,
            Vec::new(),
            &self.cwd,
            move |tool| engine.removes_tool(tool),
            Some(Arc::clone(&self.sdk) as Arc<dyn skiff_mcp::SdkChannel>),
            // In-process servers: no environment of their own.
            skiff_tools::ExtraEnv::default(),
            self.commands.mcp(),
        );
        self.mcp.push(handle);
        late
    }

    fn mcp_status(&self) -> Vec<Value> {
        let reports: Vec<skiff_mcp::ServerReport> = self
            .mcp
            .iter()
            .flat_map(|m| m.reports().unwrap_or_default())
            .collect();
        reports
            .into_iter()
            .map(|r| {
                let mut m = Map::new();
                m.insert("name".into(), json!(r.name));
                m.insert("status".into(), json!(r.status.as_str()));
                m.insert("scope".into(), json!(r.scope.as_str()));
                if let Some((name, version)) = r.server_info {
                    m.insert(
                        "serverInfo".into(),
                        json!({"name": name, "version": version}),
                    );
                }
                if let Some(e) = r.status.error() {
                    m.insert("error".into(), json!(e));
                }
                m.insert(
                    "tools".into(),
                    Value::Array(r.tools.iter().map(|t| json!({"name": t})).collect()),
                );
                Value::Object(m)
            })
            .collect()
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
            Asked::Approval(request) => Answer::Approval(self.approval(&request, answer)),
            Asked::Callback => Answer::Json(answer.unwrap_or_else(|e| {
                tracing::warn!(error = %e, "an SDK hook callback failed");
                json!({})
            })),
        };
        if let Some(s) = &self.session {
            let _ = s.reply(RequestId(id.to_owned()), answer);
        }
    }

    /// A `can_use_tool` answer: allow (with `updatedInput`, `updatedPermissions`) or deny.
    fn approval(&self, request: &ApprovalRequest, answer: Result<Value, String>) -> ApprovalAnswer {
        let v = match answer {
            Ok(v) => v,
            Err(e) => return ApprovalAnswer::deny(format!("The permission check failed: {e}")),
        };
        match v.get("behavior").and_then(Value::as_str) {
            Some("allow") => {
                if let Some(updates) = v.get("updatedPermissions").and_then(Value::as_array) {
                    self.apply_updates(updates);
                }
                ApprovalAnswer::Allow {
                    updated_input: v.get("updatedInput").filter(|i| i.is_object()).cloned(),
                }
            }
            _ => ApprovalAnswer::Deny {
                message: v
                    .get("message")
                    .and_then(Value::as_str)
                    .filter(|m| !m.is_empty())
                    .map_or_else(|| not_granted(&request.tool_name), str::to_owned),
                interrupt: v.get("interrupt").and_then(Value::as_bool) == Some(true),
            },
        }
    }

    /// `updatedPermissions`: rules and mode changes for the rest of the session, applied (and
    /// saved where their destination says) by the session before the call runs.
    fn apply_updates(&self, updates: &[Value]) {
        let parsed: Vec<PermissionUpdate> = updates
            .iter()
            .filter_map(|u| match PermissionUpdate::from_sdk(u) {
                Ok(u) => Some(u),
                Err(e) => {
                    tracing::warn!(error = %e, "permission update not applied");
                    None
                }
            })
            .collect();
        if let Some(s) = &self.session
            && !parsed.is_empty()
        {
            let _ = s.handle().update_permissions(parsed);
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
                self.out
                    .send(&json!({"type": "control_cancel_request", "request_id": id.0}));
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
                let rules =
                    self.engine
                        .suggest_rules(&a.tool_name, &a.input, PermissionMode::Default);
                let suggestions = if rules.is_empty() {
                    Vec::new()
                } else {
                    vec![PermissionUpdate::allow_always(rules).to_sdk()]
                };
                let mut req = json!({
                    "subtype": "can_use_tool",
                    "tool_name": a.tool_name,
                    "display_name": a.tool_name,
                    "input": a.input,
                    "permission_suggestions": suggestions,
                    "tool_use_id": a.tool_use_id,
                });
                // As Claude Code: edits and commands may also switch the session to acceptEdits;
                // a file tool names the path it wants.
                if matches!(
                    a.tool_name.as_str(),
                    "Bash" | "Edit" | "Write" | "MultiEdit" | "NotebookEdit"
                ) && let Some(list) = req["permission_suggestions"].as_array_mut()
                {
                    list.push(
                        json!({"type": "setMode", "mode": "acceptEdits", "destination": "session"}),
                    );
                }
                if let Some(path) = a
                    .input
                    .get("file_path")
                    .or_else(|| a.input.get("notebook_path"))
                    .and_then(Value::as_str)
                {
                    req["blocked_path"] = json!(self.cwd.join(path).display().to_string());
                }
                if let Some(d) = a.input.get("description").and_then(Value::as_str) {
                    req["description"] = json!(d);
                }
                if !a.reason.is_empty() {
                    req["decision_reason"] = json!(a.reason);
                }
                if let Some(server) = a
                    .tool_name
                    .strip_prefix("mcp__")
                    .and_then(|r| r.split("__").next())
                {
                    req["mcp_server"] = json!(server);
                }
                self.out.send(
                    &json!({"type": "control_request", "request_id": r.id.0, "request": req}),
                );
                self.asked.insert(r.id.0, Asked::Approval(a));
            }
            RequestKind::Callback {
                callback_id,
                input,
                tool_use_id,
            } => {
                let tool_use_id = tool_use_id.unwrap_or_else(skiff_core::frames::new_uuid);
                self.out.send(&json!({
                    "type": "control_request", "request_id": r.id.0,
                    "request": {"subtype": "hook_callback", "callback_id": callback_id,
                                "input": input, "tool_use_id": tool_use_id},
                }));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_understood_or_reported() {
        assert!(parse_line("  \r").is_none());
        assert!(matches!(parse_line("{nope"), Some(Incoming::Bad(_))));
        assert!(matches!(
            parse_line(r#"{"type":"user","session_id":"","message":{"role":"user","content":"hi"},"parent_tool_use_id":null}"#),
            Some(Incoming::User(UserInput::Text(t), _, _, false)) if t == "hi"
        ));
        assert!(matches!(
            parse_line(r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA"}}]}}"#),
            Some(Incoming::User(UserInput::Blocks(b), _, _, _)) if b.len() == 2
        ));
        assert!(matches!(
            parse_line(r#"{"type":"user","message":{"role":"user","content":"/clear"},"client_composed":true}"#),
            Some(Incoming::User(UserInput::Text(t), _, _, true)) if t == "/clear"
        ));
        assert!(matches!(
            parse_line(r#"{"type":"user","message":{"content":5}}"#),
            Some(Incoming::Bad(_))
        ));
        assert!(matches!(
            parse_line(r#"{"type":"control_request","request_id":"r1","request":{"subtype":"interrupt"}}"#),
            Some(Incoming::Control { id, .. }) if id == "r1"
        ));
        assert!(matches!(
            parse_line(r#"{"type":"control_response","response":{"subtype":"error","request_id":"x","error":"boom"}}"#),
            Some(Incoming::Response { answer: Err(e), .. }) if e == "boom"
        ));
        assert!(matches!(
            parse_line(r#"{"type":"mystery"}"#),
            Some(Incoming::Bad(_))
        ));
    }
}
