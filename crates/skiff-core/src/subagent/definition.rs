//! Subagent types: the built-in `general-purpose`, `Explore` and `Plan`, custom agents from
//! Markdown files with frontmatter (`.claude/agents/*.md`, `.skiff/agents/*.md` and the user's
//! own), and the `--agents` JSON the Agent SDKs pass.

use std::path::Path;

use serde_json::Value;
use yaml_rust2::{Yaml, YamlLoader};

use crate::permissions::PermissionMode;

/// Where a definition came from (later sources override earlier ones by name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentSource {
    /// Built into skiff.
    BuiltIn,
    /// A Markdown file.
    File(std::path::PathBuf),
    /// `--agents` on the command line (or the SDK's `agents` option).
    Flag,
}

/// One subagent type.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentDefinition {
    /// Its name (`subagent_type`).
    pub name: String,
    /// When to use it (shown to the model in the Task tool's description).
    pub description: String,
    /// The tools it may use (`None`: all of the parent's, except Task).
    pub tools: Option<Vec<String>>,
    /// Tools it may not use.
    pub disallowed_tools: Vec<String>,
    /// Its model (`sonnet`, `opus`, `haiku`, a model id; `None` or `inherit`: the parent's).
    pub model: Option<String>,
    /// Its permission mode (`None`: the parent's).
    pub permission_mode: Option<PermissionMode>,
    /// Its turn limit (`None`: the parent's).
    pub max_turns: Option<u32>,
    /// Its system prompt.
    pub prompt: String,
    /// Read-only: Bash runs only commands that change nothing, and no file-changing tool.
    pub read_only: bool,
    /// Where it came from.
    pub source: AgentSource,
}

const GENERAL_PROMPT: &str = "You are an agent for skiff, a coding assistant. Given the user's message, use the tools available to complete the task. Do what has been asked; nothing more, nothing less. When you complete the task, respond with a concise report of what was done and any key findings: the caller will relay this to the user, so it only needs the essentials.

Your strengths: searching for code, configurations and patterns across large codebases; analyzing multiple files to understand architecture; investigating complex questions that need exploring many files; multi-step research tasks.

Guidelines: for file searches use Grep or Glob; for analysis start broad and narrow down; be thorough; never create files unless necessary, prefer editing existing ones; in your final response share relevant file paths (always absolute) and code snippets only when they matter.";

const EXPLORE_PROMPT: &str = "You are a file search specialist for skiff, a coding assistant. You excel at thoroughly navigating and exploring codebases.

This is a READ-ONLY exploration task. You must not create, modify or delete any file, and must not run commands that change the system state. Use Glob for broad file pattern matching, Grep for searching file contents with regex, Read when you know the path, and Bash only for read-only operations (ls, git status, git log, git diff, find, cat, head, tail).

Adapt your search to the thoroughness the caller asks for. Return file paths as absolute paths. Report your findings clearly and concisely in your final message.";

const PLAN_PROMPT: &str = "You are a software architect and planning specialist for skiff, a coding assistant. Your role is to explore the codebase and design implementation plans.

This is a READ-ONLY planning task. You must not create, modify or delete any file, and must not run commands that change the system state.

Process: understand the requirements; explore the relevant code thoroughly (Glob, Grep, Read, read-only Bash); design the solution with its trade-offs, following existing patterns; then give a step-by-step implementation plan with dependencies and sequencing, and anticipate challenges. End with the 3-5 files most critical for implementing it.";

/// The built-in agents.
pub fn builtin_agents() -> Vec<AgentDefinition> {
    let make = |name: &str, description: &str, prompt: &str, read_only: bool| AgentDefinition {
        name: name.to_owned(),
        description: description.to_owned(),
        tools: None,
        disallowed_tools: Vec::new(),
        model: None,
        permission_mode: None,
        max_turns: None,
        prompt: prompt.to_owned(),
        read_only,
        source: AgentSource::BuiltIn,
    };
    vec![
        make(
            "general-purpose",
            "Research, code search and multi-step tasks; use it for a search you may not get right in a few tries.",
            GENERAL_PROMPT,
            false,
        ),
        make(
            "Explore",
            "Fast, read-only codebase exploration: find files, search code, answer questions about it. Say how thorough: \"quick\", \"medium\" or \"very thorough\".",
            EXPLORE_PROMPT,
            true,
        ),
        make(
            "Plan",
            "Read-only software architect: step-by-step implementation plans, critical files, trade-offs.",
            PLAN_PROMPT,
            true,
        ),
    ]
}

/// Tools that change files: left out of read-only agents.
pub const WRITING_TOOLS: &[&str] = &["Edit", "Write", "NotebookEdit", "TodoWrite", "ExitPlanMode"];

