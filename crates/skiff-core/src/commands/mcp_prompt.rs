//! MCP prompts as slash commands, as Claude Code offers them: each server prompt is
//! `/mcp__<server>__<prompt>`, its arguments given positionally after the name. Running one
//! fetches it with `prompts/get`; its messages are the turn's prompt, after Claude Code's
//! command tags. [`McpPrompts`] is where a session's command set finds the servers' prompts
//! once they connect (the lists follow the servers' changes).

use std::sync::{Arc, PoisonError, RwLock};

use skiff_protocol::ContentBlock;
use skiff_tools::{McpCatalog, McpPrompt};
use tokio_util::sync::CancellationToken;

use super::args::split_args;
use super::parse_invocation;
use crate::event::UserInput;

/// The MCP servers of a session, as a source of slash commands. Cheap to clone (shared).
#[derive(Clone, Default)]
pub struct McpPrompts(Arc<RwLock<Vec<Arc<dyn McpCatalog>>>>);

impl std::fmt::Debug for McpPrompts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.list().iter().map(|p| &p.command))
            .finish()
    }
}

impl PartialEq for McpPrompts {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for McpPrompts {}

impl McpPrompts {
    /// Offer the prompts of `catalog`'s servers (once, however often it is attached).
    pub fn attach(&self, catalog: Arc<dyn McpCatalog>) {
        let mut all = self.0.write().unwrap_or_else(PoisonError::into_inner);
        if !all
            .iter()
            .any(|c| std::ptr::addr_eq(Arc::as_ptr(c), Arc::as_ptr(&catalog)))
        {
            all.push(catalog);
        }
    }

    fn catalogs(&self) -> Vec<Arc<dyn McpCatalog>> {
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Every prompt offered now (a command name offered twice: the first).
    pub fn list(&self) -> Vec<McpPrompt> {
        let mut out: Vec<McpPrompt> = Vec::new();
        for catalog in self.catalogs() {
            for p in catalog.prompts() {
                if !out.iter().any(|o| o.command == p.command) {
                    out.push(p);
                }
            }
        }
        out
    }

    /// The prompt `/name` runs (a leading `/` is ignored), with the servers offering it.
    pub fn find(&self, name: &str) -> Option<(Arc<dyn McpCatalog>, McpPrompt)> {
        let name = name.strip_prefix('/').unwrap_or(name);
        if !name.starts_with("mcp__") {
            return None;
        }
        self.catalogs().into_iter().find_map(|c| {
            let p = c.prompts().into_iter().find(|p| p.command == name)?;
            Some((c, p))
        })
    }
}

/// The prompt's arguments from the text after its name: positional, as Claude Code gives
/// them (quotes group words: `"Ada Lovelace" tests`); words beyond the last argument join it.
/// A required argument left out is an error that shows the usage.
pub fn bind(prompt: &McpPrompt, raw: &str) -> Result<Vec<(String, String)>, String> {
    let mut words = split_args(raw.trim()).into_iter();
    let mut bound = Vec::new();
    let last = prompt.arguments.len().saturating_sub(1);
    for (i, arg) in prompt.arguments.iter().enumerate() {
        let value = if i == last {
            let rest: Vec<String> = words.by_ref().collect();
            (!rest.is_empty()).then(|| rest.join(" "))
        } else {
            words.next()
        };
        match value {
            Some(v) => bound.push((arg.name.clone(), v)),
            None if arg.required => {
                let usage = match prompt.usage() {
                    u if u.is_empty() => format!("/{}", prompt.command),
                    u => format!("/{} {u}", prompt.command),
                };
                return Err(format!(
                    "/{} needs the argument \"{}\" (usage: {usage})",
                    prompt.command, arg.name
                ));
            }
            None => {}
        }
    }
    Ok(bound)
}

/// When `input` starts with `/name args` for an MCP prompt, the prompt's messages as the
/// input (after Claude Code's command tags, before the input's other blocks); other input as
/// it is. Fails when the prompt cannot be had (its arguments, or the server's error).
pub(crate) async fn apply(
    prompts: &McpPrompts,
    input: UserInput,
    cancel: &CancellationToken,
) -> Result<UserInput, String> {
    let (text, rest) = match &input {
        UserInput::Text(t) => (t.as_str(), &[][..]),
        UserInput::Blocks(blocks) => match blocks.split_first() {
            Some((ContentBlock::Text(t), rest)) => (t.text.as_str(), rest),
            _ => return Ok(input),
        },
    };
    let Some((name, args)) = parse_invocation(text) else {
        return Ok(input);
    };
    let Some((catalog, prompt)) = prompts.find(name) else {
        // A prompt a connected server does not offer: say which it does.
        let offered: Vec<String> = prompts
            .list()
            .into_iter()
            .filter(|p| name.starts_with(&format!("mcp__{}__", normalize(&p.server))))
            .map(|p| format!("/{}", p.command))
            .collect();
        if offered.is_empty() {
            return Ok(input);
        }
        return Err(format!(
            "Unknown MCP prompt /{name}; the server offers {}",
            offered.join(", ")
        ));
    };
    let arguments = bind(&prompt, args)?;
    let content = catalog
        .get_prompt(&prompt, arguments, cancel)
        .await
        .map_err(|e| format!("/{}: {e}", prompt.command))?;
    let mut blocks = vec![ContentBlock::text(super::turn::tags(&prompt.command, args))];
    blocks.extend(content);
    blocks.extend(rest.iter().cloned());
    Ok(UserInput::Blocks(blocks))
}

/// A server name as it appears in command names (as in tool names: characters the API does
/// not accept become `_`).
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
    use skiff_tools::McpPromptArgument;

    use super::*;

    fn prompt(args: &[(&str, bool)]) -> McpPrompt {
        McpPrompt {
            command: "mcp__rich__review".into(),
            server: "rich".into(),
            name: "review".into(),
            description: String::new(),
            arguments: args
                .iter()
                .map(|(n, required)| McpPromptArgument {
                    name: (*n).into(),
                    description: None,
                    required: *required,
                })
                .collect(),
        }
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn arguments_are_positional_quotes_group_and_the_last_takes_the_rest() {
        let p = prompt(&[("name", true), ("focus", false)]);
        assert_eq!(bind(&p, "Ada").unwrap(), pairs(&[("name", "Ada")]));
        assert_eq!(
            bind(&p, "Ada tests").unwrap(),
            pairs(&[("name", "Ada"), ("focus", "tests")])
        );
        assert_eq!(
            bind(&p, "\"Ada Lovelace\" error handling").unwrap(),
            pairs(&[("name", "Ada Lovelace"), ("focus", "error handling")])
        );
        let err = bind(&p, "  ").unwrap_err();
        assert_eq!(
            err,
            "/mcp__rich__review needs the argument \"name\" (usage: /mcp__rich__review <name> [focus])"
        );
        assert_eq!(bind(&prompt(&[]), "ignored words").unwrap(), vec![]);
        assert_eq!(
            bind(&prompt(&[("a", false), ("b", true)]), "x").unwrap_err(),
            "/mcp__rich__review needs the argument \"b\" (usage: /mcp__rich__review [a] <b>)"
        );
    }
}
