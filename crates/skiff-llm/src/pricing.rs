//! Model prices and context sizes: the list-price table (USD per million tokens), model-id
//! matching (dated ids, `-latest`, provider prefixes, the `sonnet`/`opus`/`haiku` aliases) and
//! the cost of one call's usage.

use skiff_protocol::Usage;

/// Context window assumed for models not in the table.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 200_000;

/// Prices and limits of one model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelInfo {
    /// Canonical id (the undated alias, e.g. `claude-sonnet-4-5`).
    pub id: &'static str,
    /// USD per million uncached input tokens.
    pub input_per_mtok: f64,
    /// USD per million output tokens.
    pub output_per_mtok: f64,
    /// USD per million tokens written to the prompt cache with the default 5-minute TTL (1.25× input).
    pub cache_write_per_mtok: f64,
    /// USD per million tokens read from the prompt cache (0.1× input).
    pub cache_read_per_mtok: f64,
    /// Context window in tokens.
    pub context_window: u64,
    /// Largest `max_tokens` the model accepts.
    pub max_output_tokens: u64,
}

/// A model family: opus, sonnet or haiku.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Family {
    Opus,
    Sonnet,
    Haiku,
}

/// One row of the table: the family and version it matches, and what it costs.
struct Entry {
    family: Family,
    /// (major, minor); `claude-opus-4` is (4, 0).
    version: (u32, u32),
    info: ModelInfo,
}

const fn info(id: &'static str, input: f64, output: f64, max_output_tokens: u64) -> ModelInfo {
    ModelInfo {
        id,
        input_per_mtok: input,
        output_per_mtok: output,
        cache_write_per_mtok: input * 1.25,
        cache_read_per_mtok: input * 0.1,
        context_window: DEFAULT_CONTEXT_WINDOW,
        max_output_tokens,
    }
}

/// The model name of scripted runs (`--provider script`): free, Sonnet's limits.
pub const SCRIPTED_MODEL: &str = "scripted";

static SCRIPTED: ModelInfo = info(SCRIPTED_MODEL, 0.0, 0.0, 64_000);

/// List prices as published by Anthropic (standard tier, prompts up to 200K tokens).
static TABLE: &[Entry] = &[
    Entry {
        family: Family::Opus,
        version: (4, 5),
        info: info("claude-opus-4-5", 5.0, 25.0, 64_000),
    },
    Entry {
        family: Family::Opus,
        version: (4, 1),
        info: info("claude-opus-4-1", 15.0, 75.0, 32_000),
    },
    Entry {
        family: Family::Opus,
        version: (4, 0),
        info: info("claude-opus-4-0", 15.0, 75.0, 32_000),
    },
    Entry {
        family: Family::Opus,
        version: (3, 0),
        info: info("claude-3-opus", 15.0, 75.0, 4_096),
    },
    Entry {
        family: Family::Sonnet,
        version: (4, 5),
        info: info("claude-sonnet-4-5", 3.0, 15.0, 64_000),
    },
    Entry {
        family: Family::Sonnet,
        version: (4, 0),
        info: info("claude-sonnet-4-0", 3.0, 15.0, 64_000),
    },
    Entry {
        family: Family::Sonnet,
        version: (3, 7),
        info: info("claude-3-7-sonnet", 3.0, 15.0, 64_000),
    },
    Entry {
        family: Family::Sonnet,
        version: (3, 5),
        info: info("claude-3-5-sonnet", 3.0, 15.0, 8_192),
    },
    Entry {
        family: Family::Haiku,
        version: (4, 5),
        info: info("claude-haiku-4-5", 1.0, 5.0, 64_000),
    },
    Entry {
        family: Family::Haiku,
        version: (3, 5),
        info: info("claude-3-5-haiku", 0.80, 4.0, 8_192),
    },
    Entry {
        family: Family::Haiku,
        version: (3, 0),
        info: info("claude-3-haiku", 0.25, 1.25, 4_096),
    },
];

/// The model an alias stands for: `sonnet` → `claude-sonnet-4-5`, `opus` → `claude-opus-4-5`,
/// `haiku` → `claude-haiku-4-5` (case-insensitive); anything else is returned unchanged.
pub fn resolve_alias(model: &str) -> String {
    match model.trim().to_ascii_lowercase().as_str() {
        "sonnet" => "claude-sonnet-4-5".to_owned(),
        "opus" => "claude-opus-4-5".to_owned(),
        "haiku" => "claude-haiku-4-5".to_owned(),
        _ => model.to_owned(),
    }
}

/// The models of the price table, newest first within each family.
pub fn known_models() -> impl Iterator<Item = &'static ModelInfo> {
    TABLE.iter().map(|e| &e.info)
}

