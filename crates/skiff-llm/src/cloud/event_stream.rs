//! The AWS event stream (`application/vnd.amazon.eventstream`) that Bedrock's
//! `invoke-with-response-stream` answers with: binary messages, each a prelude (total length,
//! headers length, CRC-32 of the two), headers, a payload and a CRC-32 of the whole message.
//! Both CRCs are checked before anything of a message is used. A `chunk` event's payload is
//! `{"bytes": "<base64>"}` around one Messages API stream event, handed on as the same
//! [`SseEvent`] the Anthropic API's SSE gives; an `exception` message becomes the error it
//! names (throttling and overload are retried like the Anthropic API's).

use base64::Engine as _;

use crate::StreamError;
use crate::attempt::Framer;
use crate::error::AttemptError;
use crate::sse::SseEvent;

/// Largest message accepted (AWS's own limit is 16 MiB of payload and 128 KiB of headers).
const MAX_MESSAGE: usize = 24 * 1024 * 1024;
/// Prelude (12 bytes) and trailing CRC (4 bytes).
const OVERHEAD: usize = 16;

/// One decoded message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Message {
    /// String headers (other header types are skipped).
    pub headers: Vec<(String, String)>,
    /// The payload.
    pub payload: Vec<u8>,
}

impl Message {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

fn malformed(message: String) -> AttemptError {
    AttemptError::Stream(StreamError::Malformed(format!(
        "Bedrock event stream: {message}"
    )))
}

/// Incremental decoder: bytes in arbitrary chunks → messages.
#[derive(Debug, Default)]
pub(crate) struct Decoder {
    buf: Vec<u8>,
    /// Messages decoded so far (for error messages).
    count: usize,
}

impl Decoder {
    /// Feed bytes; complete messages are pushed onto `out`. An error (bad length, CRC
    /// mismatch, bad headers) ends decoding: nothing of that message is returned.
    pub(crate) fn feed(
        &mut self,
        chunk: &[u8],
        out: &mut Vec<Message>,
    ) -> Result<(), AttemptError> {
        self.buf.extend_from_slice(chunk);
        let mut start = 0;
        let result = loop {
            let rest = &self.buf[start..];
            if rest.len() < 12 {
                break Ok(());
            }
            let total = be32(&rest[0..4]) as usize;
            let headers_len = be32(&rest[4..8]) as usize;
            let prelude_crc = be32(&rest[8..12]);
            let n = self.count + 1;
            if crc32fast::hash(&rest[0..8]) != prelude_crc {
                break Err(malformed(format!(
                    "message {n}: prelude CRC mismatch (the response was corrupted)"
                )));
            }
            if !(OVERHEAD..=MAX_MESSAGE).contains(&total) || headers_len > total - OVERHEAD {
                break Err(malformed(format!(
                    "message {n}: impossible lengths (total {total}, headers {headers_len})"
                )));
            }
            if rest.len() < total {
                break Ok(());
            }
            let message_crc = be32(&rest[total - 4..total]);
            if crc32fast::hash(&rest[..total - 4]) != message_crc {
                break Err(malformed(format!(
                    "message {n}: message CRC mismatch (the response was corrupted)"
                )));
            }
            let headers = match parse_headers(&rest[12..12 + headers_len]) {
                Ok(h) => h,
                Err(e) => break Err(malformed(format!("message {n}: {e}"))),
            };
            out.push(Message {
                headers,
                payload: rest[12 + headers_len..total - 4].to_vec(),
            });
            self.count += 1;
            start += total;
        };
        self.buf.drain(..start);
        result
    }

    /// Bytes received that do not form a complete message.
    pub(crate) fn has_pending(&self) -> bool {
        !self.buf.is_empty()
    }
}

/// The headers of a message: `(name length u8, name, type u8, value)` until the end.
fn parse_headers(mut b: &[u8]) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let short = || "headers cut short".to_owned();
    while !b.is_empty() {
        let name_len = usize::from(b[0]);
        let name = b.get(1..1 + name_len).ok_or_else(short)?;
        let name = String::from_utf8_lossy(name).into_owned();
        b = &b[1 + name_len..];
        let kind = *b.first().ok_or_else(short)?;
        b = &b[1..];
        let fixed = match kind {
            0 | 1 => Some(0),
            2 => Some(1),
            3 => Some(2),
            4 => Some(4),
            5 | 8 => Some(8),
            9 => Some(16),
            6 | 7 => None,
            other => return Err(format!("header {name} has unknown type {other}")),
        };
        match fixed {
            Some(n) => b = b.get(n..).ok_or_else(short)?,
            None => {
                let len = b.get(0..2).ok_or_else(short)?;
                let len = usize::from(u16::from_be_bytes([len[0], len[1]]));
                let value = b.get(2..2 + len).ok_or_else(short)?;
                if kind == 7 {
                    out.push((name, String::from_utf8_lossy(value).into_owned()));
                }
                b = &b[2 + len..];
            }
        }
    }
    Ok(out)
}

