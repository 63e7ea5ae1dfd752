//! The relay inside a sandbox's network namespace (run by its PID 1): a listener on the
//! sandbox's loopback that every proxy-aware tool is pointed at (`HTTP_PROXY`, `HTTPS_PROXY`,
//! `ALL_PROXY`, lower case too), and one per forwarded host port (`localhost:5432` in
//! `allowedDomains`), each connection passed to skiff's proxy over its Unix socket. PID 1 polls the listeners
//! with everything else it waits for; each connection gets a plain thread (the helper has no
//! async runtime, and a command opens few connections).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;

use super::plan::ProxyPlan;

/// The first argument of git's ssh ProxyCommand mode.
pub const CONNECT_ARG: &str = "__connect";

/// The listeners of one sandbox.
pub(super) struct Relay {
    proxy: TcpListener,
    port: u16,
    forwards: Vec<(TcpListener, String, u16)>,
    /// Keeps the proxy's socket open, so `socket` (`/proc/self/fd/N`) stays valid.
    _socket_fd: OwnedFd,
    socket: PathBuf,
    token: String,
    connect: PathBuf,
}

impl Relay {
    /// Open the listeners (before the sandbox drops its privileges). `socket` is skiff's
    /// proxy, opened before the mounts could cover it.
    pub(super) fn bind(plan: &ProxyPlan, socket: OwnedFd, probe: bool) -> Result<Self, String> {
        let proxy = TcpListener::bind("127.0.0.1:0")
            .map_err(|e| format!("cannot listen on the sandbox's loopback: {e}"))?;
        let port = proxy
            .local_addr()
            .map_err(|e| format!("cannot listen on the sandbox's loopback: {e}"))?
            .port();
        let mut forwards = Vec::new();
        if !probe {
            for f in &plan.forward {
                match TcpListener::bind(("127.0.0.1", f.port)) {
                    Ok(l) => forwards.push((l, f.host.clone(), f.port)),
                    Err(e) => eprintln!(
                        "skiff sandbox: cannot forward {}:{} into the sandbox: {e}",
                        f.host, f.port
                    ),
                }
                if let Ok(l) = TcpListener::bind(("::1", f.port)) {
                    forwards.push((l, f.host.clone(), f.port));
                }
            }
        }
        for listener in std::iter::once(&proxy).chain(forwards.iter().map(|(l, ..)| l)) {
            listener
                .set_nonblocking(true)
                .map_err(|e| format!("cannot listen on the sandbox's loopback: {e}"))?;
        }
        Ok(Self {
            proxy,
            port,
            forwards,
            socket: super::paths::fd_path(&socket),
            _socket_fd: socket,
            token: plan.token.clone(),
            connect: plan.connect.clone(),
        })
    }

    /// Name another command to the proxy: a relay bound ahead for a plan ([`super::armed`])
    /// takes the token of the command it serves when that command comes.
    pub(super) fn set_token(&mut self, token: &str) {
        token.clone_into(&mut self.token);
    }

    /// skiff's proxy, as the relay connects to it (`/proc/self/fd/N`).
    pub(super) fn socket(&self) -> &std::path::Path {
        &self.socket
    }

