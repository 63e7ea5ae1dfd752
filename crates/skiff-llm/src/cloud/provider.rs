//! `CloudProvider`: one streaming model call through a cloud — map the model id, build the
//! cloud's body and URL, authenticate (SigV4, an access token, an API key), send, and read
//! the stream into the same events as the Anthropic API. A credential the server rejects as
//! expired is fetched again once; failures are retried as the Anthropic provider's are.

use std::sync::Arc;
use std::time::SystemTime;

use futures::StreamExt;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use secrecy::{ExposeSecret, SecretString};
use skiff_protocol::{CloudBody, RequestView};
use tokio_util::sync::CancellationToken;

use super::aws_credentials::AwsCredentials;
use super::aws_sources::FetchContext;
use super::azure_credentials;
use super::bedrock::BedrockAuth;
use super::event_stream::BedrockFramer;
use super::foundry::FoundryAuth;
use super::gcp_credentials;
use super::sigv4::{SigningParams, sha256_hex, sign};
use super::token::TokenCache;
use super::vertex::VertexAuth;
use super::{CloudConfig, CloudKind, CloudSummary};
use crate::anthropic::{Body, MessagesSse};
use crate::attempt::{read_events, send};
use crate::error::AttemptError;
use crate::provider::{EventStream, Provider};
use crate::retry::{AttemptStream, Retrying, retrying};
use crate::sse::SseDecoder;
use crate::{LlmError, anthropic::ANTHROPIC_VERSION};

struct Inner {
    config: CloudConfig,
    summary: CloudSummary,
    /// Model calls.
    client: reqwest::Client,
    /// Credential endpoints (any scheme; built on first use: loading the system's CA
    /// certificates costs time that static keys never need).
    auth_client: std::sync::OnceLock<Option<reqwest::Client>>,
    /// Headers of every call (content type, custom headers, the cloud's fixed ones).
    headers: HeaderMap,
    aws: TokenCache<AwsCredentials>,
    token: TokenCache<SecretString>,
}

/// A cloud's Claude as a [`Provider`]. Cheap to clone.
#[derive(Clone)]
pub struct CloudProvider {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for CloudProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CloudProvider")
            .field("cloud", &self.inner.summary.cloud)
            .field("endpoint", &self.inner.summary.endpoint)
            .field("credential", &self.inner.summary.credential)
            .finish_non_exhaustive()
    }
}

impl CloudProvider {
    /// Build the provider and its HTTP clients.
    pub fn new(config: CloudConfig) -> Result<Self, LlmError> {
        let summary = config.summary();
        let client = crate::http::client(
            &summary.endpoint,
            config.connect_timeout,
            crate::http_errors::same_origin_redirects(),
        )?;
        let mut headers = HeaderMap::new();
        headers.insert(
            reqwest::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        let betas = config.common.betas.join(",");
        match &config.kind {
            CloudKind::Bedrock(_) => {
                headers.insert(
                    reqwest::header::ACCEPT,
                    HeaderValue::from_static("application/vnd.amazon.eventstream"),
                );
            }
            CloudKind::Vertex(_) | CloudKind::Foundry(_) => {
                headers.insert(
                    reqwest::header::ACCEPT,
                    HeaderValue::from_static("text/event-stream"),
                );
                if !betas.is_empty() {
                    let v = HeaderValue::from_str(&betas).map_err(|_| {
                        LlmError::Request("anthropic-beta values must be plain ASCII".into())
                    })?;
                    headers.insert("anthropic-beta", v);
                }
            }
        }
        match &config.kind {
            CloudKind::Foundry(f) => {
                headers.insert(
                    "anthropic-version",
                    HeaderValue::from_static(ANTHROPIC_VERSION),
                );
                if let FoundryAuth::ApiKey(k) = &f.auth {
                    headers.insert("x-api-key", secret_header(k.expose_secret())?);
                }
            }
            CloudKind::Bedrock(b) => {
                if let BedrockAuth::ApiKey(k) = &b.auth {
                    headers.insert(
                        reqwest::header::AUTHORIZATION,
                        secret_header(&format!("Bearer {}", k.expose_secret()))?,
                    );
                }
            }
            CloudKind::Vertex(v) => {
                if let VertexAuth::Adc(adc) = &v.auth
                    && let Some(q) = &adc.quota_project
                    && let Ok(h) = HeaderValue::from_str(q)
                {
                    headers.insert("x-goog-user-project", h);
                }
            }
        }
        for (name, value) in &config.common.extra_headers {
            let n = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| LlmError::Request(format!("invalid custom header name `{name}`")))?;
            let mut v = HeaderValue::from_str(value).map_err(|_| {
                LlmError::Request(format!("invalid value for custom header `{name}`"))
            })?;
            v.set_sensitive(true);
            headers.insert(n, v);
        }
        Ok(Self {
            inner: Arc::new(Inner {
                config,
                summary,
                client,
                auth_client: std::sync::OnceLock::new(),
                headers,
                aws: TokenCache::default(),
                token: TokenCache::default(),
            }),
        })
    }

