//! Deferred tools at the request level: the rare tools are named in ToolSearch's description
//! instead of being sent in full; a tool the model loads (or calls directly) is appended to the
//! tools of the following requests, and the bytes sent before it never change.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use skiff_core::deferred::{DeferPolicy, MCP_BUDGET, RARE_TOOLS};
use skiff_core::{Agent, AgentConfig, PermissionMode};
use skiff_llm::{AnthropicConfig, AnthropicProvider, Credential, RetryPolicy};
use skiff_protocol::script::{ScriptBlock, ScriptTurn};
use skiff_protocol::sdk::{ResultMessage, SdkMessage};
use skiff_protocol::{ContentBlock, ToolResultContent, validate_history};
use skiff_testkit::MockServer;
use skiff_tools::{ToolContext, ToolRegistry};

struct Run {
    server: MockServer,
    events: Vec<SdkMessage>,
    result: ResultMessage,
    _dir: tempfile::TempDir,
}

async fn run(turns: Vec<ScriptTurn>, tweak: impl FnOnce(&mut AgentConfig)) -> Run {
    let server = MockServer::builder().turns(turns).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let mut cfg = AnthropicConfig::new(Credential::api_key("sk-test"));
    cfg.base_url = server.url();
    cfg.retry = RetryPolicy {
        base_delay: Duration::from_millis(5),
        ..RetryPolicy::default()
    };
    let provider = AnthropicProvider::new(cfg).unwrap();
    let ctx = ToolContext::new(dir.path()).unwrap();
    let mut config = AgentConfig {
        system_prompt: vec!["You are a test agent.".into()],
        cwd: dir.path().to_path_buf(),
        permission_mode: PermissionMode::BypassPermissions,
        defer_tools: DeferPolicy::Rare {
            mcp_budget: MCP_BUDGET,
        },
        ..AgentConfig::default()
    };
    tweak(&mut config);
    let agent = Agent::new(
        config,
        Arc::new(provider),
        ToolRegistry::with_builtins(),
        ctx,
    );
    let mut session = agent.spawn();
    let mut run = session.run("go");
    let mut events = Vec::new();
    while let Some(e) = run.next().await {
        events.push(e);
    }
    let result = run.result().cloned().unwrap();
    drop(run);
    assert!(server.violations().is_empty(), "{:?}", server.violations());
    validate_history(&session.history().await.unwrap()).unwrap();
    Run {
        server,
        events,
        result,
        _dir: dir,
    }
}

fn tool(name: &str, input: Value) -> ScriptTurn {
    ScriptTurn {
        content: vec![ScriptBlock::ToolUse {
            id: None,
            name: name.into(),
            input,
        }],
        ..ScriptTurn::default()
    }
}

impl Run {
    fn tools(&self, i: usize) -> Vec<Value> {
        self.server.messages_requests()[i].body["tools"]
            .as_array()
            .unwrap()
            .clone()
    }

    fn names(&self, i: usize) -> Vec<String> {
        self.tools(i)
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    }

    /// The text of each tool result, in order.
    fn results(&self) -> Vec<(String, bool)> {
        self.events
            .iter()
            .filter_map(|e| match e {
                SdkMessage::User(u) => match &u.message.content {
                    skiff_protocol::MessageContent::Blocks(b) => match b.first() {
                        Some(ContentBlock::ToolResult(r)) => Some((
                            match &r.content {
                                Some(ToolResultContent::Text(t)) => t.clone(),
                                Some(ToolResultContent::Blocks(b)) => b
                                    .iter()
                                    .filter_map(|b| match b {
                                        ContentBlock::Text(t) => Some(t.text.clone()),
                                        _ => None,
                                    })
                                    .collect(),
                                None => String::new(),
                            },
                            r.is_error.unwrap_or(false),
                        )),
                        _ => None,
                    },
                    _ => None,
                },
                _ => None,
            })
            .collect()
    }

    fn init_tools(&self) -> Vec<String> {
        self.events
            .iter()
            .find_map(|e| match e {
                SdkMessage::System(skiff_protocol::sdk::SystemMessage::Init(i)) => {
                    Some(i.tools.clone())
                }
                _ => None,
            })
            .unwrap()
    }
}

/// Serialized tools and system of request `i`, as the bytes the cache sees.
fn prefix_bytes(tools: &[Value], system: &Value) -> String {
    format!(
        "{}{}",
        serde_json::to_string(system).unwrap(),
        serde_json::to_string(tools).unwrap()
    )
}

