//! Microsoft Entra ID tokens for Microsoft Foundry, in the order of Azure's
//! `DefaultAzureCredential`: a service principal's secret in the environment
//! (`AZURE_TENANT_ID`, `AZURE_CLIENT_ID`, `AZURE_CLIENT_SECRET`), workload identity
//! (`AZURE_FEDERATED_TOKEN_FILE`, AKS), managed identity (App Service's `IDENTITY_ENDPOINT`,
//! else the instance metadata service), then the Azure CLI (`az login`).

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use secrecy::{ExposeSecret, SecretString};

use super::form_post;
use super::token::Expiring;
use super::vars::Vars;

/// The resource Foundry's tokens are for.
pub(crate) const RESOURCE: &str = "https://cognitiveservices.azure.com";

/// The variables the chain reads.
pub(crate) const VARS: &[&str] = &[
    "AZURE_TENANT_ID",
    "AZURE_CLIENT_ID",
    "AZURE_CLIENT_SECRET",
    "AZURE_FEDERATED_TOKEN_FILE",
    "AZURE_AUTHORITY_HOST",
    "IDENTITY_ENDPOINT",
    "IDENTITY_HEADER",
    "AZURE_POD_IDENTITY_AUTHORITY_HOST",
    "PATH",
];

/// Where Entra tokens come from.
#[derive(Debug, Clone)]
pub(crate) enum AzureSource {
    /// A service principal's client secret.
    ClientSecret {
        /// Token endpoint.
        token_url: String,
        /// Application id.
        client_id: String,
        /// The secret.
        secret: SecretString,
    },
    /// A federated token file (workload identity).
    Workload {
        /// Token endpoint.
        token_url: String,
        /// Application id.
        client_id: String,
        /// The token file (read at each fetch: it rotates).
        file: PathBuf,
    },
    /// Managed identity, then the Azure CLI.
    Default {
        /// App Service's endpoint and header, when set.
        app_service: Option<(String, SecretString)>,
        /// The instance metadata service.
        imds: String,
        /// User-assigned identity's client id.
        client_id: Option<String>,
    },
}

impl AzureSource {
    /// What `skiff config` and errors say.
    pub(crate) fn describe(&self) -> String {
        match self {
            Self::ClientSecret { client_id, .. } => {
                format!("Microsoft Entra ID service principal {client_id} (AZURE_CLIENT_SECRET)")
            }
            Self::Workload {
                client_id, file, ..
            } => format!(
                "Microsoft Entra ID workload identity {client_id} ({})",
                file.display()
            ),
            Self::Default { app_service, .. } => format!(
                "Microsoft Entra ID: managed identity ({}), else the Azure CLI (`az login`)",
                if app_service.is_some() {
                    "IDENTITY_ENDPOINT"
                } else {
                    "instance metadata"
                }
            ),
        }
    }
}

/// Choose the source (no network).
pub(crate) fn resolve(vars: &Vars) -> AzureSource {
    let authority = vars
        .get("AZURE_AUTHORITY_HOST")
        .unwrap_or("https://login.microsoftonline.com")
        .trim_end_matches('/')
        .to_owned();
    if let (Some(tenant), Some(client)) = (vars.get("AZURE_TENANT_ID"), vars.get("AZURE_CLIENT_ID"))
    {
        let token_url = format!("{authority}/{tenant}/oauth2/v2.0/token");
        if let Some(secret) = vars.get("AZURE_CLIENT_SECRET") {
            return AzureSource::ClientSecret {
                token_url,
                client_id: client.to_owned(),
                secret: SecretString::from(secret.to_owned()),
            };
        }
        if let Some(file) = vars.get("AZURE_FEDERATED_TOKEN_FILE") {
            return AzureSource::Workload {
                token_url,
                client_id: client.to_owned(),
                file: PathBuf::from(file),
            };
        }
    }
    AzureSource::Default {
        app_service: vars
            .get("IDENTITY_ENDPOINT")
            .zip(vars.get("IDENTITY_HEADER"))
            .map(|(e, h)| (e.to_owned(), SecretString::from(h.to_owned()))),
        imds: vars
            .get("AZURE_POD_IDENTITY_AUTHORITY_HOST")
            .unwrap_or("http://169.254.169.254")
            .trim_end_matches('/')
            .to_owned(),
        client_id: vars.get("AZURE_CLIENT_ID").map(str::to_owned),
    }
}

