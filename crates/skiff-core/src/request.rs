//! Building the Messages API request of each turn: system blocks, tools, history, and prompt
//! caching breakpoints (tools, system prompt, last message: at most 4). The request borrows
//! the template and the conversation (nothing is copied per turn); the conversation's
//! serialized prefix spares serializing the whole history again.

use skiff_protocol::{
    CacheControl, Message, MessagesJson, RequestView, SystemBlock, SystemPrompt, ToolDefinition,
};

/// The tools `--compact-prompt` offers (small local models): what a coding task needs.
pub const COMPACT_TOOLS: [&str; 6] = ["Bash", "Edit", "Glob", "Grep", "Read", "Write"];

/// Longest compact tool description, in characters.
const TOOL_LINE: usize = 160;
/// Longest compact parameter description, in characters.
const PARAM_LINE: usize = 80;

/// The compact form of each of [`COMPACT_TOOLS`]: a one-line description, and the parameters
/// offered. The descriptions name no language: a small model copies examples (asked to fix a
/// bash project, Qwen2.5-Coder-1.5B globbed the full description's `**/*.rs` and searched
/// `src/**/*.rs` until it gave up). Parameters left out stay accepted; they are only not
/// offered, so a small model has fewer to invent values for.
const COMPACT_FORMS: [(&str, &str, &[&str]); 6] = [
    (
        "Bash",
        "Run a shell command with `bash -c` and get its output (stdout and stderr).",
        &["command", "timeout"],
    ),
    (
        "Edit",
        "Replace the exact text `old_string` with `new_string` in a file you have Read.",
        &["file_path", "old_string", "new_string", "replace_all"],
    ),
    (
        "Glob",
        "List the files whose paths match a glob pattern (`**/*` lists every file).",
        &["pattern", "path"],
    ),
    (
        "Grep",
        "Search the contents of files for a regular expression.",
        &["pattern", "path", "glob", "output_mode", "-i"],
    ),
    (
        "Read",
        "Read a text file; its lines come back numbered from 1.",
        &["file_path", "offset", "limit"],
    ),
    (
        "Write",
        "Write a whole file (an existing file must be Read first).",
        &["file_path", "content"],
    ),
];

/// Parameter descriptions of [`COMPACT_FORMS`] that replace ones giving a language's examples.
const COMPACT_PARAMETERS: [(&str, &str, &str); 2] = [
    ("Grep", "pattern", "The regular expression."),
    ("Grep", "glob", "Only files whose names match this glob."),
];

/// One-line descriptions for small models (`--compact-prompt`). The core tools take their
/// [`COMPACT_FORMS`]; any other tool's description and each parameter's are cut to their first
/// sentence (on a word boundary when still long). Names, types, enums and required lists stay.
pub fn compact_descriptions(tools: &mut [ToolDefinition]) {
    for tool in tools {
        let form = COMPACT_FORMS.iter().find(|(name, ..)| *name == tool.name);
        match form {
            Some((_, description, keep)) => {
                tool.description = Some((*description).to_owned());
                keep_parameters(&mut tool.input_schema, keep);
                for (_, param, text) in COMPACT_PARAMETERS.iter().filter(|p| p.0 == tool.name) {
                    let path = format!("/properties/{param}");
                    if let Some(p) = tool
                        .input_schema
                        .pointer_mut(&path)
                        .and_then(|p| p.as_object_mut())
                    {
                        p.insert("description".into(), serde_json::Value::from(*text));
                    }
                }
            }
            None => {
                if let Some(d) = &tool.description {
                    tool.description = Some(first_sentence(d, TOOL_LINE));
                }
            }
        }
        compact_schema(&mut tool.input_schema);
    }
}

