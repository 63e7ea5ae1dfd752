//! Settings layers, `.env` files and `skiff config`, driven through the binary with temp dirs for
//! HOME, SKIFF_HOME and the project.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use serde_json::json;
use skiff_protocol::script::ScriptTurn;
use skiff_testkit::MockServer;

const KEY: &str = "sk-ant-SETTINGSTEST-0123456789abcdef";

/// A home directory (HOME, SKIFF_HOME = HOME/.skiff) and a project directory.
struct Env {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

impl Env {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let project = dir.path().join("project");
        std::fs::create_dir_all(home.join(".skiff")).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        // Canonical so paths printed by skiff compare equal.
        let project = project.canonicalize().unwrap();
        let home = home.canonicalize().unwrap();
        Self {
            _dir: dir,
            home,
            project,
        }
    }

    fn skiff_home(&self) -> PathBuf {
        self.home.join(".skiff")
    }

    fn write(&self, path: &Path, text: &str) -> PathBuf {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        path.to_path_buf()
    }

    /// `skiff` with a clean environment: PATH, HOME, SKIFF_HOME; run in the project.
    fn cmd(&self) -> assert_cmd::Command {
        let mut c = assert_cmd::Command::new(env!("CARGO_BIN_EXE_skiff"));
        c.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("SKIFF_HOME", self.skiff_home())
            // The project's own settings are what these tests are about: trust it.
            .env("SKIFF_TRUST_WORKSPACE", "1")
            .current_dir(&self.project);
        c
    }

    fn config(&self, extra: &[&str], vars: &[(&str, &str)]) -> String {
        let mut c = self.cmd();
        c.arg("config").args(extra);
        for (k, v) in vars {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The line of `config` output for `key` (the first one).
fn line<'a>(out: &'a str, key: &str) -> &'a str {
    let prefix = format!("{key} = ");
    out.lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no `{key}` line in:\n{out}"))
}

#[test]
fn config_shows_each_value_with_the_layer_that_won() {
    let e = Env::new();
    let user = e.write(
        &e.home.join(".claude/settings.json"),
        r#"{"model":"user-model","permissions":{"allow":["Read"]},"skiff":{"maxTurns":9}}"#,
    );
    let skiff_user = e.write(
        &e.skiff_home().join("settings.json"),
        r#"{"skiff":{"maxOutputTokens":1111}}"#,
    );
    let project = e.write(
        &e.project.join(".claude/settings.json"),
        r#"{"model":"project-model","permissions":{"allow":["Edit"]}}"#,
    );
    let local = e.write(
        &e.project.join(".skiff/settings.local.json"),
        r#"{"skiff":{"temperature":0.2},"env":{"FOO":"bar"}}"#,
    );
    let out = e.config(&[], &[]);
    let p = |p: &Path| p.display().to_string();
    assert_eq!(
        line(&out, "model"),
        format!("model = \"project-model\"  (project: {})", p(&project))
    );
    assert_eq!(
        line(&out, "skiff.maxOutputTokens"),
        format!("skiff.maxOutputTokens = 1111  (user: {})", p(&skiff_user))
    );
    assert!(line(&out, "skiff.maxTurns").contains(&format!("(user: {})", p(&user))));
    assert!(line(&out, "skiff.temperature").contains(&format!("0.2  (local: {})", p(&local))));
    assert!(line(&out, "skiff.maxToolResultChars").ends_with("40000  (default)"));
    let allow: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("permissions.allow = "))
        .collect();
    assert_eq!(allow.len(), 2, "{out}");
    assert!(allow[0].contains("\"Read\"") && allow[1].contains("\"Edit\""));
    assert!(line(&out, "env.FOO").contains("\"bar\""));
    // The settings' env reaches the commands skiff runs (issue 39).
    assert!(line(&out, "env.FOO").contains("[set for Bash, hooks and MCP servers]"));

