//! The retry policy: which failures are retried, and how long to wait before the next attempt.
//!
//! A small helper instead of `backon`: the retried unit is a *stream* whose events have already
//! been forwarded to the caller, the wait must come from the server's `retry-after` when present,
//! the base delay depends on the cause (rate limits back off from 10 s, server faults from 1 s),
//! and each retry is announced as an event before a cancellable sleep. That leaves only the
//! delay arithmetic below, which is plain and unit-tested.

use std::pin::Pin;
use std::time::{Duration, SystemTime};

use futures::{Stream, StreamExt};
use reqwest::header::HeaderMap;
use tokio_util::sync::CancellationToken;

use crate::error::AttemptError;
use crate::provider::{EventStream, ProviderEvent, RetryNotice};
use crate::{LlmError, StreamError};

/// How failed model calls are retried.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (default 5).
    pub max_retries: u32,
    /// First backoff for server faults, overload and broken connections (default 1 s).
    pub base_delay: Duration,
    /// First backoff for 429 without `retry-after` (default 10 s).
    pub rate_limit_base_delay: Duration,
    /// Upper bound of a computed backoff (default 60 s).
    pub max_delay: Duration,
    /// Longest server-requested wait we sleep through; longer ones fail at once (default 300 s).
    pub max_retry_after: Duration,
    /// Give up after this many overloaded responses in a row (HTTP 529, `overloaded_error`),
    /// so the caller can switch to a fallback model (Claude Code's `--fallback-model` after 3);
    /// `None`: they are retried like other server faults.
    pub max_overloaded: Option<u32>,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 5,
            base_delay: Duration::from_secs(1),
            rate_limit_base_delay: Duration::from_secs(10),
            max_delay: Duration::from_secs(60),
            max_retry_after: Duration::from_secs(300),
            max_overloaded: None,
        }
    }
}

impl RetryPolicy {
    /// A policy that never retries.
    pub fn none() -> Self {
        Self {
            max_retries: 0,
            ..Self::default()
        }
    }

    /// The wait before retry number `retry` (1-based) after `err`, or `None` when `err` must not
    /// be retried (or retries are used up).
    pub(crate) fn next_delay(&self, err: &AttemptError, retry: u32) -> Option<Duration> {
        if retry > self.max_retries {
            return None;
        }
        let base = match err {
            AttemptError::Http {
                status,
                retry_after,
                should_retry,
                ..
            } => {
                let retryable = should_retry.unwrap_or(
                    matches!(status, 408 | 409 | 429 | 500 | 502 | 503 | 504 | 529)
                        || *status > 504,
                );
                if !retryable {
                    return None;
                }
                if let Some(wait) = retry_after {
                    return (*wait <= self.max_retry_after).then_some(*wait);
                }
                if *status == 429 {
                    self.rate_limit_base_delay
                } else {
                    self.base_delay
                }
            }
            // A host name that does not resolve is not a passing fault: one more try at most.
            AttemptError::Connect(msg) if is_dns_failure(msg) => {
                if retry > 1 {
                    return None;
                }
                self.base_delay
            }
            AttemptError::Connect(_) | AttemptError::Transport(_) => self.base_delay,
            AttemptError::Stream(crate::StreamError::Truncated(_)) => self.base_delay,
            AttemptError::ErrorEvent { kind, .. } => match kind.as_str() {
                "overloaded_error" | "api_error" | "timeout_error" => self.base_delay,
                "rate_limit_error" => self.rate_limit_base_delay,
                _ => return None,
            },
            AttemptError::Stream(_)
            | AttemptError::Credentials { .. }
            | AttemptError::Cancelled => {
                return None;
            }
        };
        Some(self.backoff(base, retry))
    }

