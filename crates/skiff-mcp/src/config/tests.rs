use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::json;

use super::*;

fn env(name: &str) -> Option<String> {
    match name {
        "API_KEY" => Some("k-123".into()),
        "ROOT" => Some("/srv".into()),
        _ => None,
    }
}

fn entry(v: Value) -> Result<(ServerConfig, Vec<String>), ConfigProblem> {
    parse_entry("x", &v, Scope::Project, &env)
}

fn problem(v: Value) -> String {
    match entry(v) {
        Err(p) => {
            assert_eq!((p.name.as_str(), p.scope), ("x", Scope::Project));
            p.message
        }
        Ok(s) => panic!("parsed: {s:?}"),
    }
}

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn stdio_entries_with_and_without_type() {
    let (s, w) = entry(
        json!({"type": "stdio", "command": "npx", "args": ["-y", "srv", "${ROOT}/data"],
                              "env": {"K": "v", "TOKEN": "${API_KEY}"}}),
    )
    .unwrap();
    assert!(w.is_empty());
    assert_eq!(s.name, "x");
    assert_eq!(s.scope, Scope::Project);
    assert_eq!(s.timeout, None);
    assert_eq!(
        s.transport,
        Transport::Stdio {
            command: "npx".into(),
            args: vec!["-y".into(), "srv".into(), "/srv/data".into()],
            env: map(&[("K", "v"), ("TOKEN", "k-123")]),
        }
    );
    let (s, _) = entry(json!({"command": "${ROOT}/bin/server"})).unwrap();
    assert_eq!(
        s.transport,
        Transport::Stdio {
            command: "/srv/bin/server".into(),
            args: vec![],
            env: BTreeMap::new()
        }
    );
    let (s, _) =
        entry(json!({"command": "srv", "type": null, "args": null, "timeout": 5000})).unwrap();
    assert_eq!(s.timeout, Some(Duration::from_secs(5)));
}

#[test]
fn http_sse_and_sdk_entries() {
    let (s, _) = entry(json!({"type": "http", "url": "https://h/mcp",
                              "headers": {"Authorization": "Bearer ${API_KEY}"}}))
    .unwrap();
    assert_eq!(
        s.transport,
        Transport::Http {
            url: "https://h/mcp".into(),
            headers: map(&[("Authorization", "Bearer k-123")])
        }
    );
    let (s, _) =
        entry(json!({"type": "streamable-http", "url": "${BASE:-http://127.0.0.1:9}/mcp"}))
            .unwrap();
    assert_eq!(
        s.transport,
        Transport::Http {
            url: "http://127.0.0.1:9/mcp".into(),
            headers: BTreeMap::new()
        }
    );
    let (s, _) = entry(json!({"type": "sse", "url": "https://h/sse", "headers": {}})).unwrap();
    assert_eq!(
        s.transport,
        Transport::Sse {
            url: "https://h/sse".into(),
            headers: BTreeMap::new()
        }
    );
    let (s, _) = entry(json!({"type": "sdk", "name": "x"})).unwrap();
    assert_eq!(s.transport, Transport::Sdk);
}

#[test]
fn bad_entries_are_problems_not_errors() {
    assert!(problem(json!({"url": "https://h/mcp"})).contains("no \"type\""));
    assert!(problem(json!({})).contains("needs a \"command\""));
    assert!(problem(json!("npx srv")).contains("must be a JSON object"));
    assert!(problem(json!({"type": "ws", "url": "wss://h"})).contains("not supported"));
    assert!(problem(json!({"type": "grpc", "url": "x"})).contains("unknown server type \"grpc\""));
    assert!(problem(json!({"type": 3})).contains("\"type\" must be a string"));
    assert!(problem(json!({"type": "stdio"})).contains("needs a \"command\""));
    assert!(problem(json!({"command": "  "})).contains("needs a \"command\""));
    assert!(problem(json!({"command": ["npx"]})).contains("\"command\" must be a string"));
    assert!(problem(json!({"command": "c", "args": "-y"})).contains("array of strings"));
    assert!(problem(json!({"command": "c", "args": [1]})).contains("array of strings"));
    assert!(
        problem(json!({"command": "c", "env": {"K": 1}})).contains("\"env.K\" must be a string")
    );
    assert!(problem(json!({"command": "c", "env": ["K=v"]})).contains("\"env\" must be an object"));
    assert!(problem(json!({"type": "http"})).contains("needs a \"url\""));
    assert!(
        problem(json!({"type": "http", "url": "u", "headers": "a: b"})).contains("\"headers\"")
    );
    assert!(problem(json!({"command": "c", "timeout": "5s"})).contains("milliseconds"));
    assert!(problem(json!({"command": "c", "timeout": 0})).contains("milliseconds"));
}

