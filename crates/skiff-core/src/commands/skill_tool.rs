//! The `Skill` tool: the model loads a skill's instructions when it needs them. Its description
//! lists the skills (name and description, as Claude Code 2.0 lists them in the tool's
//! description); a call answers `Launching skill: <name>` followed by the skill's body, and the
//! structured result `{success, commandName, allowedTools?, model?}` as Claude Code's. The turn
//! then runs the body's `` !`command` ``s and reads its `@file`s (see
//! [`super::turn::TurnCommand::after_tools`]), so that happens in one place for every caller.

use std::fmt::Write as _;
use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use skiff_protocol::ContentBlock;
use skiff_tools::{ToolContext, ToolOutput, Typed, TypedTool};

use super::CommandSet;
use super::args::{Arguments, substitute};

/// The tool's name.
pub const NAME: &str = "Skill";
/// Each description in the listing is cut to this many characters.
const MAX_LISTED_DESCRIPTION: usize = 250;
/// Past this many characters of listing, skills are listed by name only.
const LISTING_BUDGET: usize = 16_000;

/// Input of the Skill tool.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillInput {
    /// The skill name. E.g., "commit", "review-pr", or "pdf"
    pub skill: String,
    /// Optional arguments for the skill
    pub args: Option<String>,
}

/// The Skill tool over a session's commands and skills.
pub struct SkillTool {
    commands: Arc<CommandSet>,
    description: String,
}

impl SkillTool {
    /// The tool for these commands, or `None` when the model may load none of them.
    pub fn for_commands(commands: Arc<CommandSet>) -> Option<Arc<dyn skiff_tools::Tool>> {
        commands.model_invocable().next()?;
        let description = describe(&commands);
        Some(Arc::new(Typed::new(Self {
            commands,
            description,
        })))
    }
}

/// The tool's description: how to use it, then the skills.
fn describe(commands: &CommandSet) -> String {
    let mut text = String::from(
        "Execute a skill within the main conversation.\n\n\
         Skills are instructions (with scripts and references) for particular tasks. When the \
         user's request matches a skill below, call this tool with its name before doing \
         anything else about the task: the skill's instructions come back as the result, and \
         you follow them. When the user refers to \"/<name>\" for one of these, they mean that \
         skill.\n\n\
         - `skill`: the skill's name, e.g. \"pdf\" (a leading \"/\" is ignored)\n\
         - `args`: optional arguments, e.g. \"123\" for a skill that takes an issue number\n\n\
         Only use the skills listed below. Do not load a skill that is already running: if the \
         conversation already shows its <command-name> or its instructions, follow them. \
         Built-in commands such as /help or /compact are not skills.\n\n<available_skills>\n",
    );
    for cmd in commands.model_invocable() {
        let description: String = cmd
            .description
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        if text.len() > LISTING_BUDGET || description.is_empty() {
            let _ = writeln!(text, "- {}", cmd.name);
            continue;
        }
        let mut short: String = description.chars().take(MAX_LISTED_DESCRIPTION).collect();
        if description.chars().count() > MAX_LISTED_DESCRIPTION {
            short.push('…');
        }
        let _ = writeln!(text, "- {}: {short}", cmd.name);
    }
    text.push_str("</available_skills>");
    text
}

#[async_trait]
impl TypedTool for SkillTool {
    type Input = SkillInput;
    const NAME: &'static str = NAME;
    const SCHEMA: Option<&'static str> = Some(skiff_protocol::compact_json!(include_str!(
        "../schemas/Skill.json"
    )));

    fn description(&self) -> &str {
        &self.description
    }

    fn is_read_only(&self) -> bool {
        // Skills that grant tools need approval; safe ones are allowed by the turn's checker.
        false
    }

    async fn run(&self, input: SkillInput, ctx: &ToolContext) -> ToolOutput {
        let _ = ctx;
        let name = input.skill.trim().trim_start_matches('/');
        let Some(cmd) = self.commands.get(name) else {
            return ToolOutput::tool_use_error(format!("Unknown skill: {name}"));
        };
        if cmd.disable_model_invocation {
            return ToolOutput::tool_use_error(format!(
                "Skill {name} cannot be used with Skill tool due to disable-model-invocation"
            ));
        }
        let dir = cmd.dir.as_ref().map(|d| d.display().to_string());
        let body = substitute(
            &cmd.body,
            &Arguments {
                raw: input.args.as_deref().unwrap_or(""),
                names: &cmd.argument_names,
                session_id: "",
                skill_dir: dir.as_deref(),
            },
        );
        let body = match &dir {
            Some(d) => format!("Base directory for this skill: {d}\n\n{body}"),
            None => body,
        };
        let mut structured = json!({"success": true, "commandName": cmd.name});
        if !cmd.allowed_tools.is_empty() {
            structured["allowedTools"] = json!(cmd.allowed_tools);
        }
        if let Some(model) = &cmd.model {
            structured["model"] = Value::String(model.clone());
        }
        ToolOutput::blocks(vec![
            ContentBlock::text(launching(&cmd.name)),
            ContentBlock::text(body),
        ])
        .with_structured(structured)
    }
}