/// Only the `keep` properties of an object schema (and of its required list).
fn keep_parameters(schema: &mut serde_json::Value, keep: &[&str]) {
    if let Some(serde_json::Value::Object(props)) = schema.get_mut("properties") {
        props.retain(|name, _| keep.contains(&name.as_str()));
    }
    if let Some(serde_json::Value::Array(required)) = schema.get_mut("required") {
        required.retain(|name| name.as_str().is_some_and(|n| keep.contains(&n)));
    }
}

/// Parameter descriptions to their first sentence, through nested objects and arrays.
fn compact_schema(v: &mut serde_json::Value) {
    let serde_json::Value::Object(map) = v else {
        return;
    };
    if let Some(serde_json::Value::String(d)) = map.get_mut("description") {
        *d = first_sentence(d, PARAM_LINE);
    }
    if let Some(serde_json::Value::Object(props)) = map.get_mut("properties") {
        props.values_mut().for_each(compact_schema);
    }
    if let Some(items) = map.get_mut("items") {
        compact_schema(items);
    }
}

/// The first sentence of `text` (up to a `.`, `!` or `?` followed by white space, outside
/// parentheses and code spans and not ending `e.g.`/`i.e.`, or the first line break), at most
/// `max` characters: a longer one is cut on a word boundary and ends `…`.
fn first_sentence(text: &str, max: usize) -> String {
    let text = text.trim();
    let mut end = text.len();
    let (mut parens, mut code) = (0usize, false);
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '\n' => {
                end = i;
                break;
            }
            '`' => code = !code,
            '(' if !code => parens += 1,
            ')' if !code => parens = parens.saturating_sub(1),
            '.' | '!' | '?'
                if !code
                    && parens == 0
                    && chars.peek().is_none_or(|(_, n)| n.is_whitespace())
                    && !text[..i].ends_with("e.g")
                    && !text[..i].ends_with("i.e") =>
            {
                end = i + c.len_utf8();
                break;
            }
            _ => {}
        }
    }
    let first = text[..end].trim_end();
    if first.chars().count() <= max {
        return first.to_owned();
    }
    let cut: String = first.chars().take(max).collect();
    let end = cut.rfind(' ').unwrap_or(cut.len());
    format!("{}…", cut[..end].trim_end())
}

/// The fixed parts of every request of a session.
#[derive(Debug, Clone)]
pub struct RequestTemplate {
    /// Model id.
    pub model: String,
    /// Max output tokens.
    pub max_tokens: u32,
    /// Temperature.
    pub temperature: Option<f32>,
    /// System prompt blocks (already carrying their breakpoint when caching is on); `None`
    /// when there is no system prompt.
    pub system: Option<SystemPrompt>,
    /// Tool definitions as sent: the ones offered from the start (the last of them carries a
    /// breakpoint when caching is on), then the deferred tools loaded since, in load order.
    /// Changed only through [`RequestTemplate::set_tools`] and
    /// [`RequestTemplate::set_loaded`], which measure them again.
    pub tools: Vec<ToolDefinition>,
    /// How many of `tools` were offered from the start.
    offered: usize,
    /// Whether to add cache_control breakpoints.
    pub caching: bool,
    /// Estimated tokens of the system prompt and tools (computed once).
    fixed_tokens: u64,
    /// The serialized size of each of `tools`, in bytes (computed with `fixed_tokens`).
    tool_bytes: Vec<usize>,
    /// `tools` serialized as a JSON array (computed with `fixed_tokens`; `None` when there
    /// are no tools or one could not be serialized): each request copies it.
    tools_json: Option<Box<serde_json::value::RawValue>>,
    /// The system prompt's own parts (the MCP servers' instructions go after them).
    base_system: Vec<SystemBlock>,
    /// The MCP servers' instructions section, when there is one.
    extra_system: Option<String>,
    /// Thinking and effort on the model in use.
    reasoning: crate::reasoning::RequestReasoning,
    /// The largest `max_tokens` the model takes, when known.
    output_cap: Option<u32>,
    /// The thinking of the request built last (borrowed by it).
    thinking: Option<skiff_protocol::ThinkingConfig>,
}

