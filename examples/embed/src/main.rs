//! Embed skiff: the user's Claude Code settings, trust and MCP servers through `skiff-config`,
//! one prompt, the answer printed; tool calls that would need approval are refused.
//! `cargo run -p skiff-embed-example -- "What does this project do?"`

#![allow(clippy::print_stdout, clippy::print_stderr)] // a command-line program

use skiff_config::{Environment, Overrides, SessionBuilder};
use skiff_core::{Answer, ApprovalAnswer, Event, RequestKind};
use skiff_protocol::sdk::SdkMessage;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let prompt = std::env::args()
        .nth(1)
        .ok_or("usage: skiff-embed-example PROMPT")?;
    let overrides = Overrides {
        max_turns: Some(20),
        ..Overrides::default()
    };
    let assembled = SessionBuilder::new(overrides, Environment::from_process()).build()?;
    assembled.warnings.iter().for_each(|w| eprintln!("{w}"));
    let mut session = assembled.agent.spawn();
    session.send_message(prompt)?;
    while let Some(event) = session.next_event().await {
        match event {
            Event::Request(r) if matches!(r.kind, RequestKind::Approval(_)) => {
                let no = ApprovalAnswer::deny("this program does not allow that");
                session.reply(r.id, Answer::Approval(no))?;
            }
            Event::Frame(SdkMessage::Result(r)) => {
                println!("{}", r.result.unwrap_or_default());
                break;
            }
            _ => {}
        }
    }
    session.shutdown().await;
    Ok(())
}
