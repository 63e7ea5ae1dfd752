//! Request bodies built without copying the conversation: [`RequestView`] borrows everything a
//! Messages API request holds, and [`MessagesJson`] is an append-only serialized prefix of the
//! messages that a caller keeps from one request to the next, so each request serializes only
//! what was added since the last one. The body then goes out as a list of shared chunks
//! ([`RequestView::body_chunks`]); the JSON is the same as [`MessagesRequest`]'s.
//!
//! A prefix is kept in one wire format ([`MessageEncoding`]): the Messages API's by default, or
//! another provider's (OpenAI chat completions) whose messages map to zero, one or several
//! array elements each. A provider uses a prefix only in its own encoding.

use bytes::Bytes;
use serde::Serialize;
use serde::ser::SerializeSeq;

use crate::{
    CacheControl, ContentBlock, JsonMap, Message, MessageContent, MessagesRequest, Metadata,
    SystemPrompt, ThinkingConfig, ToolChoice, ToolDefinition,
};

/// Bodies smaller than this go out as one chunk.
const SINGLE_CHUNK_BYTES: usize = 64 * 1024;

/// A Messages API request whose parts are borrowed (from a conversation and a template).
#[derive(Debug, Clone, Copy)]
pub struct RequestView<'a> {
    /// Model id.
    pub model: &'a str,
    /// Maximum output tokens.
    pub max_tokens: u32,
    /// The conversation.
    pub messages: &'a [Message],
    /// System prompt.
    pub system: Option<&'a SystemPrompt>,
    /// Tool definitions.
    pub tools: &'a [ToolDefinition],
    /// `tools` already serialized as a JSON array (a session's tools stay the same from one
    /// request to the next): written in the Messages API's body instead of serializing `tools`
    /// again. Must hold exactly `tools`; providers that translate the tools read `tools`.
    pub tools_json: Option<&'a serde_json::value::RawValue>,
    /// How the model may choose tools.
    pub tool_choice: Option<&'a ToolChoice>,
    /// When `tool_choice` forces a call of any tool: the tools it should be a call of, where a
    /// provider can hold the model to a set (an OpenAI-compatible local server's call grammar);
    /// empty: any tool offered. Not sent as a field; the tools offered stay the same.
    pub forced_among: &'a [String],
    /// When the forced call is of one tool (`forced_among` names one offered tool, or
    /// `tool_choice` names it): the input it must have, where a provider can hold the model to
    /// it (the call grammar's arguments are this object's fields as constants). Not sent.
    pub forced_input: Option<&'a serde_json::Value>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Custom stop sequences.
    pub stop_sequences: &'a [String],
    /// Stream the response as SSE.
    pub stream: bool,
    /// Request metadata.
    pub metadata: Option<&'a Metadata>,
    /// Extended thinking configuration.
    pub thinking: Option<&'a ThinkingConfig>,
    /// Other top-level fields.
    pub extra: Option<&'a JsonMap>,
    /// Put a prompt-caching breakpoint on the last block of the last message.
    pub cache_last_message: bool,
    /// The first `prefix.count()` messages, already serialized (see [`MessagesJson`]). Must
    /// have been built from these same messages; it never covers the last one.
    pub prefix: Option<&'a MessagesJson>,
}

impl<'a> RequestView<'a> {
    /// A streaming request for `messages`, everything else unset.
    pub fn new(model: &'a str, max_tokens: u32, messages: &'a [Message]) -> Self {
        Self {
            model,
            max_tokens,
            messages,
            system: None,
            tools: &[],
            tools_json: None,
            tool_choice: None,
            forced_among: &[],
            forced_input: None,
            temperature: None,
            stop_sequences: &[],
            stream: true,
            metadata: None,
            thinking: None,
            extra: None,
            cache_last_message: false,
            prefix: None,
        }
    }

    /// The same request as an owned [`MessagesRequest`] (with the breakpoint applied).
    pub fn to_request(&self) -> MessagesRequest {
        let mut messages = self.messages.to_vec();
        if self.cache_last_message
            && let Some(last) = messages.last_mut()
        {
            mark_last_block(last);
        }
        let mut req = MessagesRequest::new(self.model, self.max_tokens, messages);
        req.system = self.system.cloned();
        req.tools = self.tools.to_vec();
        req.tool_choice = self.tool_choice.cloned();
        req.temperature = self.temperature;
        req.stop_sequences = self.stop_sequences.to_vec();
        req.stream = self.stream;
        req.metadata = self.metadata.cloned();
        req.thinking = self.thinking.cloned();
        req.extra = self.extra.cloned().unwrap_or_default();
        req
    }

