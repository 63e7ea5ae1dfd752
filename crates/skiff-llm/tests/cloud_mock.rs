//! The cloud providers against the test kit's cloud mock, which checks authentication for
//! real: Bedrock's SigV4 recomputed by AWS's own signer (botocore), its event stream (a
//! corrupted CRC, exceptions), Vertex AI's access tokens from a service-account JWT verified
//! with the key's public half and refreshed when they expire, Foundry's API key and Entra ID
//! tokens, and errors that name the credential source.
//!
//! The SigV4 comparison needs botocore (`SKIFF_BOTOCORE_PYTHON`, installed by `.ci/run`);
//! without it those tests say so and stop, unless `SKIFF_REQUIRE_BOTOCORE` is set, where
//! they fail.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::time::Duration;

use futures::StreamExt;
use skiff_llm::cloud::{Cloud, CloudConfig, CloudProvider};
use skiff_llm::{CancellationToken, LlmError, Provider, ProviderEvent, RetryPolicy, complete};
use skiff_protocol::script::{Fault, ScriptTurn};
use skiff_protocol::{ContentBlock, Message, MessagesRequest};
use skiff_testkit::MockServer;
use skiff_testkit::cloud::{AwsKeys, CloudAuth, CloudKind, CloudMock, botocore_python};

const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYzSECRETKEY";

fn keys() -> AwsKeys {
    AwsKeys {
        access_key_id: "ASIAMOCKACCESSKEY".into(),
        secret_access_key: SECRET.into(),
        session_token: Some("IQoJb3JpZ2luX2VjEMOCK//session+token=".into()),
    }
}

fn fast() -> RetryPolicy {
    RetryPolicy {
        max_retries: 2,
        base_delay: Duration::from_millis(5),
        rate_limit_base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
        ..RetryPolicy::default()
    }
}

fn provider(cloud: Cloud, vars: &[(&str, &str)]) -> CloudProvider {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .chain([("HOME".to_owned(), "/nonexistent".to_owned())])
        .collect();
    let mut cfg = CloudConfig::from_lookup(cloud, |k| map.get(k).cloned()).unwrap();
    cfg.set_retry(fast());
    CloudProvider::new(cfg).unwrap()
}

fn request(model: &str) -> MessagesRequest {
    let mut r = MessagesRequest::new(model, 256, vec![Message::user_text("hi")]);
    r.stream = true;
    r
}

async fn text_of(p: &CloudProvider, model: &str) -> Result<String, LlmError> {
    let msg = complete(p.stream(&request(model).view(), CancellationToken::new())).await?;
    Ok(msg
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect())
}

fn bedrock_mock(botocore: Option<std::path::PathBuf>) -> CloudMock {
    CloudMock {
        kind: CloudKind::Bedrock,
        auth: CloudAuth::SigV4 {
            keys: keys(),
            region: "us-west-2".into(),
            botocore,
        },
        project: None,
    }
}

fn bedrock_vars(url: &str) -> Vec<(&'static str, String)> {
    let k = keys();
    vec![
        ("AWS_REGION", "us-west-2".into()),
        ("AWS_ACCESS_KEY_ID", k.access_key_id),
        ("AWS_SECRET_ACCESS_KEY", k.secret_access_key),
        ("AWS_SESSION_TOKEN", k.session_token.unwrap()),
        ("ANTHROPIC_BEDROCK_BASE_URL", url.to_owned()),
    ]
}

fn as_refs<'a>(v: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    v.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

