//! `skiff acp`: the Agent Client Protocol (JSON-RPC 2.0 on stdin/stdout) for editors — Zed,
//! JetBrains, Neovim and the other ACP clients. Each ACP session is a skiff session built as
//! the command line would build it (settings, trust, hooks, permissions, memory, MCP servers,
//! plus the editor's), driven by its own task (`session.rs`) so that the connection's
//! dispatch loop never waits for a turn and `session/cancel` gets through at once.
//!
//! Requests served: `initialize`, `session/new`, `session/load`, `session/list`,
//! `session/prompt`, `session/cancel`, `session/set_mode`, `session/set_config_option`,
//! `session/set_model`, `session/close`. The agent asks the editor `session/request_permission`
//! and, when it offers them, `fs/read_text_file` and `fs/write_text_file`.

mod files;
mod history;
mod listing;
mod mcp;
mod modes;
mod permission;
mod prompt;
mod session;
mod slash;
mod tools;
mod updates;

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, ClientCapabilities, CloseSessionRequest,
    CloseSessionResponse, ConfigOptionUpdate, Implementation, InitializeRequest,
    InitializeResponse, ListSessionsRequest, LoadSessionRequest, LoadSessionResponse,
    McpCapabilities, McpServer, NewSessionRequest, NewSessionResponse, PromptCapabilities,
    PromptRequest, PromptResponse, SessionAdditionalDirectoriesCapabilities, SessionCapabilities,
    SessionCloseCapabilities, SessionConfigOption, SessionId, SessionListCapabilities,
    SessionNotification, SessionUpdate, SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse, SetSessionModeRequest, SetSessionModeResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{
    Client, Error, ErrorCode, JsonRpcResponse, on_receive_notification, on_receive_request,
};
use serde::{Deserialize, Serialize};

use skiff_config::Overrides;
use skiff_core::permissions::AskClient;
use skiff_core::{DeltaMode, PermissionMode, SessionHandle};
use tokio::sync::{mpsc, oneshot};

use crate::args::Args;
use session::{Cmd, State};

/// The command line of `skiff acp FLAGS…`: the flags after `acp` parse as a run's flags
/// (`skiff acp --model opus --settings s.json`); `n` is how many words clap left to `acp`.
pub fn command_line(n: usize) -> Args {
    use clap::Parser;
    let argv = Args::without_command_token(std::env::args_os().collect(), "acp", n);
    let mut args = Args::try_parse_from(argv).unwrap_or_else(|e| e.exit());
    args.normalize();
    args
}

/// Serve ACP on stdin/stdout until the editor closes stdin; every session starts from the
/// command line's flags.
pub fn main(args: Args) -> anyhow::Result<ExitCode> {
    let base = crate::session::overrides(&args);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| anyhow::anyhow!("could not start the async runtime: {e}"))?;
    runtime.block_on(serve(base))
}

/// `session/set_model`: the model picker of editors that predate config options (Zed's
/// `unstable_session_model`).
#[derive(Debug, Clone, Serialize, Deserialize, agent_client_protocol::JsonRpcRequest)]
#[request(method = "session/set_model", response = SetModelResponse)]
#[serde(rename_all = "camelCase")]
pub struct SetModelRequest {
    /// The session.
    pub session_id: SessionId,
    /// A model id or alias (`opus`).
    pub model_id: String,
}

/// The empty answer to `session/set_model`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, agent_client_protocol::JsonRpcResponse)]
pub struct SetModelResponse {}

/// One open session, as the protocol side sees it.
struct Entry {
    tx: mpsc::UnboundedSender<Cmd>,
    handle: SessionHandle,
    state: Arc<Mutex<State>>,
    models: Vec<String>,
    task: tokio::task::JoinHandle<()>,
}

/// A session just opened.
struct Opened {
    id: SessionId,
    custom: Arc<skiff_core::commands::CommandSet>,
    cwd: PathBuf,
    history: Vec<skiff_protocol::Message>,
    mode: PermissionMode,
    model: String,
    models: Vec<String>,
    sandboxed: bool,
}

impl Opened {
    fn state(&self) -> session::State {
        session::State {
            mode: self.mode,
            model: self.model.clone(),
            sandboxed: self.sandboxed,
        }
    }
}

/// What the editor asks for in `session/new` and `session/load`.
struct Open {
    cwd: PathBuf,
    dirs: Vec<PathBuf>,
    mcp: Vec<McpServer>,
    /// `session/load`: this saved session.
    load: Option<String>,
}

/// The connection's state.
struct Server {
    /// The command line's flags, the base of every session.
    base: Overrides,
    /// What the editor offers (from `initialize`).
    client: Mutex<ClientCapabilities>,
    sessions: Mutex<HashMap<String, Entry>>,
}