impl RequestTemplate {
    /// A template; breakpoints are placed once here so the bytes stay identical every turn.
    pub fn new(
        model: String,
        max_tokens: u32,
        temperature: Option<f32>,
        system_parts: &[String],
        mut tools: Vec<ToolDefinition>,
        caching: bool,
    ) -> Self {
        let base_system: Vec<SystemBlock> = system_parts
            .iter()
            .filter(|p| !p.is_empty())
            .map(|p| SystemBlock {
                text: p.clone(),
                cache_control: None,
            })
            .collect();
        if caching && let Some(last) = tools.last_mut() {
            last.cache_control = Some(CacheControl::ephemeral());
        }
        let mut template = Self {
            model,
            max_tokens,
            temperature,
            system: None,
            offered: tools.len(),
            tools,
            caching,
            fixed_tokens: 0,
            tool_bytes: Vec::new(),
            tools_json: None,
            base_system,
            extra_system: None,
            reasoning: crate::reasoning::RequestReasoning::default(),
            output_cap: None,
            thinking: None,
        };
        template.place_system();
        template
    }

    /// Thinking and effort for the model in use (`model`; an OpenAI-compatible provider when
    /// `chat`): what its requests carry, and the notes on what they leave out.
    pub fn set_reasoning(
        &mut self,
        reasoning: &crate::reasoning::Reasoning,
        chat: bool,
    ) -> Vec<String> {
        self.reasoning = crate::reasoning::RequestReasoning::plan(reasoning, &self.model, chat);
        self.output_cap = skiff_llm::model_info(&self.model)
            .map(|i| u32::try_from(i.max_output_tokens).unwrap_or(u32::MAX));
        self.reasoning.notes.clone()
    }

    /// The system blocks: the prompt's own, then the MCP servers' instructions, the last one
    /// carrying the breakpoint when caching.
    fn place_system(&mut self) {
        let mut system = self.base_system.clone();
        if let Some(extra) = &self.extra_system {
            system.push(SystemBlock {
                text: extra.clone(),
                cache_control: None,
            });
        }
        if self.caching
            && let Some(last) = system.last_mut()
        {
            last.cache_control = Some(CacheControl::ephemeral());
        }
        self.system = (!system.is_empty()).then_some(SystemPrompt::Blocks(system));
        self.measure();
    }

    /// Replace the tool definitions (tools that arrived after the session started, or MCP
    /// tools that changed), with the breakpoint moved to the new last one. Returns whether they
    /// changed: the same tools leave the request's bytes as they were.
    pub fn set_tools(&mut self, mut tools: Vec<ToolDefinition>) -> bool {
        if self.caching
            && let Some(last) = tools.last_mut()
        {
            last.cache_control = Some(CacheControl::ephemeral());
        }
        let n = self.offered.min(self.tools.len());
        if tools[..] == self.tools[..n] {
            return false;
        }
        let loaded = self.tools.split_off(n);
        self.offered = tools.len();
        self.tools = tools;
        self.tools.extend(loaded);
        self.measure();
        true
    }

    /// Set the deferred tools loaded so far (in load order): they follow the tools offered
    /// from the start, after its breakpoint, so the bytes before them stay as they were.
    /// Returns whether they changed.
    pub fn set_loaded(&mut self, mut loaded: Vec<ToolDefinition>) -> bool {
        for def in &mut loaded {
            def.cache_control = None;
        }
        let n = self.offered.min(self.tools.len());
        if loaded[..] == self.tools[n..] {
            return false;
        }
        self.tools.truncate(n);
        self.tools.extend(loaded);
        self.measure();
        true
    }

    /// Set the text that follows the system prompt's own parts in a block of its own (the MCP
    /// servers' instructions); `None` for none. Returns whether it changed.
    pub fn set_extra_system(&mut self, text: Option<String>) -> bool {
        let text = text.filter(|t| !t.trim().is_empty());
        if text == self.extra_system {
            return false;
        }
        self.extra_system = text;
        self.place_system();
        true
    }

