//! Microsoft Foundry: the Messages API itself at `https://{resource}.services.ai.azure.com/
//! anthropic/v1/messages` (ANTHROPIC_FOUNDRY_RESOURCE, or ANTHROPIC_FOUNDRY_BASE_URL), with an
//! API key (ANTHROPIC_FOUNDRY_API_KEY, sent as `x-api-key`) or a Microsoft Entra ID token
//! (bearer), or nothing (CLAUDE_CODE_SKIP_FOUNDRY_AUTH). Models are deployment names.

use secrecy::SecretString;

use super::azure_credentials::{self, AzureSource};
use super::base_url_var;
use super::vars::Vars;
use crate::anthropic::ConfigError;

/// How requests authenticate.
#[derive(Debug, Clone)]
pub(crate) enum FoundryAuth {
    /// `x-api-key`.
    ApiKey(SecretString),
    /// Entra ID bearer tokens.
    Entra(AzureSource),
    /// No authentication (CLAUDE_CODE_SKIP_FOUNDRY_AUTH).
    Skip,
}

impl FoundryAuth {
    /// The credential source, for people.
    pub(crate) fn describe(&self) -> String {
        match self {
            Self::ApiKey(_) => "Foundry API key (ANTHROPIC_FOUNDRY_API_KEY)".to_owned(),
            Self::Entra(s) => s.describe(),
            Self::Skip => "none (CLAUDE_CODE_SKIP_FOUNDRY_AUTH)".to_owned(),
        }
    }

    /// The variables holding the credential itself.
    pub(crate) fn credential_vars(&self) -> Vec<&'static str> {
        match self {
            Self::ApiKey(_) => vec!["ANTHROPIC_FOUNDRY_API_KEY"],
            Self::Entra(AzureSource::ClientSecret { .. }) => vec!["AZURE_CLIENT_SECRET"],
            _ => Vec::new(),
        }
    }
}

/// Foundry's settings.
#[derive(Debug, Clone)]
pub(crate) struct FoundryConfig {
    /// Authentication.
    pub auth: FoundryAuth,
    /// The base URL (without `/v1/messages`).
    pub base_url: String,
    /// The variable that set it.
    pub base_url_var: &'static str,
}

impl FoundryConfig {
    /// From variables.
    pub(crate) fn from_vars(vars: &Vars) -> Result<Self, ConfigError> {
        let (base_url, base_url_var) = match (
            base_url_var(vars, "ANTHROPIC_FOUNDRY_BASE_URL")?,
            vars.get("ANTHROPIC_FOUNDRY_RESOURCE"),
        ) {
            (Some(url), _) => (url, "ANTHROPIC_FOUNDRY_BASE_URL"),
            (None, Some(resource)) => {
                let ok = resource
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.'));
                if !ok {
                    return Err(ConfigError::Invalid {
                        name: "ANTHROPIC_FOUNDRY_RESOURCE".into(),
                        message: format!(
                            "`{resource}` is not a resource name (give the name only, or the \
                             whole URL in ANTHROPIC_FOUNDRY_BASE_URL)"
                        ),
                    });
                }
                (
                    format!("https://{resource}.services.ai.azure.com/anthropic"),
                    "ANTHROPIC_FOUNDRY_RESOURCE",
                )
            }
            (None, None) => {
                return Err(ConfigError::Invalid {
                    name: "ANTHROPIC_FOUNDRY_RESOURCE".into(),
                    message:
                        "Microsoft Foundry needs the resource: set ANTHROPIC_FOUNDRY_RESOURCE \
                              to its name, or ANTHROPIC_FOUNDRY_BASE_URL to its URL \
                              (https://NAME.services.ai.azure.com/anthropic)"
                            .into(),
                });
            }
        };
        let auth = if vars.flag("CLAUDE_CODE_SKIP_FOUNDRY_AUTH") {
            FoundryAuth::Skip
        } else if let Some(key) = vars.get("ANTHROPIC_FOUNDRY_API_KEY") {
            FoundryAuth::ApiKey(SecretString::from(key.to_owned()))
        } else {
            FoundryAuth::Entra(azure_credentials::resolve(vars))
        };
        Ok(Self {
            auth,
            base_url: base_url.trim_end_matches('/').to_owned(),
            base_url_var,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_or_base_url() {
        let c = FoundryConfig::from_vars(&Vars::from_pairs(&[
            ("ANTHROPIC_FOUNDRY_RESOURCE", "my-res"),
            ("ANTHROPIC_FOUNDRY_API_KEY", "SECRET"),
        ]))
        .unwrap();
        assert_eq!(c.base_url, "https://my-res.services.ai.azure.com/anthropic");
        assert!(!format!("{c:?}").contains("SECRET"));
        assert!(FoundryConfig::from_vars(&Vars::default()).is_err());
        assert!(
            FoundryConfig::from_vars(&Vars::from_pairs(&[(
                "ANTHROPIC_FOUNDRY_RESOURCE",
                "evil.com/x#"
            )]))
            .is_err()
        );
    }
}
