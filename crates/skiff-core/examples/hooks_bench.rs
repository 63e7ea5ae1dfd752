//! Hook benchmark (run by `bench/hooks.sh`): the added cost of one event with N no-op command
//! hooks (`true`, run in parallel as the loop runs them), and of an event nobody listens to.
//! Prints the median and p90 of ROUNDS firings; no assertions.
//!
//! Usage: `hooks_bench` (env: ROUNDS=200, HOOKS=3).

#![allow(clippy::print_stdout)]

use std::time::{Duration, Instant};

use serde_json::json;
use skiff_core::frames::EventSink;
use skiff_core::hooks::{CommandHooks, HookCommon, HookEvent, fields, fire};
use skiff_testkit::process::env_or;

fn stats(mut v: Vec<Duration>) -> (f64, f64) {
    v.sort();
    let at = |q: f64| v[((v.len() as f64 - 1.0) * q) as usize].as_secs_f64() * 1000.0;
    (at(0.5), at(0.9))
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let rounds: usize = env_or("ROUNDS", 200);
    let n: usize = env_or("HOOKS", 3);
    let dir = std::env::temp_dir();
    let handlers: Vec<_> = (0..n)
        .map(|i| json!({"type": "command", "command": format!("true {i}")}))
        .collect();
    let (hooks, _) = CommandHooks::new(
        [(
            "PreToolUse".to_owned(),
            json!({"matcher": "Bash", "hooks": handlers}),
        )],
        &dir,
    );
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let sink = EventSink::new(tx, "bench".into());
    let common = HookCommon {
        session_id: "bench".into(),
        cwd: dir.display().to_string(),
        permission_mode: "default".into(),
        ..HookCommon::default()
    };
    let input = || {
        fields([
            ("tool_name", "Bash".into()),
            ("tool_input", json!({"command": "ls"})),
            ("tool_use_id", "toolu_1".into()),
        ])
    };
    let mut with = Vec::with_capacity(rounds);
    let mut without = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let t = Instant::now();
        fire(
            &hooks,
            &sink,
            &common,
            HookEvent::PreToolUse,
            Some("Bash"),
            input,
        )
        .await;
        with.push(t.elapsed());
        let t = Instant::now();
        fire(
            &hooks,
            &sink,
            &common,
            HookEvent::PostToolUse,
            Some("Bash"),
            input,
        )
        .await;
        without.push(t.elapsed());
    }
    let (m, p) = stats(with);
    println!(
        "event with {n} no-op command hooks: median {m:.2} ms, p90 {p:.2} ms ({rounds} rounds)"
    );
    let (m, p) = stats(without);
    println!("event without hooks: median {:.4} ms, p90 {:.4} ms", m, p);
}