/// Claude Code's result text.
pub fn launching(name: &str) -> String {
    format!("Launching skill: {name}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The schema shipped rendered is the one the input type derives
    /// (`SKIFF_BLESS_SCHEMAS=1` renders it again).
    #[test]
    fn rendered_schema_is_the_derived_one() {
        skiff_tools::check_rendered_schema::<SkillTool>(env!("CARGO_MANIFEST_DIR")).unwrap();
    }
    use crate::commands::{CommandKind, CustomCommand, Scope};

    fn entry(name: &str, kind: CommandKind, description: Option<&str>) -> CustomCommand {
        CustomCommand {
            name: name.into(),
            kind,
            scope: Scope::Project,
            path: format!("{name}.md").into(),
            dir: (kind == CommandKind::Skill).then(|| format!("/skills/{name}").into()),
            description: description.unwrap_or("first line").into(),
            has_description: description.is_some(),
            argument_hint: None,
            allowed_tools: Vec::new(),
            model: None,
            disable_model_invocation: false,
            user_invocable: true,
            argument_names: Vec::new(),
            body: format!("Body of {name} for $ARGUMENTS"),
        }
    }

    fn set() -> Arc<CommandSet> {
        let mut manual = entry("deploy", CommandKind::Skill, Some("Deploy to production"));
        manual.disable_model_invocation = true;
        let mut granting = entry(
            "commit",
            CommandKind::Skill,
            Some("Commit the staged changes"),
        );
        granting.allowed_tools = vec!["Bash(git commit:*)".into()];
        Arc::new(CommandSet::new(
            vec!["help".into()],
            vec![
                granting,
                manual,
                entry("fix", CommandKind::Command, Some("Fix an issue")),
                entry("pdf", CommandKind::Skill, Some("Work with PDF files")),
                entry("plain", CommandKind::Command, None),
            ],
        ))
    }

    #[test]
    fn no_tool_without_skills_the_model_may_load() {
        let only_plain = CommandSet::new(vec![], vec![entry("plain", CommandKind::Command, None)]);
        assert!(SkillTool::for_commands(Arc::new(only_plain)).is_none());
        assert!(SkillTool::for_commands(Arc::new(CommandSet::default())).is_none());
    }

    #[test]
    fn the_schema_and_description_list_what_the_model_may_load() {
        let tool = SkillTool::for_commands(set()).unwrap();
        assert_eq!(tool.name(), "Skill");
        let schema = tool.input_schema();
        assert_eq!(schema["required"], json!(["skill"]));
        assert_eq!(schema["additionalProperties"], json!(false));
        assert_eq!(schema["properties"]["skill"]["type"], json!("string"));
        let d = tool.description();
        assert!(d.contains("- commit: Commit the staged changes\n"), "{d}");
        assert!(d.contains("- fix: Fix an issue\n"));
        assert!(d.contains("- pdf: Work with PDF files\n"));
        assert!(!d.contains("deploy") && !d.contains("plain"), "{d}");
    }

    #[tokio::test]
    async fn a_call_launches_the_skill_with_its_body() {
        let ws = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(ws.path()).unwrap();
        let tool = SkillTool::for_commands(set()).unwrap();
        let out = tool
            .call(json!({"skill": "/pdf", "args": "a.pdf"}), &ctx)
            .await;
        assert!(!out.is_error);
        assert_eq!(
            out.text_content(),
            "Launching skill: pdf\nBase directory for this skill: /skills/pdf\n\nBody of pdf for a.pdf"
        );
        assert_eq!(
            out.structured,
            Some(json!({"success": true, "commandName": "pdf"}))
        );
        let commit = tool.call(json!({"skill": "commit"}), &ctx).await;
        assert_eq!(
            commit.structured,
            Some(
                json!({"success": true, "commandName": "commit", "allowedTools": ["Bash(git commit:*)"]})
            )
        );
    }

    #[tokio::test]
    async fn unknown_and_manual_only_skills_are_errors() {
        let ws = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(ws.path()).unwrap();
        let tool = SkillTool::for_commands(set()).unwrap();
        let out = tool.call(json!({"skill": "nope"}), &ctx).await;
        assert!(out.is_error);
        assert_eq!(
            out.text_content(),
            "<tool_use_error>Unknown skill: nope</tool_use_error>"
        );
        let out = tool.call(json!({"skill": "deploy"}), &ctx).await;
        assert_eq!(
            out.text_content(),
            "<tool_use_error>Skill deploy cannot be used with Skill tool due to disable-model-invocation</tool_use_error>"
        );
        let bad = tool.call(json!({"name": "pdf"}), &ctx).await;
        assert!(bad.is_error && bad.text_content().contains("InputValidationError"));
    }
}