fn internal(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::INTERNAL_ERROR, message)
}

fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::INVALID_PARAMS, message)
}

fn not_found(id: &SessionId) -> Error {
    agent_client_protocol::v1::schema::Error::session_not_found(id.clone()).into()
}

/// A set-up failure as the editor sees it: a mistake in what it sent (`invalid_params`), or an
/// internal error with skiff's message (no API key, unreadable settings…).
fn build_error(e: &skiff_config::ConfigError) -> Error {
    if e.is_usage() {
        invalid(e.to_string())
    } else {
        internal(e.to_string())
    }
}

impl Server {
    fn entry<T>(&self, id: &SessionId, f: impl FnOnce(&Entry) -> T) -> Result<T, Error> {
        let sessions = self.sessions.lock().map_err(|_| internal("poisoned"))?;
        sessions.get(&*id.0).map(f).ok_or_else(|| not_found(id))
    }

    fn initialize(&self, req: InitializeRequest) -> InitializeResponse {
        if let Ok(mut c) = self.client.lock() {
            *c = req.client_capabilities;
        }
        InitializeResponse::new(ProtocolVersion::V1)
            .agent_capabilities(
                AgentCapabilities::new()
                    .load_session(true)
                    .prompt_capabilities(
                        PromptCapabilities::new().image(true).embedded_context(true),
                    )
                    .mcp_capabilities(McpCapabilities::new().http(true).sse(true))
                    .session_capabilities(
                        SessionCapabilities::new()
                            .list(SessionListCapabilities::new())
                            .additional_directories(SessionAdditionalDirectoriesCapabilities::new())
                            .close(SessionCloseCapabilities::new()),
                    ),
            )
            .agent_info(
                Implementation::new("skiff", env!("CARGO_PKG_VERSION")).title("skiff".to_owned()),
            )
    }

    /// Build and start a session for the editor.
    fn open(&self, cx: &ConnectionTo<Client>, o: Open) -> Result<Opened, Error> {
        if !o.cwd.is_absolute() {
            return Err(invalid(format!(
                "cwd must be an absolute path, not {}",
                o.cwd.display()
            )));
        }
        let mut overrides = self.base.clone();
        overrides.cwd = Some(o.cwd.clone());
        overrides.add_dirs.extend(o.dirs);
        overrides.session.continue_latest = false;
        overrides.session.fork = false;
        let id = match &o.load {
            Some(id) => {
                let home = crate::session::skiff_home().map_err(|e| internal(format!("{e:#}")))?;
                let cwd = std::fs::canonicalize(&o.cwd)
                    .map_err(|e| invalid(format!("{}: {e}", o.cwd.display())))?;
                let sid = SessionId::new(id.as_str());
                let path = skiff_core::transcript::session_path(&home, &cwd, id);
                if !skiff_core::transcript::is_valid_session_id(id) || !path.is_file() {
                    return Err(not_found(&sid));
                }
                // The session comes back in the mode it was last in.
                if let Some(mode) = skiff_core::transcript::last_permission_mode(&path)
                    .filter(|m| m.parse::<PermissionMode>().is_ok())
                {
                    overrides.permission_mode = Some(mode);
                }
                overrides.session.resume = Some(id.clone());
                overrides.session.session_id = None;
                id.clone()
            }
            None => {
                let id = skiff_core::frames::new_uuid();
                overrides.session.resume = None;
                overrides.session.session_id = Some(id.clone());
                id
            }
        };
        overrides.mcp_servers.extend(mcp::servers(&o.mcp));
        let caps = self.client.lock().map(|c| c.clone()).unwrap_or_default();
        let files = (caps.fs.read_text_file || caps.fs.write_text_file).then(|| {
            Arc::new(files::EditorFiles {
                cx: cx.clone(),
                session_id: SessionId::new(id.as_str()),
                read: caps.fs.read_text_file,
                write: caps.fs.write_text_file,
            }) as Arc<dyn skiff_tools::FileAccess>
        });
        let built = crate::session::assemble_overrides(overrides, DeltaMode::Raw, None, files)
            .map_err(|e| build_error(&e))?;
        let mut agent = built.agent.with_approver(Arc::new(AskClient));
        // A running command's output goes to the editor as it comes (the command still runs
        // in skiff's sandbox).
        agent.config_mut().tool_output = true;
        let cwd = agent.config().cwd.clone();
        let custom = Arc::clone(&agent.config().commands);
        let history = agent.history().to_vec();
        let mode = agent.config().permission_mode;
        let model = agent.config().model.clone();
        let models = modes::models(&model, built.local);
        let sandboxed = built.sandbox.runs_commands_unasked();
        let state = Arc::new(Mutex::new(State {
            mode,
            model: model.clone(),
            sandboxed,
        }));
        let sid = SessionId::new(id.as_str());
        let running = agent.spawn();
        let handle = running.handle();
        let (tx, task) = session::spawn(
            session::Parts {
                id: sid.clone(),
                cx: cx.clone(),
                engine: built.engine,
                cwd: cwd.clone(),
                state: Arc::clone(&state),
                models: models.clone(),
                mcp: built.mcp,
                sandbox: built.sandbox,
                custom: Arc::clone(&custom),
            },
            running,
        );
        let entry = Entry {
            tx,
            handle,
            state,
            models: models.clone(),
            task,
        };
        if let Ok(mut sessions) = self.sessions.lock()
            && let Some(old) = sessions.insert(id, entry)
        {
            let _ = old.tx.send(Cmd::Close);
        }
        Ok(Opened {
            id: sid,
            custom,
            cwd,
            history,
            mode,
            model,
            models,
            sandboxed,
        })
    }

