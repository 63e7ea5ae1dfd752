//! What an OpenAI-compatible server says about a model — context window, max output tokens,
//! prices — from wherever that kind of server says it:
//!
//! - every server: `GET /v1/models` (OpenRouter: `context_length`,
//!   `top_provider.max_completion_tokens`, `pricing.{prompt,completion}` in USD per token;
//!   vLLM: `max_model_len`);
//! - llama.cpp: `GET /props` → `default_generation_settings.n_ctx`;
//! - Ollama: `POST /api/show {"model": …}` → `num_ctx` in `parameters`, else
//!   `model_info["<arch>.context_length"]`;
//! - LM Studio: `GET /api/v0/models` → `loaded_context_length` / `max_context_length`.
//!
//! The lookup runs in the background (the provider starts it with the first call for a model);
//! it never fails a run: a missing field, an error or a timeout only leaves a figure unknown
//! (logged at debug). The Anthropic-style endpoints of the same servers (llama.cpp's, Ollama's,
//! LM Studio's `/v1/messages`) are asked the same way ([`crate::AnthropicProvider`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::header::HeaderMap;
use serde_json::Value;

use crate::ServedModel;

/// How long one metadata request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);

/// What kind of server it is, for where it says things beyond `/v1/models`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ServerKind {
    /// `/v1/models` only.
    Generic,
    /// llama.cpp's `llama-server`: `/props`.
    LlamaCpp,
    /// Ollama: `/api/show`.
    Ollama,
    /// LM Studio: `/api/v0/models`.
    LmStudio,
    /// OpenAI's own API: its model list says nothing of use, so nothing is asked.
    OpenAi,
    /// A server on this machine or network whose kind is not known (another port): every
    /// kind's place is asked.
    Probe,
}

impl ServerKind {
    /// Whether it is a server of the kinds run on the user's machine (or one not known, on a
    /// local address).
    pub(crate) fn is_local(self) -> bool {
        matches!(
            self,
            Self::LlamaCpp | Self::Ollama | Self::LmStudio | Self::Probe
        )
    }

    /// The kind named by the preset, else guessed from the base URL (the servers' default
    /// ports).
    pub(crate) fn of(preset: Option<&str>, base_url: &str) -> Self {
        match preset {
            Some("ollama") => return Self::Ollama,
            Some("llamacpp") => return Self::LlamaCpp,
            Some("lmstudio") => return Self::LmStudio,
            Some("vllm" | "openrouter") => return Self::Generic,
            _ => {}
        }
        let Ok(url) = reqwest::Url::parse(base_url) else {
            return Self::Generic;
        };
        if url.host_str() == Some("api.openai.com") {
            return Self::OpenAi;
        }
        match url.port() {
            Some(11434) => Self::Ollama,
            Some(8080) => Self::LlamaCpp,
            Some(1234) => Self::LmStudio,
            _ if crate::http::is_local_url(base_url) => Self::Probe,
            _ => Self::Generic,
        }
    }
}

/// Where and how to ask; cheap to clone into a background task.
#[derive(Debug, Clone)]
pub(crate) struct MetadataSource {
    pub(crate) client: reqwest::Client,
    /// Request headers (the key, custom headers), without a content type.
    pub(crate) headers: HeaderMap,
    /// `…/v1`.
    pub(crate) base_url: String,
    pub(crate) kind: ServerKind,
}

