//! `AnthropicProvider`: the Messages API over HTTPS with SSE streaming, retries and idle timeouts.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use skiff_protocol::{MessagesRequest, RequestView, StreamEvent};
use tokio_util::sync::CancellationToken;

use crate::accumulator::StreamAccumulator;
use crate::attempt::{Flow, SseHandler, sse_attempt};
use crate::error::AttemptError;
use crate::http_errors::{http_error, same_origin_redirects, transport_error};
use crate::provider::{EventStream, Provider, ProviderEvent};
use crate::retry::{AttemptStream, RetryPolicy, Retrying, retrying};
use crate::sse::SseEvent;
use crate::{Credential, LlmError, StreamError};

/// Default API base URL.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The `anthropic-version` header value.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Why a provider could not be configured.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Neither ANTHROPIC_API_KEY nor ANTHROPIC_AUTH_TOKEN is set.
    #[error(
        "no API key found. Set ANTHROPIC_API_KEY (for example `export ANTHROPIC_API_KEY=sk-ant-...`), \
         or ANTHROPIC_AUTH_TOKEN for a bearer token"
    )]
    MissingCredential,
    /// A setting has an unusable value.
    #[error("invalid {name}: {message}")]
    Invalid {
        /// Variable or setting name.
        name: String,
        /// What is wrong with it.
        message: String,
    },
}

/// Settings of the Anthropic provider.
#[derive(Debug, Clone)]
pub struct AnthropicConfig {
    /// Base URL without the `/v1/messages` path.
    pub base_url: String,
    /// How requests authenticate.
    pub credential: Credential,
    /// Extra `anthropic-beta` values.
    pub betas: Vec<String>,
    /// Retry policy.
    pub retry: RetryPolicy,
    /// No bytes for this long (response headers or body) counts as a dropped connection.
    pub idle_timeout: Duration,
    /// TCP/TLS connect timeout.
    pub connect_timeout: Duration,
    /// Extra request headers (ANTHROPIC_CUSTOM_HEADERS).
    pub extra_headers: Vec<(String, String)>,
    /// Treat a tool call written as text (JSON, a ```json fence, `<tool_call>`) as a call, as
    /// the OpenAI-compatible provider does. `None`: on for any server but the Anthropic API's
    /// own (a local model behind llama.cpp's, Ollama's or LM Studio's `/v1/messages`).
    pub text_tool_calls: Option<bool>,
    /// Ask a server that is not the Anthropic API about the model (context window, max output
    /// tokens: llama.cpp's `/props`, Ollama's `/api/show`, `/v1/models`), in the background,
    /// with the first call for it.
    pub server_metadata: bool,
}

impl AnthropicConfig {
    /// Defaults with the given credential.
    pub fn new(credential: Credential) -> Self {
        Self {
            base_url: DEFAULT_BASE_URL.to_owned(),
            credential,
            betas: Vec::new(),
            retry: RetryPolicy::default(),
            idle_timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(10),
            extra_headers: Vec::new(),
            text_tool_calls: None,
            server_metadata: true,
        }
    }

    /// Whether the base URL is the Anthropic API's own (whose models neither write calls as
    /// text nor need their window asked for).
    pub fn is_anthropic_api(&self) -> bool {
        reqwest::Url::parse(&self.base_url)
            .ok()
            .and_then(|u| {
                u.host_str()
                    .map(|h| h == "api.anthropic.com" || h.ends_with(".anthropic.com"))
            })
            .unwrap_or(false)
    }