    /// Estimated tokens of the parts every request repeats (system prompt and tools).
    pub fn fixed_tokens(&self) -> u64 {
        self.fixed_tokens
    }

    /// The serialized size of each tool definition, in bytes, in the order of `tools`.
    pub fn tool_bytes(&self) -> &[usize] {
        &self.tool_bytes
    }

    /// Measure the system prompt and tools again, after either changed, and serialize the
    /// tools for the requests to come (each one once: its size is its serialized length).
    fn measure(&mut self) {
        use serde_json::value::{RawValue, to_raw_value};
        let each: Vec<Option<Box<RawValue>>> =
            self.tools.iter().map(|t| to_raw_value(t).ok()).collect();
        self.tool_bytes = each
            .iter()
            .map(|t| t.as_ref().map_or(0, |t| t.get().len()))
            .collect();
        self.tools_json = each
            .into_iter()
            .collect::<Option<Vec<_>>>()
            .filter(|all| !all.is_empty())
            .and_then(|all| to_raw_value(&all).ok());
        self.fixed_tokens =
            crate::tokens::estimate_fixed_sized(self.system_blocks(), self.tool_bytes.iter().sum());
    }

    /// The system prompt's blocks.
    pub fn system_blocks(&self) -> &[SystemBlock] {
        match &self.system {
            Some(SystemPrompt::Blocks(b)) => b,
            _ => &[],
        }
    }