    /// Exponential backoff `base * 2^(retry-1)`, capped, minus up to 25% random jitter (so
    /// clients that failed together do not retry together, even at the cap).
    fn backoff(&self, base: Duration, retry: u32) -> Duration {
        let exp = base.saturating_mul(1u32 << retry.saturating_sub(1).min(16));
        let capped = exp.min(self.max_delay);
        capped.saturating_sub(capped.mul_f64(fastrand::f64() * 0.25))
    }
}

/// Whether a connection error says the host name could not be resolved.
fn is_dns_failure(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("dns error")
        || m.contains("failed to lookup address")
        || m.contains("name or service not known")
        || m.contains("no address associated")
        || m.contains("nodename nor servname")
}

/// The events of one attempt of a model call.
pub(crate) type AttemptStream =
    Pin<Box<dyn Stream<Item = Result<ProviderEvent, AttemptError>> + Send>>;

/// How a provider's attempts are retried.
pub(crate) struct Retrying {
    /// The policy deciding whether and when to retry.
    pub policy: RetryPolicy,
    /// What the final error names (the URL tried, or the script).
    pub target: String,
    /// Upper bound of an actual sleep (offline replay never waits long).
    pub max_sleep: Option<Duration>,
}

/// Drive a model call: forward each attempt's events as they come; when an attempt fails, ask
/// the policy, announce the retry (telling the caller to discard partial output), wait
/// (cancellably) and start a fresh attempt from `next_attempt`. Shared by every provider.
pub(crate) fn retrying(
    r: Retrying,
    cancel: CancellationToken,
    mut next_attempt: impl FnMut() -> Result<AttemptStream, LlmError> + Send + 'static,
) -> EventStream {
    Box::pin(async_stream::stream! {
        let mut retries = 0u32;
        let mut overloaded = 0u32;
        loop {
            if cancel.is_cancelled() {
                yield Err(LlmError::Cancelled);
                return;
            }
            let mut attempt = match next_attempt() {
                Ok(a) => a,
                Err(e) => {
                    yield Err(e);
                    return;
                }
            };
            let mut produced = false;
            let mut failure = None;
            while let Some(item) = attempt.next().await {
                match item {
                    Ok(ev) => {
                        produced = true;
                        let done = matches!(ev, ProviderEvent::Done(_));
                        yield Ok(ev);
                        if done {
                            return;
                        }
                    }
                    Err(e) => {
                        failure = Some(e);
                        break;
                    }
                }
            }
            drop(attempt);
            let err = failure.unwrap_or(AttemptError::Stream(StreamError::Truncated(
                "attempt ended without a message".into(),
            )));
            let next = retries + 1;
            overloaded = if err.is_overloaded() { overloaded + 1 } else { 0 };
            let fall_back = r.policy.max_overloaded.is_some_and(|max| overloaded >= max);
            let wait = if fall_back { None } else { r.policy.next_delay(&err, next) };
            let Some(wait) = wait else {
                yield Err(err.into_final(&r.target, retries));
                return;
            };
            let wait = r.max_sleep.map_or(wait, |m| wait.min(m));
            tracing::warn!(attempt = next, wait_ms = wait.as_millis() as u64, cause = %err, "retrying model call");
            let status = match &err {
                AttemptError::Http { status, .. } => Some(*status),
                _ => None,
            };
            yield Ok(ProviderEvent::Retry(RetryNotice {
                attempt: next,
                max_retries: r.policy.max_retries,
                wait,
                cause: err.to_string(),
                status,
                discard_partial: produced,
            }));
            tokio::select! {
                biased;
                _ = cancel.cancelled() => {
                    yield Err(LlmError::Cancelled);
                    return;
                }
                _ = tokio::time::sleep(wait) => {}
            }
            retries = next;
        }
    })
}

/// The server's requested wait: `retry-after-ms`, else `retry-after` as seconds or an HTTP date.
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let v = text("retry-after")?;
    if let Ok(secs) = v.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let at = httpdate::parse_http_date(v).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// The `x-should-retry` override header.
