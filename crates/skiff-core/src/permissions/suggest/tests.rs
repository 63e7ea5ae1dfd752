use std::path::PathBuf;

use serde_json::json;

use super::*;
use crate::permissions::rule::{Rule, RuleKind, RuleOrigin};
use crate::permissions::{PermissionDecision, PermissionQuery, Workspace};

struct Ws {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

fn ws() -> Ws {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(root.join("x")).unwrap();
    std::fs::write(root.join("a.txt"), "a").unwrap();
    Ws { _dir: dir, root }
}

fn engine(w: &Ws) -> PermissionEngine {
    PermissionEngine::new(RuleSet::default(), Workspace::new(&w.root, &[]))
}

fn bash(e: &PermissionEngine, cmd: &str) -> PermissionDecision {
    e.decide(&PermissionQuery {
        tool: "Bash",
        input: &json!({ "command": cmd }),
        tool_use_id: "t",
        read_only: false,
        mode: PermissionMode::Default,
    })
}

fn suggest(e: &PermissionEngine, cmd: &str) -> Vec<String> {
    e.suggest_rules("Bash", &json!({ "command": cmd }), PermissionMode::Default)
}

#[test]
fn compound_commands_get_one_rule_per_part_that_needs_one() {
    let w = ws();
    let e = engine(&w);
    let cases: &[(&str, &[&str])] = &[
        ("cd x && npm test", &["Bash(npm test:*)"]),
        ("npm test -- --watch", &["Bash(npm test:*)"]),
        (
            "npm run build && npm test",
            &["Bash(npm run build:*)", "Bash(npm test:*)"],
        ),
        (
            "git commit -m 'x y' && git push origin main",
            &["Bash(git commit:*)", "Bash(git push:*)"],
        ),
        (
            "ls && cargo build --release 2>&1 | tail -5",
            &["Bash(cargo build:*)"],
        ),
        ("make -j4", &["Bash(make:*)"]),
        (
            "python script.py --fast",
            &["Bash(python script.py --fast)"],
        ),
        ("python3 -m pytest -q tests", &["Bash(python3 -m pytest:*)"]),
        ("./build.sh release", &["Bash(./build.sh release)"]),
        (
            "npm test > out.txt",
            &["Bash(npm test:*)", "Edit(./out.txt)"],
        ),
        ("timeout 60 cargo test", &["Bash(cargo test:*)"]),
        ("sed -i s/a/b/ a.txt", &["Bash(sed -i s/a/b/ a.txt)"]),
        ("rm -rf build", &["Bash(rm -rf build)"]),
        ("$X run", &[]),
        ("cat a.txt", &[]),
    ];
    for (cmd, expected) in cases {
        assert_eq!(suggest(&e, cmd), *expected, "{cmd}");
    }
}

#[test]
fn saving_the_suggestions_means_the_command_is_not_asked_again() {
    for cmd in [
        "cd x && npm test",
        "npm run build && npm test -- --watch",
        "git add -A && git commit -m 'a (b)' && git push",
        "cargo fmt --all && cargo clippy --workspace -- -D warnings",
        "make -j4 2>&1 | tail -20",
        "npm test > out.txt 2>&1",
        "cd x; python3 -m pytest -q; cd ..; ls",
        "docker compose up -d && curl localhost:8080",
    ] {
        let w = ws();
        let e = engine(&w);
        assert!(
            matches!(bash(&e, cmd), PermissionDecision::Ask { .. }),
            "{cmd} asks first"
        );
        let rules = suggest(&e, cmd);
        assert!(!rules.is_empty(), "{cmd}");
        for r in &rules {
            e.add_rule(
                RuleKind::Allow,
                Rule::parse(r, &RuleOrigin::at(&w.root)).unwrap(),
            );
        }
        assert_eq!(
            bash(&e, cmd),
            PermissionDecision::Allow,
            "{cmd} after {rules:?}"
        );
    }
}

#[test]
fn other_tools() {
    let w = ws();
    let e = engine(&w);
    let s = |tool: &str, input: Value| e.suggest_rules(tool, &input, PermissionMode::Default);
    assert_eq!(
        s("Write", json!({"file_path": "src/a.rs"})),
        ["Edit(./src/a.rs)"]
    );
    assert_eq!(
        s("WebFetch", json!({"url": "https://Docs.rs/x"})),
        ["WebFetch(domain:docs.rs)"]
    );
    assert_eq!(s("mcp__a__b", json!({})), ["mcp__a__b"]);
}