#[tokio::test]
#[ignore = "needs botocore (.ci/run installs it into target/botocore-venv and sets SKIFF_BOTOCORE_PYTHON); run with -- --include-ignored"]
async fn bedrock_sigv4_matches_botocore_for_profile_ids_and_arns() {
    let python = botocore_python()
        .expect("SKIFF_BOTOCORE_PYTHON must name a Python with botocore (.ci/run installs one)");
    let server = MockServer::builder()
        .cloud(bedrock_mock(Some(python)))
        .turn(ScriptTurn::text("signed and streamed"))
        .turn(ScriptTurn::text("an ARN too"))
        .start()
        .await
        .unwrap();
    let vars = bedrock_vars(&server.url());
    let p = provider(Cloud::Bedrock, &as_refs(&vars));
    // An alias-resolved id: mapped to the inference profile of the region.
    assert_eq!(
        text_of(&p, "claude-sonnet-4-5").await.unwrap(),
        "signed and streamed"
    );
    // An application inference profile ARN: `:` and `/` in the path, encoded twice in the
    // canonical request.
    let arn = "arn:aws:bedrock:us-west-2:123456789012:application-inference-profile/a1b2c3";
    assert_eq!(text_of(&p, arn).await.unwrap(), "an ARN too");
    let stats = server.cloud_stats();
    assert_eq!(stats.signatures_verified, 2, "{stats:?}");
    let reqs = server.requests();
    assert_eq!(
        reqs[0].path,
        "/model/us.anthropic.claude-sonnet-4-5-20250929-v1:0/invoke-with-response-stream"
    );
    assert!(
        reqs[1]
            .path
            .contains("application-inference-profile%2Fa1b2c3")
    );
    // The mock refuses a body with `model` or `stream`, or without
    // `anthropic_version: "bedrock-2023-05-31"` (a violation fails the test); what it records
    // is the request as the Messages API would have it, the model from the URL.
    assert_eq!(reqs[1].body["model"], arn);
}

#[tokio::test]
#[ignore = "needs botocore (.ci/run installs it into target/botocore-venv and sets SKIFF_BOTOCORE_PYTHON); run with -- --include-ignored"]
async fn bedrock_wrong_secret_is_refused_by_botocore_and_the_error_names_the_source() {
    let python = botocore_python()
        .expect("SKIFF_BOTOCORE_PYTHON must name a Python with botocore (.ci/run installs one)");
    let server = MockServer::builder()
        .cloud(bedrock_mock(Some(python)))
        .turn(ScriptTurn::text("never"))
        .start()
        .await
        .unwrap();
    let mut vars = bedrock_vars(&server.url());
    vars[2].1 = "not-the-secret".into();
    let p = provider(Cloud::Bedrock, &as_refs(&vars));
    let err = text_of(&p, "claude-sonnet-4-5").await.unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, LlmError::CloudAuthentication { status: 403, .. }),
        "{err:?}"
    );
    assert!(
        text.contains("Amazon Bedrock") && text.contains("signature we calculated"),
        "{text}"
    );
    assert!(text.contains("environment (AWS_ACCESS_KEY_ID"), "{text}");
    assert!(
        !text.contains("not-the-secret") && !text.contains(SECRET),
        "{text}"
    );
}

#[tokio::test]
async fn bedrock_wrong_key_id_names_the_credential_source() {
    let server = MockServer::builder()
        .cloud(bedrock_mock(None))
        .turn(ScriptTurn::text("never"))
        .start()
        .await
        .unwrap();
    let mut vars = bedrock_vars(&server.url());
    vars[1].1 = "AKIAOTHER".into();
    let p = provider(Cloud::Bedrock, &as_refs(&vars));
    let err = text_of(&p, "claude-sonnet-4-5").await.unwrap_err();
    assert!(
        err.to_string().contains("credentials came from environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN)"),
        "{err}"
    );
    assert_eq!(server.request_count(), 1, "a 403 is not retried");
}