impl MetadataSource {
    /// Everything the server says about `model` (possibly nothing).
    pub(crate) async fn lookup(&self, model: &str) -> ServedModel {
        if self.kind == ServerKind::OpenAi {
            return ServedModel::default();
        }
        let listed = self.ask_model_list(model);
        let specific = async {
            match self.kind {
                ServerKind::LlamaCpp => self.ask_props().await,
                ServerKind::Ollama => self.ask_ollama_show(model).await,
                ServerKind::LmStudio => self.ask_lmstudio(model).await,
                ServerKind::Probe => {
                    let (props, show, lmstudio) = futures::join!(
                        self.ask_props(),
                        self.ask_ollama_show(model),
                        self.ask_lmstudio(model)
                    );
                    props.or(show).or(lmstudio)
                }
                ServerKind::Generic | ServerKind::OpenAi => ServedModel::default(),
            }
        };
        let (listed, specific) = futures::join!(listed, specific);
        // The server-specific figure is the one in force (llama.cpp's n_ctx, Ollama's num_ctx).
        let found = specific.or(listed);
        tracing::debug!(model, ?found, "server model metadata");
        found
    }

    /// The server's root (the base URL without `/v1`).
    fn root(&self) -> &str {
        self.base_url
            .strip_suffix("/v1")
            .unwrap_or(&self.base_url)
            .trim_end_matches('/')
    }

    async fn get(&self, url: &str) -> Option<Value> {
        let request = self.client.get(url).headers(self.headers.clone());
        self.send(url, request).await
    }

    async fn send(&self, url: &str, request: reqwest::RequestBuilder) -> Option<Value> {
        let resp = match request.timeout(REQUEST_TIMEOUT).send().await {
            Ok(r) => r,
            Err(e) => {
                tracing::debug!(url, error = %e, "model metadata request failed");
                return None;
            }
        };
        if !resp.status().is_success() {
            tracing::debug!(url, status = resp.status().as_u16(), "no model metadata");
            return None;
        }
        match resp.json::<Value>().await {
            Ok(v) => Some(v),
            Err(e) => {
                tracing::debug!(url, error = %e, "model metadata is not JSON");
                None
            }
        }
    }

    async fn ask_model_list(&self, model: &str) -> ServedModel {
        let url = format!("{}/models", self.base_url);
        self.get(&url)
            .await
            .and_then(|v| find_model(&v, model).map(listed_model))
            .unwrap_or_default()
    }

    async fn ask_props(&self) -> ServedModel {
        let url = format!("{}/props", self.root());
        let Some(v) = self.get(&url).await else {
            return ServedModel::default();
        };
        ServedModel {
            context_window: positive(&v, &["default_generation_settings", "n_ctx"])
                .or_else(|| positive(&v, &["n_ctx"])),
            ..ServedModel::default()
        }
    }

    async fn ask_ollama_show(&self, model: &str) -> ServedModel {
        let url = format!("{}/api/show", self.root());
        let request = self
            .client
            .post(&url)
            .headers(self.headers.clone())
            .json(&serde_json::json!({ "model": model }));
        let Some(v) = self.send(&url, request).await else {
            return ServedModel::default();
        };
        ServedModel {
            context_window: ollama_context(&v),
            ..ServedModel::default()
        }
    }

    async fn ask_lmstudio(&self, model: &str) -> ServedModel {
        let url = format!("{}/api/v0/models", self.root());
        let Some(entry) = self
            .get(&url)
            .await
            .and_then(|v| find_model(&v, model).cloned())
        else {
            return ServedModel::default();
        };
        ServedModel {
            context_window: positive(&entry, &["loaded_context_length"])
                .or_else(|| positive(&entry, &["max_context_length"])),
            ..ServedModel::default()
        }
    }
}

/// How long the background lookup waits before asking (see [`ServedCache::start`]).
const LOOKUP_DELAY: std::time::Duration = std::time::Duration::from_millis(10);

/// What servers said about each model asked about, shared by a provider's clones: absent = not
/// asked yet, `None` = asking, or it said nothing.
#[derive(Debug, Clone, Default)]
pub(crate) struct ServedCache(Arc<Mutex<HashMap<String, Option<ServedModel>>>>);

impl ServedCache {
    /// What the server said about `model`, once it answered.
    pub(crate) fn get(&self, model: &str) -> Option<ServedModel> {
        lock(&self.0).get(model).copied().flatten()
    }

