//! skiff's network proxy: the only way out of a sandboxed command's network namespace.
//!
//! It listens on a Unix socket outside the sandbox; the relay inside ([`super::relay`]) passes
//! each connection of the command on, first line `SKIFF <token>` naming the call. It speaks
//! HTTP (`CONNECT host:port`, and absolute-URI requests for plain HTTP) and SOCKS5 (no
//! authentication, `CONNECT`), told apart by the first byte. A host in the session's
//! [`DomainRules`] is connected; any other is asked about through the call's
//! [`NetworkApprover`] (the session's approval path), or refused when there is none (headless).
//! Refusals are collected per call, so the command's result can say which domain was blocked
//! and how to allow it. Names are resolved here, outside; a name that resolves to a loopback
//! or link-local address is refused unless an entry names that very host.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpStream, UnixListener, UnixStream};

use super::domains::{DomainRules, normalize};

/// Largest request head read from a client.
const MAX_HEAD: usize = 64 * 1024;
/// How long an upstream connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// A sandboxed command wants to reach a host that is not allowed yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkRequest {
    /// The host, lower case.
    pub host: String,
    /// The port.
    pub port: u16,
    /// The command that asked.
    pub command: String,
    /// The id of the Bash call.
    pub tool_use_id: Option<String>,
}

/// The user's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetworkAnswer {
    /// Allow the host for the rest of the session.
    Allow,
    /// Refuse it.
    Deny,
}

/// Asks the user about a host (the session's approval path: terminal, SDK host, editor).
#[async_trait]
pub trait NetworkApprover: Send + Sync + fmt::Debug {
    /// Whether the command may reach the host.
    async fn approve(&self, request: NetworkRequest) -> NetworkAnswer;
}

/// What one call met: the hosts refused, and the hosts the user refused.
#[derive(Debug, Default)]
struct CallState {
    command: String,
    tool_use_id: Option<String>,
    approver: Option<Arc<dyn NetworkApprover>>,
    refused: Mutex<BTreeSet<String>>,
    denied: Mutex<BTreeSet<String>>,
}

/// A call registered with the proxy; unregistered when dropped.
#[derive(Debug)]
pub struct CallGuard {
    token: String,
    state: Arc<CallState>,
    calls: Arc<Mutex<HashMap<String, Arc<CallState>>>>,
}

impl CallGuard {
    /// The token the relay sends for this call.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Hosts refused because nobody could be asked (`host:port`).
    pub fn refused(&self) -> Vec<String> {
        self.state
            .refused
            .lock()
            .map(|r| r.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Hosts the user refused.
    pub fn denied(&self) -> Vec<String> {
        self.state
            .denied
            .lock()
            .map(|r| r.iter().cloned().collect())
            .unwrap_or_default()
    }
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        if let Ok(mut calls) = self.calls.lock() {
            calls.remove(&self.token);
        }
    }
}

/// The running proxy of a session; stops (and removes its socket) when dropped.
#[derive(Debug)]
pub struct Proxy {
    path: PathBuf,
    calls: Arc<Mutex<HashMap<String, Arc<CallState>>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
        let _ = std::fs::remove_file(&self.path);
    }
}

struct Shared {
    rules: Arc<DomainRules>,
    calls: Arc<Mutex<HashMap<String, Arc<CallState>>>>,
    /// One question at a time, so parallel connections to one host ask once.
    asking: tokio::sync::Mutex<()>,
}

impl Proxy {
    /// Listen on a new socket in `dir` (private to the user) and serve until dropped.
    pub fn start(dir: &Path, rules: Arc<DomainRules>) -> std::io::Result<Self> {
        let path = dir.join(format!(
            "proxy-{}-{}.sock",
            std::process::id(),
            random_hex()
        ));
        let listener = UnixListener::bind(&path)?;
        let calls: Arc<Mutex<HashMap<String, Arc<CallState>>>> = Arc::default();
        let shared = Arc::new(Shared {
            rules,
            calls: Arc::clone(&calls),
            asking: tokio::sync::Mutex::new(()),
        });
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let shared = Arc::clone(&shared);
                tokio::spawn(async move {
                    if let Err(e) = serve(stream, &shared).await {
                        tracing::debug!(error = %e, "sandbox proxy connection ended");
                    }
                });
            }
        });
        Ok(Self { path, calls, task })
    }

    /// The socket the relay connects to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Register a call: its token, and where its refusals are collected.
    pub fn register(
        &self,
        command: &str,
        tool_use_id: Option<String>,
        approver: Option<Arc<dyn NetworkApprover>>,
    ) -> CallGuard {
        let token = random_hex();
        let state = Arc::new(CallState {
            command: command.to_owned(),
            tool_use_id,
            approver,
            ..CallState::default()
        });
        if let Ok(mut calls) = self.calls.lock() {
            calls.insert(token.clone(), Arc::clone(&state));
        }
        CallGuard {
            token,
            state,
            calls: Arc::clone(&self.calls),
        }
    }
}

