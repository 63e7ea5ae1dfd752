//! A Messages API request (the conversation skiff keeps) as an OpenAI chat-completions body.
//!
//! System prompt → a `system` message; text and images → content parts (`image_url` with a
//! data URL); `tool_use` blocks → the assistant's `tool_calls`; `tool_result` blocks → `role:
//! tool` messages placed right after the assistant message that asked, as the API requires;
//! thinking blocks stay local (chat servers do not take them back). The same conversation
//! always converts to the same bytes, so servers' prefix caches keep working.
//!
//! The body is written as chunks ([`chat_body_chunks`]): the fixed fields, the conversation's
//! serialized prefix in this format ([`CHAT_ENCODING`], kept by the conversation from one turn
//! to the next), the messages after it, the closing fields. Only the new messages are
//! serialized each turn. Every object's keys are written in sorted order, as a
//! `serde_json::Value` writes them, so the bytes are those of [`chat_body`].

use std::borrow::Cow;

use bytes::Bytes;
use serde_json::{Value, json};
use skiff_protocol::serde::Serialize;
use skiff_protocol::{
    ContentBlock, Elements, ImageSource, Message, MessageContent, MessageEncoding, RequestView,
    Role, SystemPrompt, ToolResultContent, body_from_parts,
};

/// The chat-completions format of the messages array, for a conversation's serialized prefix.
pub const CHAT_ENCODING: MessageEncoding = MessageEncoding {
    name: "openai-chat",
    encode: encode_message,
};

/// What goes into a body beyond the request itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BodyExtras {
    /// The request's `output_config.effort` as `reasoning_effort`.
    pub effort: bool,
    /// When the request forces a call (`tool_choice` any or a named tool), a `response_format`
    /// whose JSON schema admits exactly one call of an offered tool ([`call_grammar`]): servers
    /// that do not honour `tool_choice: "required"` (llama.cpp's stock templates) then still
    /// give a well-formed call, as JSON text the text-call fallback turns into a call.
    pub call_grammar: bool,
}

/// The chat-completions body for `request` (always streaming, usage included), as one value.
pub fn chat_body(request: &RequestView<'_>) -> Result<Value, serde_json::Error> {
    let extras = BodyExtras {
        effort: true,
        call_grammar: false,
    };
    let chunks = chat_body_chunks(request, request.max_tokens, extras)?;
    let all: Vec<u8> = chunks.iter().flat_map(|c| c.iter().copied()).collect();
    serde_json::from_slice(&all)
}

/// The chat-completions body for `request` as chunks to send one after the other, with
/// `max_tokens` in place of the request's. The request's prefix is used when it is in
/// [`CHAT_ENCODING`] (otherwise every message is serialized), with the [`BodyExtras`] asked
/// for.
pub fn chat_body_chunks(
    request: &RequestView<'_>,
    max_tokens: u32,
    extras: BodyExtras,
) -> Result<Vec<Bytes>, serde_json::Error> {
    let (segments, start, before): (&[Bytes], usize, usize) = match request.prefix {
        Some(p) if p.count() < request.messages.len() && p.encoding() == CHAT_ENCODING => {
            (p.segments(), p.count(), p.elements())
        }
        _ => (&[], 0, 0),
    };
    let mut tail = Vec::new();
    let mut out = Elements::new(&mut tail, before);
    for m in &request.messages[start..] {
        encode_message(m, &mut out)?;
    }
    let any_message = out.count() > 0;
    let closing = Closing {
        model: request.model,
        reasoning_effort: if extras.effort {
            reasoning_effort(request)
        } else {
            None
        },
        response_format: if extras.call_grammar {
            call_grammar(request)
        } else {
            None
        },
        stop: request.stop_sequences,
        stream: true,
        stream_options: StreamOptions {
            include_usage: true,
        },
        temperature: request.temperature.map(f64::from),
        tool_choice: tool_choice(request),
        tools: request.tools.iter().map(ToolDef::of).collect(),
    };
    // `{"model":…}` → `],"model":…}`
    let closing = serde_json::to_vec(&closing)?;
    tail.extend_from_slice(b"],");
    tail.extend_from_slice(closing.get(1..).unwrap_or_default());

    let mut head = format!("{{\"max_tokens\":{max_tokens},\"messages\":[").into_bytes();
    if let Some(text) = request.system.map(system_text).filter(|t| !t.is_empty()) {
        serde_json::to_writer(
            &mut head,
            &TextMessage {
                content: &text,
                role: "system",
            },
        )?;
        if any_message {
            head.push(b',');
        }
    }
    Ok(body_from_parts(head, segments, tail))
}

