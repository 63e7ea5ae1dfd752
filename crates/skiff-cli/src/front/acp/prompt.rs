//! A `session/prompt`'s content as the session's input: text, images, resource links (a
//! mention the model can Read) and embedded resources (the editor's text with its URI, an
//! image, or a PDF as a document); or a slash command.

use agent_client_protocol::v1::schema::{ContentBlock as AcpBlock, EmbeddedResourceResource};
use serde_json::json;
use skiff_core::UserInput;
use skiff_protocol::{ContentBlock, ImageBlock, ImageSource};

/// What a prompt asks.
#[derive(Debug, Clone, PartialEq)]
pub enum Prompted {
    /// A message for the model.
    Message(UserInput),
    /// A slash command (`/compact focus`), run by skiff itself.
    Command(String),
}

/// Image types the model reads.
const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

fn image(media_type: &str, data: &str) -> ContentBlock {
    ContentBlock::Image(ImageBlock {
        source: ImageSource::Base64 {
            media_type: media_type.to_owned(),
            data: data.to_owned(),
        },
        cache_control: None,
    })
}

/// A file URI's path, or the URI itself.
fn uri_path(uri: &str) -> &str {
    uri.strip_prefix("file://").unwrap_or(uri)
}

/// The prompt's content blocks as the session's input; an error (for `invalid_params`) when it
/// holds nothing.
pub fn prompted(prompt: Vec<AcpBlock>) -> Result<Prompted, String> {
    if let [AcpBlock::Text(t)] = prompt.as_slice()
        && crate::front::commands::is_command(&t.text)
    {
        return Ok(Prompted::Command(t.text.trim().to_owned()));
    }
    let mut blocks = Vec::new();
    for block in prompt {
        match block {
            AcpBlock::Text(t) if !t.text.is_empty() => blocks.push(ContentBlock::text(t.text)),
            AcpBlock::Image(i) if IMAGE_TYPES.contains(&i.mime_type.as_str()) => {
                blocks.push(image(&i.mime_type, &i.data));
            }
            AcpBlock::Image(i) => blocks.push(ContentBlock::text(format!(
                "[an image of type {} was attached; only png, jpeg, gif and webp can be shown]",
                i.mime_type
            ))),
            AcpBlock::Audio(a) => blocks.push(ContentBlock::text(format!(
                "[an audio clip of type {} was attached; audio is not supported]",
                a.mime_type
            ))),
            AcpBlock::ResourceLink(link) => {
                blocks.push(ContentBlock::text(format!(
                    "[@{}]({})",
                    link.name, link.uri
                )));
            }
            AcpBlock::Resource(r) => {
                match r.resource {
                    EmbeddedResourceResource::TextResourceContents(t) => {
                        blocks.push(ContentBlock::text(format!(
                            "<context ref=\"{}\">\n{}\n</context>",
                            t.uri, t.text
                        )));
                    }
                    EmbeddedResourceResource::BlobResourceContents(b) => {
                        let mime = b.mime_type.as_deref().unwrap_or_default();
                        if IMAGE_TYPES.contains(&mime) {
                            blocks.push(image(mime, &b.blob));
                        } else if mime == "application/pdf" {
                            blocks.push(ContentBlock::Unknown(json!({
                                "type": "document",
                                "source": {"type": "base64", "media_type": mime, "data": b.blob},
                                "title": uri_path(&b.uri),
                            })));
                        } else {
                            blocks.push(ContentBlock::text(format!(
                            "[{} was attached as binary data ({}); read it from disk if needed]",
                            uri_path(&b.uri),
                            if mime.is_empty() { "unknown type" } else { mime }
                        )));
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    match blocks.as_slice() {
        [] => Err("the prompt is empty".to_owned()),
        [ContentBlock::Text(t)] => Ok(Prompted::Message(UserInput::Text(t.text.clone()))),
        _ => Ok(Prompted::Message(UserInput::Blocks(blocks))),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use serde_json::{Value, json};

    use super::*;

    fn parse(v: Value) -> Result<Prompted, String> {
        prompted(serde_json::from_value(v).unwrap())
    }

    #[test]
    fn text_images_links_and_resources() {
        assert_eq!(
            parse(json!([{"type": "text", "text": "hi"}])).unwrap(),
            Prompted::Message(UserInput::Text("hi".into()))
        );
        let Prompted::Message(UserInput::Blocks(blocks)) = parse(json!([
            {"type": "text", "text": "look"},
            {"type": "image", "mimeType": "image/png", "data": "AAAA"},
            {"type": "resource_link", "name": "main.rs", "uri": "file:///w/main.rs"},
            {"type": "resource", "resource": {"uri": "file:///w/a.rs", "text": "fn a() {}", "mimeType": "text/x-rust"}},
            {"type": "resource", "resource": {"uri": "file:///w/d.pdf", "blob": "JVBE", "mimeType": "application/pdf"}},
        ]))
        .unwrap() else {
            panic!("not blocks")
        };
        let v = serde_json::to_value(&blocks).unwrap();
        assert_eq!(
            v[1]["source"],
            json!({"type": "base64", "media_type": "image/png", "data": "AAAA"})
        );
        assert_eq!(v[2]["text"], "[@main.rs](file:///w/main.rs)");
        assert_eq!(
            v[3]["text"],
            "<context ref=\"file:///w/a.rs\">\nfn a() {}\n</context>"
        );
        assert_eq!(v[4]["type"], "document");
        assert_eq!(v[4]["title"], "/w/d.pdf");
    }

    #[test]
    fn slash_commands_and_empty_prompts() {
        assert_eq!(
            parse(json!([{"type": "text", "text": "/compact keep the API"}])).unwrap(),
            Prompted::Command("/compact keep the API".into())
        );
        // A path is a prompt, not a command.
        assert!(matches!(
            parse(json!([{"type": "text", "text": "/etc/hosts: what is this?"}])).unwrap(),
            Prompted::Message(_)
        ));
        assert!(parse(json!([])).is_err());
        assert!(parse(json!([{"type": "text", "text": ""}])).is_err());
    }
}
