//! Grep against the real `rg` binary on a generated tree (a few hundred files, some ignored,
//! some hidden, one binary): the same files, lines and counts.
//!
//! rg's answers on that (deterministic) tree are recorded in `tests/fixtures/rg_answers.json`.
//! Where `rg` is installed (CI installs it) every answer is taken live and must also equal the
//! recording, so it cannot go stale; where it is not (a fresh machine with only Rust), Grep is
//! compared with the recording. `SKIFF_RECORD_RG=1` (with `rg` installed) rewrites the file.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use skiff_tools::grep::GrepTool;
use skiff_tools::{Tool, ToolContext, Typed};

/// A small deterministic generator (xorshift64*), so the tree is the same on every run.
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
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

const WORDS: &[&str] = &[
    "alpha", "beta", "gamma", "delta", "let", "fn", "return", "value", "x", "42", "(", ")", "{",
    "}", "config", "parse", "error", "Result", "ok", "todo", "needless", "handle", "-", ":",
];

fn line(rng: &mut Rng) -> String {
    let n = 1 + rng.below(10);
    let mut words: Vec<String> = (0..n).map(|_| rng.pick(WORDS).to_owned()).collect();
    match rng.below(40) {
        0 => words.insert(rng.below(n) as usize, "needle".into()),
        1 => words.insert(rng.below(n) as usize, "NEEDLE".into()),
        2 => words.push("neeedle haystack".into()),
        _ => {}
    }
    let indent = "    ".repeat(rng.below(3) as usize);
    format!("{indent}{}", words.join(" "))
}

fn write(root: &Path, rel: &str, content: &[u8]) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, content).unwrap();
}

/// The generated workspace: ~300 files in nested directories with ignore files, hidden files
/// and a binary file.
fn build_tree(root: &Path) {
    let mut rng = Rng(0x5eed_1234_abcd_0042);
    std::fs::create_dir_all(root.join(".git")).unwrap();
    write(root, ".git/HEAD", b"ref: refs/heads/main\n");
    write(root, ".gitignore", b"*.log\nignored_dir/\n");
    write(root, "d3/.gitignore", b"secret*.txt\n");
    let exts = ["rs", "txt", "md", "py", "log", "js"];
    for i in 0..300 {
        let depth = rng.below(4);
        let mut dir = String::new();
        for _ in 0..depth {
            dir.push_str(&format!("d{}/", rng.below(5)));
        }
        let prefix = match rng.below(30) {
            0 => "ignored_dir/",
            1 => ".hidden/",
            _ => "",
        };
        let name = if rng.below(10) == 0 {
            format!("secret{i}")
        } else {
            format!("f{i}")
        };
        let ext = exts[rng.below(exts.len() as u64) as usize];
        let lines: Vec<String> = (0..rng.below(40)).map(|_| line(&mut rng)).collect();
        let mut text = lines.join("\n");
        if rng.below(5) != 0 {
            text.push('\n');
        }
        write(root, &format!("{prefix}{dir}{name}.{ext}"), text.as_bytes());
    }
    // One of each kind of skipped file, for sure.
    write(root, ".env", b"needle in a hidden file\n");
    write(root, ".hidden/deep/h.rs", b"needle\n");
    write(root, "ignored_dir/x.rs", b"needle\n");
    write(root, "d2/run.log", b"needle\n");
    write(root, "d3/secret_x.txt", b"needle\n");
    write(root, "d3/d1/secret_y.txt", b"needle\n");
    write(root, "bin/data.bin", b"needle\n\x00\x01\x02\x03needle\n");
    write(root, "empty.txt", b"");
}

fn fixture_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rg_answers.json")
}

/// rg's recorded answers, by argument list.
fn recorded() -> BTreeMap<String, Vec<String>> {
    let text = std::fs::read_to_string(fixture_path()).unwrap_or_else(|e| {
        panic!(
            "cannot read {} ({e}); record it with ripgrep installed: SKIFF_RECORD_RG=1 cargo test -p skiff-tools --test it grep_vs_rg::",
            fixture_path().display()
        )
    });
    serde_json::from_str(&text).unwrap()
}

/// rg's answer: live when `rg` is installed (and then checked against the recording), else
/// the recording. Answers are collected in `seen` for re-recording.
fn rg(root: &Path, args: &[&str], seen: &mut BTreeMap<String, Vec<String>>) -> Vec<String> {
    let key = args.join(" ");
    let out = Command::new("rg")
        .args(args)
        .current_dir(root)
        .env_remove("RIPGREP_CONFIG_PATH")
        .output();
    let out = match out {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let answer = recorded().remove(&key).unwrap_or_else(|| {
                panic!("no recorded rg answer for `rg {key}`; record with ripgrep installed")
            });
            seen.insert(key, answer.clone());
            return answer;
        }
        Err(e) => panic!("cannot run rg: {e}"),
    };
    // Exit status 1 means "no match"; 2 is an error.
    assert!(
        out.status.code() != Some(2),
        "rg {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    lines.sort();
    if std::env::var_os("SKIFF_RECORD_RG").is_none() {
        assert_eq!(
            recorded().get(&key),
            Some(&lines),
            "rg's live answer to `rg {key}` differs from tests/fixtures/rg_answers.json \
             (re-record with SKIFF_RECORD_RG=1 if the tree or rg changed)"
        );
    }
    seen.insert(key, lines.clone());
    lines
}

