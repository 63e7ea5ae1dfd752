//! Slash commands and skills in the session: `/name args` expanded for the model, its
//! `allowed-tools` and `model` for that turn only, the Skill tool's round (body loaded, its
//! commands run), skills that grant tools needing approval, and the init frame's lists.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::sync::Arc;

use futures::StreamExt;
use serde_json::{Value, json};
use skiff_core::commands::{CommandSet, DiscoverOptions, SkillTool, discover};
use skiff_core::permissions::{PermissionEngine, RuleSet, Workspace};
use skiff_core::{Agent, AgentConfig, Session};
use skiff_llm::ScriptedProvider;
use skiff_protocol::script::{Script, ScriptTurn};
use skiff_protocol::sdk::{SdkMessage, SystemMessage};
use skiff_protocol::{ContentBlock, MessagesRequest, ToolResultContent};
use skiff_tools::{ToolContext, ToolRegistry};

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

struct Setup {
    session: Session,
    provider: Arc<ScriptedProvider>,
    ws: tempfile::TempDir,
}

/// A session over a workspace holding these command files, no allow rules, asks denied.
fn setup(files: &[(&str, &str)], turns: Vec<ScriptTurn>) -> Setup {
    let ws = tempfile::tempdir().unwrap();
    for (rel, text) in files {
        write(ws.path(), rel, text);
    }
    let cwd = std::fs::canonicalize(ws.path()).unwrap();
    let found = discover(&DiscoverOptions {
        cwd: cwd.clone(),
        trusted: true,
        project: true,
        user_dirs: Vec::new(),
        builtins: vec!["compact".into(), "help".into()],
        plugins: Vec::new(),
    });
    assert!(found.warnings.is_empty(), "{:?}", found.warnings);
    let commands: Arc<CommandSet> = Arc::new(found.set);
    let mut tools = ToolRegistry::with_builtins();
    if let Some(skill) = SkillTool::for_commands(Arc::clone(&commands)) {
        tools.register(skill).unwrap();
    }
    let provider = Arc::new(ScriptedProvider::new(Script {
        turns,
        ..Script::default()
    }));
    let config = AgentConfig {
        cwd: cwd.clone(),
        commands,
        ..AgentConfig::default()
    };
    let engine = PermissionEngine::new(RuleSet::default(), Workspace::new(&cwd, &[]));
    let agent = Agent::new(
        config,
        Arc::clone(&provider) as Arc<dyn skiff_llm::Provider>,
        tools,
        ToolContext::new(&cwd).unwrap(),
    )
    .with_permissions(Arc::new(engine));
    Setup {
        session: agent.spawn(),
        provider,
        ws,
    }
}

async fn run(session: &mut Session, prompt: &str) -> Vec<SdkMessage> {
    session.run(prompt).collect().await
}

/// The texts of the last user message of a request.
fn last_user_texts(req: &MessagesRequest) -> Vec<String> {
    let msg = req.messages.last().unwrap();
    msg.content
        .to_blocks()
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect()
}

