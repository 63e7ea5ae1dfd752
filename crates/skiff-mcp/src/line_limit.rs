//! A bound on one message of a stdio server (one line of newline-delimited JSON-RPC), so that
//! a message too large fails the call it answers instead of leaving it waiting: rmcp drops an
//! oversized line silently, and the request it answered would never end.
//!
//! [`LineLimit`] sits between the server's stdout and rmcp's line reader. Lines up to the limit
//! pass through as they come; a longer one is cut off (rmcp gets an unparsable fragment, which
//! it ignores) and, once it ends, replaced by a JSON-RPC error answering the same request id
//! (found at the start or the end of the line: servers put `id` before or after `result`). A
//! too-large request or notification from the server is dropped; a too-large answer whose id
//! cannot be found closes the connection (every pending call fails, the server is started
//! again on the next call), with the reason kept for the error message.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use serde_json::{Value, json};
use tokio::io::{AsyncRead, ReadBuf};

/// Default largest message a server may send: 16 MiB, as rmcp's own line and SSE event limits.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// What marks the error skiff puts in place of a message that was too large.
pub(crate) const TOO_LARGE_MARK: &str = "skiff/message-too-large";

/// How much of the start and of the end of an oversized line is kept to find its id.
const KEEP: usize = 4096;

/// Why a connection was closed by the limit, when it was (shared with the client).
pub(crate) type ClosedReason = Arc<Mutex<Option<String>>>;

/// The server's stdout, with each line bounded to `limit` bytes.
pub(crate) struct LineLimit<R> {
    inner: R,
    limit: usize,
    /// Bytes of the current line so far (without its newline).
    len: usize,
    /// The first [`KEEP`] bytes of the current line.
    head: Vec<u8>,
    /// The last [`KEEP`] bytes of an oversized line.
    tail: VecDeque<u8>,
    /// The current line went over the limit: its bytes are dropped until its newline.
    oversized: bool,
    /// Bytes to hand out before reading more.
    pending: VecDeque<u8>,
    /// Set when the connection must end: reads give end-of-file once `pending` is out.
    closed: ClosedReason,
    scratch: Vec<u8>,
}

impl<R> LineLimit<R> {
    /// Bound the lines read from `inner` to `limit` bytes; `closed` receives the reason when the
    /// limit ends the connection.
    pub(crate) fn new(inner: R, limit: usize, closed: ClosedReason) -> Self {
        Self {
            inner,
            limit,
            len: 0,
            head: Vec::new(),
            tail: VecDeque::new(),
            oversized: false,
            pending: VecDeque::new(),
            closed,
            scratch: vec![0; 64 * 1024],
        }
    }

    fn is_closed(&self) -> bool {
        self.closed.lock().map(|c| c.is_some()).unwrap_or(true)
    }

    /// Take the bytes read from the server; what passes goes to `out`.
    fn feed(&mut self, mut data: &[u8], out: &mut Vec<u8>) {
        while !data.is_empty() && !self.is_closed() {
            let newline = data.iter().position(|b| *b == b'\n');
            let (part, rest) = match newline {
                Some(i) => (&data[..i], &data[i + 1..]),
                None => (data, &data[data.len()..]),
            };
            data = rest;
            if !self.oversized && self.len + part.len() > self.limit {
                self.oversized = true;
                // End the fragment rmcp holds: it cannot parse it and skips it.
                out.push(b'\n');
            }
            let keep = KEEP.saturating_sub(self.head.len()).min(part.len());
            self.head.extend_from_slice(&part[..keep]);
            self.len += part.len();
            if self.oversized {
                self.tail.extend(part);
                let extra = self.tail.len().saturating_sub(KEEP);
                self.tail.drain(..extra);
            } else {
                out.extend_from_slice(part);
            }
            if newline.is_some() {
                if self.oversized {
                    self.finish_oversized(out);
                } else {
                    out.push(b'\n');
                }
                self.len = 0;
                self.head.clear();
                self.tail.clear();
                self.oversized = false;
            }
        }
    }

