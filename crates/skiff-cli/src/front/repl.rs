//! The line REPL, for dumb terminals and `SKIFF_TUI=off`: lines in ([`LineInput`]: the
//! terminal's own line editing, a trailing `\` to continue, history kept with the terminal
//! UI's), streamed rendering, slash commands. Ctrl-C interrupts the running turn; at the prompt
//! a second Ctrl-C (or Ctrl-D) exits. An API error ends the turn, prints the error and keeps
//! the conversation.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use skiff_core::PermissionMode;
use skiff_core::permissions::{AskClient, PermissionEngine, PermissionUpdate};
use skiff_core::{
    Agent, Answer, ApprovalAnswer, DeltaMode, Event, Op, Request, RequestKind, Session,
};
use skiff_protocol::sdk::SdkMessage;

use crate::front::approval::{self, Choice};
use crate::front::commands::{self, Action};
use crate::front::history::History;
use crate::front::line_input::{Line, LineInput};
use crate::term::render::Renderer;

/// Where lines come from, and what answers change.
struct Input {
    lines: LineInput,
    /// The prompts sent, shared with the terminal UI.
    history: History,
    /// The rules "always" adds to, and the workspace whose local settings keep them.
    engine: Arc<PermissionEngine>,
    cwd: PathBuf,
}

/// Whether to use colors (and the spinner): a terminal on stdout that is not a dumb one, and no
/// NO_COLOR.
fn use_color() -> bool {
    std::io::stdout().is_terminal()
        && std::env::var("TERM").is_ok_and(|t| !t.is_empty() && t != "dumb")
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Run the REPL until the user exits.
pub fn run_repl(
    rt: &tokio::runtime::Runtime,
    args: &crate::args::Args,
    built: skiff_config::Assembled,
    history: Option<PathBuf>,
) -> anyhow::Result<ExitCode> {
    let skiff_config::Assembled {
        agent,
        engine,
        local,
        sandbox,
        mut mcp,
        ..
    } = built;
    let agent = agent.with_approver(Arc::new(AskClient));
    let first_prompt = args.prompt.clone();
    let color = use_color();
    let mut renderer = Renderer::new(std::io::stdout(), color);
    renderer.set_local(local);
    let banner = format!(
        "skiff {} · {} · {}\n/help for commands · end a line with \\ to go on to the next · Ctrl-C interrupts · Ctrl-D exits",
        env!("CARGO_PKG_VERSION"),
        agent.config().model,
        agent.config().cwd.display()
    );
    let cwd = agent.config().cwd.clone();
    // Custom commands and skills (for /help; the session expands them).
    let mut custom = Arc::clone(&agent.config().commands);
    renderer.say(&if color {
        format!("\x1b[2m{banner}\x1b[0m")
    } else {
        banner
    });
    let mut session = {
        let _rt = rt.enter();
        agent.spawn()
    };
    let mut input = Input {
        lines: LineInput::new(rt),
        history: History::load(history),
        engine,
        cwd: cwd.clone(),
    };
    if let Some(p) = first_prompt {
        renderer.say(&format!("you> {p}"));
        run_turn(rt, &mut session, &mut renderer, &mut input, p);
    }
    let mut ctrl_c_once = false;
    loop {
        let line = match rt.block_on(input.lines.entry("you> ")) {
            Ok(Line::Text(line)) => line,
            Ok(Line::Interrupted) => {
                if ctrl_c_once {
                    break;
                }
                ctrl_c_once = true;
                renderer.say("(Ctrl-C again or Ctrl-D to exit)");
                continue;
            }
            Ok(Line::End) => break,
            Err(e) => {
                renderer.say(&format!("Error: reading input failed: {e}"));
                rt.block_on(session.shutdown());
                return Ok(ExitCode::FAILURE);
            }
        };
        ctrl_c_once = false;
        let prompt = line.trim();
        if prompt.is_empty() {
            continue;
        }
        input.history.add(prompt);
        if !commands::is_command(prompt) {
            run_turn(
                rt,
                &mut session,
                &mut renderer,
                &mut input,
                prompt.to_owned(),
            );
            continue;
        }
        let status = match rt.block_on(session.status()) {
            Ok(s) => s,
            Err(e) => {
                renderer.say(&format!("Error: {e}"));
                return Ok(ExitCode::FAILURE);
            }
        };
        if commands::needs_mcp(prompt) && !mcp.is_connected() {
            renderer.say("(waiting for the MCP servers to connect…)");
            rt.block_on(mcp.connected());
        }
        match commands::dispatch_with(&status, prompt, &custom) {
            None => run_turn(
                rt,
                &mut session,
                &mut renderer,
                &mut input,
                prompt.to_owned(),
            ),
            Some(Action::Output(text)) => renderer.say(&text),
            Some(Action::Exit) => break,
            Some(Action::Clear) => {
                if session.submit(Op::Clear).is_ok() {
                    renderer.say("Started a new conversation.");
                }
            }
            Some(Action::SetModel(model, text)) => {
                if session.handle().set_model(model).is_ok() {
                    renderer.say(&text);
                }
            }
            Some(Action::SetMode(mode)) => {
                if session.handle().set_permission_mode(mode).is_ok() {
                    renderer.say(&format!("Permission mode set to {mode}."));
                }
            }
            Some(Action::Permissions) => {
                renderer.say(&permissions_text(status.permission_mode, &input.engine));
            }
            Some(Action::Sandbox) => renderer.say(&sandbox.to_string()),
            Some(Action::Mcp) => renderer.say(&mcp.describe()),
            Some(Action::Plugin(words)) => {
                let mut confirm = |question: &str| {
                    renderer.say(question);
                    Ok(matches!(
                        rt.block_on(input.lines.line("[y/N] ")),
                        Ok(Line::Text(a)) if matches!(a.trim(), "y" | "Y" | "yes")
                    ))
                };
                let text = crate::cmd::plugin::repl_command(args, &cwd, &words, &mut confirm);
                renderer.say(&text);
            }
            Some(Action::Todos) => renderer.say("The todo list is shown as the model updates it."),
            Some(Action::Compact(focus)) => compact(rt, &mut session, &mut renderer, focus),
            Some(Action::Resume(id)) => {
                if let Some((resumed, engine, servers)) = resume(args, &cwd, &mut renderer, id) {
                    input.engine = engine;
                    mcp = servers;
                    custom = Arc::clone(&resumed.config().commands);
                    let old = std::mem::replace(&mut session, {
                        let _rt = rt.enter();
                        resumed.spawn()
                    });
                    rt.block_on(old.shutdown());
                }
            }
        }
    }
    rt.block_on(session.shutdown());
    Ok(ExitCode::SUCCESS)
}

/// `/permissions`: the mode and every rule, by kind.
pub(crate) fn permissions_text(
    mode: skiff_core::PermissionMode,
    engine: &PermissionEngine,
) -> String {
    let rules = engine.rules();
    let mut out = format!("Permission mode: {mode} (switch with /mode NAME)\n");
    for (name, list) in [
        ("deny", &rules.deny),
        ("ask", &rules.ask),
        ("allow", &rules.allow),
    ] {
        if list.is_empty() {
            out.push_str(&format!("{name}: (none)\n"));
        } else {
            out.push_str(&format!("{name}:\n"));
            for r in list {
                out.push_str(&format!("  {r}\n"));
            }
        }
    }
    out.push_str("Read-only tools and read-only commands (ls, cat, git status, …) inside the workspace run without asking.");
    out
}

/// A SIGINT listener for the duration of a turn (None, with a log line, if it cannot be set).
fn sigint() -> Option<tokio::signal::unix::Signal> {
    match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()) {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::warn!(error = %e, "cannot catch Ctrl-C");
            None
        }
    }
}

