//! MCP content (wire JSON) as content for the model: the items of a tool result or a prompt
//! message (text, images, audio, embedded resources, resource links), and the contents of a
//! resource read for an `@server:uri` mention.

use base64::Engine as _;
use serde_json::Value;
use skiff_protocol::{ContentBlock, ImageBlock, ImageSource};

/// Largest image (base64 characters) passed to the model; the API refuses more than 5 MB.
const MAX_IMAGE_BASE64: usize = 5 * 1024 * 1024;

/// Whether the model accepts images of this type.
pub(crate) fn is_api_image(mime: &str) -> bool {
    matches!(
        mime,
        "image/png" | "image/jpeg" | "image/gif" | "image/webp"
    )
}

/// An image block, when the model accepts this image.
pub(crate) fn image(data: &str, mime: &str) -> Option<ContentBlock> {
    (is_api_image(mime) && data.len() <= MAX_IMAGE_BASE64).then(|| {
        ContentBlock::Image(ImageBlock {
            source: ImageSource::Base64 {
                media_type: mime.to_owned(),
                data: data.to_owned(),
            },
            cache_control: None,
        })
    })
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// One content item of a tool result or prompt message: text and images as they are, the rest
/// described in text.
pub(crate) fn item(item: &Value) -> ContentBlock {
    match str_of(item, "type").unwrap_or("") {
        "text" => ContentBlock::text(str_of(item, "text").unwrap_or("")),
        "image" => {
            let data = str_of(item, "data").unwrap_or("");
            let mime = str_of(item, "mimeType");
            match mime.and_then(|m| image(data, m)) {
                Some(block) => block,
                None => ContentBlock::text(format!(
                    "[image of type {} not shown: the model accepts PNG, JPEG, GIF and WebP up to 5 MB]",
                    mime.unwrap_or("unknown")
                )),
            }
        }
        "audio" => ContentBlock::text(format!(
            "[audio ({}) not shown]",
            str_of(item, "mimeType").unwrap_or("audio")
        )),
        "resource" => {
            let r = item.get("resource").unwrap_or(&Value::Null);
            let uri = str_of(r, "uri").unwrap_or("");
            match str_of(r, "text") {
                Some(text) => ContentBlock::text(format!("[Resource from {uri}]\n{text}")),
                None => {
                    let mime = str_of(r, "mimeType").unwrap_or("application/octet-stream");
                    match str_of(r, "blob").and_then(|b| image(b, mime)) {
                        Some(block) => block,
                        None => ContentBlock::text(format!(
                            "[Binary resource {uri} ({mime}) not shown]"
                        )),
                    }
                }
            }
        }
        "resource_link" => {
            let uri = str_of(item, "uri").unwrap_or("");
            let name = str_of(item, "name").unwrap_or(uri);
            let mut text = format!("[Resource link: {name}] {uri}");
            if let Some(d) = str_of(item, "description") {
                text.push_str(&format!(" — {d}"));
            }
            ContentBlock::text(text)
        }
        other => ContentBlock::text(format!("[content of type {other:?} not shown]")),
    }
}

/// Most text one prompt brings, in characters (a server's prompt is cut past it).
pub(crate) const MAX_PROMPT_CHARS: usize = 200_000;

/// A `prompts/get` result (wire JSON) as content for the model: every message's content in
/// order, whatever its role (as Claude Code sends a prompt: one user turn); its text cut at
/// [`MAX_PROMPT_CHARS`] in all.
pub(crate) fn prompt_blocks(result: &Value) -> Vec<ContentBlock> {
    let empty = Vec::new();
    let messages = result
        .get("messages")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let mut blocks = Vec::new();
    for m in messages {
        match m.get("content") {
            Some(Value::Array(items)) => blocks.extend(items.iter().map(item)),
            Some(c) => blocks.push(item(c)),
            None => {}
        }
    }
    let mut left = MAX_PROMPT_CHARS;
    for b in &mut blocks {
        if let ContentBlock::Text(t) = b {
            let n = t.text.chars().count();
            if n > left {
                t.text = bounded(&t.text, left);
            }
            left = left.saturating_sub(n);
        }
    }
    blocks
}

/// One entry of a `resources/read` result, made fit for the model: text as it is, binary
/// contents decoded — UTF-8 becomes text, images the model accepts become images, the rest is
/// described with its size.
pub(crate) enum Read {
    /// Text.
    Text(String),
    /// An image block.
    Image(ContentBlock),
    /// Binary content not shown: its size in bytes.
    Binary(usize),
}

/// What one entry of a `resources/read` result holds.
pub(crate) fn read_entry(entry: &Value) -> Read {
    if let Some(text) = str_of(entry, "text") {
        return Read::Text(text.to_owned());
    }
    let blob = str_of(entry, "blob").unwrap_or("");
    let mime = str_of(entry, "mimeType").unwrap_or("application/octet-stream");
    if let Some(block) = image(blob, mime) {
        return Read::Image(block);
    }
    match base64::engine::general_purpose::STANDARD.decode(blob.trim()) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) if !text.contains('\0') => Read::Text(text),
            Ok(text) => Read::Binary(text.len()),
            Err(e) => Read::Binary(e.into_bytes().len()),
        },
        Err(_) => Read::Binary(blob.len()),
    }
}