/// Prices and limits of `model`, matched by family and version so dated ids
/// (`claude-sonnet-4-5-20250929`), `-latest` ids, cloud ids (`anthropic.claude-…-v1:0`,
/// `claude-…@20250929`) and aliases all resolve. A newer version of a known family than any in
/// the table is priced like the newest known one (so budgets never count it as free); an
/// unknown model is `None`.
pub fn model_info(model: &str) -> Option<&'static ModelInfo> {
    if model == SCRIPTED_MODEL {
        return Some(&SCRIPTED);
    }
    let (family, version) = parse(&resolve_alias(model))?;
    if let Some(e) = TABLE
        .iter()
        .find(|e| e.family == family && e.version == version)
    {
        return Some(&e.info);
    }
    let newest = TABLE
        .iter()
        .filter(|e| e.family == family)
        .max_by_key(|e| e.version)?;
    (version > newest.version).then_some(&newest.info)
}

/// Prices given by the user (`skiff.pricing`) for a model the table does not know: cache
/// reads at 0.1× and writes at 1.25× input unless given.
pub fn custom_price(
    input_per_mtok: f64,
    output_per_mtok: f64,
    cache_read_per_mtok: Option<f64>,
) -> ModelInfo {
    let mut m = info("custom", input_per_mtok, output_per_mtok, 64_000);
    if let Some(r) = cache_read_per_mtok {
        m.cache_read_per_mtok = r;
    }
    m
}

/// What a server says about one of its models (an OpenAI-compatible server's model list,
/// llama.cpp's `/props`, Ollama's `/api/show`, …); each figure only when it says.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ServedModel {
    /// Context window in tokens.
    pub context_window: Option<u64>,
    /// Largest `max_tokens` it accepts.
    pub max_output_tokens: Option<u64>,
    /// USD per million input tokens.
    pub input_per_mtok: Option<f64>,
    /// USD per million output tokens.
    pub output_per_mtok: Option<f64>,
    /// USD per million tokens read from the prompt cache.
    pub cache_read_per_mtok: Option<f64>,
    /// USD per million tokens written to the prompt cache.
    pub cache_write_per_mtok: Option<f64>,
}

impl ServedModel {
    /// Whether the server said nothing.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// Its prices, when the server gives both the input and the output price (cache prices
    /// default as in [`custom_price`]).
    pub fn price(&self) -> Option<ModelInfo> {
        let mut m = custom_price(self.input_per_mtok?, self.output_per_mtok?, None);
        m.id = "server";
        if let Some(r) = self.cache_read_per_mtok {
            m.cache_read_per_mtok = r;
        }
        if let Some(w) = self.cache_write_per_mtok {
            m.cache_write_per_mtok = w;
        }
        if let Some(w) = self.context_window {
            m.context_window = w;
        }
        if let Some(o) = self.max_output_tokens {
            m.max_output_tokens = o;
        }
        Some(m)
    }

    /// Each figure from `self`, else from `other`.
    pub fn or(self, other: Self) -> Self {
        Self {
            context_window: self.context_window.or(other.context_window),
            max_output_tokens: self.max_output_tokens.or(other.max_output_tokens),
            input_per_mtok: self.input_per_mtok.or(other.input_per_mtok),
            output_per_mtok: self.output_per_mtok.or(other.output_per_mtok),
            cache_read_per_mtok: self.cache_read_per_mtok.or(other.cache_read_per_mtok),
            cache_write_per_mtok: self.cache_write_per_mtok.or(other.cache_write_per_mtok),
        }
    }
}

/// Cost in USD of one call's usage: uncached input, output, cache writes (1-hour writes, when
/// the usage breaks them out, at 2× input) and cache reads. `None` when the model is unknown.
pub fn cost_usd(model: &str, usage: &Usage) -> Option<f64> {
    model_info(model).map(|m| cost_at(m, usage))
}

/// Price of one server-side web search in USD (Anthropic: $10 per 1,000 searches).
pub const WEB_SEARCH_USD: f64 = 0.01;

/// Cost in USD of one call's usage at `m`'s prices, its web searches included.
pub fn cost_at(m: &ModelInfo, usage: &Usage) -> f64 {
    let writes = usage.cache_creation();
    let writes_1h = usage
        .extra
        .get("cache_creation")
        .and_then(|c| c.get("ephemeral_1h_input_tokens"))
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0)
        .min(writes);
    let per_tok = |n: u64, price: f64| n as f64 * price / 1_000_000.0;
    per_tok(usage.input_tokens, m.input_per_mtok)
        + per_tok(usage.output_tokens, m.output_per_mtok)
        + per_tok(writes - writes_1h, m.cache_write_per_mtok)
        + per_tok(writes_1h, m.input_per_mtok * 2.0)
        + per_tok(usage.cache_read(), m.cache_read_per_mtok)
        + usage.web_search_requests() as f64 * WEB_SEARCH_USD
}

