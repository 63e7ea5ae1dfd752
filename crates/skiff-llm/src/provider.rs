//! The `Provider` trait: one streaming model call, with the events the caller sees while it runs.

use std::pin::Pin;
use std::time::Duration;

use futures::{Stream, StreamExt};
use skiff_protocol::{ContentBlock, MessageEncoding, MessageResponse, RequestView, StreamEvent};
use tokio_util::sync::CancellationToken;

use crate::{LlmError, ServedModel};

/// What a model call reports while it runs. The last item of a successful call is
/// [`ProviderEvent::Done`].
#[derive(Debug, Clone, PartialEq)]
pub enum ProviderEvent {
    /// A raw stream event, passed on as soon as it is parsed (pings included).
    Stream(StreamEvent),
    /// A content block is complete (tool input JSON joined and parsed).
    BlockComplete {
        /// Block index.
        index: usize,
        /// The assembled block.
        block: ContentBlock,
    },
    /// The attempt failed and the call will be retried after `wait`.
    Retry(RetryNotice),
    /// The assembled message.
    Done(MessageResponse),
}

/// A retry announcement.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryNotice {
    /// Which retry this is (1 = first retry).
    pub attempt: u32,
    /// Configured maximum number of retries.
    pub max_retries: u32,
    /// How long the provider waits before retrying.
    pub wait: Duration,
    /// Why the attempt failed.
    pub cause: String,
    /// HTTP status of the failure, when there was one.
    pub status: Option<u16>,
    /// Events of the failed attempt were already delivered: the caller must discard that
    /// partial output, because the retried stream starts again from scratch.
    pub discard_partial: bool,
}

/// The stream of a model call.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<ProviderEvent, LlmError>> + Send>>;

/// A model backend.
pub trait Provider: Send + Sync {
    /// Short name for logs and `system/init` (`anthropic`, `openai`, `script`).
    fn name(&self) -> &str;

    /// Start one model call. The request is borrowed: a provider serializes (or converts) what it
    /// needs before returning, so a long conversation is never copied. Nothing is sent until the
    /// stream is polled; dropping the stream or cancelling `cancel` aborts the call at once (no
    /// task is left behind). An owned [`skiff_protocol::MessagesRequest`] is passed as
    /// `&request.view()`.
    fn stream(&self, request: &RequestView<'_>, cancel: CancellationToken) -> EventStream;

    /// The wire format its requests write the messages in: the caller keeps the conversation's
    /// serialized prefix ([`RequestView::prefix`]) in it. A prefix in another format is not
    /// used (every message is serialized again: correct, only slower).
    fn history_encoding(&self) -> MessageEncoding {
        MessageEncoding::MESSAGES
    }

    /// What the server says about `model` (context window, max output tokens, prices), once
    /// known. Looked up in the background, never delaying a call, so `None` until the answer
    /// came (and for servers that say nothing). The user's settings go over it.
    fn served_model(&self, model: &str) -> Option<ServedModel> {
        let _ = model;
        None
    }

    /// Whether the server runs on this machine or the local network (a local preset, a
    /// loopback or private address): its models cost nothing, so an unknown price is no news.
    fn is_local(&self) -> bool {
        false
    }

    /// Whether the server behind this provider runs Anthropic's server-side web search
    /// (`web_search_20250305`): the Anthropic API and the clouds that offer it. The `WebSearch`
    /// tool is offered only then. No by default.
    fn server_web_search(&self) -> bool {
        false
    }

    /// The session is starting with `model`: begin what can be done ahead of the first call
    /// (the server metadata lookup) in the background. Never blocks.
    fn prepare(&self, model: &str) {
        let _ = model;
    }

    /// What the user should hear about how calls are sent since the last time this was asked
    /// (an option the server refused and that is left out from now on). Empty by default.
    fn take_notices(&self) -> Vec<String> {
        Vec::new()
    }
}

/// Drive a call to completion and return the assembled message, ignoring intermediate events.
pub async fn complete(mut stream: EventStream) -> Result<MessageResponse, LlmError> {
    while let Some(item) = stream.next().await {
        if let ProviderEvent::Done(msg) = item? {
            return Ok(msg);
        }
    }
    Err(LlmError::Stream(crate::StreamError::Truncated(
        "provider stream ended without a message".into(),
    )))
}
