//! `OpenAiProvider`: OpenAI-compatible chat completions (OpenAI, Ollama, llama.cpp, vLLM,
//! LM Studio, OpenRouter, LiteLLM) behind the same [`Provider`] trait, streaming, with the same
//! retries, idle timeout and cancellation as the Anthropic provider. The chunks are translated
//! into Messages API events ([`stream::ChunkTranslator`]), so the loop and every client see one
//! format. What the server says about a model (context window, max output tokens, prices) is
//! looked up in the background ([`metadata`]) with the first call for it.

pub(crate) mod metadata;
mod request;
mod stream;
pub mod text_calls;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use skiff_protocol::{RequestView, StreamEvent};
use tokio_util::sync::CancellationToken;

pub use request::{BodyExtras, CHAT_ENCODING, call_grammar, chat_body, chat_body_chunks};
pub(crate) use stream::random_suffix;
pub use stream::{ChunkError, ChunkTranslator};

use crate::accumulator::StreamAccumulator;
use crate::anthropic::{Body, ConfigError, apply_event, validate_base_url};
use crate::attempt::{Flow, SseHandler, sse_attempt};
use crate::error::AttemptError;
use crate::http_errors::{http_error, same_origin_redirects, transport_error};
use crate::provider::{EventStream, Provider, ProviderEvent};
use crate::retry::{AttemptStream, RetryPolicy, Retrying, retrying};
use crate::sse::SseEvent;
use crate::{Credential, LlmError, ServedModel, StreamError};
use metadata::{MetadataSource, ServedCache, ServerKind};

/// OpenAI's own endpoint.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";

/// A named server: where it listens and which variable holds its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    /// The name given to `--provider`.
    pub name: &'static str,
    /// Its base URL (with `/v1`).
    pub base_url: &'static str,
    /// The variable its API key is read from first (OPENAI_API_KEY is the fallback).
    pub key_var: Option<&'static str>,
    /// Whether it runs on this machine (no key needed, no prices).
    pub local: bool,
}

/// The servers `--provider` knows by name.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "openai",
        base_url: OPENAI_BASE_URL,
        key_var: None,
        local: false,
    },
    Preset {
        name: "ollama",
        base_url: "http://127.0.0.1:11434/v1",
        key_var: None,
        local: true,
    },
    Preset {
        name: "llamacpp",
        base_url: "http://127.0.0.1:8080/v1",
        key_var: None,
        local: true,
    },
    Preset {
        name: "vllm",
        base_url: "http://127.0.0.1:8000/v1",
        key_var: None,
        local: true,
    },
    Preset {
        name: "lmstudio",
        base_url: "http://127.0.0.1:1234/v1",
        key_var: None,
        local: true,
    },
    Preset {
        name: "openrouter",
        base_url: "https://openrouter.ai/api/v1",
        key_var: Some("OPENROUTER_API_KEY"),
        local: false,
    },
];

/// The preset called `name` (case-insensitive; `llama.cpp` and `lm-studio` spellings too).
pub fn preset(name: &str) -> Option<&'static Preset> {
    let n: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase();
    PRESETS.iter().find(|p| p.name == n)
}

/// Settings of the OpenAI-compatible provider.
#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// Base URL including the version path (`…/v1`); `/chat/completions` is appended.
    pub base_url: String,
    /// The key, when the server wants one (local servers usually do not).
    pub credential: Option<Credential>,
    /// Retry policy.
    pub retry: RetryPolicy,
    /// No bytes for this long counts as a dropped connection. Local servers may think for
    /// long before the first token (prefill on a CPU), hence the generous default of 300 s.
    pub idle_timeout: Duration,
    /// TCP/TLS connect timeout.
    pub connect_timeout: Duration,
    /// Extra request headers.
    pub extra_headers: Vec<(String, String)>,
    /// Treat a tool call written as text (JSON, a ```json fence, `<tool_call>`) as a call.
    pub text_tool_calls: bool,
    /// The preset it was built from (`ollama`, `llamacpp`, …): where the server says a model's
    /// context window. `None`: guessed from the base URL.
    pub preset: Option<&'static str>,
    /// Ask the server about the model (context window, max output tokens, prices), in the
    /// background, with the first call for it.
    pub server_metadata: bool,
}

impl OpenAiConfig {
    /// Defaults for `base_url`.
    pub fn new(base_url: impl Into<String>, credential: Option<Credential>) -> Self {
        Self {
            base_url: base_url.into(),
            credential,
            retry: RetryPolicy::default(),
            idle_timeout: Duration::from_secs(300),
            connect_timeout: Duration::from_secs(10),
            extra_headers: Vec::new(),
            text_tool_calls: true,
            preset: None,
            server_metadata: true,
        }
    }