/// Bedrock's exception names as the Messages API's error types (which the retry policy knows).
fn error_kind(exception: &str) -> &'static str {
    match exception
        .trim_end_matches("Exception")
        .to_ascii_lowercase()
        .as_str()
    {
        "throttling" | "toomanyrequests" => "rate_limit_error",
        "serviceunavailable" => "overloaded_error",
        "internalserver" | "modelstreamerror" => "api_error",
        "modeltimeout" => "timeout_error",
        "accessdenied" | "unrecognizedclient" | "expiredtoken" => "permission_error",
        "resourcenotfound" => "not_found_error",
        _ => "invalid_request_error",
    }
}

/// Bedrock's response stream as a [`Framer`]: `chunk` events become SSE events holding the
/// Messages API event JSON.
#[derive(Debug, Default)]
pub(crate) struct BedrockFramer {
    decoder: Decoder,
    messages: Vec<Message>,
}

impl BedrockFramer {
    fn convert(&mut self, out: &mut Vec<SseEvent>) -> Result<(), AttemptError> {
        for m in self.messages.drain(..) {
            match m.header(":message-type").unwrap_or("event") {
                "event" => {
                    if m.header(":event-type") != Some("chunk") {
                        continue;
                    }
                    let v: serde_json::Value = serde_json::from_slice(&m.payload)
                        .map_err(|e| malformed(format!("chunk payload is not JSON: {e}")))?;
                    let b64 = v
                        .get("bytes")
                        .and_then(serde_json::Value::as_str)
                        .ok_or_else(|| malformed("chunk payload has no `bytes`".to_owned()))?;
                    let bytes = base64::engine::general_purpose::STANDARD
                        .decode(b64)
                        .map_err(|e| malformed(format!("chunk `bytes` is not base64: {e}")))?;
                    let data = String::from_utf8(bytes)
                        .map_err(|_| malformed("chunk `bytes` is not UTF-8".to_owned()))?;
                    out.push(SseEvent {
                        event: Some("chunk".to_owned()),
                        data,
                    });
                }
                "exception" => {
                    let name = m
                        .header(":exception-type")
                        .unwrap_or("exception")
                        .to_owned();
                    let message = serde_json::from_slice::<serde_json::Value>(&m.payload)
                        .ok()
                        .and_then(|v| {
                            v.get("message")
                                .or_else(|| v.get("Message"))
                                .and_then(serde_json::Value::as_str)
                                .map(str::to_owned)
                        })
                        .unwrap_or_else(|| String::from_utf8_lossy(&m.payload).into_owned());
                    return Err(AttemptError::ErrorEvent {
                        kind: error_kind(&name).to_owned(),
                        message: format!("{name}: {message}"),
                    });
                }
                _ => {
                    let code = m.header(":error-code").unwrap_or("error").to_owned();
                    let message = m.header(":error-message").unwrap_or_default().to_owned();
                    return Err(AttemptError::ErrorEvent {
                        kind: error_kind(&code).to_owned(),
                        message: format!("{code}: {message}"),
                    });
                }
            }
        }
        Ok(())
    }
}

impl Framer for BedrockFramer {
    fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), AttemptError> {
        let decoded = self.decoder.feed(chunk, &mut self.messages);
        // The messages before a broken one are good: hand them on, then the error.
        self.convert(out)?;
        decoded
    }

    fn finish(&mut self, out: &mut Vec<SseEvent>) -> Result<(), AttemptError> {
        self.convert(out)?;
        if self.decoder.has_pending() {
            // A message cut off: the connection dropped (retried like a cut SSE stream).
            return Err(AttemptError::Stream(StreamError::Truncated(
                "the Bedrock event stream ended inside a message".into(),
            )));
        }
        Ok(())
    }
}

