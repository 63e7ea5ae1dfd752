//! `skiff mcp add | get | remove | list` and `--mcp-config` end to end: the exact files
//! Claude Code keeps its servers in, everything else in them kept, broken files never
//! overwritten.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

struct Env {
    _dir: tempfile::TempDir,
    home: PathBuf,
    ws: PathBuf,
}

impl Env {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let home = root.join("home");
        let ws = root.join("ws");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&ws).unwrap();
        Self {
            _dir: dir,
            home,
            ws,
        }
    }

    fn claude_json(&self) -> PathBuf {
        self.home.join(".claude.json")
    }

    fn mcp_json(&self) -> PathBuf {
        self.ws.join(".mcp.json")
    }

    /// `skiff --cwd WS ARGS` with a clean environment (trusted workspace).
    fn run(&self, args: &[&str]) -> Output {
        self.run_with(args, &[("SKIFF_TRUST_WORKSPACE", "1")])
    }

    fn run_with(&self, args: &[&str], vars: &[(&str, &str)]) -> Output {
        let mut c = assert_cmd::Command::new(env!("CARGO_BIN_EXE_skiff"));
        c.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("SKIFF_HOME", self.home.join(".skiff"))
            .arg("--cwd")
            .arg(&self.ws)
            .args(args);
        for (k, v) in vars {
            c.env(k, v);
        }
        c.output().unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "{args:?}: {}\n{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        text(&out.stdout)
    }

    /// Fails with exit code `code`; stderr.
    fn fails(&self, args: &[&str], code: i32) -> String {
        let out = self.run(args);
        assert_eq!(
            out.status.code(),
            Some(code),
            "{args:?}: {}\n{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        text(&out.stderr)
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

/// A `~/.claude.json` as Claude Code leaves it: keys in its order, other projects, a trailing
/// newline.
fn seeded(ws: &Path) -> String {
    format!(
        r#"{{
  "numStartups": 12,
  "theme": "dark",
  "projects": {{
    "/somewhere/else": {{
      "allowedTools": [],
      "mcpServers": {{
        "theirs": {{
          "type": "stdio",
          "command": "other",
          "args": [],
          "env": {{}}
        }}
      }}
    }},
    "{ws}": {{
      "hasTrustDialogAccepted": false,
      "allowedTools": []
    }}
  }},
  "autoUpdates": false,
  "tipsHistory": {{
    "z": 1,
    "a": 2.5
  }}
}}
"#,
        ws = ws.display()
    )
}

