//! Token accounting: the input size of the next request, known before it is sent.
//!
//! The API reports the input tokens of every call (`input_tokens` + cache reads + cache writes);
//! [`crate::Conversation`] stores that figure with the history length it covered. The
//! next request's size is that figure plus an estimate of the messages added since. With no
//! reported figure (the first call, a resumed session, or right after compaction or trimming)
//! everything is estimated: the system prompt, the tool definitions and the whole history.
//!
//! The heuristic: [`BYTES_PER_TOKEN`] (3.5) bytes of text or JSON per token, rounded up, plus a
//! small per-block overhead for the block's type, ids and JSON punctuation; a fixed
//! [`IMAGE_TOKENS`] (1,600) per image whatever its size (an image of about 1.15 megapixels, the
//! API's own cap before downscaling). 3.5 bytes per token is slightly pessimistic for English
//! prose (≈4) and about right for code and JSON, so estimates err on the side of compacting a
//! little early rather than overflowing.

use skiff_protocol::{
    ContentBlock, Message, MessageContent, SystemBlock, ToolDefinition, ToolResultContent,
};

use skiff_llm::ServedModel;

use crate::config::AgentConfig;

/// Bytes of text or JSON per token in the estimate.
pub const BYTES_PER_TOKEN: f64 = 3.5;

/// Tokens counted for one image, whatever its size.
pub const IMAGE_TOKENS: u64 = 1_600;

/// Bytes counted for a content block's framing (type tag, ids, punctuation).
const BLOCK_OVERHEAD_BYTES: usize = 16;

/// Bytes counted for a message's framing (role, content array).
const MESSAGE_OVERHEAD_BYTES: usize = 8;

/// Tokens of `bytes` bytes of text or JSON.
pub fn estimate_bytes(bytes: usize) -> u64 {
    (bytes as f64 / BYTES_PER_TOKEN).ceil() as u64
}

/// (bytes of text/JSON, number of images) of one block.
fn block_size(block: &ContentBlock) -> (usize, u64) {
    let framed = |n: usize| (n + BLOCK_OVERHEAD_BYTES, 0);
    match block {
        ContentBlock::Text(t) => framed(t.text.len()),
        ContentBlock::Image(_) => (BLOCK_OVERHEAD_BYTES, 1),
        ContentBlock::ToolUse(t) => framed(t.id.len() + t.name.len() + json_len(&t.input)),
        ContentBlock::ToolResult(r) => {
            let (bytes, images) = match &r.content {
                None => (0, 0),
                Some(ToolResultContent::Text(t)) => (t.len(), 0),
                Some(ToolResultContent::Blocks(blocks)) => sum_sizes(blocks),
            };
            (bytes + r.tool_use_id.len() + BLOCK_OVERHEAD_BYTES, images)
        }
        // Earlier turns' thinking is mostly dropped by the API, but counting it errs safe.
        ContentBlock::Thinking(t) => framed(t.thinking.len()),
        ContentBlock::RedactedThinking(r) => framed(r.data.len()),
        ContentBlock::Unknown(v) => framed(json_len(v)),
    }
}

fn sum_sizes(blocks: &[ContentBlock]) -> (usize, u64) {
    blocks
        .iter()
        .map(block_size)
        .fold((0, 0), |(b, i), (bb, ii)| (b + bb, i + ii))
}

fn json_len(v: &serde_json::Value) -> usize {
    serde_json::to_string(v).map_or(0, |s| s.len())
}

/// Estimated tokens of one content block.
pub fn estimate_block(block: &ContentBlock) -> u64 {
    let (bytes, images) = block_size(block);
    estimate_bytes(bytes) + images * IMAGE_TOKENS
}

/// Estimated tokens of one message.
pub fn estimate_message(message: &Message) -> u64 {
    let (bytes, images) = match &message.content {
        MessageContent::Text(t) => (t.len() + BLOCK_OVERHEAD_BYTES, 0),
        MessageContent::Blocks(blocks) => sum_sizes(blocks),
    };
    estimate_bytes(bytes + MESSAGE_OVERHEAD_BYTES) + images * IMAGE_TOKENS
}

/// Estimated tokens of a list of messages.
pub fn estimate_messages(messages: &[Message]) -> u64 {
    messages.iter().map(estimate_message).sum()
}

/// Estimated tokens of the parts every request repeats: the system prompt and the tool
/// definitions (as serialized JSON).
pub fn estimate_fixed(system: &[SystemBlock], tools: &[ToolDefinition]) -> u64 {
    estimate_fixed_sized(system, tools.iter().map(json_size).sum())
}

/// [`estimate_fixed`] with the tools' serialized size already known (`tool_bytes`).
pub fn estimate_fixed_sized(system: &[SystemBlock], tool_bytes: usize) -> u64 {
    let system: usize = system.iter().map(|b| b.text.len() + 32).sum();
    estimate_bytes(system + tool_bytes)
}

