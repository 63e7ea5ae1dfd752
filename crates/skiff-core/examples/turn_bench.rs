//! Per-turn overhead benchmark (run by `bench/turns.sh`): one session of TURNS tool turns, each
//! a `Read` of a ~RESULT_KB KB file, against a zero-delay `skiff-mock` process, with the history
//! never compacted or trimmed (so it grows to TURNS × RESULT_KB) and a real JSONL transcript.
//! Prints figures only.
//!
//! The client overhead of turn i is the time from the end of model reply i to the moment request
//! i+1 is handed to the HTTP client (its body serialized): running the tool, recording the
//! results, context checks, building and serializing the next request. The mock's own time is
//! not in it. Also printed: allocations and bytes allocated per turn (a counting allocator),
//! and the peak RSS of this process at the end.
//!
//! Usage: `turn_bench PATH/TO/skiff-mock` (env: TURNS=500, RESULT_KB=10, WINDOW=50,
//! PROVIDER=anthropic (default) | openai (chat completions against the mock's OpenAI dialect) |
//! script (the in-process scripted provider, no HTTP)).

#![allow(clippy::print_stdout)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::error::Error;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use futures::StreamExt;
use serde_json::json;
use skiff_core::transcript::{JsonlTranscript, TranscriptMeta, session_path};
use skiff_core::{Agent, AgentConfig, CompactionStrategy, DeltaMode, Event};
use skiff_llm::{
    AnthropicConfig, AnthropicProvider, Credential, EventStream, OpenAiConfig, OpenAiProvider,
    Provider, ScriptedProvider, ServedModel,
};
use skiff_protocol::script::{Script, ScriptTurn};
use skiff_protocol::sdk::SdkMessage;
use skiff_protocol::{MessageEncoding, RequestView};
use skiff_testkit::process::{MockProcess, env_or, peak_rss_kib};
use skiff_tools::{ToolContext, ToolRegistry};
use tokio_util::sync::CancellationToken;

