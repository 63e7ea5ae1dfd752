//! A Messages API request (the conversation skiff keeps) as an OpenAI chat-completions body.
//!
//! System prompt → a `system` message; text and images → content parts (`image_url` with a
//! data URL); `tool_use` blocks → the assistant's `tool_calls`; `tool_result` blocks → `role:
//! tool` messages placed right after the assistant message that asked, as the API requires;
//! thinking blocks stay local (chat servers do not take them back). The same conversation
//! always converts to the same bytes, so servers' prefix caches keep working.

use serde_json::{Map, Value, json};
use skiff_protocol::{
    ContentBlock, ImageSource, Message, MessageContent, RequestView, Role, SystemPrompt,
    ToolResultContent,
};

/// The chat-completions body for `request` (always streaming, usage included).
pub fn chat_body(request: &RequestView<'_>) -> Value {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if let Some(system) = request.system {
        let text = match system {
            SystemPrompt::Text(t) => t.clone(),
            SystemPrompt::Blocks(blocks) => blocks
                .iter()
                .map(|b| b.text.as_str())
                .collect::<Vec<_>>()
                .join("\n\n"),
        };
        if !text.is_empty() {
            messages.push(json!({"role": "system", "content": text}));
        }
    }
    for message in request.messages {
        push_message(message, &mut messages);
    }
    let mut body = Map::new();
    body.insert("model".into(), request.model.into());
    body.insert("messages".into(), Value::Array(messages));
    body.insert("max_tokens".into(), request.max_tokens.into());
    body.insert("stream".into(), true.into());
    body.insert("stream_options".into(), json!({"include_usage": true}));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                let mut function = Map::new();
                function.insert("name".into(), t.name.clone().into());
                if let Some(d) = &t.description {
                    function.insert("description".into(), d.clone().into());
                }
                let params = if t.input_schema.is_object() {
                    t.input_schema.clone()
                } else {
                    json!({"type": "object", "properties": {}})
                };
                function.insert("parameters".into(), params);
                json!({"type": "function", "function": function})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(t) = request.temperature {
        body.insert("temperature".into(), f64::from(t).into());
    }
    if !request.stop_sequences.is_empty() {
        body.insert("stop".into(), request.stop_sequences.to_vec().into());
    }
    Value::Object(body)
}

fn push_message(message: &Message, out: &mut Vec<Value>) {
    let blocks: Vec<ContentBlock> = match &message.content {
        MessageContent::Text(t) => {
            let role = role_name(message.role);
            out.push(json!({"role": role, "content": t}));
            return;
        }
        MessageContent::Blocks(b) => b.clone(),
    };
    match message.role {
        Role::Assistant => push_assistant(&blocks, out),
        Role::User => push_user(&blocks, out),
    }
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

fn push_assistant(blocks: &[ContentBlock], out: &mut Vec<Value>) {
    let mut text = String::new();
    let mut calls = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text(t) => text.push_str(&t.text),
            ContentBlock::ToolUse(tu) => {
                let arguments = if tu.input.is_object() {
                    tu.input.to_string()
                } else {
                    "{}".to_owned()
                };
                calls.push(json!({
                    "id": tu.id,
                    "type": "function",
                    "function": {"name": tu.name, "arguments": arguments},
                }));
            }
            _ => {}
        }
    }
    let mut m = Map::new();
    m.insert("role".into(), "assistant".into());
    // Servers differ on an empty content beside tool calls; null is what OpenAI sends.
    m.insert(
        "content".into(),
        if text.is_empty() && !calls.is_empty() {
            Value::Null
        } else {
            text.into()
        },
    );
    if !calls.is_empty() {
        m.insert("tool_calls".into(), Value::Array(calls));
    }
    out.push(Value::Object(m));
}

