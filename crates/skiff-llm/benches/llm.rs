//! Prints figures (no assertions): SSE parse throughput, and model-call overhead against the
//! zero-delay mock server. Run with `cargo bench -p skiff-llm --bench llm` or `bench/run.sh`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

use std::time::{Duration, Instant};

use skiff_llm::sse::SseDecoder;
use skiff_llm::{
    AnthropicConfig, AnthropicProvider, CancellationToken, Credential, Provider, RetryPolicy,
    StreamAccumulator, complete,
};
use skiff_protocol::script::{ScriptBlock, ScriptTurn};
use skiff_protocol::{Message, MessagesRequest, StreamEvent};
use skiff_testkit::MockServer;

fn render_sse(events: &[StreamEvent], out: &mut Vec<u8>) {
    for ev in events {
        let v = serde_json::to_value(ev).unwrap();
        let name = v["type"].as_str().unwrap().to_owned();
        out.extend_from_slice(format!("event: {name}\ndata: {v}\n\n").as_bytes());
    }
}

fn sse_throughput() {
    // A realistic stream: many small text deltas and a large tool input, repeated.
    let turn = ScriptTurn {
        content: vec![
            ScriptBlock::Text {
                text: "The quick brown fox jumps over the lazy dog. ".repeat(400),
            },
            ScriptBlock::ToolUse {
                id: None,
                name: "Write".into(),
                input: serde_json::json!({"file_path":"src/lib.rs","content":"fn main() {}\n".repeat(300)}),
            },
        ],
        chunk_chars: Some(12),
        ..ScriptTurn::default()
    };
    let events = turn.to_stream_events(0, "claude-sonnet-4-5", 1000);
    let mut one = Vec::new();
    render_sse(&events, &mut one);
    let copies = (64 << 20) / one.len() + 1; // ~64 MiB in total
    let chunk = 16 * 1024;
    let mut total_events = 0usize;
    let start = Instant::now();
    for _ in 0..copies {
        let mut dec = SseDecoder::new();
        let mut acc = StreamAccumulator::new();
        let mut out = Vec::new();
        let mut done = Vec::new();
        for piece in one.chunks(chunk) {
            dec.feed(piece, &mut out);
            for raw in out.drain(..) {
                let mut ev: StreamEvent = serde_json::from_str(&raw.data).unwrap();
                acc.apply(&mut ev, &mut done).unwrap();
                done.clear();
                total_events += 1;
            }
        }
        std::hint::black_box(acc.finish().unwrap());
    }
    let secs = start.elapsed().as_secs_f64();
    let bytes = (one.len() * copies) as f64;
    println!(
        "sse_parse: {:.1} MiB in {:.2}s = {:.1} MB/s, {:.2} M events/s (decode + parse + accumulate, 16 KiB chunks)",
        bytes / (1 << 20) as f64,
        secs,
        bytes / 1e6 / secs,
        total_events as f64 / 1e6 / secs
    );
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

async fn call_overhead() {
    let server = MockServer::builder()
        .turn(ScriptTurn::text(
            "Hello! This is a short scripted answer from the mock.",
        ))
        .repeat(true)
        .start()
        .await
        .unwrap();
    let mut cfg = AnthropicConfig::new(Credential::api_key("sk-bench"));
    cfg.base_url = server.url();
    cfg.retry = RetryPolicy::none();
    let provider = AnthropicProvider::new(cfg).unwrap();
    let mut req = MessagesRequest::new("claude-sonnet-4-5", 1024, vec![Message::user_text("hi")]);
    req.stream = true;
    for _ in 0..50 {
        complete(provider.stream(&req.view(), CancellationToken::new()))
            .await
            .unwrap();
    }
    let n = 2000;
    let mut times = Vec::with_capacity(n);
    let start = Instant::now();
    for _ in 0..n {
        let t = Instant::now();
        complete(provider.stream(&req.view(), CancellationToken::new()))
            .await
            .unwrap();
        times.push(t.elapsed());
    }
    let secs = start.elapsed().as_secs_f64();
    times.sort();
    println!(
        "model_call: {n} streamed calls against the zero-delay mock: {:.0} calls/s, p50 {:.3} ms, p99 {:.3} ms",
        n as f64 / secs,
        percentile(&times, 0.50),
        percentile(&times, 0.99)
    );
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing: run quickly then.
    sse_throughput();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(call_overhead());
}