    /// The JSON body as chunks to send one after the other: the fixed fields, the serialized
    /// prefix's segments (shared, not copied), and the messages after it.
    pub fn body_chunks(&self) -> Result<Vec<Bytes>, serde_json::Error> {
        self.body_chunks_for(&CloudBody::default())
    }

    /// [`RequestView::body_chunks`] in a cloud's flavour of the body (Bedrock and Vertex AI name
    /// the model in the URL and the API version in the body).
    pub fn body_chunks_for(&self, cloud: &CloudBody<'_>) -> Result<Vec<Bytes>, serde_json::Error> {
        let mut head = serde_json::to_vec(&self.head(cloud))?;
        // `{…}` → `{…,"messages":[`
        head.pop();
        if head.len() > 1 {
            head.push(b',');
        }
        head.extend_from_slice(b"\"messages\":[");
        let (segments, start): (&[Bytes], usize) = match self.prefix {
            Some(p)
                if p.count() < self.messages.len() && p.encoding() == MessageEncoding::MESSAGES =>
            {
                (p.segments(), p.count())
            }
            _ => (&[], 0),
        };
        let mut tail = Vec::new();
        for (i, m) in self.messages.iter().enumerate().skip(start) {
            if i > 0 {
                tail.push(b',');
            }
            self.write_message(&mut tail, i, m)?;
        }
        tail.extend_from_slice(b"]}");
        Ok(body_from_parts(head, segments, tail))
    }

    fn write_message(
        &self,
        out: &mut Vec<u8>,
        index: usize,
        m: &Message,
    ) -> Result<(), serde_json::Error> {
        if self.cache_last_message && index + 1 == self.messages.len() {
            let mut marked = m.clone();
            mark_last_block(&mut marked);
            serde_json::to_writer(out, &marked)
        } else {
            serde_json::to_writer(out, m)
        }
    }

    fn head<'b>(&'b self, cloud: &CloudBody<'b>) -> Head<'b> {
        Head {
            anthropic_version: cloud.anthropic_version,
            anthropic_beta: cloud.anthropic_beta,
            model: (!cloud.omit_model).then_some(self.model),
            max_tokens: self.max_tokens,
            system: self.system,
            tools: if self.tools_json.is_some() {
                &[]
            } else {
                self.tools
            },
            tools_json: self.tools_json.filter(|_| !self.tools.is_empty()),
            tool_choice: self.tool_choice,
            temperature: self.temperature,
            stop_sequences: self.stop_sequences,
            stream: self.stream && !cloud.omit_stream,
            metadata: self.metadata,
            thinking: self.thinking,
            extra: self.extra,
        }
    }
}

/// How a cloud's body differs from the Messages API's: Bedrock's has `anthropic_version:
/// "bedrock-2023-05-31"`, the betas in `anthropic_beta`, and neither `model` nor `stream` (both
/// are in the URL); Vertex AI's has `anthropic_version: "vertex-2023-10-16"` and no `model`.
/// The default is the Messages API's own body.
#[derive(Debug, Clone, Copy, Default)]
pub struct CloudBody<'a> {
    /// `anthropic_version` written first in the body.
    pub anthropic_version: Option<&'a str>,
    /// `anthropic_beta` values written in the body (none: the field is left out).
    pub anthropic_beta: &'a [String],
    /// Leave `model` out.
    pub omit_model: bool,
    /// Leave `stream` out.
    pub omit_stream: bool,
}

impl MessagesRequest {
    /// A borrowed view of this request (no breakpoint added, no prefix).
    pub fn view(&self) -> RequestView<'_> {
        RequestView {
            model: &self.model,
            max_tokens: self.max_tokens,
            messages: &self.messages,
            system: self.system.as_ref(),
            tools: &self.tools,
            tools_json: None,
            tool_choice: self.tool_choice.as_ref(),
            forced_among: &[],
            forced_input: None,
            temperature: self.temperature,
            stop_sequences: &self.stop_sequences,
            stream: self.stream,
            metadata: self.metadata.as_ref(),
            thinking: self.thinking.as_ref(),
            extra: Some(&self.extra),
            cache_last_message: false,
            prefix: None,
        }
    }
}