    /// The variables that point tools at the relay.
    pub(super) fn environment(&self) -> Vec<(String, String)> {
        let http = format!("http://127.0.0.1:{}", self.port);
        let socks = format!("socks5h://127.0.0.1:{}", self.port);
        let no_proxy = "localhost,127.0.0.1,::1,.localhost".to_owned();
        let mut vars: Vec<(String, String)> = [
            ("HTTP_PROXY", &http),
            ("HTTPS_PROXY", &http),
            ("http_proxy", &http),
            ("https_proxy", &http),
            ("ALL_PROXY", &socks),
            ("all_proxy", &socks),
            ("NO_PROXY", &no_proxy),
            ("no_proxy", &no_proxy),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.clone()))
        .collect();
        vars.push(("RSYNC_PROXY".into(), format!("127.0.0.1:{}", self.port)));
        // Node 24 and later honour the proxy variables in fetch/http with this set.
        vars.push(("NODE_USE_ENV_PROXY".into(), "1".into()));
        // git over ssh goes through the proxy too, by skiff's own ProxyCommand.
        let helper = shell_quote(&self.connect.to_string_lossy());
        let proxy_command = format!("-o ProxyCommand={helper} {} %h %p'", CONNECT_ARG);
        let ssh = std::env::var("GIT_SSH_COMMAND")
            .ok()
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| "ssh".to_owned());
        vars.push(("GIT_SSH_COMMAND".into(), format!("{ssh} {proxy_command}")));
        vars
    }

    /// The listeners, for PID 1's loop to poll ([`Relay::accept`] when one is readable):
    /// no thread runs until a command connects.
    pub(super) fn listeners(&self) -> impl Iterator<Item = &TcpListener> {
        std::iter::once(&self.proxy).chain(self.forwards.iter().map(|(l, ..)| l))
    }

    /// Take the waiting connection of listener `index` (in [`Relay::listeners`]' order) and
    /// pass it on to skiff's proxy in a thread of its own.
    pub(super) fn accept(&self, index: usize) {
        let (listener, forward) = match index.checked_sub(1) {
            None => (&self.proxy, None),
            Some(i) => match self.forwards.get(i) {
                Some((l, host, port)) => (l, Some((host.clone(), *port))),
                None => return,
            },
        };
        let Some(client) = take_connection(listener) else {
            return;
        };
        let (socket, token) = (self.socket.clone(), self.token.clone());
        std::thread::spawn(move || {
            let _ = pass_on(client, &socket, &token, forward);
        });
    }
}

/// The connection waiting on `listener`, blocking from now on, with Nagle's algorithm off
/// (`TCP_NODELAY`): the relay writes on each piece as it comes, as the client wrote it. With
/// Nagle on, a client that writes a request in two pieces (most database and HTTP clients turn
/// Nagle off for this) would have its second piece held here until the first is acknowledged,
/// which the server, waiting for the rest, delays by 40 ms: every round trip through the
/// relay took 40 ms longer. `None` when none is waiting (non-blocking: a connection that went
/// away before this call is no reason to wait).
fn take_connection(listener: &TcpListener) -> Option<TcpStream> {
    let (client, _) = listener.accept().ok()?;
    let _ = client.set_nonblocking(false);
    let _ = client.set_nodelay(true);
    Some(client)
}

/// The start of `'…'` quoting for `sh` (the caller adds more and the closing quote).
fn shell_quote(text: &str) -> String {
    format!("'{}", text.replace('\'', r"'\''"))
}

fn pass_on(
    client: TcpStream,
    socket: &PathBuf,
    token: &str,
    forward: Option<(String, u16)>,
) -> std::io::Result<()> {
    let mut upstream = UnixStream::connect(socket)?;
    upstream.write_all(format!("SKIFF {token}\n").as_bytes())?;
    if let Some((host, port)) = forward {
        let authority = if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        upstream.write_all(
            format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n").as_bytes(),
        )?;
        let mut reader = BufReader::new(upstream.try_clone()?);
        let mut status = String::new();
        reader.read_line(&mut status)?;
        let mut line = String::new();
        loop {
            line.clear();
            if reader.read_line(&mut line)? == 0 || line == "\r\n" || line == "\n" {
                break;
            }
        }
        if status.split_whitespace().nth(1) != Some("200") {
            // The body says why; the client only sees the connection close.
            let mut why = String::new();
            let _ = reader.take(1024).read_to_string(&mut why);
            eprint!("{why}");
            return Ok(());
        }
    }
    splice(client, upstream)
}

/// Copy both ways until each side is done.
pub(super) fn splice(client: TcpStream, upstream: UnixStream) -> std::io::Result<()> {
    let mut client_read = client.try_clone()?;
    let mut upstream_write = upstream.try_clone()?;
    let up = std::thread::spawn(move || {
        let _ = std::io::copy(&mut client_read, &mut upstream_write);
        let _ = upstream_write.shutdown(Shutdown::Write);
    });
    let (mut upstream_read, mut client_write) = (upstream, client);
    let _ = std::io::copy(&mut upstream_read, &mut client_write);
    let _ = client_write.shutdown(Shutdown::Write);
    let _ = up.join();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taken_connection_has_nagle_off() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("non-blocking");
        assert!(take_connection(&listener).is_none(), "nothing waits yet");
        let addr = listener.local_addr().expect("address");
        let _client = TcpStream::connect(addr).expect("connect");
        let taken = (0..1000)
            .find_map(|_| {
                take_connection(&listener).or_else(|| {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                    None
                })
            })
            .expect("the connection is taken");
        assert!(taken.nodelay().expect("TCP_NODELAY"));
    }
}
