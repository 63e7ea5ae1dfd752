//! Model providers for skiff: the [`Provider`] trait, the Anthropic Messages API client with SSE
//! streaming ([`AnthropicProvider`]), Claude on Amazon Bedrock, Google Vertex AI and Microsoft
//! Foundry ([`cloud::CloudProvider`]), OpenAI-compatible chat completions ([`OpenAiProvider`]),
//! the stream accumulator and the retry policy.

mod accumulator;
mod anthropic;
mod attempt;
pub mod cloud;
mod credential;
mod error;
mod http;
mod http_errors;
pub mod openai;
mod overflow;
mod pricing;
mod provider;
mod reasoning;
pub mod repetition;
mod retry;
mod scripted;
pub mod sse;
mod text_call_filter;

pub use accumulator::{StreamAccumulator, StreamError};
pub use anthropic::{
    ANTHROPIC_VERSION, AnthropicConfig, AnthropicProvider, ConfigError, DEFAULT_BASE_URL,
};
pub use credential::Credential;
pub use error::LlmError;
pub use http::install_crypto_provider;
pub use openai::{OpenAiConfig, OpenAiProvider};
pub use overflow::ContextOverflow;
pub use pricing::{
    DEFAULT_CONTEXT_WINDOW, ModelInfo, SCRIPTED_MODEL, ServedModel, cost_at, cost_usd,
    custom_price, known_models, model_info, resolve_alias,
};
pub use provider::{EventStream, Provider, ProviderEvent, RetryNotice, complete};
pub use reasoning::{ReasoningSupport, reasoning_support};
pub use retry::RetryPolicy;
pub use scripted::{ScriptError, ScriptedProvider};
pub use tokio_util::sync::CancellationToken;
