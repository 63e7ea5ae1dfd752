//! `skiff batch` end to end: six scripted tasks over two local repositories with `--jobs 3`
//! (results for all, isolation, a failing task and bad lines not stopping the rest), resume
//! after an interrupted run, a time limit, `--index` giving the batch's result line, the
//! credentials and per-task model reaching a real provider (the mock), and hostile input.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skiff_protocol::script::{ScriptBlock, ScriptTurn};
use skiff_testkit::MockServer;

/// A temp dir holding HOME, the repositories, scripts, the task file and the results.
struct Env {
    root: tempfile::TempDir,
}

impl Env {
    fn new() -> Self {
        Env {
            root: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.path().join(rel)
    }

    fn command(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_skiff"));
        c.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.path("home"))
            .env("SKIFF_HOME", self.path("home/.skiff"))
            .current_dir(self.root.path())
            .stdin(Stdio::null());
        c
    }

    /// `skiff batch ARGS…` to its end.
    fn batch(&self, args: &[&str]) -> Output {
        self.command().arg("batch").args(args).output().unwrap()
    }

    /// A git repository `name` with one committed file, plus an uncommitted change (tasks
    /// start from the commit, never from the source's working tree).
    fn repo(&self, name: &str) -> PathBuf {
        let dir = self.path(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("base.txt"), format!("{name}\n")).unwrap();
        git(&dir, &["init", "-q", "-b", "main"]);
        git(&dir, &["add", "base.txt"]);
        git(&dir, &["commit", "-q", "-m", "base"]);
        std::fs::write(dir.join("base.txt"), "dirty, uncommitted\n").unwrap();
        dir
    }