pub(crate) fn should_retry(headers: &HeaderMap) -> Option<bool> {
    match headers.get("x-should-retry")?.to_str().ok()? {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn http(status: u16, retry_after: Option<Duration>) -> AttemptError {
        AttemptError::Http {
            status,
            kind: String::new(),
            message: String::new(),
            retry_after,
            should_retry: None,
        }
    }

    #[test]
    fn retryable_and_not() {
        let p = RetryPolicy::default();
        for s in [429, 500, 502, 503, 504, 529] {
            assert!(p.next_delay(&http(s, None), 1).is_some(), "{s}");
        }
        for s in [400, 401, 403, 404, 413] {
            assert!(p.next_delay(&http(s, None), 1).is_none(), "{s}");
        }
        assert!(
            p.next_delay(&AttemptError::Connect("x".into()), 1)
                .is_some()
        );
        assert!(p.next_delay(&AttemptError::Cancelled, 1).is_none());
        // A name that does not resolve: one retry, not five.
        let dns = AttemptError::Connect(
            "error sending request: client error (Connect): dns error: failed to lookup address information".into(),
        );
        assert!(p.next_delay(&dns, 1).is_some());
        assert!(p.next_delay(&dns, 2).is_none());
        assert!(
            p.next_delay(&AttemptError::Connect("refused".into()), 2)
                .is_some()
        );
        let overloaded = AttemptError::ErrorEvent {
            kind: "overloaded_error".into(),
            message: String::new(),
        };
        assert!(p.next_delay(&overloaded, 1).is_some());
        let invalid = AttemptError::ErrorEvent {
            kind: "invalid_request_error".into(),
            message: String::new(),
        };
        assert!(p.next_delay(&invalid, 1).is_none());
        assert!(
            p.next_delay(&http(529, None), 6).is_none(),
            "retries used up"
        );
    }

    #[test]
    fn backoff_grows_is_capped_and_jittered() {
        let p = RetryPolicy::default();
        for retry in 1..=5 {
            let d = p.next_delay(&http(500, None), retry).unwrap();
            let base = Duration::from_secs(1 << (retry - 1)).min(p.max_delay);
            assert!(d >= base.mul_f64(0.75) && d <= base, "{retry}: {d:?}");
        }
        let d = p.next_delay(&http(429, None), 1).unwrap();
        assert!(d >= Duration::from_millis(7_500) && d <= Duration::from_secs(10));
        let big = RetryPolicy {
            max_retries: 40,
            ..p
        };
        assert!(big.next_delay(&http(500, None), 30).unwrap() <= big.max_delay);
    }

    #[test]
    fn server_wait_wins_and_absurd_waits_fail_fast() {
        let p = RetryPolicy::default();
        let d = p.next_delay(&http(429, Some(Duration::from_secs(2))), 1);
        assert_eq!(d, Some(Duration::from_secs(2)));
        assert_eq!(
            p.next_delay(&http(429, Some(Duration::from_secs(3600))), 1),
            None
        );
        let forced = AttemptError::Http {
            status: 400,
            kind: String::new(),
            message: String::new(),
            retry_after: None,
            should_retry: Some(true),
        };
        assert!(p.next_delay(&forced, 1).is_some());
    }

    #[test]
    fn retry_after_header_forms() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("3"));
        assert_eq!(retry_after(&h, now), Some(Duration::from_secs(3)));
        h.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(retry_after(&h, now), Some(Duration::from_millis(250)));
        let mut h = HeaderMap::new();
        let date = httpdate::fmt_http_date(now + Duration::from_secs(7));
        h.insert("retry-after", HeaderValue::from_str(&date).unwrap());
        assert_eq!(retry_after(&h, now), Some(Duration::from_secs(7)));
        h.insert("retry-after", HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&h, now), None);
        let mut h = HeaderMap::new();
        h.insert("x-should-retry", HeaderValue::from_static("false"));
        assert_eq!(should_retry(&h), Some(false));
    }
}