/// 16 random hex digits.
pub(super) fn random_hex() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    format!("{:016x}", h.finish())
}

/// Why a connection was not made.
#[derive(Debug)]
enum Refusal {
    /// Not allowed (and nobody could be asked, or the user said no).
    NotAllowed {
        host: String,
        port: u16,
        by_user: bool,
    },
    /// Allowed, but the connection failed.
    Failed(String),
}

impl Refusal {
    fn message(&self) -> String {
        match self {
            Self::NotAllowed {
                host,
                port,
                by_user: true,
            } => {
                format!("skiff sandbox: the user did not allow network access to {host}:{port}.\n")
            }
            Self::NotAllowed { host, port, .. } => format!(
                "skiff sandbox: network access to {host}:{port} is not allowed. Sandboxed \
                 commands reach only the domains in sandbox.network.allowedDomains; ask the \
                 user to add \"{host}\" there (e.g. in .claude/settings.local.json).\n"
            ),
            Self::Failed(e) => format!("skiff sandbox proxy: {e}\n"),
        }
    }
}

async fn serve(stream: UnixStream, shared: &Shared) -> std::io::Result<()> {
    let mut stream = BufReader::new(stream);
    let mut line = String::new();
    read_line_limited(&mut stream, &mut line, 256).await?;
    let token = line.trim().strip_prefix("SKIFF ").unwrap_or("").to_owned();
    let call = shared
        .calls
        .lock()
        .ok()
        .and_then(|c| c.get(&token).cloned())
        .unwrap_or_default();
    let first = stream.fill_buf().await?.first().copied();
    match first {
        Some(5) => socks5(stream, shared, &call).await,
        Some(_) => http(stream, shared, &call).await,
        None => Ok(()),
    }
}

async fn read_line_limited(
    stream: &mut BufReader<UnixStream>,
    line: &mut String,
    max: usize,
) -> std::io::Result<()> {
    let mut buf = Vec::new();
    loop {
        let b = stream.read_u8().await?;
        if b == b'\n' {
            break;
        }
        buf.push(b);
        if buf.len() > max {
            return Err(std::io::Error::other("line too long"));
        }
    }
    *line = String::from_utf8_lossy(&buf).into_owned();
    Ok(())
}

/// An HTTP proxy request: `CONNECT host:port`, or `METHOD http://host[:port]/path`.
async fn http(
    mut stream: BufReader<UnixStream>,
    shared: &Shared,
    call: &CallState,
) -> std::io::Result<()> {
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") && !head.ends_with(b"\n\n") {
        head.push(stream.read_u8().await?);
        if head.len() > MAX_HEAD {
            return respond(stream.get_mut(), 431, "request head too large\n").await;
        }
    }
    let text = String::from_utf8_lossy(&head).into_owned();
    let mut lines = text.split('\n').map(|l| l.trim_end_matches('\r'));
    let request_line = lines.next().unwrap_or("");
    let mut parts = request_line.split_whitespace();
    let (method, target, version) = (
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
        parts.next().unwrap_or("HTTP/1.1"),
    );
    if method.eq_ignore_ascii_case("CONNECT") {
        let Some((host, port)) = parse_authority(target, 443) else {
            return respond(stream.get_mut(), 400, "bad CONNECT target\n").await;
        };
        match open(shared, call, &host, port).await {
            Ok(mut upstream) => {
                stream
                    .get_mut()
                    .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                    .await?;
                let buffered = stream.buffer().to_vec();
                upstream.write_all(&buffered).await?;
                let mut client = stream.into_inner();
                let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
                Ok(())
            }
            Err(r) => {
                let status = if matches!(r, Refusal::Failed(_)) {
                    502
                } else {
                    403
                };
                respond(stream.get_mut(), status, &r.message()).await
            }
        }
    } else {
        // Plain HTTP through the proxy: an absolute URI.
        let Some(rest) = target.strip_prefix("http://") else {
            return respond(
                stream.get_mut(),
                400,
                "skiff sandbox proxy: send CONNECT host:port, or an absolute http:// URI\n",
            )
            .await;
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        let Some((host, port)) = parse_authority(authority, 80) else {
            return respond(stream.get_mut(), 400, "bad request target\n").await;
        };
        match open(shared, call, &host, port).await {
            Ok(mut upstream) => {
                let mut out = format!("{method} {path} {version}\r\n");
                for line in lines {
                    let name = line.split(':').next().unwrap_or("").trim();
                    if line.is_empty()
                        || name.eq_ignore_ascii_case("proxy-connection")
                        || name.eq_ignore_ascii_case("proxy-authorization")
                        || name.eq_ignore_ascii_case("connection")
                    {
                        continue;
                    }
                    out.push_str(line);
                    out.push_str("\r\n");
                }
                // One request per connection: the next may name another host.
                out.push_str("Connection: close\r\n\r\n");
                upstream.write_all(out.as_bytes()).await?;
                let buffered = stream.buffer().to_vec();
                upstream.write_all(&buffered).await?;
                let mut client = stream.into_inner();
                let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
                Ok(())
            }
            Err(r) => {
                let status = if matches!(r, Refusal::Failed(_)) {
                    502
                } else {
                    403
                };
                respond(stream.get_mut(), status, &r.message()).await
            }
        }
    }
}

