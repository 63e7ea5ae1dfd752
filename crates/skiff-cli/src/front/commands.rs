//! REPL slash commands: one table of name, arguments, help and handler, so new commands
//! (/compact, /resume, ...) slot in as rows. Handlers see the session's [`Status`] and say
//! what to do; the REPL does it through the session.

use skiff_core::commands::CommandSet;
use skiff_core::{PermissionMode, Status};

/// What the REPL does after a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Show the output and read the next line.
    Output(String),
    /// Leave the REPL.
    Exit,
    /// Compact the conversation, optionally focused on the given instructions.
    Compact(Option<String>),
    /// Pick a saved session to resume.
    Resume(Option<String>),
    /// Start a new conversation.
    Clear,
    /// Switch to this model and show the text.
    SetModel(String, String),
    /// Switch the permission mode.
    SetMode(PermissionMode),
    /// Show the permission mode and rules.
    Permissions,
    /// Show the Bash sandbox.
    Sandbox,
    /// Show the MCP servers.
    Mcp,
    /// `/plugin ARGS`: manage plugins and marketplaces.
    Plugin(String),
    /// Show the model's todo list.
    Todos,
}

/// One slash command.
pub struct Command {
    /// Name without the slash.
    pub name: &'static str,
    /// Argument synopsis for /help.
    pub args: &'static str,
    /// One-line help.
    pub help: &'static str,
    /// The handler: the session's status and the text after the command name.
    pub run: fn(&Status, &str) -> Action,
}

/// Every command, in /help order.
pub const COMMANDS: &[Command] = &[
    Command {
        name: "help",
        args: "",
        help: "show this list",
        run: help,
    },
    Command {
        name: "clear",
        args: "",
        help: "start a new conversation",
        run: clear,
    },
    Command {
        name: "compact",
        args: "[focus]",
        help: "summarise the conversation so far to free context",
        run: compact,
    },
    Command {
        name: "resume",
        args: "[session id]",
        help: "continue a saved session of this workspace",
        run: resume,
    },
    Command {
        name: "cost",
        args: "",
        help: "tokens and estimated cost of this session",
        run: cost,
    },
    Command {
        name: "model",
        args: "[name]",
        help: "show or switch the model",
        run: model,
    },
    Command {
        name: "permissions",
        args: "",
        help: "show the permission mode and the allow / ask / deny rules",
        run: |_, _| Action::Permissions,
    },
    Command {
        name: "sandbox",
        args: "",
        help: "show the Bash sandbox: what commands may write, the network, approvals",
        run: |_, _| Action::Sandbox,
    },
    Command {
        name: "mcp",
        args: "",
        help: "show the MCP servers: connected or why not, and their tools",
        run: |_, _| Action::Mcp,
    },
    Command {
        name: "plugin",
        args: "[list|install NAME@MKT|enable|disable|uninstall|marketplace add SOURCE|…]",
        help: "manage plugins and their marketplaces (changes load in new sessions)",
        run: |_, args| Action::Plugin(args.to_owned()),
    },
    Command {
        name: "bashes",
        args: "[stop ID]",
        help: "list the background commands (output file, status); stop one",
        run: bashes,
    },
    Command {
        name: "todos",
        args: "",
        help: "show the model's todo list",
        run: |_, _| Action::Todos,
    },
    Command {
        name: "mode",
        args: "[default|acceptEdits|plan|dontAsk|bypassPermissions]",
        help: "show or switch the permission mode",
        run: mode,
    },
    Command {
        name: "tools",
        args: "",
        help: "list the tools the model can use",
        run: tools,
    },
    Command {
        name: "exit",
        args: "",
        help: "leave skiff (also Ctrl-D)",
        run: |_, _| Action::Exit,
    },
];

