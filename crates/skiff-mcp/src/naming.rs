//! The names the model calls servers' tools and prompts by: `mcp__<server>__<tool>`, within
//! the API's limits for tool names (`^[a-zA-Z0-9_-]{1,64}$`).

/// Longest tool name the API accepts (`^[a-zA-Z0-9_-]{1,64}$`).
pub const MAX_TOOL_NAME: usize = 64;

/// The name the model calls a server's tool by: `mcp__<server>__<tool>`, with characters the
/// API does not accept in tool names replaced by `_` (as Claude Code does). A name that would
/// be longer than [`MAX_TOOL_NAME`] is cut and ends with `_` and eight hex digits of a hash of
/// the server's and tool's own names: the same tool always gets the same name, and two long
/// names that share their beginning still differ.
pub fn tool_name(server: &str, tool: &str) -> String {
    let full = format!("mcp__{}__{}", normalize(server), normalize(tool));
    if full.len() <= MAX_TOOL_NAME {
        return full;
    }
    let hash = fnv1a(server.as_bytes().iter().chain(&[0]).chain(tool.as_bytes()));
    // All ASCII after `normalize`: any byte index is a character boundary.
    format!("{}_{:08x}", &full[..MAX_TOOL_NAME - 9], hash & 0xffff_ffff)
}

/// Length of `mcp__<server>__<tool>` before it is cut to [`MAX_TOOL_NAME`].
pub(crate) fn uncut_len(server: &str, tool: &str) -> usize {
    "mcp____".len() + normalize(server).len() + normalize(tool).len()
}

/// FNV-1a, 64 bits: stable across runs and builds (tool names go into transcripts and rules).
fn fnv1a<'a>(bytes: impl Iterator<Item = &'a u8>) -> u64 {
    bytes.fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Whether the API accepts `name` as a tool name.
pub fn is_valid_tool_name(name: &str) -> bool {
    (1..=MAX_TOOL_NAME).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
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

    #[test]
    fn long_names_are_cut_deterministically_and_stay_distinct() {
        let a = tool_name("srv", &format!("{}_alpha", "x".repeat(80)));
        let b = tool_name("srv", &format!("{}_beta", "x".repeat(80)));
        assert_eq!(a.len(), MAX_TOOL_NAME);
        assert_eq!(b.len(), MAX_TOOL_NAME);
        assert_ne!(a, b);
        assert!(a.starts_with("mcp__srv__xxx"), "{a}");
        assert_eq!(a, tool_name("srv", &format!("{}_alpha", "x".repeat(80))));
        assert!(is_valid_tool_name(&a) && is_valid_tool_name(&b));
        // Non-ASCII is replaced, then the length checked.
        let u = tool_name("srv", &"ü".repeat(60));
        assert!(is_valid_tool_name(&u), "{u}");
        assert!(!is_valid_tool_name(""));
        assert!(!is_valid_tool_name(&"a".repeat(65)));
    }
}
