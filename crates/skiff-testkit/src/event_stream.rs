//! Bedrock's response framing for the mock: the AWS event stream (binary messages with a
//! prelude, string headers, a payload and two CRC-32s), each `chunk` event carrying one
//! Messages API stream event as base64 in `{"bytes": …}`; exceptions as `exception` messages.
//! Written independently of skiff's decoder, from the format's description.

use base64::Engine as _;
use bytes::Bytes;
use skiff_protocol::StreamEvent;

/// One message with string headers.
pub fn encode_message(headers: &[(&str, &str)], payload: &[u8]) -> Bytes {
    let mut h = Vec::new();
    for (name, value) in headers {
        h.push(name.len() as u8);
        h.extend_from_slice(name.as_bytes());
        h.push(7); // string
        h.extend_from_slice(&(value.len() as u16).to_be_bytes());
        h.extend_from_slice(value.as_bytes());
    }
    let total = (12 + h.len() + payload.len() + 4) as u32;
    let mut m = Vec::with_capacity(total as usize);
    m.extend_from_slice(&total.to_be_bytes());
    m.extend_from_slice(&(h.len() as u32).to_be_bytes());
    let prelude_crc = crc32fast::hash(&m);
    m.extend_from_slice(&prelude_crc.to_be_bytes());
    m.extend_from_slice(&h);
    m.extend_from_slice(payload);
    let crc = crc32fast::hash(&m);
    m.extend_from_slice(&crc.to_be_bytes());
    Bytes::from(m)
}

/// A `chunk` event around one stream event.
pub fn chunk_frame(event: &StreamEvent) -> serde_json::Result<Bytes> {
    Ok(chunk_of(&serde_json::to_vec(event)?))
}

fn chunk_of(json: &[u8]) -> Bytes {
    let b64 = base64::engine::general_purpose::STANDARD.encode(json);
    let payload = serde_json::json!({"bytes": b64, "p": "abcdefghijklmnopqrstuvwxyz"}).to_string();
    encode_message(
        &[
            (":event-type", "chunk"),
            (":content-type", "application/json"),
            (":message-type", "event"),
        ],
        payload.as_bytes(),
    )
}

/// A `chunk` whose text is `GARBAGE` and whose message CRC is wrong (the `malformed` fault):
/// a client must reject it whole.
pub fn corrupted_frame() -> Bytes {
    let event = br#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"GARBAGE"}}"#;
    let mut m = chunk_of(event).to_vec();
    let last = m.len() - 1;
    m[last] ^= 0xff;
    Bytes::from(m)
}

/// An `exception` message for a Messages API error type (the `error_event` fault).
pub fn exception_frame(error_type: &str, message: &str) -> Bytes {
    let name = match error_type {
        "rate_limit_error" => "throttlingException",
        "overloaded_error" => "serviceUnavailableException",
        "api_error" => "internalServerException",
        "timeout_error" => "modelTimeoutException",
        _ => "validationException",
    };
    let payload = serde_json::json!({ "message": message }).to_string();
    encode_message(
        &[
            (":exception-type", name),
            (":content-type", "application/json"),
            (":message-type", "exception"),
        ],
        payload.as_bytes(),
    )
}
