//! Claude's model ids on each cloud, and the mapping from the ids skiff uses everywhere else
//! (`claude-sonnet-4-5`, the `sonnet`/`opus`/`haiku` aliases, dated ids): Bedrock's
//! inference-profile ids (`us.anthropic.claude-sonnet-4-5-20250929-v1:0`, the prefix from the
//! region), Vertex AI's (`claude-sonnet-4-5@20250929`), and Foundry's deployment names (the
//! first-party ids, as Foundry suggests naming deployments). An id that is already the
//! cloud's, or that skiff does not know, is sent as it is.

use super::Cloud;

/// One model on the clouds.
struct Entry {
    /// Its first-party ids (the first is skiff's canonical id, as in the price table).
    names: &'static [&'static str],
    /// Bedrock's foundation-model id (without the region prefix).
    bedrock: &'static str,
    /// Vertex AI's id.
    vertex: &'static str,
    /// Vertex AI's per-model region variables.
    vertex_region_vars: &'static [&'static str],
    /// `sonnet`, `opus` or `haiku`.
    family: &'static str,
}

static MODELS: &[Entry] = &[
    Entry {
        names: &["claude-opus-4-5"],
        bedrock: "anthropic.claude-opus-4-5-20251101-v1:0",
        vertex: "claude-opus-4-5@20251101",
        vertex_region_vars: &[
            "VERTEX_REGION_CLAUDE_OPUS_4_5",
            "VERTEX_REGION_CLAUDE_4_5_OPUS",
        ],
        family: "opus",
    },
    Entry {
        names: &["claude-opus-4-1"],
        bedrock: "anthropic.claude-opus-4-1-20250805-v1:0",
        vertex: "claude-opus-4-1@20250805",
        vertex_region_vars: &[
            "VERTEX_REGION_CLAUDE_4_1_OPUS",
            "VERTEX_REGION_CLAUDE_OPUS_4_1",
        ],
        family: "opus",
    },
    Entry {
        names: &["claude-opus-4-0", "claude-opus-4"],
        bedrock: "anthropic.claude-opus-4-20250514-v1:0",
        vertex: "claude-opus-4@20250514",
        vertex_region_vars: &[
            "VERTEX_REGION_CLAUDE_4_0_OPUS",
            "VERTEX_REGION_CLAUDE_OPUS_4",
        ],
        family: "opus",
    },
    Entry {
        names: &["claude-sonnet-4-5"],
        bedrock: "anthropic.claude-sonnet-4-5-20250929-v1:0",
        vertex: "claude-sonnet-4-5@20250929",
        vertex_region_vars: &[
            "VERTEX_REGION_CLAUDE_SONNET_4_5",
            "VERTEX_REGION_CLAUDE_4_5_SONNET",
        ],
        family: "sonnet",
    },
    Entry {
        names: &["claude-sonnet-4-0", "claude-sonnet-4"],
        bedrock: "anthropic.claude-sonnet-4-20250514-v1:0",
        vertex: "claude-sonnet-4@20250514",
        vertex_region_vars: &[
            "VERTEX_REGION_CLAUDE_4_0_SONNET",
            "VERTEX_REGION_CLAUDE_SONNET_4",
        ],
        family: "sonnet",
    },
    Entry {
        names: &["claude-3-7-sonnet"],
        bedrock: "anthropic.claude-3-7-sonnet-20250219-v1:0",
        vertex: "claude-3-7-sonnet@20250219",
        vertex_region_vars: &["VERTEX_REGION_CLAUDE_3_7_SONNET"],
        family: "sonnet",
    },
    Entry {
        names: &["claude-3-5-sonnet"],
        bedrock: "anthropic.claude-3-5-sonnet-20241022-v2:0",
        vertex: "claude-3-5-sonnet-v2@20241022",
        vertex_region_vars: &["VERTEX_REGION_CLAUDE_3_5_SONNET"],
        family: "sonnet",
    },
    Entry {
        names: &["claude-haiku-4-5"],
        bedrock: "anthropic.claude-haiku-4-5-20251001-v1:0",
        vertex: "claude-haiku-4-5@20251001",
        vertex_region_vars: &[
            "VERTEX_REGION_CLAUDE_HAIKU_4_5",
            "VERTEX_REGION_CLAUDE_4_5_HAIKU",
        ],
        family: "haiku",
    },
    Entry {
        names: &["claude-3-5-haiku"],
        bedrock: "anthropic.claude-3-5-haiku-20241022-v1:0",
        vertex: "claude-3-5-haiku@20241022",
        vertex_region_vars: &["VERTEX_REGION_CLAUDE_3_5_HAIKU"],
        family: "haiku",
    },
    Entry {
        names: &["claude-3-haiku"],
        bedrock: "anthropic.claude-3-haiku-20240307-v1:0",
        vertex: "claude-3-haiku@20240307",
        vertex_region_vars: &["VERTEX_REGION_CLAUDE_3_HAIKU"],
        family: "haiku",
    },
    Entry {
        names: &["claude-3-opus"],
        bedrock: "anthropic.claude-3-opus-20240229-v1:0",
        vertex: "claude-3-opus@20240229",
        vertex_region_vars: &["VERTEX_REGION_CLAUDE_3_OPUS"],
        family: "opus",
    },
];