    /// Configuration from the process environment (see [`AnthropicConfig::from_lookup`]).
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|k| std::env::var(k).ok())
    }

    /// Configuration from variables: ANTHROPIC_AUTH_TOKEN (bearer, wins) or ANTHROPIC_API_KEY,
    /// ANTHROPIC_BASE_URL, ANTHROPIC_BETAS (comma list), ANTHROPIC_CUSTOM_HEADERS (`Name: Value`
    /// lines), SKIFF_MAX_RETRIES, SKIFF_STREAM_IDLE_TIMEOUT_MS.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let non_empty = |k: &str| get(k).filter(|v| !v.trim().is_empty());
        let credential = if let Some(t) = non_empty("ANTHROPIC_AUTH_TOKEN") {
            Credential::bearer(t.trim())
        } else if let Some(k) = non_empty("ANTHROPIC_API_KEY") {
            Credential::api_key(k.trim())
        } else {
            return Err(ConfigError::MissingCredential);
        };
        let mut cfg = Self::new(credential);
        if let Some(url) = non_empty("ANTHROPIC_BASE_URL") {
            cfg.base_url = validate_base_url(&url, "ANTHROPIC_BASE_URL")?;
        }
        let common = CommonOptions::from_lookup(&get)?;
        cfg.betas = common.betas;
        cfg.extra_headers = common.extra_headers;
        cfg.retry = common.retry;
        cfg.idle_timeout = common.idle_timeout;
        Ok(cfg)
    }
}

/// The options every Messages API provider reads (the Anthropic API's and the clouds'):
/// ANTHROPIC_BETAS, ANTHROPIC_CUSTOM_HEADERS, SKIFF_MAX_RETRIES, SKIFF_STREAM_IDLE_TIMEOUT_MS.
#[derive(Debug, Clone)]
pub(crate) struct CommonOptions {
    /// Extra `anthropic-beta` values.
    pub betas: Vec<String>,
    /// Extra request headers.
    pub extra_headers: Vec<(String, String)>,
    /// Retry policy.
    pub retry: RetryPolicy,
    /// Stream idle timeout.
    pub idle_timeout: Duration,
}

impl CommonOptions {
    /// From variables.
    pub(crate) fn from_lookup(get: &impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let non_empty = |k: &str| get(k).filter(|v| !v.trim().is_empty());
        let mut cfg = Self {
            betas: Vec::new(),
            extra_headers: Vec::new(),
            retry: RetryPolicy::default(),
            idle_timeout: Duration::from_secs(120),
        };
        if let Some(b) = non_empty("ANTHROPIC_BETAS") {
            cfg.betas = b
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect();
        }
        if let Some(h) = non_empty("ANTHROPIC_CUSTOM_HEADERS") {
            for line in h.lines().filter(|l| !l.trim().is_empty()) {
                let (name, value) = line.split_once(':').ok_or_else(|| ConfigError::Invalid {
                    name: "ANTHROPIC_CUSTOM_HEADERS".into(),
                    message: format!("line `{line}` is not `Name: Value`"),
                })?;
                cfg.extra_headers
                    .push((name.trim().to_owned(), value.trim().to_owned()));
            }
        }
        if let Some(n) = non_empty("SKIFF_MAX_RETRIES") {
            cfg.retry.max_retries = n.trim().parse().map_err(|_| ConfigError::Invalid {
                name: "SKIFF_MAX_RETRIES".into(),
                message: format!("`{n}` is not a whole number"),
            })?;
        }
        if let Some(ms) = non_empty("SKIFF_STREAM_IDLE_TIMEOUT_MS") {
            let ms: u64 = ms.trim().parse().map_err(|_| ConfigError::Invalid {
                name: "SKIFF_STREAM_IDLE_TIMEOUT_MS".into(),
                message: format!("`{ms}` is not a number of milliseconds"),
            })?;
            cfg.idle_timeout = Duration::from_millis(ms.max(1));
        }
        Ok(cfg)
    }
}

/// `url` parsed as reqwest would parse it for a request, if it parses.
pub(crate) fn parsed_url(url: &str) -> Option<reqwest::Url> {
    reqwest::Url::parse(url).ok()
}

pub(crate) fn validate_base_url(url: &str, name: &str) -> Result<String, ConfigError> {
    let url = url.trim().trim_end_matches('/');
    let parsed = reqwest::Url::parse(url).map_err(|e| ConfigError::Invalid {
        name: name.into(),
        message: format!("`{url}` is not a URL ({e})"),
    })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(ConfigError::Invalid {
            name: name.into(),
            message: format!("`{url}` must start with http:// or https://"),
        });
    }
    Ok(url.to_owned())
}