/// The effort the request asks for (`output_config.effort`) as chat completions'
/// `reasoning_effort`: `low`, `medium`, `high` (`xhigh` and `max` are `high`).
pub fn reasoning_effort<'a>(request: &RequestView<'a>) -> Option<&'static str> {
    let effort = request
        .extra?
        .get("output_config")?
        .get("effort")?
        .as_str()?;
    Some(match effort {
        "low" => "low",
        "medium" => "medium",
        _ => "high",
    })
}

fn system_text(system: &SystemPrompt) -> Cow<'_, str> {
    match system {
        SystemPrompt::Text(t) => Cow::Borrowed(t),
        SystemPrompt::Blocks(blocks) => Cow::Owned(
            blocks
                .iter()
                .map(|b| b.text.as_str())
                .collect::<Vec<_>>()
                .join("\n\n"),
        ),
    }
}

/// The fields after the messages (sorted, like every object here).
#[derive(Serialize)]
#[serde(crate = "skiff_protocol::serde")]
struct Closing<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<Value>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    stop: &'a [String],
    stream: bool,
    stream_options: StreamOptions,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<ToolDef<'a>>,
}

/// A Messages API `tool_choice` in the chat-completions form: `auto`, `required` (the
/// Messages API's `any`), `none`, or the named function. Left out when there are no tools.
fn tool_choice(request: &RequestView<'_>) -> Option<Value> {
    use skiff_protocol::ToolChoice;
    if request.tools.is_empty() {
        return None;
    }
    Some(match request.tool_choice? {
        ToolChoice::Auto { .. } => Value::from("auto"),
        ToolChoice::Any { .. } => Value::from("required"),
        ToolChoice::None => Value::from("none"),
        ToolChoice::Tool { name, .. } => json!({"type": "function", "function": {"name": name}}),
    })
}

/// For a request that forces a call (`tool_choice` any, or a named tool), a `response_format`
/// whose JSON schema is one call, `{"name": …, "arguments": …}`, of an offered tool (of the
/// named one; for any, of the request's `forced_among` when it names offered tools), its
/// arguments held to the tool's input schema, or, when the call can be of one tool only and
/// the request has a `forced_input` object, to that input ([`exactly`]). `None` when no call
/// is forced or no tool is offered.
pub fn call_grammar(request: &RequestView<'_>) -> Option<Value> {
    use skiff_protocol::ToolChoice;
    let among = |name: &str| request.forced_among.iter().any(|n| n == name);
    let narrowed = request.tools.iter().any(|t| among(&t.name));
    let only = match request.tool_choice? {
        ToolChoice::Any { .. } => None,
        ToolChoice::Tool { name, .. } => Some(name.as_str()),
        ToolChoice::Auto { .. } | ToolChoice::None => return None,
    };
    let calls: Vec<Value> = request
        .tools
        .iter()
        .filter(|t| match only {
            Some(n) => n == t.name,
            None => !narrowed || among(&t.name),
        })
        .map(|t| {
            let arguments = ToolDef::of(t).function.parameters.into_value();
            json!({
                "type": "object",
                "properties": {"name": {"const": t.name}, "arguments": arguments},
                "required": ["name", "arguments"],
                "additionalProperties": false,
            })
        })
        .collect();
    if calls.is_empty() {
        return None;
    }
    let calls = match (calls, request.forced_input) {
        (mut one, Some(input)) if one.len() == 1 => {
            if let Some(held) = exactly(input) {
                one[0]["properties"]["arguments"] = held;
            }
            one
        }
        (calls, _) => calls,
    };
    Some(json!({
        "type": "json_schema",
        "json_schema": {"name": "tool_call", "schema": {"anyOf": calls}},
    }))
}