/// Counts allocations (calls and bytes) on top of the system allocator.
struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);
static ALLOC_BYTES: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator; the counters are atomics.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        ALLOC_BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        ALLOC_BYTES.fetch_add(new_size as u64, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Timestamps of one model call.
#[derive(Debug, Clone, Copy)]
struct Call {
    /// The request was handed over (body serialized).
    sent: Instant,
    /// The reply was complete.
    done: Option<Instant>,
    /// The call's stream was dropped (for HTTP: the response closed).
    dropped: Option<Instant>,
    allocs: u64,
    alloc_bytes: u64,
}

/// Times each call of the wrapped provider.
struct Timed {
    inner: Box<dyn Provider>,
    calls: Arc<Mutex<Vec<Call>>>,
}

impl Provider for Timed {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn history_encoding(&self) -> MessageEncoding {
        self.inner.history_encoding()
    }

    fn served_model(&self, model: &str) -> Option<ServedModel> {
        self.inner.served_model(model)
    }

    fn stream(&self, request: &RequestView<'_>, cancel: CancellationToken) -> EventStream {
        let inner = self.inner.stream(request, cancel);
        let index = {
            let mut calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
            calls.push(Call {
                sent: Instant::now(),
                done: None,
                dropped: None,
                allocs: ALLOCS.load(Ordering::Relaxed),
                alloc_bytes: ALLOC_BYTES.load(Ordering::Relaxed),
            });
            calls.len() - 1
        };
        let calls = Arc::clone(&self.calls);
        let on_drop = DropTime {
            calls: Arc::clone(&calls),
            index,
        };
        Box::pin(inner.inspect(move |item| {
            let _keep = &on_drop;
            if let Ok(skiff_llm::ProviderEvent::Done(_)) = item
                && let Some(c) = calls
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get_mut(index)
            {
                c.done = Some(Instant::now());
            }
        }))
    }
}

/// Records when a call's stream is dropped.
struct DropTime {
    calls: Arc<Mutex<Vec<Call>>>,
    index: usize,
}

impl Drop for DropTime {
    fn drop(&mut self) {
        if let Some(c) = self
            .calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_mut(self.index)
        {
            c.dropped = Some(Instant::now());
        }
    }
}

/// Median of turns `from..=to` (1-based).
fn median(values: &[f64], from: usize, to: usize) -> f64 {
    let mut slice = values[from.saturating_sub(1)..to.min(values.len())].to_vec();
    slice.sort_by(f64::total_cmp);
    slice.get(slice.len() / 2).copied().unwrap_or(0.0)
}

/// Mean of turns `from..=to` (1-based).
fn mean(values: &[f64], from: usize, to: usize) -> f64 {
    let slice = &values[from.saturating_sub(1)..to.min(values.len())];
    slice.iter().sum::<f64>() / slice.len().max(1) as f64
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn Error>> {
    let mock_bin = std::env::args()
        .nth(1)
        .ok_or("usage: turn_bench PATH/TO/skiff-mock")?;
    let turns: usize = env_or("TURNS", 500);
    let result_kb: usize = env_or("RESULT_KB", 10);
    let window: usize = env_or("WINDOW", 50);

    let dir = tempfile::tempdir()?;
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws)?;
    let line = "x".repeat(99);
    for i in 0..10 {
        let body: String = (0..result_kb * 10)
            .map(|n| format!("{i}{n:06} {line}\n"))
            .collect();
        std::fs::write(ws.join(format!("f{i}.txt")), body)?;
    }
    let mut script_turns: Vec<ScriptTurn> = (0..turns)
        .map(|i| ScriptTurn::tool_use("Read", json!({"file_path": format!("f{}.txt", i % 10)})))
        .collect();
    script_turns.push(ScriptTurn::text("Done."));
    let script = Script {
        turns: script_turns,
        ..Script::default()
    };
    let mock = MockProcess::start(mock_bin.as_ref(), &script, dir.path(), "turns")?;

    let mut cfg = AnthropicConfig::new(Credential::api_key("sk-bench"));
    cfg.base_url = mock.url().to_owned();
    let calls = Arc::new(Mutex::new(Vec::new()));
    // PROVIDER=script: the same turns from the in-process scripted provider (no HTTP, no mock
    // process), to tell the client's own costs from the transport's.
    let inner: Box<dyn Provider> = match std::env::var("PROVIDER").as_deref() {
        Ok("script") => Box::new(ScriptedProvider::new(script.clone()).without_recording()),
        Ok("openai") => Box::new(OpenAiProvider::new(OpenAiConfig::new(mock.url(), None))?),
        _ => Box::new(AnthropicProvider::new(cfg)?),
    };
    println!("provider: {}", inner.name());
    let provider = Timed {
        inner,
        calls: Arc::clone(&calls),
    };
    let mut config = AgentConfig {
        system_prompt: vec!["You are a benchmark agent.".into()],
        cwd: ws.clone(),
        max_turns: Some(turns as u32 + 10),
        context_window: Some(1_000_000_000),
        deltas: DeltaMode::Off,
        ..AgentConfig::default()
    };
    config.compaction.strategy = CompactionStrategy::Off;
    let home = dir.path().join("home");
    let sid = config.session_id.clone();
    let store = Arc::new(JsonlTranscript::new(
        session_path(&home, &ws, &sid),
        TranscriptMeta::new(sid, &ws),
    ));
    let mut session = Agent::new(
        config,
        Arc::new(provider),
        ToolRegistry::with_builtins(),
        ToolContext::new(&ws)?,
    )
    .with_session(store)
    .spawn();

    let started = Instant::now();
    session.send_message("Read the files, one per turn.")?;
    let mut result = None;
    while let Some(event) = session.next_event().await {
        if let Event::Frame(SdkMessage::Result(r)) = event {
            result = Some(r);
            break;
        }
    }
    let elapsed = started.elapsed();
    let rss_peak = peak_rss_kib().unwrap_or(0);
    let history = session.status().await.map_or(0, |s| s.messages);
    session.shutdown().await;
    drop(mock);

    let calls = calls.lock().map(|c| c.clone()).unwrap_or_default();
    // Overhead of turn i (1-based): from reply i done to request i+1 sent.
    let mut overhead_ms = Vec::new();
    let mut closing_ms = Vec::new();
    let mut allocs = Vec::new();
    let mut alloc_kib = Vec::new();
    for pair in calls.windows(2) {
        if let Some(done) = pair[0].done {
            overhead_ms.push(pair[1].sent.duration_since(done).as_secs_f64() * 1000.0);
            let dropped = pair[0].dropped.unwrap_or(done);
            closing_ms.push(dropped.saturating_duration_since(done).as_secs_f64() * 1000.0);
            allocs.push((pair[1].allocs - pair[0].allocs) as f64);
            alloc_kib.push((pair[1].alloc_bytes - pair[0].alloc_bytes) as f64 / 1024.0);
        }
    }
    let n = overhead_ms.len();
    match &result {
        Some(r) => println!(
            "run: {} model calls, {} turns of tool use, is_error {}, {:.2} s wall, {history} messages at the end",
            calls.len(),
            n,
            r.is_error,
            elapsed.as_secs_f64()
        ),
        None => println!("run: no result"),
    }
    let (a, b) = (window, n.saturating_sub(window) + 1);
    let first = mean(&overhead_ms, 1, a);
    let last = mean(&overhead_ms, b, n);
    println!(
        "client overhead per turn: turns 1-{a} mean {first:.3} ms, turns {b}-{n} mean {last:.3} ms, ratio {:.2}",
        last / first.max(f64::EPSILON)
    );
    println!(
        "                          medians {:.3} ms and {:.3} ms",
        median(&overhead_ms, 1, a),
        median(&overhead_ms, b, n)
    );
    println!(
        "  of which closing the call: turns 1-{a} mean {:.3} ms, turns {b}-{n} mean {:.3} ms",
        mean(&closing_ms, 1, a),
        mean(&closing_ms, b, n)
    );
    println!(
        "allocations per turn:     turns 1-{a} {:.0} ({:.0} KiB), turns {b}-{n} {:.0} ({:.0} KiB)",
        mean(&allocs, 1, a),
        mean(&alloc_kib, 1, a),
        mean(&allocs, b, n),
        mean(&alloc_kib, b, n),
    );
    println!("peak RSS: {:.1} MiB", rss_peak as f64 / 1024.0);
    Ok(())
}
