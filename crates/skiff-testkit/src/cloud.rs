//! The mock as a cloud: Amazon Bedrock (`/model/{id}/invoke-with-response-stream`, SigV4
//! checked by AWS's own Python signer, botocore, or a Bedrock API key), Google Vertex AI
//! (`…:streamRawPredict` with access tokens it issued at its `/token` endpoint, for a
//! service-account JWT verified against the key's public half, or a refresh token), and
//! Microsoft Foundry (`/anthropic/v1/messages` with an API key, or Entra ID tokens it issued
//! at `/{tenant}/oauth2/v2.0/token`). Each cloud's body is checked (its `anthropic_version`,
//! no `model` where the URL has it) and turned into a Messages API request for the script.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use bytes::Bytes;
use serde_json::{Value, json};

use crate::sse::Dialect;

/// The test service account's private key (PKCS#8 PEM), to put in a key file.
pub const SERVICE_ACCOUNT_KEY_PEM: &str = include_str!("../fixtures/cloud/service-account-key.pem");
/// Its public key (PKCS#1 DER), what the mock's token endpoint verifies JWTs with.
const SERVICE_ACCOUNT_PUBLIC_DER: &[u8] =
    include_bytes!("../fixtures/cloud/service-account-key.pub.der");

/// The Python with botocore for the SigV4 check: `SKIFF_BOTOCORE_PYTHON`. `None` when it is
/// not set — unless `SKIFF_REQUIRE_BOTOCORE` is set (CI), where that is a test failure.
pub fn botocore_python() -> Option<PathBuf> {
    match std::env::var_os("SKIFF_BOTOCORE_PYTHON").map(PathBuf::from) {
        Some(p) if p.exists() => Some(p),
        _ if std::env::var_os("SKIFF_REQUIRE_BOTOCORE").is_some() => {
            #[allow(clippy::panic)]
            {
                panic!(
                    "SKIFF_REQUIRE_BOTOCORE is set but SKIFF_BOTOCORE_PYTHON does not name a Python \
                     with botocore (.ci/run installs it into target/botocore-venv)"
                )
            }
        }
        _ => None,
    }
}

/// AWS keys the mock Bedrock expects.
#[derive(Debug, Clone)]
pub struct AwsKeys {
    /// Access key id.
    pub access_key_id: String,
    /// Secret access key.
    pub secret_access_key: String,
    /// Session token (temporary credentials).
    pub session_token: Option<String>,
}

/// How the mock authenticates model calls.
#[derive(Debug, Clone)]
pub enum CloudAuth {
    /// Bedrock SigV4: these keys, this region; the signature recomputed by botocore run with
    /// this Python (or, without one, only the scope and signed headers are checked).
    SigV4 {
        /// Expected keys.
        keys: AwsKeys,
        /// Expected signing region.
        region: String,
        /// Python with botocore.
        botocore: Option<PathBuf>,
    },
    /// `Authorization: Bearer <this>` (a Bedrock API key).
    Bearer(String),
    /// `x-api-key: <this>` (a Foundry API key).
    ApiKey(String),
    /// Google access tokens issued at `/token` to this service account (JWT) or for this
    /// refresh token; each lives `ttl`.
    Google {
        /// The service account's email (the JWT's `iss`).
        email: String,
        /// An accepted refresh token (user credentials), if any.
        refresh_token: Option<String>,
        /// Lifetime of the issued tokens.
        ttl: Duration,
    },
    /// Entra ID tokens issued at `/{tenant}/oauth2/v2.0/token` for this client.
    Entra {
        /// Tenant.
        tenant: String,
        /// Client id.
        client_id: String,
        /// Client secret.
        client_secret: String,
    },
    /// No `authorization` header at all (CLAUDE_CODE_SKIP_*_AUTH).
    None,
}

/// Which cloud the mock plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloudKind {
    /// Amazon Bedrock.
    Bedrock,
    /// Google Vertex AI (this project).
    Vertex,
    /// Microsoft Foundry.
    Foundry,
}

/// A cloud for [`crate::MockServerBuilder::cloud`].
#[derive(Debug, Clone)]
pub struct CloudMock {
    /// The cloud.
    pub kind: CloudKind,
    /// How calls authenticate.
    pub auth: CloudAuth,
    /// Vertex AI's expected project.
    pub project: Option<String>,
}

/// What the cloud mock saw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CloudStats {
    /// Tokens issued by the token endpoints.
    pub tokens_issued: usize,
    /// SigV4 signatures botocore recomputed and found equal.
    pub signatures_verified: usize,
    /// Model calls refused, with why.
    pub auth_failures: Vec<String>,
}

