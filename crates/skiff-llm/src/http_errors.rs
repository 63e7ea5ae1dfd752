//! What a failed HTTP exchange with a model server means: the transport's error chain, a
//! failed status's body in the dialects servers speak (Anthropic, OpenAI, Ollama, Google, AWS,
//! llama.cpp's context figures), and the redirect policy that keeps the key at its origin.
//! Shared by every provider's attempt.

use std::time::{Duration, SystemTime};

use skiff_protocol::ErrorResponse;

use crate::error::AttemptError;
use crate::retry;

/// The type and message of an OpenAI-style error body (`{"error": {"type": …, "message": …}}`,
/// or Ollama's `{"error": "…"}`), of Google's (the same, possibly in a one-element array), or
/// of AWS's (`{"message": …}` / `{"Message": …}`). llama.cpp's context-size error carries its
/// figures beside the message (`n_prompt_tokens`, `n_ctx`): they are added to it.
fn openai_error_message(text: &str) -> Option<(Option<String>, String)> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    let v = match v {
        serde_json::Value::Array(mut items) if items.len() == 1 => items.pop()?,
        v => v,
    };
    if let Some(err) = v.get("error") {
        let message = err
            .get("message")
            .and_then(serde_json::Value::as_str)
            .or_else(|| err.as_str())?
            .to_owned();
        let message = with_figures(message, |k| err.get(k));
        let kind = err
            .get("type")
            .and_then(serde_json::Value::as_str)
            .filter(|t| !t.is_empty())
            .map(str::to_owned);
        return Some((kind, message));
    }
    v.get("message")
        .or_else(|| v.get("Message"))
        .and_then(serde_json::Value::as_str)
        .map(|m| (None, m.to_owned()))
}

/// `message` with llama.cpp's context figures (`n_prompt_tokens`, `n_ctx`) added when the error
/// object has them.
fn with_figures<'a>(
    mut message: String,
    get: impl Fn(&str) -> Option<&'a serde_json::Value>,
) -> String {
    let figures: Vec<String> = ["n_prompt_tokens", "n_ctx"]
        .iter()
        .filter_map(|k| Some(format!("{k} {}", get(k)?.as_u64()?)))
        .collect();
    if !figures.is_empty() {
        message.push_str(&format!(" ({})", figures.join(", ")));
    }
    message
}

/// The error's causes joined with `: `, without reqwest's top line (which only repeats the URL).
pub(crate) fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut cur = e.source();
    while let Some(inner) = cur {
        let m = inner.to_string();
        if !parts.iter().any(|p| p.contains(&m)) {
            parts.push(m);
        }
        cur = inner.source();
    }
    if parts.is_empty() {
        e.to_string()
    } else {
        parts.join(": ")
    }
}

pub(crate) fn transport_error(e: &reqwest::Error) -> AttemptError {
    let msg = error_chain(e);
    if e.is_connect() {
        AttemptError::Connect(msg)
    } else {
        AttemptError::Transport(msg)
    }
}

/// Redirects are followed only within the origin of the request: the API key and the headers
/// go with every request, so a redirect to another host would hand them over.
pub(crate) fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let same = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if !same {
            attempt.stop()
        } else if attempt.previous().len() > 5 {
            attempt.error("too many redirects")
        } else {
            attempt.follow()
        }
    })
}

pub(crate) async fn http_error(resp: reqwest::Response, idle: Duration) -> AttemptError {
    let status = resp.status().as_u16();
    if resp.status().is_redirection() {
        let to = resp
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|l| resp.url().join(l).ok())
            .map(|u| u.origin().ascii_serialization())
            .unwrap_or_else(|| "another address".to_owned());
        return AttemptError::Http {
            status,
            kind: "redirect".to_owned(),
            message: format!(
                "the server redirected the request to {to}; skiff does not follow redirects to \
                 another host, because the API key would go with them. Set the base URL to the \
                 final address if you trust it"
            ),
            retry_after: None,
            should_retry: Some(false),
        };
    }
    let retry_after = retry::retry_after(resp.headers(), SystemTime::now());
    let should_retry = retry::should_retry(resp.headers());
    let text = match tokio::time::timeout(idle, resp.text()).await {
        Ok(Ok(t)) => t,
        _ => String::new(),
    };
    let (kind, message) = match serde_json::from_str::<ErrorResponse>(&text) {
        Ok(er) => {
            let message = with_figures(er.error.message, |k| er.error.extra.get(k));
            (er.error.kind, message)
        }
        Err(_) if let Some((kind, m)) = openai_error_message(&text) => {
            (kind.unwrap_or_else(|| "http_error".to_owned()), m)
        }
        Err(_) => {
            let excerpt: String = text.trim().chars().take(300).collect();
            let message = if excerpt.is_empty() {
                reqwest::StatusCode::from_u16(status)
                    .ok()
                    .and_then(|s| s.canonical_reason())
                    .unwrap_or("no message")
                    .to_owned()
            } else {
                excerpt
            };
            ("http_error".to_owned(), message)
        }
    };
    AttemptError::Http {
        status,
        kind,
        message,
        retry_after,
        should_retry,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LlmError;

    #[test]
    fn llama_cpp_context_errors_keep_their_type_and_figures() {
        let body = r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":17321,"n_ctx":16384}}"#;
        let (kind, message) = match serde_json::from_str::<ErrorResponse>(body) {
            Ok(er) => (
                er.error.kind.clone(),
                with_figures(er.error.message.clone(), |k| er.error.extra.get(k)),
            ),
            Err(_) => {
                let (kind, message) = openai_error_message(body).unwrap();
                (kind.unwrap(), message)
            }
        };
        assert_eq!(kind, "exceed_context_size_error");
        assert!(
            message.ends_with("(n_prompt_tokens 17321, n_ctx 16384)"),
            "{message}"
        );
        let e = LlmError::InvalidRequest {
            status: 400,
            kind,
            message,
        };
        let o = e.context_overflow().unwrap();
        assert_eq!((o.window, o.prompt_tokens), (Some(16_384), Some(17_321)));
        // Ollama's bare string and OpenAI's typed error.
        assert_eq!(
            openai_error_message(r#"{"error":"model not found"}"#),
            Some((None, "model not found".to_owned()))
        );
        assert_eq!(
            openai_error_message(r#"{"error":{"message":"m","type":"invalid_request_error"}}"#),
            Some((Some("invalid_request_error".to_owned()), "m".to_owned()))
        );
    }
}
