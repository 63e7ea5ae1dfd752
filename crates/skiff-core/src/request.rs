//! Building the Messages API request of each turn: system blocks, tools, history, and prompt
//! caching breakpoints (tools, system prompt, last message: at most 4).

use skiff_protocol::{
    CacheControl, ContentBlock, Message, MessageContent, MessagesRequest, SystemBlock,
    SystemPrompt, ToolDefinition,
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
    /// System prompt blocks (already carrying their breakpoint when caching is on).
    pub system: Vec<SystemBlock>,
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
            system,
            tools,
            caching,
            fixed_tokens: 0,
        };
        template.fixed_tokens = crate::tokens::estimate_fixed(&template);
        template
    }

    /// Estimated tokens of the parts every request repeats (system prompt and tools).
    pub fn fixed_tokens(&self) -> u64 {
        self.fixed_tokens
    }

    /// The request for `history`, with a breakpoint on the last content block when caching.
    pub fn build(&self, history: &[Message], max_tokens: u32) -> MessagesRequest {
        let mut messages = history.to_vec();
        if self.caching {
            if let Some(last) = messages.last_mut() {
                mark_last_block(last);
            }
        }
        let mut req = MessagesRequest::new(self.model.clone(), max_tokens, messages);
        req.system = (!self.system.is_empty()).then(|| SystemPrompt::Blocks(self.system.clone()));
        req.tools = self.tools.clone();
        req.temperature = self.temperature;
        req.stream = true;
        req
    }
}

fn mark_last_block(msg: &mut Message) {
    if let MessageContent::Text(t) = &msg.content {
        msg.content = MessageContent::Blocks(vec![ContentBlock::text(t.clone())]);
    }
    if let MessageContent::Blocks(blocks) = &mut msg.content {
        if let Some(slot) = blocks
            .iter_mut()
            .rev()
            .find_map(ContentBlock::cache_control_mut)
        {
            *slot = Some(CacheControl::ephemeral());
        }
    }
}
