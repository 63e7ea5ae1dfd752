//! A command applied to the turn that runs it, the same for the REPL, `skiff -p "/name args"`
//! and stream-json user messages: the prompt `/name args` becomes Claude Code's command tags
//! plus the expanded body; `allowed-tools` become allow rules until the turn ends; `model`
//! switches the model until the turn ends. A skill the model loads with the Skill tool is
//! expanded the same way once the call is allowed, and its `allowed-tools` count for the rest
//! of the turn.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use serde_json::Value;
use skiff_protocol::{ContentBlock, ToolResultContent, ToolUseBlock};

use super::expand::{Effects, expand};
use super::skill_tool::{self, launching};
use super::{CommandSet, CustomCommand, parse_invocation};
use crate::core::Core;
use crate::dispatch::CallResult;
use crate::event::UserInput;
use crate::permissions::{
    PermissionChecker, PermissionDecision, PermissionQuery, Rule, RuleOrigin,
};
use crate::turn_io::TurnIo;

/// What a command changed for its turn, undone by [`TurnCommand::end`].
#[derive(Default)]
pub(crate) struct TurnCommand {
    /// Allow rules granted until the turn ends (shared with the turn's checker).
    grants: Arc<Mutex<Vec<Rule>>>,
    /// The session's own checker, while the turn's wraps it.
    saved: Option<Arc<dyn PermissionChecker>>,
    /// The model the command switched to, and the one before.
    model: Option<(String, String)>,
}

fn lock(grants: &Mutex<Vec<Rule>>) -> MutexGuard<'_, Vec<Rule>> {
    grants.lock().unwrap_or_else(PoisonError::into_inner)
}

impl TurnCommand {
    /// Start a turn: wrap the session's checker (grants, skills' permissions) and, when the
    /// input is `/name args` for a custom command, expand it. `run` is false when a hook
    /// blocked the prompt (nothing is expanded then).
    pub(crate) async fn begin(
        core: &mut Core,
        input: UserInput,
        run: bool,
        io: &TurnIo<'_>,
    ) -> (UserInput, Self) {
        let mut turn = Self::default();
        let commands = Arc::clone(&core.config.commands);
        if commands.is_empty() {
            return (input, turn);
        }
        let inner = Arc::clone(&core.permissions);
        core.permissions = Arc::new(Granted {
            inner: Arc::clone(&inner),
            grants: Arc::clone(&turn.grants),
            commands: Arc::clone(&commands),
        });
        turn.saved = Some(inner);
        if !run {
            return (input, turn);
        }
        let (text, rest) = match input {
            UserInput::Text(t) => (t, Vec::new()),
            UserInput::Blocks(mut blocks) => match blocks.first() {
                Some(ContentBlock::Text(t)) => {
                    let text = t.text.clone();
                    blocks.remove(0);
                    (text, blocks)
                }
                _ => return (UserInput::Blocks(blocks), turn),
            },
        };
        let found = parse_invocation(&text)
            .and_then(|(name, args)| commands.user_command(name).map(|c| (c, args.to_owned())));
        let Some((cmd, args)) = found else {
            let mut blocks = vec![ContentBlock::text(text)];
            blocks.extend(rest);
            return (simplify(blocks), turn);
        };
        turn.grant(cmd, core, io);
        if let Some(model) = &cmd.model {
            let model = skiff_llm::resolve_alias(model);
            let previous = io.live.borrow().model.clone();
            if model != previous {
                io.live.send_modify(|l| l.model.clone_from(&model));
                core.sync(&io.live.borrow());
                turn.model = Some((model, previous));
            }
        }
        let expansion = turn.expand(cmd, &args, core, io).await;
        let mut blocks = vec![
            ContentBlock::text(tags(&cmd.name, &args)),
            ContentBlock::text(expansion.text),
        ];
        blocks.extend(expansion.files);
        blocks.extend(rest);
        (UserInput::Blocks(blocks), turn)
    }

    /// The turn is over: the session's checker and model come back.
    pub(crate) fn end(self, core: &mut Core, io: &TurnIo<'_>) {
        if let Some(saved) = self.saved {
            core.permissions = saved;
        }
        if let Some((model, previous)) = self.model {
            // Unless a client switched the model meanwhile.
            let unchanged = io.live.borrow().model == model;
            if unchanged {
                io.live.send_modify(|l| l.model = previous);
                core.sync(&io.live.borrow());
            }
        }
    }