    /// What it is configured with.
    pub fn summary(&self) -> &CloudSummary {
        &self.inner.summary
    }
}

fn secret_header(v: &str) -> Result<HeaderValue, LlmError> {
    let mut h = HeaderValue::from_str(v).map_err(|_| {
        LlmError::Request("the credential contains characters not allowed in an HTTP header".into())
    })?;
    h.set_sensitive(true);
    Ok(h)
}

/// One call's fixed parts.
struct Call {
    url: String,
    /// Bedrock's signing region.
    region: String,
    body: Body,
    /// Hex SHA-256 of the body (SigV4).
    body_sha256: String,
}

impl Provider for CloudProvider {
    fn name(&self) -> &str {
        self.inner.summary.cloud.name()
    }

    /// Vertex AI and Foundry run Anthropic's web search; Bedrock does not.
    fn server_web_search(&self) -> bool {
        !matches!(self.inner.config.kind, CloudKind::Bedrock(_))
    }

    fn stream(&self, request: &RequestView<'_>, cancel: CancellationToken) -> EventStream {
        let inner = Arc::clone(&self.inner);
        let model = inner.config.map_model(request.model);
        let mut request = *request;
        request.stream = true;
        request.model = &model;
        let betas = &inner.config.common.betas;
        let (url, region, cloud_body) = match &inner.config.kind {
            CloudKind::Bedrock(b) => {
                let small = inner.summary.default_small_model == model;
                let region = match (&b.small_model_region, small) {
                    (Some(r), true) => r.clone(),
                    _ => b.region.clone(),
                };
                (
                    b.url(&model, &region),
                    region,
                    CloudBody {
                        anthropic_version: Some(super::bedrock::VERSION),
                        anthropic_beta: betas,
                        omit_model: true,
                        omit_stream: true,
                    },
                )
            }
            CloudKind::Vertex(v) => (
                v.url(&model),
                String::new(),
                CloudBody {
                    anthropic_version: Some(super::vertex::VERSION),
                    omit_model: true,
                    ..CloudBody::default()
                },
            ),
            CloudKind::Foundry(f) => (
                format!("{}/v1/messages", f.base_url),
                String::new(),
                CloudBody::default(),
            ),
        };
        let body = match request.body_chunks_for(&cloud_body) {
            Ok(chunks) => Body::new(chunks),
            Err(e) => {
                let e = LlmError::Request(e.to_string());
                return Box::pin(futures::stream::once(async move { Err(e) }));
            }
        };
        let body_sha256 = match &inner.config.kind {
            CloudKind::Bedrock(b) if matches!(b.auth, BedrockAuth::SigV4(_)) => {
                sha256_hex(body.chunks().iter().map(|c| c.as_ref()))
            }
            _ => String::new(),
        };
        let call = Arc::new(Call {
            url: url.clone(),
            region,
            body,
            body_sha256,
        });
        let retry = Retrying {
            policy: inner.config.common.retry.clone(),
            target: url,
            max_sleep: None,
        };
        let attempt_cancel = cancel.clone();
        let explain = Arc::clone(&inner);
        let stream = retrying(retry, cancel, move || {
            Ok(
                Box::pin(attempt(inner.clone(), call.clone(), attempt_cancel.clone()))
                    as AttemptStream,
            )
        });
        Box::pin(stream.map(move |item| item.map_err(|e| explain.explain(e))))
    }
}

impl Inner {
    /// Name the cloud and the credential source in an authentication failure.
    fn explain(&self, e: LlmError) -> LlmError {
        match e {
            LlmError::Authentication { status, message } => LlmError::CloudAuthentication {
                status,
                cloud: self.summary.cloud.title().to_owned(),
                credential: self.summary.credential.clone(),
                message,
            },
            other => other,
        }
    }

    /// Whether a rejected credential may be fetched again (it is a fetched one).
    fn refreshable(&self) -> bool {
        match &self.config.kind {
            CloudKind::Bedrock(b) => matches!(
                &b.auth,
                BedrockAuth::SigV4(c) if !matches!(c.source, super::aws_credentials::AwsSource::Static { .. })
            ),
            CloudKind::Vertex(v) => matches!(v.auth, VertexAuth::Adc(_)),
            CloudKind::Foundry(f) => matches!(f.auth, FoundryAuth::Entra(_)),
        }
    }

    async fn invalidate(&self) {
        self.aws.invalidate().await;
        self.token.invalidate().await;
    }

    /// The client of the credential endpoints.
    fn auth_client(&self) -> Result<&reqwest::Client, AttemptError> {
        self.auth_client
            .get_or_init(|| {
                crate::http::client(
                    "https://",
                    self.config.connect_timeout,
                    reqwest::redirect::Policy::none(),
                )
                .ok()
            })
            .as_ref()
            .ok_or_else(|| self.credentials_error("cannot build an HTTP client".to_owned()))
    }

