//! `skiff-mock`: serve a model script file as a mock Anthropic Messages API on 127.0.0.1.
//!
//! Usage: `skiff-mock --script FILE [--port P] [--repeat] [--idle-exit SECS] [--timeline OUT]`.
//! The first stdout line is `listening on http://127.0.0.1:PORT`; the server runs until killed,
//! or exits 0 once no request has arrived for `--idle-exit` seconds (default 600). A script is
//! played once (a call after its last turn is a `script_exhausted` error) unless `--repeat` (or
//! the script's `"repeat": true`) plays it in a loop: then each run that takes the whole script,
//! one after the other, sees it from its first turn. `--timeline OUT` writes to the file OUT a
//! line for each request's arrival and each streamed answer's end (`NANOS request METHOD PATH`,
//! `NANOS answered`: nanoseconds since the server started), for benchmarks of the client's own
//! time between an answer and its next request (bench/lean.py).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use skiff_testkit::{MockServer, Script};

const USAGE: &str = "usage: skiff-mock --script FILE [--port P] [--repeat] [--idle-exit SECS \
                     (default 600)] [--timeline OUT]";

/// Parsed command line.
struct Args {
    script: PathBuf,
    port: u16,
    /// Play the script in a loop.
    repeat: bool,
    idle_exit: Duration,
    /// Where to note arrivals and answers' ends.
    timeline: Option<PathBuf>,
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut script = None;
    let mut port = 0u16;
    let mut repeat = false;
    let mut idle_exit = Duration::from_secs(600);
    let mut timeline = None;
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
            _ => (arg, None),
        };
        if flag == "-h" || flag == "--help" {
            return Err(String::new());
        }
        if flag == "--repeat" && inline.is_none() {
            repeat = true;
            continue;
        }
        let mut value = || {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        match flag.as_str() {
            "--script" => script = Some(PathBuf::from(value()?)),
            "--timeline" => timeline = Some(PathBuf::from(value()?)),
            "--port" => {
                let v = value()?;
                port = v.parse().map_err(|_| format!("invalid --port: {v}"))?;
            }
            "--idle-exit" => {
                let v = value()?;
                let secs: u64 = v.parse().map_err(|_| format!("invalid --idle-exit: {v}"))?;
                idle_exit = Duration::from_secs(secs);
            }
            other => return Err(format!("unknown argument: {other}")),
        }
    }
    let script = script.ok_or_else(|| "--script FILE is required".to_owned())?;
    Ok(Args {
        script,
        port,
        repeat,
        idle_exit,
        timeline,
    })
}

fn load_script(path: &PathBuf) -> Result<Script, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read script file {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("invalid script file {}: {e}", path.display()))
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(msg) if msg.is_empty() => {
            let _ = writeln!(std::io::stdout(), "{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(msg) => {
            eprintln!("skiff-mock: {msg}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let script = match load_script(&args.script) {
        Ok(mut script) => {
            script.repeat |= args.repeat;
            script
        }
        Err(msg) => {
            eprintln!("skiff-mock: {msg}");
            return ExitCode::FAILURE;
        }
    };
    let mut builder = MockServer::builder()
        .script(script)
        .port(args.port)
        .no_record()
        .allow_invalid_requests();
    if let Some(path) = &args.timeline {
        builder = builder.timeline(path);
    }
    let server = match builder.start().await {
        Ok(server) => server,
        Err(e) => {
            eprintln!("skiff-mock: cannot start on 127.0.0.1:{}: {e}", args.port);
            return ExitCode::FAILURE;
        }
    };
    {
        let mut out = std::io::stdout().lock();
        if writeln!(out, "listening on {}", server.url())
            .and_then(|()| out.flush())
            .is_err()
        {
            return ExitCode::FAILURE;
        }
    }
    loop {
        let idle = server.idle_time();
        if idle >= args.idle_exit && server.open_streams() == 0 {
            break;
        }
        let wait = args
            .idle_exit
            .saturating_sub(idle)
            .clamp(Duration::from_millis(100), Duration::from_secs(1));
        tokio::select! {
            _ = tokio::signal::ctrl_c() => break,
            () = tokio::time::sleep(wait) => {}
        }
    }
    server.shutdown().await;
    ExitCode::SUCCESS
}