/// Encode one message with string headers (tests and the test kit's mirror image).
#[cfg(test)]
pub(crate) fn encode(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut h = Vec::new();
    for (n, v) in headers {
        h.push(n.len() as u8);
        h.extend_from_slice(n.as_bytes());
        h.push(7);
        h.extend_from_slice(&(v.len() as u16).to_be_bytes());
        h.extend_from_slice(v.as_bytes());
    }
    let total = (OVERHEAD + h.len() + payload.len()) as u32;
    let mut m = Vec::new();
    m.extend_from_slice(&total.to_be_bytes());
    m.extend_from_slice(&(h.len() as u32).to_be_bytes());
    let crc = crc32fast::hash(&m);
    m.extend_from_slice(&crc.to_be_bytes());
    m.extend_from_slice(&h);
    m.extend_from_slice(payload);
    let crc = crc32fast::hash(&m);
    m.extend_from_slice(&crc.to_be_bytes());
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(event_json: &str) -> Vec<u8> {
        let b64 = base64::engine::general_purpose::STANDARD.encode(event_json);
        encode(
            &[
                (":event-type", "chunk"),
                (":content-type", "application/json"),
                (":message-type", "event"),
            ],
            format!(r#"{{"bytes":"{b64}","p":"abcd"}}"#).as_bytes(),
        )
    }

    #[test]
    fn chunks_split_anywhere_decode_to_the_same_events() {
        let mut all = chunk(r#"{"type":"message_start","message":{}}"#);
        all.extend(chunk(r#"{"type":"ping"}"#));
        for cut in 0..=all.len() {
            let mut f = BedrockFramer::default();
            let mut out = Vec::new();
            f.feed(&all[..cut], &mut out).unwrap();
            f.feed(&all[cut..], &mut out).unwrap();
            f.finish(&mut out).unwrap();
            assert_eq!(out.len(), 2, "cut at {cut}");
            assert_eq!(out[1].data, r#"{"type":"ping"}"#);
        }
    }

    #[test]
    fn a_corrupted_crc_is_a_clear_error_and_nothing_of_it_is_used() {
        let good = chunk(r#"{"type":"ping"}"#);
        for (at, what) in [(9, "prelude CRC"), (20, "message CRC")] {
            let mut bad = chunk(r#"{"type":"content_block_delta","delta":{"text":"GARBAGE"}}"#);
            bad[at] ^= 0x55;
            let mut stream = good.clone();
            stream.extend(bad);
            let mut f = BedrockFramer::default();
            let mut out = Vec::new();
            let err = f.feed(&stream, &mut out).unwrap_err();
            assert_eq!(out.len(), 1, "the good message before it still counts");
            assert!(!out.iter().any(|e| e.data.contains("GARBAGE")));
            let text = err.to_string();
            assert!(text.contains(what) && text.contains("message 2"), "{text}");
        }
    }

    #[test]
    fn exceptions_become_retryable_error_events() {
        let m = encode(
            &[
                (":message-type", "exception"),
                (":exception-type", "throttlingException"),
            ],
            br#"{"message":"Too many requests, please wait."}"#,
        );
        let mut f = BedrockFramer::default();
        let err = f.feed(&m, &mut Vec::new()).unwrap_err();
        assert_eq!(
            err,
            AttemptError::ErrorEvent {
                kind: "rate_limit_error".into(),
                message: "throttlingException: Too many requests, please wait.".into()
            }
        );
        assert_eq!(
            error_kind("serviceUnavailableException"),
            "overloaded_error"
        );
        assert_eq!(error_kind("validationException"), "invalid_request_error");
    }

    #[test]
    fn a_message_cut_off_is_a_truncated_stream() {
        let m = chunk(r#"{"type":"ping"}"#);
        let mut f = BedrockFramer::default();
        let mut out = Vec::new();
        f.feed(&m[..m.len() - 3], &mut out).unwrap();
        assert!(matches!(
            f.finish(&mut out),
            Err(AttemptError::Stream(StreamError::Truncated(_)))
        ));
    }

    #[test]
    fn other_header_types_are_skipped() {
        // A bool, an int and a bytes header before the string one.
        let mut h = vec![1, b'a', 0, 1, b'b', 4, 0, 0, 0, 7, 1, b'c', 6, 0, 2, 9, 9];
        h.extend([3, b'x', b'y', b'z', 7, 0, 1, b'v']);
        assert_eq!(parse_headers(&h).unwrap(), vec![("xyz".into(), "v".into())]);
        assert!(parse_headers(&[5, b'a']).is_err());
    }
}