#[tokio::test]
async fn bedrock_corrupted_crc_is_a_clear_error_without_garbage_text() {
    let server = MockServer::builder()
        .cloud(bedrock_mock(None))
        .turn(ScriptTurn::text("good start").with_fault(Fault::Malformed { after_events: 3 }))
        .start()
        .await
        .unwrap();
    let vars = bedrock_vars(&server.url());
    let p = provider(Cloud::Bedrock, &as_refs(&vars));
    let mut s = p.stream(
        &request("claude-sonnet-4-5").view(),
        CancellationToken::new(),
    );
    let mut seen = String::new();
    let mut error = None;
    while let Some(item) = s.next().await {
        match item {
            Ok(ev) => seen.push_str(&format!("{ev:?}")),
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    let err = error.expect("the corrupted frame fails the call");
    let text = err.to_string();
    assert!(
        text.contains("CRC mismatch") && text.contains("Bedrock event stream"),
        "{text}"
    );
    assert!(!seen.contains("GARBAGE"), "{seen}");
}

#[tokio::test]
async fn bedrock_exceptions_are_retried_like_the_api_overload() {
    let server = MockServer::builder()
        .cloud(bedrock_mock(None))
        .turn(
            ScriptTurn::text("after the retry").with_fault(Fault::ErrorEvent {
                after_events: 1,
                error_type: "overloaded_error".into(),
                message: "Bedrock is unable to process your request.".into(),
            }),
        )
        .start()
        .await
        .unwrap();
    let vars = bedrock_vars(&server.url());
    let p = provider(Cloud::Bedrock, &as_refs(&vars));
    let mut s = p.stream(
        &request("claude-sonnet-4-5").view(),
        CancellationToken::new(),
    );
    let mut retried = Vec::new();
    let mut done = None;
    while let Some(item) = s.next().await {
        match item.unwrap() {
            ProviderEvent::Retry(n) => retried.push(n.cause.clone()),
            ProviderEvent::Done(m) => done = Some(m),
            _ => {}
        }
    }
    assert_eq!(retried.len(), 1, "{retried:?}");
    assert!(
        retried[0].contains("serviceUnavailableException"),
        "{retried:?}"
    );
    assert!(done.is_some());
}

#[tokio::test]
async fn bedrock_api_key_is_a_bearer_token() {
    let server = MockServer::builder()
        .cloud(CloudMock {
            kind: CloudKind::Bedrock,
            auth: CloudAuth::Bearer("ABSKbedrockapikey".into()),
            project: None,
        })
        .turn(ScriptTurn::text("keyed"))
        .start()
        .await
        .unwrap();
    let url = server.url();
    let p = provider(
        Cloud::Bedrock,
        &[
            ("AWS_BEARER_TOKEN_BEDROCK", "ABSKbedrockapikey"),
            ("AWS_REGION", "eu-west-1"),
            ("ANTHROPIC_BEDROCK_BASE_URL", &url),
        ],
    );
    assert_eq!(text_of(&p, "claude-haiku-4-5").await.unwrap(), "keyed");
    assert!(
        server.requests()[0]
            .path
            .contains("/model/eu.anthropic.claude-haiku-4-5")
    );
}

fn service_account_file(token_uri: &str) -> tempfile::NamedTempFile {
    let f = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        f.path(),
        serde_json::json!({
            "type": "service_account",
            "project_id": "from-key-file",
            "private_key_id": "0123abcd",
            "private_key": skiff_testkit::cloud::SERVICE_ACCOUNT_KEY_PEM,
            "client_email": "skiff-test@from-key-file.iam.gserviceaccount.com",
            "token_uri": token_uri,
        })
        .to_string(),
    )
    .unwrap();
    f
}

fn vertex_mock(ttl: Duration) -> CloudMock {
    CloudMock {
        kind: CloudKind::Vertex,
        auth: CloudAuth::Google {
            email: "skiff-test@from-key-file.iam.gserviceaccount.com".into(),
            refresh_token: None,
            ttl,
        },
        project: Some("from-key-file".into()),
    }
}

#[tokio::test]
async fn vertex_service_account_jwt_is_verified_and_tokens_are_cached() {
    let server = MockServer::builder()
        .cloud(vertex_mock(Duration::from_secs(3600)))
        .turn(ScriptTurn::text("one"))
        .turn(ScriptTurn::text("two"))
        .start()
        .await
        .unwrap();
    let key = service_account_file(&format!("{}/token", server.url()));
    let url = format!("{}/v1", server.url());
    let p = provider(
        Cloud::Vertex,
        &[
            (
                "GOOGLE_APPLICATION_CREDENTIALS",
                key.path().to_str().unwrap(),
            ),
            ("CLOUD_ML_REGION", "us-east5"),
            ("ANTHROPIC_VERTEX_BASE_URL", &url),
        ],
    );
    assert_eq!(text_of(&p, "claude-sonnet-4-5").await.unwrap(), "one");
    assert_eq!(text_of(&p, "claude-sonnet-4-5").await.unwrap(), "two");
    assert_eq!(server.cloud_stats().tokens_issued, 1, "the token is reused");
    let reqs = server.requests();
    let call = reqs
        .iter()
        .find(|r| r.path.ends_with(":streamRawPredict"))
        .unwrap();
    assert_eq!(
        call.path,
        "/v1/projects/from-key-file/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict"
    );
    // The mock refuses a body with `model` or without `anthropic_version:
    // "vertex-2023-10-16"`; it records the request with the model from the URL.
    assert_eq!(call.body["model"], "claude-sonnet-4-5@20250929");
}

#[tokio::test]
async fn vertex_tokens_are_refreshed_before_they_expire_and_after_the_server_expires_them() {
    // Tokens that live less than the refresh margin: each call fetches a fresh one.
    let server = MockServer::builder()
        .cloud(vertex_mock(Duration::from_secs(60)))
        .turns([ScriptTurn::text("a"), ScriptTurn::text("b")])
        .start()
        .await
        .unwrap();
    let key = service_account_file(&format!("{}/token", server.url()));
    let url = format!("{}/v1", server.url());
    let vars = [
        (
            "GOOGLE_APPLICATION_CREDENTIALS",
            key.path().to_str().unwrap(),
        ),
        ("ANTHROPIC_VERTEX_BASE_URL", url.as_str()),
    ];
    let p = provider(Cloud::Vertex, &vars);
    text_of(&p, "claude-haiku-4-5").await.unwrap();
    text_of(&p, "claude-haiku-4-5").await.unwrap();
    assert_eq!(server.cloud_stats().tokens_issued, 2);

    // A long-lived token the server stops accepting: one 401, a new token, the same call.
    let server = MockServer::builder()
        .cloud(vertex_mock(Duration::from_secs(3600)))
        .turns([ScriptTurn::text("a"), ScriptTurn::text("b")])
        .start()
        .await
        .unwrap();
    let key = service_account_file(&format!("{}/token", server.url()));
    let url = format!("{}/v1", server.url());
    let vars = [
        (
            "GOOGLE_APPLICATION_CREDENTIALS",
            key.path().to_str().unwrap(),
        ),
        ("ANTHROPIC_VERTEX_BASE_URL", url.as_str()),
    ];
    let p = provider(Cloud::Vertex, &vars);
    assert_eq!(text_of(&p, "claude-haiku-4-5").await.unwrap(), "a");
    server.revoke_cloud_tokens();
    assert_eq!(text_of(&p, "claude-haiku-4-5").await.unwrap(), "b");
    let stats = server.cloud_stats();
    assert_eq!(stats.tokens_issued, 2, "{stats:?}");
    assert_eq!(stats.auth_failures.len(), 1, "{stats:?}");
}

#[tokio::test]
async fn vertex_jwt_signed_with_another_key_is_refused_with_the_source_named() {
    let server = MockServer::builder()
        .cloud(CloudMock {
            kind: CloudKind::Vertex,
            auth: CloudAuth::Google {
                email: "someone-else@p.iam.gserviceaccount.com".into(),
                refresh_token: None,
                ttl: Duration::from_secs(3600),
            },
            project: None,
        })
        .turn(ScriptTurn::text("never"))
        .start()
        .await
        .unwrap();
    let key = service_account_file(&format!("{}/token", server.url()));
    let url = format!("{}/v1", server.url());
    let p = provider(
        Cloud::Vertex,
        &[
            (
                "GOOGLE_APPLICATION_CREDENTIALS",
                key.path().to_str().unwrap(),
            ),
            ("ANTHROPIC_VERTEX_PROJECT_ID", "p"),
            ("ANTHROPIC_VERTEX_BASE_URL", &url),
        ],
    );
    let err = text_of(&p, "claude-sonnet-4-5").await.unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, LlmError::Credentials { .. }), "{err:?}");
    assert!(
        text.contains("service account skiff-test@from-key-file.iam.gserviceaccount.com"),
        "{text}"
    );
    assert!(text.contains("HTTP 400") && text.contains("iss"), "{text}");
}

