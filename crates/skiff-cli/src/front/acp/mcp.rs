//! The MCP servers an editor hands over in `session/new` and `session/load`, as server
//! configurations: they join the session's own servers (the editor's win a name clash).

use std::collections::BTreeMap;

use agent_client_protocol::v1::schema::{HttpHeader, McpServer};
use skiff_mcp::{Scope, ServerConfig, Transport};

/// The editor's MCP servers.
pub fn servers(servers: &[McpServer]) -> Vec<ServerConfig> {
    let headers = |list: &[HttpHeader]| -> BTreeMap<String, String> {
        list.iter()
            .map(|h| (h.name.clone(), h.value.clone()))
            .collect()
    };
    let mut out = Vec::new();
    for server in servers {
        let (name, transport) = match server {
            McpServer::Stdio(s) => (
                s.name.clone(),
                Transport::Stdio {
                    command: s.command.display().to_string(),
                    args: s.args.clone(),
                    env: s
                        .env
                        .iter()
                        .map(|e| (e.name.clone(), e.value.clone()))
                        .collect(),
                },
            ),
            McpServer::Http(h) => (
                h.name.clone(),
                Transport::Http {
                    url: h.url.clone(),
                    headers: headers(&h.headers),
                },
            ),
            McpServer::Sse(h) => (
                h.name.clone(),
                Transport::Sse {
                    url: h.url.clone(),
                    headers: headers(&h.headers),
                },
            ),
            #[allow(unreachable_patterns)]
            _ => {
                tracing::warn!("an MCP server of a kind skiff cannot reach; skipped");
                continue;
            }
        };
        out.push(ServerConfig {
            name,
            scope: Scope::Dynamic,
            transport,
            timeout: None,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use serde_json::json;

    use super::*;

    #[test]
    fn the_editors_mcp_servers_become_server_configurations() {
        let list: Vec<McpServer> = serde_json::from_value(json!([
            {"name": "fs", "command": "/bin/mcp-fs", "args": ["--root", "/w"],
             "env": [{"name": "TOKEN", "value": "t"}]},
            {"type": "http", "name": "docs", "url": "https://docs.example/mcp",
             "headers": [{"name": "Authorization", "value": "Bearer x"}]},
        ]))
        .unwrap();
        let got = servers(&list);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].name, "fs");
        assert_eq!(
            got[0].transport,
            Transport::Stdio {
                command: "/bin/mcp-fs".into(),
                args: vec!["--root".into(), "/w".into()],
                env: BTreeMap::from([("TOKEN".into(), "t".into())]),
            }
        );
        assert_eq!(
            got[1].transport,
            Transport::Http {
                url: "https://docs.example/mcp".into(),
                headers: BTreeMap::from([("Authorization".into(), "Bearer x".into())]),
            }
        );
        assert!(got.iter().all(|s| s.scope == Scope::Dynamic));
        assert!(servers(&[]).is_empty());
    }
}
