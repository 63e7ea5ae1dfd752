//! The names the model calls servers' tools and prompts by: `mcp__<server>__<tool>`.

/// The name the model calls a server's tool by: `mcp__<server>__<tool>`, with characters the
/// API does not accept in tool names replaced by `_` (as Claude Code does).
pub fn tool_name(server: &str, tool: &str) -> String {
    format!("mcp__{}__{}", normalize(server), normalize(tool))
}

fn normalize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_claude_code() {
        assert_eq!(tool_name("demo", "add"), "mcp__demo__add");
        assert_eq!(
            tool_name("my server", "get.thing"),
            "mcp__my_server__get_thing"
        );
    }
}
