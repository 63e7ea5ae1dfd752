//! Recording of every request the mock server receives, for tests to inspect afterwards.

use std::sync::Mutex;

use axum::http::{HeaderMap, Method, Uri};
use bytes::Bytes;
use serde_json::Value;

/// One HTTP request as the mock server received it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    /// HTTP method, e.g. `POST`.
    pub method: String,
    /// Path including the query string, e.g. `/v1/messages?beta=true`.
    pub path: String,
    /// Headers in arrival order, names lowercase (values decoded lossily as UTF-8).
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON, or `Null` when it is empty or not JSON.
    pub body: Value,
    /// The body bytes exactly as received.
    pub raw_body: Bytes,
}

impl RecordedRequest {
    /// Build a record from the parts of a request. With `full_body` false only the `model` and
    /// `stream` fields are kept in `body` and the raw body is not kept (no JSON tree of a large
    /// body is built: the long-running mock of the benchmarks).
    pub(crate) fn new(
        method: &Method,
        uri: &Uri,
        headers: &HeaderMap,
        chunks: &[Bytes],
        full_body: bool,
    ) -> Self {
        let path = uri
            .path_and_query()
            .map_or_else(|| uri.path().to_owned(), |pq| pq.as_str().to_owned());
        let headers = headers
            .iter()
            .map(|(name, value)| {
                (
                    name.as_str().to_ascii_lowercase(),
                    String::from_utf8_lossy(value.as_bytes()).into_owned(),
                )
            })
            .collect();
        let joined = match chunks {
            [one] => one.clone(),
            _ => Bytes::from(chunks.concat()),
        };
        let body = if full_body {
            serde_json::from_slice(&joined).unwrap_or(Value::Null)
        } else {
            /// The fields the routes need, read without building the rest.
            #[derive(serde::Deserialize, serde::Serialize)]
            struct Peek {
                #[serde(default, skip_serializing_if = "Option::is_none")]
                model: Option<String>,
                #[serde(default, skip_serializing_if = "Option::is_none")]
                stream: Option<bool>,
            }
            serde_json::from_slice::<Peek>(&joined)
                .ok()
                .and_then(|p| serde_json::to_value(p).ok())
                .unwrap_or(Value::Null)
        };
        let raw_body = if full_body { joined } else { Bytes::new() };
        Self {
            method: method.as_str().to_owned(),
            path,
            headers,
            body,
            raw_body,
        }
    }

    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The path without its query string.
    pub fn path_only(&self) -> &str {
        self.path.split_once('?').map_or(&self.path, |(p, _)| p)
    }

    /// Whether this is a `POST /v1/messages` (query strings ignored).
    pub fn is_messages(&self) -> bool {
        self.method == "POST" && self.path_only() == "/v1/messages"
    }

    /// Whether this is a `POST /v1/chat/completions` (query strings ignored).
    pub fn is_chat(&self) -> bool {
        self.method == "POST" && self.path_only() == "/v1/chat/completions"
    }
}

/// The list of recorded requests, shared between the server and its handle.
#[derive(Debug)]
pub(crate) struct Recorder {
    requests: Mutex<Vec<RecordedRequest>>,
    /// Keep the requests (tests); when off only the count is kept (long-running mock binary).
    keep: bool,
    count: std::sync::atomic::AtomicUsize,
}

impl Recorder {
    /// Whether requests are kept.
    pub(crate) fn keeps(&self) -> bool {
        self.keep
    }

    /// A recorder that keeps requests, or only counts them.
    pub(crate) fn new(keep: bool) -> Self {
        Self {
            requests: Mutex::new(Vec::new()),
            keep,
            count: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// Append a request; returns its 1-based sequence number.
    pub(crate) fn record(&self, request: RecordedRequest) -> usize {
        let n = self
            .count
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            + 1;
        if self.keep {
            self.requests
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(request);
        }
        n
    }

    /// A copy of everything recorded so far.
    pub(crate) fn all(&self) -> Vec<RecordedRequest> {
        self.requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// How many requests have arrived.
    pub(crate) fn len(&self) -> usize {
        self.count.load(std::sync::atomic::Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn records_path_with_query_lowercase_headers_and_json_body() {
        let mut headers = HeaderMap::new();
        headers.insert("X-Api-Key", HeaderValue::from_static("k"));
        let uri: Uri = "/v1/messages?beta=true".parse().unwrap();
        let r = RecordedRequest::new(
            &Method::POST,
            &uri,
            &headers,
            &[
                Bytes::from_static(br#"{"model":"#),
                Bytes::from_static(br#""m"}"#),
            ],
            true,
        );
        assert_eq!(r.path, "/v1/messages?beta=true");
        assert_eq!(r.path_only(), "/v1/messages");
        assert!(r.is_messages());
        assert_eq!(r.headers, vec![("x-api-key".to_owned(), "k".to_owned())]);
        assert_eq!(r.header("X-API-KEY"), Some("k"));
        assert_eq!(r.body["model"], "m");
    }

    #[test]
    fn without_the_full_body_only_model_and_stream_are_read() {
        let uri: Uri = "/v1/messages".parse().unwrap();
        let chunks = [
            Bytes::from_static(br#"{"model":"m","messages":[{"role":"#),
            Bytes::from_static(br#""user","content":"x"}],"stream":true}"#),
        ];
        let r = RecordedRequest::new(&Method::POST, &uri, &HeaderMap::new(), &chunks, false);
        assert_eq!(r.body, serde_json::json!({"model": "m", "stream": true}));
        assert!(r.raw_body.is_empty());
    }

    #[test]
    fn non_json_body_is_null() {
        let uri: Uri = "/x".parse().unwrap();
        let r = RecordedRequest::new(
            &Method::GET,
            &uri,
            &HeaderMap::new(),
            &[Bytes::from("nope")],
            true,
        );
        assert_eq!(r.body, Value::Null);
        assert!(!r.is_messages());
    }
}
