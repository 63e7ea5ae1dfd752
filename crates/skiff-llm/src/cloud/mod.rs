//! Claude through the clouds: Amazon Bedrock, Google Vertex AI and Microsoft Foundry, chosen
//! and configured as Claude Code does it (`CLAUDE_CODE_USE_BEDROCK`, `CLAUDE_CODE_USE_VERTEX`,
//! `CLAUDE_CODE_USE_FOUNDRY` and each cloud's own variables and credentials).
//!
//! Each cloud speaks the Messages API with its own envelope — the same request body (Bedrock
//! and Vertex AI take the model in the URL and an `anthropic_version` in the body), the same
//! stream events (Bedrock wraps them in the AWS event stream) — so the request is built and
//! the events are assembled by the Anthropic provider's code; this module adds the endpoints,
//! the model ids and the credentials: SigV4 with the AWS credential chain, Google's
//! Application Default Credentials, Microsoft Entra ID, or each cloud's API key.

mod aws_credentials;
mod aws_profile;
mod aws_sources;
mod azure_credentials;
mod bedrock;
mod event_stream;
mod foundry;
mod gcp_credentials;
mod jwt;
mod models;
mod provider;
mod sigv4;
mod time;
mod token;
mod vars;
mod vertex;

use crate::anthropic::{CommonOptions, ConfigError};

pub use provider::CloudProvider;

use self::vars::Vars;

/// A cloud that serves Claude.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cloud {
    /// Amazon Bedrock.
    Bedrock,
    /// Google Vertex AI.
    Vertex,
    /// Microsoft Foundry.
    Foundry,
}

impl Cloud {
    /// All clouds, in the order their switches are looked at.
    pub const ALL: [Cloud; 3] = [Cloud::Bedrock, Cloud::Vertex, Cloud::Foundry];

    /// The provider name (`--provider bedrock`, the init frame's `apiProvider`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Bedrock => "bedrock",
            Self::Vertex => "vertex",
            Self::Foundry => "foundry",
        }
    }

    /// The cloud's name for people.
    pub fn title(self) -> &'static str {
        match self {
            Self::Bedrock => "Amazon Bedrock",
            Self::Vertex => "Google Vertex AI",
            Self::Foundry => "Microsoft Foundry",
        }
    }

    /// The variable that switches it on (Claude Code's).
    pub fn switch_var(self) -> &'static str {
        match self {
            Self::Bedrock => "CLAUDE_CODE_USE_BEDROCK",
            Self::Vertex => "CLAUDE_CODE_USE_VERTEX",
            Self::Foundry => "CLAUDE_CODE_USE_FOUNDRY",
        }
    }

    /// The variable that turns authentication off (a gateway that signs or authenticates
    /// requests itself).
    pub fn skip_auth_var(self) -> &'static str {
        match self {
            Self::Bedrock => "CLAUDE_CODE_SKIP_BEDROCK_AUTH",
            Self::Vertex => "CLAUDE_CODE_SKIP_VERTEX_AUTH",
            Self::Foundry => "CLAUDE_CODE_SKIP_FOUNDRY_AUTH",
        }
    }

    /// The variables that point it at another endpoint.
    pub fn endpoint_vars(self) -> &'static [&'static str] {
        match self {
            Self::Bedrock => &["ANTHROPIC_BEDROCK_BASE_URL"],
            Self::Vertex => &["ANTHROPIC_VERTEX_BASE_URL"],
            Self::Foundry => &["ANTHROPIC_FOUNDRY_BASE_URL", "ANTHROPIC_FOUNDRY_RESOURCE"],
        }
    }

    /// The cloud named `name` (`bedrock`, `vertex`, `foundry`).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.name() == name)
    }

    /// The cloud whose switch is on (`1`, `true`, `yes`), Bedrock first.
    pub fn detect(get: impl Fn(&str) -> Option<String>) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|c| get(c.switch_var()).is_some_and(|v| vars::is_true(&v)))
    }

    /// Every variable the cloud's configuration reads (for `skiff config` and the trust rules).
    pub fn variables(self) -> Vec<&'static str> {
        let mut v: Vec<&'static str> = vec![self.switch_var(), self.skip_auth_var()];
        v.extend_from_slice(self.endpoint_vars());
        v.extend_from_slice(models::PIN_VARS);
        v.push("ANTHROPIC_SMALL_FAST_MODEL");
        match self {
            Self::Bedrock => {
                v.push("AWS_BEARER_TOKEN_BEDROCK");
                v.push("ANTHROPIC_SMALL_FAST_MODEL_AWS_REGION");
                v.extend_from_slice(aws_credentials::VARS);
            }
            Self::Vertex => {
                v.extend(["CLOUD_ML_REGION", "ANTHROPIC_VERTEX_PROJECT_ID"]);
                v.extend_from_slice(gcp_credentials::VARS);
                v.extend(models::vertex_region_vars());
            }
            Self::Foundry => {
                v.push("ANTHROPIC_FOUNDRY_API_KEY");
                v.extend_from_slice(azure_credentials::VARS);
            }
        }
        v.retain(|n| *n != "HOME" && *n != "PATH");
        v
    }
}

/// What a cloud provider is configured with, for `skiff config`, the init frame and the trust
/// rules (never a secret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloudSummary {
    /// The cloud.
    pub cloud: Cloud,
    /// Its region (Bedrock, Vertex AI), and where it came from.
    pub region: Option<(String, String)>,
    /// The GCP project (Vertex AI).
    pub project: Option<String>,
    /// The endpoint requests go to (without the model's path).
    pub endpoint: String,
    /// The variable that set the endpoint, when one did.
    pub endpoint_var: Option<&'static str>,
    /// The credential source in use (`none` when authentication is skipped).
    pub credential: String,
    /// The variables the credential itself is in, when it is in variables (an API key, AWS
    /// keys): a workspace that sets the endpoint and these together sends its own key.
    pub credential_vars: Vec<&'static str>,
    /// The default model on this cloud.
    pub default_model: String,
    /// The default small, fast model.
    pub default_small_model: String,
}

