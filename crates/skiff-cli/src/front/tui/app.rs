//! The app loop: a client of the session actor like every other front end. It waits for a
//! key, a session event or an answer from a background job — nothing else: when nothing
//! changes it does not wake up (the spinner alone ticks, while the session works). Each wake
//! handles what is ready, then draws once: lines finished since the last frame go to the
//! scrollback, then the viewport is diffed.

use std::collections::VecDeque;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::Event as TermEvent;
use futures::FutureExt;
use skiff_config::mcp::session::McpHandle;
use skiff_config::sandbox_setup::SandboxText;
use skiff_core::commands::CommandSet;
use skiff_core::permissions::{AskClient, PermissionEngine};
use skiff_core::{Agent, Answer, Event, Op, PermissionMode, RequestKind, Session, SessionHandle};
use tokio::sync::mpsc;

use super::Input;
use super::approve::ApprovalMenu;
use super::input::Intent;
use super::picker::{Item, Picker, PickerKind};
use super::screen::Screen;
use super::status::{SessionFacts, next_mode};
use super::ui::{Overlay, Ui};
use crate::front::commands::{self, Action};
use crate::term::wrap::wrap_line;

/// How often the spinner moves.
const FRAME: Duration = Duration::from_millis(100);

/// How long leaving waits for the session to end.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Answers of background jobs.
pub enum Msg {
    /// The workspace's paths were walked.
    Files(Vec<String>),
    /// The paths matching an `@` query (its generation).
    Matches(u64, Vec<String>),
    /// The `statusLine` command's line.
    StatusLine(Option<String>),
    /// The text of `/sandbox` or `/plugin`.
    Say(String),
}

/// What the app needs besides the session.
pub struct Parts {
    /// The command line (for `/resume`).
    pub args: crate::args::Args,
    /// The workspace.
    pub cwd: PathBuf,
    /// The permission engine ("don't ask again" adds to it).
    pub engine: Arc<PermissionEngine>,
    /// `/sandbox`.
    pub sandbox: SandboxText,
    /// `/mcp`.
    pub mcp: McpHandle,
    /// Custom commands and skills.
    pub custom: Arc<CommandSet>,
    /// The model runs on this machine.
    pub local: bool,
    /// The `statusLine` command, if set.
    pub status_command: Option<String>,
}

/// The running UI.
pub struct App<W: Write> {
    ui: Ui,
    screen: Screen<W>,
    session: Session,
    handle: SessionHandle,
    parts: Parts,
    facts: SessionFacts,
    bypass_allowed: bool,
    tx: mpsc::UnboundedSender<Msg>,
    rx: mpsc::UnboundedReceiver<Msg>,
    /// Slash commands typed while a turn ran, done when it ends.
    pending_commands: VecDeque<String>,
    /// Prompts sent in this run and their file checkpoints.
    checkpoints: Vec<(String, String)>,
    /// The paths are being walked, or must be walked again.
    files_walking: bool,
    files_stale: bool,
    /// The `@` query whose matches are awaited, and its generation.
    file_query: Option<String>,
    file_generation: u64,
    /// A `statusLine` run is under way / another is wanted.
    status_running: bool,
    status_wanted: bool,
    exit: bool,
}

impl<W: Write> App<W> {
    /// The app over a started session.
    pub fn new(ui: Ui, screen: Screen<W>, agent: Agent, parts: Parts) -> Self {
        let config = agent.config();
        let mut ui = ui;
        ui.status.model = config.model.clone();
        ui.status.mode = config.permission_mode;
        ui.status.local = parts.local;
        ui.status.context_window = context_window(config.context_window, &config.model);
        ui.commands = command_entries(&parts.custom);
        let bypass_allowed = config.permission_mode == PermissionMode::BypassPermissions;
        let facts = SessionFacts {
            session_id: config.session_id.clone(),
            transcript: transcript_path(&parts.cwd, &config.session_id),
            cwd: parts.cwd.clone(),
            started: Instant::now(),
        };
        if !agent.history().is_empty() {
            // The context used, estimated until the first model call says.
            ui.status.context_tokens = skiff_core::tokens::estimate_messages(agent.history());
            let width = usize::from(ui.width);
            let lines = super::recap::recap(agent.history(), 3, width);
            ui.push_lines(lines);
            ui.note(&format!(
                "Resumed session {} ({} messages).",
                config.session_id,
                agent.history().len()
            ));
        }
        let session = agent.with_approver(Arc::new(AskClient)).spawn();
        let handle = session.handle();
        let (tx, rx) = mpsc::unbounded_channel();
        Self {
            ui,
            screen,
            session,
            handle,
            parts,
            facts,
            bypass_allowed,
            tx,
            rx,
            pending_commands: VecDeque::new(),
            checkpoints: Vec::new(),
            files_walking: false,
            files_stale: true,
            file_query: None,
            file_generation: 0,
            status_running: false,
            status_wanted: true,
            exit: false,
        }
    }