    /// Ask `source` about `model` now and keep the answer.
    pub(crate) async fn fetch(&self, source: &MetadataSource, model: &str) -> Option<ServedModel> {
        let found = Some(source.lookup(model).await).filter(|m| !m.is_empty());
        lock(&self.0).insert(model.to_owned(), found);
        found
    }

    /// Start asking `source` about `model` in the background (beside the call that goes out
    /// now), unless that was done already; nothing without a tokio runtime.
    pub(crate) fn start(&self, source: impl FnOnce() -> MetadataSource, model: &str) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        {
            let mut served = lock(&self.0);
            if served.contains_key(model) {
                return;
            }
            served.insert(model.to_owned(), None);
        }
        let source = source();
        let cache = self.clone();
        let model = model.to_owned();
        runtime.spawn(async move {
            // After the call that goes out now: its request first on the wire (the four
            // lookups' connections used to go out ahead of it), and a session that ends at
            // once spends nothing on them. Only the next call needs the answer.
            tokio::time::sleep(LOOKUP_DELAY).await;
            cache.fetch(&source, &model).await;
        });
    }
}

/// The map's lock, even if a thread panicked holding it (its data stays valid).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The entry of `model` in a model list (`data` or `models`): the same id, else the same id
/// ignoring case, else the only entry (a local server serving one model under another name).
fn find_model<'a>(list: &'a Value, model: &str) -> Option<&'a Value> {
    let items = list
        .get("data")
        .or_else(|| list.get("models"))
        .and_then(Value::as_array)?;
    let id = |v: &'a Value| {
        v.get("id")
            .or_else(|| v.get("name"))
            .or_else(|| v.get("model"))
            .and_then(Value::as_str)
    };
    items
        .iter()
        .find(|v| id(v) == Some(model))
        .or_else(|| {
            items
                .iter()
                .find(|v| id(v).is_some_and(|i| i.eq_ignore_ascii_case(model)))
        })
        .or(match items.as_slice() {
            [only] => Some(only),
            _ => None,
        })
}

/// The figures of one model-list entry (OpenRouter, vLLM, LM Studio's and others' fields).
fn listed_model(v: &Value) -> ServedModel {
    let per_mtok = |key: &str| {
        let p = v.get("pricing")?.get(key)?;
        let per_token = match p {
            Value::String(s) => s.trim().parse::<f64>().ok()?,
            other => other.as_f64()?,
        };
        // OpenRouter marks variable prices (routers) with -1.
        (per_token.is_finite() && per_token >= 0.0).then_some(per_token * 1_000_000.0)
    };
    ServedModel {
        context_window: positive(v, &["context_length"])
            .or_else(|| positive(v, &["max_model_len"]))
            .or_else(|| positive(v, &["top_provider", "context_length"]))
            .or_else(|| positive(v, &["loaded_context_length"]))
            .or_else(|| positive(v, &["max_context_length"])),
        max_output_tokens: positive(v, &["top_provider", "max_completion_tokens"])
            .or_else(|| positive(v, &["max_completion_tokens"]))
            .or_else(|| positive(v, &["max_output_tokens"])),
        input_per_mtok: per_mtok("prompt"),
        output_per_mtok: per_mtok("completion"),
        cache_read_per_mtok: per_mtok("input_cache_read"),
        cache_write_per_mtok: per_mtok("input_cache_write"),
    }
}

/// Ollama's window: `num_ctx` when the model sets it (what the server uses), else the
/// architecture's `context_length` from `model_info`.
fn ollama_context(v: &Value) -> Option<u64> {
    let num_ctx = v
        .get("parameters")
        .and_then(Value::as_str)
        .and_then(|params| {
            params.lines().find_map(|line| {
                let mut words = line.split_whitespace();
                (words.next() == Some("num_ctx"))
                    .then(|| words.next()?.parse::<u64>().ok())
                    .flatten()
            })
        })
        .filter(|n| *n > 0);
    num_ctx.or_else(|| {
        let info = v.get("model_info")?;
        let arch = info.get("general.architecture").and_then(Value::as_str);
        arch.and_then(|a| positive(info, &[&format!("{a}.context_length")]))
            .or_else(|| {
                info.as_object()?
                    .iter()
                    .find(|(k, _)| k.ends_with(".context_length"))
                    .and_then(|(_, n)| n.as_u64())
                    .filter(|n| *n > 0)
            })
    })
}