/// The size of `value` serialized as JSON, in bytes (0 if it cannot be serialized).
pub fn json_size<T: serde::Serialize + ?Sized>(value: &T) -> usize {
    serde_json::to_string(value).map_or(0, |s| s.len())
}

/// The model's context window: `config.context_window` when set, else what the server says
/// (`served`, [`skiff_llm::Provider::served_model`]), else the model table's (200,000 for
/// unknown models).
pub fn context_window(config: &AgentConfig, served: Option<&ServedModel>) -> u64 {
    config
        .context_window
        .or_else(|| served.and_then(|s| s.context_window))
        .unwrap_or_else(|| {
            skiff_llm::model_info(&config.model)
                .map_or(skiff_llm::DEFAULT_CONTEXT_WINDOW, |i| i.context_window)
        })
}

/// The max output tokens of a request: `config.max_tokens`, capped by what the server allows
/// when it says.
pub fn max_output_tokens(config: &AgentConfig, served: Option<&ServedModel>) -> u32 {
    served
        .and_then(|s| s.max_output_tokens)
        .map_or(config.max_tokens, |cap| {
            config
                .max_tokens
                .min(u32::try_from(cap).unwrap_or(u32::MAX))
        })
}

/// The output tokens kept free in the window: the max output tokens, but at most a quarter of
/// the window, so a small window is not halved by the default 8,192 (16k keeps 12k for input).
pub fn output_reserve(config: &AgentConfig, served: Option<&ServedModel>, window: u64) -> u64 {
    u64::from(max_output_tokens(config, served)).min(window / 4)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use skiff_protocol::{ImageBlock, ImageSource, Role, ToolResultBlock, ToolUseBlock};

    #[test]
    fn text_is_bytes_over_three_and_a_half() {
        assert_eq!(estimate_bytes(0), 0);
        assert_eq!(estimate_bytes(7), 2);
        assert_eq!(estimate_bytes(8), 3);
        let m = Message::user_text("x".repeat(35_000));
        let t = estimate_message(&m);
        assert!((10_000..10_020).contains(&t), "{t}");
    }

    #[test]
    fn images_cost_a_fixed_amount_whatever_their_size() {
        let img = ContentBlock::Image(ImageBlock {
            source: ImageSource::Base64 {
                media_type: "image/png".into(),
                data: "A".repeat(1_000_000),
            },
            cache_control: None,
        });
        let t = estimate_block(&img);
        assert!((IMAGE_TOKENS..IMAGE_TOKENS + 10).contains(&t), "{t}");
        let result = ContentBlock::ToolResult(ToolResultBlock {
            tool_use_id: "t1".into(),
            content: Some(ToolResultContent::Blocks(vec![
                img.clone(),
                ContentBlock::text("caption"),
            ])),
            is_error: None,
            cache_control: None,
        });
        let t = estimate_block(&result);
        assert!((IMAGE_TOKENS..IMAGE_TOKENS + 30).contains(&t), "{t}");
    }

    #[test]
    fn tool_use_counts_its_json_input() {
        let b = ContentBlock::ToolUse(ToolUseBlock {
            id: "toolu_1".into(),
            name: "Bash".into(),
            input: json!({"command": "x".repeat(3_500)}),
            cache_control: None,
        });
        let t = estimate_block(&b);
        assert!((1_000..1_020).contains(&t), "{t}");
        let m = Message::blocks(Role::Assistant, vec![b]);
        assert!(estimate_message(&m) >= t);
    }

    #[test]
    fn the_window_and_output_cap_come_from_settings_then_the_server_then_the_table() {
        let served = ServedModel {
            context_window: Some(32_768),
            max_output_tokens: Some(4_096),
            ..ServedModel::default()
        };
        let mut config = AgentConfig {
            model: "qwen2.5-coder:7b".into(),
            max_tokens: 8_192,
            ..AgentConfig::default()
        };
        assert_eq!(
            context_window(&config, None),
            skiff_llm::DEFAULT_CONTEXT_WINDOW
        );
        assert_eq!(context_window(&config, Some(&served)), 32_768);
        assert_eq!(max_output_tokens(&config, None), 8_192);
        assert_eq!(max_output_tokens(&config, Some(&served)), 4_096);
        config.context_window = Some(16_000);
        assert_eq!(context_window(&config, Some(&served)), 16_000);
        config.max_tokens = 1_000;
        assert_eq!(max_output_tokens(&config, Some(&served)), 1_000);
    }

    #[test]
    fn the_output_reserve_scales_with_a_small_window() {
        let config = AgentConfig {
            max_tokens: 8_192,
            ..AgentConfig::default()
        };
        assert_eq!(output_reserve(&config, None, 16_384), 4_096);
        assert_eq!(output_reserve(&config, None, 8_192), 2_048);
        assert_eq!(output_reserve(&config, None, 200_000), 8_192);
    }
}
