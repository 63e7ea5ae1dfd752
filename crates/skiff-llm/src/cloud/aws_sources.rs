//! The network parts of the AWS credential chain: STS (`AssumeRole`, signed with the source
//! credentials; `AssumeRoleWithWebIdentity`), the IAM Identity Center portal, the container
//! credentials endpoint and IMDSv2.

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::time::{Duration, SystemTime};

use secrecy::{ExposeSecret, SecretString};

use super::aws_credentials::{AwsChain, AwsCredentials, AwsSource, ContainerAuth};
use super::form_value as form;
use super::sigv4::{SigningParams, sha256_hex, sign};
use super::time::parse_rfc3339;
use super::token::Expiring;

/// The whole of one credential request.
const FETCH_TIMEOUT: Duration = Duration::from_secs(30);
/// IMDS answers at once or not at all (not on EC2).
const IMDS_TIMEOUT: Duration = Duration::from_secs(2);

/// What fetching needs besides the source.
pub(crate) struct FetchContext<'a> {
    /// HTTP client.
    pub client: &'a reqwest::Client,
    /// The chain (region, endpoint overrides).
    pub chain: &'a AwsChain,
}

/// Boxed future of a fetch (sources nest).
pub(crate) type FetchFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Expiring<AwsCredentials>, String>> + Send + 'a>>;

impl AwsSource {
    /// Credentials from this source (network for the temporary kinds).
    pub(crate) fn fetch<'a>(&'a self, ctx: &'a FetchContext<'a>) -> FetchFuture<'a> {
        Box::pin(async move {
            match self {
                Self::Static { creds, .. } => Ok(Expiring {
                    value: creds.clone(),
                    expires_at: None,
                }),
                Self::Process { command, profile } => process(command, profile).await,
                Self::Sso {
                    profile,
                    cache_file,
                    sso_region,
                    account_id,
                    role_name,
                } => {
                    sso(
                        ctx,
                        profile,
                        cache_file.as_deref(),
                        sso_region,
                        account_id,
                        role_name,
                    )
                    .await
                }
                Self::AssumeRole {
                    role_arn,
                    session_name,
                    external_id,
                    source,
                    ..
                } => {
                    let base = source.fetch(ctx).await?;
                    assume_role(
                        ctx,
                        &base.value,
                        role_arn,
                        session_name,
                        external_id.as_deref(),
                    )
                    .await
                }
                Self::WebIdentity {
                    token_file,
                    role_arn,
                    session_name,
                    ..
                } => web_identity(ctx, token_file, role_arn, session_name).await,
                Self::Container { url, auth } => container(ctx, url, auth.as_ref()).await,
                Self::Imds { endpoint } => imds(ctx, endpoint).await,
            }
        })
    }
}

/// Run a `credential_process` command (through `sh -c`, as the user wrote it) and read its
/// JSON (`Version: 1`, `AccessKeyId`, `SecretAccessKey`, `SessionToken`, `Expiration`).
async fn process(command: &str, profile: &str) -> Result<Expiring<AwsCredentials>, String> {
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        tokio::process::Command::new("sh")
            .arg("-c")
            .arg(command)
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .map_err(|_| format!("credential_process of AWS profile `{profile}` ran over 60 s"))?
    .map_err(|e| format!("credential_process of AWS profile `{profile}` could not run: {e}"))?;
    if !out.status.success() {
        let err: String = String::from_utf8_lossy(&out.stderr)
            .chars()
            .take(300)
            .collect();
        return Err(format!(
            "credential_process of AWS profile `{profile}` failed ({}): {}",
            out.status,
            err.trim()
        ));
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|e| {
        format!("credential_process of AWS profile `{profile}` did not print JSON: {e}")
    })?;
    from_json(&v, "SessionToken").ok_or_else(|| {
        format!(
            "credential_process of AWS profile `{profile}` printed no AccessKeyId and SecretAccessKey"
        )
    })
}

/// Keys from the JSON the process, container and IMDS sources answer with
/// (`AccessKeyId`, `SecretAccessKey`, `token_field`, `Expiration`).
pub(crate) fn from_json(
    v: &serde_json::Value,
    token_field: &str,
) -> Option<Expiring<AwsCredentials>> {
    let s = |k: &str| {
        v.get(k)
            .and_then(serde_json::Value::as_str)
            .filter(|s| !s.is_empty())
    };
    Some(Expiring {
        value: AwsCredentials {
            access_key_id: s("AccessKeyId")?.to_owned(),
            secret_access_key: SecretString::from(s("SecretAccessKey")?.to_owned()),
            session_token: s(token_field).map(|t| SecretString::from(t.to_owned())),
        },
        expires_at: s("Expiration").and_then(parse_rfc3339),
    })
}

