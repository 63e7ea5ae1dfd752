//! Custom slash commands and skills, as Claude Code has them: Markdown files in
//! `.claude/commands/` (`frontend/test.md` is `/frontend:test`) and `.claude/skills/<name>/SKILL.md`,
//! their `~/.claude` and skiff (`.skiff`, `$SKIFF_HOME`) equivalents. [`discover`] finds them,
//! [`args`] substitutes arguments, [`expand`] runs the body's `` !`command` ``s (each checked by
//! the session's permission rules) and inlines its `@file` references, [`turn`] applies a
//! command to the turn that runs it (its text, `allowed-tools`, `model`) for every front end
//! alike, and [`SkillTool`] lets the model load a skill's body on demand.

pub mod args;
pub mod discover;
pub mod expand;
pub mod frontmatter;
pub mod mcp_prompt;
pub mod skill_tool;
pub mod turn;

use std::fmt;
use std::path::PathBuf;

pub use discover::{DiscoverOptions, Discovery, PluginCommands, discover};
pub use mcp_prompt::McpPrompts;
pub use skill_tool::SkillTool;

/// Whether an entry is a command file or a skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandKind {
    /// `commands/<name>.md`.
    Command,
    /// `skills/<name>/SKILL.md`.
    Skill,
}

/// Where an entry was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    /// A plugin the user enabled (`/plugin-name:command`); lowest precedence.
    Plugin,
    /// The workspace (`.claude/…`, `.skiff/…`).
    Project,
    /// The user's (`~/.claude/…`, `$SKIFF_HOME/…`).
    User,
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Plugin => "plugin",
            Self::Project => "project",
            Self::User => "user",
        })
    }
}

/// One custom command or skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomCommand {
    /// Name without the slash (`fix`, `frontend:test`).
    pub name: String,
    /// Command file or skill.
    pub kind: CommandKind,
    /// Project or user.
    pub scope: Scope,
    /// The Markdown file.
    pub path: PathBuf,
    /// A skill's directory (relative references in its body are read from there).
    pub dir: Option<PathBuf>,
    /// `description` from the frontmatter, else the body's first line.
    pub description: String,
    /// Whether the frontmatter gave the description.
    pub has_description: bool,
    /// `argument-hint`.
    pub argument_hint: Option<String>,
    /// `allowed-tools`: rules granted for the turn that runs it.
    pub allowed_tools: Vec<String>,
    /// `model` for the turn that runs it.
    pub model: Option<String>,
    /// Only the user may run it.
    pub disable_model_invocation: bool,
    /// The user may run it as `/name`.
    pub user_invocable: bool,
    /// `arguments`: names of positional arguments.
    pub argument_names: Vec<String>,
    /// The Markdown after the frontmatter.
    pub body: String,
}

impl CustomCommand {
    /// Where it came from, as `/help` shows it: `project`, `user`, `project, skill`,
    /// `plugin demo`.
    pub fn origin(&self) -> String {
        let scope = match self.scope {
            Scope::Plugin => format!(
                "plugin {}",
                self.name.split(':').next().unwrap_or(&self.name)
            ),
            s => s.to_string(),
        };
        match self.kind {
            CommandKind::Command => scope,
            CommandKind::Skill => format!("{scope}, skill"),
        }
    }

    /// Whether the model may load it with the Skill tool: skills, and commands whose
    /// frontmatter describes them, unless `disable-model-invocation` is set.
    pub fn model_invocable(&self) -> bool {
        !self.disable_model_invocation && (self.kind == CommandKind::Skill || self.has_description)
    }

    /// Whether loading it through the Skill tool needs no approval (Claude Code's "safe
    /// properties": nothing that grants tools).
    pub fn is_safe(&self) -> bool {
        self.allowed_tools.is_empty()
    }
}

/// The commands of a session: the front end's built-in names, the custom commands and
/// skills found on disk, and the MCP servers' prompts (once the servers connect).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandSet {
    builtins: Vec<String>,
    commands: Vec<CustomCommand>,
    mcp: McpPrompts,
}

impl CommandSet {
    /// A set of these built-in names and custom commands (names assumed distinct).
    pub fn new(builtins: Vec<String>, commands: Vec<CustomCommand>) -> Self {
        Self {
            builtins,
            commands,
            mcp: McpPrompts::default(),
        }
    }

    /// The MCP servers' prompts, offered as `/mcp__<server>__<prompt>`.
    pub fn mcp(&self) -> &McpPrompts {
        &self.mcp
    }

    /// The built-in command names (the front end's).
    pub fn builtins(&self) -> &[String] {
        &self.builtins
    }

    /// Every custom command and skill, by name.
    pub fn commands(&self) -> &[CustomCommand] {
        &self.commands
    }

    /// Whether there are no custom commands or skills.
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }

    /// The entry called `name` (a leading `/` is ignored).
    pub fn get(&self, name: &str) -> Option<&CustomCommand> {
        let name = name.strip_prefix('/').unwrap_or(name);
        self.commands.iter().find(|c| c.name == name)
    }

    /// The entry `/name` runs, if the user may run it.
    pub fn user_command(&self, name: &str) -> Option<&CustomCommand> {
        self.get(name).filter(|c| c.user_invocable)
    }

    /// What `/name` the user may type, built-ins first, MCP prompts last
    /// (`system/init.slash_commands`).
    pub fn slash_command_names(&self) -> Vec<String> {
        let mut names = self.builtins.clone();
        names.extend(
            self.commands
                .iter()
                .filter(|c| c.user_invocable)
                .map(|c| c.name.clone()),
        );
        for p in self.mcp.list() {
            if !names.contains(&p.command) {
                names.push(p.command);
            }
        }
        names
    }

    /// The skills' names (`system/init.skills`).
    pub fn skill_names(&self) -> Vec<String> {
        self.commands
            .iter()
            .filter(|c| c.kind == CommandKind::Skill)
            .map(|c| c.name.clone())
            .collect()
    }

    /// The entries the model may load with the Skill tool.
    pub fn model_invocable(&self) -> impl Iterator<Item = &CustomCommand> {
        self.commands.iter().filter(|c| c.model_invocable())
    }
}

/// Split `/name args` into the name and the arguments; `None` for text that is not a
/// command (no leading slash, or a path such as `/etc/hosts`).
pub fn parse_invocation(text: &str) -> Option<(&str, &str)> {
    let rest = text.trim_start().strip_prefix('/')?;
    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    let (name, args) = rest.split_at(end);
    if name.is_empty() || name.contains('/') {
        return None;
    }
    Some((name, args.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invocations_are_a_name_and_the_rest() {
        assert_eq!(parse_invocation("/fix 42"), Some(("fix", "42")));
        assert_eq!(
            parse_invocation("  /frontend:test  a\n b "),
            Some(("frontend:test", "a\n b"))
        );
        assert_eq!(parse_invocation("/review"), Some(("review", "")));
        assert_eq!(parse_invocation("/etc/hosts is odd"), None);
        assert_eq!(parse_invocation("fix 42"), None);
        assert_eq!(parse_invocation("/ 42"), None);
    }
}