    /// An oversized line ended: answer its request with an error, drop it, or close.
    fn finish_oversized(&mut self, out: &mut Vec<u8>) {
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let found = top_level_head(&self.head).or_else(|| top_level_tail(&tail));
        let size = self.len;
        tracing::warn!(
            bytes = size,
            limit = self.limit,
            "MCP server sent a message larger than the limit"
        );
        match found {
            Some(Found { method: true, .. }) => {
                // A request or notification of the server's: nobody waits on it here.
            }
            Some(Found {
                id: Some(id),
                method: false,
            }) => {
                let answer = json!({
                    "jsonrpc": "2.0",
                    "id": id,
                    "error": {
                        "code": -32603,
                        "message": format!(
                            "the server's answer ({size} bytes) is larger than the {} bytes \
                             skiff accepts for one message",
                            self.limit
                        ),
                        "data": {"kind": TOO_LARGE_MARK, "bytes": size, "limit": self.limit},
                    },
                });
                out.extend_from_slice(answer.to_string().as_bytes());
                out.push(b'\n');
            }
            _ => {
                if let Ok(mut closed) = self.closed.lock() {
                    *closed = Some(format!(
                        "it sent a message of {size} bytes, larger than the {} bytes skiff \
                         accepts for one message, and which request it answered could not be \
                         told",
                        self.limit
                    ));
                }
            }
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for LineLimit<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        loop {
            if !this.pending.is_empty() {
                let n = this.pending.len().min(buf.remaining());
                let bytes: Vec<u8> = this.pending.drain(..n).collect();
                buf.put_slice(&bytes);
                return Poll::Ready(Ok(()));
            }
            if this.is_closed() {
                return Poll::Ready(Ok(()));
            }
            let mut scratch = std::mem::take(&mut this.scratch);
            let mut read = ReadBuf::new(&mut scratch);
            let polled = Pin::new(&mut this.inner).poll_read(cx, &mut read);
            let filled = read.filled().len();
            let was_pending = polled.is_pending();
            let result = match polled {
                Poll::Pending => None,
                Poll::Ready(Err(e)) => Some(Err(e)),
                Poll::Ready(Ok(())) if filled == 0 => Some(Ok(())),
                Poll::Ready(Ok(())) => {
                    let mut out = Vec::new();
                    this.feed(&scratch[..filled], &mut out);
                    this.pending.extend(out);
                    None
                }
            };
            this.scratch = scratch;
            match result {
                Some(r) => return Poll::Ready(r),
                None if was_pending => return Poll::Pending,
                // Data was read (maybe all dropped): hand it out, or read on.
                None => {}
            }
        }
    }
}

/// What the visible part of an oversized message says about it.
#[derive(Debug, Clone, PartialEq)]
struct Found {
    /// Its `id`, when it has one.
    id: Option<Value>,
    /// It has a `method` (a request or notification, not an answer).
    method: bool,
}

/// The top-level `id` and `method` of a message from its first bytes: the members before the
/// first one whose value is an object or an array (`{"jsonrpc":"2.0","id":7,"result":{…`).
fn top_level_head(head: &[u8]) -> Option<Found> {
    let text = String::from_utf8_lossy(head);
    let mut rest = text.trim_start().strip_prefix('{')?;
    let mut found = Found {
        id: None,
        method: false,
    };
    loop {
        rest = rest.trim_start();
        let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<String>();
        let key = stream.next()?.ok()?;
        rest = rest[stream.byte_offset()..]
            .trim_start()
            .strip_prefix(':')?;
        rest = rest.trim_start();
        if rest.starts_with(['{', '[']) {
            break;
        }
        let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        let value = stream.next()?.ok()?;
        rest = &rest[stream.byte_offset()..];
        match key.as_str() {
            "id" => found.id = Some(value),
            "method" => found.method = true,
            _ => {}
        }
        rest = rest.trim_start().strip_prefix(',')?;
    }
    (found.id.is_some() || found.method).then_some(found)
}

/// The top-level `id` and `method` of a message from its last bytes: the longest run of
/// scalar members that closes the object (`…]},"jsonrpc":"2.0","id":7}`).
fn top_level_tail(tail: &[u8]) -> Option<Found> {
    let text = String::from_utf8_lossy(tail);
    let text = text.trim_end();
    let mut best = None;
    for (i, _) in text
        .match_indices(',')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .take(32)
    {
        let candidate = format!("{{{}", &text[i + 1..]);
        match serde_json::from_str::<serde_json::Map<String, Value>>(&candidate) {
            Ok(map) => {
                best = Some(Found {
                    id: map.get("id").cloned(),
                    method: map.contains_key("method"),
                });
            }
            // A member whose value started before the cut: nothing further left is top level.
            Err(_) if best.is_some() => break,
            Err(_) => {}
        }
    }
    best.filter(|f| f.id.is_some() || f.method)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use tokio::io::AsyncReadExt;

    async fn through(input: Vec<u8>, limit: usize) -> (String, Option<String>) {
        let closed: ClosedReason = Arc::default();
        let mut r = LineLimit::new(&input[..], limit, Arc::clone(&closed));
        let mut out = Vec::new();
        r.read_to_end(&mut out).await.unwrap();
        let reason = closed.lock().unwrap().clone();
        (String::from_utf8(out).unwrap(), reason)
    }

    fn big(n: usize) -> String {
        "x".repeat(n)
    }

    #[tokio::test]
    async fn small_lines_pass_and_a_large_answer_becomes_an_error_for_its_id() {
        let msg = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"t\":\"ok\"}}}}\n{{\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"{}\"}}]}},\"jsonrpc\":\"2.0\",\"id\":7}}\n{{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{{}}}}\n",
            big(5000)
        );
        let (out, closed) = through(msg.into_bytes(), 1000).await;
        assert!(closed.is_none());
        // The first message, the error in place of the second (after whatever fragment of it
        // went through), then the third.
        let lines: Vec<&str> = out.lines().filter(|l| !l.is_empty()).collect();
        assert_eq!(lines[0], r#"{"jsonrpc":"2.0","id":1,"result":{"t":"ok"}}"#);
        let error: Value = serde_json::from_str(lines[lines.len() - 2]).unwrap();
        assert_eq!(error["id"], 7);
        assert_eq!(error["error"]["data"]["kind"], TOO_LARGE_MARK);
        assert_eq!(
            lines[lines.len() - 1],
            r#"{"jsonrpc":"2.0","id":8,"result":{}}"#
        );
        assert!(!out.contains("xxxx"), "the oversized line went through");
    }

    #[tokio::test]
    async fn the_id_is_found_at_the_start_and_requests_are_dropped() {
        let msg = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":\"a-1\",\"result\":{{\"text\":\"{}\",\"id\":99}}}}\n{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{\"d\":\"{}\"}}}}\n",
            big(3000),
            big(3000)
        );
        let (out, closed) = through(msg.into_bytes(), 1000).await;
        assert!(closed.is_none());
        let errors: Vec<Value> = out
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .collect();
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0]["id"], "a-1");
    }

    #[tokio::test]
    async fn an_answer_without_a_findable_id_closes_the_connection() {
        let msg = format!(
            "{{\"result\":{{\"text\":\"{}\"}}}}\n{{\"id\":3}}\n",
            big(3000)
        );
        let (_, closed) = through(msg.into_bytes(), 1000).await;
        assert!(closed.unwrap().contains("larger than the 1000 bytes"));
    }

    #[test]
    fn nested_ids_are_not_taken_for_the_message_id() {
        assert_eq!(top_level_tail(br#"xx","id":5}]}}"#), None);
        assert_eq!(
            top_level_tail(br#"x"}]},"id":5,"jsonrpc":"2.0"}"#)
                .unwrap()
                .id,
            Some(json!(5))
        );
        assert_eq!(top_level_head(br#"{"result":{"id":5"#), None);
    }
}