/// The schema of exactly `input` (an object): each field a `const`, all required, no
/// others. `None` for an input that is not an object.
fn exactly(input: &Value) -> Option<Value> {
    let fields = input.as_object()?;
    let properties: serde_json::Map<String, Value> = fields
        .iter()
        .map(|(k, v)| (k.clone(), json!({ "const": v })))
        .collect();
    Some(json!({
        "type": "object",
        "properties": properties,
        "required": fields.keys().collect::<Vec<_>>(),
        "additionalProperties": false,
    }))
}

#[derive(Serialize)]
#[serde(crate = "skiff_protocol::serde")]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
#[serde(crate = "skiff_protocol::serde")]
struct ToolDef<'a> {
    function: FunctionDef<'a>,
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
#[serde(crate = "skiff_protocol::serde")]
struct FunctionDef<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    name: &'a str,
    parameters: Parameters<'a>,
}

/// A function's parameters: the tool's schema (written as it is kept: text stays text), or an
/// empty object schema for a tool without an object schema.
#[derive(Serialize)]
#[serde(crate = "skiff_protocol::serde", untagged)]
enum Parameters<'a> {
    Schema(&'a skiff_protocol::InputSchema),
    None(Value),
}

impl Parameters<'_> {
    fn into_value(self) -> Value {
        match self {
            Self::Schema(schema) => schema.value().clone(),
            Self::None(value) => value,
        }
    }
}

impl<'a> ToolDef<'a> {
    fn of(t: &'a skiff_protocol::ToolDefinition) -> Self {
        let parameters = if t.input_schema.is_object() {
            Parameters::Schema(&t.input_schema)
        } else {
            Parameters::None(json!({"type": "object", "properties": {}}))
        };
        Self {
            function: FunctionDef {
                description: t.description.as_deref(),
                name: &t.name,
                parameters,
            },
            kind: "function",
        }
    }
}

/// `{"content": "…", "role": "…"}`
#[derive(Serialize)]
#[serde(crate = "skiff_protocol::serde")]
struct TextMessage<'a> {
    content: &'a str,
    role: &'static str,
}

#[derive(Serialize)]
#[serde(crate = "skiff_protocol::serde")]
struct AssistantMessage<'a> {
    /// Null beside tool calls when there is no text.
    content: Option<Cow<'a, str>>,
    role: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<ToolCall<'a>>,
}

#[derive(Serialize)]
#[serde(crate = "skiff_protocol::serde")]
struct ToolCall<'a> {
    function: FunctionCall<'a>,
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
#[serde(crate = "skiff_protocol::serde")]
struct FunctionCall<'a> {
    arguments: String,
    name: &'a str,
}

#[derive(Serialize)]
#[serde(crate = "skiff_protocol::serde")]
struct ToolMessage<'a> {
    content: Cow<'a, str>,
    role: &'static str,
    tool_call_id: &'a str,
}

#[derive(Serialize)]
#[serde(crate = "skiff_protocol::serde")]
struct UserMessage<'a> {
    content: UserContent<'a>,
    role: &'static str,
}

#[derive(Serialize)]
#[serde(crate = "skiff_protocol::serde")]
#[serde(untagged)]
enum UserContent<'a> {
    Text(String),
    Parts(Vec<Part<'a>>),
}

