//! The `skiff` binary: argument parsing, agent set-up, then either the headless print mode
//! (`-p`, or when stdin/stdout is not a terminal) or the interactive REPL.

mod args;
mod cmd;
mod env_guard;
mod front;
mod logging;
mod session;
mod term;

use std::io::{IsTerminal, Read};
use std::process::ExitCode;

use clap::Parser;

use crate::args::{Args, Command, InputFormat, OutputFormat};

fn main() -> ExitCode {
    // `skiff --version` alone: clap's answer without building the whole command line (its
    // parser, the subcommands' definitions), which doubles the memory this takes; first, as
    // it reads nothing else and exits at once (each piece of code run first maps 64 KB of the
    // binary).
    if let Some(version) = version_only(std::env::args_os().skip(1)) {
        use std::io::Write as _;
        // `write_all` of the bytes, not `writeln!`: no formatting code to map in.
        let mut out = std::io::stdout().lock();
        return match out.write_all(version.as_bytes()).and_then(|()| out.flush()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(_) => ExitCode::FAILURE,
        };
    }
    // Before anything else runs (and before any thread starts): credentials out of reach.
    env_guard::capture_and_scrub();
    // `skiff __sandbox … -- PROGRAM …`: the Bash tool's sandbox helper confines this process
    // and execs the program (before any set-up: it must be quick).
    match std::env::args_os().nth(1) {
        Some(a) if a == skiff_tools::sandbox::HELPER_ARG => {
            return skiff_tools::sandbox::helper_main(std::env::args_os().skip(2));
        }
        // git's ssh ProxyCommand inside the sandbox.
        Some(a) if a == skiff_tools::sandbox::CONNECT_ARG => {
            return skiff_tools::sandbox::connect_main(std::env::args_os().skip(2));
        }
        _ => {}
    }
    let mut args = parse_tolerant(std::env::args_os().collect());
    args.normalize();
    // rustls's crypto provider (ring) for every HTTP client of the process: reqwest is built
    // without one and would refuse a client built before it is installed.
    skiff_llm::install_crypto_provider();
    // `skiff acp FLAGS…`: the flags after `acp` are the sessions' flags.
    let acp = match &args.command {
        Some(Command::Acp { flags }) => {
            args = front::acp::command_line(flags.len());
            true
        }
        _ => false,
    };
    logging::init_from_args(&args);
    if acp {
        return report(front::acp::main(args));
    }
    match &args.command {
        Some(Command::Config { flags }) if flags.is_empty() => {
            return report(cmd::config::run_config(&args));
        }
        Some(Command::Config { flags }) => {
            let argv = Args::without_config_token(std::env::args_os().collect(), flags.len());
            let mut run_args = Args::try_parse_from(argv).unwrap_or_else(|e| e.exit());
            run_args.normalize();
            return report(cmd::config::run_config(&run_args));
        }
        Some(Command::Sessions {
            action: None,
            output_format,
        }) => {
            let format = output_format.unwrap_or(args.output_format);
            return report(cmd::sessions::run_sessions(&args, format));
        }
        Some(Command::Sessions {
            action: Some(action),
            ..
        }) => return report(cmd::replay::run_sessions_command(&args, action)),
        Some(Command::Replay(replay_args)) => {
            return report(cmd::replay::run_replay(&args, replay_args));
        }
        Some(Command::Batch(batch_args)) => {
            return report(cmd::batch::run_batch(&args, batch_args));
        }
        Some(Command::Completions { shell }) => return report(print_completions(*shell)),
        Some(Command::Man) => return report(print_man_page()),
        Some(Command::Models) => return report(run_models(&args)),
        Some(Command::Mcp {
            action: args::McpCommand::Serve { flags },
        }) => {
            if flags.iter().any(|f| f == "--help" || f == "-h") {
                let mut help = Args::full_command();
                let text = help
                    .find_subcommand_mut("mcp")
                    .and_then(|m| m.find_subcommand_mut("serve"))
                    .map(|c| c.render_help().to_string())
                    .unwrap_or_default();
                return report(write_stdout(text.as_bytes()));
            }
            let raw = std::env::args_os().collect();
            let argv = Args::without_command_token(
                Args::without_command_token(raw, "serve", flags.len()),
                "mcp",
                flags.len(),
            );
            let mut serve_args = Args::try_parse_from(argv).unwrap_or_else(|e| e.exit());
            serve_args.normalize();
            return report(cmd::mcp_serve::run_serve(&serve_args));
        }
        Some(Command::Mcp { action }) => return report(cmd::mcp::run_mcp(&args, action)),
        Some(Command::Plugin { action }) => {
            return report(cmd::plugin::run_plugin(&args, action));
        }
        Some(Command::Acp { .. }) | None => {}
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("Error: could not start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let interactive =
        !args.print && std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let outcome = if interactive {
        repl_main(&runtime, &args)
    } else {
        runtime.block_on(run(args))
    };
    report(outcome)
}

/// Parse the command line: the flags Claude Code's clients pass that skiff ignores
/// ([`args::IGNORED_FLAGS`]) warn; any other unknown flag exits with status 2, naming the
/// closest flag.
fn parse_tolerant(argv: Vec<std::ffi::OsString>) -> Args {
    match Args::parse_command_line(argv) {
        Ok((args, warnings)) => {
            for w in warnings {
                eprintln!("{w}");
            }
            args
        }
        Err(e) => e.exit(),
    }
}

/// `skiff completions SHELL`: the completion script on stdout.
fn print_completions(shell: clap_complete::Shell) -> anyhow::Result<ExitCode> {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut Args::full_command(), "skiff", &mut buf);
    write_stdout(&buf)
}

/// `skiff man`: the man page (roff) on stdout. One page: its COMMANDS section describes each
/// command in place (clap_mangen's own names a `skiff-config(1)` page per command, and those
/// pages do not exist).
fn print_man_page() -> anyhow::Result<ExitCode> {
    let cmd = Args::full_command();
    let man = clap_mangen::Man::new(cmd.clone());
    let mut buf = Vec::new();
    man.render_title(&mut buf)?;
    man.render_name_section(&mut buf)?;
    man.render_synopsis_section(&mut buf)?;
    man.render_description_section(&mut buf)?;
    man.render_options_section(&mut buf)?;
    buf.extend_from_slice(commands_section(&cmd).as_bytes());
    man.render_version_section(&mut buf)?;
    write_stdout(&buf)
}

/// The man page's COMMANDS section: each command with its description (`skiff help COMMAND`
/// shows its options).
fn commands_section(cmd: &clap::Command) -> String {
    let mut out = String::from(".SH COMMANDS\n");
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        out.push_str(&format!(
            ".TP\n\\fBskiff {}\\fR\n",
            roff_text(sub.get_name())
        ));
        if let Some(about) = sub.get_about().or_else(|| sub.get_long_about()) {
            for line in about.to_string().lines() {
                out.push_str(&roff_text(line));
                out.push('\n');
            }
        }
    }
    out.push_str(".PP\nThe options of a command: \\fBskiff help\\fR \\fICOMMAND\\fR.\n");
    out
}

