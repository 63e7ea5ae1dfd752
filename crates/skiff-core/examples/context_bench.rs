//! Context-management benchmark (run by `bench/context.sh`): one long agentic run of TURNS tool
//! turns, each a `Read` of a ~40 KB file, against two `skiff-mock` processes (the loop's turns
//! and the summary calls), with compaction on. Prints figures only: peak RSS of this process
//! (the agent; the mocks run in their own processes), compactions and trims, and the bytes sent
//! per request over time.
//!
//! Usage: `context_bench PATH/TO/skiff-mock` (env: TURNS=300, RESULT_KB=40, EVERY=25,
//! STRATEGY=summarize|trim|off, KEEP=6).
//!
//! The mock reports `input_tokens` = request body bytes / 4 when a turn has no scripted usage,
//! so the API-reported context grows as it would with a real model, and drives compaction.

#![allow(clippy::print_stdout)]

use std::error::Error;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use futures::StreamExt;
use serde_json::json;
use skiff_core::{Agent, AgentConfig, CompactionStrategy};
use skiff_llm::{AnthropicConfig, AnthropicProvider, Credential, EventStream, Provider};
use skiff_protocol::script::{Script, ScriptTurn};
use skiff_protocol::sdk::{SdkMessage, SystemMessage};
use skiff_protocol::{RequestView, StreamEvent};
use skiff_testkit::process::{MockProcess, env_or, peak_rss_kib};
use skiff_tools::{ToolContext, ToolRegistry};
use tokio_util::sync::CancellationToken;

/// One request as sent.
#[derive(Debug, Clone)]
struct Sent {
    summary: bool,
    bytes: usize,
    messages: usize,
}

/// Routes summary calls (no tools) to one mock and the loop's turns to another, recording the
/// size of every request body.
struct Routed {
    turns: AnthropicProvider,
    summaries: AnthropicProvider,
    log: Arc<Mutex<Vec<Sent>>>,
}

impl Provider for Routed {
    fn name(&self) -> &str {
        "anthropic"
    }

    fn stream(&self, request: &RequestView<'_>, cancel: CancellationToken) -> EventStream {
        let summary = request.tools.is_empty();
        let bytes = serde_json::to_vec(request).map_or(0, |b| b.len());
        if let Ok(mut log) = self.log.lock() {
            log.push(Sent {
                summary,
                bytes,
                messages: request.messages.len(),
            });
        }
        if summary {
            self.summaries.stream(request, cancel)
        } else {
            self.turns.stream(request, cancel)
        }
    }
}