/// A token from `source`.
pub(crate) async fn fetch(
    client: &reqwest::Client,
    source: &AzureSource,
) -> Result<Expiring<SecretString>, String> {
    let scope = format!("{RESOURCE}/.default");
    match source {
        AzureSource::ClientSecret {
            token_url,
            client_id,
            secret,
        } => {
            let req = form_post(
                client,
                token_url,
                &[
                    ("grant_type", "client_credentials"),
                    ("client_id", client_id),
                    ("client_secret", secret.expose_secret()),
                    ("scope", &scope),
                ],
            );
            token_response(req, &source.describe()).await
        }
        AzureSource::Workload {
            token_url,
            client_id,
            file,
        } => {
            let assertion = tokio::fs::read_to_string(file).await.map_err(|e| {
                format!(
                    "cannot read AZURE_FEDERATED_TOKEN_FILE {}: {e}",
                    file.display()
                )
            })?;
            let req = form_post(
                client,
                token_url,
                &[
                    ("grant_type", "client_credentials"),
                    ("client_id", client_id),
                    (
                        "client_assertion_type",
                        "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
                    ),
                    ("client_assertion", assertion.trim()),
                    ("scope", &scope),
                ],
            );
            token_response(req, &source.describe()).await
        }
        AzureSource::Default {
            app_service,
            imds,
            client_id,
        } => {
            let managed = match app_service {
                Some((endpoint, header)) => {
                    let mut q = vec![("api-version", "2019-08-01"), ("resource", RESOURCE)];
                    if let Some(id) = client_id {
                        q.push(("client_id", id));
                    }
                    let req = client
                        .get(with_query(endpoint, &q))
                        .header(
                            "x-identity-header",
                            super::aws_sources::sensitive(header.expose_secret())?,
                        )
                        .timeout(Duration::from_secs(10));
                    token_response(req, "managed identity (IDENTITY_ENDPOINT)").await
                }
                None => {
                    let mut q = vec![("api-version", "2018-02-01"), ("resource", RESOURCE)];
                    if let Some(id) = client_id {
                        q.push(("client_id", id));
                    }
                    let url = with_query(&format!("{imds}/metadata/identity/oauth2/token"), &q);
                    let req = client
                        .get(url)
                        .header("metadata", "true")
                        .timeout(Duration::from_secs(2));
                    token_response(req, "managed identity (instance metadata)").await
                }
            };
            match managed {
                Ok(t) => Ok(t),
                Err(managed_err) => azure_cli().await.map_err(|cli_err| {
                    format!(
                        "no Microsoft Entra ID token: {managed_err}; and the Azure CLI: {cli_err}. \
                         Run `az login`, set AZURE_TENANT_ID, AZURE_CLIENT_ID and \
                         AZURE_CLIENT_SECRET, or use an API key in ANTHROPIC_FOUNDRY_API_KEY"
                    )
                }),
            }
        }
    }
}

fn with_query(base: &str, q: &[(&str, &str)]) -> String {
    let query: Vec<String> = q
        .iter()
        .map(|(k, v)| format!("{k}={}", super::form_value(v)))
        .collect();
    format!("{base}?{}", query.join("&"))
}

/// An OAuth token answer: `access_token`, and `expires_in` (seconds) or `expires_on` (epoch).
async fn token_response(
    req: reqwest::RequestBuilder,
    what: &str,
) -> Result<Expiring<SecretString>, String> {
    let resp = req
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .map_err(|e| format!("{what}: {}", crate::http_errors::error_chain(&e)))?;
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap_or(serde_json::Value::Null);
    if !(200..300).contains(&status) {
        let reason: String = v
            .get("error_description")
            .or_else(|| v.get("error"))
            .and_then(serde_json::Value::as_str)
            .map_or_else(
                || text.trim().chars().take(300).collect(),
                |s| s.chars().take(300).collect(),
            );
        return Err(format!("{what}: HTTP {status}: {reason}"));
    }
    let token = v
        .get("access_token")
        .and_then(serde_json::Value::as_str)
        .ok_or_else(|| format!("{what}: no access_token in the answer"))?;
    Ok(Expiring {
        value: SecretString::from(token.to_owned()),
        expires_at: expiry(&v),
    })
}

/// `expires_in` seconds from now, or `expires_on` seconds since the epoch (number or text).
fn expiry(v: &serde_json::Value) -> Option<SystemTime> {
    let num = |k: &str| {
        v.get(k).and_then(|x| {
            x.as_u64()
                .or_else(|| x.as_str().and_then(|s| s.trim().parse().ok()))
        })
    };
    num("expires_in")
        .map(|s| SystemTime::now() + Duration::from_secs(s))
        .or_else(|| num("expires_on").map(|s| SystemTime::UNIX_EPOCH + Duration::from_secs(s)))
        .or(Some(SystemTime::now() + Duration::from_secs(3600)))
}

/// `az account get-access-token` (its `expires_on`, epoch seconds, in newer versions).
async fn azure_cli() -> Result<Expiring<SecretString>, String> {
    let out = tokio::time::timeout(
        Duration::from_secs(30),
        tokio::process::Command::new("az")
            .args([
                "account",
                "get-access-token",
                "--output",
                "json",
                "--resource",
                RESOURCE,
            ])
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .map_err(|_| "`az account get-access-token` ran over 30 s".to_owned())?
    .map_err(|e| format!("`az` could not run ({e})"))?;
    if !out.status.success() {
        let err: String = String::from_utf8_lossy(&out.stderr)
            .chars()
            .take(300)
            .collect();
        return Err(format!(
            "`az account get-access-token` failed: {}",
            err.trim()
        ));
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("`az account get-access-token` did not print JSON: {e}"))?;
    let token = v
        .get("accessToken")
        .and_then(serde_json::Value::as_str)
        .ok_or("`az account get-access-token` printed no accessToken")?;
    Ok(Expiring {
        value: SecretString::from(token.to_owned()),
        expires_at: expiry(&v),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_order() {
        let s = resolve(&Vars::from_pairs(&[
            ("AZURE_TENANT_ID", "t"),
            ("AZURE_CLIENT_ID", "c"),
            ("AZURE_CLIENT_SECRET", "hunter2-value"),
            ("AZURE_AUTHORITY_HOST", "http://127.0.0.1:9/"),
        ]));
        let AzureSource::ClientSecret { token_url, .. } = &s else {
            panic!("{s:?}")
        };
        assert_eq!(token_url, "http://127.0.0.1:9/t/oauth2/v2.0/token");
        assert!(!format!("{s:?} {}", s.describe()).contains("hunter2"));
        let w = resolve(&Vars::from_pairs(&[
            ("AZURE_TENANT_ID", "t"),
            ("AZURE_CLIENT_ID", "c"),
            ("AZURE_FEDERATED_TOKEN_FILE", "/var/run/token"),
        ]));
        assert!(matches!(w, AzureSource::Workload { .. }));
        let d = resolve(&Vars::default());
        assert!(d.describe().contains("az login"));
        let v = serde_json::json!({"expires_on": "1700000000"});
        assert_eq!(
            expiry(&v),
            Some(SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000))
        );
    }
}
