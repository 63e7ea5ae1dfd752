//! Claude Code plugins through the `skiff` binary: a local marketplace whose plugin holds one
//! of each component — installed (after showing what it adds), listed, used (its command
//! expands, its agent runs as a Task, its MCP server's tool is called, its hook fires with
//! `CLAUDE_PLUGIN_ROOT`), disabled, uninstalled; a repository's settings enabling it only
//! once the workspace is trusted; a marketplace in a git repository (a local bare one, over
//! `file://`) with plugins pinned to commits; and hostile marketplaces and manifests, refused
//! with clear errors and nothing of them kept or loaded.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use skiff_testkit::MockServer;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A home and a workspace.
struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Self {
        let e = Self {
            dir: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir_all(e.home()).unwrap();
        std::fs::create_dir_all(e.ws()).unwrap();
        std::fs::write(e.ws().join("note.txt"), "a note in the workspace\n").unwrap();
        e
    }

    fn root(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path()).unwrap()
    }

    fn home(&self) -> PathBuf {
        self.root().join("home")
    }

    fn ws(&self) -> PathBuf {
        self.root().join("ws")
    }

    fn skiff_home(&self) -> PathBuf {
        self.home().join(".skiff")
    }

    fn skiff(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_skiff"));
        c.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.home())
            .env("SKIFF_HOME", self.skiff_home())
            .current_dir(self.ws());
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.skiff().args(args).output().unwrap()
    }

    /// A print-mode session with the scripted model (it answers "ok"), stream-json out.
    fn session(&self, extra: &[&str]) -> Command {
        let script = self.root().join("script.json");
        std::fs::write(
            &script,
            r#"{"turns": [{"content": [{"type": "text", "text": "ok"}]}]}"#,
        )
        .unwrap();
        let mut c = self.skiff();
        c.args(["-p", "hi", "--provider", "script", "--script"])
            .arg(&script)
            .args(["--output-format", "stream-json", "--verbose"])
            .args(extra);
        c
    }

    fn scripted(&self, extra: &[&str]) -> Output {
        self.session(extra).output().unwrap()
    }

    /// `skiff plugin ARGS`, which must succeed; its stdout.
    fn plugin(&self, args: &[&str]) -> String {
        let out = self.skiff().arg("plugin").args(args).output().unwrap();
        assert!(
            out.status.success(),
            "skiff plugin {args:?}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn user_settings(&self) -> Value {
        serde_json::from_str(
            &std::fs::read_to_string(self.skiff_home().join("settings.json"))
                .unwrap_or_else(|_| "{}".into()),
        )
        .unwrap()
    }

    fn installed(&self) -> Value {
        serde_json::from_str(
            &std::fs::read_to_string(self.skiff_home().join("plugins/installed_plugins.json"))
                .unwrap_or_else(|_| "{}".into()),
        )
        .unwrap()
    }

    /// No copy was left half-made.
    fn assert_no_staging(&self) {
        let staging = self.skiff_home().join("plugins/.staging");
        let left: Vec<_> = std::fs::read_dir(&staging)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        assert!(left.is_empty(), "{left:?}");
    }
}