/// How a cloud provider authenticates and where it sends requests.
#[derive(Debug, Clone)]
pub struct CloudConfig {
    pub(crate) kind: CloudKind,
    pub(crate) common: CommonOptions,
    pub(crate) models: models::ModelMap,
    pub(crate) connect_timeout: std::time::Duration,
}

/// Each cloud's own settings.
#[derive(Debug, Clone)]
pub(crate) enum CloudKind {
    Bedrock(bedrock::BedrockConfig),
    Vertex(vertex::VertexConfig),
    Foundry(foundry::FoundryConfig),
}

impl CloudConfig {
    /// Configuration of `cloud` from variables (the process environment, or skiff's settings'
    /// lookup): errors name the variable to set.
    pub fn from_lookup(
        cloud: Cloud,
        get: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let mut names = cloud.variables();
        names.extend(["HOME", "PATH"]);
        let vars = Vars::capture(&get, names);
        let common = CommonOptions::from_lookup(&get)?;
        let pins = [("sonnet", 0), ("opus", 1), ("haiku", 2)]
            .into_iter()
            .filter_map(|(family, i)| {
                vars.get(models::PIN_VARS[i])
                    .map(|m| (family, m.to_owned()))
            })
            .collect::<Vec<_>>();
        let (kind, region) = match cloud {
            Cloud::Bedrock => {
                let c = bedrock::BedrockConfig::from_vars(&vars)?;
                let r = c.region.clone();
                (CloudKind::Bedrock(c), r)
            }
            Cloud::Vertex => (
                CloudKind::Vertex(vertex::VertexConfig::from_vars(&vars)?),
                String::new(),
            ),
            Cloud::Foundry => (
                CloudKind::Foundry(foundry::FoundryConfig::from_vars(&vars)?),
                String::new(),
            ),
        };
        Ok(Self {
            kind,
            common,
            models: models::ModelMap::new(cloud, &region, pins),
            connect_timeout: std::time::Duration::from_secs(10),
        })
    }

    /// The cloud.
    pub fn cloud(&self) -> Cloud {
        match self.kind {
            CloudKind::Bedrock(_) => Cloud::Bedrock,
            CloudKind::Vertex(_) => Cloud::Vertex,
            CloudKind::Foundry(_) => Cloud::Foundry,
        }
    }

    /// The cloud's id of `model` (`claude-sonnet-4-5` → `us.anthropic.claude-sonnet-4-5-…`);
    /// an id that is already the cloud's, or unknown, is returned as it is.
    pub fn map_model(&self, model: &str) -> String {
        self.models.map(model)
    }

    /// Set the whole retry policy.
    pub fn set_retry(&mut self, retry: crate::RetryPolicy) {
        self.common.retry = retry;
    }

    /// The retry policy.
    pub fn retry(&self) -> &crate::RetryPolicy {
        &self.common.retry
    }

    /// Add `anthropic-beta` values (`--betas`) to the ones from the environment.
    pub fn add_betas(&mut self, betas: &[String]) {
        for b in betas {
            if !self.common.betas.contains(b) {
                self.common.betas.push(b.clone());
            }
        }
    }

    /// Set the retries of a failed call.
    pub fn set_max_retries(&mut self, retries: u32) {
        self.common.retry.max_retries = retries;
    }

    /// What it is configured with (never a secret).
    pub fn summary(&self) -> CloudSummary {
        let (region, project, endpoint, endpoint_var, credential, credential_vars) =
            match &self.kind {
                CloudKind::Bedrock(b) => (
                    Some((b.region.clone(), b.region_origin.clone())),
                    None,
                    b.endpoint(&b.region),
                    b.base_url.as_ref().map(|_| "ANTHROPIC_BEDROCK_BASE_URL"),
                    b.auth.describe(),
                    b.auth.credential_vars(),
                ),
                CloudKind::Vertex(v) => (
                    Some((v.region.clone(), v.region_origin.clone())),
                    Some(v.project.clone()),
                    v.endpoint(&v.region),
                    v.base_url.as_ref().map(|_| "ANTHROPIC_VERTEX_BASE_URL"),
                    v.auth.describe(),
                    v.auth.credential_vars(),
                ),
                CloudKind::Foundry(f) => (
                    None,
                    None,
                    f.base_url.clone(),
                    Some(f.base_url_var),
                    f.auth.describe(),
                    f.auth.credential_vars(),
                ),
            };
        CloudSummary {
            cloud: self.cloud(),
            region,
            project,
            endpoint,
            endpoint_var,
            credential,
            credential_vars,
            default_model: self.models.default_model(),
            default_small_model: self.models.default_small_model(),
        }
    }
}

/// Percent-encode a form or query value.
pub(crate) fn form_value(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for b in v.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A form POST (`application/x-www-form-urlencoded`).
pub(crate) fn form_post(
    client: &reqwest::Client,
    url: &str,
    fields: &[(&str, &str)],
) -> reqwest::RequestBuilder {
    let body: Vec<String> = fields
        .iter()
        .map(|(k, v)| format!("{}={}", form_value(k), form_value(v)))
        .collect();
    client
        .post(url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body.join("&"))
}

/// A base URL variable, checked.
pub(crate) fn base_url_var(vars: &Vars, name: &str) -> Result<Option<String>, ConfigError> {
    vars.get(name)
        .map(|u| crate::anthropic::validate_base_url(u, name))
        .transpose()
}
