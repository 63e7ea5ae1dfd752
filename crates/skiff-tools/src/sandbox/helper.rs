//! The helper's command line: `HELPER __sandbox (--plan JSON | [--fs MODE] [--network POLICY]
//! [--write DIR]...) -- PROGRAM [ARG]...` confines itself as asked and runs the program;
//! `HELPER __connect HOST PORT` is git's ssh ProxyCommand inside a sandbox (a CONNECT through
//! the proxy named by `HTTPS_PROXY`, then stdin and stdout relayed).

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::ExitCode;

use super::plan::Plan;
use super::relay::CONNECT_ARG;
use super::request::HelperRequest;
use super::{HELPER_ARG, NetworkPolicy, SETUP_FAILED, SandboxMode, writable_paths};

/// The helper: confine this process as the arguments say (see the module docs of
/// [`crate::sandbox`]), then run the program. Returns only on failure or, with namespaces,
/// when the program's namespace has ended: 2 for bad arguments, [`SETUP_FAILED`] when the
/// sandbox cannot be set up (the program is not run), 127/126 when the program cannot be
/// executed, else the program's status. `args` are the arguments after `__sandbox`. Must run
/// while the process has one thread.
pub fn helper_main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let mut args = args.into_iter().peekable();
    #[cfg(target_os = "linux")]
    if args.peek().is_some_and(|a| a == super::zygote::ARG) {
        args.next();
        return super::zygote::serve(args);
    }
    let request = match HelperRequest::parse(args) {
        Ok(r) => r,
        Err(e) => {
            eprintln!(
                "skiff sandbox: {e}\nusage: skiff {HELPER_ARG} (--plan JSON | [--fs \
                 off|workspace-write|read-only] [--network allow|proxy|deny] [--write DIR]...) \
                 -- PROGRAM [ARG]..."
            );
            return ExitCode::from(2);
        }
    };
    if request.plan.namespaces.is_some() {
        if super::flag_var(super::SIMULATE_NO_NAMESPACES_VAR) {
            eprintln!(
                "skiff sandbox: namespaces are not available (simulated by {}); the command \
                 was not run",
                super::SIMULATE_NO_NAMESPACES_VAR
            );
            return ExitCode::from(SETUP_FAILED);
        }
        return run_namespaced(&request);
    }
    if let Err(e) = confine(&request.plan) {
        eprintln!("skiff sandbox: {e}; the command was not run");
        return ExitCode::from(SETUP_FAILED);
    }
    // Its input, output and error only (see `close_inherited_on_exec`).
    #[cfg(target_os = "linux")]
    if let Err(e) = super::namespaces::close_inherited_on_exec() {
        eprintln!("skiff sandbox: {e}; the command was not run");
        return ExitCode::from(SETUP_FAILED);
    }
    let error = std::process::Command::new(&request.program)
        .args(&request.args)
        .exec();
    eprintln!(
        "skiff sandbox: cannot run {}: {error}",
        Path::new(&request.program).display()
    );
    ExitCode::from(if error.kind() == std::io::ErrorKind::NotFound {
        127
    } else {
        126
    })
}

#[cfg(target_os = "linux")]
fn run_namespaced(request: &HelperRequest) -> ExitCode {
    super::namespaces::run(&request.plan, &request.program, &request.args)
}

#[cfg(not(target_os = "linux"))]
fn run_namespaced(_: &HelperRequest) -> ExitCode {
    eprintln!("skiff sandbox: namespaces need Linux; the command was not run");
    ExitCode::from(SETUP_FAILED)
}

/// The Landlock-only sandbox (no namespaces).
fn confine(plan: &Plan) -> Result<(), String> {
    if plan.fs != SandboxMode::Off {
        if super::simulate_unsupported() {
            return Err(format!(
                "Landlock is not available (simulated by {})",
                super::SIMULATE_UNSUPPORTED_VAR
            ));
        }
        super::landlock::restrict_filesystem(&writable_paths(plan.fs, &plan.write))?;
    }
    if plan.network == NetworkPolicy::Deny {
        super::landlock::deny_network()?;
    }
    Ok(())
}

/// `HELPER __connect HOST PORT`: a tunnel through the proxy named by `HTTPS_PROXY` (or
/// `HTTP_PROXY`) to `HOST:PORT` on stdin and stdout: git's ssh ProxyCommand in a sandbox.
/// `args` are the arguments after `__connect`.
pub fn connect_main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let args: Vec<String> = args
        .into_iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let [host, port] = args.as_slice() else {
        eprintln!("usage: skiff-sandbox {CONNECT_ARG} HOST PORT");
        return ExitCode::from(2);
    };
    match tunnel(host, port) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("skiff sandbox: {e}");
            ExitCode::from(1)
        }
    }
}

fn tunnel(host: &str, port: &str) -> Result<(), String> {
    let proxy = ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|s| !s.is_empty()))
        .ok_or("no proxy: HTTPS_PROXY is not set (this runs inside skiff's sandbox)")?;
    let address = proxy
        .split_once("://")
        .map_or(proxy.as_str(), |(_, r)| r)
        .trim_end_matches('/');
    let mut stream =
        TcpStream::connect(address).map_err(|e| format!("cannot reach the proxy: {e}"))?;
    let authority = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    stream
        .write_all(format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n").as_bytes())
        .map_err(|e| e.to_string())?;
    let mut reader = BufReader::new(stream.try_clone().map_err(|e| e.to_string())?);
    let mut status = String::new();
    reader.read_line(&mut status).map_err(|e| e.to_string())?;
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) => break,
            Ok(_) if line == "\r\n" || line == "\n" => break,
            Ok(_) => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    if status.split_whitespace().nth(1) != Some("200") {
        let mut why = String::new();
        let _ = std::io::Read::read_to_string(&mut reader.take_limited(), &mut why);
        return Err(format!("the proxy refused {authority}: {}", why.trim()));
    }
    let mut to_proxy = stream.try_clone().map_err(|e| e.to_string())?;
    let up = std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut to_proxy);
        let _ = to_proxy.shutdown(std::net::Shutdown::Write);
    });
    let mut out = std::io::stdout().lock();
    let _ = std::io::copy(&mut reader, &mut out);
    let _ = out.flush();
    drop(up);
    Ok(())
}

trait TakeLimited: Sized + std::io::Read {
    fn take_limited(self) -> std::io::Take<Self> {
        self.take(1024)
    }
}

impl<R: std::io::Read> TakeLimited for R {}