/// Cut `text` to at most `max` characters, saying how much was left out.
pub(crate) fn bounded(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_owned();
    }
    let kept: String = text.chars().take(max).collect();
    format!("{kept}\n… [{} more characters not shown]", total - max)
}

/// The contents of a resource an `@server:uri` mention names, as content for the model.
pub(crate) fn mention_blocks(
    server: &str,
    uri: &str,
    result: &Value,
    max_chars: usize,
) -> Vec<ContentBlock> {
    let empty = Vec::new();
    let entries = result
        .get("contents")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let open = format!("<mcp-resource server=\"{server}\" uri=\"{uri}\">");
    if entries.is_empty() {
        return vec![ContentBlock::text(format!(
            "{open}(no content)</mcp-resource>"
        ))];
    }
    let mut blocks = Vec::new();
    for entry in entries {
        let at = str_of(entry, "uri").unwrap_or(uri);
        let mime = str_of(entry, "mimeType").unwrap_or("text/plain");
        let open = format!("<mcp-resource server=\"{server}\" uri=\"{at}\">");
        match read_entry(entry) {
            Read::Text(text) => blocks.push(ContentBlock::text(format!(
                "{open}\n{}\n</mcp-resource>",
                bounded(&text, max_chars)
            ))),
            Read::Image(block) => {
                blocks.push(ContentBlock::text(format!(
                    "{open}[image, {mime}]</mcp-resource>"
                )));
                blocks.push(block);
            }
            Read::Binary(n) => blocks.push(ContentBlock::text(format!(
                "{open}[binary content, {mime}, {n} bytes, not shown]</mcp-resource>"
            ))),
        }
    }
    blocks
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

    fn texts(blocks: &[ContentBlock]) -> Vec<String> {
        blocks
            .iter()
            .map(|b| match b {
                ContentBlock::Text(t) => t.text.clone(),
                other => format!("<{}>", other.type_name()),
            })
            .collect()
    }

    #[test]
    fn prompt_messages_of_every_role_become_one_turn() {
        let blocks = prompt_blocks(&json!({"messages": [
            {"role": "user", "content": {"type": "text", "text": "Look:"}},
            {"role": "user", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}},
            {"role": "assistant", "content": {"type": "resource", "resource": {"uri": "memo://n", "text": "notes"}}},
        ]}));
        assert_eq!(
            texts(&blocks),
            ["Look:", "<image>", "[Resource from memo://n]\nnotes"]
        );
    }

    #[test]
    fn a_prompt_brings_a_bounded_amount_of_text() {
        let long = "z".repeat(MAX_PROMPT_CHARS);
        let blocks = prompt_blocks(&json!({"messages": [
            {"role": "user", "content": {"type": "text", "text": "abc"}},
            {"role": "user", "content": {"type": "text", "text": long}},
            {"role": "user", "content": {"type": "text", "text": "more"}},
        ]}));
        let t = texts(&blocks);
        assert_eq!(t[0], "abc");
        assert!(
            t[1].ends_with("… [3 more characters not shown]"),
            "{}",
            &t[1][t[1].len() - 60..]
        );
        assert_eq!(t[2], "\n… [4 more characters not shown]");
    }

    #[test]
    fn mentioned_resources_are_text_images_or_described_binaries_within_the_limit() {
        let blocks = mention_blocks(
            "rich",
            "memo://x",
            &json!({"contents": [
                {"uri": "memo://x", "mimeType": "text/plain", "text": "abcdef"},
                {"uri": "memo://p", "mimeType": "image/png", "blob": PNG},
                {"uri": "memo://b", "mimeType": "application/octet-stream", "blob": "AAEC/w=="},
                {"uri": "memo://u", "mimeType": "application/json", "blob": "eyJhIjoxfQ=="},
            ]}),
            3,
        );
        assert_eq!(
            texts(&blocks),
            [
                "<mcp-resource server=\"rich\" uri=\"memo://x\">\nabc\n… [3 more characters not shown]\n</mcp-resource>",
                "<mcp-resource server=\"rich\" uri=\"memo://p\">[image, image/png]</mcp-resource>",
                "<image>",
                "<mcp-resource server=\"rich\" uri=\"memo://b\">[binary content, application/octet-stream, 4 bytes, not shown]</mcp-resource>",
                "<mcp-resource server=\"rich\" uri=\"memo://u\">\n{\"a\n… [4 more characters not shown]\n</mcp-resource>",
            ]
        );
        assert_eq!(
            texts(&mention_blocks("s", "u", &json!({"contents": []}), 10)),
            ["<mcp-resource server=\"s\" uri=\"u\">(no content)</mcp-resource>"]
        );
    }
}
