//! The session actor: one task owns the [`Core`] and takes [`Command`]s from one channel.
//!
//! While a turn (or a compaction) runs, the actor keeps reading commands: an interrupt cancels
//! the turn, a reply goes to the request waiting for it, a model or mode switch takes effect at
//! the turn's next request, and user messages (and everything else that needs the core) are
//! queued and run next, in order. When every handle is gone the running turn is interrupted,
//! the queue dropped, and the conversation left valid; `Shutdown` finishes what was submitted.

use std::collections::VecDeque;
use std::sync::Arc;

use skiff_protocol::Message;
use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;

use super::{Op, Status};
use crate::core::Core;
use crate::event::Event;
use crate::frames::EventSink;
use crate::live::Live;
use crate::permissions::{PermissionMode, PermissionStore, PermissionUpdate};
use crate::requests::Requester;
use crate::turn_io::TurnIo;
use crate::turn_loop::run_turn;
use skiff_tools::changes::RewindReport;

/// What the handle sends: an op, or a question about the state.
pub(crate) enum Command {
    /// A client operation.
    Op(Op),
    /// Send back a copy of the history.
    History(oneshot::Sender<Vec<Message>>),
    /// Send back the status.
    Status(oneshot::Sender<Status>),
    /// Send back what fills the context window.
    ContextUsage(oneshot::Sender<crate::context_usage::ContextUsage>),
    /// Rewind the files to a checkpoint.
    Rewind {
        id: String,
        dry_run: bool,
        reply: oneshot::Sender<Result<RewindReport, String>>,
    },
}

/// Work that needs the core, waiting for the current turn to end.
enum Work {
    Op(Op),
    History(oneshot::Sender<Vec<Message>>),
    Status(oneshot::Sender<Status>),
    ContextUsage(oneshot::Sender<crate::context_usage::ContextUsage>),
    Rewind {
        id: String,
        dry_run: bool,
        reply: oneshot::Sender<Result<RewindReport, String>>,
    },
}

/// The actor's bookkeeping besides the core.
struct Actor {
    commands: mpsc::UnboundedReceiver<Command>,
    /// The command channel is still open (some handle exists).
    open: bool,
    /// `Shutdown` was received: finish the queue, then end.
    closing: bool,
    queue: VecDeque<Work>,
    sink: EventSink,
    requester: Requester,
    live: watch::Sender<Live>,
    live_rx: watch::Receiver<Live>,
    /// The context's breakdown after the running turn's last model call.
    context: Arc<std::sync::Mutex<Option<crate::context_usage::ContextUsage>>>,
    /// Where rule changes go (none: the session's rules cannot change).
    store: Option<Arc<dyn PermissionStore>>,
}

/// Run the session until it is shut down or every handle is dropped.
pub(crate) async fn run(
    mut core: Core,
    commands: mpsc::UnboundedReceiver<Command>,
    sink: EventSink,
    requester: Requester,
    (live, live_rx): (watch::Sender<Live>, watch::Receiver<Live>),
    store: Option<Arc<dyn PermissionStore>>,
) {
    let mut actor = Actor {
        context: Arc::clone(&core.context_snapshot),
        commands,
        open: true,
        closing: false,
        queue: VecDeque::new(),
        sink,
        requester,
        live,
        live_rx,
        store,
    };
    loop {
        let work = match actor.queue.pop_front() {
            Some(w) => w,
            None if actor.closing || !actor.open => break,
            None => match actor.commands.recv().await {
                Some(cmd) => match actor.idle_command(cmd) {
                    Some(w) => w,
                    None => {
                        // A mode or model set while idle is the session's at once (the
                        // transcript records the mode).
                        core.sync(&actor.live.borrow());
                        continue;
                    }
                },
                None => {
                    actor.open = false;
                    continue;
                }
            },
        };
        let busy = matches!(
            work,
            Work::Op(Op::UserMessage(_) | Op::VerbatimMessage(_) | Op::Compact(_) | Op::Shell(_))
        );
        if busy {
            actor.sink.send(Event::Running);
        }
        actor.work(&mut core, work).await;
        if busy && actor.queue.is_empty() {
            actor.sink.send(Event::Idle);
        }
    }
    actor.requester.abandon_all();
    core.conversation.repair();
    core.conversation.turn_complete();
    core.end_session(&actor.sink, "other").await;
    tracing::debug!(session = %core.config.session_id, "session ended");
}