    /// End a session (its task interrupts and shuts it down).
    fn close(&self, id: &str) -> bool {
        let entry = self.sessions.lock().ok().and_then(|mut s| s.remove(id));
        match entry {
            Some(e) => {
                let _ = e.tx.send(Cmd::Close);
                true
            }
            None => false,
        }
    }

    fn options(&self, id: &SessionId) -> Result<Vec<SessionConfigOption>, Error> {
        self.entry(id, |e| {
            let st = e.state.lock().map(|s| s.clone()).ok();
            st.map(|s| s.options(&e.models))
        })?
        .ok_or_else(|| internal("poisoned"))
    }

    /// The updates that tell the editor of the session's mode.
    fn mode_updates(&self, id: &SessionId) -> Result<[SessionUpdate; 2], Error> {
        self.entry(id, |e| {
            e.state
                .lock()
                .map(|s| s.mode_updates(&e.models))
                .map_err(|_| internal("poisoned"))
        })?
    }

    fn set_mode(&self, id: &SessionId, mode: &str) -> Result<(), Error> {
        let mode = mode.parse::<PermissionMode>().map_err(invalid)?;
        self.entry(id, |e| {
            let _ = e.handle.set_permission_mode(mode);
            if let Ok(mut s) = e.state.lock() {
                s.mode = mode;
            }
        })
    }

    fn set_model(&self, id: &SessionId, model: &str) -> Result<(), Error> {
        if model.trim().is_empty() {
            return Err(invalid("the model is empty"));
        }
        let model = skiff_llm::resolve_alias(model.trim());
        self.entry(id, |e| {
            let _ = e.handle.set_model(model.clone());
            if let Ok(mut s) = e.state.lock() {
                s.model = model;
            }
        })
    }

    /// Close every session and wait (a little) for them to end.
    async fn shutdown(&self) {
        let entries: Vec<Entry> = self
            .sessions
            .lock()
            .map(|mut s| s.drain().map(|(_, e)| e).collect())
            .unwrap_or_default();
        for e in entries {
            let _ = e.tx.send(Cmd::Close);
            if tokio::time::timeout(Duration::from_secs(5), e.task)
                .await
                .is_err()
            {
                tracing::warn!("a session did not end within 5 s");
            }
        }
    }
}

/// Send `update` to the editor.
fn notify(cx: &ConnectionTo<Client>, id: &SessionId, update: SessionUpdate) -> Result<(), Error> {
    cx.send_notification(SessionNotification::new(id.clone(), update))
}

/// What `session/new` and `session/load` answer, and the updates that follow.
fn respond_opened<R: JsonRpcResponse>(
    cx: &ConnectionTo<Client>,
    opened: &Opened,
    responder: Responder<R>,
    response: R,
) -> Result<(), Error> {
    responder.respond(response)?;
    notify(cx, &opened.id, slash::available_commands(&opened.custom))
}

