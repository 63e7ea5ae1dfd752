//! Google Application Default Credentials, as Google's libraries find them: the file in
//! `GOOGLE_APPLICATION_CREDENTIALS` (a service-account key: an RS256 JWT exchanged at the
//! file's own `token_uri`; or user credentials: a refresh token), gcloud's
//! `application_default_credentials.json` (`gcloud auth application-default login`), then the
//! metadata server of GCE, GKE and Cloud Run (`GCE_METADATA_HOST` to move it).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use secrecy::{ExposeSecret, SecretString};

use super::form_post;
use super::jwt::{SigningKey, assertion};
use super::token::Expiring;
use super::vars::Vars;

/// The scope Vertex AI needs.
pub(crate) const CLOUD_PLATFORM: &str = "https://www.googleapis.com/auth/cloud-platform";
/// Google's token endpoint (user credentials without their own `token_uri`).
const GOOGLE_TOKEN_URI: &str = "https://oauth2.googleapis.com/token";

/// The variables ADC reads.
pub(crate) const VARS: &[&str] = &[
    "HOME",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "CLOUDSDK_CONFIG",
    "GCE_METADATA_HOST",
    "GCE_METADATA_IP",
    "GOOGLE_CLOUD_PROJECT",
    "GCLOUD_PROJECT",
];

/// Where access tokens come from.
#[derive(Debug, Clone)]
pub(crate) enum GcpSource {
    /// A service-account key file.
    ServiceAccount {
        /// `client_email`.
        email: String,
        /// `private_key_id`.
        key_id: Option<String>,
        /// `private_key`.
        key: Arc<SigningKey>,
        /// `token_uri`.
        token_uri: String,
        /// The file.
        file: PathBuf,
        /// Which variable or default named it.
        origin: &'static str,
    },
    /// User credentials (`gcloud auth application-default login`).
    AuthorizedUser {
        /// `client_id`.
        client_id: String,
        /// `client_secret`.
        client_secret: SecretString,
        /// `refresh_token`.
        refresh_token: SecretString,
        /// `token_uri` (Google's by default).
        token_uri: String,
        /// The file.
        file: PathBuf,
        /// Which variable or default named it.
        origin: &'static str,
    },
    /// The metadata server.
    Metadata {
        /// Its base URL.
        base: String,
    },
}

impl GcpSource {
    /// What `skiff config`, the init frame and errors say (never a secret).
    pub(crate) fn describe(&self) -> String {
        match self {
            Self::ServiceAccount {
                email,
                file,
                origin,
                ..
            } => format!(
                "service account {email} (key file {}, {origin})",
                file.display()
            ),
            Self::AuthorizedUser { file, origin, .. } => {
                format!("user credentials ({}, {origin})", file.display())
            }
            Self::Metadata { base } => format!("the metadata server ({base})"),
        }
    }
}

/// The chain's decision: the source, and the project a key file names.
#[derive(Debug, Clone)]
pub(crate) struct Adc {
    /// The source.
    pub source: GcpSource,
    /// `project_id` of a service-account file, `quota_project_id` of user credentials.
    pub file_project: Option<String>,
    /// `quota_project_id` (sent as `x-goog-user-project`).
    pub quota_project: Option<String>,
}

/// Choose the source from variables and files (no network).
pub(crate) fn resolve(vars: &Vars) -> Result<Adc, String> {
    if let Some(path) = vars.get("GOOGLE_APPLICATION_CREDENTIALS") {
        let path = super::vars::expand_home(path, vars.home());
        let text = std::fs::read_to_string(&path).map_err(|e| {
            format!(
                "cannot read GOOGLE_APPLICATION_CREDENTIALS ({}): {e}",
                path.display()
            )
        })?;
        return from_file(&text, path, "GOOGLE_APPLICATION_CREDENTIALS");
    }
    let well_known = match vars.get("CLOUDSDK_CONFIG") {
        Some(dir) => Some(PathBuf::from(dir).join("application_default_credentials.json")),
        None => vars
            .home()
            .map(|h| h.join(".config/gcloud/application_default_credentials.json")),
    };
    if let Some(path) = well_known
        && let Ok(text) = std::fs::read_to_string(&path)
    {
        return from_file(&text, path, "gcloud application-default login");
    }
    let host = vars
        .get("GCE_METADATA_HOST")
        .or_else(|| vars.get("GCE_METADATA_IP"))
        .unwrap_or("metadata.google.internal");
    let base = if host.starts_with("http://") || host.starts_with("https://") {
        host.trim_end_matches('/').to_owned()
    } else {
        format!("http://{host}")
    };
    Ok(Adc {
        source: GcpSource::Metadata { base },
        file_project: None,
        quota_project: None,
    })
}