impl Actor {
    /// A command that arrives while nothing runs: the ones that need no core are done here,
    /// the rest are returned as work.
    fn idle_command(&mut self, cmd: Command) -> Option<Work> {
        match cmd {
            Command::Op(op) => match op {
                Op::Interrupt => None,
                Op::Shutdown => {
                    self.closing = true;
                    None
                }
                op @ (Op::SetModel(_)
                | Op::SetPermissionMode(_)
                | Op::UpdatePermissions(_)
                | Op::SetMaxThinkingTokens(_)
                | Op::Reply { .. }) => {
                    self.apply_now(op);
                    None
                }
                op => Some(Work::Op(op)),
            },
            Command::History(tx) => Some(Work::History(tx)),
            Command::Status(tx) => Some(Work::Status(tx)),
            Command::ContextUsage(tx) => Some(Work::ContextUsage(tx)),
            Command::Rewind { id, dry_run, reply } => Some(Work::Rewind { id, dry_run, reply }),
        }
    }

    /// Ops that take effect at once, even mid-turn.
    fn apply_now(&mut self, op: Op) {
        match op {
            Op::SetModel(model) => self.live.send_modify(|l| l.model = model),
            Op::SetPermissionMode(mode) => self.set_mode(mode),
            Op::UpdatePermissions(updates) => {
                for update in &updates {
                    self.update_permissions(update);
                }
            }
            Op::SetMaxThinkingTokens(tokens) => self.live.send_modify(|l| {
                l.reasoning.thinking = Some(match tokens {
                    Some(n) if n > 0 => crate::reasoning::ThinkingMode::Budget(n),
                    _ => crate::reasoning::ThinkingMode::Disabled,
                });
            }),
            Op::Reply { id, answer } => {
                self.requester.resolve(&id, answer);
            }
            _ => {}
        }
    }

    /// The mode from the next tool call on; hosts hear of it (`system/status`), as from
    /// Claude Code after every `set_permission_mode`.
    fn set_mode(&mut self, mode: PermissionMode) {
        self.live.send_modify(|l| l.mode = mode);
        self.sink.mode_changed(mode.as_str());
    }

    /// One permission change: the mode here, rules (and saved modes) through the store.
    fn update_permissions(&mut self, update: &PermissionUpdate) {
        if let PermissionUpdate::SetMode { mode, destination } = update {
            self.set_mode(*mode);
            if !destination.is_saved() {
                return;
            }
        }
        let Some(store) = &self.store else {
            self.sink.notice(
                "permissions",
                "warning",
                "This session's permission rules cannot be changed; the change was not applied.",
            );
            return;
        };
        match store.apply(update) {
            Ok(Some(path)) => {
                self.sink.notice(
                    "permissions",
                    "info",
                    saved(update, &path.display().to_string()),
                );
            }
            Ok(None) => tracing::info!(update = ?update, "permissions changed"),
            Err(e) => self.sink.notice("permissions", "warning", e),
        }
    }

    /// A command that arrives while a turn or compaction runs.
    fn busy_command(&mut self, cmd: Option<Command>, cancel: &CancellationToken) {
        match cmd {
            None => {
                // Every handle is gone: nobody will read what follows.
                self.open = false;
                self.queue.clear();
                cancel.cancel();
            }
            Some(Command::Op(Op::Interrupt)) => cancel.cancel(),
            Some(Command::Op(Op::Shutdown)) => self.closing = true,
            Some(Command::Op(
                op @ (Op::SetModel(_)
                | Op::SetPermissionMode(_)
                | Op::UpdatePermissions(_)
                | Op::SetMaxThinkingTokens(_)
                | Op::Reply { .. }),
            )) => self.apply_now(op),
            Some(Command::Op(op)) => self.queue.push_back(Work::Op(op)),
            Some(Command::History(tx)) => self.queue.push_back(Work::History(tx)),
            Some(Command::Status(tx)) => self.queue.push_back(Work::Status(tx)),
            // Answered at once from the last model call's breakdown, when there is one.
            Some(Command::ContextUsage(tx)) => {
                let now = self.context.lock().ok().and_then(|c| c.clone());
                match now {
                    Some(usage) => {
                        let _ = tx.send(usage);
                    }
                    None => self.queue.push_back(Work::ContextUsage(tx)),
                }
            }
            Some(Command::Rewind { id, dry_run, reply }) => {
                self.queue.push_back(Work::Rewind { id, dry_run, reply });
            }
        }
    }