#[derive(Serialize)]
#[serde(crate = "skiff_protocol::serde")]
#[serde(untagged)]
enum Part<'a> {
    Text {
        text: &'a str,
        #[serde(rename = "type")]
        kind: &'static str,
    },
    Image {
        image_url: ImageUrl<'a>,
        #[serde(rename = "type")]
        kind: &'static str,
    },
}

#[derive(Serialize)]
#[serde(crate = "skiff_protocol::serde")]
struct ImageUrl<'a> {
    url: Cow<'a, str>,
}

/// One conversation message as chat messages: none, one, or (tool results) several.
pub fn encode_message(message: &Message, out: &mut Elements<'_>) -> Result<(), serde_json::Error> {
    match (&message.content, message.role) {
        (MessageContent::Text(t), role) => out.push(&TextMessage {
            content: t,
            role: role_name(role),
        }),
        (MessageContent::Blocks(blocks), Role::Assistant) => encode_assistant(blocks, out),
        (MessageContent::Blocks(blocks), Role::User) => encode_user(blocks, out),
    }
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

fn encode_assistant(
    blocks: &[ContentBlock],
    out: &mut Elements<'_>,
) -> Result<(), serde_json::Error> {
    let mut text: Cow<'_, str> = Cow::Borrowed("");
    let mut tool_calls = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text(t) if text.is_empty() => text = Cow::Borrowed(&t.text),
            ContentBlock::Text(t) => text.to_mut().push_str(&t.text),
            ContentBlock::ToolUse(tu) => {
                let arguments = if tu.input.is_object() {
                    tu.input.to_string()
                } else {
                    "{}".to_owned()
                };
                tool_calls.push(ToolCall {
                    function: FunctionCall {
                        arguments,
                        name: &tu.name,
                    },
                    id: &tu.id,
                    kind: "function",
                });
            }
            _ => {}
        }
    }
    // Servers differ on an empty content beside tool calls; null is what OpenAI sends.
    let content = (!text.is_empty() || tool_calls.is_empty()).then_some(text);
    out.push(&AssistantMessage {
        content,
        role: "assistant",
        tool_calls,
    })
}

fn encode_user(blocks: &[ContentBlock], out: &mut Elements<'_>) -> Result<(), serde_json::Error> {
    let mut parts = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::ToolResult(r) => {
                let mut text: Cow<'_, str> = Cow::Borrowed("");
                match &r.content {
                    None => {}
                    Some(ToolResultContent::Text(t)) => text = Cow::Borrowed(t),
                    Some(ToolResultContent::Blocks(bs)) => {
                        for b in bs {
                            match b {
                                ContentBlock::Text(t) => {
                                    if !text.is_empty() {
                                        text.to_mut().push('\n');
                                    }
                                    text.to_mut().push_str(&t.text);
                                }
                                ContentBlock::Image(i) => parts.extend(image_part(&i.source)),
                                _ => {}
                            }
                        }
                    }
                }
                if r.is_error == Some(true) && !text.starts_with("Error") {
                    text = Cow::Owned(format!("Error: {text}"));
                }
                out.push(&ToolMessage {
                    content: text,
                    role: "tool",
                    tool_call_id: &r.tool_use_id,
                })?;
                // Tool messages carry text only: their images go in the next user message.
            }
            ContentBlock::Text(t) => parts.push(Part::Text {
                text: &t.text,
                kind: "text",
            }),
            ContentBlock::Image(i) => parts.extend(image_part(&i.source)),
            _ => {}
        }
    }
    if parts.is_empty() {
        return Ok(());
    }
    // Text only: a plain string, which every server takes.
    let content = if parts.iter().all(|p| matches!(p, Part::Text { .. })) {
        UserContent::Text(
            parts
                .iter()
                .filter_map(|p| match p {
                    Part::Text { text, .. } => Some(*text),
                    Part::Image { .. } => None,
                })
                .collect::<Vec<_>>()
                .join("\n"),
        )
    } else {
        UserContent::Parts(parts)
    };
    out.push(&UserMessage {
        content,
        role: "user",
    })
}