/// The per-model region variables of Vertex AI (captured with the other variables).
pub(crate) fn vertex_region_vars() -> impl Iterator<Item = &'static str> {
    MODELS
        .iter()
        .flat_map(|e| e.vertex_region_vars.iter().copied())
}

/// The variables that pin what the aliases stand for.
pub(crate) const PIN_VARS: &[&str] = &[
    "ANTHROPIC_DEFAULT_SONNET_MODEL",
    "ANTHROPIC_DEFAULT_OPUS_MODEL",
    "ANTHROPIC_DEFAULT_HAIKU_MODEL",
];

/// A first-party id without its date or `-latest` suffix, lowercased.
fn undated(model: &str) -> String {
    let m = model.trim().to_ascii_lowercase();
    if let Some(rest) = m.strip_suffix("-latest") {
        return rest.to_owned();
    }
    match m.rsplit_once('-') {
        Some((head, date)) if date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit()) => {
            head.to_owned()
        }
        _ => m,
    }
}

/// The entry of a first-party id, or of a cloud id.
fn entry(model: &str) -> Option<&'static Entry> {
    let m = model.trim();
    let bare = undated(m);
    MODELS.iter().find(|e| {
        e.names.contains(&bare.as_str())
            || e.vertex == m
            || m.strip_suffix(e.bedrock)
                .is_some_and(|prefix| prefix.is_empty() || prefix.ends_with('.'))
    })
}

/// Bedrock's cross-region inference-profile prefix for a region.
pub(crate) fn bedrock_prefix(region: &str) -> &'static str {
    if region.starts_with("us-gov-") {
        "us-gov."
    } else if region.starts_with("us-") || region.starts_with("ca-") {
        "us."
    } else if region.starts_with("eu-") {
        "eu."
    } else if region.starts_with("ap-") {
        "apac."
    } else {
        "global."
    }
}