    fn credentials_error(&self, message: String) -> AttemptError {
        AttemptError::Credentials {
            cloud: self.summary.cloud.title().to_owned(),
            message,
        }
    }

    /// The request of one attempt, authenticated.
    async fn request(&self, call: &Call) -> Result<reqwest::RequestBuilder, AttemptError> {
        let mut req = self
            .client
            .post(&call.url)
            .headers(self.headers.clone())
            .header(reqwest::header::CONTENT_LENGTH, call.body.len)
            .body(call.body.to_reqwest());
        match &self.config.kind {
            CloudKind::Bedrock(b) => {
                if let BedrockAuth::SigV4(chain) = &b.auth {
                    let ctx = FetchContext {
                        client: self.auth_client()?,
                        chain,
                    };
                    let creds = self
                        .aws
                        .get(|| chain.source.fetch(&ctx))
                        .await
                        .map_err(|m| self.credentials_error(m))?;
                    let url = reqwest::Url::parse(&call.url).map_err(|e| {
                        AttemptError::Transport(format!("bad URL {}: {e}", call.url))
                    })?;
                    let signed = sign(
                        "POST",
                        &url,
                        &[("content-type", "application/json")],
                        &call.body_sha256,
                        &SigningParams {
                            access_key_id: &creds.access_key_id,
                            secret_access_key: creds.secret(),
                            session_token: creds.token(),
                            region: &call.region,
                            service: "bedrock",
                            time: SystemTime::now(),
                        },
                    );
                    for (name, value) in signed {
                        let v = secret_header(&value)
                            .map_err(|e| self.credentials_error(e.to_string()))?;
                        req = req.header(name, v);
                    }
                }
            }
            CloudKind::Vertex(v) => {
                if let VertexAuth::Adc(adc) = &v.auth {
                    let token = self
                        .token
                        .get(|| async {
                            match self.auth_client() {
                                Ok(c) => gcp_credentials::fetch(c, &adc.source).await,
                                Err(e) => Err(e.to_string()),
                            }
                        })
                        .await
                        .map_err(|m| self.credentials_error(m))?;
                    req = req.header(
                        reqwest::header::AUTHORIZATION,
                        secret_header(&format!("Bearer {}", token.expose_secret()))
                            .map_err(|e| self.credentials_error(e.to_string()))?,
                    );
                }
            }
            CloudKind::Foundry(f) => {
                if let FoundryAuth::Entra(source) = &f.auth {
                    let token = self
                        .token
                        .get(|| async {
                            match self.auth_client() {
                                Ok(c) => azure_credentials::fetch(c, source).await,
                                Err(e) => Err(e.to_string()),
                            }
                        })
                        .await
                        .map_err(|m| self.credentials_error(m))?;
                    req = req.header(
                        reqwest::header::AUTHORIZATION,
                        secret_header(&format!("Bearer {}", token.expose_secret()))
                            .map_err(|e| self.credentials_error(e.to_string()))?,
                    );
                }
            }
        }
        Ok(req)
    }
}

/// Whether a 401/403 says the credential expired (fetch it again) rather than that it is wrong.
fn expired(status: u16, message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    status == 401
        || m.contains("expired")
        || m.contains("security token included in the request is invalid")
}

/// One attempt: authenticate, send (once more with a fresh credential when the server says
/// the one used has expired), read the stream.
fn attempt(
    inner: Arc<Inner>,
    call: Arc<Call>,
    cancel: CancellationToken,
) -> impl futures::Stream<Item = Result<crate::provider::ProviderEvent, AttemptError>> + Send + 'static
{
    async_stream::stream! {
        let idle = inner.config.common.idle_timeout;
        let mut fresh = false;
        let resp = loop {
            let req = match inner.request(&call).await {
                Ok(r) => r,
                Err(e) => { yield Err(e); return; }
            };
            match send(req, idle, &cancel).await {
                Ok(resp) => break resp,
                Err(AttemptError::Http { status: status @ (401 | 403), message, .. })
                    if !fresh && inner.refreshable() && expired(status, &message) =>
                {
                    tracing::info!(status, "the cloud rejected the credential; fetching it again");
                    inner.invalidate().await;
                    fresh = true;
                }
                Err(e) => { yield Err(e); return; }
            }
        };
        let bedrock = matches!(inner.config.kind, CloudKind::Bedrock(_));
        if bedrock {
            let events = read_events(resp, idle, cancel, BedrockFramer::default(), MessagesSse::new());
            let mut events = std::pin::pin!(events);
            while let Some(item) = events.next().await {
                yield item;
            }
        } else {
            let events = read_events(resp, idle, cancel, SseDecoder::new(), MessagesSse::new());
            let mut events = std::pin::pin!(events);
            while let Some(item) = events.next().await {
                yield item;
            }
        }
    }
}