fn from_file(text: &str, file: PathBuf, origin: &'static str) -> Result<Adc, String> {
    let v: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| format!("{} ({origin}) is not JSON: {e}", file.display()))?;
    let s = |k: &str| {
        v.get(k)
            .and_then(serde_json::Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let missing = |k: &str| format!("{} ({origin}) has no {k}", file.display());
    match s("type").as_deref() {
        Some("service_account") => {
            let pem = s("private_key").ok_or_else(|| missing("private_key"))?;
            let key = SigningKey::from_pem(&pem)
                .map_err(|e| format!("{} ({origin}): {e}", file.display()))?;
            Ok(Adc {
                source: GcpSource::ServiceAccount {
                    email: s("client_email").ok_or_else(|| missing("client_email"))?,
                    key_id: s("private_key_id"),
                    key: Arc::new(key),
                    token_uri: s("token_uri").unwrap_or_else(|| GOOGLE_TOKEN_URI.to_owned()),
                    file,
                    origin,
                },
                file_project: s("project_id"),
                quota_project: None,
            })
        }
        Some("authorized_user") => Ok(Adc {
            source: GcpSource::AuthorizedUser {
                client_id: s("client_id").ok_or_else(|| missing("client_id"))?,
                client_secret: SecretString::from(
                    s("client_secret").ok_or_else(|| missing("client_secret"))?,
                ),
                refresh_token: SecretString::from(
                    s("refresh_token").ok_or_else(|| missing("refresh_token"))?,
                ),
                token_uri: s("token_uri").unwrap_or_else(|| GOOGLE_TOKEN_URI.to_owned()),
                file,
                origin,
            },
            file_project: s("quota_project_id"),
            quota_project: s("quota_project_id"),
        }),
        other => Err(format!(
            "{} ({origin}) holds credentials of type {}; skiff reads service_account and \
             authorized_user files (`gcloud auth application-default login`)",
            file.display(),
            other.unwrap_or("(none)")
        )),
    }
}

/// An access token from `source`.
pub(crate) async fn fetch(
    client: &reqwest::Client,
    source: &GcpSource,
) -> Result<Expiring<SecretString>, String> {
    let what = source.describe();
    let req = match source {
        GcpSource::ServiceAccount {
            email,
            key_id,
            key,
            token_uri,
            ..
        } => {
            let jwt = assertion(
                key,
                key_id.as_deref(),
                email,
                token_uri,
                CLOUD_PLATFORM,
                SystemTime::now(),
            )?;
            form_post(
                client,
                token_uri,
                &[
                    ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
                    ("assertion", jwt.as_str()),
                ],
            )
        }
        GcpSource::AuthorizedUser {
            client_id,
            client_secret,
            refresh_token,
            token_uri,
            ..
        } => form_post(
            client,
            token_uri,
            &[
                ("grant_type", "refresh_token"),
                ("client_id", client_id.as_str()),
                ("client_secret", client_secret.expose_secret()),
                ("refresh_token", refresh_token.expose_secret()),
            ],
        ),
        GcpSource::Metadata { base } => client
            .get(format!(
                "{base}/computeMetadata/v1/instance/service-accounts/default/token"
            ))
            .header("metadata-flavor", "Google"),
    };
    let timeout = match source {
        // Off Google Cloud the metadata server does not exist: fail fast.
        GcpSource::Metadata { .. } => Duration::from_secs(3),
        _ => Duration::from_secs(30),
    };
    let resp = req.timeout(timeout).send().await.map_err(|e| match source {
        GcpSource::Metadata { .. } => format!(
            "no Google credentials found: GOOGLE_APPLICATION_CREDENTIALS is not set, there is no \
             gcloud application-default login, and {what} did not answer ({}). Run `gcloud auth \
             application-default login`, or set GOOGLE_APPLICATION_CREDENTIALS to a \
             service-account key file",
            crate::http_errors::error_chain(&e)
        ),
        _ => format!(
            "{what}: could not reach the token endpoint: {}",
            crate::http_errors::error_chain(&e)
        ),
    })?;
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap_or(serde_json::Value::Null);
    if !(200..300).contains(&status) {
        let reason = v
            .get("error_description")
            .or_else(|| v.get("error"))
            .and_then(serde_json::Value::as_str)
            .map_or_else(|| text.trim().chars().take(300).collect(), str::to_owned);
        let hint = if matches!(source, GcpSource::AuthorizedUser { .. }) {
            " (run `gcloud auth application-default login` again)"
        } else {
            ""
        };
        return Err(format!(
            "{what}: the token endpoint answered HTTP {status}: {reason}{hint}"
        ));
    }
    let token = v
        .get("access_token")
        .and_then(serde_json::Value::as_str)
        .ok_or_else(|| format!("{what}: the token endpoint answered without access_token"))?;
    let expires_in = v
        .get("expires_in")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(3600);
    Ok(Expiring {
        value: SecretString::from(token.to_owned()),
        expires_at: Some(SystemTime::now() + Duration::from_secs(expires_in)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = include_str!("../../../skiff-testkit/fixtures/cloud/service-account-key.pem");

    fn write(name: &str, v: &serde_json::Value) -> PathBuf {
        let p = std::env::temp_dir().join(format!(
            "skiff-adc-{}-{}-{name}",
            std::process::id(),
            fastrand::u64(..)
        ));
        std::fs::write(&p, v.to_string()).unwrap();
        p
    }

    #[test]
    fn key_files_user_credentials_and_the_metadata_server() {
        let sa = write(
            "sa.json",
            &serde_json::json!({"type": "service_account", "client_email": "sa@p.iam.gserviceaccount.com",
                "private_key": KEY, "private_key_id": "k1", "project_id": "proj", "token_uri": "http://127.0.0.1:1/token"}),
        );
        let adc = resolve(&Vars::from_pairs(&[(
            "GOOGLE_APPLICATION_CREDENTIALS",
            sa.to_str().unwrap(),
        )]))
        .unwrap();
        assert_eq!(adc.file_project.as_deref(), Some("proj"));
        assert!(
            adc.source
                .describe()
                .starts_with("service account sa@p.iam.gserviceaccount.com")
        );
        assert!(!format!("{:?}", adc.source).contains("PRIVATE"));

        let home = std::env::temp_dir().join(format!("skiff-adc-home-{}", fastrand::u64(..)));
        let gcloud = home.join(".config/gcloud");
        std::fs::create_dir_all(&gcloud).unwrap();
        std::fs::write(
            gcloud.join("application_default_credentials.json"),
            serde_json::json!({"type": "authorized_user", "client_id": "c", "client_secret": "s",
                "refresh_token": "r", "quota_project_id": "q"})
            .to_string(),
        )
        .unwrap();
        let adc = resolve(&Vars::from_pairs(&[("HOME", home.to_str().unwrap())])).unwrap();
        assert!(matches!(adc.source, GcpSource::AuthorizedUser { .. }));
        assert_eq!(adc.quota_project.as_deref(), Some("q"));

        let adc = resolve(&Vars::from_pairs(&[("GCE_METADATA_HOST", "127.0.0.1:9")])).unwrap();
        assert_eq!(
            adc.source.describe(),
            "the metadata server (http://127.0.0.1:9)"
        );

        let bad = write("bad.json", &serde_json::json!({"type": "external_account"}));
        let err = resolve(&Vars::from_pairs(&[(
            "GOOGLE_APPLICATION_CREDENTIALS",
            bad.to_str().unwrap(),
        )]))
        .unwrap_err();
        assert!(err.contains("external_account"), "{err}");
        for p in [sa, bad] {
            let _ = std::fs::remove_file(p);
        }
        let _ = std::fs::remove_dir_all(home);
    }
}