/// How one cloud names models.
#[derive(Debug, Clone)]
pub(crate) struct ModelMap {
    cloud: Cloud,
    /// Bedrock's region prefix.
    prefix: &'static str,
    /// ANTHROPIC_DEFAULT_{SONNET,OPUS,HAIKU}_MODEL.
    pins: Vec<(&'static str, String)>,
}

impl ModelMap {
    /// The mapping of `cloud` (`region`: Bedrock's), with the aliases' pins.
    pub(crate) fn new(cloud: Cloud, region: &str, pins: Vec<(&'static str, String)>) -> Self {
        Self {
            cloud,
            prefix: bedrock_prefix(region),
            pins,
        }
    }

    /// The cloud's id for `model`.
    pub(crate) fn map(&self, model: &str) -> String {
        let m = model.trim();
        let Some(e) = entry(m) else {
            return m.to_owned();
        };
        if !e.names.contains(&undated(m).as_str()) {
            // Already the cloud's id.
            return m.to_owned();
        }
        // The alias's model, pinned (`ANTHROPIC_DEFAULT_SONNET_MODEL`).
        if crate::resolve_alias(e.family) == e.names[0]
            && let Some((_, pin)) = self.pins.iter().find(|(f, _)| *f == e.family)
        {
            return pin.clone();
        }
        match self.cloud {
            Cloud::Bedrock => format!("{}{}", self.prefix, e.bedrock),
            Cloud::Vertex => e.vertex.to_owned(),
            Cloud::Foundry => e.names[0].to_owned(),
        }
    }

    /// The default model (Sonnet 4.5, as Claude Code's).
    pub(crate) fn default_model(&self) -> String {
        self.map(&crate::resolve_alias("sonnet"))
    }

    /// The default small, fast model (Haiku 4.5).
    pub(crate) fn default_small_model(&self) -> String {
        self.map(&crate::resolve_alias("haiku"))
    }
}

/// The region variables of a model on Vertex AI (`VERTEX_REGION_CLAUDE_…`).
pub(crate) fn vertex_region_vars_of(model: &str) -> &'static [&'static str] {
    entry(model).map_or(&[], |e| e.vertex_region_vars)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_party_ids_map_to_each_cloud() {
        let b = ModelMap::new(Cloud::Bedrock, "us-east-1", vec![]);
        assert_eq!(
            b.default_model(),
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
        );
        assert_eq!(
            b.default_small_model(),
            "us.anthropic.claude-haiku-4-5-20251001-v1:0"
        );
        assert_eq!(
            b.map("claude-opus-4-1-20250805"),
            "us.anthropic.claude-opus-4-1-20250805-v1:0"
        );
        assert_eq!(
            b.map("claude-3-5-haiku-latest"),
            "us.anthropic.claude-3-5-haiku-20241022-v1:0"
        );
        let eu = ModelMap::new(Cloud::Bedrock, "eu-central-1", vec![]);
        assert_eq!(
            eu.map("claude-sonnet-4-20250514"),
            "eu.anthropic.claude-sonnet-4-20250514-v1:0"
        );
        assert_eq!(bedrock_prefix("ap-northeast-1"), "apac.");
        assert_eq!(bedrock_prefix("us-gov-west-1"), "us-gov.");
        let v = ModelMap::new(Cloud::Vertex, "", vec![]);
        assert_eq!(v.default_model(), "claude-sonnet-4-5@20250929");
        assert_eq!(
            v.map("claude-3-5-sonnet-20241022"),
            "claude-3-5-sonnet-v2@20241022"
        );
        let f = ModelMap::new(Cloud::Foundry, "", vec![]);
        assert_eq!(f.default_model(), "claude-sonnet-4-5");
        assert_eq!(f.map("claude-haiku-4-5-20251001"), "claude-haiku-4-5");
    }

    #[test]
    fn cloud_ids_and_unknown_names_pass_through() {
        let b = ModelMap::new(Cloud::Bedrock, "us-east-1", vec![]);
        for id in [
            "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
            "anthropic.claude-3-haiku-20240307-v1:0",
            "arn:aws:bedrock:us-east-1:123:application-inference-profile/abc",
            "claude-sonnet-4-6",
            "my-deployment",
        ] {
            assert_eq!(b.map(id), id);
        }
        let v = ModelMap::new(Cloud::Vertex, "", vec![]);
        assert_eq!(
            v.map("claude-opus-4-1@20250805"),
            "claude-opus-4-1@20250805"
        );
        assert_eq!(
            vertex_region_vars_of("claude-opus-4-1@20250805"),
            &[
                "VERTEX_REGION_CLAUDE_4_1_OPUS",
                "VERTEX_REGION_CLAUDE_OPUS_4_1"
            ]
        );
    }

    #[test]
    fn pins_replace_the_aliases_models_only() {
        let b = ModelMap::new(
            Cloud::Bedrock,
            "us-east-1",
            vec![(
                "haiku",
                "arn:aws:bedrock:us-east-1:1:application-inference-profile/h".to_owned(),
            )],
        );
        assert_eq!(
            b.default_small_model(),
            "arn:aws:bedrock:us-east-1:1:application-inference-profile/h"
        );
        assert_eq!(
            b.map("claude-3-5-haiku"),
            "us.anthropic.claude-3-5-haiku-20241022-v1:0"
        );
    }
}