/// `SystemTime` of milliseconds since the epoch (the SSO portal's expiration).
pub(crate) fn from_millis(ms: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_millis(ms)
}

fn sts_url(ctx: &FetchContext<'_>) -> String {
    ctx.chain
        .sts_endpoint
        .clone()
        .unwrap_or_else(|| format!("https://sts.{}.amazonaws.com", ctx.chain.region))
}

/// The text of the first `<tag>…</tag>`.
fn xml_tag<'a>(xml: &'a str, tag: &str) -> Option<&'a str> {
    let open = format!("<{tag}>");
    let start = xml.find(&open)? + open.len();
    let end = xml[start..].find(&format!("</{tag}>"))? + start;
    Some(xml[start..end].trim())
}

/// Undo XML's five entities.
fn xml_unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// Keys of an STS answer (`<Credentials>`), or its error.
fn sts_credentials(
    status: u16,
    body: &str,
    what: &str,
) -> Result<Expiring<AwsCredentials>, String> {
    if !(200..300).contains(&status) {
        let code = xml_tag(body, "Code").unwrap_or("error");
        let message = xml_tag(body, "Message")
            .map(xml_unescape)
            .unwrap_or_default();
        return Err(format!(
            "{what}: STS answered HTTP {status} {code}: {message}"
        ));
    }
    let creds = xml_tag(body, "Credentials")
        .ok_or_else(|| format!("{what}: STS answered without credentials"))?;
    let get = |t: &str| xml_tag(creds, t).map(xml_unescape);
    let (Some(id), Some(secret)) = (get("AccessKeyId"), get("SecretAccessKey")) else {
        return Err(format!(
            "{what}: STS answered without AccessKeyId and SecretAccessKey"
        ));
    };
    Ok(Expiring {
        value: AwsCredentials {
            access_key_id: id,
            secret_access_key: SecretString::from(secret),
            session_token: get("SessionToken").map(SecretString::from),
        },
        expires_at: get("Expiration").as_deref().and_then(parse_rfc3339),
    })
}

async fn text_of(resp: reqwest::Response) -> (u16, String) {
    let status = resp.status().as_u16();
    (status, resp.text().await.unwrap_or_default())
}

fn transport(what: &str, url: &str, e: &reqwest::Error) -> String {
    format!(
        "{what}: could not reach {url}: {}",
        crate::http_errors::error_chain(e)
    )
}

/// `sts:AssumeRole`, signed with `base`.
pub(crate) async fn assume_role(
    ctx: &FetchContext<'_>,
    base: &AwsCredentials,
    role_arn: &str,
    session_name: &str,
    external_id: Option<&str>,
) -> Result<Expiring<AwsCredentials>, String> {
    let what = format!("assuming role {role_arn}");
    let url = format!("{}/", sts_url(ctx));
    let mut body = format!(
        "Action=AssumeRole&Version=2011-06-15&RoleArn={}&RoleSessionName={}",
        form(role_arn),
        form(session_name)
    );
    if let Some(x) = external_id {
        body.push_str(&format!("&ExternalId={}", form(x)));
    }
    let parsed =
        reqwest::Url::parse(&url).map_err(|e| format!("{what}: bad STS URL {url}: {e}"))?;
    let content_type = "application/x-www-form-urlencoded; charset=utf-8";
    let signed = sign(
        "POST",
        &parsed,
        &[("content-type", content_type)],
        &sha256_hex([body.as_bytes()]),
        &SigningParams {
            access_key_id: &base.access_key_id,
            secret_access_key: base.secret(),
            session_token: base.token(),
            region: &ctx.chain.region,
            service: "sts",
            time: SystemTime::now(),
        },
    );
    let mut req = ctx
        .client
        .post(parsed)
        .header("content-type", content_type)
        .body(body)
        .timeout(FETCH_TIMEOUT);
    for (n, v) in signed {
        req = req.header(n, sensitive(&v)?);
    }
    let resp = req.send().await.map_err(|e| transport(&what, &url, &e))?;
    let (status, text) = text_of(resp).await;
    sts_credentials(status, &text, &what)
}

