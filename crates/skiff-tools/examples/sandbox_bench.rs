//! The sandbox's cost per Bash call, through the real Bash tool: `true` run without a sandbox,
//! under Landlock only, and in the namespace sandbox (network denied; through the proxy), median
//! and 90th percentile of RUNS calls each; the first call of a session (the namespace probe
//! and the proxy starting); and round trips to a host port forwarded into the sandbox against
//! the same without one. Figures only. `bench/sandbox.sh` builds and runs it.
//!
//!     sandbox_bench HELPER [RUNS]

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::json;
use skiff_tools::bash::BashTool;
use skiff_tools::sandbox::{
    NetworkPolicy, SandboxMode, SandboxPolicy, SandboxRuntime, SandboxSettings, SandboxStatus,
};
use skiff_tools::{SandboxConfig, Tool, ToolConfig, ToolContext, Typed};

fn context(ws: &std::path::Path, sandbox: Option<SandboxConfig>) -> ToolContext {
    let config = ToolConfig {
        sandbox,
        ..ToolConfig::default()
    };
    ToolContext::with_dirs(ws, &[], config).unwrap()
}

fn sandbox(
    helper: &std::path::Path,
    ws: &std::path::Path,
    network: NetworkPolicy,
    namespaces: bool,
    home: &std::path::Path,
    allowed_domains: &[String],
) -> SandboxConfig {
    let policy = SandboxPolicy {
        mode: SandboxMode::WorkspaceWrite,
        network,
        ..SandboxPolicy::default()
    };
    let status = SandboxStatus::decide(&policy);
    let runtime = namespaces.then(|| {
        SandboxRuntime::new(
            helper.to_path_buf(),
            &status,
            SandboxSettings {
                home: std::env::var_os("HOME").map(PathBuf::from),
                skiff_home: Some(home.to_path_buf()),
                allowed_domains: allowed_domains.to_vec(),
                ..SandboxSettings::default()
            },
            vec![ws.to_path_buf()],
            None,
        )
    });
    status.config(helper.to_path_buf(), runtime).unwrap()
}

async fn call(ctx: &ToolContext) -> Duration {
    let started = Instant::now();
    let out = Typed::new(BashTool)
        .call(json!({"command": "true"}), ctx)
        .await;
    let took = started.elapsed();
    assert!(!out.is_error, "{out:?}");
    took
}