async fn next_sigint(s: &mut Option<tokio::signal::unix::Signal>) {
    match s.as_mut() {
        Some(s) => {
            s.recv().await;
        }
        None => std::future::pending::<()>().await,
    }
}

/// `/compact [focus]`: summarise the conversation now; Ctrl-C cancels and keeps it as it was.
fn compact(
    rt: &tokio::runtime::Runtime,
    session: &mut Session,
    renderer: &mut Renderer<std::io::Stdout>,
    focus: Option<String>,
) {
    renderer.say("Compacting the conversation…");
    let outcome = rt.block_on(async {
        let mut sig = sigint();
        let handle = session.handle();
        let compacting = session.compact(focus.as_deref());
        tokio::pin!(compacting);
        loop {
            tokio::select! {
                r = &mut compacting => break r,
                () = next_sigint(&mut sig) => handle.interrupt(),
            }
        }
    });
    match outcome {
        Ok(report) => {
            for ev in report.events {
                renderer.event(&Event::Frame(ev));
            }
            renderer.say(&format!(
                "Compacted {} messages into a summary: about {} → {} tokens.",
                report.summarized_messages, report.pre_tokens, report.post_tokens
            ));
        }
        Err(e) => renderer.say(&format!("Not compacted: {e}")),
    }
}

