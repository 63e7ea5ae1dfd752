//! The differential fuzzer of the permission engine (issue 31): command lines from the
//! engine's proptest grammar plus every dynamic form run under real bash in a throwaway
//! directory, every program replaced by a recorder and every file bash opens watched; what bash
//! really ran, read and wrote is compared with what the engine analysed and with the rules:
//!
//! * a command the engine allows in which bash ran a program, or read or wrote a file, that the
//!   engine did not see fails;
//! * a command the engine allows that really ran or touched something its rules forbid (a
//!   denied program, a denied file, a write in plan mode, a write outside in acceptEdits, a
//!   program that is not read-only in default mode) fails.
//!
//! `SKIFF_FUZZ_CASES` sets the number of command lines (400 by default, as in CI);
//! `SKIFF_FUZZ_SEED` a seed (a fixed one by default, so CI runs are reproducible). Linux only
//! (inotify); bash, env, timeout, nice, nohup, xargs and stdbuf must be installed.

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod grammar;
mod sandbox;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::json;
use skiff_core::permissions::command_line::{self, Part, PathUse};
use skiff_core::permissions::rule::{Rule, RuleKind, RuleOrigin};
use skiff_core::permissions::{
    PermissionDecision, PermissionEngine, PermissionMode, PermissionQuery, RuleSet, Workspace,
};
use skiff_tools::commands;

use sandbox::{Case, Observed, Tools};

/// One configuration the engine is asked in.
struct Config_ {
    name: &'static str,
    mode: PermissionMode,
    allow: &'static [&'static str],
    ask: &'static [&'static str],
    deny: &'static [&'static str],
}

const CONFIGS: &[Config_] = &[
    Config_ {
        name: "default",
        mode: PermissionMode::Default,
        allow: &[],
        ask: &[],
        deny: &[],
    },
    Config_ {
        name: "acceptEdits",
        mode: PermissionMode::AcceptEdits,
        allow: &[],
        ask: &[],
        deny: &[],
    },
    Config_ {
        name: "plan",
        mode: PermissionMode::Plan,
        allow: &[],
        ask: &[],
        deny: &[],
    },
    Config_ {
        name: "sandbox auto-allow with deny rules",
        mode: PermissionMode::Default,
        allow: &["Bash"],
        ask: &["Bash(git push:*)"],
        deny: &["Bash(rm:*)", "Read(./.env)", "Edit(./a.txt)"],
    },
    Config_ {
        name: "bypass with deny rules",
        mode: PermissionMode::BypassPermissions,
        allow: &[],
        ask: &[],
        deny: &["Bash(rm:*)", "Read(./.env)", "Edit(./a.txt)"],
    },
    Config_ {
        name: "allow rules",
        mode: PermissionMode::Default,
        allow: &["Bash(npm test:*)", "Bash(git status:*)", "Bash(make:*)"],
        ask: &["Bash(git push:*)"],
        deny: &[],
    },
];

fn engine(case: &Case, c: &Config_) -> PermissionEngine {
    let origin = RuleOrigin {
        root: case.ws.clone(),
        cwd: case.ws.clone(),
        home: Some(case.home.clone()),
    };
    let mut rules = RuleSet::default();
    for (kind, list) in [
        (RuleKind::Allow, c.allow),
        (RuleKind::Ask, c.ask),
        (RuleKind::Deny, c.deny),
    ] {
        for r in list {
            rules.push(kind, Rule::parse(r, &origin).unwrap());
        }
    }
    PermissionEngine::new(rules, Workspace::new(&case.ws, &[]))
}