struct Inner {
    client: reqwest::Client,
    headers: HeaderMap,
    messages_url: String,
    /// `messages_url` parsed once: given as text, reqwest parses it again for every request
    /// (about 11 K instructions each). `None` when it does not parse: requests then fail as
    /// they always did, in reqwest's words.
    messages_parsed: Option<reqwest::Url>,
    count_tokens_url: String,
    config: AnthropicConfig,
    /// `config.is_anthropic_api()`, answered once (each answer parses the base URL).
    anthropic_api: bool,
    /// What a non-Anthropic server said about each model asked about.
    served: crate::openai::metadata::ServedCache,
}

/// The Anthropic Messages API provider. Cheap to clone; all clones share one HTTP client.
#[derive(Clone)]
pub struct AnthropicProvider {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for AnthropicProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnthropicProvider")
            .field("base_url", &self.inner.config.base_url)
            .field("credential", &self.inner.config.credential)
            .finish_non_exhaustive()
    }
}

impl AnthropicProvider {
    /// Build the provider and its shared HTTP client.
    pub fn new(config: AnthropicConfig) -> Result<Self, LlmError> {
        let config = AnthropicConfig {
            base_url: validate_base_url(&config.base_url, "ANTHROPIC_BASE_URL")
                .map_err(|e| LlmError::Request(e.to_string()))?,
            ..config
        };
        let client = crate::http::client(
            &config.base_url,
            config.connect_timeout,
            same_origin_redirects(),
        )?;
        let mut headers = HeaderMap::new();
        headers.insert(
            "anthropic-version",
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        headers.insert(
            reqwest::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        if !config.betas.is_empty() {
            let v = HeaderValue::from_str(&config.betas.join(",")).map_err(|_| {
                LlmError::Request("anthropic-beta values must be plain ASCII".into())
            })?;
            headers.insert("anthropic-beta", v);
        }
        for (name, value) in &config.extra_headers {
            let n = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| LlmError::Request(format!("invalid custom header name `{name}`")))?;
            let mut v = HeaderValue::from_str(value).map_err(|_| {
                LlmError::Request(format!("invalid value for custom header `{name}`"))
            })?;
            v.set_sensitive(true);
            headers.insert(n, v);
        }
        let (name, value) = config.credential.header().map_err(LlmError::Request)?;
        headers.insert(name, value);
        let messages_url = format!("{}/v1/messages", config.base_url);
        Ok(Self {
            inner: Arc::new(Inner {
                client,
                headers,
                messages_parsed: parsed_url(&messages_url),
                messages_url,
                count_tokens_url: format!("{}/v1/messages/count_tokens", config.base_url),
                served: Default::default(),
                anthropic_api: config.is_anthropic_api(),
                config,
            }),
        })
    }

    /// The configuration in use.
    pub fn config(&self) -> &AnthropicConfig {
        &self.inner.config
    }

    /// `POST /v1/messages/count_tokens`: the input tokens the request would use (no retries).
    pub async fn count_tokens(&self, request: &MessagesRequest) -> Result<u64, LlmError> {
        let mut body =
            serde_json::to_value(request).map_err(|e| LlmError::Request(e.to_string()))?;
        if let Some(o) = body.as_object_mut() {
            o.remove("max_tokens");
            o.remove("stream");
        }
        let url = &self.inner.count_tokens_url;
        let resp = self
            .inner
            .client
            .post(url)
            .headers(self.inner.headers.clone())
            .json(&body)
            .timeout(self.inner.config.idle_timeout)
            .send()
            .await
            .map_err(|e| transport_error(&e).into_final(url, 0))?;
        if !resp.status().is_success() {
            return Err(http_error(resp, self.inner.config.idle_timeout)
                .await
                .into_final(url, 0));
        }
        let v: serde_json::Value = resp
            .json()
            .await
            .map_err(|e| transport_error(&e).into_final(url, 0))?;
        v.get("input_tokens")
            .and_then(serde_json::Value::as_u64)
            .ok_or_else(|| {
                LlmError::Request(format!("count_tokens answered without input_tokens: {v}"))
            })
    }
}

impl AnthropicProvider {
    /// Where a server that is not the Anthropic API says things about its models (the same
    /// places as the OpenAI-compatible servers': it is usually one of them).
    fn metadata_source(&self) -> crate::openai::metadata::MetadataSource {
        let mut headers = self.inner.headers.clone();
        headers.remove(reqwest::header::CONTENT_TYPE);
        let base_url = format!("{}/v1", self.inner.config.base_url.trim_end_matches('/'));
        crate::openai::metadata::MetadataSource {
            client: self.inner.client.clone(),
            headers,
            kind: crate::openai::metadata::ServerKind::of(None, &base_url),
            base_url,
        }
    }

