//! Unit tests of gathering a session's MCP servers (temp dirs only).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;

use serde_json::json;
use skiff_mcp::Transport;

use super::*;
use crate::settings::Inputs;

struct Fixture {
    _dir: tempfile::TempDir,
    home: PathBuf,
    ws: PathBuf,
    env: HashMap<String, String>,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&ws).unwrap();
        let env = HashMap::from([
            ("HOME".to_owned(), home.display().to_string()),
            ("SKIFF_TRUST_WORKSPACE".to_owned(), "1".to_owned()),
        ]);
        Self {
            _dir: dir,
            home,
            ws,
            env,
        }
    }

    fn untrusted(mut self) -> Self {
        self.env.remove("SKIFF_TRUST_WORKSPACE");
        self
    }

    fn write(&self, path: &Path, v: &serde_json::Value) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, v.to_string()).unwrap();
    }

    fn claude_json(&self, v: serde_json::Value) {
        self.write(&self.home.join(".claude.json"), &v);
    }

    fn mcp_json(&self, v: serde_json::Value) {
        self.write(&self.ws.join(".mcp.json"), &v);
    }

    fn gather(&self, argv: &[&str]) -> crate::error::Result<SessionServers> {
        let args = crate::test_argv::overrides(argv);
        let settings = Settings::load_from(&Inputs {
            args: &args,
            cwd: self.ws.clone(),
            process_env: self.env.clone(),
        })?;
        gather(&args, &settings, &self.ws, &self.env)
    }

    fn servers(&self, argv: &[&str]) -> Vec<(String, Scope)> {
        let s = self.gather(argv).unwrap();
        s.servers
            .iter()
            .map(|s| (s.name.clone(), s.scope))
            .collect()
    }
}

fn stdio(cmd: &str) -> serde_json::Value {
    json!({"command": cmd})
}

fn command(s: &ServerConfig) -> &str {
    match &s.transport {
        Transport::Stdio { command, .. } => command,
        other => panic!("not stdio: {other:?}"),
    }
}

fn named(v: Vec<(String, Scope)>) -> Vec<(String, Scope)> {
    let mut v = v;
    v.sort();
    v
}

#[test]
fn every_scope_and_the_precedence_on_a_clash() {
    let f = Fixture::new();
    let key = project_key(&f.ws);
    f.claude_json(json!({
        "numStartups": 3,
        "mcpServers": {"u": stdio("user"), "up": stdio("user"), "upl": stdio("user"), "all": stdio("user")},
        "projects": {key.clone(): {"mcpServers": {"upl": stdio("local"), "all": stdio("local"), "l": stdio("local")}},
                     "/elsewhere": {"mcpServers": {"other": stdio("x")}}}
    }));
    f.mcp_json(json!({"mcpServers": {"up": stdio("project"), "upl": stdio("project"), "all": stdio("project"), "p": stdio("project")}}));
    let inline =
        json!({"mcpServers": {"all": stdio("dynamic"), "d": stdio("dynamic")}}).to_string();
    let got = f.gather(&["--mcp-config", &inline]).unwrap();
    assert!(
        got.problems.is_empty() && got.warnings.is_empty(),
        "{got:?}"
    );
    let by_name: HashMap<&str, (&str, Scope)> = got
        .servers
        .iter()
        .map(|s| (s.name.as_str(), (command(s), s.scope)))
        .collect();
    assert_eq!(by_name.len(), 7, "{by_name:?}");
    assert_eq!(by_name["u"], ("user", Scope::User));
    assert_eq!(by_name["up"], ("project", Scope::Project));
    assert_eq!(by_name["p"], ("project", Scope::Project));
    assert_eq!(by_name["upl"], ("local", Scope::Local));
    assert_eq!(by_name["l"], ("local", Scope::Local));
    assert_eq!(by_name["all"], ("dynamic", Scope::Dynamic));
    assert_eq!(by_name["d"], ("dynamic", Scope::Dynamic));
}