#[test]
fn add_get_remove_in_each_scope_write_the_files_claude_code_writes() {
    let e = Env::new();
    let original = seeded(&e.ws);
    std::fs::write(e.claude_json(), &original).unwrap();
    std::fs::set_permissions(e.claude_json(), std::fs::Permissions::from_mode(0o600)).unwrap();

    // local (the default): projects["<ws>"].mcpServers, after the project's own keys.
    let out = e.ok(&[
        "mcp",
        "add",
        "fs",
        "--",
        "npx",
        "-y",
        "@scope/server",
        "--flag",
    ]);
    assert_eq!(
        out,
        format!(
            "Added stdio MCP server fs with command: npx -y @scope/server --flag to local config\n\
             File modified: {} [project: {}]\n",
            e.claude_json().display(),
            e.ws.display()
        )
    );
    let local_entry = r#""mcpServers": {
        "fs": {
          "type": "stdio",
          "command": "npx",
          "args": [
            "-y",
            "@scope/server",
            "--flag"
          ],
          "env": {}
        }
      }"#;
    let with_local = original.replace(
        "\"allowedTools\": []\n    }\n  },",
        &format!("\"allowedTools\": [],\n      {local_entry}\n    }}\n  }},"),
    );
    assert_ne!(with_local, original);
    assert_eq!(read(&e.claude_json()), with_local);
    assert_eq!(mode(&e.claude_json()), 0o600);

    // user: top-level mcpServers, appended; -e values as typed.
    e.ok(&[
        "mcp",
        "add",
        "-s",
        "user",
        "-e",
        "TOKEN=${MY_TOKEN}",
        "-e",
        "A=1",
        "tool",
        "--",
        "my-tool",
    ]);
    let with_user = format!(
        "{}{}",
        with_local.strip_suffix("\n}\n").unwrap(),
        r#",
  "mcpServers": {
    "tool": {
      "type": "stdio",
      "command": "my-tool",
      "args": [],
      "env": {
        "A": "1",
        "TOKEN": "${MY_TOKEN}"
      }
    }
  }
}
"#
    );
    assert_eq!(read(&e.claude_json()), with_user);

    // project: a new .mcp.json.
    e.ok(&[
        "mcp",
        "add",
        "--scope",
        "project",
        "--transport",
        "http",
        "remote",
        "https://mcp.example/api",
        "-H",
        "Authorization: Bearer ${API_TOKEN}",
    ]);
    assert_eq!(
        read(&e.mcp_json()),
        r#"{
  "mcpServers": {
    "remote": {
      "type": "http",
      "url": "https://mcp.example/api",
      "headers": {
        "Authorization": "Bearer ${API_TOKEN}"
      }
    }
  }
}"#
    );
    e.ok(&[
        "mcp",
        "add",
        "-s",
        "project",
        "-t",
        "sse",
        "legacy",
        "https://mcp.example/sse",
    ]);
    assert!(read(&e.mcp_json()).contains(
        "\"legacy\": {\n      \"type\": \"sse\",\n      \"url\": \"https://mcp.example/sse\"\n    }"
    ));

    // get: expanded values, secrets redacted.
    let out = e.run_with(
        &["mcp", "get", "remote"],
        &[
            ("SKIFF_TRUST_WORKSPACE", "1"),
            ("API_TOKEN", "tok-SECRET-123"),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert_eq!(
        shown,
        "remote:\n  Scope: Project config (shared via .mcp.json)\n  Type: http\n  URL: \
         https://mcp.example/api\n  Headers:\n    Authorization: Bearer ***\n\nTo remove this \
         server, run: skiff mcp remove \"remote\" -s project\n"
    );
    let out = e.run_with(&["mcp", "get", "tool"], &[("MY_TOKEN", "tok-SECRET-456")]);
    let shown = text(&out.stdout);
    assert!(shown.contains("  Scope: User config"), "{shown}");
    assert!(shown.contains("  Command: my-tool\n"), "{shown}");
    assert!(shown.contains("    A=1\n    TOKEN=***\n"), "{shown}");
    assert!(!shown.contains("SECRET"), "{shown}");
    let shown = e.ok(&["mcp", "get", "fs"]);
    assert!(
        shown.contains("Scope: Local config") && shown.contains("Args: -y @scope/server --flag"),
        "{shown}"
    );

    // remove, scope found by itself: the files are as before but for an empty mcpServers.
    let out = e.ok(&["mcp", "remove", "tool"]);
    assert_eq!(
        out,
        format!(
            "Removed MCP server \"tool\" from user config\nFile modified: {}\n",
            e.claude_json().display()
        )
    );
    assert_eq!(
        read(&e.claude_json()),
        with_user.replace(
            &with_user[with_user.rfind("\"mcpServers\"").unwrap()..],
            "\"mcpServers\": {}\n}\n"
        )
    );
    e.ok(&["mcp", "remove", "fs", "--scope", "local"]);
    e.ok(&["mcp", "remove", "remote"]);
    e.ok(&["mcp", "remove", "legacy", "-s", "project"]);
    assert_eq!(read(&e.mcp_json()), "{\n  \"mcpServers\": {}\n}");
    let after = read(&e.claude_json());
    assert!(after.contains("\"theirs\""), "other projects kept: {after}");
    assert!(
        after.starts_with("{\n  \"numStartups\": 12,\n  \"theme\": \"dark\",\n  \"projects\": {")
    );
    assert!(after.contains("\"tipsHistory\": {\n    \"z\": 1,\n    \"a\": 2.5\n  }"));
    assert_eq!(mode(&e.claude_json()), 0o600);
}

#[test]
fn a_new_claude_json_is_private_and_holds_only_the_server() {
    let e = Env::new();
    e.ok(&["mcp", "add", "-s", "user", "x", "--", "srv"]);
    assert_eq!(
        read(&e.claude_json()),
        "{\n  \"mcpServers\": {\n    \"x\": {\n      \"type\": \"stdio\",\n      \"command\": \"srv\",\n      \"args\": [],\n      \"env\": {}\n    }\n  }\n}"
    );
    assert_eq!(mode(&e.claude_json()), 0o600);
    e.ok(&["mcp", "add", "y", "--", "srv2"]);
    let doc: serde_json::Value = serde_json::from_str(&read(&e.claude_json())).unwrap();
    assert_eq!(
        doc["projects"][e.ws.display().to_string()]["mcpServers"]["y"]["command"],
        "srv2"
    );
}

#[test]
fn duplicates_unknown_names_and_ambiguous_removals_are_clear_errors() {
    let e = Env::new();
    e.ok(&["mcp", "add", "dup", "--", "one"]);
    let before = read(&e.claude_json());
    let err = e.fails(&["mcp", "add", "dup", "--", "two"], 1);
    assert!(
        err.contains("MCP server dup already exists in local config"),
        "{err}"
    );
    assert_eq!(read(&e.claude_json()), before);
    // Another scope may have the same name…
    e.ok(&["mcp", "add", "-s", "project", "dup", "--", "three"]);
    // …then remove needs --scope.
    let err = e.fails(&["mcp", "remove", "dup"], 1);
    assert!(
        err.contains("exists in several scopes: local, project"),
        "{err}"
    );
    assert!(err.contains("--scope"), "{err}");
    e.ok(&["mcp", "remove", "dup", "-s", "project"]);
    e.ok(&["mcp", "remove", "dup"]);

    let err = e.fails(&["mcp", "remove", "ghost"], 1);
    assert!(
        err.contains("No MCP server found with name: \"ghost\""),
        "{err}"
    );
    assert!(
        err.contains("local: ") && err.contains("project: ") && err.contains("user: "),
        "{err}"
    );
    assert!(
        err.contains(".mcp.json") && err.contains(".claude.json"),
        "{err}"
    );
    let err = e.fails(&["mcp", "remove", "ghost", "-s", "user"], 1);
    assert!(
        err.contains("No MCP server named \"ghost\" in user config"),
        "{err}"
    );
    let err = e.fails(&["mcp", "get", "ghost"], 1);
    assert!(
        err.contains("No MCP server found with name: \"ghost\""),
        "{err}"
    );

    let err = e.fails(&["mcp", "add", "bad name", "--", "x"], 2);
    assert!(err.contains("invalid server name"), "{err}");
    let err = e.fails(&["mcp", "add", "a", "-e", "NOEQUALS", "--", "x"], 2);
    assert!(err.contains("KEY=VALUE"), "{err}");
}

#[test]
fn unparsable_files_are_never_overwritten() {
    let e = Env::new();
    let broken = "{\"numStartups\": 3, \"projects\": {";
    std::fs::write(e.claude_json(), broken).unwrap();
    for args in [
        &["mcp", "add", "x", "--", "srv"][..],
        &["mcp", "add", "-s", "user", "x", "--", "srv"],
        &["mcp", "remove", "x", "-s", "user"],
    ] {
        let err = e.fails(args, 1);
        assert!(
            err.contains(".claude.json: invalid JSON at line 1"),
            "{err}"
        );
        assert!(err.contains("nothing was changed"), "{err}");
        assert_eq!(read(&e.claude_json()), broken);
    }
    std::fs::write(e.mcp_json(), "{\"mcpServers\": {\"a\": }").unwrap();
    let err = e.fails(&["mcp", "add", "-s", "project", "x", "--", "srv"], 1);
    assert!(err.contains(".mcp.json: invalid JSON"), "{err}");
    assert_eq!(read(&e.mcp_json()), "{\"mcpServers\": {\"a\": }");

    // Valid JSON of the wrong shape is left alone too.
    std::fs::write(e.claude_json(), "{\"projects\": [1]}").unwrap();
    let err = e.fails(&["mcp", "add", "x", "--", "srv"], 1);
    assert!(err.contains("is not a JSON object"), "{err}");
    assert_eq!(read(&e.claude_json()), "{\"projects\": [1]}");

    // A session (list) warns and goes on.
    let out = e.run(&["mcp", "list"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(".mcp.json: invalid JSON"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        text(&out.stdout),
        "No MCP servers configured. Use `skiff mcp add` to add a server.\n"
    );
}

#[test]
fn a_symlinked_claude_json_stays_a_symlink() {
    let e = Env::new();
    let real = e.home.join("dotfiles-claude.json");
    std::fs::write(&real, "{\"keep\": true}\n").unwrap();
    std::os::unix::fs::symlink(&real, e.claude_json()).unwrap();
    e.ok(&["mcp", "add", "-s", "user", "x", "--", "srv"]);
    assert!(
        std::fs::symlink_metadata(e.claude_json())
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(read(&real).starts_with("{\n  \"keep\": true,\n  \"mcpServers\": {"));
    assert!(read(&real).ends_with("}\n"));
}

#[test]
fn invalid_mcp_config_is_a_usage_error() {
    let e = Env::new();
    let err = e.fails(&["--mcp-config", "{\"mcpServers\": {", "mcp", "list"], 2);
    assert!(
        err.contains("--mcp-config: invalid JSON at line 1"),
        "{err}"
    );
    let err = e.fails(&["--mcp-config", "missing.json", "mcp", "list"], 2);
    assert!(
        err.contains(&e.ws.join("missing.json").display().to_string()),
        "{err}"
    );
    std::fs::write(e.ws.join("servers.json"), "[]").unwrap();
    let err = e.fails(&["--mcp-config", "servers.json", "mcp", "list"], 2);
    assert!(
        err.contains("servers.json") && err.contains("mcpServers"),
        "{err}"
    );
    // A run stops before any model call.
    let out = e.run_with(
        &["-p", "hi", "--mcp-config", "{\"mcpServers\": 1}"],
        &[
            ("ANTHROPIC_API_KEY", "sk-ant-test"),
            ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9"),
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("--mcp-config: \"mcpServers\" must be an object"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn list_shows_each_server_with_its_scope_source_and_status() {
    let e = Env::new();
    assert_eq!(
        e.ok(&["mcp", "list"]),
        "No MCP servers configured. Use `skiff mcp add` to add a server.\n"
    );
    e.ok(&[
        "mcp",
        "add",
        "nope",
        "--",
        "/nonexistent/skiff-mcp-test-server",
        "--x",
    ]);
    std::fs::write(
        e.mcp_json(),
        r#"{"mcpServers": {"broken": {"url": "https://h/mcp"}}}"#,
    )
    .unwrap();
    let inline = r#"{"mcpServers": {"remote": {"type": "http", "url": "http://127.0.0.1:9/mcp?token=abc"}}}"#;
    let out = e.ok(&["--mcp-config", inline, "mcp", "list"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(
        lines[0].starts_with("nope: /nonexistent/skiff-mcp-test-server --x - ✗ Failed to connect"),
        "{out}"
    );
    assert!(
        lines[1]
            .starts_with("remote: http://127.0.0.1:9/mcp?token=*** (HTTP) - ✗ Failed to connect"),
        "{out}"
    );
    assert!(
        lines[2].starts_with("broken: the entry has a \"url\" but no \"type\""),
        "{out}"
    );

    // Untrusted: .mcp.json's servers are skipped, with a warning naming each.
    std::fs::write(
        e.mcp_json(),
        r#"{"mcpServers": {"evil": {"command": "curl"}}}"#,
    )
    .unwrap();
    let out = e.run_with(&["mcp", "list"], &[]);
    assert!(out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!(
            "Warning: skipped MCP server \"evil\" from {}: this workspace is not trusted",
            e.mcp_json().display()
        )),
        "{err}"
    );
    assert!(!text(&out.stdout).contains("evil"));
    let err = e.run_with(&["mcp", "get", "evil"], &[]);
    assert_eq!(err.status.code(), Some(1));
    assert!(
        text(&err.stderr).contains("not trusted"),
        "{}",
        text(&err.stderr)
    );
}
