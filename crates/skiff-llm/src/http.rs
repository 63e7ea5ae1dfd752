//! The providers' HTTP client. reqwest's rustls set-up reads the system's CA certificates
//! (rustls-platform-verifier: ~150 files, several ms and MiB) when the client is built; a
//! plain-`http://` endpoint — a local model server, a test mock — never uses TLS, so its
//! client gets an empty TLS configuration instead and starts without touching the disk.
//! rustls's one crypto provider is ring (smaller and quicker to build than aws-lc-rs); reqwest
//! is built without a provider of its own, so it is installed before any client is built.

use std::sync::Arc;
use std::time::Duration;

use crate::LlmError;

/// How long an idle pooled connection is kept: below the keep-alive timeout servers commonly
/// close idle connections after (llama.cpp's `llama-server` and Node's HTTP server: 5 s), so a
/// turn never sends its request down a connection the server is closing and pays a retry.
/// Node's own HTTP client (undici, which Claude Code uses) keeps idle connections 4 s too.
pub(crate) const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(4);

/// A client for `base_url` with skiff's connection settings (redirects: only same-origin).
pub(crate) fn client(
    base_url: &str,
    connect_timeout: Duration,
    redirect: reqwest::redirect::Policy,
) -> Result<reqwest::Client, LlmError> {
    install_crypto_provider();
    let mut builder = reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .tcp_nodelay(true)
        .pool_idle_timeout(POOL_IDLE_TIMEOUT)
        .user_agent(concat!("skiff/", env!("CARGO_PKG_VERSION")))
        .redirect(redirect);
    if base_url.starts_with("http://")
        && let Some(tls) = no_roots()
    {
        builder = builder.tls_backend_preconfigured(tls);
    }
    builder
        .build()
        .map_err(|e| LlmError::Request(format!("HTTP client: {e}")))
}

/// Whether `base_url` points at this machine or the local network (loopback, private or
/// link-local addresses, `localhost`, `*.local`).
pub(crate) fn is_local_url(base_url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(base_url) else {
        return false;
    };
    let Some(host) = url.host_str() else {
        return false;
    };
    match host.trim_matches(['[', ']']).parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(ip)) => ip.is_loopback() || ip.is_private() || ip.is_link_local(),
        Ok(std::net::IpAddr::V6(ip)) => ip.is_loopback() || (ip.segments()[0] & 0xfe00) == 0xfc00,
        Err(_) => host == "localhost" || host.ends_with(".localhost") || host.ends_with(".local"),
    }
}

/// Make ring the process's rustls crypto provider, unless one is installed already: reqwest
/// (built without a provider) refuses to build a client before. Cheap after the first call.
pub fn install_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Losing a race to another thread installing it is fine: one is installed either way.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

/// A TLS configuration that trusts nothing (for clients that only speak plain HTTP).
fn no_roots() -> Option<rustls::ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .ok()
        .map(|b| {
            b.with_root_certificates(rustls::RootCertStore::empty())
                .with_no_client_auth()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_addresses() {
        for u in [
            "http://127.0.0.1:8080",
            "http://localhost:11434/v1",
            "http://192.168.1.9:8000/v1",
            "http://[::1]:8080",
            "http://gpu.local:8080",
        ] {
            assert!(is_local_url(u), "{u}");
        }
        for u in [
            "https://api.anthropic.com",
            "https://openrouter.ai/api/v1",
            "http://8.8.8.8",
            "nonsense",
        ] {
            assert!(!is_local_url(u), "{u}");
        }
    }

    #[test]
    fn https_clients_build_with_the_ring_provider() {
        let client = client(
            "https://api.anthropic.com",
            Duration::from_secs(5),
            reqwest::redirect::Policy::none(),
        );
        assert!(client.is_ok());
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());
    }

    #[test]
    fn idle_connections_go_before_the_usual_server_keep_alive() {
        // llama-server (cpp-httplib) and Node close idle connections after 5 s.
        assert!(POOL_IDLE_TIMEOUT < Duration::from_secs(5));
        assert!(POOL_IDLE_TIMEOUT >= Duration::from_secs(1));
    }
}