fn frames(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn init(frames: &[Value]) -> &Value {
    frames.iter().find(|f| f["subtype"] == "init").unwrap()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect()
}

/// A marketplace directory `mkt` listing the plugin `demo`, which holds one of each component:
/// a command, a skill, an agent, a hook (logging to `hook_log`) and an MCP server (skiff's own
/// `mcp serve`, through a script of the plugin).
fn demo_marketplace(root: &Path, hook_log: &Path) -> PathBuf {
    let mkt = root.join("mkt");
    write(
        &mkt,
        ".claude-plugin/marketplace.json",
        &json!({
            "name": "local-mkt",
            "owner": {"name": "Tests"},
            "metadata": {"description": "A marketplace of one"},
            "plugins": [{"name": "demo", "source": "./plugins/demo", "description": "Everything once"}]
        })
        .to_string(),
    );
    let p = mkt.join("plugins/demo");
    write(
        &p,
        ".claude-plugin/plugin.json",
        &json!({"name": "demo", "version": "1.0.0", "description": "Demo plugin",
                "author": {"name": "Tests"}})
        .to_string(),
    );
    write(
        &p,
        "commands/hello.md",
        "---\ndescription: Greet someone\nargument-hint: NAME\n---\nHello from the plugin to $ARGUMENTS.",
    );
    write(
        &p,
        "skills/pdf/SKILL.md",
        "---\nname: pdf\ndescription: Work with PDF files\n---\nUse pypdf.",
    );
    write(
        &p,
        "agents/reviewer.md",
        "---\nname: reviewer\ndescription: Reviews changes\ntools: Read\n---\nYou are the demo reviewer.",
    );
    write(
        &p,
        "hooks/hooks.json",
        &json!({"hooks": {"PostToolUse": [{"matcher": "mcp__plugin_demo_tools__Read",
            "hooks": [{"type": "command", "command": "bash \"${CLAUDE_PLUGIN_ROOT}/hook.sh\""}]}]}})
        .to_string(),
    );
    write(
        &p,
        "hook.sh",
        &format!(
            "input=$(cat)\nprintf '%s|%s\\n' \"$CLAUDE_PLUGIN_ROOT\" \"$input\" >> '{}'\n",
            hook_log.display()
        ),
    );
    write(
        &p,
        ".mcp.json",
        &json!({"mcpServers": {"tools": {"command": "${CLAUDE_PLUGIN_ROOT}/bin/serve.sh"}}})
            .to_string(),
    );
    write(
        &p,
        "bin/serve.sh",
        &format!(
            "#!/bin/sh\nexec '{}' mcp serve\n",
            env!("CARGO_BIN_EXE_skiff")
        ),
    );
    executable(&p.join("bin/serve.sh"));
    mkt
}

async fn mock(turns: Value) -> MockServer {
    MockServer::start(serde_json::from_value(json!({ "turns": turns })).unwrap())
        .await
        .unwrap()
}

async fn output(mut cmd: Command) -> Output {
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

/// A session against `server`: stream-json out, the plugin's MCP server's tools allowed.
fn session(env: &Env, server: &MockServer, prompt: &str) -> Command {
    let mut c = env.skiff();
    c.env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", server.url())
        .args(["-p", prompt, "--output-format", "stream-json", "--verbose"])
        .args(["--allowedTools", "mcp__plugin_demo_tools"]);
    c
}

#[tokio::test]
async fn a_plugin_is_installed_listed_used_disabled_and_uninstalled() {
    let env = Env::new();
    let hook_log = env.root().join("hook.log");
    let mkt = demo_marketplace(&env.root(), &hook_log);

    let out = env.plugin(&["marketplace", "add", mkt.to_str().unwrap()]);
    assert!(
        out.contains("Added marketplace \"local-mkt\" (1 plugin)"),
        "{out}"
    );
    let out = env.plugin(&["marketplace", "list"]);
    assert!(out.contains("local-mkt  directory"), "{out}");

    // Installing shows what the plugin adds and asks; "no" keeps nothing.
    let mut cmd = env.skiff();
    cmd.args(["plugin", "install", "demo@local-mkt"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    {
        use std::io::Write;
        child.stdin.take().unwrap().write_all(b"n\n").unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let asked = String::from_utf8_lossy(&out.stderr);
    for shown in [
        "demo 1.0.0 — Demo plugin (by Tests)",
        "commands     /demo:hello",
        "skills       /demo:pdf",
        "agents       demo:reviewer",
        "hook         PostToolUse (mcp__plugin_demo_tools__Read): runs bash \"${CLAUDE_PLUGIN_ROOT}/hook.sh\"",
        "MCP server   plugin:demo:tools: runs ${CLAUDE_PLUGIN_ROOT}/bin/serve.sh",
        "run programs on this machine",
        "Install demo@local-mkt? [y/N]",
        "was not installed",
    ] {
        assert!(asked.contains(shown), "{shown:?} not in:\n{asked}");
    }
    assert_eq!(env.installed(), json!({}));
    assert!(!env.skiff_home().join("plugins/cache").exists());
    env.assert_no_staging();

    let out = env.plugin(&["install", "demo@local-mkt", "--yes"]);
    assert!(out.contains("Installed demo@local-mkt 1.0.0"), "{out}");
    assert_eq!(
        env.user_settings()["enabledPlugins"]["demo@local-mkt"],
        true
    );
    let copy = PathBuf::from(
        env.installed()["plugins"]["demo@local-mkt"][0]["installPath"]
            .as_str()
            .unwrap(),
    );
    assert!(copy.starts_with(env.skiff_home().join("plugins/cache/local-mkt/demo")));
    assert!(copy.join("commands/hello.md").is_file());
    env.assert_no_staging();

    let out = env.plugin(&["list"]);
    assert!(
        out.contains("demo@local-mkt  1.0.0  local copy  enabled (user:"),
        "{out}"
    );
    assert!(
        out.contains("/demo:hello") && out.contains("demo:reviewer"),
        "{out}"
    );
    let out = env.plugin(&["list", "--available"]);
    assert!(
        out.contains("demo@local-mkt  Everything once  (installed)"),
        "{out}"
    );

    // Used: the command expands, the agent runs as a Task, the MCP tool is called, the hook
    // fires with the plugin's root.
    let server = mock(json!([
        {"content": [{"type": "tool_use", "name": "Task", "input": {
            "description": "review", "prompt": "Review the note", "subagent_type": "demo:reviewer"}}]},
        {"content": [{"type": "text", "text": "The demo reviewer approves."}]},
        {"content": [{"type": "tool_use", "name": "mcp__plugin_demo_tools__Read",
            "input": {"file_path": env.ws().join("note.txt")}}]},
        {"content": [{"type": "text", "text": "all done"}]}
    ]))
    .await;
    let out = output(session(&env, &server, "/demo:hello world")).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let all = frames(&out);
    let first = init(&all);
    assert_eq!(first["plugins"][0]["name"], "demo");
    assert_eq!(first["plugins"][0]["source"], "demo@local-mkt");
    assert_eq!(first["plugins"][0]["path"], copy.display().to_string());
    let slash = strings(&first["slash_commands"]);
    assert!(slash.contains(&"demo:hello".into()) && slash.contains(&"demo:pdf".into()));
    assert!(strings(&first["skills"]).contains(&"demo:pdf".into()));
    assert!(strings(&first["agents"]).contains(&"demo:reviewer".into()));
    assert!(strings(&first["tools"]).contains(&"mcp__plugin_demo_tools__Read".into()));
    let servers = first["mcp_servers"].as_array().unwrap();
    assert_eq!(servers[0]["name"], "plugin:demo:tools");
    assert_eq!(servers[0]["status"], "connected", "{servers:?}");

    let requests: Vec<Value> = server
        .messages_requests()
        .into_iter()
        .map(|r| r.body)
        .collect();
    assert_eq!(requests.len(), 4);
    assert!(
        requests[0]["messages"][0]["content"]
            .to_string()
            .contains("Hello from the plugin to world."),
        "{}",
        requests[0]["messages"][0]
    );
    assert!(
        requests[1]["system"]
            .to_string()
            .contains("You are the demo reviewer.")
    );
    let results: Vec<&Value> = all
        .iter()
        .filter(|f| f["type"] == "user" && f["parent_tool_use_id"].is_null())
        .flat_map(|f| f["message"]["content"].as_array().unwrap().iter())
        .filter(|b| b["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(
        results[0]
            .to_string()
            .contains("The demo reviewer approves.")
    );
    assert_eq!(results[1]["is_error"], false, "{}", results[1]);
    assert!(results[1].to_string().contains("a note in the workspace"));
    let log = std::fs::read_to_string(&hook_log).unwrap();
    let (root, input) = log.trim().split_once('|').unwrap();
    assert_eq!(root, copy.display().to_string());
    let input: Value = serde_json::from_str(input).unwrap();
    assert_eq!(input["hook_event_name"], "PostToolUse");
    assert_eq!(input["tool_name"], "mcp__plugin_demo_tools__Read");

    // Disabled: nothing of it in a session.
    env.plugin(&["disable", "demo@local-mkt"]);
    assert_eq!(
        env.user_settings()["enabledPlugins"]["demo@local-mkt"],
        false
    );
    let out = env.scripted(&[]);
    let all = frames(&out);
    let off = init(&all);
    assert_eq!(off["plugins"], json!([]));
    assert!(!strings(&off["slash_commands"]).contains(&"demo:hello".into()));
    assert!(!strings(&off["agents"]).contains(&"demo:reviewer".into()));
    let out = env.plugin(&["list"]);
    assert!(out.contains("disabled (user:"), "{out}");

    // Enabled by the repository's settings: only in a trusted workspace.
    write(
        &env.ws(),
        ".claude/settings.json",
        r#"{"enabledPlugins": {"demo@local-mkt": true}}"#,
    );
    let run = |trust: bool| env.scripted(if trust { &["--trust"] } else { &[] });
    let out = run(false);
    assert_eq!(init(&frames(&out))["plugins"], json!([]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("ignoring enabledPlugins"), "{stderr}");
    let out = run(true);
    assert_eq!(init(&frames(&out))["plugins"][0]["name"], "demo");
    std::fs::remove_file(env.ws().join(".claude/settings.json")).unwrap();

    // Uninstalled: the copy and the entry are gone.
    let out = env.plugin(&["uninstall", "demo@local-mkt"]);
    assert!(out.contains("Uninstalled demo@local-mkt: removed"), "{out}");
    assert!(!copy.exists());
    assert_eq!(env.user_settings().get("enabledPlugins"), None);
    assert!(env.plugin(&["list"]).contains("No plugins installed."));
    let out = env
        .skiff()
        .args(["plugin", "uninstall", "demo@local-mkt"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not installed"));

    // Removing the marketplace forgets it.
    env.plugin(&["install", "demo@local-mkt", "-y"]);
    let out = env.plugin(&["marketplace", "remove", "local-mkt"]);
    assert!(out.contains("Uninstalled demo@local-mkt"), "{out}");
    assert_eq!(env.installed()["plugins"], json!({}));
    assert!(
        env.plugin(&["marketplace", "list"])
            .contains("No marketplaces added")
    );
}

/// `git` with a fixed identity, in `dir`; its stdout.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .args(args)
        .output()
        .expect("git is needed for these tests (.ci/run installs it)");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Commit everything in the work tree `dir` and push it to its bare `origin`; the commit.
fn commit_and_push(dir: &Path, message: &str) -> String {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", message]);
    git(dir, &["push", "-q", "origin", "HEAD:main"]);
    git(dir, &["rev-parse", "HEAD"])
}

/// A bare repository `<name>.git` under `root` and a work tree cloned from it.
fn repository(root: &Path, name: &str) -> (PathBuf, PathBuf) {
    let bare = root.join(format!("{name}.git"));
    git(
        root,
        &["init", "-q", "--bare", "-b", "main", bare.to_str().unwrap()],
    );
    let work = root.join(format!("{name}-work"));
    git(
        root,
        &[
            "clone",
            "-q",
            bare.to_str().unwrap(),
            work.to_str().unwrap(),
        ],
    );
    git(&work, &["checkout", "-q", "-b", "main"]);
    (bare, work)
}

fn plugin_files(dir: &Path, name: &str, version: &str) {
    write(
        dir,
        ".claude-plugin/plugin.json",
        &json!({"name": name, "version": version}).to_string(),
    );
    write(
        dir,
        &format!("commands/{name}-cmd.md"),
        &format!("The {name} command, {version}."),
    );
}

fn record(env: &Env, id: &str) -> Value {
    env.installed()["plugins"][id][0].clone()
}

#[test]
fn a_git_marketplace_installs_plugins_pinned_to_their_commits() {
    let env = Env::new();
    let root = env.root();
    // A plugin repository: the plugin at its root, another in a subdirectory.
    let (plugin_bare, plugin_work) = repository(&root, "plugin");
    plugin_files(&plugin_work, "pinned", "1.0.0");
    plugin_files(&plugin_work.join("extra/sub"), "sub", "0.3.0");
    let first = commit_and_push(&plugin_work, "one");
    plugin_files(&plugin_work, "pinned", "2.0.0");
    let second = commit_and_push(&plugin_work, "two");
    assert_ne!(first, second);
    let plugin_url = format!("file://{}", plugin_bare.display());

    let (mkt_bare, mkt_work) = repository(&root, "mkt");
    write(
        &mkt_work,
        ".claude-plugin/marketplace.json",
        &json!({
            "name": "gitmkt", "owner": {"name": "Tests"},
            "plugins": [
                {"name": "inrepo", "source": "./plugins/inrepo"},
                {"name": "pinned", "source": {"source": "url", "url": plugin_url, "sha": first}},
                {"name": "sub", "source": {"source": "git-subdir", "url": plugin_url, "path": "extra/sub"}}
            ]
        })
        .to_string(),
    );
    plugin_files(&mkt_work.join("plugins/inrepo"), "inrepo", "1.0.0");
    let mkt_first = commit_and_push(&mkt_work, "catalog");
    let mkt_url = format!("file://{}", mkt_bare.display());

    let out = env.plugin(&["marketplace", "add", &mkt_url]);
    assert!(
        out.contains(&format!(
            "Added marketplace \"gitmkt\" (3 plugins) from git {mkt_url} at commit {}",
            &mkt_first[..12]
        )),
        "{out}"
    );
    let clone = env.skiff_home().join("plugins/marketplaces/gitmkt");
    assert!(clone.join(".claude-plugin/marketplace.json").is_file());

    for id in ["inrepo@gitmkt", "pinned@gitmkt", "sub@gitmkt"] {
        env.plugin(&["install", id, "--yes"]);
    }
    let inrepo = record(&env, "inrepo@gitmkt");
    assert_eq!(inrepo["gitCommitSha"], mkt_first);
    let pinned = record(&env, "pinned@gitmkt");
    assert_eq!(pinned["gitCommitSha"], first);
    assert_eq!(
        pinned["version"], "1.0.0",
        "the pinned commit, not the newest"
    );
    let sub = record(&env, "sub@gitmkt");
    assert_eq!(sub["gitCommitSha"], second);
    assert_eq!(sub["version"], "0.3.0");
    for r in [&inrepo, &pinned, &sub] {
        let path = PathBuf::from(r["installPath"].as_str().unwrap());
        assert!(path.join(".claude-plugin/plugin.json").is_file(), "{r}");
        assert!(!path.join(".git").exists(), "{r}");
    }
    assert!(
        PathBuf::from(pinned["installPath"].as_str().unwrap())
            .join("commands/pinned-cmd.md")
            .is_file()
    );
    let out = env.plugin(&["list"]);
    assert!(
        out.contains(&format!("pinned@gitmkt  1.0.0  commit {}", &first[..12])),
        "{out}"
    );

    // A new commit of the marketplace: the installed copy stays where it was until it is
    // installed again.
    plugin_files(&mkt_work.join("plugins/inrepo"), "inrepo", "1.1.0");
    let mkt_second = commit_and_push(&mkt_work, "inrepo 1.1.0");
    let out = env.plugin(&["marketplace", "update", "gitmkt"]);
    assert!(
        out.contains(&format!("commit {}", &mkt_second[..12])),
        "{out}"
    );
    assert_eq!(record(&env, "inrepo@gitmkt")["version"], "1.0.0");
    let old = PathBuf::from(inrepo["installPath"].as_str().unwrap());
    env.plugin(&["install", "inrepo@gitmkt", "--yes"]);
    let now = record(&env, "inrepo@gitmkt");
    assert_eq!(now["version"], "1.1.0");
    assert_eq!(now["gitCommitSha"], mkt_second);
    assert!(!old.exists(), "the old copy is removed");

    // All three load in a session.
    let out = env.scripted(&[]);
    let all = frames(&out);
    let mut names: Vec<String> = init(&all)["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["inrepo", "pinned", "sub"]);
    assert!(strings(&init(&all)["slash_commands"]).contains(&"pinned:pinned-cmd".into()));

    // Removing a git marketplace deletes its clone.
    env.plugin(&["marketplace", "remove", "gitmkt"]);
    assert!(!clone.exists());

    // A team's settings suggest it (`extraKnownMarketplaces`): listed, and installing from it
    // says how to add it.
    write(
        &env.ws(),
        ".claude/settings.json",
        &json!({"extraKnownMarketplaces": {"gitmkt": {"source": {"source": "git", "url": mkt_url}}}})
            .to_string(),
    );
    let out = env
        .skiff()
        .args(["--trust", "plugin", "marketplace", "list"])
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(listed.contains("gitmkt  suggested by project:"), "{listed}");
    let out = env
        .skiff()
        .args(["--trust", "plugin", "install", "inrepo@gitmkt"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("skiff plugin marketplace add {mkt_url}")),
        "{stderr}"
    );
}

#[test]
fn hostile_marketplaces_and_manifests_are_refused_and_nothing_is_kept() {
    let env = Env::new();
    let root = env.root();
    let outside = root.join("outside");
    write(
        &outside,
        ".claude-plugin/plugin.json",
        r#"{"name": "outside"}"#,
    );
    write(&outside, "commands/steal.md", "steal");
    let mkt = root.join("mkt");
    let plugin = |name: &str, manifest: &str| {
        write(
            &mkt,
            &format!("plugins/{name}/.claude-plugin/plugin.json"),
            manifest,
        );
        write(&mkt, &format!("plugins/{name}/commands/x.md"), "x");
    };
    plugin("good", r#"{"name": "good", "version": "1.0.0"}"#);
    plugin(
        "badpath",
        r#"{"name": "badpath", "commands": "../../../outside/commands"}"#,
    );
    plugin(
        "abspath",
        &json!({"name": "abspath", "agents": outside.join("commands")}).to_string(),
    );
    plugin("badjson", r#"{"name": "badjson", "commands": ["./x.md",]"#);
    plugin(
        "missing",
        r#"{"name": "missing", "hooks": "./hooks/nope.json"}"#,
    );
    plugin("badname", r#"{"name": "../../evil"}"#);
    plugin(
        "badhooks",
        r#"{"name": "badhooks", "hooks": {"PostToolUse": "rm -rf /"}}"#,
    );
    std::os::unix::fs::symlink(&outside, mkt.join("plugins/linked")).unwrap();
    write(
        &mkt,
        ".claude-plugin/marketplace.json",
        &json!({"name": "m", "owner": {"name": "x"}, "plugins": [
            {"name": "good", "source": "./plugins/good"},
            {"name": "escape", "source": "../outside"},
            {"name": "absolute", "source": outside},
            {"name": "linked", "source": "./plugins/linked"},
            {"name": "badpath", "source": "./plugins/badpath"},
            {"name": "abspath", "source": "./plugins/abspath"},
            {"name": "badjson", "source": "./plugins/badjson"},
            {"name": "missing", "source": "./plugins/missing"},
            {"name": "badname", "source": "./plugins/badname"},
            {"name": "badhooks", "source": "./plugins/badhooks"},
            {"name": "npm", "source": {"source": "npm", "package": "left-pad"}},
            {"name": "dash", "source": {"source": "url", "url": "--upload-pack=touch /tmp/pwned"}}
        ]})
        .to_string(),
    );
    env.plugin(&["marketplace", "add", mkt.to_str().unwrap()]);
    let cases = [
        ("escape", "leaves the marketplace's directory"),
        ("absolute", "leaves the marketplace's directory"),
        ("linked", "through a symlink"),
        ("badpath", "leaves the plugin's directory"),
        ("abspath", "is not relative"),
        ("badjson", "invalid JSON at line 1"),
        ("missing", "does not exist"),
        ("badname", "is not valid"),
        ("badhooks", "hooks.PostToolUse must be an array"),
        ("npm", "not supported"),
        ("dash", "is not a git URL skiff will clone"),
    ];
    for (name, error) in cases {
        let out = env.run(&["plugin", "install", &format!("{name}@m"), "--yes"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{name} was installed");
        assert!(stderr.contains(error), "{name}: {error:?} not in {stderr}");
        assert!(!stderr.contains(".staging"), "{name}: {stderr}");
        assert!(
            !env.skiff_home()
                .join(format!("plugins/cache/m/{name}"))
                .exists()
        );
        assert!(
            env.installed()
                .get("plugins")
                .is_none_or(|p| p.get(format!("{name}@m")).is_none())
        );
        assert!(
            env.user_settings().get("enabledPlugins").is_none(),
            "{name}"
        );
        env.assert_no_staging();
    }
    assert!(!Path::new("/tmp/pwned").exists());
    let out = env.plugin(&["list", "--available"]);
    assert!(out.contains("npm@m  cannot be installed"), "{out}");

    // `validate` says what is wrong.
    let out = env.run(&[
        "plugin",
        "validate",
        mkt.join("plugins/badpath").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("leaves the plugin's directory"));

    // A catalog that is not JSON is not added.
    let broken = root.join("broken");
    write(
        &broken,
        ".claude-plugin/marketplace.json",
        "{\"name\": \"broken\", \"plugins\": [",
    );
    let out = env.run(&["plugin", "marketplace", "add", broken.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid JSON at line 1"));
    let known =
        std::fs::read_to_string(env.skiff_home().join("plugins/known_marketplaces.json")).unwrap();
    assert!(!known.contains("broken"));
    let out = env.run(&[
        "plugin",
        "marketplace",
        "add",
        root.join("nowhere").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));

    // An installed copy tampered with afterwards loads nothing, and says why.
    env.plugin(&["install", "good@m", "--yes"]);
    let copy = PathBuf::from(record(&env, "good@m")["installPath"].as_str().unwrap());
    std::fs::write(copy.join(".claude-plugin/plugin.json"), "{\"name\": ").unwrap();
    let out = env.scripted(&[]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("plugin good@m (enabled in user:") && stderr.contains("invalid JSON"),
        "{stderr}"
    );
    let all = frames(&out);
    let first = init(&all);
    assert_eq!(first["plugins"], json!([]));
    assert_eq!(first["plugin_errors"][0]["plugin"], "good@m");
    assert!(
        !strings(&first["slash_commands"])
            .iter()
            .any(|c| c.starts_with("good:"))
    );

    // `--plugin-dir` with a hostile manifest stops the run before anything starts.
    let out = env.scripted(&[
        "--plugin-dir",
        mkt.join("plugins/badpath").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--plugin-dir"));
}

#[test]
fn plugin_dir_loads_a_plugin_for_one_session() {
    let env = Env::new();
    let dir = env.root().join("dev");
    write(&dir, "commands/try.md", "Try $ARGUMENTS");
    write(
        &dir,
        "agents/helper.md",
        "---\ndescription: Helps\n---\nHelp.",
    );
    let out = env.scripted(&["--plugin-dir", dir.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let all = frames(&out);
    let first = init(&all);
    assert_eq!(first["plugins"][0]["name"], "dev");
    assert_eq!(first["plugins"][0]["source"], "dev@inline");
    assert!(strings(&first["slash_commands"]).contains(&"dev:try".into()));
    assert!(strings(&first["agents"]).contains(&"dev:helper".into()));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("--plugin-dir is ignored"));
}