struct Issued {
    token: String,
    expires: SystemTime,
    revoked: bool,
}

/// The cloud mock's state.
pub(crate) struct CloudState {
    mock: CloudMock,
    issued: Mutex<Vec<Issued>>,
    stats: Mutex<CloudStats>,
    verifier: tokio::sync::Mutex<Option<Verifier>>,
}

impl std::fmt::Debug for CloudState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CloudState")
            .field("mock", &self.mock)
            .finish_non_exhaustive()
    }
}

/// What to do with a request.
pub(crate) enum Intercept {
    /// Answer with this (token endpoints, refused calls).
    Respond(Response),
    /// A model call: the body as a Messages API request, answered in `dialect`.
    Messages {
        /// The rewritten body.
        body: Bytes,
        /// How to answer.
        dialect: Dialect,
    },
    /// A problem with the request's shape (a violation the test must see).
    Invalid(String),
    /// Not the cloud's: the usual routes.
    Pass,
}

impl CloudState {
    pub(crate) fn new(mock: CloudMock) -> Self {
        Self {
            mock,
            issued: Mutex::new(Vec::new()),
            stats: Mutex::new(CloudStats::default()),
            verifier: tokio::sync::Mutex::new(None),
        }
    }

    pub(crate) fn stats(&self) -> CloudStats {
        self.stats.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Refuse every token issued so far (as if they had expired on the server's side).
    pub(crate) fn revoke_tokens(&self) {
        for t in self
            .issued
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter_mut()
        {
            t.revoked = true;
        }
    }

    fn refuse(&self, why: String) -> Response {
        self.stats
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .auth_failures
            .push(why.clone());
        match self.mock.kind {
            CloudKind::Bedrock => (
                StatusCode::FORBIDDEN,
                [
                    (header::CONTENT_TYPE, "application/json"),
                    (
                        header::HeaderName::from_static("x-amzn-errortype"),
                        "UnrecognizedClientException",
                    ),
                ],
                json!({ "message": why }).to_string(),
            )
                .into_response(),
            CloudKind::Vertex => (
                StatusCode::UNAUTHORIZED,
                [(header::CONTENT_TYPE, "application/json")],
                json!({"error": {"code": 401, "message": why, "status": "UNAUTHENTICATED"}})
                    .to_string(),
            )
                .into_response(),
            CloudKind::Foundry => (
                StatusCode::UNAUTHORIZED,
                [(header::CONTENT_TYPE, "application/json")],
                json!({"type": "error", "error": {"type": "authentication_error", "message": why}})
                    .to_string(),
            )
                .into_response(),
        }
    }

    fn issue(&self, ttl: Duration) -> Response {
        let mut issued = self.issued.lock().unwrap_or_else(|e| e.into_inner());
        let token = format!("mock-token-{}", issued.len() + 1);
        issued.push(Issued {
            token: token.clone(),
            expires: SystemTime::now() + ttl,
            revoked: false,
        });
        drop(issued);
        self.stats
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .tokens_issued += 1;
        json_ok(json!({"access_token": token, "expires_in": ttl.as_secs(), "token_type": "Bearer"}))
    }

    fn token_valid(&self, token: &str) -> Result<(), String> {
        let issued = self.issued.lock().unwrap_or_else(|e| e.into_inner());
        match issued.iter().find(|t| t.token == token) {
            None => Err("the access token was not issued by this server".into()),
            Some(t) if t.revoked => Err(
                "Request had invalid authentication credentials: the access token expired".into(),
            ),
            Some(t) if t.expires <= SystemTime::now() => Err("the access token expired".into()),
            Some(_) => Ok(()),
        }
    }

    /// Route a request (`path` as received, percent-encoding kept).
    pub(crate) async fn intercept(
        &self,
        method: &Method,
        path: &str,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Intercept {
        if *method != Method::POST {
            return Intercept::Pass;
        }
        let header = |n: &str| {
            headers
                .get(n)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
        };
        match (&self.mock.auth, self.mock.kind) {
            (CloudAuth::Google { .. }, _) if path == "/token" => {
                return Intercept::Respond(self.google_token(body));
            }
            (CloudAuth::Entra { .. }, _) if path.ends_with("/oauth2/v2.0/token") => {
                return Intercept::Respond(self.entra_token(path, body));
            }
            _ => {}
        }
        let (model, dialect) = match self.mock.kind {
            CloudKind::Bedrock => {
                let Some(id) = path
                    .strip_suffix("/invoke-with-response-stream")
                    .and_then(|p| p.rsplit_once("/model/"))
                    .map(|(_, id)| id)
                else {
                    return Intercept::Pass;
                };
                (Some(percent_decode(id)), Dialect::Bedrock)
            }
            CloudKind::Vertex => {
                let Some(rest) = path.strip_suffix(":streamRawPredict") else {
                    return Intercept::Pass;
                };
                let Some((prefix, model)) = rest.rsplit_once("/publishers/anthropic/models/")
                else {
                    return Intercept::Pass;
                };
                if let Some(p) = &self.mock.project
                    && !prefix.contains(&format!("/projects/{p}/locations/"))
                {
                    return Intercept::Invalid(format!(
                        "Vertex AI: the path {path} is not in project {p}"
                    ));
                }
                (Some(model.to_owned()), Dialect::Anthropic)
            }
            CloudKind::Foundry => {
                if !path.ends_with("/anthropic/v1/messages") {
                    return Intercept::Pass;
                }
                if header("anthropic-version").is_empty() {
                    return Intercept::Invalid("Foundry: no anthropic-version header".into());
                }
                (None, Dialect::Anthropic)
            }
        };
        if let Err(why) = self.authenticate(method, path, headers, body).await {
            return Intercept::Respond(self.refuse(why));
        }
        let Ok(Value::Object(mut obj)) = serde_json::from_slice::<Value>(body) else {
            return Intercept::Invalid("the body is not a JSON object".into());
        };
        match self.mock.kind {
            CloudKind::Bedrock => {
                if obj.get("anthropic_version").and_then(Value::as_str)
                    != Some("bedrock-2023-05-31")
                {
                    return Intercept::Invalid(
                        "Bedrock: anthropic_version must be \"bedrock-2023-05-31\"".into(),
                    );
                }
                for k in ["model", "stream"] {
                    if obj.contains_key(k) {
                        return Intercept::Invalid(format!(
                            "Bedrock: the body must not have `{k}` (ValidationException: extraneous key [{k}] is not permitted)"
                        ));
                    }
                }
                obj.insert("stream".into(), true.into());
            }
            CloudKind::Vertex => {
                if obj.get("anthropic_version").and_then(Value::as_str) != Some("vertex-2023-10-16")
                {
                    return Intercept::Invalid(
                        "Vertex AI: anthropic_version must be \"vertex-2023-10-16\"".into(),
                    );
                }
                if obj.contains_key("model") {
                    return Intercept::Invalid("Vertex AI: the body must not have `model`".into());
                }
            }
            CloudKind::Foundry => {}
        }
        obj.remove("anthropic_version");
        obj.remove("anthropic_beta");
        if let Some(m) = model {
            obj.insert("model".into(), m.into());
        }
        Intercept::Messages {
            body: Bytes::from(Value::Object(obj).to_string()),
            dialect,
        }
    }

    async fn authenticate(
        &self,
        method: &Method,
        path: &str,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Result<(), String> {
        let header = |n: &str| {
            headers
                .get(n)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let authz = header("authorization");
        match &self.mock.auth {
            CloudAuth::None => match authz {
                None => Ok(()),
                Some(_) => {
                    Err("an authorization header was sent though authentication is skipped".into())
                }
            },
            CloudAuth::Bearer(expected) => match authz {
                Some(a) if a == format!("Bearer {expected}") => Ok(()),
                _ => Err("The bearer token (Bedrock API key) is not valid".into()),
            },
            CloudAuth::ApiKey(expected) => match header("x-api-key") {
                Some(k) if k == *expected => Ok(()),
                _ => Err("invalid x-api-key".into()),
            },
            CloudAuth::Google { .. } | CloudAuth::Entra { .. } => {
                let token = authz
                    .as_deref()
                    .and_then(|a| a.strip_prefix("Bearer "))
                    .ok_or("no bearer token")?;
                self.token_valid(token)
            }
            CloudAuth::SigV4 {
                keys,
                region,
                botocore,
            } => {
                let authz = authz.ok_or("no authorization header (SigV4 expected)")?;
                self.check_sigv4(
                    method,
                    path,
                    headers,
                    body,
                    &authz,
                    keys,
                    region,
                    botocore.as_deref(),
                )
                .await
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn check_sigv4(
        &self,
        method: &Method,
        path: &str,
        headers: &HeaderMap,
        body: &[u8],
        authz: &str,
        keys: &AwsKeys,
        region: &str,
        botocore: Option<&std::path::Path>,
    ) -> Result<(), String> {
        let rest = authz
            .strip_prefix("AWS4-HMAC-SHA256 ")
            .ok_or("the authorization header is not AWS4-HMAC-SHA256")?;
        let field = |name: &str| {
            rest.split(", ")
                .find_map(|p| p.strip_prefix(&format!("{name}=")))
                .map(str::to_owned)
        };
        let credential = field("Credential").ok_or("no Credential")?;
        let signed = field("SignedHeaders").ok_or("no SignedHeaders")?;
        let parts: Vec<&str> = credential.split('/').collect();
        if parts.len() != 5 || parts[0] != keys.access_key_id {
            return Err(format!(
                "The security token included in the request is invalid (access key {})",
                parts.first().unwrap_or(&"")
            ));
        }
        if parts[2] != region || parts[3] != "bedrock" || parts[4] != "aws4_request" {
            return Err(format!(
                "Credential should be scoped to a valid region and service bedrock, not {credential}"
            ));
        }
        let amz_date = headers
            .get("x-amz-date")
            .and_then(|v| v.to_str().ok())
            .ok_or("no x-amz-date")?
            .to_owned();
        if !amz_date.starts_with(parts[1]) {
            return Err("the credential date is not the x-amz-date's".into());
        }
        let sent_token = headers
            .get("x-amz-security-token")
            .and_then(|v| v.to_str().ok());
        if sent_token != keys.session_token.as_deref() {
            return Err("The security token included in the request is invalid".into());
        }
        for needed in ["host", "x-amz-date"] {
            if !signed.split(';').any(|h| h == needed) {
                return Err(format!("SignedHeaders lacks {needed}"));
            }
        }
        if keys.session_token.is_some() && !signed.split(';').any(|h| h == "x-amz-security-token") {
            return Err("SignedHeaders lacks x-amz-security-token".into());
        }
        let Some(python) = botocore else {
            return Ok(());
        };
        let signed_headers: Vec<(String, String)> = signed
            .split(';')
            .map(|h| {
                (
                    h.to_owned(),
                    headers
                        .get(h)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or_default()
                        .to_owned(),
                )
            })
            .collect();
        let host = headers
            .get("host")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("127.0.0.1");
        let request = json!({
            "method": method.as_str(),
            "url": format!("http://{host}{path}"),
            "headers": signed_headers,
            "body_b64": base64::engine::general_purpose::STANDARD.encode(body),
            "access_key": keys.access_key_id,
            "secret_key": keys.secret_access_key,
            "token": keys.session_token,
            "region": region,
            "service": "bedrock",
            "amz_date": amz_date,
        });
        let mut verifier = self.verifier.lock().await;
        if verifier.is_none() {
            *verifier = Some(Verifier::spawn(python)?);
        }
        let answer = match verifier.as_mut() {
            Some(v) => v.ask(&request).await?,
            None => return Err("no verifier".into()),
        };
        let expected = answer
            .get("authorization")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if expected != authz {
            let canonical = answer
                .get("canonical_request")
                .and_then(Value::as_str)
                .unwrap_or_default();
            return Err(format!(
                "The request signature we calculated does not match the signature you provided \
                 (botocore: {expected}; canonical request:\n{canonical})"
            ));
        }
        self.stats
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .signatures_verified += 1;
        Ok(())
    }

    /// Google's token endpoint: a JWT-bearer grant verified with the service account's public
    /// key, or a refresh-token grant.
    fn google_token(&self, body: &[u8]) -> Response {
        let CloudAuth::Google {
            email,
            refresh_token,
            ttl,
        } = &self.mock.auth
        else {
            return oauth_error("invalid_request", "not a Google mock");
        };
        let form = parse_form(body);
        let get = |k: &str| form.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        match get("grant_type") {
            Some("urn:ietf:params:oauth:grant-type:jwt-bearer") => {
                match verify_jwt(get("assertion").unwrap_or_default(), email) {
                    Ok(()) => self.issue(*ttl),
                    Err(why) => oauth_error("invalid_grant", &why),
                }
            }
            Some("refresh_token")
                if refresh_token.is_some() && get("refresh_token") == refresh_token.as_deref() =>
            {
                self.issue(*ttl)
            }
            _ => oauth_error("invalid_grant", "unsupported grant or bad refresh token"),
        }
    }

    /// Entra ID's token endpoint: client credentials.
    fn entra_token(&self, path: &str, body: &[u8]) -> Response {
        let CloudAuth::Entra {
            tenant,
            client_id,
            client_secret,
        } = &self.mock.auth
        else {
            return oauth_error("invalid_request", "not an Entra mock");
        };
        let form = parse_form(body);
        let get = |k: &str| form.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        if path != format!("/{tenant}/oauth2/v2.0/token") {
            return oauth_error("invalid_tenant", "unknown tenant");
        }
        if get("grant_type") != Some("client_credentials")
            || get("client_id") != Some(client_id)
            || get("client_secret") != Some(client_secret)
        {
            return oauth_error(
                "invalid_client",
                "AADSTS7000215: Invalid client secret provided",
            );
        }
        if get("scope") != Some("https://cognitiveservices.azure.com/.default") {
            return oauth_error("invalid_scope", "unexpected scope");
        }
        self.issue(Duration::from_secs(3600))
    }
}

/// Check a service-account assertion: RS256 over `header.claims` with the test key's public
/// half, `iss`, the `aud` of this endpoint, the cloud-platform scope, a one-hour lifetime
/// that includes now.
fn verify_jwt(jwt: &str, email: &str) -> Result<(), String> {
    use ring::signature::{RSA_PKCS1_2048_8192_SHA256, UnparsedPublicKey};
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let parts: Vec<&str> = jwt.split('.').collect();
    let [h, c, s] = parts.as_slice() else {
        return Err("the assertion is not a JWT".into());
    };
    let sig = b64.decode(s).map_err(|_| "bad signature encoding")?;
    UnparsedPublicKey::new(&RSA_PKCS1_2048_8192_SHA256, SERVICE_ACCOUNT_PUBLIC_DER)
        .verify(format!("{h}.{c}").as_bytes(), &sig)
        .map_err(|_| "Invalid JWT Signature.")?;
    let header: Value = serde_json::from_slice(&b64.decode(h).map_err(|_| "bad header")?)
        .map_err(|_| "bad header JSON")?;
    let claims: Value = serde_json::from_slice(&b64.decode(c).map_err(|_| "bad claims")?)
        .map_err(|_| "bad claims JSON")?;
    if header["alg"] != "RS256" {
        return Err("alg must be RS256".into());
    }
    if claims["iss"] != email {
        return Err(format!("iss {} is not {email}", claims["iss"]));
    }
    if !claims["aud"]
        .as_str()
        .is_some_and(|a| a.ends_with("/token"))
    {
        return Err("aud must be the token URI".into());
    }
    if claims["scope"] != "https://www.googleapis.com/auth/cloud-platform" {
        return Err("scope must be cloud-platform".into());
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (iat, exp) = (
        claims["iat"].as_u64().unwrap_or(0),
        claims["exp"].as_u64().unwrap_or(0),
    );
    if exp <= iat || exp - iat > 3600 || iat > now + 300 || exp < now {
        return Err("Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe".into());
    }
    Ok(())
}

fn oauth_error(code: &str, description: &str) -> Response {
    (
        StatusCode::BAD_REQUEST,
        [(header::CONTENT_TYPE, "application/json")],
        json!({"error": code, "error_description": description}).to_string(),
    )
        .into_response()
}

fn json_ok(v: Value) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], v.to_string()).into_response()
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16)
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(if b[i] == b'+' { b' ' } else { b[i] });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn parse_form(body: &[u8]) -> Vec<(String, String)> {
    String::from_utf8_lossy(body)
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect()
}

/// botocore in a Python process, one JSON line per question.
struct Verifier {
    stdin: tokio::process::ChildStdin,
    stdout: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
    _child: tokio::process::Child,
}

impl Verifier {
    fn spawn(python: &std::path::Path) -> Result<Self, String> {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/python/sigv4_verify.py");
        let mut child = tokio::process::Command::new(python)
            .arg(script)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", python.display()))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err("the verifier has no pipes".into());
        };
        use tokio::io::AsyncBufReadExt;
        Ok(Self {
            stdin,
            stdout: tokio::io::BufReader::new(stdout).lines(),
            _child: child,
        })
    }

    async fn ask(&mut self, request: &Value) -> Result<Value, String> {
        use tokio::io::AsyncWriteExt;
        let line = format!("{request}\n");
        self.stdin
            .write_all(line.as_bytes())
            .await
            .map_err(|e| format!("the botocore verifier died: {e}"))?;
        let answer = self
            .stdout
            .next_line()
            .await
            .map_err(|e| format!("the botocore verifier: {e}"))?
            .ok_or("the botocore verifier ended (is botocore installed?)")?;
        serde_json::from_str(&answer)
            .map_err(|e| format!("the botocore verifier said {answer}: {e}"))
    }
}