/// Read an agent file (`name` defaults to the file stem). Errors say what is wrong.
pub fn parse_agent_file(path: &Path, text: &str) -> Result<AgentDefinition, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (yaml, body) = split_frontmatter(text)
        .ok_or_else(|| "it has no frontmatter (--- name/description --- at the top)".to_owned())?;
    let docs = YamlLoader::load_from_str(yaml).map_err(|e| format!("bad frontmatter: {e}"))?;
    let Some(Yaml::Hash(map)) = docs.into_iter().next() else {
        return Err("the frontmatter is not a mapping of keys to values".to_owned());
    };
    let get = |key: &str| map.get(&Yaml::String(key.to_owned()));
    let text_of = |key: &str| get(key).and_then(scalar);
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default()
        .to_owned();
    let name = text_of("name").unwrap_or(stem);
    check_name(&name)?;
    let description =
        text_of("description").ok_or_else(|| "its frontmatter has no `description`".to_owned())?;
    let list = |key: &str| get(key).map(list_of);
    let permission_mode = match text_of("permissionMode") {
        Some(m) => Some(
            m.parse::<PermissionMode>()
                .map_err(|_| format!("unknown permissionMode `{m}`"))?,
        ),
        None => None,
    };
    let max_turns = match get("maxTurns") {
        Some(Yaml::Integer(n)) if *n > 0 => u32::try_from(*n).ok(),
        Some(other) => {
            return Err(format!(
                "maxTurns must be a positive whole number, not {other:?}"
            ));
        }
        None => None,
    };
    Ok(AgentDefinition {
        name,
        description,
        tools: list("tools").filter(|t| !t.iter().any(|n| n == "*")),
        disallowed_tools: list("disallowedTools").unwrap_or_default(),
        model: text_of("model").filter(|m| m != "inherit"),
        permission_mode,
        max_turns,
        prompt: body.trim().to_owned(),
        read_only: false,
        source: AgentSource::File(path.to_path_buf()),
    })
}

/// The agents of `--agents '{"name": {"description", "prompt", "tools", "model", ...}}'`.
pub fn parse_agents_json(value: &Value) -> Result<Vec<AgentDefinition>, String> {
    let Value::Object(map) = value else {
        return Err("--agents must be a JSON object of agent name to definition".to_owned());
    };
    let mut out = Vec::new();
    for (name, def) in map {
        check_name(name)?;
        let field = |key: &str| def.get(key).and_then(Value::as_str).map(str::to_owned);
        let list = |key: &str| {
            def.get(key).map(|v| match v {
                Value::Array(items) => items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect(),
                Value::String(s) => crate::commands::frontmatter::split_list(s),
                _ => Vec::new(),
            })
        };
        let description =
            field("description").ok_or_else(|| format!("agent `{name}` has no \"description\""))?;
        let prompt = field("prompt").ok_or_else(|| format!("agent `{name}` has no \"prompt\""))?;
        let permission_mode = match field("permissionMode") {
            Some(m) => Some(
                m.parse::<PermissionMode>()
                    .map_err(|_| format!("agent `{name}`: unknown permissionMode `{m}`"))?,
            ),
            None => None,
        };
        out.push(AgentDefinition {
            name: name.clone(),
            description,
            tools: list("tools").filter(|t| !t.iter().any(|n| n == "*")),
            disallowed_tools: list("disallowedTools").unwrap_or_default(),
            model: field("model").filter(|m| m != "inherit"),
            permission_mode,
            max_turns: def
                .get("maxTurns")
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| *n > 0),
            prompt,
            read_only: false,
            source: AgentSource::Flag,
        });
    }
    Ok(out)
}

/// Load every `*.md` agent in `dir` (missing directory: none). Files that cannot be used are
/// skipped with a warning naming them; files larger than 256 KiB and symlinks leaving the
/// directory are skipped too.
pub fn load_agents_dir(dir: &Path) -> (Vec<AgentDefinition>, Vec<String>) {
    const MAX_BYTES: u64 = 256 * 1024;
    let mut agents = Vec::new();
    let mut warnings = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (agents, warnings);
    };
    let real_dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut paths: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    paths.sort();
    for path in paths {
        let real = match std::fs::canonicalize(&path) {
            Ok(r) => r,
            Err(_) => continue,
        };
        if !real.starts_with(&real_dir) {
            warnings.push(format!(
                "agent file {} points outside {}; skipped",
                path.display(),
                dir.display()
            ));
            continue;
        }
        match std::fs::metadata(&real) {
            Ok(m) if m.is_file() && m.len() <= MAX_BYTES => {}
            Ok(m) if m.is_file() => {
                warnings.push(format!(
                    "agent file {} is larger than 256 KiB; skipped",
                    path.display()
                ));
                continue;
            }
            _ => continue,
        }
        let text = match std::fs::read(&real).map(String::from_utf8) {
            Ok(Ok(text)) => text,
            Ok(Err(_)) => {
                warnings.push(format!(
                    "agent file {} is not UTF-8 text; skipped",
                    path.display()
                ));
                continue;
            }
            Err(e) => {
                warnings.push(format!("cannot read agent file {}: {e}", path.display()));
                continue;
            }
        };
        match parse_agent_file(&path, &text) {
            Ok(agent) => agents.push(agent),
            Err(e) => warnings.push(format!("agent file {}: {e}; skipped", path.display())),
        }
    }
    (agents, warnings)
}

