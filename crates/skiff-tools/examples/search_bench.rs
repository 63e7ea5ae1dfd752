//! Search benchmark: Grep and Glob through the tool API against the `rg` binary on the same
//! generated tree (50,000 files by default). Prints median wall times and the ratio; no
//! assertions. Run with `bench/search.sh` or
//! `cargo run --release -p skiff-tools --example search_bench -- [--files N] [--runs N]`.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skiff_tools::glob::GlobTool;
use skiff_tools::grep::GrepTool;
use skiff_tools::{Tool, ToolConfig, ToolContext, Typed};

const PATTERN: &str = "needle";
const GLOB: &str = "*.rs";

/// xorshift64*: a fixed seed gives the same tree on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const WORDS: &[&str] = &[
    "let", "fn", "return", "value", "config", "parse", "error", "Result", "handle", "match",
    "struct", "impl", "self", "pub", "use", "mod", "async", "await", "Some", "None", "Ok", "Err",
    "=", "{", "}", "(", ")", ";", "->", "0", "1", "42", "vec", "String", "needs", "needed",
];

/// Write `files` files in nested directories; about one file in ten contains the pattern, one
/// in twelve is gitignored.
fn build_tree(root: &Path, files: usize) -> (usize, usize) {
    let mut rng = Rng(0x0bad_5eed_2024_0001);
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(root.join(".gitignore"), "*.log\ntarget/\n").unwrap();
    let exts = ["rs", "rs", "txt", "md", "py", "js", "json", "toml"];
    let names = ["src", "lib", "core", "util", "api", "test", "docs", "misc"];
    let mut bytes = 0;
    let mut with_pattern = 0;
    for i in 0..files {
        let mut dir = String::new();
        if rng.below(12) == 0 {
            dir.push_str("target/");
        }
        for _ in 0..1 + rng.below(4) {
            dir.push_str(names[rng.below(names.len() as u64) as usize]);
            dir.push_str(&format!("{}/", rng.below(3)));
        }
        let ext = if rng.below(12) == 0 {
            "log"
        } else {
            exts[rng.below(exts.len() as u64) as usize]
        };
        let hit = rng.below(10) == 0;
        let n_lines = 10 + rng.below(60);
        let hit_line = rng.below(n_lines);
        let mut text = String::new();
        for l in 0..n_lines {
            for _ in 0..rng.below(3) {
                text.push_str("    ");
            }
            for w in 0..2 + rng.below(10) {
                if w > 0 {
                    text.push(' ');
                }
                text.push_str(WORDS[rng.below(WORDS.len() as u64) as usize]);
            }
            if hit && l == hit_line {
                text.push_str(" needle");
            }
            text.push('\n');
        }
        if hit && !dir.starts_with("target/") && ext != "log" {
            with_pattern += 1;
        }
        let p = root.join(format!("{dir}f{i}.{ext}"));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        bytes += text.len();
        std::fs::write(p, text).unwrap();
    }
    (bytes, with_pattern)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Time `f` `runs` times after one warm-up run.
fn time<F: FnMut() -> usize>(runs: usize, mut f: F) -> (Duration, usize) {
    let size = f();
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        std::hint::black_box(f());
        times.push(start.elapsed());
    }
    (median(times), size)
}

fn rg(root: &Path, args: &[&str]) -> usize {
    let out = Command::new("rg")
        .args(args)
        .current_dir(root)
        .env_remove("RIPGREP_CONFIG_PATH")
        .stdin(Stdio::null())
        .output()
        .expect("rg is not installed: install ripgrep (apt-get install ripgrep)");
    out.stdout.iter().filter(|b| **b == b'\n').count()
}

fn call(rt: &tokio::runtime::Runtime, tool: &dyn Tool, ctx: &ToolContext, input: Value) -> usize {
    let out = rt.block_on(tool.call(input, ctx));
    assert!(!out.is_error, "{}", out.text_content());
    out.text_content().lines().count()
}

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let files = arg("--files", 50_000);
    let runs = arg("--runs", 5).max(1);
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let (bytes, with_pattern) = build_tree(dir.path(), files);
    println!(
        "tree: {files} files, {:.1} MB, {with_pattern} non-ignored files contain `{PATTERN}` \
         (built in {:.1} s); {runs} timed runs each after a warm-up, medians; {} CPUs",
        bytes as f64 / 1e6,
        started.elapsed().as_secs_f64(),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
    );

    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let ctx = ToolContext::with_dirs(dir.path(), &[], ToolConfig::default()).unwrap();
    let root = ctx.root().to_path_buf();
    let grep = Typed::new(GrepTool);
    let glob = Typed::new(GlobTool);

    type Case<'a> = (&'a str, Box<dyn Fn() -> usize + 'a>, Vec<&'a str>);
    let cases: Vec<Case> = vec![
        (
            "Grep files_with_matches",
            Box::new(|| {
                call(
                    &rt,
                    &grep,
                    &ctx,
                    json!({"pattern": PATTERN, "head_limit": 0}),
                )
            }),
            vec!["-l", PATTERN],
        ),
        (
            "Grep content (head_limit 0)",
            Box::new(|| {
                call(
                    &rt,
                    &grep,
                    &ctx,
                    json!({"pattern": PATTERN, "output_mode": "content", "head_limit": 0}),
                )
            }),
            vec!["-n", "--no-heading", PATTERN],
        ),
        (
            "Grep count (head_limit 0)",
            Box::new(|| {
                call(
                    &rt,
                    &grep,
                    &ctx,
                    json!({"pattern": PATTERN, "output_mode": "count", "head_limit": 0}),
                )
            }),
            vec!["-c", PATTERN],
        ),
        // Glob walks everything but `.git` (no ignore files, hidden files included) and stats
        // each match for its mtime; the first rg line does the same walk, the second is plain
        // `rg --files`, which also skips ignored and hidden files.
        (
            "Glob **/*.rs",
            Box::new(|| call(&rt, &glob, &ctx, json!({"pattern": "**/*.rs"}))),
            vec![
                "--files",
                "--no-ignore",
                "--hidden",
                "-g",
                "!.git",
                "-g",
                GLOB,
            ],
        ),
        (
            "Glob **/*.rs",
            Box::new(|| call(&rt, &glob, &ctx, json!({"pattern": "**/*.rs"}))),
            vec!["--files", "-g", GLOB],
        ),
    ];

    println!(
        "{:<30} {:>10} {:>10} {:>8}   {:<40}",
        "case", "skiff ms", "rg ms", "ratio", "rg command"
    );
    for (name, ours, args) in cases {
        let (t_ours, n_ours) = time(runs, ours);
        let (t_rg, n_rg) = time(runs, || rg(&root, &args));
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!(
            "{name:<30} {:>10.1} {:>10.1} {:>7.2}x   rg {:<40} (output lines: skiff {n_ours}, rg {n_rg})",
            ms(t_ours),
            ms(t_rg),
            ms(t_ours) / ms(t_rg),
            args.join(" "),
        );
    }
}