    /// Run until the user leaves; `keys` are the terminal's events.
    pub async fn run(
        mut self,
        mut keys: mpsc::UnboundedReceiver<Input>,
        first_prompt: Option<String>,
    ) -> anyhow::Result<ExitCode> {
        self.refresh_status_line();
        if let Some(p) = first_prompt {
            self.submit(p).await;
        }
        self.draw()?;
        let mut next_tick = tokio::time::Instant::now() + FRAME;
        while !self.exit {
            let animating = self.ui.animating() || self.ui.notice.is_some();
            if !animating {
                next_tick = tokio::time::Instant::now() + FRAME;
            }
            tokio::select! {
                ev = keys.recv() => match ev {
                    Some(ev) => self.terminal_event(ev).await,
                    None => self.exit = true,
                },
                ev = self.session.next_event() => match ev {
                    Some(ev) => self.session_event(ev).await,
                    None => self.exit = true,
                },
                Some(msg) = self.rx.recv() => self.message(msg),
                () = tokio::time::sleep_until(next_tick), if animating => {
                    next_tick += FRAME;
                    self.tick();
                }
            }
            // Handle whatever else is ready before drawing once.
            for _ in 0..256 {
                if let Some(Some(ev)) = self.session.next_event().now_or_never() {
                    self.session_event(ev).await;
                    continue;
                }
                if let Ok(ev) = keys.try_recv() {
                    self.terminal_event(ev).await;
                    continue;
                }
                break;
            }
            self.draw()?;
        }
        self.leave().await
    }

    /// Leave: what is left goes to the scrollback, the live part is cleared, the running turn
    /// stopped and the session shut down (its transcript written).
    async fn leave(mut self) -> anyhow::Result<ExitCode> {
        let lines = self.ui.take_commits();
        let width = usize::from(self.screen.cols());
        let rows: Vec<_> = lines
            .iter()
            .flat_map(|l| wrap_line(l, width, &[]))
            .collect();
        self.screen.insert_history(&rows)?;
        self.screen.leave()?;
        self.handle.interrupt();
        if tokio::time::timeout(SHUTDOWN_GRACE, self.session.shutdown())
            .await
            .is_err()
        {
            tracing::warn!("the session did not end in time");
        }
        Ok(ExitCode::SUCCESS)
    }

    fn tick(&mut self) {
        if let Some(b) = &self.ui.busy {
            self.ui.frame = (b.since.elapsed().as_millis() / FRAME.as_millis()) as usize;
        } else {
            self.ui.frame = self.ui.frame.wrapping_add(1);
        }
        if self
            .ui
            .notice
            .as_ref()
            .is_some_and(|(_, at)| at.elapsed() > Duration::from_secs(3))
        {
            self.ui.notice = None;
        }
        self.ui.dirty = true;
    }

    /// Draw: finished lines to the scrollback, then the viewport (only what changed).
    fn draw(&mut self) -> std::io::Result<()> {
        let width = usize::from(self.screen.cols());
        if self.ui.has_commits() {
            let lines = self.ui.take_commits();
            let rows: Vec<_> = lines
                .iter()
                .flat_map(|l| wrap_line(l, width, &[]))
                .collect();
            self.screen.insert_history(&rows)?;
            self.ui.dirty = true;
        }
        if !self.ui.dirty {
            return Ok(());
        }
        self.ui.dirty = false;
        let frame = self.ui.layout(self.screen.max_height());
        self.screen.draw(frame.height(), |buf| frame.paint(buf))
    }