#[test]
fn unset_variables_stay_literal_with_one_warning_each() {
    let (s, w) = entry(json!({"type": "http", "url": "https://h/${PATH_PART}",
                              "headers": {"Authorization": "Bearer ${MISSING}", "X": "${MISSING}"}}))
    .unwrap();
    assert_eq!(
        s.transport,
        Transport::Http {
            url: "https://h/${PATH_PART}".into(),
            headers: map(&[("Authorization", "Bearer ${MISSING}"), ("X", "${MISSING}")])
        }
    );
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[0].starts_with("MCP server \"x\" (project): environment variable PATH_PART is not set")
    );
    assert!(w[1].contains("MISSING"));
    let (_, w) = entry(json!({"command": "c", "headersHelper": "/bin/h"})).unwrap();
    assert!(w[0].contains("headersHelper"), "{w:?}");
}

#[test]
fn whole_documents() {
    let text = r#"{"mcpServers": {
        "fs": {"command": "npx", "args": ["-y", "fs"]},
        "remote": {"type": "http", "url": "https://h/mcp"},
        "broken": {"url": "https://h/mcp"}
    }, "other": 1}"#;
    let parsed = parse_config_str(text, Scope::Dynamic, &env).unwrap();
    let names: Vec<&str> = parsed.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["fs", "remote"]);
    assert!(parsed.servers.iter().all(|s| s.scope == Scope::Dynamic));
    assert_eq!(parsed.problems.len(), 1);
    assert_eq!(parsed.problems[0].name, "broken");
    assert!(parsed.warnings.is_empty());

    let empty = parse_config_str(r#"{"mcpServers": {}}"#, Scope::Project, &env).unwrap();
    assert_eq!(empty, ParsedServers::default());
}

#[test]
fn documents_that_are_not_configurations() {
    let err = parse_config_str("{\"mcpServers\": {,}}", Scope::Dynamic, &env).unwrap_err();
    let ConfigFileError::Json { line, column, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!((*line, *column), (1, 17));
    assert!(
        err.to_string()
            .starts_with("invalid JSON at line 1, column 17: "),
        "{err}"
    );
    for bad in [
        "[]",
        "{}",
        "{\"servers\": {}}",
        "{\"mcpServers\": []}",
        "\"x\"",
    ] {
        let err = parse_config_str(bad, Scope::Dynamic, &env).unwrap_err();
        assert!(matches!(err, ConfigFileError::Shape(_)), "{bad}: {err:?}");
        assert!(err.to_string().contains("mcpServers"), "{err}");
    }
    assert!(parse_servers(&json!(null), Scope::User, &env).is_err());
}

#[test]
fn entries_are_written_as_claude_code_writes_them() {
    let stdio = ServerConfig {
        name: "fs".into(),
        scope: Scope::Local,
        transport: Transport::Stdio {
            command: "npx".into(),
            args: vec!["-y".into(), "fs".into()],
            env: BTreeMap::new(),
        },
        timeout: None,
    };
    assert_eq!(
        serde_json::to_string(&ServerEntry::new(&stdio)).unwrap(),
        r#"{"type":"stdio","command":"npx","args":["-y","fs"],"env":{}}"#
    );
    let http = ServerConfig {
        name: "r".into(),
        scope: Scope::User,
        transport: Transport::Http {
            url: "https://h/mcp".into(),
            headers: map(&[("Authorization", "Bearer ${API_KEY}")]),
        },
        timeout: Some(Duration::from_millis(1500)),
    };
    assert_eq!(
        serde_json::to_string(&ServerEntry::new(&http)).unwrap(),
        r#"{"type":"http","url":"https://h/mcp","headers":{"Authorization":"Bearer ${API_KEY}"},"timeout":1500}"#
    );
    let sse = ServerConfig {
        transport: Transport::Sse {
            url: "https://h/sse".into(),
            headers: BTreeMap::new(),
        },
        timeout: None,
        ..http.clone()
    };
    assert_eq!(
        ServerEntry::new(&sse).to_value(),
        json!({"type": "sse", "url": "https://h/sse"})
    );
    // What is written reads back as the same server (no variables set: `${..}` kept).
    for server in [stdio, http, sse] {
        let (back, _) = parse_entry(
            &server.name,
            &ServerEntry::new(&server).to_value(),
            server.scope,
            &|_| None,
        )
        .unwrap();
        assert_eq!(back, server);
    }
    assert_eq!(Transport::Sdk.kind(), "sdk");
}