    /// Configuration from variables for `preset` (default: `openai`): OPENAI_BASE_URL (or the
    /// preset's address), the preset's key variable or OPENAI_API_KEY (optional),
    /// SKIFF_MAX_RETRIES, SKIFF_STREAM_IDLE_TIMEOUT_MS.
    pub fn from_lookup(
        preset: &Preset,
        get: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let non_empty = |k: &str| get(k).filter(|v| !v.trim().is_empty());
        let key = preset
            .key_var
            .and_then(|var| non_empty(var).map(|k| (k, var)))
            .or_else(|| non_empty("OPENAI_API_KEY").map(|k| (k, "OPENAI_API_KEY")));
        let credential = key.map(|(k, var)| Credential::bearer_from(k.trim(), var));
        let base = non_empty("OPENAI_BASE_URL").unwrap_or_else(|| preset.base_url.to_owned());
        let mut cfg = Self::new(normalize_base_url(&base)?, credential);
        cfg.preset = Some(preset.name);
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

/// A base URL as given (`http://localhost:11434`, `…/v1/`, `…/v1/chat/completions`) made the
/// `…/v1` form.
pub fn normalize_base_url(url: &str) -> Result<String, ConfigError> {
    let url = validate_base_url(url, "base URL")?;
    let url = url
        .strip_suffix("/chat/completions")
        .unwrap_or(&url)
        .trim_end_matches('/')
        .to_owned();
    let path_empty = reqwest::Url::parse(&url)
        .map(|u| u.path().trim_matches('/').is_empty())
        .unwrap_or(false);
    Ok(if path_empty { format!("{url}/v1") } else { url })
}

/// A model the server offers (`GET /models`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerModel {
    /// Its id, as `--model` takes it.
    pub id: String,
    /// Its context window, when the server says.
    pub context_window: Option<u64>,
    /// Who owns it, when the server says.
    pub owned_by: Option<String>,
}

struct Inner {
    client: reqwest::Client,
    headers: HeaderMap,
    chat_url: String,
    /// `chat_url` parsed once (see the Anthropic provider's `messages_parsed`).
    chat_parsed: Option<reqwest::Url>,
    config: OpenAiConfig,
    /// What the server said about each model asked about.
    served: ServedCache,
    /// The server refused `reasoning_effort`: it is left out from now on.
    effort_refused: std::sync::atomic::AtomicBool,
    /// Whether a forced call goes out with its grammar ([`BodyExtras::call_grammar`]): local
    /// servers (llama.cpp's stock templates ignore `tool_choice: "required"`), until one
    /// refuses it.
    call_grammar: std::sync::atomic::AtomicBool,
    /// What the user should hear ([`Provider::take_notices`]).
    notices: std::sync::Mutex<Vec<String>>,
}

/// The OpenAI-compatible provider. Cheap to clone.
#[derive(Clone)]
pub struct OpenAiProvider {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for OpenAiProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiProvider")
            .field("base_url", &self.inner.config.base_url)
            .field("credential", &self.inner.config.credential)
            .finish_non_exhaustive()
    }
}

impl OpenAiProvider {
    /// Build the provider and its HTTP client.
    pub fn new(config: OpenAiConfig) -> Result<Self, LlmError> {
        let base_url =
            normalize_base_url(&config.base_url).map_err(|e| LlmError::Request(e.to_string()))?;
        let config = OpenAiConfig { base_url, ..config };
        let client = crate::http::client(
            &config.base_url,
            config.connect_timeout,
            same_origin_redirects(),
        )?;
        let mut headers = HeaderMap::new();
        headers.insert(
            reqwest::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        for (name, value) in &config.extra_headers {
            let n = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| LlmError::Request(format!("invalid custom header name `{name}`")))?;
            let mut v = HeaderValue::from_str(value).map_err(|_| {
                LlmError::Request(format!("invalid value for custom header `{name}`"))
            })?;
            v.set_sensitive(true);
            headers.insert(n, v);
        }
        if let Some(c) = &config.credential {
            let (name, value) = c.header().map_err(LlmError::Request)?;
            headers.insert(name, value);
        }
        let local = ServerKind::of(config.preset, &config.base_url).is_local();
        let chat_url = format!("{}/chat/completions", config.base_url);
        Ok(Self {
            inner: Arc::new(Inner {
                client,
                headers,
                chat_parsed: crate::anthropic::parsed_url(&chat_url),
                chat_url,
                config,
                served: ServedCache::default(),
                effort_refused: std::sync::atomic::AtomicBool::new(false),
                call_grammar: std::sync::atomic::AtomicBool::new(local),
                notices: std::sync::Mutex::default(),
            }),
        })
    }