#[tokio::test]
async fn foundry_api_key_and_entra_tokens() {
    let server = MockServer::builder()
        .cloud(CloudMock {
            kind: CloudKind::Foundry,
            auth: CloudAuth::ApiKey("foundry-key-123".into()),
            project: None,
        })
        .turn(ScriptTurn::text("by key"))
        .start()
        .await
        .unwrap();
    let url = format!("{}/anthropic", server.url());
    let p = provider(
        Cloud::Foundry,
        &[
            ("ANTHROPIC_FOUNDRY_API_KEY", "foundry-key-123"),
            ("ANTHROPIC_FOUNDRY_BASE_URL", &url),
        ],
    );
    assert_eq!(text_of(&p, "claude-sonnet-4-5").await.unwrap(), "by key");
    let body: serde_json::Value = serde_json::from_slice(&server.requests()[0].raw_body).unwrap();
    assert_eq!(
        body["model"], "claude-sonnet-4-5",
        "deployment names are the model ids"
    );

    let server = MockServer::builder()
        .cloud(CloudMock {
            kind: CloudKind::Foundry,
            auth: CloudAuth::Entra {
                tenant: "tenant-1".into(),
                client_id: "app-1".into(),
                client_secret: "entra-secret".into(),
            },
            project: None,
        })
        .turns([ScriptTurn::text("by token"), ScriptTurn::text("again")])
        .start()
        .await
        .unwrap();
    let url = format!("{}/anthropic", server.url());
    let authority = server.url();
    let p = provider(
        Cloud::Foundry,
        &[
            ("ANTHROPIC_FOUNDRY_BASE_URL", &url),
            ("AZURE_TENANT_ID", "tenant-1"),
            ("AZURE_CLIENT_ID", "app-1"),
            ("AZURE_CLIENT_SECRET", "entra-secret"),
            ("AZURE_AUTHORITY_HOST", &authority),
        ],
    );
    assert_eq!(text_of(&p, "claude-sonnet-4-5").await.unwrap(), "by token");
    assert_eq!(text_of(&p, "claude-sonnet-4-5").await.unwrap(), "again");
    assert_eq!(server.cloud_stats().tokens_issued, 1);
}

