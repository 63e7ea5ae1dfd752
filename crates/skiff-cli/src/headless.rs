//! Print mode (`skiff -p`): send the prompt, stream the answer's text to stdout as it arrives,
//! announce retries on stderr.

use std::io::Write;

use anyhow::Context;
use futures::StreamExt;
use skiff_llm::{CancellationToken, LlmError, Provider, ProviderEvent};
use skiff_protocol::{Delta, Message, MessagesRequest, StreamEvent};

/// Ask the model once and stream its text to `out`.
pub async fn run_print(
    provider: &dyn Provider,
    model: &str,
    max_tokens: u32,
    prompt: String,
    cancel: CancellationToken,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let mut request = MessagesRequest::new(model, max_tokens, vec![Message::user_text(prompt)]);
    request.stream = true;
    let mut stream = provider.stream(&request, cancel);
    let mut printed_any = false;
    let mut ends_with_newline = false;
    while let Some(item) = stream.next().await {
        match item {
            Ok(ProviderEvent::Stream(StreamEvent::ContentBlockDelta {
                delta: Delta::TextDelta { text },
                ..
            })) => {
                out.write_all(text.as_bytes())
                    .context("writing to stdout")?;
                out.flush().context("writing to stdout")?;
                printed_any |= !text.is_empty();
                ends_with_newline = text.ends_with('\n');
            }
            Ok(ProviderEvent::Retry(n)) => {
                if n.discard_partial && printed_any {
                    writeln!(out).ok();
                    eprintln!("[skiff] the response above was cut off; it will be sent again");
                    printed_any = false;
                }
                eprintln!(
                    "[skiff] {}; retrying in {:.1}s (retry {}/{})",
                    n.cause,
                    n.wait.as_secs_f64(),
                    n.attempt,
                    n.max_retries
                );
            }
            Ok(ProviderEvent::Done(_)) => break,
            Ok(_) => {}
            Err(LlmError::Cancelled) => anyhow::bail!(LlmError::Cancelled),
            Err(e) => return Err(e.into()),
        }
    }
    if printed_any && !ends_with_newline {
        writeln!(out).context("writing to stdout")?;
    }
    Ok(())
}