    async fn work(&mut self, core: &mut Core, work: Work) {
        core.sync(&self.live_rx.borrow());
        match work {
            Work::History(tx) => {
                let _ = tx.send(core.conversation.messages().to_vec());
            }
            Work::ContextUsage(tx) => {
                let _ = tx.send(core.context_usage());
            }
            Work::Status(tx) => {
                let _ = tx.send(Status {
                    session_id: core.config.session_id.clone(),
                    model: core.config.model.clone(),
                    permission_mode: core.config.permission_mode,
                    messages: core.conversation.len(),
                    costs: core.costs.clone(),
                    tools: core.tools.names(),
                    background: core.ctx.background.list(),
                });
            }
            Work::Op(op @ (Op::UserMessage(_) | Op::VerbatimMessage(_))) => {
                let (input, verbatim) = match op {
                    Op::VerbatimMessage(input) => (input, true),
                    Op::UserMessage(input) => (input, false),
                    _ => return,
                };
                let cancel = CancellationToken::new();
                let io = TurnIo {
                    sink: &self.sink.clone(),
                    cancel: &cancel,
                    requester: &self.requester.clone(),
                    live: &self.live.clone(),
                    verbatim,
                };
                let turn = run_turn(core, input, &io);
                self.drive(turn, &cancel).await;
            }
            Work::Op(Op::Compact(focus)) => {
                let cancel = CancellationToken::new();
                let sink = self.sink.clone();
                let compact = async {
                    let (conv, mut env) = core.context_parts(&sink, &cancel);
                    crate::context::compact_now(conv, &mut env, focus.as_deref()).await
                };
                let outcome = self.drive(compact, &cancel).await;
                core.conversation.turn_complete();
                self.sink.send(Event::Compacted(outcome));
            }
            Work::Op(Op::Clear) => core.clear(&self.sink).await,
            Work::Op(Op::Rewind(n)) => core.rewind_history(n),
            Work::Op(Op::Shell(command)) => {
                let cancel = CancellationToken::new();
                let io = TurnIo {
                    sink: &self.sink.clone(),
                    cancel: &cancel,
                    requester: &self.requester.clone(),
                    live: &self.live.clone(),
                    verbatim: true,
                };
                let run = crate::user_shell::run(core, command, &io);
                self.drive(run, &cancel).await;
            }
            Work::Op(Op::Checkpoint(id)) => core.ctx.changes.mark(&id),
            Work::Rewind { id, dry_run, reply } => {
                let result = core.ctx.changes.rewind_to(&id, dry_run);
                if !dry_run && result.is_ok() {
                    // The model must read the restored files again before editing them.
                    core.ctx.files.clear();
                }
                let _ = reply.send(result);
            }
            Work::Op(op) => self.apply_now(op),
        }
    }

    /// Run `fut` to its end while serving commands.
    async fn drive<T>(
        &mut self,
        fut: impl std::future::Future<Output = T>,
        cancel: &CancellationToken,
    ) -> T {
        tokio::pin!(fut);
        loop {
            tokio::select! {
                out = &mut fut => return out,
                cmd = self.commands.recv(), if self.open => self.busy_command(cmd, cancel),
            }
        }
    }
}

/// What was saved where: `Added Bash(npm test:*) to …/settings.local.json.`
fn saved(update: &PermissionUpdate, path: &str) -> String {
    match update {
        PermissionUpdate::AddRules {
            rules, behavior, ..
        } => format!(
            "Added {} to permissions.{} in {path}.",
            rules.join(", "),
            behavior.as_str()
        ),
        PermissionUpdate::RemoveRules {
            rules, behavior, ..
        } => format!(
            "Removed {} from permissions.{} in {path}.",
            rules.join(", "),
            behavior.as_str()
        ),
        PermissionUpdate::SetMode { mode, .. } => {
            format!("Set permissions.defaultMode to {mode} in {path}.")
        }
    }
}