    // --setting-sources and --settings, then env, then flags.
    let out = e.config(&["--setting-sources", "user"], &[]);
    assert!(line(&out, "model").contains("\"user-model\"  (user:"));
    let out = e.config(&["--settings", r#"{"model":"inline"}"#], &[]);
    assert_eq!(
        line(&out, "model"),
        "model = \"inline\"  (--settings (inline JSON))"
    );
    let out = e.config(&[], &[("ANTHROPIC_MODEL", "env-model")]);
    assert_eq!(
        line(&out, "model"),
        "model = \"env-model\"  (env ANTHROPIC_MODEL)"
    );
    let out = e.config(
        &["--model", "flag-model", "--max-tokens", "77"],
        &[("ANTHROPIC_MODEL", "env-model")],
    );
    assert_eq!(
        line(&out, "model"),
        "model = \"flag-model\"  (flag --model)"
    );
    assert_eq!(
        line(&out, "skiff.maxOutputTokens"),
        "skiff.maxOutputTokens = 77  (flag --max-tokens)"
    );
}

#[test]
fn dotenv_precedence_real_env_then_workspace_then_home() {
    let e = Env::new();
    let ws = e.write(
        &e.project.join(".env"),
        "ANTHROPIC_BASE_URL=http://workspace.invalid\nSKIFF_MAX_TURNS=3\n",
    );
    let home = e.write(
        &e.skiff_home().join(".env"),
        "ANTHROPIC_BASE_URL=http://home.invalid\nANTHROPIC_MODEL=home-model\nSKIFF_MAX_TURNS=4\n",
    );
    let out = e.config(&[], &[]);
    assert_eq!(
        line(&out, "ANTHROPIC_BASE_URL"),
        format!(
            "ANTHROPIC_BASE_URL = \"http://workspace.invalid\"  (env ANTHROPIC_BASE_URL from .env {})",
            ws.display()
        )
    );
    assert_eq!(
        line(&out, "model"),
        format!(
            "model = \"home-model\"  (env ANTHROPIC_MODEL from .env {})",
            home.display()
        )
    );
    assert!(line(&out, "skiff.maxTurns").starts_with("skiff.maxTurns = 3  "));
    // The real environment wins over both files.
    let out = e.config(&[], &[("ANTHROPIC_BASE_URL", "http://real.invalid")]);
    assert_eq!(
        line(&out, "ANTHROPIC_BASE_URL"),
        "ANTHROPIC_BASE_URL = \"http://real.invalid\"  (env ANTHROPIC_BASE_URL)"
    );
    // Without a workspace .env, the home one applies.
    std::fs::remove_file(&ws).unwrap();
    let out = e.config(&[], &[]);
    assert!(line(&out, "ANTHROPIC_BASE_URL").contains("http://home.invalid"));
}

#[test]
fn config_never_prints_the_key() {
    let e = Env::new();
    e.write(
        &e.project.join(".env"),
        &format!("ANTHROPIC_API_KEY={KEY}\n"),
    );
    e.write(
        &e.project.join(".claude/settings.json"),
        &json!({"env": {"ANTHROPIC_AUTH_TOKEN": KEY, "GITHUB_TOKEN": KEY}}).to_string(),
    );
    for vars in [vec![], vec![("ANTHROPIC_API_KEY", KEY)]] {
        let out = e.cmd().arg("config").envs(vars).output().unwrap();
        assert!(out.status.success());
        let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(!all.contains(KEY) && !all.contains("SETTINGSTEST"), "{all}");
        let stdout = text(&out.stdout);
        assert!(line(&stdout, "ANTHROPIC_API_KEY").contains("[set, redacted]"));
        assert!(line(&stdout, "ANTHROPIC_AUTH_TOKEN").contains("[set, redacted]"));
        assert!(line(&stdout, "env.GITHUB_TOKEN").contains("[set, redacted]"));
    }
    let out = e.config(&[], &[("ANTHROPIC_API_KEY", KEY)]);
    assert_eq!(
        line(&out, "ANTHROPIC_API_KEY"),
        "ANTHROPIC_API_KEY = [set, redacted]  (env ANTHROPIC_API_KEY)"
    );
}

#[test]
fn bad_settings_json_fails_startup_with_file_line_and_column() {
    let e = Env::new();
    let path = e.write(
        &e.project.join(".claude/settings.json"),
        "{\n  \"model\": \"x\"\n  \"env\": {}\n}\n",
    );
    for args in [vec!["-p", "hi"], vec!["config"]] {
        let out = e
            .cmd()
            .args(&args)
            .env("ANTHROPIC_API_KEY", KEY)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        let stderr = text(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with("Error: invalid JSON in settings file"),
            "{stderr}"
        );
        assert!(stderr.contains(&path.display().to_string()), "{stderr}");
        assert!(stderr.contains("line 3, column 3"), "{stderr}");
        assert!(text(&out.stdout).is_empty());
    }
    // Leaving the project layer out works around it.
    let out = e
        .cmd()
        .args(["config", "--setting-sources", "user,local"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn missing_key_names_the_env_files() {
    let e = Env::new();
    let out = e.cmd().args(["-p", "hi"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("export ANTHROPIC_API_KEY"), "{stderr}");
    assert!(
        stderr.contains(&e.project.join(".env").display().to_string()),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_and_dotenv_drive_a_real_run() {
    let server = MockServer::builder()
        .turn(ScriptTurn::text("configured"))
        .start()
        .await
        .unwrap();
    let e = Env::new();
    // The key and the base URL come from the workspace .env only.
    e.write(
        &e.project.join(".env"),
        &format!(
            "ANTHROPIC_API_KEY={KEY}\nANTHROPIC_BASE_URL={}\n",
            server.url()
        ),
    );
    e.write(
        &e.home.join(".claude/settings.json"),
        r#"{"model":"haiku","permissions":{"deny":["Bash","Write"]}}"#,
    );
    e.write(
        &e.project.join(".skiff/settings.json"),
        r#"{"skiff":{"maxOutputTokens":1234,"temperature":0.3,"promptCaching":false},"unknownKey":1}"#,
    );
    let out = tokio::task::spawn_blocking({
        let mut c = e.cmd();
        move || c.args(["-p", "hello"]).output().unwrap()
    })
    .await
    .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "configured\n");
    let req = &server.messages_requests()[0];
    assert_eq!(req.header("x-api-key"), Some(KEY));
    assert_eq!(req.body["model"], "claude-haiku-4-5");
    assert_eq!(req.body["max_tokens"], 1234);
    assert!((req.body["temperature"].as_f64().unwrap() - 0.3).abs() < 1e-6);
    let tools: Vec<&str> = req.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"Read") && !tools.contains(&"Bash") && !tools.contains(&"Write"));
    assert!(
        !req.body.to_string().contains("cache_control"),
        "caching should be off"
    );
}