fn push_user(blocks: &[ContentBlock], out: &mut Vec<Value>) {
    let mut parts = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::ToolResult(r) => {
                let (mut text, images) = match &r.content {
                    None => (String::new(), Vec::new()),
                    Some(ToolResultContent::Text(t)) => (t.clone(), Vec::new()),
                    Some(ToolResultContent::Blocks(bs)) => {
                        let mut text = String::new();
                        let mut images = Vec::new();
                        for b in bs {
                            match b {
                                ContentBlock::Text(t) => {
                                    if !text.is_empty() {
                                        text.push('\n');
                                    }
                                    text.push_str(&t.text);
                                }
                                ContentBlock::Image(i) => images.extend(image_part(&i.source)),
                                _ => {}
                            }
                        }
                        (text, images)
                    }
                };
                if r.is_error == Some(true) && !text.starts_with("Error") {
                    text = format!("Error: {text}");
                }
                out.push(json!({"role": "tool", "tool_call_id": r.tool_use_id, "content": text}));
                // Tool messages carry text only: images go in the next user message.
                parts.extend(images);
            }
            ContentBlock::Text(t) => parts.push(json!({"type": "text", "text": t.text})),
            ContentBlock::Image(i) => parts.extend(image_part(&i.source)),
            _ => {}
        }
    }
    if parts.is_empty() {
        return;
    }
    // Text only: a plain string, which every server takes.
    let all_text = parts.iter().all(|p| p["type"] == "text");
    let content = if all_text {
        Value::String(
            parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        )
    } else {
        Value::Array(parts)
    };
    out.push(json!({"role": "user", "content": content}));
}

fn image_part(source: &ImageSource) -> Option<Value> {
    let url = match source {
        ImageSource::Base64 { media_type, data } => format!("data:{media_type};base64,{data}"),
        ImageSource::Url { url } => url.clone(),
        _ => return None,
    };
    Some(json!({"type": "image_url", "image_url": {"url": url}}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use skiff_protocol::{
        MessagesRequest, SystemBlock, ToolDefinition, ToolResultBlock, ToolUseBlock,
    };

    #[test]
    fn a_tool_round_trip_converts_to_tool_calls_and_tool_messages() {
        let mut req = MessagesRequest::new(
            "qwen",
            512,
            vec![
                Message::user_text("list files"),
                Message::blocks(
                    Role::Assistant,
                    vec![
                        ContentBlock::text("Let me look."),
                        ContentBlock::ToolUse(ToolUseBlock {
                            id: "call_1".into(),
                            name: "Bash".into(),
                            input: json!({"command": "ls"}),
                            cache_control: None,
                        }),
                    ],
                ),
                Message::blocks(
                    Role::User,
                    vec![
                        ContentBlock::ToolResult(ToolResultBlock {
                            tool_use_id: "call_1".into(),
                            content: Some(ToolResultContent::Text("a.txt".into())),
                            is_error: Some(true),
                            cache_control: None,
                        }),
                        ContentBlock::text("and then?"),
                    ],
                ),
            ],
        );
        req.system = Some(SystemPrompt::Blocks(vec![SystemBlock {
            text: "You are skiff.".into(),
            cache_control: None,
        }]));
        req.tools = vec![ToolDefinition {
            name: "Bash".into(),
            description: Some("Run".into()),
            input_schema: json!({"type": "object"}),
            cache_control: None,
            extra: Default::default(),
        }];
        let body = chat_body(&req.view());
        let m = body["messages"].as_array().unwrap();
        assert_eq!(m[0], json!({"role": "system", "content": "You are skiff."}));
        assert_eq!(m[1], json!({"role": "user", "content": "list files"}));
        assert_eq!(m[2]["content"], "Let me look.");
        assert_eq!(
            m[2]["tool_calls"][0]["function"]["arguments"],
            "{\"command\":\"ls\"}"
        );
        assert_eq!(
            m[3],
            json!({"role": "tool", "tool_call_id": "call_1", "content": "Error: a.txt"})
        );
        assert_eq!(m[4], json!({"role": "user", "content": "and then?"}));
        assert_eq!(body["tools"][0]["function"]["name"], "Bash");
        assert_eq!(body["stream_options"]["include_usage"], true);
        // The same conversation gives the same bytes (prefix caches).
        assert_eq!(body.to_string(), chat_body(&req.view()).to_string());
    }

    #[test]
    fn images_become_data_urls() {
        let req = MessagesRequest::new(
            "m",
            10,
            vec![Message::blocks(
                Role::User,
                vec![
                    ContentBlock::text("what is this"),
                    ContentBlock::Image(skiff_protocol::ImageBlock {
                        source: ImageSource::Base64 {
                            media_type: "image/png".into(),
                            data: "AAAA".into(),
                        },
                        cache_control: None,
                    }),
                ],
            )],
        );
        let body = chat_body(&req.view());
        let parts = &body["messages"][0]["content"];
        assert_eq!(parts[1]["image_url"]["url"], "data:image/png;base64,AAAA");
    }
}