async fn respond(stream: &mut UnixStream, status: u16, body: &str) -> std::io::Result<()> {
    let reason = match status {
        400 => "Bad Request",
        403 => "Forbidden",
        431 => "Request Header Fields Too Large",
        _ => "Bad Gateway",
    };
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\
         X-Skiff-Sandbox: {}\r\nConnection: close\r\n\r\n",
        body.len(),
        if status == 403 { "blocked" } else { "error" }
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.shutdown().await
}

/// `host:port`, `[v6]:port`, or `host` with the default port.
fn parse_authority(text: &str, default_port: u16) -> Option<(String, u16)> {
    let text = text.rsplit_once('@').map_or(text, |(_, h)| h);
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (h, after) = rest.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None => default_port,
        };
        (h, port)
    } else {
        match text.rsplit_once(':') {
            Some((h, p)) => (h, p.parse().ok()?),
            None => (text, default_port),
        }
    };
    let host = normalize(host);
    (!host.is_empty() && port > 0).then_some((host, port))
}

/// SOCKS5 (RFC 1928): no authentication, `CONNECT` only.
async fn socks5(
    mut stream: BufReader<UnixStream>,
    shared: &Shared,
    call: &CallState,
) -> std::io::Result<()> {
    let _version = stream.read_u8().await?;
    let methods = stream.read_u8().await?;
    let mut buf = vec![0u8; usize::from(methods)];
    stream.read_exact(&mut buf).await?;
    if !buf.contains(&0) {
        return stream.get_mut().write_all(&[5, 0xff]).await;
    }
    stream.get_mut().write_all(&[5, 0]).await?;
    let mut head = [0u8; 4];
    stream.read_exact(&mut head).await?;
    let reply = |code: u8| [5, code, 0, 1, 0, 0, 0, 0, 0, 0];
    let host = match head[3] {
        1 => {
            let mut a = [0u8; 4];
            stream.read_exact(&mut a).await?;
            std::net::Ipv4Addr::from(a).to_string()
        }
        3 => {
            let len = stream.read_u8().await?;
            let mut name = vec![0u8; usize::from(len)];
            stream.read_exact(&mut name).await?;
            normalize(&String::from_utf8_lossy(&name))
        }
        4 => {
            let mut a = [0u8; 16];
            stream.read_exact(&mut a).await?;
            std::net::Ipv6Addr::from(a).to_string()
        }
        _ => return stream.get_mut().write_all(&reply(8)).await,
    };
    let port = stream.read_u16().await?;
    if head[1] != 1 {
        return stream.get_mut().write_all(&reply(7)).await;
    }
    match open(shared, call, &host, port).await {
        Ok(mut upstream) => {
            stream.get_mut().write_all(&reply(0)).await?;
            let buffered = stream.buffer().to_vec();
            upstream.write_all(&buffered).await?;
            let mut client = stream.into_inner();
            let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
            Ok(())
        }
        Err(Refusal::Failed(_)) => stream.get_mut().write_all(&reply(4)).await,
        Err(_) => stream.get_mut().write_all(&reply(2)).await,
    }
}

