//! What the summariser is sent: our summary prompt, the older history rendered as a plain-text
//! transcript, and the reminder block that carries the summary back into the history.

use std::collections::HashMap;

use skiff_protocol::{
    ContentBlock, Message, MessageContent, MessagesRequest, Role, SystemPrompt, ToolResultContent,
};

use crate::memory::is_memory_block;

/// The system prompt of the summary call.
pub const SUMMARY_PROMPT: &str = "\
You are summarising the earlier part of a coding session between a user and an AI coding agent, \
so that the agent can continue the work with your summary in place of that part of the \
conversation. The first user message and the most recent messages are kept verbatim; you are \
shown the part in between (and the first message, for context).

Write a terse, structured summary in Markdown with these sections, omitting a section only when \
it would be empty:

1. User instructions and goals: every request, constraint and preference the user stated, \
quoted or closely paraphrased, including later changes of mind.
2. Decisions: what was decided or ruled out, and why.
3. Files: every file path read, created or modified, one line each on what was done or learned.
4. Commands: commands run that matter, with their results (pass/fail, key output lines, numbers).
5. Errors and fixes: each error met, its cause, and how it was fixed, or that it is unresolved.
6. Current state: where the work stands at the end of this part.
7. Open work and next steps: what remains to do, in order, including anything the agent said \
it would do next.

Rules: be specific (exact paths, identifiers, commands, error messages, values); no preamble, \
filler or commentary; never invent anything that is not in the transcript; if the transcript \
contains an earlier summary, fold its content into yours. Output only the summary.";

/// Start of the reminder block that carries a summary in a compacted history.
pub const SUMMARY_HEADER: &str =
    "<system-reminder>\nThis session is being continued from a previous conversation";

/// Largest part of one tool result shown to the summariser (head and tail are kept).
const MAX_RESULT_BYTES: usize = 4_000;
/// Largest part of one tool input shown to the summariser.
const MAX_INPUT_BYTES: usize = 2_000;
/// Largest part of one text block shown to the summariser.
const MAX_TEXT_BYTES: usize = 16_000;

/// The text block that carries `summary` in the compacted history.
pub fn summary_block(summary: &str) -> String {
    format!(
        "{SUMMARY_HEADER} that ran out of context. The earlier part of the conversation, after \
the first user message above, is summarized below; the most recent messages follow verbatim. \
Continue the work from where it left off, without asking the user to repeat anything.\n\n\
Summary:\n{}\n</system-reminder>",
        summary.trim()
    )
}

/// Text of `s` cut to about `max` bytes: the head and the tail, with a note of what was left out.
fn clip(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let head_len = floor_char(s, max * 3 / 4);
    let tail_start = ceil_char(s, s.len() - (max - head_len));
    format!(
        "{}\n[… {} bytes omitted …]\n{}",
        &s[..head_len],
        tail_start - head_len,
        &s[tail_start..]
    )
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// Render messages as a plain-text transcript for the summariser: tool calls as
/// `Tool(input)`, tool results cut to a few KB each, images and thinking as short markers, the
/// memory reminder left out. Cut to about `max_bytes` (head and tail kept) if longer.
pub fn render_transcript(messages: &[Message], memory: Option<&str>, max_bytes: usize) -> String {
    let mut names: HashMap<&str, &str> = HashMap::new();
    let mut out = String::new();
    for (i, m) in messages.iter().enumerate() {
        let blocks: Vec<&ContentBlock> = match &m.content {
            MessageContent::Text(t) => {
                out.push_str(&format!("[user]\n{}\n\n", clip(t, MAX_TEXT_BYTES)));
                continue;
            }
            MessageContent::Blocks(b) => b.iter().collect(),
        };
        let role = match m.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        out.push_str(&format!("[{role}]\n"));
        for b in blocks {
            if i == 0 && is_memory_block(b, memory) {
                continue;
            }
            match b {
                ContentBlock::Text(t) => {
                    out.push_str(&clip(&t.text, MAX_TEXT_BYTES));
                    out.push('\n');
                }
                ContentBlock::ToolUse(t) => {
                    names.insert(&t.id, &t.name);
                    let input = serde_json::to_string(&t.input).unwrap_or_default();
                    out.push_str(&format!("{}({})\n", t.name, clip(&input, MAX_INPUT_BYTES)));
                }
                ContentBlock::ToolResult(r) => {
                    let name = names.get(r.tool_use_id.as_str()).copied().unwrap_or("tool");
                    let status = if r.is_error == Some(true) {
                        "error"
                    } else {
                        "result"
                    };
                    let text = match &r.content {
                        None => String::new(),
                        Some(ToolResultContent::Text(t)) => t.clone(),
                        Some(ToolResultContent::Blocks(bs)) => bs
                            .iter()
                            .map(|b| match b {
                                ContentBlock::Text(t) => t.text.clone(),
                                other => format!("[{}]", other.type_name()),
                            })
                            .collect::<Vec<_>>()
                            .join("\n"),
                    };
                    out.push_str(&format!(
                        "{name} {status}:\n{}\n",
                        clip(&text, MAX_RESULT_BYTES)
                    ));
                }
                ContentBlock::Image(_) => out.push_str("[image]\n"),
                ContentBlock::Thinking(_) | ContentBlock::RedactedThinking(_) => {}
                other => out.push_str(&format!("[{} block]\n", other.type_name())),
            }
        }
        out.push('\n');
    }
    clip(&out, max_bytes)
}

/// The summary request: our prompt (plus the user's focus instructions), no tools, the older
/// history rendered as text in one user message.
pub fn summary_request(
    model: &str,
    max_tokens: u32,
    transcript: &str,
    focus: Option<&str>,
) -> MessagesRequest {
    let mut system = SUMMARY_PROMPT.to_owned();
    if let Some(f) = focus.map(str::trim).filter(|f| !f.is_empty()) {
        system.push_str("\n\nThe user asked for this summary to focus on: ");
        system.push_str(f);
    }
    let user = format!(
        "Here is the earlier part of the session, oldest first. Summarise it as instructed.\n\n\
<transcript>\n{transcript}</transcript>"
    );
    let mut req = MessagesRequest::new(model, max_tokens, vec![Message::user_text(user)]);
    req.system = Some(SystemPrompt::Text(system));
    req.stream = true;
    req
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use skiff_protocol::{ToolResultBlock, ToolUseBlock};

    #[test]
    fn transcript_clips_results_and_names_tools() {
        let call = ContentBlock::ToolUse(ToolUseBlock {
            id: "t0".into(),
            name: "Bash".into(),
            input: json!({"command": "echo t0"}),
            cache_control: None,
        });
        let mut h = vec![
            Message::user_text("task"),
            Message::blocks(Role::Assistant, vec![call]),
        ];
        h.push(Message::blocks(
            Role::User,
            vec![ContentBlock::ToolResult(ToolResultBlock::text(
                "t0",
                "é".repeat(10_000),
                true,
            ))],
        ));
        let t = render_transcript(&h, None, 1_000_000);
        assert!(t.contains("Bash({\"command\":\"echo t0\"})"), "{t}");
        assert!(t.contains("Bash error:"));
        assert!(t.contains("bytes omitted"));
        assert!(t.len() < 6_000, "{}", t.len());
        let short = render_transcript(&h, None, 500);
        assert!(short.len() < 600);
    }
}
