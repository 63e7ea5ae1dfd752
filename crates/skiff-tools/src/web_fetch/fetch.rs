//! The HTTP side of WebFetch: one GET with Claude Code's redirect rule (same host, or the same
//! host with `www.` added or removed, same scheme and port: followed, up to a limit; anything
//! else: returned to the model), a size cap while the body streams in, one time limit over
//! the whole fetch, no proxy (a proxy would resolve names where the address check cannot see),
//! and the address guard of [`super::address`].

use std::time::Duration;

use reqwest::Url;
use reqwest::header::{ACCEPT, CONTENT_TYPE, LOCATION, RETRY_AFTER};
use tokio_util::sync::CancellationToken;

use super::address::{Blocked, GuardedResolver, non_public};

/// What one fetch may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The whole fetch, redirects included.
    pub timeout: Duration,
    /// Largest body, in bytes.
    pub max_bytes: usize,
    /// Same-host redirects followed at most.
    pub max_redirects: usize,
}

/// A response body with what the tool reports about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Body {
    /// HTTP status.
    pub code: u16,
    /// Its reason phrase.
    pub code_text: String,
    /// The `content-type` header ("" when there is none).
    pub content_type: String,
    /// The bytes.
    pub bytes: Vec<u8>,
}

/// How a fetch ended well.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetched {
    /// A 2xx response.
    Body(Body),
    /// A redirect that is not followed automatically.
    Redirect {
        /// The URL that answered with the redirect.
        original: String,
        /// Where it points (resolved against the original).
        target: String,
        /// The status (301, 302, 303, 307, 308).
        code: u16,
    },
}

/// How a fetch failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    /// The host's address is not public.
    #[error("{0}")]
    Blocked(Blocked),
    /// A non-2xx, non-redirect status.
    #[error("HTTP {code}")]
    Status {
        /// The status.
        code: u16,
        /// `Retry-After`, when sent.
        retry_after: Option<String>,
    },
    /// The body passed the size cap.
    #[error("the response is larger than {0} bytes")]
    TooLarge(usize),
    /// More same-host redirects than allowed.
    #[error("too many redirects (more than {0})")]
    TooManyRedirects(usize),
    /// A redirect without a usable `Location`.
    #[error("the server answered {0} without a usable Location header")]
    BadRedirect(u16),
    /// The time limit passed.
    #[error("timed out after {} s", .0.as_secs_f32())]
    Timeout(Duration),
    /// The call was cancelled.
    #[error("cancelled")]
    Cancelled,
    /// Anything else (connection refused, TLS, DNS…), in words.
    #[error("{0}")]
    Request(String),
}

/// The reason phrase of a status (`Moved Permanently`), or `Unknown Status`.
pub fn reason(code: u16) -> String {
    reqwest::StatusCode::from_u16(code)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("Unknown Status")
        .to_owned()
}

/// Claude Code's rule for following a redirect by itself: same scheme and port, no
/// credentials, and the same host up to a leading `www.`.
pub fn permitted_redirect(from: &Url, to: &Url) -> bool {
    let strip = |h: &str| h.strip_prefix("www.").unwrap_or(h).to_owned();
    from.scheme() == to.scheme()
        && from.port_or_known_default() == to.port_or_known_default()
        && to.username().is_empty()
        && to.password().is_none()
        && match (from.host_str(), to.host_str()) {
            (Some(a), Some(b)) => strip(a) == strip(b),
            _ => false,
        }
}

/// The address check for a URL whose host is an IP literal (the resolver never sees those).
pub fn check_literal(url: &Url, allow_private: bool) -> Result<(), Blocked> {
    if allow_private {
        return Ok(());
    }
    let ip = match url.host() {
        Some(url::Host::Ipv4(v4)) => std::net::IpAddr::V4(v4),
        Some(url::Host::Ipv6(v6)) => std::net::IpAddr::V6(v6),
        _ => return Ok(()),
    };
    match non_public(ip) {
        Some(kind) => Err(Blocked {
            host: url.host_str().unwrap_or_default().to_owned(),
            addr: ip,
            kind,
        }),
        None => Ok(()),
    }
}