#[test]
fn settings_files_carry_servers_in_their_scope() {
    let f = Fixture::new();
    f.write(
        &f.home.join(".claude/settings.json"),
        &json!({"mcpServers": {"su": stdio("u"), "clash": stdio("user-settings")}}),
    );
    f.write(
        &f.ws.join(".claude/settings.json"),
        &json!({"mcpServers": {"sp": stdio("p")}}),
    );
    f.write(
        &f.ws.join(".claude/settings.local.json"),
        &json!({"mcpServers": {"sl": stdio("l"), "clash": stdio("local-settings")}}),
    );
    let got = f.gather(&[]).unwrap();
    let clash = got.servers.iter().find(|s| s.name == "clash").unwrap();
    assert_eq!(
        (command(clash), clash.scope),
        ("local-settings", Scope::Local)
    );
    assert_eq!(
        named(f.servers(&[])),
        [
            ("clash".to_owned(), Scope::Local),
            ("sl".to_owned(), Scope::Local),
            ("sp".to_owned(), Scope::Project),
            ("su".to_owned(), Scope::User)
        ]
    );
    // --setting-sources leaves out the files of the other layers, and ~/.claude.json's and
    // .mcp.json's servers with them.
    f.claude_json(json!({"mcpServers": {"cj": stdio("u")}}));
    f.mcp_json(json!({"mcpServers": {"mj": stdio("p")}}));
    assert_eq!(
        named(f.servers(&["--setting-sources", "user"])),
        [
            ("cj".to_owned(), Scope::User),
            ("clash".to_owned(), Scope::User),
            ("su".to_owned(), Scope::User)
        ]
    );
    assert!(f.servers(&["--setting-sources", ""]).is_empty());
    // --settings servers count as local.
    let extra = json!({"mcpServers": {"sa": stdio("arg")}}).to_string();
    assert!(
        f.servers(&["--settings", &extra])
            .contains(&("sa".to_owned(), Scope::Local))
    );
}

#[test]
fn an_untrusted_workspace_starts_none_of_its_own_servers() {
    let f = Fixture::new().untrusted();
    let key = project_key(&f.ws);
    f.claude_json(json!({"mcpServers": {"mine": stdio("u")},
                         "projects": {key: {"mcpServers": {"local-mine": stdio("l")}}}}));
    f.mcp_json(json!({"mcpServers": {"evil": stdio("curl"), "broken": {"url": "x"}}}));
    f.write(
        &f.ws.join(".claude/settings.json"),
        &json!({"mcpServers": {"evil2": stdio("curl")}}),
    );
    let got = f.gather(&[]).unwrap();
    assert_eq!(
        named(
            got.servers
                .iter()
                .map(|s| (s.name.clone(), s.scope))
                .collect()
        ),
        [
            ("local-mine".to_owned(), Scope::Local),
            ("mine".to_owned(), Scope::User)
        ]
    );
    assert!(got.problems.is_empty(), "{:?}", got.problems);
    assert_eq!(got.warnings.len(), 2, "{:?}", got.warnings);
    let mcp_json = f.ws.join(".mcp.json");
    assert_eq!(
        got.warnings[1],
        format!(
            "Warning: skipped MCP server \"evil\" from {}: this workspace is not trusted. Trust it \
             in the REPL, or run with --trust (or SKIFF_TRUST_WORKSPACE=1), to use it.",
            mcp_json.display()
        )
    );
    assert!(got.warnings[0].contains("\"broken\""));
    // --trust: they start.
    let names = named(f.servers(&["--trust"]));
    assert!(
        names.contains(&("evil".to_owned(), Scope::Project)),
        "{names:?}"
    );
    assert!(
        names.contains(&("evil2".to_owned(), Scope::Project)),
        "{names:?}"
    );
}

