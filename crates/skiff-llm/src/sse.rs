//! Incremental Server-Sent Events decoder: bytes in arbitrary chunks → complete events.
//!
//! Written for this crate rather than taken from a crate because it must be fed synchronously
//! (the accumulator tests split recorded streams at every byte boundary, the throughput bench
//! feeds raw buffers) and sits on the per-token hot path. It follows the WHATWG framing rules:
//! lines end in `\n`, `\r\n` or `\r`; a blank line dispatches; `:` starts a comment; `data`
//! lines are joined with `\n`; one leading space after the colon is dropped.

/// One dispatched SSE event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, if any.
    pub event: Option<String>,
    /// The joined `data:` lines.
    pub data: String,
}

/// Streaming decoder state.
#[derive(Debug, Default)]
pub struct SseDecoder {
    buf: Vec<u8>,
    /// The previous chunk ended in `\r`: a leading `\n` of the next chunk belongs to it.
    skip_lf: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
    started: bool,
}

impl SseDecoder {
    /// A fresh decoder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feed a chunk; complete events are pushed onto `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) {
        let mut chunk = chunk;
        if self.skip_lf {
            self.skip_lf = false;
            if let Some(rest) = chunk.strip_prefix(b"\n") {
                chunk = rest;
            }
        }
        if !self.started && !chunk.is_empty() {
            self.started = true;
            if let Some(rest) = chunk.strip_prefix("\u{feff}".as_bytes()) {
                chunk = rest;
            }
        }
        let mut start = 0;
        let mut i = 0;
        while i < chunk.len() {
            match chunk[i] {
                b'\n' => {
                    self.line_end(&chunk[start..i], out);
                    i += 1;
                    start = i;
                }
                b'\r' => {
                    self.line_end(&chunk[start..i], out);
                    i += 1;
                    if i == chunk.len() {
                        self.skip_lf = true;
                    } else if chunk[i] == b'\n' {
                        i += 1;
                    }
                    start = i;
                }
                _ => {
                    // Jump to the next line terminator quickly.
                    i += memchr::memchr2(b'\n', b'\r', &chunk[i..]).unwrap_or(chunk.len() - i);
                }
            }
        }
        self.buf.extend_from_slice(&chunk[start..]);
    }

    /// End of input: dispatch an event whose final blank line never came (some servers and
    /// recorded files end without it). The caller decides whether the data is complete.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) {
        self.skip_lf = false;
        if !self.buf.is_empty() {
            let line = std::mem::take(&mut self.buf);
            self.process_line(&line, out);
        }
        self.process_line(b"", out);
    }

    /// Bytes received that do not yet form a complete event.
    pub fn has_pending(&self) -> bool {
        !self.buf.is_empty() || self.has_data || self.event.is_some()
    }

    fn line_end(&mut self, tail: &[u8], out: &mut Vec<SseEvent>) {
        if self.buf.is_empty() {
            self.process_line(tail, out);
        } else {
            let mut line = std::mem::take(&mut self.buf);
            line.extend_from_slice(tail);
            self.process_line(&line, out);
        }
    }

    fn process_line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            if self.has_data {
                out.push(SseEvent {
                    event: self.event.take(),
                    data: std::mem::take(&mut self.data),
                });
            } else {
                self.event = None;
            }
            self.has_data = false;
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(p) => {
                let v = &line[p + 1..];
                (&line[..p], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&String::from_utf8_lossy(value));
                self.has_data = true;
            }
            b"event" => self.event = Some(String::from_utf8_lossy(value).into_owned()),
            _ => {} // id, retry and unknown fields carry nothing we use
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        for c in chunks {
            d.feed(c, &mut out);
        }
        out
    }

    #[test]
    fn basic_event() {
        let ev = decode_all(&[b"event: ping\ndata: {\"type\":\"ping\"}\n\n"]);
        assert_eq!(
            ev,
            vec![SseEvent {
                event: Some("ping".into()),
                data: "{\"type\":\"ping\"}".into()
            }]
        );
    }

    #[test]
    fn crlf_cr_comments_multiline_and_bom() {
        let input = "\u{feff}: comment\r\nevent: a\r\ndata: 1\r\ndata:2\r\r\ndata: x\rid: 7\r\n\n";
        let bytes = input.as_bytes();
        // Every split point gives the same result.
        for cut in 0..=bytes.len() {
            let ev = decode_all(&[&bytes[..cut], &bytes[cut..]]);
            assert_eq!(
                ev,
                vec![
                    SseEvent {
                        event: Some("a".into()),
                        data: "1\n2".into()
                    },
                    SseEvent {
                        event: None,
                        data: "x".into()
                    }
                ],
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn event_without_data_is_not_dispatched_and_partial_is_pending() {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        d.feed(b"event: x\n\ndata: half", &mut out);
        assert!(out.is_empty());
        assert!(d.has_pending());
        d.feed(b"\n\n", &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].event, None);
        assert!(!d.has_pending());
    }

    #[test]
    fn finish_dispatches_an_unterminated_event() {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        d.feed(
            b"event: message_stop
data: {}",
            &mut out,
        );
        assert!(out.is_empty());
        d.finish(&mut out);
        assert_eq!(out[0].event.as_deref(), Some("message_stop"));
        assert!(!d.has_pending());
        d.finish(&mut out);
        assert_eq!(out.len(), 1, "finish twice dispatches nothing new");
    }

    #[test]
    fn multibyte_split_inside_a_character() {
        let bytes = "data: héllo\n\n".as_bytes();
        for cut in 0..=bytes.len() {
            let ev = decode_all(&[&bytes[..cut], &bytes[cut..]]);
            assert_eq!(ev[0].data, "héllo", "cut at {cut}");
        }
    }
}