#[tokio::test]
async fn the_first_request_names_the_rare_tools_and_sends_them_without_definitions() {
    let r = run(vec![ScriptTurn::text("ok")], |_| {}).await;
    let names = r.names(0);
    for rare in RARE_TOOLS {
        assert!(!names.contains(&rare.to_owned()), "{rare} sent: {names:?}");
    }
    for core in [
        "Bash",
        "Edit",
        "Glob",
        "Grep",
        "Read",
        "Write",
        "TodoWrite",
        "WebSearch",
    ] {
        assert!(
            names.contains(&core.to_owned()),
            "{core} missing: {names:?}"
        );
    }
    let tools = r.tools(0);
    let search = tools.iter().find(|t| t["name"] == "ToolSearch").unwrap();
    let description = search["description"].as_str().unwrap();
    for rare in RARE_TOOLS {
        assert!(
            description.contains(rare),
            "{rare} not named: {description}"
        );
    }
    assert_eq!(search["input_schema"]["required"], json!(["query"]));
    // Sorted by name like the others; the breakpoint on the last one.
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    assert!(tools.last().unwrap().get("cache_control").is_some());
    // system/init lists every tool, the deferred ones included.
    let init = r.init_tools();
    for rare in RARE_TOOLS.iter().chain(&["ToolSearch", "Bash"]) {
        assert!(init.contains(&(*rare).to_owned()), "{rare}: {init:?}");
    }
}

#[tokio::test]
async fn a_loaded_tool_is_appended_and_the_prefix_before_it_stays_byte_identical() {
    let r = run(
        vec![
            tool(
                "ToolSearch",
                json!({"query": "select:WebFetch,NotebookEdit"}),
            ),
            tool("Read", json!({"file_path": "a.txt"})),
            tool("ToolSearch", json!({"query": "background task output"})),
            ScriptTurn::text("done"),
        ],
        |_| {},
    )
    .await;
    assert!(!r.result.is_error, "{:?}", r.result);
    let reqs = r.server.messages_requests();
    assert_eq!(reqs.len(), 4);
    let first = r.tools(0);
    let n = first.len();
    // After the load: the same tools, byte for byte, then the loaded ones in load order.
    let second = r.tools(1);
    assert_eq!(second[..n], first[..]);
    let appended: Vec<&str> = second[n..]
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(appended, ["WebFetch", "NotebookEdit"]);
    assert_eq!(
        second[n]["input_schema"]["required"],
        json!(["url", "prompt"])
    );
    assert!(second[n..].iter().all(|t| t.get("cache_control").is_none()));
    assert_eq!(
        prefix_bytes(&second[..n], &reqs[1].body["system"]),
        prefix_bytes(&first, &reqs[0].body["system"])
    );
    // A turn that loads nothing sends the same tools again.
    assert_eq!(r.tools(2), second);
    // A keyword query loads the best matches after the earlier ones.
    let fourth = r.tools(3);
    assert_eq!(fourth[..second.len()], second[..]);
    let more: Vec<&str> = fourth[second.len()..]
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(more.contains(&"TaskOutput"), "{more:?}");
    let results = r.results();
    assert!(
        results[0].0.contains("Loaded WebFetch, NotebookEdit"),
        "{results:?}"
    );
    assert!(!results[0].1);
}

#[tokio::test]
async fn a_deferred_tool_called_directly_runs_and_is_loaded_for_the_next_request() {
    let r = run(
        vec![
            tool("TaskStop", json!({"task_id": "nope"})),
            tool("ToolSearch", json!({"query": "select:Bash,Missing"})),
            ScriptTurn::text("done"),
        ],
        |_| {},
    )
    .await;
    let results = r.results();
    // It ran: TaskStop's own answer about an unknown task, not "No such tool".
    assert!(!results[0].0.contains("No such tool"), "{results:?}");
    assert!(results[0].0.contains("nope"), "{results:?}");
    let (first, second) = (r.names(0), r.names(1));
    assert!(!first.contains(&"TaskStop".to_owned()));
    assert_eq!(second.last().map(String::as_str), Some("TaskStop"));
    // Asking for a tool that is not deferred says so.
    assert!(
        results[1].0.contains("Not deferred tools: Bash, Missing"),
        "{results:?}"
    );
}

#[tokio::test]
async fn a_background_command_loads_task_output_and_task_stop() {
    let r = run(
        vec![
            tool(
                "Bash",
                json!({"command": "sleep 30", "run_in_background": true}),
            ),
            ScriptTurn::text("started"),
        ],
        |_| {},
    )
    .await;
    let names = r.names(1);
    assert_eq!(names[names.len() - 2..], ["TaskOutput", "TaskStop"]);
}

#[tokio::test]
async fn plan_mode_offers_exit_plan_mode_from_the_start() {
    let r = run(vec![ScriptTurn::text("ok")], |c| {
        c.permission_mode = PermissionMode::Plan;
    })
    .await;
    let names = r.names(0);
    assert!(names.contains(&"ExitPlanMode".to_owned()), "{names:?}");
    assert!(!names.contains(&"WebFetch".to_owned()), "{names:?}");
}

#[tokio::test]
async fn without_a_policy_every_tool_is_sent_and_there_is_no_tool_search() {
    let r = run(vec![ScriptTurn::text("ok")], |c| {
        c.defer_tools = DeferPolicy::Off;
    })
    .await;
    let names = r.names(0);
    for rare in RARE_TOOLS {
        assert!(names.contains(&rare.to_owned()), "{rare}: {names:?}");
    }
    assert!(!names.contains(&"ToolSearch".to_owned()));
    assert!(!r.init_tools().contains(&"ToolSearch".to_owned()));
}
