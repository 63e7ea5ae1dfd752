//! Deferred tools: rarely used tools (and MCP tools past a budget) are not sent in full with
//! every request. They are named in the description of the [`ToolSearch`](crate::tool_search)
//! tool; when the model loads one with it (or calls one directly), its definition is appended
//! to the tools of the following requests, after the ones sent from the start, so the bytes of
//! the cached prefix before it never change. The registry keeps every tool: a deferred tool
//! runs like any other, and `system/init` lists it.

use std::sync::{Arc, Mutex, PoisonError};

use skiff_protocol::ToolDefinition;
use skiff_tools::ToolRegistry;

use tool_search::{TOOL_SEARCH, ToolSearchTool};

/// Built-in tools deferred in every session: rarely needed, and together about a quarter of
/// the tool definitions. ExitPlanMode is offered from the start in plan mode.
pub const RARE_TOOLS: [&str; 5] = [
    "ExitPlanMode",
    "NotebookEdit",
    "TaskOutput",
    "TaskStop",
    "WebFetch",
];

/// Estimated tokens of MCP tool definitions sent in full; the servers' further tools (in name
/// order) are deferred.
pub const MCP_BUDGET: u64 = 2_500;

pub mod tool_search;

pub use crate::config::DeferPolicy;

/// The tools a session defers, and the ones the model loaded (shared with its ToolSearch tool).
#[derive(Debug, Default)]
pub struct DeferredTools {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Deferred definitions, in name order.
    deferred: Vec<ToolDefinition>,
    /// Names loaded, in the order they were (they stay loaded).
    loaded: Vec<String>,
}

impl DeferredTools {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Decide what `registry` offers in full under `policy` (`plan`: the session is in plan
    /// mode). The deferred definitions are kept here; when there are any, a ToolSearch tool
    /// naming them joins the registry. Returns the definitions to send from the start, in name
    /// order (descriptions as `shape` makes them).
    pub fn offer(
        self: &Arc<Self>,
        registry: &mut ToolRegistry,
        policy: DeferPolicy,
        plan: bool,
        shape: impl Fn(&mut [ToolDefinition]),
    ) -> Vec<ToolDefinition> {
        registry.disable(TOOL_SEARCH);
        let mut all = registry.definitions();
        shape(&mut all);
        let DeferPolicy::Rare { mcp_budget } = policy else {
            self.state().deferred.clear();
            return all;
        };
        let mut mcp_spent = 0u64;
        let (mut offered, deferred): (Vec<ToolDefinition>, Vec<ToolDefinition>) =
            all.into_iter().partition(|d| {
                if d.name.starts_with("mcp__") {
                    mcp_spent += definition_tokens(d);
                    return mcp_spent <= mcp_budget;
                }
                !RARE_TOOLS.contains(&d.name.as_str()) || (plan && d.name == "ExitPlanMode")
            });
        if !deferred.is_empty() {
            let names: Vec<&str> = deferred.iter().map(|d| d.name.as_str()).collect();
            let tool = ToolSearchTool::new(Arc::clone(self), &names);
            let mut def = vec![tool.definition()];
            shape(&mut def);
            // Registered only here, so the name is free; it goes where its name sorts.
            let _ = registry.register(Arc::new(tool));
            let at = offered.partition_point(|d| d.name.as_str() < TOOL_SEARCH);
            offered.splice(at..at, def);
        }
        self.state().deferred = deferred;
        offered
    }

    /// The deferred tools' names, in name order.
    pub fn names(&self) -> Vec<String> {
        self.state()
            .deferred
            .iter()
            .map(|d| d.name.clone())
            .collect()
    }

    /// Whether `name` is deferred and not loaded yet.
    pub fn is_pending(&self, name: &str) -> bool {
        let s = self.state();
        s.deferred.iter().any(|d| d.name == name) && !s.loaded.iter().any(|l| l == name)
    }

    /// Load the deferred tools among `names`; returns the ones loaded by this call.
    pub fn load<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
        let mut s = self.state();
        let mut newly = Vec::new();
        for name in names {
            if s.deferred.iter().any(|d| d.name == name) && !s.loaded.iter().any(|l| l == name) {
                s.loaded.push(name.to_owned());
                newly.push(name.to_owned());
            }
        }
        newly
    }