fn cases() -> u32 {
    std::env::var("SKIFF_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400)
}

static ALLOWED: [AtomicUsize; 6] = [const { AtomicUsize::new(0) }; 6];
static RUNS_CHECKED: AtomicUsize = AtomicUsize::new(0);
static FILES_CHECKED: AtomicUsize = AtomicUsize::new(0);

#[test]
fn bash_never_does_more_than_the_engine_allowed() {
    let tools = Tools::new();
    let n = cases();
    let seed: u64 = std::env::var("SKIFF_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(31);
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let config = Config {
        cases: n,
        failure_persistence: None,
        max_shrink_iters: 2000,
        ..Config::default()
    };
    let mut runner = TestRunner::new_with_rng(
        config,
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes),
    );
    let started = std::time::Instant::now();
    let result = runner.run(&grammar::command(), |cmd| {
        check(&tools, &cmd).map_err(TestCaseError::fail)
    });
    let allowed: Vec<String> = CONFIGS
        .iter()
        .zip(&ALLOWED)
        .map(|(c, n)| format!("{}: {}", c.name, n.load(Ordering::Relaxed)))
        .collect();
    eprintln!(
        "permission fuzzer: {n} command lines (seed {seed}) in {:.1} s; allowed per configuration: {}; {} programs and {} files bash touched were checked against the engine's analysis",
        started.elapsed().as_secs_f64(),
        allowed.join(", "),
        RUNS_CHECKED.load(Ordering::Relaxed),
        FILES_CHECKED.load(Ordering::Relaxed),
    );
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// Run one command line and hold every configuration's decision against what bash did.
fn check(tools: &Tools, template: &str) -> Result<(), String> {
    let case = Case::new();
    let command = template.replace("@ROOT@", &case.root.display().to_string());
    // Decide first: the command may change the tree the engine looks at.
    let ws = Workspace::new(&case.ws, &[]);
    let analysis = command_line::analyze(&command, &ws);
    let decisions: Vec<PermissionDecision> = CONFIGS
        .iter()
        .map(|c| {
            engine(&case, c).decide(&PermissionQuery {
                tool: "Bash",
                input: &json!({ "command": command }),
                tool_use_id: "fuzz",
                read_only: false,
                mode: c.mode,
            })
        })
        .collect();
    if !decisions
        .iter()
        .any(|d| matches!(d, PermissionDecision::Allow))
    {
        return Ok(());
    }
    let observed = case.run(tools, &command);
    if observed.timed_out {
        return Err(format!("{command:?}: bash did not finish"));
    }
    for ((c, d), count) in CONFIGS.iter().zip(&decisions).zip(&ALLOWED) {
        if !matches!(d, PermissionDecision::Allow) {
            continue;
        }
        count.fetch_add(1, Ordering::Relaxed);
        let parts = analysis
            .as_ref()
            .map_err(|why| format!("{command:?} allowed in {} though opaque: {why}", c.name))?;
        seen(&command, c, parts, &observed)?;
        within_rules(&command, c, &case, &observed)?;
    }
    Ok(())
}

/// Everything bash ran, read and wrote is something the engine saw.
fn seen(command: &str, c: &Config_, parts: &[Part], obs: &Observed) -> Result<(), String> {
    for (dir, name, args) in &obs.runs {
        RUNS_CHECKED.fetch_add(1, Ordering::Relaxed);
        let ok = parts.iter().any(|p| part_ran(p, name, args));
        if !ok {
            return Err(format!(
                "{command:?} allowed in {}: bash ran `{name} {}` (in {}), which the engine did not see; it saw {:?}",
                c.name,
                args.join(" "),
                dir.display(),
                parts.iter().map(|p| p.text()).collect::<Vec<_>>()
            ));
        }
    }
    for w in &obs.writes {
        FILES_CHECKED.fetch_add(1, Ordering::Relaxed);
        let ok = parts
            .iter()
            .any(|p| p.writes.iter().chain(&p.tree_writes).any(|u| covers(u, w)));
        if !ok {
            return Err(format!(
                "{command:?} allowed in {}: bash wrote {}, which the engine did not see",
                c.name,
                w.display()
            ));
        }
    }
    for r in &obs.reads {
        FILES_CHECKED.fetch_add(1, Ordering::Relaxed);
        let ok = parts.iter().any(|p| {
            p.reads
                .iter()
                .chain(&p.trees)
                .chain(&p.writes)
                .any(|u| covers(u, r))
        });
        if !ok {
            return Err(format!(
                "{command:?} allowed in {}: bash read {}, which the engine did not see",
                c.name,
                r.display()
            ));
        }
    }
    Ok(())
}

/// Whether the engine's part could be the program bash ran with these arguments.
fn part_ran(p: &Part, name: &str, args: &[String]) -> bool {
    if p.program_unknown {
        return true;
    }
    let Some(first) = p.argv.first() else {
        return false;
    };
    let base = first.rsplit('/').next().unwrap_or(first);
    if let Some(prefix) = &p.known_prefix {
        // Computed at run time: the known start must agree with what ran.
        let ran = format!("{name} {}", args.join(" "));
        let known = prefix
            .split_once(' ')
            .map_or(prefix.as_str(), |(_, rest)| rest);
        let program_known = prefix.contains(' ');
        let ran_args = ran.split_once(' ').map_or("", |(_, r)| r);
        return if program_known {
            base == name && (ran_args.starts_with(known) || known.starts_with(ran_args))
        } else {
            name.starts_with(base.split('$').next().unwrap_or(""))
        };
    }
    base == name
        && args
            .iter()
            .all(|a| p.argv[1..].contains(a) || p.unexpanded.contains(a))
}

/// Whether a path the engine analysed covers what bash touched (a tree covers what is in it).
fn covers(u: &PathUse, touched: &Path) -> bool {
    u.unknown || u.forms.iter().any(|f| touched.starts_with(f))
}

/// What really happened obeys the configuration's rules.
fn within_rules(command: &str, c: &Config_, case: &Case, obs: &Observed) -> Result<(), String> {
    let fail = |what: String| Err(format!("{command:?} allowed in {}: {what}", c.name));
    let origin = RuleOrigin {
        root: case.ws.clone(),
        cwd: case.ws.clone(),
        home: Some(case.home.clone()),
    };
    let deny: Vec<Rule> = c
        .deny
        .iter()
        .chain(c.ask)
        .map(|r| Rule::parse(r, &origin).unwrap())
        .collect();
    let allow: Vec<Rule> = c
        .allow
        .iter()
        .map(|r| Rule::parse(r, &origin).unwrap())
        .collect();
    let ws = Workspace::new(&case.ws, &[]);
    // Devices and process substitutions (`/dev/fd/63`) are no files.
    let path_of = |dir: &Path, p: &str| {
        if p.starts_with("/dev/") || p.starts_with("/proc/self/fd/") {
            return None;
        }
        skiff_tools::path_guard::physical_path(dir, p)
    };
    for (dir, name, args) in &obs.runs {
        let mut argv = vec![name.clone()];
        argv.extend(args.iter().cloned());
        let text = argv.join(" ");
        let effects = commands::effects(&argv);
        let mut texts = vec![text.clone()];
        texts.extend(effects.runs.iter().map(|r| r.join(" ")));
        for r in &deny {
            if r.is_command_rule()
                && r.names_tool("Bash", RuleKind::Deny)
                && texts.iter().any(|t| r.matches_command(t))
            {
                return fail(format!("bash ran `{text}`, which {r} covers"));
            }
        }
        let reads: Vec<PathBuf> = effects
            .reads
            .iter()
            .chain(&effects.trees)
            .filter_map(|p| path_of(dir, p))
            .collect();
        let writes: Vec<PathBuf> = effects
            .writes
            .iter()
            .chain(&effects.tree_writes)
            .filter_map(|p| path_of(dir, p))
            .collect();
        for r in &deny {
            if let Some(p) = reads.iter().find(|p| {
                r.is_path_rule() && r.names_tool("Read", RuleKind::Deny) && r.matches_path(p)
            }) {
                return fail(format!("`{text}` read {}, which {r} covers", p.display()));
            }
            if let Some(p) = writes.iter().find(|p| {
                r.is_path_rule() && r.names_tool("Write", RuleKind::Deny) && r.matches_path(p)
            }) {
                return fail(format!("`{text}` wrote {}, which {r} covers", p.display()));
            }
        }
        let by_rule = allow
            .iter()
            .any(|r| r.is_command_rule() && r.matches_command(&text));
        let bash_allowed = allow.iter().any(|r| r.bare_tool() == Some("Bash"));
        if by_rule || bash_allowed || c.mode == PermissionMode::BypassPermissions {
            continue;
        }
        let reads_inside = reads.iter().all(|p| ws.inside(p) || is_device(p));
        match c.mode {
            PermissionMode::AcceptEdits => {
                let writes_inside = writes
                    .iter()
                    .all(|p| is_device(p) || (ws.inside(p) && !ws.protected(p)));
                if effects.kind == commands::Kind::Unknown || !writes_inside || !reads_inside {
                    return fail(format!(
                        "in acceptEdits bash ran `{text}` (in {}): {:?}, writes {writes:?}, reads {reads:?}",
                        dir.display(),
                        effects.kind
                    ));
                }
            }
            _ => {
                if !effects.read_only() || !reads_inside {
                    return fail(format!(
                        "bash ran `{text}` (in {}), which is not a read-only command inside the workspace: {:?} {:?}",
                        dir.display(),
                        effects.why,
                        reads
                    ));
                }
            }
        }
    }
    for w in &obs.writes {
        for r in &deny {
            if r.is_path_rule() && r.names_tool("Write", RuleKind::Deny) && r.matches_path(w) {
                return fail(format!("bash wrote {}, which {r} covers", w.display()));
            }
        }
        let by_allow = allow.iter().any(|r| r.bare_tool() == Some("Bash"))
            || c.mode == PermissionMode::BypassPermissions;
        match c.mode {
            _ if by_allow => {}
            PermissionMode::AcceptEdits if ws.inside(w) && !ws.protected(w) => {}
            _ => return fail(format!("bash wrote {}", w.display())),
        }
    }
    for r in &obs.reads {
        for rule in &deny {
            if rule.is_path_rule()
                && rule.names_tool("Read", RuleKind::Deny)
                && rule.matches_path(r)
            {
                return fail(format!("bash read {}, which {rule} covers", r.display()));
            }
        }
        let by_allow = allow.iter().any(|a| a.bare_tool() == Some("Bash"))
            || c.mode == PermissionMode::BypassPermissions;
        if !by_allow && !ws.inside(r) {
            return fail(format!("bash read {} outside the workspace", r.display()));
        }
    }
    Ok(())
}

fn is_device(p: &Path) -> bool {
    p.starts_with("/dev")
}

/// The grammar makes command lines the engine can decide on (it is also the benchmark's
/// corpus).
#[test]
fn the_corpus_is_reproducible() {
    let a = grammar::corpus(20);
    let b = grammar::corpus(20);
    assert_eq!(a, b);
    assert!(
        a.iter()
            .any(|c| c.contains("&&") || c.contains(';') || c.contains('|'))
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]
    /// The analysis never panics on what the grammar makes.
    #[test]
    fn the_analysis_takes_any_command_line(cmd in grammar::command()) {
        let dir = tempfile::tempdir().unwrap();
        let _ = command_line::analyze(&cmd, &Workspace::new(dir.path(), &[]));
    }
}