#[tokio::test]
async fn skipped_auth_sends_no_credentials() {
    let server = MockServer::builder()
        .cloud(CloudMock {
            kind: CloudKind::Bedrock,
            auth: CloudAuth::None,
            project: None,
        })
        .turn(ScriptTurn::text("gateway"))
        .start()
        .await
        .unwrap();
    let url = server.url();
    let p = provider(
        Cloud::Bedrock,
        &[
            ("CLAUDE_CODE_SKIP_BEDROCK_AUTH", "1"),
            ("AWS_ACCESS_KEY_ID", "AKIAIGNORED"),
            ("AWS_SECRET_ACCESS_KEY", "ignored"),
            ("ANTHROPIC_BEDROCK_BASE_URL", &url),
        ],
    );
    assert_eq!(text_of(&p, "claude-sonnet-4-5").await.unwrap(), "gateway");
}

/// Temporary keys as the AWS credential endpoints answer them, expiring in `secs`.
fn temporary_keys_json(secs: u64) -> String {
    let k = keys();
    let exp = std::time::SystemTime::now() + Duration::from_secs(secs);
    let exp = httpdate_rfc3339(exp);
    serde_json::json!({
        "AccessKeyId": k.access_key_id,
        "SecretAccessKey": k.secret_access_key,
        "Token": k.session_token,
        "Expiration": exp,
    })
    .to_string()
}

