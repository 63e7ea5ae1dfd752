//! Context-size errors: a server saying that a request did not fit the model's context window,
//! in each server's words — llama.cpp's `exceed_context_size_error` (with `n_ctx` and
//! `n_prompt_tokens`), the Anthropic API's `prompt is too long: N tokens > M maximum`, OpenAI's
//! and vLLM's `maximum context length is M tokens`, and the looser phrasings of other servers —
//! with the figures they give, so the caller can make the history fit and send again.

use crate::LlmError;

/// What a server said when a request was too long for the model's context window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ContextOverflow {
    /// The model's context window, when the server said.
    pub window: Option<u64>,
    /// The request's input tokens as the server counted them, when it said.
    pub prompt_tokens: Option<u64>,
}

impl LlmError {
    /// The context-size error this is, if it is one (a 400/413 or an error event whose type or
    /// message says the request does not fit the context window).
    pub fn context_overflow(&self) -> Option<ContextOverflow> {
        let (kind, message) = match self {
            Self::InvalidRequest {
                status: 400 | 413 | 422,
                kind,
                message,
            } => (kind.as_str(), message.as_str()),
            Self::StreamErrorEvent { kind, message, .. } => (kind.as_str(), message.as_str()),
            _ => return None,
        };
        let lower = message.to_ascii_lowercase();
        let said = kind == "exceed_context_size_error"
            || kind == "context_length_exceeded"
            || [
                "prompt is too long",
                "maximum context length",
                "context length",
                "context window",
                "context size",
                "exceeds the available context",
                "input is too long",
                "too many input tokens",
                "reduce the length of the messages",
            ]
            .iter()
            .any(|p| lower.contains(p));
        if !said {
            return None;
        }
        let mut found = ContextOverflow {
            window: number_after(&lower, "n_ctx")
                .or_else(|| number_after(&lower, "maximum context length is"))
                .or_else(|| number_after(&lower, "context length of"))
                .or_else(|| number_between(&lower, ">", "maximum")),
            prompt_tokens: number_after(&lower, "n_prompt_tokens")
                .or_else(|| number_after(&lower, "prompt is too long:"))
                .or_else(|| number_after(&lower, "your messages resulted in"))
                .or_else(|| number_between(&lower, "(", "in the messages")),
        };
        if found.window.is_some_and(|w| w == 0) {
            found.window = None;
        }
        Some(found)
    }
}

/// The first whole number after the first `marker` (skipping spaces, `=`, `:`).
fn number_after(text: &str, marker: &str) -> Option<u64> {
    let start = text.find(marker)? + marker.len();
    let rest = text[start..].trim_start_matches([' ', '=', ':', '"']);
    let digits: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .filter(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// A whole number standing alone between `before` and `after` (`> 200000 maximum`).
fn number_between(text: &str, before: &str, after: &str) -> Option<u64> {
    let end = text.find(after)?;
    let start = text[..end].rfind(before)? + before.len();
    let words: Vec<&str> = text[start..end].split_whitespace().collect();
    match words.as_slice() {
        [n] | [n, "tokens"] => n.parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn invalid(kind: &str, message: &str) -> LlmError {
        LlmError::InvalidRequest {
            status: 400,
            kind: kind.into(),
            message: message.into(),
        }
    }

    #[test]
    fn each_servers_words_and_figures() {
        let llama = invalid(
            "exceed_context_size_error",
            "the request exceeds the available context size, try increasing it (n_prompt_tokens \
             17321, n_ctx 16384)",
        );
        assert_eq!(
            llama.context_overflow(),
            Some(ContextOverflow {
                window: Some(16_384),
                prompt_tokens: Some(17_321)
            })
        );
        let anthropic = invalid(
            "invalid_request_error",
            "prompt is too long: 208310 tokens > 200000 maximum",
        );
        assert_eq!(
            anthropic.context_overflow(),
            Some(ContextOverflow {
                window: Some(200_000),
                prompt_tokens: Some(208_310)
            })
        );
        let openai = invalid(
            "http_error",
            "This model's maximum context length is 16385 tokens. However, your messages \
             resulted in 17000 tokens. Please reduce the length of the messages.",
        );
        assert_eq!(
            openai.context_overflow(),
            Some(ContextOverflow {
                window: Some(16_385),
                prompt_tokens: Some(17_000)
            })
        );
        let vllm = invalid(
            "BadRequestError",
            "This model's maximum context length is 2048 tokens. However, you requested 2100 \
             tokens (1000 in the messages, 1100 in the completion).",
        );
        assert_eq!(
            vllm.context_overflow(),
            Some(ContextOverflow {
                window: Some(2_048),
                prompt_tokens: Some(1_000)
            })
        );
        let vague = invalid("http_error", "Input is too long for this model");
        assert_eq!(vague.context_overflow(), Some(ContextOverflow::default()));
    }

    #[test]
    fn other_errors_are_not_overflows() {
        assert_eq!(
            invalid("invalid_request_error", "bad body").context_overflow(),
            None
        );
        let server = LlmError::Server {
            status: 500,
            retries: 0,
            message: "context length".into(),
        };
        assert_eq!(server.context_overflow(), None);
    }
}