    /// The definitions of the loaded tools still deferred (a server may have dropped one), in
    /// the order they were loaded.
    pub fn loaded_definitions(&self) -> Vec<ToolDefinition> {
        let s = self.state();
        s.loaded
            .iter()
            .filter_map(|name| s.deferred.iter().find(|d| d.name == *name).cloned())
            .collect()
    }

    /// The deferred tools `query` asks for: `select:A,B` names them (unknown names are
    /// returned in the second list); other text is keywords matched against names and
    /// descriptions (a `+word` must be in the name), best first, at most `max`. Each found
    /// tool comes with its description.
    pub fn find(&self, query: &str, max: usize) -> (Vec<(String, String)>, Vec<String>) {
        let s = self.state();
        let describe =
            |d: &ToolDefinition| (d.name.clone(), d.description.clone().unwrap_or_default());
        if let Some(list) = query.trim().strip_prefix("select:") {
            let mut found = Vec::new();
            let mut unknown = Vec::new();
            for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                match s.deferred.iter().find(|d| d.name == name) {
                    Some(d) if !found.iter().any(|(n, _)| n == name) => found.push(describe(d)),
                    Some(_) => {}
                    None => unknown.push(name.to_owned()),
                }
            }
            return (found, unknown);
        }
        let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
        let mut scored: Vec<(u32, &ToolDefinition)> = s
            .deferred
            .iter()
            .filter_map(|d| score(d, &words).map(|sc| (sc, d)))
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
        let found = scored
            .into_iter()
            .take(max.max(1))
            .map(|(_, d)| describe(d))
            .collect();
        (found, Vec::new())
    }
}

/// How well `def` matches the keywords (`None`: not at all, or a `+word` missing from its
/// name). A word in the name counts more than one in the description.
fn score(def: &ToolDefinition, words: &[String]) -> Option<u32> {
    let name = def.name.to_lowercase();
    let description = def
        .description
        .as_deref()
        .unwrap_or_default()
        .to_lowercase();
    let mut total = 0;
    for word in words {
        if let Some(required) = word.strip_prefix('+') {
            if required.is_empty() || !name.contains(required) {
                return None;
            }
            total += 3;
        } else if name.contains(word.as_str()) {
            total += 3;
        } else if description.contains(word.as_str()) {
            total += 1;
        }
    }
    (total > 0).then_some(total)
}