    async fn terminal_event(&mut self, ev: Input) {
        let ev = match ev {
            Input::Term(ev) => ev,
            Input::Resized { cols, rows, cursor } => {
                tracing::debug!(cols, rows, ?cursor, "resized");
                if let Err(e) = self.screen.resize(cols, rows, cursor) {
                    tracing::warn!(error = %e, "cannot redraw after a resize");
                }
                self.ui.resize(cols);
                return;
            }
        };
        match ev {
            TermEvent::Key(key) => {
                let intents = self.ui.key(key, &self.parts.cwd);
                for intent in intents {
                    self.intent(intent).await;
                }
            }
            TermEvent::Paste(text) => {
                self.ui.paste(&text);
                let intents = self.ui.after_edit();
                for intent in intents {
                    self.intent(intent).await;
                }
            }
            _ => {}
        }
    }

    async fn intent(&mut self, intent: Intent) {
        match intent {
            Intent::Submit(text) => self.submit(text).await,
            Intent::Interrupt => {
                self.handle.interrupt();
                self.ui.notice = Some(("Interrupting…".to_owned(), Instant::now()));
            }
            Intent::CycleMode => {
                let next = next_mode(self.ui.status.mode, self.bypass_allowed);
                self.set_mode(next);
            }
            Intent::Exit => self.exit = true,
            Intent::Redraw => {
                if let Err(e) = self.screen.invalidate() {
                    tracing::warn!(error = %e, "cannot redraw");
                }
                self.ui.dirty = true;
            }
            Intent::Answer(decision) => {
                if let Some(mode) = decision.mode {
                    self.ui.status.mode = mode;
                    self.refresh_status_line();
                }
                self.ui.push_lines([decision.record]);
                for n in &decision.notes {
                    self.ui.note(n);
                }
                if !decision.updates.is_empty() {
                    let _ = self.handle.update_permissions(decision.updates);
                }
                let _ = self.handle.reply(decision.id, decision.answer);
            }
            Intent::Pick(PickerKind::Resume, id) => self.resume(id).await,
            Intent::Pick(PickerKind::Rewind, index) => self.rewind(index).await,
            Intent::Rewind => self.open_rewind().await,
            Intent::Files(query) => self.files(query),
        }
    }

    fn set_mode(&mut self, mode: PermissionMode) {
        if self.handle.set_permission_mode(mode).is_ok() {
            self.ui.status.mode = mode;
            self.refresh_status_line();
        }
    }

    /// A line typed and sent: a prompt, a slash command or a shell command.
    async fn submit(&mut self, text: String) {
        let trimmed = text.trim();
        if let Some(command) = trimmed.strip_prefix('!') {
            self.shell(command.trim().to_owned());
            return;
        }
        if commands::is_command(trimmed) && is_builtin(trimmed) {
            if self.ui.busy.is_some() {
                self.ui.note(&format!("{trimmed} runs when the turn ends."));
                self.pending_commands.push_back(trimmed.to_owned());
            } else {
                self.ui.echo_prompt(trimmed);
                self.command(trimmed.to_owned()).await;
            }
            return;
        }
        self.send_prompt(text);
    }

    fn send_prompt(&mut self, text: String) {
        let id = format!("tui-{}-{}", self.facts.session_id, self.checkpoints.len());
        let _ = self.session.submit(Op::Checkpoint(id.clone()));
        if self.session.send_message(text.clone()).is_err() {
            self.ui.note("The session has ended.");
            self.exit = true;
            return;
        }
        self.checkpoints.push((text.clone(), id));
        if self.ui.busy.is_some() {
            self.ui.queued.push_back(text);
        } else {
            self.ui.echo_prompt(&text);
            self.ui.start_busy(false);
        }
    }

