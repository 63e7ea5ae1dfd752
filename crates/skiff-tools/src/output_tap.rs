//! [`OutputTap`]: where a running command's output goes as it arrives (an editor shows it in
//! the call live), besides the result that comes when the command ends. Chunks are decoded as
//! UTF-8 across read boundaries.

use std::sync::{Arc, Mutex};

/// Receives a running call's output, text chunk by text chunk, in order.
#[derive(Clone)]
pub struct OutputTap {
    send: Arc<dyn Fn(&str) + Send + Sync>,
    /// The bytes of a character cut by a read boundary, kept for the next chunk.
    carry: Arc<Mutex<Vec<u8>>>,
}

impl std::fmt::Debug for OutputTap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputTap").finish_non_exhaustive()
    }
}

impl OutputTap {
    /// A tap calling `send` with each chunk of text.
    pub fn new(send: impl Fn(&str) + Send + Sync + 'static) -> Self {
        Self {
            send: Arc::new(send),
            carry: Arc::default(),
        }
    }

    /// Bytes the command wrote: passed on as text (invalid UTF-8 replaced; a character cut at
    /// the end waits for the rest).
    pub fn bytes(&self, data: &[u8]) {
        let text = {
            let Ok(mut carry) = self.carry.lock() else {
                return;
            };
            carry.extend_from_slice(data);
            let valid = match std::str::from_utf8(&carry) {
                Ok(_) => carry.len(),
                Err(e) if e.error_len().is_none() => e.valid_up_to(),
                Err(_) => carry.len(),
            };
            let rest = carry.split_off(valid);
            let text = String::from_utf8_lossy(&carry).into_owned();
            *carry = rest;
            text
        };
        if !text.is_empty() {
            (self.send)(&text);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn characters_cut_by_a_read_are_joined() {
        let got = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&got);
        let tap = OutputTap::new(move |t| sink.lock().unwrap().push_str(t));
        let bytes = "héllo ✓".as_bytes();
        for b in bytes {
            tap.bytes(std::slice::from_ref(b));
        }
        assert_eq!(*got.lock().unwrap(), "héllo ✓");
        tap.bytes(&[0xff, b'x']);
        assert!(got.lock().unwrap().ends_with("\u{fffd}x"));
    }
}