async fn measure(label: &str, ctx: &ToolContext, runs: usize, base: Option<f64>) -> f64 {
    for _ in 0..5 {
        call(ctx).await;
    }
    let mut times: Vec<f64> = Vec::with_capacity(runs);
    for _ in 0..runs {
        times.push(call(ctx).await.as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    let median = times[runs / 2];
    let p90 = times[runs * 9 / 10];
    let added = base.map_or(String::new(), |b| format!("{:+.2}", median - b));
    println!("{label:<46} {median:>10.2} {p90:>10.2} {added:>12}");
    median
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let helper = PathBuf::from(args.next().expect("usage: sandbox_bench HELPER [RUNS]"));
    let runs: usize = args.next().map_or(200, |r| r.parse().unwrap());
    let dir = tempfile::tempdir_in(".").unwrap();
    let ws = std::fs::canonicalize(dir.path()).unwrap();
    let home = tempfile::tempdir().unwrap();
    std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&ws)
        .status()
        .unwrap();

    // The first call of a session: the probe (started with the runtime) and the proxy.
    let first_start = Instant::now();
    let first_ctx = context(
        &ws,
        Some(sandbox(
            &helper,
            &ws,
            NetworkPolicy::Proxy,
            true,
            home.path(),
            &[],
        )),
    );
    let first = call(&first_ctx).await;
    let session = first_start.elapsed();
    let second = call(&first_ctx).await;

    println!("skiff sandbox: cost of one Bash call (`true`), {runs} calls each, release build");
    println!(
        "{:<46} {:>10} {:>10} {:>12}",
        "", "median ms", "p90 ms", "added ms"
    );
    let base = measure("no sandbox", &context(&ws, None), runs, None).await;
    measure(
        "Landlock only (namespaces unavailable)",
        &context(
            &ws,
            Some(sandbox(
                &helper,
                &ws,
                NetworkPolicy::Deny,
                false,
                home.path(),
                &[],
            )),
        ),
        runs,
        Some(base),
    )
    .await;
    measure(
        "namespaces + Landlock, network denied",
        &context(
            &ws,
            Some(sandbox(
                &helper,
                &ws,
                NetworkPolicy::Deny,
                true,
                home.path(),
                &[],
            )),
        ),
        runs,
        Some(base),
    )
    .await;
    let ctx = context(
        &ws,
        Some(sandbox(
            &helper,
            &ws,
            NetworkPolicy::Proxy,
            true,
            home.path(),
            &[],
        )),
    );
    measure(
        "namespaces + Landlock, network through proxy",
        &ctx,
        runs,
        Some(base),
    )
    .await;
    // Where the time goes: the host-side preparation and checks alone, no command run.
    let runtime = ctx
        .config
        .sandbox
        .as_ref()
        .and_then(|s| s.runtime.clone())
        .unwrap();
    let mut prep: Vec<f64> = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        let call = skiff_tools::sandbox::CallRequest {
            allowed_dirs: ctx.guard.allowed_dirs(),
            tool_use_id: None,
            network_approver: None,
        };
        let prepared = runtime.prepare(call, "true").await.unwrap();
        let _ = prepared.finish(&|_| false);
        prep.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    prep.sort_by(f64::total_cmp);
    println!(
        "{:<46} {:>10.2} {:>10.2}",
        "  of which skiff's preparation and checks",
        prep[runs / 2],
        prep[runs * 9 / 10]
    );
    println!(
        "first call of a session (probe + proxy start): {:.2} ms from the runtime's creation, \
         {:.2} ms for the call; the second call {:.2} ms",
        session.as_secs_f64() * 1000.0,
        first.as_secs_f64() * 1000.0,
        second.as_secs_f64() * 1000.0
    );
    forwarded_port(&helper, &ws, home.path()).await;
}

/// A client of a server on the host (a test suite's database) that writes each request in two
/// pieces with Nagle's algorithm off, as database drivers do, then reads the 10-byte answer:
/// `ROUND_TRIPS` round trips, timed by the client itself (python3).
const CLIENT: &str = "import socket, sys, time
c = socket.create_connection(('127.0.0.1', int(sys.argv[1])))
c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
n = int(sys.argv[2])
t = time.perf_counter()
for _ in range(n):
    c.sendall(b'a' * 10)
    time.sleep(0.0002)
    c.sendall(b'b' * 10)
    got = b''
    while len(got) < 10:
        got += c.recv(10 - len(got))
print(f'{(time.perf_counter() - t) * 1000 / n:.2f}')
";

const ROUND_TRIPS: usize = 40;

/// Round trips to a host port forwarded into the sandbox (`localhost:PORT` in
/// `allowedDomains`) against the same without a sandbox: every relay on the way passes each
/// piece on at once (a relay with Nagle on held the second piece for the server's delayed
/// acknowledgement, 40 ms a round trip).
async fn forwarded_port(helper: &std::path::Path, ws: &std::path::Path, home: &std::path::Path) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let _ = conn.set_nodelay(true);
            std::thread::spawn(move || {
                let mut request = [0u8; 20];
                while conn.read_exact(&mut request).is_ok() {
                    if conn.write_all(&[b'r'; 10]).is_err() {
                        break;
                    }
                }
            });
        }
    });
    std::fs::write(ws.join("client.py"), CLIENT).unwrap();
    let command = format!("python3 client.py {port} {ROUND_TRIPS}");
    let allowed = [format!("localhost:{port}")];
    let forwarded = sandbox(helper, ws, NetworkPolicy::Proxy, true, home, &allowed);
    println!(
        "round trip to a host port, two writes a request ({ROUND_TRIPS} round trips, ms each)"
    );
    for (label, ctx) in [
        ("no sandbox", context(ws, None)),
        ("forwarded into the sandbox", context(ws, Some(forwarded))),
    ] {
        let input = json!({"command": command});
        let out = Typed::new(BashTool).call(input, &ctx).await;
        let text = out.text_content();
        let figure = if out.is_error {
            format!("failed: {text}")
        } else {
            text
        };
        println!("{label:<46} {:>10}", figure.trim());
    }
}
