//! Amazon Bedrock: `POST {endpoint}/model/{model}/invoke-with-response-stream`, the endpoint
//! `https://bedrock-runtime.{region}.amazonaws.com` (or ANTHROPIC_BEDROCK_BASE_URL for a
//! gateway), signed with SigV4 (service `bedrock`) from the AWS credential chain, or a Bedrock
//! API key (AWS_BEARER_TOKEN_BEDROCK, a bearer token), or nothing
//! (CLAUDE_CODE_SKIP_BEDROCK_AUTH, for gateways that sign themselves). The body carries
//! `anthropic_version: "bedrock-2023-05-31"` and the betas, without `model` and `stream`.

use secrecy::SecretString;

use super::aws_credentials::{self, AwsChain};
use super::aws_profile::ProfileFiles;
use super::base_url_var;
use super::vars::Vars;
use crate::anthropic::ConfigError;

/// The body's `anthropic_version` on Bedrock.
pub(crate) const VERSION: &str = "bedrock-2023-05-31";

/// How requests authenticate.
#[derive(Debug, Clone)]
pub(crate) enum BedrockAuth {
    /// SigV4 with credentials from the chain.
    SigV4(Box<AwsChain>),
    /// A Bedrock API key as a bearer token.
    ApiKey(SecretString),
    /// No authentication (CLAUDE_CODE_SKIP_BEDROCK_AUTH).
    Skip,
}

impl BedrockAuth {
    /// The credential source, for people.
    pub(crate) fn describe(&self) -> String {
        match self {
            Self::SigV4(chain) => chain.source.describe(),
            Self::ApiKey(_) => "Bedrock API key (AWS_BEARER_TOKEN_BEDROCK)".to_owned(),
            Self::Skip => "none (CLAUDE_CODE_SKIP_BEDROCK_AUTH)".to_owned(),
        }
    }

    /// The variables holding the credential itself.
    pub(crate) fn credential_vars(&self) -> Vec<&'static str> {
        match self {
            Self::SigV4(chain) => match &chain.source {
                aws_credentials::AwsSource::Static { origin, .. }
                    if origin.starts_with("environment") =>
                {
                    vec!["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"]
                }
                _ => Vec::new(),
            },
            Self::ApiKey(_) => vec!["AWS_BEARER_TOKEN_BEDROCK"],
            Self::Skip => Vec::new(),
        }
    }
}

/// Bedrock's settings.
#[derive(Debug, Clone)]
pub(crate) struct BedrockConfig {
    /// Authentication.
    pub auth: BedrockAuth,
    /// The region.
    pub region: String,
    /// Where the region came from.
    pub region_origin: String,
    /// ANTHROPIC_SMALL_FAST_MODEL_AWS_REGION: the small model's own region.
    pub small_model_region: Option<String>,
    /// ANTHROPIC_BEDROCK_BASE_URL.
    pub base_url: Option<String>,
}

impl BedrockConfig {
    /// From variables.
    pub(crate) fn from_vars(vars: &Vars) -> Result<Self, ConfigError> {
        let base_url = base_url_var(vars, "ANTHROPIC_BEDROCK_BASE_URL")?;
        let files = ProfileFiles::load(vars);
        let (region, region_origin) = aws_credentials::region_of(vars, &files);
        let auth = if vars.flag("CLAUDE_CODE_SKIP_BEDROCK_AUTH") {
            BedrockAuth::Skip
        } else if let Some(key) = vars.get("AWS_BEARER_TOKEN_BEDROCK") {
            BedrockAuth::ApiKey(SecretString::from(key.to_owned()))
        } else {
            let chain = aws_credentials::resolve(vars).map_err(|message| ConfigError::Invalid {
                name: "AWS credentials for Amazon Bedrock".into(),
                message,
            })?;
            BedrockAuth::SigV4(Box::new(chain))
        };
        Ok(Self {
            auth,
            region,
            region_origin,
            small_model_region: vars
                .get("ANTHROPIC_SMALL_FAST_MODEL_AWS_REGION")
                .map(str::to_owned),
            base_url,
        })
    }

    /// The endpoint for a region.
    pub(crate) fn endpoint(&self, region: &str) -> String {
        self.base_url
            .clone()
            .unwrap_or_else(|| format!("https://bedrock-runtime.{region}.amazonaws.com"))
    }

    /// The streaming URL of `model` in `region`: the model id percent-encoded, `:` kept.
    pub(crate) fn url(&self, model: &str, region: &str) -> String {
        let mut id = String::with_capacity(model.len());
        for b in model.bytes() {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b':') {
                id.push(b as char);
            } else {
                id.push_str(&format!("%{b:02X}"));
            }
        }
        format!(
            "{}/model/{id}/invoke-with-response-stream",
            self.endpoint(region)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_and_model_paths() {
        let v = Vars::from_pairs(&[
            ("AWS_REGION", "eu-west-3"),
            ("AWS_BEARER_TOKEN_BEDROCK", "SECRET"),
            ("HOME", "/nonexistent"),
        ]);
        let c = BedrockConfig::from_vars(&v).unwrap();
        assert_eq!(
            c.url("eu.anthropic.claude-sonnet-4-5-20250929-v1:0", &c.region),
            "https://bedrock-runtime.eu-west-3.amazonaws.com/model/eu.anthropic.claude-sonnet-4-5-20250929-v1:0/invoke-with-response-stream"
        );
        assert_eq!(
            c.url(
                "arn:aws:bedrock:us-east-1:1:application-inference-profile/x",
                "us-east-1"
            ),
            "https://bedrock-runtime.us-east-1.amazonaws.com/model/arn:aws:bedrock:us-east-1:1:application-inference-profile%2Fx/invoke-with-response-stream"
        );
        assert_eq!(
            c.auth.describe(),
            "Bedrock API key (AWS_BEARER_TOKEN_BEDROCK)"
        );
        assert!(!format!("{c:?}").contains("SECRET"));
        let skip = Vars::from_pairs(&[
            ("CLAUDE_CODE_SKIP_BEDROCK_AUTH", "1"),
            ("ANTHROPIC_BEDROCK_BASE_URL", "http://127.0.0.1:9/bedrock/"),
        ]);
        let c = BedrockConfig::from_vars(&skip).unwrap();
        assert_eq!(c.endpoint("x"), "http://127.0.0.1:9/bedrock");
        assert_eq!(c.region, "us-east-1");
        assert!(matches!(c.auth, BedrockAuth::Skip));
    }
}
