//! The MCP servers an editor hands over in `session/new` and `session/load`, as a
//! `--mcp-config` value: they join the session's own servers (the editor's win a name clash).

use agent_client_protocol::v1::schema::McpServer;
use serde_json::{Map, Value, json};

/// The editor's MCP servers as a `--mcp-config` value (`{"mcpServers": {…}}`).
pub fn config(servers: &[McpServer]) -> Option<String> {
    let pairs = |list: Vec<(String, String)>| -> Map<String, Value> {
        list.into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect()
    };
    let mut map = Map::new();
    for server in servers {
        let (name, entry) = match server {
            McpServer::Stdio(s) => (
                s.name.clone(),
                json!({"command": s.command, "args": s.args, "env": pairs(
                    s.env.iter().map(|e| (e.name.clone(), e.value.clone())).collect())}),
            ),
            McpServer::Http(h) => (
                h.name.clone(),
                json!({"type": "http", "url": h.url, "headers": pairs(
                    h.headers.iter().map(|e| (e.name.clone(), e.value.clone())).collect())}),
            ),
            McpServer::Sse(h) => (
                h.name.clone(),
                json!({"type": "sse", "url": h.url, "headers": pairs(
                    h.headers.iter().map(|e| (e.name.clone(), e.value.clone())).collect())}),
            ),
            #[allow(unreachable_patterns)]
            _ => {
                tracing::warn!("an MCP server of a kind skiff cannot reach; skipped");
                continue;
            }
        };
        map.insert(name, entry);
    }
    (!map.is_empty()).then(|| json!({"mcpServers": map}).to_string())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    #[test]
    fn the_editors_mcp_servers_become_a_config() {
        let servers: Vec<McpServer> = serde_json::from_value(json!([
            {"name": "fs", "command": "/bin/mcp-fs", "args": ["--root", "/w"],
             "env": [{"name": "TOKEN", "value": "t"}]},
            {"type": "http", "name": "docs", "url": "https://docs.example/mcp",
             "headers": [{"name": "Authorization", "value": "Bearer x"}]},
        ]))
        .unwrap();
        let doc: Value = serde_json::from_str(&config(&servers).unwrap()).unwrap();
        assert_eq!(
            doc,
            json!({"mcpServers": {
                "fs": {"command": "/bin/mcp-fs", "args": ["--root", "/w"], "env": {"TOKEN": "t"}},
                "docs": {"type": "http", "url": "https://docs.example/mcp",
                         "headers": {"Authorization": "Bearer x"}},
            }})
        );
        assert!(config(&[]).is_none());
        // What skiff's --mcp-config reader accepts.
        let parsed = skiff_mcp::config::parse_config_str(
            &doc.to_string(),
            skiff_mcp::Scope::Dynamic,
            &|_: &str| None,
        )
        .unwrap();
        assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
        assert_eq!(parsed.servers.len(), 2);
    }
}