/// Decide, then connect.
async fn open(
    shared: &Shared,
    call: &CallState,
    host: &str,
    port: u16,
) -> Result<TcpStream, Refusal> {
    let key = format!("{host}:{port}");
    let not_allowed = |by_user| Refusal::NotAllowed {
        host: host.to_owned(),
        port,
        by_user,
    };
    let named = match shared.rules.allowing(host, port) {
        Some(entry) => entry.names(host),
        None => {
            if call.denied.lock().is_ok_and(|d| d.contains(&key)) {
                return Err(not_allowed(true));
            }
            let Some(approver) = &call.approver else {
                if let Ok(mut r) = call.refused.lock() {
                    r.insert(key);
                }
                return Err(not_allowed(false));
            };
            let _one_at_a_time = shared.asking.lock().await;
            match shared.rules.allowing(host, port) {
                Some(entry) => entry.names(host),
                None => {
                    let answer = approver
                        .approve(NetworkRequest {
                            host: host.to_owned(),
                            port,
                            command: call.command.clone(),
                            tool_use_id: call.tool_use_id.clone(),
                        })
                        .await;
                    if answer == NetworkAnswer::Deny {
                        if let Ok(mut d) = call.denied.lock() {
                            d.insert(key);
                        }
                        return Err(not_allowed(true));
                    }
                    shared.rules.grant(host, port).names(host)
                }
            }
        }
    };
    connect(host, port, named).await
}

/// Connect to `host:port`. Loopback, link-local and unspecified addresses are only reached
/// when `named` (an entry names this very host), so a name that resolves to the host's own
/// services (or a cloud metadata endpoint) does not open them.
async fn connect(host: &str, port: u16, named: bool) -> Result<TcpStream, Refusal> {
    let addrs: Vec<SocketAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) if host == "localhost" || host.ends_with(".localhost") => vec![
            SocketAddr::from(([127, 0, 0, 1], port)),
            SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, port)),
        ],
        Err(_) => tokio::net::lookup_host((host, port))
            .await
            .map_err(|e| Refusal::Failed(format!("cannot resolve {host}: {e}")))?
            .collect(),
    };
    let local = |ip: IpAddr| match ip {
        IpAddr::V4(v4) => v4.is_loopback() || v4.is_link_local() || v4.is_unspecified(),
        IpAddr::V6(v6) => {
            v6.is_loopback()
                || v6.is_unspecified()
                || (v6.segments()[0] & 0xffc0) == 0xfe80
                || v6
                    .to_ipv4_mapped()
                    .is_some_and(|v4| v4.is_loopback() || v4.is_link_local() || v4.is_unspecified())
        }
    };
    let usable: Vec<SocketAddr> = addrs
        .into_iter()
        .filter(|a| named || !local(a.ip()))
        .collect();
    if usable.is_empty() {
        return Err(Refusal::Failed(format!(
            "{host} resolves to a local address; allow it by that name with its port (e.g. \
             \"{host}:{port}\") to reach it"
        )));
    }
    let mut last = String::new();
    for addr in usable {
        match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(addr)).await {
            Ok(Ok(s)) => {
                // Nagle off, as the relay's end inside the sandbox (see `relay`): the proxy
                // passes each piece on as the command wrote it, and a request written in two
                // pieces is not held for the server's delayed acknowledgement (40 ms a round
                // trip to a forwarded database port).
                let _ = s.set_nodelay(true);
                return Ok(s);
            }
            Ok(Err(e)) => last = format!("cannot connect to {host}:{port}: {e}"),
            Err(_) => last = format!("connecting to {host}:{port} timed out"),
        }
    }
    Err(Refusal::Failed(last))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn upstream_connections_have_nagle_off() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("address").port();
        let stream = connect("127.0.0.1", port, true)
            .await
            .unwrap_or_else(|_| panic!("connect to 127.0.0.1:{port}"));
        assert!(stream.nodelay().expect("TCP_NODELAY"));
    }

    #[test]
    fn authorities_parse() {
        assert_eq!(
            parse_authority("Example.com:8443", 443),
            Some(("example.com".into(), 8443))
        );
        assert_eq!(
            parse_authority("example.com", 80),
            Some(("example.com".into(), 80))
        );
        assert_eq!(
            parse_authority("[::1]:5432", 443),
            Some(("::1".into(), 5432))
        );
        assert_eq!(parse_authority("user:pw@h:1", 80), Some(("h".into(), 1)));
        assert_eq!(parse_authority("h:x", 80), None);
        assert_eq!(parse_authority(":80", 80), None);
    }
}