/// Text for a roff line: backslashes and minus signs escaped, no control character first.
fn roff_text(text: &str) -> String {
    let escaped = text.replace('\\', "\\e").replace('-', "\\-");
    if escaped.starts_with(['.', '\'']) {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

/// Write to stdout; a closed pipe (`skiff man | head`) is not an error.
fn write_stdout(bytes: &[u8]) -> anyhow::Result<ExitCode> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(anyhow::Error::new(e).context("writing to stdout"))
        }
        _ => Ok(ExitCode::SUCCESS),
    }
}

/// `skiff models`: the models the provider offers.
fn run_models(args: &Args) -> anyhow::Result<ExitCode> {
    let text =
        skiff_config::provider::models_text(&session::overrides(args), &session::environment())?;
    write_stdout(text.as_bytes())
}

/// Print a top-level error as one line and exit 1.
fn report(outcome: anyhow::Result<ExitCode>) -> ExitCode {
    match outcome {
        Ok(code) => code,
        Err(e) => {
            tracing::error!(error = %format!("{e:#}"), "exiting with an error");
            eprintln!("Error: {e:#}");
            if session::is_usage(&e) {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

fn repl_main(runtime: &tokio::runtime::Runtime, args: &Args) -> anyhow::Result<ExitCode> {
    let mut args = args.clone();
    args.trust |= ask_trust(&args);
    // The terminal UI, or the line REPL on a dumb terminal.
    let tui = front::tui::supported();
    let built = loop {
        let attempt = if tui {
            session::assemble_tui(&args, None)
        } else {
            session::assemble(&args, skiff_core::DeltaMode::Raw, None, None)
        };
        match attempt {
            Ok(built) => break built,
            Err(skiff_config::ConfigError::UnconfirmedBaseUrl(u))
                if confirm_base_url(&args, &u) =>
            {
                args.trust_base_url = Some(u.host.clone());
            }
            Err(e) => return Err(e.into()),
        }
    };
    let args = &args;
    let history = session::environment()
        .skiff_home()
        .map(|home| home.join("history"));
    if tui {
        let status_command = workspace_dir(args)
            .and_then(|cwd| session::settings(args, &cwd).ok())
            .and_then(|s| s.status_line.map(|c| c.value));
        return front::tui::run_tui(runtime, args, built, history, status_command);
    }
    front::repl::run_repl(runtime, args, built, history)
}

/// The workspace directory, canonical.
fn workspace_dir(args: &Args) -> Option<std::path::PathBuf> {
    let dir = match &args.cwd {
        Some(d) => d.clone(),
        None => std::env::current_dir().ok()?,
    };
    std::fs::canonicalize(dir).ok()
}

/// Ask one line on the terminal before the REPL starts; `true` for yes.
fn ask_yes_no(question: &str) -> bool {
    use std::io::{BufRead, Write};
    let mut out = std::io::stdout();
    let _ = out.write_all(question.as_bytes());
    let _ = out.flush();
    let mut line = String::new();
    if std::io::stdin().lock().read_line(&mut line).is_err() {
        return false;
    }
    matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

/// First start in a workspace with its own settings or `.env`: ask once whether to trust it,
/// and record the answer "yes" in the trust store. `true` when the user trusted it now.
fn ask_trust(args: &Args) -> bool {
    let Some(cwd) = workspace_dir(args) else {
        return false;
    };
    let Ok(settings) = crate::session::settings(args, &cwd) else {
        return false;
    };
    let found = skiff_config::trust::project_config_files(&cwd);
    if settings.trusted || found.is_empty() {
        return false;
    }
    let names: Vec<String> = found
        .iter()
        .map(|p| p.strip_prefix(&cwd).unwrap_or(p).display().to_string())
        .collect();
    let question = format!(
        "Do you trust the files in {}?\nIt has {}. A trusted workspace may set the API endpoint and \
         credentials, environment variables, allow rules, hooks, MCP servers and extra \
         directories; an untrusted one may not.\nTrust this folder? [y/N] ",
        cwd.display(),
        names.join(", ")
    );
    if !ask_yes_no(&question) {
        eprintln!(
            "Not trusted: its settings' env, allow rules, hooks and extra directories are ignored."
        );
        return false;
    }
    match settings.skiff_home.as_deref() {
        Some(home) => match skiff_config::trust::Store::update(home, &cwd, |r| r.trusted = true) {
            Ok(path) => eprintln!("Trusted; recorded in {}.", path.display()),
            Err(e) => eprintln!("Trusted for this run; not recorded: {e:#}"),
        },
        None => eprintln!("Trusted for this run (no skiff home to record it in)."),
    }
    true
}

/// The workspace sets the API base URL while the key comes from elsewhere: show the host and
/// ask; "yes" is recorded for this workspace and host.
fn confirm_base_url(args: &Args, u: &skiff_config::error::UnconfirmedBaseUrl) -> bool {
    let question = format!(
        "The workspace sets the API base URL (in {}) to host {}.\nYour API key would be sent to \
         {}. Send it there? [y/N] ",
        u.file, u.host, u.host
    );
    if !ask_yes_no(&question) {
        return false;
    }
    if let (Some(home), Some(cwd)) = (session::environment().skiff_home(), workspace_dir(args)) {
        let host = u.host.clone();
        if let Err(e) = skiff_config::trust::Store::update(&home, &cwd, |r| {
            if !r.base_url_hosts.contains(&host) {
                r.base_url_hosts.push(host);
            }
        }) {
            eprintln!("(not recorded: {e:#})");
        }
    }
    true
}

async fn run(mut args: Args) -> anyhow::Result<ExitCode> {
    // Print mode caps turns at 100 unless settings, SKIFF_MAX_TURNS or --max-turns say otherwise.
    args.default_max_turns = Some(skiff_config::DEFAULT_MAX_TURNS);
    if args.input_format == InputFormat::StreamJson {
        if args.output_format != OutputFormat::StreamJson {
            eprintln!("Error: --input-format=stream-json requires output-format=stream-json.");
            return Ok(ExitCode::from(2));
        }
        return front::stdio::run_stream_json(args).await;
    }
    if args.output_format == OutputFormat::StreamJson && args.print && !args.verbose {
        eprintln!("Error: When using --print, --output-format=stream-json requires --verbose");
        return Ok(ExitCode::from(2));
    }
    let prompt = match &args.prompt {
        Some(p) => p.clone(),
        None if !std::io::stdin().is_terminal() => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .map_err(|e| anyhow::anyhow!("reading the prompt from stdin: {e}"))?;
            s
        }
        None => {
            eprintln!(
                "Error: no prompt given. Usage: skiff -p \"your task\", or run skiff in a terminal"
            );
            return Ok(ExitCode::from(2));
        }
    };
    if prompt.trim().is_empty() {
        eprintln!("Error: the prompt is empty");
        return Ok(ExitCode::from(2));
    }
    let partial = args.include_partial_messages;
    let deltas = match args.output_format {
        // The answer is printed as it streams.
        OutputFormat::Text => skiff_core::DeltaMode::Raw,
        OutputFormat::StreamJson if partial => skiff_core::DeltaMode::Frames,
        OutputFormat::Json if partial && args.verbose => skiff_core::DeltaMode::Frames,
        _ => skiff_core::DeltaMode::Off,
    };
    let agent = session::assemble(&args, deltas, None, None)?.agent;
    let terminal_width = if std::io::stdout().is_terminal() {
        term::render::terminal_size().map(|(w, _)| w)
    } else {
        None
    };
    let stdout = std::io::stdout().lock();
    front::headless::run_print(
        agent,
        &args,
        prompt,
        std::io::BufWriter::new(stdout),
        terminal_width,
    )
    .await
}

/// `skiff --version` or `skiff -V` and nothing else: what clap prints for it.
fn version_only(mut rest: impl Iterator<Item = std::ffi::OsString>) -> Option<&'static str> {
    let first = rest.next()?;
    (rest.next().is_none() && (first == "--version" || first == "-V")).then_some(concat!(
        "skiff ",
        env!("CARGO_PKG_VERSION"),
        "\n"
    ))
}

#[cfg(test)]
mod version_tests {
    use clap::CommandFactory;

    #[test]
    fn the_quick_version_is_clap_s() {
        let clap = crate::args::Args::command().render_version();
        let quick = super::version_only(["--version".into()].into_iter()).unwrap();
        assert_eq!(clap, quick);
        assert!(super::version_only(["-V".into()].into_iter()).is_some());
        assert!(super::version_only(["-V".into(), "x".into()].into_iter()).is_none());
        assert!(super::version_only(["-p".into()].into_iter()).is_none());
        assert!(super::version_only(std::iter::empty()).is_none());
    }
}