/// The tool results of the last user message of a request, as (text, is_error).
fn tool_results(req: &MessagesRequest) -> Vec<(String, bool)> {
    let msg = req.messages.last().unwrap();
    msg.content
        .to_blocks()
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolResult(r) => Some((
                match &r.content {
                    Some(ToolResultContent::Text(t)) => t.clone(),
                    Some(ToolResultContent::Blocks(b)) => b
                        .iter()
                        .filter_map(|b| match b {
                            ContentBlock::Text(t) => Some(t.text.as_str()),
                            _ => None,
                        })
                        .collect::<Vec<_>>()
                        .join("\n"),
                    None => String::new(),
                },
                r.is_error == Some(true),
            )),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_command_is_expanded_and_its_grants_and_model_last_one_turn() {
    let mut s = setup(
        &[(
            ".claude/commands/fix.md",
            "---\ndescription: Fix an issue\nallowed-tools: Bash(touch *)\nmodel: haiku\n---\nFix issue #$ARGUMENTS. Branch: !`echo main`",
        )],
        vec![
            ScriptTurn::tool_use("Bash", json!({"command": "touch granted.txt"})),
            ScriptTurn::text("Fixed."),
            ScriptTurn::tool_use("Bash", json!({"command": "touch later.txt"})),
            ScriptTurn::text("Done."),
        ],
    );
    let frames = run(&mut s.session, "/fix 42").await;
    let SdkMessage::Result(r) = frames.last().unwrap() else {
        panic!("no result")
    };
    assert_eq!(r.result.as_deref(), Some("Fixed."));
    assert!(
        s.ws.path().join("granted.txt").exists(),
        "allowed-tools did not grant the call"
    );

    let reqs = s.provider.requests();
    let texts = last_user_texts(&reqs[0]);
    assert_eq!(
        texts,
        [
            "<command-message>fix is running…</command-message>\n<command-name>/fix</command-name>\n<command-args>42</command-args>",
            "Fix issue #42. Branch: main",
        ]
    );
    assert_eq!(reqs[0].model, "claude-haiku-4-5");
    assert_eq!(reqs[1].model, "claude-haiku-4-5");

    // The next turn: the session's model again, and the grant is gone.
    let frames = run(&mut s.session, "again").await;
    assert!(matches!(frames.last(), Some(SdkMessage::Result(_))));
    assert!(
        !s.ws.path().join("later.txt").exists(),
        "the grant outlived its turn"
    );
    let reqs = s.provider.requests();
    assert_eq!(reqs[2].model, AgentConfig::default().model);
    assert_eq!(last_user_texts(&reqs[2]), ["again"]);
    let results = tool_results(&reqs[3]);
    assert!(
        results[0].1 && results[0].0.contains("haven't granted"),
        "{results:?}"
    );
}

#[tokio::test]
async fn unknown_commands_and_paths_go_to_the_model_as_typed() {
    let mut s = setup(
        &[(".claude/commands/fix.md", "Fix $ARGUMENTS")],
        vec![ScriptTurn::text("a"), ScriptTurn::text("b")],
    );
    run(&mut s.session, "/nosuch 1").await;
    run(&mut s.session, "/etc/hosts has a typo").await;
    let reqs = s.provider.requests();
    assert_eq!(last_user_texts(&reqs[0]), ["/nosuch 1"]);
    assert_eq!(last_user_texts(&reqs[1]), ["/etc/hosts has a typo"]);
}

#[tokio::test]
async fn the_model_loads_a_skill_and_its_commands_run() {
    let mut s = setup(
        &[
            (
                ".claude/skills/pdf/SKILL.md",
                "---\ndescription: Work with PDF files\n---\nUse ${CLAUDE_SKILL_DIR}/tool.py on $ARGUMENTS. Pages: !`echo 3`",
            ),
            ("report.txt", "the report\n"),
        ],
        vec![
            ScriptTurn::tool_use("Skill", json!({"skill": "pdf", "args": "@report.txt"})),
            ScriptTurn::text("Loaded."),
        ],
    );
    let frames = run(&mut s.session, "read the pdf").await;
    let SdkMessage::Result(r) = frames.last().unwrap() else {
        panic!("no result")
    };
    assert_eq!(r.result.as_deref(), Some("Loaded."));
    let reqs = s.provider.requests();
    let tools: Vec<&str> = reqs[0].tools.iter().map(|t| t.name.as_str()).collect();
    assert!(tools.contains(&"Skill"), "{tools:?}");
    let skill = reqs[0].tools.iter().find(|t| t.name == "Skill").unwrap();
    assert!(
        skill
            .description
            .as_deref()
            .unwrap()
            .contains("- pdf: Work with PDF files")
    );
    let results = tool_results(&reqs[1]);
    let (text, is_error) = &results[0];
    assert!(!is_error, "{text}");
    let dir = std::fs::canonicalize(s.ws.path())
        .unwrap()
        .join(".claude/skills/pdf");
    assert!(
        text.starts_with(&format!(
            "Launching skill: pdf\nBase directory for this skill: {d}\n\nUse {d}/tool.py on @report.txt. Pages: 3\n",
            d = dir.display()
        )),
        "{text}"
    );
    assert!(
        text.contains("Result of calling the Read tool:\n1\tthe report"),
        "{text}"
    );
    // The user frame of the result shows the loaded body too, and the structured result.
    let user = frames
        .iter()
        .find_map(|f| match f {
            SdkMessage::User(u) => Some(u),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        user.tool_use_result,
        Some(json!({"success": true, "commandName": "pdf"}))
    );
}

#[tokio::test]
async fn a_skill_that_grants_tools_needs_approval() {
    let mut s = setup(
        &[(
            ".claude/skills/deploy/SKILL.md",
            "---\ndescription: Deploy\nallowed-tools: Bash\n---\nDeploy now.",
        )],
        vec![
            ScriptTurn::tool_use("Skill", json!({"skill": "deploy"})),
            ScriptTurn::text("Not allowed."),
        ],
    );
    run(&mut s.session, "deploy it").await;
    let reqs = s.provider.requests();
    let results = tool_results(&reqs[1]);
    assert!(results[0].1, "{results:?}");
    assert!(results[0].0.contains("haven't granted"), "{results:?}");
}

#[tokio::test]
async fn init_lists_slash_commands_and_skills() {
    let mut s = setup(
        &[
            (".claude/commands/fix.md", "Fix"),
            (".claude/commands/frontend/test.md", "Test"),
            (".claude/skills/pdf/SKILL.md", "PDF"),
            (
                ".claude/skills/bg/SKILL.md",
                "---\nuser-invocable: false\n---\nbackground",
            ),
        ],
        vec![ScriptTurn::text("hi")],
    );
    let frames = run(&mut s.session, "hello").await;
    let init = frames
        .iter()
        .find_map(|f| match f {
            SdkMessage::System(SystemMessage::Init(i)) => Some(i),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        init.slash_commands,
        ["compact", "help", "fix", "frontend:test", "pdf"]
    );
    assert_eq!(init.extra["skills"], json!(["bg", "pdf"]));
    assert!(init.tools.contains(&"Skill".to_owned()));
    let _: &Value = &init.extra["plugins"];
}