/// `/resume [id]`: without an id, list this workspace's sessions; with one (or a unique
/// prefix), build the agent that continues that conversation.
fn resume(
    args: &crate::args::Args,
    cwd: &std::path::Path,
    renderer: &mut Renderer<std::io::Stdout>,
    id: Option<String>,
) -> Option<(
    Agent,
    Arc<PermissionEngine>,
    skiff_config::mcp::session::McpHandle,
)> {
    let Some(home) = skiff_core::transcript::default_skiff_home() else {
        renderer.say("No SKIFF_HOME or HOME: sessions are not saved.");
        return None;
    };
    let Some(id) = id else {
        let sessions = skiff_core::transcript::list_sessions(&home, cwd);
        if sessions.is_empty() {
            renderer.say("No saved sessions in this workspace.");
            return None;
        }
        let mut text = String::from(
            "Sessions of this workspace (newest first); /resume ID to continue one:\n",
        );
        for s in sessions.iter().take(20) {
            let prompt: String = s
                .first_prompt
                .as_deref()
                .unwrap_or("")
                .chars()
                .take(60)
                .collect::<String>()
                .replace('\n', " ");
            text.push_str(&format!(
                "  {}  {}  {:>4} msgs  {prompt}\n",
                &s.id[..s.id.len().min(8)],
                s.modified_iso(),
                s.message_count
            ));
        }
        renderer.say(&text);
        return None;
    };
    let mut resumed_args = args.clone();
    resumed_args.resume = Some(id);
    resumed_args.continue_session = false;
    resumed_args.fork_session = false;
    resumed_args.session_id = None;
    resumed_args.prompt = None;
    match crate::session::assemble(&resumed_args, DeltaMode::Raw, None, None) {
        Ok(skiff_config::Assembled {
            agent: a,
            engine,
            mcp,
            ..
        }) => {
            renderer.say(&format!(
                "Resumed session {} ({} messages).",
                a.config().session_id,
                a.history().len()
            ));
            Some((a.with_approver(Arc::new(AskClient)), engine, mcp))
        }
        Err(e) => {
            renderer.say(&format!("Cannot resume: {e:#}"));
            None
        }
    }
}

/// Run one prompt; Ctrl-C (SIGINT) interrupts it and returns to the prompt. Approval requests
/// are asked on the terminal, one at a time.
fn run_turn(
    rt: &tokio::runtime::Runtime,
    session: &mut Session,
    renderer: &mut Renderer<std::io::Stdout>,
    input: &mut Input,
    prompt: String,
) {
    rt.block_on(async {
        let mut sig = sigint();
        renderer.start_turn();
        if session.send_message(prompt).is_err() {
            renderer.say("Error: the session has ended.");
            return;
        }
        let handle = session.handle();
        let mut ticker = tokio::time::interval(Duration::from_millis(100));
        loop {
            tokio::select! {
                ev = session.next_event() => match ev {
                    Some(Event::Request(request)) => {
                        let (answer, updates) = ask(renderer, input, &request).await;
                        // The changes first: the session applies them before the call runs.
                        if !updates.is_empty() {
                            let _ = handle.update_permissions(updates);
                        }
                        let _ = handle.reply(request.id, answer);
                    }
                    Some(e) => {
                        let done = matches!(&e, Event::Frame(SdkMessage::Result(_)));
                        renderer.event(&e);
                        if done {
                            break;
                        }
                    }
                    None => break,
                },
                _ = ticker.tick() => renderer.tick(),
                () = next_sigint(&mut sig) => handle.interrupt(),
            }
        }
    });
}

/// Ask the user about a request on the terminal (the session waits meanwhile): the call, a
/// diff for edits, then yes / always (adds an allow rule to `.skiff/settings.local.json`) / no
/// (anything else typed is feedback for the model). Ctrl-C or Ctrl-D denies and interrupts.
async fn ask(
    renderer: &mut Renderer<std::io::Stdout>,
    input: &mut Input,
    request: &Request,
) -> (Answer, Vec<PermissionUpdate>) {
    let RequestKind::Approval(a) = &request.kind else {
        return (Answer::Json(serde_json::json!({})), Vec::new());
    };
    if a.tool_name == "ExitPlanMode" {
        return plan_approval(renderer, input, a).await;
    }
    if a.tool_name == skiff_core::permissions::network::NETWORK_TOOL {
        return (network_approval(renderer, input, a).await, Vec::new());
    }
    let call = format!(
        "{}({})",
        a.tool_name,
        crate::term::view::tool_summary(&a.tool_name, &a.input)
    );
    renderer.say(&format!("{call} needs your approval."));
    let preview = approval::preview(a, &input.cwd, 40);
    if !preview.is_empty() {
        renderer.say(&preview.join("\n"));
    }
    let rules =
        input
            .engine
            .suggest_rules(&a.tool_name, &a.input, skiff_core::PermissionMode::Default);
    let always = if rules.is_empty() {
        String::new()
    } else {
        format!(" / [a]lways: allow {} from now on", rules.join(", "))
    };
    let question =
        format!("Allow it? [y]es{always} / [n]o, or tell the model what to do instead: ");
    let answer = match input.lines.line(&question).await {
        Ok(Line::Text(line)) => match approval::parse_choice(&line) {
            Choice::Yes => Answer::Approval(ApprovalAnswer::allow()),
            // Added and saved by the session (it reports where).
            Choice::Always if !rules.is_empty() => {
                let update = PermissionUpdate::allow_always(rules);
                return (Answer::Approval(ApprovalAnswer::allow()), vec![update]);
            }
            Choice::Always => Answer::Approval(ApprovalAnswer::allow()),
            Choice::No => Answer::Approval(approval::reject(None)),
            Choice::Feedback(text) => Answer::Approval(approval::reject(Some(&text))),
        },
        Ok(_) => Answer::Approval(approval::reject(None)),
        Err(e) => {
            tracing::warn!(error = %e, "cannot read the answer to an approval; denied");
            Answer::Approval(approval::reject(None))
        }
    };
    (answer, Vec::new())
}

