//! Token and cost accounting: usage per turn and per model, cost at the user's prices
//! (`skiff.pricing`), else the server's, else the model price table's; unknown prices count
//! as $0 (the caller warns once per model).

use std::collections::BTreeMap;

use skiff_protocol::Usage;
use skiff_protocol::sdk::ModelUsage;

/// Running totals for a session.
#[derive(Debug, Clone, Default)]
pub struct CostTracker {
    /// Cost of the whole session so far.
    pub total_cost_usd: f64,
    /// Usage per model over the whole session.
    pub per_model: BTreeMap<String, ModelUsage>,
    /// Usage of the whole session.
    pub total_usage: Usage,
    /// Models without a known price (warned about once).
    unknown_models: Vec<String>,
    /// Prices the user gave for the session's model (`skiff.pricing`), over the table's.
    price: Option<skiff_llm::ModelInfo>,
}

impl CostTracker {
    /// A tracker pricing every call at `price` when given (the table's prices otherwise).
    pub fn with_price(price: Option<skiff_llm::ModelInfo>) -> Self {
        Self {
            price,
            ..Self::default()
        }
    }

    /// Add one model call; `served` is what the server says about the model
    /// ([`skiff_llm::Provider::served_model`]). Returns its cost, and whether the model's price
    /// is unknown and this is the first time we see it (the caller warns once).
    pub fn add(
        &mut self,
        model: &str,
        usage: &Usage,
        served: Option<&skiff_llm::ServedModel>,
    ) -> (f64, bool) {
        let server_price = served.and_then(skiff_llm::ServedModel::price);
        let priced = match self.price.as_ref().or(server_price.as_ref()) {
            Some(p) => Some(skiff_llm::cost_at(p, usage)),
            None => skiff_llm::cost_usd(model, usage),
        };
        let (cost, first_unknown) = match priced {
            Some(c) => (c, false),
            None => {
                let first = !self.unknown_models.iter().any(|m| m == model);
                if first {
                    self.unknown_models.push(model.to_owned());
                }
                (0.0, first)
            }
        };
        self.total_cost_usd += cost;
        self.total_usage.accumulate(usage);
        let info = skiff_llm::model_info(model);
        let entry = self.per_model.entry(model.to_owned()).or_default();
        entry.input_tokens += usage.input_tokens;
        entry.output_tokens += usage.output_tokens;
        entry.cache_read_input_tokens += usage.cache_read();
        entry.cache_creation_input_tokens += usage.cache_creation();
        entry.web_search_requests += usage.web_search_requests();
        entry.cost_usd += cost;
        entry.context_window = served.and_then(|s| s.context_window).unwrap_or_else(|| {
            info.map_or(skiff_llm::DEFAULT_CONTEXT_WINDOW, |i| i.context_window)
        });
        entry.max_output_tokens = served
            .and_then(|s| s.max_output_tokens)
            .unwrap_or_else(|| info.map_or(0, |i| i.max_output_tokens));
        (cost, first_unknown)
    }
}

impl CostTracker {
    /// Add another tracker's totals (a subagent's) to this one.
    pub fn merge(&mut self, other: &CostTracker) {
        self.total_cost_usd += other.total_cost_usd;
        self.total_usage.accumulate(&other.total_usage);
        for (model, usage) in &other.per_model {
            let entry = self.per_model.entry(model.clone()).or_default();
            entry.input_tokens += usage.input_tokens;
            entry.output_tokens += usage.output_tokens;
            entry.cache_read_input_tokens += usage.cache_read_input_tokens;
            entry.cache_creation_input_tokens += usage.cache_creation_input_tokens;
            entry.web_search_requests += usage.web_search_requests;
            entry.cost_usd += usage.cost_usd;
            entry.context_window = usage.context_window;
            entry.max_output_tokens = usage.max_output_tokens;
        }
        for model in &other.unknown_models {
            if !self.unknown_models.contains(model) {
                self.unknown_models.push(model.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, output: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            ..Usage::default()
        }
    }

    #[test]
    fn unknown_models_are_free_with_one_warning_unless_priced() {
        let mut t = CostTracker::default();
        assert_eq!(
            t.add("qwen2.5-coder:7b", &usage(1_000_000, 0), None),
            (0.0, true)
        );
        assert_eq!(
            t.add("qwen2.5-coder:7b", &usage(1_000_000, 0), None),
            (0.0, false)
        );
        let mut t = CostTracker::with_price(Some(skiff_llm::custom_price(0.5, 2.0, None)));
        let (cost, unknown) = t.add("qwen/qwen-2.5-coder-32b", &usage(1_000_000, 500_000), None);
        assert!((cost - 1.5).abs() < 1e-9, "{cost}");
        assert!(!unknown);
        assert!((t.total_cost_usd - 1.5).abs() < 1e-9);
    }

    #[test]
    fn the_servers_prices_and_sizes_count_unless_the_user_priced_the_model() {
        let served = skiff_llm::ServedModel {
            context_window: Some(32_768),
            max_output_tokens: Some(16_384),
            input_per_mtok: Some(0.07),
            output_per_mtok: Some(0.16),
            ..Default::default()
        };
        let model = "qwen/qwen-2.5-coder-32b-instruct";
        let mut t = CostTracker::default();
        let (cost, unknown) = t.add(model, &usage(1_000_000, 1_000_000), Some(&served));
        assert!((cost - 0.23).abs() < 1e-9, "{cost}");
        assert!(!unknown);
        assert_eq!(t.per_model[model].context_window, 32_768);
        assert_eq!(t.per_model[model].max_output_tokens, 16_384);
        // The user's prices go over the server's.
        let mut t = CostTracker::with_price(Some(skiff_llm::custom_price(1.0, 1.0, None)));
        let (cost, _) = t.add(model, &usage(1_000_000, 1_000_000), Some(&served));
        assert!((cost - 2.0).abs() < 1e-9, "{cost}");
        // A server that gives only sizes leaves the price unknown.
        let sizes = skiff_llm::ServedModel {
            context_window: Some(8_192),
            ..Default::default()
        };
        let mut t = CostTracker::default();
        assert_eq!(t.add(model, &usage(10, 10), Some(&sizes)), (0.0, true));
    }
}
