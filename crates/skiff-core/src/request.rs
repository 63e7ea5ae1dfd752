//! Building the Messages API request of each turn: system blocks, tools, history, and prompt
//! caching breakpoints (tools, system prompt, last message: at most 4). The request borrows
//! the template and the conversation (nothing is copied per turn); the conversation's
//! serialized prefix spares serializing the whole history again.

use skiff_protocol::{
    CacheControl, Message, MessagesJson, RequestView, SystemBlock, SystemPrompt, ToolDefinition,
};

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
    /// Tool definitions (the last one carries a breakpoint when caching is on).
    pub tools: Vec<ToolDefinition>,
    /// Whether to add cache_control breakpoints.
    pub caching: bool,
    /// Estimated tokens of the system prompt and tools (computed once).
    fixed_tokens: u64,
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
        let mut system: Vec<SystemBlock> = system_parts
            .iter()
            .filter(|p| !p.is_empty())
            .map(|p| SystemBlock {
                text: p.clone(),
                cache_control: None,
            })
            .collect();
        if caching {
            if let Some(last) = system.last_mut() {
                last.cache_control = Some(CacheControl::ephemeral());
            }
            if let Some(last) = tools.last_mut() {
                last.cache_control = Some(CacheControl::ephemeral());
            }
        }
        let mut template = Self {
            model,
            max_tokens,
            temperature,
            system: (!system.is_empty()).then_some(SystemPrompt::Blocks(system)),
            tools,
            caching,
            fixed_tokens: 0,
        };
        template.fixed_tokens =
            crate::tokens::estimate_fixed(template.system_blocks(), &template.tools);
        template
    }

    /// Estimated tokens of the parts every request repeats (system prompt and tools).
    pub fn fixed_tokens(&self) -> u64 {
        self.fixed_tokens
    }

    /// The system prompt's blocks.
    pub fn system_blocks(&self) -> &[SystemBlock] {
        match &self.system {
            Some(SystemPrompt::Blocks(b)) => b,
            _ => &[],
        }
    }

    /// The request for `history` (whose first `prefix.count()` messages are serialized in
    /// `prefix`), with a breakpoint on the last content block when caching.
    pub fn build<'a>(
        &'a self,
        history: &'a [Message],
        prefix: Option<&'a MessagesJson>,
        max_tokens: u32,
    ) -> RequestView<'a> {
        let mut req = RequestView::new(&self.model, max_tokens, history);
        req.system = self.system.as_ref();
        req.tools = &self.tools;
        req.temperature = self.temperature;
        req.cache_last_message = self.caching;
        req.prefix = prefix;
        req
    }
}