/// A positive whole number at `path` (a number, or a string holding one).
fn positive(v: &Value, path: &[&str]) -> Option<u64> {
    let mut cur = v;
    for p in path {
        cur = cur.get(p)?;
    }
    match cur {
        Value::String(s) => s.trim().parse().ok(),
        other => other.as_u64(),
    }
    .filter(|n| *n > 0)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    #[test]
    fn the_kind_comes_from_the_preset_then_the_port() {
        assert_eq!(
            ServerKind::of(Some("ollama"), "http://10.0.0.2:9999/v1"),
            ServerKind::Ollama
        );
        assert_eq!(
            ServerKind::of(Some("openai"), "http://localhost:8080/v1"),
            ServerKind::LlamaCpp
        );
        assert_eq!(
            ServerKind::of(None, "http://127.0.0.1:11434/v1"),
            ServerKind::Ollama
        );
        assert_eq!(
            ServerKind::of(Some("openai"), "https://api.openai.com/v1"),
            ServerKind::OpenAi
        );
        assert_eq!(
            ServerKind::of(Some("openrouter"), "https://openrouter.ai/api/v1"),
            ServerKind::Generic
        );
    }

    #[test]
    fn openrouter_and_vllm_entries_give_their_figures() {
        let list = json!({"data": [
            {"id": "other/model", "context_length": 1},
            {"id": "qwen/qwen-2.5-coder-32b-instruct", "context_length": 32768,
             "top_provider": {"context_length": 32768, "max_completion_tokens": 16384},
             "pricing": {"prompt": "0.00000007", "completion": "0.00000016",
                         "input_cache_read": "0", "request": "0"}},
        ]});
        let m = listed_model(find_model(&list, "qwen/qwen-2.5-coder-32b-instruct").unwrap());
        assert_eq!(m.context_window, Some(32768));
        assert_eq!(m.max_output_tokens, Some(16384));
        assert!((m.input_per_mtok.unwrap() - 0.07).abs() < 1e-9);
        assert!((m.output_per_mtok.unwrap() - 0.16).abs() < 1e-9);
        assert_eq!(m.cache_read_per_mtok, Some(0.0));
        let price = m.price().unwrap();
        assert_eq!(price.cache_read_per_mtok, 0.0);

        let vllm = json!({"object": "list", "data": [
            {"id": "Qwen/Qwen2.5-7B", "object": "model", "max_model_len": 32768}]});
        let m = listed_model(find_model(&vllm, "qwen/qwen2.5-7b").unwrap());
        assert_eq!(m.context_window, Some(32768));
        assert!(m.price().is_none());
        // Several models, none of that name: nothing.
        assert!(find_model(&list, "nope").is_none());
        // Variable prices and junk are unknown, not errors.
        let auto = json!({"id": "openrouter/auto",
            "pricing": {"prompt": "-1", "completion": "x"}});
        assert!(listed_model(&auto).is_empty());
    }

    #[test]
    fn ollama_prefers_num_ctx_to_the_trained_length() {
        let show = json!({
            "parameters": "stop \"<|im_end|>\"\nnum_ctx                        8192",
            "model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768},
        });
        assert_eq!(ollama_context(&show), Some(8192));
        let show = json!({"model_info": {"general.architecture": "qwen2",
            "qwen2.context_length": 32768}});
        assert_eq!(ollama_context(&show), Some(32768));
        let show = json!({"model_info": {"llama.context_length": 4096}});
        assert_eq!(ollama_context(&show), Some(4096));
        assert_eq!(ollama_context(&json!({})), None);
    }
}