/// RFC 3339 of a time (UTC, seconds).
fn httpdate_rfc3339(t: std::time::SystemTime) -> String {
    let secs = t.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // civil_from_days
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[tokio::test]
async fn bedrock_container_credentials_are_fetched_and_refreshed_before_they_expire() {
    use skiff_testkit::{Canned, CannedServer};
    // Keys that expire within the refresh margin: fetched again for the second call.
    let creds = CannedServer::start(vec![Canned::json(200, temporary_keys_json(60))])
        .await
        .unwrap();
    let server = MockServer::builder()
        .cloud(bedrock_mock(botocore_python()))
        .turns([ScriptTurn::text("first"), ScriptTurn::text("second")])
        .start()
        .await
        .unwrap();
    let full_uri = format!("{}/v2/credentials/task", creds.url());
    let url = server.url();
    let p = provider(
        Cloud::Bedrock,
        &[
            ("AWS_REGION", "us-west-2"),
            ("AWS_CONTAINER_CREDENTIALS_FULL_URI", &full_uri),
            ("AWS_CONTAINER_AUTHORIZATION_TOKEN", "container-auth"),
            ("ANTHROPIC_BEDROCK_BASE_URL", &url),
        ],
    );
    assert_eq!(text_of(&p, "claude-sonnet-4-5").await.unwrap(), "first");
    assert_eq!(text_of(&p, "claude-sonnet-4-5").await.unwrap(), "second");
    assert_eq!(creds.paths().len(), 2, "{:?}", creds.paths());
}

#[tokio::test]
async fn bedrock_imds_web_identity_sso_and_assumed_roles() {
    use skiff_testkit::{Canned, CannedServer};
    let server = MockServer::builder()
        .cloud(bedrock_mock(botocore_python()))
        .repeat(true)
        .turn(ScriptTurn::text("ok"))
        .start()
        .await
        .unwrap();
    let url = server.url();
    let k = keys();
    let sts_xml = format!(
        "<R><Result><Credentials><AccessKeyId>{}</AccessKeyId><SecretAccessKey>{}</SecretAccessKey>\
         <SessionToken>{}</SessionToken><Expiration>2099-01-01T00:00:00Z</Expiration></Credentials></Result></R>",
        k.access_key_id,
        k.secret_access_key,
        k.session_token.clone().unwrap().replace('&', "&amp;")
    );

    // IMDSv2: a session token, the role's name, its keys.
    let imds = CannedServer::start(vec![
        Canned::json(200, "imds-session-token"),
        Canned::json(200, "my-instance-role\n"),
        Canned::json(200, temporary_keys_json(3600)),
    ])
    .await
    .unwrap();
    let endpoint = imds.url();
    let p = provider(
        Cloud::Bedrock,
        &[
            ("AWS_REGION", "us-west-2"),
            ("AWS_EC2_METADATA_SERVICE_ENDPOINT", &endpoint),
            ("ANTHROPIC_BEDROCK_BASE_URL", &url),
        ],
    );
    assert_eq!(text_of(&p, "claude-sonnet-4-5").await.unwrap(), "ok");
    assert_eq!(
        imds.paths(),
        [
            "/latest/api/token",
            "/latest/meta-data/iam/security-credentials/",
            "/latest/meta-data/iam/security-credentials/my-instance-role"
        ]
    );

    // Web identity: the token file's content exchanged at STS.
    let sts = CannedServer::start(vec![Canned {
        status: 200,
        content_type: "text/xml".into(),
        body: sts_xml.clone().into(),
    }])
    .await
    .unwrap();
    let token_file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(token_file.path(), "eyJ.oidc.token").unwrap();
    let sts_url = sts.url();
    let p = provider(
        Cloud::Bedrock,
        &[
            ("AWS_REGION", "us-west-2"),
            (
                "AWS_WEB_IDENTITY_TOKEN_FILE",
                token_file.path().to_str().unwrap(),
            ),
            ("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/ci"),
            ("AWS_ENDPOINT_URL_STS", &sts_url),
            ("ANTHROPIC_BEDROCK_BASE_URL", &url),
        ],
    );
    assert_eq!(text_of(&p, "claude-sonnet-4-5").await.unwrap(), "ok");
    assert_eq!(sts.paths().len(), 1);

    // IAM Identity Center: the token `aws sso login` cached, exchanged at the portal; and a
    // role assumed from that profile through STS (signed with the SSO keys).
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".aws/sso/cache")).unwrap();
    std::fs::write(
        home.path().join(".aws/config"),
        "[profile dev]\nsso_session = corp\nsso_account_id = 123456789012\nsso_role_name = Dev\nregion = us-west-2\n\
         [sso-session corp]\nsso_region = us-east-1\nsso_start_url = https://corp.awsapps.com/start\n\
         [profile admin]\nrole_arn = arn:aws:iam::123456789012:role/Admin\nsource_profile = dev\nregion = us-west-2\n",
    )
    .unwrap();
    std::fs::write(
        home.path()
            .join(".aws/sso/cache/ee0bfd2552fbd840c02cc48b6e823320543c450f.json"),
        serde_json::json!({"accessToken": "sso-access", "expiresAt": "2099-01-01T00:00:00Z"})
            .to_string(),
    )
    .unwrap();
    let portal = CannedServer::start(vec![Canned::json(
        200,
        serde_json::json!({"roleCredentials": {
            "accessKeyId": k.access_key_id, "secretAccessKey": k.secret_access_key,
            "sessionToken": k.session_token, "expiration": 4_070_908_800_000u64}})
        .to_string(),
    )])
    .await
    .unwrap();
    let sts = CannedServer::start(vec![Canned {
        status: 200,
        content_type: "text/xml".into(),
        body: sts_xml.into(),
    }])
    .await
    .unwrap();
    let (portal_url, sts_url) = (portal.url(), sts.url());
    let map: HashMap<String, String> = [
        ("HOME", home.path().to_str().unwrap()),
        ("AWS_PROFILE", "admin"),
        ("AWS_ENDPOINT_URL_SSO", &portal_url),
        ("AWS_ENDPOINT_URL_STS", &sts_url),
        ("ANTHROPIC_BEDROCK_BASE_URL", &url),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_owned(), b.to_owned()))
    .collect();
    let mut cfg = CloudConfig::from_lookup(Cloud::Bedrock, |k| map.get(k).cloned()).unwrap();
    cfg.set_retry(fast());
    let summary = cfg.summary();
    assert!(
        summary
            .credential
            .contains("role arn:aws:iam::123456789012:role/Admin")
            && summary
                .credential
                .contains("IAM Identity Center (SSO) of AWS profile `dev`"),
        "{}",
        summary.credential
    );
    assert_eq!(summary.region.as_ref().unwrap().0, "us-west-2");
    let p = CloudProvider::new(cfg).unwrap();
    assert_eq!(text_of(&p, "claude-sonnet-4-5").await.unwrap(), "ok");
    assert_eq!(
        portal.paths(),
        ["/federation/credentials"],
        "the portal was asked once"
    );
    assert_eq!(sts.paths().len(), 1);
}