    /// The configuration in use.
    pub fn config(&self) -> &OpenAiConfig {
        &self.inner.config
    }

    /// Where the server says things about its models.
    fn metadata_source(&self) -> MetadataSource {
        let mut headers = self.inner.headers.clone();
        headers.remove(reqwest::header::CONTENT_TYPE);
        MetadataSource {
            client: self.inner.client.clone(),
            headers,
            base_url: self.inner.config.base_url.clone(),
            kind: ServerKind::of(self.inner.config.preset, &self.inner.config.base_url),
        }
    }

    /// Ask the server about `model` now (context window, max output tokens, prices) and keep
    /// the answer for [`Provider::served_model`]. Never fails: what the server does not say
    /// stays unknown. Calls do this in the background by themselves.
    pub async fn fetch_served_model(&self, model: &str) -> Option<ServedModel> {
        self.inner
            .served
            .fetch(&self.metadata_source(), model)
            .await
    }

    /// Start asking the server about `model` in the background, unless that was done already.
    fn start_lookup(&self, model: &str) {
        if !self.inner.config.server_metadata {
            return;
        }
        self.inner.served.start(|| self.metadata_source(), model);
    }

    /// `GET /models`: the models the server offers.
    pub async fn list_models(&self) -> Result<Vec<ServerModel>, LlmError> {
        let url = format!("{}/models", self.inner.config.base_url);
        let mut headers = self.inner.headers.clone();
        headers.remove(reqwest::header::CONTENT_TYPE);
        let resp = self
            .inner
            .client
            .get(&url)
            .headers(headers)
            .timeout(
                self.inner
                    .config
                    .connect_timeout
                    .max(Duration::from_secs(30)),
            )
            .send()
            .await
            .map_err(|e| transport_error(&e).into_final(&url, 0))?;
        if !resp.status().is_success() {
            return Err(http_error(resp, self.inner.config.idle_timeout)
                .await
                .into_final(&url, 0));
        }
        let v: serde_json::Value = resp
            .json()
            .await
            .map_err(|e| LlmError::Request(format!("{url} did not answer a model list: {e}")))?;
        let items = v
            .get("data")
            .or_else(|| v.get("models"))
            .and_then(serde_json::Value::as_array)
            .ok_or_else(|| LlmError::Request(format!("{url} did not answer a model list")))?;
        Ok(items.iter().filter_map(server_model).collect())
    }
}

fn server_model(v: &serde_json::Value) -> Option<ServerModel> {
    let id = v
        .get("id")
        .or_else(|| v.get("name"))
        .or_else(|| v.get("model"))?
        .as_str()?
        .to_owned();
    let u64_at = |path: &[&str]| {
        let mut cur = v;
        for p in path {
            cur = cur.get(p)?;
        }
        cur.as_u64()
    };
    let context_window = u64_at(&["context_length"])
        .or_else(|| u64_at(&["max_model_len"]))
        .or_else(|| u64_at(&["meta", "n_ctx"]))
        .or_else(|| u64_at(&["meta", "n_ctx_train"]));
    let owned_by = v
        .get("owned_by")
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned);
    Some(ServerModel {
        id,
        context_window,
        owned_by,
    })
}

impl Provider for OpenAiProvider {
    fn name(&self) -> &str {
        "openai"
    }

    fn history_encoding(&self) -> skiff_protocol::MessageEncoding {
        CHAT_ENCODING
    }

    fn prepare(&self, model: &str) {
        self.start_lookup(model);
    }

    fn is_local(&self) -> bool {
        self.inner
            .config
            .preset
            .and_then(preset)
            .is_some_and(|p| p.local)
            || crate::http::is_local_url(&self.inner.config.base_url)
    }

    fn served_model(&self, model: &str) -> Option<ServedModel> {
        self.inner.served.get(model)
    }