/// Everything but the messages, serialized like [`MessagesRequest`]'s fields.
#[derive(Serialize)]
struct Head<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    anthropic_version: Option<&'a str>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    anthropic_beta: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<&'a SystemPrompt>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    tools: &'a [ToolDefinition],
    /// The same, serialized already (`tools` is then empty).
    #[serde(rename = "tools", skip_serializing_if = "Option::is_none")]
    tools_json: Option<&'a serde_json::value::RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<&'a ToolChoice>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    stop_sequences: &'a [String],
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata: Option<&'a Metadata>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<&'a ThinkingConfig>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    extra: Option<&'a JsonMap>,
}

impl Serialize for RequestView<'_> {
    /// The same JSON as [`RequestView::body_chunks`] joined (the prefix is not used).
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Messages<'b, 'a>(&'b RequestView<'a>);
        impl Serialize for Messages<'_, '_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let view = self.0;
                let mut seq = s.serialize_seq(Some(view.messages.len()))?;
                for (i, m) in view.messages.iter().enumerate() {
                    if view.cache_last_message && i + 1 == view.messages.len() {
                        let mut marked = m.clone();
                        mark_last_block(&mut marked);
                        seq.serialize_element(&marked)?;
                    } else {
                        seq.serialize_element(m)?;
                    }
                }
                seq.end()
            }
        }
        #[derive(Serialize)]
        struct Full<'b, 'a> {
            #[serde(flatten)]
            head: Head<'b>,
            messages: Messages<'b, 'a>,
        }
        Full {
            head: self.head(&CloudBody::default()),
            messages: Messages(self),
        }
        .serialize(serializer)
    }
}

/// A body as chunks to send one after the other: `head`, the shared `segments` (not copied),
/// `tail`; one chunk when it is small.
pub fn body_from_parts(head: Vec<u8>, segments: &[Bytes], tail: Vec<u8>) -> Vec<Bytes> {
    let total = head.len() + segments.iter().map(Bytes::len).sum::<usize>() + tail.len();
    if total <= SINGLE_CHUNK_BYTES {
        let mut one = head;
        one.reserve_exact(total - one.len());
        for s in segments {
            one.extend_from_slice(s);
        }
        one.extend_from_slice(&tail);
        return vec![Bytes::from(one)];
    }
    let mut chunks = Vec::with_capacity(segments.len() + 2);
    chunks.push(Bytes::from(head));
    chunks.extend(segments.iter().cloned());
    chunks.push(Bytes::from(tail));
    chunks
}

/// The elements of a JSON array being written, with a comma before each but the first.
#[derive(Debug)]
pub struct Elements<'a> {
    out: &'a mut Vec<u8>,
    count: usize,
}

impl<'a> Elements<'a> {
    /// Write into `out`, after `before` elements already written (in `out` or earlier).
    pub fn new(out: &'a mut Vec<u8>, before: usize) -> Self {
        Self { out, count: before }
    }

    /// Append one element.
    pub fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), serde_json::Error> {
        if self.count > 0 {
            self.out.push(b',');
        }
        serde_json::to_writer(&mut *self.out, value)?;
        self.count += 1;
        Ok(())
    }

    /// Elements written in all (those before included).
    pub fn count(&self) -> usize {
        self.count
    }
}

