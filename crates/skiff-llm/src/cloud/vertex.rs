//! Google Vertex AI: `POST {endpoint}/projects/{project}/locations/{region}/publishers/
//! anthropic/models/{model}:streamRawPredict`, the endpoint from the region (`global`, the
//! `us`/`eu` multi-regions, or a region such as `us-east5`; CLOUD_ML_REGION, a model's own
//! `VERTEX_REGION_CLAUDE_…`) or ANTHROPIC_VERTEX_BASE_URL, authenticated with an access token
//! from Application Default Credentials (or nothing: CLAUDE_CODE_SKIP_VERTEX_AUTH). The body
//! carries `anthropic_version: "vertex-2023-10-16"`, without `model`.

use std::collections::HashMap;

use super::base_url_var;
use super::gcp_credentials::{self, Adc};
use super::models::{vertex_region_vars, vertex_region_vars_of};
use super::vars::Vars;
use crate::anthropic::ConfigError;

/// The body's `anthropic_version` on Vertex AI.
pub(crate) const VERSION: &str = "vertex-2023-10-16";
/// Claude Code's region when none is set.
const DEFAULT_REGION: &str = "us-east5";

/// How requests authenticate.
#[derive(Debug, Clone)]
pub(crate) enum VertexAuth {
    /// Access tokens from ADC.
    Adc(Box<Adc>),
    /// No authentication (CLAUDE_CODE_SKIP_VERTEX_AUTH).
    Skip,
}

impl VertexAuth {
    /// The credential source, for people.
    pub(crate) fn describe(&self) -> String {
        match self {
            Self::Adc(adc) => adc.source.describe(),
            Self::Skip => "none (CLAUDE_CODE_SKIP_VERTEX_AUTH)".to_owned(),
        }
    }

    /// The variables holding the credential itself (ADC lives in files).
    pub(crate) fn credential_vars(&self) -> Vec<&'static str> {
        Vec::new()
    }
}

/// Vertex AI's settings.
#[derive(Debug, Clone)]
pub(crate) struct VertexConfig {
    /// Authentication.
    pub auth: VertexAuth,
    /// The GCP project.
    pub project: String,
    /// The region (CLOUD_ML_REGION, else us-east5).
    pub region: String,
    /// Where it came from.
    pub region_origin: String,
    /// Per-model regions that are set (`VERTEX_REGION_CLAUDE_…`).
    pub model_regions: HashMap<&'static str, String>,
    /// ANTHROPIC_VERTEX_BASE_URL.
    pub base_url: Option<String>,
}

impl VertexConfig {
    /// From variables.
    pub(crate) fn from_vars(vars: &Vars) -> Result<Self, ConfigError> {
        let base_url = base_url_var(vars, "ANTHROPIC_VERTEX_BASE_URL")?;
        let auth = if vars.flag("CLAUDE_CODE_SKIP_VERTEX_AUTH") {
            VertexAuth::Skip
        } else {
            VertexAuth::Adc(Box::new(gcp_credentials::resolve(vars).map_err(
                |message| ConfigError::Invalid {
                    name: "Google credentials for Vertex AI".into(),
                    message,
                },
            )?))
        };
        let file_project = match &auth {
            VertexAuth::Adc(adc) => adc.file_project.clone(),
            VertexAuth::Skip => None,
        };
        let project = vars
            .get("ANTHROPIC_VERTEX_PROJECT_ID")
            .or_else(|| vars.get("GOOGLE_CLOUD_PROJECT"))
            .or_else(|| vars.get("GCLOUD_PROJECT"))
            .map(str::to_owned)
            .or(file_project)
            .ok_or_else(|| ConfigError::Invalid {
                name: "ANTHROPIC_VERTEX_PROJECT_ID".into(),
                message: "Vertex AI needs the GCP project: set ANTHROPIC_VERTEX_PROJECT_ID \
                          (for example `export ANTHROPIC_VERTEX_PROJECT_ID=my-project`)"
                    .into(),
            })?;
        let (region, region_origin) = match vars.get("CLOUD_ML_REGION") {
            Some(r) => (r.to_owned(), "CLOUD_ML_REGION".to_owned()),
            None => (DEFAULT_REGION.to_owned(), "default".to_owned()),
        };
        let model_regions = vertex_region_vars()
            .filter_map(|n| vars.get(n).map(|r| (n, r.to_owned())))
            .collect();
        Ok(Self {
            auth,
            project,
            region,
            region_origin,
            model_regions,
            base_url,
        })
    }

    /// The region of `model`: its `VERTEX_REGION_CLAUDE_…`, else CLOUD_ML_REGION.
    pub(crate) fn region_of(&self, model: &str) -> &str {
        vertex_region_vars_of(model)
            .iter()
            .find_map(|n| self.model_regions.get(n))
            .map_or(self.region.as_str(), String::as_str)
    }

    /// The endpoint (with `/v1`) for a region.
    pub(crate) fn endpoint(&self, region: &str) -> String {
        if let Some(b) = &self.base_url {
            return b.clone();
        }
        match region {
            "global" => "https://aiplatform.googleapis.com/v1".to_owned(),
            "us" | "eu" => format!("https://aiplatform.{region}.rep.googleapis.com/v1"),
            r => format!("https://{r}-aiplatform.googleapis.com/v1"),
        }
    }

    /// The streaming URL of `model`.
    pub(crate) fn url(&self, model: &str) -> String {
        let region = self.region_of(model);
        format!(
            "{}/projects/{}/locations/{region}/publishers/anthropic/models/{model}:streamRawPredict",
            self.endpoint(region),
            self.project
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_projects_and_endpoints() {
        let v = Vars::from_pairs(&[
            ("CLAUDE_CODE_SKIP_VERTEX_AUTH", "1"),
            ("ANTHROPIC_VERTEX_PROJECT_ID", "proj"),
            ("CLOUD_ML_REGION", "global"),
            ("VERTEX_REGION_CLAUDE_3_5_HAIKU", "us-east5"),
        ]);
        let c = VertexConfig::from_vars(&v).unwrap();
        assert_eq!(
            c.url("claude-sonnet-4-5@20250929"),
            "https://aiplatform.googleapis.com/v1/projects/proj/locations/global/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict"
        );
        assert_eq!(
            c.url("claude-3-5-haiku@20241022"),
            "https://us-east5-aiplatform.googleapis.com/v1/projects/proj/locations/us-east5/publishers/anthropic/models/claude-3-5-haiku@20241022:streamRawPredict"
        );
        assert_eq!(
            c.endpoint("eu"),
            "https://aiplatform.eu.rep.googleapis.com/v1"
        );
        let err =
            VertexConfig::from_vars(&Vars::from_pairs(&[("CLAUDE_CODE_SKIP_VERTEX_AUTH", "1")]))
                .unwrap_err();
        assert!(err.to_string().contains("ANTHROPIC_VERTEX_PROJECT_ID"));
    }
}