async fn grep(ctx: &ToolContext, mut input: Value) -> Vec<String> {
    input["head_limit"] = json!(0);
    let out = Typed::new(GrepTool).call(input.clone(), ctx).await;
    assert!(!out.is_error, "{input}: {}", out.text_content());
    let text = out.text_content();
    let mode = input["output_mode"]
        .as_str()
        .unwrap_or("files_with_matches");
    let body: Vec<&str> = match mode {
        "files_with_matches" if text == "No files found" => Vec::new(),
        "files_with_matches" => text.lines().skip(1).collect(),
        _ if text == "No matches found" => Vec::new(),
        "count" => text.split("\n\n").next().unwrap().lines().collect(),
        _ => text.lines().collect(),
    };
    let mut lines: Vec<String> = body.into_iter().map(str::to_owned).collect();
    lines.sort();
    lines
}

#[tokio::test]
async fn grep_agrees_with_ripgrep() {
    let dir = tempfile::tempdir().unwrap();
    build_tree(dir.path());
    let ctx = ToolContext::new(dir.path()).unwrap();
    let root = ctx.root().to_path_buf();

    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({"pattern": "needle"}),
            vec!["--files-with-matches", "needle"],
        ),
        (
            json!({"pattern": "needle", "output_mode": "content"}),
            vec!["-n", "--no-heading", "needle"],
        ),
        (
            json!({"pattern": "needle", "output_mode": "count"}),
            vec!["--count", "needle"],
        ),
        (
            json!({"pattern": "needle", "output_mode": "content", "-i": true}),
            vec!["-n", "--no-heading", "-i", "needle"],
        ),
        (
            json!({"pattern": r"ne+dle\s+\w+", "output_mode": "content"}),
            vec!["-n", "--no-heading", r"ne+dle\s+\w+"],
        ),
        (
            json!({"pattern": r"^\s+(fn|let)\b", "output_mode": "content", "-n": false}),
            vec!["--no-heading", "--no-line-number", r"^\s+(fn|let)\b"],
        ),
        (
            json!({"pattern": "needle", "glob": "*.{rs,md}", "-i": true}),
            vec!["-l", "-i", "-g", "*.{rs,md}", "needle"],
        ),
        (
            json!({"pattern": "needle", "type": "py", "output_mode": "count"}),
            vec!["-c", "-t", "py", "needle"],
        ),
        (
            json!({"pattern": "needle", "path": "d1"}),
            vec!["-l", "needle", "d1"],
        ),
        (
            json!({"pattern": r"fn\s*\n\s*let", "output_mode": "count", "multiline": true}),
            vec!["-c", "-U", "--multiline-dotall", r"fn\s*\n\s*let"],
        ),
        (
            json!({"pattern": r"\(.*?\)", "output_mode": "content", "multiline": true}),
            vec!["-n", "--no-heading", "-U", "--multiline-dotall", r"\(.*?\)"],
        ),
        (
            json!({"pattern": "needle", "output_mode": "content", "-C": 2}),
            vec!["-n", "--no-heading", "-C", "2", "needle"],
        ),
        (
            json!({"pattern": "gamma", "output_mode": "content", "-o": true}),
            vec!["-n", "--no-heading", "-o", "gamma"],
        ),
    ];
    let mut seen = BTreeMap::new();
    for (input, args) in cases {
        let ours = grep(&ctx, input.clone()).await;
        let theirs = rg(&root, &args, &mut seen);
        assert!(
            !theirs.is_empty(),
            "rg {args:?} found nothing; the tree is too small"
        );
        assert_eq!(ours, theirs, "Grep {input} differs from rg {args:?}");
    }

    // The generated tree exercises what it should: ignored, hidden and binary files exist and
    // contain the pattern, yet neither tool reports them.
    let files = grep(&ctx, json!({"pattern": "needle"})).await;
    let everything = rg(
        &root,
        &["-l", "--no-ignore", "--hidden", "--binary", "needle"],
        &mut seen,
    );
    type IsKind = fn(&str) -> bool;
    let kinds: [(&str, IsKind); 6] = [
        ("gitignored directory", |f| f.starts_with("ignored_dir/")),
        ("hidden directory", |f| f.starts_with(".hidden/")),
        ("hidden file", |f| f == ".env"),
        ("binary file", |f| f == "bin/data.bin"),
        ("gitignored extension", |f| f.ends_with(".log")),
        ("nested .gitignore", |f| {
            f.starts_with("d3/") && f.contains("/secret") && f.ends_with(".txt")
        }),
    ];
    for (kind, is_kind) in kinds {
        assert!(
            everything.iter().any(|f| is_kind(f)),
            "the tree has no {kind} with a match"
        );
        assert!(
            !files.iter().any(|f| is_kind(f)),
            "{kind} should be skipped: {files:?}"
        );
    }
    assert!(files.len() > 50, "only {} files match", files.len());
    if std::env::var_os("SKIFF_RECORD_RG").is_some() {
        std::fs::create_dir_all(fixture_path().parent().unwrap()).unwrap();
        std::fs::write(
            fixture_path(),
            serde_json::to_string_pretty(&seen).unwrap() + "\n",
        )
        .unwrap();
    }
}