/// Estimated tokens of one definition as sent.
fn definition_tokens(def: &ToolDefinition) -> u64 {
    crate::tokens::estimate_bytes(serde_json::to_string(def).map_or(0, |s| s.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn def(name: &str, description: &str) -> ToolDefinition {
        ToolDefinition {
            name: name.into(),
            description: Some(description.into()),
            input_schema: json!({"type": "object", "properties": {}}).into(),
            cache_control: None,
            extra: Default::default(),
        }
    }

    fn with(defs: &[ToolDefinition]) -> Arc<DeferredTools> {
        let d = Arc::new(DeferredTools::default());
        d.state().deferred = defs.to_vec();
        d
    }

    #[test]
    fn select_names_tools_and_keywords_rank_them() {
        let d = with(&[
            def("NotebookEdit", "Edit a cell of a Jupyter notebook."),
            def(
                "WebFetch",
                "Fetch a web page and answer a question about it.",
            ),
            def("mcp__slack__send", "Send a message to a channel."),
        ]);
        let (found, unknown) = d.find("select:WebFetch, Nope,WebFetch", 5);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].0, "WebFetch");
        assert_eq!(unknown, vec!["Nope".to_owned()]);
        let names = |q: &str| {
            d.find(q, 5)
                .0
                .into_iter()
                .map(|(n, _)| n)
                .collect::<Vec<_>>()
        };
        assert_eq!(names("jupyter notebook"), vec!["NotebookEdit"]);
        assert_eq!(names("+slack message"), vec!["mcp__slack__send"]);
        assert_eq!(names("+github message"), Vec::<String>::new());
        assert_eq!(names("page message"), vec!["WebFetch", "mcp__slack__send"]);
        assert_eq!(d.find("page message", 1).0.len(), 1);
    }

    struct Fake(String, Value);

    #[async_trait::async_trait]
    impl skiff_tools::Tool for Fake {
        fn name(&self) -> &str {
            &self.0
        }
        fn description(&self) -> &str {
            "A fake tool for the deferral tests, long enough to cost some tokens."
        }
        fn input_schema(&self) -> &Value {
            &self.1
        }
        fn is_read_only(&self) -> bool {
            true
        }
        async fn call(&self, _: Value, _: &skiff_tools::ToolContext) -> skiff_tools::ToolOutput {
            skiff_tools::ToolOutput::text("ok")
        }
    }

    fn registry(names: &[&str]) -> ToolRegistry {
        let mut r = ToolRegistry::new();
        for n in names {
            let schema = json!({"type": "object", "properties": {"x": {"type": "string"}}});
            r.register(Arc::new(Fake((*n).to_owned(), schema))).unwrap();
        }
        r
    }

    fn offered(
        policy: DeferPolicy,
        plan: bool,
        names: &[&str],
    ) -> (Vec<String>, Vec<String>, ToolRegistry) {
        let d = Arc::new(DeferredTools::default());
        let mut r = registry(names);
        let defs = d.offer(&mut r, policy, plan, |_| {});
        (defs.into_iter().map(|t| t.name).collect(), d.names(), r)
    }

    #[test]
    fn mcp_tools_past_the_budget_and_the_rare_tools_are_deferred() {
        let one = definition_tokens(&registry(&["mcp__s__a"]).definitions()[0]);
        let names = [
            "Read",
            "WebFetch",
            "ExitPlanMode",
            "mcp__s__a",
            "mcp__s__b",
            "mcp__s__c",
        ];
        let (sent, deferred, r) = offered(DeferPolicy::Rare { mcp_budget: one }, false, &names);
        assert_eq!(sent, ["Read", "ToolSearch", "mcp__s__a"]);
        assert_eq!(
            deferred,
            ["ExitPlanMode", "WebFetch", "mcp__s__b", "mcp__s__c"]
        );
        let search = r.get(TOOL_SEARCH).unwrap();
        assert!(
            search
                .description()
                .contains("ExitPlanMode, WebFetch, mcp__s__b, mcp__s__c")
        );
        // Every tool stays callable.
        assert!(r.get("mcp__s__c").is_some() && r.get("WebFetch").is_some());
        // In plan mode ExitPlanMode is offered; a budget of 0 defers every MCP tool.
        let (sent, deferred, _) = offered(DeferPolicy::Rare { mcp_budget: 0 }, true, &names);
        assert_eq!(sent, ["ExitPlanMode", "Read", "ToolSearch"]);
        assert_eq!(
            deferred,
            ["WebFetch", "mcp__s__a", "mcp__s__b", "mcp__s__c"]
        );
        // Off: everything in full, no ToolSearch; nothing to defer: no ToolSearch either.
        let (sent, deferred, r) = offered(DeferPolicy::Off, false, &names);
        assert_eq!(sent.len(), names.len());
        assert!(deferred.is_empty() && r.get(TOOL_SEARCH).is_none());
        let (sent, _, r) = offered(
            DeferPolicy::Rare {
                mcp_budget: MCP_BUDGET,
            },
            false,
            &["Read"],
        );
        assert_eq!(sent, ["Read"]);
        assert!(r.get(TOOL_SEARCH).is_none());
    }

    #[test]
    fn loading_keeps_the_order_and_loads_once() {
        let d = with(&[def("A", "a"), def("B", "b"), def("C", "c")]);
        assert_eq!(d.load(["C", "X", "A"]), vec!["C", "A"]);
        assert_eq!(d.load(["A", "B"]), vec!["B"]);
        let loaded: Vec<String> = d.loaded_definitions().into_iter().map(|t| t.name).collect();
        assert_eq!(loaded, vec!["C", "A", "B"]);
        assert!(!d.is_pending("A"));
    }
}
