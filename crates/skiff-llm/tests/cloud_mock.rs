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
async fn bedrock_sigv4_matches_botocore_for_profile_ids_and_arns() {
    let Some(python) = botocore_python() else {
        eprintln!("skipped: botocore not installed (SKIFF_BOTOCORE_PYTHON)");
        return;
    };
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
async fn bedrock_wrong_secret_is_refused_by_botocore_and_the_error_names_the_source() {
    let Some(python) = botocore_python() else {
        eprintln!("skipped: botocore not installed (SKIFF_BOTOCORE_PYTHON)");
        return;
    };
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