    /// After a round of tool calls: each skill the model loaded is expanded (its commands run,
    /// its files read) and its `allowed-tools` hold for the rest of the turn.
    pub(crate) async fn after_tools(
        &self,
        core: &mut Core,
        io: &TurnIo<'_>,
        calls: &[ToolUseBlock],
        results: &mut [CallResult],
    ) {
        let commands = Arc::clone(&core.config.commands);
        if commands.is_empty() {
            return;
        }
        for (call, result) in calls.iter().zip(results.iter_mut()) {
            if call.name != skill_tool::NAME || result.block.is_error == Some(true) {
                continue;
            }
            let Some(name) = result
                .structured
                .as_ref()
                .and_then(|s| s.get("commandName"))
                .and_then(Value::as_str)
            else {
                continue;
            };
            let Some(cmd) = commands.get(name) else {
                continue;
            };
            let args = call.input.get("args").and_then(Value::as_str).unwrap_or("");
            self.grant(cmd, core, io);
            let expansion = self.expand(cmd, args, core, io).await;
            let mut blocks = vec![
                ContentBlock::text(launching(&cmd.name)),
                ContentBlock::text(expansion.text),
            ];
            blocks.extend(expansion.files);
            result.block.content = Some(ToolResultContent::Blocks(blocks));
        }
    }

    /// Add a command's `allowed-tools` to the turn's grants (rules that do not parse are
    /// reported and left out).
    fn grant(&self, cmd: &CustomCommand, core: &Core, io: &TurnIo<'_>) {
        let origin = RuleOrigin::at(&core.config.cwd);
        let mut grants = lock(&self.grants);
        for text in &cmd.allowed_tools {
            match Rule::parse(text, &origin) {
                Ok(rule) => grants.push(rule),
                Err(e) => io.sink.notice(
                    "command",
                    "warning",
                    format!(
                        "/{}: ignoring allowed-tools entry {text:?} of {}: {e}",
                        cmd.name,
                        cmd.path.display()
                    ),
                ),
            }
        }
    }

    async fn expand(
        &self,
        cmd: &CustomCommand,
        args: &str,
        core: &mut Core,
        io: &TurnIo<'_>,
    ) -> super::expand::Expansion {
        let grants = lock(&self.grants).clone();
        let inner = self.saved.as_ref().unwrap_or(&core.permissions);
        let mode = io.live.borrow().mode;
        let fx = Effects {
            permissions: inner.as_ref(),
            grants: &grants,
            mode,
            approver: core.approver.as_ref(),
            requester: io.requester,
            ctx: &core.ctx,
            cancel: io.cancel,
            session_id: &core.config.session_id,
        };
        expand(cmd, args, &fx).await
    }
}

/// Claude Code's tags for a command the user ran.
pub(crate) fn tags(name: &str, args: &str) -> String {
    format!(
        "<command-message>{name} is running…</command-message>\n<command-name>/{name}</command-name>\n<command-args>{args}</command-args>"
    )
}

/// Blocks back to an input: one text block is plain text again.
fn simplify(mut blocks: Vec<ContentBlock>) -> UserInput {
    if blocks.len() == 1
        && let Some(ContentBlock::Text(t)) = blocks.first_mut()
    {
        return UserInput::Text(std::mem::take(&mut t.text));
    }
    UserInput::Blocks(blocks)
}

/// The session's checker during a turn: the turn's grants are allow rules, and loading a skill
/// that grants nothing needs no approval (Claude Code's "safe" skills).
struct Granted {
    inner: Arc<dyn PermissionChecker>,
    grants: Arc<Mutex<Vec<Rule>>>,
    commands: Arc<CommandSet>,
}

impl Granted {
    fn query<'a>(&self, q: &PermissionQuery<'a>) -> PermissionQuery<'a> {
        let mut query = *q;
        if q.tool == skill_tool::NAME
            && let Some(cmd) = q
                .input
                .get("skill")
                .and_then(Value::as_str)
                .and_then(|s| self.commands.get(s.trim()))
            && cmd.is_safe()
        {
            query.read_only = true;
        }
        query
    }
}

#[async_trait]
impl PermissionChecker for Granted {
    async fn check(&self, q: &PermissionQuery<'_>) -> PermissionDecision {
        let grants = lock(&self.grants).clone();
        self.inner.check_with_grants(&self.query(q), &grants).await
    }

    async fn check_with_grants(
        &self,
        q: &PermissionQuery<'_>,
        extra: &[Rule],
    ) -> PermissionDecision {
        let mut grants = lock(&self.grants).clone();
        grants.extend_from_slice(extra);
        self.inner.check_with_grants(&self.query(q), &grants).await
    }
}