    /// `!command`: run it with the Bash tool through the normal permission path; its output
    /// goes into the conversation.
    fn shell(&mut self, command: String) {
        if command.is_empty() {
            return;
        }
        if self.ui.busy.is_some() {
            self.ui
                .note(&format!("!{command} runs when the turn ends."));
            self.pending_commands.push_back(format!("!{command}"));
            return;
        }
        self.ui.echo_prompt(&format!("!{command}"));
        if self.session.submit(Op::Shell(command)).is_err() {
            self.ui.note("The session has ended.");
            self.exit = true;
            return;
        }
        if self.ui.busy.is_none() {
            self.ui.start_busy(false);
        }
    }

    async fn session_event(&mut self, ev: Event) {
        match ev {
            Event::Request(request) => match request.kind {
                RequestKind::Approval(a) => {
                    self.ui.overlay = Overlay::Approval(Box::new(ApprovalMenu::new(
                        request.id,
                        a,
                        &self.parts.cwd,
                        &self.parts.engine,
                    )));
                    self.ui.dirty = true;
                }
                _ => {
                    let _ = self
                        .handle
                        .reply(request.id, Answer::Json(serde_json::json!({})));
                }
            },
            Event::RequestCancelled(id) => {
                if matches!(&self.ui.overlay, Overlay::Approval(m) if *m.id() == id) {
                    self.ui.overlay = Overlay::None;
                    self.ui.dirty = true;
                }
            }
            Event::Compacted(outcome) => {
                match outcome {
                    Ok(report) => self.ui.note(&format!(
                        "Compacted {} messages into a summary: about {} → {} tokens.",
                        report.summarized_messages, report.pre_tokens, report.post_tokens
                    )),
                    Err(e) => self.ui.note(&format!("Not compacted: {e}")),
                }
                self.ui.event(&Event::Idle);
            }
            Event::Idle => {
                self.ui.event(&Event::Idle);
                self.idle().await;
            }
            ev => {
                let result = matches!(
                    &ev,
                    Event::Frame(skiff_protocol::sdk::SdkMessage::Result(_))
                );
                self.ui.event(&ev);
                if result {
                    self.refresh_status_line();
                }
            }
        }
    }

    /// The session has nothing to do: run the commands that waited, refresh what the status
    /// line shows.
    async fn idle(&mut self) {
        self.files_stale = true;
        if let Ok(status) = self.session.status().await {
            self.ui.status.background = status.background;
            self.ui.status.mode = status.permission_mode;
            self.ui.status.model = status.model;
        }
        while self.ui.busy.is_none() {
            let Some(command) = self.pending_commands.pop_front() else {
                break;
            };
            if let Some(shell) = command.strip_prefix('!') {
                self.shell(shell.to_owned());
                continue;
            }
            self.ui.echo_prompt(&command);
            self.command(command).await;
        }
        self.refresh_status_line();
    }

    fn message(&mut self, msg: Msg) {
        match msg {
            Msg::Files(paths) => {
                self.files_walking = false;
                self.ui.files = Arc::new(paths);
                if let Some(q) = self.file_query.clone() {
                    self.rank(q);
                }
            }
            Msg::Matches(generation, paths) => {
                if generation == self.file_generation {
                    self.ui.set_file_matches(paths);
                }
            }
            Msg::StatusLine(line) => {
                self.status_running = false;
                if self.ui.status.custom != line {
                    self.ui.status.custom = line;
                    self.ui.dirty = true;
                }
                if std::mem::take(&mut self.status_wanted) {
                    self.refresh_status_line();
                }
            }
            Msg::Say(text) => self.ui.say(&text),
        }
    }