/// GET `url`, following permitted redirects.
pub async fn fetch(
    url: Url,
    allow_private: bool,
    limits: Limits,
    cancel: &CancellationToken,
) -> Result<Fetched, FetchError> {
    crate::tls::install_crypto_provider();
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .dns_resolver(GuardedResolver { allow_private })
        .connect_timeout(limits.timeout)
        .user_agent(concat!("skiff/", env!("CARGO_PKG_VERSION"), " (WebFetch)"))
        .build()
        .map_err(|e| FetchError::Request(format!("cannot build the HTTP client: {e}")))?;
    let work = follow(&client, url, allow_private, limits);
    tokio::select! {
        () = cancel.cancelled() => Err(FetchError::Cancelled),
        r = tokio::time::timeout(limits.timeout, work) => {
            r.unwrap_or(Err(FetchError::Timeout(limits.timeout)))
        }
    }
}

async fn follow(
    client: &reqwest::Client,
    mut url: Url,
    allow_private: bool,
    limits: Limits,
) -> Result<Fetched, FetchError> {
    for _ in 0..=limits.max_redirects {
        check_literal(&url, allow_private).map_err(FetchError::Blocked)?;
        let mut response = client
            .get(url.clone())
            .header(ACCEPT, "text/markdown, text/html, */*")
            .send()
            .await
            .map_err(request_error)?;
        let code = response.status().as_u16();
        if matches!(code, 301 | 302 | 303 | 307 | 308) {
            let target = response
                .headers()
                .get(LOCATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|l| url.join(l).ok())
                .ok_or(FetchError::BadRedirect(code))?;
            if permitted_redirect(&url, &target) {
                url = target;
                continue;
            }
            return Ok(Fetched::Redirect {
                original: url.to_string(),
                target: target.to_string(),
                code,
            });
        }
        if !response.status().is_success() {
            return Err(FetchError::Status {
                code,
                retry_after: response
                    .headers()
                    .get(RETRY_AFTER)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned),
            });
        }
        if response
            .content_length()
            .is_some_and(|n| n > limits.max_bytes as u64)
        {
            return Err(FetchError::TooLarge(limits.max_bytes));
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        let mut bytes = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(request_error)? {
            if bytes.len() + chunk.len() > limits.max_bytes {
                return Err(FetchError::TooLarge(limits.max_bytes));
            }
            bytes.extend_from_slice(&chunk);
        }
        return Ok(Fetched::Body(Body {
            code,
            code_text: reason(code),
            content_type,
            bytes,
        }));
    }
    Err(FetchError::TooManyRedirects(limits.max_redirects))
}

/// A reqwest error in words; the resolver's refusal comes out as [`FetchError::Blocked`].
fn request_error(e: reqwest::Error) -> FetchError {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    let mut words = Vec::new();
    while let Some(err) = source {
        if let Some(blocked) = err.downcast_ref::<Blocked>() {
            return FetchError::Blocked(blocked.clone());
        }
        let text = err.to_string();
        if !words.iter().any(|w: &String| w.contains(&text)) {
            words.push(text);
        }
        source = err.source();
    }
    FetchError::Request(words.join(": "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn redirects_are_followed_on_the_same_host_only() {
        let from = u("https://example.com/a");
        assert!(permitted_redirect(&from, &u("https://example.com/b?x=1")));
        assert!(permitted_redirect(&from, &u("https://www.example.com/b")));
        assert!(permitted_redirect(&u("https://www.example.com/"), &from));
        assert!(!permitted_redirect(&from, &u("http://example.com/b")));
        assert!(!permitted_redirect(&from, &u("https://example.com:8443/b")));
        assert!(!permitted_redirect(&from, &u("https://docs.example.com/")));
        assert!(!permitted_redirect(
            &from,
            &u("https://user:pw@example.com/")
        ));
        assert!(!permitted_redirect(
            &from,
            &u("https://example.com.evil.io/")
        ));
        assert!(permitted_redirect(&from, &u("https://example.com:443/b")));
    }

    #[test]
    fn ip_literals_are_checked_in_every_spelling() {
        for s in [
            "http://127.0.0.1/",
            "http://2130706433/",
            "http://0x7f.1/",
            "http://[::1]/",
            "http://[::ffff:169.254.169.254]/",
            "http://169.254.169.254/latest/meta-data/",
            "http://0.0.0.0:8080/",
        ] {
            assert!(check_literal(&u(s), false).is_err(), "{s}");
            assert!(check_literal(&u(s), true).is_ok(), "{s}");
        }
        assert!(check_literal(&u("https://93.184.216.34/"), false).is_ok());
        assert!(check_literal(&u("https://example.com/"), false).is_ok());
    }
}