/// Whether `line` is a slash command (not a prompt such as a path like `/etc/hosts`).
pub fn is_command(line: &str) -> bool {
    line.trim().strip_prefix('/').is_some_and(|rest| {
        !rest
            .split(char::is_whitespace)
            .next()
            .unwrap_or("")
            .contains('/')
    })
}

/// Run `line` if it is a slash command (`None` when it is a prompt); see [`dispatch_with`].
/// For front ends that do not offer custom commands.
#[allow(dead_code)]
pub fn dispatch(status: &Status, line: &str) -> Option<Action> {
    dispatch_with(status, line, &CommandSet::default())
}

/// Run `line` if it is a built-in slash command; `None` when it is a prompt — including a
/// custom command of `custom`, which the session expands.
pub fn dispatch_with(status: &Status, line: &str, custom: &CommandSet) -> Option<Action> {
    let rest = line.trim().strip_prefix('/')?;
    // A path like /etc/hosts typed as a prompt is not a command.
    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    if name.contains('/') {
        return None;
    }
    if name == "help" {
        return Some(Action::Output(list(custom)));
    }
    match COMMANDS.iter().find(|c| c.name == name) {
        Some(c) => Some((c.run)(status, args.trim())),
        None if custom.user_command(name).is_some() || custom.mcp().find(name).is_some() => None,
        None => Some(Action::Output(format!(
            "Unknown command /{name}.\n{}",
            list(custom)
        ))),
    }
}

/// Whether `line` is a command that needs the MCP servers connected to be known: `/help` (it
/// lists their prompts) and `/mcp__…` (one of them).
pub fn needs_mcp(line: &str) -> bool {
    let name = line
        .trim()
        .strip_prefix('/')
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or("");
    name == "help" || name.starts_with("mcp__")
}

/// One line of `/help`: how to call the command, and what it does.
pub type HelpEntry = (String, String);

/// The lines of `/help`: the built-in commands `builtin` keeps, then the custom commands and
/// skills the user can invoke.
pub fn help_entries(
    custom: &CommandSet,
    builtin: impl Fn(&str) -> bool,
) -> (Vec<HelpEntry>, Vec<HelpEntry>) {
    let builtins = COMMANDS
        .iter()
        .filter(|c| builtin(c.name))
        .map(|c| {
            let usage = if c.args.is_empty() {
                format!("/{}", c.name)
            } else {
                format!("/{} {}", c.name, c.args)
            };
            (usage, c.help.to_owned())
        })
        .collect();
    let mine = custom
        .commands()
        .iter()
        .filter(|c| c.user_invocable)
        .map(|c| {
            let usage = match &c.argument_hint {
                Some(hint) => format!("/{} {hint}", c.name),
                None => format!("/{}", c.name),
            };
            (usage, format!("{} ({})", c.description, c.origin()))
        })
        .collect();
    (builtins, mine)
}

/// The lines of `/help` for the MCP servers' prompts offered now.
pub fn mcp_help_entries(custom: &CommandSet) -> Vec<HelpEntry> {
    custom
        .mcp()
        .list()
        .into_iter()
        .map(|p| {
            let usage = match p.usage() {
                u if u.is_empty() => format!("/{}", p.command),
                u => format!("/{} {u}", p.command),
            };
            let help = match p.description.trim() {
                "" => format!("a prompt of MCP server {} (MCP)", p.server),
                d => format!("{d} (MCP)"),
            };
            (usage, help)
        })
        .collect()
}

/// `/help`: the built-in commands, then the custom commands and skills.
fn list(custom: &CommandSet) -> String {
    let (builtins, mine) = help_entries(custom, |_| true);
    let mut s = String::from("Commands:\n");
    for (usage, help) in &builtins {
        s.push_str(&format!("  {usage:<22} {help}\n"));
    }
    if !mine.is_empty() {
        s.push_str("Custom commands and skills:\n");
        for (usage, help) in &mine {
            s.push_str(&format!("  {usage:<22} {help}\n"));
        }
    }
    let prompts = mcp_help_entries(custom);
    if !prompts.is_empty() {
        s.push_str("MCP prompts:\n");
        for (usage, help) in &prompts {
            s.push_str(&format!("  {usage:<22} {help}\n"));
        }
    }
    s.push_str(
        "A trailing \\ (or Alt-Enter in the terminal UI) continues a line; Ctrl-C interrupts a turn; Ctrl-D exits.",
    );
    s
}