    /// Run the `statusLine` command again (one run at a time; a change meanwhile runs it once
    /// more after).
    fn refresh_status_line(&mut self) {
        let Some(command) = self.parts.status_command.clone() else {
            return;
        };
        if self.status_running {
            self.status_wanted = true;
            return;
        }
        self.status_running = true;
        self.status_wanted = false;
        let input = self.ui.status.command_input(&self.facts);
        let cwd = self.parts.cwd.clone();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let line = super::status::run_command(&command, input, cwd).await;
            let _ = tx.send(Msg::StatusLine(line));
        });
    }

    /// An `@` query: walk the workspace first if needed, then rank off the runtime.
    fn files(&mut self, query: String) {
        self.file_query = Some(query.clone());
        if self.files_stale && !self.files_walking {
            self.files_stale = false;
            self.files_walking = true;
            let root = self.parts.cwd.clone();
            let tx = self.tx.clone();
            tokio::task::spawn_blocking(move || {
                let _ = tx.send(Msg::Files(super::files::walk(&root)));
            });
        }
        self.rank(query);
    }

    fn rank(&mut self, query: String) {
        self.file_generation += 1;
        let generation = self.file_generation;
        let files = Arc::clone(&self.ui.files);
        let tx = self.tx.clone();
        tokio::task::spawn_blocking(move || {
            let found = super::files::rank(&files, &query, 50);
            let _ = tx.send(Msg::Matches(generation, found));
        });
    }

    /// A built-in slash command (the session is idle).
    async fn command(&mut self, line: String) {
        let status = match self.session.status().await {
            Ok(s) => s,
            Err(e) => {
                self.ui.note(&format!("Error: {e}"));
                self.exit = true;
                return;
            }
        };
        self.ui.status.background = status.background.clone();
        match commands::dispatch_with(&status, &line, &self.parts.custom) {
            None => self.send_prompt(line),
            Some(Action::Output(text)) => self.ui.say(&text),
            Some(Action::Exit) => self.exit = true,
            Some(Action::Clear) => {
                if self.session.submit(Op::Clear).is_ok() {
                    if let Err(e) = self.screen.clear_all() {
                        tracing::warn!(error = %e, "cannot clear the screen");
                    }
                    self.ui.take_commits();
                    self.ui.reset_live();
                    self.ui.status.context_tokens = 0;
                    self.ui.note("Started a new conversation.");
                }
            }
            Some(Action::SetModel(model, text)) => {
                if self.handle.set_model(model.clone()).is_ok() {
                    self.ui.status.context_window = context_window(None, &model);
                    self.ui.status.model = model;
                    self.ui.say(&text);
                    self.refresh_status_line();
                }
            }
            Some(Action::SetMode(mode)) => {
                self.set_mode(mode);
                self.ui.say(&format!("Permission mode set to {mode}."));
            }
            Some(Action::Permissions) => self.ui.say(&crate::front::repl::permissions_text(
                status.permission_mode,
                &self.parts.engine,
            )),
            Some(Action::Sandbox) => {
                // Waits for the namespace probe: off the runtime.
                let text = self.parts.sandbox.clone();
                let tx = self.tx.clone();
                tokio::task::spawn_blocking(move || {
                    let _ = tx.send(Msg::Say(text.to_string()));
                });
            }
            Some(Action::Mcp) => self.ui.say(&self.parts.mcp.describe()),
            Some(Action::Plugin(words)) => {
                // Off the runtime: a git marketplace is cloned, copies are made. Installing
                // shows what the plugin adds; `--yes` installs it.
                let (args, cwd, tx) = (
                    self.parts.args.clone(),
                    self.parts.cwd.clone(),
                    self.tx.clone(),
                );
                tokio::task::spawn_blocking(move || {
                    let mut asked = None;
                    let mut confirm = |question: &str| {
                        asked = Some(question.to_owned());
                        Ok(false)
                    };
                    let text = crate::cmd::plugin::repl_command(&args, &cwd, &words, &mut confirm);
                    let text = match asked {
                        Some(question) => format!(
                            "{question}\nNothing is installed yet: to install it, run \
                             /plugin {} --yes",
                            words.trim()
                        ),
                        None => text,
                    };
                    let _ = tx.send(Msg::Say(text));
                });
            }
            Some(Action::Todos) => {
                if self.ui.todos.is_empty() {
                    self.ui
                        .say("No todos yet: the model has not made a todo list.");
                } else {
                    let lines = super::ui::todo_lines(&self.ui.todos, "  ");
                    self.ui.push_lines(lines);
                }
            }
            Some(Action::Compact(focus)) => {
                if self.session.submit(Op::Compact(focus)).is_ok() {
                    self.ui.start_busy(true);
                }
            }
            Some(Action::Resume(Some(id))) => self.resume(id).await,
            Some(Action::Resume(None)) => self.open_resume().await,
        }
    }

    /// `/resume` without an id: a picker of this workspace's saved sessions.
    async fn open_resume(&mut self) {
        let Some(home) = skiff_core::transcript::default_skiff_home() else {
            self.ui
                .note("No SKIFF_HOME or HOME: sessions are not saved.");
            return;
        };
        let cwd = self.parts.cwd.clone();
        let current = self.facts.session_id.clone();
        let sessions = tokio::task::spawn_blocking(move || {
            skiff_core::transcript::list_sessions(&home, &cwd)
                .into_iter()
                .map(|s| {
                    let size = std::fs::metadata(&s.path).map_or(0, |m| m.len());
                    (s, size)
                })
                .collect::<Vec<_>>()
        })
        .await
        .unwrap_or_default();
        let now = std::time::SystemTime::now();
        let items: Vec<Item> = sessions
            .into_iter()
            .filter(|(s, _)| s.id != current)
            .take(100)
            .map(|(s, size)| Item {
                label: skiff_config::sessions::one_line(
                    s.first_prompt.as_deref().unwrap_or("(no prompt)"),
                    60,
                ),
                detail: format!(
                    "{} · {} messages · {} · {}",
                    age(now, s.modified),
                    s.message_count,
                    size_text(size),
                    &s.id[..s.id.len().min(8)]
                ),
                value: s.id,
            })
            .collect();
        if items.is_empty() {
            self.ui.note("No other saved sessions in this workspace.");
            return;
        }
        self.ui.overlay = Overlay::Picker(Picker::new(
            PickerKind::Resume,
            "Resume a session",
            items,
            false,
        ));
    }

    /// Continue a saved session: a new session takes the place of this one.
    async fn resume(&mut self, id: String) {
        let mut args = self.parts.args.clone();
        args.resume = Some(id);
        args.continue_session = false;
        args.fork_session = false;
        args.session_id = None;
        args.prompt = None;
        let mut warnings = Vec::new();
        let built = crate::session::assemble_tui(&args, Some(&mut warnings));
        for w in &warnings {
            self.ui.note(w);
        }
        let built = match built {
            Ok(b) => b,
            Err(e) => {
                self.ui.note(&format!("Cannot resume: {e}"));
                return;
            }
        };
        let skiff_config::Assembled {
            agent,
            engine,
            mcp,
            local,
            ..
        } = built;
        self.ui.reset_live();
        let width = usize::from(self.ui.width);
        let lines = super::recap::recap(agent.history(), 3, width);
        self.ui.push_lines(lines);
        self.ui.note(&format!(
            "Resumed session {} ({} messages).",
            agent.config().session_id,
            agent.history().len()
        ));
        let config = agent.config();
        self.ui.status.model = config.model.clone();
        self.ui.status.mode = config.permission_mode;
        self.ui.status.local = local;
        self.ui.status.context_window = context_window(config.context_window, &config.model);
        self.ui.status.context_tokens = skiff_core::tokens::estimate_messages(agent.history());
        self.facts.session_id = config.session_id.clone();
        self.facts.transcript = transcript_path(&self.parts.cwd, &config.session_id);
        self.parts.custom = Arc::clone(&config.commands);
        self.ui.commands = command_entries(&self.parts.custom);
        self.parts.engine = engine;
        self.parts.mcp = mcp;
        self.checkpoints.clear();
        let session = agent.with_approver(Arc::new(AskClient)).spawn();
        self.handle = session.handle();
        let old = std::mem::replace(&mut self.session, session);
        tokio::spawn(old.shutdown());
        self.refresh_status_line();
    }

    /// Esc Esc: the user's earlier messages, to go back to.
    async fn open_rewind(&mut self) {
        let history = match self.session.history().await {
            Ok(h) => h,
            Err(_) => return,
        };
        let prompts = super::recap::prompts(&history);
        if prompts.is_empty() {
            self.ui.note("Nothing to rewind: no messages yet.");
            return;
        }
        let items = prompts
            .into_iter()
            .map(|(i, text)| Item {
                label: skiff_config::sessions::one_line(&text, 70),
                detail: format!("message {}", i + 1),
                value: i.to_string(),
            })
            .collect();
        self.ui.overlay = Overlay::Picker(Picker::new(
            PickerKind::Rewind,
            "Rewind the conversation (and the files skiff changed) to before:",
            items,
            true,
        ));
    }

    /// Go back to before the user message at `index` of the history: the files Write and
    /// Edit changed since are put back, the conversation is cut there, and the message is
    /// put back into the composer.
    async fn rewind(&mut self, index: String) {
        let Ok(index) = index.parse::<usize>() else {
            return;
        };
        let history = match self.session.history().await {
            Ok(h) => h,
            Err(_) => return,
        };
        let Some(text) = history.get(index).and_then(super::recap::prompt_text) else {
            return;
        };
        // The checkpoint taken when this prompt was sent (prompts of this run only).
        let checkpoint = self
            .checkpoints
            .iter()
            .rposition(|(sent, _)| sent.trim() == text || text.ends_with(sent.trim()));
        let files = match checkpoint {
            Some(i) => {
                let id = self.checkpoints[i].1.clone();
                self.checkpoints.truncate(i);
                match self.handle.rewind_files(id, false) {
                    Ok(rx) => match rx.await {
                        Ok(Ok(report)) if report.files_changed.is_empty() => {
                            "no file to put back".to_owned()
                        }
                        Ok(Ok(report)) => format!(
                            "{} file{} put back",
                            report.files_changed.len(),
                            if report.files_changed.len() == 1 {
                                ""
                            } else {
                                "s"
                            }
                        ),
                        Ok(Err(e)) => format!("files not put back: {e}"),
                        Err(_) => "files not put back".to_owned(),
                    },
                    Err(_) => "files not put back".to_owned(),
                }
            }
            None => "no file checkpoint for this message: files left as they are".to_owned(),
        };
        if self.session.submit(Op::Rewind(index)).is_err() {
            return;
        }
        self.ui.reset_live();
        self.ui.note(&format!(
            "⏪ Rewound to before “{}” ({files}).",
            skiff_config::sessions::one_line(&text, 60)
        ));
        self.ui.composer.set_text(&text);
        self.ui.status.context_tokens = 0;
    }
}