    /// The request for `history` (whose first `prefix.count()` messages are serialized in
    /// `prefix`), with a breakpoint on the last content block when caching. `max_tokens` is the
    /// room of the answer; thinking (when asked for) adds its budget on top, and a request that
    /// thinks has no temperature (the API takes none with thinking).
    pub fn build<'a>(
        &'a mut self,
        history: &'a [Message],
        prefix: Option<&'a MessagesJson>,
        max_tokens: u32,
    ) -> RequestView<'a> {
        let (max_tokens, thinking) = self.reasoning.fit(max_tokens, self.output_cap);
        self.thinking = thinking;
        let mut req = RequestView::new(&self.model, max_tokens, history);
        req.system = self.system.as_ref();
        req.tools = &self.tools;
        req.tools_json = self.tools_json.as_deref();
        req.thinking = self.thinking.as_ref();
        req.temperature = if self.thinking.is_some() {
            None
        } else {
            self.temperature
        };
        if !self.reasoning.extra.is_empty() {
            req.extra = Some(&self.reasoning.extra);
        }
        req.cache_last_message = self.caching;
        req.prefix = prefix;
        req
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn definition(name: &str, description: String, schema: serde_json::Value) -> ToolDefinition {
        ToolDefinition {
            name: name.into(),
            description: Some(description),
            input_schema: schema.into(),
            cache_control: None,
            extra: Default::default(),
        }
    }

    #[test]
    fn the_core_tools_take_their_compact_form() {
        let mut tools = vec![definition(
            "Grep",
            "Search with ripgrep (`**/*.rs`).".into(),
            serde_json::json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "Regex, e.g. `fn\\s+`."},
                    "path": {"type": "string"},
                    "multiline": {"type": "boolean"},
                    "head_limit": {"type": "number"}
                },
                "required": ["pattern"]
            }),
        )];
        compact_descriptions(&mut tools);
        let grep = &tools[0];
        assert_eq!(
            grep.description.as_deref(),
            Some("Search the contents of files for a regular expression.")
        );
        let props = grep.input_schema["properties"].as_object().unwrap();
        // (Key order depends on serde_json's preserve_order, on in the workspace's test build.)
        let mut kept: Vec<&String> = props.keys().collect();
        kept.sort();
        assert_eq!(kept, ["path", "pattern"]);
        assert_eq!(props["pattern"]["description"], "The regular expression.");
        assert_eq!(
            grep.input_schema["required"],
            serde_json::json!(["pattern"])
        );
        // Every form keeps its tool's required parameters.
        for (_, _, keep) in COMPACT_FORMS {
            assert!(!keep.is_empty());
        }
    }

    #[test]
    fn compact_descriptions_keep_one_sentence_and_the_schema_shape() {
        let mut tools = vec![definition(
            "mcp__x__run",
            format!(
                "Runs a command (e.g. `ls`). Every call starts fresh.\n\nUsage notes: {}",
                "x ".repeat(500)
            ),
            serde_json::json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The command. Quote paths."},
                    "mode": {"type": "string", "enum": ["a", "b"]},
                    "list": {"type": "array", "items": {"type": "object", "properties": {
                        "x": {"type": "string", "description": "One x.\nMore about x."}
                    }}}
                },
                "required": ["command"]
            }),
        )];
        compact_descriptions(&mut tools);
        assert_eq!(
            tools[0].description.as_deref(),
            Some("Runs a command (e.g. `ls`).")
        );
        assert_eq!(
            tools[0].input_schema,
            serde_json::json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The command."},
                    "mode": {"type": "string", "enum": ["a", "b"]},
                    "list": {"type": "array", "items": {"type": "object", "properties": {
                        "x": {"type": "string", "description": "One x."}
                    }}}
                },
                "required": ["command"]
            })
        );
        tools[0].description = Some("word ".repeat(100));
        compact_descriptions(&mut tools);
        let d = tools[0].description.clone().unwrap();
        assert!(
            d.chars().count() <= TOOL_LINE + 1 && d.ends_with("word…"),
            "{d}"
        );
    }

    #[test]
    fn the_tools_serialized_ahead_follow_every_change_of_the_tools() {
        let schema = || serde_json::json!({"type": "object"});
        let defs = |names: &[&str]| -> Vec<ToolDefinition> {
            names
                .iter()
                .map(|n| definition(n, format!("{n} does \"things\""), schema()))
                .collect()
        };
        let history = [skiff_protocol::Message::user_text("hi")];
        // The body built with the serialized tools is the body built from the definitions.
        let check = |t: &mut RequestTemplate, names: &[&str]| {
            let sizes: usize = t.tool_bytes().iter().sum();
            let view = t.build(&history, None, 100);
            let sent: Vec<&str> = view.tools.iter().map(|d| d.name.as_str()).collect();
            assert_eq!(sent, names);
            let mut plain = view;
            plain.tools_json = None;
            assert_eq!(view.body_chunks().unwrap(), plain.body_chunks().unwrap());
            let body = String::from_utf8(view.body_chunks().unwrap().concat()).unwrap();
            assert_eq!(body.contains("\"tools\":"), !names.is_empty());
            let commas = names.len().saturating_sub(1);
            let array = if names.is_empty() {
                0
            } else {
                sizes + commas + 2
            };
            assert_eq!(
                t.tools_json.as_ref().map_or(0, |j| j.get().len()),
                array,
                "{body}"
            );
        };
        for caching in [false, true] {
            let mut t = RequestTemplate::new(
                "m".into(),
                100,
                None,
                &["sys".into()],
                defs(&["Bash", "Read"]),
                caching,
            );
            check(&mut t, &["Bash", "Read"]);
            assert!(t.set_loaded(defs(&["NotebookEdit"])));
            check(&mut t, &["Bash", "Read", "NotebookEdit"]);
            assert!(t.set_tools(defs(&["Bash", "Read", "mcp__s__a"])));
            check(&mut t, &["Bash", "Read", "mcp__s__a", "NotebookEdit"]);
            assert!(t.set_extra_system(Some("server says".into())));
            check(&mut t, &["Bash", "Read", "mcp__s__a", "NotebookEdit"]);
            assert!(t.set_loaded(Vec::new()));
            assert!(t.set_tools(Vec::new()));
            check(&mut t, &[]);
        }
    }
}