/// `sts:AssumeRoleWithWebIdentity` with the token in `token_file` (read each time: it rotates).
pub(crate) async fn web_identity(
    ctx: &FetchContext<'_>,
    token_file: &Path,
    role_arn: &str,
    session_name: &str,
) -> Result<Expiring<AwsCredentials>, String> {
    let what = format!("web identity for role {role_arn}");
    let token = tokio::fs::read_to_string(token_file).await.map_err(|e| {
        format!(
            "{what}: cannot read the token file {}: {e}",
            token_file.display()
        )
    })?;
    let url = format!("{}/", sts_url(ctx));
    let body = format!(
        "Action=AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn={}&RoleSessionName={}&WebIdentityToken={}",
        form(role_arn),
        form(session_name),
        form(token.trim())
    );
    let resp = ctx
        .client
        .post(&url)
        .header(
            "content-type",
            "application/x-www-form-urlencoded; charset=utf-8",
        )
        .body(body)
        .timeout(FETCH_TIMEOUT)
        .send()
        .await
        .map_err(|e| transport(&what, &url, &e))?;
    let (status, text) = text_of(resp).await;
    sts_credentials(status, &text, &what)
}

/// IAM Identity Center: the token `aws sso login` cached, exchanged at the portal for the
/// role's credentials.
pub(crate) async fn sso(
    ctx: &FetchContext<'_>,
    profile: &str,
    cache_file: Option<&Path>,
    sso_region: &str,
    account_id: &str,
    role_name: &str,
) -> Result<Expiring<AwsCredentials>, String> {
    let login = format!("run `aws sso login --profile {profile}`");
    let Some(cache_file) = cache_file else {
        return Err(format!(
            "AWS profile `{profile}` uses SSO, but HOME is not set"
        ));
    };
    let text = tokio::fs::read_to_string(cache_file).await.map_err(|_| {
        format!(
            "AWS profile `{profile}` uses SSO and there is no cached login ({}): {login}",
            cache_file.display()
        )
    })?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        format!(
            "the SSO token cache {} is not JSON ({e}): {login}",
            cache_file.display()
        )
    })?;
    let token = v
        .get("accessToken")
        .and_then(serde_json::Value::as_str)
        .ok_or_else(|| {
            format!(
                "the SSO token cache {} has no accessToken: {login}",
                cache_file.display()
            )
        })?;
    let expired = v
        .get("expiresAt")
        .and_then(serde_json::Value::as_str)
        .and_then(parse_rfc3339)
        .is_none_or(|at| at <= SystemTime::now());
    if expired {
        return Err(format!(
            "the SSO login of AWS profile `{profile}` has expired: {login}"
        ));
    }
    let base = ctx
        .chain
        .sso_endpoint
        .clone()
        .unwrap_or_else(|| format!("https://portal.sso.{sso_region}.amazonaws.com"));
    let url = format!(
        "{base}/federation/credentials?account_id={}&role_name={}",
        form(account_id),
        form(role_name)
    );
    let what = format!("SSO credentials of AWS profile `{profile}`");
    let resp = ctx
        .client
        .get(&url)
        .header("x-amz-sso_bearer_token", sensitive(token)?)
        .timeout(FETCH_TIMEOUT)
        .send()
        .await
        .map_err(|e| transport(&what, &url, &e))?;
    let (status, text) = text_of(resp).await;
    if status == 401 || status == 403 {
        return Err(format!(
            "{what}: the portal refused the cached login (HTTP {status}): {login}"
        ));
    }
    if !(200..300).contains(&status) {
        return Err(format!(
            "{what}: the portal answered HTTP {status}: {}",
            excerpt(&text)
        ));
    }
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{what}: not JSON: {e}"))?;
    let rc = v
        .get("roleCredentials")
        .ok_or_else(|| format!("{what}: no roleCredentials"))?;
    let s = |k: &str| {
        rc.get(k)
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
    };
    let (Some(id), Some(secret)) = (s("accessKeyId"), s("secretAccessKey")) else {
        return Err(format!("{what}: no accessKeyId and secretAccessKey"));
    };
    Ok(Expiring {
        value: AwsCredentials {
            access_key_id: id,
            secret_access_key: SecretString::from(secret),
            session_token: s("sessionToken").map(SecretString::from),
        },
        expires_at: rc
            .get("expiration")
            .and_then(serde_json::Value::as_u64)
            .map(from_millis),
    })
}

/// The container credentials endpoint (ECS, EKS Pod Identity).
pub(crate) async fn container(
    ctx: &FetchContext<'_>,
    url: &str,
    auth: Option<&ContainerAuth>,
) -> Result<Expiring<AwsCredentials>, String> {
    let what = "container credentials";
    let mut req = ctx.client.get(url).timeout(FETCH_TIMEOUT);
    match auth {
        Some(ContainerAuth::Token(t)) => {
            req = req.header("authorization", sensitive(t.expose_secret())?)
        }
        Some(ContainerAuth::File(f)) => {
            let t = tokio::fs::read_to_string(f)
                .await
                .map_err(|e| format!("{what}: cannot read {}: {e}", f.display()))?;
            req = req.header("authorization", sensitive(t.trim())?);
        }
        None => {}
    }
    let resp = req.send().await.map_err(|e| transport(what, url, &e))?;
    let (status, text) = text_of(resp).await;
    if !(200..300).contains(&status) {
        return Err(format!(
            "{what}: {url} answered HTTP {status}: {}",
            excerpt(&text)
        ));
    }
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{what}: not JSON: {e}"))?;
    from_json(&v, "Token").ok_or_else(|| format!("{what}: no AccessKeyId and SecretAccessKey"))
}