/// A sandboxed command wants a host that is not allowed: yes (for this session), always
/// (saved in `sandbox.network.allowedDomains` of `.claude/settings.local.json`) or no (the
/// command's connection fails; the turn goes on).
async fn network_approval(
    renderer: &mut Renderer<std::io::Stdout>,
    input: &mut Input,
    a: &skiff_core::ApprovalRequest,
) -> Answer {
    let s = |k: &str| a.input.get(k).and_then(serde_json::Value::as_str);
    let host = s("host").unwrap_or("?");
    let port = a
        .input
        .get("port")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0);
    let entry = skiff_core::permissions::network::domain_entry(&a.input);
    renderer.say(&format!(
        "The sandboxed command `{}` wants to connect to {host}:{port}, which is not in sandbox.network.allowedDomains.",
        skiff_config::sessions::one_line(s("command").unwrap_or(""), 80)
    ));
    let question = format!(
        "Allow it? [y]es, for this session / [a]lways: add {entry:?} to .claude/settings.local.json / [n]o: "
    );
    let deny = || {
        Answer::Approval(ApprovalAnswer::Deny {
            message: "The user did not allow the network access.".into(),
            interrupt: false,
        })
    };
    match input.lines.line(&question).await {
        Ok(Line::Text(line)) => match approval::parse_choice(&line) {
            Choice::Yes => Answer::Approval(ApprovalAnswer::allow()),
            Choice::Always => {
                match approval::persist_allowed_domain(&input.cwd, &entry) {
                    Ok(path) => renderer.say(&format!("Added {entry} to {}.", path.display())),
                    Err(e) => renderer.say(&format!(
                        "Allowed {entry} for this session; not saved: {e:#}"
                    )),
                }
                Answer::Approval(ApprovalAnswer::allow())
            }
            Choice::No | Choice::Feedback(_) => deny(),
        },
        _ => deny(),
    }
}

/// The model asks to leave plan mode with a plan: show it; yes switches the session to
/// `acceptEdits` (or `default` with `d`), anything else keeps planning.
async fn plan_approval(
    renderer: &mut Renderer<std::io::Stdout>,
    input: &mut Input,
    a: &skiff_core::ApprovalRequest,
) -> (Answer, Vec<PermissionUpdate>) {
    let plan = a
        .input
        .get("plan")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("(no plan given)");
    renderer.say(&format!("The model's plan:\n{plan}"));
    let question = "Start on it? [y]es, accepting edits / [d]efault: ask before edits / [n]o, keep planning (or say what to change): ";
    let answer = input.lines.line(question).await;
    // The next mode goes to the session before the answer.
    let allow_with = |mode: PermissionMode| {
        (
            Answer::Approval(ApprovalAnswer::allow()),
            vec![PermissionUpdate::mode(mode)],
        )
    };
    let answer = match answer {
        Ok(Line::Text(line)) => match line.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => return allow_with(PermissionMode::AcceptEdits),
            "d" | "default" => return allow_with(PermissionMode::Default),
            "" | "n" | "no" => Answer::Approval(ApprovalAnswer::Deny {
                message: "The user doesn't want to proceed with this plan yet. Stay in plan mode and wait for the user.".into(),
                interrupt: true,
            }),
            _ => Answer::Approval(approval::reject(Some(line.trim()))),
        },
        _ => Answer::Approval(approval::reject(None)),
    };
    (answer, Vec::new())
}