    fn stream(&self, request: &RequestView<'_>, cancel: CancellationToken) -> EventStream {
        let inner = self.inner.clone();
        // Never more output than the server allows, once it said.
        let max_tokens = self
            .served_model(request.model)
            .and_then(|m| m.max_output_tokens)
            .map_or(request.max_tokens, |cap| {
                request
                    .max_tokens
                    .min(u32::try_from(cap).unwrap_or(u32::MAX))
            });
        // The effort goes out as `reasoning_effort`, and a forced call with its grammar, until
        // the server refuses them; then the body without them (`without`) is sent instead.
        let extras = BodyExtras {
            effort: request::reasoning_effort(request).is_some()
                && !inner.effort_refused.load(Ordering::Relaxed),
            call_grammar: inner.call_grammar.load(Ordering::Relaxed)
                && request::call_grammar(request).is_some(),
        };
        let bodies = chat_body_chunks(request, max_tokens, extras).and_then(|with| {
            let without = if extras == BodyExtras::default() {
                None
            } else {
                let plain = chat_body_chunks(request, max_tokens, BodyExtras::default())?;
                Some(Body::new(plain))
            };
            Ok((Body::new(with), without))
        });
        let (body, without) = match bodies {
            Ok(b) => b,
            Err(e) => {
                let e = LlmError::Request(e.to_string());
                return Box::pin(futures::stream::once(async move { Err(e) }));
            }
        };
        // In the background: this call goes out at once.
        self.start_lookup(request.model);
        let tools: Arc<[String]> = if inner.config.text_tool_calls {
            request.tools.iter().map(|t| t.name.clone()).collect()
        } else {
            Arc::from([])
        };
        let model: Arc<str> = Arc::from(request.model);
        let retry = Retrying {
            policy: inner.config.retry.clone(),
            target: inner.chat_url.clone(),
            max_sleep: None,
        };
        let attempt_cancel = cancel.clone();
        retrying(retry, cancel, move || {
            // Refused in an earlier attempt: the plain body from now on.
            let refused = (extras.effort && inner.effort_refused.load(Ordering::Relaxed))
                || (extras.call_grammar && !inner.call_grammar.load(Ordering::Relaxed));
            let (body, without) = match &without {
                Some(w) if refused => (w.clone(), None),
                _ => (body.clone(), without.clone()),
            };
            Ok(Box::pin(extras_fallback(
                inner.clone(),
                (body, extras),
                without,
                (Arc::clone(&model), Arc::clone(&tools)),
                attempt_cancel.clone(),
            )) as AttemptStream)
        })
    }

    fn take_notices(&self) -> Vec<String> {
        self.inner
            .notices
            .lock()
            .map(|mut n| std::mem::take(&mut *n))
            .unwrap_or_default()
    }
}

/// One attempt; when the server refuses what `extras` added (HTTP 400 naming
/// `reasoning_effort`; any 400 to a body with a call grammar), that is left out from now on
/// (the user is told once) and the body without it is sent at once.
fn extras_fallback(
    inner: Arc<Inner>,
    (body, extras): (Body, BodyExtras),
    without: Option<Body>,
    (model, tools): (Arc<str>, Arc<[String]>),
    cancel: CancellationToken,
) -> impl futures::Stream<Item = Result<ProviderEvent, AttemptError>> + Send + 'static {
    use futures::StreamExt;
    let translator = move || ChunkTranslator::new(&model, tools.to_vec());
    async_stream::stream! {
        let mut first = Box::pin(attempt(inner.clone(), body, translator(), cancel.clone()));
        let mut produced = false;
        while let Some(item) = first.next().await {
            match item {
                Err(AttemptError::Http { status: 400, message, .. })
                    if !produced
                        && let Some(without) = without.clone()
                        && let Some(what) = refused_extra(&inner, extras, &message) =>
                {
                    if let Ok(mut notices) = inner.notices.lock() {
                        notices.push(format!(
                            "the server at {} does not take {what} ({}); it is left out of its requests",
                            inner.config.base_url,
                            message.chars().take(160).collect::<String>()
                        ));
                    }
                    let mut again = Box::pin(attempt(inner.clone(), without, translator(), cancel));
                    while let Some(item) = again.next().await {
                        yield item;
                    }
                    return;
                }
                item => {
                    produced = true;
                    yield item;
                }
            }
        }
    }
}

/// Which of `extras` a 400 answer with `message` refuses, now marked refused: the effort when
/// the message names it (the user's `--effort`), else the call grammar when the body had one.
fn refused_extra(inner: &Inner, extras: BodyExtras, message: &str) -> Option<&'static str> {
    if extras.effort && refuses_effort(message) {
        inner.effort_refused.store(true, Ordering::Relaxed);
        return Some("reasoning_effort (--effort)");
    }
    if extras.call_grammar {
        inner.call_grammar.store(false, Ordering::Relaxed);
        return Some("a response_format for forced tool calls");
    }
    None
}

/// Whether a 400 answer's message is about the `reasoning_effort` field (an unknown field, an
/// unsupported parameter, a value the model does not take).
fn refuses_effort(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("reasoning_effort")
        || m.contains("reasoning effort")
        || m.contains("reasoning.effort")
}