#[test]
fn disabled_mcp_json_servers_do_not_start() {
    let f = Fixture::new();
    f.mcp_json(json!({"mcpServers": {"a": stdio("a"), "b": stdio("b"), "bad": {}}}));
    f.write(
        &f.home.join(".claude/settings.json"),
        &json!({"disabledMcpjsonServers": ["b", "bad"], "enabledMcpjsonServers": ["a"]}),
    );
    let got = f.gather(&[]).unwrap();
    assert_eq!(named(f.servers(&[])), [("a".to_owned(), Scope::Project)]);
    assert!(got.problems.is_empty());
    // Only .mcp.json's: the same name elsewhere still starts.
    f.claude_json(json!({"mcpServers": {"b": stdio("user-b")}}));
    assert_eq!(
        named(f.servers(&[])),
        [
            ("a".to_owned(), Scope::Project),
            ("b".to_owned(), Scope::User)
        ]
    );
}

#[test]
fn servers_given_as_data_replace_the_files_entries_of_their_name() {
    let f = Fixture::new();
    f.mcp_json(json!({"mcpServers": {"p": stdio("from-file"), "q": stdio("q")}}));
    let editor = |strict: bool| {
        let mut args = crate::test_argv::overrides(&[]);
        args.strict_mcp_config = strict;
        args.mcp_servers.push(skiff_mcp::ServerConfig {
            name: "p".into(),
            scope: Scope::Dynamic,
            transport: Transport::Http {
                url: "http://127.0.0.1:9/mcp".into(),
                headers: Default::default(),
            },
            timeout: None,
        });
        let settings = Settings::load_from(&Inputs {
            args: &args,
            cwd: f.ws.clone(),
            process_env: f.env.clone(),
        })
        .unwrap();
        gather(&args, &settings, &f.ws, &f.env).unwrap()
    };
    let all = editor(false);
    let names: Vec<_> = all.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["p", "q"]);
    assert!(matches!(all.servers[0].transport, Transport::Http { .. }));
    assert_eq!(all.servers[0].scope, Scope::Dynamic);
    let strict = editor(true);
    assert_eq!(strict.servers.len(), 1);
    assert_eq!(strict.servers[0].name, "p");
}

#[test]
fn strict_mcp_config_keeps_only_the_dynamic_servers() {
    let f = Fixture::new();
    f.claude_json(json!({"mcpServers": {"u": stdio("u")}}));
    f.mcp_json(json!({"mcpServers": {"p": stdio("p")}}));
    let file = f.ws.join("servers.json");
    f.write(&file, &json!({"mcpServers": {"d": stdio("d")}}));
    assert_eq!(
        f.servers(&["--strict-mcp-config", "--mcp-config", "servers.json"]),
        [("d".to_owned(), Scope::Dynamic)]
    );
    assert!(f.servers(&["--strict-mcp-config"]).is_empty());
    assert_eq!(f.servers(&["--mcp-config", "servers.json"]).len(), 3);
}

#[test]
fn unreadable_mcp_config_values_are_usage_errors_naming_them() {
    let f = Fixture::new();
    let err = f
        .gather(&["--mcp-config", "{\"mcpServers\": {"])
        .unwrap_err();
    assert!(err.is_usage());
    assert!(
        err.to_string()
            .starts_with("--mcp-config: invalid JSON at line 1, column 16"),
        "{err}"
    );
    let err = f.gather(&["--mcp-config", "nope.json"]).unwrap_err();
    assert!(err.is_usage());
    assert!(
        err.to_string()
            .contains(&f.ws.join("nope.json").display().to_string()),
        "{err}"
    );
    f.write(&f.ws.join("list.json"), &json!({"servers": {}}));
    let err = f.gather(&["--mcp-config", "list.json"]).unwrap_err();
    assert!(err.is_usage());
    assert!(
        err.to_string().contains("list.json: no \"mcpServers\""),
        "{err}"
    );
}