fn help(_: &Status, _: &str) -> Action {
    Action::Output(list(&CommandSet::default()))
}

fn clear(_: &Status, _: &str) -> Action {
    Action::Clear
}

fn compact(_: &Status, args: &str) -> Action {
    Action::Compact((!args.is_empty()).then(|| args.to_owned()))
}

fn resume(_: &Status, args: &str) -> Action {
    Action::Resume((!args.is_empty()).then(|| args.to_owned()))
}

fn cost(status: &Status, _: &str) -> Action {
    let c = &status.costs;
    let u = &c.total_usage;
    let mut s = format!(
        "Session cost: ${:.4}\nTokens: {} input, {} output, {} cache reads, {} cache writes",
        c.total_cost_usd,
        u.input_tokens,
        u.output_tokens,
        u.cache_read(),
        u.cache_creation()
    );
    for (model, m) in &c.per_model {
        s.push_str(&format!(
            "\n  {model}: ${:.4} ({} in / {} out)",
            m.cost_usd, m.input_tokens, m.output_tokens
        ));
    }
    Action::Output(s)
}

fn model(status: &Status, args: &str) -> Action {
    if args.is_empty() {
        return Action::Output(format!("Model: {}", status.model));
    }
    let resolved = skiff_llm::resolve_alias(args);
    let known = skiff_llm::model_info(&resolved).is_some();
    let note = if known {
        ""
    } else {
        " (no price known for it: its cost counts as $0)"
    };
    let text = format!("Model set to {resolved}{note}.");
    Action::SetModel(resolved, text)
}

fn mode(status: &Status, args: &str) -> Action {
    if args.is_empty() {
        return Action::Output(format!(
            "Permission mode: {} (modes: {})",
            status.permission_mode,
            PermissionMode::ALL.map(PermissionMode::as_str).join(", ")
        ));
    }
    match args.parse::<PermissionMode>() {
        Ok(m) => Action::SetMode(m),
        Err(e) => Action::Output(e),
    }
}

fn bashes(status: &Status, args: &str) -> Action {
    let args = args.trim();
    if let Some(id) = args.strip_prefix("stop").map(str::trim) {
        if id.is_empty() {
            return Action::Output("Usage: /bashes stop ID".to_owned());
        }
        return Action::Output(match status.background.iter().find(|s| s.id == id) {
            Some(shell) if shell.stop() => format!("Stopped {id} ({}).", shell.command),
            Some(shell) => format!("{id} is not running ({}).", shell.state().word()),
            None => format!("No background command {id}; /bashes lists them."),
        });
    }
    if !args.is_empty() {
        return Action::Output("Usage: /bashes [stop ID]".to_owned());
    }
    if status.background.is_empty() {
        return Action::Output("No background commands.".to_owned());
    }
    let mut out = String::from("Background commands:");
    for shell in &status.background {
        let state = match shell.state() {
            skiff_tools::background::ShellState::Exited(code) => {
                format!("{} (exit code {code})", shell.state().word())
            }
            other => other.word().to_owned(),
        };
        out.push_str(&format!(
            "\n  {}  {state}, {}s  {}\n      output: {}",
            shell.id,
            shell.started.elapsed().as_secs(),
            shell.command.lines().next().unwrap_or(""),
            shell.output_path.display()
        ));
    }
    out.push_str("\n(/bashes stop ID stops one)");
    Action::Output(out)
}

fn tools(status: &Status, _: &str) -> Action {
    Action::Output(format!("Tools: {}", status.tools.join(", ")))
}
