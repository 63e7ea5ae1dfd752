//! Which tools a session defers: named to the model and loaded with ToolSearch when it asks
//! (see `skiff_core::deferred`).

use skiff_core::deferred::{DeferPolicy, MCP_BUDGET};

use crate::environment::Environment;
use crate::overrides::Overrides;

/// Which tools the session defers (named to the model, loaded with ToolSearch when it asks):
/// none when `--tools` lists the tools, when ToolSearch is disallowed, or with Claude Code's
/// `ENABLE_TOOL_SEARCH=false`; `true` defers every MCP tool, `auto:N` sends MCP tools in full
/// up to N% of a 200k window; by default the rare built-in tools and MCP tools past
/// [`MCP_BUDGET`] tokens.
pub(crate) fn defer_policy(o: &Overrides, search_removed: bool, env: &Environment) -> DeferPolicy {
    let listed = o.tools.as_ref().is_some_and(|list| {
        let names: Vec<&str> = list
            .iter()
            .map(|n| n.trim())
            .filter(|n| !n.is_empty())
            .collect();
        names != ["default"]
    });
    if listed || search_removed {
        return DeferPolicy::Off;
    }
    let mcp_budget = match env.get("ENABLE_TOOL_SEARCH").map(str::trim) {
        Some(v) if ["false", "0", "off", "no"].contains(&v.to_ascii_lowercase().as_str()) => {
            return DeferPolicy::Off;
        }
        Some(v) if ["true", "1", "on", "yes"].contains(&v.to_ascii_lowercase().as_str()) => 0,
        Some(v) => v
            .strip_prefix("auto:")
            .and_then(|n| n.trim().parse::<u64>().ok())
            .map_or(MCP_BUDGET, |pct| pct.min(100) * 2_000),
        None => MCP_BUDGET,
    };
    DeferPolicy::Rare { mcp_budget }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(tools: Option<&[&str]>, removed: bool, env: &[(&str, &str)]) -> DeferPolicy {
        let o = Overrides {
            tools: tools.map(|t| t.iter().map(|n| (*n).to_owned()).collect()),
            ..Overrides::default()
        };
        let env = Environment::from_vars(
            env.iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        );
        defer_policy(&o, removed, &env)
    }

    #[test]
    fn rare_tools_are_deferred_unless_the_tools_are_chosen() {
        let rare = DeferPolicy::Rare {
            mcp_budget: MCP_BUDGET,
        };
        assert_eq!(policy(None, false, &[]), rare);
        assert_eq!(policy(Some(&["default"]), false, &[]), rare);
        assert_eq!(
            policy(Some(&["Read", "WebFetch"]), false, &[]),
            DeferPolicy::Off
        );
        assert_eq!(policy(Some(&[""]), false, &[]), DeferPolicy::Off);
        assert_eq!(policy(None, true, &[]), DeferPolicy::Off);
        let env = |v: &str| policy(None, false, &[("ENABLE_TOOL_SEARCH", v)]);
        assert_eq!(env("false"), DeferPolicy::Off);
        assert_eq!(env("TRUE"), DeferPolicy::Rare { mcp_budget: 0 });
        assert_eq!(env("auto:5"), DeferPolicy::Rare { mcp_budget: 10_000 });
        assert_eq!(env("auto"), rare);
    }
}
