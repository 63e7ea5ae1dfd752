#![allow(clippy::unwrap_used)]

use super::*;
use crate::Overrides;
use crate::plugins::components::ROOT_VAR;
use crate::plugins::store::InstallRecord;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

struct Fixture {
    _dir: tempfile::TempDir,
    home: PathBuf,
    ws: PathBuf,
    env: Environment,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let home = std::fs::canonicalize(dir.path()).unwrap();
    let ws = home.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let env = Environment::from_vars(
        [
            ("HOME".to_owned(), home.display().to_string()),
            (
                "SKIFF_HOME".to_owned(),
                home.join(".skiff").display().to_string(),
            ),
        ]
        .into_iter()
        .collect(),
    );
    Fixture {
        _dir: dir,
        home,
        ws,
        env,
    }
}

/// Install a copy of plugin `name` in `installed_plugins.json` under `dir` (skiff's or Claude
/// Code's plugins directory).
fn install(plugins_dir: &Path, id: &str, name: &str, manifest: &str) -> PathBuf {
    let copy = plugins_dir.join("cache").join(name);
    write(&copy, ".claude-plugin/plugin.json", manifest);
    write(&copy, "commands/hi.md", "Hi");
    write(
        &copy,
        ".mcp.json",
        r#"{"mcpServers": {"srv": {"command": "${CLAUDE_PLUGIN_ROOT}/bin/srv", "args": ["${CLAUDE_PLUGIN_DATA}"], "env": {"K": "${MY_VAR:-d}"}}}}"#,
    );
    let mut installed = Installed::from_value(&serde_json::json!({}));
    let path = plugins_dir.join("installed_plugins.json");
    if let Ok(t) = std::fs::read_to_string(&path) {
        installed = Installed::from_value(&serde_json::from_str(&t).unwrap());
    }
    installed.plugins.insert(
        id.to_owned(),
        vec![InstallRecord {
            scope: "user".into(),
            install_path: copy.clone(),
            version: None,
            installed_at: None,
            last_updated: None,
            git_commit_sha: None,
            is_local: true,
        }],
    );
    std::fs::write(&path, serde_json::to_string(&installed).unwrap()).unwrap();
    copy
}

fn load(f: &Fixture, trust: bool, dirs: &[PathBuf]) -> (Result<SessionPlugins>, Vec<String>) {
    let overrides = Overrides {
        trust,
        ..Overrides::default()
    };
    let settings = Settings::load(&overrides, &f.env, &f.ws).unwrap();
    let mut warnings = settings.trust_warnings.clone();
    let r = session_plugins(&settings, dirs, &f.env, &f.ws, &mut warnings);
    (r, warnings)
}

#[test]
fn enabled_plugins_load_from_skiff_then_claude_code() {
    let f = fixture();
    let ours = install(
        &f.home.join(".skiff/plugins"),
        "a@m",
        "a",
        r#"{"name": "a", "version": "1.0.0"}"#,
    );
    install(
        &f.home.join(".claude/plugins"),
        "b@m",
        "b",
        r#"{"name": "b"}"#,
    );
    write(
        &f.home,
        ".skiff/settings.json",
        r#"{"enabledPlugins": {"a@m": true, "b@m": true, "off@m": false, "gone@m": true}}"#,
    );
    let (r, warnings) = load(&f, false, &[]);
    let p = r.unwrap();
    let names: Vec<&str> = p.plugins.iter().map(|l| l.plugin.name()).collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(p.errors.len(), 1);
    assert_eq!(p.errors[0].0, "gone@m");
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("gone@m") && w.contains("skiff plugin install gone@m")),
        "{warnings:?}"
    );
    let init = p.init_json();
    assert_eq!(init[0]["name"], "a");
    assert_eq!(init[0]["version"], "1.0.0");
    assert_eq!(init[0]["source"], "a@m");
    assert_eq!(init[0]["path"], ours.display().to_string());

    let servers = p.mcp_servers(&|k| (k == "MY_VAR").then(|| "v".to_owned()));
    let names: Vec<&str> = servers.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["plugin:a:srv", "plugin:b:srv"]);
    let Transport::Stdio { command, args, env } = &servers.servers[0].transport else {
        panic!()
    };
    assert_eq!(*command, format!("{}/bin/srv", ours.display()));
    let data = f.home.join(".skiff/plugins/data/a-m");
    assert_eq!(*args, [data.display().to_string()]);
    assert_eq!(env["K"], "v");
    assert_eq!(env[ROOT_VAR], ours.display().to_string());
    assert_eq!(servers.servers[0].scope, Scope::Plugin);
    let cmds = p.commands();
    assert_eq!(cmds[0].name, "a");
}

#[test]
fn a_repositorys_plugins_wait_for_trust() {
    let f = fixture();
    install(
        &f.home.join(".skiff/plugins"),
        "a@m",
        "a",
        r#"{"name": "a"}"#,
    );
    write(
        &f.ws,
        ".claude/settings.json",
        r#"{"enabledPlugins": {"a@m": true}}"#,
    );
    let (r, warnings) = load(&f, false, &[]);
    assert!(r.unwrap().is_empty());
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("enabledPlugins") && w.contains("not trusted")),
        "{warnings:?}"
    );
    let (r, _) = load(&f, true, &[]);
    assert_eq!(r.unwrap().plugins.len(), 1);
    // A later scope turns it off again.
    write(
        &f.ws,
        ".claude/settings.local.json",
        r#"{"enabledPlugins": {"a@m": false}}"#,
    );
    let (r, _) = load(&f, true, &[]);
    assert!(r.unwrap().is_empty());
}

#[test]
fn broken_and_clashing_plugins_are_left_out() {
    let f = fixture();
    let a = install(
        &f.home.join(".skiff/plugins"),
        "a@m",
        "a",
        r#"{"name": "a"}"#,
    );
    install(
        &f.home.join(".skiff/plugins"),
        "a@other",
        "a2",
        r#"{"name": "a"}"#,
    );
    write(
        &f.home,
        ".skiff/settings.json",
        r#"{"enabledPlugins": {"a@m": true, "a@other": true}}"#,
    );
    let (r, warnings) = load(&f, false, &[]);
    let p = r.unwrap();
    assert_eq!(p.plugins.len(), 1);
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("a@other") && w.contains("loaded already"))
    );
    write(&a, ".claude-plugin/plugin.json", "{broken");
    let (r, warnings) = load(&f, false, &[]);
    let p = r.unwrap();
    assert_eq!(p.plugins.len(), 1, "the other one loads now");
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("a@m") && w.contains("invalid JSON"))
    );
    assert_eq!(p.errors_json()[0]["plugin"], "a@m");
}

#[test]
fn plugin_dirs_load_or_fail_the_run() {
    let f = fixture();
    write(&f.ws, "dev-plugin/commands/x.md", "X");
    let (r, _) = load(&f, false, &[PathBuf::from("dev-plugin")]);
    let p = r.unwrap();
    assert_eq!(p.plugins[0].plugin.id, "dev-plugin@inline");
    assert_eq!(p.plugins[0].origin, "--plugin-dir");
    let (r, _) = load(&f, false, &[PathBuf::from("missing")]);
    let e = r.unwrap_err();
    assert!(
        e.is_usage() && e.to_string().contains("--plugin-dir"),
        "{e}"
    );
}