/// IMDSv2: a session token, the instance profile's role, then its credentials.
pub(crate) async fn imds(
    ctx: &FetchContext<'_>,
    endpoint: &str,
) -> Result<Expiring<AwsCredentials>, String> {
    let unreachable = |detail: String| {
        format!(
            "no AWS credentials found: tried the environment (AWS_ACCESS_KEY_ID), the shared \
             config and credentials files (profile `default`), web identity, container \
             credentials and EC2 instance metadata ({detail}). {}",
            super::aws_credentials::HOW
        )
    };
    let token = ctx
        .client
        .put(format!("{endpoint}/latest/api/token"))
        .header("x-aws-ec2-metadata-token-ttl-seconds", "21600")
        .timeout(IMDS_TIMEOUT)
        .send()
        .await
        .map_err(|e| {
            unreachable(format!(
                "{endpoint} did not answer: {}",
                crate::http_errors::error_chain(&e)
            ))
        })?;
    if !token.status().is_success() {
        return Err(unreachable(format!(
            "{endpoint} answered HTTP {}",
            token.status().as_u16()
        )));
    }
    let token = token.text().await.map_err(|e| unreachable(e.to_string()))?;
    let get = |path: String| {
        let req = ctx
            .client
            .get(format!("{endpoint}{path}"))
            .timeout(IMDS_TIMEOUT);
        let token = token.clone();
        async move {
            let resp = req
                .header("x-aws-ec2-metadata-token", sensitive(&token)?)
                .send()
                .await
                .map_err(|e| {
                    format!(
                        "EC2 instance metadata: {}",
                        crate::http_errors::error_chain(&e)
                    )
                })?;
            let (status, text) = text_of(resp).await;
            if status == 404 {
                return Err(
                    "EC2 instance metadata: this instance has no IAM role (instance profile)"
                        .to_owned(),
                );
            }
            if !(200..300).contains(&status) {
                return Err(format!("EC2 instance metadata answered HTTP {status}"));
            }
            Ok(text)
        }
    };
    let roles = get("/latest/meta-data/iam/security-credentials/".to_owned()).await?;
    let role = roles
        .lines()
        .next()
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .ok_or("EC2 instance metadata: this instance has no IAM role (instance profile)")?
        .to_owned();
    let text = get(format!("/latest/meta-data/iam/security-credentials/{role}")).await?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("EC2 instance metadata: credentials are not JSON: {e}"))?;
    from_json(&v, "Token").ok_or_else(|| "EC2 instance metadata: no AccessKeyId".to_owned())
}

fn excerpt(text: &str) -> String {
    text.trim().chars().take(300).collect()
}

/// A header value marked sensitive (never printed by reqwest).
pub(crate) fn sensitive(v: &str) -> Result<reqwest::header::HeaderValue, String> {
    let mut h = reqwest::header::HeaderValue::from_str(v)
        .map_err(|_| "a credential contains characters not allowed in an HTTP header".to_owned())?;
    h.set_sensitive(true);
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sts_answers_and_errors() {
        let ok = "<AssumeRoleResponse><AssumeRoleResult><Credentials>\
                  <AccessKeyId>ASIA1</AccessKeyId><SecretAccessKey>s&amp;1</SecretAccessKey>\
                  <SessionToken>tok</SessionToken><Expiration>2030-01-01T00:00:00Z</Expiration>\
                  </Credentials></AssumeRoleResult></AssumeRoleResponse>";
        let c = sts_credentials(200, ok, "x").unwrap();
        assert_eq!(c.value.access_key_id, "ASIA1");
        assert_eq!(c.value.secret(), "s&1");
        assert_eq!(c.value.token(), Some("tok"));
        assert!(c.expires_at.is_some());
        let err = "<ErrorResponse><Error><Code>AccessDenied</Code><Message>not &lt;allowed&gt;</Message></Error></ErrorResponse>";
        assert_eq!(
            sts_credentials(403, err, "assuming role r").unwrap_err(),
            "assuming role r: STS answered HTTP 403 AccessDenied: not <allowed>"
        );
        assert_eq!(
            form("arn:aws:iam::1:role/A b"),
            "arn%3Aaws%3Aiam%3A%3A1%3Arole%2FA%20b"
        );
    }
}
