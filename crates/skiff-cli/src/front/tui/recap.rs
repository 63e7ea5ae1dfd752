//! A conversation's history as the UI shows it: the last exchanges of a resumed session (so
//! `skiff -c` shows where it was), and the user's prompts a rewind can go back to.

use ratatui_core::style::{Color, Modifier, Style};
use ratatui_core::text::{Line, Span};
use skiff_protocol::{ContentBlock, Message, MessageContent, Role};

use super::ui::{call_line, dim};
use crate::term::blocks::render_markdown;

/// The text the user typed in a user message: None for tool results and for messages that
/// are only context (reminders, hook output).
pub fn prompt_text(m: &Message) -> Option<String> {
    if m.role != Role::User {
        return None;
    }
    let texts: Vec<&str> = match &m.content {
        MessageContent::Text(t) => vec![t.as_str()],
        MessageContent::Blocks(blocks) => {
            if blocks
                .iter()
                .any(|b| matches!(b, ContentBlock::ToolResult(_)))
            {
                return None;
            }
            blocks
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::Text(t) => Some(t.text.as_str()),
                    _ => None,
                })
                .collect()
        }
    };
    let typed: Vec<&str> = texts
        .into_iter()
        .filter(|t| {
            let t = t.trim_start();
            !t.starts_with("<system-reminder>") && !t.starts_with("<command-") && !t.is_empty()
        })
        .collect();
    let text = typed.last()?.trim().to_owned();
    (!text.is_empty()).then_some(text)
}

/// The user's prompts in the history: their index and text, oldest first.
pub fn prompts(history: &[Message]) -> Vec<(usize, String)> {
    history
        .iter()
        .enumerate()
        .filter_map(|(i, m)| prompt_text(m).map(|t| (i, t)))
        .collect()
}

/// The last `exchanges` exchanges of a conversation (each from a prompt on) as lines: the
/// prompts, the answers' text as markdown, the tool calls on one line each.
pub fn recap(history: &[Message], exchanges: usize, width: usize) -> Vec<Line<'static>> {
    let starts = prompts(history);
    let from = starts
        .len()
        .checked_sub(exchanges)
        .and_then(|i| starts.get(i))
        .map_or(0, |(i, _)| *i);
    let mut out = Vec::new();
    if from > 0 {
        out.push(Line::styled(format!("… {from} earlier messages"), dim()));
    }
    for m in &history[from..] {
        match m.role {
            Role::User => {
                if let Some(text) = prompt_text(m) {
                    out.push(Line::default());
                    for (i, l) in text.lines().enumerate() {
                        out.push(Line::from(vec![
                            Span::styled(if i == 0 { "› " } else { "  " }, dim()),
                            Span::styled(l.to_owned(), Style::new().add_modifier(Modifier::BOLD)),
                        ]));
                    }
                    out.push(Line::default());
                }
            }
            Role::Assistant => {
                let blocks = match &m.content {
                    MessageContent::Text(t) => vec![ContentBlock::text(t.clone())],
                    MessageContent::Blocks(b) => b.clone(),
                };
                for b in blocks {
                    match b {
                        ContentBlock::Text(t) if !t.text.trim().is_empty() => {
                            out.extend(render_markdown(&t.text, width));
                        }
                        ContentBlock::ToolUse(t) => {
                            let summary = crate::term::view::tool_summary(&t.name, &t.input);
                            out.push(call_line("", &t.name, &summary, Color::Green));
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::wrap::plain;

    #[test]
    fn prompts_leave_out_tool_results_and_reminders() {
        let history = vec![
            Message::user_text("first"),
            Message::blocks(Role::Assistant, vec![ContentBlock::text("answer **one**")]),
            Message::blocks(
                Role::User,
                vec![
                    ContentBlock::text("<system-reminder>x</system-reminder>"),
                    ContentBlock::text("second"),
                ],
            ),
            Message::blocks(Role::Assistant, vec![ContentBlock::text("answer two")]),
        ];
        assert_eq!(
            prompts(&history),
            [(0, "first".to_owned()), (2, "second".to_owned())]
        );
        let lines: Vec<String> = recap(&history, 1, 80).iter().map(plain).collect();
        assert_eq!(
            lines,
            ["… 2 earlier messages", "", "› second", "", "answer two"]
        );
    }
}
