use std::path::Path;

use skiff_protocol::ContentBlock;
use skiff_tools::ToolContext;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::commands::{CommandKind, CustomCommand, Scope};
use crate::frames::EventSink;
use crate::permissions::{DenyAsks, PermissionEngine, RuleKind, RuleOrigin, RuleSet, Workspace};

fn command(body: &str) -> CustomCommand {
    CustomCommand {
        name: "t".into(),
        kind: CommandKind::Command,
        scope: Scope::Project,
        path: "t.md".into(),
        dir: None,
        description: String::new(),
        has_description: false,
        argument_hint: None,
        allowed_tools: Vec::new(),
        model: None,
        disable_model_invocation: false,
        user_invocable: true,
        argument_names: Vec::new(),
        body: body.to_owned(),
    }
}

/// An engine for `ws` with these allow and deny rules.
fn engine(ws: &Path, allow: &[&str], deny: &[&str]) -> PermissionEngine {
    let origin = RuleOrigin::at(ws);
    let mut rules = RuleSet::default();
    for (kind, list) in [(RuleKind::Allow, allow), (RuleKind::Deny, deny)] {
        for r in list {
            rules.push(kind, Rule::parse(r, &origin).unwrap());
        }
    }
    PermissionEngine::new(rules, Workspace::new(ws, &[]))
}

async fn run(
    ws: &Path,
    engine: &PermissionEngine,
    grants: &[Rule],
    cmd: &CustomCommand,
    args: &str,
) -> Expansion {
    let ctx = ToolContext::new(ws).unwrap();
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let requester = Requester::new(EventSink::new(tx, "s".into()));
    let cancel = CancellationToken::new();
    let fx = Effects {
        permissions: engine,
        grants,
        mode: PermissionMode::Default,
        approver: &DenyAsks,
        requester: &requester,
        ctx: &ctx,
        cancel: &cancel,
        session_id: "sess",
    };
    expand(cmd, args, &fx).await
}

fn texts(blocks: &[ContentBlock]) -> Vec<String> {
    blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn allowed_commands_run_and_their_output_is_inlined() {
    let ws = tempfile::tempdir().unwrap();
    let e = engine(ws.path(), &["Bash(printf *)", "Bash(true)"], &[]);
    let out = run(
        ws.path(),
        &e,
        &[],
        &command("Status: !`printf 'on %s' $0` and (!`echo read-only`) done\nLater: !`true`."),
        "main",
    )
    .await;
    assert_eq!(
        out.text,
        "Status: on main and (read-only) done\nLater: .\n\nARGUMENTS: main"
    );
}

#[tokio::test]
async fn denied_or_unapproved_commands_do_not_run_and_the_text_says_so() {
    let ws = tempfile::tempdir().unwrap();
    let marker = ws.path().join("ran");
    let e = engine(ws.path(), &[], &["Bash(rm *)"]);
    let body = format!(
        "A: !`touch {}`\nB: !`rm -rf {}`",
        marker.display(),
        ws.path().display()
    );
    let out = run(ws.path(), &e, &[], &command(&body), "").await;
    assert!(!marker.exists(), "an unapproved command ran");
    assert!(ws.path().exists());
    assert!(
        out.text.contains(&format!(
            "A: (not run: Bash command permission check failed for pattern \"!`touch {}`\": Claude requested permissions to use Bash, but you haven't granted it yet.)",
            marker.display()
        )),
        "{}",
        out.text
    );
    assert!(
        out.text
            .contains("B: (not run: Bash command permission check failed for pattern \"!`rm -rf"),
        "{}",
        out.text
    );
}

#[tokio::test]
async fn allowed_tools_grant_commands_for_the_turn_but_deny_rules_still_win() {
    let ws = tempfile::tempdir().unwrap();
    let marker = ws.path().join("ran");
    let e = engine(ws.path(), &[], &["Bash(touch *denied*)"]);
    let origin = RuleOrigin::at(ws.path());
    let grants = vec![Rule::parse("Bash(touch:*)", &origin).unwrap()];
    let body = format!(
        "!`touch {}` !`touch {}/denied`",
        marker.display(),
        ws.path().display()
    );
    let out = run(ws.path(), &e, &grants, &command(&body), "").await;
    assert!(marker.exists(), "{}", out.text);
    assert!(!ws.path().join("denied").exists());
    assert!(out.text.contains("not run"), "{}", out.text);
}

#[tokio::test]
async fn failing_commands_show_their_exit_code() {
    let ws = tempfile::tempdir().unwrap();
    let e = engine(ws.path(), &["Bash"], &[]);
    let out = run(ws.path(), &e, &[], &command("X !`echo oops; exit 3`"), "").await;
    assert_eq!(out.text, "X Exit code 3\noops");
}

#[tokio::test]
async fn file_references_inside_the_workspace_are_read_and_outside_are_not() {
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("notes.txt"), "first\nsecond\n").unwrap();
    std::fs::write(ws.path().join("with space.txt"), "spaced\n").unwrap();
    std::fs::write(outside.path().join("secret.txt"), "secret\n").unwrap();
    let e = engine(ws.path(), &[], &[]);
    let body = format!(
        "Review @notes.txt, and @\"with space.txt\" and @{}/secret.txt; mail me@example.com @nobody",
        outside.path().display()
    );
    let out = run(ws.path(), &e, &[], &command(&body), "").await;
    assert_eq!(out.text, body, "references stay in the text");
    let t = texts(&out.files);
    assert_eq!(t.len(), 3, "{t:?}");
    let notes = ws.path().canonicalize().unwrap().join("notes.txt");
    assert_eq!(
        t[0],
        format!(
            "Called the Read tool with the following input: {{\"file_path\":\"{}\"}}\nResult of calling the Read tool:\n1\tfirst\n2\tsecond\n3\t",
            notes.display()
        )
    );
    assert!(t[1].ends_with("1\tspaced\n2\t"), "{}", t[1]);
    assert!(
        t[2].starts_with(&format!(
            "(@{}/secret.txt was not read:",
            outside.path().display()
        )),
        "{}",
        t[2]
    );
    assert!(!t.concat().contains("secret\n"));
}

#[tokio::test]
async fn read_deny_rules_apply_to_references_and_output_is_not_rescanned() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join(".env"), "KEY=1\n").unwrap();
    std::fs::write(ws.path().join("b.txt"), "b\n").unwrap();
    let e = engine(ws.path(), &["Bash(echo *)"], &["Read(./.env)"]);
    let out = run(
        ws.path(),
        &e,
        &[],
        &command("See @.env and !`echo @b.txt`"),
        "",
    )
    .await;
    assert_eq!(out.text, "See @.env and @b.txt");
    let t = texts(&out.files);
    assert_eq!(t.len(), 1, "{t:?}");
    assert!(t[0].starts_with("(@.env was not read:"), "{}", t[0]);
}

#[tokio::test]
async fn skills_get_their_base_directory() {
    let ws = tempfile::tempdir().unwrap();
    let e = engine(ws.path(), &[], &[]);
    let mut skill = command("Run ${CLAUDE_SKILL_DIR}/scripts/x.sh for ${CLAUDE_SESSION_ID}");
    skill.kind = CommandKind::Skill;
    skill.dir = Some("/skills/x".into());
    let out = run(ws.path(), &e, &[], &skill, "").await;
    assert_eq!(
        out.text,
        "Base directory for this skill: /skills/x\n\nRun /skills/x/scripts/x.sh for sess"
    );
}