/// One HTTP attempt: send, check the status, translate the chunks until `[DONE]`.
fn attempt(
    inner: Arc<Inner>,
    body: Body,
    translator: ChunkTranslator,
    cancel: CancellationToken,
) -> impl futures::Stream<Item = Result<ProviderEvent, AttemptError>> + Send + 'static {
    let request = match &inner.chat_parsed {
        Some(url) => inner.client.post(url.clone()),
        None => inner.client.post(&inner.chat_url),
    };
    let request = request
        .headers(inner.headers.clone())
        .header(reqwest::header::CONTENT_LENGTH, body.len)
        .body(body.to_reqwest());
    let handler = ChatSse {
        translator,
        acc: StreamAccumulator::new(),
        events: Vec::new(),
    };
    sse_attempt(request, inner.config.idle_timeout, cancel, handler)
}

/// Chat-completion chunks, translated and assembled.
struct ChatSse {
    translator: ChunkTranslator,
    acc: StreamAccumulator,
    /// Translated events not yet applied.
    events: Vec<StreamEvent>,
}

impl ChatSse {
    /// Apply the translated events; `Done` once the message is complete.
    fn apply(&mut self, out: &mut Vec<ProviderEvent>) -> Result<Flow, AttemptError> {
        for event in self.events.drain(..) {
            if apply_event(&mut self.acc, event, out)? {
                return Ok(Flow::Done);
            }
        }
        Ok(Flow::Continue)
    }
}

impl SseHandler for ChatSse {
    fn event(
        &mut self,
        raw: &SseEvent,
        at_eof: bool,
        out: &mut Vec<ProviderEvent>,
    ) -> Result<Flow, AttemptError> {
        let data = raw.data.trim();
        if data.is_empty() {
            return Ok(Flow::Continue);
        }
        if data == "[DONE]" {
            self.translator.end(&mut self.events);
        } else {
            let chunk: serde_json::Value = match serde_json::from_str(data) {
                Ok(v) => v,
                // Cut-off data at EOF is a dropped connection, not a malformed stream.
                Err(_) if at_eof => return Ok(Flow::Cut),
                Err(e) => {
                    let excerpt: String = data.chars().take(120).collect();
                    return Err(AttemptError::Stream(StreamError::Malformed(format!(
                        "chat completion chunk: {e}; data: {excerpt}"
                    ))));
                }
            };
            self.translator.chunk(&chunk, &mut self.events).map_err(
                |ChunkError { kind, message }| AttemptError::ErrorEvent { kind, message },
            )?;
        }
        self.apply(out)
    }

    /// Some servers end the body after the finish reason without `[DONE]`.
    fn eof(&mut self, out: &mut Vec<ProviderEvent>) -> Result<bool, AttemptError> {
        if !self.translator.finished() || self.translator.ended() {
            return Ok(false);
        }
        self.translator.end(&mut self.events);
        Ok(matches!(self.apply(out)?, Flow::Done))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_are_normalized() {
        assert_eq!(
            normalize_base_url("http://localhost:11434").unwrap(),
            "http://localhost:11434/v1"
        );
        assert_eq!(
            normalize_base_url("http://localhost:11434/v1/").unwrap(),
            "http://localhost:11434/v1"
        );
        assert_eq!(
            normalize_base_url("https://openrouter.ai/api/v1/chat/completions").unwrap(),
            "https://openrouter.ai/api/v1"
        );
        assert!(normalize_base_url("localhost:8080").is_err());
    }

    #[test]
    fn presets_by_name() {
        assert_eq!(
            preset("llama.cpp").map(|p| p.base_url),
            Some("http://127.0.0.1:8080/v1")
        );
        assert_eq!(preset("LM-Studio").map(|p| p.name), Some("lmstudio"));
        assert!(preset("ollama").is_some_and(|p| p.local));
        assert!(preset("nope").is_none());
    }

    #[test]
    fn keys_come_from_the_preset_variable_then_openai() {
        let or = preset("openrouter").unwrap();
        let cfg = OpenAiConfig::from_lookup(or, |k| match k {
            "OPENROUTER_API_KEY" => Some("sk-or-x".into()),
            "OPENAI_API_KEY" => Some("sk-oa".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(
            cfg.credential.map(|c| c.source_name()),
            Some("OPENROUTER_API_KEY")
        );
        let local = OpenAiConfig::from_lookup(preset("ollama").unwrap(), |_| None).unwrap();
        assert!(local.credential.is_none());
        assert_eq!(local.base_url, "http://127.0.0.1:11434/v1");
    }
}
