//! A server's context-size error ends no run by itself: the window it reveals (or, when it
//! says none, the size of the rejected request) is remembered, the history is made to fit —
//! compacted, else trimmed, by [`crate::context::prepare`] under the new limits — and the request
//! is sent again, once. A second context-size error in a row ends the run.

use skiff_llm::LlmError;

use crate::core::Core;
use crate::frames::EventSink;

/// Whether the last request was already a retry after a context-size error.
#[derive(Debug, Default)]
pub(crate) struct OverflowRetry {
    retried: bool,
}

impl OverflowRetry {
    /// A request went through: the next context-size error may be retried again.
    pub(crate) fn succeeded(&mut self) {
        self.retried = false;
    }

    /// After `error`: when it is a context-size error and the request was not already a retry,
    /// make the history fit and return true (send again); else false (the run ends on it).
    pub(crate) async fn recover(
        &mut self,
        core: &mut Core,
        error: &LlmError,
        sink: &EventSink,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> bool {
        let Some(overflow) = error.context_overflow() else {
            return false;
        };
        if std::mem::replace(&mut self.retried, true) {
            return false;
        }
        let fixed = core.template.fixed_tokens();
        let estimate = core.conversation.next_request_tokens(fixed);
        // The server's window, else a guess below what was just refused.
        let window = overflow
            .window
            .unwrap_or_else(|| estimate.saturating_mul(3) / 4);
        if window > 0 {
            core.conversation.cap_window(window);
        }
        // What the request really weighed, so the limits below see the true size (a server
        // counts with its own tokenizer; skiff's estimate may be low).
        let sent = overflow
            .prompt_tokens
            .unwrap_or(0)
            .max(estimate)
            .max(window.saturating_add(1));
        core.conversation.note_request_usage(sent);
        sink.notice(
            "context",
            "warning",
            format!(
                "the server refused the request as too long for the model's context window \
                 ({}); the history is made to fit it and the request sent again",
                match overflow.window {
                    Some(w) => format!("{w} tokens"),
                    None => "size not given".to_owned(),
                }
            ),
        );
        let (conv, mut env) = core.context_parts(sink, cancel);
        crate::context::prepare(conv, &mut env).await;
        !cancel.is_cancelled()
    }
}