/// Whether a slash command line is one of the built-in commands (custom ones are prompts).
fn is_builtin(line: &str) -> bool {
    let name = line
        .trim()
        .trim_start_matches('/')
        .split_whitespace()
        .next()
        .unwrap_or("");
    name == "help" || commands::COMMANDS.iter().any(|c| c.name == name)
}

/// The command menu's entries: built-in commands, then custom commands and skills.
fn command_entries(custom: &CommandSet) -> Vec<(String, String)> {
    let (builtins, mine) = commands::help_entries(custom, |_| true);
    builtins.into_iter().chain(mine).collect()
}

/// The context window: the configured one, else the model's.
fn context_window(configured: Option<u64>, model: &str) -> Option<u64> {
    configured.or_else(|| skiff_llm::model_info(model).map(|i| i.context_window))
}

/// Where the session's transcript is.
fn transcript_path(cwd: &std::path::Path, session_id: &str) -> Option<PathBuf> {
    let home = skiff_core::transcript::default_skiff_home()?;
    Some(skiff_core::transcript::session_path(&home, cwd, session_id))
}

/// `812 B`, `14 KB`, `2.3 MB`.
fn size_text(bytes: u64) -> String {
    match bytes {
        b if b < 1024 => format!("{b} B"),
        b if b < 1024 * 1024 => format!("{} KB", b / 1024),
        b => format!("{:.1} MB", b as f64 / (1024.0 * 1024.0)),
    }
}

/// `3m ago`, `2h ago`, `5d ago`.
fn age(now: std::time::SystemTime, then: std::time::SystemTime) -> String {
    let secs = now.duration_since(then).map_or(0, |d| d.as_secs());
    match secs {
        s if s < 60 => "just now".to_owned(),
        s if s < 3600 => format!("{}m ago", s / 60),
        s if s < 86_400 => format!("{}h ago", s / 3600),
        s => format!("{}d ago", s / 86_400),
    }
}