/// Writes one message as zero or more elements of a messages array.
pub type EncodeFn = fn(&Message, &mut Elements<'_>) -> Result<(), serde_json::Error>;

/// A wire format of the messages array: its name (what tells two formats apart) and how one
/// message is written.
#[derive(Clone, Copy)]
pub struct MessageEncoding {
    /// Unique name.
    pub name: &'static str,
    /// Writes a message.
    pub encode: EncodeFn,
}

impl MessageEncoding {
    /// The Messages API's: one element per message, the message as it is.
    pub const MESSAGES: Self = Self {
        name: "anthropic-messages",
        encode: encode_message,
    };
}

fn encode_message(m: &Message, out: &mut Elements<'_>) -> Result<(), serde_json::Error> {
    out.push(m)
}

impl PartialEq for MessageEncoding {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for MessageEncoding {}

impl std::fmt::Debug for MessageEncoding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl Default for MessageEncoding {
    fn default() -> Self {
        Self::MESSAGES
    }
}

/// Put a cache breakpoint on the last block of `msg` that can carry one.
pub fn mark_last_block(msg: &mut Message) {
    if let MessageContent::Text(t) = &msg.content {
        msg.content = MessageContent::Blocks(vec![ContentBlock::text(t.clone())]);
    }
    if let MessageContent::Blocks(blocks) = &mut msg.content
        && let Some(slot) = blocks
            .iter_mut()
            .rev()
            .find_map(ContentBlock::cache_control_mut)
    {
        *slot = Some(CacheControl::ephemeral());
    }
}

/// The first messages of a conversation, serialized once: `m0,m1,…` (the JSON array's elements
/// without brackets, in its [`MessageEncoding`]), in a few shared segments. Appending serializes
/// only the new messages; segments are merged so there are O(log n) of them, each byte being
/// copied O(log n) times over the whole conversation.
#[derive(Debug, Clone, Default)]
pub struct MessagesJson {
    segments: Vec<Bytes>,
    /// Messages serialized.
    count: usize,
    /// Array elements written for them.
    elements: usize,
    encoding: MessageEncoding,
}

impl MessagesJson {
    /// Nothing serialized yet, in the Messages API's encoding.
    pub fn new() -> Self {
        Self::default()
    }

    /// Nothing serialized yet, in `encoding`.
    pub fn with_encoding(encoding: MessageEncoding) -> Self {
        Self {
            encoding,
            ..Self::default()
        }
    }

    /// The wire format of the messages held.
    pub fn encoding(&self) -> MessageEncoding {
        self.encoding
    }

    /// How many messages are serialized.
    pub fn count(&self) -> usize {
        self.count
    }

    /// How many array elements they made (a message may make zero or several).
    pub fn elements(&self) -> usize {
        self.elements
    }

    /// Bytes of JSON held.
    pub fn len_bytes(&self) -> usize {
        self.segments.iter().map(Bytes::len).sum()
    }

    /// The serialized messages, in order.
    pub fn segments(&self) -> &[Bytes] {
        &self.segments
    }

    /// Forget everything (the messages were replaced).
    pub fn clear(&mut self) {
        self.segments.clear();
        self.count = 0;
        self.elements = 0;
    }

    /// Serialize `messages`, which follow the ones already held, and append them. On an error
    /// nothing is appended.
    pub fn extend(&mut self, messages: &[Message]) -> Result<(), serde_json::Error> {
        if messages.is_empty() {
            return Ok(());
        }
        let mut buf = Vec::new();
        let mut out = Elements::new(&mut buf, self.elements);
        for m in messages {
            (self.encoding.encode)(m, &mut out)?;
        }
        self.elements = out.count();
        self.count += messages.len();
        if buf.is_empty() {
            return Ok(());
        }
        self.segments.push(Bytes::from(buf));
        // Merge like a binary counter: only segments of about equal size, so sizes fall from
        // the first to the last and each byte is copied O(log n) times in all.
        while let [.., a, b] = self.segments.as_slice() {
            if a.len() > b.len() {
                break;
            }
            let mut merged = Vec::with_capacity(a.len() + b.len());
            merged.extend_from_slice(a);
            merged.extend_from_slice(b);
            self.segments.truncate(self.segments.len() - 2);
            self.segments.push(Bytes::from(merged));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::{Role, SystemBlock, ToolResultBlock};
    use serde_json::json;

    fn history(n: usize) -> Vec<Message> {
        let mut h = vec![Message::user_text("start")];
        for i in 0..n {
            h.push(Message::blocks(
                Role::Assistant,
                vec![ContentBlock::text(format!("answer {i} \"quoted\" ünïcode"))],
            ));
            h.push(Message::blocks(
                Role::User,
                vec![ContentBlock::ToolResult(ToolResultBlock::text(
                    format!("t{i}"),
                    "x".repeat(i * 37),
                    false,
                ))],
            ));
        }
        h
    }

    fn joined(chunks: &[Bytes]) -> serde_json::Value {
        let all: Vec<u8> = chunks.iter().flat_map(|c| c.iter().copied()).collect();
        serde_json::from_slice(&all).unwrap()
    }

    #[test]
    fn cloud_bodies_move_the_model_and_version() {
        let h = history(1);
        let view = RequestView::new("claude-sonnet-4-5", 100, &h);
        let betas = vec!["b1".to_owned()];
        let bedrock = joined(
            &view
                .body_chunks_for(&CloudBody {
                    anthropic_version: Some("bedrock-2023-05-31"),
                    anthropic_beta: &betas,
                    omit_model: true,
                    omit_stream: true,
                })
                .unwrap(),
        );
        assert_eq!(bedrock["anthropic_version"], "bedrock-2023-05-31");
        assert_eq!(bedrock["anthropic_beta"], json!(["b1"]));
        assert!(bedrock.get("model").is_none() && bedrock.get("stream").is_none());
        assert_eq!(bedrock["messages"].as_array().unwrap().len(), 3);
        let vertex = joined(
            &view
                .body_chunks_for(&CloudBody {
                    anthropic_version: Some("vertex-2023-10-16"),
                    omit_model: true,
                    ..CloudBody::default()
                })
                .unwrap(),
        );
        assert_eq!(vertex["stream"], true);
        assert!(vertex.get("model").is_none() && vertex.get("anthropic_beta").is_none());
        let plain = joined(&view.body_chunks().unwrap());
        assert_eq!(plain["model"], "claude-sonnet-4-5");
        assert!(plain.get("anthropic_version").is_none());
    }

    #[test]
    fn chunks_with_a_growing_prefix_equal_the_owned_request() {
        let system = SystemPrompt::Blocks(vec![SystemBlock {
            text: "sys".into(),
            cache_control: Some(CacheControl::ephemeral()),
        }]);
        let tools = vec![ToolDefinition {
            name: "Bash".into(),
            description: Some("run".into()),
            input_schema: json!({"type": "object"}).into(),
            cache_control: None,
            extra: JsonMap::new(),
        }];
        let h = history(200);
        let mut prefix = MessagesJson::new();
        for len in (1..h.len()).step_by(7) {
            let messages = &h[..len];
            prefix.extend(&messages[prefix.count()..len - 1]).unwrap();
            assert_eq!(prefix.count(), len - 1);
            let mut view = RequestView::new("m", 100, messages);
            view.system = Some(&system);
            view.tools = &tools;
            view.temperature = Some(0.5);
            view.cache_last_message = true;
            view.prefix = Some(&prefix);
            let expected = serde_json::to_value(view.to_request()).unwrap();
            assert_eq!(joined(&view.body_chunks().unwrap()), expected, "len {len}");
            assert_eq!(serde_json::to_value(view).unwrap(), expected);
        }
        // Few segments for many messages, and each byte copied only a few times.
        assert!(prefix.segments().len() <= 16, "{}", prefix.segments().len());
        assert!(prefix.len_bytes() > SINGLE_CHUNK_BYTES);
    }

    #[test]
    fn tools_serialized_ahead_give_the_same_bytes() {
        let tools = vec![
            ToolDefinition {
                name: "Bash".into(),
                description: Some("run \"it\"".into()),
                input_schema: json!({"type": "object", "properties": {"c": {"type": "string"}}})
                    .into(),
                cache_control: None,
                extra: JsonMap::new(),
            },
            ToolDefinition {
                name: "Read".into(),
                description: None,
                input_schema: json!({"type": "object"}).into(),
                cache_control: Some(CacheControl::ephemeral()),
                extra: JsonMap::new(),
            },
        ];
        let raw = serde_json::value::to_raw_value(&tools).unwrap();
        let h = history(3);
        let mut plain = RequestView::new("m", 100, &h);
        plain.tools = &tools;
        let mut ahead = plain;
        ahead.tools_json = Some(&raw);
        let bedrock = CloudBody {
            anthropic_version: Some("bedrock-2023-05-31"),
            omit_model: true,
            omit_stream: true,
            ..CloudBody::default()
        };
        for cloud in [CloudBody::default(), bedrock] {
            assert_eq!(
                ahead.body_chunks_for(&cloud).unwrap(),
                plain.body_chunks_for(&cloud).unwrap()
            );
        }
        assert_eq!(
            serde_json::to_string(&ahead).unwrap(),
            serde_json::to_string(&plain).unwrap()
        );
        assert_eq!(
            joined(&ahead.body_chunks().unwrap()),
            serde_json::to_value(plain.to_request()).unwrap()
        );
        // No tools offered: the field stays out, whatever was serialized.
        let mut none = RequestView::new("m", 100, &h);
        none.tools_json = Some(&raw);
        assert!(joined(&none.body_chunks().unwrap()).get("tools").is_none());
    }

    #[test]
    fn appending_copies_each_byte_a_logarithmic_number_of_times() {
        // Count the bytes copied by merges: equal-size appends, 1,024 of them.
        let one = Message::user_text("x".repeat(1000));
        let mut prefix = MessagesJson::new();
        let mut copied = 0usize;
        for _ in 0..1024 {
            let before: Vec<usize> = prefix.segments().iter().map(Bytes::len).collect();
            prefix.extend(std::slice::from_ref(&one)).unwrap();
            let after: Vec<usize> = prefix.segments().iter().map(Bytes::len).collect();
            // Segments that are not a prefix of the old list were built by merging.
            let kept = before
                .iter()
                .zip(&after)
                .take_while(|(a, b)| a == b)
                .count();
            copied += after[kept..].iter().sum::<usize>();
        }
        let total = prefix.len_bytes();
        // log2(1024) = 10 copies per byte at most, plus the fresh serialization.
        assert!(copied <= 11 * total, "{copied} bytes copied for {total}");
        assert!(prefix.segments().len() <= 11);
    }

    /// Writes "skip" user texts as nothing, every other message twice.
    fn twice_or_never(m: &Message, out: &mut Elements<'_>) -> Result<(), serde_json::Error> {
        if m.content == MessageContent::Text("skip".into()) {
            return Ok(());
        }
        out.push(m)?;
        out.push(m)
    }

    const TWICE: MessageEncoding = MessageEncoding {
        name: "twice",
        encode: twice_or_never,
    };

    #[test]
    fn messages_making_zero_or_several_elements_keep_the_commas_right() {
        let skip = Message::user_text("skip");
        let h = [
            skip.clone(),
            skip.clone(),
            Message::user_text("a"),
            skip.clone(),
            Message::user_text("b"),
            skip,
        ];
        for split in 0..=h.len() {
            let mut prefix = MessagesJson::with_encoding(TWICE);
            prefix.extend(&h[..split]).unwrap();
            prefix.extend(&h[split..]).unwrap();
            assert_eq!(prefix.count(), h.len());
            assert_eq!(prefix.elements(), 4);
            let mut all = b"[".to_vec();
            for s in prefix.segments() {
                all.extend_from_slice(s);
            }
            all.push(b']');
            let v: serde_json::Value = serde_json::from_slice(&all).unwrap();
            assert_eq!(
                v,
                json!([{"role": "user", "content": "a"}, {"role": "user", "content": "a"},
                       {"role": "user", "content": "b"}, {"role": "user", "content": "b"}]),
                "split {split}"
            );
        }
    }

    #[test]
    fn a_prefix_in_another_encoding_is_not_used() {
        let h = history(5);
        let mut prefix = MessagesJson::with_encoding(TWICE);
        prefix.extend(&h[..h.len() - 1]).unwrap();
        let mut view = RequestView::new("m", 100, &h);
        view.prefix = Some(&prefix);
        let expected = serde_json::to_value(view.to_request()).unwrap();
        assert_eq!(joined(&view.body_chunks().unwrap()), expected);
    }

    #[test]
    fn an_owned_request_round_trips_through_its_view() {
        let mut req = MessagesRequest::new("m", 10, history(3));
        req.stream = true;
        req.extra
            .insert("output_config".into(), json!({"effort": "low"}));
        let chunks = req.view().body_chunks().unwrap();
        assert_eq!(chunks.len(), 1);
        assert_eq!(joined(&chunks), serde_json::to_value(&req).unwrap());
        assert_eq!(req.view().to_request(), req);
    }
}