fn provider(url: &str) -> Result<AnthropicProvider, Box<dyn Error>> {
    let mut cfg = AnthropicConfig::new(Credential::api_key("sk-bench"));
    cfg.base_url = url.to_owned();
    Ok(AnthropicProvider::new(cfg)?)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let mock_bin = std::env::args()
        .nth(1)
        .ok_or("usage: context_bench PATH/TO/skiff-mock")?;
    let turns: usize = env_or("TURNS", 300);
    let result_kb: usize = env_or("RESULT_KB", 40);
    let every: usize = env_or("EVERY", 25).max(1);
    let keep: usize = env_or("KEEP", 6);
    let strategy: CompactionStrategy = env_or("STRATEGY", CompactionStrategy::Summarize);

    // A workspace of 10 files whose Read output is about RESULT_KB KB each.
    let dir = tempfile::tempdir()?;
    let line = "    let value = compute_something(alpha, beta, gamma) + offset * factor; // ok";
    let lines = result_kb * 1000 / (line.len() + 12);
    for f in 0..10 {
        let text: String = (0..lines).map(|i| format!("{line} {f}:{i}\n")).collect();
        std::fs::write(dir.path().join(format!("src_{f}.rs")), text)?;
    }

    let mut script_turns: Vec<ScriptTurn> = (0..turns)
        .map(|i| ScriptTurn::tool_use("Read", json!({"file_path": format!("src_{}.rs", i % 10)})))
        .collect();
    script_turns.push(ScriptTurn::text("All files reviewed."));
    let main_script = Script {
        turns: script_turns,
        ..Script::default()
    };
    let summary_text = format!(
        "## Goals\nReview every file under src/.\n## Files\n{}\n## Next steps\nContinue with the next file.",
        (0..10)
            .map(|f| format!("- src_{f}.rs: read, {lines} lines, no issues found"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let summary_script = Script {
        repeat: true,
        turns: vec![ScriptTurn::text(summary_text)],
        ..Script::default()
    };
    let main_mock = MockProcess::start(mock_bin.as_ref(), &main_script, dir.path(), "turns")?;
    let summary_mock =
        MockProcess::start(mock_bin.as_ref(), &summary_script, dir.path(), "summaries")?;

    let log = Arc::new(Mutex::new(Vec::new()));
    let routed = Routed {
        turns: provider(main_mock.url())?,
        summaries: provider(summary_mock.url())?,
        log: log.clone(),
    };
    let mut config = AgentConfig {
        system_prompt: vec!["You are a benchmark agent.".into()],
        cwd: dir.path().to_path_buf(),
        ..AgentConfig::default()
    };
    config.compaction.strategy = strategy;
    config.compaction.keep_recent = keep;
    let window = skiff_core::tokens::context_window(&config, None);
    let threshold = config.compaction.threshold.tokens(window);
    let mut agent = Agent::new(
        config,
        Arc::new(routed),
        ToolRegistry::with_builtins(),
        ToolContext::new(dir.path())?,
    )
    .spawn();

    let rss_before = peak_rss_kib().unwrap_or(0);
    let started = Instant::now();
    let mut run = agent.run("Review every file under src/, one at a time.");
    let mut compactions = 0usize;
    let mut trims = 0usize;
    let mut reported: Vec<u64> = Vec::new();
    while let Some(event) = run.next().await {
        match event {
            SdkMessage::System(SystemMessage::CompactBoundary(_)) => compactions += 1,
            SdkMessage::System(SystemMessage::Informational(i)) if i.kind == "trim" => trims += 1,
            SdkMessage::StreamEvent(s) => {
                if let StreamEvent::MessageStart { message } = s.event {
                    reported.push(message.usage.total_input());
                }
            }
            _ => {}
        }
    }
    let result = run.result().cloned();
    drop(run);
    let elapsed = started.elapsed();
    let rss_peak = peak_rss_kib().unwrap_or(0);
    let log = log.lock().map(|l| l.clone()).unwrap_or_default();

    let main: Vec<&Sent> = log.iter().filter(|s| !s.summary).collect();
    let summaries: Vec<&Sent> = log.iter().filter(|s| s.summary).collect();
    let total: usize = log.iter().map(|s| s.bytes).sum();
    let max_main = main.iter().map(|s| s.bytes).max().unwrap_or(0);
    let mean_main = main.iter().map(|s| s.bytes).sum::<usize>() / main.len().max(1);
    let mib = |kib: u64| kib as f64 / 1024.0;

    println!(
        "scenario: {turns} tool turns (Read, ~{result_kb} KB results), strategy {strategy:?}, \
window {window}, threshold {threshold}, keep_recent {keep}"
    );
    match &result {
        Some(r) => println!(
            "result: {} after {} turns, is_error {}",
            r.terminal_reason.as_deref().unwrap_or("?"),
            r.num_turns,
            r.is_error
        ),
        None => println!("result: none"),
    }
    println!("wall: {:.2} s", elapsed.as_secs_f64());
    println!(
        "peak RSS (VmHWM): {:.1} MiB (before the run {:.1} MiB)",
        mib(rss_peak),
        mib(rss_before)
    );
    println!("compactions: {compactions}   trims: {trims}");
    println!(
        "requests: {} loop + {} summary; {:.1} MB sent in all",
        main.len(),
        summaries.len(),
        total as f64 / 1e6
    );
    println!(
        "loop request bodies: max {:.0} KB, mean {:.0} KB; summary request bodies: max {:.0} KB",
        max_main as f64 / 1e3,
        mean_main as f64 / 1e3,
        summaries.iter().map(|s| s.bytes).max().unwrap_or(0) as f64 / 1e3
    );
    println!(
        "history at the end: {} messages",
        agent.status().await.map_or(0, |s| s.messages)
    );
    println!();
    println!(
        "loop requests by window of {every}: body KB min / mean / max, most messages, most \
reported input tokens"
    );
    println!(
        "{:>11}  {:>7}  {:>7}  {:>7}  {:>8}  {:>10}",
        "requests", "min", "mean", "max", "messages", "tokens"
    );
    for (w, chunk) in main.chunks(every).enumerate() {
        let kb: Vec<f64> = chunk.iter().map(|s| s.bytes as f64 / 1e3).collect();
        let min = kb.iter().copied().fold(f64::INFINITY, f64::min);
        let max = kb.iter().copied().fold(0.0, f64::max);
        let mean = kb.iter().sum::<f64>() / kb.len() as f64;
        let messages = chunk.iter().map(|s| s.messages).max().unwrap_or(0);
        let first = w * every;
        let tokens = reported
            .iter()
            .skip(first)
            .take(chunk.len())
            .max()
            .copied()
            .unwrap_or(0);
        println!(
            "{:>11}  {min:>7.1}  {mean:>7.1}  {max:>7.1}  {messages:>8}  {tokens:>10}",
            format!("{}-{}", first + 1, first + chunk.len())
        );
    }
    Ok(())
}