    /// Ask a server that is not the Anthropic API about `model` now (context window, max
    /// output tokens) and keep the answer for [`Provider::served_model`]; `None` for the
    /// Anthropic API itself, or when the server says nothing. Calls do this in the background
    /// by themselves.
    pub async fn fetch_served_model(&self, model: &str) -> Option<crate::ServedModel> {
        if self.inner.anthropic_api {
            return None;
        }
        self.inner
            .served
            .fetch(&self.metadata_source(), model)
            .await
    }

    /// Start asking a non-Anthropic server about `model` in the background, once.
    fn start_lookup(&self, model: &str) {
        if !self.inner.config.server_metadata || self.inner.anthropic_api {
            return;
        }
        self.inner.served.start(|| self.metadata_source(), model);
    }

    /// Whether calls written as text become calls.
    fn text_tool_calls(&self) -> bool {
        self.inner
            .config
            .text_tool_calls
            .unwrap_or(!self.inner.anthropic_api)
    }
}

impl Provider for AnthropicProvider {
    fn name(&self) -> &str {
        "anthropic"
    }

    fn prepare(&self, model: &str) {
        self.start_lookup(model);
    }

    fn served_model(&self, model: &str) -> Option<crate::ServedModel> {
        self.inner.served.get(model)
    }

    fn is_local(&self) -> bool {
        crate::http::is_local_url(&self.inner.config.base_url)
    }

    /// The Messages API runs web searches (as Claude Code assumes of any Anthropic endpoint).
    fn server_web_search(&self) -> bool {
        true
    }

    fn stream(&self, request: &RequestView<'_>, cancel: CancellationToken) -> EventStream {
        let inner = self.inner.clone();
        let mut request = *request;
        request.stream = true;
        let body = request
            .body_chunks()
            .map(Body::new)
            .map_err(|e| LlmError::Request(e.to_string()));
        let body = match body {
            Ok(b) => b,
            Err(e) => return Box::pin(futures::stream::once(async move { Err(e) })),
        };
        // In the background: this call goes out at once.
        self.start_lookup(request.model);
        let tools: Arc<[String]> = if self.text_tool_calls() {
            request.tools.iter().map(|t| t.name.clone()).collect()
        } else {
            Arc::from([])
        };
        let retry = Retrying {
            policy: inner.config.retry.clone(),
            target: inner.messages_url.clone(),
            max_sleep: None,
        };
        let attempt_cancel = cancel.clone();
        retrying(retry, cancel, move || {
            Ok(Box::pin(attempt(
                inner.clone(),
                body.clone(),
                MessagesSse::with_text_calls(tools.to_vec()),
                attempt_cancel.clone(),
            )) as AttemptStream)
        })
    }
}

/// A request body: shared chunks, sent one after the other without being joined, so a long
/// conversation's serialized prefix is not copied for each request or retry.
#[derive(Debug, Clone)]
pub(crate) struct Body {
    chunks: Vec<Bytes>,
    /// Bytes in all (the Content-Length).
    pub(crate) len: usize,
}

impl Body {
    /// The chunks, in order.
    pub(crate) fn chunks(&self) -> &[Bytes] {
        &self.chunks
    }

    pub(crate) fn new(chunks: Vec<Bytes>) -> Self {
        let len = chunks.iter().map(Bytes::len).sum();
        Self { chunks, len }
    }