/// Merge definitions: a later one with the same name replaces an earlier one.
pub fn merge_agents(layers: impl IntoIterator<Item = AgentDefinition>) -> Vec<AgentDefinition> {
    let mut out: Vec<AgentDefinition> = Vec::new();
    for agent in layers {
        match out.iter_mut().find(|a| a.name == agent.name) {
            Some(slot) => *slot = agent,
            None => out.push(agent),
        }
    }
    out
}

fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' || c == ':');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "agent name `{name}` must be 1-64 letters, digits, '-', '_', '.' or ':'"
        ))
    }
}

/// The YAML between the first two `---` lines, and the rest.
fn split_frontmatter(text: &str) -> Option<(&str, &str)> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return Some((&rest[..offset], &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    None
}

fn scalar(y: &Yaml) -> Option<String> {
    match y {
        Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
        Yaml::Integer(n) => Some(n.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

fn list_of(y: &Yaml) -> Vec<String> {
    match y {
        Yaml::Array(items) => items.iter().filter_map(scalar).collect(),
        other => scalar(other)
            .map(|s| crate::commands::frontmatter::split_list(&s))
            .unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_claude_code_agent_file() {
        let text = "---\nname: reviewer\ndescription: Reviews code. Use after edits.\ntools: Read, Grep, Glob\nmodel: haiku\npermissionMode: acceptEdits\nmaxTurns: 7\n---\nYou review code.\n";
        let a = parse_agent_file(Path::new("/x/reviewer.md"), text).unwrap();
        assert_eq!(a.name, "reviewer");
        assert_eq!(a.description, "Reviews code. Use after edits.");
        assert_eq!(
            a.tools,
            Some(vec!["Read".into(), "Grep".into(), "Glob".into()])
        );
        assert_eq!(a.model.as_deref(), Some("haiku"));
        assert_eq!(a.permission_mode, Some(PermissionMode::AcceptEdits));
        assert_eq!(a.max_turns, Some(7));
        assert_eq!(a.prompt, "You review code.");
    }

    #[test]
    fn yaml_lists_inherit_and_missing_name() {
        let text = "---\ndescription: d\ntools:\n  - Read\n  - Bash\ndisallowedTools: [Write]\nmodel: inherit\n---\nbody";
        let a = parse_agent_file(Path::new("/x/helper.md"), text).unwrap();
        assert_eq!(a.name, "helper");
        assert_eq!(a.tools, Some(vec!["Read".into(), "Bash".into()]));
        assert_eq!(a.disallowed_tools, vec!["Write".to_owned()]);
        assert_eq!(a.model, None);
    }

    #[test]
    fn bad_files_say_why() {
        let p = Path::new("/x/a.md");
        assert!(
            parse_agent_file(p, "no frontmatter")
                .unwrap_err()
                .contains("no frontmatter")
        );
        assert!(
            parse_agent_file(p, "---\nname: a\n---\n")
                .unwrap_err()
                .contains("description")
        );
        assert!(parse_agent_file(p, "---\n: : [\n---\n").is_err());
        assert!(
            parse_agent_file(p, "---\nname: a b/c\ndescription: d\n---\n")
                .unwrap_err()
                .contains("agent name")
        );
        assert!(
            parse_agent_file(p, "---\ndescription: d\nmaxTurns: -3\n---\n")
                .unwrap_err()
                .contains("maxTurns")
        );
    }

    #[test]
    fn agents_json_as_the_sdk_sends_it() {
        let v: Value = serde_json::from_str(
            r#"{"code-reviewer": {"description": "Reviews", "prompt": "You review", "tools": ["Read", "Grep"], "model": "sonnet"}}"#,
        )
        .unwrap();
        let a = parse_agents_json(&v).unwrap();
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].name, "code-reviewer");
        assert_eq!(a[0].tools, Some(vec!["Read".into(), "Grep".into()]));
        assert_eq!(a[0].source, AgentSource::Flag);
        assert!(parse_agents_json(&Value::from(3)).is_err());
        assert!(parse_agents_json(&serde_json::json!({"x": {"prompt": "p"}})).is_err());
    }

    #[test]
    fn later_definitions_override() {
        let mut custom = builtin_agents().remove(0);
        custom.description = "mine".into();
        let merged = merge_agents(builtin_agents().into_iter().chain([custom]));
        assert_eq!(merged.len(), 3);
        assert_eq!(merged[0].description, "mine");
    }

    #[test]
    fn loads_a_directory_and_skips_bad_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("good.md"), "---\ndescription: g\n---\nbody").unwrap();
        std::fs::write(dir.path().join("bad.md"), "nothing").unwrap();
        std::fs::write(dir.path().join("bin.md"), [0xff, 0xfe, 0x00]).unwrap();
        std::fs::write(dir.path().join("notes.txt"), "x").unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("evil.md"), "---\ndescription: e\n---\n").unwrap();
        std::os::unix::fs::symlink(outside.path().join("evil.md"), dir.path().join("evil.md"))
            .unwrap();
        let (agents, warnings) = load_agents_dir(dir.path());
        assert_eq!(agents.len(), 1);
        assert_eq!(agents[0].name, "good");
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        assert!(load_agents_dir(&dir.path().join("missing")).0.is_empty());
    }
}