#[test]
fn broken_files_are_warnings_and_bad_entries_are_problems() {
    let f = Fixture::new();
    std::fs::write(f.home.join(".claude.json"), "{\"mcpServers\": ").unwrap();
    std::fs::write(f.ws.join(".mcp.json"), "{not json").unwrap();
    let got = f.gather(&[]).unwrap();
    assert!(got.servers.is_empty() && got.problems.is_empty());
    assert_eq!(got.warnings.len(), 2, "{:?}", got.warnings);
    assert!(
        got.warnings[0].contains(".claude.json: invalid JSON at line 1"),
        "{:?}",
        got.warnings
    );
    assert!(
        got.warnings[1].contains(".mcp.json: invalid JSON at line 1"),
        "{:?}",
        got.warnings
    );

    f.claude_json(json!({"mcpServers": ["not", "an", "object"]}));
    f.mcp_json(json!({"mcpServers": {"remote": {"url": "https://h/mcp"}, "ok": stdio("x")}}));
    let got = f.gather(&[]).unwrap();
    assert_eq!(got.servers.len(), 1);
    assert_eq!(got.problems.len(), 1);
    assert_eq!(got.problems[0].name, "remote");
    assert_eq!(got.problems[0].scope, Scope::Project);
    assert!(got.warnings[0].contains("mcpServers"), "{:?}", got.warnings);
    // A good entry of a higher scope replaces a bad one, whole.
    let inline =
        json!({"mcpServers": {"remote": {"type": "http", "url": "https://h/mcp"}}}).to_string();
    let got = f.gather(&["--mcp-config", &inline]).unwrap();
    assert!(got.problems.is_empty());
    assert_eq!(got.servers.len(), 2);
}

#[test]
fn variables_expand_from_the_environment_settings_and_kept_credentials() {
    let mut f = Fixture::new();
    f.env
        .insert("ANTHROPIC_API_KEY".into(), "sk-ant-kept-aside".into());
    f.env.insert("EMPTY".into(), String::new());
    f.write(
        &f.home.join(".claude/settings.json"),
        &json!({"env": {"FROM_SETTINGS": "s"}}),
    );
    f.mcp_json(
        json!({"mcpServers": {"r": {"type": "http", "url": "https://h/${FROM_SETTINGS}/${EMPTY}",
        "headers": {"Authorization": "Bearer ${ANTHROPIC_API_KEY}", "X": "${UNSET_VAR}"}}}}),
    );
    let got = f.gather(&[]).unwrap();
    let Transport::Http { url, headers } = &got.servers[0].transport else {
        panic!("{got:?}")
    };
    assert_eq!(url, "https://h/s/");
    assert_eq!(headers["Authorization"], "Bearer sk-ant-kept-aside");
    assert_eq!(headers["X"], "${UNSET_VAR}");
    assert_eq!(got.warnings.len(), 1);
    assert!(
        got.warnings[0]
            .starts_with("Warning: MCP server \"r\" (project): environment variable UNSET_VAR"),
        "{:?}",
        got.warnings
    );
    // The warning of an entry that lost to a higher scope is dropped with it.
    let inline = json!({"mcpServers": {"r": stdio("x")}}).to_string();
    assert!(
        f.gather(&["--mcp-config", &inline])
            .unwrap()
            .warnings
            .is_empty()
    );
}

#[test]
fn claude_config_dir_moves_the_global_config() {
    let mut f = Fixture::new();
    let cfg = f.home.join("cfg");
    f.env
        .insert("CLAUDE_CONFIG_DIR".into(), cfg.display().to_string());
    f.write(
        &cfg.join(".claude.json"),
        &json!({"mcpServers": {"c": stdio("c")}}),
    );
    f.claude_json(json!({"mcpServers": {"h": stdio("h")}}));
    assert_eq!(f.servers(&[]), [("c".to_owned(), Scope::User)]);
    assert_eq!(claude_json(&f.env).unwrap(), cfg.join(".claude.json"));
    assert!(claude_json(&HashMap::new()).is_err());
}