    pub(crate) fn to_reqwest(&self) -> reqwest::Body {
        match self.chunks.as_slice() {
            [one] => reqwest::Body::from(one.clone()),
            _ => reqwest::Body::wrap_stream(futures::stream::iter(
                self.chunks
                    .clone()
                    .into_iter()
                    .map(Ok::<Bytes, std::convert::Infallible>),
            )),
        }
    }
}

/// One HTTP attempt: send, check the status, decode SSE into events until `message_stop`.
fn attempt(
    inner: Arc<Inner>,
    body: Body,
    handler: MessagesSse,
    cancel: CancellationToken,
) -> impl futures::Stream<Item = Result<ProviderEvent, AttemptError>> + Send + 'static {
    let request = match &inner.messages_parsed {
        Some(url) => inner.client.post(url.clone()),
        None => inner.client.post(&inner.messages_url),
    };
    let request = request
        .headers(inner.headers.clone())
        .header(reqwest::header::CONTENT_LENGTH, body.len)
        .body(body.to_reqwest());
    sse_attempt(request, inner.config.idle_timeout, cancel, handler)
}

/// The Messages API's events, assembled (also what Bedrock's and Vertex AI's streams carry),
/// through the text-call fallback when it is on.
pub(crate) struct MessagesSse {
    acc: StreamAccumulator,
    filter: Option<crate::text_call_filter::TextCallFilter>,
}

impl MessagesSse {
    /// A handler for one attempt.
    pub(crate) fn new() -> Self {
        Self {
            acc: StreamAccumulator::new(),
            filter: None,
        }
    }

    /// A handler that turns calls to the tools `known` written as text into calls (none: off).
    pub(crate) fn with_text_calls(known: Vec<String>) -> Self {
        Self {
            acc: StreamAccumulator::new(),
            filter: (!known.is_empty())
                .then(|| crate::text_call_filter::TextCallFilter::new(known)),
        }
    }

    /// Apply one SSE event; `Ok(true)` once the message is done.
    fn handle(
        &mut self,
        raw: &SseEvent,
        out: &mut Vec<ProviderEvent>,
    ) -> Result<bool, AttemptError> {
        let event = parse_event(raw).map_err(AttemptError::Stream)?;
        let Some(filter) = &mut self.filter else {
            return apply_event(&mut self.acc, event, out);
        };
        let mut events = Vec::new();
        filter.push(event, &mut events);
        for event in events {
            if apply_event(&mut self.acc, event, out)? {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

impl SseHandler for MessagesSse {
    fn event(
        &mut self,
        raw: &SseEvent,
        at_eof: bool,
        out: &mut Vec<ProviderEvent>,
    ) -> Result<Flow, AttemptError> {
        match self.handle(raw, out) {
            Ok(true) => Ok(Flow::Done),
            Ok(false) => Ok(Flow::Continue),
            // Cut-off data at EOF is a dropped connection, not a malformed stream.
            Err(AttemptError::Stream(StreamError::Malformed(_))) if at_eof => Ok(Flow::Cut),
            Err(e) => Err(e),
        }
    }
}

/// Apply one parsed stream event (an `error` event fails the attempt): queue the event, with
/// its block index renumbered, and the blocks it completed on `out`; `Ok(true)` once the
/// message is done. Shared by every provider that produces Messages API events.
pub(crate) fn apply_event(
    acc: &mut StreamAccumulator,
    mut event: StreamEvent,
    out: &mut Vec<ProviderEvent>,
) -> Result<bool, AttemptError> {
    if let StreamEvent::Error { error } = &event {
        return Err(AttemptError::ErrorEvent {
            kind: error.kind.clone(),
            message: error.message.clone(),
        });
    }
    let mut completed = Vec::new();
    acc.apply(&mut event, &mut completed)
        .map_err(AttemptError::Stream)?;
    out.push(ProviderEvent::Stream(event));
    for (index, block) in completed {
        out.push(ProviderEvent::BlockComplete { index, block });
    }
    if !acc.is_complete() {
        return Ok(false);
    }
    let msg = std::mem::take(acc).finish().map_err(AttemptError::Stream)?;
    out.push(ProviderEvent::Done(msg));
    Ok(true)
}

/// Parse one SSE event's data as a stream event.
pub(crate) fn parse_event(raw: &SseEvent) -> Result<StreamEvent, StreamError> {
    serde_json::from_str(&raw.data).map_err(|e| {
        let excerpt: String = raw.data.chars().take(120).collect();
        StreamError::Malformed(format!(
            "`{}` event: {e}; data: {excerpt}",
            raw.event.as_deref().unwrap_or("message")
        ))
    })
}