    /// A model script at `scripts/<name>.json`.
    fn script(&self, name: &str, turns: Vec<ScriptTurn>) -> PathBuf {
        let path = self.path(&format!("scripts/{name}.json"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(
            &path,
            serde_json::to_string(&json!({ "turns": turns })).unwrap(),
        )
        .unwrap();
        path
    }

    fn write_tasks(&self, lines: &[String]) -> PathBuf {
        let path = self.path("tasks.jsonl");
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        path
    }

    fn results(&self) -> Vec<Value> {
        read_results(&self.path("results.jsonl"))
    }
}

fn read_results(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect()
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn text(t: &str) -> ScriptBlock {
    ScriptBlock::Text { text: t.into() }
}

fn tool(name: &str, input: Value) -> ScriptBlock {
    ScriptBlock::ToolUse {
        id: None,
        name: name.into(),
        input,
    }
}

fn turn(content: Vec<ScriptBlock>) -> ScriptTurn {
    ScriptTurn {
        content,
        ..ScriptTurn::default()
    }
}

/// A task that writes `<id>.txt`, lists the directory into `seen-<id>.txt`, and answers.
fn writing_task(env: &Env, id: &str, repo: &str) -> String {
    let script = env.script(
        id,
        vec![
            turn(vec![tool(
                "Write",
                json!({"file_path": format!("{id}.txt"), "content": format!("{id}\n")}),
            )]),
            turn(vec![tool(
                "Bash",
                json!({"command": format!("ls > seen-{id}.txt")}),
            )]),
            turn(vec![text(&format!("done {id}"))]),
        ],
    );
    json!({
        "id": id,
        "repo": repo,
        "prompt": format!("write {id}.txt"),
        "permission_mode": "acceptEdits",
        "allowed_tools": ["Bash(ls:*)"],
        "args": ["--script", script],
    })
    .to_string()
}

/// A task whose Bash call sleeps for a long time.
fn sleeping_task(env: &Env, id: &str, repo: &str, extra: Value) -> String {
    let script = env.script(
        id,
        vec![
            turn(vec![tool("Bash", json!({"command": "sleep 120"}))]),
            turn(vec![text("slept")]),
        ],
    );
    let mut t = json!({
        "id": id,
        "repo": repo,
        "prompt": "sleep",
        "allowed_tools": ["Bash(sleep:*)"],
        "args": ["--script", script],
    });
    if let (Some(t), Some(extra)) = (t.as_object_mut(), extra.as_object()) {
        t.extend(extra.clone());
    }
    t.to_string()
}

fn by_key(results: &[Value]) -> HashMap<String, Value> {
    results
        .iter()
        .map(|r| {
            let key = match r["id"].as_str() {
                Some(id) => id.to_owned(),
                None => format!("line {}", r["line"]),
            };
            (key, r.clone())
        })
        .collect()
}

fn paths(r: &Value) -> Vec<String> {
    let mut p: Vec<String> = r["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap().to_owned())
        .collect();
    p.sort();
    p
}

/// Six tasks (one failing) plus two bad lines over two repositories, three at a time.
fn six_task_batch(env: &Env) -> PathBuf {
    let a = env.repo("repo-a");
    let b = env.repo("repo-b");
    let failing = env.script(
        "f",
        vec![
            turn(vec![tool("Bash", json!({"command": "ls"}))]),
            turn(vec![text("never reached")]),
        ],
    );
    let lines = vec![
        writing_task(env, "a1", "repo-a"),
        writing_task(env, "a2", "repo-a"),
        "{this is not json".to_owned(),
        writing_task(env, "b1", "repo-b"),
        json!({"id": "../escape", "repo": "repo-a", "prompt": "x"}).to_string(),
        writing_task(env, "a3", "repo-a"),
        json!({"id": "f1", "repo": "repo-b", "prompt": "list", "max_turns": 1,
               "allowed_tools": ["Bash(ls)"], "args": ["--script", failing]})
        .to_string(),
        writing_task(
            env,
            "b2",
            a.parent().unwrap().join("repo-b").to_str().unwrap(),
        ),
    ];
    let _ = b;
    env.write_tasks(&lines)
}

#[test]
fn six_tasks_over_two_repos_run_isolated_and_index_mode_gives_the_same_line() {
    let env = Env::new();
    six_task_batch(&env);
    let out = env.batch(&[
        "tasks.jsonl",
        "--jobs",
        "3",
        "--out",
        "results.jsonl",
        "--workdir",
        "work",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "some tasks failed: {stderr}");
    let results = env.results();
    assert_eq!(results.len(), 8, "{results:#?}");
    let r = by_key(&results);

    for id in ["a1", "a2", "a3", "b1", "b2"] {
        let t = &r[id];
        assert_eq!(t["status"], "success", "{id}: {t:#}");
        assert_eq!(t["result"], format!("done {id}"));
        assert_eq!(t["num_turns"], 3);
        // Isolation: each task sees only its own file next to the committed one.
        assert_eq!(
            paths(t),
            vec![format!("{id}.txt"), format!("seen-{id}.txt")],
            "{id}"
        );
        let wt = PathBuf::from(t["worktree"].as_str().unwrap());
        let seen = std::fs::read_to_string(wt.join(format!("seen-{id}.txt"))).unwrap();
        let mut seen: Vec<&str> = seen.lines().collect();
        seen.sort_unstable();
        assert_eq!(
            seen,
            vec![&format!("{id}.txt"), "base.txt", &format!("seen-{id}.txt")],
            "{id} saw other files"
        );
        // The start commit is the committed file, not the source's uncommitted edit.
        assert_eq!(
            std::fs::read_to_string(wt.join("base.txt")).unwrap(),
            if id.starts_with('a') {
                "repo-a\n"
            } else {
                "repo-b\n"
            }
        );
        let diff = t["diff"].as_str().unwrap();
        assert!(
            diff.contains(&format!("+++ b/{id}.txt\n@@ -0,0 +1 @@\n+{id}")),
            "{diff}"
        );
        let change = &t["changes"][0];
        assert_eq!(change["status"], "added");
        assert!(change["diff"].as_str().unwrap().contains(&format!("+{id}")));
        assert!(t["usage"].is_object() && t["total_cost_usd"].is_number());
        assert!(t["duration_ms"].as_u64().is_some());
        let transcript = PathBuf::from(t["transcript"].as_str().unwrap());
        assert!(transcript.is_file(), "{}", transcript.display());
        assert!(
            std::fs::read_to_string(&transcript)
                .unwrap()
                .contains(&format!("done {id}"))
        );
        assert_eq!(t["base_commit"].as_str().unwrap().len(), 40);
    }
    assert_eq!(r["f1"]["status"], "max_turns");
    assert!(
        r["f1"]["error"]
            .as_str()
            .unwrap()
            .contains("maximum number of turns")
    );
    let bad = &r["line 3"];
    assert_eq!(bad["status"], "error");
    assert!(bad["error"].as_str().unwrap().contains("line 3"), "{bad}");
    let escape = &r["line 5"];
    assert!(escape["error"].as_str().unwrap().contains("../escape"));
    assert!(!env.path("escape").exists() && !env.path("work/../escape").exists());
    // The sources are untouched.
    for repo in ["repo-a", "repo-b"] {
        assert_eq!(
            git(&env.path(repo), &["status", "--porcelain"]),
            " M base.txt\n"
        );
        assert_eq!(
            git(&env.path(repo), &["worktree", "list"]).lines().count(),
            1
        );
    }
    assert!(stderr.contains("[8/8]"), "{stderr}");

    // --index: the same task alone gives the same line (but for its run's own ids and times).
    let a3_index = r["a3"]["index"].as_u64().unwrap().to_string();
    let out = env.batch(&[
        "tasks.jsonl",
        "--index",
        &a3_index,
        "--workdir",
        "work",
        "--results-dir",
        "res",
    ]);
    assert!(out.status.success(), "{out:?}");
    let line: Value = serde_json::from_slice(&out.stdout).unwrap();
    let volatile = ["session_id", "transcript", "duration_ms"];
    let strip = |v: &Value| {
        let mut v = v.clone();
        for k in volatile {
            v.as_object_mut().unwrap().remove(k);
        }
        v
    };
    assert_eq!(strip(&line), strip(&r["a3"]));
    let saved: Value = serde_json::from_str(
        &std::fs::read_to_string(env.path(&format!("res/{a3_index}.json"))).unwrap(),
    )
    .unwrap();
    assert_eq!(saved, line);
    // A retried pod prints the saved result instead of running the task again.
    let again = env.batch(&[
        "tasks.jsonl",
        "--index",
        &a3_index,
        "--workdir",
        "work",
        "--results-dir",
        "res",
    ]);
    let again: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(again["session_id"], line["session_id"]);
    // The failing task's index exits non-zero; a bad line's index reports it.
    let f1 = r["f1"]["index"].as_u64().unwrap().to_string();
    let out = env.batch(&["tasks.jsonl", "--index", &f1, "--workdir", "work"]);
    assert_eq!(out.status.code(), Some(1));
    let out = env.batch(&["tasks.jsonl", "--index", "2", "--workdir", "work"]);
    assert_eq!(out.status.code(), Some(1));
    let line: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(line["error"].as_str().unwrap().contains("line 3"));
    let out = env.batch(&["tasks.jsonl", "--index", "99"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("out of range"));

    // A rerun finds every task done and runs nothing.
    let out = env.batch(&["tasks.jsonl", "--out", "results.jsonl", "--workdir", "work"]);
    assert_eq!(out.status.code(), Some(1), "earlier failures still count");
    assert_eq!(env.results().len(), 8);
}

/// Whether the slow task's transcript has its `sleep` call (so its child is running it).
fn slow_task_sleeps(env: &Env) -> bool {
    let Ok(dirs) = std::fs::read_dir(env.path("home/.skiff/projects")) else {
        return false;
    };
    dirs.flatten()
        .filter(|d| d.file_name().to_string_lossy().ends_with("-slow"))
        .filter_map(|d| std::fs::read_dir(d.path()).ok())
        .flatten()
        .flatten()
        .any(|f| std::fs::read_to_string(f.path()).is_ok_and(|t| t.contains("sleep 120")))
}

/// Poll until `cond` holds (a generous deadline against hangs, not a timing assertion).
fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn an_interrupted_batch_records_the_running_task_and_a_rerun_finishes_only_it() {
    let env = Env::new();
    env.repo("repo");
    let lines = vec![
        writing_task(&env, "t1", "repo"),
        sleeping_task(&env, "slow", "repo", json!({})),
        writing_task(&env, "t3", "repo"),
    ];
    env.write_tasks(&lines);
    let mut child = env
        .command()
        .args(["batch", "tasks.jsonl", "-j", "3", "--out", "results.jsonl"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until both quick tasks are recorded and the slow one sleeps in its Bash call.
    wait_for("the quick tasks' results", || env.results().len() == 2);
    wait_for("the slow task's Bash call", || slow_task_sleeps(&env));
    let seen = by_key(&env.results());
    assert!(seen.contains_key("t1") && seen.contains_key("t3"));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let results = env.results();
    assert_eq!(results.len(), 3);
    let slow = &by_key(&results)["slow"];
    assert_eq!(slow["status"], "interrupted", "{slow:#}");
    assert!(slow["session_id"].is_string(), "the child ran: {slow:#}");

    // The rerun: the slow task now answers at once; the finished ones are not run again.
    env.script("slow", vec![turn(vec![text("quick now")])]);
    let out = env.batch(&["tasks.jsonl", "--out", "results.jsonl"]);
    assert!(out.status.success(), "{out:?}");
    let results = env.results();
    assert_eq!(results.len(), 4, "{results:#?}");
    assert_eq!(results[3]["id"], "slow");
    assert_eq!(results[3]["status"], "success");
    assert_eq!(results[3]["result"], "quick now");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("2 task(s) already have a result"),
        "{stderr}"
    );
    // The default work dir sits beside the task file.
    assert!(env.path("tasks.work/slow/base.txt").is_file());
}

#[test]
fn a_task_past_its_time_limit_is_stopped_as_timeout() {
    let env = Env::new();
    env.repo("repo");
    env.write_tasks(&[
        sleeping_task(&env, "s1", "repo", json!({"timeout_secs": 0.5})),
        sleeping_task(&env, "s2", "repo", json!({})),
    ]);
    let out = env.batch(&["tasks.jsonl", "--out", "results.jsonl", "--timeout", "1"]);
    assert_eq!(out.status.code(), Some(1));
    let r = by_key(&env.results());
    for id in ["s1", "s2"] {
        assert_eq!(r[id]["status"], "timeout", "{:#}", r[id]);
        assert!(r[id]["error"].as_str().unwrap().contains("time limit"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_task_model_and_the_api_key_reach_the_provider_but_not_the_results() {
    const KEY: &str = "sk-ant-batch-secret-1234";
    let server = MockServer::builder()
        .turn(turn(vec![text("hello from the mock")]))
        .repeat(true)
        .start()
        .await
        .unwrap();
    let env = Env::new();
    env.repo("repo");
    env.write_tasks(&[
        json!({"id": "m1", "repo": "repo", "prompt": "hi", "model": "claude-haiku-4-5"})
            .to_string(),
        json!({"id": "m2", "repo": "repo", "prompt": "hi"}).to_string(),
    ]);
    let url = server.url();
    let out = tokio::task::spawn_blocking({
        let mut c = env.command();
        c.env("ANTHROPIC_API_KEY", KEY).args([
            "batch",
            "tasks.jsonl",
            "--out",
            "results.jsonl",
            "--base-url",
            &url,
            "--",
            "--model",
            "claude-opus-4-1",
        ]);
        move || c.output().unwrap()
    })
    .await
    .unwrap();
    assert!(out.status.success(), "{out:?}");
    let r = by_key(&env.results());
    assert_eq!(r["m1"]["result"], "hello from the mock");
    let mut models: Vec<String> = server
        .messages_requests()
        .iter()
        .map(|q| {
            assert_eq!(q.header("x-api-key"), Some(KEY));
            q.body["model"].as_str().unwrap().to_owned()
        })
        .collect();
    models.sort();
    assert_eq!(models, vec!["claude-haiku-4-5", "claude-opus-4-1"]);
    let all = std::fs::read_to_string(env.path("results.jsonl")).unwrap();
    assert!(!all.contains(KEY));
    assert!(!String::from_utf8_lossy(&out.stderr).contains(KEY));
}

#[test]
fn hostile_task_files_give_clear_errors() {
    let env = Env::new();
    // No such file.
    let out = env.batch(&["missing.jsonl"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read the task file"));
    // --jobs 0.
    std::fs::write(env.path("empty.jsonl"), "\n\n").unwrap();
    let out = env.batch(&["empty.jsonl", "--jobs", "0"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--jobs must be at least 1"));
    // An empty file: nothing to do.
    let out = env.batch(&["empty.jsonl"]);
    assert!(out.status.success(), "{out:?}");
    // Binary garbage, wrong types, unknown fields, a missing repo, bad flags: an error result
    // per line naming it, never a panic.
    env.repo("repo");
    let mut garbage = vec![0u8, 159, 146, 150, b'\n', b'{', 0xff, b'}', b'\n'];
    garbage.extend_from_slice(
        concat!(
            r#"[1,2,3]"#,
            "\n",
            r#"{"id":"n","repo":"repo","prompt":"x","max_turns":"ten"}"#,
            "\n",
            r#"{"id":"u","repo":"repo","prompt":"x","colour":"red"}"#,
            "\n",
            r#"{"id":"m","repo":"no/such/repo","prompt":"x"}"#,
            "\n",
            r#"{"id":"f","repo":"repo","prompt":"x","args":["--output-format","text"]}"#,
            "\n",
            r#"{"id":"g","repo":"repo","prompt":"x","args":["--bogus"]}"#,
            "\n",
            r#"{"id":"r","repo":"repo","ref":"no-such-branch","prompt":"x"}"#,
            "\n",
        )
        .as_bytes(),
    );
    std::fs::write(env.path("bad.jsonl"), garbage).unwrap();
    let out = env.batch(&["bad.jsonl", "--out", "results.jsonl"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let results = env.results();
    assert_eq!(results.len(), 9);
    for r in &results {
        assert_eq!(r["status"], "error", "{r:#}");
        assert!(!r["error"].as_str().unwrap().is_empty());
    }
    let r = by_key(&results);
    assert!(r["n"]["error"].as_str().unwrap().contains("line 4"));
    assert!(r["u"]["error"].as_str().unwrap().contains("colour"));
    assert!(r["m"]["error"].as_str().unwrap().contains("does not exist"));
    assert!(
        r["f"]["error"]
            .as_str()
            .unwrap()
            .contains("--output-format")
    );
    assert!(r["g"]["error"].as_str().unwrap().contains("--bogus"));
    assert!(r["r"]["error"].as_str().unwrap().contains("no-such-branch"));
}

#[test]
fn the_kubernetes_job_runs_a_command_line_skiff_accepts() {
    let yaml = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/kubernetes/batch-job.yaml"),
    )
    .unwrap();
    let args: Vec<String> = yaml
        .lines()
        .skip_while(|l| l.trim() != "args:")
        .skip(1)
        .take_while(|l| l.trim_start().starts_with("- "))
        .map(|l| {
            let v = l.trim_start().trim_start_matches("- ").trim_matches('"');
            v.replace("$(JOB_COMPLETION_INDEX)", "0")
        })
        .collect();
    assert_eq!(args[0], "batch", "{args:?}");
    assert!(args.contains(&"--index".to_owned()) && args.contains(&"--results-dir".to_owned()));
    assert!(yaml.contains("completionMode: Indexed"));
    // Parsed by skiff itself: it gets as far as reading the (absent) task file.
    let env = Env::new();
    let out = env.command().args(&args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot read the task file /tasks/tasks.jsonl"),
        "{stderr}"
    );
}

#[test]
fn the_batchs_own_git_runs_nothing_a_task_planted() {
    let env = Env::new();
    env.repo("repo");
    let marks = env.path("marks");
    std::fs::create_dir_all(&marks).unwrap();
    let m = marks.display();
    // A task that ran outside the sandbox (its own flags) planted programs in its checkout's
    // git configuration and attributes.
    let plant = format!(
        "printf '[core]\\n\\tfsmonitor = touch {m}/fsmonitor\\n[filter \"x\"]\\n\\tclean = touch {m}/clean\\n[diff \"x\"]\\n\\ttextconv = touch {m}/textconv\\n[core]\\n\\thooksPath = hooks\\n\\tpager = touch {m}/pager\\n' >> .git/config && \
         mkdir -p hooks && printf '#!/bin/sh\\ntouch {m}/hook\\n' > hooks/pre-commit && chmod +x hooks/pre-commit && \
         printf '* filter=x diff=x\\n' > .gitattributes && echo changed > base.txt"
    );
    let script = env.script(
        "plant",
        vec![
            turn(vec![tool("Bash", json!({ "command": plant }))]),
            turn(vec![text("planted")]),
        ],
    );
    let tasks = env.write_tasks(&[json!({
        "id": "plant",
        "repo": "repo",
        "prompt": "plant",
        "allowed_tools": ["Bash"],
        "args": ["--script", script, "--sandbox", "off"],
    })
    .to_string()]);
    let out = env.batch(&[tasks.to_str().unwrap(), "--out", "results.jsonl"]);
    assert!(out.status.success(), "{out:?}");
    let results = env.results();
    assert_eq!(results.len(), 1, "{results:?}");
    let changed = paths(&results[0]);
    assert!(changed.iter().any(|p| p == "base.txt"), "{results:?}");
    let ran: Vec<String> = std::fs::read_dir(&marks)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        ran.is_empty(),
        "the batch's git ran planted programs: {ran:?}"
    );
}
