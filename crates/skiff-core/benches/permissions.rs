//! The permission engine's cost per Bash call: analyse the command line and decide, for every
//! command line of the fuzzer's corpus (`tests/permission_fuzz/grammar.rs`, a fixed seed), in a
//! workspace like the fuzzer's, with no rules and with the sandbox's auto-allow plus deny rules.
//! Prints the median, 90th and 99th percentiles and the maximum. `SKIFF_BENCH_CASES` sets the
//! corpus size (2,000 by default).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

#[path = "../tests/permission_fuzz/grammar.rs"]
mod grammar;

use std::hint::black_box;
use std::os::unix::fs::symlink;
use std::time::{Duration, Instant};

use serde_json::json;
use skiff_core::permissions::rule::{Rule, RuleKind, RuleOrigin};
use skiff_core::permissions::{
    PermissionEngine, PermissionMode, PermissionQuery, RuleSet, Workspace,
};

fn main() {
    let n: usize = std::env::var("SKIFF_BENCH_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000);
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let ws = root.join("a/b/ws");
    let outside = root.join("a/b/outside");
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    std::fs::create_dir_all(outside.join("deep")).unwrap();
    for f in ["a.txt", ".env", "sub/x", "script", "list"] {
        std::fs::write(ws.join(f), "x\n").unwrap();
    }
    symlink("../outside/deep", ws.join("lnk")).unwrap();
    let corpus: Vec<String> = grammar::corpus(n)
        .into_iter()
        .map(|c| c.replace("@ROOT@", &root.display().to_string()))
        .collect();
    let origin = RuleOrigin {
        root: ws.clone(),
        cwd: ws.clone(),
        home: Some(root.join("home")),
    };
    let configs: [(&str, &[&str], &[&str]); 2] = [
        ("no rules", &[], &[]),
        (
            "Bash allowed, deny Bash(rm:*), Read(./.env), Edit(./a.txt)",
            &["Bash"],
            &["Bash(rm:*)", "Read(./.env)", "Edit(./a.txt)"],
        ),
    ];
    println!(
        "permission engine, cost per Bash call (parse and decide), {} command lines of the fuzzer's corpus",
        corpus.len()
    );
    for (name, allow, deny) in configs {
        let mut rules = RuleSet::default();
        for r in allow {
            rules.push(RuleKind::Allow, Rule::parse(r, &origin).unwrap());
        }
        for r in deny {
            rules.push(RuleKind::Deny, Rule::parse(r, &origin).unwrap());
        }
        let engine = PermissionEngine::new(rules, Workspace::new(&ws, &[]));
        let inputs: Vec<serde_json::Value> =
            corpus.iter().map(|c| json!({ "command": c })).collect();
        let decide = |input: &serde_json::Value| {
            engine.decide(&PermissionQuery {
                tool: "Bash",
                input,
                tool_use_id: "bench",
                read_only: false,
                mode: PermissionMode::Default,
            })
        };
        // Warm up the file system caches and the allocator.
        for input in &inputs {
            black_box(decide(input));
        }
        let mut times: Vec<Duration> = inputs
            .iter()
            .map(|input| {
                // The best of three runs of each command line.
                (0..3)
                    .map(|_| {
                        let start = Instant::now();
                        black_box(decide(input));
                        start.elapsed()
                    })
                    .min()
                    .unwrap_or_default()
            })
            .collect();
        times.sort();
        let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
        let micros = |d: Duration| d.as_secs_f64() * 1e6;
        println!(
            "  {name}: median {:.1} µs, p90 {:.1} µs, p99 {:.1} µs, max {:.1} µs",
            micros(at(0.5)),
            micros(at(0.9)),
            micros(at(0.99)),
            micros(at(1.0)),
        );
    }
}