/// Family and (major, minor) version of a Claude model id, in either naming scheme:
/// `claude-sonnet-4-5[-20250929]` or `claude-3-5-sonnet[-20241022|-latest]`.
pub(crate) fn parse(model: &str) -> Option<(Family, (u32, u32))> {
    let lower = model.trim().to_ascii_lowercase();
    // Cloud ids: `anthropic.claude-…` / `us.anthropic.claude-…` (Bedrock), `claude-…@date` (Vertex).
    let start = lower.find("claude-")?;
    let id = lower[start + "claude-".len()..].split('@').next()?;
    let mut family = None;
    let mut numbers = Vec::new();
    for part in id.split('-') {
        match part {
            "opus" => family = Some(Family::Opus),
            "sonnet" => family = Some(Family::Sonnet),
            "haiku" => family = Some(Family::Haiku),
            // A date, `latest`, `v1:0` or anything after the version ends it.
            p if p.len() <= 2 && !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => {
                numbers.push(p.parse::<u32>().ok()?);
            }
            _ if family.is_some() || !numbers.is_empty() => break,
            _ => return None,
        }
        if family.is_some() && numbers.len() >= 2 {
            break;
        }
    }
    let family = family?;
    let major = *numbers.first()?;
    let minor = numbers.get(1).copied().unwrap_or(0);
    Some((family, (major, minor)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use skiff_protocol::JsonMap;

    fn usage(input: u64, output: u64, write: u64, read: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            cache_creation_input_tokens: Some(write),
            cache_read_input_tokens: Some(read),
            extra: JsonMap::new(),
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn costs_add_input_output_cache_writes_and_reads() {
        // 1M of each at Sonnet 4.5: 3 + 15 + 3.75 + 0.30.
        let u = usage(1_000_000, 1_000_000, 1_000_000, 1_000_000);
        let c = cost_usd("claude-sonnet-4-5", &u).unwrap();
        assert!(close(c, 22.05), "{c}");
        // A realistic turn at Opus 4.1: 1200 in, 80 out, 500 written, 10_000 read.
        let u = usage(1_200, 80, 500, 10_000);
        let c = cost_usd("claude-opus-4-1", &u).unwrap();
        let want = (1_200.0 * 15.0 + 80.0 * 75.0 + 500.0 * 18.75 + 10_000.0 * 1.5) / 1e6;
        assert!(close(c, want), "{c} vs {want}");
        // Haiku 3.5 and Opus 4.5.
        let u = usage(1_000_000, 1_000_000, 0, 0);
        assert!(close(cost_usd("claude-3-5-haiku-latest", &u).unwrap(), 4.8));
        assert!(close(cost_usd("claude-opus-4-5", &u).unwrap(), 30.0));
        assert!(close(cost_usd("claude-haiku-4-5", &u).unwrap(), 6.0));
        // Absent cache fields count as zero.
        let mut u = usage(1_000, 0, 0, 0);
        u.cache_creation_input_tokens = None;
        u.cache_read_input_tokens = None;
        assert!(close(cost_usd("sonnet", &u).unwrap(), 0.003));
    }

    #[test]
    fn one_hour_cache_writes_cost_twice_the_input_price() {
        let mut u = usage(0, 0, 1_000_000, 0);
        u.extra.insert(
            "cache_creation".into(),
            serde_json::json!({"ephemeral_5m_input_tokens": 600_000, "ephemeral_1h_input_tokens": 400_000}),
        );
        let c = cost_usd("claude-sonnet-4-5", &u).unwrap();
        assert!(close(c, 0.6 * 3.75 + 0.4 * 6.0), "{c}");
    }

    #[test]
    fn web_searches_cost_a_cent_each() {
        let mut u = usage(1_000, 0, 0, 0);
        u.extra.insert(
            "server_tool_use".into(),
            serde_json::json!({"web_search_requests": 3}),
        );
        let c = cost_usd("claude-sonnet-4-5", &u).unwrap();
        assert!(close(c, 0.003 + 0.03), "{c}");
    }

    #[test]
    fn dated_latest_and_cloud_ids_resolve() {
        let id = |m: &str| model_info(m).map(|i| i.id);
        assert_eq!(id("claude-sonnet-4-5-20250929"), Some("claude-sonnet-4-5"));
        assert_eq!(id("claude-sonnet-4-20250514"), Some("claude-sonnet-4-0"));
        assert_eq!(id("claude-sonnet-4-0"), Some("claude-sonnet-4-0"));
        assert_eq!(id("claude-opus-4-20250514"), Some("claude-opus-4-0"));
        assert_eq!(id("claude-opus-4-1-20250805"), Some("claude-opus-4-1"));
        assert_eq!(id("claude-opus-4-5-20251101"), Some("claude-opus-4-5"));
        assert_eq!(id("claude-haiku-4-5-20251001"), Some("claude-haiku-4-5"));
        assert_eq!(id("claude-3-7-sonnet-20250219"), Some("claude-3-7-sonnet"));
        assert_eq!(id("claude-3-7-sonnet-latest"), Some("claude-3-7-sonnet"));
        assert_eq!(id("claude-3-5-haiku-20241022"), Some("claude-3-5-haiku"));
        assert_eq!(id("claude-3-haiku-20240307"), Some("claude-3-haiku"));
        assert_eq!(
            id("us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
            Some("claude-sonnet-4-5")
        );
        assert_eq!(id("claude-opus-4-1@20250805"), Some("claude-opus-4-1"));
        // Every cloud's default ids cost what the same Claude model costs.
        assert_eq!(
            id("eu.anthropic.claude-haiku-4-5-20251001-v1:0"),
            Some("claude-haiku-4-5")
        );
        assert_eq!(
            id("apac.anthropic.claude-3-5-sonnet-20241022-v2:0"),
            Some("claude-3-5-sonnet")
        );
        assert_eq!(
            id("claude-3-5-sonnet-v2@20241022"),
            Some("claude-3-5-sonnet")
        );
        assert_eq!(id("claude-sonnet-4@20250514"), Some("claude-sonnet-4-0"));
        assert_eq!(id("Claude-Sonnet-4-5"), Some("claude-sonnet-4-5"));
    }

    #[test]
    fn limits_per_model() {
        let m = model_info("claude-sonnet-4-5").unwrap();
        assert_eq!((m.context_window, m.max_output_tokens), (200_000, 64_000));
        assert_eq!(
            model_info("claude-opus-4-1").unwrap().max_output_tokens,
            32_000
        );
        assert_eq!(
            model_info("claude-opus-4-0").unwrap().max_output_tokens,
            32_000
        );
        assert_eq!(model_info("opus").unwrap().max_output_tokens, 64_000);
        assert_eq!(model_info("haiku").unwrap().max_output_tokens, 64_000);
        let m = model_info("claude-opus-4-5").unwrap();
        assert!(close(m.cache_write_per_mtok, 6.25) && close(m.cache_read_per_mtok, 0.5));
    }

    #[test]
    fn aliases_resolve_to_the_current_default_of_the_family() {
        assert_eq!(resolve_alias("sonnet"), "claude-sonnet-4-5");
        assert_eq!(resolve_alias("opus"), "claude-opus-4-5");
        assert_eq!(resolve_alias("Haiku"), "claude-haiku-4-5");
        assert_eq!(
            resolve_alias("claude-3-7-sonnet-latest"),
            "claude-3-7-sonnet-latest"
        );
        assert_eq!(resolve_alias("gpt-4o"), "gpt-4o");
        assert_eq!(model_info("sonnet").unwrap().id, "claude-sonnet-4-5");
        assert_eq!(model_info("opus").unwrap().id, "claude-opus-4-5");
        assert_eq!(model_info("haiku").unwrap().id, "claude-haiku-4-5");
    }

    #[test]
    fn newer_versions_of_a_family_take_the_newest_known_price() {
        let m = model_info("claude-opus-4-6").unwrap();
        assert_eq!(m.id, "claude-opus-4-5");
        assert!(close(m.input_per_mtok, 5.0) && close(m.output_per_mtok, 25.0));
        assert_eq!(
            model_info("claude-sonnet-5-20260101").unwrap().id,
            "claude-sonnet-4-5"
        );
        // An older unlisted version is unknown rather than guessed.
        assert!(model_info("claude-2-1").is_none());
        assert!(model_info("claude-instant-1-2").is_none());
    }

    #[test]
    fn unknown_models_have_no_price() {
        let u = usage(1_000, 1_000, 0, 0);
        for m in [
            "gpt-4o",
            "mock-model",
            "",
            "claude",
            "claude-",
            "sonnet-ish",
        ] {
            assert!(model_info(m).is_none(), "{m}");
            assert!(cost_usd(m, &u).is_none(), "{m}");
        }
    }
}