async fn serve(base: Overrides) -> anyhow::Result<ExitCode> {
    use agent_client_protocol::Agent;
    let server = Arc::new(Server {
        base,
        client: Mutex::new(ClientCapabilities::default()),
        sessions: Mutex::new(HashMap::new()),
    });
    let s = |server: &Arc<Server>| Arc::clone(server);
    let (s1, s2, s3, s4, s5, s6, s7, s8, s9, s10) = (
        s(&server),
        s(&server),
        s(&server),
        s(&server),
        s(&server),
        s(&server),
        s(&server),
        s(&server),
        s(&server),
        s(&server),
    );
    let served = Agent
        .v1()
        .name("skiff")
        .on_receive_request(
            async move |req: InitializeRequest, responder, _cx| {
                responder.respond(s1.initialize(req))
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: NewSessionRequest, responder, cx| {
                let opened = s2.open(
                    &cx,
                    Open {
                        cwd: req.cwd,
                        dirs: req.additional_directories,
                        mcp: req.mcp_servers,
                        load: None,
                    },
                )?;
                let response = NewSessionResponse::new(opened.id.clone())
                    .modes(modes::mode_state(opened.mode, opened.sandboxed))
                    .config_options(opened.state().options(&opened.models));
                respond_opened(&cx, &opened, responder, response)
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: LoadSessionRequest, responder, cx| {
                s3.close(&req.session_id.0);
                let opened = s3.open(
                    &cx,
                    Open {
                        cwd: req.cwd,
                        dirs: req.additional_directories,
                        mcp: req.mcp_servers,
                        load: Some(req.session_id.0.to_string()),
                    },
                )?;
                // ACP: the whole conversation again, before the answer.
                for update in history::replay(&opened.history, &opened.cwd) {
                    notify(&cx, &opened.id, update)?;
                }
                let response = LoadSessionResponse::new()
                    .modes(modes::mode_state(opened.mode, opened.sandboxed))
                    .config_options(opened.state().options(&opened.models));
                respond_opened(&cx, &opened, responder, response)
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: ListSessionsRequest, responder, _cx| {
                let _ = &s4;
                let home = crate::session::skiff_home().map_err(|e| internal(format!("{e:#}")))?;
                let page = listing::list(&home, req.cwd.as_deref(), req.cursor.as_deref())
                    .map_err(invalid)?;
                responder.respond(page)
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: PromptRequest, responder, cx| {
                let tx = s5.entry(&req.session_id, |e| e.tx.clone())?;
                let what = prompt::prompted(req.prompt).map_err(invalid)?;
                let (done, outcome) = oneshot::channel();
                if tx.send(Cmd::Prompt(what, done)).is_err() {
                    return Err(internal("the session has ended"));
                }
                // The turn runs on the session's task; only its answer waits here, off the
                // dispatch loop.
                cx.spawn(async move {
                    let sent = match outcome.await {
                        Ok(Ok(stop)) => responder.respond(PromptResponse::new(stop)),
                        Ok(Err(e)) => responder.respond_with_error(e),
                        Err(_) => responder.respond_with_error(internal("the session has ended")),
                    };
                    if let Err(e) = sent {
                        tracing::debug!(error = %e, "cannot answer a prompt");
                    }
                    Ok(())
                })
            },
            on_receive_request!(),
        )
        .on_receive_notification(
            async move |n: CancelNotification, _cx| {
                match s6.entry(&n.session_id, |e| e.tx.clone()) {
                    Ok(tx) => {
                        let _ = tx.send(Cmd::Cancel);
                    }
                    Err(_) => {
                        tracing::debug!(session = %n.session_id.0, "cancel for an unknown session")
                    }
                }
                Ok(())
            },
            on_receive_notification!(),
        )
        .on_receive_request(
            async move |req: SetSessionModeRequest, responder, cx| {
                s7.set_mode(&req.session_id, &req.mode_id.0)?;
                let updates = s7.mode_updates(&req.session_id)?;
                responder.respond(SetSessionModeResponse::new())?;
                for update in updates {
                    notify(&cx, &req.session_id, update)?;
                }
                Ok(())
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: SetSessionConfigOptionRequest, responder, cx| {
                let value = req
                    .value
                    .as_value_id()
                    .map(|v| v.0.to_string())
                    .ok_or_else(|| invalid("this option takes a value id"))?;
                let mode = match &*req.config_id.0 {
                    modes::MODE_OPTION => {
                        s8.set_mode(&req.session_id, &value)?;
                        true
                    }
                    modes::MODEL_OPTION => {
                        s8.set_model(&req.session_id, &value)?;
                        false
                    }
                    other => return Err(invalid(format!("unknown config option {other:?}"))),
                };
                responder.respond(SetSessionConfigOptionResponse::new(
                    s8.options(&req.session_id)?,
                ))?;
                // The options are in the answer; the mode is told as every mode change is.
                if mode {
                    let [current, _] = s8.mode_updates(&req.session_id)?;
                    notify(&cx, &req.session_id, current)?;
                }
                Ok(())
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: SetModelRequest, responder, cx| {
                s9.set_model(&req.session_id, &req.model_id)?;
                let options = s9.options(&req.session_id)?;
                responder.respond(SetModelResponse::default())?;
                notify(
                    &cx,
                    &req.session_id,
                    SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(options)),
                )
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: CloseSessionRequest, responder, _cx| {
                if !s10.close(&req.session_id.0) {
                    return Err(not_found(&req.session_id));
                }
                responder.respond(CloseSessionResponse::new())
            },
            on_receive_request!(),
        )
        .connect_to(agent_client_protocol::Stdio::new())
        .await;
    server.shutdown().await;
    match served {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) => Err(anyhow::anyhow!("the ACP connection failed: {e}")),
    }
}