fn image_part(source: &ImageSource) -> Option<Part<'_>> {
    let url = match source {
        ImageSource::Base64 { media_type, data } => {
            Cow::Owned(format!("data:{media_type};base64,{data}"))
        }
        ImageSource::Url { url } => Cow::Borrowed(url.as_str()),
        _ => return None,
    };
    Some(Part::Image {
        image_url: ImageUrl { url },
        kind: "image_url",
    })
}

/// The conversion as it was before the body was written in chunks: whole `serde_json::Value`s.
/// The chunks must give exactly its bytes.
#[cfg(test)]
mod reference {
    #![allow(clippy::unwrap_used)]
    use serde_json::{Map, Value, json};
    use skiff_protocol::{
        ContentBlock, ImageSource, Message, MessageContent, RequestView, Role, SystemPrompt,
        ToolResultContent,
    };

    /// The chat-completions body for `request` (always streaming, usage included).
    pub fn chat_body_value(request: &RequestView<'_>) -> Value {
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
                        t.input_schema.value().clone()
                    } else {
                        json!({"type": "object", "properties": {}})
                    };
                    function.insert("parameters".into(), params);
                    json!({"type": "function", "function": function})
                })
                .collect();
            body.insert("tools".into(), Value::Array(tools));
        }
        if let Some(choice) = super::tool_choice(request) {
            body.insert("tool_choice".into(), choice);
        }
        if let Some(e) = super::reasoning_effort(request) {
            body.insert("reasoning_effort".into(), e.into());
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
                    out.push(
                        json!({"role": "tool", "tool_call_id": r.tool_use_id, "content": text}),
                    );
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
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;
    use skiff_protocol::{
        MessagesRequest, SystemBlock, ToolDefinition, ToolResultBlock, ToolUseBlock,
    };

    const WITH_EFFORT: BodyExtras = BodyExtras {
        effort: true,
        call_grammar: false,
    };

    #[test]
    fn a_forced_call_is_held_to_one_call_of_an_offered_tool_when_asked() {
        use skiff_protocol::ToolChoice;
        let tool = |name: &str, schema: Value| ToolDefinition {
            name: name.into(),
            description: Some(format!("The {name} tool.")),
            input_schema: schema.into(),
            cache_control: None,
            extra: Default::default(),
        };
        let bash = json!({"type": "object", "properties": {"command": {"type": "string"}},
            "required": ["command"]});
        let mut req = MessagesRequest::new("qwen", 64, vec![Message::user_text("fix it")]);
        req.tools = vec![
            tool("Bash", bash.clone()),
            tool("Read", json!("not a schema")),
        ];
        let grammar = BodyExtras {
            effort: false,
            call_grammar: true,
        };
        let body = |req: &MessagesRequest| -> Value {
            let chunks = chat_body_chunks(&req.view(), 64, grammar).unwrap();
            serde_json::from_slice(&chunks.concat()).unwrap()
        };
        // Nothing forced: no grammar, whatever is asked.
        assert!(body(&req).get("response_format").is_none());
        req.tool_choice = Some(ToolChoice::Auto {
            disable_parallel_tool_use: None,
        });
        assert!(body(&req).get("response_format").is_none());
        // Any tool: one call of either, arguments held to the tool's schema (an object schema
        // in place of one that is not).
        req.tool_choice = Some(ToolChoice::Any {
            disable_parallel_tool_use: None,
        });
        let call = |name: &str, arguments: Value| {
            json!({"type": "object",
                "properties": {"name": {"const": name}, "arguments": arguments},
                "required": ["name", "arguments"], "additionalProperties": false})
        };
        let want = json!({"type": "json_schema", "json_schema": {"name": "tool_call", "schema":
            {"anyOf": [call("Bash", bash.clone()),
                call("Read", json!({"type": "object", "properties": {}}))]}}});
        let forced = body(&req);
        assert_eq!(forced["response_format"], want);
        assert_eq!(forced["tool_choice"], "required");
        assert_eq!(forced["tools"].as_array().map(Vec::len), Some(2));
        // Any of a set: only theirs; a set that names no offered tool narrows nothing.
        let read_only = ["Read".to_owned()];
        let mut view = req.view();
        view.forced_among = &read_only;
        let chunks = chat_body_chunks(&view, 64, grammar).unwrap();
        let narrowed: Value = serde_json::from_slice(&chunks.concat()).unwrap();
        assert_eq!(
            narrowed["response_format"]["json_schema"]["schema"],
            json!({"anyOf": [call("Read", json!({"type": "object", "properties": {}}))]})
        );
        assert_eq!(narrowed["tools"].as_array().map(Vec::len), Some(2));
        // One tool and an input to hold it to: that input exactly.
        let bash_only = ["Bash".to_owned()];
        let input = json!({"command": "bash test.sh"});
        view.forced_among = &bash_only;
        view.forced_input = Some(&input);
        let held = json!({"type": "object", "properties": {"command": {"const": "bash test.sh"}},
            "required": ["command"], "additionalProperties": false});
        assert_eq!(
            call_grammar(&view).unwrap()["json_schema"]["schema"],
            json!({"anyOf": [call("Bash", held)]})
        );
        // Not for a set of more than one tool.
        view.forced_among = &[];
        assert_eq!(call_grammar(&view), Some(want.clone()));
        view.forced_input = None;
        let unknown = ["Nope".to_owned()];
        view.forced_among = &unknown;
        assert_eq!(call_grammar(&view), Some(want.clone()));
        // A named tool: only its call.
        req.tool_choice = Some(ToolChoice::Tool {
            name: "Bash".into(),
            disable_parallel_tool_use: None,
        });
        assert_eq!(
            body(&req)["response_format"]["json_schema"]["schema"],
            json!({"anyOf": [call("Bash", bash)]})
        );
        // Not asked for (a server that refused it): the forced body has none.
        let chunks = chat_body_chunks(&req.view(), 64, BodyExtras::default()).unwrap();
        let plain: Value = serde_json::from_slice(&chunks.concat()).unwrap();
        assert!(plain.get("response_format").is_none());
        assert_eq!(plain["tool_choice"]["function"]["name"], "Bash");
    }

    #[test]
    fn tool_choice_becomes_the_chat_form_and_only_with_tools() {
        use skiff_protocol::ToolChoice;
        let tool = ToolDefinition {
            name: "Bash".into(),
            description: None,
            input_schema: json!({"type": "object"}).into(),
            cache_control: None,
            extra: Default::default(),
        };
        let mut req = MessagesRequest::new("qwen", 64, vec![Message::user_text("hi")]);
        req.tool_choice = Some(ToolChoice::Any {
            disable_parallel_tool_use: None,
        });
        // No tools: nothing to choose from, so no tool_choice (servers reject it).
        assert!(chat_body(&req.view()).unwrap().get("tool_choice").is_none());
        req.tools = vec![tool];
        let cases = [
            (
                ToolChoice::Any {
                    disable_parallel_tool_use: None,
                },
                json!("required"),
            ),
            (
                ToolChoice::Auto {
                    disable_parallel_tool_use: None,
                },
                json!("auto"),
            ),
            (ToolChoice::None, json!("none")),
            (
                ToolChoice::Tool {
                    name: "Bash".into(),
                    disable_parallel_tool_use: None,
                },
                json!({"type": "function", "function": {"name": "Bash"}}),
            ),
        ];
        for (choice, want) in cases {
            req.tool_choice = Some(choice);
            let view = req.view();
            assert_eq!(chat_body(&view).unwrap()["tool_choice"], want);
            assert_eq!(chat_body(&view).unwrap(), reference::chat_body_value(&view));
        }
    }

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
            input_schema: json!({"type": "object"}).into(),
            cache_control: None,
            extra: Default::default(),
        }];
        let body = chat_body(&req.view()).unwrap();
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
        assert_eq!(
            body.to_string(),
            chat_body(&req.view()).unwrap().to_string()
        );
    }

    fn call(id: &str, input: Value) -> ContentBlock {
        ContentBlock::ToolUse(ToolUseBlock {
            id: id.into(),
            name: "Bash".into(),
            input,
            cache_control: None,
        })
    }

    fn png(data: &str) -> ContentBlock {
        ContentBlock::Image(skiff_protocol::ImageBlock {
            source: ImageSource::Base64 {
                media_type: "image/png".into(),
                data: data.into(),
            },
            cache_control: None,
        })
    }

    /// Every shape a turn can take: text, text with calls, calls alone, results (text, blocks
    /// with images, errors, none), prompts beside results, messages that make no chat message.
    fn history(turns: usize) -> Vec<Message> {
        let mut h = vec![Message::user_text("start \"quoted\" ünïcode")];
        for i in 0..turns {
            let assistant = match i % 4 {
                0 => vec![ContentBlock::text(format!("answer {i}"))],
                1 => vec![
                    ContentBlock::text("Let me look."),
                    ContentBlock::text(" More."),
                    call(&format!("c{i}a"), json!({"command": "ls", "n": i})),
                    call(&format!("c{i}b"), json!("not an object")),
                ],
                2 => vec![call(&format!("c{i}a"), json!({"z": 1, "a": [1, 2]}))],
                _ => vec![
                    ContentBlock::Thinking(skiff_protocol::ThinkingBlock {
                        thinking: "hmm".into(),
                        signature: "sig".into(),
                    }),
                    ContentBlock::text(String::new()),
                ],
            };
            let calls: Vec<String> = assistant
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::ToolUse(t) => Some(t.id.clone()),
                    _ => None,
                })
                .collect();
            h.push(Message::blocks(Role::Assistant, assistant));
            let mut user = Vec::new();
            for (n, id) in calls.iter().enumerate() {
                user.push(ContentBlock::ToolResult(match n {
                    0 => ToolResultBlock {
                        tool_use_id: id.clone(),
                        content: Some(ToolResultContent::Blocks(vec![
                            ContentBlock::text("x".repeat((i % 25) * 37)),
                            png("AAAA"),
                            ContentBlock::text("second"),
                        ])),
                        is_error: None,
                        cache_control: None,
                    },
                    _ => ToolResultBlock::text(id.clone(), "it failed", true),
                }));
            }
            match i % 3 {
                0 => user.push(ContentBlock::text(format!("prompt {i}"))),
                1 => user.push(png("BBBB")),
                _ => {}
            }
            if user.is_empty() {
                // A message that makes no chat message at all.
                user.push(ContentBlock::Unknown(json!({"type": "server_only"})));
            }
            h.push(Message::blocks(Role::User, user));
        }
        h
    }

    fn joined(chunks: &[Bytes]) -> Vec<u8> {
        chunks.iter().flat_map(|c| c.iter().copied()).collect()
    }

    #[test]
    fn chunks_with_a_growing_prefix_are_the_bytes_of_the_whole_body() {
        let system = SystemPrompt::Blocks(vec![
            SystemBlock {
                text: "You are skiff.".into(),
                cache_control: None,
            },
            SystemBlock {
                text: "Be brief.".into(),
                cache_control: None,
            },
        ]);
        let tools = vec![
            ToolDefinition {
                name: "Bash".into(),
                description: Some("Run".into()),
                input_schema: json!({"type": "object", "properties": {"command": {}}}).into(),
                cache_control: None,
                extra: Default::default(),
            },
            ToolDefinition {
                name: "Odd".into(),
                description: None,
                input_schema: json!(null).into(),
                cache_control: None,
                extra: Default::default(),
            },
        ];
        let stop = vec!["END".to_owned()];
        let h = history(100);
        for with_system in [true, false] {
            let mut prefix = skiff_protocol::MessagesJson::with_encoding(CHAT_ENCODING);
            for len in 1..h.len() {
                let messages = &h[..len];
                prefix.extend(&messages[prefix.count()..len - 1]).unwrap();
                let mut view = RequestView::new("qwen", 512, messages);
                if with_system {
                    view.system = Some(&system);
                    view.tools = &tools;
                    view.temperature = Some(0.3);
                    view.stop_sequences = &stop;
                }
                view.cache_last_message = true;
                let expected = joined(&chat_body_chunks(&view, 512, WITH_EFFORT).unwrap());
                // The reference body, key order aside (serde_json keeps insertion order when a
                // dependency enables `preserve_order`).
                assert_eq!(
                    serde_json::from_slice::<Value>(&expected).unwrap(),
                    reference::chat_body_value(&view),
                    "len {len}"
                );
                // The same bytes with a prefix, and with one in the Messages API's format.
                view.prefix = Some(&prefix);
                let chunks = chat_body_chunks(&view, 512, WITH_EFFORT).unwrap();
                assert_eq!(
                    String::from_utf8(joined(&chunks)).unwrap(),
                    String::from_utf8(expected.clone()).unwrap(),
                    "len {len}"
                );
                let mut other = skiff_protocol::MessagesJson::new();
                other.extend(&messages[..len - 1]).unwrap();
                view.prefix = Some(&other);
                assert_eq!(
                    joined(&chat_body_chunks(&view, 512, WITH_EFFORT).unwrap()),
                    expected
                );
            }
            // A conversation that makes no chat message at all.
            let lone = [Message::blocks(
                Role::User,
                vec![ContentBlock::Unknown(json!({"type": "x"}))],
            )];
            let mut view = RequestView::new("qwen", 512, &lone);
            view.system = with_system.then_some(&system);
            let body: Value = serde_json::from_slice(&joined(
                &chat_body_chunks(&view, 512, WITH_EFFORT).unwrap(),
            ))
            .unwrap();
            assert_eq!(body, reference::chat_body_value(&view));
        }
    }

    #[test]
    fn the_chat_prefix_copies_each_byte_a_logarithmic_number_of_times() {
        // One turn at a time, like the loop: an assistant call and its results (several chat
        // messages each).
        let h = history(1024);
        let mut prefix = skiff_protocol::MessagesJson::with_encoding(CHAT_ENCODING);
        let mut copied = 0usize;
        for len in (1..h.len()).step_by(2) {
            let before: Vec<usize> = prefix.segments().iter().map(Bytes::len).collect();
            let start = prefix.count();
            prefix.extend(&h[start..len]).unwrap();
            let after: Vec<usize> = prefix.segments().iter().map(Bytes::len).collect();
            let kept = before
                .iter()
                .zip(&after)
                .take_while(|(a, b)| a == b)
                .count();
            copied += after[kept..].iter().sum::<usize>();
        }
        let total = prefix.len_bytes();
        // log2(1024 turns) ≈ 10 copies per byte at most, plus the fresh serialization.
        assert!(copied <= 12 * total, "{copied} bytes copied for {total}");
        assert!(prefix.segments().len() <= 12, "{}", prefix.segments().len());
        assert!(prefix.elements() > prefix.count());
    }

    #[test]
    fn the_servers_output_cap_replaces_max_tokens() {
        let req = MessagesRequest::new("m", 8192, vec![Message::user_text("hi")]);
        let body: Value = serde_json::from_slice(&joined(
            &chat_body_chunks(&req.view(), 4096, WITH_EFFORT).unwrap(),
        ))
        .unwrap();
        assert_eq!(body["max_tokens"], 4096);
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
        let body = chat_body(&req.view()).unwrap();
        let parts = &body["messages"][0]["content"];
        assert_eq!(parts[1]["image_url"]["url"], "data:image/png;base64,AAAA");
    }
}
